/* lapi_eig.c - the `eig` Lua module and the Eigen result userdata "gwb.Eigen". */
#include <math.h>
#include <string.h>

#include "dense.h"
#include "eig.h"
#include "lapi.h"

#define EIGEN_T "gwb.Eigen"

typedef struct leigen {
	gwb_eigen *e;   /* NULL once released */
} leigen;

static int eigen_release(lua_State *L)
{
	leigen *u = luaL_checkudata(L, 1, EIGEN_T);

	gwb_eigen_free(u->e);
	u->e = NULL;
	return 0;
}

/* Runs under lua_pcall so that a failure to allocate the userdata cannot leak the object. */
static int push_eigen_protected(lua_State *L)
{
	leigen *u = lua_newuserdatauv(L, sizeof(*u), 0);

	u->e = lua_touserdata(L, 1);
	luaL_setmetatable(L, EIGEN_T);
	return 1;
}

void gwb_lua_push_eigen(lua_State *L, gwb_eigen *e)
{
	if (!lua_checkstack(L, 3)) {
		gwb_eigen_free(e);
		luaL_error(L, "Lua stack overflow pushing a eigen");
	}
	lua_pushcfunction(L, push_eigen_protected);
	lua_pushlightuserdata(L, e);
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		gwb_eigen_free(e);
		lua_error(L);
	}
}

static int eigen_tostring(lua_State *L)
{
	leigen *u = luaL_checkudata(L, 1, EIGEN_T);

	if (!u->e)
		lua_pushstring(L, "Eigen (closed)");
	else
		lua_pushfstring(L, "Eigen: %d pairs of order %d (%s, %s)", (int)u->e->k, (int)u->e->n,
				u->e->method, u->e->backend);
	return 1;
}

static const luaL_Reg meta[] = {
	{"__gc", eigen_release},
	{"__close", eigen_release},
	{"__tostring", eigen_tostring},
	{NULL, NULL},
};

static const gwb_reg funcs[] = {
	{NULL, NULL, NULL},
};

int gwb_open_eig(lua_State *L)
{
	gwb_lua_newclass(L, EIGEN_T, NULL, meta);
	gwb_lua_newlib(L, "eig", funcs);
	lua_pop(L, 1);
	return 0;
}
