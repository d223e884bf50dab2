/* lapi_data.c - the `data` Lua module (load, synth, save, new) and the Dataset userdata's
 * class "gwb.Dataset": fields rows/features/names/target/task/classes/labels, a readable
 * summary, to, save, write_csv, print, close, and the one table of its methods with their help.
 * The userdata itself is lapi_dataset.c's, the aligned tables (head, describe, class_counts)
 * lapi_table.c's, rows and columns picked (column/select/take, split/kfold/shuffle)
 * lapi_rows.c's, the row-major -> column-major transpose (d:transpose) lapi_transpose.c's. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv.h"
#include "dataset.h"
#include "dsio.h"
#include "fileio.h"
#include "fmt.h"
#include "npy.h"
#include "parquet.h"
#include "lapi.h"
#include "lapi_data.h"
#include "synth.h"
#include "zio.h"

static const char *task_name(gwb_task t)
{
	return t == GWB_TASK_CLASSIFICATION ? "classification" : "regression";
}

static void human_bytes(char *b, size_t sz, double x)
{
	gwb_fmt_bytes(b, sz, x);  /* one format for sizes everywhere (fmt.h) */
}


static int ds_tostring(lua_State *L)
{
	dsbox *b = gwb_lua_checkudata(L, 1, DATASET_MT, DATASET_MT);
	gwb_dataset *d = b->d;
	luaL_Buffer B;
	char mem[32];
	size_t miss = 0, i, *counts = NULL;
	int j, ncat = 0, ntext = 0;

	if (!d) {
		lua_pushstring(L, "Dataset (closed)");
		return 1;
	}
	if (d->task == GWB_TASK_CLASSIFICATION)   /* before the buffer, which owns the stack top */
		counts = lua_newuserdatauv(L, sizeof(*counts) * ((size_t)d->classes + 1), 0);
	luaL_buffinit(L, &B);
	{
		char nr[48], nf[48];
		lua_pushfstring(L, "Dataset: %s x %s, %s",
				gwb_fmt_count(nr, sizeof(nr), (long long)d->rows, "row", NULL),
				gwb_fmt_count(nf, sizeof(nf), d->features, d->no_target ? "column" :
					      "feature", NULL),
				d->no_target ? "no target (d:set_target(col) sets one)" :
				task_name(d->task));
	}
	luaL_addvalue(&B);
	if (d->no_target) {
		;
	} else if (d->task == GWB_TASK_CLASSIFICATION) {
		size_t *cnt = counts;
		lua_pushfstring(L, " (%d classes), target \"%s\"\n  classes: ", d->classes,
				d->target ? d->target : "?");
		luaL_addvalue(&B);
		if (cnt) {
			gwb_lua_count_classes(d, cnt);
			for (j = 0; j < d->classes && j < 12; j++) {
				lua_pushfstring(L, "%s%s %I", j ? ", " : "",
						d->class_names[j] ? d->class_names[j] : "?",
						(lua_Integer)cnt[j]);
				luaL_addvalue(&B);
			}
			if (d->classes > 12) {
				lua_pushfstring(L, ", ... (%d more)", d->classes - 12);
				luaL_addvalue(&B);
			}
		}
	} else {
		gwb_colstats s;
		char t[160];
		gwb_colstats_of(d->yr, d->rows, &s);
		snprintf(t, sizeof(t), ", target \"%s\"\n  target: min %.6g, max %.6g, mean %.6g, "
			 "std %.6g", d->target ? d->target : "?", s.min, s.max, s.mean, s.std);
		luaL_addstring(&B, t);
	}
	for (j = 0; j < d->features; j++) {
		const float *x = d->X + (size_t)j * d->rows;
		if (gwb_dataset_is_text(d, j)) {
			miss += gwb_dataset_missing(d, j);
			ntext++;
			continue;
		}
		for (i = 0; i < d->rows; i++)
			miss += isnan(x[i]);
		ncat += d->cat_levels[j] != NULL;
	}
	human_bytes(mem, sizeof(mem), (double)gwb_dataset_bytes(d));
	if (miss)
		lua_pushfstring(L, "\n  missing: %I values", (lua_Integer)miss);
	else
		lua_pushstring(L, "\n  missing: none");
	luaL_addvalue(&B);
	lua_pushfstring(L, "   memory: %s", mem);
	luaL_addvalue(&B);
	if (ncat) {
		lua_pushfstring(L, "   categorical features: %d", ncat);
		luaL_addvalue(&B);
	}
	if (ntext) {
		lua_pushfstring(L, "   text columns: %d", ntext);
		luaL_addvalue(&B);
	}
	{   /* the number types (issue 30) */
		int ni = 0, nf = 0;
		for (j = 0; j < d->features; j++) {
			ni += gwb_dataset_dtype(d, j) == GWB_DT_I64;
			nf += gwb_dataset_dtype(d, j) == GWB_DT_F64;
		}
		if (ni || nf) {
			lua_pushfstring(L, "   int64: %d, float64: %d", ni, nf);
			luaL_addvalue(&B);
		}
	}
	if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE) {
		/* (the table stays below; the buffer is only ever added to from the top) */
		char line[400];
		const char *path, *sep;
		lua_getfield(L, -1, "path");
		lua_getfield(L, -2, "sep");
		path = lua_tostring(L, -2);
		sep = lua_tostring(L, -1);
		lua_getfield(L, -3, "header");
		lua_getfield(L, -4, "seconds");
		lua_getfield(L, -5, "format");
		if (lua_type(L, -1) == LUA_TSTRING && !sep)  /* not a CSV: a .npy, a .gwbd */
			snprintf(line, sizeof(line), "\n  source: %s (%s)", path ? path : "?",
				 !strcmp(lua_tostring(L, -1), "npy") ? "a NumPy .npy array" :
				 lua_tostring(L, -1));
		else
			snprintf(line, sizeof(line), "\n  source: %s (%s-separated, %s header, %.3f s)",
				 path ? path : "?", sep && *sep == ',' ? "comma" : sep && *sep == '\t' ?
				 "tab" : sep && *sep == ';' ? "semicolon" : sep && *sep == '|' ? "bar" :
				 "other", lua_toboolean(L, -3) ? "a" : "no", lua_tonumber(L, -2));
		lua_pop(L, 6);
		luaL_addstring(&B, line);
	} else {
		lua_pop(L, 1);
	}
	luaL_addstring(&B, "\n  features: ");
	for (j = 0; j < d->features && j < 8; j++) {
		lua_pushfstring(L, "%s%s", j ? ", " : "", d->names[j] ? d->names[j] : "?");
		luaL_addvalue(&B);
	}
	if (d->features > 8) {
		lua_pushfstring(L, ", ... (%d more)", d->features - 8);
		luaL_addvalue(&B);
	}
	luaL_pushresult(&B);
	return 1;
}

