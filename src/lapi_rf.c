/* lapi_rf.c - the `rf` Lua module: rf.train, rf.load, rf.cv, and rf.train's options read
 * into parameters (gwb_lua_rf_params, lent to rf.search in lapi_search.c through lapi_rf.h).
 * The work is in rf.c and rf_eval.c; the Forest userdata these return is lapi_forest.c's,
 * whose class gwb_open_rf opens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "forest.h"
#include "intr.h"
#include "fmt.h"
#include "lapi.h"
#include "lapi_rf.h"
#include "mgpu.h"
#include "mpi.h"
#include "rf_eval.h"

/* ---- options -------------------------------------------------------------------------------- */

const char *const gwb_rf_train_keys[] = {
	"trees", "depth", "bins", "max_features", "min_leaf", "min_split", "min_impurity_decrease",
	"bootstrap", "criterion", "class_weight", "weights", "seed", "threads", "block", "backend",
	"quantile_sample", "progress", "task", "subtract", "oob", "require_gpu", "hybrid_front",
	"hybrid_ratio", "tag", "gpus", "gpu_standin", "keep", "ranks", NULL,
};

static const char *const cv_keys[] = {
	"trees", "depth", "bins", "max_features", "min_leaf", "min_split", "min_impurity_decrease",
	"bootstrap", "criterion", "class_weight", "weights", "seed", "threads", "block", "backend",
	"quantile_sample", "progress", "task", "subtract", "oob", "require_gpu", "hybrid_front",
	"hybrid_ratio", "folds", "shuffle", "tag", "gpus", "gpu_standin", "metric", "ranks", NULL,
};


static void read_max_features(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
			      gwb_rf_params *p)
{
	int t;

	if (lua_isnoneornil(L, idx))
		return;
	t = lua_getfield(L, idx, "max_features");
	if (t == LUA_TSTRING) {
		const char *s = lua_tostring(L, -1);
		if (!strcmp(s, "sqrt"))
			p->max_features = GWB_MF_SQRT;
		else if (!strcmp(s, "log2"))
			p->max_features = GWB_MF_LOG2;
		else if (!strcmp(s, "all"))
			p->max_features = GWB_MF_ALL;
		else if (!strcmp(s, "auto"))
			p->max_features = GWB_MF_DEFAULT;
		else
			luaL_error(L, "%s: max_features must be \"sqrt\", \"log2\", \"all\", \"auto\", a "
				   "fraction in (0, 1] or a count 1..%d (got \"%s\")", fn, d->features,
				   s);
	} else if (t == LUA_TNUMBER) {
		if (lua_isinteger(L, -1)) {
			p->max_features = GWB_MF_COUNT;
			p->max_features_value = (double)lua_tointeger(L, -1);
		} else {
			p->max_features = GWB_MF_FRACTION;
			p->max_features_value = lua_tonumber(L, -1);
		}
	} else if (t != LUA_TNIL) {
		luaL_error(L, "%s: max_features must be a string or a number (got %s)", fn,
			   luaL_typename(L, -1));
	}
	lua_pop(L, 1);
}

/* class_weight: "balanced", an array by class (1-based) or a table by class name. The weights
 * are kept in a userdata left on the stack (so an error frees them). */
