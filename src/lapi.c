/* lapi.c - what every Lua binding shares (as Lua's lauxlib.c): help texts, classes, boxed and
 * tagged userdata, option readers, status -> Lua error, the run log. It calls no binding:
 * the list of modules is lapi_init.c, the `gwb` core module lapi_core.c. */
#define _GNU_SOURCE
#include "lapi.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "blas.h"
#include "dataset.h"
#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#include "lapack.h"
#include "lapi_error.h"
#include "suggest.h"

#define HELP_KEY GWB_LUA_HELP_KEY

void gwb_lua_helptable(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, HELP_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, HELP_KEY);
	}
}

void gwb_lua_sethelp(lua_State *L, int idx, const char *name, const char *text)
{
	idx = lua_absindex(L, idx);
	gwb_lua_helptable(L);
	lua_createtable(L, 0, 2);
	lua_pushstring(L, name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, text ? text : "");
	lua_setfield(L, -2, "text");
	lua_pushvalue(L, idx);
	lua_pushvalue(L, -2);
	lua_settable(L, -4);     /* help[value] = entry */
	lua_setfield(L, -2, name); /* help[name] = entry */
	lua_pop(L, 1);
}

void gwb_lua_newlib(lua_State *L, const char *module, const gwb_reg *regs)
{
	char full[128];
	int n = 0;

	while (regs[n].name)
		n++;
	lua_createtable(L, 0, n);
	for (; regs->name; regs++) {
		lua_pushcfunction(L, regs->fn);
		snprintf(full, sizeof(full), "%s.%s", module, regs->name);
		gwb_lua_sethelp(L, -1, full, regs->help);
		lua_setfield(L, -2, regs->name);
	}
	gwb_lua_watch_module(L, -1, module);  /* "did you mean" for a misspelled function */
	lua_pushvalue(L, -1);
	lua_setglobal(L, module);
}

void gwb_lua_newclass(lua_State *L, const char *tname, const gwb_reg *methods,
		      const luaL_Reg *meta)
{
	char full[128];

	luaL_newmetatable(L, tname);
	if (meta)
		luaL_setfuncs(L, meta, 0);
	lua_newtable(L);
	for (; methods && methods->name; methods++) {
		lua_pushcfunction(L, methods->fn);
		snprintf(full, sizeof(full), "%s:%s", tname, methods->name);
		gwb_lua_sethelp(L, -1, full, methods->help);
		lua_setfield(L, -2, methods->name);
	}
	gwb_lua_watch_methods(L, -1, -2);  /* "did you mean" for a misspelled method or field */
	if (lua_getfield(L, -2, "__index") == LUA_TNIL) {
		lua_pop(L, 1);
		lua_setfield(L, -2, "__index");
	} else {
		/* A custom __index function exists: keep methods reachable as __methods. */
		lua_pop(L, 1);
		lua_setfield(L, -2, "__methods");
	}
	lua_pop(L, 1);
}

int gwb_lua_index_method(lua_State *L)
{
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__methods");
	lua_pushvalue(L, 2);
	lua_rawget(L, -2);
	return 1;
}

/* --- typed userdata ----------------------------------------------------------------------- */
/* Every userdata gwb makes ends in an 8-byte tag, a hash of its type name, after the payload:
 * the debug library can give any userdata any metatable (and every light userdata one), so a
 * metatable alone does not say what the memory holds. */

static uint64_t udata_tag(const char *tname)
{
	uint64_t h = 0xcbf29ce484222325u;   /* FNV-1a, folded with a constant of our own */

	for (; *tname; tname++)
		h = (h ^ (unsigned char)*tname) * 0x100000001b3u;
	return h ^ 0x9e3779b97f4a7c15u;
}

void *gwb_lua_newudata(lua_State *L, size_t size, int nuv, const char *tname)
{
	uint64_t tag = udata_tag(tname);
	char *p;

	gwb_lua_mem_pressure(L);   /* dead C memory counted since the last collection (lapi_mem.c) */
	p = lua_newuserdatauv(L, size + sizeof(tag), nuv);

	memset(p, 0, size);
	memcpy(p + size, &tag, sizeof(tag));
	luaL_setmetatable(L, tname);   /* none when tname is not a registered metatable */
	return p;
}

