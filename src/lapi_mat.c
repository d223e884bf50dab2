/* lapi_mat.c - the `mat` Lua module and the Matrix userdata "gwb.Matrix": dense f32/f64
 * matrices and batches of small symmetric ones; generators, tables, datasets, element access,
 * printing, binary save/load. (Matrix Market read/write live in the sparse module's file.) */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "fmt.h"
#include "npy.h"
#include "lapi.h"

#define MATRIX_T "gwb.Matrix"
#define ROW_T "gwb.MatrixRow"

typedef struct lmatrix {
	gwb_matrix *A;   /* NULL once released */
} lmatrix;

/* A row proxy: A[i] (single matrix) so that A[i][j] reads and A[i][j] = v writes. The
 * Matrix userdata is its user value, which keeps it alive. */
typedef struct lrow {
	size_t i;
} lrow;

static int mat_release(lua_State *L)
{
	gwb_matrix_free(gwb_lua_takebox(L, 1, MATRIX_T));
	return 0;
}

static size_t matrix_bytes(const void *A)
{
	return gwb_matrix_bytes(A);
}

static void free_matrix(void *A)
{
	gwb_matrix_free(A);
}

void gwb_lua_push_matrix(lua_State *L, gwb_matrix *A)
{
	gwb_lua_pushbox(L, MATRIX_T, 0, A, free_matrix);
}

gwb_matrix *gwb_lua_checkmatrix_dev(lua_State *L, int arg)
{
	return gwb_lua_checkbox(L, arg, MATRIX_T, MATRIX_T, "matrix");
}

gwb_matrix *gwb_lua_checkmatrix(lua_State *L, int arg)
{
	gwb_matrix *A = gwb_lua_checkmatrix_dev(L, arg);

	gwb_lua_check(L, gwb_matrix_host(A));  /* lazy: copies only after a device write */
	return A;
}

/* --- options ------------------------------------------------------------------------------ */

static gwb_dtype opt_dtype(lua_State *L, int idx, const char *fn, gwb_dtype def)
{
	const char *s = gwb_opt_str(L, idx, fn, "dtype", NULL);
	gwb_dtype t = def;

	if (s && gwb_dtype_parse(s, &t))
		luaL_error(L, "%s: %s", fn, gwb_errmsg());
	return t;
}

static uint64_t opt_seed(lua_State *L, int idx, const char *fn)
{
	return (uint64_t)gwb_opt_int(L, idx, fn, "seed", 1);
}

static size_t check_dim(lua_State *L, int arg, const char *fn, const char *what)
{
	lua_Integer v = luaL_checkinteger(L, arg);

	if (v < 1 || v > (lua_Integer)1 << 31)
		luaL_error(L, "%s: %s must be in 1..2^31 (got %d)", fn, what, (int)v);
	return (size_t)v;
}

/* --- constructors ------------------------------------------------------------------------- */

static int l_randn(lua_State *L)
{
	static const char *const known[] = {"sym", "dtype", "seed", NULL};
	size_t r = check_dim(L, 1, "mat.randn", "rows"), c;
	int oi = 3;
	gwb_matrix *A;

	if (lua_isinteger(L, 2) || lua_type(L, 2) == LUA_TNUMBER) {
		c = check_dim(L, 2, "mat.randn", "cols");
	} else {
		c = r;
		oi = 2;
	}
	gwb_opt_check_keys(L, oi, "mat.randn", known);
	gwb_lua_check(L, gwb_matrix_randn(r, c, gwb_opt_bool(L, oi, "mat.randn", "sym", false),
					  opt_dtype(L, oi, "mat.randn", GWB_F64),
					  opt_seed(L, oi, "mat.randn"), &A));
	gwb_lua_push_matrix(L, A);
	return 1;
}

static gwb_spectrum opt_spectrum(lua_State *L, int idx, const char *fn, const char *key,
				 gwb_spectrum def)
{
	const char *s = gwb_opt_str(L, idx, fn, key, NULL);
	gwb_spectrum sp = def;

	if (s && gwb_spectrum_parse(s, &sp))
		luaL_error(L, "%s: %s", fn, gwb_errmsg());
	return sp;
}

