/* metrics.h - judging predictions: the confusion matrix and what follows from it (accuracy,
 * balanced accuracy, precision / recall / F1 per class and averaged), ranking metrics from
 * scores (ROC and precision-recall curves, their areas, one-vs-rest and one-vs-one), the
 * probability losses (log-loss, Brier) and the regression errors. Every definition is
 * scikit-learn's (sklearn.metrics), including its rules for ties, zero divisions (0) and
 * clipping, so the values agree to rounding. Inputs are class codes 0..K-1 (the caller maps
 * labels to codes), probability rows n x K row-major, or doubles; nothing here allocates what
 * it returns except a gwb_curve, which the caller frees with gwb_curve_free(). */
#ifndef GWB_METRICS_H
#define GWB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How per-class values are put together (scikit-learn's average = ...). */
typedef enum gwb_avg {
	GWB_AVG_MACRO = 0,  /* the plain mean over classes */
	GWB_AVG_WEIGHTED,   /* weighted by each class's rows in the truth (support) */
	GWB_AVG_MICRO,      /* from the summed counts (= accuracy for single-label data) */
	GWB_AVG_NONE,       /* per class */
} gwb_avg;

/* ---- from class codes ------------------------------------------------------------------------ */

/* cm[t * K + p] = rows with truth t and prediction p (K x K, zeroed first). Codes outside
 * 0..K-1: GWB_EINVAL naming the row. */
gwb_status gwb_metrics_confusion(const int32_t *truth, const int32_t *pred, size_t n, int K,
				 int64_t *cm);
/* The share of rows on the diagonal (0 when cm is empty). */
double gwb_metrics_accuracy(const int64_t *cm, int K);
/* The mean recall over the classes that occur in the truth (scikit-learn: classes predicted
 * but never true are left out). */
double gwb_metrics_balanced_accuracy(const int64_t *cm, int K);
/* Per class k (arrays of K, any may be NULL): precision tp / predicted, recall tp / true,
 * f1 2 tp / (true + predicted), support = true rows; 0 where the division is 0 / 0. */
void gwb_metrics_prf(const int64_t *cm, int K, double *precision, double *recall, double *f1,
		     int64_t *support);
/* Precision, recall and F1 put together by avg (not GWB_AVG_NONE): out[0..2]. Classes with no
 * row on either side are not labels (left out of the macro mean, as scikit-learn's). */
void gwb_metrics_prf_avg(const int64_t *cm, int K, gwb_avg avg, double out[3]);

/* ---- from scores ------------------------------------------------------------------------------ */

/* A curve's points: roc (x = false positive rate, y = true positive rate) or pr (x = recall,
 * y = precision), with the score threshold of each point (+inf for the ROC curve's first). */
typedef struct gwb_curve {
	size_t n;
	double *x, *y, *thr;
} gwb_curve;
void gwb_curve_free(gwb_curve *c);

/* pos[i] != 0: row i is of the positive class; score[i]: its score (higher = more positive;
 * NaN refused). ROC: scikit-learn's roc_curve (drop_intermediate: collinear points left out);
 * a truth without positives or without negatives is GWB_EINVAL (the rates are undefined).
 * PR: precision_recall_curve (points by decreasing recall, ending at recall 0, precision 1). */
gwb_status gwb_metrics_roc_curve(const uint8_t *pos, const double *score, size_t n,
				 bool drop_intermediate, gwb_curve *out);
gwb_status gwb_metrics_pr_curve(const uint8_t *pos, const double *score, size_t n, gwb_curve *out);
/* The area under the ROC curve (trapezoids); GWB_EINVAL when the truth holds one class. */
gwb_status gwb_metrics_roc_auc_binary(const uint8_t *pos, const double *score, size_t n,
				      double *out);
/* Average precision: sum over thresholds of (R_k - R_{k-1}) P_k (average_precision_score). */
gwb_status gwb_metrics_average_precision(const uint8_t *pos, const double *score, size_t n,
					 double *out);

