/* lapi_verbs.c - the Dataset verbs from Lua (filter, sort, group_by + agg, value_counts, unique,
 * join, with, drop, rename, sample, set_target, and d:col), each returning a new Dataset,
 * run-logged and shown on the panel as a progress run, and the GroupBy userdata "gwb.GroupBy".
 * The work is in expr.c and verbs.c; the Column userdata, masks and the table's column lookup
 * are lapi_column.c's (lapi_column.h), which gwb_open_table opens first. This file reads
 * arguments, names what was wrong, and builds results. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "dataset.h"
#include "expr.h"
#include "intr.h"
#include "lapi.h"
#include "lapi_column.h"
#include "synth.h"
#include "verbs.h"
#include "verbs_gpu.h"

#define GROUPBY_MT "gwb.GroupBy"

/* --- the verbs ------------------------------------------------------------------------------ */

/* a status from the core: raise with its message (verb_call ends the progress run) */
static int verb_fail(lua_State *L, const char *fn, gwb_status st)
{
	char msg[1100];

	snprintf(msg, sizeof(msg), "%s", gwb_errmsg());
	if (st == GWB_EINTR)
		return luaL_error(L, "%s: interrupted (Ctrl-C); the table is unchanged", fn);
	return luaL_error(L, "%s: %s", fn, msg[0] ? msg : gwb_status_str(st));
}

/* Every verb runs through this closure (upvalues: the verb, its label): a progress run around
 * a protected call, so the panel shows it and an error ends it, then one run-log record
 * {kind = "data.<verb>", params = {rows, cols, what}, timing = {total_ms}, metrics = {rows,
 * cols}} for a Dataset result. */
static int verb_call(lua_State *L)
{
	const char *label = lua_tostring(L, lua_upvalueindex(2));
	const gwb_dataset *in;
	size_t rows;
	int cols, n = lua_gettop(L), st;
	double t0 = gwb_now(), ms;
	char what[200] = "", kind[64];

	if (gwb_lua_testudata(L, 1, GROUPBY_MT)) {   /* g:agg: the grouped Dataset */
		lua_getiuservalue(L, 1, 1);
		in = gwb_lua_checkdataset(L, -1);
		lua_pop(L, 1);
	} else {
		in = gwb_lua_checkdataset(L, 1);
	}
	rows = in->rows;
	cols = gwb_lua_ncols(in);

	if (n >= 2 && lua_type(L, 2) == LUA_TSTRING)
		snprintf(what, sizeof(what), "%s", lua_tostring(L, 2));
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	gwb_verbs_note_reset();
	gwb_progress_begin(label, 0);
	st = lua_pcall(L, n, 1, 0);
	gwb_progress_end();
	if (st != LUA_OK)
		return lua_error(L);
	ms = (gwb_now() - t0) * 1e3;
	if (!gwb_lua_testudata(L, -1, "gwb.Dataset"))
		return 1;
	{
		const gwb_dataset *out = gwb_lua_checkdataset(L, -1);
		snprintf(kind, sizeof(kind), "data.%s", label);
		lua_createtable(L, 0, 5);
		SETS("kind", kind);
		lua_createtable(L, 0, 3);
		SETI("rows", rows);
		SETI("cols", cols);
		if (what[0])
			SETS("what", what);
		lua_setfield(L, -2, "params");
		{
			const char *why;
			SETS("backend", gwb_verbs_note(&why));
			if (why[0])
				SETS("backend_why", why);
		}
		lua_createtable(L, 0, 1);
		SETN("total_ms", ms);
		lua_setfield(L, -2, "timing");
		lua_createtable(L, 0, 2);
		SETI("rows", out->rows);
		SETI("cols", gwb_lua_ncols(out));
		lua_setfield(L, -2, "metrics");
		gwb_lua_log_run(L, -1);
		lua_pop(L, 1);
	}
	return 1;
}

/* the verb's options at idx (optional): {backend = "auto" | "cpu" | "gpu"} (verbs_gpu.h) */
static gwb_backend verb_backend(lua_State *L, int idx, const char *fn)
{
	gwb_backend b = GWB_BACKEND_AUTO;

	if (lua_isnoneornil(L, idx))
		return b;
	luaL_checktype(L, idx, LUA_TTABLE);
	lua_getfield(L, idx, "backend");
	if (!lua_isnil(L, -1) && gwb_backend_parse(lua_tostring(L, -1), &b))
		luaL_error(L, "%s: %s", fn, gwb_errmsg());
	lua_pop(L, 1);
	return b;
}

/* whether the device runs fn on d (verbs_gpu.h), lacks: why it cannot */
static bool verb_on_gpu(lua_State *L, gwb_dataset *d, gwb_backend b, const char *fn,
			const char *lacks)
{
	bool gpu;
	gwb_status st = gwb_verbs_pick(d, b, fn, lacks, &gpu);

	if (st)
		verb_fail(L, fn, st);
	return gpu;
}

/* Every column of d, rows taken by idx[0..n) (NULL: all), as specs[0..ncols); the target
 * stays the target. Pushes the new Dataset. */
static void push_rows(lua_State *L, const gwb_dataset *d, const size_t *idx, size_t n,
		      const char *fn)
{
	gwb_dataset *r;
	gwb_status st = gwb_table_take(d, idx, n, &r);

	if (st)
		verb_fail(L, fn, st);
	gwb_lua_pushdataset(L, r);
}

