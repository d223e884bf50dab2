/* lapi_verbs.c - exploring a table from Lua: the Column userdata "gwb.Column" (d.NAME, d[j],
 * d:col(name): a view that keeps its Dataset alive, or the values an arithmetic or a mask made),
 * its summaries, masks (& | ~) and arithmetic, and the Dataset verbs (filter, sort, group_by +
 * agg, value_counts, unique, join, with, drop, rename, sample, set_target), each returning a
 * new Dataset, run-logged and shown on the panel as a progress run. The work is in column.c,
 * expr.c and verbs.c; this file reads arguments, names what was wrong, and builds results. */
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
#include "fmt.h"
#include "intr.h"
#include "lapi.h"
#include "synth.h"
#include "verbs.h"

#define COLUMN_MT "gwb.Column"
#define GROUPBY_MT "gwb.GroupBy"

typedef struct lcol {
	int j;          /* the column of the Dataset in user value 1; -1: values owned here */
	gwb_col own;    /* owned values (F64 numbers or U8 conditions) */
	void *mem;
	char name[128];
} lcol;

/* --- the table's columns: features, then the target ---------------------------------------- */

/* Columns of d a verb sees: the features and (when there is one) the target. */
static int ncols_of(const gwb_dataset *d)
{
	return d->features + !d->no_target;
}

static const char *col_name(const gwb_dataset *d, int j)
{
	if (j < d->features)
		return d->names[j] ? d->names[j] : "";
	return d->target ? d->target : "";
}

/* names[0..ncols) and cols[0..ncols) in userdata on the stack (popped by the caller) */
static void push_columns(lua_State *L, const gwb_dataset *d, char ***names, gwb_col **cols)
{
	int n = ncols_of(d), j;

	*names = lua_newuserdatauv(L, sizeof(char *) * ((size_t)n + 1), 0);
	*cols = lua_newuserdatauv(L, sizeof(gwb_col) * ((size_t)n + 1), 0);
	for (j = 0; j < n; j++) {
		(*names)[j] = (char *)col_name(d, j);
		gwb_col_of(d, j, &(*cols)[j]);
	}
}

/* "'a', 'b', ... (N more)" */
static void list_columns(const gwb_dataset *d, char *buf, size_t sz)
{
	int n = ncols_of(d), j;
	size_t len = 0;

	buf[0] = 0;
	for (j = 0; j < n && j < 12 && len < sz; j++) {
		snprintf(buf + len, sz - len, "%s%s", j ? ", " : "", col_name(d, j));
		len = strlen(buf);
	}
	if (n > 12 && len < sz)
		snprintf(buf + len, sz - len, ", ... (%d more)", n - 12);
}

static int find_col(const gwb_dataset *d, const char *name)
{
	int j = gwb_dataset_find(d, name);

	if (j >= 0)
		return j;
	if (!d->no_target && d->target && !strcmp(d->target, name))
		return d->features;
	return -1;
}

static int unknown_col(lua_State *L, const gwb_dataset *d, const char *fn, const char *name)
{
	char list[600];
	const char *near;
	int n = ncols_of(d), j;
	char **names = lua_newuserdatauv(L, sizeof(char *) * ((size_t)n + 1), 0);

	for (j = 0; j < n; j++)
		names[j] = (char *)col_name(d, j);
	near = gwb_nearest_name(name, (const char *const *)names, (size_t)n);
	list_columns(d, list, sizeof(list));
	return luaL_error(L, "%s: no column '%s'%s%s%s; the columns are %s", fn, name,
			  near ? " (nearest: '" : "", near ? near : "", near ? "')" : "", list);
}

/* The column named by the string (or 1-based index) at idx. */
static int check_col(lua_State *L, const gwb_dataset *d, int idx, const char *fn)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *name = lua_tostring(L, idx);
		int j = find_col(d, name);
		if (j < 0)
			unknown_col(L, d, fn, name);
		return j;
	}
	if (lua_isinteger(L, idx)) {
		lua_Integer j = lua_tointeger(L, idx);
		if (j < 1 || j > ncols_of(d))
			return luaL_error(L, "%s: column %I is outside 1..%d", fn, j, ncols_of(d));
		return (int)j - 1;
	}
	return luaL_error(L, "%s: a column is a name or a 1-based index (got %s)", fn,
			  luaL_typename(L, idx));
}

/* --- the Column userdata ------------------------------------------------------------------- */

static int col_gc(lua_State *L)
{
	lcol *c = gwb_lua_toudata(L, 1, COLUMN_MT);

	if (c) {
		free(c->mem);
		c->mem = NULL;
	}
	return 0;
}

/* Push a view of column j of the Dataset at index ds. */
static void push_view(lua_State *L, int ds, int j)
{
	const gwb_dataset *d = gwb_lua_checkdataset(L, ds);
	lcol *c;

	ds = lua_absindex(L, ds);
	c = gwb_lua_newudata(L, sizeof(lcol), 1, COLUMN_MT);
	c->j = j;
	snprintf(c->name, sizeof(c->name), "%s", col_name(d, j));
	lua_pushvalue(L, ds);
	lua_setiuservalue(L, -2, 1);
}

