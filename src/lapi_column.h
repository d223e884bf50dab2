/* lapi_column.h - what lapi_column.c (the Column userdata) lends lapi_verbs.c (the Dataset
 * verbs): the table's columns as a verb sees them (the features, then the target), Column
 * views and owned Columns, their values as Lua sees them, and value_counts. Internal to the two
 * bindings; a Column view keeps its Dataset alive through its user value. */
#ifndef GWB_LAPI_COLUMN_H
#define GWB_LAPI_COLUMN_H

#include <stddef.h>

#include <lua.h>

#include "column.h"
#include "dataset.h"

#define COLUMN_MT "gwb.Column"

typedef struct lcol {
	int j;          /* the column of the Dataset in user value 1; -1: values owned here */
	gwb_col own;    /* owned values (F64 numbers or U8 conditions) */
	void *mem;      /* own's values, freed by __gc */
	char name[128];
} lcol;

/* The columns of d a verb sees: the features and (when there is one) the target; column j's
 * name ("" when it has none); j of the column named name, or -1. */
int gwb_lua_ncols(const gwb_dataset *d);
const char *gwb_lua_colname(const gwb_dataset *d, int j);
int gwb_lua_findcol(const gwb_dataset *d, const char *name);

/* names[0..ncols) and cols[0..ncols) of d in two userdata pushed on the stack (the caller pops
 * them when done). */
void gwb_lua_push_columns(lua_State *L, const gwb_dataset *d, char ***names, gwb_col **cols);

/* Raise "fn: no column 'name'" with the nearest name and the list of columns. */
int gwb_lua_unknown_col(lua_State *L, const gwb_dataset *d, const char *fn, const char *name);

/* The column named by the string (or 1-based index) at idx; an error names fn otherwise. */
int gwb_lua_checkcol(lua_State *L, const gwb_dataset *d, int idx, const char *fn);

/* Push a view of column j of the Dataset at index ds (it keeps the Dataset alive). */
void gwb_lua_push_colview(lua_State *L, int ds, int j);

/* Push a Column that owns n zeroed values of type t named name; returns the values (owned by
 * the Column, freed by its __gc). */
void *gwb_lua_push_colowned(lua_State *L, size_t n, gwb_col_type t, const char *name);

/* The values of the Column at idx (a view: its Dataset must still be open); *out (may be NULL)
 * the Column itself. */
gwb_col gwb_lua_getcol(lua_State *L, int idx, lcol **out);

/* "category", "bool" or "number". */
const char *gwb_lua_colkind(const gwb_col *c);
/* c.dtype: "i64", "f64", "f32", "category", "text" (and "bool", "i32" for masks and class
 * codes) */
const char *gwb_lua_coldtype(const gwb_col *c);

/* Push value i of c as Lua sees it: a number, a label, a boolean; nil when missing. */
void gwb_lua_push_colvalue(lua_State *L, const gwb_col *c, size_t i);

/* Push value, count and fraction of c's distinct values, most frequent first (ties: first seen
 * first) as a Dataset without a target, its first column named name. */
int gwb_lua_value_counts(lua_State *L, const gwb_col *c, const char *name);
/* The same from distinct values and counts computed elsewhere (the GPU's, verbs_gpu.h): v and
 * cnt as gwb_col_distinct gives them, freed here. */
int gwb_lua_value_counts_of(lua_State *L, const gwb_col *c, const char *name, double *v,
			    size_t *cnt, size_t k);

/* Open the Column class and install d.NAME / d[j] (the Dataset metatable's __column hook);
 * after gwb_open_data. */
void gwb_lua_column_newclass(lua_State *L);

#endif
