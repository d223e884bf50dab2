/* lapi_eig.c - the `eig` Lua module (eig.solve on dense matrices, eig.batched, eig.svd), the
 * Eigen result userdata "gwb.Eigen", and data.pca (added to the `data` table). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "dataset.h"
#include "dense.h"
#include "eig.h"
#include "lapi.h"

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
	o->max_sweeps = (int)gwb_opt_int(L, idx, fn, "max_sweeps", 0);
	o->threads = (int)gwb_opt_int(L, idx, fn, "threads", 0);
	o->sym_tol = gwb_opt_num(L, idx, fn, "sym_tol", 0);
}

/* --- the run log -------------------------------------------------------------------------- */

#define SETN(k, v) (lua_pushnumber(L, (v)), lua_setfield(L, -2, k))
#define SETI(k, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, k))
#define SETS(k, v) (lua_pushstring(L, (v)), lua_setfield(L, -2, k))

static void push_timing(lua_State *L, const gwb_eigen *e)
{
	lua_createtable(L, 0, 4);
	SETN("kernel_ms", e->kernel_ms);
	SETN("transfer_ms", e->transfer_ms);
	SETN("check_ms", e->check_ms);
	SETN("total_ms", e->total_ms);
}

void gwb_lua_log_eigen(lua_State *L, const char *kind, const gwb_eigen *e)
{
	/* params table on top: wrap it in the record */
	lua_createtable(L, 0, 5);
	SETS("kind", kind);
	lua_rotate(L, -2, 1);
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
	gwb_lua_log_eigen(L, kind, e);
}

/* --- eig.solve, eig.batched, eig.svd ------------------------------------------------------ */

static const char *const solve_keys[] = {"k", "which", "method", "tol", "backend", "vectors",
					 "residuals", "max_sweeps", "threads", "sym_tol", NULL};

static int l_solve(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	gwb_dense_opts o;
	gwb_eigen *e;

	gwb_opt_check_keys(L, 2, "eig.solve", solve_keys);
	read_dense_opts(L, 2, "eig.solve", &o);
	gwb_lua_check(L, gwb_eig_dense(A, &o, &e));
	gwb_lua_push_eigen(L, e);
	log_eigen(L, "eig.solve", e, &o, gwb_dtype_name(A->dtype));
	return 1;
}

static int l_batched(lua_State *L)
{
	gwb_matrix *B = gwb_lua_checkmatrix(L, 1);
	gwb_dense_opts o;
	gwb_eigen *e;

	gwb_opt_check_keys(L, 2, "eig.batched", solve_keys);
	read_dense_opts(L, 2, "eig.batched", &o);
	if (o.k)
		return luaL_error(L, "eig.batched: a batch gets all pairs of every matrix; drop 'k'");
	/* Vectors cost memory and time for thousands of matrices: off unless asked. */
	o.vectors = gwb_opt_bool(L, 2, "eig.batched", "vectors", false);
	gwb_lua_check(L, gwb_eig_batched(B, &o, &e));
	gwb_lua_push_eigen(L, e);
	log_eigen(L, "eig.batched", e, &o, gwb_dtype_name(B->dtype));
	return 1;
}

static int l_svd(lua_State *L)
{
	static const char *const known[] = {"k", "vectors", "backend", "method", "residuals", NULL};
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	gwb_dense_opts o;
	gwb_eigen *e;
	const char *m;
	lua_Integer k;

	gwb_opt_check_keys(L, 2, "eig.svd", known);
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

	if (!e->vectors)
		return luaL_error(L, "this result has no vectors: solve with {vectors = true}");
	if (e->count > 1 || !lua_isnoneornil(L, 3)) {
		b = check_idx(L, 2, e->count, "matrix");
		i = check_idx(L, 3, e->k, "vector");
	} else {
		i = check_idx(L, 2, e->k, "vector");
	}
	push_array(L, gwb_eigen_vector(e, b, i), e->n);
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

	if (!e->vectors)
		return luaL_error(L, "this result has no vectors: solve with {vectors = true}");
	gwb_lua_check(L, gwb_matrix_new(e->n, e->k, GWB_F64, GWB_COL_MAJOR, &V));
	memcpy(V->data, gwb_eigen_vector(e, b, 0), e->n * e->k * sizeof(double));
	gwb_lua_push_matrix(L, V);
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
	leigen *u = luaL_checkudata(L, 1, EIGEN_T);
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
		if (!strcmp(k, "has_vectors")) {
			lua_pushboolean(L, e->vectors != NULL);
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
	leigen *u = luaL_checkudata(L, 1, EIGEN_T);
	gwb_eigen *e = u->e;
	luaL_Buffer b;
	size_t i, show;

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
	if (e->iterations)
		add_fmt(&b, "; %d %s%s", e->iterations, e->svd || strstr(e->method, "jacobi") ? "sweeps" :
			"iterations", e->converged ? "" : " (NOT converged)");
	add_fmt(&b, "\n  time %.3f ms (kernel %.3f ms, transfer %.3f ms", e->total_ms, e->kernel_ms,
		e->transfer_ms);
	if (e->check_ms > 0)
		add_fmt(&b, ", checks %.3f ms", e->check_ms);
	luaL_addstring(&b, ")");
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
	{"matrix", e_matrix, "e:matrix([b]) -> Matrix\nThe eigenvectors as an n x k column-major "
	 "Matrix (of matrix b of a batch).\nExample: V = eig.solve(A):matrix()"},
	{"close", eigen_release, "e:close()\nFree the result now."},
	{NULL, NULL, NULL},
};

/* --- data.pca ----------------------------------------------------------------------------- */

static int pca_tostring(lua_State *L)
{
	luaL_Buffer b;
	lua_Integer k, i;
	double cum = 0;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "k");
	k = lua_tointeger(L, -1);
	lua_getfield(L, 1, "features");
	luaL_buffinit(L, &b);
	add_fmt(&b, "PCA: %d of %d components", (int)k, (int)lua_tointeger(L, -2));
	lua_getfield(L, 1, "ratio");
	lua_getfield(L, 1, "values");
	for (i = 1; i <= k; i++) {
		double r, v;
		lua_rawgeti(L, -2, i);
		r = lua_tonumber(L, -1);
		lua_rawgeti(L, -2, i);
		v = lua_tonumber(L, -1);
		lua_pop(L, 2);
		cum += r;
		add_fmt(&b, "\n  PC%-3d variance %-12.6g explained %6.2f%%  cumulative %6.2f%%", (int)i, v,
			100 * r, 100 * cum);
	}
	lua_pop(L, 4);
	luaL_pushresult(&b);
	return 1;
}

