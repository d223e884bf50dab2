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

/* The registry's help table: value -> {name, text}; dotted name -> {name, text}. */
#define GWB_LUA_HELP_KEY "gwb.help"

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

/* Push the help registry (value -> {name, text}; name -> {name, text}), made on first use. */
void gwb_lua_helptable(lua_State *L);
/* Record a help text for the value at idx (a function or a table) under a dotted name. */
void gwb_lua_sethelp(lua_State *L, int idx, const char *name, const char *text);

/* Create a metatable `tname` whose __index holds methods (regs; help under
 * "<tname>:<method>"), plus the metamethods in meta (may be NULL). Pops it. */
void gwb_lua_newclass(lua_State *L, const char *tname, const gwb_reg *methods,
		      const luaL_Reg *meta);

/* Typed userdata: every userdata gwb makes ends in a tag (a hash of its type name) after the
 * payload, checked with the metatable, so a value given another type's metatable through the
 * debug library is refused instead of misread.
 * newudata: push a zeroed userdata of size bytes (nuv user values) tagged tname, with the
 *   metatable registered as tname if there is one (a caller may set its own afterwards).
 * toudata: the payload if the value at idx is a full userdata tagged tname, else NULL (the
 *   metatable unchecked: for __gc/__close).
 * testudata: toudata, and the metatable is the one registered as tname; else NULL.
 * checkudata: testudata, or raise "<what> expected, got <type>". */
void *gwb_lua_newudata(lua_State *L, size_t size, int nuv, const char *tname);
void *gwb_lua_toudata(lua_State *L, int idx, const char *tname);
void *gwb_lua_testudata(lua_State *L, int idx, const char *tname);
void *gwb_lua_checkudata(lua_State *L, int idx, const char *tname, const char *what);

/* Boxed objects: a userdata (metatable mt) that owns one C object through a pointer, NULL once
 * released. Every Lua type that wraps a library object (Dataset, Forest, Matrix, Eigen,
 * SparseMatrix) is one, so creation, checks and release live here once; a module views the box
 * through its own one-pointer struct (struct { gwb_dataset *d; }).
 * newbox: push an empty box (nuv user values) and return it; the caller stores the object in it
 *   once it exists, so __gc is safe whatever happens in between.
 * pushbox: push a box owning p; when the box cannot be made, free_fn(p) runs and the error
 *   propagates (nothing leaks).
 * checkbox: the live object in the box at idx; raises naming the argument when the value is
 *   not such a box ("<what> expected") or was closed ("the <name> was closed").
 * takebox: for __gc/__close: the object (NULL if released already, or if the value is not a
 *   box of this type), leaving the box empty; a gwb box of another type given this metatable
 *   through debug.setmetatable is released by its own type's __gc instead. */
void *gwb_lua_newbox(lua_State *L, const char *mt, int nuv);
void gwb_lua_pushbox(lua_State *L, const char *mt, int nuv, void *p, void (*free_fn)(void *));
void *gwb_lua_checkbox(lua_State *L, int idx, const char *mt, const char *what, const char *name);
/* In a type's own __index (self at 1, key at 2): pushes the "close" method even for a closed
 * object and returns true, so close() on a closed object does nothing, as for every closable
 * type (Dataset, Forest, Predictions, Matrix, SparseMatrix, Eigen); any other use raises. */
bool gwb_lua_index_close(lua_State *L);
void *gwb_lua_takebox(lua_State *L, int idx, const char *mt);

/* Memory the collector sees (lapi_mem.c): a boxed object's C bytes, measured by its type's
 * size function (registered once per metatable name with gwb_lua_boxbytes), count toward a
 * per-state external total that runs a full collection when it grows past the larger of
 * 64 MiB and what was live after the last one; releasing the box subtracts them. newbox,
 * pushbox and takebox call track/release; newudata calls pressure. external: the total now
 * (and the collections it ran), for gwb.external_bytes(). */
