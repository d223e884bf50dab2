/* rf_eval.h - a forest judged on a table whose class codes are the forest's own (a fold or
 * part of its training data): every headline metric of rf.cv and rf.search at once, from one
 * prediction, through metrics.c; and views of a forest's first trees (a forest of n trees
 * with the same seed is the first n of a larger one: forest.h's RNG is keyed by tree index).
 * Nothing returned is owned by the caller except what the comments say. */
#ifndef GWB_RF_EVAL_H
#define GWB_RF_EVAL_H

#include <stdbool.h>

#include "dataset.h"
#include "forest.h"
#include "status.h"

typedef enum gwb_rf_metric {
	GWB_RFM_ACCURACY = 0,
	GWB_RFM_BALANCED_ACCURACY,
	GWB_RFM_F1_MACRO,
	GWB_RFM_F1_WEIGHTED,
	GWB_RFM_PRECISION_MACRO,
	GWB_RFM_RECALL_MACRO,
	GWB_RFM_ROC_AUC,       /* binary: of the second class; else one-vs-rest macro */
	GWB_RFM_LOG_LOSS,
	GWB_RFM_R2,
	GWB_RFM_RMSE,
	GWB_RFM_MAE,
	GWB_RFM_MAPE,
	GWB_RFM_COUNT,
} gwb_rf_metric;

/* "accuracy", "f1_macro", ...; whether larger is better; whether it applies to task. */
const char *gwb_rf_metric_name(gwb_rf_metric m);
bool gwb_rf_metric_higher_better(gwb_rf_metric m);
bool gwb_rf_metric_for(gwb_rf_metric m, gwb_task task);
/* The metric called name for task, or GWB_EINVAL naming the ones there are and the nearest. */
gwb_status gwb_rf_metric_parse(const char *name, gwb_task task, const char *fn, gwb_rf_metric *out);

/* out[GWB_RFM_COUNT]: every metric of f on d that applies to its task, NaN for the others and
 * where a value is undefined (roc_auc of a fold that lacks a class). d's class codes must be
 * f's (d and f's training data share the dictionary: a fold of it). */
gwb_status gwb_rf_eval(const gwb_forest *f, const gwb_dataset *d, int threads, double *out);

/* A view of f's first n trees (1 <= n <= f->trees): shares f's arrays; valid while f lives;
 * release it with gwb_forest_view_release (never gwb_forest_free). */
void gwb_forest_view(const gwb_forest *f, int n, gwb_forest *view);
void gwb_forest_view_release(gwb_forest *view);

/* One setting cross-validated at several depths and tree counts at once: for each fold f, one
 * forest of max(counts) trees and max(depths) depth trained on train[f], and judged on test[f]
 * for each depth d and count n by its first n trees cut at depth d (gwb_forest_truncate: the
 * forest of n trees grown to depth d with that seed, node for node, so the values equal
 * separate fits). depths: 1..GWB_RF_MAX_DEPTH. out[(((size_t)e * nc + c) * k + f) *
 * GWB_RFM_COUNT + m] for depths[e], counts[c]. tm (may be NULL): adds to what it holds. */
typedef struct gwb_rf_cv_timing {
	double train_ms;     /* the forests' training (f.timing.total_ms summed) */
	double kernel_ms;    /* of which GPU kernels, and host<->device copies (GPU only) */
	double transfer_ms;
	double eval_ms;      /* cutting, predicting the folds and their metrics (on the host) */
	int forests;         /* forests trained */
	int judged;          /* of which judged on the device as they grew (train_ms holds it) */
} gwb_rf_cv_timing;
gwb_status gwb_rf_cv_grid(gwb_dataset *const *train, gwb_dataset *const *test, int k,
			  const gwb_rf_params *p, const int *depths, int nd, const int *counts,
			  int nc, double *out, gwb_rf_cv_timing *tm);

/* The mean and (population) std over k folds of v[f * stride], NaN folds left out; *used:
 * how many were not NaN (mean and std NaN when none). */
void gwb_rf_fold_stats(const double *v, int k, size_t stride, double *mean, double *std,
		       int *used);

/* The folds of rf.cv and rf.search: fold[i] in 0..k-1 for each row (order: rows scratch).
 * Classification is stratified as scikit-learn's StratifiedKFold (the sorted labels dealt
 * round-robin), so shuffle = false gives cross_val_score's folds; regression: k contiguous
 * runs of the (shuffled) rows, as KFold. */
void gwb_rf_make_folds(const gwb_dataset *d, int k, bool shuffle, uint64_t seed, int *fold,
		       size_t *order);

#endif
