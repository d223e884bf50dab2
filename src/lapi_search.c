/* lapi_search.c - rf.search(d, grid, opts): hyperparameter search by cross-validation. The grid's
 * settings (every combination, or a seeded random sample of them) are grouped into families by
 * everything but the tree count and the depth: a family trains one forest of its largest count
 * at its deepest depth per fold and judges its first n trees cut at each depth (gwb_rf_cv_grid:
 * the same values as separate rf.cv calls, since tree t depends only on (seed, t) and a node's
 * split never on the depth limit); the folds are cut once for the whole search. Each setting
 * is a run-log record with the search's tag; a budget stops between families and the result
 * says which settings ran; the best setting (the first of equals) is refitted on all of d. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "forest.h"
#include "gpu.h"
#include "intr.h"
#include "lapi.h"
#include "lapi_rf.h"
#include "mpi.h"
#include "nearest.h"
#include "rf_eval.h"

#define FOLDS_MT "gwb.SearchFolds"

typedef struct folds {
	int k;
	gwb_dataset **train, **test;
} folds;

static int folds_gc(lua_State *L)
{
	folds *F = gwb_lua_toudata(L, 1, FOLDS_MT);

	if (!F)
		return 0;
	for (int f = 0; f < F->k; f++) {
		if (F->train)
			gwb_dataset_free(F->train[f]);
		if (F->test)
			gwb_dataset_free(F->test[f]);
	}
	free(F->train);
	free(F->test);
	F->train = F->test = NULL;
	F->k = 0;
	return 0;
}

static folds *make_folds(lua_State *L, gwb_dataset *d, int k, bool shuffle, uint64_t seed)
{
	folds *F = gwb_lua_newudata(L, sizeof(folds), 0, FOLDS_MT);
	int *fold = lua_newuserdatauv(L, sizeof(int) * (d->rows + 1), 0);
	size_t *order = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	size_t *tr = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	size_t *te = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);

	F->train = calloc((size_t)k, sizeof(gwb_dataset *));
	F->test = calloc((size_t)k, sizeof(gwb_dataset *));
	if (!F->train || !F->test)
		luaL_error(L, "rf.search: out of memory");
	F->k = k;
	gwb_rf_make_folds(d, k, shuffle, seed, fold, order);
	for (int f = 0; f < k; f++) {
		size_t ntr = 0, nte = 0;
		for (size_t i = 0; i < d->rows; i++) {
			if (fold[i] == f)
				te[nte++] = i;
			else
				tr[ntr++] = i;
		}
		gwb_lua_check(L, gwb_dataset_take(d, tr, ntr, &F->train[f]));
		gwb_lua_check(L, gwb_dataset_take(d, te, nte, &F->test[f]));
	}
	lua_pop(L, 4);
	return F;
}

/* Options a grid may vary: rf.train's, less those that say how to run rather than what. */
static bool grid_key(const char *k)
{
	static const char *const no[] = {"tag", "progress", "weights", "threads", "backend",
					 "gpus", "gpu_standin", "hybrid_front", "hybrid_ratio",
					 "require_gpu", "task", "keep", "ranks", NULL};
	for (int i = 0; no[i]; i++)
		if (!strcmp(k, no[i]))
			return false;
	for (int i = 0; gwb_rf_train_keys[i]; i++)
		if (!strcmp(k, gwb_rf_train_keys[i]))
			return true;
	return false;
}

static const char *const search_keys[] = {"cv", "metric", "budget_s", "strategy", "seed", "n",
					  "shuffle", "progress", "tag", "refit", NULL};

static bool is_search_key(const char *k)
{
	for (int i = 0; search_keys[i]; i++)
		if (!strcmp(k, search_keys[i]))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Push a shallow copy of the table at idx. */
static void copy_table(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	lua_newtable(L);
	if (!lua_istable(L, idx))
		return;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, -4);
	}
}

/* Set in the table at dst group g's value of every grid key but trees (keys[tvals - 1]): g is
 * a number in the mixed radix of nvals, the last key fastest. run: as rf.train takes it (a
 * depth of 0, "no limit" in a grid, as GWB_RF_MAX_DEPTH); else as the grid gave it. */