/* Scores of a dataset on the components: rows x k f64 Matrix (centred with the PCA's means). */
static int pca_transform(lua_State *L)
{
	gwb_dataset *d;
	gwb_matrix *S;
	lua_Integer k, p, c, j;
	size_t i;
	double *mean, *comp, *Xc;

	luaL_checktype(L, 1, LUA_TTABLE);
	d = gwb_lua_checkdataset(L, 2);
	lua_getfield(L, 1, "k");
	k = lua_tointeger(L, -1);
	lua_getfield(L, 1, "features");
	p = lua_tointeger(L, -1);
	lua_pop(L, 2);
	if (d->features != p)
		return luaL_error(L, "pca:transform: the dataset has %d features, the PCA %d",
				  d->features, (int)p);
	mean = malloc((size_t)p * sizeof(double));
	comp = malloc((size_t)p * (size_t)k * sizeof(double));
	if (!mean || !comp) {
		free(mean);
		free(comp);
		return luaL_error(L, "pca:transform: out of memory");
	}
	lua_getfield(L, 1, "mean");
	lua_getfield(L, 1, "components");
	for (j = 0; j < p; j++) {
		lua_rawgeti(L, -2, j + 1);
		mean[j] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	for (c = 0; c < k; c++) {
		lua_rawgeti(L, -1, c + 1);
		for (j = 0; j < p; j++) {
			lua_rawgeti(L, -1, j + 1);
			comp[c * p + j] = lua_tonumber(L, -1);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
	if (gwb_matrix_new(d->rows, (size_t)k, GWB_F64, GWB_ROW_MAJOR, &S)) {
		free(mean);
		free(comp);
		return gwb_lua_fail(L, GWB_ENOMEM);
	}
	/* Scores through BLAS, a block of rows at a time: S (row-major rows x k, i.e. k x rows
	 * column-major) = comp^T-as-k x p times Xc^T, with Xc the centred f64 block. */
	Xc = malloc((size_t)p * 4096 * sizeof(double));
	if (!Xc) {
		free(mean);
		free(comp);
		gwb_matrix_free(S);
		return luaL_error(L, "pca:transform: out of memory");
	}
	for (i = 0; i < d->rows; i += 4096) {
		int rb = (int)(d->rows - i < 4096 ? d->rows - i : 4096), ik = (int)k, ip = (int)p;
		char tt = 'T';
		double one = 1.0, zero = 0.0;
		size_t r;
		for (j = 0; j < p; j++)
			for (r = 0; r < (size_t)rb; r++)
				Xc[(size_t)j * (size_t)rb + r] = (double)d->X[(size_t)j * d->rows + i + r] -
								 mean[j];
		/* comp is p x k column-major (component c at comp + c * p) */
		dgemm_(&tt, &tt, &ik, &rb, &ip, &one, comp, &ip, Xc, &rb, &zero,
		       (double *)S->data + i * (size_t)k, &ik, 1, 1);
	}
	free(Xc);
	free(mean);
	free(comp);
	gwb_lua_push_matrix(L, S);
	return 1;
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
	if (rc)
		return luaL_error(L, "data.pca: %s", gwb_errmsg());
	rc = gwb_eig_dense(C, &o, &e);
	if (rc) {
		gwb_matrix_free(C);
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
	 "Options: vectors (false), method, backend, tol, max_sweeps, threads, residuals.\n"
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
	"loading positive), mean, names, eigen; p:transform(d) -> rows x k Matrix of scores.\n"
	"Options: corr (false), backend.\n"
	"Example: p = data.pca(data.load(\"datasets/iris.csv\", {target = \"species\"}), 2); print(p)";

int gwb_open_eig(lua_State *L)
{
	gwb_lua_newclass(L, EIGEN_T, methods, meta);
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
			"p:transform(d) -> Matrix\nScores (rows x k) of a dataset with the PCA's "
			"features: (x - mean) projected on the components.\n"
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
