/* lapi_forest.c - the Forest userdata "gwb.Forest": its box (push, check, the bytes the
 * collector counts), a forest as Lua values (f.timing, f.params, the run-log record of a
 * training), its methods (predict, oob_predict, predict_proba, score, importance, save,
 * export_json, export_onnx, tree, grow, close), summary and fields. The work is in forest.c,
 * rf_grow.c, levels.c and onnx_export.c; predictions read through lapi_rf_pred.c. lapi_rf.c
 * (the rf module) and lapi_search.c push the forests they train here (lapi_rf.h); a pushed
 * Forest is owned by its userdata. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "forest.h"
#include "fmt.h"
#include "lapi.h"
#include "lapi_rf.h"
#include "levels.h"
#include "onnx_export.h"
#include "rf_grow.h"
#include "tidy.h"

/* The C bytes a Forest holds (lapi_mem.c): its node arrays and per-row OOB results. */
static size_t forest_bytes(const void *p)
{
	const gwb_forest *f = p;
	size_t node = sizeof(int32_t) * 4 + 2 + sizeof(float) * 2 + sizeof(double) +
		      sizeof(float) * (size_t)(f->outputs > 0 ? f->outputs : 1);

	return sizeof(*f) + f->nodes * node + ((size_t)f->trees + 1) * sizeof(int64_t) +
	       (f->oob_label || f->oob_value ? f->train_rows * sizeof(int32_t) : 0) +
	       (size_t)f->features * sizeof(double);
}

static int forest_release(lua_State *L)
{
	gwb_forest_free(gwb_lua_takebox(L, 1, FOREST_MT));
	return 0;
}

/* A new userdata that owns nothing yet (so __gc is safe whatever happens next). */
fbox *gwb_lua_forest_newbox(lua_State *L)
{
	return gwb_lua_newbox(L, FOREST_MT, 0);
}

static void free_forest(void *f)
{
	gwb_forest_free(f);
}

void gwb_lua_push_forest(lua_State *L, gwb_forest *f)
{
	gwb_lua_pushbox(L, FOREST_MT, 0, f, free_forest);
}

static gwb_forest *checkforest(lua_State *L, int idx)
{
	return gwb_lua_checkbox(L, idx, FOREST_MT, "Forest (from rf.train or rf.load)", "Forest");
}

/* ---- results as Lua values ------------------------------------------------------------------ */


void gwb_lua_rf_push_timing(lua_State *L, const gwb_forest *f)
{
	lua_createtable(L, 0, 10);
	SETN("total_ms", f->timing.total_ms);
	SETN("host_ms", f->timing.host_ms);
	SETN("overlap_ms", f->timing.overlap_ms);
	SETN("quantize_ms", f->timing.quantize_ms);
	SETN("grow_ms", f->timing.grow_ms);
	SETN("oob_ms", f->timing.oob_ms);
	SETN("kernel_ms", f->timing.kernel_ms);
	SETN("transfer_ms", f->timing.transfer_ms);
	SETI("subtract_kept", f->timing.subtract_kept);
	SETI("subtract_derived", f->timing.subtract_derived);
	if (f->timing.hybrid.used) {
		const gwb_rf_hybrid_timing *h = &f->timing.hybrid;
		lua_createtable(L, 0, 11);
		SETB("cpu_started", h->cpu_started);
		SETN("ratio", h->ratio);
		SETN("ratio_prior", h->ratio_prior);
		SETI("gpu_trees", h->gpu_trees);
		SETI("cpu_trees", h->cpu_trees);
		SETI("cpu_dropped", h->cpu_dropped);
		SETI("cpu_workers", h->cpu_workers);
		SETN("gpu_busy_ms", h->gpu_busy_ms);
		SETN("cpu_busy_ms", h->cpu_busy_ms);
		SETN("gpu_trees_per_s", h->gpu_trees_per_s);
		SETN("cpu_trees_per_s", h->cpu_trees_per_s);
		lua_setfield(L, -2, "hybrid");
	}
}

static const char *mf_name(const gwb_rf_params *p)
{
	switch (p->max_features) {
	case GWB_MF_SQRT: return "sqrt";
	case GWB_MF_LOG2: return "log2";
	case GWB_MF_ALL: return "all";
	case GWB_MF_FRACTION: return "fraction";
	case GWB_MF_COUNT: return "count";
	default: return "auto";
	}
}

