/* lapi_sparse.c - sparse matrices in Lua: the "gwb.SparseMatrix" userdata; mat.read/write
 * (Matrix Market), mat.laplacian3d, mat.randsym, mat.knn_laplacian and the sparse form of
 * mat.laplacian1d/2d; eig.solve for sparse matrices (the dense eig.solve is kept and called
 * for anything else). Opened after the mat and eig modules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "dense.h"
#include "eig.h"
#include "eig_sparse.h"
#include "gpu.h"
#include "hash.h"
#include "fmt.h"
#include "npy.h"
#include "lapi.h"
#include "mm.h"
#include "sparse.h"
#include "zio.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/sparse.h"
#endif

#define SPARSE_T "gwb.SparseMatrix"

/* Order up to which mat.laplacian1d/2d return a dense Matrix unless opts.sparse says otherwise. */
#define DENSE_AUTO_MAX 4096


typedef struct lsparse {
	gwb_csr *A;   /* NULL once released */
} lsparse;

static size_t sparse_bytes(const void *A)
{
	return gwb_csr_bytes(A);
}

static int sp_release(lua_State *L)
{
	gwb_csr_free(gwb_lua_takebox(L, 1, SPARSE_T));
	return 0;
}

/* A new empty userdata on the stack; the caller fills u->A. */
static lsparse *sp_new(lua_State *L)
{
	return gwb_lua_newbox(L, SPARSE_T, 0);
}

static gwb_csr *sp_check(lua_State *L, int arg)
{
	return gwb_lua_checkbox(L, arg, SPARSE_T, SPARSE_T, "SparseMatrix");
}

static void human_bytes(char *b, size_t sz, double x)
{
	gwb_fmt_bytes(b, sz, x);  /* one format for sizes everywhere (fmt.h) */
}

static int sp_tostring(lua_State *L)
{
	lsparse *u = gwb_lua_checkudata(L, 1, SPARSE_T, SPARSE_T);
	gwb_csr *A = u->A;
	char mem[32], line[320];
	if (!A) {
		lua_pushstring(L, "SparseMatrix (closed)");
		return 1;
	}
	human_bytes(mem, sizeof(mem), (double)gwb_csr_bytes(A));
	double dens = A->rows && A->cols ? (double)A->nnz / ((double)A->rows * A->cols) : 0;
	snprintf(line, sizeof(line), "SparseMatrix %lldx%lld%s%s%s: %lld nonzeros (%.3g%%, %.1f per row), "
		 "%s, %s indices, %s", (long long)A->rows, (long long)A->cols, *A->name ? " (" : "",
		 A->name, *A->name ? ")" : "", (long long)A->nnz, 100 * dens,
		 A->rows ? (double)A->nnz / A->rows : 0.0,
		 A->sym == 1 ? "symmetric" : A->sym == 0 ? "not symmetric" : "symmetry not checked",
		 A->wide ? "64-bit" : "32-bit", mem);
	lua_pushstring(L, line);
	return 1;
}

/* ---------------------------------------------------------------- methods */

static int m_spmv(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_Integer len = luaL_len(L, 2);
	if (len != A->cols)
		return luaL_error(L, "A:spmv(x): x must have %I entries (the columns of A), got %I",
				  (lua_Integer)A->cols, (lua_Integer)len);
	double *x = malloc((size_t)(A->cols + A->rows + 1) * sizeof(double));
	if (!x)
		return luaL_error(L, "A:spmv: out of memory");
	double *y = x + A->cols;
	for (int64_t i = 0; i < A->cols; i++) {
		int isnum;
		lua_geti(L, 2, i + 1);
		x[i] = lua_tonumberx(L, -1, &isnum);
		lua_pop(L, 1);
		if (!isnum) {
			free(x);
			return luaL_error(L, "A:spmv(x): x[%I] is not a number", (lua_Integer)i + 1);
		}
	}
	gwb_csr_spmv(A, x, y);
	lua_createtable(L, (int)A->rows, 0);
	for (int64_t i = 0; i < A->rows; i++) {
		lua_pushnumber(L, y[i]);
		lua_rawseti(L, -2, i + 1);
	}
	free(x);
	return 1;
}

static int m_get(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	lua_Integer i = luaL_checkinteger(L, 2), j = luaL_checkinteger(L, 3);
	if (i < 1 || i > A->rows || j < 1 || j > A->cols)
		return luaL_error(L, "A:get(i, j): (%I, %I) is outside 1..%I x 1..%I", (lua_Integer)i,
				  (lua_Integer)j, (lua_Integer)A->rows, (lua_Integer)A->cols);
	lua_pushnumber(L, gwb_csr_get(A, i - 1, j - 1));
	return 1;
}

static int m_symmetric(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	int64_t at[2];
	bool ok = A->sym == 1 || gwb_csr_is_symmetric(A, at);
	lua_pushboolean(L, ok);
	if (ok || A->rows != A->cols)
		return 1;
	lua_pushfstring(L, "(%I, %I) differs from (%I, %I)", (lua_Integer)at[0] + 1,
			(lua_Integer)at[1] + 1, (lua_Integer)at[1] + 1, (lua_Integer)at[0] + 1);
	return 2;
}

