/* lapi_error.c - what an error shows (lapi_error.h). The front end's message handler asks here
 * with the stack of the error still standing: who raised it (a function gwb registered, or a
 * file of gwb's Lua library, is gwb's API; anything else is user code), whether it was Ctrl-C,
 * whether gwb.traceback asks for everything, and whether a lookup in one of gwb's modules or
 * classes missed the name the message complains about (then the nearest names, suggest.c). */
#include "lapi_error.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lapi.h"
#include "suggest.h"

#define MISS_KEY "gwb.miss"  /* registry: the last miss, {key, owner, name, sep} */

static int interrupt_raised;

void gwb_lua_note_interrupt(void)
{
	interrupt_raised = 1;
}

void gwb_lua_forget_miss(lua_State *L)
{
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, MISS_KEY);
	interrupt_raised = 0;
}

/* __index of a watched table: remember the key and where it was looked for; the answer is
 * nil, as without the watch. Upvalues: owner (module table or class metatable), its name,
 * the separator people type ("." or ":"). */
static int watch_index(lua_State *L)
{
	if (lua_type(L, 2) != LUA_TSTRING)
		return 0;
	lua_createtable(L, 0, 4);
	lua_pushvalue(L, 2);
	lua_setfield(L, -2, "key");
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_setfield(L, -2, "owner");
	lua_pushvalue(L, lua_upvalueindex(2));
	lua_setfield(L, -2, "name");
	lua_pushvalue(L, lua_upvalueindex(3));
	lua_setfield(L, -2, "sep");
	lua_setfield(L, LUA_REGISTRYINDEX, MISS_KEY);
	return 0;
}

static void watch(lua_State *L, int idx, int owner, const char *name, const char *sep)
{
	idx = lua_absindex(L, idx);
	owner = lua_absindex(L, owner);
	if (lua_getmetatable(L, idx)) {  /* someone else's metatable: leave it be */
		lua_pop(L, 1);
		return;
	}
	lua_createtable(L, 0, 1);
	lua_pushvalue(L, owner);
	lua_pushstring(L, name);
	lua_pushstring(L, sep);
	lua_pushcclosure(L, watch_index, 3);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, idx);
}

void gwb_lua_watch_module(lua_State *L, int idx, const char *owner)
{
	watch(L, idx, idx, owner, ".");
}

void gwb_lua_watch_methods(lua_State *L, int idx, int mt)
{
	const char *tname;

	idx = lua_absindex(L, idx);
	mt = lua_absindex(L, mt);
	lua_getfield(L, mt, "__name");
	tname = lua_tostring(L, -1);
	if (tname && !strncmp(tname, "gwb.", 4))
		tname += 4;
	watch(L, idx, mt, tname ? tname : "object", ":");
	lua_pop(L, 1);
}

/* Append the string keys of the table at idx to the array at arr (both absolute). */
static void add_keys(lua_State *L, int idx, int arr)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING && lua_tostring(L, -1)[0] != '_') {
			lua_pushvalue(L, -1);
			lua_rawseti(L, arr, (lua_Integer)lua_rawlen(L, arr) + 1);
		}
	}
}

const char *gwb_lua_push_suggestion(lua_State *L, const char *word, int idx)
{
	return gwb_lua_push_suggestion_as(L, word, idx, NULL);
}

const char *gwb_lua_push_suggestion_as(lua_State *L, const char *word, int idx,
				       const char *prefix)
{
	size_t n, i;
	const char **names;
	char out[512];

	idx = lua_absindex(L, idx);
	n = lua_type(L, idx) == LUA_TTABLE ? lua_rawlen(L, idx) : 0;
	names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		return lua_pushliteral(L, "");
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i + 1);
		names[i] = lua_tostring(L, -1);  /* kept alive by the array */
		lua_pop(L, 1);
	}
	gwb_suggest(word, names, n, prefix, out, sizeof(out));
	free(names);
	return lua_pushstring(L, out);
}

/* The nearest methods and fields of the class whose metatable is at mt to name, written as
 * people type them ('d:head', 'd.rows': the variable name help uses for the class). Pushes
 * the text, "" when none is near. */