static int l_batch(lua_State *L)
{
	static const char *const known[] = {"dtype", "seed", "spectrum", NULL};
	size_t count = check_dim(L, 1, "mat.batch", "count"), n = check_dim(L, 2, "mat.batch", "n");
	gwb_matrix *B;

	gwb_opt_check_keys(L, 3, "mat.batch", known);
	if (n > 4096)
		return luaL_error(L, "mat.batch: n = %d is large for a batch of small matrices (at most "
				  "4096); use mat.randn(n, n, {sym = true}) for one big matrix", (int)n);
	gwb_lua_check(L, gwb_matrix_batch(count, n,
					  opt_spectrum(L, 3, "mat.batch", "spectrum", GWB_SPEC_RANDN),
					  opt_dtype(L, 3, "mat.batch", GWB_F64),
					  opt_seed(L, 3, "mat.batch"), &B));
	gwb_lua_push_matrix(L, B);
	return 1;
}

static int l_spectral(lua_State *L)
{
	static const char *const known[] = {"dtype", "seed", "kind", NULL};
	size_t n, i;
	double *lam;
	gwb_matrix *A;
	gwb_status rc;

	gwb_opt_check_keys(L, 2, "mat.spectral", known);
	if (lua_istable(L, 1)) {
		n = lua_rawlen(L, 1);
		if (n < 1)
			return luaL_error(L, "mat.spectral: the table of eigenvalues is empty");
	} else {
		n = check_dim(L, 1, "mat.spectral", "n");
	}
	if (n > 4096)
		return luaL_error(L, "mat.spectral: n = %d is too large (at most 4096)", (int)n);
	lam = malloc(n * sizeof(double));
	if (!lam)
		return luaL_error(L, "mat.spectral: out of memory");
	if (lua_istable(L, 1)) {
		for (i = 0; i < n; i++) {
			int isnum;
			lua_rawgeti(L, 1, (lua_Integer)i + 1);
			lam[i] = lua_tonumberx(L, -1, &isnum);
			lua_pop(L, 1);
			if (!isnum) {
				free(lam);
				return luaL_error(L, "mat.spectral: eigenvalue %d is not a number", (int)i + 1);
			}
		}
	} else {
		uint64_t st = opt_seed(L, 2, "mat.spectral") * 7919u + 17u;
		gwb_spectrum_values(opt_spectrum(L, 2, "mat.spectral", "kind", GWB_SPEC_UNIFORM), n,
				    &st, lam);
	}
	rc = gwb_matrix_from_spectrum(n, lam, opt_dtype(L, 2, "mat.spectral", GWB_F64),
				      opt_seed(L, 2, "mat.spectral"), &A);
	free(lam);
	gwb_lua_check(L, rc);
	gwb_lua_push_matrix(L, A);
	return 1;
}

static int l_laplacian1d(lua_State *L)
{
	static const char *const known[] = {"dtype", NULL};
	gwb_matrix *A;
	lua_Integer n = luaL_checkinteger(L, 1);

	gwb_opt_check_keys(L, 2, "mat.laplacian1d", known);
	gwb_lua_check(L, gwb_matrix_laplacian1d(n < 0 ? 0 : (size_t)n,
						opt_dtype(L, 2, "mat.laplacian1d", GWB_F64), &A));
	gwb_lua_push_matrix(L, A);
	return 1;
}

static int l_laplacian2d(lua_State *L)
{
	static const char *const known[] = {"dtype", NULL};
	gwb_matrix *A;
	lua_Integer m = luaL_checkinteger(L, 1);

	gwb_opt_check_keys(L, 2, "mat.laplacian2d", known);
	gwb_lua_check(L, gwb_matrix_laplacian2d(m < 0 ? 0 : (size_t)m,
						opt_dtype(L, 2, "mat.laplacian2d", GWB_F64), &A));
	gwb_lua_push_matrix(L, A);
	return 1;
}

