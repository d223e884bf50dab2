/* embed.c - load the Lua modules compiled into the binary (see embed.h for which copy wins). */
#include "embed.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>

#ifndef GWB_SRCDIR
#define GWB_SRCDIR "."
#endif

/* require's loader: upvalue 1 is the entry. The chunk gets require's arguments. */
static int load_embedded(lua_State *L)
{
	const struct gwb_embedded *e = lua_touserdata(L, lua_upvalueindex(1));
	const char *name = luaL_checkstring(L, 1);

	if (luaL_loadbufferx(L, (const char *)e->code, e->size, e->path, "b") != LUA_OK)
		return luaL_error(L, "gwb: the compiled-in module %s (%s) does not load: %s; rebuild "
				  "gwb (make)", name, e->path, lua_tostring(L, -1));
	lua_pushvalue(L, 1);
	lua_pushstring(L, ":embedded:");
	lua_call(L, 2, 1);
	return 1;
}

/* The source tree's copy was edited after the build (it is there and not the one compiled). */
static int edited(const struct gwb_embedded *e)
{
	char path[4096];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", GWB_SRCDIR, e->path);
	if (stat(path, &sb))
		return 0;
	return (long long)sb.st_size != e->src_size || (long long)sb.st_mtime != e->src_mtime;
}

void gwb_embed_preload(lua_State *L)
{
	const struct gwb_embedded *e;
	const char *env = getenv("GWB_LUA_PATH");

	if (env && *env)
		return;
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	for (e = gwb_embedded; e->module; e++) {
		if (edited(e))
			continue;
		lua_pushlightuserdata(L, (void *)e);
		lua_pushcclosure(L, load_embedded, 1);
		lua_setfield(L, -2, e->module);
	}
	lua_pop(L, 2);
}