/* Multi-class, from probability rows proba[i * K + k] and truth codes y[i]:
 * roc_auc one-vs-rest (avg macro or weighted by support) or one-vs-one (Hand & Till: the mean
 * over class pairs of the two directions' AUCs on the pair's rows; ovo takes macro only);
 * pr_auc: average precision one-vs-rest, macro or weighted. A class without rows in the truth
 * is GWB_EINVAL (its one-vs-rest area is undefined), named by its code. */
gwb_status gwb_metrics_roc_auc_multi(const int32_t *y, const double *proba, size_t n, int K,
				     bool ovo, gwb_avg avg, double *out);
gwb_status gwb_metrics_pr_auc_multi(const int32_t *y, const double *proba, size_t n, int K,
				    gwb_avg avg, double *out);
/* Log-loss: the mean of -log(p_i,y_i), p clipped to [eps, 1 - eps] (eps = DBL_EPSILON). */
gwb_status gwb_metrics_log_loss(const int32_t *y, const double *proba, size_t n, int K,
				double *out);
/* Brier score: mean over rows of sum_k (p_ik - [y_i = k])^2; K = 2 halves it, the classic
 * binary mean of (p_positive - [y_i = positive])^2 (scikit-learn's scale_by_half = "auto"). */
gwb_status gwb_metrics_brier(const int32_t *y, const double *proba, size_t n, int K, double *out);

/* ---- regression -------------------------------------------------------------------------------- */

typedef struct gwb_regression_metrics {
	double mse, rmse, mae, r2, mape, max_error;
} gwb_regression_metrics;
/* From truth y and predictions p (n >= 1; NaN refused, naming the row). r2: 1 - SSres / SStot;
 * a constant truth gives 1 when the predictions are exact, else 0 (force_finite); NaN for one
 * row (not defined). mape: mean of
 * |y - p| / max(|y|, DBL_EPSILON), a share (not percent), as scikit-learn's. */
gwb_status gwb_metrics_regression(const double *y, const double *p, size_t n,
				  gwb_regression_metrics *out);

/* ---- the pieces the GPU metrics share (kernels/metrics.cu) ------------------------------------
 * The device computes the sums; these hold the checks, messages and final formulas, so both
 * sides say and compute the same. */

/* GWB_EINVAL "only one class is present" when pos or neg is 0 (what: "roc_auc", "roc_curve"). */
gwb_status gwb_metrics_need_two(double pos, double neg, const char *what);
/* Rows per class of the truth codes y (cnt: K entries); GWB_EINVAL for a code outside 0..K-1
 * or a class without rows (its one-vs-rest score is undefined). */
gwb_status gwb_metrics_class_rows(const int32_t *y, size_t n, int K, size_t *cnt,
				  const char *what);
/* GWB_EINVAL for no rows or a code outside 0..K-1, naming the row. */
gwb_status gwb_metrics_check_codes(const int32_t *y, size_t n, int K, const char *what);
/* The error for proba[row][col] = p not in 0..1 (row, col 0-based). */
gwb_status gwb_metrics_bad_proba(const char *what, size_t row, int col, double p);
/* sum over rows of sum_k (p_ik - [y_i = k])^2 -> the Brier score (the mean, halved for K 2). */
double gwb_metrics_brier_finish(double sum, size_t n, int K);
/* The error for a NaN in row (0-based) of the truth or the prediction. */
gwb_status gwb_metrics_nan_row(size_t row, bool truth);
/* The truth's mean and sum of squared deviations (NaN refused), in the CPU metrics' order. */
gwb_status gwb_metrics_truth_stats(const double *y, size_t n, double *mean, double *sst);
/* Sums over rows of e = y - p: ss = sum e^2, sa = sum |e|, sm = sum |e| / max(|y|, eps),
 * mx = max |e|; sst from gwb_metrics_truth_stats. */
typedef struct gwb_regression_sums {
	double ss, sa, sm, mx, sst;
} gwb_regression_sums;
void gwb_metrics_regression_finish(const gwb_regression_sums *s, size_t n,
				   gwb_regression_metrics *out);

#ifdef __cplusplus
}
#endif
#endif