static void push_params(lua_State *L, const gwb_forest *f)
{
	const gwb_rf_params *p = &f->params;

	lua_createtable(L, 0, 16);
	SETI("trees", p->trees);
	SETI("depth", p->depth);
	SETI("bins", p->bins);
	if (p->max_features == GWB_MF_FRACTION)
		SETN("max_features", p->max_features_value);
	else if (p->max_features == GWB_MF_COUNT)
		SETI("max_features", (lua_Integer)p->max_features_value);
	else
		SETS("max_features", mf_name(p));
	SETI("mtry", f->mtry);
	SETI("min_leaf", p->min_leaf);
	SETI("min_split", p->min_split);
	SETN("min_impurity_decrease", p->min_impurity_decrease);
	SETB("bootstrap", p->bootstrap);
	SETS("criterion", gwb_rf_criterion_name(f->criterion == GWB_CRIT_DEFAULT ?
		(f->task == GWB_TASK_CLASSIFICATION ? GWB_CRIT_GINI : GWB_CRIT_MSE) : f->criterion));
	SETI("seed", (lua_Integer)p->seed);
	if (p->threads)
		SETI("threads", p->threads);
	SETI("block", p->block);
	if (f->file_version != 1)  /* version 1 files did not save it */
		SETB("subtract", p->subtract);
	if (f->classes) {
		int k;
		if (p->class_weight_balanced) {
			SETS("class_weight", "balanced");
		} else {
			bool all1 = true;
			for (k = 0; k < f->classes; k++)
				all1 = all1 && f->class_weight[k] == 1.0;
			if (!all1) {
				lua_createtable(L, 0, f->classes);
				for (k = 0; k < f->classes; k++) {
					lua_pushnumber(L, f->class_weight[k]);
					lua_setfield(L, -2, f->class_names[k] ? f->class_names[k] : "?");
				}
				lua_setfield(L, -2, "class_weight");
			}
		}
	}
}

static void push_names(lua_State *L, char **names, int n, const char *prefix)
{
	int j;

	lua_createtable(L, n, 0);
	for (j = 0; j < n; j++) {
		if (names && names[j])
			lua_pushstring(L, names[j]);
		else
			lua_pushfstring(L, "%s%d", prefix, j + 1);
		lua_rawseti(L, -2, j + 1);
	}
}

static const char *feature_name(const gwb_forest *f, int j, char *buf, size_t n)
{
	if (f->names[j])
		return f->names[j];
	snprintf(buf, n, "x%d", j + 1);
	return buf;
}

/* The run-log record for a forest trained on the Dataset at data with the options at opts. */
void gwb_lua_rf_log_train(lua_State *L, const gwb_forest *f, int data, int opts, const char *kind)
{
	lua_createtable(L, 0, 8);
	SETS("kind", kind);
	gwb_opt_tag(L, opts, kind);
	lua_setfield(L, -2, "tag");
	push_params(L, f);
	lua_setfield(L, -2, "params");
	SETS("backend", gwb_backend_name(f->backend));
	SETS("backend_why", f->backend_why);
	gwb_lua_rf_push_timing(L, f);
	lua_setfield(L, -2, "timing");
	lua_createtable(L, 0, 6);
	if (!isnan(f->oob))
		SETN("oob", f->oob);
	SETI("nodes", f->nodes);
	SETI("leaves", f->leaves);
	SETI("depth", f->depth_reached);
	lua_setfield(L, -2, "metrics");
	gwb_lua_push_datainfo(L, data);
	lua_setfield(L, -2, "data");
	gwb_lua_log_run(L, -1);
	lua_pop(L, 1);
}

/* ---- Forest methods ------------------------------------------------------------------------- */

static int threads_opt(lua_State *L, int idx, const char *fn)
{
	if (lua_type(L, idx) != LUA_TTABLE)
		return 0;
	return gwb_opt_threads(L, idx, fn);
}

/* The Dataset at idx with its columns in the forest's feature order (matched by name, see
 * gwb_lua_dataset_match) and its categorical levels recoded to the forest's by label
 * (levels.h; strict: an unseen level is an error, else missing). *note: what the results
 * carry (columns matched by position, unseen levels, a file too old to know its levels), or
 * NULL; the note and any copy made are kept on the stack. *unseen: the values scored as
 * missing because the forest never saw their level. */
