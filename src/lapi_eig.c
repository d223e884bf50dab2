/* lapi_eig.c - the `eig` Lua module (eig.solve on dense matrices, eig.batched, eig.svd), the
 * Eigen result userdata "gwb.Eigen", and data.pca (added to the `data` table). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "buffer.h"
#include "dataset.h"
#include "dense.h"
#include "dsio.h"
#include "eig.h"
#include "fmt.h"
#include "intr.h"
#include "lapack.h"
#include "lapi.h"
#include "levels.h"

#define EIGEN_T "gwb.Eigen"
#define VALUES_T "gwb.EigenValues"   /* a single result's e.values: also callable as e:values(1) */
#define PCA_T "gwb.PCA"

typedef struct leigen {
	gwb_eigen *e;   /* NULL once released */
} leigen;

static int eigen_release(lua_State *L)
{
	gwb_eigen_free(gwb_lua_takebox(L, 1, EIGEN_T));
	return 0;
}

/* The C bytes an Eigen result holds (lapi_mem.c): values, residuals and vectors. */
static size_t eigen_bytes(const void *p)
{
	const gwb_eigen *e = p;
	size_t pairs = e->count * e->k;

	return sizeof(*e) + pairs * 2 * sizeof(double) +
	       (e->vectors ? pairs * e->n * sizeof(double) : 0) +
	       (e->left ? pairs * e->m * sizeof(double) : 0);
}

static void free_eigen(void *e)
{
	gwb_eigen_free(e);
}

void gwb_lua_push_eigen(lua_State *L, gwb_eigen *e)
{
	gwb_lua_pushbox(L, EIGEN_T, 0, e, free_eigen);
}

static gwb_eigen *check_eigen(lua_State *L, int arg)
{
	return gwb_lua_checkbox(L, arg, EIGEN_T, EIGEN_T, "eigen result");
}

/* --- options ------------------------------------------------------------------------------ */

static void read_dense_opts(lua_State *L, int idx, const char *fn, gwb_dense_opts *o)
{
	const char *s;
	lua_Integer k;

	gwb_dense_opts_default(o);
	k = gwb_opt_int(L, idx, fn, "k", 0);
	if (k < 0)
		luaL_error(L, "%s: option 'k' must be >= 1 (got %d)", fn, (int)k);
	o->k = (size_t)k;
	s = gwb_opt_str(L, idx, fn, "which", "smallest");
	if (!strcmp(s, "smallest"))
		o->which = GWB_END_SMALLEST;
	else if (!strcmp(s, "largest"))
		o->which = GWB_END_LARGEST;
	else if (!strcmp(s, "both"))
		o->which = GWB_END_BOTH;
	else
		luaL_error(L, "%s: option 'which' must be \"smallest\", \"largest\" or \"both\" (got "
			   "\"%s\")", fn, s);
	s = gwb_opt_str(L, idx, fn, "method", "auto");
	if (gwb_dense_method_parse(s, &o->method))
		luaL_error(L, "%s: %s", fn, gwb_errmsg());
	o->tol = gwb_opt_num(L, idx, fn, "tol", 0);
	if (o->tol < 0)
		luaL_error(L, "%s: option 'tol' must be >= 0", fn);
	o->backend = gwb_opt_backend(L, idx, fn);
	o->vectors = gwb_opt_bool(L, idx, fn, "vectors", true);
	o->residuals = gwb_opt_bool(L, idx, fn, "residuals", true);
	o->max_sweeps = gwb_opt_i32(L, idx, fn, "max_sweeps", 0);
	o->threads = gwb_opt_threads(L, idx, fn);
	o->sym_tol = gwb_opt_num(L, idx, fn, "sym_tol", 0);
}

/* --- the run log -------------------------------------------------------------------------- */


/* host_ms: what is neither kernel nor transfer (argument checks, CPU-side checks, result
 * building); the three add up to total_ms. check_ms is the part of kernel_ms (GPU) or host_ms
 * (CPU) spent on symmetry, residual and orthogonality checks. */
static double host_ms_of(const gwb_eigen *e)
{
	double h = e->total_ms - e->kernel_ms - e->transfer_ms;

	return h > 0 ? h : 0.0;
}

static void push_timing(lua_State *L, const gwb_eigen *e)
{
	lua_createtable(L, 0, 5);
	SETN("kernel_ms", e->kernel_ms);
	SETN("transfer_ms", e->transfer_ms);
	SETN("host_ms", host_ms_of(e));
	SETN("check_ms", e->check_ms);
	SETN("total_ms", e->total_ms);
}

void gwb_lua_log_eigen(lua_State *L, const char *kind, const gwb_eigen *e)
{
	/* params table on top: wrap it in the record; params.tag becomes the record's tag */
	lua_createtable(L, 0, 5);
	SETS("kind", kind);
	lua_rotate(L, -2, 1);
	lua_getfield(L, -1, "tag");
	lua_setfield(L, -3, "tag");
	lua_pushnil(L);
	lua_setfield(L, -2, "tag");
	lua_getfield(L, -1, "data");  /* the matrix: name, shape, checksum */
	lua_setfield(L, -3, "data");
	lua_pushnil(L);
	lua_setfield(L, -2, "data");
	lua_setfield(L, -2, "params");
	SETS("backend", e->backend);
	push_timing(L, e);
	lua_setfield(L, -2, "timing");
	lua_createtable(L, 0, 5);
	SETS("method", e->method);
	if (e->max_residual == e->max_residual)
		SETN("max_residual", e->max_residual);
	if (e->orthogonality == e->orthogonality)
		SETN("orthogonality", e->orthogonality);
	SETI("iterations", e->iterations);
	lua_pushboolean(L, e->converged);
	lua_setfield(L, -2, "converged");
	lua_setfield(L, -2, "metrics");
	gwb_lua_log_run(L, -1);
	lua_pop(L, 1);
}