static int ds_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)gwb_lua_checkdataset(L, 1)->rows);
	return 1;
}

static int ds_fields(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : NULL;  /* d[1] stays 1 */

	if (lua_type(L, 2) == LUA_TSTRING) {
		if (!strcmp(k, "rows")) {
			lua_pushinteger(L, (lua_Integer)d->rows);
			return 1;
		}
		if (!strcmp(k, "features")) {
			lua_pushinteger(L, d->features);
			return 1;
		}
		if (!strcmp(k, "names")) {
			gwb_lua_push_names(L, d->names, d->features);
			return 1;
		}
		if (!strcmp(k, "target")) {
			lua_pushstring(L, d->target ? d->target : "");
			return 1;
		}
		if (!strcmp(k, "task")) {
			lua_pushstring(L, task_name(d->task));
			return 1;
		}
		if (!strcmp(k, "classes")) {
			if (d->task == GWB_TASK_CLASSIFICATION)
				lua_pushinteger(L, d->classes);
			else
				lua_pushnil(L);
			return 1;
		}
		if (!strcmp(k, "labels")) {
			if (d->task == GWB_TASK_CLASSIFICATION)
				gwb_lua_push_names(L, d->class_names, d->classes);
			else
				lua_pushnil(L);
			return 1;
		}
		if (!strcmp(k, "bytes")) {
			lua_pushinteger(L, (lua_Integer)gwb_dataset_bytes(d));
			return 1;
		}
		if (!strcmp(k, "source")) {
			lua_getiuservalue(L, 1, 1);
			return 1;
		}
		if (!strcmp(k, "device")) {
			int ids[GWB_GPU_MAX];
			lua_pushstring(L, gwb_dataset_gpu_devices(d, ids) ? "gpu" : "cpu");
			return 1;
		}
		if (!strcmp(k, "gpus")) {  /* the devices holding a copy (d:to("gpu", {gpus}) */
			int ids[GWB_GPU_MAX], n = gwb_dataset_gpu_devices(d, ids), i;
			lua_createtable(L, n, 0);
			for (i = 0; i < n; i++) {
				lua_pushinteger(L, ids[i]);
				lua_rawseti(L, -2, i + 1);
			}
			return 1;
		}
	}
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__methods");
	lua_pushvalue(L, 2);
	if (lua_gettable(L, -2) == LUA_TNIL &&   /* not raw: a miss is remembered for "did you mean" */
	    lua_getfield(L, -3, "__column") == LUA_TFUNCTION) {   /* d.x, d[2]: a Column (lapi_column.c) */
		lua_pushvalue(L, 1);
		lua_pushvalue(L, 2);
		lua_call(L, 2, 1);
	}
	return 1;
}

/* d.close even of a closed Dataset (closing again does nothing), else the fields */
static int ds_index(lua_State *L)
{
	return gwb_lua_index_close(L) ? 1 : ds_fields(L);
}

/* --- data.load / data.save / data.synth ---------------------------------------------------- */

static const char *const load_keys[] = {"target", "sep", "header", "missing", "task",
					"categorical", "text", "progress", "threads", "columns",
					"dtype", "dtypes", NULL};

/* A number type's name ("f32", "f64", "i64") -> gwb_numtype, -1 otherwise. */
static int numtype_of(const char *s)
{
	return !strcmp(s, "f32") ? GWB_DT_F32 : !strcmp(s, "f64") ? GWB_DT_F64 :
	       !strcmp(s, "i64") ? GWB_DT_I64 : -1;
}

/* data.load's dtype = "f32" | "auto" and dtypes = {col = "f32" | "f64" | "i64"} into o (the
 * arrays in a userdata anchored in the registry until the next load). */
static void opt_dtypes(lua_State *L, int idx, gwb_csv_opts *o)
{
	const char *all = gwb_opt_str(L, idx, "data.load", "dtype", NULL);
	const char **names;
	int *types, n = 0;

	if (all && strcmp(all, "auto") && strcmp(all, "f32"))
		luaL_error(L, "data.load: dtype is \"auto\" (int64 for integer columns, float64 for "
			   "other numbers) or \"f32\" (every number float32), not \"%s\"; dtypes = "
			   "{col = \"f32\" | \"f64\" | \"i64\"} sets one column", all);
	o->f32 = all && !strcmp(all, "f32");
	if (lua_getfield(L, idx, "dtypes") == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (!lua_istable(L, -1))
		luaL_error(L, "data.load: dtypes is a table {col = \"f32\" | \"f64\" | \"i64\"} "
			   "(got %s)", luaL_typename(L, -1));
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		n++;
		lua_pop(L, 1);
	}
	names = lua_newuserdatauv(L, (sizeof(char *) + sizeof(int)) * ((size_t)n + 1), 1);
	types = (int *)(void *)(names + n + 1);
	lua_pushvalue(L, -2);
	lua_setiuservalue(L, -2, 1);   /* the strings live as long as the arrays */
	n = 0;
	lua_pushnil(L);
	while (lua_next(L, -3)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			luaL_error(L, "data.load: dtypes keys are column names (got a %s)",
				   luaL_typename(L, -2));
		if (lua_type(L, -1) != LUA_TSTRING || numtype_of(lua_tostring(L, -1)) < 0)
			luaL_error(L, "data.load: dtypes.%s is \"f32\", \"f64\" or \"i64\" (got %s%s%s)",
				   lua_tostring(L, -2), lua_type(L, -1) == LUA_TSTRING ? "\"" : "a ",
				   lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) :
				   luaL_typename(L, -1), lua_type(L, -1) == LUA_TSTRING ? "\"" : "");
		names[n] = lua_tostring(L, -2);
		types[n++] = numtype_of(lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	o->dtype_names = names;
	o->dtype_types = types;
	o->n_dtypes = n;
	lua_setfield(L, LUA_REGISTRYINDEX, "gwb.data.dtypes");
	lua_pop(L, 1);
}

/* Read a list of strings (or one string) from opts[key] into a NULL-terminated array on a
 * Lua-owned buffer. */
static const char **opt_strlist(lua_State *L, int idx, const char *fn, const char *key, int *n)
{
	const char **v = NULL;
	int t, i;

	*n = 0;
	if (lua_isnoneornil(L, idx))
		return NULL;
	t = lua_getfield(L, idx, key);
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return NULL;
	}
	if (t == LUA_TSTRING) {
		v = lua_newuserdatauv(L, sizeof(*v) * 2, 0);
		v[0] = lua_tostring(L, -2);
		v[1] = NULL;
		*n = 1;
	} else if (t == LUA_TTABLE) {
		*n = (int)lua_rawlen(L, -1);
		v = lua_newuserdatauv(L, sizeof(*v) * (size_t)(*n + 1), 0);
		for (i = 0; i < *n; i++) {
			if (lua_rawgeti(L, -2, i + 1) != LUA_TSTRING)
				luaL_error(L, "%s: option '%s' item %d must be a string (got %s)", fn,
					   key, i + 1, luaL_typename(L, -1));
			v[i] = lua_tostring(L, -1);
			lua_pop(L, 1);
		}
		v[*n] = NULL;
	} else {
		luaL_error(L, "%s: option '%s' must be a string or a list of strings (got %s)", fn,
			   key, luaL_typename(L, -1));
	}
	/* anchor the list and its strings (the option value) until the next call */
	lua_setfield(L, LUA_REGISTRYINDEX, key[0] == 'm' ? "gwb.data.missing.list"
						      : "gwb.data.categorical.list");
	lua_setfield(L, LUA_REGISTRYINDEX, key[0] == 'm' ? "gwb.data.missing.value"
						      : "gwb.data.categorical.value");
	return v;
}