/* a mask of d's rows from the argument at idx: a Column mask, an expression or a function */
static uint8_t *mask_arg(lua_State *L, int ds, const gwb_dataset *d, int idx, const char *fn)
{
	uint8_t *m;

	if (gwb_lua_testudata(L, idx, COLUMN_MT)) {
		lcol *lc;
		gwb_col c = gwb_lua_getcol(L, idx, &lc);
		if (c.type != GWB_COL_U8)
			luaL_error(L, "%s: column '%s' is a %s, not a mask: compare it (%s:gt(x), "
				   ":eq(v), :isnan()) or give an expression", fn, lc->name,
				   gwb_lua_colkind(&c), lc->name);
		if (c.n != d->rows)
			luaL_error(L, "%s: the mask has %I rows and the table %I: a mask made from "
				   "another table (or a filtered one) does not fit this one", fn,
				   (lua_Integer)c.n, (lua_Integer)d->rows);
		m = lua_newuserdatauv(L, d->rows + 1, 0);
		memcpy(m, c.v, d->rows);
		return m;
	}
	m = lua_newuserdatauv(L, d->rows + 1, 0);
	if (lua_type(L, idx) == LUA_TSTRING) {
		char **names;
		gwb_col *cols;
		gwb_expr *e;
		gwb_status st;
		gwb_lua_push_columns(L, d, &names, &cols);
		if ((st = gwb_expr_compile(lua_tostring(L, idx), names, cols, gwb_lua_ncols(d), &e)))
			luaL_error(L, "%s: %s", fn, gwb_errmsg());
		st = gwb_expr_mask(e, cols, d->rows, m);
		gwb_expr_free(e);
		if (st)
			luaL_error(L, "%s: %s", fn, gwb_errmsg());
		lua_pop(L, 2);
		return m;
	}
	if (lua_isfunction(L, idx)) {
		int n = gwb_lua_ncols(d), j;
		size_t i;
		gwb_col *cols = lua_newuserdatauv(L, sizeof(gwb_col) * ((size_t)n + 1), 0);
		for (j = 0; j < n; j++)
			gwb_col_of(d, j, &cols[j]);
		for (i = 0; i < d->rows; i++) {
			lua_pushvalue(L, idx);
			lua_createtable(L, 0, n);
			for (j = 0; j < n; j++) {
				gwb_lua_push_colvalue(L, &cols[j], i);
				lua_setfield(L, -2, gwb_lua_colname(d, j));
			}
			lua_call(L, 1, 1);
			m[i] = lua_toboolean(L, -1);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		return m;
	}
	(void)ds;
	luaL_error(L, "%s: give a mask (d.x:gt(5)), an expression (\"x > 5 & k == 'a'\") or a "
		   "function of a row (function(r) return r.x > 5 end), not %s", fn,
		   luaL_typename(L, idx));
	return NULL;
}

static int m_filter(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	size_t *idx, k;
	uint8_t *m;
	gwb_status st;

	if (verb_on_gpu(L, d, verb_backend(L, 3, "filter"), "filter",
			gwb_verbs_gpu_lacks_rows(d))) {   /* the mask and the rows on the device */
		gwb_dataset *r;
		gwb_expr *e = NULL;
		m = NULL;
		if (lua_type(L, 2) == LUA_TSTRING) {
			char **names;
			gwb_col *cols;
			gwb_lua_push_columns(L, d, &names, &cols);
			if (gwb_expr_compile(lua_tostring(L, 2), names, cols, gwb_lua_ncols(d), &e))
				luaL_error(L, "filter: %s", gwb_errmsg());
			lua_pop(L, 2);
			if (gwb_verbs_gpu_lacks_expr(e)) {
				gwb_expr_free(e);
				e = NULL;
			}
		}
		if (!e)   /* a Column mask, a function, or an expression the device lacks */
			m = mask_arg(L, 1, d, 2, "filter");
		st = gwb_verbs_gpu_filter(d, e, m, &r);
		gwb_expr_free(e);
		if (st)
			return verb_fail(L, "filter", st);
		gwb_lua_pushdataset(L, r);
		return 1;
	}
	if (lua_type(L, 2) == LUA_TSTRING) {   /* an expression: its rows, no mask in between */
		char **names;
		gwb_col *cols;
		gwb_expr *e;
		gwb_lua_push_columns(L, d, &names, &cols);
		if ((st = gwb_expr_compile(lua_tostring(L, 2), names, cols, gwb_lua_ncols(d), &e)))
			return luaL_error(L, "filter: %s", gwb_errmsg());
		st = gwb_expr_rows(e, cols, d->rows, &idx, &k);
		gwb_expr_free(e);
		if (st)
			return luaL_error(L, "filter: %s", gwb_errmsg());
		lua_pop(L, 2);
	} else {
		m = mask_arg(L, 1, d, 2, "filter");
		if ((st = gwb_mask_rows(m, d->rows, &idx, &k)))
			return verb_fail(L, "filter", st);
	}
	{
		gwb_dataset *r;
		st = gwb_table_take(d, idx, k, &r);
		free(idx);
		if (st)
			return verb_fail(L, "filter", st);
		gwb_lua_pushdataset(L, r);
	}
	return 1;
}

static int m_col(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);

	gwb_lua_push_colview(L, 1, gwb_lua_checkcol(L, d, 2, "col"));
	return 1;
}

/* keys of a sort or group-by: a name ("-name" descending for sort) or a list of them */
static int key_list(lua_State *L, const gwb_dataset *d, int idx, const char *fn, bool signs,
		    int *cols, bool *desc, int max)
{
	int n = 0, k, total;

	if (lua_type(L, idx) == LUA_TSTRING) {
		lua_createtable(L, 1, 0);
		lua_pushvalue(L, idx);
		lua_rawseti(L, -2, 1);
		lua_replace(L, idx);
	}
	if (!lua_istable(L, idx))
		return luaL_error(L, "%s: give a column name or a list of them, not %s", fn,
				  luaL_typename(L, idx));
	total = (int)luaL_len(L, idx);
	if (total < 1)
		return luaL_error(L, "%s: no columns given", fn);
	if (total > max)
		return luaL_error(L, "%s: at most %d key columns (got %d)", fn, max, total);
	for (k = 1; k <= total; k++) {
		const char *s;
		int j;
		lua_geti(L, idx, k);
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "%s: key %d is %s, not a column name", fn, k,
					  luaL_typename(L, -1));
		s = lua_tostring(L, -1);
		desc[n] = false;
		j = gwb_lua_findcol(d, s);
		if (j < 0 && signs && (*s == '-' || *s == '+')) {
			desc[n] = *s == '-';
			s++;
			j = gwb_lua_findcol(d, s);
		}
		if (j < 0)
			gwb_lua_unknown_col(L, d, fn, s);
		cols[n++] = j;
		lua_pop(L, 1);
	}
	return n;
}

