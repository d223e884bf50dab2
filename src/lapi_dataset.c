/* lapi_dataset.c - the Dataset userdata "gwb.Dataset" at the bottom of the data bindings:
 * push/check (every binding that takes a Dataset), what a run record says of one
 * (gwb_lua_push_datainfo), a new empty box (filled once the Dataset exists, so __gc is always
 * safe), its release (__gc, __close, d:close), the matching of a Dataset's columns onto a
 * model's by name (forests, PCA), and a list of names as Lua sees it (d.names, levels). A
 * pushed Dataset is owned by its userdata; a matched copy by the userdata pushed for it. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "lapi.h"
#include "lapi_data.h"

/* --- the userdata -------------------------------------------------------------------------- */

size_t gwb_lua_dataset_bytes(const void *d)
{
	return gwb_dataset_bytes(d);
}

static void free_dataset(void *d)
{
	gwb_dataset_free(d);
}

void gwb_lua_pushdataset(lua_State *L, gwb_dataset *d)
{
	gwb_lua_pushbox(L, DATASET_MT, 1, d, free_dataset);   /* uservalue: d.source */
}

gwb_dataset *gwb_lua_checkdataset(lua_State *L, int idx)
{
	return gwb_lua_checkbox(L, idx, DATASET_MT, "Dataset (from data.load or data.synth)",
				"Dataset");
}

/* What a run record says of a Dataset (path, shape, task, checksum): the rf bindings. */
void gwb_lua_push_datainfo(lua_State *L, int idx)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, idx);
	char hex[24];

	idx = lua_absindex(L, idx);
	lua_createtable(L, 0, 8);
	if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE)
		lua_getfield(L, -1, "path");
	else
		lua_pushnil(L);
	lua_setfield(L, -3, "path");
	lua_pop(L, 1);
	lua_pushinteger(L, (lua_Integer)d->rows);
	lua_setfield(L, -2, "rows");
	lua_pushinteger(L, d->features);
	lua_setfield(L, -2, "features");
	lua_pushstring(L, d->task == GWB_TASK_CLASSIFICATION ? "classification" : "regression");
	lua_setfield(L, -2, "task");
	if (d->classes) {
		lua_pushinteger(L, d->classes);
		lua_setfield(L, -2, "classes");
	}
	if (d->target) {
		lua_pushstring(L, d->target);
		lua_setfield(L, -2, "target");
	}
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)gwb_dataset_checksum(d));
	lua_pushstring(L, hex);
	lua_setfield(L, -2, "checksum");
}

/* --- matching a Dataset's columns to a model's ---------------------------------------------- */

/* Names the CSV reader makes up for a file without a header (col1, col2, ...), or none. */
static bool generated_names(char *const *names, int n)
{
	int j;

	for (j = 0; j < n; j++) {
		const char *s = names ? names[j] : NULL;
		if (s && *s && (strncmp(s, "col", 3) || !s[3] || strspn(s + 3, "0123456789") !=
				strlen(s + 3)))
			return false;
	}
	return true;
}

static char *const *sort_names;   /* for cmp_by_name (qsort has no context argument) */

static int cmp_by_name(const void *a, const void *b)
{
	const char *x = sort_names[*(const int *)a], *y = sort_names[*(const int *)b];

	return strcmp(x ? x : "", y ? y : "");
}

/* Append "'a', 'b', ... (N more)" for up to 8 of the names list[0..k) to buf. */
static void list_names(char *buf, size_t sz, char *const *names, const int *list, int k)
{
	size_t len = strlen(buf);
	int i;

	for (i = 0; i < k && i < 8 && len < sz; i++) {
		snprintf(buf + len, sz - len, "%s'%s'", i ? ", " : "", names[list[i]] ?
			 names[list[i]] : "");
		len = strlen(buf);
	}
	if (k > 8 && len < sz)
		snprintf(buf + len, sz - len, " and %d more", k - 8);
}

