/* lapi_column.c - the Column userdata "gwb.Column" (d.NAME, d[j], d:col(name): a view that
 * keeps its Dataset alive, or the values an arithmetic or a mask made): its fields and
 * printing, summaries (sum ... quantile, unique, value_counts, hist), masks (comparisons and
 * & | ~) and arithmetic; and the table's columns as the verbs see them (the features, then the
 * target: lookup by name or index with the nearest name in errors). The work is in column.c;
 * lapi_verbs.c (the verbs) builds on it through lapi_column.h. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "dataset.h"
#include "fmt.h"
#include "lapi.h"
#include "lapi_column.h"
#include "verbs.h"

/* --- the table's columns: features, then the target ---------------------------------------- */

/* Columns of d a verb sees: the features and (when there is one) the target. */
int gwb_lua_ncols(const gwb_dataset *d)
{
	return d->features + !d->no_target;
}

const char *gwb_lua_colname(const gwb_dataset *d, int j)
{
	if (j < d->features)
		return d->names[j] ? d->names[j] : "";
	return d->target ? d->target : "";
}

/* names[0..ncols) and cols[0..ncols) in userdata on the stack (popped by the caller) */
void gwb_lua_push_columns(lua_State *L, const gwb_dataset *d, char ***names, gwb_col **cols)
{
	int n = gwb_lua_ncols(d), j;

	*names = lua_newuserdatauv(L, sizeof(char *) * ((size_t)n + 1), 0);
	*cols = lua_newuserdatauv(L, sizeof(gwb_col) * ((size_t)n + 1), 0);
	for (j = 0; j < n; j++) {
		(*names)[j] = (char *)gwb_lua_colname(d, j);
		gwb_col_of(d, j, &(*cols)[j]);
	}
}

/* "'a', 'b', ... (N more)" */
static void list_columns(const gwb_dataset *d, char *buf, size_t sz)
{
	int n = gwb_lua_ncols(d), j;
	size_t len = 0;

	buf[0] = 0;
	for (j = 0; j < n && j < 12 && len < sz; j++) {
		snprintf(buf + len, sz - len, "%s%s", j ? ", " : "", gwb_lua_colname(d, j));
		len = strlen(buf);
	}
	if (n > 12 && len < sz)
		snprintf(buf + len, sz - len, ", ... (%d more)", n - 12);
}

int gwb_lua_findcol(const gwb_dataset *d, const char *name)
{
	int j = gwb_dataset_find(d, name);

	if (j >= 0)
		return j;
	if (!d->no_target && d->target && !strcmp(d->target, name))
		return d->features;
	return -1;
}

int gwb_lua_unknown_col(lua_State *L, const gwb_dataset *d, const char *fn, const char *name)
{
	char list[600];
	const char *near;
	int n = gwb_lua_ncols(d), j;
	char **names = lua_newuserdatauv(L, sizeof(char *) * ((size_t)n + 1), 0);

	for (j = 0; j < n; j++)
		names[j] = (char *)gwb_lua_colname(d, j);
	near = gwb_nearest_name(name, (const char *const *)names, (size_t)n);
	list_columns(d, list, sizeof(list));
	return luaL_error(L, "%s: no column '%s'%s%s%s; the columns are %s", fn, name,
			  near ? " (nearest: '" : "", near ? near : "", near ? "')" : "", list);
}