static const char *class_suggestion(lua_State *L, const char *name, int mt)
{
	int top = lua_gettop(L), meth, nm, i, k;
	const char *var = "obj", *tname, **names;
	size_t n = 0, j, pick[3];
	luaL_Buffer b;

	mt = lua_absindex(L, mt);
	tname = (lua_getfield(L, mt, "__name"), lua_tostring(L, -1));
	/* help.lua's name for a value of the class (d, f, e, A) */
	if (tname && lua_getglobal(L, "package") == LUA_TTABLE &&
	    lua_getfield(L, -1, "loaded") == LUA_TTABLE &&
	    lua_getfield(L, -1, "gwb.help") == LUA_TTABLE &&
	    lua_getfield(L, -1, "classes") == LUA_TTABLE &&
	    lua_getfield(L, -1, tname) == LUA_TTABLE &&
	    lua_getfield(L, -1, "var") == LUA_TSTRING)
		var = lua_tostring(L, -1);
	lua_newtable(L);
	meth = lua_gettop(L);
	if (lua_getfield(L, mt, "__methods") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_getfield(L, mt, "__index");
	}
	add_keys(L, lua_gettop(L), meth);
	nm = (int)lua_rawlen(L, meth);
	lua_getfield(L, mt, "__fields");
	add_keys(L, lua_gettop(L), meth);
	n = lua_rawlen(L, meth);
	names = calloc(n ? n : 1, sizeof(*names));
	if (!names) {
		lua_settop(L, top);
		return lua_pushliteral(L, "");
	}
	for (j = 0; j < n; j++) {
		lua_rawgeti(L, meth, (lua_Integer)j + 1);
		names[j] = lua_tostring(L, -1);
		lua_pop(L, 1);
	}
	k = gwb_suggest_pick(name, names, n, pick);
	luaL_buffinit(L, &b);
	for (i = 0; i < k; i++) {
		lua_pushfstring(L, "%s'%s%s%s'", i ? " or " : "", var, (int)pick[i] < nm ? ":" : ".",
				names[pick[i]]);
		luaL_addvalue(&b);
	}
	free(names);
	luaL_pushresult(&b);
	lua_replace(L, top + 1);
	lua_settop(L, top + 1);
	return lua_tostring(L, -1);
}

/* The name inside "(field 'x')", "(method 'x')" or "(global 'x')" of a Lua runtime error, kind
 * set to what it is; NULL when the message names none. Pushes the name. */
static const char *varinfo(lua_State *L, const char *msg, const char **kind)
{
	static const char *const kinds[] = {"field", "method", "global", NULL};
	int i;

	for (i = 0; kinds[i]; i++) {
		char pat[24];
		const char *p, *q;
		snprintf(pat, sizeof(pat), "(%s '", kinds[i]);
		if ((p = strstr(msg, pat)) && (q = strstr(p + strlen(pat), "')"))) {
			p += strlen(pat);
			*kind = kinds[i];
			return lua_pushlstring(L, p, (size_t)(q - p));
		}
	}
	return NULL;
}

/* Push msg, with what a miss the message names has nearby: "...; data has no 'laod': did you
 * mean 'data.load'?" */
static const char *explain_miss(lua_State *L, const char *msg)
{
	int top = lua_gettop(L), arr;
	const char *kind = NULL, *name = varinfo(L, msg, &kind);
	const char *sug;

	if (!name) {
		lua_settop(L, top);
		return lua_pushstring(L, msg);
	}
	lua_newtable(L);
	arr = lua_gettop(L);
	if (!strcmp(kind, "global")) {
		lua_pushglobaltable(L);
		add_keys(L, lua_gettop(L), arr);
		sug = gwb_lua_push_suggestion(L, name, arr);
		if (*sug)
			lua_pushfstring(L, "%s; did you mean %s?", msg, sug);
		else
			lua_pushstring(L, msg);
		goto out;
	}
	if (lua_getfield(L, LUA_REGISTRYINDEX, MISS_KEY) != LUA_TTABLE ||
	    lua_getfield(L, -1, "key") != LUA_TSTRING || strcmp(lua_tostring(L, -1), name)) {
		lua_pushstring(L, msg);
		goto out;
	}
	lua_pop(L, 1);
	{
		int miss = lua_gettop(L), owner;
		const char *oname, *sep;
		char prefix[80];
		lua_getfield(L, miss, "owner");
		owner = lua_gettop(L);
		oname = (lua_getfield(L, miss, "name"), lua_tostring(L, -1));
		sep = (lua_getfield(L, miss, "sep"), lua_tostring(L, -1));
		if (!oname || !sep) {
			lua_pushstring(L, msg);
			goto out;
		}
		if (!strcmp(sep, ":")) {  /* a class: its methods and its fields */
			lua_pushfstring(L, "%s has no '%s'", oname, name);
			sug = class_suggestion(L, name, owner);
			if (*sug)
				lua_pushfstring(L, "%s; %s: did you mean %s?", msg, lua_tostring(L, -2),
						sug);
			else
				lua_pushfstring(L, "%s; %s (help(obj) lists its methods and fields)",
						msg, lua_tostring(L, -2));
			goto out;
		}
		add_keys(L, owner, arr);
		snprintf(prefix, sizeof(prefix), "%s%s", oname, sep);
		sug = gwb_lua_push_suggestion_as(L, name, arr, prefix);
		if (*sug)
			lua_pushfstring(L, "%s; %s has no '%s': did you mean %s?", msg, oname, name, sug);
		else
			lua_pushfstring(L, "%s; %s has no '%s' (help(%s) lists what it has)", msg, oname,
					name, oname);
	}
out:
	lua_replace(L, top + 1);
	lua_settop(L, top + 1);
	gwb_lua_forget_miss(L);
	return lua_tostring(L, -1);
}

/* Is the source of a Lua function one of gwb's own Lua files (lua/gwb/...)? */
static int gwb_source(const char *src)
{
	return src && (strstr(src, "lua/gwb/") != NULL);
}