static void log_eigen(lua_State *L, const char *kind, const gwb_eigen *e, const gwb_dense_opts *o,
		      const char *dtype)
{
	lua_createtable(L, 0, 8);
	SETI("n", e->n);
	if (e->svd)
		SETI("m", e->m);
	SETI("k", e->k);
	SETI("count", e->count);
	SETS("method", gwb_dense_method_name(o->method));
	SETS("which", o->which == GWB_END_LARGEST ? "largest" : o->which == GWB_END_BOTH ? "both" :
		      "smallest");
	SETS("dtype", dtype);
	lua_pushboolean(L, o->vectors);
	lua_setfield(L, -2, "vectors");
	gwb_opt_tag(L, 2, kind);  /* every eig.* takes its options at 2 */
	lua_setfield(L, -2, "tag");
	{
		/* the matrix (at 1), so two runs on different matrices are never confused */
		/* in place: a GPU-born matrix is not copied to the host to be named (no checksum
		 * then); the checksum is cached in the matrix until its next write */
		gwb_matrix *A = gwb_lua_checkmatrix_dev(L, 1);
		char hex[24];
		uint64_t sum;
		lua_createtable(L, 0, 6);
		SETI("rows", A->rows);
		SETI("cols", A->cols);
		SETI("count", A->count);
		SETS("dtype", gwb_dtype_name(A->dtype));
		SETS("device", gwb_device_name(gwb_matrix_device(A)));
		if (gwb_matrix_checksum(A, &sum)) {
			snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sum);
			SETS("checksum", hex);
		}
		lua_setfield(L, -2, "data");
	}
	gwb_lua_log_eigen(L, kind, e);
}

/* --- eig.solve, eig.batched, eig.svd ------------------------------------------------------ */

static const char *const solve_keys[] = {"k", "which", "method", "tol", "backend", "vectors",
					 "residuals", "max_sweeps", "threads", "sym_tol", "tag", NULL};
static const char *const batched_keys[] = {"k", "which", "method", "tol", "backend", "vectors",
					   "residuals", "max_sweeps", "threads", "sym_tol", "tag",
					   "gpus", "gpu_standin", "ranks", NULL};

static int l_solve(lua_State *L)
{
	double t0 = gwb_now();
	gwb_matrix *A = gwb_lua_checkmatrix_dev(L, 1);  /* a GPU-resident one is used in place */
	gwb_dense_opts o;
	gwb_eigen *e;

	gwb_opt_check_keys(L, 2, "eig.solve", solve_keys);
	gwb_opt_tag(L, 2, "eig.solve");  /* checked before the solve */
	lua_pop(L, 1);
	read_dense_opts(L, 2, "eig.solve", &o);
	gwb_lua_check(L, gwb_eig_dense(A, &o, &e));
	e->total_ms = (gwb_now() - t0) * 1e3;  /* the wall time of the Lua call */
	gwb_lua_push_eigen(L, e);
	log_eigen(L, "eig.solve", e, &o, gwb_dtype_name(A->dtype));
	return 1;
}

static int l_batched(lua_State *L)
{
	double t0 = gwb_now();
	gwb_matrix *B = gwb_lua_checkmatrix_dev(L, 1);
	gwb_dense_opts o;
	gwb_eigen *e;

	gwb_opt_check_keys(L, 2, "eig.batched", batched_keys);
	gwb_opt_tag(L, 2, "eig.batched");  /* checked before the solve */
	lua_pop(L, 1);
	read_dense_opts(L, 2, "eig.batched", &o);
	if (o.k)
		return luaL_error(L, "eig.batched: a batch gets all pairs of every matrix; drop 'k'");
	/* Vectors cost memory and time for thousands of matrices: off unless asked. */
	o.vectors = gwb_opt_bool(L, 2, "eig.batched", "vectors", false);
	{
		/* the devices the matrices are dealt to (mgpu.h); tests: CPU stand-ins */
		const char *si = gwb_opt_str(L, 2, "eig.batched", "gpu_standin", NULL);
		if (si && strcmp(si, "cpu"))
			return luaL_error(L, "eig.batched: gpu_standin must be \"cpu\" (got \"%s\")", si);
		gwb_opt_gpus(L, 2, "eig.batched", o.backend, si != NULL, &o.gpus);
	}
	{
		/* under mpirun: the matrices dealt to the ranks (eig_ranks.c), or "self" */
		const char *rk = gwb_opt_str(L, 2, "eig.batched", "ranks", "all");
		if (strcmp(rk, "all") && strcmp(rk, "self"))
			return luaL_error(L, "eig.batched: ranks must be \"all\" (the matrices dealt "
					  "to every MPI rank) or \"self\" (this rank solves all) "
					  "(got \"%s\")", rk);
		gwb_lua_check(L, !strcmp(rk, "all") ? gwb_eig_batched_ranks(B, &o, &e) :
			      gwb_eig_batched(B, &o, &e));
	}
	e->total_ms = (gwb_now() - t0) * 1e3;  /* the wall time of the Lua call */
	gwb_lua_push_eigen(L, e);
	log_eigen(L, "eig.batched", e, &o, gwb_dtype_name(B->dtype));
	return 1;
}

static int l_svd(lua_State *L)
{
	static const char *const known[] = {"k", "vectors", "backend", "method", "residuals", "tag",
					    NULL};
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	gwb_dense_opts o;
	gwb_eigen *e;
	const char *m;
	lua_Integer k;

	gwb_opt_check_keys(L, 2, "eig.svd", known);
	gwb_opt_tag(L, 2, "eig.svd");  /* checked before the solve */
	lua_pop(L, 1);
	gwb_dense_opts_default(&o);
	k = gwb_opt_int(L, 2, "eig.svd", "k", 0);
	if (k < 0)
		return luaL_error(L, "eig.svd: option 'k' must be >= 1");
	o.k = (size_t)k;
	o.vectors = gwb_opt_bool(L, 2, "eig.svd", "vectors", true);
	o.residuals = gwb_opt_bool(L, 2, "eig.svd", "residuals", true);
	o.backend = gwb_opt_backend(L, 2, "eig.svd");
	m = gwb_opt_str(L, 2, "eig.svd", "method", "auto");
	if (!strcmp(m, "cusolver") || !strcmp(m, "gesvdj"))
		o.method = GWB_DM_CUSOLVER;
	else if (strcmp(m, "auto") && strcmp(m, "lapack") && strcmp(m, "gesdd"))
		return luaL_error(L, "eig.svd: method must be \"auto\", \"lapack\" (gesdd) or "
				  "\"cusolver\" (gesvdj) (got \"%s\")", m);
	gwb_lua_check(L, gwb_svd_dense(A, &o, &e));
	gwb_lua_push_eigen(L, e);
	log_eigen(L, "eig.svd", e, &o, "f64");
	return 1;
}