/* Push a column that owns n values of type t (zeroed) named name; returns them. */
static void *push_owned(lua_State *L, size_t n, gwb_col_type t, const char *name)
{
	lcol *c = gwb_lua_newudata(L, sizeof(lcol), 1, COLUMN_MT);
	size_t sz = t == GWB_COL_U8 ? 1 : sizeof(double);

	c->j = -1;
	c->mem = calloc(n + 1, sz);
	if (!c->mem)
		luaL_error(L, "out of memory for a column of %I values", (lua_Integer)n);
	c->own.n = n;
	c->own.type = t;
	c->own.v = c->mem;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c->mem;
}

static lcol *check_lcol(lua_State *L, int idx)
{
	return gwb_lua_checkudata(L, idx, COLUMN_MT, "Column (d.name, d[j] or d:col(name))");
}

/* The values of the Column at idx (a view: the Dataset must still be open). */
static gwb_col get_col(lua_State *L, int idx, lcol **out)
{
	lcol *c = check_lcol(L, idx);
	gwb_col v;

	if (out)
		*out = c;
	if (c->j < 0)
		return c->own;
	lua_getiuservalue(L, idx, 1);
	gwb_col_of(gwb_lua_checkdataset(L, -1), c->j, &v);
	lua_pop(L, 1);
	return v;
}

static const char *kind_of(const gwb_col *c)
{
	return c->levels ? "category" : c->type == GWB_COL_U8 ? "bool" : "number";
}

static void need_number(lua_State *L, const gwb_col *c, const lcol *lc, const char *fn)
{
	if (c->levels)
		luaL_error(L, "%s: column '%s' is a category (labels); %s needs numbers "
			   "(c:value_counts() counts its labels)", fn, lc->name, fn);
}

/* push value i of c as Lua sees it: a number, a label, a boolean; nil when missing */
static void push_value(lua_State *L, const gwb_col *c, size_t i)
{
	double v = gwb_col_at(c, i);

	if (isnan(v))
		lua_pushnil(L);
	else if (c->levels)
		lua_pushstring(L, v >= 0 && v < c->nlevels && c->levels[(size_t)v] ?
			       c->levels[(size_t)v] : "?");
	else if (c->type == GWB_COL_U8)
		lua_pushboolean(L, v != 0);
	else if (c->type == GWB_COL_F32)
		lua_pushnumber(L, gwb_f32_decimal((float)v));
	else
		lua_pushnumber(L, v);
}

static int col_len(lua_State *L)
{
	gwb_col c = get_col(L, 1, NULL);

	lua_pushinteger(L, (lua_Integer)c.n);
	return 1;
}

static int col_index(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);

	if (lua_isinteger(L, 2)) {
		lua_Integer i = lua_tointeger(L, 2);
		if (i < 1 || (size_t)i > c.n)
			return luaL_error(L, "column '%s': row %I is outside 1..%I", lc->name, i,
					  (lua_Integer)c.n);
		push_value(L, &c, (size_t)i - 1);
		return 1;
	}
	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *k = lua_tostring(L, 2);
		if (!strcmp(k, "name")) {
			lua_pushstring(L, lc->name);
			return 1;
		}
		if (!strcmp(k, "kind")) {
			lua_pushstring(L, kind_of(&c));
			return 1;
		}
		if (!strcmp(k, "rows")) {
			lua_pushinteger(L, (lua_Integer)c.n);
			return 1;
		}
		if (!strcmp(k, "labels")) {
			int j;
			if (!c.levels)
				return lua_pushnil(L), 1;
			lua_createtable(L, c.nlevels, 0);
			for (j = 0; j < c.nlevels; j++) {
				lua_pushstring(L, c.levels[j] ? c.levels[j] : "");
				lua_rawseti(L, -2, j + 1);
			}
			return 1;
		}
	}
	return gwb_lua_index_method(L);
}

static int col_tostring(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	luaL_Buffer B;
	size_t i, miss = 0, show = c.n <= 10 ? c.n : 5;
	char line[160], cnt[48];

	for (i = 0; i < c.n; i++)
		miss += isnan(gwb_col_at(&c, i)) != 0;
	luaL_buffinit(L, &B);
	snprintf(line, sizeof(line), "Column '%s': %s, %s", lc->name, kind_of(&c),
		 gwb_fmt_count(cnt, sizeof(cnt), (long long)c.n, "row", NULL));
	luaL_addstring(&B, line);
	if (miss) {
		snprintf(line, sizeof(line), ", %zu missing", miss);
		luaL_addstring(&B, line);
	}
	for (i = 0; i < c.n; i++) {
		double v;
		if (i == show && c.n > 10) {
			luaL_addstring(&B, "\n  ...");
			i = c.n - 5;
		}
		v = gwb_col_at(&c, i);
		if (isnan(v))
			snprintf(line, sizeof(line), "\n  %8zu  (missing)", i + 1);
		else if (c.levels)
			snprintf(line, sizeof(line), "\n  %8zu  %.60s", i + 1, v >= 0 && v < c.nlevels ?
				 c.levels[(size_t)v] : "?");
		else if (c.type == GWB_COL_U8)
			snprintf(line, sizeof(line), "\n  %8zu  %s", i + 1, v != 0 ? "true" : "false");
		else if (c.type == GWB_COL_F32)
			snprintf(line, sizeof(line), "\n  %8zu  %.*g", i + 1, gwb_f32_digits((float)v), v);
		else
			snprintf(line, sizeof(line), "\n  %8zu  %.10g", i + 1, v);
		luaL_addstring(&B, line);
	}
	luaL_pushresult(&B);
	return 1;
}