static int parse_task(lua_State *L, const char *fn, const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "classification"))
		return GWB_TASK_CLASSIFICATION;
	if (!strcmp(s, "regression"))
		return GWB_TASK_REGRESSION;
	return luaL_error(L, "%s: task must be \"classification\" or \"regression\" (got \"%s\")",
			  fn, s);
}

/* load_from(path, opts, src): data.load reading src (path itself, or the copy of a pipe
 * gwb_input_open made); everything the user sees names path. */
static int load_from(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1), *src = luaL_checkstring(L, 3);
	gwb_csv_opts o;
	gwb_csv_info info;
	dsbox *b;
	gwb_status st;
	int t;

	b = gwb_lua_dsbox_new(L);
	if (gwb_dsio_is_gwbd(src)) {
		static const char *const csv_only[] = {"target", "sep", "header", "missing", "task",
						       "categorical", "text", NULL};
		int i;
		for (i = 0; !lua_isnil(L, 2) && csv_only[i]; i++) {
			if (lua_getfield(L, 2, csv_only[i]) != LUA_TNIL)
				return luaL_error(L, "data.load: option '%s' applies to CSV files; %s is "
						  "a .gwbd file, which keeps its target and columns",
						  csv_only[i], path);
			lua_pop(L, 1);
		}
		st = gwb_dsio_load(src, &b->d);
		if (st)
			return gwb_lua_fail(L, st);
		return 1;
	}
	if (gwb_parquet_is_parquet(src))   /* PAR1 at both ends, whatever the name */
		return gwb_lua_parquet_load(L, 2, path, src);
	if (gwb_npy_is_npy(src) || (gwb_npy_path(path) && gwb_z_sniff_path(src) == GWB_Z_NONE)) {
		/* a NumPy 2-D float array: target = a column index, "colN", or a name that its
		 * sidecar <path>.json gives (d:save writes it); task */
		const char *tname = NULL;
		char meta[4096];
		static const char *const csv_only[] = {"sep", "header", "missing", "categorical",
						       "text", NULL};
		int i, target = 0, task;
		for (i = 0; !lua_isnil(L, 2) && csv_only[i]; i++) {
			if (lua_getfield(L, 2, csv_only[i]) != LUA_TNIL)
				return luaL_error(L, "data.load: option '%s' applies to CSV files; %s is "
						  "a .npy array (columns col1, col2, ...)", csv_only[i],
						  path);
			lua_pop(L, 1);
		}
		if (!lua_isnil(L, 2)) {
			t = lua_getfield(L, 2, "target");
			if (t == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) != 0)
				target = (int)lua_tointeger(L, -1);
			else if (t == LUA_TSTRING)
				tname = lua_tostring(L, -1);  /* kept alive by the options table */
			else if (t != LUA_TNIL)
				return luaL_error(L, "data.load: for a .npy array, option 'target' is a "
						  "column index (1-based, -1 = last), \"colN\" or a "
						  "name from its sidecar .json");
			lua_pop(L, 1);
		}
		task = parse_task(L, "data.load", gwb_opt_str(L, 2, "data.load", "task", NULL));
		/* the sidecar beside the file the user named (none for stdin or a pipe) */
		if (strcmp(src, path) || snprintf(meta, sizeof(meta), "%s.json", path) >= (int)sizeof(meta))
			meta[0] = '\0';
		st = gwb_npy_load_dataset(src, meta[0] ? meta : NULL, target, tname, task, &b->d);
		if (st)
			return gwb_lua_fail(L, st);
		lua_createtable(L, 0, 2);  /* d.source */
		lua_pushstring(L, path);
		lua_setfield(L, -2, "path");
		lua_pushstring(L, "npy");
		lua_setfield(L, -2, "format");
		lua_setiuservalue(L, -2, 1);
		return 1;
	}
	gwb_csv_opts_init(&o);
	if (!lua_isnoneornil(L, 2)) {
		if (lua_getfield(L, 2, "columns") != LUA_TNIL)
			return luaL_error(L, "data.load: option 'columns' applies to Parquet files; %s "
					  "is read as CSV (d:select{...} picks columns after the load)",
					  path);
		lua_pop(L, 1);
	}
	if (!lua_isnoneornil(L, 2)) {
		t = lua_getfield(L, 2, "target");
		int isint = 0;
		if (t == LUA_TNUMBER)
			o.target_index = (int)lua_tointegerx(L, -1, &isint);
		if (t == LUA_TSTRING)
			o.target = lua_tostring(L, -1);
		else if (t == LUA_TNUMBER && isint)
			;
		else if (t != LUA_TNIL)
			return luaL_error(L, "data.load: option 'target' must be a column name or a "
					  "1-based index (got %s)", luaL_typename(L, -1));
		if (t == LUA_TNUMBER && o.target_index == 0)
			return luaL_error(L, "data.load: option 'target' index must not be 0 "
					  "(1 is the first column, -1 the last)");
		lua_pop(L, 1);   /* the string stays referenced by the options table */
		{
			const char *sep = gwb_opt_str(L, 2, "data.load", "sep", NULL);
			if (sep) {
				if (!strcmp(sep, "\\t") || !strcmp(sep, "tab"))
					sep = "\t";
				if (strlen(sep) != 1 || sep[0] == '"' || sep[0] == '\n' ||
				    sep[0] == '\r')
					return luaL_error(L, "data.load: option 'sep' must be one "
							  "character other than a quote or newline "
							  "(got \"%s\")", sep);
				o.sep = sep[0];
			}
		}
		if (lua_getfield(L, 2, "header") != LUA_TNIL)
			o.header = gwb_opt_bool(L, 2, "data.load", "header", true);
		lua_pop(L, 1);
		o.task = parse_task(L, "data.load", gwb_opt_str(L, 2, "data.load", "task", NULL));
		o.progress = gwb_opt_bool(L, 2, "data.load", "progress", true);
		o.threads = gwb_opt_threads(L, 2, "data.load");
		if (o.threads < 0)
			return luaL_error(L, "data.load: threads must be >= 0 (got %d)", o.threads);
		o.missing = opt_strlist(L, 2, "data.load", "missing", &o.n_missing);
		o.categorical = opt_strlist(L, 2, "data.load", "categorical", &o.n_categorical);
		o.text = opt_strlist(L, 2, "data.load", "text", &o.n_text);
		opt_dtypes(L, 2, &o);
	}
	st = gwb_csv_load(src, &o, &b->d, &info);
	if (st)
		return gwb_lua_fail(L, st);
	/* what the reader found, for d.source and the summary */
	lua_createtable(L, 0, 10);
	lua_pushstring(L, path);
	lua_setfield(L, -2, "path");
	lua_pushlstring(L, &info.sep, 1);
	lua_setfield(L, -2, "sep");
	lua_pushboolean(L, info.header);
	lua_setfield(L, -2, "header");
	lua_pushboolean(L, info.bom);
	lua_setfield(L, -2, "bom");
	lua_pushboolean(L, info.crlf);
	lua_setfield(L, -2, "crlf");
	lua_pushinteger(L, (lua_Integer)info.bytes);
	lua_setfield(L, -2, "bytes");
	lua_pushinteger(L, (lua_Integer)info.lines);
	lua_setfield(L, -2, "lines");
	lua_pushinteger(L, (lua_Integer)info.missing);
	lua_setfield(L, -2, "missing");
	lua_pushnumber(L, info.seconds);
	lua_setfield(L, -2, "seconds");
	lua_pushinteger(L, info.threads);
	lua_setfield(L, -2, "threads");
	lua_pushnumber(L, info.seconds > 0 ? (double)info.bytes / info.seconds / 1e6 : 0);
	lua_setfield(L, -2, "mb_per_s");
	if (info.compression) {
		lua_pushstring(L, info.compression);
		lua_setfield(L, -2, "compression");
		lua_pushinteger(L, (lua_Integer)info.compressed_bytes);
		lua_setfield(L, -2, "compressed_bytes");
	}
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/* data.load: a pipe, FIFO or terminal is first read whole (fileio.c gwb_input_open), so the
 * format sniffers' reads lose nothing; errors name the path as given, never the copy. */