/* --- the Eigen userdata ------------------------------------------------------------------- */

static void push_array(lua_State *L, const double *v, size_t n)
{
	size_t i;

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushnumber(L, v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static size_t check_idx(lua_State *L, int arg, size_t lim, const char *what)
{
	lua_Integer v = luaL_checkinteger(L, arg);

	if (v < 1 || (size_t)v > lim)
		luaL_error(L, "%s %d out of range 1..%d", what, (int)v, (int)lim);
	return (size_t)v - 1;
}

/* e:vector(i) or eb:vector(b, i). */
static int e_vector(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);
	size_t b = 0, i;
	double *v;

	if (!gwb_eigen_has_vectors(e))
		return luaL_error(L, "this result has no vectors: solve with {vectors = true}");
	if (e->count > 1 || !lua_isnoneornil(L, 3)) {
		b = check_idx(L, 2, e->count, "matrix");
		i = check_idx(L, 3, e->k, "vector");
	} else {
		i = check_idx(L, 2, e->k, "vector");
	}
	/* a GPU result copies just this vector */
	v = lua_newuserdatauv(L, e->n * sizeof(double), 0);
	gwb_lua_check(L, gwb_eigen_vector_copy(e, b, i, v));
	push_array(L, v, e->n);
	return 1;
}

static int e_left(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);
	size_t i;

	if (!e->svd || !e->left)
		return luaL_error(L, "left singular vectors exist only for eig.svd results with vectors");
	i = check_idx(L, 2, e->k, "vector");
	push_array(L, e->left + i * e->m, e->m);
	return 1;
}

static int e_values(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);
	size_t b = lua_isnoneornil(L, 2) ? 0 : check_idx(L, 2, e->count, "matrix");

	push_array(L, e->values + b * e->k, e->k);
	return 1;
}

static int e_residuals(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);
	size_t b = lua_isnoneornil(L, 2) ? 0 : check_idx(L, 2, e->count, "matrix");

	push_array(L, e->residuals + b * e->k, e->k);
	return 1;
}

static int e_matrix(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);
	size_t b = lua_isnoneornil(L, 2) ? 0 : check_idx(L, 2, e->count, "matrix");
	gwb_matrix *V;

	if (!gwb_eigen_has_vectors(e))
		return luaL_error(L, "this result has no vectors: solve with {vectors = true}");
	/* GPU result: a GPU-resident Matrix in the solver's precision */
	gwb_lua_check(L, gwb_eigen_matrix(e, b, &V));
	gwb_lua_push_matrix(L, V);
	return 1;
}

/* e:to("cpu"): the vectors of a GPU result to the host (widened to f64), device copy freed;
 * e:to("gpu") on a GPU result does nothing, on a CPU result it says why not. */
static int e_to(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);
	const char *s = luaL_checkstring(L, 2);

	if (!strcmp(s, "cpu") || !strcmp(s, "host")) {
		gwb_lua_check(L, gwb_eigen_host_vectors(e));
		gwb_buf_free(e->dvectors);
		e->dvectors = NULL;
	} else if (!strcmp(s, "gpu") || !strcmp(s, "cuda")) {
		if (!e->dvectors && e->vectors)
			return luaL_error(L, "e:to(\"gpu\"): this result was computed on the %s and its "
					  "vectors live there; solve with backend = \"gpu\" (or move the "
					  "vectors: e:matrix():to(\"gpu\"))", e->backend);
	} else {
		return luaL_error(L, "e:to: device must be \"cpu\" or \"gpu\" (got \"%s\")", s);
	}
	lua_settop(L, 1);
	return 1;
}

/* e:check(A): the CPU check (eig_dense.c's dense_check) of this result's vectors against A,
 * recomputed on the host whatever computed the result: for comparing the device checks with
 * the CPU ones, or re-verifying a result. */
static int e_check(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1), *c = NULL;
	gwb_matrix *A = gwb_lua_checkmatrix(L, 2);
	gwb_status rc;
	size_t b;

	if (e->svd)
		return luaL_error(L, "e:check: for eigen results; eig.svd results are checked when made");
	if (!gwb_eigen_has_vectors(e))
		return luaL_error(L, "e:check: this result has no vectors: solve with {vectors = true}");
	if (A->rows != e->n || A->cols != e->n || A->count != e->count)
		return luaL_error(L, "e:check: the matrix is %d x %d (%d of them), the result is of "
				  "order %d (%d of them): pass the matrix that was solved", (int)A->rows,
				  (int)A->cols, (int)A->count, (int)e->n, (int)e->count);
	gwb_lua_check(L, gwb_eigen_host_vectors(e));
	gwb_lua_check(L, gwb_eigen_new(e->n, e->n, e->k, e->count, true, false, &c));
	memcpy(c->values, e->values, e->count * e->k * sizeof(double));
	memcpy(c->vectors, e->vectors, e->count * e->k * e->n * sizeof(double));
	for (b = 0, rc = GWB_OK; !rc && b < e->count; b++)
		rc = gwb_eig_dense_check(c, b, A, b);
	if (rc) {
		gwb_eigen_free(c);
		gwb_lua_check(L, rc);
	}
	lua_createtable(L, 0, 3);
	SETN("max_residual", c->max_residual);
	SETN("orthogonality", c->orthogonality);
	lua_createtable(L, (int)(e->count * e->k), 0);
	for (b = 0; b < e->count * e->k; b++) {
		lua_pushnumber(L, c->residuals[b]);
		lua_rawseti(L, -2, (lua_Integer)b + 1);
	}
	lua_setfield(L, -2, "residuals");
	gwb_eigen_free(c);
	return 1;
}