static void set_group(lua_State *L, int dst, int lists, const char *const *keys,
		      const int *nvals, int nk, int tvals, int g, bool run)
{
	for (int i = nk - 1; i >= 0; i--) {
		if (i + 1 == tvals)
			continue;
		lua_getfield(L, lists, keys[i]);
		lua_rawgeti(L, -1, g % nvals[i] + 1);
		g /= nvals[i];
		if (run && !strcmp(keys[i], "depth") && lua_isinteger(L, -1) &&
		    !lua_tointeger(L, -1)) {
			lua_pop(L, 1);
			lua_pushinteger(L, GWB_RF_MAX_DEPTH);
		}
		lua_setfield(L, dst, keys[i]);
		lua_pop(L, 1);
	}
}

static int l_search(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	const char *keys[64], *mname, *strategy;
	int nk = 0, nvals[64], k, ngroups = 1, nt, i, total, nsel, ran = 0, done_groups = 0;
	int GRID = 2, OPTS = 3, base, tvals, sel_t, setv, res_settings;
	double t0 = gwb_now(), budget, best = NAN;
	gwb_rf_cv_timing tm = {0};
	int best_i = -1;
	bool shuffle, progress, budget_hit = false, refit, higher, dealt;
	gwb_rf_metric metric;
	uint64_t seed;
	folds *F;

	lua_settop(L, 3);
	luaL_checktype(L, GRID, LUA_TTABLE);
	if (lua_isnil(L, OPTS)) {
		lua_newtable(L);
		lua_replace(L, OPTS);
	}
	luaL_checktype(L, OPTS, LUA_TTABLE);
	/* opts: the search's own keys and rf.train's (fixed for every setting) */
	lua_pushnil(L);
	while (lua_next(L, OPTS)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "rf.search: option keys must be names");
		const char *key = lua_tostring(L, -1);
		bool train = false;
		for (i = 0; gwb_rf_train_keys[i]; i++)
			train = train || !strcmp(key, gwb_rf_train_keys[i]);
		if (!is_search_key(key) && !train) {
			const char *all[128], *near;
			int n = 0;
			for (i = 0; search_keys[i]; i++)
				all[n++] = search_keys[i];
			for (i = 0; gwb_rf_train_keys[i] && n < 127; i++)
				all[n++] = gwb_rf_train_keys[i];
			near = gwb_nearest_name(key, all, (size_t)n);
			return luaL_error(L, "rf.search: unknown option '%s'%s%s%s (the search's: cv, "
					  "metric, budget_s, strategy, seed, n, shuffle, progress, tag, "
					  "refit; and rf.train's, fixed for every setting)", key,
					  near ? "; did you mean '" : "", near ? near : "",
					  near ? "'?" : "");
		}
		if (!strcmp(key, "weights"))
			return luaL_error(L, "rf.search: weights are not taken (the folds would need "
					  "their share of them); use class_weight, or rf.cv per setting");
	}
	gwb_opt_tag(L, OPTS, "rf.search");
	lua_pop(L, 1);
	k = gwb_opt_i32(L, OPTS, "rf.search", "cv", 5);
	if (k < 2 || (size_t)k > d->rows)
		return luaL_error(L, "rf.search: cv (the folds) must be between 2 and the %I rows "
				  "(got %d)", (lua_Integer)d->rows, k);
	shuffle = gwb_opt_bool(L, OPTS, "rf.search", "shuffle", false);
	progress = gwb_opt_bool(L, OPTS, "rf.search", "progress", true);
	refit = gwb_opt_bool(L, OPTS, "rf.search", "refit", true);
	budget = gwb_opt_num(L, OPTS, "rf.search", "budget_s", 0);
	if (!(budget >= 0))
		return luaL_error(L, "rf.search: budget_s must be a number of seconds >= 0 (0: none)");
	seed = (uint64_t)gwb_opt_int(L, OPTS, "rf.search", "seed", 1);
	strategy = gwb_opt_str(L, OPTS, "rf.search", "strategy", "grid");
	if (strcmp(strategy, "grid") && strcmp(strategy, "random"))
		return luaL_error(L, "rf.search: strategy must be \"grid\" or \"random\" (got \"%s\")",
				  strategy);
	mname = gwb_opt_str(L, OPTS, "rf.search", "metric",
			    d->task == GWB_TASK_CLASSIFICATION ? "accuracy" : "r2");
	gwb_lua_check(L, gwb_rf_metric_parse(mname, d->task, "rf.search", &metric));
	higher = gwb_rf_metric_higher_better(metric);

	/* the grid: sorted option names, each a list of values; trees apart */
	lua_pushnil(L);
	while (lua_next(L, GRID)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "rf.search: grid keys must be option names");
		const char *key = lua_tostring(L, -1);
		if (!grid_key(key)) {
			const char *all[64], *near;
			int n = 0;
			for (i = 0; gwb_rf_train_keys[i] && n < 63; i++)
				if (grid_key(gwb_rf_train_keys[i]))
					all[n++] = gwb_rf_train_keys[i];
			near = gwb_nearest_name(key, all, (size_t)n);
			lua_pushstring(L, "");
			for (i = 0; i < n; i++)
				lua_pushfstring(L, "%s%s%s", lua_tostring(L, -1), i ? ", " : "", all[i]),
					lua_remove(L, -2);
			return luaL_error(L, "rf.search: unknown grid option '%s'%s%s%s (options: %s)",
					  key, near ? "; did you mean '" : "", near ? near : "",
					  near ? "'?" : "", lua_tostring(L, -1));
		}
		if (nk >= 63)
			return luaL_error(L, "rf.search: too many grid options");
		keys[nk++] = key;  /* a key of GRID: lives as long as it */
	}
	qsort(keys, (size_t)nk, sizeof(char *), cmp_str);
	/* value lists: a scalar is a list of one */
	lua_newtable(L);
	int lists = lua_gettop(L);
	tvals = 0;
	for (i = 0; i < nk; i++) {
		lua_getfield(L, GRID, keys[i]);
		if (!lua_istable(L, -1)) {
			lua_createtable(L, 1, 0);
			lua_insert(L, -2);
			lua_rawseti(L, -2, 1);
		}
		nvals[i] = (int)luaL_len(L, -1);
		if (nvals[i] < 1)
			return luaL_error(L, "rf.search: grid option '%s' has no values", keys[i]);
		lua_setfield(L, lists, keys[i]);
		if (!strcmp(keys[i], "trees"))
			tvals = i + 1;
	}
	nt = tvals ? nvals[tvals - 1] : 1;
	for (i = 0; i < nk; i++)
		if (i + 1 != tvals) {
			if (ngroups > 1000000 / nvals[i])
				return luaL_error(L, "rf.search: the grid has over a million settings");
			ngroups *= nvals[i];
		}
	total = ngroups * nt;
	/* the settings to run: all, or a seeded sample; sel[s] = 1 */
	uint8_t *sel = lua_newuserdatauv(L, (size_t)total + 1, 0);
	sel_t = lua_gettop(L);
	(void)sel_t;
	nsel = total;
	memset(sel, 1, (size_t)total);
	if (!strcmp(strategy, "random")) {
		int want = gwb_opt_i32(L, OPTS, "rf.search", "n", total < 10 ? total : 10);
		int *perm = lua_newuserdatauv(L, sizeof(int) * ((size_t)total + 1), 0);
		if (want < 1)
			return luaL_error(L, "rf.search: n (settings to sample) must be >= 1");
		if (want > total)
			want = total;
		for (i = 0; i < total; i++)
			perm[i] = i;
		for (i = total - 1; i > 0; i--) {
			int j = (int)(gwb_rng_hash(seed, GWB_RNG_STREAM_CV, 1, (uint64_t)i) %
				      (uint64_t)(i + 1)), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		memset(sel, 0, (size_t)total);
		for (i = 0; i < want; i++)
			sel[perm[i]] = 1;
		nsel = want;
		lua_pop(L, 1);
	} else if (lua_getfield(L, OPTS, "n") != LUA_TNIL) {
		return luaL_error(L, "rf.search: n is for strategy = \"random\" (the grid runs every "
				  "setting)");
	} else {
		lua_pop(L, 1);
	}
	/* base options: opts less the search's keys */
	lua_newtable(L);
	base = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, OPTS)) {
		if (!is_search_key(lua_tostring(L, -2)) || !strcmp(lua_tostring(L, -2), "seed")) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, base);
		} else {
			lua_pop(L, 1);
		}
	}
	lua_pushboolean(L, 0);
	lua_setfield(L, base, "progress");
	lua_pushnil(L);
	lua_setfield(L, base, "tag");
	/* under mpirun (ranks = "all", the default): each family's folds are dealt to the ranks
	 * (gwb_rf_cv_grid), so every rank must hold the same table and take the same steps */
	dealt = gwb_mpi_size() > 1 && !!strcmp(gwb_opt_str(L, OPTS, "rf.search", "ranks", "all"),
					       "self");
	if (dealt) {
		gwb_lua_check(L, gwb_rf_ranks_check_data(d, "rf.search"));
		progress = progress && gwb_mpi_rank() == 0;
	}
	F = make_folds(L, d, k, shuffle, seed);
	{
		/* Where the forests grow on the GPU, every fold's rows go there once for the whole
		 * search (rf.train and the scoring read a resident Dataset in place), instead of
		 * once per setting; a fold that does not fit stays on the host. */
		const char *be = gwb_opt_str(L, OPTS, "rf.search", "backend", NULL);
		bool gpu = be ? !strcmp(be, "gpu") : gwb_backend_default == GWB_BACKEND_GPU;
		bool big = (double)d->rows * d->features * sizeof(float) >= 64.0 * 1024 * 1024;
		if ((gpu || (big && (!be || !strcmp(be, "auto")) &&
			     gwb_backend_default == GWB_BACKEND_AUTO)) && gwb_gpu_available())
			for (int f = 0; f < k; f++)
				if (gwb_dataset_to_gpu(F->train[f]) || gwb_dataset_to_gpu(F->test[f]))
					gwb_error_clear();
	}
	int folds_idx = lua_gettop(L);
	(void)folds_idx;

	lua_createtable(L, total, 0);
	res_settings = lua_gettop(L);
	/* Families: the groups that differ only in depth. A family trains one forest per fold at
	 * its deepest depth and its largest tree count, and judges every (depth, count) of its
	 * settings by cutting it (gwb_rf_cv_grid). */
	int dk = 0, nde_all = 1, stride = 1, nfam;
	for (i = 0; i < nk; i++)
		if (!strcmp(keys[i], "depth"))
			dk = i + 1;
	if (dk) {
		nde_all = nvals[dk - 1];
		for (i = dk; i < nk; i++)
			if (i + 1 != tvals)
				stride *= nvals[i];
	}
	nfam = ngroups / nde_all;
	double *vals = lua_newuserdatauv(L, sizeof(double) * (size_t)nde_all * (size_t)nt *
					 (size_t)k * GWB_RFM_COUNT, 0);
	int *counts = lua_newuserdatauv(L, sizeof(int) * ((size_t)nt + 1), 0);
	int *cidx = lua_newuserdatauv(L, sizeof(int) * ((size_t)nt + 1), 0);
	int *depths = lua_newuserdatauv(L, sizeof(int) * ((size_t)nde_all + 1), 0);
	int *dpos = lua_newuserdatauv(L, sizeof(int) * ((size_t)nde_all + 1), 0);
	int *fam_e = lua_newuserdatauv(L, sizeof(int) * ((size_t)nde_all + 1), 0);
	if (progress)
		gwb_progress_begin("rf.search", nsel);
	for (int fam = 0; fam < nfam; fam++) {
		int base_g = (fam / stride) * stride * nde_all + fam % stride;
		int nc = 0, nd = 0, c, e, deep = -1;
		gwb_rf_params p = {0};
		int top;
		/* the family's selected depths (members) and tree counts (their union) */
		for (e = 0; e < nde_all; e++) {
			int g = base_g + e * stride;
			bool any = false;
			dpos[e] = -1;
			for (c = 0; c < nt; c++)
				any = any || sel[g * nt + c];
			if (!any || budget_hit)
				continue;
			if (dk) {
				int isnum;
				lua_Integer dv;
				lua_getfield(L, lists, "depth");
				lua_rawgeti(L, -1, e + 1);
				dv = lua_tointegerx(L, -1, &isnum);
				if (!isnum || dv < 0 || dv > GWB_RF_MAX_DEPTH)
					return luaL_error(L, "rf.search: grid depth[%d] must be 0 (no limit) "
							  "or a depth from 1 to %d (got %s)", e + 1,
							  GWB_RF_MAX_DEPTH, luaL_tolstring(L, -1, NULL));
				lua_pop(L, 2);
				depths[nd] = dv ? (int)dv : GWB_RF_MAX_DEPTH;
			}
			if (deep < 0 || (dk && depths[nd] > depths[dpos[deep]]))
				deep = e;
			dpos[e] = nd;
			fam_e[nd++] = e;
		}
		for (c = 0; c < nt; c++) {
			bool any = false;
			for (e = 0; e < nd; e++)
				any = any || sel[(base_g + fam_e[e] * stride) * nt + c];
			if (any)
				cidx[nc++] = c;
		}
		if (nd) {
			/* the option table of the deepest member: base + its values */
			copy_table(L, base);
			setv = lua_gettop(L);
			set_group(L, setv, lists, keys, nvals, nk, tvals, base_g + deep * stride, true);
			for (c = 0; c < nc; c++) {
				lua_Integer tv = 0;
				if (tvals) {
					int isnum;
					lua_getfield(L, lists, "trees");
					lua_rawgeti(L, -1, cidx[c] + 1);
					tv = lua_tointegerx(L, -1, &isnum);
					if (!isnum || tv < 1 || tv > 1000000000)
						return luaL_error(L, "rf.search: grid trees[%d] must be a "
								  "tree count >= 1", cidx[c] + 1);
					lua_pop(L, 2);
				} else {
					lua_getfield(L, base, "trees");
					tv = lua_isnil(L, -1) ? 100 : lua_tointeger(L, -1);
					lua_pop(L, 1);
				}
				counts[c] = (int)tv;
			}
			{
				int max = 0;
				for (c = 0; c < nc; c++)
					if (counts[c] > max)
						max = counts[c];
				lua_pushinteger(L, max);
				lua_setfield(L, setv, "trees");
			}
			top = lua_gettop(L);
			gwb_lua_rf_params(L, setv, "rf.search", d, &p, gwb_rf_train_keys);
			if (!dk)
				depths[0] = p.depth;
			{
				gwb_status st = gwb_rf_cv_grid(F->train, F->test, k, &p, depths, nd,
							       counts, nc, vals, &tm);
				if (st) {
					if (progress)
						gwb_progress_end();
					return luaL_error(L, "rf.search: setting %d: %s",
							  (base_g + fam_e[0] * stride) * nt + cidx[0] + 1,
							  gwb_errmsg());
				}
			}
			lua_settop(L, top - 1);
		}
		/* each member's settings, in the grid's numbering */
		for (e = 0; e < nde_all; e++) {
			int g = base_g + e * stride, ei = dpos[e];
			lua_newtable(L);  /* the setting's values, for the result */
			int shown = lua_gettop(L);
			set_group(L, shown, lists, keys, nvals, nk, tvals, g, false);
			for (c = 0; c < nt; c++) {
				int s = g * nt + c, j = -1, m;
				if (ei >= 0 && sel[s])
					for (int q = 0; q < nc; q++)
						if (cidx[q] == c)
							j = q;
				copy_table(L, shown);
				if (tvals) {
					lua_getfield(L, lists, "trees");
					lua_rawgeti(L, -1, c + 1);
					lua_setfield(L, -3, "trees");
					lua_pop(L, 1);
				}
				lua_createtable(L, 0, 8);
				lua_insert(L, -2);
				lua_setfield(L, -2, "params");
				if (j < 0) {
					SETB("ran", false);
					lua_rawseti(L, res_settings, s + 1);
					continue;
				}
				const double *sv = vals + ((size_t)ei * (size_t)nc + (size_t)j) * (size_t)k *
								 GWB_RFM_COUNT;
				SETB("ran", true);
				lua_createtable(L, 0, GWB_RFM_COUNT);
				for (m = 0; m < GWB_RFM_COUNT; m++) {
					double mm, ms;
					if (!gwb_rf_metric_for((gwb_rf_metric)m, d->task))
						continue;
					gwb_rf_fold_stats(sv + m, k, GWB_RFM_COUNT, &mm, &ms, NULL);
					lua_createtable(L, 0, 2);
					SETN("mean", mm);
					SETN("std", ms);
					lua_setfield(L, -2, gwb_rf_metric_name((gwb_rf_metric)m));
					if (m == (int)metric) {
						lua_pushnumber(L, mm);
						lua_setfield(L, -3, "mean");
						lua_pushnumber(L, ms);
						lua_setfield(L, -3, "std");
						lua_createtable(L, k, 0);
						for (int f = 0; f < k; f++) {
							lua_pushnumber(L, sv[(size_t)f * GWB_RFM_COUNT + m]);
							lua_rawseti(L, -2, f + 1);
						}
						lua_setfield(L, -3, "folds");
						if (!isnan(mm) && (best_i < 0 || (higher ? mm > best :
										       mm < best) ||
								   (mm == best && s < best_i))) {
							best = mm;
							best_i = s;
						}
					}
				}
				lua_setfield(L, -2, "metrics");
				lua_rawseti(L, res_settings, s + 1);
				ran++;
				/* the run log: one record per setting, with the search's tag */
				lua_createtable(L, 0, 6);
				SETS("kind", "rf.search");
				gwb_opt_tag(L, OPTS, "rf.search");
				lua_setfield(L, -2, "tag");
				lua_rawgeti(L, res_settings, s + 1);
				lua_getfield(L, -1, "params");
				lua_setfield(L, -3, "params");
				lua_createtable(L, 0, 4);
				SETS("metric", gwb_rf_metric_name(metric));
				lua_getfield(L, -2, "mean");
				lua_setfield(L, -2, "mean");
				lua_getfield(L, -2, "std");
				lua_setfield(L, -2, "std");
				SETI("folds", k);
				SETI("setting", s + 1);
				lua_setfield(L, -3, "metrics");
				lua_pop(L, 1);
				SETS("backend", gwb_backend_name(p.backend));
				gwb_lua_push_datainfo(L, 1);
				lua_setfield(L, -2, "data");
				gwb_lua_log_run(L, -1);
				lua_pop(L, 1);
			}
			lua_settop(L, shown - 1);
		}
		if (!nd)
			continue;
		done_groups++;
		if (progress)
			gwb_progress_update(ran, gwb_rf_metric_name(metric), best);
		if (gwb_intr_pending()) {
			if (progress)
				gwb_progress_end();
			return luaL_error(L, "rf.search: interrupted after %d of %d settings", ran, nsel);
		}
		if (budget > 0 && gwb_now() - t0 >= budget && ran < nsel)
			budget_hit = true;
		if (dealt && budget > 0) {  /* rank 0's clock decides for every rank */
			uint8_t b = budget_hit;
			gwb_lua_check(L, gwb_mpi_bcast(&b, 1, 0));
			budget_hit = b;
		}
	}
	if (progress)
		gwb_progress_end();
	(void)done_groups;

	/* the result */
	lua_createtable(L, 0, 12);
	lua_pushvalue(L, res_settings);
	lua_setfield(L, -2, "settings");
	SETS("metric", gwb_rf_metric_name(metric));
	SETI("total", total);
	SETI("selected", nsel);
	SETI("ran", ran);
	SETB("budget_reached", budget_hit);
	SETI("folds", k);
	SETS("strategy", strategy);
	{
		char sum[256];
		int pos = 0;
		if (best_i >= 0) {
			lua_rawgeti(L, res_settings, best_i + 1);
			lua_getfield(L, -1, "params");
			lua_setfield(L, -3, "best");
			lua_getfield(L, -1, "std");
			double bs = lua_tonumber(L, -1);
			lua_pop(L, 2);
			SETN("best_mean", best);
			SETN("best_std", bs);
			SETI("best_index", best_i + 1);
			pos = snprintf(sum, sizeof(sum), "%d of %d settings, %d-fold: best %s %.4f +- %.4f "
				       "(setting %d)", ran, total, k, gwb_rf_metric_name(metric), best,
				       bs, best_i + 1);
		} else {
			pos = snprintf(sum, sizeof(sum), "no setting ran");
		}
		if (budget_hit)
			snprintf(sum + pos, sizeof(sum) - (size_t)pos, "; budget of %.3g s reached: "
				 "the settings with ran = false did not run", budget);
		SETS("summary", sum);
		if (budget_hit) {
			lua_pushfstring(L, "budget_s = %f reached after %d of %d settings; the ones "
					"that ran have ran = true", budget, ran, nsel);
			lua_setfield(L, -2, "note");
		}
	}
	double search_ms = (gwb_now() - t0) * 1e3, refit_ms = 0;
	if (refit && best_i >= 0) {
		int res = lua_gettop(L), top;
		gwb_rf_params p;
		gwb_forest *f = NULL;
		double t1 = gwb_now();
		copy_table(L, base);
		int o = lua_gettop(L);
		lua_getfield(L, res, "best");
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, o);
		}
		lua_pop(L, 1);
		if (lua_getfield(L, o, "depth") == LUA_TNUMBER && lua_tointeger(L, -1) == 0) {
			lua_pushinteger(L, GWB_RF_MAX_DEPTH);  /* depth 0 in a grid: no limit */
			lua_setfield(L, o, "depth");
		}
		lua_pop(L, 1);
		lua_pushboolean(L, progress);
		lua_setfield(L, o, "progress");
		top = lua_gettop(L);
		gwb_lua_rf_params(L, o, "rf.search", d, &p, gwb_rf_train_keys);
		gwb_lua_check(L, gwb_rf_train(d, &p, &f));
		lua_settop(L, top);
		gwb_lua_push_forest(L, f);
		lua_setfield(L, res, "forest");
		lua_settop(L, res);
		refit_ms = (gwb_now() - t1) * 1e3;
	}
	lua_createtable(L, 0, 4);
	SETN("total_ms", (gwb_now() - t0) * 1e3);
	SETN("search_ms", search_ms);
	SETN("train_ms", tm.train_ms);
	SETN("kernel_ms", tm.kernel_ms);
	SETN("transfer_ms", tm.transfer_ms);
	SETN("eval_ms", tm.eval_ms);
	SETI("forests", tm.forests);
	SETI("judged_on_device", tm.judged);
	SETN("refit_ms", refit_ms);
	lua_setfield(L, -2, "timing");
	return 1;
}

