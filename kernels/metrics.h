/* metrics.h - the metrics of src/metrics.h computed where a GPU prediction lies (a kept
 * gwb_rf_gpu_pred: int32 class codes, float probability rows or float values on the device),
 * so judging f:predict(d) on the GPU copies the truth up (4 or 8 bytes a row) and only counts
 * and per-block sums back, never the predictions. Plain C (extern "C"); the implementations
 * live in kernels/metrics.cu and exist only in CUDA builds (host code calls them inside
 * #ifdef GWB_HAVE_CUDA, from lapi_metrics.c).
 *
 * Same values as the CPU: every prediction is read as Lua reads it (tidy.h), ties and zero
 * divisions follow metrics.c (which also holds the checks, messages and final formulas), counts
 * are exact (atomics on integers), sums are doubles reduced per block and added on the host in
 * block order (deterministic; they differ from the CPU's sequential sums by rounding only).
 * The caller owns every array it passes; nothing here keeps device memory after it returns. */
#ifndef GWB_KERNELS_METRICS_H
#define GWB_KERNELS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/metrics.h"
#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cm[t * kp + p] (kt x kp, host) = rows with host truth code truth[i] = t (0..kt-1) and device
 * predicted code dpred[i] = p (0..kp-1); by atomics in shared memory per block, then one
 * atomic add per cell. A code out of range: GWB_EINVAL naming the row. */
gwb_status gwb_metrics_confusion_gpu(const int32_t *truth, const int32_t *dpred, size_t n,
				     int kt, int kp, int64_t *cm);

/* ROC AUC (ap false) or average precision (ap true) of device probability rows dproba
 * (n x cols floats, column k = class k) against host truth codes y (0..K-1, cols == K):
 * K == 2 binary with class pos positive (its column the score); K > 2 one-vs-rest (avg macro
 * or weighted) or one-vs-one (ovo, roc only), as gwb_metrics_roc_auc_multi / pr_auc_multi.
 * Each binary area: the scores sorted on the device (CUB radix sort, descending), the counts
 * of positives and negatives scanned, one point per distinct score (scikit-learn's ties), the
 * areas summed from those points (ROC: an exact integer sum of trapezoids). */
gwb_status gwb_metrics_auc_gpu(const int32_t *y, const float *dproba, size_t n, int cols, int K,
			       int pos, bool ovo, gwb_avg avg, bool ap, double *out);

/* Log-loss (brier false) or Brier score of device probability rows (n x K floats) against
 * host truth codes y (0..K-1), as gwb_metrics_log_loss / gwb_metrics_brier. */
gwb_status gwb_metrics_proba_loss_gpu(const int32_t *y, const float *dproba, size_t n, int K,
				      bool brier, double *out);

/* The regression errors of device values dpred (n floats) against host truth y, as
 * gwb_metrics_regression. *done false (and GWB_OK): a prediction lies outside the range where
 * the device reads values as Lua does (|v| < 1e-5 or >= 1e16, or infinite; tidy.h): the
 * caller computes on the host copy instead. */
gwb_status gwb_metrics_regression_gpu(const double *y, const float *dpred, size_t n,
				      gwb_regression_metrics *out, bool *done);

#ifdef __cplusplus
}
#endif
#endif