static int l_load(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	gwb_input in;
	gwb_status st;
	int rc;

	lua_settop(L, 2);
	gwb_opt_check_keys(L, 2, "data.load", load_keys);
	if ((st = gwb_input_open(&in, path, "data.load")))
		return gwb_lua_fail(L, st);
	if (!strcmp(path, "-"))
		path = "stdin";  /* data.load("-"): what messages and d.source.path call it */
	lua_pushcfunction(L, load_from);
	lua_pushstring(L, path);
	lua_pushvalue(L, 2);
	lua_pushstring(L, in.path);
	rc = lua_pcall(L, 3, 1, 0);
	gwb_input_close(&in);
	if (rc != LUA_OK) {
		/* the copy (or /dev/stdin for "-") is called what the user called it */
		if (strcmp(in.path, path) && lua_type(L, -1) == LUA_TSTRING)
			luaL_gsub(L, lua_tostring(L, -1), in.path, path);
		return lua_error(L);
	}
	return 1;
}

/* A name that says CSV text (x.csv, x.tsv, x.txt, each maybe .gz or .zst after it): d:save
 * writes what the name says, as d:write_csv would, instead of a .gwbd under a .csv name.
 * *sep: a tab for .tsv. */
static bool csv_name(const char *path, char *sep)
{
	static const char *const exts[] = {".csv", ".tsv", ".txt"};
	static const char *const zs[] = {"", ".gz", ".zst"};
	size_t n = strlen(path), i, k;

	for (i = 0; i < sizeof(exts) / sizeof(*exts); i++)
		for (k = 0; k < sizeof(zs) / sizeof(*zs); k++) {
			size_t m = strlen(exts[i]) + strlen(zs[k]);
			if (n > m && !strncasecmp(path + n - m, exts[i], strlen(exts[i])) &&
			    !strcasecmp(path + n - strlen(zs[k]), zs[k])) {
				*sep = i == 1 ? '\t' : ',';
				return true;
			}
		}
	return false;
}

static int l_save(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	const char *path = luaL_checkstring(L, 2);
	char sep;

	if (gwb_lua_parquet_path(path))
		return gwb_lua_parquet_save(L, d, path, 3);
	if (csv_name(path, &sep)) {
		gwb_lua_check(L, gwb_csv_write(d, path, sep, -1, 0));
		return 0;
	}
	if (gwb_npy_path(path))
		gwb_lua_check(L, gwb_npy_save_dataset(d, path));  /* features, then the target */
	else
		gwb_lua_check(L, gwb_dsio_save(d, path));
	return 0;  /* nothing for the REPL to print after a save */
}

static const char *const synth_keys[] = {
	"kind", "rows", "features", "informative", "redundant", "repeated", "classes",
	"clusters_per_class", "class_sep", "flip_y", "weights", "noise", "bias", "shift", "scale",
	"shuffle", "seed", "threads", NULL};

