/* lapi_data.h - what the Dataset bindings share (internal to lapi_dataset.c, lapi_table.c,
 * lapi_rows.c, lapi_transpose.c and lapi_data.c; other bindings use lapi.h's
 * gwb_lua_checkdataset / pushdataset / dataset_match): the userdata's box, the class counts, a
 * list of names, the methods lapi_data.c lists from the files below it, and two field setters. */
#ifndef GWB_LAPI_DATA_H
#define GWB_LAPI_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

#include "dataset.h"

#define DATASET_MT "gwb.Dataset"

typedef struct dsbox {
	gwb_dataset *d;   /* NULL once released */
} dsbox;

/* lapi_dataset.c: a new "gwb.Dataset" userdata that owns nothing yet (its d is set once the
 * Dataset exists, so __gc is safe whatever happens next), on top of the stack; the release
 * that __gc, __close and d:close share; the bytes a Dataset counts toward the collector's
 * external total (gwb_lua_boxbytes); rows per class (cnt holds d->classes counts). */
dsbox *gwb_lua_dsbox_new(lua_State *L);
int gwb_lua_dataset_release(lua_State *L);
size_t gwb_lua_dataset_bytes(const void *d);   /* its C bytes, for lapi_mem.c */
void gwb_lua_count_classes(const gwb_dataset *d, size_t *cnt);
/* Push names[0..n) as a Lua list ("" for a NULL name; all "" when names is NULL). */
void gwb_lua_push_names(lua_State *L, char **names, int n);

/* lapi_table.c: d:head, d:tail, d:describe, d:class_counts (aligned tables), the tables' __tostring
 * (registered as "gwb.Table.tostring"), and fields of the table on top of the stack (setnum
 * leaves NaN out). */
int gwb_lua_ds_head(lua_State *L);
int gwb_lua_ds_tail(lua_State *L);
int gwb_lua_ds_describe(lua_State *L);
int gwb_lua_ds_class_counts(lua_State *L);
int gwb_lua_table_tostring(lua_State *L);
void gwb_lua_setnum(lua_State *L, const char *k, double v);
void gwb_lua_setint(lua_State *L, const char *k, lua_Integer v);

/* lapi_rows.c: d:column, d:select, d:take, d:split, d:shuffle, d:kfold, and the metatable of
 * kfold's fold tables (registered by gwb_open_data). */
int gwb_lua_ds_column(lua_State *L);
int gwb_lua_ds_select(lua_State *L);
int gwb_lua_ds_take(lua_State *L);
int gwb_lua_ds_split(lua_State *L);
int gwb_lua_ds_shuffle(lua_State *L);
int gwb_lua_ds_kfold(lua_State *L);
void gwb_lua_fold_newclass(lua_State *L);

/* lapi_transpose.c: d:transpose (the timed row-major -> column-major transpose). */
int gwb_lua_ds_transpose(lua_State *L);

/* lapi_parquet.c: data.load's branch for a Parquet file (options at index opts; pushes the
 * Dataset), d:save's for a path ending in .parquet or .pq (options at index opts). */
int gwb_lua_parquet_load(lua_State *L, int opts, const char *path, const char *src);
int gwb_lua_parquet_save(lua_State *L, const gwb_dataset *d, const char *path, int opts);
bool gwb_lua_parquet_path(const char *path);

#endif