typedef size_t (*gwb_bytes_fn)(const void *obj);
void gwb_lua_boxbytes(const char *mt, gwb_bytes_fn fn);
void gwb_lua_mem_track(lua_State *L, void *box, const char *mt);
void gwb_lua_mem_release(lua_State *L, void *box);
void gwb_lua_mem_pressure(lua_State *L);
size_t gwb_lua_mem_external(lua_State *L, size_t *collections);

/* For an __index function: push the method named by the key at index 2 from the metatable of
 * the value at index 1 (its __methods table, gwb_lua_newclass), or nil. */
int gwb_lua_index_method(lua_State *L);

/* Raise a Lua error for st using the detail message (or the status name). Never returns. */
int gwb_lua_fail(lua_State *L, gwb_status st);
/* Raise if st != GWB_OK. */
#define gwb_lua_check(L, st) do { gwb_status st_ = (st); if (st_) gwb_lua_fail((L), st_); } while (0)

/* Options tables: opts at index idx (may be none/nil). A value of the wrong type raises an
 * error that names the function and the parameter. */
lua_Integer gwb_opt_int(lua_State *L, int idx, const char *fn, const char *key, lua_Integer def);
/* gwb_opt_int within lo..hi (checked on the 64-bit value before any caller narrows it; the
 * error prints the value as given and the range). GWB_OPT_INT_MAX: the most an int holds. */
#define GWB_OPT_INT_MAX 2147483647
lua_Integer gwb_opt_int_in(lua_State *L, int idx, const char *fn, const char *key,
			   lua_Integer def, lua_Integer lo, lua_Integer hi);
/* An int option (within +-GWB_OPT_INT_MAX: the function checks its own domain after), and the
 * threads option (0 = all cores, else that many). */
int gwb_opt_i32(lua_State *L, int idx, const char *fn, const char *key, int def);
int gwb_opt_threads(lua_State *L, int idx, const char *fn);
lua_Number gwb_opt_num(lua_State *L, int idx, const char *fn, const char *key, lua_Number def);
bool gwb_opt_bool(lua_State *L, int idx, const char *fn, const char *key, bool def);
const char *gwb_opt_str(lua_State *L, int idx, const char *fn, const char *key, const char *def);
/* opts.backend, defaulting to the --backend setting. */
gwb_backend gwb_opt_backend(lua_State *L, int idx, const char *fn);
/* opts.gpus (lapi_mgpu.c): nil = device 0 alone; a count or a list of ids, checked against the
 * devices there are (mgpu.h's messages); be = the backend the call will use (CPU: gpus other
 * than 1 is an error saying it applies to GPU backends). standin: CPU stand-ins (tests). */
struct gwb_gpu_set;
void gwb_opt_gpus(lua_State *L, int idx, const char *fn, gwb_backend be, bool standin,
		  struct gwb_gpu_set *out);
int gwb_lua_gpus(lua_State *L);  /* gwb.gpus() */
/* Raise an error if opts has a key not in the NULL-terminated list `known`. */
void gwb_opt_check_keys(lua_State *L, int idx, const char *fn, const char *const known[]);
/* An option that tests and tuning use (hybrid_front, gpu_standin): accepted, never listed to
 * users (option errors, help). */
bool gwb_lua_internal_option(const char *key);

/* Every run-logged call takes opts.tag = "name" or {"a", "b"}: push it as a list of strings
 * (nil when absent) for the record; a tag of another type raises naming fn. */
void gwb_opt_tag(lua_State *L, int idx, const char *fn);

/* The dataset part of a run record for the Dataset at idx: {path (when loaded from a file),
 * rows, features, task, target, classes, checksum (XXH64 of the features and targets, hex)},
 * so two runs on different data are never confused. Pushes the table. */
void gwb_lua_push_datainfo(lua_State *L, int idx);

/* Append one record to the run log: the table at idx ({kind = "rf.train", params = {...},
 * backend = ..., timing = {...}, metrics = {...}}) is passed to gwb.log_run (lua/gwb/runs.lua
 * adds version, device and time, and writes one JSON line). A failure to log only warns. */
