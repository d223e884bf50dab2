/* lapi.h - what every Lua binding module (lapi_*.c) shares: opening the modules, registering
 * functions with their help texts, reading options with errors that name the parameter, and
 * turning a gwb_status into a Lua error. */
#ifndef GWB_LAPI_H
#define GWB_LAPI_H

#include <stdbool.h>

#include <lauxlib.h>
#include <lua.h>

#include "backend.h"
#include "status.h"

/* A function, its name as users type it ("rf.train") and its help text (first line: a
 * signature; then what it does, options, an example). */
typedef struct gwb_reg {
	const char *name;
	lua_CFunction fn;
	const char *help;
} gwb_reg;

/* Open every gwb module into L as globals (gpu, data, rf, ...). */
void gwb_lua_openlibs(lua_State *L);

/* Create a table of functions from regs (NULL-name terminated), record help texts under
 * "<module>.<name>", and set it as global `module`. Leaves the table on the stack. */
void gwb_lua_newlib(lua_State *L, const char *module, const gwb_reg *regs);

/* Record a help text for the value at idx (a function or a table) under a dotted name. */
void gwb_lua_sethelp(lua_State *L, int idx, const char *name, const char *text);

/* Create a metatable `tname` whose __index holds methods (regs; help under
 * "<tname>:<method>"), plus the metamethods in meta (may be NULL). Pops it. */
void gwb_lua_newclass(lua_State *L, const char *tname, const gwb_reg *methods,
		      const luaL_Reg *meta);

/* Raise a Lua error for st using the detail message (or the status name). Never returns. */
int gwb_lua_fail(lua_State *L, gwb_status st);
/* Raise if st != GWB_OK. */
#define gwb_lua_check(L, st) do { gwb_status st_ = (st); if (st_) gwb_lua_fail((L), st_); } while (0)

/* Options tables: opts at index idx (may be none/nil). A value of the wrong type raises an
 * error that names the function and the parameter. */
lua_Integer gwb_opt_int(lua_State *L, int idx, const char *fn, const char *key, lua_Integer def);
lua_Number gwb_opt_num(lua_State *L, int idx, const char *fn, const char *key, lua_Number def);
bool gwb_opt_bool(lua_State *L, int idx, const char *fn, const char *key, bool def);
const char *gwb_opt_str(lua_State *L, int idx, const char *fn, const char *key, const char *def);
/* opts.backend, defaulting to the --backend setting. */
gwb_backend gwb_opt_backend(lua_State *L, int idx, const char *fn);
/* Raise an error if opts has a key not in the NULL-terminated list `known`. */
void gwb_opt_check_keys(lua_State *L, int idx, const char *fn, const char *const known[]);

/* Append one record to the run log: the table at idx ({kind = "rf.train", params = {...},
 * backend = ..., timing = {...}, metrics = {...}}) is passed to gwb.log_run (lua/gwb/runs.lua
 * adds version, device and time, and writes one JSON line). A failure to log only warns. */
void gwb_lua_log_run(lua_State *L, int idx);

/* Module openers, one per lapi_*.c. */
int gwb_open_gpu(lua_State *L);
int gwb_open_core(lua_State *L);

#endif
