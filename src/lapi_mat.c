/* lapi_mat.c - the `mat` Lua module and the Matrix userdata "gwb.Matrix". */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dense.h"
#include "lapi.h"

#define MATRIX_T "gwb.Matrix"

typedef struct lmatrix {
	gwb_matrix *A;   /* NULL once released */
} lmatrix;

static int mat_release(lua_State *L)
{
	lmatrix *m = luaL_checkudata(L, 1, MATRIX_T);

	gwb_matrix_free(m->A);
	m->A = NULL;
	return 0;
}

/* Runs under lua_pcall so that a failure to allocate the userdata cannot leak the object. */
static int push_matrix_protected(lua_State *L)
{
	lmatrix *u = lua_newuserdatauv(L, sizeof(*u), 0);

	u->A = lua_touserdata(L, 1);
	luaL_setmetatable(L, MATRIX_T);
	return 1;
}

void gwb_lua_push_matrix(lua_State *L, gwb_matrix *A)
{
	if (!lua_checkstack(L, 3)) {
		gwb_matrix_free(A);
		luaL_error(L, "Lua stack overflow pushing a matrix");
	}
	lua_pushcfunction(L, push_matrix_protected);
	lua_pushlightuserdata(L, A);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		gwb_matrix_free(A);
		lua_error(L);
	}
}

gwb_matrix *gwb_lua_checkmatrix(lua_State *L, int arg)
{
	lmatrix *m = luaL_checkudata(L, arg, MATRIX_T);

	if (!m->A)
		luaL_argerror(L, arg, "the matrix was closed");
	return m->A;
}

static int mat_tostring(lua_State *L)
{
	lmatrix *m = luaL_checkudata(L, 1, MATRIX_T);

	if (!m->A) {
		lua_pushstring(L, "Matrix (closed)");
		return 1;
	}
	if (m->A->batched)
		lua_pushfstring(L, "Matrix batch: %d x %d x %d %s", (int)m->A->count, (int)m->A->rows,
				(int)m->A->cols, gwb_dtype_name(m->A->dtype));
	else
		lua_pushfstring(L, "Matrix %d x %d %s", (int)m->A->rows, (int)m->A->cols,
				gwb_dtype_name(m->A->dtype));
	return 1;
}

static int l_zeros(lua_State *L)
{
	lua_Integer r = luaL_checkinteger(L, 1), c = luaL_optinteger(L, 2, r);
	gwb_dtype t = GWB_F64;
	gwb_matrix *A;

	if (r < 1 || c < 1)
		return luaL_error(L, "mat.zeros: rows and cols must be >= 1");
	gwb_lua_check(L, gwb_matrix_new((size_t)r, (size_t)c, t, GWB_ROW_MAJOR, &A));
	gwb_lua_push_matrix(L, A);
	return 1;
}

static const gwb_reg funcs[] = {
	{"zeros", l_zeros, "mat.zeros(rows [, cols]) -> Matrix\nA zero f64 matrix."},
	{NULL, NULL, NULL},
};

static const luaL_Reg meta[] = {
	{"__gc", mat_release},
	{"__close", mat_release},
	{"__tostring", mat_tostring},
	{NULL, NULL},
};

int gwb_open_mat(lua_State *L)
{
	gwb_lua_newclass(L, MATRIX_T, NULL, meta);
	gwb_lua_newlib(L, "mat", funcs);
	lua_pop(L, 1);
	return 0;
}