/* Is the function that lua_getinfo(..., "f") pushed one gwb registered (it has help)? Pops
 * it. */
static int gwb_function(lua_State *L)
{
	int r = 0;

	if (lua_getfield(L, LUA_REGISTRYINDEX, GWB_LUA_HELP_KEY) == LUA_TTABLE) {
		lua_pushvalue(L, -2);
		r = lua_rawget(L, -2) != LUA_TNIL;
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
	return r;
}

/* Who raised the error: 1 gwb's API (a registered C function or gwb's Lua library), 0 user
 * code. The first frame that is either decides; C helpers in between (error, assert,
 * metamethods) do not. */
static int raised_by_gwb(lua_State *L)
{
	lua_Debug ar;
	int level;

	for (level = 1; lua_getstack(L, level, &ar); level++) {
		lua_getinfo(L, "Sf", &ar);
		if (!strcmp(ar.what, "C")) {
			if (gwb_function(L))
				return 1;
			continue;
		}
		lua_pop(L, 1);
		return gwb_source(ar.source);
	}
	return 0;
}

/* The innermost user frame's file:line when it is a file (a script), else NULL. */
static const char *user_where(lua_State *L)
{
	lua_Debug ar;
	int level;

	for (level = 1; lua_getstack(L, level, &ar); level++) {
		lua_getinfo(L, "Sl", &ar);
		if (!strcmp(ar.what, "C") || gwb_source(ar.source))
			continue;
		if (ar.source[0] != '@' || ar.currentline <= 0)
			return NULL;
		return lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
	}
	return NULL;
}

/* msg without a leading "<gwb's Lua file>:<line>: " (a gwb Lua function's error() said it,
 * not the user's code). */
static const char *strip_gwb_where(const char *msg)
{
	const char *p = strstr(msg, "lua/gwb/"), *c;

	if (!p || strchr(msg, ' ') < p)
		return msg;
	c = strstr(p, ".lua:");
	if (!c)
		return msg;
	c += 5;
	while (*c >= '0' && *c <= '9')
		c++;
	if (c[0] == ':' && c[1] == ' ')
		return c + 2;
	return msg;
}

/* The user frames of the stack, as luaL_traceback writes frames. Pushes the text ("" when
 * there is at most one: the message's own location says it). */
static const char *user_traceback(lua_State *L)
{
	luaL_Buffer b;
	lua_Debug ar;
	int level, n = 0;

	luaL_buffinit(L, &b);
	for (level = 1; lua_getstack(L, level, &ar); level++) {
		lua_getinfo(L, "Slnt", &ar);
		if (!strcmp(ar.what, "C") || gwb_source(ar.source))
			continue;
		n++;
		lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
		luaL_addvalue(&b);
		if (!strcmp(ar.what, "main"))
			lua_pushliteral(L, "main chunk");
		else if (ar.name && *ar.namewhat)
			lua_pushfstring(L, "%s '%s'", !strcmp(ar.namewhat, "global") ? "function" :
					ar.namewhat, ar.name);
		else
			lua_pushfstring(L, "function <%s:%d>", ar.short_src, ar.linedefined);
		luaL_addvalue(&b);
	}
	luaL_pushresult(&b);
	if (n <= 1) {
		lua_pop(L, 1);
		return lua_pushliteral(L, "");
	}
	lua_pushfstring(L, "\nstack traceback:%s", lua_tostring(L, -1));
	lua_remove(L, -2);
	return lua_tostring(L, -1);
}

static int traceback_wanted(lua_State *L)
{
	int on = 0;

	if (lua_getglobal(L, "gwb") == LUA_TTABLE) {
		lua_getfield(L, -1, "traceback");
		on = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return on;
}

const char *gwb_lua_errmsg(lua_State *L, const char *msg)
{
	int top = lua_gettop(L), intr = interrupt_raised;
	const char *m;

	interrupt_raised = 0;
	m = explain_miss(L, msg);
	if (traceback_wanted(L)) {
		luaL_traceback(L, L, m, 1);
	} else if (intr) {
		lua_pushstring(L, m);  /* Ctrl-C: one line */
	} else if (raised_by_gwb(L)) {
		const char *where = user_where(L);
		m = strip_gwb_where(m);
		if (where && strncmp(m, where, strlen(where)))
			lua_pushfstring(L, "%s%s", where, m);
		else
			lua_pushstring(L, m);
	} else {
		user_traceback(L);
		lua_pushfstring(L, "%s%s", m, lua_tostring(L, -1));
	}
	lua_replace(L, top + 1);
	lua_settop(L, top + 1);
	return lua_tostring(L, -1);
}

int gwb_lua_suggest(lua_State *L)
{
	const char *word = luaL_checkstring(L, 1), *s;

	luaL_checktype(L, 2, LUA_TTABLE);
	s = gwb_lua_push_suggestion_as(L, word, 2, luaL_optstring(L, 3, NULL));
	if (!*s) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushfstring(L, "did you mean %s?", s);
	return 1;
}