void gwb_lua_log_run(lua_State *L, int idx);

/* The git commit the binary was built from (generated by the Makefile). */
extern const char gwb_commit[];

/* The Dataset userdata ("gwb.Dataset", lapi_data.c). checkdataset raises a Lua error naming
 * the argument when the value at idx is not a live Dataset; pushdataset pushes a new userdata
 * that takes ownership of d (freed by its __gc/__close). */
struct gwb_dataset;
struct gwb_dataset *gwb_lua_checkdataset(lua_State *L, int idx);
void gwb_lua_pushdataset(lua_State *L, struct gwb_dataset *d);
/* The Dataset at idx with its feature columns in the order of names[0..n), the columns a model
 * (what: "forest", "PCA") was fitted on, matched by name: the same names in another order give
 * a reordered copy (owned by a Dataset pushed on the stack), missing or unexpected names raise
 * an error from fn that names them. When either side has no names (header = false: col1,
 * col2, ...), the columns are taken by position if their counts agree, and *by_position is
 * set so the caller can say so. Returns d itself when nothing needed to change. */
struct gwb_dataset *gwb_lua_dataset_match(lua_State *L, int idx, char *const *names, int n,
					  const char *fn, const char *what, bool *by_position);

/* Module openers, one per lapi_*.c. */
int gwb_open_gpu(lua_State *L);
int gwb_open_data(lua_State *L);
int gwb_open_table(lua_State *L);  /* after data: Columns, and the verbs join the Dataset */
int gwb_open_rf(lua_State *L);
int gwb_open_search(lua_State *L);  /* after rf: extends it (rf.search) */
int gwb_open_core(lua_State *L);
int gwb_open_files(lua_State *L);  /* after core: gwb._append_line, _save_text, _attach */
int gwb_open_mpi(lua_State *L);    /* after core: gwb.mpi */
int gwb_open_panel(lua_State *L);
int gwb_open_teach(lua_State *L);
int gwb_open_mat(lua_State *L);
int gwb_open_eig(lua_State *L);
int gwb_open_sparse(lua_State *L);  /* after mat and eig: extends both */
int gwb_open_metrics(lua_State *L);
int gwb_open_plot(lua_State *L);
int gwb_open_switches(lua_State *L);  /* last: wraps the functions that take opts.switches */

/* Matrix and Eigen userdata (lapi_mat.c, lapi_eig.c), for modules that make or take them.
 * The push functions take ownership (the object is freed with the userdata; on a Lua error
 * while pushing it is freed too). gwb_lua_checkmatrix raises unless arg is a "gwb.Matrix"
 * that still holds a matrix; the Lua value keeps ownership. */
struct gwb_matrix;
struct gwb_eigen;
void gwb_lua_push_matrix(lua_State *L, struct gwb_matrix *A);
struct gwb_matrix *gwb_lua_checkmatrix(lua_State *L, int arg);
/* gwb_lua_checkmatrix makes a GPU-resident matrix's host copy current (host readers); this one
 * does not (GPU operations that use the device copy in place). */
struct gwb_matrix *gwb_lua_checkmatrix_dev(lua_State *L, int arg);
void gwb_lua_push_eigen(lua_State *L, struct gwb_eigen *e);
/* One run-log record for an eigensolver call: the params table on top of the stack (popped) plus
 * kind, backend, timing and metrics (method, max_residual, orthogonality, iterations, converged)
 * from e. Push the result first (its box owns e), then log. */
void gwb_lua_log_eigen(lua_State *L, const char *kind, const struct gwb_eigen *e);

/* Set field k of the table on top of L's stack to a number, integer, string or boolean (the
 * result tables of every binding; L must be in scope). */
#define SETN(k, v) (lua_pushnumber(L, (v)), lua_setfield(L, -2, (k)))
#define SETI(k, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, (k)))
#define SETS(k, v) (lua_pushstring(L, (v)), lua_setfield(L, -2, (k)))
#define SETB(k, v) (lua_pushboolean(L, (v)), lua_setfield(L, -2, (k)))

#endif