static gwb_dataset *forest_data(lua_State *L, const gwb_forest *f, int idx, const char *fn,
				bool strict, const char **note, size_t *unseen)
{
	bool pos, cats = false;
	gwb_dataset *d = gwb_lua_dataset_match(L, idx, f->names, f->features, fn, "forest", &pos),
		    *r;
	gwb_levels_report rep;
	luaL_Buffer b;
	int j, parts = 0;

	*unseen = 0;
	gwb_lua_check(L, gwb_levels_match(d, f->cat_levels, f->cat_count, f->features, strict, fn,
					  &r, &rep));
	if (r) {
		gwb_lua_pushdataset(L, r);   /* owns the recoded copy */
		d = r;
	}
	for (j = 0; j < d->features && !f->cat_levels; j++)
		cats |= d->cat_levels && d->cat_levels[j];
	*unseen = rep.unseen;
	luaL_buffinit(L, &b);
	if (pos) {
		luaL_addstring(&b, "columns matched by position: the dataset or the forest has no "
			       "column names");
		parts++;
	}
	if (rep.unseen) {
		char buf[400];
		snprintf(buf, sizeof(buf), "%s%zu value%s of %d level%s the forest never saw in "
			 "training scored as missing (column '%s': '%s'%s; strict = true refuses "
			 "them)", parts ? "; " : "", rep.unseen, rep.unseen == 1 ? "" : "s",
			 rep.unseen_levels, rep.unseen_levels == 1 ? "" : "s",
			 f->names[rep.column] ? f->names[rep.column] : "?", rep.example,
			 rep.unseen_columns > 1 ? ", and other columns" : "");
		luaL_addstring(&b, buf);
		parts++;
	}
	if (cats) {
		char buf[400];
		snprintf(buf, sizeof(buf), "%sthis forest's file (version %d) does not record its "
			 "categorical levels: text columns were scored by their codes as read (order "
			 "of first appearance), right only when the data lists its levels in the "
			 "training file's order; train and save it again to match them by label",
			 parts ? "; " : "", f->file_version);
		luaL_addstring(&b, buf);
		parts++;
	}
	luaL_pushresult(&b);
	*note = parts ? lua_tostring(L, -1) : NULL;
	return d;
}

/* Return the result on top, with the note (if any) as t.note when it is a table and as a
 * second result; t.unseen: the values of levels the forest never saw (scored as missing). */
static int push_note(lua_State *L, const char *note, size_t unseen)
{
	if (!note)
		return 1;
	if (lua_istable(L, -1)) {
		lua_pushstring(L, note);
		lua_setfield(L, -2, "note");
		if (unseen) {
			lua_pushinteger(L, (lua_Integer)unseen);
			lua_setfield(L, -2, "unseen");
		}
	}
	lua_pushstring(L, note);
	return 2;
}


