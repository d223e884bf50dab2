/* lapi_data.h - what the Dataset bindings share (internal to lapi_dataset.c, lapi_table.c and
 * lapi_data.c; other bindings use lapi.h's gwb_lua_checkdataset / pushdataset / dataset_match):
 * the userdata's box, the class counts, the aligned-table methods and two field setters. */
#ifndef GWB_LAPI_DATA_H
#define GWB_LAPI_DATA_H

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

#endif