static int l_zeros(lua_State *L)
{
	static const char *const known[] = {"dtype", "layout", NULL};
	size_t r = check_dim(L, 1, "mat.zeros", "rows"), c = r;
	int oi = 2;
	const char *lay;
	gwb_layout layout = GWB_ROW_MAJOR;
	gwb_matrix *A;

	if (lua_type(L, 2) == LUA_TNUMBER) {
		c = check_dim(L, 2, "mat.zeros", "cols");
		oi = 3;
	}
	gwb_opt_check_keys(L, oi, "mat.zeros", known);
	lay = gwb_opt_str(L, oi, "mat.zeros", "layout", "row");
	if (!strcmp(lay, "col") || !strcmp(lay, "column"))
		layout = GWB_COL_MAJOR;
	else if (strcmp(lay, "row"))
		return luaL_error(L, "mat.zeros: layout must be \"row\" or \"col\" (got \"%s\")", lay);
	gwb_lua_check(L, gwb_matrix_new(r, c, opt_dtype(L, oi, "mat.zeros", GWB_F64), layout, &A));
	gwb_lua_push_matrix(L, A);
	return 1;
}

/* Rows of a table of tables; all rows the same length. */
static void table_shape(lua_State *L, int idx, const char *what, size_t *rows, size_t *cols)
{
	size_t r = lua_rawlen(L, idx), i;

	if (r < 1)
		luaL_error(L, "mat.from: %s is empty", what);
	*rows = r;
	*cols = 0;
	for (i = 1; i <= r; i++) {
		size_t c;
		if (lua_rawgeti(L, idx, (lua_Integer)i) != LUA_TTABLE)
			luaL_error(L, "mat.from: row %d of %s is not a table (use {{1, 2}, {3, 4}})",
				   (int)i, what);
		c = lua_rawlen(L, -1);
		lua_pop(L, 1);
		if (i == 1)
			*cols = c;
		else if (c != *cols)
			luaL_error(L, "mat.from: row %d of %s has %d entries, row 1 has %d", (int)i, what,
				   (int)c, (int)*cols);
	}
	if (*cols < 1)
		luaL_error(L, "mat.from: rows of %s are empty", what);
}

static void fill_from_table(lua_State *L, int idx, gwb_matrix *A, size_t b)
{
	size_t i, j;

	for (i = 0; i < A->rows; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i + 1);
		for (j = 0; j < A->cols; j++) {
			int isnum;
			double v;
			lua_rawgeti(L, -1, (lua_Integer)j + 1);
			v = lua_tonumberx(L, -1, &isnum);
			lua_pop(L, 1);
			if (!isnum) {
				size_t cnt = A->count;
				gwb_matrix_free(A);
				luaL_error(L, "mat.from: entry (%d, %d) of matrix %d is not a number",
					   (int)i + 1, (int)j + 1, (int)(cnt > 1 ? b + 1 : 1));
			}
			gwb_matrix_set(A, b, i, j, v);
		}
		lua_pop(L, 1);
	}
}