#define MAXKEYS 16

static int m_sort(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int cols[MAXKEYS], nk, k;
	bool desc[MAXKEYS];
	gwb_sortkey keys[MAXKEYS];
	size_t *perm;
	gwb_status st;

	nk = key_list(L, d, 2, "sort", true, cols, desc, MAXKEYS);
	if (verb_on_gpu(L, d, verb_backend(L, 3, "sort"), "sort", gwb_verbs_gpu_lacks_rows(d))) {
		gwb_dataset *r;
		if ((st = gwb_verbs_gpu_sort(d, cols, desc, nk, &r)))
			return verb_fail(L, "sort", st);
		gwb_lua_pushdataset(L, r);
		return 1;
	}
	for (k = 0; k < nk; k++) {
		gwb_col_of(d, cols[k], &keys[k].col);
		keys[k].desc = desc[k];
	}
	if ((st = gwb_table_order(keys, nk, d->rows, &perm)))
		return verb_fail(L, "sort", st);
	{
		gwb_dataset *r;
		st = gwb_table_take(d, perm, d->rows, &r);
		free(perm);
		if (st)
			return verb_fail(L, "sort", st);
		gwb_lua_pushdataset(L, r);
	}
	return 1;
}

static int m_value_counts(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int j = gwb_lua_checkcol(L, d, 2, "value_counts");
	gwb_col c;

	gwb_col_of(d, j, &c);
	if (!c.text && verb_on_gpu(L, d, verb_backend(L, 3, "value_counts"), "value_counts",
				   gwb_verbs_gpu_lacks_keys(d, 1))) {
		double *v;
		size_t *cnt, k;
		gwb_status st = gwb_verbs_gpu_distinct(d, j, &v, &cnt, &k);
		if (st)
			return verb_fail(L, "value_counts", st);
		gwb_lua_value_counts_of(L, &c, gwb_lua_colname(d, j), v, cnt, k);
		if (d->xbuf && d->xbuf->device == GWB_DEVICE_GPU)   /* the result lies there too */
			gwb_lua_check(L, gwb_dataset_to_gpu(gwb_lua_checkdataset(L, -1)));
		return 1;
	}
	gwb_lua_value_counts(L, &c, gwb_lua_colname(d, j));
	return 1;
}

/* --- group_by ------------------------------------------------------------------------------- */

typedef struct lgroup {
	int nk;
	int cols[MAXKEYS];
	gwb_backend backend;   /* group_by(keys, {backend = ..., groups = ...}) */
	int groups;            /* how the device groups: 0 its choice, 1 direct, 2 sort */
} lgroup;

static int m_group_by(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	bool desc[MAXKEYS];
	int cols[MAXKEYS], nk = key_list(L, d, 2, "group_by", false, cols, desc, MAXKEYS);
	gwb_backend b = verb_backend(L, 3, "group_by");
	int how = 0;
	if (lua_istable(L, 3)) {   /* groups = "direct" | "sort": the device's way (measuring) */
		lua_getfield(L, 3, "groups");
		if (!lua_isnil(L, -1)) {
			const char *s = luaL_checkstring(L, -1);
			how = !strcmp(s, "direct") ? 1 : !strcmp(s, "sort") ? 2 : -1;
			if (how < 0)
				return luaL_error(L, "group_by: groups = \"direct\" or \"sort\" (got "
						  "\"%s\")", s);
		}
		lua_pop(L, 1);
	}
	lgroup *g = gwb_lua_newudata(L, sizeof(lgroup), 1, GROUPBY_MT);

	g->nk = nk;
	memcpy(g->cols, cols, sizeof(int) * (size_t)nk);
	g->backend = b;
	g->groups = how;
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	return 1;
}

typedef struct aggspec {
	char name[128];
	int agg;
	int col;   /* -1: count() */
} aggspec;

static int cmp_aggname(const void *a, const void *b)
{
	return strcmp(((const aggspec *)a)->name, ((const aggspec *)b)->name);
}

/* "sum(v1)" -> agg and column */
static void parse_agg(lua_State *L, const gwb_dataset *d, const char *s, aggspec *out)
{
	char fn[32], col[256];
	const char *p = strchr(s, '('), *e = strrchr(s, ')');
	size_t len;

	if (!p || !e || e < p || e[1])
		luaL_error(L, "agg: '%s' is not an aggregate: write \"sum(col)\", \"mean(col)\", "
			   "\"count()\" (count, sum, mean, min, max, std, var, median, first, last, "
			   "nunique)", s);
	len = (size_t)(p - s) < sizeof(fn) - 1 ? (size_t)(p - s) : sizeof(fn) - 1;
	memcpy(fn, s, len);
	fn[len] = 0;
	while (len && fn[len - 1] == ' ')
		fn[--len] = 0;
	len = (size_t)(e - p - 1) < sizeof(col) - 1 ? (size_t)(e - p - 1) : sizeof(col) - 1;
	memcpy(col, p + 1, len);
	col[len] = 0;
	out->agg = gwb_agg_find(fn);
	if (out->agg < 0 || out->agg == GWB_AGG_COUNT_ALL) {
		static const char *const aggs[] = {"count", "sum", "mean", "min", "max", "std",
						   "var", "median", "first", "last", "nunique"};
		const char *near = gwb_nearest_name(fn, aggs, 11);
		luaL_error(L, "agg: unknown aggregate '%s' in '%s'%s%s%s: count, sum, mean, min, max, "
			   "std, var, median, first, last, nunique", fn, s, near ? " (nearest: '" : "",
			   near ? near : "", near ? "')" : "");
	}
	if (!col[0]) {
		if (out->agg != GWB_AGG_COUNT)
			luaL_error(L, "agg: '%s' needs a column: %s(name)", s, fn);
		out->agg = GWB_AGG_COUNT_ALL;
		out->col = -1;
		return;
	}
	out->col = gwb_lua_findcol(d, col);
	if (out->col < 0)
		gwb_lua_unknown_col(L, d, "agg", col);
}