static int m_todense(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	gwb_matrix *D = NULL;
	if (A->rows > GWB_DENSE_MAX_GEN || A->cols > GWB_DENSE_MAX_GEN)
		return luaL_error(L, "A:todense(): %Ix%I is too large for a dense matrix (at most "
				  "%d per side)", (lua_Integer)A->rows, (lua_Integer)A->cols, GWB_DENSE_MAX_GEN);
	gwb_lua_check(L, gwb_matrix_new((size_t)A->rows, (size_t)A->cols, GWB_F64, GWB_COL_MAJOR, &D));
	for (int64_t i = 0; i < A->rows; i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++)
			gwb_matrix_set(D, 0, (size_t)i, (size_t)gwb_csr_ci(A, p), A->val[p]);
	gwb_lua_push_matrix(L, D);
	return 1;
}

static int m_write(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	const char *path = luaL_checkstring(L, 2);
	gwb_lua_check(L, gwb_mm_write_csr(A, path, luaL_optstring(L, 3, "written by gwb")));
	return 0;
}

static int m_save(lua_State *L)
{
	gwb_lua_check(L, gwb_csr_save(sp_check(L, 1), luaL_checkstring(L, 2)));
	return 0;
}

static int m_spmv_bench(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	static const char *const known[] = {"reps", NULL};
	gwb_opt_check_keys(L, 2, "A:spmv_bench", known);
	int reps = gwb_opt_i32(L, 2, "A:spmv_bench", "reps", 50);
#ifdef GWB_HAVE_CUDA
	gwb_spmv_bench b;
	gwb_lua_check(L, gwb_gpu_spmv_bench(A, reps, &b));
	lua_createtable(L, 0, 10);
#define NUM(k, v) (lua_pushnumber(L, (v)), lua_setfield(L, -2, k))
	NUM("ours_ms", b.ours_ms);
	NUM("cusparse_ms", b.cusparse_ms);
	NUM("ours_gbps", b.ours_gbps);
	NUM("cusparse_gbps", b.cusparse_gbps);
	NUM("bytes", b.bytes);
	NUM("ours_err", b.ours_err);
	NUM("cusparse_err", b.cusparse_err);
	NUM("lanes", b.lanes);
	NUM("block_b", b.block_b);
	lua_createtable(L, 6, 0);
	for (int i = 0; i < 6; i++) {
		lua_pushnumber(L, b.sweep_ms[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "sweep_ms");
	{
		static const char *const names[4] = {"ours_col", "cusparse_col", "ours_rows",
						     "cusparse_rows"};
		lua_createtable(L, 0, 4);
		for (int i = 0; i < 4; i++) {
			lua_createtable(L, 0, 2);
			NUM("ms", b.blk_ms[i]);
			NUM("err", b.blk_err[i]);
			lua_setfield(L, -2, names[i]);
		}
		lua_setfield(L, -2, "block");
	}
#undef NUM
	return 1;
#else
	(void)A;
	(void)reps;
	return luaL_error(L, "A:spmv_bench: this gwb was built without CUDA (make CUDA=1 on a "
			  "machine with nvcc)");
#endif
}

static int m_to(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	const char *s = luaL_checkstring(L, 2);

	if (strcmp(s, "gpu") && strcmp(s, "cuda") && strcmp(s, "cpu") && strcmp(s, "host"))
		return luaL_error(L, "SparseMatrix:to: device must be \"cpu\" or \"gpu\" (got \"%s\")",
				  s);
	gwb_lua_check(L, gwb_csr_to(A, !strcmp(s, "gpu") || !strcmp(s, "cuda")));
	lua_settop(L, 1);
	return 1;
}

static int sp_index(lua_State *L)
{
	lsparse *u = gwb_lua_checkudata(L, 1, SPARSE_T, SPARSE_T);
	const char *k = lua_tostring(L, 2);
	if (k && u->A) {
		gwb_csr *A = u->A;
		if (!strcmp(k, "rows") || !strcmp(k, "n")) {
			lua_pushinteger(L, A->rows);
			return 1;
		}
		if (!strcmp(k, "cols")) {
			lua_pushinteger(L, A->cols);
			return 1;
		}
		if (!strcmp(k, "nnz")) {
			lua_pushinteger(L, A->nnz);
			return 1;
		}
		if (!strcmp(k, "shape")) {
			lua_createtable(L, 2, 0);
			lua_pushinteger(L, A->rows);
			lua_rawseti(L, -2, 1);
			lua_pushinteger(L, A->cols);
			lua_rawseti(L, -2, 2);
			return 1;
		}
		if (!strcmp(k, "name")) {
			lua_pushstring(L, A->name);
			return 1;
		}
		if (!strcmp(k, "index_bits")) {
			lua_pushinteger(L, A->wide ? 64 : 32);
			return 1;
		}
		if (!strcmp(k, "bytes")) {
			lua_pushinteger(L, (lua_Integer)gwb_csr_bytes(A));
			return 1;
		}
		if (!strcmp(k, "sparse")) {
			lua_pushboolean(L, 1);
			return 1;
		}
		if (!strcmp(k, "device")) {
			lua_pushstring(L, A->gpu ? "gpu" : "cpu");
			return 1;
		}
	}
	luaL_getmetatable(L, SPARSE_T);
	lua_getfield(L, -1, "__methods");
	lua_pushvalue(L, 2);
	lua_gettable(L, -2);  /* not raw: a miss is remembered for "did you mean" */
	return 1;
}

static int sp_len(lua_State *L)
{
	lua_pushinteger(L, sp_check(L, 1)->rows);
	return 1;
}

/* ---------------------------------------------------------------- mat.* */

static int l_read(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	gwb_csr *A = NULL;
	gwb_matrix *D = NULL;
	lsparse *u = sp_new(L);
	gwb_zkind z = gwb_z_sniff_path(path);
	if (z != GWB_Z_NONE)
		return luaL_error(L, "mat.read: %s is %s-compressed; mat.read reads Matrix Market "
				  "text, .gwbs and .npy files as they are: decompress it first "
				  "(%s -dk %s)", path, gwb_z_name(z), gwb_z_name(z), path);
	if (gwb_npy_is_npy(path)) {  /* a NumPy 2-D float array: a dense Matrix */
		lua_pop(L, 1);
		gwb_lua_check(L, gwb_npy_load_matrix(path, &D));
		gwb_lua_push_matrix(L, D);
		return 1;
	}
	if (gwb_csr_is_gwbs(path)) {
		gwb_lua_check(L, gwb_csr_load(path, &u->A));
		return 1;
	}
	gwb_lua_check(L, gwb_mm_read(path, &A, &D));
	if (D) {
		lua_pop(L, 1);
		gwb_lua_push_matrix(L, D);
		return 1;
	}
	u->A = A;
	return 1;
}

static int l_write(lua_State *L)
{
	const char *path = luaL_checkstring(L, 2);
	const char *comment = luaL_optstring(L, 3, "written by gwb");
	if (gwb_lua_testudata(L, 1, SPARSE_T)) {
		gwb_lua_check(L, gwb_mm_write_csr(sp_check(L, 1), path, comment));
		return 0;
	}
	gwb_lua_check(L, gwb_mm_write_dense(gwb_lua_checkmatrix(L, 1), path, comment));
	return 0;
}

static int64_t check_dim(lua_State *L, int arg, const char *fn)
{
	lua_Integer v = luaL_checkinteger(L, arg);
	if (v < 1)
		luaL_error(L, "%s: sizes must be >= 1 (argument %d is %I)", fn, arg, v);
	return v;
}

static int l_laplacian3d(lua_State *L)
{
	int64_t nx = check_dim(L, 1, "mat.laplacian3d");
	int64_t ny = lua_isinteger(L, 2) ? check_dim(L, 2, "mat.laplacian3d") : nx;
	int64_t nz = lua_isinteger(L, 3) ? check_dim(L, 3, "mat.laplacian3d") : nx;
	lsparse *u = sp_new(L);
	gwb_lua_check(L, gwb_csr_laplacian3d(nx, ny, nz, &u->A));
	return 1;
}

/* mat.laplacian1d/2d: sparse when opts.sparse is true, or when it is absent and the order
 * exceeds DENSE_AUTO_MAX; otherwise the dense generator (upvalue 1). */
static int laplacian_wrap(lua_State *L, int dims)
{
	const char *fn = dims == 1 ? "mat.laplacian1d" : "mat.laplacian2d";
	int64_t m = luaL_checkinteger(L, 1);
	int sparse = -1;
	int top = lua_gettop(L);
	if (lua_istable(L, 2)) {
		lua_getfield(L, 2, "sparse");
		if (!lua_isnil(L, -1))
			sparse = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	double order = dims == 1 ? (double)m : (double)m * m;
	if (sparse == -1)
		sparse = order > DENSE_AUTO_MAX;
	if (sparse) {
		static const char *const known[] = {"sparse", NULL};
		gwb_opt_check_keys(L, 2, fn, known);
		if (m < 1)
			return luaL_error(L, "%s: n must be >= 1 (got %I)", fn, (lua_Integer)m);
		lsparse *u = sp_new(L);
		gwb_lua_check(L, dims == 1 ? gwb_csr_laplacian1d(m, &u->A)
					   : gwb_csr_laplacian2d(m, m, &u->A));
		return 1;
	}
	/* dense: call the original with the options minus `sparse` */
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushvalue(L, 1);
	if (top >= 2 && lua_istable(L, 2)) {
		lua_newtable(L);
		lua_pushnil(L);
		while (lua_next(L, 2)) {
			if (lua_type(L, -2) == LUA_TSTRING && !strcmp(lua_tostring(L, -2), "sparse")) {
				lua_pop(L, 1);
				continue;
			}
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_settable(L, -4);
		}
	} else
		lua_pushnil(L);
	lua_call(L, 2, 1);
	return 1;
}

static int l_laplacian1d(lua_State *L) { return laplacian_wrap(L, 1); }
static int l_laplacian2d(lua_State *L) { return laplacian_wrap(L, 2); }

static int l_randsym(lua_State *L)
{
	static const char *const known[] = {"density", "seed", "diag", NULL};
	lua_Integer n = luaL_checkinteger(L, 1);
	gwb_opt_check_keys(L, 2, "mat.randsym", known);
	double density = gwb_opt_num(L, 2, "mat.randsym", "density", 1e-3);
	lua_Integer seed = gwb_opt_int(L, 2, "mat.randsym", "seed", 1);
	bool diag = gwb_opt_bool(L, 2, "mat.randsym", "diag", false);
	lsparse *u = sp_new(L);
	gwb_lua_check(L, gwb_csr_randsym(n, density, (uint64_t)seed, diag, &u->A));
	return 1;
}

static int l_sprand(lua_State *L)
{
	static const char *const known[] = {"density", "seed", NULL};
	lua_Integer m = luaL_checkinteger(L, 1), n = luaL_checkinteger(L, 2);
	gwb_opt_check_keys(L, 3, "mat.sprand", known);
	double density = gwb_opt_num(L, 3, "mat.sprand", "density", 1e-3);
	lua_Integer seed = gwb_opt_int(L, 3, "mat.sprand", "seed", 1);
	lsparse *u = sp_new(L);
	gwb_lua_check(L, gwb_csr_random(m, n, density, (uint64_t)seed, &u->A));
	return 1;
}

static int l_knn_laplacian(lua_State *L)
{
	static const char *const known[] = {"k", "sigma", "normalized", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	gwb_opt_check_keys(L, 2, "mat.knn_laplacian", known);
	int k = gwb_opt_i32(L, 2, "mat.knn_laplacian", "k", 10);
	double sigma = gwb_opt_num(L, 2, "mat.knn_laplacian", "sigma", 0);
	bool norm = gwb_opt_bool(L, 2, "mat.knn_laplacian", "normalized", false);
	lsparse *u = sp_new(L);
	gwb_lua_check(L, gwb_csr_knn_laplacian(d, k, sigma, norm, &u->A));
	return 1;
}

/* ---------------------------------------------------------------- eig.solve */

static const char *const solve_keys[] = {"k", "which", "tol", "maxiter", "method", "backend",
	"ncv", "block", "degree", "reorth", "reorth_tol", "seed", "vectors", "spmv", "tag", "gpus",
	"ranks", "deflated_check", NULL};

/* ranks = "all" (under mpirun: the rows dealt to the ranks) or "self" (each rank alone) */
static bool opt_alone(lua_State *L, const char *fn)
{
	const char *rk = gwb_opt_str(L, 2, fn, "ranks", "all");
	if (strcmp(rk, "all") && strcmp(rk, "self"))
		luaL_error(L, "%s: ranks must be \"all\" (under mpirun: the rows dealt to the MPI "
			   "ranks, halo exchanged) or \"self\" (each rank solves alone) (got \"%s\")",
			   fn, rk);
	return !strcmp(rk, "self");
}

/* The run record's data part for a sparse matrix: name, shape, nnz and an XXH64 checksum of
 * its CSR arrays (computed once per matrix and cached). Pushes the table. */
static void push_csr_info(lua_State *L, gwb_csr *A)
{
	char hex[24];

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)gwb_csr_checksum(A));
	lua_createtable(L, 0, 5);
	if (*A->name)
		SETS("name", A->name);
	SETI("rows", A->rows);
	SETI("cols", A->cols);
	SETI("nnz", A->nnz);
	SETS("checksum", hex);
}

static int solve_sparse(lua_State *L)
{
	gwb_csr *A = sp_check(L, 1);
	const char *fn = "eig.solve";
	gwb_sp_opts o;
	gwb_eigen *e = NULL;

	gwb_sp_opts_default(&o);
	gwb_opt_check_keys(L, 2, fn, solve_keys);
	gwb_opt_tag(L, 2, fn);  /* checked before the solve */
	lua_pop(L, 1);
	lua_Integer k = gwb_opt_int(L, 2, fn, "k", 6);
	if (k < 1 || k > 100000)
		return luaL_error(L, "eig.solve: k must be in [1, 100000] (got %I)", k);
	o.k = (int)k;
	const char *which = gwb_opt_str(L, 2, fn, "which", "smallest");
	if (!strcmp(which, "smallest"))
		o.which = GWB_SMALLEST;
	else if (!strcmp(which, "largest"))
		o.which = GWB_LARGEST;
	else if (!strcmp(which, "both"))
		o.which = GWB_BOTH;
	else
		return luaL_error(L, "eig.solve: which must be \"smallest\", \"largest\" or \"both\" "
				  "(got \"%s\")", which);
	o.tol = gwb_opt_num(L, 2, fn, "tol", 1e-10);
	lua_Integer mi = gwb_opt_int(L, 2, fn, "maxiter", 0);
	if (mi < 0 || mi > INT32_MAX)
		return luaL_error(L, "eig.solve: maxiter must be in [0, %d] (0: the method's default; "
				  "got %I)", INT32_MAX, mi);
	o.maxiter = (int)mi;
	gwb_lua_check(L, gwb_sp_method_parse(gwb_opt_str(L, 2, fn, "method", "auto"), &o.method));
	o.backend = gwb_opt_backend(L, 2, fn);
	{
		/* checked as everywhere (mgpu.h); the row-partitioned solve over several GPUs is not
		 * built (docs/ARCHITECTURE.md, "Several GPUs"): device 0 alone runs it */
		gwb_gpu_set gs;
		gwb_opt_gpus(L, 2, fn, o.backend, false, &gs);
		if (gs.n > 1 || gs.ids[0] != 0)
			return luaL_error(L, "eig.solve: gpus = %s on a sparse matrix: the solve over "
					  "several GPUs (rows partitioned, halo exchanged) is not built "
					  "yet; it runs on device 0 alone: use gpus = 1 (the default)",
					  gs.n > 1 ? "a set of several devices" : "another device than 0");
	}
	static const char *const sizes[] = {"ncv", "block", "degree"};
	int *size_out[] = {&o.ncv, &o.block, &o.degree};
	for (int i = 0; i < 3; i++) {
		lua_Integer v = gwb_opt_int(L, 2, fn, sizes[i], 0);
		if (v < 0 || v > 100000)
			return luaL_error(L, "eig.solve: %s must be in [0, 100000] (0: the default; got "
					  "%I)", sizes[i], v);
		*size_out[i] = (int)v;
	}
	const char *re = gwb_opt_str(L, 2, fn, "reorth", "selective");
	if (!strcmp(re, "full"))
		o.full_reorth = true;
	else if (strcmp(re, "selective") && strcmp(re, "partial"))
		return luaL_error(L, "eig.solve: reorth must be \"selective\" or \"full\" (got \"%s\")", re);
	o.reorth_tol = gwb_opt_num(L, 2, fn, "reorth_tol", 0);
	o.seed = (uint64_t)gwb_opt_int(L, 2, fn, "seed", 1);
	o.vectors = gwb_opt_bool(L, 2, fn, "vectors", true);
	o.alone = opt_alone(L, fn);
	o.no_defl_check = !gwb_opt_bool(L, 2, fn, "deflated_check", true);
	const char *sk = gwb_opt_str(L, 2, fn, "spmv", "auto");
	if (!strcmp(sk, "auto"))
		o.spmv_kind = 0;
	else if (!strcmp(sk, "ours"))
		o.spmv_kind = 1;
	else if (!strcmp(sk, "cusparse"))
		o.spmv_kind = 2;
	else
		return luaL_error(L, "eig.solve: spmv must be \"auto\", \"ours\" or \"cusparse\" (got "
				  "\"%s\")", sk);
	if (o.ncv > 0 && o.ncv <= o.k)
		return luaL_error(L, "eig.solve: ncv must exceed k (got ncv = %d, k = %d)", o.ncv, o.k);
	gwb_lua_check(L, gwb_eig_sparse(A, &o, &e));

	gwb_lua_push_eigen(L, e);  /* first: its box owns e if logging raises */
	lua_createtable(L, 0, 6);  /* one line in the run log */
	SETS("matrix", A->name);
	SETI("n", A->rows);
	SETI("nnz", A->nnz);
	SETI("k", o.k);
	SETS("which", which);
	SETS("method", e->method);
	SETN("tol", o.tol);
	gwb_opt_tag(L, 2, fn);
	lua_setfield(L, -2, "tag");
	push_csr_info(L, A);
	lua_setfield(L, -2, "data");
	gwb_lua_log_eigen(L, "eig.solve", e);
	return 1;
}

/* ---------------------------------------------------------------- eig.svd */

static int svd_sparse(lua_State *L)
{
	static const char *const known[] = {"k", "tol", "maxiter", "block", "seed", "vectors",
					    "backend", "method", "tag", "ranks", NULL};
	gwb_csr *A = sp_check(L, 1);
	const char *fn = "eig.svd";
	gwb_svd_opts o;
	gwb_eigen *e = NULL;

	gwb_svd_opts_default(&o);
	gwb_opt_check_keys(L, 2, fn, known);
	gwb_opt_tag(L, 2, fn);  /* checked before the solve */
	lua_pop(L, 1);
	lua_Integer k = gwb_opt_int(L, 2, fn, "k", 6);
	if (k < 1 || k > 100000)
		return luaL_error(L, "eig.svd: k must be in [1, 100000] (got %I)", k);
	o.k = (int)k;
	o.tol = gwb_opt_num(L, 2, fn, "tol", 1e-10);
	lua_Integer mi = gwb_opt_int(L, 2, fn, "maxiter", 0), bl = gwb_opt_int(L, 2, fn, "block", 0);
	if (mi < 0 || mi > INT32_MAX)
		return luaL_error(L, "eig.svd: maxiter must be in [0, %d] (0: the default, 5000; got "
				  "%I)", INT32_MAX, mi);
	if (bl < 0 || bl > 100000)
		return luaL_error(L, "eig.svd: block must be in [0, 100000] (0: the default, k + "
				  "max(10, k); got %I)", bl);
	o.maxiter = (int)mi;
	o.block = (int)bl;
	o.seed = (uint64_t)gwb_opt_int(L, 2, fn, "seed", 1);
	o.vectors = gwb_opt_bool(L, 2, fn, "vectors", true);
	o.backend = gwb_opt_backend(L, 2, fn);
	o.alone = opt_alone(L, fn);
	const char *m = gwb_opt_str(L, 2, fn, "method", "auto");
	if (strcmp(m, "auto") && strcmp(m, "randomized") && strcmp(m, "rsvd"))
		return luaL_error(L, "eig.svd: for a SparseMatrix, method must be \"auto\" or "
				  "\"randomized\" (got \"%s\"); A:todense() for the dense methods", m);
	gwb_lua_check(L, gwb_svd_sparse(A, &o, &e));

	gwb_lua_push_eigen(L, e);  /* first: its box owns e if logging raises */
	lua_createtable(L, 0, 6);  /* one line in the run log */
	SETS("matrix", A->name);
	SETI("rows", A->rows);
	SETI("cols", A->cols);
	SETI("nnz", A->nnz);
	SETI("k", o.k);
	SETN("tol", o.tol);
	gwb_opt_tag(L, 2, fn);
	lua_setfield(L, -2, "tag");
	push_csr_info(L, A);
	lua_setfield(L, -2, "data");
	gwb_lua_log_eigen(L, "eig.svd", e);
	return 1;
}

/* eig.svd: sparse matrices here, anything else to the original (upvalue 1). */
static int l_svd(lua_State *L)
{
	if (gwb_lua_testudata(L, 1, SPARSE_T))
		return svd_sparse(L);
	if (lua_isnil(L, lua_upvalueindex(1)))
		return luaL_error(L, "eig.svd: expected a SparseMatrix (dense matrices need the dense "
				  "solver, which this gwb lacks)");
	int n = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

static const char svd_help[] =
	"For a SparseMatrix (any shape): the k largest singular triplets by randomized subspace\n"
	"iteration on A and A^T: V orthonormal, Y = A V = Q R (Householder QR: LAPACK, or\n"
	"cuSOLVER geqrf/orgqr on the GPU), R = Ur S Wr^T gives u = Q Ur, v = V Wr; then\n"
	"V <- orth(p(A^T A) A^T Q), p a Chebyshev polynomial damping [0, s_b^2] (s_b the block's\n"
	"smallest Ritz value; degree 2..32, in the note; none when block = k or no gap shows),\n"
	"until every pair has max(||Av - su||, ||A^T u - sv||) <= tol * s_1.\n"
	"Products by our SpMM (A and a stored A^T) on the GPU, CPU threads otherwise.\n"
	"Options: k (6), tol (1e-10), maxiter (5000; when it runs out the result comes back with\n"
	"converged = false and its residuals, not an error), block (k + max(10, k): a wider\n"
	"block converges in fewer iterations when the singular values are close), seed (1),\n"
	"vectors (true), backend = \"auto\" | \"cpu\" | \"gpu\", method = \"auto\" | \"randomized\"\n"
	"(\"rsvd\" is the same), ranks = \"all\" (under mpirun: the rows of A and of A^T dealt to\n"
	"the ranks, halo exchanged, the QR by TSQR over the ranks) | \"self\". GPU memory: A, A^T, six blocks of (rows or cols) x block\n"
	"doubles, and (rows + cols) x block doubles per matrix of scratch for the row-major\n"
	"products, held until the call returns.\n"
	"The result: values (descending), e:vector(i) (right, A.cols entries), e:left(i) (left,\n"
	"A.rows entries), residuals, max_residual, orthogonality (the larger of ||V^T V - I||\n"
	"and ||U^T U - I||, max entry), converged, history, iterations.\n"
	"Example: s = eig.svd(mat.sprand(2000, 500, {density = 0.01}), {k = 5}).values";

/* eig.solve: sparse matrices here, anything else to the original (upvalue 1). */
static int l_solve(lua_State *L)
{
	if (gwb_lua_testudata(L, 1, SPARSE_T))
		return solve_sparse(L);
	if (lua_isnil(L, lua_upvalueindex(1)))
		return luaL_error(L, "eig.solve: expected a SparseMatrix (dense matrices need the "
				  "dense solver, which this gwb lacks)");
	int n = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

static const char solve_help[] =
	"For a SparseMatrix: the k eigenpairs at one end (or both) of a sparse symmetric matrix.\n"
	"Options: k (6), which = \"smallest\" | \"largest\" | \"both\" (k at each end), tol (1e-10:\n"
	"every returned pair has ||Av - lv|| <= tol * ||A||_2), maxiter, backend = \"auto\" | \"cpu\"\n"
	"| \"gpu\", seed, vectors (true), method:\n"
	"  \"auto\"        dense LAPACK for n <= 400; LOBPCG for the smallest end when the\n"
	"                diagonal is positive and varies 10x or more (Jacobi pays); otherwise by\n"
	"                the gap ratio of the wanted end, estimated from the Ritz values of a\n"
	"                40-step Lanczos run: Lanczos where it is wide (>= 1.5e-4: random sparse\n"
	"                matrices), Chebyshev where the end is crowded (large Laplacians) and on\n"
	"                the GPU; e.note starts with the choice and the estimate\n"
	"  \"chebyshev\"   Chebyshev-filtered subspace iteration; block (k + max(6, k/2)), degree\n"
	"  \"lanczos\"     thick-restart Lanczos; ncv (basis size, default max(2k+20, 60); 40\n"
	"                past 4M rows), reorth = \"selective\" or \"partial\" (the omega\n"
	"                recurrence over the whole basis, kept Ritz vectors included, asks for\n"
	"                classical Gram-Schmidt twice\n"
	"                against the basis only where the estimated loss passes reorth_tol =\n"
	"                min(sqrt(eps), tol/10)) | \"full\" (CGS2 every step); then a deflated run\n"
	"                checks for missed copies of repeated values (it stops once its smallest\n"
	"                Ritz pair shows none below the k-th); e.note: restarts, CGS2 passes,\n"
	"                products A x, reorthogonalization time\n"
	"  \"lobpcg\"      LOBPCG with a Jacobi preconditioner; block\n"
	"  \"randomized\"  randomized subspace iteration (block power steps + Rayleigh-Ritz)\n"
	"  \"rand+lanczos\" 3 randomized iterations, then Lanczos from their Ritz vectors\n"
	"  \"dense\"       LAPACK dsyev on a dense copy (n <= 8192)\n"
	"GPU: spmv = \"auto\" | \"ours\" (our kernels; blocks of vectors in row-major order) |\n"
	"\"cusparse\" (cuSPARSE SpMV/SpMM). gpus: 1 (device 0; checked as rf.train's: the solve\n"
	"over several GPUs is not built yet, so other values are refused).\n"
	"deflated_check (true): after Lanczos converges, a deflated run from a fresh random start\n"
	"looks for missed copies of repeated eigenvalues (its products are in the note); false\n"
	"skips it, as ARPACK and SLEPc do (faster by those products; a missed copy goes unseen).\n"
	"MPI: ranks = \"all\" (under mpirun, the default: the rows dealt to the ranks, balanced by\n"
	"nonzeros, each product exchanging only the off-rank entries of x its rows read, dot\n"
	"products and Gram matrices summed by MPI_Allreduce; CPU ranks; every rank returns what one\n"
	"process returns, the same matrix on every rank checked first) | \"self\" (this rank alone).\n"
	"GWB_EIG_PROF=1 prints the time per phase (spmm, Gram,\n"
	"updates, vector ops, small eigenproblems, transfers, setup) to stderr, the device\n"
	"synchronized after every operation. Errors: non-square, non-symmetric, NaN/Inf,\n"
	"k >= n. The result's history holds (iteration, converged, max residual) per iteration.\n"
	"Example: e = eig.solve(mat.laplacian2d(317), {k = 10, which = \"smallest\"})";

static const gwb_reg methods[] = {
	{"spmv", m_spmv, "A:spmv(x) -> table\ny = A x for a Lua array x of A.cols numbers.\n"
	 "Example: y = mat.laplacian1d(3, {sparse = true}):spmv{1, 1, 1}  -- {1, 0, 1}"},
	{"get", m_get, "A:get(i, j) -> number\nElement (i, j), 1-based (0 where none is stored).\n"
	 "Example: print(mat.laplacian3d(4):get(1, 1))  -- 6"},
	{"symmetric", m_symmetric, "A:symmetric() -> ok [, where]\nExact symmetry check (values "
	 "compared bit for bit); where names an offending pair.\nExample: print(A:symmetric())"},
	{"todense", m_todense, "A:todense() -> Matrix\nA dense f64 copy (at most 8192 per side).\n"
	 "Example: D = mat.laplacian3d(3):todense()"},
	{"write", m_write, "A:write(path [, comment])\nWrite a Matrix Market file (see mat.write).\n"
	 "Example: A:write(\"a.mtx\")"},
	{"save", m_save, "A:save(path)\nWrite the CSR arrays in gwb's binary format (header, "
	 "row offsets, column indices, values, FNV-1a checksum); mat.read loads it back exactly "
	 "and fast.\nExample: A:save(\"a.gwbs\"); B = mat.read(\"a.gwbs\")"},
	{"spmv_bench", m_spmv_bench, "A:spmv_bench([opts]) -> table\nGPU SpMV, ours and cuSPARSE, "
	 "timed (median of reps, default 50) and checked against the CPU: ours_ms, cusparse_ms,\n"
	 "ours_gbps, cusparse_gbps, bytes, ours_err, cusparse_err, lanes; sweep_ms: ours with 1,\n"
	 "2, 4, 8, 16, 32 lanes per row; block: a block of block_b (16) vectors, {ms, err} for\n"
	 "ours_col, cusparse_col (column-major) and ours_rows, cusparse_rows (row-major).\n"
	 "Example: t = mat.laplacian2d(1000):spmv_bench{reps = 20}"},
	{"to", m_to, "A:to(\"gpu\" | \"cpu\") -> A\n"
	 "Keep a copy of the CSR arrays on the GPU (A.device == \"gpu\"): eig.solve and eig.svd use\n"
	 "it in place instead of uploading per call (backend \"auto\" follows it there); \"cpu\"\n"
	 "frees it. Host reads always work (the CSR is never modified). Without a GPU the error\n"
	 "says why.\nExample: A = mat.laplacian3d(60):to(\"gpu\"); e = eig.solve(A, {k = 8})"},
	{"close", sp_release, "A:close()\nFree the matrix now, and its GPU copy (also happens when "
	 "it is collected)."},
	{NULL, NULL, NULL},
};

static const luaL_Reg meta[] = {
	{"__gc", sp_release},
	{"__close", sp_release},
	{"__tostring", sp_tostring},
	{"__index", sp_index},
	{"__len", sp_len},
	{NULL, NULL},
};

static const gwb_reg funcs[] = {
	{"read", l_read, "mat.read(path) -> SparseMatrix | Matrix\nRead a file written by A:save "
	 "(binary, checksummed) or a Matrix Market file: "
	 "coordinate (real, integer, pattern; general, symmetric, skew-symmetric; duplicates "
	 "summed) gives a SparseMatrix, array gives a dense Matrix. Malformed lines are reported "
	 "as file:line. A NumPy .npy file (a 2-D float32/float64 array, C or Fortran order, as "
	 "numpy.save writes it) gives a dense Matrix of its dtype.\n"
	 "Example: A = mat.read(\"datasets/matrices/bcsstk04.mtx\")"},
	{"write", l_write, "mat.write(A, path [, comment])\nWrite a SparseMatrix as Matrix Market "
	 "coordinate (symmetric matrices as their lower triangle) or a dense Matrix as array; 17 "
	 "significant digits, so a read gives the same values back.\nExample: mat.write(A, "
	 "\"a.mtx\")"},
	{"laplacian3d", l_laplacian3d, "mat.laplacian3d(nx [, ny, nz]) -> SparseMatrix\nThe 7-point "
	 "Laplacian of an nx x ny x nz grid (Dirichlet), order nx*ny*nz; eigenvalues are sums of "
	 "4 sin^2(k pi / (2(n+1))) over the three axes.\nExample: A = mat.laplacian3d(50)"},
	{"randsym", l_randsym, "mat.randsym(n [, opts]) -> SparseMatrix\nA random symmetric n x n "
	 "matrix: about density*n^2 nonzeros at uniform positions (mirrored), values uniform in "
	 "[-1, 1). Options: density (1e-3), seed (1), diag (false: add a full random "
	 "diagonal).\nExample: A = mat.randsym(100000, {density = 1e-3})"},
	{"sprand", l_sprand, "mat.sprand(m, n [, opts]) -> SparseMatrix\nA random m x n sparse "
	 "matrix: about density*m*n nonzeros at uniform positions, values uniform in [-1, 1). "
	 "Options: density (1e-3), seed (1).\nExample: A = mat.sprand(20000, 5000, {density = "
	 "1e-3})"},
	{"knn_laplacian", l_knn_laplacian, "mat.knn_laplacian(d [, opts]) -> SparseMatrix\nThe "
	 "graph Laplacian D - W of the k-nearest-neighbour graph of a Dataset's rows (features "
	 "standardised, exact Euclidean search, the graph made symmetric by union). Options: k "
	 "(10), sigma (0: weights 1; else exp(-d^2 / 2 sigma^2)), normalized (false: I - D^-1/2 "
	 "W D^-1/2). Its smallest eigenvectors give spectral clustering.\nExample: L = "
	 "mat.knn_laplacian(data.load(\"datasets/iris.csv\", {target = \"species\"}), {k = 8})"},
	{NULL, NULL, NULL},
};

/* Replace module.name by a C closure of fn with the old value as upvalue; help text = the
 * old help (if any) followed by extra. */
static void wrap(lua_State *L, const char *module, const char *name, lua_CFunction fn,
		 const char *extra, const char *fallback_sig)
{
	char full[64];
	int top = lua_gettop(L), M, O, C;
	const char *old_help = NULL;

	snprintf(full, sizeof(full), "%s.%s", module, name);
	if (lua_getglobal(L, module) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setglobal(L, module);
	}
	M = lua_gettop(L);
	lua_getfield(L, M, name);
	O = lua_gettop(L);
	if (!lua_isnil(L, O) && lua_getfield(L, LUA_REGISTRYINDEX, "gwb.help") == LUA_TTABLE) {
		lua_pushvalue(L, O);
		if (lua_gettable(L, -2) == LUA_TTABLE && lua_getfield(L, -1, "text") == LUA_TSTRING)
			old_help = lua_tostring(L, -1);  /* stays on the stack until settop */
	}
	lua_pushvalue(L, O);
	lua_pushcclosure(L, fn, 1);
	C = lua_gettop(L);
	if (old_help && *old_help)
		lua_pushfstring(L, "%s\n\n%s", old_help, extra);
	else
		lua_pushfstring(L, "%s\n%s", fallback_sig, extra);
	gwb_lua_sethelp(L, C, full, lua_tostring(L, -1));
	lua_pushvalue(L, C);
	lua_setfield(L, M, name);
	lua_settop(L, top);
}

int gwb_open_sparse(lua_State *L)
{
	gwb_lua_newclass(L, SPARSE_T, methods, meta);
	gwb_lua_boxbytes(SPARSE_T, sparse_bytes);
	/* mat.read/write/... into the existing mat table */
	if (lua_getglobal(L, "mat") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setglobal(L, "mat");
	}
	for (const gwb_reg *r = funcs; r->name; r++) {
		char full[64];
		lua_pushcfunction(L, r->fn);
		snprintf(full, sizeof(full), "mat.%s", r->name);
		gwb_lua_sethelp(L, -1, full, r->help);
		lua_setfield(L, -2, r->name);
	}
	lua_pop(L, 1);
	wrap(L, "mat", "laplacian1d", l_laplacian1d,
	     "Sparse: with {sparse = true}, or without the option when n > 4096, a SparseMatrix "
	     "(CSR) instead of a dense Matrix.", "mat.laplacian1d(n [, opts]) -> Matrix | SparseMatrix");
	wrap(L, "mat", "laplacian2d", l_laplacian2d,
	     "Sparse: with {sparse = true}, or without the option when m*m > 4096, a SparseMatrix "
	     "(CSR) instead of a dense Matrix.\nExample: A = mat.laplacian2d(317)  -- sparse, "
	     "order 100489", "mat.laplacian2d(m [, opts]) -> Matrix | SparseMatrix");
	wrap(L, "eig", "solve", l_solve, solve_help,
	     "eig.solve(A [, opts]) -> Eigen");
	wrap(L, "eig", "svd", l_svd, svd_help, "eig.svd(A [, opts]) -> Eigen (SVD)");
	return 0;
}
