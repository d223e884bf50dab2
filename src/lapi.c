/* lapi.c - shared Lua binding helpers and the list of modules. */
#include "lapi.h"

#include <stdio.h>
#include <string.h>

#include "blas.h"
#include "gpu.h"
#include "intr.h"

#define HELP_KEY "gwb.help"   /* registry: value -> {name, text}; name -> {name, text} */

/* The one list of modules that gwb opens, in order. */
static const lua_CFunction openers[] = {
	gwb_open_core,
	gwb_open_gpu,
	gwb_open_data,
	gwb_open_rf,
	gwb_open_panel,
	gwb_open_teach,
	gwb_open_mat,
	gwb_open_eig,
	gwb_open_sparse,
	NULL,
};

void gwb_lua_openlibs(lua_State *L)
{
	int i;

	for (i = 0; openers[i]; i++) {
		lua_pushcfunction(L, openers[i]);
		lua_call(L, 0, 0);
	}
}

static void help_table(lua_State *L)
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
	help_table(L);
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

/* --- boxed objects ------------------------------------------------------------------------ */
/* The box is a pointer-sized userdata; the modules view it through their own one-pointer struct
 * (struct { gwb_dataset *d; }), so here it is only ever read and written with memcpy. */

void *gwb_lua_newbox(lua_State *L, const char *mt, int nuv)
{
	void *box = lua_newuserdatauv(L, sizeof(void *), nuv);

	memset(box, 0, sizeof(void *));
	luaL_setmetatable(L, mt);
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
}

void *gwb_lua_checkbox(lua_State *L, int idx, const char *mt, const char *what, const char *name)
{
	void *box = luaL_testudata(L, idx, mt), *p;

	if (!box)
		luaL_typeerror(L, idx, what);
	memcpy(&p, box, sizeof(p));
	if (!p) {
		lua_pushfstring(L, "the %s was closed", name);
		luaL_argerror(L, idx, lua_tostring(L, -1));
	}
	return p;
}

void *gwb_lua_takebox(lua_State *L, int idx, const char *mt)
{
	void *box = luaL_checkudata(L, idx, mt), *p;

	memcpy(&p, box, sizeof(p));
	memset(box, 0, sizeof(void *));
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
		if (!ok) {
			if (x != x || x >= 9.2e18 || x <= -9.2e18)
				bad_opt(L, fn, key, "an integer");
			v = (lua_Integer)x;
			if ((lua_Number)v != x)
				luaL_error(L, "%s: option '%s' must be an integer (got %g)", fn, key, x);
		}
	} else
		bad_opt(L, fn, key, "an integer");
	if (idx && !lua_isnoneornil(L, idx))
		lua_pop(L, 1);
	return v;
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
				luaL_buffinit(L, &b);
				for (i = 0; known[i]; i++) {
					if (i)
						luaL_addstring(&b, ", ");
					luaL_addstring(&b, known[i]);
				}
				luaL_pushresult(&b);
				luaL_error(L, "%s: unknown option '%s' (known: %s)", fn, k,
					   lua_tostring(L, -1));
			}
		} else {
			luaL_error(L, "%s: option keys must be names (got a %s key)", fn,
				   luaL_typename(L, -1));
		}
	}
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

/* --- the core module: help registry access, version, backend default ---------------------- */

static int core_helpentry(lua_State *L)
{
	help_table(L);
	lua_pushvalue(L, 1);
	lua_gettable(L, -2);
	return 1;
}

static int core_helpall(lua_State *L)
{
	help_table(L);
	return 1;
}

static int core_backend(lua_State *L)
{
	if (!lua_isnoneornil(L, 1)) {
		gwb_backend b;
		if (gwb_backend_parse(luaL_checkstring(L, 1), &b))
			return luaL_error(L, "gwb.backend: %s", gwb_errmsg());
		gwb_backend_default = b;
	}
	lua_pushstring(L, gwb_backend_name(gwb_backend_default));
	return 1;
}