static int m_predict(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	static const char *const keys[] = {"threads", "codes", "strict", NULL};
	const char *note;
	gwb_dataset *d;
	bool codes;
	size_t i, unseen;

	lua_settop(L, 3);   /* the options stay at 3, above them what forest_data pushes */
	gwb_opt_check_keys(L, 3, "predict", keys);
	d = forest_data(L, f, 2, "predict", gwb_opt_bool(L, 3, "predict", "strict", false), &note,
			&unseen);
	codes = gwb_opt_bool(L, 3, "predict", "codes", false);
	gwb_lua_check(L, gwb_forest_check_data(f, d));
#ifdef GWB_HAVE_CUDA
	if (gwb_lua_rf_predict_gpu(L, f, d, GWB_RF_OUT_AUTO, codes, note))
		return push_note(L, note, unseen);
#endif
	if (f->task == GWB_TASK_CLASSIFICATION) {
		int32_t *lab = lua_newuserdatauv(L, sizeof(int32_t) * (d->rows + 1), 0);
		gwb_lua_check(L, gwb_forest_predict(f, d, threads_opt(L, 3, "predict"), lab, NULL));
		lua_createtable(L, (int)d->rows, 0);
		for (i = 0; i < d->rows; i++) {
			if (codes || !f->class_names[lab[i]])
				lua_pushinteger(L, lab[i] + 1);
			else
				lua_pushstring(L, f->class_names[lab[i]]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
	} else {
		float *v = lua_newuserdatauv(L, sizeof(float) * (d->rows + 1), 0);
		gwb_lua_check(L, gwb_forest_predict(f, d, threads_opt(L, 3, "predict"), NULL, v));
		lua_createtable(L, (int)d->rows, 0);
		for (i = 0; i < d->rows; i++) {
			lua_pushnumber(L, gwb_lua_rf_tidy(v[i]));
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
	}
	return push_note(L, note, unseen);
}

static int m_oob_predict(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	static const char *const keys[] = {"codes", NULL};
	bool codes;
	size_t i;

	gwb_opt_check_keys(L, 2, "oob_predict", keys);
	codes = gwb_opt_bool(L, 2, "oob_predict", "codes", false);
	if (!f->oob_label && !f->oob_value)
		return luaL_error(L, "oob_predict: this forest has no OOB predictions (%s)",
				  f->file_version ? "they are not saved: a loaded forest has none" :
				  !f->params.bootstrap ? "trained with bootstrap = false" :
				  "trained with oob = false");
	lua_createtable(L, (int)f->train_rows, 0);
	for (i = 0; i < f->train_rows; i++) {
		if (f->oob_label) {
			int32_t c = f->oob_label[i];
			if (c < 0)
				lua_pushboolean(L, 0);
			else if (codes || !f->class_names[c])
				lua_pushinteger(L, c + 1);
			else
				lua_pushstring(L, f->class_names[c]);
		} else {
			lua_pushnumber(L, isnan(f->oob_value[i]) ? (lua_Number)NAN :
				       gwb_lua_rf_tidy(f->oob_value[i]));
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int m_predict_proba(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	static const char *const keys[] = {"threads", "strict", NULL};
	const char *note;
	gwb_dataset *d;
	size_t unseen;
	float *pr;
	size_t i;
	int k;

	lua_settop(L, 3);   /* the options stay at 3, above them what forest_data pushes */
	gwb_opt_check_keys(L, 3, "predict_proba", keys);
	d = forest_data(L, f, 2, "predict_proba", gwb_opt_bool(L, 3, "predict_proba", "strict",
							       false), &note, &unseen);
	if (f->task != GWB_TASK_CLASSIFICATION)
		return luaL_error(L, "predict_proba: this is a regression forest; use f:predict(d)");
	gwb_lua_check(L, gwb_forest_check_data(f, d));
#ifdef GWB_HAVE_CUDA
	if (gwb_lua_rf_predict_gpu(L, f, d, GWB_RF_OUT_PROBA, false, note))
		return push_note(L, note, unseen);
#endif
	pr = lua_newuserdatauv(L, sizeof(float) * (d->rows * (size_t)f->classes + 1), 0);
	gwb_lua_check(L, gwb_forest_predict_proba(f, d, threads_opt(L, 3, "predict_proba"), pr));
	lua_createtable(L, (int)d->rows, 0);
	for (i = 0; i < d->rows; i++) {
		lua_createtable(L, f->classes, 0);
		for (k = 0; k < f->classes; k++) {
			/* probabilities: to 1e-7, float's resolution near 1 */
			lua_pushnumber(L, gwb_tidy_proba(pr[i * (size_t)f->classes + (size_t)k]));
			lua_rawseti(L, -2, k + 1);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return push_note(L, note, unseen);
}

static int m_score(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	static const char *const keys[] = {"threads", "strict", NULL};
	const char *note;
	gwb_dataset *d;
	size_t unseen;
	double s;

	lua_settop(L, 3);   /* the options stay at 3, above them what forest_data pushes */
	gwb_opt_check_keys(L, 3, "score", keys);
	d = forest_data(L, f, 2, "score", gwb_opt_bool(L, 3, "score", "strict", false), &note,
			&unseen);
	gwb_lua_check(L, gwb_forest_score(f, d, threads_opt(L, 3, "score"), &s));
	lua_pushnumber(L, s);
	if (!note)
		return 1;
	lua_pushstring(L, note);   /* a second result: how the columns were matched */
	lua_pushinteger(L, (lua_Integer)unseen);   /* a third: values of unseen levels */
	return 3;
}

static int m_importance(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	static const char *const keys[] = {"method", "data", "repeats", "seed", "threads",
					   "strict", NULL};
	const char *method;
	char buf[32];
	int j;

	if (lua_type(L, 2) == LUA_TSTRING) {  /* f:importance("permutation", ...) is not offered */
		return luaL_error(L, "importance: pass options as a table, e.g. "
				  "f:importance{method = \"permutation\", data = test}");
	}
	gwb_opt_check_keys(L, 2, "importance", keys);
	method = gwb_opt_str(L, 2, "importance", "method", "impurity");
	if (!strcmp(method, "impurity")) {
		lua_createtable(L, 0, f->features);
		for (j = 0; j < f->features; j++) {
			lua_pushnumber(L, f->importance[j]);
			lua_setfield(L, -2, feature_name(f, j, buf, sizeof(buf)));
		}
		return 1;
	}
	if (!strcmp(method, "permutation")) {
		gwb_dataset *d;
		int repeats = gwb_opt_i32(L, 2, "importance", "repeats", 5);
		uint64_t seed = (uint64_t)gwb_opt_int(L, 2, "importance", "seed", 1);
		int threads = threads_opt(L, 2, "importance");
		double *mean, *sd;
		if (lua_getfield(L, 2, "data") == LUA_TNIL)
			return luaL_error(L, "importance: method = \"permutation\" needs data = a "
					  "Dataset to score on (held-out rows, e.g. a test split)");
		{
			const char *note;
			size_t unseen;
			d = forest_data(L, f, lua_gettop(L), "importance",
					gwb_opt_bool(L, 2, "importance", "strict", false), &note,
					&unseen);
			(void)note;
		}
		mean = lua_newuserdatauv(L, sizeof(double) * ((size_t)f->features + 1), 0);
		sd = lua_newuserdatauv(L, sizeof(double) * ((size_t)f->features + 1), 0);
		gwb_lua_check(L, gwb_forest_permutation_importance(f, d, repeats, seed, threads, mean,
								     sd));
		lua_createtable(L, 0, f->features);
		lua_createtable(L, 0, f->features);
		for (j = 0; j < f->features; j++) {
			const char *name = feature_name(f, j, buf, sizeof(buf));
			lua_pushnumber(L, mean[j]);
			lua_setfield(L, -3, name);
			lua_pushnumber(L, sd[j]);
			lua_setfield(L, -2, name);
		}
		return 2;
	}
	return luaL_error(L, "importance: method must be \"impurity\" or \"permutation\" (got "
			  "\"%s\")", method);
}

static int m_save(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	const char *path = luaL_checkstring(L, 2);

	gwb_lua_check(L, gwb_forest_save(f, path));
	return 0;  /* nothing for the REPL to print after a save */
}

static int m_export_json(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	const char *path = luaL_checkstring(L, 2);

	gwb_lua_check(L, gwb_forest_export_json(f, path));
	return 0;
}

static int m_export_onnx(lua_State *L)
{
	static const char *const keys[] = {"categorical", NULL};
	gwb_forest *f = checkforest(L, 1);
	const char *path = luaL_checkstring(L, 2), *cat;

	gwb_opt_check_keys(L, 3, "export_onnx", keys);
	cat = gwb_opt_str(L, 3, "export_onnx", "categorical", "refuse");
	if (strcmp(cat, "refuse") && strcmp(cat, "codes"))
		return luaL_error(L, "export_onnx: categorical must be \"refuse\" or \"codes\" (got "
				  "\"%s\")", cat);
	gwb_lua_check(L, gwb_forest_export_onnx(f, path, !strcmp(cat, "codes")));
	return 0;
}

static int m_tree(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	lua_Integer t = luaL_checkinteger(L, 2);
	int64_t b, n, i;
	char buf[32];
	int k;

	if (t < 1 || t > f->trees)
		return luaL_error(L, "tree: the forest has trees 1..%d (got %I)", f->trees, t);
	b = f->tree_offset[t - 1];
	n = f->tree_offset[t] - b;
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		int64_t g = b + i;
		lua_createtable(L, 0, 10);
		if (f->feature[g] >= 0) {
			SETI("feature", f->feature[g] + 1);
			SETS("name", feature_name(f, f->feature[g], buf, sizeof(buf)));
			SETN("threshold", f->threshold[g]);
			SETI("bin", f->threshold_bin[g]);
			SETB("nan_left", f->nan_left[g]);
			SETI("left", f->left[g] + 1);
			SETI("right", f->right[g] + 1);
		} else {
			SETB("leaf", 1);
		}
		SETI("count", f->count[g]);
		SETN("weight", f->weight[g]);
		SETN("impurity", f->impurity[g]);
		if (f->classes) {
			lua_createtable(L, f->classes, 0);
			for (k = 0; k < f->classes; k++) {
				lua_pushnumber(L, f->value[(size_t)g * (size_t)f->outputs + (size_t)k]);
				lua_rawseti(L, -2, k + 1);
			}
			lua_setfield(L, -2, "value");
		} else {
			SETN("value", f->value[g]);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* f:grow(n, d [, opts]): n more trees on the training data d; f now holds all of them. */
static int m_grow(lua_State *L)
{
	static const char *const keys[] = {"backend", "threads", "progress", "tag", NULL};
	gwb_forest *f = checkforest(L, 1), *g = NULL;
	fbox *b = gwb_lua_testudata(L, 1, FOREST_MT);
	lua_Integer n = luaL_checkinteger(L, 2);
	gwb_dataset *d = gwb_lua_checkdataset(L, 3);
	gwb_backend be;
	bool progress;
	int threads;

	lua_settop(L, 4);
	gwb_opt_check_keys(L, 4, "grow", keys);
	if (n < 1 || n > 1000000000)
		return luaL_error(L, "grow: n must be a tree count >= 1 (got %I)", n);
	be = lua_istable(L, 4) && lua_getfield(L, 4, "backend") != LUA_TNIL ?
	     gwb_opt_backend(L, 4, "grow") : GWB_BACKEND_AUTO;
	lua_settop(L, 4);
	threads = threads_opt(L, 4, "grow");
	progress = gwb_opt_bool(L, 4, "grow", "progress", true);
	{
		/* the new trees learn d's codes: they must mean the forest's levels (levels.h) */
		gwb_levels_report rep;
		gwb_dataset *r;
		gwb_lua_check(L, gwb_levels_match(d, f->cat_levels, f->cat_count, f->features, true,
						  "grow", &r, &rep));
		if (r) {
			gwb_dataset_free(r);
			return luaL_error(L, "grow: d's text columns code their levels otherwise than "
					  "the forest's training data did: give the data it was trained "
					  "on");
		}
	}
	gwb_lua_check(L, gwb_rf_grow(f, d, (int)n, be, threads, progress, &g));
	gwb_forest_free(b->f);
	b->f = g;
	gwb_lua_rf_log_train(L, g, 3, 4, "rf.grow");
	lua_settop(L, 1);
	return 1;
}

static int m_close(lua_State *L)
{
	gwb_lua_checkudata(L, 1, FOREST_MT, FOREST_MT);
	return forest_release(L);
}

static int forest_tostring(lua_State *L)
{
	fbox *b = gwb_lua_checkudata(L, 1, FOREST_MT, FOREST_MT);
	gwb_forest *f = b->f;
	luaL_Buffer B;
	char line[512];
	int k;

	if (!f) {
		lua_pushstring(L, "Forest (closed)");
		return 1;
	}
	luaL_buffinit(L, &B);
	{
		char nt[48], nf[48];
		snprintf(line, sizeof(line), "Forest: %s, %s on %s (target '%s')\n",
			 gwb_fmt_count(nt, sizeof(nt), f->trees, "tree", NULL),
			 f->task == GWB_TASK_CLASSIFICATION ? "classification" : "regression",
			 gwb_fmt_count(nf, sizeof(nf), f->features, "feature", NULL),
			 f->target ? f->target : "?");
	}
	if (f->trees_asked > f->trees) {
		luaL_addstring(&B, line);
		snprintf(line, sizeof(line), "  partial   %d of %d trees: interrupted (Ctrl-C) with "
			 "keep = true; f:grow(%d, d) grows the rest\n", f->trees, f->trees_asked,
			 f->trees_asked - f->trees);
	}
	luaL_addstring(&B, line);
	if (f->classes) {
		luaL_addstring(&B, "  classes   ");
		for (k = 0; k < f->classes && k < 12; k++) {
			if (k)
				luaL_addstring(&B, ", ");
			luaL_addstring(&B, f->class_names[k] ? f->class_names[k] : "?");
		}
		if (f->classes > 12) {
			snprintf(line, sizeof(line), ", ... (%d)", f->classes);
			luaL_addstring(&B, line);
		}
		luaL_addstring(&B, "\n");
	}
	snprintf(line, sizeof(line), "  trees     depth reached %d (max %d), %zu nodes, %zu leaves, "
		 "%.1f leaves/tree\n", f->depth_reached, f->params.depth, f->nodes, f->leaves,
		 (double)f->leaves / f->trees);
	luaL_addstring(&B, line);
	snprintf(line, sizeof(line), "  params    bins %d, max_features %s (%d), criterion %s, "
		 "min_leaf %d, bootstrap %s, seed %llu\n", f->params.bins, mf_name(&f->params),
		 f->mtry, gwb_rf_criterion_name(f->criterion), f->params.min_leaf,
		 f->params.bootstrap ? "yes" : "no", (unsigned long long)f->params.seed);
	luaL_addstring(&B, line);
	if (!isnan(f->oob))
		snprintf(line, sizeof(line), "  oob       %s %.4f on %zu rows\n",
			 f->task == GWB_TASK_CLASSIFICATION ? "accuracy" : "R2", f->oob, f->oob_rows);
	else
		snprintf(line, sizeof(line), "  oob       none (%s)\n",
			 !f->params.bootstrap ? "bootstrap = false" :
			 !f->params.oob ? "oob = false" : "no row was out of bag");
	luaL_addstring(&B, line);
	if (f->timing.total_ms > 0) {
		char t[8][32];
		snprintf(line, sizeof(line), "  backend   %s (%s), %s: quantize %s, grow %s, oob %s%s\n",
			 gwb_backend_name(f->backend), f->backend_why,
			 gwb_fmt_ms(t[0], sizeof(t[0]), f->timing.total_ms),
			 gwb_fmt_ms(t[1], sizeof(t[1]), f->timing.quantize_ms),
			 gwb_fmt_ms(t[2], sizeof(t[2]), f->timing.grow_ms),
			 gwb_fmt_ms(t[3], sizeof(t[3]), f->timing.oob_ms),
			 f->backend == GWB_BACKEND_GPU && (f->oob_label || f->oob_value)
			 ? " on the gpu" : "");
		luaL_addstring(&B, line);
		snprintf(line, sizeof(line), "  time      total %s = kernels %s + transfers %s + host %s",
			 gwb_fmt_ms(t[4], sizeof(t[4]), f->timing.total_ms),
			 gwb_fmt_ms(t[5], sizeof(t[5]), f->timing.kernel_ms),
			 gwb_fmt_ms(t[6], sizeof(t[6]), f->timing.transfer_ms),
			 gwb_fmt_ms(t[7], sizeof(t[7]), f->timing.host_ms));
	} else
		snprintf(line, sizeof(line), "  backend   %s (%s)", gwb_backend_name(f->backend),
			 f->backend_why);
	luaL_addstring(&B, line);
	if (f->timing.hybrid.used) {
		const gwb_rf_hybrid_timing *h = &f->timing.hybrid;
		snprintf(line, sizeof(line), "\n  hybrid    %s grew %d trees (busy %.1f ms), %d CPU "
			 "threads %d (busy %.1f ms, %d begun and left to the other side%s); "
			 "a CPU tree costs %.0f of the other's", gwb_backend_name(f->backend),
			 h->gpu_trees, h->gpu_busy_ms, h->cpu_workers, h->cpu_trees, h->cpu_busy_ms,
			 h->cpu_dropped, h->cpu_started ? "" : "; not started", h->ratio);
		luaL_addstring(&B, line);
	}
	luaL_pushresult(&B);
	return 1;
}

static int forest_fields(lua_State *L)
{
	gwb_forest *f = checkforest(L, 1);
	const char *k = lua_tostring(L, 2);

	if (lua_type(L, 2) == LUA_TSTRING) {
		if (!strcmp(k, "trees"))
			lua_pushinteger(L, f->trees);
		else if (!strcmp(k, "features"))
			lua_pushinteger(L, f->features);
		else if (!strcmp(k, "classes"))
			f->classes ? lua_pushinteger(L, f->classes) : lua_pushnil(L);
		else if (!strcmp(k, "task"))
			lua_pushstring(L, f->task == GWB_TASK_CLASSIFICATION ? "classification" :
				       "regression");
		else if (!strcmp(k, "oob"))
			isnan(f->oob) ? lua_pushnil(L) : lua_pushnumber(L, f->oob);
		else if (!strcmp(k, "oob_rows"))
			lua_pushinteger(L, (lua_Integer)f->oob_rows);
		else if (!strcmp(k, "nodes"))
			lua_pushinteger(L, (lua_Integer)f->nodes);
		else if (!strcmp(k, "leaves"))
			lua_pushinteger(L, (lua_Integer)f->leaves);
		else if (!strcmp(k, "depth"))
			lua_pushinteger(L, f->depth_reached);
		else if (!strcmp(k, "backend"))
			lua_pushstring(L, gwb_backend_name(f->backend));
		else if (!strcmp(k, "backend_why"))
			lua_pushstring(L, f->backend_why);
		else if (!strcmp(k, "timing"))
			gwb_lua_rf_push_timing(L, f);
		else if (!strcmp(k, "params"))
			push_params(L, f);
		else if (!strcmp(k, "names"))
			push_names(L, f->names, f->features, "x");
		else if (!strcmp(k, "labels"))
			f->classes ? push_names(L, f->class_names, f->classes, "") : lua_pushnil(L);
		else if (!strcmp(k, "target"))
			lua_pushstring(L, f->target ? f->target : "");
		else if (!strcmp(k, "train_rows"))
			lua_pushinteger(L, (lua_Integer)f->train_rows);
		else if (!strcmp(k, "partial"))
			lua_pushboolean(L, f->trees_asked > f->trees);
		else if (!strcmp(k, "trees_asked"))
			lua_pushinteger(L, f->trees_asked > f->trees ? f->trees_asked : f->trees);
		else
			goto methods;
		return 1;
	}
methods:
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__methods");
	lua_pushvalue(L, 2);
	lua_gettable(L, -2);  /* not raw: a miss is remembered for "did you mean" */
	return 1;
}

/* f.close even of a closed Forest (closing again does nothing), else the fields */
static int forest_index(lua_State *L)
{
	return gwb_lua_index_close(L) ? 1 : forest_fields(L);
}

/* ---- registration --------------------------------------------------------------------------- */

static const gwb_reg methods[] = {
	{"predict", m_predict,
	 "f:predict(d [, {codes = false, strict = false, threads}]) -> array [, note]\n"
	 "Predicted class names per row (codes = true: class numbers 1..classes), or\n"
	 "regression values. d's columns are matched to the forest's features by name (any\n"
	 "order; missing or unexpected ones are an error that names them); data without names\n"
	 "(header = false) by position, and then a second result (and p.note) says so. Text\n"
	 "columns are matched by label: each level gets the code the forest learned for it\n"
	 "(whatever its order or subset in d); a level the forest never saw is scored as\n"
	 "missing and counted (p.unseen, and the note names one), or an error with strict =\n"
	 "true; text where the forest had numbers (or the reverse) is an error naming the\n"
	 "column. A forest file saved before levels were recorded (version < 3) scores codes\n"
	 "as they are read, and the note says so. Large\n"
	 "work (and every GPU-resident d, see d:to) runs on the GPU and returns a Predictions\n"
	 "object that reads like the array (p[i], #p, ipairs; p:totable() for a table,\n"
	 "p.timing) and stays on the device until the first read copies it back.\n"
	 "Example: p = f:predict(test); print(p[1])"},
	{"oob_predict", m_oob_predict,
	 "f:oob_predict([{codes = false}]) -> array\n"
	 "Each training row's out-of-bag prediction (from the trees that did not draw it): a\n"
	 "class name (codes = true: number 1..classes) or a regression value; false (a class)\n"
	 "or NaN (a value) for rows that every tree drew. f.oob is their accuracy or R2. On\n"
	 "the GPU backend they are computed on the device, identical to the CPU's. Not saved\n"
	 "with the forest.\n"
	 "Example: o = f:oob_predict(); print(o[1], f.oob)"},
	{"predict_proba", m_predict_proba,
	 "f:predict_proba(d [, {strict = false, threads}]) -> array of arrays [, note]\n"
	 "Class probabilities per row (the mean of the trees' leaf distributions), in the\n"
	 "order of f.labels. Classification forests only. Columns and levels matched as\n"
	 "f:predict does.\n"
	 "On the GPU (as f:predict) a Predictions object whose p[i] is row i's array.\n"
	 "Example: p = f:predict_proba(test); print(p[1][1])"},
	{"score", m_score,
	 "f:score(d [, {strict = false, threads}]) -> number [, note, unseen]\n"
	 "Accuracy (classification; labels matched by class name) or R2 (regression) on d.\n"
	 "Columns and levels matched as f:predict does; note: when they were matched by\n"
	 "position, or values of unseen levels were scored as missing (unseen: how many).\n"
	 "Example: print(f:score(test))"},
	{"importance", m_importance,
	 "f:importance([{method = \"impurity\" | \"permutation\", data, repeats = 5, seed = 1}])\n"
	 "  -> {feature = value} [, {feature = std}]\n"
	 "Impurity importance (mean decrease in impurity, normalised to sum 1), or permutation\n"
	 "importance: the drop in f:score(data) when one feature's column is shuffled (mean\n"
	 "and std over repeats); use held-out data.\n"
	 "Example: imp, sd = f:importance{method = \"permutation\", data = test}"},
	{"save", m_save,
	 "f:save(path)\n"
	 "Write the forest in gwb's versioned binary format (with a checksum). Equal forests\n"
	 "give equal files. Read back with rf.load(path). The save is atomic: a crash, kill or\n"
	 "Ctrl-C leaves the old file (or none), never a truncated one.\n"
	 "Example: f:save(\"model.gwbf\")"},
	{"export_json", m_export_json,
	 "f:export_json(path)\n"
	 "Write the trees as JSON for reading or other tools: per tree a list of nodes (id,\n"
	 "feature, name, threshold, nan_left, left, right, count, weight, impurity, value).\n"
	 "Example: f:export_json(\"model.json\")"},
	{"export_onnx", m_export_onnx,
	 "f:export_onnx(path [, {categorical = \"codes\"}])\n"
	 "Write the forest as an ONNX model (ai.onnx.ml TreeEnsembleClassifier or\n"
	 "TreeEnsembleRegressor, opset 3) for onnxruntime and other ONNX tools: input X (float,\n"
	 "rows x features; its doc string names the features in order), outputs label and\n"
	 "probabilities (classification) or variable (regression). Saved atomically. A forest\n"
	 "with categorical features is refused (ONNX compares numbers) unless categorical =\n"
	 "\"codes\": then the model takes each level's code (listed in the doc string).\n"
	 "Example: f:export_onnx(\"iris.onnx\")  -- python: onnxruntime.InferenceSession(\"iris.onnx\")"},
	{"tree", m_tree,
	 "f:tree(i) -> array of nodes\n"
	 "Tree i's nodes in breadth-first order; node fields feature (1-based), name,\n"
	 "threshold, nan_left, left, right (1-based node indices), or leaf = true; count (in-bag\n"
	 "rows), weight, impurity, value (class distribution or mean).\n"
	 "Example: root = f:tree(1)[1]; print(root.name, root.threshold)"},
	{"grow", m_grow,
	 "f:grow(n, d [, opts]) -> f\n"
	 "Warm start: n more trees with the same settings, grown on d (the data f was trained on:\n"
	 "same rows, features and target), with the next RNG streams, so f becomes the forest\n"
	 "that training trees + n at once gives, node for node (the same saved file). OOB and\n"
	 "importances cover every tree. opts: backend, threads, progress, tag. A forest trained\n"
	 "with weights = ... cannot be grown (the weights are not kept).\n"
	 "Example: f = rf.train(d, {trees = 100}); f:grow(50, d); print(f.trees)  -- 150"},
	{"close", m_close,
	 "f:close()\nFree the forest now (it is also freed when collected)."},
	{NULL, NULL, NULL},
};

void gwb_lua_forest_newclass(lua_State *L)
{
	static const luaL_Reg meta[] = {
		{"__gc", forest_release},
		{"__close", forest_release},
		{"__tostring", forest_tostring},
		{"__index", forest_index},
		{NULL, NULL},
	};

	gwb_lua_newclass(L, FOREST_MT, methods, meta);
	gwb_lua_boxbytes(FOREST_MT, forest_bytes);
#ifdef GWB_HAVE_CUDA
	gwb_lua_rf_pred_newclass(L);
#endif
}
