/* lapi_rows.c - a Dataset's rows and columns picked from Lua (d:column, select, take, split,
 * shuffle, kfold) and the gwb.Fold tables kfold returns (fold.train / fold.test built on first
 * use). It uses the Dataset userdata below it (lapi_dataset.c: check, new box, names) and
 * dataset.c's select/take; lapi_data.c lists these methods and their help. Every Dataset made
 * here is owned by the userdata pushed for it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "lapi.h"
#include "lapi_data.h"
#include "rng.h"
#include "suggest.h"

#define FOLD_MT "gwb.Fold"

/* Column index from a name or a 1-based index at stack idx; -1 = the target. */
static int col_arg(lua_State *L, const gwb_dataset *d, int idx, const char *fn)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *name = lua_tostring(L, idx);
		int j = gwb_dataset_find(d, name);
		if (j >= 0)
			return j;
		if (d->target && !strcmp(name, d->target))
			return -1;
		{
			char near[256];
			if (gwb_suggest(name, (const char *const *)d->names, d->names ? (size_t)d->features : 0,
					NULL, near, sizeof(near)))
				return luaL_error(L, "%s: no column \"%s\": did you mean %s? (d.names lists "
						  "the features)", fn, name, near);
		}
		return luaL_error(L, "%s: no column \"%s\" (d.names lists the features; the target "
				  "is \"%s\")", fn, name, d->target ? d->target : "?");
	}
	if (lua_isinteger(L, idx)) {
		lua_Integer j = lua_tointeger(L, idx);
		if (j < 1 || j > d->features)
			return luaL_error(L, "%s: column %I out of range 1..%d", fn, j, d->features);
		return (int)j - 1;
	}
	return luaL_error(L, "%s: a column is a name or a 1-based index (got %s)", fn,
			  luaL_typename(L, idx));
}