/* --- summaries ------------------------------------------------------------------------------ */

static gwb_colsum summary(lua_State *L, const char *fn, bool numbers)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	gwb_colsum s;

	if (numbers)
		need_number(L, &c, lc, fn);
	gwb_lua_check(L, gwb_col_summary(&c, &s));
	return s;
}

static int c_sum(lua_State *L)
{
	lua_pushnumber(L, summary(L, "sum", true).sum);
	return 1;
}

static int c_mean(lua_State *L)
{
	lua_pushnumber(L, summary(L, "mean", true).mean);
	return 1;
}

static int c_min(lua_State *L)
{
	lua_pushnumber(L, summary(L, "min", true).min);
	return 1;
}

static int c_max(lua_State *L)
{
	lua_pushnumber(L, summary(L, "max", true).max);
	return 1;
}

static int c_std(lua_State *L)
{
	lua_pushnumber(L, summary(L, "std", true).std);
	return 1;
}

static int c_var(lua_State *L)
{
	lua_pushnumber(L, summary(L, "var", true).var);
	return 1;
}

static int c_count(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)summary(L, "count", false).count);
	return 1;
}

static int c_missing(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)summary(L, "missing", false).missing);
	return 1;
}

static int c_quantile(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	double *q, *out;
	int nq, i;
	bool list = lua_istable(L, 2);

	need_number(L, &c, lc, "quantile");
	if (!list && !lua_isnumber(L, 2))
		return luaL_error(L, "quantile: q is a number in 0..1 or a list of them (got %s)",
				  luaL_typename(L, 2));
	nq = list ? (int)luaL_len(L, 2) : 1;
	q = lua_newuserdatauv(L, sizeof(double) * ((size_t)nq + 1) * 2, 0);
	out = q + nq + 1;
	for (i = 0; i < nq; i++) {
		if (list)
			lua_geti(L, 2, i + 1);
		else
			lua_pushvalue(L, 2);
		if (!lua_isnumber(L, -1))
			return luaL_error(L, "quantile: q[%d] is %s, not a number", i + 1,
					  luaL_typename(L, -1));
		q[i] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	gwb_lua_check(L, gwb_col_quantiles(&c, q, nq, out));
	if (!list) {
		lua_pushnumber(L, out[0]);
		return 1;
	}
	lua_createtable(L, nq, 0);
	for (i = 0; i < nq; i++) {
		lua_pushnumber(L, out[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static int c_median(lua_State *L)
{
	lua_settop(L, 1);
	lua_pushnumber(L, 0.5);
	return c_quantile(L);
}

static int c_totable(lua_State *L)
{
	gwb_col c = get_col(L, 1, NULL);
	size_t i;

	lua_createtable(L, c.n < (1u << 30) ? (int)c.n : 0, 0);
	for (i = 0; i < c.n; i++) {
		push_value(L, &c, i);
		if (lua_isnil(L, -1)) {   /* missing: NaN keeps the list without holes */
			lua_pop(L, 1);
			lua_pushnumber(L, NAN);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int c_unique(lua_State *L)
{
	gwb_col c = get_col(L, 1, NULL);
	double *v;
	size_t *cnt, k, i;
	gwb_status st = gwb_col_distinct(&c, &v, &cnt, &k);

	gwb_lua_check(L, st);
	lua_createtable(L, k < (1u << 30) ? (int)k : 0, 0);
	for (i = 0; i < k; i++) {
		if (c.levels)
			lua_pushstring(L, c.levels[(size_t)v[i]] ? c.levels[(size_t)v[i]] : "");
		else if (c.type == GWB_COL_U8)
			lua_pushboolean(L, v[i] != 0);
		else if (c.type == GWB_COL_F32)
			lua_pushnumber(L, gwb_f32_decimal((float)v[i]));
		else
			lua_pushnumber(L, v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	free(v);
	free(cnt);
	return 1;
}

/* value, count, fraction for the distinct values of c, most frequent first (ties: first
 * seen first); a Dataset without a target */
static int value_counts_of(lua_State *L, const gwb_col *c, const char *name)
{
	double *v, *vc, *cf, *fr, tot = 0;
	size_t *cnt, k, i, *ord;
	gwb_colspec spec[3];
	gwb_dataset *r;
	gwb_status st = gwb_col_distinct(c, &v, &cnt, &k);

	gwb_lua_check(L, st);
	ord = malloc((k + 1) * sizeof(size_t));
	vc = malloc((3 * k + 1) * sizeof(double));
	if (!ord || !vc) {
		free(ord);
		free(vc);
		free(v);
		free(cnt);
		return luaL_error(L, "value_counts: out of memory");
	}
	cf = vc + k;
	fr = cf + k;
	for (i = 0; i < k; i++) {
		ord[i] = i;
		tot += (double)cnt[i];
	}
	/* stable insertion by count where few, else a merge through qsort on (count, index) */
	{
		size_t a;
		for (a = 1; a < k && k <= 4096; a++) {
			size_t t = ord[a], p = a;
			while (p > 0 && cnt[ord[p - 1]] < cnt[t]) {
				ord[p] = ord[p - 1];
				p--;
			}
			ord[p] = t;
		}
		if (k > 4096) {
			gwb_sortkey key;
			size_t *perm;
			for (i = 0; i < k; i++)
				cf[i] = -(double)cnt[i];
			key.col = (gwb_col){k, GWB_COL_F64, cf, NULL, 0};
			key.desc = false;
			if ((st = gwb_table_order(&key, 1, k, &perm)) == GWB_OK) {
				memcpy(ord, perm, k * sizeof(size_t));
				free(perm);
			}
		}
	}
	for (i = 0; i < k; i++) {
		vc[i] = v[ord[i]];
		cf[i] = (double)cnt[ord[i]];
		fr[i] = cf[i] / tot;
	}
	free(ord);
	free(v);
	free(cnt);
	if (st) {
		free(vc);
		return gwb_lua_fail(L, st);
	}
	spec[0] = (gwb_colspec){name, {k, GWB_COL_F64, vc, c->levels, c->nlevels}, NULL};
	spec[1] = (gwb_colspec){"count", {k, GWB_COL_F64, cf, NULL, 0}, NULL};
	spec[2] = (gwb_colspec){"fraction", {k, GWB_COL_F64, fr, NULL, 0}, NULL};
	st = gwb_table_build(k, spec, 3, -1, &r);
	free(vc);
	gwb_lua_check(L, st);
	gwb_lua_pushdataset(L, r);
	return 1;
}

static int c_value_counts(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);

	return value_counts_of(L, &c, lc->name);
}

static int c_hist(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	size_t i, k = 0;

	need_number(L, &c, lc, "hist");
	lua_getglobal(L, "require");
	lua_pushstring(L, "gwb.plot");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "hist");
	lua_createtable(L, c.n < (1u << 30) ? (int)c.n : 0, 0);
	for (i = 0; i < c.n; i++) {
		double v = gwb_col_at(&c, i);
		if (isnan(v))
			continue;
		lua_pushnumber(L, v);
		lua_rawseti(L, -2, (lua_Integer)++k);
	}
	if (lua_istable(L, 2)) {
		lua_pushvalue(L, 2);
	} else {
		lua_createtable(L, 0, 1);
	}
	if (lua_getfield(L, -1, "title") == LUA_TNIL) {
		lua_pop(L, 1);
		lua_pushfstring(L, "%s (%I values)", lc->name, (lua_Integer)k);
		lua_setfield(L, -2, "title");
	} else {
		lua_pop(L, 1);
	}
	lua_call(L, 2, 1);
	return 1;
}

/* --- masks ---------------------------------------------------------------------------------- */

/* The number or label at idx as a value of column c (labels become codes; an unknown label
 * is an error naming the nearest). */
static double value_arg(lua_State *L, const gwb_col *c, const lcol *lc, int idx, const char *fn)
{
	if (c->levels) {
		const char *s, *near;
		int k;
		if (lua_type(L, idx) != LUA_TSTRING)
			return luaL_error(L, "%s: column '%s' is a category: compare it with one of its "
					  "labels (a string), not %s", fn, lc->name, luaL_typename(L, idx));
		s = lua_tostring(L, idx);
		for (k = 0; k < c->nlevels; k++)
			if (c->levels[k] && !strcmp(c->levels[k], s))
				return k;
		near = gwb_nearest_name(s, (const char *const *)c->levels, (size_t)c->nlevels);
		return luaL_error(L, "%s: '%s' is not a label of column '%s'%s%s%s", fn, s, lc->name,
				  near ? " (nearest: '" : "", near ? near : "", near ? "')" : "");
	}
	if (lua_type(L, idx) == LUA_TBOOLEAN && c->type == GWB_COL_U8)
		return lua_toboolean(L, idx);
	if (!lua_isnumber(L, idx))
		return luaL_error(L, "%s: column '%s' holds numbers: compare it with a number, not %s",
				  fn, lc->name, luaL_typename(L, idx));
	return lua_tonumber(L, idx);
}

static int compare(lua_State *L, gwb_cmp op, const char *fn)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	double x;
	uint8_t *m;
	char name[160];

	if (c.levels && op != GWB_CMP_EQ && op != GWB_CMP_NE)
		return luaL_error(L, "%s: column '%s' is a category: its labels have no order (use "
				  "eq, ne or isin)", fn, lc->name);
	x = value_arg(L, &c, lc, 2, fn);
	snprintf(name, sizeof(name), "%.100s:%s", lc->name, fn);
	m = push_owned(L, c.n, GWB_COL_U8, name);
	gwb_col_compare(&c, op, x, m);
	return 1;
}

static int c_lt(lua_State *L) { return compare(L, GWB_CMP_LT, "lt"); }
static int c_le(lua_State *L) { return compare(L, GWB_CMP_LE, "le"); }
static int c_gt(lua_State *L) { return compare(L, GWB_CMP_GT, "gt"); }
static int c_ge(lua_State *L) { return compare(L, GWB_CMP_GE, "ge"); }
static int c_eq(lua_State *L) { return compare(L, GWB_CMP_EQ, "eq"); }
static int c_ne(lua_State *L) { return compare(L, GWB_CMP_NE, "ne"); }

static int c_between(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	double a, b;
	uint8_t *m;

	need_number(L, &c, lc, "between");
	a = value_arg(L, &c, lc, 2, "between");
	b = value_arg(L, &c, lc, 3, "between");
	m = push_owned(L, c.n, GWB_COL_U8, "between");
	gwb_col_between(&c, a, b, m);
	return 1;
}

static int c_isin(lua_State *L)
{
	lcol *lc;
	gwb_col c = get_col(L, 1, &lc);
	size_t k, i;
	double *set;
	uint8_t *m;

	luaL_checktype(L, 2, LUA_TTABLE);
	k = (size_t)luaL_len(L, 2);
	set = lua_newuserdatauv(L, sizeof(double) * (k + 1), 0);
	for (i = 0; i < k; i++) {
		lua_geti(L, 2, (lua_Integer)i + 1);
		set[i] = value_arg(L, &c, lc, -1, "isin");
		lua_pop(L, 1);
	}
	m = push_owned(L, c.n, GWB_COL_U8, "isin");
	gwb_col_isin(&c, set, k, m);
	return 1;
}

static int c_isnan(lua_State *L)
{
	gwb_col c = get_col(L, 1, NULL);
	uint8_t *m = push_owned(L, c.n, GWB_COL_U8, "isnan");

	gwb_col_isnan(&c, m);
	return 1;
}

static gwb_col check_mask(lua_State *L, int idx, const char *fn)
{
	lcol *lc;
	gwb_col c;

	if (!gwb_lua_testudata(L, idx, COLUMN_MT))
		luaL_error(L, "'%s' combines masks (c:gt(x), c:eq('label'), ...), not %s", fn,
			   luaL_typename(L, idx));
	c = get_col(L, idx, &lc);
	if (c.type != GWB_COL_U8)
		luaL_error(L, "'%s' combines masks, and column '%s' is a %s: compare it first "
			   "(c:gt(x), c:eq(v), c:isnan())", fn, lc->name, kind_of(&c));
	return c;
}

static int mask_bin(lua_State *L, int op)
{
	const char *fn = op == '&' ? "&" : "|";
	gwb_col a = check_mask(L, 1, fn), b = check_mask(L, 2, fn);
	const uint8_t *x = a.v, *y = b.v;
	uint8_t *m;
	size_t i;

	if (a.n != b.n)
		return luaL_error(L, "'%s' of masks of %I and %I rows: masks of one table have its "
				  "length", fn, (lua_Integer)a.n, (lua_Integer)b.n);
	m = push_owned(L, a.n, GWB_COL_U8, op == '&' ? "and" : "or");
	if (op == '&')
		for (i = 0; i < a.n; i++)
			m[i] = x[i] & y[i];
	else
		for (i = 0; i < a.n; i++)
			m[i] = x[i] | y[i];
	return 1;
}

static int col_band(lua_State *L) { return mask_bin(L, '&'); }
static int col_bor(lua_State *L) { return mask_bin(L, '|'); }

static int col_bnot(lua_State *L)
{
	gwb_col a = check_mask(L, 1, "~");
	const uint8_t *x = a.v;
	uint8_t *m = push_owned(L, a.n, GWB_COL_U8, "not");
	size_t i;

	for (i = 0; i < a.n; i++)
		m[i] = !x[i];
	return 1;
}

/* --- arithmetic ----------------------------------------------------------------------------- */

static int arith(lua_State *L, int op)
{
	static const char *const opname[] = {"+", "-", "*", "/"};
	const char *sym = opname[op == '+' ? 0 : op == '-' ? 1 : op == '*' ? 2 : 3];
	gwb_col a = {0}, b = {0};
	lcol *la = NULL, *lb = NULL;
	bool ca = gwb_lua_testudata(L, 1, COLUMN_MT) != NULL;
	bool cb = op != 'n' && gwb_lua_testudata(L, 2, COLUMN_MT) != NULL;
	double sa = 0, sb = 0, *out;
	char name[160];
	size_t n;

	if (op == 'n' && !ca)
		return luaL_error(L, "'-' of a %s: negation takes a Column", luaL_typename(L, 1));
	if (ca) {
		a = get_col(L, 1, &la);
		if (a.levels || a.type == GWB_COL_U8)
			return luaL_error(L, "'%s' needs numbers: column '%s' is a %s", op == 'n' ? "-" :
					  sym, la->name, kind_of(&a));
	} else if (lua_isnumber(L, 1)) {
		sa = lua_tonumber(L, 1);
	} else {
		return luaL_error(L, "'%s' of a %s and a Column: give a number", sym, luaL_typename(L, 1));
	}
	if (op != 'n') {
		if (cb) {
			b = get_col(L, 2, &lb);
			if (b.levels || b.type == GWB_COL_U8)
				return luaL_error(L, "'%s' needs numbers: column '%s' is a %s", sym,
						  lb->name, kind_of(&b));
		} else if (lua_isnumber(L, 2)) {
			sb = lua_tonumber(L, 2);
		} else {
			return luaL_error(L, "'%s' of a Column and a %s: give a number or a Column", sym,
					  luaL_typename(L, 2));
		}
	}
	if (ca && cb && a.n != b.n)
		return luaL_error(L, "'%s' of columns of %I and %I rows ('%s', '%s'): columns of one "
				  "table have its length", sym, (lua_Integer)a.n, (lua_Integer)b.n,
				  la->name, lb->name);
	n = ca ? a.n : b.n;
	if (op == 'n')
		snprintf(name, sizeof(name), "-%.100s", la->name);
	else
		snprintf(name, sizeof(name), "%.60s %s %.60s", ca ? la->name : "x", sym, cb ? lb->name : "x");
	out = push_owned(L, n, GWB_COL_F64, name);
	gwb_col_arith(ca ? &a : NULL, sa, cb ? &b : NULL, sb, op, out);
	return 1;
}

static int col_add(lua_State *L) { return arith(L, '+'); }
static int col_sub(lua_State *L) { return arith(L, '-'); }
static int col_mul(lua_State *L) { return arith(L, '*'); }
static int col_div(lua_State *L) { return arith(L, '/'); }
static int col_unm(lua_State *L) { return arith(L, 'n'); }

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
	cols = ncols_of(in);

	if (n >= 2 && lua_type(L, 2) == LUA_TSTRING)
		snprintf(what, sizeof(what), "%s", lua_tostring(L, 2));
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
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
		SETS("backend", "cpu");
		lua_createtable(L, 0, 1);
		SETN("total_ms", ms);
		lua_setfield(L, -2, "timing");
		lua_createtable(L, 0, 2);
		SETI("rows", out->rows);
		SETI("cols", ncols_of(out));
		lua_setfield(L, -2, "metrics");
		gwb_lua_log_run(L, -1);
		lua_pop(L, 1);
	}
	return 1;
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
		gwb_col c = get_col(L, idx, &lc);
		if (c.type != GWB_COL_U8)
			luaL_error(L, "%s: column '%s' is a %s, not a mask: compare it (%s:gt(x), "
				   ":eq(v), :isnan()) or give an expression", fn, lc->name,
				   kind_of(&c), lc->name);
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
		push_columns(L, d, &names, &cols);
		if ((st = gwb_expr_compile(lua_tostring(L, idx), names, cols, ncols_of(d), &e)))
			luaL_error(L, "%s: %s", fn, gwb_errmsg());
		st = gwb_expr_mask(e, cols, d->rows, m);
		gwb_expr_free(e);
		if (st)
			luaL_error(L, "%s: %s", fn, gwb_errmsg());
		lua_pop(L, 2);
		return m;
	}
	if (lua_isfunction(L, idx)) {
		int n = ncols_of(d), j;
		size_t i;
		gwb_col *cols = lua_newuserdatauv(L, sizeof(gwb_col) * ((size_t)n + 1), 0);
		for (j = 0; j < n; j++)
			gwb_col_of(d, j, &cols[j]);
		for (i = 0; i < d->rows; i++) {
			lua_pushvalue(L, idx);
			lua_createtable(L, 0, n);
			for (j = 0; j < n; j++) {
				push_value(L, &cols[j], i);
				lua_setfield(L, -2, col_name(d, j));
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

	m = mask_arg(L, 1, d, 2, "filter");
	if ((st = gwb_mask_rows(m, d->rows, &idx, &k)))
		return verb_fail(L, "filter", st);
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

	push_view(L, 1, check_col(L, d, 2, "col"));
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
		j = find_col(d, s);
		if (j < 0 && signs && (*s == '-' || *s == '+')) {
			desc[n] = *s == '-';
			s++;
			j = find_col(d, s);
		}
		if (j < 0)
			unknown_col(L, d, fn, s);
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
	int j = check_col(L, d, 2, "value_counts");
	gwb_col c;

	gwb_col_of(d, j, &c);
	value_counts_of(L, &c, col_name(d, j));
	return 1;
}

/* --- group_by ------------------------------------------------------------------------------- */

typedef struct lgroup {
	int nk;
	int cols[MAXKEYS];
} lgroup;

static int m_group_by(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	bool desc[MAXKEYS];
	int cols[MAXKEYS], nk = key_list(L, d, 2, "group_by", false, cols, desc, MAXKEYS);
	lgroup *g = gwb_lua_newudata(L, sizeof(lgroup), 1, GROUPBY_MT);

	g->nk = nk;
	memcpy(g->cols, cols, sizeof(int) * (size_t)nk);
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
	out->col = find_col(d, col);
	if (out->col < 0)
		unknown_col(L, d, "agg", col);
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
				 col_name(d, a[k].col));
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
		if (c.levels && a[k].agg != GWB_AGG_COUNT && a[k].agg != GWB_AGG_NUNIQUE &&
		    a[k].agg != GWB_AGG_FIRST && a[k].agg != GWB_AGG_LAST)
			return luaL_error(L, "agg: %s of '%s', a category (labels): use count, nunique, "
					  "first or last on it", gwb_agg_name(a[k].agg),
					  col_name(d, a[k].col));
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
		spec[k] = (gwb_colspec){col_name(d, lg->cols[k]), keys[k], g->first};
	for (k = 0; k < na; k++) {
		gwb_col c = {0};
		double *out = vals + (size_t)k * G;
		if (a[k].col >= 0)
			gwb_col_of(d, a[k].col, &c);
		st = gwb_groups_agg(g, (gwb_agg)a[k].agg, a[k].col >= 0 ? &c : NULL, out);
		if (st)
			break;
		spec[lg->nk + k] = (gwb_colspec){a[k].name, {G, GWB_COL_F64, out, NULL, 0}, NULL};
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
		luaL_addstring(&B, col_name(d, lg->cols[k]));
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
		spec[k] = (gwb_colspec){col_name(d, cols[k]), keys[k], g->first};
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
	int j, n = ncols_of(d);

	for (j = 0; j < n; j++) {
		spec[j].name = col_name(d, j);
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
	int jl, jr, nl = ncols_of(d), nr = ncols_of(e), n, j;
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
	if ((jl = find_col(d, on)) < 0)
		unknown_col(L, d, "join (left table)", on);
	if ((jr = find_col(e, on)) < 0)
		unknown_col(L, e, "join (right table)", on);
	gwb_col_of(d, jl, &lk);
	gwb_col_of(e, jr, &rk);
	if (!lk.levels != !rk.levels)
		return luaL_error(L, "join: the key '%s' is a %s on the left and a %s on the right: "
				  "keys of different kinds never match", on, kind_of(&lk), kind_of(&rk));
	if ((st = gwb_table_join(&lk, &rk, left, &li, &ri, &rows)))
		return verb_fail(L, "join", st);
	luaL_checkstack(L, nr + 8, "join: too many columns");
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * (size_t)(nl + nr + 1), 0);
	names = lua_newuserdatauv(L, sizeof(char *) * (size_t)(nr + 1) , 0);
	n = all_specs(d, li, spec);
	for (j = 0; j < nr; j++) {
		const char *nm = col_name(e, j);
		if (j == jr)
			continue;
		spec[n].src = (gwb_col){0};
		gwb_col_of(e, j, &spec[n].src);
		spec[n].idx = ri;
		if (find_col(d, nm) >= 0) {   /* the string stays on the stack until the build */
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
	int n = ncols_of(d), nn = 0, k, j, total;
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
	push_columns(L, d, &names, &cols);
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * (size_t)(n + nn + 1), 0);
	total = all_specs(d, NULL, spec);
	for (k = 0; k < nn; k++) {
		gwb_col c;
		int at;
		lua_getfield(L, 2, newnames[k]);
		if (gwb_lua_testudata(L, -1, COLUMN_MT)) {
			lcol *lc;
			c = get_col(L, -1, &lc);
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
			out = push_owned(L, d->rows, GWB_COL_F64, newnames[k]);
			st = gwb_expr_eval(e, cols, d->rows, out);
			gwb_expr_free(e);
			if (st)
				return verb_fail(L, "with", st);
			c = (gwb_col){d->rows, GWB_COL_F64, out, NULL, 0};
		} else if (lua_isfunction(L, -1)) {
			double *out = push_owned(L, d->rows, GWB_COL_F64, newnames[k]);
			size_t i;
			int fi = lua_absindex(L, -2);
			for (i = 0; i < d->rows; i++) {
				lua_pushvalue(L, fi);
				lua_createtable(L, 0, n);
				for (j = 0; j < n; j++) {
					push_value(L, &cols[j], i);
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
			c = (gwb_col){d->rows, GWB_COL_F64, out, NULL, 0};
		} else {
			return luaL_error(L, "with: %s = %s: give a Column, an expression (\"a / b\") or "
					  "a function of a row", newnames[k], luaL_typename(L, -1));
		}
		/* values stay referenced from the stack (the Column or owned result) */
		at = find_col(d, newnames[k]);
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
	int n = ncols_of(d), j, k, m = 0, target;
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
		j = check_col(L, d, -1, "drop");
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
	int n = ncols_of(d), j;
	gwb_colspec *spec;

	luaL_checktype(L, 2, LUA_TTABLE);
	spec = lua_newuserdatauv(L, sizeof(gwb_colspec) * ((size_t)n + 1), 0);
	all_specs(d, NULL, spec);
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "rename: give {old = \"new\", ...}");
		j = check_col(L, d, -2, "rename");
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
	int n = ncols_of(d), j, target = -1;
	gwb_colspec *spec;

	if (!lua_isnoneornil(L, 2) && !(lua_isboolean(L, 2) && !lua_toboolean(L, 2)))
		target = check_col(L, d, 2, "set_target");
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

/* --- registration --------------------------------------------------------------------------- */

/* d.NAME / d[j]: the column, or nil. lapi_data.c's __index calls it as the Dataset
 * metatable's __column (a hook, so the lower binding never links to this one). */
static int ds_column(lua_State *L)
{
	int ds = 1, key = 2;
	gwb_dataset *d = gwb_lua_checkdataset(L, ds);
	int j = -1;

	if (lua_type(L, key) == LUA_TSTRING)
		j = find_col(d, lua_tostring(L, key));
	else if (lua_isinteger(L, key)) {
		lua_Integer i = lua_tointeger(L, key);
		if (i >= 1 && i <= ncols_of(d))
			j = (int)i - 1;
	}
	if (j < 0) {
		lua_pushnil(L);
		return 1;
	}
	push_view(L, ds, j);
	return 1;
}

static const gwb_reg col_methods[] = {
	{"sum", c_sum, "c:sum() -> number\nSum of the values that are not missing (compensated "
	 "summation: exact to the last bits on long columns)."},
	{"mean", c_mean, "c:mean() -> number\nMean of the values that are not missing (NaN when "
	 "there are none). A category column is an error."},
	{"min", c_min, "c:min() -> number\nSmallest value (missing ones skipped)."},
	{"max", c_max, "c:max() -> number\nLargest value (missing ones skipped)."},
	{"std", c_std, "c:std() -> number\nSample standard deviation (n - 1), from the deviations "
	 "about the mean."},
	{"var", c_var, "c:var() -> number\nSample variance (n - 1)."},
	{"count", c_count, "c:count() -> integer\nValues that are not missing."},
	{"missing", c_missing, "c:missing() -> integer\nMissing values (NaN, or an empty field in "
	 "the file)."},
	{"quantile", c_quantile, "c:quantile(q | {q, ...}) -> number | list\nExact quantiles of the "
	 "values that are not missing, linear between order statistics (numpy's and pandas' "
	 "default). Example: d.x:quantile{0.25, 0.5, 0.75}"},
	{"median", c_median, "c:median() -> number\nThe 0.5 quantile."},
	{"unique", c_unique, "c:unique() -> list\nDistinct values (labels for a category) in order "
	 "of first appearance, missing ones left out."},
	{"value_counts", c_value_counts, "c:value_counts() -> Dataset\nEach distinct value with its "
	 "count and fraction, most frequent first (ties: first seen first); a table without a "
	 "target."},
	{"hist", c_hist, "c:hist([opts]) -> plot\nA histogram in the terminal (plot.hist's options: "
	 "bins, range, height)."},
	{"totable", c_totable, "c:totable() -> list\nThe values as a Lua list (labels for a "
	 "category, true/false for a mask; NaN where missing)."},
	{"lt", c_lt, "c:lt(x) -> mask\nRows where the value is < x (missing: false). Masks combine "
	 "with & | ~ and filter a table: d:filter(d.a:lt(3) & ~d.b:isnan())."},
	{"le", c_le, "c:le(x) -> mask\nRows where the value is <= x."},
	{"gt", c_gt, "c:gt(x) -> mask\nRows where the value is > x."},
	{"ge", c_ge, "c:ge(x) -> mask\nRows where the value is >= x."},
	{"eq", c_eq, "c:eq(x) -> mask\nRows equal to x: a number, or a label of a category column "
	 "(an unknown label is an error naming the nearest)."},
	{"ne", c_ne, "c:ne(x) -> mask\nRows not equal to x (missing values count as not equal)."},
	{"between", c_between, "c:between(a, b) -> mask\nRows with a <= value <= b."},
	{"isin", c_isin, "c:isin{x, ...} -> mask\nRows whose value is one of the list (numbers or "
	 "labels)."},
	{"isnan", c_isnan, "c:isnan() -> mask\nRows where the value is missing."},
	{NULL, NULL, NULL},
};

static const gwb_reg ds_methods[] = {
	{"col", m_col, "d:col(name | j) -> Column\nThe column (a view, no copy: it keeps d alive), "
	 "as d.name, d[\"name\"] and d[j] give it; d:col reaches a column named like a field or "
	 "method (d:col(\"rows\")). Unknown names are an error naming the nearest. Columns are the "
	 "features, then the target."},
	{"filter", m_filter, "d:filter(mask | expr | fn) -> Dataset\nThe rows where the condition "
	 "holds, in order. A mask from the columns (d.a:gt(5) & d.k:eq(\"x\")), an expression "
	 "compiled once and run column-wise (\"a > 5 & k == 'x'\", with + - * / < <= > >= == != "
	 "& | ~ ( ), isnan(), numbers, 'labels' and `quoted names`), or a Lua function of a row "
	 "(function(r) return r.a > r.b end; the slow general path). Run-logged."},
	{"sort", m_sort, "d:sort(key | {\"a\", \"-b\"}) -> Dataset\nThe rows ordered by the keys "
	 "(\"-name\" descending), stable, missing values last, categories by label. LSD radix "
	 "sort of the keys' bits. Run-logged."},
	{"group_by", m_group_by, "d:group_by(key | {keys}) -> GroupBy\nGroups of rows by the keys' "
	 "values; g:agg{...} computes aggregates per group."},
	{"value_counts", m_value_counts, "d:value_counts(col) -> Dataset\nd.col:value_counts(): "
	 "value, count, fraction, most frequent first. Run-logged."},
	{"unique", m_unique, "d:unique(col | {cols}) -> Dataset\nThe distinct combinations of the "
	 "columns, in sorted order (missing last). Run-logged."},
	{"join", m_join, "d:join(e, {on = \"key\", how = \"inner\" | \"left\"}) -> Dataset\nRows of "
	 "d joined with the rows of e that have an equal key (categories match by label): d's "
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
	static const luaL_Reg col_meta[] = {
		{"__gc", col_gc},
		{"__len", col_len},
		{"__index", col_index},
		{"__tostring", col_tostring},
		{"__band", col_band},
		{"__bor", col_bor},
		{"__bnot", col_bnot},
		{"__add", col_add},
		{"__sub", col_sub},
		{"__mul", col_mul},
		{"__div", col_div},
		{"__unm", col_unm},
		{NULL, NULL},
	};
	static const luaL_Reg group_meta[] = {
		{"__tostring", g_tostring},
		{NULL, NULL},
	};
	const gwb_reg *r;
	char full[128];

	gwb_lua_newclass(L, COLUMN_MT, col_methods, col_meta);
	gwb_lua_newclass(L, GROUPBY_MT, group_methods, group_meta);
	/* the verbs join the Dataset's methods (its metatable is lapi_data.c's) */
	luaL_getmetatable(L, "gwb.Dataset");
	if (lua_getfield(L, -1, "__methods") != LUA_TTABLE)
		return luaL_error(L, "the Dataset class is not open (gwb_open_data first)");
	lua_pushcfunction(L, ds_column);
	lua_setfield(L, -3, "__column");
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