static int g_agg(lua_State *L)
{
	lgroup *lg = gwb_lua_checkudata(L, 1, GROUPBY_MT, "GroupBy (d:group_by(keys))");
	gwb_dataset *d;
	gwb_col keys[MAXKEYS];
	gwb_groups *g;
	aggspec *a;
	gwb_colspec *spec;
	double *vals;
	size_t G, i;
	int na = 0, narr, k, nspec;
	gwb_status st;
	gwb_dataset *r;

	lua_getiuservalue(L, 1, 1);
	d = gwb_lua_checkdataset(L, -1);
	lua_pop(L, 1);
	luaL_checktype(L, 2, LUA_TTABLE);
	/* the aggregates: list items named fn_col in order, then named ones by name */
	narr = (int)luaL_len(L, 2);
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		na++;
		lua_pop(L, 1);
	}
	if (!na)
		return luaL_error(L, "agg: no aggregates: agg{n = \"count()\", total = \"sum(v)\"}");
	a = lua_newuserdatauv(L, sizeof(aggspec) * (size_t)na, 0);
	for (k = 0; k < narr; k++) {
		lua_geti(L, 2, k + 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "agg: item %d is %s, not \"fn(col)\"", k + 1,
					  luaL_typename(L, -1));
		parse_agg(L, d, lua_tostring(L, -1), &a[k]);
		if (a[k].col < 0)
			snprintf(a[k].name, sizeof(a[k].name), "count");
		else
			snprintf(a[k].name, sizeof(a[k].name), "%s_%s", gwb_agg_name(a[k].agg),
				 gwb_lua_colname(d, a[k].col));
		lua_pop(L, 1);
	}
	na = narr;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		if (lua_type(L, -2) == LUA_TSTRING) {
			if (lua_type(L, -1) != LUA_TSTRING)
				return luaL_error(L, "agg: %s = %s: give \"fn(col)\"", lua_tostring(L, -2),
						  luaL_typename(L, -1));
			parse_agg(L, d, lua_tostring(L, -1), &a[na]);
			snprintf(a[na].name, sizeof(a[na].name), "%s", lua_tostring(L, -2));
			na++;
		} else if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 ||
			   lua_tointeger(L, -2) > narr) {
			return luaL_error(L, "agg: keys are names (total = \"sum(v)\") or list items");
		}
		lua_pop(L, 1);
	}
	qsort(a + narr, (size_t)(na - narr), sizeof(aggspec), cmp_aggname);
	for (k = 0; k < na; k++) {
		gwb_col c;
		if (a[k].col < 0)
			continue;
		gwb_col_of(d, a[k].col, &c);
		if (c.text && a[k].agg != GWB_AGG_COUNT)
			return luaL_error(L, "agg: %s of '%s', a text column: count() counts its "
					  "strings; the other aggregations need numbers or categories",
					  gwb_agg_name(a[k].agg), gwb_lua_colname(d, a[k].col));
		if (c.levels && a[k].agg != GWB_AGG_COUNT && a[k].agg != GWB_AGG_NUNIQUE &&
		    a[k].agg != GWB_AGG_FIRST && a[k].agg != GWB_AGG_LAST)
			return luaL_error(L, "agg: %s of '%s', a category (labels): use count, nunique, "
					  "first or last on it", gwb_agg_name(a[k].agg),
					  gwb_lua_colname(d, a[k].col));
	}
	{   /* on the device: every aggregate there, or all on the CPU */
		const char *lacks = gwb_verbs_gpu_lacks_keys(d, lg->nk);
		for (k = 0; k < na && !lacks; k++)
			lacks = gwb_verbs_gpu_lacks_agg(a[k].agg);
		for (k = 0; k < lg->nk && !lacks; k++)   /* keyed by their strings: verbs.c's */
			if (gwb_dataset_is_text(d, lg->cols[k]))
				lacks = "a free-text key is grouped on the host";
		if (verb_on_gpu(L, d, lg->backend, "group_by", lacks)) {
			gwb_vagg *va = lua_newuserdatauv(L, sizeof(gwb_vagg) * (size_t)na, 0);
			for (k = 0; k < na; k++)
				va[k] = (gwb_vagg){a[k].name, a[k].agg, a[k].col};
			gwb_verbs_gpu_group_method(lg->groups);
			st = gwb_verbs_gpu_agg(d, lg->cols, lg->nk, va, na, &r);
			gwb_verbs_gpu_group_method(0);
			if (st)
				return verb_fail(L, "group_by", st);
			gwb_lua_pushdataset(L, r);
			return 1;
		}
	}
	for (k = 0; k < lg->nk; k++)
		gwb_col_of(d, lg->cols[k], &keys[k]);
	if ((st = gwb_groups_make(keys, lg->nk, d->rows, &g)))
		return verb_fail(L, "group_by", st);
	G = g->ngroups;
	nspec = lg->nk + na;
	spec = calloc((size_t)nspec + 1, sizeof(*spec));
	vals = malloc(((size_t)na * G + 1) * sizeof(double));
	if (!spec || !vals) {
		free(spec);
		free(vals);
		gwb_groups_free(g);
		return verb_fail(L, "group_by", gwb_error(GWB_ENOMEM, "out of memory for %zu groups",
							   G));
	}
	for (k = 0; k < lg->nk; k++)
		spec[k] = (gwb_colspec){gwb_lua_colname(d, lg->cols[k]), keys[k], g->first};
	for (k = 0; k < na; k++) {
		gwb_col c = {0};
		double *out = vals + (size_t)k * G;
		if (a[k].col >= 0)
			gwb_col_of(d, a[k].col, &c);
		gwb_col_type ot = GWB_COL_F64;
		bool exact = false;
		if (a[k].col >= 0 && gwb_agg_exact_i64((gwb_agg)a[k].agg, &c)) {
			/* an int64 column's sum, min, max, first, last: exact int64 */
			if ((st = gwb_groups_agg_i64(g, (gwb_agg)a[k].agg, &c, (int64_t *)(void *)out,
						     &exact)))
				break;
			ot = exact ? GWB_COL_I64 : GWB_COL_F64;
		}
		if (!exact)
			st = gwb_groups_agg(g, (gwb_agg)a[k].agg, a[k].col >= 0 ? &c : NULL, out);
		if (st)
			break;
		if (!exact && (a[k].agg == GWB_AGG_COUNT || a[k].agg == GWB_AGG_COUNT_ALL ||
			       a[k].agg == GWB_AGG_NUNIQUE)) {
			/* counts are integers */
			int64_t *io = (int64_t *)(void *)out;
			for (i = 0; i < G; i++)
				io[i] = (int64_t)out[i];
			ot = GWB_COL_I64;
		}
		spec[lg->nk + k] = (gwb_colspec){a[k].name, {G, ot, out, NULL, 0, NULL, NULL}, NULL};
		if ((a[k].agg == GWB_AGG_FIRST || a[k].agg == GWB_AGG_LAST) && c.levels) {
			spec[lg->nk + k].src.levels = c.levels;
			spec[lg->nk + k].src.nlevels = c.nlevels;
		}
	}
	if (!st)
		st = gwb_table_build(G, spec, nspec, -1, &r);
	free(spec);
	free(vals);
	gwb_groups_free(g);
	if (st)
		return verb_fail(L, "group_by", st);
	gwb_lua_pushdataset(L, r);
	(void)i;
	return 1;
}