/* __call of a single result's values array: e:values() / e:values(1) work on every result, as
 * eb:values(b) does on a batch (1 = the array, 2 = the result, 3 = the matrix index). */
static int values_call(lua_State *L)
{
	if (!lua_isnoneornil(L, 3)) {
		lua_Integer b = luaL_checkinteger(L, 3);
		if (b != 1)
			return luaL_error(L, "values: matrix %d is out of range: this result has 1 "
					  "matrix", (int)b);
	}
	lua_settop(L, 1);
	return 1;
}

static int eigen_index(lua_State *L)
{
	leigen *u = gwb_lua_checkudata(L, 1, EIGEN_T, EIGEN_T);
	const char *k = luaL_checkstring(L, 2);
	gwb_eigen *e = u->e;

	if (e) {
		if (!strcmp(k, "values")) {
			/* One matrix: the array. A batch: the method, so eb:values(b) works. */
			if (e->count == 1) {
				push_array(L, e->values, e->k);
				luaL_setmetatable(L, VALUES_T);  /* e:values() and e:values(1) too */
			} else
				lua_pushcfunction(L, e_values);
			return 1;
		}
		if (!strcmp(k, "residuals")) {
			if (e->count == 1) {
				push_array(L, e->residuals, e->k);
			} else {
				size_t b;
				lua_createtable(L, (int)e->count, 0);
				for (b = 0; b < e->count; b++) {
					push_array(L, e->residuals + b * e->k, e->k);
					lua_rawseti(L, -2, (lua_Integer)b + 1);
				}
			}
			return 1;
		}
		if (!strcmp(k, "timing")) {
			push_timing(L, e);
			return 1;
		}
		if (!strcmp(k, "history")) {
			size_t i;
			lua_createtable(L, (int)e->hist_len, 0);
			for (i = 0; i < e->hist_len; i++) {
				lua_createtable(L, 0, 3);
				SETI("iteration", e->hist[i].iteration);
				SETI("converged", e->hist[i].converged);
				SETN("max_residual", e->hist[i].max_residual);
				lua_rawseti(L, -2, (lua_Integer)i + 1);
			}
			return 1;
		}
#define FIELD_I(name, v) if (!strcmp(k, name)) { lua_pushinteger(L, (lua_Integer)(v)); return 1; }
#define FIELD_N(name, v) if (!strcmp(k, name)) { \
		if ((v) != (v)) lua_pushnil(L); else lua_pushnumber(L, (v)); return 1; }
#define FIELD_S(name, v) if (!strcmp(k, name)) { lua_pushstring(L, (v)); return 1; }
		FIELD_I("n", e->n)
		FIELD_I("m", e->m)
		FIELD_I("k", e->k)
		FIELD_I("count", e->count)
		FIELD_I("iterations", e->iterations)
		FIELD_I("sweeps", e->iterations)
		FIELD_N("max_residual", e->max_residual)
		FIELD_N("orthogonality", e->orthogonality)
		FIELD_S("method", e->method)
		FIELD_S("backend", e->backend)
		FIELD_S("dtype", e->dtype)
		FIELD_S("note", e->note)
		if (!strcmp(k, "converged")) {
			lua_pushboolean(L, e->converged);
			return 1;
		}
		if (!strcmp(k, "svd")) {
			lua_pushboolean(L, e->svd);
			return 1;
		}
		if (!strcmp(k, "device")) {  /* where the vectors are */
			lua_pushstring(L, e->dvectors ? "gpu" : "cpu");
			return 1;
		}
		if (!strcmp(k, "has_vectors")) {
			lua_pushboolean(L, gwb_eigen_has_vectors(e));
			return 1;
		}
	}
	luaL_getmetatable(L, EIGEN_T);
	lua_getfield(L, -1, "__methods");
	if (lua_getfield(L, -1, k) == LUA_TNIL && e == NULL)
		return luaL_error(L, "the eigen result was closed");
	return 1;
}

static int eigen_len(lua_State *L)
{
	gwb_eigen *e = check_eigen(L, 1);

	lua_pushinteger(L, (lua_Integer)e->k);
	return 1;
}