void *gwb_lua_toudata(lua_State *L, int idx, const char *tname)
{
	uint64_t tag, want = udata_tag(tname);
	size_t len;
	char *p;

	if (lua_type(L, idx) != LUA_TUSERDATA)   /* a full userdata: not a light one */
		return NULL;
	len = lua_rawlen(L, idx);
	p = lua_touserdata(L, idx);
	if (len < sizeof(tag))
		return NULL;
	memcpy(&tag, p + len - sizeof(tag), sizeof(tag));
	return tag == want ? p : NULL;
}

void *gwb_lua_testudata(lua_State *L, int idx, const char *tname)
{
	void *p = gwb_lua_toudata(L, idx, tname);
	int same;

	if (!p || !lua_getmetatable(L, idx))
		return NULL;
	luaL_getmetatable(L, tname);
	same = lua_rawequal(L, -1, -2);
	lua_pop(L, 2);
	return same ? p : NULL;
}

/* The gwb type name whose tag a full userdata carries (the registry's metatables named
 * "gwb.*"), or NULL. */
static const char *real_type(lua_State *L, int idx, char *buf, size_t n)
{
	uint64_t tag;
	size_t len;
	const char *hit = NULL;

	if (lua_type(L, idx) != LUA_TUSERDATA || (len = lua_rawlen(L, idx)) < sizeof(tag))
		return NULL;
	memcpy(&tag, (char *)lua_touserdata(L, idx) + len - sizeof(tag), sizeof(tag));
	lua_pushnil(L);
	while (lua_next(L, LUA_REGISTRYINDEX)) {
		if (lua_type(L, -2) == LUA_TSTRING && !hit) {
			const char *k = lua_tostring(L, -2);
			if (!strncmp(k, "gwb.", 4) && udata_tag(k) == tag) {
				snprintf(buf, n, "%s", k);
				hit = buf;
			}
		}
		lua_pop(L, 1);
	}
	return hit;
}

/* The argument error for a value that is not a tname: luaL_typeerror's, except for a value
 * wearing a gwb metatable it was not made with (debug.setmetatable), which it names. */
static int type_error(lua_State *L, int idx, const char *tname, const char *what)
{
	char buf[64];
	const char *mt, *real;

	idx = lua_absindex(L, idx);
	if (!lua_getmetatable(L, idx))
		return luaL_typeerror(L, idx, what);
	lua_getfield(L, -1, "__name");
	mt = lua_tostring(L, -1);
	if (!mt || strncmp(mt, "gwb.", 4)) {
		lua_pop(L, 2);
		return luaL_typeerror(L, idx, what);
	}
	real = real_type(L, idx, buf, sizeof(buf));
	if (real && !strcmp(real, mt))   /* a gwb object of another type: the plain message */
		return luaL_typeerror(L, idx, what);
	lua_pushfstring(L, "%s expected, got %s%s wearing %s's metatable (set through the debug "
			"library: it is not a %s)", what, real ? "a " : "",
			real ? real : lua_type(L, idx) == LUA_TLIGHTUSERDATA ? "a light userdata" :
			"a userdata gwb did not make", mt, tname);
	return luaL_argerror(L, idx, lua_tostring(L, -1));
}

void *gwb_lua_checkudata(lua_State *L, int idx, const char *tname, const char *what)
{
	void *p = gwb_lua_testudata(L, idx, tname);

	if (!p)
		type_error(L, idx, tname, what);
	return p;
}

/* --- boxed objects ------------------------------------------------------------------------ */
/* The box is a pointer-sized typed userdata; the modules view it through their own one-pointer
 * struct (struct { gwb_dataset *d; }), so here it is only ever read and written with memcpy. */

/* A box holds the object pointer (what the modules read) and the bytes it counts (lapi_mem.c). */
#define BOX_SIZE (2 * sizeof(void *))

void *gwb_lua_newbox(lua_State *L, const char *mt, int nuv)
{
	void *box = gwb_lua_newudata(L, BOX_SIZE, nuv, mt);

	gwb_lua_mem_track(L, box, mt);   /* measured once the caller has stored the object */
	return box;
}