static void read_class_weight(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
			      gwb_rf_params *p)
{
	int t, k;
	double *cw;

	if (lua_isnoneornil(L, idx))
		return;
	t = lua_getfield(L, idx, "class_weight");
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (d->task != GWB_TASK_CLASSIFICATION)
		luaL_error(L, "%s: class_weight needs a classification target, but '%s' is numeric",
			   fn, d->target ? d->target : "?");
	if (t == LUA_TSTRING) {
		if (strcmp(lua_tostring(L, -1), "balanced"))
			luaL_error(L, "%s: class_weight must be \"balanced\" or a table of weights by "
				   "class name (got \"%s\")", fn, lua_tostring(L, -1));
		p->class_weight_balanced = true;
		lua_pop(L, 1);
		return;
	}
	if (t != LUA_TTABLE)
		luaL_error(L, "%s: class_weight must be \"balanced\" or a table (got %s)", fn,
			   luaL_typename(L, -1));
	cw = lua_newuserdatauv(L, sizeof(double) * ((size_t)d->classes + 1), 0);
	for (k = 0; k < d->classes; k++)
		cw[k] = 1.0;
	lua_pushnil(L);
	while (lua_next(L, -3)) {
		int c = -1;
		if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2)) {
			lua_Integer i = lua_tointeger(L, -2);
			if (i < 1 || i > d->classes)
				luaL_error(L, "%s: class_weight[%I]: classes are numbered 1..%d", fn, i,
					   d->classes);
			c = (int)i - 1;
		} else if (lua_type(L, -2) == LUA_TSTRING) {
			const char *name = lua_tostring(L, -2);
			for (k = 0; k < d->classes; k++)
				if (d->class_names && d->class_names[k] &&
				    !strcmp(d->class_names[k], name))
					c = k;
			if (c < 0)
				luaL_error(L, "%s: class_weight names class '%s', which the target '%s' "
					   "does not have", fn, name, d->target ? d->target : "?");
		} else {
			luaL_error(L, "%s: class_weight keys must be class names or numbers", fn);
		}
		if (lua_type(L, -1) != LUA_TNUMBER)
			luaL_error(L, "%s: class_weight values must be numbers (got %s)", fn,
				   luaL_typename(L, -1));
		cw[c] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	lua_remove(L, -2);   /* the options' table value; keep the userdata */
	p->class_weight = cw;
}

