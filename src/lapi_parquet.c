/* lapi_parquet.c - the Parquet branch of data.load and d:save / data.save (lapi_data.c calls
 * these two when the file starts and ends with PAR1, or the path to save ends in .parquet):
 * the options read from Lua (target = name | index | false, task, columns, threads;
 * compression, row_group) into parquet.h's, and d.source filled from what the reader found.
 * Uses lapi (the option helpers) and parquet. */
#include <stdbool.h>
#include <string.h>

#include "lapi.h"
#include "lapi_data.h"
#include "parquet.h"

bool gwb_lua_parquet_path(const char *path)
{
	size_t n = strlen(path);

	return (n > 8 && !strcmp(path + n - 8, ".parquet")) || (n > 3 && !strcmp(path + n - 3, ".pq"));
}

/* data.load's Parquet branch: opts at index opts (or nil); pushes the Dataset. path is what
 * the user gave (for d.source), src what to open. */
int gwb_lua_parquet_load(lua_State *L, int opts, const char *path, const char *src)
{
	static const char *const csv_only[] = {"sep", "header", "missing", "categorical", NULL};
	gwb_parquet_opts o;
	gwb_parquet_info info;
	const char **cols = NULL;
	dsbox *b;
	int i, t;

	gwb_parquet_opts_init(&o);
	memset(&info, 0, sizeof(info));
	if (!lua_isnoneornil(L, opts)) {
		for (i = 0; csv_only[i]; i++) {
			if (lua_getfield(L, opts, csv_only[i]) != LUA_TNIL)
				return luaL_error(L, "data.load: option '%s' applies to CSV files; %s is "
						  "a Parquet file, whose columns have their types",
						  csv_only[i], path);
			lua_pop(L, 1);
		}
		t = lua_getfield(L, opts, "target");
		if (t == LUA_TSTRING) {
			o.target = lua_tostring(L, -1);   /* anchored by the options table */
		} else if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
			o.no_target = true;
		} else if (t == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) != 0 &&
			   lua_tointeger(L, -1) >= -1000000 && lua_tointeger(L, -1) <= 1000000) {
			o.target_index = (int)lua_tointeger(L, -1);
		} else if (t != LUA_TNIL) {
			return luaL_error(L, "data.load: option 'target' must be a column name, a "
					  "1-based index (-1 = last) or false (no target)");
		}
		lua_pop(L, 1);
		{
			const char *task = gwb_opt_str(L, opts, "data.load", "task", NULL);
			if (task && strcmp(task, "classification") && strcmp(task, "regression"))
				return luaL_error(L, "data.load: task must be \"classification\" or "
						  "\"regression\" (got \"%s\")", task);
			o.task = !task ? -1 : !strcmp(task, "classification")
					       ? GWB_TASK_CLASSIFICATION : GWB_TASK_REGRESSION;
		}
		o.threads = gwb_opt_threads(L, opts, "data.load");
		if (o.threads < 0)
			return luaL_error(L, "data.load: threads must be >= 0 (got %d)", o.threads);
		{
			const char *dt = gwb_opt_str(L, opts, "data.load", "dtype", NULL);
			if (dt && strcmp(dt, "auto") && strcmp(dt, "f32"))
				return luaL_error(L, "data.load: dtype is \"auto\" (a Parquet file's "
						  "INT32/INT64 int64, DOUBLE float64) or \"f32\" (every "
						  "number float32), not \"%s\"", dt);
			o.f32 = dt && !strcmp(dt, "f32");
			if (lua_getfield(L, opts, "dtypes") != LUA_TNIL)
				return luaL_error(L, "data.load: dtypes applies to CSV files; a Parquet "
						  "file's columns have their types (dtype = \"f32\" "
						  "reads every number as float32)");
			lua_pop(L, 1);
		}
		t = lua_getfield(L, opts, "columns");
		if (t == LUA_TTABLE) {
			int n = (int)lua_rawlen(L, -1);
			cols = lua_newuserdatauv(L, sizeof(*cols) * ((size_t)n + 1), 0);
			for (i = 0; i < n; i++) {
				if (lua_rawgeti(L, -2, i + 1) != LUA_TSTRING)
					return luaL_error(L, "data.load: columns[%d] must be a column name "
							  "(got %s)", i + 1, luaL_typename(L, -1));
				cols[i] = lua_tostring(L, -1);   /* anchored by the list */
				lua_pop(L, 1);
			}
			if (!n)
				return luaL_error(L, "data.load: columns is empty; list the columns to "
						  "read, or leave it out to read them all");
			o.columns = cols;
			o.n_columns = n;
		} else if (t != LUA_TNIL) {
			return luaL_error(L, "data.load: option 'columns' must be a list of column "
					  "names (got %s)", luaL_typename(L, -1));
		}
		/* (the list stays on the stack until the load is done) */
	}
	b = gwb_lua_dsbox_new(L);
	gwb_lua_check(L, gwb_parquet_load(src, &o, &b->d, &info));
	lua_createtable(L, 0, 8);  /* d.source */
	lua_pushstring(L, path);
	lua_setfield(L, -2, "path");
	lua_pushstring(L, "parquet");
	lua_setfield(L, -2, "format");
	lua_pushinteger(L, (lua_Integer)info.bytes);
	lua_setfield(L, -2, "bytes");
	lua_pushinteger(L, info.row_groups);
	lua_setfield(L, -2, "row_groups");
	lua_pushinteger(L, info.columns);
	lua_setfield(L, -2, "columns");
	lua_pushinteger(L, info.read);
	lua_setfield(L, -2, "read");
	lua_pushinteger(L, info.threads);
	lua_setfield(L, -2, "threads");
	lua_pushnumber(L, info.seconds);
	lua_setfield(L, -2, "seconds");
	lua_pushstring(L, info.created_by);
	lua_setfield(L, -2, "created_by");
	lua_setiuservalue(L, -2, 1);
	return 1;
}

/* d:save(path, opts) for a .parquet path: d at index 1, opts at index opts (or none). */
int gwb_lua_parquet_save(lua_State *L, const gwb_dataset *d, const char *path, int opts)
{
	static const char *const keys[] = {"compression", "row_group", NULL};
	gwb_parquet_wopts o = {NULL, 0};

	gwb_opt_check_keys(L, opts, "save", keys);
	o.compression = gwb_opt_str(L, opts, "save", "compression", NULL);
	o.row_group = (size_t)gwb_opt_int(L, opts, "save", "row_group", 0);
	if (!lua_isnoneornil(L, opts) && lua_getfield(L, opts, "row_group") != LUA_TNIL &&
	    lua_tointeger(L, -1) < 1)
		return luaL_error(L, "save: row_group must be >= 1 (rows per row group)");
	gwb_lua_check(L, gwb_parquet_save(d, path, &o));
	return 0;
}