static int g_tostring(lua_State *L)
{
	lgroup *lg = gwb_lua_checkudata(L, 1, GROUPBY_MT, "GroupBy");
	gwb_dataset *d;
	luaL_Buffer B;
	int k;

	lua_getiuservalue(L, 1, 1);
	d = gwb_lua_checkdataset(L, -1);
	luaL_buffinit(L, &B);
	luaL_addstring(&B, "GroupBy (");
	for (k = 0; k < lg->nk; k++) {
		if (k)
			luaL_addstring(&B, ", ");
		luaL_addstring(&B, gwb_lua_colname(d, lg->cols[k]));
	}
	luaL_addstring(&B, "): g:agg{n = \"count()\", total = \"sum(col)\", ...}");
	luaL_pushresult(&B);
	return 1;
}

/* unique({cols}): the distinct combinations of the columns, in sorted order */
static int m_unique(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	bool desc[MAXKEYS];
	int cols[MAXKEYS], nk = key_list(L, d, 2, "unique", false, cols, desc, MAXKEYS), k;
	gwb_col keys[MAXKEYS];
	gwb_colspec spec[MAXKEYS];
	gwb_groups *g;
	gwb_dataset *r;
	gwb_status st;

	for (k = 0; k < nk; k++)
		gwb_col_of(d, cols[k], &keys[k]);
	if ((st = gwb_groups_make(keys, nk, d->rows, &g)))
		return verb_fail(L, "unique", st);
	for (k = 0; k < nk; k++)
		spec[k] = (gwb_colspec){gwb_lua_colname(d, cols[k]), keys[k], g->first};
	st = gwb_table_build(g->ngroups, spec, nk, -1, &r);
	gwb_groups_free(g);
	if (st)
		return verb_fail(L, "unique", st);
	gwb_lua_pushdataset(L, r);
	return 1;
}

/* --- building tables from Lua: join, with, drop, rename, set_target ------------------------ */

/* specs for every column of d (features then target), rows through idx */
static int all_specs(const gwb_dataset *d, const size_t *idx, gwb_colspec *spec)
{
	int j, n = gwb_lua_ncols(d);

	for (j = 0; j < n; j++) {
		spec[j].name = gwb_lua_colname(d, j);
		gwb_col_of(d, j, &spec[j].src);
		spec[j].idx = idx;
	}
	return n;
}

static void push_built(lua_State *L, const char *fn, size_t rows, const gwb_colspec *spec, int n,
		       int target)
{
	gwb_dataset *r;
	gwb_status st = gwb_table_build(rows, spec, n, target, &r);

	if (st)
		verb_fail(L, fn, st);
	gwb_lua_pushdataset(L, r);
}