static void add_fmt(luaL_Buffer *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_fmt(luaL_Buffer *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	luaL_addstring(b, tmp);
}

static int eigen_tostring(lua_State *L)
{
	leigen *u = gwb_lua_checkudata(L, 1, EIGEN_T, EIGEN_T);
	gwb_eigen *e = u->e;
	luaL_Buffer b;
	size_t i, show;
	char cnt[64], t0[32], t1[32], t2[32], t3[32], t4[32];

	if (!e) {
		lua_pushstring(L, "Eigen (closed)");
		return 1;
	}
	luaL_buffinit(L, &b);
	if (e->svd)
		add_fmt(&b, "SVD: %zu singular values of a %zu x %zu matrix", e->k, e->m, e->n);
	else if (e->count > 1)
		add_fmt(&b, "Eigen batch: %zu matrices of order %zu, all pairs", e->count, e->n);
	else
		add_fmt(&b, "Eigen: %zu of %zu pairs", e->k, e->n);
	add_fmt(&b, " (%s, %s, %s)", e->method, e->backend, e->dtype);
	show = e->k < 8 ? e->k : 8;
	luaL_addstring(&b, e->count > 1 ? "\n  matrix 1 values:" : "\n  values:");
	for (i = 0; i < show; i++)
		add_fmt(&b, " %.10g", e->values[i]);
	if (show < e->k)
		add_fmt(&b, " ... %.10g", e->values[e->k - 1]);
	if (e->max_residual == e->max_residual)
		add_fmt(&b, "\n  max residual %.3g, orthogonality %.3g", e->max_residual,
			e->orthogonality);
	else
		luaL_addstring(&b, "\n  residuals not computed (solve with vectors = true)");
	if (e->iterations) {
		bool sweeps = e->svd || strstr(e->method, "jacobi");
		add_fmt(&b, "; %s%s", gwb_fmt_count(cnt, sizeof(cnt), e->iterations,
			sweeps ? "sweep" : "iteration", NULL), e->converged ? "" : " (NOT converged)");
	}
	add_fmt(&b, "\n  time %s (kernel %s, transfer %s, host %s; checks %s)",
		gwb_fmt_ms(t0, sizeof(t0), e->total_ms), gwb_fmt_ms(t1, sizeof(t1), e->kernel_ms),
		gwb_fmt_ms(t2, sizeof(t2), e->transfer_ms), gwb_fmt_ms(t3, sizeof(t3), host_ms_of(e)),
		gwb_fmt_ms(t4, sizeof(t4), e->check_ms));
	if (e->dvectors)
		luaL_addstring(&b, "\n  vectors on the GPU (e:matrix() stays there; e:vector(i) copies)");
	luaL_pushresult(&b);
	return 1;
}

static const luaL_Reg meta[] = {
	{"__gc", eigen_release},
	{"__close", eigen_release},
	{"__tostring", eigen_tostring},
	{"__index", eigen_index},
	{"__len", eigen_len},
	{NULL, NULL},
};

static const gwb_reg methods[] = {
	{"vector", e_vector, "e:vector(i) -> array  |  eb:vector(b, i) -> array\n"
	 "Eigenvector i (unit length, in the order of e.values) of the matrix, or of matrix b of a\n"
	 "batch. For eig.svd: right singular vector i.\nExample: v = eig.solve(A):vector(1)"},
	{"left", e_left, "e:left(i) -> array\nLeft singular vector i of an eig.svd result.\n"
	 "Example: u1 = eig.svd(A):left(1)"},
	{"values", e_values, "eb:values([b]) -> array\nEigenvalues (ascending) of matrix b of a batch "
	 "(default 1); e.values for one matrix.\nExample: print(eig.batched(B):values(3)[1])"},
	{"residual_list", e_residuals, "eb:residual_list([b]) -> array\nPer-pair residuals "
	 "||Av - lv|| / (||A||_2 ||v||) of matrix b.\nExample: r = eb:residual_list(2)"},
	{"to", e_to, "e:to(\"cpu\") -> e\n"
	 "Copy a GPU result's vectors to the host (as f64) and free their device copy; e.device\n"
	 "says where they are (\"gpu\" until then). Host reads (e:vector, printing) work either\n"
	 "way: e:vector(i) copies one vector when asked.\n"
	 "Example: e = eig.solve(A, {backend = \"gpu\"}):to(\"cpu\")"},
	{"check", e_check, "e:check(A) -> {max_residual, orthogonality, residuals}\n"
	 "Recompute the residuals ||Av - lv|| / (||A|| ||v||) and ||V^T V - I||_max of this result\n"
	 "on the CPU against A (the matrix or batch that was solved); residuals is flat (pair i of\n"
	 "matrix b at (b - 1) * k + i). GPU results are checked on the device when made: this\n"
	 "compares the two.\nExample: e = eig.solve(A, {backend = \"gpu\"}); print(e:check(A).max_residual)"},
	{"matrix", e_matrix, "e:matrix([b]) -> Matrix\nThe eigenvectors as an n x k column-major "
	 "Matrix (of matrix b of a batch). A GPU result gives a GPU-resident Matrix in the\n"
	 "solver's precision (V.device == \"gpu\"; V:to(\"cpu\") or any host read copies it).\n"
	 "Example: V = eig.solve(A):matrix()"},
	{"close", eigen_release, "e:close()\nFree the result now."},
	{NULL, NULL, NULL},
};

/* --- data.pca ----------------------------------------------------------------------------- */

static int pca_tostring(lua_State *L)
{
	luaL_Buffer b;
	lua_Integer k, i, n;
	double cum = 0;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	lua_getfield(L, 1, "k");
	k = lua_tointeger(L, 2);
	lua_getfield(L, 1, "features");
	/* ratio (4) and values (5) below the buffer: it must stay on top while it is added to */
	if (lua_getfield(L, 1, "ratio") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
	}
	if (lua_getfield(L, 1, "values") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
	}
	n = (lua_Integer)lua_rawlen(L, 4) < k ? (lua_Integer)lua_rawlen(L, 4) : k;
	if ((lua_Integer)lua_rawlen(L, 5) < n)
		n = (lua_Integer)lua_rawlen(L, 5);
	luaL_buffinit(L, &b);
	add_fmt(&b, "PCA: %lld of %lld components", (long long)k, (long long)lua_tointeger(L, 3));
	for (i = 1; i <= n; i++) {
		double r, v;
		lua_rawgeti(L, 4, i);
		r = lua_tonumber(L, -1);
		lua_rawgeti(L, 5, i);
		v = lua_tonumber(L, -1);
		lua_pop(L, 2);
		cum += r;
		add_fmt(&b, "\n  PC%-3d variance %-12.6g explained %6.2f%%  cumulative %6.2f%%", (int)i, v,
			100 * r, 100 * cum);
	}
	luaL_pushresult(&b);
	return 1;
}

/* The number at t[i] (t at index t), or raise naming the PCA field that is not one. */
static double pca_num(lua_State *L, int t, lua_Integer i, const char *field)
{
	double v;

	if (lua_rawgeti(L, t, i) != LUA_TNUMBER)
		luaL_error(L, "pca:transform: p.%s[%d] is not a number (was the PCA changed?)", field,
			   (int)i);
	v = lua_tonumber(L, -1);
	lua_pop(L, 1);
	return v;
}

/* d with its text levels recoded to the ones the PCA was fitted on (p.levels; levels.h): a
 * level it never saw is missing. Anchors what it makes on the stack. */
static gwb_dataset *pca_levels(lua_State *L, int pidx, gwb_dataset *d, int p)
{
	char ***lev;
	int *cnt, j, top = lua_gettop(L);
	gwb_levels_report rep;
	gwb_dataset *r;

	if (lua_getfield(L, pidx, "levels") != LUA_TTABLE) {   /* a table made by hand */
		lua_pop(L, 1);
		return d;
	}
	lev = lua_newuserdatauv(L, sizeof(char **) * ((size_t)p + 1), 0);   /* top + 2 */
	cnt = lua_newuserdatauv(L, sizeof(int) * ((size_t)p + 1), 0);       /* top + 3 */
	lua_newtable(L);   /* top + 4: holds each feature's array of labels */
	for (j = 0; j < p; j++) {
		int c, n;
		lev[j] = NULL;
		cnt[j] = 0;
		if (lua_rawgeti(L, top + 1, j + 1) != LUA_TTABLE) {
			lua_pop(L, 1);
			continue;
		}
		n = (int)lua_rawlen(L, -1);
		lev[j] = lua_newuserdatauv(L, sizeof(char *) * ((size_t)n + 1), 0);
		lua_rawseti(L, top + 4, j + 1);
		cnt[j] = n;
		for (c = 0; c < n; c++) {
			if (lua_rawgeti(L, -1, c + 1) != LUA_TSTRING)
				luaL_error(L, "pca:transform: p.levels[%d][%d] is not a string (was the "
					   "PCA changed?)", j + 1, c + 1);
			lev[j][c] = (char *)lua_tostring(L, -1);   /* held by p.levels[j] */
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	gwb_lua_check(L, gwb_levels_match(d, lev, cnt, p, false, "pca:transform", &r, &rep));
	if (!r)
		return d;
	gwb_lua_pushdataset(L, r);
	return r;
}

/* Scores of a dataset on the components: rows x k f64 Matrix (centred with the PCA's means).
 * The dataset's columns are matched to the PCA's by name (gwb_lua_dataset_match). */
static int pca_transform(lua_State *L)
{
	gwb_dataset *d;
	gwb_matrix *S;
	lua_Integer k, p, c, j;
	size_t i;
	double *mean, *comp;
	const char **names = NULL;
	bool pos;
	int ok_k, ok_p;

	luaL_checktype(L, 1, LUA_TTABLE);
	gwb_lua_checkdataset(L, 2);
	lua_settop(L, 2);
	lua_getfield(L, 1, "k");
	k = lua_tointegerx(L, -1, &ok_k);
	lua_getfield(L, 1, "features");
	p = lua_tointegerx(L, -1, &ok_p);
	lua_pop(L, 2);
	if (!ok_k || !ok_p || p < 1 || p > INT_MAX / 2 || k < 1 || k > p)
		return luaL_error(L, "pca:transform: p.k and p.features must be whole numbers with "
				  "1 <= k <= features (was the PCA changed?)");
	if (lua_getfield(L, 1, "mean") != LUA_TTABLE || (lua_Integer)lua_rawlen(L, 3) != p)
		return luaL_error(L, "pca:transform: p.mean must be a list of %d numbers", (int)p);
	if (lua_getfield(L, 1, "components") != LUA_TTABLE || (lua_Integer)lua_rawlen(L, 4) != k)
		return luaL_error(L, "pca:transform: p.components must be a list of %d components",
				  (int)k);
	if (lua_getfield(L, 1, "names") == LUA_TTABLE && (lua_Integer)lua_rawlen(L, 5) == p) {
		/* (the strings stay referenced by p.names, at 5, until the end) */
		names = lua_newuserdatauv(L, sizeof(*names) * (size_t)p, 0);
		for (j = 0; j < p; j++) {
			names[j] = lua_rawgeti(L, 5, j + 1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
			lua_pop(L, 1);
		}
	}
	d = gwb_lua_dataset_match(L, 2, (char *const *)names, (int)p, "pca:transform", "PCA",
				  &pos);
	d = pca_levels(L, 1, d, (int)p);
	/* userdata, so that an error below frees them */
	mean = lua_newuserdatauv(L, (size_t)p * sizeof(double), 0);
	comp = lua_newuserdatauv(L, (size_t)p * (size_t)k * sizeof(double), 0);
	for (j = 0; j < p; j++)
		mean[j] = pca_num(L, 3, j + 1, "mean");
	for (c = 0; c < k; c++) {
		if (lua_rawgeti(L, 4, c + 1) != LUA_TTABLE || (lua_Integer)lua_rawlen(L, -1) != p)
			return luaL_error(L, "pca:transform: p.components[%d] must be a list of %d "
					  "numbers", (int)c + 1, (int)p);
		for (j = 0; j < p; j++)
			comp[c * p + j] = pca_num(L, lua_gettop(L), j + 1, "components[i]");
		lua_pop(L, 1);
	}
	if (gwb_matrix_new(d->rows, (size_t)k, GWB_F64, GWB_ROW_MAJOR, &S))
		return gwb_lua_fail(L, GWB_ENOMEM);
	{
		/* S (rows x k, row-major: column-major k x rows) = comp (k x p) times the centred
		 * block of rows transposed, one DGEMM per block of rows (f64, centred first) */
		size_t rb = ((size_t)1 << 23) / (size_t)p;   /* at most 64 MiB of centred rows */
		double *xc;
		if (rb > 4096)
			rb = 4096;
		if (rb < 1)
			rb = 1;
		if (rb > d->rows)
			rb = d->rows;
		if (!(xc = malloc(rb * (size_t)p * sizeof(double)))) {
			gwb_matrix_free(S);
			return luaL_error(L, "pca:transform: out of memory for %zu x %d centred rows", rb,
					  (int)p);
		}
		for (i = 0; i < d->rows; i += rb) {
			size_t nb = d->rows - i < rb ? d->rows - i : rb, r;
			if (gwb_intr_pending()) {
				free(xc);
				gwb_matrix_free(S);
				gwb_error(GWB_EINTR, "pca:transform: interrupted after %zu of %zu rows", i,
					  d->rows);
				return gwb_lua_fail(L, GWB_EINTR);
			}
			int m = (int)k, n = (int)nb, kk = (int)p, lda = (int)p, ldb = (int)nb, ldc = (int)k;
			const double one = 1, zero = 0;
			for (j = 0; j < p; j++)
				for (r = 0; r < nb; r++)
					xc[(size_t)j * nb + r] = (double)d->X[(size_t)j * d->rows + i + r] - mean[j];
			dgemm_("T", "T", &m, &n, &kk, &one, comp, &lda, xc, &ldb, &zero,
			       (double *)S->data + i * (size_t)k, &ldc, 1, 1);
		}
		free(xc);
	}
	gwb_lua_push_matrix(L, S);
	if (!pos)
		return 1;
	lua_pushstring(L, "columns matched by position: the dataset or the PCA has no column names");
	return 2;   /* a second result: how the columns were matched */
}

static int l_pca(lua_State *L)
{
	static const char *const known[] = {"corr", "backend", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	lua_Integer k = luaL_optinteger(L, 2, 2);
	gwb_matrix *C = NULL;
	gwb_dense_opts o;
	gwb_eigen *e = NULL;
	gwb_status rc;
	double total = 0, cum = 0;
	lua_Integer i, j, p = d->features;
	bool corr;

	gwb_opt_check_keys(L, 3, "data.pca", known);
	gwb_lua_check(L, gwb_dataset_text_check(d, "data.pca"));
	if (k < 1 || k > p)
		return luaL_error(L, "data.pca: k must be in 1..%d (the number of features; got %d)",
				  (int)p, (int)k);
	corr = gwb_opt_bool(L, 3, "data.pca", "corr", false);
	gwb_dense_opts_default(&o);
	o.backend = gwb_opt_backend(L, 3, "data.pca");
	/* Only the k largest pairs (a subset solve); the total variance is the trace. */
	o.k = (size_t)k;
	o.which = GWB_END_LARGEST;
	rc = gwb_matrix_cov(d, corr, &C);
	if (rc == GWB_EINTR)
		return gwb_lua_fail(L, rc);   /* (clears the interrupt: the call has stopped) */
	if (rc)
		return luaL_error(L, "data.pca: %s", gwb_errmsg());
	rc = gwb_eig_dense(C, &o, &e);
	if (!rc)
		rc = gwb_eigen_host_vectors(e);  /* a GPU result's loadings, read below */
	if (rc) {
		gwb_matrix_free(C);
		gwb_eigen_free(e);
		if (rc == GWB_EINTR)
			return gwb_lua_fail(L, rc);
		return luaL_error(L, "data.pca: %s", gwb_errmsg());
	}
	for (i = 0; i < p; i++) {
		double c = ((const double *)C->data)[(size_t)i * (size_t)p + (size_t)i];
		total += c > 0 ? c : 0;
	}
	lua_createtable(L, 0, 10);
	SETI("k", k);
	SETI("features", p);
	lua_pushboolean(L, corr);
	lua_setfield(L, -2, "corr");
	lua_createtable(L, (int)k, 0);   /* values: variances, descending */
	lua_createtable(L, (int)k, 0);   /* ratio */
	lua_createtable(L, (int)k, 0);   /* cumulative */
	lua_createtable(L, (int)k, 0);   /* components */
	for (i = 0; i < k; i++) {
		size_t src = e->k - 1 - (size_t)i;   /* ascending: the largest is last */
		double v = e->values[src], r = total > 0 ? (v > 0 ? v : 0) / total : 0;
		const double *vec = gwb_eigen_vector(e, 0, src);
		/* Sign convention: the largest-magnitude loading is positive. */
		double big = 0, sgn = 1;
		for (j = 0; j < p; j++)
			if (fabs(vec[j]) > big) {
				big = fabs(vec[j]);
				sgn = vec[j] < 0 ? -1 : 1;
			}
		cum += r;
		lua_pushnumber(L, v);
		lua_rawseti(L, -5, i + 1);
		lua_pushnumber(L, r);
		lua_rawseti(L, -4, i + 1);
		lua_pushnumber(L, cum);
		lua_rawseti(L, -3, i + 1);
		lua_createtable(L, (int)p, 0);
		for (j = 0; j < p; j++) {
			lua_pushnumber(L, sgn * vec[j]);
			lua_rawseti(L, -2, j + 1);
		}
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -5, "components");
	lua_setfield(L, -4, "cumulative");
	lua_setfield(L, -3, "ratio");
	lua_setfield(L, -2, "values");
	lua_createtable(L, (int)p, 0);
	for (j = 0; j < p; j++) {
		const float *x = d->X + (size_t)j * d->rows;
		double s = 0, c = 0;
		size_t r;
		for (r = 0; r < d->rows; r++) {
			double t = x[r], u = s + t;
			c += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
			s = u;
		}
		lua_pushnumber(L, (s + c) / (double)d->rows);
		lua_rawseti(L, -2, j + 1);
	}
	lua_setfield(L, -2, "mean");
	if (d->names) {
		lua_createtable(L, (int)p, 0);
		for (j = 0; j < p; j++) {
			lua_pushstring(L, d->names[j] ? d->names[j] : "");
			lua_rawseti(L, -2, j + 1);
		}
		lua_setfield(L, -2, "names");
	}
	/* levels[j]: feature j's text levels, its codes' meaning (pca:transform matches new data
	 * onto them by label, levels.h) */
	lua_createtable(L, 0, 0);
	for (j = 0; j < p; j++)
		if (d->cat_levels && d->cat_levels[j]) {
			int c;
			lua_createtable(L, d->cat_count[j], 0);
			for (c = 0; c < d->cat_count[j]; c++) {
				lua_pushstring(L, d->cat_levels[j][c] ? d->cat_levels[j][c] : "");
				lua_rawseti(L, -2, c + 1);
			}
			lua_rawseti(L, -2, j + 1);
		}
	lua_setfield(L, -2, "levels");
	SETS("method", e->method);
	SETS("backend", e->backend);
	gwb_matrix_free(C);
	gwb_lua_push_eigen(L, e);
	lua_setfield(L, -2, "eigen");
	luaL_setmetatable(L, PCA_T);
	return 1;
}

static const gwb_reg funcs[] = {
	{"solve", l_solve,
	 "eig.solve(A [, opts]) -> Eigen\n"
	 "Eigenpairs of a symmetric matrix. Dense matrices: LAPACK dsyevd / dsyevr on the CPU,\n"
	 "cuSOLVER Xsyevd / Xsyevdx on the GPU. A is checked for symmetry first (sym_tol);\n"
	 "a non-symmetric matrix is an error that points to eig.svd.\n"
	 "Options: k (pairs per end; default all), which (\"smallest\" | \"largest\" | \"both\"),\n"
	 "method (\"auto\" | \"syevd\" | \"syevr\" | \"jacobi\" (cyclic Jacobi reference on the\n"
	 "CPU, our kernel on the GPU) | \"mixed\" (f32 solve + f64 refinement) | \"cusolver\"),\n"
	 "tol (Jacobi threshold), backend (\"auto\" | \"cpu\" | \"gpu\"), vectors (true),\n"
	 "residuals (true), sym_tol (1e-10 f64, 1e-5 f32), max_sweeps, threads (BLAS threads\n"
	 "for this call; default gwb.blas().threads). With k and method \"auto\" only the k wanted\n"
	 "pairs are computed (dsyevr's steps; both ends share one tridiagonal reduction) and\n"
	 "e.note says so. On the CPU an f32 matrix is solved in f64, as numpy.linalg.eigh does.\n"
	 "The result: e.values (ascending), e:vector(i), e.residuals (||Av - lv|| / (||A||_2 ||v||);\n"
	 "||A||_F when only some pairs were computed), e.orthogonality, e.iterations, e.timing\n"
	 "(kernel_ms, transfer_ms, check_ms: residuals and orthogonality, one GEMM and one SYRK,\n"
	 "apart from the solve; total_ms), e.method, e.backend, e.note.\n"
	 "Example: e = eig.solve(mat.laplacian1d(100), {k = 5, which = \"smallest\"})"},
	{"batched", l_batched,
	 "eig.batched(B [, opts]) -> Eigen (batch)\n"
	 "All eigenpairs of every matrix of a batch (mat.batch). GPU: method = \"jacobi\", our\n"
	 "one-sided Jacobi kernel (matrix in shared memory; blocked over column pairs where it\n"
	 "does not fit); \"cusolver\" (cusolverDnXsyevBatched); \"mixed\": f32 sweeps refined\n"
	 "in f64 (f64 batches); \"auto\" takes whichever measured faster on an H200 (ours for\n"
	 "n <= 64, cuSOLVER above). CPU: LAPACK per matrix over threads (threads option), or\n"
	 "method = \"jacobi\" (cyclic Jacobi reference).\n"
	 "Options: vectors (false), method, backend, tol, max_sweeps, threads, residuals,\n"
	 "gpus (1; a count or ids {0, 1}, gwb.gpus() lists them: the matrices are dealt to the\n"
	 "devices in index order and the results gathered in order, vectors on device 0),\n"
	 "ranks (\"all\" under mpirun: the matrices dealt to the MPI ranks, the results gathered\n"
	 "on every rank in order; \"self\": this rank solves them all).\n"
	 "The result: eb:values(b), eb:vector(b, i), eb.max_residual, eb.orthogonality,\n"
	 "eb.sweeps, eb.timing.\n"
	 "Example: eb = eig.batched(mat.batch(1000, 64, {dtype = \"f32\"}), {vectors = true})"},
	{"svd", l_svd,
	 "eig.svd(A [, opts]) -> Eigen (SVD)\n"
	 "Singular value decomposition of a general dense matrix: LAPACK dgesdd on the CPU,\n"
	 "cuSOLVER gesvdj on the GPU. e.values: singular values, descending; e:vector(i): right\n"
	 "singular vectors; e:left(i): left ones; residuals max(||Av - su||, ||A^T u - sv||) / s_max.\n"
	 "Options: k (largest k; default all), vectors (true), backend, method (\"auto\" |\n"
	 "\"lapack\" | \"cusolver\"), residuals.\n"
	 "Example: s = eig.svd(mat.randn(50, 30)).values"},
	{NULL, NULL, NULL},
};

static const char pca_help[] =
	"data.pca(d [, k] [, opts]) -> PCA\n"
	"Principal components of a Dataset through the eigendecomposition of its covariance\n"
	"matrix (opts.corr = true: correlation, i.e. standardized features). Printing shows each\n"
	"component's variance and the explained and cumulative variance. Fields: values\n"
	"(variances, descending), ratio, cumulative, components (k arrays of loadings, largest\n"
	"loading positive), mean, names, levels (each text feature's labels), eigen;\n"
	"p:transform(d) -> rows x k Matrix of scores (d's columns matched by name, its text\n"
	"levels by label: a level the PCA never saw is missing).\n"
	"Options: corr (false), backend.\n"
	"Example: p = data.pca(data.load(\"datasets/iris.csv\", {target = \"species\"}), 2); print(p)";

int gwb_open_eig(lua_State *L)
{
	gwb_lua_newclass(L, EIGEN_T, methods, meta);
	gwb_lua_boxbytes(EIGEN_T, eigen_bytes);
	luaL_newmetatable(L, VALUES_T);
	lua_pushcfunction(L, values_call);
	lua_setfield(L, -2, "__call");
	gwb_lua_sethelp(L, -1, VALUES_T,
			"e.values -> array\nThe eigenvalues of a single result, ascending: e.values[1] is "
			"the smallest. Also callable as e:values() or e:values(1), like eb:values(b) on a "
			"batch, so one script handles both.\nExample: e = eig.solve(mat.laplacian1d(5)); "
			"print(e.values[1], e:values()[1])");
	lua_pop(L, 1);
	luaL_newmetatable(L, PCA_T);
	lua_pushcfunction(L, pca_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_newtable(L);
	lua_pushcfunction(L, pca_transform);
	gwb_lua_sethelp(L, -1, "PCA:transform",
			"p:transform(d) -> Matrix [, note]\nScores (rows x k) of a dataset with the "
			"PCA's features: (x - mean) projected on\nthe components. Columns are "
			"matched by name (another order is fine; missing or\nunexpected ones are "
			"an error); data without names (header = false) by position,\nand then "
			"note says so.\n"
			"Example: S = data.pca(d, 2):transform(d)");
	lua_setfield(L, -2, "transform");
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
	gwb_lua_newlib(L, "eig", funcs);
	lua_pop(L, 1);
	if (lua_getglobal(L, "data") == LUA_TTABLE) {
		lua_pushcfunction(L, l_pca);
		gwb_lua_sethelp(L, -1, "data.pca", pca_help);
		lua_setfield(L, -2, "pca");
	}
	lua_pop(L, 1);
	return 0;
}