static const gwb_reg funcs[] = {
	{"search", l_search,
	 "rf.search(d, grid [, opts]) -> {settings, best, best_mean, best_std, forest, summary, ...}\n"
	 "Hyperparameter search by cross-validation. grid: rf.train options, each a list of\n"
	 "values ({trees = {100, 300}, depth = {8, 12, 0}, max_features = {\"sqrt\", 0.3}}); every\n"
	 "combination is a setting (depth 0: no limit). opts: cv (folds, 5), metric (accuracy,\n"
	 "f1_macro, roc_auc, log_loss, ...; r2, rmse, ... for regression; default accuracy / r2),\n"
	 "strategy \"grid\" (every setting) or \"random\" (n settings sampled with seed), budget_s\n"
	 "(stop starting settings after this many seconds; the result says which ran), shuffle,\n"
	 "progress, tag,\n"
	 "refit (default true: result.forest is the best setting trained on all of d), and\n"
	 "rf.train's options, fixed for every setting. settings[i] = {params, mean, std, folds,\n"
	 "metrics = {name = {mean, std}}, ran}; each is a run-log record (kind rf.search) with\n"
	 "the search's tag. Settings that differ only in trees and depth share their forests:\n"
	 "each fold grows the largest count at the deepest depth once and judges its first n\n"
	 "trees cut at each depth (node for node the forest of n trees grown to that depth with\n"
	 "that seed), so the values equal separate rf.cv calls. On one GPU a fold's forest is\n"
	 "judged on the device as it grows and never copied back (switch rf.judge_gpu).\n"
	 "Example: s = rf.search(d, {trees = {50, 100}, depth = {8, 0}}, {metric = \"f1_macro\"})\n"
	 "         print(s.summary); pp(s.best); s.forest:evaluate(test)"},
	{NULL, NULL, NULL},
};

static int folds_meta(lua_State *L)
{
	static const luaL_Reg meta[] = {{"__gc", folds_gc}, {NULL, NULL}};

	luaL_newmetatable(L, FOLDS_MT);
	luaL_setfuncs(L, meta, 0);
	lua_pop(L, 1);
	return 0;
}

/* After rf (extends it). */
int gwb_open_search(lua_State *L)
{
	folds_meta(L);
	lua_getglobal(L, "rf");
	for (int i = 0; funcs[i].name; i++) {
		char name[64];
		lua_pushcfunction(L, funcs[i].fn);
		snprintf(name, sizeof(name), "rf.%s", funcs[i].name);
		gwb_lua_sethelp(L, -1, name, funcs[i].help);
		lua_setfield(L, -2, funcs[i].name);
	}
	lua_pop(L, 1);
	return 0;
}