/* The column named by the string (or 1-based index) at idx. */
int gwb_lua_checkcol(lua_State *L, const gwb_dataset *d, int idx, const char *fn)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *name = lua_tostring(L, idx);
		int j = gwb_lua_findcol(d, name);
		if (j < 0)
			gwb_lua_unknown_col(L, d, fn, name);
		return j;
	}
	if (lua_isinteger(L, idx)) {
		lua_Integer j = lua_tointeger(L, idx);
		if (j < 1 || j > gwb_lua_ncols(d))
			return luaL_error(L, "%s: column %I is outside 1..%d", fn, j, gwb_lua_ncols(d));
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
void gwb_lua_push_colview(lua_State *L, int ds, int j)
{
	const gwb_dataset *d = gwb_lua_checkdataset(L, ds);
	lcol *c;

	ds = lua_absindex(L, ds);
	c = gwb_lua_newudata(L, sizeof(lcol), 1, COLUMN_MT);
	c->j = j;
	snprintf(c->name, sizeof(c->name), "%s", gwb_lua_colname(d, j));
	lua_pushvalue(L, ds);
	lua_setiuservalue(L, -2, 1);
}

/* Push a column that owns n values of type t (zeroed) named name; returns them. */
void *gwb_lua_push_colowned(lua_State *L, size_t n, gwb_col_type t, const char *name)
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
gwb_col gwb_lua_getcol(lua_State *L, int idx, lcol **out)
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

const char *gwb_lua_colkind(const gwb_col *c)
{
	return c->text ? "text" : c->levels ? "category" : c->type == GWB_COL_U8 ? "bool" :
	       "number";
}

static void need_number(lua_State *L, const gwb_col *c, const lcol *lc, const char *fn)
{
	if (c->levels)
		luaL_error(L, "%s: column '%s' is a category (labels); %s needs numbers "
			   "(c:value_counts() counts its labels)", fn, lc->name, fn);
	if (c->text)
		luaL_error(L, "%s: column '%s' holds free text; %s needs numbers (c:value_counts() "
			   "counts its strings, c:eq(s) finds one)", fn, lc->name, fn);
}

/* push value i of c as Lua sees it: a number, a label, a boolean; nil when missing */
void gwb_lua_push_colvalue(lua_State *L, const gwb_col *c, size_t i)
{
	double v = gwb_col_at(c, i);

	if (c->text && c->text[i])
		lua_pushstring(L, c->text[i]);
	else if (isnan(v) || c->text)
		lua_pushnil(L);
	else if (c->levels)
		lua_pushstring(L, v >= 0 && v < c->nlevels && c->levels[(size_t)v] ?
			       c->levels[(size_t)v] : "?");
	else if (c->type == GWB_COL_U8)
		lua_pushboolean(L, v != 0);
	else if (c->type == GWB_COL_F32)
		lua_pushnumber(L, gwb_f32_decimal((float)v));
	else if (c->type == GWB_COL_I64)
		lua_pushinteger(L, (lua_Integer)((const int64_t *)c->v)[i]);   /* exact */
	else
		lua_pushnumber(L, v);
}

const char *gwb_lua_coldtype(const gwb_col *c)
{
	if (c->text)
		return "text";
	if (c->levels)
		return "category";
	switch (c->type) {
	case GWB_COL_I64: return "i64";
	case GWB_COL_F64: return "f64";
	case GWB_COL_U8: return "bool";
	case GWB_COL_I32: return "i32";
	default: return "f32";
	}
}


static int col_len(lua_State *L)
{
	gwb_col c = gwb_lua_getcol(L, 1, NULL);

	lua_pushinteger(L, (lua_Integer)c.n);
	return 1;
}

static int col_index(lua_State *L)
{
	lcol *lc;
	gwb_col c = gwb_lua_getcol(L, 1, &lc);

	if (lua_isinteger(L, 2)) {
		lua_Integer i = lua_tointeger(L, 2);
		if (i < 1 || (size_t)i > c.n)
			return luaL_error(L, "column '%s': row %I is outside 1..%I", lc->name, i,
					  (lua_Integer)c.n);
		gwb_lua_push_colvalue(L, &c, (size_t)i - 1);
		return 1;
	}
	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *k = lua_tostring(L, 2);
		if (!strcmp(k, "name")) {
			lua_pushstring(L, lc->name);
			return 1;
		}
		if (!strcmp(k, "kind")) {
			lua_pushstring(L, gwb_lua_colkind(&c));
			return 1;
		}
		if (!strcmp(k, "dtype")) {
			lua_pushstring(L, gwb_lua_coldtype(&c));
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
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
	luaL_Buffer B;
	size_t i, miss = 0, show = c.n <= 10 ? c.n : 5;
	char line[160], cnt[48];

	for (i = 0; i < c.n; i++)
		miss += isnan(gwb_col_at(&c, i)) != 0;
	luaL_buffinit(L, &B);
	snprintf(line, sizeof(line), "Column '%s': %s, %s", lc->name, gwb_lua_colkind(&c),
		 gwb_fmt_count(cnt, sizeof(cnt), (long long)c.n, "row", NULL));
	luaL_addstring(&B, line);
	if (miss) {
		snprintf(line, sizeof(line), ", %zu missing", miss);
		luaL_addstring(&B, line);
	}
	if (!c.text && !c.levels && c.type != GWB_COL_U8) {   /* the number type */
		snprintf(line, sizeof(line), " (%s)", gwb_lua_coldtype(&c));
		luaL_addstring(&B, line);
	}
	for (i = 0; i < c.n; i++) {
		double v;
		if (i == show && c.n > 10) {
			luaL_addstring(&B, "\n  ...");
			i = c.n - 5;
		}
		v = gwb_col_at(&c, i);
		if (isnan(v) || (c.text && !c.text[i]))
			snprintf(line, sizeof(line), "\n  %8zu  (missing)", i + 1);
		else if (c.text)
			snprintf(line, sizeof(line), "\n  %8zu  %.60s%s", i + 1, c.text[i],
				 strlen(c.text[i]) > 60 ? "..." : "");
		else if (c.levels)
			snprintf(line, sizeof(line), "\n  %8zu  %.60s", i + 1, v >= 0 && v < c.nlevels ?
				 c.levels[(size_t)v] : "?");
		else if (c.type == GWB_COL_U8)
			snprintf(line, sizeof(line), "\n  %8zu  %s", i + 1, v != 0 ? "true" : "false");
		else if (c.type == GWB_COL_F32)
			snprintf(line, sizeof(line), "\n  %8zu  %.*g", i + 1, gwb_f32_digits((float)v), v);
		else if (c.type == GWB_COL_I64)
			snprintf(line, sizeof(line), "\n  %8zu  %lld", i + 1,
				 (long long)((const int64_t *)c.v)[i]);
		else if (c.type == GWB_COL_F64) {
			char num[40];
			gwb_fmt_f64(num, sizeof(num), v);
			snprintf(line, sizeof(line), "\n  %8zu  %s", i + 1, num);
		} else
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
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
	gwb_colsum s;

	if (numbers)
		need_number(L, &c, lc, fn);
	gwb_lua_check(L, gwb_col_summary(&c, &s));
	return s;
}

static int c_sum(lua_State *L)
{
	gwb_colsum s = summary(L, "sum", true);

	if (s.i64 && s.isum_ok)   /* an int64 column's sum, exact while it fits */
		lua_pushinteger(L, (lua_Integer)s.isum);
	else
		lua_pushnumber(L, s.sum);
	return 1;
}

static int c_mean(lua_State *L)
{
	lua_pushnumber(L, summary(L, "mean", true).mean);
	return 1;
}

static int c_min(lua_State *L)
{
	gwb_colsum s = summary(L, "min", true);

	if (s.i64 && s.count)
		lua_pushinteger(L, (lua_Integer)s.imin);
	else
		lua_pushnumber(L, s.min);
	return 1;
}

static int c_max(lua_State *L)
{
	gwb_colsum s = summary(L, "max", true);

	if (s.i64 && s.count)
		lua_pushinteger(L, (lua_Integer)s.imax);
	else
		lua_pushnumber(L, s.max);
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
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
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
	gwb_col c = gwb_lua_getcol(L, 1, NULL);
	size_t i;

	lua_createtable(L, c.n < (1u << 30) ? (int)c.n : 0, 0);
	for (i = 0; i < c.n; i++) {
		gwb_lua_push_colvalue(L, &c, i);
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
	gwb_col c = gwb_lua_getcol(L, 1, NULL);
	double *v;
	size_t *cnt, k, i;
	gwb_status st;

	if (c.text) {   /* the strings, in order of first appearance */
		size_t *first;
		gwb_lua_check(L, gwb_text_distinct(c.text, c.n, &first, NULL, &k));
		lua_createtable(L, k < (1u << 30) ? (int)k : 0, 0);
		for (i = 0; i < k; i++) {
			lua_pushstring(L, c.text[first[i]]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		free(first);
		return 1;
	}
	st = gwb_col_distinct(&c, &v, &cnt, &k);
	gwb_lua_check(L, st);
	lua_createtable(L, k < (1u << 30) ? (int)k : 0, 0);
	for (i = 0; i < k; i++) {
		if (c.levels)
			lua_pushstring(L, c.levels[(size_t)v[i]] ? c.levels[(size_t)v[i]] : "");
		else if (c.type == GWB_COL_U8)
			lua_pushboolean(L, v[i] != 0);
		else if (c.type == GWB_COL_F32)
			lua_pushnumber(L, gwb_f32_decimal((float)v[i]));
		else if (c.type == GWB_COL_I64)
			lua_pushinteger(L, (lua_Integer)((const int64_t *)(void *)v)[i]);
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
static int counts_table(lua_State *L, const gwb_col *c, const char *name, double *v, size_t *cnt,
			size_t k, char **tv);

int gwb_lua_value_counts(lua_State *L, const gwb_col *c, const char *name)
{
	double *v;
	size_t *cnt, k, i;
	char **tv = NULL;   /* a text column's distinct strings (borrowed from it) */
	gwb_status st;

	if (c->text) {
		size_t *first;
		gwb_lua_check(L, gwb_text_distinct(c->text, c->n, &first, &cnt, &k));
		v = malloc((k + 1) * sizeof(double));
		tv = lua_newuserdatauv(L, (k + 1) * sizeof(char *), 0);   /* freed by the GC */
		if (!v) {
			free(first);
			free(cnt);
			return luaL_error(L, "value_counts: out of memory");
		}
		for (i = 0; i < k; i++) {
			v[i] = (double)i;
			tv[i] = c->text[first[i]];
		}
		free(first);
	} else if ((st = gwb_col_distinct(c, &v, &cnt, &k))) {
		return gwb_lua_fail(L, st);
	}
	return counts_table(L, c, name, v, cnt, k, tv);
}

int gwb_lua_value_counts_of(lua_State *L, const gwb_col *c, const char *name, double *v,
			    size_t *cnt, size_t k)
{
	return counts_table(L, c, name, v, cnt, k, NULL);
}

/* the value_counts table of k distinct values v (a text column: their strings tv) and their
 * counts cnt, which it frees */
static int counts_table(lua_State *L, const gwb_col *c, const char *name, double *v, size_t *cnt,
			size_t k, char **tv)
{
	double *vc, *cf, *fr, tot = 0;
	size_t i, *ord;
	gwb_colspec spec[3];
	gwb_dataset *r;
	gwb_status st = GWB_OK;

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
			key.col = (gwb_col){k, GWB_COL_F64, cf, NULL, 0, NULL, NULL};
			key.desc = false;
			if ((st = gwb_table_order(&key, 1, k, &perm)) == GWB_OK) {
				memcpy(ord, perm, k * sizeof(size_t));
				free(perm);
			}
		}
	}
	for (i = 0; i < k; i++) {
		memcpy(&vc[i], &v[ord[i]], sizeof(double));   /* an int64 column's: int64 bits */
		cf[i] = (double)cnt[ord[i]];
		fr[i] = cf[i] / tot;
	}
	if (tv) {   /* the strings in the counts' order; the value column is 0 (present) */
		char **sorted = lua_newuserdatauv(L, (k + 1) * sizeof(char *), 0);
		for (i = 0; i < k; i++) {
			sorted[i] = tv[(size_t)vc[i]];
			vc[i] = 0;
		}
		tv = sorted;
	}
	free(ord);
	free(v);
	free(cnt);
	if (st) {
		free(vc);
		return gwb_lua_fail(L, st);
	}
	for (i = 0; i < k; i++) {   /* counts are integers */
		int64_t n = (int64_t)cf[i];
		memcpy(&cf[i], &n, sizeof(n));
	}
	spec[0] = (gwb_colspec){name, {k, c->type == GWB_COL_I64 ? GWB_COL_I64 : GWB_COL_F64, vc,
				       c->levels, c->nlevels, tv, NULL}, NULL};
	spec[1] = (gwb_colspec){"count", {k, GWB_COL_I64, cf, NULL, 0, NULL, NULL}, NULL};
	spec[2] = (gwb_colspec){"fraction", {k, GWB_COL_F64, fr, NULL, 0, NULL, NULL}, NULL};
	st = gwb_table_build(k, spec, 3, -1, &r);
	free(vc);
	gwb_lua_check(L, st);
	gwb_lua_pushdataset(L, r);
	return 1;
}

static int c_value_counts(lua_State *L)
{
	lcol *lc;
	gwb_col c = gwb_lua_getcol(L, 1, &lc);

	return gwb_lua_value_counts(L, &c, lc->name);
}

static int c_hist(lua_State *L)
{
	lcol *lc;
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
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
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
	double x;
	uint8_t *m;
	char name[160];

	if (c.levels && op != GWB_CMP_EQ && op != GWB_CMP_NE)
		return luaL_error(L, "%s: column '%s' is a category: its labels have no order (use "
				  "eq, ne or isin)", fn, lc->name);
	if (c.text) {   /* strings: equal or not (a missing one equals nothing) */
		const char *s;
		size_t i;
		if (op != GWB_CMP_EQ && op != GWB_CMP_NE)
			return luaL_error(L, "%s: column '%s' holds free text: compare it with eq, ne "
					  "or isin", fn, lc->name);
		if (lua_type(L, 2) != LUA_TSTRING)
			return luaL_error(L, "%s: column '%s' holds text: compare it with a string, not "
					  "%s", fn, lc->name, luaL_typename(L, 2));
		s = lua_tostring(L, 2);
		snprintf(name, sizeof(name), "%.100s:%s", lc->name, fn);
		m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, name);
		for (i = 0; i < c.n; i++)
			m[i] = (c.text[i] && !strcmp(c.text[i], s)) == (op == GWB_CMP_EQ);
		return 1;
	}
	x = value_arg(L, &c, lc, 2, fn);
	snprintf(name, sizeof(name), "%.100s:%s", lc->name, fn);
	m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, name);
	if (c.type == GWB_COL_I64 && lua_isinteger(L, 2) && lua_tointeger(L, 2) != GWB_I64_NA)
		gwb_col_compare_i64(&c, op, (int64_t)lua_tointeger(L, 2), m);   /* exact */
	else
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
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
	double a, b;
	uint8_t *m;

	need_number(L, &c, lc, "between");
	a = value_arg(L, &c, lc, 2, "between");
	b = value_arg(L, &c, lc, 3, "between");
	m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, "between");
	if (c.type == GWB_COL_I64 && lua_isinteger(L, 2) && lua_isinteger(L, 3))
		gwb_col_between_i64(&c, (int64_t)lua_tointeger(L, 2), (int64_t)lua_tointeger(L, 3),
				    m);
	else
		gwb_col_between(&c, a, b, m);
	return 1;
}

static int c_isin(lua_State *L)
{
	lcol *lc;
	gwb_col c = gwb_lua_getcol(L, 1, &lc);
	size_t k, i;
	double *set;
	uint8_t *m;

	luaL_checktype(L, 2, LUA_TTABLE);
	k = (size_t)luaL_len(L, 2);
	if (c.text) {   /* strings: a scan of a short set, a hash set of a long one */
		const char **ss = lua_newuserdatauv(L, sizeof(char *) * (k + 1), 0);
		for (i = 0; i < k; i++) {
			lua_geti(L, 2, (lua_Integer)i + 1);
			if (lua_type(L, -1) != LUA_TSTRING)
				return luaL_error(L, "isin: column '%s' holds text: the set holds strings "
						  "(entry %I is a %s)", lc->name, (lua_Integer)i + 1,
						  luaL_typename(L, -1));
			ss[i] = lua_tostring(L, -1);
			lua_pop(L, 1);   /* (the table keeps the string alive) */
		}
		m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, "isin");
		gwb_lua_check(L, gwb_text_isin(c.text, c.n, ss, k, m));
		return 1;
	}
	set = lua_newuserdatauv(L, sizeof(double) * (k + 1), 0);
	if (c.type == GWB_COL_I64) {   /* integers compare exactly; others as doubles */
		int64_t *iset = (int64_t *)(void *)set;
		bool ints = true;
		for (i = 0; i < k && ints; i++) {
			double x;
			lua_geti(L, 2, (lua_Integer)i + 1);
			if (lua_isinteger(L, -1))
				iset[i] = (int64_t)lua_tointeger(L, -1);
			else if (!gwb_f64_to_i64((x = value_arg(L, &c, lc, -1, "isin")), &iset[i]))
				ints = false;
			lua_pop(L, 1);
		}
		if (ints) {
			m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, "isin");
			gwb_col_isin_i64(&c, iset, k, m);
			return 1;
		}
	}
	for (i = 0; i < k; i++) {
		lua_geti(L, 2, (lua_Integer)i + 1);
		set[i] = value_arg(L, &c, lc, -1, "isin");
		lua_pop(L, 1);
	}
	m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, "isin");
	gwb_col_isin(&c, set, k, m);
	return 1;
}