/* Runs under lua_pcall: 1 = the metatable name (light userdata), 2 = nuv. Makes an empty box
 * only: a hook that raises as this returns (Ctrl-C) must not leave a box that owns the object
 * the caller then frees. */
static int newbox_protected(lua_State *L)
{
	gwb_lua_newbox(L, (const char *)lua_touserdata(L, 1), (int)lua_tointeger(L, 2));
	return 1;
}

void gwb_lua_pushbox(lua_State *L, const char *mt, int nuv, void *p, void (*free_fn)(void *))
{
	if (!lua_checkstack(L, 4)) {
		free_fn(p);
		luaL_error(L, "Lua stack overflow pushing a %s", mt);
	}
	lua_pushcfunction(L, newbox_protected);
	lua_pushlightuserdata(L, (void *)mt);
	lua_pushinteger(L, nuv);
	if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
		free_fn(p);  /* no box owns it */
		lua_error(L);
	}
	memcpy(lua_touserdata(L, -1), &p, sizeof(p));  /* cannot fail: the box owns p from here */
	gwb_lua_mem_track(L, lua_touserdata(L, -1), mt);
}

void *gwb_lua_checkbox(lua_State *L, int idx, const char *mt, const char *what, const char *name)
{
	void *box = gwb_lua_testudata(L, idx, mt), *p;

	if (!box)
		type_error(L, idx, mt, what);
	memcpy(&p, box, sizeof(p));
	if (!p) {
		lua_pushfstring(L, "the %s was closed", name);
		luaL_argerror(L, idx, lua_tostring(L, -1));
	}
	return p;
}

bool gwb_lua_index_close(lua_State *L)
{
	if (lua_type(L, 2) != LUA_TSTRING || strcmp(lua_tostring(L, 2), "close") ||
	    !lua_getmetatable(L, 1))
		return false;
	lua_getfield(L, -1, "__methods");
	if (!lua_istable(L, -1)) {
		lua_pop(L, 2);
		return false;
	}
	lua_getfield(L, -1, "close");
	lua_replace(L, -3);
	lua_pop(L, 1);
	return true;
}

/* A gwb box of another type wearing mt (debug.setmetatable) is being collected through mt's
 * __gc: release it as its own type does, through the __gc of the metatable it was made with
 * (else the object's C memory would leak: the tags differ, so mt's release leaves it alone).
 * Only the collector's own call does this: inside a finalizer Lua 5.4 answers every lua_gc
 * option with -1. A __gc, __close or close called by hand on a live value of another type
 * frees nothing of it (test_udata). */
static void release_as_own_type(lua_State *L, int idx)
{
	static _Thread_local int depth;   /* a registry __gc swapped by hand cannot loop */
	char buf[64];
	const char *real = real_type(L, idx, buf, sizeof(buf));

	if (!real || depth || lua_gc(L, LUA_GCISRUNNING) != -1)
		return;
	luaL_getmetatable(L, real);
	if (lua_istable(L, -1) && lua_getfield(L, -1, "__gc") == LUA_TFUNCTION &&
	    lua_iscfunction(L, -1)) {
		lua_pushvalue(L, idx);
		depth++;
		lua_call(L, 1, 0);
		depth--;
		lua_pop(L, 1);
		return;
	}
	lua_pop(L, lua_istable(L, -1) ? 2 : 1);
}

void *gwb_lua_takebox(lua_State *L, int idx, const char *mt)
{
	void *box = gwb_lua_toudata(L, idx, mt), *p;

	if (!box) {   /* __gc or __close of another value given this metatable */
		release_as_own_type(L, lua_absindex(L, idx));
		return NULL;
	}
	memcpy(&p, box, sizeof(p));
	memset(box, 0, sizeof(void *));
	gwb_lua_mem_release(L, box);
	return p;
}