/* gwb.blas([{threads = n}]): which BLAS/LAPACK is loaded and its threads (blas.h). */
static int core_blas(lua_State *L)
{
	static const char *const keys[] = {"threads", NULL};
	gwb_blas_info bi;
	const char *note;

	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		gwb_opt_check_keys(L, 1, "gwb.blas", keys);
		lua_getfield(L, 1, "threads");
		if (!lua_isnil(L, -1) &&
		    gwb_blas_set_default_threads((int)gwb_opt_int(L, 1, "gwb.blas", "threads", 0)))
			return luaL_error(L, "gwb.blas: %s", gwb_errmsg());
		lua_pop(L, 1);
	}
	gwb_blas_get_info(&bi);
	note = gwb_blas_reference_note();
	lua_createtable(L, 0, 10);
	lua_pushstring(L, bi.name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, bi.version);
	lua_setfield(L, -2, "version");
	lua_pushstring(L, bi.blas_path);
	lua_setfield(L, -2, "blas");
	lua_pushstring(L, bi.lapack_path);
	lua_setfield(L, -2, "lapack");
	lua_pushinteger(L, bi.threads);
	lua_setfield(L, -2, "threads");
	lua_pushinteger(L, bi.default_threads);
	lua_setfield(L, -2, "default_threads");
	lua_pushstring(L, bi.threads_from);
	lua_setfield(L, -2, "threads_from");
	lua_pushboolean(L, bi.settable);
	lua_setfield(L, -2, "settable");
	lua_pushboolean(L, bi.reference);
	lua_setfield(L, -2, "reference");
	if (note) {
		lua_pushstring(L, note);
		lua_setfield(L, -2, "note");
	}
	return 1;
}

static const gwb_reg core_funcs[] = {
	{"helpentry", core_helpentry, "gwb.helpentry(x) -> {name, text} or nil\n"
	 "The help record for a value or a dotted name (used by help())."},
	{"helpall", core_helpall, "gwb.helpall() -> table\nEvery help record, by value and by name."},
	{"backend", core_backend, "gwb.backend([name]) -> name\n"
	 "Get or set the default backend for every operation: \"auto\", \"cpu\" or \"gpu\"."},
	{"blas", core_blas, "gwb.blas([{threads = n}]) -> table\n"
	 "The BLAS/LAPACK gwb runs on (found at run time): name (\"OpenBLAS\", \"MKL\", \"BLIS\",\n"
	 "\"FlexiBLAS\", \"reference\", \"unknown\"), version (the library's own description), blas and\n"
	 "lapack (the files dgemm_ and dsyevd_ come from), threads (what a BLAS call uses now),\n"
	 "default_threads, threads_from (\"gwb\": all the CPUs gwb may use, as every gwb operation;\n"
	 "\"gwb.blas\"; or OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / ... when set; \"fixed\" when the\n"
	 "library cannot change it), settable, reference, and note (on the reference BLAS: how to\n"
	 "install OpenBLAS). Inside gwb's own parallel work (batched eig, forests, sparse ops) BLAS\n"
	 "runs on one thread, so the two never oversubscribe the cores; an operation's threads\n"
	 "option (eig.solve) sets it for that call. threads = n sets the default (0: all CPUs).\n"
	 "Example: print(gwb.blas().name, gwb.blas().threads); gwb.blas{threads = 1}"},
	{NULL, NULL, NULL},
};

int gwb_open_core(lua_State *L)
{
	gwb_lua_newlib(L, "gwb", core_funcs);
	lua_pushstring(L, GWB_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushstring(L, gwb_commit);
	lua_setfield(L, -2, "commit");
#ifdef GWB_HAVE_CUDA
	lua_pushboolean(L, 1);
#else
	lua_pushboolean(L, 0);
#endif
	lua_setfield(L, -2, "cuda_build");
	lua_pop(L, 1);
	return 0;
}