static void read_weights(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
			 gwb_rf_params *p)
{
	float *w;
	size_t i;

	if (lua_isnoneornil(L, idx))
		return;
	if (lua_getfield(L, idx, "weights") == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (!lua_istable(L, -1))
		luaL_error(L, "%s: weights must be an array of %d numbers, one per row (got %s)", fn,
			   (int)d->rows, luaL_typename(L, -1));
	if (lua_rawlen(L, -1) != d->rows)
		luaL_error(L, "%s: weights has %I entries but the dataset has %I rows", fn,
			   (lua_Integer)lua_rawlen(L, -1), (lua_Integer)d->rows);
	w = lua_newuserdatauv(L, sizeof(float) * (d->rows + 1), 0);
	for (i = 0; i < d->rows; i++) {
		if (lua_rawgeti(L, -2, (lua_Integer)i + 1) != LUA_TNUMBER)
			luaL_error(L, "%s: weights[%I] must be a number (got %s)", fn,
				   (lua_Integer)i + 1, luaL_typename(L, -1));
		w[i] = (float)lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	lua_remove(L, -2);
	p->sample_weight = w;
}

void gwb_lua_rf_params(lua_State *L, int idx, const char *fn, const gwb_dataset *d,
		       gwb_rf_params *p, const char *const *keys)
{
	const char *s;

	idx = lua_absindex(L, idx);
	gwb_opt_check_keys(L, idx, fn, keys);
	gwb_opt_tag(L, idx, fn);  /* checked now, not after the training */
	lua_pop(L, 1);
	gwb_rf_params_init(p);
	p->trees = gwb_opt_i32(L, idx, fn, "trees", p->trees);
	p->depth = gwb_opt_i32(L, idx, fn, "depth", p->depth);
	p->bins = gwb_opt_i32(L, idx, fn, "bins", p->bins);
	p->min_leaf = gwb_opt_i32(L, idx, fn, "min_leaf", p->min_leaf);
	p->min_split = gwb_opt_i32(L, idx, fn, "min_split", p->min_split);
	p->min_impurity_decrease = gwb_opt_num(L, idx, fn, "min_impurity_decrease", 0);
	p->bootstrap = gwb_opt_bool(L, idx, fn, "bootstrap", true);
	p->seed = (uint64_t)gwb_opt_int(L, idx, fn, "seed", 1);
	p->threads = gwb_opt_threads(L, idx, fn);
	p->block = gwb_opt_i32(L, idx, fn, "block", 0);
	s = gwb_opt_str(L, idx, fn, "backend", NULL);
	if (s && !strcmp(s, "hybrid")) {   /* the GPU and CPU threads together (rf_hybrid.c) */
		p->hybrid = true;
		p->backend = GWB_BACKEND_GPU;
	} else {
		p->backend = gwb_opt_backend(L, idx, fn);
	}
	p->require_gpu = gwb_opt_bool(L, idx, fn, "require_gpu", false);
	s = gwb_opt_str(L, idx, fn, "hybrid_front", "gpu");
	if (strcmp(s, "gpu") && strcmp(s, "cpu"))
		luaL_error(L, "%s: hybrid_front must be \"gpu\" or \"cpu\" (got \"%s\")", fn, s);
	p->hybrid_cpu_front = !strcmp(s, "cpu");
	s = gwb_opt_str(L, idx, fn, "gpu_standin", NULL);  /* tests: CPU stand-ins for the GPUs */
	if (s && strcmp(s, "cpu"))
		luaL_error(L, "%s: gpu_standin must be \"cpu\" (got \"%s\")", fn, s);
	gwb_opt_gpus(L, idx, fn, p->backend, s != NULL, &p->gpus);
	if (p->hybrid && p->gpus.n > 1)
		luaL_error(L, "%s: backend = \"hybrid\" runs on one GPU (with the CPU); drop gpus or "
			   "use backend = \"gpu\" with gpus = %d", fn, p->gpus.n);
	p->hybrid_ratio = gwb_opt_num(L, idx, fn, "hybrid_ratio", 0);
	if (!(p->hybrid_ratio >= 0) || isinf(p->hybrid_ratio))
		luaL_error(L, "%s: hybrid_ratio must be a number > 0 (a CPU tree's cost in GPU trees), "
			   "or 0 for the recorded one (got %f)", fn, (double)p->hybrid_ratio);
	{
		lua_Integer qs = gwb_opt_int(L, idx, fn, "quantile_sample", 0);
		if (qs < 0)
			luaL_error(L, "%s: quantile_sample must be >= 0 (got %I)", fn, qs);
		p->quantile_sample = (size_t)qs;
	}
	p->progress = gwb_opt_bool(L, idx, fn, "progress", true);
	p->subtract = gwb_opt_bool(L, idx, fn, "subtract", true);
	p->oob = gwb_opt_bool(L, idx, fn, "oob", true);
	p->keep = gwb_opt_bool(L, idx, fn, "keep", false);
	s = gwb_opt_str(L, idx, fn, "ranks", "all");
	if (strcmp(s, "all") && strcmp(s, "self"))
		luaL_error(L, "%s: ranks must be \"all\" (the work dealt to every MPI rank) or "
			   "\"self\" (this rank does all of it alone) (got \"%s\")", fn, s);
	p->ranks = !strcmp(s, "all");
	s = gwb_opt_str(L, idx, fn, "criterion", NULL);
	if (s && gwb_rf_criterion_parse(s, &p->criterion))
		luaL_error(L, "%s: %s", fn, gwb_errmsg());
	s = gwb_opt_str(L, idx, fn, "task", NULL);
	if (s) {
		if (strcmp(s, "classification") && strcmp(s, "regression"))
			luaL_error(L, "%s: task must be \"classification\" or \"regression\" (got "
				   "\"%s\")", fn, s);
		if (!strcmp(s, "classification") && d->task != GWB_TASK_CLASSIFICATION)
			luaL_error(L, "%s: task = \"classification\", but the target '%s' is numeric "
				   "(a regression target): load it with {task = \"classification\"} "
				   "to treat its values as classes", fn, d->target ? d->target : "?");
		if (!strcmp(s, "regression") && d->task != GWB_TASK_REGRESSION)
			luaL_error(L, "%s: task = \"regression\", but the target '%s' holds classes",
				   fn, d->target ? d->target : "?");
	}
	read_max_features(L, idx, fn, d, p);
	read_class_weight(L, idx, fn, d, p);
	read_weights(L, idx, fn, d, p);
}

/* ---- rf.train, rf.load ---------------------------------------------------------------------- */

static int l_train(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	gwb_rf_params p;
	fbox *b;
	int top;

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	gwb_lua_rf_params(L, 2, "rf.train", d, &p, gwb_rf_train_keys);
	top = lua_gettop(L);
	b = gwb_lua_forest_newbox(L);
	gwb_lua_check(L, gwb_rf_train(d, &p, &b->f));
	gwb_lua_rf_log_train(L, b->f, 1, 2, "rf.train");
	lua_settop(L, top + 1);
	return 1;
}

static int l_load(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	fbox *b = gwb_lua_forest_newbox(L);

	gwb_lua_check(L, gwb_forest_load(path, &b->f));
	return 1;
}

/* ---- rf.cv ---------------------------------------------------------------------------------- */

/* The ranks' folds [lo, hi) of mv (GWB_RFM_COUNT metrics a fold) and oob, gathered on every
 * rank in fold order; the summed timings are the slowest rank's (the wall of the call). */
static void gather_folds(lua_State *L, int k, size_t lo, size_t hi, double *mv, double *oob,
			 gwb_rf_timing *t)
{
	size_t per = GWB_RFM_COUNT + 1, n = (hi - lo) * per, f, i;
	double *mine = lua_newuserdatauv(L, (n + 1) * sizeof(double), 0), *all = NULL;
	double tm[5] = {t->quantize_ms, t->grow_ms, t->oob_ms, t->kernel_ms, t->transfer_ms};
	gwb_status st;

	for (f = lo; f < hi; f++) {
		memcpy(mine + (f - lo) * per, mv + f * GWB_RFM_COUNT, GWB_RFM_COUNT * sizeof(double));
		mine[(f - lo) * per + GWB_RFM_COUNT] = oob[f];
	}
	st = gwb_mpi_gather(mine, n * sizeof(double), 0, true, (void **)&all, NULL);
	if (!st)
		st = gwb_mpi_allreduce(tm, 5, GWB_MPI_MAX);
	if (st) {
		free(all);
		gwb_lua_check(L, st);
	}
	for (f = 0; f < (size_t)k; f++) {
		for (i = 0; i < GWB_RFM_COUNT; i++)
			mv[f * GWB_RFM_COUNT + i] = all[f * per + i];
		oob[f] = all[f * per + GWB_RFM_COUNT];
	}
	free(all);
	lua_pop(L, 1);
	t->quantize_ms = tm[0];
	t->grow_ms = tm[1];
	t->oob_ms = tm[2];
	t->kernel_ms = tm[3];
	t->transfer_ms = tm[4];
}

static int l_cv(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	gwb_rf_params p;
	int k, f, *fold;
	bool shuffle;
	size_t *order, *tr, *te, i;
	double *scores, mean = 0, sd = 0, t0 = gwb_now(), oob_sum = 0, *mv, *oobf;
	size_t flo, fhi;
	bool dealt;
	int oob_n = 0, m;
	gwb_rf_metric head;
	gwb_backend used = GWB_BACKEND_CPU;
	char why[160] = "";
	gwb_rf_timing tsum = {0};

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	gwb_lua_rf_params(L, 2, "rf.cv", d, &p, cv_keys);
	k = gwb_opt_i32(L, 2, "rf.cv", "folds", 5);
	shuffle = gwb_opt_bool(L, 2, "rf.cv", "shuffle", false);
	gwb_lua_check(L, gwb_rf_metric_parse(gwb_opt_str(L, 2, "rf.cv", "metric",
		      d->task == GWB_TASK_CLASSIFICATION ? "accuracy" : "r2"), d->task, "rf.cv",
		      &head));
	if (k < 2 || (size_t)k > d->rows)
		return luaL_error(L, "rf.cv: folds must be between 2 and the %I rows (got %d)",
				  (lua_Integer)d->rows, k);
	fold = lua_newuserdatauv(L, sizeof(int) * (d->rows + 1), 0);
	order = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	tr = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	te = lua_newuserdatauv(L, sizeof(size_t) * (d->rows + 1), 0);
	scores = lua_newuserdatauv(L, sizeof(double) * (size_t)k, 0);
	mv = lua_newuserdatauv(L, sizeof(double) * (size_t)k * GWB_RFM_COUNT, 0);
	gwb_rf_make_folds(d, k, shuffle, p.seed, fold, order);
	oobf = lua_newuserdatauv(L, sizeof(double) * (size_t)k, 0);
	/* under mpirun (ranks = "all"): the folds dealt to the ranks in order (gwb_deal), each
	 * fold's forest grown by its rank alone, the folds' numbers gathered in fold order */
	dealt = p.ranks && gwb_mpi_size() > 1;
	if (dealt) {
		gwb_lua_check(L, gwb_rf_ranks_check_data(d, "rf.cv"));
		gwb_deal((size_t)k, gwb_mpi_size(), gwb_mpi_rank(), &flo, &fhi);
		p.ranks = false;
	} else {
		flo = 0;
		fhi = (size_t)k;
	}
	{
		bool show = p.progress && gwb_mpi_rank() == 0;
		const float *sw = p.sample_weight;
		float *fw = sw ? lua_newuserdatauv(L, sizeof(float) * (d->rows + 1), 0) : NULL;
		p.progress = false;
		if (show)
			gwb_progress_begin("rf.cv", (double)(fhi - flo));
		for (f = (int)flo; f < (int)fhi; f++) {
			size_t ntr = 0, nte = 0;
			gwb_dataset *a = NULL, *b = NULL;
			gwb_forest *F = NULL;
			gwb_status st;
			for (i = 0; i < d->rows; i++) {
				if (fold[i] == f)
					te[nte++] = i;
				else {
					if (fw)
						fw[ntr] = sw[i];
					tr[ntr++] = i;
				}
			}
			p.sample_weight = fw;
			if ((st = gwb_dataset_take(d, tr, ntr, &a)) ||
			    (st = gwb_dataset_take(d, te, nte, &b)) ||
			    (st = gwb_rf_train(a, &p, &F)) ||
			    (st = gwb_rf_eval(F, b, p.threads, mv + (size_t)f * GWB_RFM_COUNT))) {
				gwb_forest_free(F);
				gwb_dataset_free(a);
				gwb_dataset_free(b);
				if (show)
					gwb_progress_end();
				if (dealt)  /* the others wait in the gather: end the job */
					gwb_lua_check(L, gwb_error(st, "rf.cv: fold %d on rank %d (%s): "
						      "%s", f + 1, gwb_mpi_rank(), gwb_mpi_host(),
						      gwb_errmsg()));
				return luaL_error(L, "rf.cv: fold %d: %s", f + 1, gwb_errmsg());
			}
			used = F->backend;
			snprintf(why, sizeof(why), "%s", F->backend_why);
			tsum.quantize_ms += F->timing.quantize_ms;
			tsum.grow_ms += F->timing.grow_ms;
			tsum.oob_ms += F->timing.oob_ms;
			tsum.kernel_ms += F->timing.kernel_ms;
			tsum.transfer_ms += F->timing.transfer_ms;
			tsum.subtract_kept += F->timing.subtract_kept;
			tsum.subtract_derived += F->timing.subtract_derived;
			oobf[f] = F->oob;
			gwb_forest_free(F);
			gwb_dataset_free(a);
			gwb_dataset_free(b);
			if (show)
				gwb_progress_update((double)(f + 1 - (int)flo), "score",
						    mv[(size_t)f * GWB_RFM_COUNT + head]);
		}
		if (show)
			gwb_progress_end();
	}
	if (dealt)
		gather_folds(L, k, flo, fhi, mv, oobf, &tsum);
	/* in fold order, whichever rank judged which fold: the same sums as one process */
	for (f = 0; f < k; f++) {
		scores[f] = mv[(size_t)f * GWB_RFM_COUNT + head];
		mean += scores[f];
		if (!isnan(oobf[f])) {
			oob_sum += oobf[f];
			oob_n++;
		}
	}
	mean /= k;
	for (f = 0; f < k; f++)
		sd += (scores[f] - mean) * (scores[f] - mean);
	sd = sqrt(sd / k);
	tsum.total_ms = (gwb_now() - t0) * 1e3;

	lua_createtable(L, 0, 8);
	SETN("mean", mean);
	SETN("std", sd);
	SETS("metric", gwb_rf_metric_name(head));
	/* every metric of the task: mean, std and the folds' values (NaN where a fold lacks a
	 * class the metric needs: left out of the mean) */
	{
		char rep[GWB_RFM_COUNT * 100] = "";
		lua_createtable(L, 0, GWB_RFM_COUNT);
		for (m = 0; m < GWB_RFM_COUNT; m++) {
			double mm, ms;
			int cnt;
			char line[96];
			if (!gwb_rf_metric_for((gwb_rf_metric)m, d->task))
				continue;
			gwb_rf_fold_stats(mv + m, k, GWB_RFM_COUNT, &mm, &ms, &cnt);
			lua_createtable(L, 0, 3);
			SETN("mean", mm);
			SETN("std", ms);
			lua_createtable(L, k, 0);
			for (f = 0; f < k; f++) {
				lua_pushnumber(L, mv[(size_t)f * GWB_RFM_COUNT + (size_t)m]);
				lua_rawseti(L, -2, f + 1);
			}
			lua_setfield(L, -2, "folds");
			lua_setfield(L, -2, gwb_rf_metric_name((gwb_rf_metric)m));
			snprintf(line, sizeof(line), "%s%-18s %.4f +- %.4f%s\n", m == (int)head ? "* " : "  ",
				 gwb_rf_metric_name((gwb_rf_metric)m), mm, ms,
				 cnt < k ? " (folds lacking a class left out)" : "");
			strncat(rep, line, sizeof(rep) - strlen(rep) - 1);
		}
		lua_pushstring(L, rep);
		lua_setfield(L, -3, "report");
		lua_setfield(L, -2, "metrics");
	}
	lua_createtable(L, k, 0);
	for (f = 0; f < k; f++) {
		lua_pushnumber(L, scores[f]);
		lua_rawseti(L, -2, f + 1);
	}
	lua_setfield(L, -2, "folds");
	if (oob_n)
		SETN("oob_mean", oob_sum / oob_n);
	SETS("backend", gwb_backend_name(used));
	{
		gwb_forest fake = {0};
		/* host: the rest of the wall time, so kernel + transfer + host add up to total */
		tsum.host_ms = fmax(0, tsum.total_ms - tsum.kernel_ms - tsum.transfer_ms);
		fake.timing = tsum;
		gwb_lua_rf_push_timing(L, &fake);
		lua_setfield(L, -2, "timing");
	}
	{
		char sum[96];
		snprintf(sum, sizeof(sum), "%d-fold %s %.4f +- %.4f", k,
			 head == GWB_RFM_R2 ? "R2" : gwb_rf_metric_name(head), mean, sd);
		SETS("summary", sum);
	}
	/* the run log */
	{
		int res = lua_gettop(L);
		lua_createtable(L, 0, 6);
		SETS("kind", "rf.cv");
		gwb_opt_tag(L, 2, "rf.cv");
		lua_setfield(L, -2, "tag");
		lua_createtable(L, 0, 12);
		SETI("folds", k);
		SETB("shuffle", shuffle);
		SETI("trees", p.trees);
		SETI("depth", p.depth);
		SETI("bins", p.bins);
		SETI("seed", (lua_Integer)p.seed);
		SETI("min_leaf", p.min_leaf);
		SETS("criterion", gwb_rf_criterion_name(p.criterion));
		lua_setfield(L, -2, "params");
		SETS("backend", gwb_backend_name(used));
		SETS("backend_why", why);
		lua_getfield(L, res, "timing");
		lua_setfield(L, -2, "timing");
		lua_createtable(L, 0, 3);
		SETN("mean", mean);
		SETN("std", sd);
		lua_getfield(L, res, "folds");
		lua_setfield(L, -2, "folds");
		lua_setfield(L, -2, "metrics");
		gwb_lua_push_datainfo(L, 1);
		lua_setfield(L, -2, "data");
		gwb_lua_log_run(L, -1);
		lua_settop(L, res);
	}
	return 1;
}

/* ---- registration --------------------------------------------------------------------------- */

static const gwb_reg funcs[] = {
	{"train", l_train,
	 "rf.train(d [, opts]) -> Forest\n"
	 "Train a random forest on Dataset d (classification or regression, by d.task).\n"
	 "Histogram training on quantized features (NaN has its own bin and follows the\n"
	 "better side), trees grown level by level, parallel over trees (or nodes).\n"
	 "Options (defaults): trees (100), depth (32, >= 1), bins (64, 2..256),\n"
	 "  max_features (\"auto\" = sqrt for classes, all for regression; \"sqrt\", \"log2\",\n"
	 "  \"all\", a fraction 0.5 or a count 3), min_leaf (1), min_split (2),\n"
	 "  min_impurity_decrease (0), bootstrap (true), criterion (\"gini\" | \"entropy\" |\n"
	 "  \"mse\"), class_weight (\"balanced\" or {setosa = 2, ...}), weights (one number\n"
	 "  per row), seed (1), threads (all cores), backend (\"auto\" | \"cpu\" | \"gpu\" |\n"
	 "  \"hybrid\": GPU and CPU workers grow one forest together, f.timing.hybrid; with\n"
	 "  require_gpu = true an error without a GPU;\n"
	 "  hybrid_ratio: a CPU tree's cost in GPU trees before both are measured, default\n"
	 "  the H200 host's; \"auto\" picks hybrid where that rule says it pays),\n"
	 "  block (GPU threads per block), quantile_sample (rows used to place bin edges),\n"
	 "  progress (true), task (\"classification\" | \"regression\": checked against d),\n"
	 "  subtract (true; GPU: a sibling's histogram as parent - sibling where every node\n"
	 "  draws all features: the same trees; false needs less GPU memory; man gwb),\n"
	 "  oob (true: the out-of-bag score f.oob and f:oob_predict(); on the GPU backend\n"
	 "  computed on the device; false skips it), gpus (1; a count or ids {0, 1}: the\n"
	 "  trees are dealt to the devices in index order, each with its own copy of the codes;\n"
	 "  the same forest as one GPU grows; with several, OOB on the CPU), ranks (\"all\"\n"
	 "  under mpirun: trees dealt to the MPI ranks, the same forest bytes; \"self\").\n"
	 "Same seed, same forest at any thread count. Ctrl-C leaves no forest; keep = true\n"
	 "(CPU) returns the trees finished (f.partial). Each call goes to the run log (runs()).\n"
	 "Example: f = rf.train(train, {trees = 100, depth = 10, bins = 64, seed = 1})"},
	{"load", l_load,
	 "rf.load(path) -> Forest\n"
	 "Read a forest written by f:save(path). Truncated or damaged files are refused\n"
	 "(checksum), as are files of another format version.\n"
	 "Example: f = rf.load(\"iris.gwbf\"); print(f:score(test))"},
	{"cv", l_cv,
	 "rf.cv(d [, opts]) -> {mean, std, folds, metric, summary, metrics, report, timing, ...}\n"
	 "k-fold cross-validation: train on k-1 folds, judge the forest on the last. Every\n"
	 "metric of the task is reported as mean +- std over the folds (cv.metrics.f1_macro =\n"
	 "{mean, std, folds}; cv.report: one line each): accuracy, balanced_accuracy, f1_macro,\n"
	 "f1_weighted, precision_macro, recall_macro, roc_auc, log_loss; regression r2, rmse,\n"
	 "mae, mape. metric (default accuracy / r2) chooses the headline (mean, std, folds).\n"
	 "Takes rf.train's options plus folds (5) and shuffle (false); under mpirun ranks =\n"
	 "\"all\" deals the folds to the ranks (the same numbers). Classification folds\n"
	 "are stratified; with shuffle = false they are scikit-learn's cross_val_score folds\n"
	 "(StratifiedKFold / KFold without shuffling), so scores can be compared directly.\n"
	 "Example: cv = rf.cv(d, {folds = 5, trees = 100, seed = 1}); print(cv.summary)"},
	{NULL, NULL, NULL},
};

int gwb_open_rf(lua_State *L)
{
	gwb_lua_forest_newclass(L);
	gwb_lua_newlib(L, "rf", funcs);
	lua_pop(L, 1);
	return 0;
}