static int l_synth(lua_State *L)
{
	const char *fn = "data.synth", *kind;
	gwb_synth_opts o;
	gwb_synth_kind k;
	double *w = NULL;
	lua_Integer rows, seed;
	dsbox *b;

	luaL_checktype(L, 1, LUA_TTABLE);
	gwb_opt_check_keys(L, 1, fn, synth_keys);
	kind = gwb_opt_str(L, 1, fn, "kind", "classification");
	if (!strcmp(kind, "classification"))
		k = GWB_SYNTH_CLASSIFICATION;
	else if (!strcmp(kind, "regression"))
		k = GWB_SYNTH_REGRESSION;
	else if (!strcmp(kind, "friedman1"))
		k = GWB_SYNTH_FRIEDMAN1;
	else
		return luaL_error(L, "%s: kind must be \"classification\", \"regression\" or "
				  "\"friedman1\" (got \"%s\")", fn, kind);
	gwb_synth_opts_init(&o, k);
	rows = gwb_opt_int(L, 1, fn, "rows", (lua_Integer)o.rows);
	if (rows < 1)
		return luaL_error(L, "%s: rows must be >= 1 (got %I)", fn, rows);
	o.rows = (size_t)rows;
	o.features = gwb_opt_i32(L, 1, fn, "features", o.features);
	o.informative = gwb_opt_i32(L, 1, fn, "informative",
					 k == GWB_SYNTH_REGRESSION && o.informative > o.features
						 ? o.features : o.informative);
	o.redundant = gwb_opt_i32(L, 1, fn, "redundant", o.redundant);
	o.repeated = gwb_opt_i32(L, 1, fn, "repeated", o.repeated);
	o.classes = gwb_opt_i32(L, 1, fn, "classes", o.classes);
	o.clusters_per_class = gwb_opt_i32(L, 1, fn, "clusters_per_class",
						o.clusters_per_class);
	o.class_sep = gwb_opt_num(L, 1, fn, "class_sep", o.class_sep);
	o.flip_y = gwb_opt_num(L, 1, fn, "flip_y", o.flip_y);
	o.noise = gwb_opt_num(L, 1, fn, "noise", o.noise);
	o.bias = gwb_opt_num(L, 1, fn, "bias", o.bias);
	o.shift = gwb_opt_num(L, 1, fn, "shift", o.shift);
	o.scale = gwb_opt_num(L, 1, fn, "scale", o.scale);
	o.shuffle = gwb_opt_bool(L, 1, fn, "shuffle", true);
	seed = gwb_opt_int(L, 1, fn, "seed", 1);
	o.seed = (uint64_t)seed;
	o.threads = gwb_opt_threads(L, 1, fn);
	if (lua_getfield(L, 1, "weights") == LUA_TTABLE) {
		int i, n = (int)lua_rawlen(L, -1);
		if (n != o.classes)
			return luaL_error(L, "%s: weights must have one entry per class (%d), got %d",
					  fn, o.classes, n);
		w = lua_newuserdatauv(L, sizeof(double) * (size_t)n, 0);
		for (i = 0; i < n; i++) {
			lua_rawgeti(L, -2, i + 1);
			if (!lua_isnumber(L, -1))
				return luaL_error(L, "%s: weights[%d] must be a number", fn, i + 1);
			w[i] = lua_tonumber(L, -1);
			lua_pop(L, 1);
		}
		o.weights = w;
	} else if (!lua_isnil(L, -1)) {
		return luaL_error(L, "%s: weights must be a list of numbers", fn);
	}
	if (k == GWB_SYNTH_REGRESSION && o.informative > o.features)
		return luaL_error(L, "%s: informative (%d) must be <= features (%d)", fn,
				  o.informative, o.features);
	b = gwb_lua_dsbox_new(L);
	gwb_lua_check(L, gwb_synth(&o, &b->d));
	return 1;
}