int gwb_lua_fail(lua_State *L, gwb_status st)
{
	const char *m = gwb_errmsg();

	if (st == GWB_EINTR) {
		/* The operation has handled this Ctrl-C: the REPL's stop hook must not replace
		 * its message with a bare "interrupted" while the error unwinds. */
		lua_sethook(L, NULL, 0, 0);
		gwb_intr_clear();
		gwb_lua_note_interrupt();  /* shown as one line */
	}
	if (m && *m)
		return luaL_error(L, "%s", m);
	return luaL_error(L, "%s", gwb_status_str(st));
}

static int get_opt(lua_State *L, int idx, const char *key)
{
	if (lua_isnoneornil(L, idx))
		return LUA_TNIL;
	if (!lua_istable(L, idx)) {
		luaL_typeerror(L, idx, "table of options");
		return LUA_TNIL;
	}
	return lua_getfield(L, idx, key);
}

static int bad_opt(lua_State *L, const char *fn, const char *key, const char *want)
{
	return luaL_error(L, "%s: option '%s' must be %s (got %s)", fn, key, want,
			  luaL_typename(L, -1));
}

lua_Integer gwb_opt_int(lua_State *L, int idx, const char *fn, const char *key, lua_Integer def)
{
	lua_Integer v = def;
	int t = get_opt(L, idx, key);

	if (t == LUA_TNIL)
		;
	else if (t == LUA_TNUMBER) {
		int ok;
		lua_Number x = lua_tonumber(L, -1);
		v = lua_tointegerx(L, -1, &ok);
		/* (lua_pushfstring knows %f, not %g: it prints x as Lua does, "1.5", "nan", "1e+30") */
		if (!ok && x != x)
			luaL_error(L, "%s: %s must be a whole number, got nan", fn, key);
		else if (!ok && (x == HUGE_VAL || x == -HUGE_VAL || x == floor(x)))
			luaL_error(L, "%s: %s must be a whole number within +-2^63, got %f", fn, key, x);
		else if (!ok)
			luaL_error(L, "%s: %s must be a whole number, got %f", fn, key, x);
	} else
		bad_opt(L, fn, key, "an integer");
	if (idx && !lua_isnoneornil(L, idx))
		lua_pop(L, 1);
	return v;
}

lua_Integer gwb_opt_int_in(lua_State *L, int idx, const char *fn, const char *key,
			   lua_Integer def, lua_Integer lo, lua_Integer hi)
{
	lua_Integer v = gwb_opt_int(L, idx, fn, key, def);

	if (v < lo || v > hi)
		luaL_error(L, "%s: option '%s' must be in %I..%I (got %I)", fn, key, lo, hi, v);
	return v;
}

int gwb_opt_i32(lua_State *L, int idx, const char *fn, const char *key, int def)
{
	lua_Integer v = gwb_opt_int(L, idx, fn, key, def);

	if (v < -GWB_OPT_INT_MAX || v > GWB_OPT_INT_MAX)
		luaL_error(L, "%s: option '%s' is out of range (got %I; an integer option holds at "
			   "most +-%d)", fn, key, v, GWB_OPT_INT_MAX);
	return (int)v;
}

int gwb_opt_threads(lua_State *L, int idx, const char *fn)
{
	return (int)gwb_opt_int_in(L, idx, fn, "threads", 0, 0, GWB_OPT_INT_MAX);
}

lua_Number gwb_opt_num(lua_State *L, int idx, const char *fn, const char *key, lua_Number def)
{
	lua_Number v = def;
	int t = get_opt(L, idx, key);

	if (t == LUA_TNUMBER)
		v = lua_tonumber(L, -1);
	else if (t != LUA_TNIL)
		bad_opt(L, fn, key, "a number");
	if (!lua_isnoneornil(L, idx))
		lua_pop(L, 1);
	return v;
}

bool gwb_opt_bool(lua_State *L, int idx, const char *fn, const char *key, bool def)
{
	bool v = def;
	int t = get_opt(L, idx, key);

	if (t == LUA_TBOOLEAN)
		v = lua_toboolean(L, -1);
	else if (t != LUA_TNIL)
		bad_opt(L, fn, key, "true or false");
	if (!lua_isnoneornil(L, idx))
		lua_pop(L, 1);
	return v;
}