static int c_isnan(lua_State *L)
{
	gwb_col c = gwb_lua_getcol(L, 1, NULL);
	uint8_t *m = gwb_lua_push_colowned(L, c.n, GWB_COL_U8, "isnan");

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
	c = gwb_lua_getcol(L, idx, &lc);
	if (c.type != GWB_COL_U8)
		luaL_error(L, "'%s' combines masks, and column '%s' is a %s: compare it first "
			   "(c:gt(x), c:eq(v), c:isnan())", fn, lc->name, gwb_lua_colkind(&c));
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
	m = gwb_lua_push_colowned(L, a.n, GWB_COL_U8, op == '&' ? "and" : "or");
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
	uint8_t *m = gwb_lua_push_colowned(L, a.n, GWB_COL_U8, "not");
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
		a = gwb_lua_getcol(L, 1, &la);
		if (a.levels || a.text || a.type == GWB_COL_U8)
			return luaL_error(L, "'%s' needs numbers: column '%s' is a %s", op == 'n' ? "-" :
					  sym, la->name, gwb_lua_colkind(&a));
	} else if (lua_isnumber(L, 1)) {
		sa = lua_tonumber(L, 1);
	} else {
		return luaL_error(L, "'%s' of a %s and a Column: give a number", sym, luaL_typename(L, 1));
	}
	if (op != 'n') {
		if (cb) {
			b = gwb_lua_getcol(L, 2, &lb);
			if (b.levels || b.text || b.type == GWB_COL_U8)
				return luaL_error(L, "'%s' needs numbers: column '%s' is a %s", sym,
						  lb->name, gwb_lua_colkind(&b));
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
	out = gwb_lua_push_colowned(L, n, GWB_COL_F64, name);
	gwb_col_arith(ca ? &a : NULL, sa, cb ? &b : NULL, sb, op, out);
	return 1;
}

static int col_add(lua_State *L) { return arith(L, '+'); }
static int col_sub(lua_State *L) { return arith(L, '-'); }
static int col_mul(lua_State *L) { return arith(L, '*'); }
static int col_div(lua_State *L) { return arith(L, '/'); }
static int col_unm(lua_State *L) { return arith(L, 'n'); }

/* --- registration --------------------------------------------------------------------------- */

/* d.NAME / d[j]: the column, or nil. lapi_data.c's __index calls it as the Dataset
 * metatable's __column (a hook, so the lower binding never links to this one). */
static int ds_column(lua_State *L)
{
	int ds = 1, key = 2;
	gwb_dataset *d = gwb_lua_checkdataset(L, ds);
	int j = -1;

	if (lua_type(L, key) == LUA_TSTRING)
		j = gwb_lua_findcol(d, lua_tostring(L, key));
	else if (lua_isinteger(L, key)) {
		lua_Integer i = lua_tointeger(L, key);
		if (i >= 1 && i <= gwb_lua_ncols(d))
			j = (int)i - 1;
	}
	if (j < 0) {
		lua_pushnil(L);
		return 1;
	}
	gwb_lua_push_colview(L, ds, j);
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

void gwb_lua_column_newclass(lua_State *L)
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

	gwb_lua_newclass(L, COLUMN_MT, col_methods, col_meta);
	luaL_getmetatable(L, "gwb.Dataset");
	if (lua_isnil(L, -1))
		luaL_error(L, "the Dataset class is not open (gwb_open_data first)");
	lua_pushcfunction(L, ds_column);
	lua_setfield(L, -2, "__column");
	lua_pop(L, 1);
}