static int m_join(lua_State *L)
{
	static const char *const keys[] = {"on", "how", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1), *e = gwb_lua_checkdataset(L, 2);
	const char *on, *how;
	int jl, jr, nl = gwb_lua_ncols(d), nr = gwb_lua_ncols(e), n, j;
	gwb_col lk, rk;
	size_t *li, *ri, rows;
	gwb_colspec *spec;
	gwb_status st;
	char **names;
	bool left;

	luaL_checktype(L, 3, LUA_TTABLE);
	gwb_opt_check_keys(L, 3, "join", keys);
	on = gwb_opt_str(L, 3, "join", "on", NULL);
	how = gwb_opt_str(L, 3, "join", "how", "inner");
	if (!on)
		return luaL_error(L, "join: give the key column: d:join(e, {on = \"id\"})");
	if (strcmp(how, "inner") && strcmp(how, "left"))
		return luaL_error(L, "join: how = \"%s\": \"inner\" or \"left\"", how);
	left = !strcmp(how, "left");
	if ((jl = gwb_lua_findcol(d, on)) < 0)
		gwb_lua_unknown_col(L, d, "join (left table)", on);
	if ((jr = gwb_lua_findcol(e, on)) < 0)
		gwb_lua_unknown_col(L, e, "join (right table)", on);
	gwb_col_of(d, jl, &lk);
	gwb_col_of(e, jr, &rk);
	/* text and category keys both match by label */
	if (!(lk.levels || lk.text) != !(rk.levels || rk.text))
		return luaL_error(L, "join: the key '%s' is a %s on the left and a %s on the right: "
				  "keys of different kinds never match", on, gwb_lua_colkind(&lk), gwb_lua_colkind(&rk));
	li = ri = NULL;
	if (left) {   /* a lookup table on the right: d's rows as they are */
		bool unique;
		if ((st = gwb_table_lookup(&lk, &rk, &ri, &unique)))
			return verb_fail(L, "join", st);
		rows = d->rows;
	}
	if (!ri && (st = gwb_table_join(&lk, &rk, left, &li, &ri, &rows)))
		return verb_fail(L, "join", st);
	luaL_checkstack(L, nr + 8, "join: too many columns");
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * (size_t)(nl + nr + 1), 0);
	names = lua_newuserdatauv(L, sizeof(char *) * (size_t)(nr + 1) , 0);
	n = all_specs(d, li, spec);
	for (j = 0; j < nr; j++) {
		const char *nm = gwb_lua_colname(e, j);
		if (j == jr)
			continue;
		spec[n].src = (gwb_col){0};
		gwb_col_of(e, j, &spec[n].src);
		spec[n].idx = ri;
		if (gwb_lua_findcol(d, nm) >= 0) {   /* the string stays on the stack until the build */
			names[j] = (char *)lua_pushfstring(L, "%s_right", nm);
			spec[n].name = names[j];
		} else {
			spec[n].name = nm;
		}
		n++;
	}
	{
		gwb_dataset *r;
		st = gwb_table_build(rows, spec, n, d->no_target ? -1 : d->features, &r);
		free(li);
		free(ri);
		if (st)
			return verb_fail(L, "join", st);
		gwb_lua_pushdataset(L, r);
	}
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* d:with{name = Column | "expr" | function(row)}: new (or replaced) columns */
static int m_with(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int n = gwb_lua_ncols(d), nn = 0, k, j, total;
	const char **newnames;
	gwb_colspec *spec;
	char **names;
	gwb_col *cols;

	luaL_checktype(L, 2, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			return luaL_error(L, "with: keys are the new columns' names: with{ratio = \"a / b\"}");
		nn++;
		lua_pop(L, 1);
	}
	newnames = lua_newuserdatauv(L, sizeof(char *) * ((size_t)nn + 1), 0);
	k = 0;
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		newnames[k++] = lua_tostring(L, -2);
		lua_pop(L, 1);
	}
	qsort(newnames, (size_t)nn, sizeof(char *), cmp_str);
	luaL_checkstack(L, 2 * nn + 8, "with: too many columns");
	gwb_lua_push_columns(L, d, &names, &cols);
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * (size_t)(n + nn + 1), 0);
	total = all_specs(d, NULL, spec);
	for (k = 0; k < nn; k++) {
		gwb_col c;
		int at;
		lua_getfield(L, 2, newnames[k]);
		if (gwb_lua_testudata(L, -1, COLUMN_MT)) {
			lcol *lc;
			c = gwb_lua_getcol(L, -1, &lc);
			if (c.n != d->rows) {
				return luaL_error(L, "with: column '%s' has %I rows and the table %I",
						  newnames[k], (lua_Integer)c.n, (lua_Integer)d->rows);
			}
		} else if (lua_type(L, -1) == LUA_TSTRING) {
			gwb_expr *e;
			double *out;
			gwb_status st = gwb_expr_compile(lua_tostring(L, -1), names, cols, n, &e);
			if (st) {
				return luaL_error(L, "with: %s = \"%s\": %s", newnames[k],
						  lua_tostring(L, -1), gwb_errmsg());
			}
			out = gwb_lua_push_colowned(L, d->rows, GWB_COL_F64, newnames[k]);
			st = gwb_expr_eval(e, cols, d->rows, out);
			gwb_expr_free(e);
			if (st)
				return verb_fail(L, "with", st);
			c = (gwb_col){d->rows, GWB_COL_F64, out, NULL, 0, NULL, NULL};
		} else if (lua_isfunction(L, -1)) {
			double *out = gwb_lua_push_colowned(L, d->rows, GWB_COL_F64, newnames[k]);
			size_t i;
			int fi = lua_absindex(L, -2);
			for (i = 0; i < d->rows; i++) {
				lua_pushvalue(L, fi);
				lua_createtable(L, 0, n);
				for (j = 0; j < n; j++) {
					gwb_lua_push_colvalue(L, &cols[j], i);
					lua_setfield(L, -2, names[j]);
				}
				lua_call(L, 1, 1);
				if (lua_isnil(L, -1))
					out[i] = NAN;
				else if (lua_isnumber(L, -1))
					out[i] = lua_tonumber(L, -1);
				else if (lua_isboolean(L, -1))
					out[i] = lua_toboolean(L, -1);
				else {
						return luaL_error(L, "with: %s: the function gave %s for row %I; "
							  "it must give a number (nil: missing)",
							  newnames[k], luaL_typename(L, -1),
							  (lua_Integer)i + 1);
				}
				lua_pop(L, 1);
			}
			c = (gwb_col){d->rows, GWB_COL_F64, out, NULL, 0, NULL, NULL};
		} else {
			return luaL_error(L, "with: %s = %s: give a Column, an expression (\"a / b\") or "
					  "a function of a row", newnames[k], luaL_typename(L, -1));
		}
		/* values stay referenced from the stack (the Column or owned result) */
		at = gwb_lua_findcol(d, newnames[k]);
		if (at < 0)
			at = total++;
		spec[at] = (gwb_colspec){newnames[k], c, NULL};
	}
	/* the target keeps its place: it is spec[features] when there is one */
	push_built(L, "with", d->rows, spec, total, d->no_target ? -1 : d->features);
	return 1;
}