gwb_dataset *gwb_lua_dataset_match(lua_State *L, int idx, char *const *names, int n,
				   const char *fn, const char *what, bool *by_position)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, idx), *r;
	int *order, *cols, *missing, *extra, j, nm = 0, ne = 0, lo, hi, same = 1;
	bool unnamed = generated_names(d->names, d->features);
	char msg[1200];

	*by_position = false;
	idx = lua_absindex(L, idx);
	if (!unnamed) {   /* loaded with header = false */
		if (lua_getiuservalue(L, idx, 1) == LUA_TTABLE) {
			lua_getfield(L, -1, "header");
			unnamed = lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	if (unnamed || generated_names(names, n)) {
		/* one side has no names: by position, and only with the same number of columns */
		if (d->features != n)
			luaL_error(L, "%s: the %s was fitted on %d features but the dataset has %d, and "
				   "%s no column names to match them by: give data with the same "
				   "columns", fn, what, n, d->features, unnamed ? "the dataset has" :
				   "the model has");
		*by_position = true;
		return d;
	}
	/* by name: sort the dataset's columns by name, look each of the model's up */
	order = lua_newuserdatauv(L, sizeof(int) * ((size_t)d->features + (size_t)n * 2 + 2), 0);
	cols = order + d->features;
	missing = cols + n;
	for (j = 0; j < d->features; j++)
		order[j] = j;
	sort_names = d->names;
	qsort(order, (size_t)d->features, sizeof(int), cmp_by_name);
	for (j = 0; j + 1 < d->features; j++)
		if (!cmp_by_name(&order[j], &order[j + 1]))
			luaL_error(L, "%s: the dataset has two columns named '%s': rename one so that "
				   "its columns can be matched to the %s's", fn,
				   d->names[order[j]] ? d->names[order[j]] : "", what);
	for (j = 0; j < n; j++) {
		const char *want = names[j] ? names[j] : "";
		cols[j] = -1;
		for (lo = 0, hi = d->features; lo < hi;) {
			int mid = (lo + hi) / 2;
			const char *s = d->names[order[mid]] ? d->names[order[mid]] : "";
			int c = strcmp(s, want);
			if (!c) {
				cols[j] = order[mid];
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (cols[j] < 0)
			missing[nm++] = j;
		same &= cols[j] == j;
	}
	/* the dataset's columns the model does not know (its order[] is free now) */
	extra = order;
	if (nm || d->features != n) {
		char *seen = lua_newuserdatauv(L, (size_t)d->features + 1, 0);
		memset(seen, 0, (size_t)d->features + 1);
		for (j = 0; j < n; j++)
			if (cols[j] >= 0)
				seen[cols[j]] = 1;
		for (j = 0; j < d->features; j++)
			if (!seen[j])
				extra[ne++] = j;
		lua_pop(L, 1);
	}
	if (nm || ne) {
		snprintf(msg, sizeof(msg), "%s: the dataset's columns do not match the %s's "
			 "features (matched by name): ", fn, what);
		if (nm) {
			strncat(msg, "missing ", sizeof(msg) - strlen(msg) - 1);
			list_names(msg, sizeof(msg), names, missing, nm);
		}
		if (ne) {
			strncat(msg, nm ? "; unexpected " : "unexpected ", sizeof(msg) - strlen(msg) - 1);
			list_names(msg, sizeof(msg), d->names, extra, ne);
		}
		strncat(msg, ". Rename or select columns (d:select) to match", sizeof(msg) -
			strlen(msg) - 1);
		luaL_error(L, "%s", msg);
	}
	if (same) {
		lua_pop(L, 1);
		return d;
	}
	gwb_lua_check(L, gwb_dataset_select(d, cols, n, &r));
	lua_pop(L, 1);
	gwb_lua_pushdataset(L, r);   /* owns the reordered copy */
	return r;
}

/* A new userdata that owns nothing yet (so __gc is safe whatever happens next). */
dsbox *gwb_lua_dsbox_new(lua_State *L)
{
	return gwb_lua_newbox(L, DATASET_MT, 1);   /* uservalue: d.source */
}

int gwb_lua_dataset_release(lua_State *L)
{
	gwb_dataset_free(gwb_lua_takebox(L, 1, DATASET_MT));
	return 0;
}

void gwb_lua_count_classes(const gwb_dataset *d, size_t *cnt)
{
	size_t i;

	memset(cnt, 0, (size_t)d->classes * sizeof(*cnt));
	for (i = 0; i < d->rows; i++)
		if (d->y[i] >= 0 && d->y[i] < d->classes)
			cnt[d->y[i]]++;
}

void gwb_lua_push_names(lua_State *L, char **names, int n)
{
	int j;

	lua_createtable(L, n, 0);
	for (j = 0; j < n; j++) {
		lua_pushstring(L, names && names[j] ? names[j] : "");
		lua_rawseti(L, -2, j + 1);
	}
}