const char *gwb_opt_str(lua_State *L, int idx, const char *fn, const char *key, const char *def)
{
	const char *v = def;
	int t = get_opt(L, idx, key);

	if (t == LUA_TSTRING)
		v = lua_tostring(L, -1);  /* still referenced by the options table */
	else if (t != LUA_TNIL)
		bad_opt(L, fn, key, "a string");
	if (!lua_isnoneornil(L, idx))
		lua_pop(L, 1);
	return v;
}

gwb_backend gwb_opt_backend(lua_State *L, int idx, const char *fn)
{
	const char *s = gwb_opt_str(L, idx, fn, "backend", NULL);
	gwb_backend b;

	if (!s)
		return gwb_backend_default;
	if (gwb_backend_parse(s, &b))
		luaL_error(L, "%s: %s", fn, gwb_errmsg());
	return b;
}

bool gwb_lua_internal_option(const char *key)
{
	/* test and tuning knobs: accepted, but not listed to users */
	static const char *const internal[] = {"hybrid_front", "gpu_standin", NULL};
	int i;

	for (i = 0; internal[i]; i++)
		if (!strcmp(key, internal[i]))
			return true;
	return false;
}

void gwb_opt_check_keys(lua_State *L, int idx, const char *fn, const char *const known[])
{
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int i, found = 0;
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING) {
			const char *k = lua_tostring(L, -1);
			for (i = 0; known[i]; i++)
				if (!strcmp(k, known[i]))
					found = 1;
			if (!found) {
				luaL_Buffer b;
				char near[256];
				for (i = 0; known[i]; i++)
					;
				gwb_suggest(k, (const char *const *)known, (size_t)i, NULL, near,
					    sizeof(near));
				luaL_buffinit(L, &b);
				for (i = 0; known[i]; i++) {
					if (gwb_lua_internal_option(known[i]))
						continue;  /* not for users: not listed */
					if (b.n)
						luaL_addstring(&b, ", ");
					luaL_addstring(&b, known[i]);
				}
				luaL_pushresult(&b);
				if (near[0])
					luaL_error(L, "%s: unknown option '%s': did you mean %s? (known: %s)",
						   fn, k, near, lua_tostring(L, -1));
				luaL_error(L, "%s: unknown option '%s' (known: %s)", fn, k,
					   lua_tostring(L, -1));
			}
		} else {
			luaL_error(L, "%s: option keys must be names (got a %s key)", fn,
				   luaL_typename(L, -1));
		}
	}
}

void gwb_opt_tag(lua_State *L, int idx, const char *fn)
{
	int t = lua_isnoneornil(L, idx) || !lua_istable(L, idx) ? LUA_TNIL :
		lua_getfield(L, idx, "tag");
	lua_Integer i, n;

	if (t == LUA_TNIL) {
		if (!lua_isnoneornil(L, idx) && lua_istable(L, idx))
			lua_pop(L, 1);
		lua_pushnil(L);
		return;
	}
	if (t == LUA_TSTRING) {
		lua_createtable(L, 1, 0);
		lua_insert(L, -2);
		lua_rawseti(L, -2, 1);
		return;
	}
	if (t != LUA_TTABLE)
		luaL_error(L, "%s: option 'tag' must be a string or a list of strings (got %s)", fn,
			   luaL_typename(L, -1));
	n = (lua_Integer)lua_rawlen(L, -1);
	lua_createtable(L, (int)n, 0);
	for (i = 1; i <= n; i++) {
		if (lua_rawgeti(L, -2, i) != LUA_TSTRING)
			luaL_error(L, "%s: option 'tag' must be a string or a list of strings (item %I "
				   "is a %s)", fn, i, luaL_typename(L, -1));
		lua_rawseti(L, -2, i);
	}
	lua_remove(L, -2);
}

void gwb_lua_log_run(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	if (lua_getglobal(L, "gwb") != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	if (lua_getfield(L, -1, "log_run") != LUA_TFUNCTION) {
		lua_pop(L, 2);
		return;
	}
	lua_remove(L, -2);
	lua_pushvalue(L, idx);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
		fprintf(stderr, "gwb: warning: could not write the run log: %s\n", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
}