int gwb_lua_ds_column(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	int j = col_arg(L, d, 2, "column");
	size_t i;

	lua_createtable(L, (int)(d->rows < 1u << 30 ? d->rows : 0), 0);
	if (j < 0) {
		for (i = 0; i < d->rows; i++) {
			if (d->y)
				lua_pushinteger(L, d->y[i] + 1);
			else
				lua_pushnumber(L, d->yr[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		if (!d->y)
			return 1;
		gwb_lua_push_names(L, d->class_names, d->classes);
		return 2;
	}
	{
		const float *x = d->X + (size_t)j * d->rows;
		if (gwb_dataset_is_text(d, j)) {   /* the strings, missing ones as NaN */
			for (i = 0; i < d->rows; i++) {
				if (d->text[j]->v[i])
					lua_pushstring(L, d->text[j]->v[i]);
				else
					lua_pushnumber(L, NAN);
				lua_rawseti(L, -2, (lua_Integer)i + 1);
			}
			return 1;
		}
		for (i = 0; i < d->rows; i++) {
			if (d->cat_levels[j] && !isnan(x[i]))
				lua_pushinteger(L, (lua_Integer)x[i] + 1);
			else
				lua_pushnumber(L, x[i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
	}
	if (!d->cat_levels[j])
		return 1;
	gwb_lua_push_names(L, d->cat_levels[j], d->cat_count[j]);
	return 2;
}

int gwb_lua_ds_select(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	const char **names;
	int n, k, *cols;
	dsbox *b;

	luaL_checktype(L, 2, LUA_TTABLE);
	n = (int)lua_rawlen(L, 2);
	if (n < 1)
		return luaL_argerror(L, 2, "a non-empty list of column names or indices");
	cols = lua_newuserdatauv(L, sizeof(int) * (size_t)n, 0);
	/* names found all at once (linear in names + features); the table keeps them alive */
	names = lua_newuserdatauv(L, sizeof(char *) * (size_t)n, 0);
	for (k = 0; k < n; k++) {
		names[k] = lua_rawgeti(L, 2, k + 1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
		lua_pop(L, 1);
	}
	gwb_lua_check(L, gwb_dataset_find_many(d, names, n, cols));
	for (k = 0; k < n; k++) {
		if (!names[k] || cols[k] < 0) {
			lua_rawgeti(L, 2, k + 1);
			cols[k] = col_arg(L, d, lua_gettop(L), "select");
			lua_pop(L, 1);
		}
		if (cols[k] < 0)
			return luaL_error(L, "select: \"%s\" is the target; select chooses features",
					  d->target);
	}
	b = gwb_lua_dsbox_new(L);
	gwb_lua_check(L, gwb_dataset_select(d, cols, n, &b->d));
	return 1;
}

/* Push a new Dataset of rows idx[0..n) of d. */
static void push_take(lua_State *L, const gwb_dataset *d, const size_t *idx, size_t n)
{
	dsbox *b = gwb_lua_dsbox_new(L);

	gwb_lua_check(L, gwb_dataset_take(d, idx, n, &b->d));
}

int gwb_lua_ds_take(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	size_t n, i, *idx;

	luaL_checktype(L, 2, LUA_TTABLE);
	n = lua_rawlen(L, 2);
	idx = lua_newuserdatauv(L, sizeof(size_t) * (n + 1), 0);
	for (i = 0; i < n; i++) {
		int ok;
		lua_Integer r;
		lua_rawgeti(L, 2, (lua_Integer)i + 1);
		r = lua_tointegerx(L, -1, &ok);
		if (!ok || r < 1 || (size_t)r > d->rows)
			return luaL_error(L, "take: rows[%d] must be a row number in 1..%I", (int)i + 1,
					  (lua_Integer)d->rows);
		idx[i] = (size_t)r - 1;
		lua_pop(L, 1);
	}
	push_take(L, d, idx, n);
	return 1;
}

/* Seed and stratify from an options table at idx (seed may also be a bare number). */
static void split_opts(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
		       uint64_t *seed, int *stratify)
{
	static const char *const keys[] = {"seed", "stratify", NULL};

	if (lua_type(L, idx) == LUA_TNUMBER) {
		*seed = (uint64_t)luaL_checkinteger(L, idx);
		*stratify = d->task == GWB_TASK_CLASSIFICATION;
		return;
	}
	gwb_opt_check_keys(L, idx, fn, keys);
	*seed = (uint64_t)gwb_opt_int(L, idx, fn, "seed", 1);
	*stratify = gwb_opt_bool(L, idx, fn, "stratify", d->task == GWB_TASK_CLASSIFICATION);
	if (*stratify && d->task != GWB_TASK_CLASSIFICATION)
		luaL_error(L, "%s: stratify needs a classification dataset (this one is a "
			   "regression)", fn);
}

/* order[0..rows): the rows shuffled; stratified = grouped by class, each group shuffled.
 * starts[k] (classes + 1 entries, when stratified) marks the groups. */
static void shuffled_order(const gwb_dataset *d, uint64_t seed, int stratify, size_t *order,
			   size_t *starts)
{
	gwb_rand r;
	size_t i;
	int k;

	gwb_rand_seed(&r, seed, 0x5eed);
	if (!stratify) {
		for (i = 0; i < d->rows; i++)
			order[i] = i;
		gwb_rand_shuffle(&r, order, d->rows);
		return;
	}
	memset(starts, 0, sizeof(*starts) * ((size_t)d->classes + 1));
	for (i = 0; i < d->rows; i++)
		starts[d->y[i] + 1]++;
	for (k = 0; k < d->classes; k++)
		starts[k + 1] += starts[k];
	{
		/* counting sort into class groups (stable), then shuffle each group */
		size_t *pos = malloc(sizeof(*pos) * ((size_t)d->classes + 1));
		if (pos) {
			memcpy(pos, starts, sizeof(*pos) * ((size_t)d->classes + 1));
			for (i = 0; i < d->rows; i++)
				order[pos[d->y[i]]++] = i;
			free(pos);
		} else {
			size_t m = 0;
			for (k = 0; k < d->classes; k++)
				for (i = 0; i < d->rows; i++)
					if (d->y[i] == k)
						order[m++] = i;
		}
	}
	for (k = 0; k < d->classes; k++)
		gwb_rand_shuffle(&r, order + starts[k], starts[k + 1] - starts[k]);
}

static int cmp_frac(const void *a, const void *b)
{
	const double *x = a, *y = b;   /* {fraction, class} pairs: larger fraction first */

	if (x[0] != y[0])
		return x[0] < y[0] ? 1 : -1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

int gwb_lua_ds_split(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	double frac = luaL_checknumber(L, 2);
	uint64_t seed;
	int stratify, k;
	size_t *order, *starts, *tr, *te, ntr = 0, nte = 0, i, want;
	unsigned char *in;

	if (!(frac > 0 && frac < 1))
		return luaL_error(L, "split: frac is the share of rows for training, strictly "
				  "between 0 and 1 (got %f)", (lua_Number)frac);
	split_opts(L, 3, "split", d, &seed, &stratify);
	want = (size_t)llround(frac * (double)d->rows);
	if (want < 1 || want >= d->rows)
		return luaL_error(L, "split: %f of %I rows leaves an empty train or test set", (lua_Number)frac,
				  (lua_Integer)d->rows);
	order = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	starts = lua_newuserdatauv(L, sizeof(size_t) * ((size_t)d->classes + 2), 0);
	in = lua_newuserdatauv(L, d->rows + 1, 0);
	memset(in, 0, d->rows);
	shuffled_order(d, seed, stratify, order, starts);
	if (!stratify) {
		for (i = 0; i < want; i++)
			in[order[i]] = 1;
	} else {
		/* per class floor(frac n_c), the rest by largest remainder so the total is `want` */
		double *fr = lua_newuserdatauv(L, sizeof(double) * 2 * ((size_t)d->classes + 1), 0);
		size_t *quota = lua_newuserdatauv(L, sizeof(size_t) * ((size_t)d->classes + 1), 0);
		size_t got = 0;
		for (k = 0; k < d->classes; k++) {
			double q = frac * (double)(starts[k + 1] - starts[k]);
			quota[k] = (size_t)floor(q);
			got += quota[k];
			fr[2 * k] = q - floor(q);
			fr[2 * k + 1] = k;
		}
		qsort(fr, (size_t)d->classes, 2 * sizeof(double), cmp_frac);
		for (k = 0; got < want && k < d->classes; k++, got++)
			quota[(int)fr[2 * k + 1]]++;
		for (k = 0; k < d->classes; k++)
			for (i = 0; i < quota[k]; i++)
				in[order[starts[k] + i]] = 1;
	}
	tr = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	te = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	for (i = 0; i < d->rows; i++) {
		if (in[i])
			tr[ntr++] = i;
		else
			te[nte++] = i;
	}
	push_take(L, d, tr, ntr);
	push_take(L, d, te, nte);
	return 2;
}

int gwb_lua_ds_shuffle(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	uint64_t seed = 1;
	size_t *order;
	int stratify = 0;

	if (lua_type(L, 2) == LUA_TTABLE) {
		static const char *const keys[] = {"seed", NULL};
		gwb_opt_check_keys(L, 2, "shuffle", keys);
		seed = (uint64_t)gwb_opt_int(L, 2, "shuffle", "seed", 1);
	} else if (!lua_isnoneornil(L, 2)) {
		seed = (uint64_t)luaL_checkinteger(L, 2);
	}
	order = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	shuffled_order(d, seed, stratify, order, NULL);
	push_take(L, d, order, d->rows);
	return 1;
}

/* fold.train / fold.test, built on first use and kept in the fold table. */
static int fold_index(lua_State *L)
{
	const char *k = lua_tostring(L, 2);
	gwb_dataset *d;
	size_t n, i, t, *test, *idx, m = 0;
	int train;

	if (!k || (strcmp(k, "train") && strcmp(k, "test")))
		return 0;
	train = !strcmp(k, "train");
	lua_getfield(L, 1, "dataset");
	d = gwb_lua_checkdataset(L, -1);
	lua_getfield(L, 1, "test_rows");
	n = lua_rawlen(L, -1);
	test = lua_newuserdatauv(L, sizeof(size_t) * (n + 1), 0);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, -2, (lua_Integer)i + 1);
		test[i] = (size_t)lua_tointeger(L, -1) - 1;
		lua_pop(L, 1);
	}
	if (train) {
		idx = lua_newuserdatauv(L, sizeof(size_t) * (d->rows - n + 1), 0);
		for (i = 0, t = 0; i < d->rows; i++) {
			if (t < n && test[t] == i)
				t++;
			else
				idx[m++] = i;
		}
	} else {
		idx = test;
		m = n;
	}
	push_take(L, d, idx, m);
	lua_pushvalue(L, -1);
	lua_setfield(L, 1, k);   /* cache (the fold table has no __newindex) */
	return 1;
}

int gwb_lua_ds_kfold(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	lua_Integer k = luaL_checkinteger(L, 2);
	uint64_t seed;
	int stratify, f;
	size_t *order, *starts, i;
	int *fold;

	if (k < 2 || (size_t)k > d->rows)
		return luaL_error(L, "kfold: k must be in 2..rows (%I), got %I", (lua_Integer)d->rows,
				  k);
	split_opts(L, 3, "kfold", d, &seed, &stratify);
	order = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	starts = lua_newuserdatauv(L, sizeof(size_t) * ((size_t)d->classes + 2), 0);
	fold = lua_newuserdatauv(L, sizeof(int) * (d->rows + 1), 0);
	shuffled_order(d, seed, stratify, order, starts);
	/* deal the (class-grouped) shuffled rows round-robin: fold sizes differ by at most one,
	 * and so do each class's counts per fold */
	for (i = 0; i < d->rows; i++)
		fold[order[i]] = (int)(i % (size_t)k);
	lua_createtable(L, (int)k, 0);
	for (f = 0; f < k; f++) {
		lua_Integer m = 0;
		lua_createtable(L, 0, 5);
		lua_pushvalue(L, 1);
		lua_setfield(L, -2, "dataset");
		lua_pushinteger(L, f + 1);
		lua_setfield(L, -2, "fold");
		lua_newtable(L);
		for (i = 0; i < d->rows; i++)
			if (fold[i] == f) {
				lua_pushinteger(L, (lua_Integer)i + 1);
				lua_rawseti(L, -2, ++m);
			}
		lua_setfield(L, -2, "test_rows");
		luaL_setmetatable(L, FOLD_MT);
		lua_rawseti(L, -2, f + 1);
	}
	return 1;
}

/* The metatable of kfold's fold tables. */
void gwb_lua_fold_newclass(lua_State *L)
{
	luaL_newmetatable(L, FOLD_MT);
	lua_pushcfunction(L, fold_index);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}