static int l_from(lua_State *L)
{
	static const char *const known[] = {"dtype", NULL};
	size_t r, c, r2, c2, b, count;
	gwb_dtype t;
	gwb_matrix *A;
	int depth3;

	luaL_checktype(L, 1, LUA_TTABLE);
	gwb_opt_check_keys(L, 2, "mat.from", known);
	t = opt_dtype(L, 2, "mat.from", GWB_F64);
	/* {{{...}}}: a batch of square matrices; {{...}}: one matrix. */
	depth3 = 0;
	if (lua_rawgeti(L, 1, 1) == LUA_TTABLE) {
		depth3 = lua_rawgeti(L, -1, 1) == LUA_TTABLE;
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	if (!depth3) {
		table_shape(L, 1, "the table", &r, &c);
		gwb_lua_check(L, gwb_matrix_new(r, c, t, GWB_ROW_MAJOR, &A));
		fill_from_table(L, 1, A, 0);
		gwb_lua_push_matrix(L, A);
		return 1;
	}
	count = lua_rawlen(L, 1);
	lua_rawgeti(L, 1, 1);
	table_shape(L, lua_gettop(L), "matrix 1", &r, &c);
	lua_pop(L, 1);
	if (r != c)
		return luaL_error(L, "mat.from: batch matrices must be square (matrix 1 is %d x %d)",
				  (int)r, (int)c);
	for (b = 2; b <= count; b++) {
		lua_rawgeti(L, 1, (lua_Integer)b);
		if (!lua_istable(L, -1))
			return luaL_error(L, "mat.from: batch entry %d is not a table", (int)b);
		table_shape(L, lua_gettop(L), "a batch matrix", &r2, &c2);
		lua_pop(L, 1);
		if (r2 != r || c2 != c)
			return luaL_error(L, "mat.from: batch matrix %d is %d x %d, matrix 1 is %d x %d",
					  (int)b, (int)r2, (int)c2, (int)r, (int)c);
	}
	gwb_lua_check(L, gwb_matrix_new_batch(count, r, t, &A));
	for (b = 0; b < count; b++) {
		lua_rawgeti(L, 1, (lua_Integer)b + 1);
		fill_from_table(L, lua_gettop(L), A, b);
		lua_pop(L, 1);
	}
	gwb_lua_push_matrix(L, A);
	return 1;
}

static int cov_common(lua_State *L, const char *fn, bool corr_default)
{
	static const char *const known[] = {"corr", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	gwb_matrix *C;

	gwb_opt_check_keys(L, 2, fn, known);
	gwb_lua_check(L, gwb_matrix_cov(d, gwb_opt_bool(L, 2, fn, "corr", corr_default), &C));
	gwb_lua_push_matrix(L, C);
	return 1;
}

static int l_cov(lua_State *L)
{
	return cov_common(L, "mat.cov", false);
}

static int l_corr(lua_State *L)
{
	return cov_common(L, "mat.corr", true);
}

static int l_load(lua_State *L)
{
	gwb_matrix *A;

	gwb_lua_check(L, gwb_matrix_load(luaL_checkstring(L, 1), &A));
	gwb_lua_push_matrix(L, A);
	return 1;
}

/* --- methods ------------------------------------------------------------------------------ */

static size_t check_index(lua_State *L, int arg, size_t lim, const char *what)
{
	lua_Integer v = luaL_checkinteger(L, arg);

	if (v < 1 || (size_t)v > lim)
		luaL_error(L, "%s index %d out of range 1..%d", what, (int)v, (int)lim);
	return (size_t)v - 1;
}

static int m_get(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	size_t i = check_index(L, 2, A->rows, "row"), j = check_index(L, 3, A->cols, "column");
	size_t b = lua_isnoneornil(L, 4) ? 0 : check_index(L, 4, A->count, "matrix");

	lua_pushnumber(L, gwb_matrix_get(A, b, i, j));
	return 1;
}

static int m_set(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	size_t i = check_index(L, 2, A->rows, "row"), j = check_index(L, 3, A->cols, "column");
	double v = luaL_checknumber(L, 4);
	size_t b = lua_isnoneornil(L, 5) ? 0 : check_index(L, 5, A->count, "matrix");

	gwb_matrix_set(A, b, i, j, v);
	gwb_lua_check(L, gwb_matrix_host_wrote(A, gwb_matrix_index(A, b, i, j), 1));
	return 0;
}

static int m_to(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix_dev(L, 1);
	const char *s = luaL_checkstring(L, 2);
	gwb_device d;

	if (gwb_device_parse(s, &d))
		return luaL_error(L, "Matrix:to: %s", gwb_errmsg());
	gwb_lua_check(L, gwb_matrix_to(A, d));
	lua_settop(L, 1);
	return 1;
}

static int m_save(lua_State *L)
{
	const char *path = luaL_checkstring(L, 2);

	if (gwb_npy_path(path))  /* NumPy: its dtype and layout (C or Fortran order) */
		gwb_lua_check(L, gwb_npy_save_matrix(gwb_lua_checkmatrix(L, 1), path));
	else
		gwb_lua_check(L, gwb_matrix_save(gwb_lua_checkmatrix(L, 1), path));
	return 0;
}

static int m_matrix(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1), *B;
	size_t b = check_index(L, 2, A->count, "matrix");

	gwb_lua_check(L, gwb_matrix_convert(A, b, A->dtype, A->layout, &B));
	gwb_lua_push_matrix(L, B);
	return 1;
}

static int m_astype(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1), *B;
	gwb_dtype t;

	if (gwb_dtype_parse(luaL_checkstring(L, 2), &t))
		return luaL_error(L, "Matrix:astype: %s", gwb_errmsg());
	gwb_lua_check(L, gwb_matrix_convert(A, SIZE_MAX, t, A->layout, &B));
	gwb_lua_push_matrix(L, B);
	return 1;
}