/* data.new{X = {{...}, ...}, y = {...}, names = {...}, target = "y", task = ...} */
static int l_new(lua_State *L)
{
	const char *fn = "data.new";
	static const char *const keys[] = {"X", "y", "names", "target", "task", NULL};
	size_t rows, i, nd;
	int F = 0, j, task, text = 0, classes = 0;
	const int X = 2, Y = 3, SET = 4, LIST = 5;
	dsbox *b;
	gwb_dataset *d;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	gwb_opt_check_keys(L, 1, fn, keys);
	if (lua_getfield(L, 1, "X") != LUA_TTABLE)
		return luaL_error(L, "%s: X must be a list of rows (tables of numbers)", fn);
	if (lua_getfield(L, 1, "y") != LUA_TTABLE)
		return luaL_error(L, "%s: y must be a list of targets (numbers or strings)", fn);
	rows = lua_rawlen(L, X);
	if (rows < 1 || lua_rawlen(L, Y) != rows)
		return luaL_error(L, "%s: X has %d rows and y %d; both need the same number >= 1",
				  fn, (int)rows, (int)lua_rawlen(L, Y));
	for (i = 0; i < rows; i++) {
		int n;
		if (lua_rawgeti(L, X, (lua_Integer)i + 1) != LUA_TTABLE)
			return luaL_error(L, "%s: X[%d] must be a table of numbers", fn, (int)i + 1);
		n = (int)lua_rawlen(L, -1);
		if (i == 0)
			F = n;
		else if (n != F)
			return luaL_error(L, "%s: X[%d] has %d values where X[1] has %d", fn,
					  (int)i + 1, n, F);
		lua_pop(L, 1);
		lua_rawgeti(L, Y, (lua_Integer)i + 1);
		if (lua_type(L, -1) == LUA_TSTRING)
			text = 1;
		else if (lua_type(L, -1) != LUA_TNUMBER)
			return luaL_error(L, "%s: y[%d] must be a number or a string", fn, (int)i + 1);
		lua_pop(L, 1);
	}
	if (F < 1)
		return luaL_error(L, "%s: rows need at least one feature", fn);
	task = parse_task(L, fn, gwb_opt_str(L, 1, fn, "task", NULL));
	/* labels: the distinct values, sorted */
	lua_newtable(L);
	for (i = 0; i < rows; i++) {
		lua_rawgeti(L, Y, (lua_Integer)i + 1);
		if (text)
			lua_tolstring(L, -1, NULL);
		lua_pushboolean(L, 1);
		lua_rawset(L, SET);
	}
	lua_newtable(L);
	lua_pushnil(L);
	while (lua_next(L, SET)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_rawseti(L, LIST, (lua_Integer)lua_rawlen(L, LIST) + 1);
	}
	lua_getglobal(L, "table");
	lua_getfield(L, -1, "sort");
	lua_pushvalue(L, LIST);
	lua_call(L, 1, 0);
	lua_pop(L, 1);
	nd = lua_rawlen(L, LIST);
	if (task < 0) {
		int integral = 1;
		for (i = 0; !text && i < nd; i++) {
			lua_Number v;
			lua_rawgeti(L, LIST, (lua_Integer)i + 1);
			v = lua_tonumber(L, -1);
			integral &= v == floor(v);
			lua_pop(L, 1);
		}
		task = text || (integral && nd <= 32 && (nd <= 2 || nd * 2 <= rows))
			       ? GWB_TASK_CLASSIFICATION : GWB_TASK_REGRESSION;
	}
	if (text && task == GWB_TASK_REGRESSION)
		return luaL_error(L, "%s: y holds strings; it cannot be a regression target", fn);
	if (task == GWB_TASK_CLASSIFICATION) {
		classes = (int)nd;
		for (j = 0; j < classes; j++) {
			lua_rawgeti(L, LIST, j + 1);
			lua_pushinteger(L, j);
			lua_rawset(L, SET);
		}
	}
	b = gwb_lua_dsbox_new(L);   /* index 6, stays on top when we return */
	gwb_lua_check(L, gwb_dataset_new(rows, F, (gwb_task)task, classes, &b->d));
	d = b->d;
	for (i = 0; i < rows; i++) {
		lua_rawgeti(L, X, (lua_Integer)i + 1);
		for (j = 0; j < F; j++) {
			lua_rawgeti(L, -1, j + 1);
			if (lua_type(L, -1) != LUA_TNUMBER)
				return luaL_error(L, "%s: X[%d][%d] must be a number (0/0 for a "
						  "missing value)", fn, (int)i + 1, j + 1);
			d->X[(size_t)j * rows + i] = (float)lua_tonumber(L, -1);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		lua_rawgeti(L, Y, (lua_Integer)i + 1);
		if (task == GWB_TASK_CLASSIFICATION) {
			if (text)
				lua_tolstring(L, -1, NULL);
			lua_rawget(L, SET);
			d->y[i] = (int32_t)lua_tointeger(L, -1);
		} else {
			d->yr[i] = (float)lua_tonumber(L, -1);
		}
		lua_pop(L, 1);
	}
	for (j = 0; j < classes; j++) {
		lua_rawgeti(L, LIST, j + 1);
		d->class_names[j] = strdup(luaL_tolstring(L, -1, NULL));
		lua_pop(L, 2);
		if (!d->class_names[j])
			return luaL_error(L, "%s: out of memory", fn);
	}
	if (lua_getfield(L, 1, "names") == LUA_TTABLE) {
		if ((int)lua_rawlen(L, -1) != F)
			return luaL_error(L, "%s: names has %d entries for %d features", fn,
					  (int)lua_rawlen(L, -1), F);
		for (j = 0; j < F; j++) {
			lua_rawgeti(L, -1, j + 1);
			d->names[j] = strdup(luaL_tolstring(L, -1, NULL));
			lua_pop(L, 2);
		}
	} else {
		for (j = 0; j < F; j++)
			if (asprintf(&d->names[j], "x%d", j + 1) < 0)
				d->names[j] = NULL;
	}
	lua_pop(L, 1);
	for (j = 0; j < F; j++)
		if (!d->names[j])
			return luaL_error(L, "%s: out of memory", fn);
	if (!(d->target = strdup(gwb_opt_str(L, 1, fn, "target", "y"))))
		return luaL_error(L, "%s: out of memory", fn);
	return 1;
}


static int m_print(lua_State *L)
{
	lua_Integer n = luaL_optinteger(L, 2, 5);

	gwb_lua_checkdataset(L, 1);
	lua_getglobal(L, "print");
	luaL_tolstring(L, 1, NULL);
	lua_call(L, 1, 0);
	if (n > 0) {
		lua_getglobal(L, "print");
		lua_pushcfunction(L, gwb_lua_ds_head);
		lua_pushvalue(L, 1);
		lua_pushinteger(L, n);
		lua_call(L, 2, 1);
		luaL_tolstring(L, -1, NULL);
		lua_remove(L, -2);
		lua_call(L, 1, 0);
	}
	return 0;
}

static int m_save(lua_State *L)
{
	return l_save(L);
}

static int m_write_csv(lua_State *L)
{
	static const char *const keys[] = {"sep", "decimals", "threads", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	const char *path = luaL_checkstring(L, 2), *sep;
	int decimals, threads;

	lua_settop(L, 3);
	gwb_opt_check_keys(L, 3, "write_csv", keys);
	sep = gwb_opt_str(L, 3, "write_csv", "sep", ",");
	if (!strcmp(sep, "\\t") || !strcmp(sep, "tab"))
		sep = "\t";
	if (strlen(sep) != 1)
		return luaL_error(L, "write_csv: sep must be one character (got \"%s\")", sep);
	decimals = gwb_opt_i32(L, 3, "write_csv", "decimals", -1);
	threads = gwb_opt_threads(L, 3, "write_csv");
	gwb_lua_check(L, gwb_csv_write(d, path, sep[0], decimals, threads));
	return 0;
}


/* --- registration -------------------------------------------------------------------------- */

static const gwb_reg funcs[] = {
	{"load", l_load,
	 "data.load(path [, opts]) -> Dataset\n"
	 "Read a CSV file (RFC 4180), plain or gzip/zstd compressed (found by its magic bytes,\n"
	 "whatever the name: x.csv.gz, x.csv.zst; several gzip members or zstd frames read as\n"
	 "one), a .gwbd file saved by d:save, or a NumPy .npy file (a 2-D float32/float64 array\n"
	 "as numpy.save writes it, format 1.0-3.0, C or Fortran order; the last column is the\n"
	 "target unless target = index or name; columns are named by the sidecar x.npy.json that\n"
	 "d:save writes beside it, else col1, col2, ...; other dtypes, big-endian, 1-D or 3-D\n"
	 "arrays are refused). path \"-\" is stdin. The CSV is streamed; the separator\n"
	 "(comma, tab, semicolon, |) and the header line are sniffed; quoted fields may\n"
	 "hold separators, quotes (\"\") and newlines; CRLF and a UTF-8 BOM are fine. A column\n"
	 "of integers (ids, counts, epoch seconds) is read as int64 and any other numeric column\n"
	 "as float64, exactly (c.dtype \"i64\" / \"f64\"; d.id[i] is a Lua integer); models read\n"
	 "their correctly rounded float32 (X, d:column). text columns become categorical,\n"
	 "except free text: a column whose sampled values mostly differ (comments, titles) is kept\n"
	 "as strings, kind \"text\" (d.col[i] is the string; models refuse it by name).\n"
	 "Options: target = name or 1-based index (default the last column; -1 = last),\n"
	 "  sep = \",\" | \"\\t\" | \";\" ..., header = true|false (false names columns col1, col2, ...),\n"
	 "  missing = {\"NA\", ...} (replaces the default NA, NaN, nan, N/A, ?; \"\" is always missing),\n"
	 "  task = \"classification\" | \"regression\" (default: text or few distinct integers ->\n"
	 "  classification), categorical = {\"zip\", ...} (read these columns as categories),\n"
	 "  text = {\"comment\", ...} (read these columns as free text),\n"
	 "  dtype = \"f32\" (every number float32 only, as gwb read them before; CSV and\n"
	 "  Parquet), dtypes = {id = \"i64\", x = \"f32\" | \"f64\"} (one column's type),\n"
	 "  progress = true (a progress bar for large files on a terminal).\n"
	 "Errors name file:line:column (ragged rows, text in a numeric column, bad quotes); a\n"
	 "truncated or corrupt gzip/zstd file, its compressed and uncompressed byte offsets.\n"
	 "stdin (\"-\"), a pipe, FIFO, <(cmd) or /dev/stdin is read whole into memory first (a\n"
	 "compressed one stays compressed there) and loads as the file would: cat x.csv.gz |\n"
	 "gwb rf train - --target y.\n"
	 "d.source says what the reader found: sep, header, bom, crlf, lines, missing, seconds,\n"
	 "compression and compressed_bytes (for a compressed file; bytes is the text's size),\n"
	 "threads (a file of 4 MiB or more is parsed by all CPUs, text columns, quotes and missing\n"
	 "  values included, with the same result; threads = n sets it).\n"
	 "Parquet (PAR1 at both ends, whatever the name; pyarrow, polars, DuckDB, Spark files):\n"
	 "  INT32/INT64/FLOAT/DOUBLE/BOOLEAN columns as numbers, strings as categories, nulls as\n"
	 "  missing; pages v1/v2, plain, dictionary, RLE, delta and byte-stream-split encodings,\n"
	 "  uncompressed/snappy/gzip/zstd; row groups read in parallel (threads = n). Options:\n"
	 "  columns = {\"a\", \"b\", ...} reads only those (a nested, INT96 or decimal column is\n"
	 "  refused by name: leave it out this way), target = name | index | false (false: every\n"
	 "  column a feature; default: the target d:save wrote, else the last column), task.\n"
	 "Example: d = data.load(\"datasets/iris.csv\", {target = \"species\"})"},
	{"save", l_save,
	 "data.save(d, path)\n"
	 "Write a Dataset to a binary .gwbd file (versioned header, XXH64 checksums); data.load\n"
	 "reads it back exactly and refuses a truncated or damaged file. Every save is atomic\n"
	 "(a temporary beside the file, renamed over it): a crash, kill or Ctrl-C leaves the old\n"
	 "file or none; several processes saving one file all succeed (the last one wins); a\n"
	 "symlink is followed (the link stays); a directory is refused. A pipe, FIFO, device,\n"
	 "/dev/stdout or /proc/self/fd/N is written in place (no temporary, no rename). The name\n"
	 "chooses the format as d:save's does: .npy, .parquet, .csv/.tsv/.txt (CSV), else .gwbd.\n"
	 "Example: data.save(d, \"/tmp/iris.gwbd\")"},
	{"synth", l_synth,
	 "data.synth{kind = \"classification\", rows, features, ...} -> Dataset\n"
	 "Synthetic data, deterministic for a seed and the same for any thread count.\n"
	 "kind = \"classification\" (as scikit-learn's make_classification): informative (2),\n"
	 "  redundant (2, linear mixes of informative), repeated (0), the rest noise; classes (2),\n"
	 "  clusters_per_class (2) at hypercube vertices of side 2*class_sep (1.0), flip_y (0.01)\n"
	 "  labels replaced at random, weights (class shares), shift, scale, shuffle (true).\n"
	 "  Features are named by role: inf1.., red1.., rep1.., noise1.. (shuffled in order).\n"
	 "kind = \"regression\": y = X w + bias + noise*N(0,1), informative (10) features with\n"
	 "  weights in [0, 100). kind = \"friedman1\": x in [0,1), y = 10 sin(pi x1 x2) +\n"
	 "  20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise*N(0,1); features (10) >= 5.\n"
	 "Common: rows (100), features, seed (1), threads (0 = all CPUs).\n"
	 "Example: d = data.synth{rows = 1e5, features = 32, informative = 16, classes = 2, seed = 1}"},
	{"new", l_new,
	 "data.new{X = rows, y = targets [, names, target, task]} -> Dataset\n"
	 "A Dataset from Lua tables: X a list of rows (lists of numbers, 0/0 for missing), y a\n"
	 "list of numbers or strings. The task is inferred as in data.load unless given.\n"
	 "Example: d = data.new{X = {{1, 2}, {3, 4}, {5, 6}}, y = {\"a\", \"b\", \"a\"}}"},
	{NULL, NULL, NULL},
};

/* d:to("gpu" | "cpu"): where the features live (dataset.h); returns d. */
static int m_to(lua_State *L)
{
	static const char *const known[] = {"gpus", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	const char *dev = luaL_checkstring(L, 2);

	gwb_opt_check_keys(L, 3, "d:to", known);
	if (!strcmp(dev, "gpu") || !strcmp(dev, "cuda")) {
		gwb_gpu_set s;
		gwb_opt_gpus(L, 3, "d:to", GWB_BACKEND_GPU, false, &s);
		/* device 0 alone (the default): as it always was; else a copy on each device */
		gwb_lua_check(L, s.n == 1 && s.ids[0] == 0 ? gwb_dataset_to_gpu(d)
							   : gwb_dataset_to_gpus(d, &s));
	} else if (!strcmp(dev, "cpu")) {
		if (!lua_isnoneornil(L, 3))
			return luaL_error(L, "d:to(\"cpu\"): options are for \"gpu\" (gpus); \"cpu\" "
					  "gives every device copy back");
		gwb_dataset_to_cpu(d);
	} else {
		return luaL_error(L, "to: the device must be \"gpu\" or \"cpu\" (got \"%s\")", dev);
	}
	lua_settop(L, 1);
	return 1;
}

static int m_close(lua_State *L)
{
	gwb_lua_checkudata(L, 1, DATASET_MT, DATASET_MT);
	return gwb_lua_dataset_release(L);
}

static const gwb_reg methods[] = {
	{"close", m_close,
	 "d:close()\nFree the Dataset now, device memory included (the GC does it too). Closing\n"
	 "it again does nothing; any other use of a closed Dataset is an error."},
	{"to", m_to,
	 "d:to(\"gpu\" [, {gpus = n | {ids}}] | \"cpu\") -> d\n"
	 "Where the features live. \"gpu\" copies them to the device once: rf.train,\n"
	 "f:predict, f:predict_proba, f:score and d:transpose{backend = \"gpu\"} then read\n"
	 "them there in place (no copy per call). The host copy stays (a Dataset never\n"
	 "changes), so reading values costs nothing. \"cpu\" gives the device memory back,\n"
	 "as d:close() and the GC do. d.device says which (\"cpu\" | \"gpu\"). Without a\n"
	 "GPU, or when it has too little free memory (the error names the bytes), d stays.\n"
	 "gpus (default 1: device 0) puts a copy on each device named (gwb.gpus() lists them;\n"
	 "all or nothing), which rf.train{gpus = ...} then reads there; d.gpus lists them.\n"
	 "Example: big:to(\"gpu\"); p = f:predict(big)"},
	{"head", gwb_lua_ds_head,
	 "d:head([n]) -> table\n"
	 "The first n rows (default 5) as a list of {column = value} records that prints as an\n"
	 "aligned table; categorical values show their level, missing values NA. The target is\n"
	 "the last column; a table too wide for the screen shows its first and last columns\n"
	 "(the target among them) and the count of those hidden.\n"
	 "Example: d:head(3)"},
	{"tail", gwb_lua_ds_tail,
	 "d:tail([n]) -> table\n"
	 "The last n rows (default 5), printed as d:head prints.\n"
	 "Example: d:sort(\"-x\"):tail(3)"},
	{"describe", gwb_lua_ds_describe,
	 "d:describe() -> table\n"
	 "Per column: type (numeric/categorical), min, 25%, median, 75% (exact quantiles, linear\n"
	 "between order statistics), max, mean, std (n-1), missing, distinct, and for categories\n"
	 "top (the most frequent label and its count); the target last. Prints as an aligned\n"
	 "table; also indexable by column name.\n"
	 "Example: d:describe().sepal_length.mean"},
	{"class_counts", gwb_lua_ds_class_counts,
	 "d:class_counts() -> table\n"
	 "Rows per class, as {name = count}; prints a table with counts and shares.\n"
	 "Example: d:class_counts().setosa"},
	{"column", gwb_lua_ds_column,
	 "d:column(name or index) -> values [, levels]\n"
	 "One column as a Lua array. Numeric: numbers (NaN = missing). Categorical features and\n"
	 "a classification target: 1-based codes plus the list of level names.\n"
	 "Example: codes, labels = d:column(d.target)"},
	{"select", gwb_lua_ds_select,
	 "d:select(cols) -> Dataset\n"
	 "A new Dataset with the listed feature columns (names or 1-based indices) and the same\n"
	 "target. Example: d:select{\"petal_length\", \"petal_width\"}"},
	{"take", gwb_lua_ds_take,
	 "d:take(rows) -> Dataset\n"
	 "A new Dataset of the listed rows (1-based, may repeat). Example: d:take{1, 2, 3}"},
	{"split", gwb_lua_ds_split,
	 "d:split(frac [, {seed = 1, stratify}]) -> train, test\n"
	 "Random split with round(frac * rows) training rows. stratify (default: true for\n"
	 "classification) keeps each class's share in both parts. Rows keep their file order.\n"
	 "Example: train, test = d:split(0.8, {seed = 1, stratify = true})"},
	{"kfold", gwb_lua_ds_kfold,
	 "d:kfold(k [, {seed = 1, stratify}]) -> folds\n"
	 "k folds for cross-validation: folds[i].train and folds[i].test are Datasets (built\n"
	 "when first used), folds[i].test_rows the 1-based test rows. Every row is in exactly one\n"
	 "test fold; fold sizes differ by at most one (per class too, when stratified).\n"
	 "Example: for i, f in ipairs(d:kfold(5, {seed = 1})) do print(i, f.test.rows) end"},
	{"shuffle", gwb_lua_ds_shuffle,
	 "d:shuffle([seed]) -> Dataset\n"
	 "A copy with the rows in a random order (deterministic for the seed, default 1)."},
	{"print", m_print,
	 "d:print([n])\nPrint the summary and the first n rows (default 5)."},
	{"save", m_save,
	 "d:save(path [, opts])\nWrite the Dataset to a .gwbd file (see data.save); a path ending\n"
	 "in .npy writes a NumPy float32 array instead: the features, then the target as the last\n"
	 "column (class codes 0, 1, ... unless the class names are numbers), and beside it\n"
	 "path..\".json\" (the column names, target, task, classes and category levels), which\n"
	 "data.load reads back: the same Dataset. A path ending in .parquet (or .pq) writes\n"
	 "Parquet: FLOAT columns, categories and a text target as dictionary-encoded strings,\n"
	 "missing values as nulls, the target in the metadata (so data.load finds it); opts:\n"
	 "compression = \"snappy\" (default) | \"zstd\" | \"gzip\" | \"none\", row_group = rows\n"
	 "per row group (default 1048576). A path ending in .csv, .tsv or .txt (maybe with .gz\n"
	 "or .zst after it) writes CSV text, as d:write_csv does.\n"
	 "Example: d:save(\"/tmp/iris.parquet\", {compression = \"zstd\"})"},
	{"write_csv", m_write_csv,
	 "d:write_csv(path [, {sep = \",\", decimals, threads}])\n"
	 "Write the Dataset as CSV: a header, the features, the target last. Without decimals\n"
	 "every value is written exactly (%.9g: data.load gives back the same float32); with\n"
	 "decimals = n, fixed point with n decimals (faster, lossy). Missing values are empty\n"
	 "fields; text is quoted as RFC 4180 says. Formatted over threads (0 = all CPUs).\n"
	 "A path ending in .gz or .zst (.gzip, .zstd) is compressed (gzip or zstd, the default\n"
	 "level); data.load reads it back.\n"
	 "Atomic as data.save: an interrupted write says so and leaves the old file; a pipe or\n"
	 "/dev/stdout is written in place (d:write_csv(\"/dev/stdout\") | head works).\n"
	 "Example: data.synth{rows = 1e5, features = 16}:write_csv(\"/tmp/s.csv\", {decimals = 4})"},
	{"transpose", gwb_lua_ds_transpose,
	 "d:transpose{backend = \"auto\", tile = 32, pad = true} -> result\n"
	 "Time the first step of the pipeline: the features laid out row-major (one record after\n"
	 "another, as in the CSV) transposed into the Dataset's column-major layout, then checked\n"
	 "bit for bit against the Dataset. CPU: 64 x 64 blocks (tile sets the side) of 4 x 4\n"
	 "SSE register transposes over threads (kernel = \"naive\" for the plain double loop). GPU: kernel = \"naive\" (tile = false or 0; strided\n"
	 "writes), \"tiled\" (tile x tile shared-memory tiles, pad = false: bank conflicts) or\n"
	 "\"padded\" (tile + 1 columns: no conflicts); tile 16, 32 or 64; reps (5) timed runs.\n"
	 "result: backend, kernel, kernel_ms (median), h2d_ms, d2h_ms, transfer_ms (each copy's\n"
	 "own time), h2d_gbps, d2h_gbps (bytes / that time), copy_path (\"registered\": tables of\n"
	 "64 MiB or more are page-locked first, register_ms, and copied at the pinned rate;\n"
	 "\"staged\": through the pinned staging ring), gbps (2 x bytes\n"
	 "/ kernel time), copy_gbps (a device-to-device copy of the same bytes), copy_fraction,\n"
	 "verified, mismatches. Logged to the run log as data.transpose.\n"
	 "Example: t = d:transpose{backend = \"gpu\", tile = 32, pad = true}; print(t.gbps, t.copy_fraction)"},
	{NULL, NULL, NULL},
};

int gwb_open_data(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{"__gc", gwb_lua_dataset_release},
		{"__close", gwb_lua_dataset_release},
		{"__tostring", ds_tostring},
		{"__len", ds_len},
		{"__index", ds_index},
		{NULL, NULL},
	};

	lua_pushcfunction(L, gwb_lua_table_tostring);
	lua_setfield(L, LUA_REGISTRYINDEX, "gwb.Table.tostring");
	gwb_lua_newclass(L, DATASET_MT, methods, meta);
	gwb_lua_boxbytes(DATASET_MT, gwb_lua_dataset_bytes);
	gwb_lua_fold_newclass(L);
	gwb_lua_newlib(L, "data", funcs);
	lua_pop(L, 1);
	return 0;
}