static int m_drop(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int n = gwb_lua_ncols(d), j, k, m = 0, target;
	char *gone;
	gwb_colspec *spec;

	if (lua_type(L, 2) == LUA_TSTRING) {
		lua_createtable(L, 1, 0);
		lua_pushvalue(L, 2);
		lua_rawseti(L, -2, 1);
		lua_replace(L, 2);
	}
	luaL_checktype(L, 2, LUA_TTABLE);
	gone = lua_newuserdatauv(L, (size_t)n + 1, 0);
	memset(gone, 0, (size_t)n + 1);
	for (k = 1; k <= (int)luaL_len(L, 2); k++) {
		lua_geti(L, 2, k);
		j = gwb_lua_checkcol(L, d, -1, "drop");
		gone[j] = 1;
		lua_pop(L, 1);
	}
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * ((size_t)n + 1), 0);
	all_specs(d, NULL, spec);
	target = d->no_target || gone[d->features] ? -1 : 0;
	for (j = 0; j < n; j++)
		if (!gone[j]) {
			if (j == d->features && target == 0)
				target = m;
			spec[m++] = spec[j];
		}
	push_built(L, "drop", d->rows, spec, m, target);
	return 1;
}

static int m_rename(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int n = gwb_lua_ncols(d), j;
	gwb_colspec *spec;

	luaL_checktype(L, 2, LUA_TTABLE);
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * ((size_t)n + 1), 0);
	all_specs(d, NULL, spec);
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "rename: give {old = \"new\", ...}");
		j = gwb_lua_checkcol(L, d, -2, "rename");
		spec[j].name = lua_tostring(L, -1);
		lua_pop(L, 1);
	}
	for (j = 0; j < n; j++) {
		int k;
		for (k = 0; k < j; k++)
			if (!strcmp(spec[j].name, spec[k].name))
				return luaL_error(L, "rename: two columns would be named '%s'",
						  spec[j].name);
	}
	push_built(L, "rename", d->rows, spec, n, d->no_target ? -1 : d->features);
	return 1;
}

static int m_set_target(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int n = gwb_lua_ncols(d), j, target = -1;
	gwb_colspec *spec;

	if (!lua_isnoneornil(L, 2) && !(lua_isboolean(L, 2) && !lua_toboolean(L, 2)))
		target = gwb_lua_checkcol(L, d, 2, "set_target");
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * ((size_t)n + 1), 0);
	all_specs(d, NULL, spec);
	if (target >= 0 && !d->no_target && target != d->features) {
		/* the old target becomes a feature, at the end */
		gwb_colspec t = spec[target];
		for (j = target; j < d->features; j++)
			spec[j] = spec[j + 1];
		spec[d->features] = t;
		target = d->features;
	} else if (target >= 0 && d->no_target) {
		gwb_colspec t = spec[target];
		for (j = target; j + 1 < n; j++)
			spec[j] = spec[j + 1];
		spec[n - 1] = t;
		target = n - 1;
	}
	push_built(L, "set_target", d->rows, spec, n, target);
	return 1;
}

static int m_sample(lua_State *L)
{
	static const char *const keys[] = {"seed", NULL};
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	lua_Number x = luaL_checknumber(L, 2);
	uint64_t seed = 1;
	size_t n, i, *idx;
	gwb_rand r;

	if (lua_type(L, 3) == LUA_TNUMBER) {
		seed = (uint64_t)luaL_checkinteger(L, 3);
	} else if (!lua_isnoneornil(L, 3)) {
		gwb_opt_check_keys(L, 3, "sample", keys);
		seed = (uint64_t)gwb_opt_int(L, 3, "sample", "seed", 1);
	}
	if (!isfinite(x))
		return luaL_error(L, "sample: n = %f: a number of rows, or a fraction in 0..1", x);
	if (lua_isinteger(L, 2) || x > 1) {
		if (x < 0 || x != floor(x))
			return luaL_error(L, "sample: n = %f: a whole number of rows, or a fraction in 0..1", x);
		if (x > (lua_Number)d->rows)
			return luaL_error(L, "sample: %I rows from a table of %I (without replacement)",
					  (lua_Integer)x, (lua_Integer)d->rows);
		n = (size_t)x;
	} else {
		if (x < 0)
			return luaL_error(L, "sample: the fraction %f is below 0", x);
		n = (size_t)llround(x * (double)d->rows);
	}
	idx = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	for (i = 0; i < d->rows; i++)
		idx[i] = i;
	gwb_rand_seed(&r, seed, 0x5a3);
	/* the first n of a partial Fisher-Yates shuffle */
	for (i = 0; i < n && i + 1 < d->rows; i++) {
		size_t j = i + (size_t)gwb_rand_below(&r, d->rows - i), t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
	}
	push_rows(L, d, idx, n, "sample");
	return 1;
}