static int m_copy(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1), *B;

	gwb_lua_check(L, gwb_matrix_convert(A, SIZE_MAX, A->dtype, A->layout, &B));
	gwb_lua_push_matrix(L, B);
	return 1;
}

static int m_totable(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	size_t b = lua_isnoneornil(L, 2) ? 0 : check_index(L, 2, A->count, "matrix"), i, j;

	if (A->rows * A->cols > 1u << 24)
		return luaL_error(L, "Matrix:totable: %d x %d is too large for a Lua table",
				  (int)A->rows, (int)A->cols);
	lua_createtable(L, (int)A->rows, 0);
	for (i = 0; i < A->rows; i++) {
		lua_createtable(L, (int)A->cols, 0);
		for (j = 0; j < A->cols; j++) {
			lua_pushnumber(L, gwb_matrix_get(A, b, i, j));
			lua_rawseti(L, -2, (lua_Integer)j + 1);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int m_symmetric(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	double tol = luaL_optnumber(L, 2, A->dtype == GWB_F32 ? 1e-5 : 1e-10), rel = 0, worst = 0;
	size_t b;
	bool ok = true;

	for (b = 0; b < A->count; b++) {
		ok = gwb_matrix_is_symmetric(A, b, tol, &rel, NULL) && ok;
		if (rel > worst)
			worst = rel;
	}
	lua_pushboolean(L, ok);
	lua_pushnumber(L, worst);
	return 2;
}

static int m_norm(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
	size_t b = lua_isnoneornil(L, 2) ? 0 : check_index(L, 2, A->count, "matrix");

	lua_pushnumber(L, gwb_matrix_norm_fro(A, b));
	return 1;
}

/* --- printing and indexing ---------------------------------------------------------------- */

static void add_corner(lua_State *L, luaL_Buffer *buf, const gwb_matrix *A, size_t b)
{
	size_t r = A->rows < 6 ? A->rows : 6, c = A->cols < 6 ? A->cols : 6, i, j;
	char cell[40];

	for (i = 0; i < r; i++) {
		luaL_addstring(buf, "\n  ");
		for (j = 0; j < c; j++) {
			snprintf(cell, sizeof(cell), "%11.4g", gwb_matrix_get(A, b, i, j));
			luaL_addstring(buf, cell);
		}
		if (c < A->cols)
			luaL_addstring(buf, "  ...");
	}
	if (r < A->rows)
		luaL_addstring(buf, "\n  ...");
	(void)L;
}

static int mat_tostring(lua_State *L)
{
	lmatrix *m = gwb_lua_checkudata(L, 1, MATRIX_T, MATRIX_T);
	luaL_Buffer buf;
	char head[160], mem[32];
	const gwb_matrix *A = m->A;

	if (!A) {
		lua_pushstring(L, "Matrix (closed)");
		return 1;
	}
	gwb_lua_check(L, gwb_matrix_host(A));  /* the corner shown: a lazy, cached copy */
	luaL_buffinit(L, &buf);
	gwb_fmt_bytes(mem, sizeof(mem), (double)gwb_matrix_bytes(A));
	if (A->batched)
		snprintf(head, sizeof(head), "Matrix batch: %zu matrices of %zu x %zu %s (%s); "
			 "matrix 1:", A->count, A->rows, A->cols, gwb_dtype_name(A->dtype), mem);
	else
		snprintf(head, sizeof(head), "Matrix %zu x %zu %s, %s-major (%s)", A->rows,
			 A->cols, gwb_dtype_name(A->dtype), A->layout == GWB_ROW_MAJOR ? "row" : "column",
			 mem);
	luaL_addstring(&buf, head);
	if (gwb_matrix_device(A) == GWB_DEVICE_GPU)
		luaL_addstring(&buf, " [on the GPU]");
	add_corner(L, &buf, A, 0);
	luaL_pushresult(&buf);
	return 1;
}

static int mat_len(lua_State *L)
{
	gwb_matrix *A = gwb_lua_checkmatrix(L, 1);

	lua_pushinteger(L, (lua_Integer)(A->batched ? A->count : A->rows));
	return 1;
}

static int mat_index(lua_State *L)
{
	lmatrix *m = gwb_lua_checkudata(L, 1, MATRIX_T, MATRIX_T);
	const char *k;

	if (lua_isinteger(L, 2)) {
		gwb_matrix *A = gwb_lua_checkmatrix(L, 1);
		if (A->batched) {
			/* B[b]: a copy of matrix b. */
			lua_settop(L, 2);
			return m_matrix(L);
		} else {
			size_t i = check_index(L, 2, A->rows, "row");
			lrow *r = gwb_lua_newudata(L, sizeof(*r), 1, ROW_T);
			r->i = i;
			lua_pushvalue(L, 1);
			lua_setiuservalue(L, -2, 1);
			luaL_setmetatable(L, ROW_T);
			return 1;
		}
	}
	k = luaL_checkstring(L, 2);
	if (m->A) {
		const gwb_matrix *A = m->A;
		if (!strcmp(k, "rows")) {
			lua_pushinteger(L, (lua_Integer)A->rows);
			return 1;
		} else if (!strcmp(k, "cols")) {
			lua_pushinteger(L, (lua_Integer)A->cols);
			return 1;
		} else if (!strcmp(k, "count")) {
			lua_pushinteger(L, (lua_Integer)A->count);
			return 1;
		} else if (!strcmp(k, "n")) {
			lua_pushinteger(L, (lua_Integer)A->rows);
			return 1;
		} else if (!strcmp(k, "dtype")) {
			lua_pushstring(L, gwb_dtype_name(A->dtype));
			return 1;
		} else if (!strcmp(k, "layout")) {
			lua_pushstring(L, A->layout == GWB_ROW_MAJOR ? "row" : "col");
			return 1;
		} else if (!strcmp(k, "batched")) {
			lua_pushboolean(L, A->batched);
			return 1;
		} else if (!strcmp(k, "bytes")) {
			lua_pushinteger(L, (lua_Integer)gwb_matrix_bytes(A));
			return 1;
		} else if (!strcmp(k, "kind")) {
			lua_pushstring(L, "dense");
			return 1;
		} else if (!strcmp(k, "device")) {
			lua_pushstring(L, gwb_device_name(gwb_matrix_device(A)));
			return 1;
		}
	}
	luaL_getmetatable(L, MATRIX_T);
	lua_getfield(L, -1, "__methods");
	lua_getfield(L, -1, k);
	return 1;
}

static lrow *check_row(lua_State *L, gwb_matrix **A)
{
	lrow *r = gwb_lua_checkudata(L, 1, ROW_T, ROW_T);

	lua_getiuservalue(L, 1, 1);
	*A = gwb_lua_checkmatrix(L, -1);
	lua_pop(L, 1);
	return r;
}

static int row_index(lua_State *L)
{
	gwb_matrix *A;
	lrow *r = check_row(L, &A);
	size_t j = check_index(L, 2, A->cols, "column");

	lua_pushnumber(L, gwb_matrix_get(A, 0, r->i, j));
	return 1;
}

static int row_newindex(lua_State *L)
{
	gwb_matrix *A;
	lrow *r = check_row(L, &A);
	size_t j = check_index(L, 2, A->cols, "column");

	gwb_matrix_set(A, 0, r->i, j, luaL_checknumber(L, 3));
	gwb_lua_check(L, gwb_matrix_host_wrote(A, gwb_matrix_index(A, 0, r->i, j), 1));
	return 0;
}

static int row_len(lua_State *L)
{
	gwb_matrix *A;

	check_row(L, &A);
	lua_pushinteger(L, (lua_Integer)A->cols);
	return 1;
}

static int row_tostring(lua_State *L)
{
	gwb_matrix *A;
	lrow *r = check_row(L, &A);
	luaL_Buffer b;
	size_t j;
	char cell[40];

	luaL_buffinit(L, &b);
	snprintf(cell, sizeof(cell), "row %zu:", r->i + 1);
	luaL_addstring(&b, cell);
	for (j = 0; j < A->cols && j < 10; j++) {
		snprintf(cell, sizeof(cell), " %.6g", gwb_matrix_get(A, 0, r->i, j));
		luaL_addstring(&b, cell);
	}
	if (A->cols > 10)
		luaL_addstring(&b, " ...");
	luaL_pushresult(&b);
	return 1;
}

static const gwb_reg methods[] = {
	{"get", m_get, "A:get(i, j [, b]) -> number\n"
	 "Element (i, j) (1-based) of the matrix, or of matrix b of a batch. A[i][j] also reads\n"
	 "(and A[i][j] = v writes) a single matrix.\nExample: A = mat.randn(3); print(A:get(1, 2))"},
	{"set", m_set, "A:set(i, j, v [, b])\nSet element (i, j) (of matrix b of a batch).\n"
	 "Example: A:set(1, 1, 4.0)"},
	{"save", m_save, "A:save(path)\n"
	 "Write the matrix (or batch) in gwb's binary format with a checksum; mat.load reads it.\n"
	 "A path ending in .npy writes a NumPy array instead (its dtype; C order for row-major,\n"
	 "Fortran for column-major); mat.read and numpy.load read it.\n"
	 "Example: A:save(\"a.gwbm\"); B = mat.load(\"a.gwbm\")"},
	{"matrix", m_matrix, "B:matrix(b) -> Matrix\nA copy of matrix b of a batch (also B[b]).\n"
	 "Example: B = mat.batch(10, 8); print(B:matrix(3))"},
	{"astype", m_astype, "A:astype(dtype) -> Matrix\nA copy converted to \"f32\" or \"f64\".\n"
	 "Example: A32 = A:astype(\"f32\")"},
	{"copy", m_copy, "A:copy() -> Matrix\nA deep copy.\nExample: B = A:copy()"},
	{"totable", m_totable, "A:totable([b]) -> table\nThe matrix (or matrix b of a batch) as a "
	 "table of rows.\nExample: t = mat.laplacian1d(3):totable()"},
	{"symmetric", m_symmetric, "A:symmetric([tol]) -> ok, asymmetry\n"
	 "Whether every matrix is symmetric within tol (relative: max |a_ij - a_ji| / max |a_ij|;\n"
	 "default 1e-10 for f64, 1e-5 for f32), and the worst relative asymmetry.\n"
	 "Example: print(mat.randn(4, 4, {sym = true}):symmetric())"},
	{"norm", m_norm, "A:norm([b]) -> number\nFrobenius norm (compensated sum) of the matrix or "
	 "of matrix b of a batch.\nExample: print(mat.laplacian1d(10):norm())"},
	{"to", m_to, "A:to(\"gpu\" | \"cpu\") -> A\n"
	 "Move the matrix (or batch) to the GPU or back; A.device says where it is. A GPU-resident\n"
	 "matrix is used in place by eig.solve / eig.batched on the GPU (no copy; backend \"auto\"\n"
	 "follows it there); host reads (get, totable, printing) copy it back once and cache;\n"
	 "A:set writes both copies. All or nothing: on failure (no GPU, out of device memory) it\n"
	 "stays where it was. Returns A.\n"
	 "Example: A = mat.randn(4096, 4096, {sym = true}):to(\"gpu\"); e = eig.solve(A)"},
	{"close", mat_release, "A:close()\nFree the matrix now, host and device memory (also happens "
	 "when it is collected)."},
	{NULL, NULL, NULL},
};

static const luaL_Reg meta[] = {
	{"__gc", mat_release},
	{"__close", mat_release},
	{"__tostring", mat_tostring},
	{"__index", mat_index},
	{"__len", mat_len},
	{NULL, NULL},
};

static const luaL_Reg row_meta[] = {
	{"__index", row_index},
	{"__newindex", row_newindex},
	{"__len", row_len},
	{"__tostring", row_tostring},
	{NULL, NULL},
};

static const gwb_reg funcs[] = {
	{"randn", l_randn,
	 "mat.randn(rows [, cols] [, opts]) -> Matrix\n"
	 "A dense matrix of N(0, 1) entries. Options: sym (false; true gives (G + G^T)/sqrt(2),\n"
	 "a GOE matrix), dtype (\"f64\" | \"f32\"), seed (1).\n"
	 "Example: A = mat.randn(500, 500, {sym = true, dtype = \"f32\", seed = 7})"},
	{"batch", l_batch,
	 "mat.batch(count, n [, opts]) -> Matrix (a batch)\n"
	 "count symmetric n x n matrices stored one after another, for eig.batched. Options:\n"
	 "dtype (\"f64\" | \"f32\"), seed (1), spectrum: \"randn\" (GOE, default), \"uniform\"\n"
	 "(evenly spaced in [-1, 1]), \"graded\" (magnitudes 1 down to 1e-12), \"clustered\"\n"
	 "(clusters 1e-8 wide), \"repeated\" (three values, each repeated): Q diag(l) Q^T.\n"
	 "Example: B = mat.batch(4000, 64, {seed = 1, dtype = \"f32\"})"},
	{"spectral", l_spectral,
	 "mat.spectral(values | n [, opts]) -> Matrix\n"
	 "A symmetric matrix Q diag(values) Q^T with a random orthogonal Q: its eigenvalues are\n"
	 "known. values is a table, or n with opts.kind = \"uniform\" | \"graded\" | \"clustered\"\n"
	 "| \"repeated\". Options: dtype, seed.\n"
	 "Example: A = mat.spectral({1, 2, 3, 4}); print(eig.solve(A).values[4])"},
	{"laplacian1d", l_laplacian1d,
	 "mat.laplacian1d(n [, opts]) -> Matrix\n"
	 "The dense 1-D Laplacian tridiag(-1, 2, -1) of order n (n <= 8192); eigenvalues\n"
	 "2 - 2 cos(k pi / (n + 1)). Options: dtype.\nExample: A = mat.laplacian1d(100)"},
	{"laplacian2d", l_laplacian2d,
	 "mat.laplacian2d(m [, opts]) -> Matrix\n"
	 "The dense five-point Laplacian of an m x m grid, order m^2 (m <= 90 when dense).\n"
	 "Options: dtype.\nExample: A = mat.laplacian2d(20)"},
	{"zeros", l_zeros,
	 "mat.zeros(rows [, cols] [, opts]) -> Matrix\nA zero matrix. Options: dtype, layout "
	 "(\"row\" | \"col\").\nExample: Z = mat.zeros(3, 4, {layout = \"col\"})"},
	{"from", l_from,
	 "mat.from(table [, opts]) -> Matrix\n"
	 "A matrix from a table of rows ({{1, 2}, {3, 4}}), or a batch from a table of square\n"
	 "matrices ({{{2, 1}, {1, 2}}, {{3, 0}, {0, 1}}}). Options: dtype.\n"
	 "Example: A = mat.from({{2, -1}, {-1, 2}})"},
	{"cov", l_cov,
	 "mat.cov(d [, opts]) -> Matrix\n"
	 "The f64 covariance matrix (divisor rows - 1) of a Dataset's features; opts.corr = true\n"
	 "gives the correlation matrix. Columns are centred first (compensated means), the\n"
	 "products go through BLAS (DSYRK in f64 on blocks of 512 rows, the blocks added with\n"
	 "compensation: within 1e-13 of sqrt(C_aa C_bb) of exact sums); missing values are an error.\n"
	 "Example: C = mat.cov(data.load(\"datasets/iris.csv\", {target = \"species\"}))"},
	{"corr", l_corr,
	 "mat.corr(d) -> Matrix\nThe correlation matrix of a Dataset's features (constant\n"
	 "columns: 0 off the diagonal).\nExample: R = mat.corr(d)"},
	{"load", l_load,
	 "mat.load(path) -> Matrix\n"
	 "Read a matrix written by A:save (checks magic, sizes and checksum).\n"
	 "Example: A = mat.load(\"a.gwbm\")"},
	{NULL, NULL, NULL},
};

int gwb_open_mat(lua_State *L)
{
	gwb_lua_newclass(L, MATRIX_T, methods, meta);
	gwb_lua_boxbytes(MATRIX_T, matrix_bytes);
	luaL_newmetatable(L, ROW_T);
	luaL_setfuncs(L, row_meta, 0);
	lua_pop(L, 1);
	gwb_lua_newlib(L, "mat", funcs);
	lua_pop(L, 1);
	return 0;
}