static const gwb_reg ds_methods[] = {
	{"col", m_col, "d:col(name | j) -> Column\nThe column (a view, no copy: it keeps d alive), "
	 "as d.name, d[\"name\"] and d[j] give it; d:col reaches a column named like a field or "
	 "method (d:col(\"rows\")). Unknown names are an error naming the nearest. Columns are the "
	 "features, then the target."},
	{"filter", m_filter, "d:filter(mask | expr | fn [, {backend}]) -> Dataset\nThe rows where the condition "
	 "holds, in order. A mask from the columns (d.a:gt(5) & d.k:eq(\"x\")), an expression "
	 "compiled once and run column-wise (\"a > 5 & k == 'x'\", with + - * / < <= > >= == != "
	 "& | ~ ( ), isnan(), numbers, 'labels' and `quoted names`), or a Lua function of a row "
	 "(function(r) return r.a > r.b end; the slow general path). backend = \"auto\" (the "
	 "GPU for a large table on the device, d:to(\"gpu\")), \"cpu\" or \"gpu\"; the result "
	 "stays where it ran. Run-logged with the backend and why."},
	{"sort", m_sort, "d:sort(key | {\"a\", \"-b\"} [, {backend}]) -> Dataset\nThe rows ordered by the keys "
	 "(\"-name\" descending), stable, missing values last, categories and text by their "
	 "strings. LSD radix sort of the keys' bits (CUB's on the GPU; backend as in filter). "
	 "Run-logged."},
	{"group_by", m_group_by, "d:group_by(key | {keys} [, {backend}]) -> GroupBy\nGroups of "
	 "rows by the keys' values; g:agg{...} computes aggregates per group (on the GPU for a "
	 "table there, up to 4 keys, every aggregate but nunique; backend as in filter)."},
	{"value_counts", m_value_counts, "d:value_counts(col [, {backend}]) -> Dataset\n"
	 "d.col:value_counts(): value, count, fraction, most frequent first (backend as in "
	 "filter). Run-logged."},
	{"unique", m_unique, "d:unique(col | {cols}) -> Dataset\nThe distinct combinations of the "
	 "columns, in sorted order (missing last). Run-logged."},
	{"join", m_join, "d:join(e, {on = \"key\", how = \"inner\" | \"left\"}) -> Dataset\nRows of "
	 "d joined with the rows of e that have an equal key (categories and text match by label): d's "
	 "columns and target, then e's other columns (a name d has gets \"_right\"). left: rows of "
	 "d without a match are kept once, with e's columns missing. Run-logged."},
	{"with", m_with, "d:with{name = Column | \"expr\" | fn} -> Dataset\nA copy with new (or "
	 "replaced) columns: a Column of the same length, an expression (\"a / b\", compiled once) "
	 "or a function of a row returning a number. New columns are added in name order. "
	 "Run-logged."},
	{"drop", m_drop, "d:drop{names} -> Dataset\nA copy without the columns (dropping the target "
	 "leaves a table without one)."},
	{"rename", m_rename, "d:rename{old = \"new\"} -> Dataset\nA copy with columns renamed."},
	{"sample", m_sample, "d:sample(n | frac [, {seed = 1}]) -> Dataset\nn rows (or a fraction of "
	 "them) drawn without replacement, in random order, deterministic for the seed."},
	{"set_target", m_set_target, "d:set_target(col | false) -> Dataset\nA copy whose target is "
	 "col (a category: classification, a number: regression); the old target becomes a "
	 "feature; false leaves a table without a target. (d.target is the target's name.)"},
	{NULL, NULL, NULL},
};

static const gwb_reg group_methods[] = {
	{"agg", g_agg, "g:agg{name = \"fn(col)\", ...} -> Dataset\nOne row per group, in sorted "
	 "key order (missing last): the keys, then the aggregates (named ones in name order; "
	 "list items as fn_col first). count() counts rows, count(col) values that are not "
	 "missing; sum, mean, min, max, std, var (n - 1), median, first, last (the first/last value "
	 "not missing), nunique. Sums compensated. Example: d:group_by{\"k1\", \"k2\"}:agg{n = "
	 "\"count()\", total = \"sum(v1)\", mid = \"median(v3)\"}"},
	{NULL, NULL, NULL},
};

int gwb_open_table(lua_State *L)
{
	static const luaL_Reg group_meta[] = {
		{"__tostring", g_tostring},
		{NULL, NULL},
	};
	const gwb_reg *r;
	char full[128];

	gwb_lua_column_newclass(L);
	gwb_lua_newclass(L, GROUPBY_MT, group_methods, group_meta);
	/* the verbs join the Dataset's methods (its metatable is lapi_data.c's) */
	luaL_getmetatable(L, "gwb.Dataset");
	if (lua_getfield(L, -1, "__methods") != LUA_TTABLE)
		return luaL_error(L, "the Dataset class is not open (gwb_open_data first)");
	for (r = ds_methods; r->name; r++) {
		lua_pushcfunction(L, r->fn);
		if (strcmp(r->name, "col") && strcmp(r->name, "group_by")) {
			lua_pushstring(L, r->name);
			lua_pushcclosure(L, verb_call, 2);
		}
		snprintf(full, sizeof(full), "gwb.Dataset:%s", r->name);
		gwb_lua_sethelp(L, -1, full, r->help);
		lua_setfield(L, -2, r->name);
	}
	lua_pop(L, 2);
	/* g:agg through verb_call as well (progress run, run log) */
	luaL_getmetatable(L, GROUPBY_MT);
	lua_getfield(L, -1, "__index");
	lua_pushcfunction(L, g_agg);
	lua_pushstring(L, "group_by");
	lua_pushcclosure(L, verb_call, 2);
	gwb_lua_sethelp(L, -1, "gwb.GroupBy:agg", group_methods[0].help);
	lua_setfield(L, -2, "agg");
	lua_pop(L, 2);
	return 0;
}
