/* metrics.c - the metrics of metrics.h on arrays: the confusion matrix and its ratios, the
 * ranking curves (scores sorted once, one point per distinct score, as scikit-learn's
 * _binary_clf_curve), their areas, the probability losses and the regression errors. Pure
 * computation over the caller's arrays: no Lua, no I/O; the bindings (lapi_metrics.c) map
 * labels to codes and say which labels were out of place. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

/* ---- from class codes ------------------------------------------------------------------------ */

gwb_status gwb_metrics_confusion(const int32_t *truth, const int32_t *pred, size_t n, int K,
				 int64_t *cm)
{
	size_t i;

	memset(cm, 0, sizeof(int64_t) * (size_t)K * (size_t)K);
	for (i = 0; i < n; i++) {
		if (truth[i] < 0 || truth[i] >= K || pred[i] < 0 || pred[i] >= K)
			return gwb_error(GWB_EINVAL, "metrics: row %zu: class code %d is not in 0..%d",
					 i + 1, truth[i] < 0 || truth[i] >= K ? truth[i] : pred[i],
					 K - 1);
		cm[(size_t)truth[i] * (size_t)K + (size_t)pred[i]]++;
	}
	return GWB_OK;
}

static int64_t row_sum(const int64_t *cm, int K, int t)
{
	int64_t s = 0;
	for (int p = 0; p < K; p++)
		s += cm[(size_t)t * (size_t)K + (size_t)p];
	return s;
}

static int64_t col_sum(const int64_t *cm, int K, int p)
{
	int64_t s = 0;
	for (int t = 0; t < K; t++)
		s += cm[(size_t)t * (size_t)K + (size_t)p];
	return s;
}

double gwb_metrics_accuracy(const int64_t *cm, int K)
{
	int64_t diag = 0, all = 0;

	for (int t = 0; t < K; t++) {
		diag += cm[(size_t)t * (size_t)K + (size_t)t];
		all += row_sum(cm, K, t);
	}
	return all ? (double)diag / (double)all : 0;
}

double gwb_metrics_balanced_accuracy(const int64_t *cm, int K)
{
	double s = 0;
	int m = 0;

	for (int t = 0; t < K; t++) {
		int64_t r = row_sum(cm, K, t);
		if (!r)
			continue;
		s += (double)cm[(size_t)t * (size_t)K + (size_t)t] / (double)r;
		m++;
	}
	return m ? s / m : 0;
}

static double divide(double a, double b)
{
	return b != 0 ? a / b : 0;
}

void gwb_metrics_prf(const int64_t *cm, int K, double *precision, double *recall, double *f1,
		     int64_t *support)
{
	for (int k = 0; k < K; k++) {
		double tp = (double)cm[(size_t)k * (size_t)K + (size_t)k];
		int64_t tr = row_sum(cm, K, k), pr = col_sum(cm, K, k);
		if (precision)
			precision[k] = divide(tp, (double)pr);
		if (recall)
			recall[k] = divide(tp, (double)tr);
		if (f1)
			f1[k] = divide(2 * tp, (double)(tr + pr));
		if (support)
			support[k] = tr;
	}
}

void gwb_metrics_prf_avg(const int64_t *cm, int K, gwb_avg avg, double out[3])
{
	double tp = 0, tr = 0, pr = 0, w = 0, v[3];
	int k, j;

	out[0] = out[1] = out[2] = 0;
	if (avg == GWB_AVG_MICRO) {
		for (k = 0; k < K; k++) {
			tp += (double)cm[(size_t)k * (size_t)K + (size_t)k];
			tr += (double)row_sum(cm, K, k);
			pr += (double)col_sum(cm, K, k);
		}
		out[0] = divide(tp, pr);
		out[1] = divide(tp, tr);
		out[2] = divide(2 * tp, tr + pr);
		return;
	}
	for (k = 0; k < K; k++) {
		int64_t s;
		double wk;
		if (!row_sum(cm, K, k) && !col_sum(cm, K, k))
			continue;  /* a class on neither side is not among the labels */
		{
			double tpk = (double)cm[(size_t)k * (size_t)K + (size_t)k];
			int64_t trk = row_sum(cm, K, k), prk = col_sum(cm, K, k);
			v[0] = divide(tpk, (double)prk);
			v[1] = divide(tpk, (double)trk);
			v[2] = divide(2 * tpk, (double)(trk + prk));
			s = trk;
		}
		wk = avg == GWB_AVG_WEIGHTED ? (double)s : 1.0;
		for (j = 0; j < 3; j++)
			out[j] += wk * v[j];
		w += wk;
	}
	for (j = 0; j < 3; j++)
		out[j] = divide(out[j], w);
}

/* ---- from scores ------------------------------------------------------------------------------ */

void gwb_curve_free(gwb_curve *c)
{
	if (!c)
		return;
	free(c->x);
	free(c->y);
	free(c->thr);
	memset(c, 0, sizeof(*c));
}

static _Thread_local const double *sort_score;

/* By decreasing score, ties by index (their order does not matter: a tie is one point). */
static int by_score_desc(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = sort_score[i], y = sort_score[j];

	if (x > y)
		return -1;
	if (x < y)
		return 1;
	return (i > j) - (i < j);
}

/* The points of _binary_clf_curve: for each distinct score, from the highest, the positives
 * (tps) and negatives (fps) scoring at least it, and the score (thr). m = their count. */
typedef struct clf_curve {
	size_t m;
	double *tps, *fps, *thr;
} clf_curve;

static void clf_free(clf_curve *c)
{
	free(c->tps);
	free(c->fps);
	free(c->thr);
}

static gwb_status clf_curve_make(const uint8_t *pos, const double *score, size_t n, clf_curve *c)
{
	size_t *idx, i, m = 0;
	double tp = 0;

	memset(c, 0, sizeof(*c));
	if (!n)
		return gwb_error(GWB_EINVAL, "metrics: no rows");
	for (i = 0; i < n; i++)
		if (isnan(score[i]))
			return gwb_error(GWB_EINVAL, "metrics: row %zu: the score is NaN", i + 1);
	idx = malloc(n * sizeof(size_t));
	c->tps = malloc(n * sizeof(double));
	c->fps = malloc(n * sizeof(double));
	c->thr = malloc(n * sizeof(double));
	if (!idx || !c->tps || !c->fps || !c->thr) {
		free(idx);
		clf_free(c);
		return gwb_error(GWB_ENOMEM, "metrics: out of memory sorting %zu scores", n);
	}
	for (i = 0; i < n; i++)
		idx[i] = i;
	sort_score = score;
	qsort(idx, n, sizeof(size_t), by_score_desc);
	for (i = 0; i < n; i++) {
		tp += pos[idx[i]] != 0;
		if (i + 1 == n || score[idx[i + 1]] != score[idx[i]]) {
			c->tps[m] = tp;
			c->fps[m] = (double)(i + 1) - tp;
			c->thr[m] = score[idx[i]];
			m++;
		}
	}
	c->m = m;
	free(idx);
	return GWB_OK;
}

static gwb_status curve_alloc(gwb_curve *out, size_t n)
{
	out->n = n;
	out->x = malloc((n + 1) * sizeof(double));
	out->y = malloc((n + 1) * sizeof(double));
	out->thr = malloc((n + 1) * sizeof(double));
	if (!out->x || !out->y || !out->thr) {
		gwb_curve_free(out);
		return gwb_error(GWB_ENOMEM, "metrics: out of memory for a curve of %zu points", n);
	}
	return GWB_OK;
}

gwb_status gwb_metrics_need_two(double pos, double neg, const char *what)
{
	if (pos <= 0 || neg <= 0)
		return gwb_error(GWB_EINVAL, "metrics.%s: only one class is present in the truth "
				 "(%s): %s is not defined in that case", what,
				 pos <= 0 ? "no positive row" : "no negative row",
				 !strcmp(what, "roc_curve") ? "the ROC curve" : "ROC AUC");
	return GWB_OK;
}

static gwb_status two_classes(const clf_curve *c, const char *what)
{
	return gwb_metrics_need_two(c->tps[c->m - 1], c->fps[c->m - 1], what);
}

static gwb_status roc_curve(const uint8_t *pos, const double *score, size_t n,
			    bool drop_intermediate, gwb_curve *out, const char *what)
{
	clf_curve c;
	size_t i, k = 0;
	gwb_status st;

	memset(out, 0, sizeof(*out));
	if ((st = clf_curve_make(pos, score, n, &c)))
		return st;
	if ((st = two_classes(&c, what)) || (st = curve_alloc(out, c.m + 1)))
		goto out;
	out->x[0] = out->y[0] = 0;
	out->thr[0] = INFINITY;
	k = 1;
	for (i = 0; i < c.m; i++) {
		/* scikit-learn: keep the first and last point and the corners (a second difference
		 * of fps or tps that is not 0); points on a straight segment go */
		if (drop_intermediate && c.m > 2 && i > 0 && i + 1 < c.m &&
		    c.fps[i + 1] - 2 * c.fps[i] + c.fps[i - 1] == 0 &&
		    c.tps[i + 1] - 2 * c.tps[i] + c.tps[i - 1] == 0)
			continue;
		out->x[k] = c.fps[i] / c.fps[c.m - 1];
		out->y[k] = c.tps[i] / c.tps[c.m - 1];
		out->thr[k] = c.thr[i];
		k++;
	}
	out->n = k;
out:
	clf_free(&c);
	return st;
}

gwb_status gwb_metrics_roc_curve(const uint8_t *pos, const double *score, size_t n,
				 bool drop_intermediate, gwb_curve *out)
{
	return roc_curve(pos, score, n, drop_intermediate, out, "roc_curve");
}

gwb_status gwb_metrics_pr_curve(const uint8_t *pos, const double *score, size_t n, gwb_curve *out)
{
	clf_curve c;
	size_t i;
	gwb_status st;
	double P;

	memset(out, 0, sizeof(*out));
	if ((st = clf_curve_make(pos, score, n, &c)))
		return st;
	if ((st = curve_alloc(out, c.m + 1)))
		goto out;
	P = c.tps[c.m - 1];
	for (i = 0; i < c.m; i++) {  /* reversed: recall decreasing */
		size_t j = c.m - 1 - i;
		double ps = c.tps[j] + c.fps[j];
		out->y[i] = ps != 0 ? c.tps[j] / ps : 0;
		out->x[i] = P == 0 ? 1.0 : c.tps[j] / P;
		out->thr[i] = c.thr[j];
	}
	out->x[c.m] = 0;
	out->y[c.m] = 1;
	out->thr[c.m] = NAN;  /* the closing point has no threshold */
out:
	clf_free(&c);
	return st;
}

/* The area of the ROC curve (trapezoids) or the average precision (the PR curve's steps). */
static gwb_status area(const uint8_t *pos, const double *score, size_t n, bool ap, double *out)
{
	gwb_curve c;
	gwb_status st;
	double a = 0;
	size_t i;

	st = ap ? gwb_metrics_pr_curve(pos, score, n, &c) : roc_curve(pos, score, n, true, &c,
								      "roc_auc");
	if (st)
		return st;
	for (i = 1; i < c.n; i++)
		a += ap ? -(c.x[i] - c.x[i - 1]) * c.y[i - 1]
			: (c.x[i] - c.x[i - 1]) * (c.y[i] + c.y[i - 1]) / 2.0;
	gwb_curve_free(&c);
	*out = ap && !(a > 0) ? 0.0 : a;
	return GWB_OK;
}

gwb_status gwb_metrics_roc_auc_binary(const uint8_t *pos, const double *score, size_t n,
				      double *out)
{
	return area(pos, score, n, false, out);
}

gwb_status gwb_metrics_average_precision(const uint8_t *pos, const double *score, size_t n,
					 double *out)
{
	return area(pos, score, n, true, out);
}

/* Rows with truth in {a, b} (b < 0: all rows): pos = (y == a), score = column `col`. */
static size_t gather(const int32_t *y, const double *proba, size_t n, int K, int a, int b, int col,
		     uint8_t *pos, double *score)
{
	size_t i, m = 0;

	for (i = 0; i < n; i++) {
		if (b >= 0 && y[i] != a && y[i] != b)
			continue;
		pos[m] = y[i] == a;
		score[m] = proba[i * (size_t)K + (size_t)col];
		m++;
	}
	return m;
}

gwb_status gwb_metrics_class_rows(const int32_t *y, size_t n, int K, size_t *cnt,
				  const char *what)
{
	size_t i;
	int k;

	memset(cnt, 0, sizeof(size_t) * (size_t)K);
	for (i = 0; i < n; i++) {
		if (y[i] < 0 || y[i] >= K)
			return gwb_error(GWB_EINVAL, "metrics.%s: row %zu: class code %d is not in "
					 "0..%d", what, i + 1, y[i], K - 1);
		cnt[y[i]]++;
	}
	for (k = 0; k < K; k++)
		if (!cnt[k])
			return gwb_error(GWB_EINVAL, "metrics.%s: class %d has no row in the truth: "
					 "its one-vs-rest score is not defined (%d probability "
					 "columns, one per class)", what, k + 1, K);
	return GWB_OK;
}

static gwb_status multi(const int32_t *y, const double *proba, size_t n, int K, bool ovo,
			gwb_avg avg, bool ap, double *out)
{
	uint8_t *pos = malloc(n + 1);
	double *score = malloc((n + 1) * sizeof(double)), s = 0, w = 0, v;
	size_t *cnt = malloc(((size_t)K + 1) * sizeof(size_t)), m;
	const char *what = ap ? "pr_auc" : "roc_auc";
	gwb_status st;
	int a, b;

	if (!pos || !score || !cnt) {
		st = gwb_error(GWB_ENOMEM, "metrics.%s: out of memory", what);
		goto out;
	}
	if ((st = gwb_metrics_class_rows(y, n, K, cnt, what)))
		goto out;
	if (!ovo) {
		for (a = 0; a < K; a++) {
			m = gather(y, proba, n, K, a, -1, a, pos, score);
			st = ap ? gwb_metrics_average_precision(pos, score, m, &v) :
				  gwb_metrics_roc_auc_binary(pos, score, m, &v);
			if (st)
				goto out;
			double wk = avg == GWB_AVG_WEIGHTED ? (double)cnt[a] : 1.0;
			s += wk * v;
			w += wk;
		}
	} else {
		for (a = 0; a < K; a++)
			for (b = a + 1; b < K; b++) {
				double va, vb;
				m = gather(y, proba, n, K, a, b, a, pos, score);
				if ((st = gwb_metrics_roc_auc_binary(pos, score, m, &va)))
					goto out;
				m = gather(y, proba, n, K, b, a, b, pos, score);
				if ((st = gwb_metrics_roc_auc_binary(pos, score, m, &vb)))
					goto out;
				double wk = avg == GWB_AVG_WEIGHTED ?
					    (double)(cnt[a] + cnt[b]) / (double)n : 1.0;
				s += wk * (va + vb) / 2;
				w += wk;
			}
	}
	*out = s / w;
out:
	free(pos);
	free(score);
	free(cnt);
	return st;
}

gwb_status gwb_metrics_roc_auc_multi(const int32_t *y, const double *proba, size_t n, int K,
				     bool ovo, gwb_avg avg, double *out)
{
	return multi(y, proba, n, K, ovo, avg, false, out);
}

gwb_status gwb_metrics_pr_auc_multi(const int32_t *y, const double *proba, size_t n, int K,
				    gwb_avg avg, double *out)
{
	return multi(y, proba, n, K, false, avg, true, out);
}

gwb_status gwb_metrics_bad_proba(const char *what, size_t row, int col, double p)
{
	return gwb_error(GWB_EINVAL, "metrics.%s: row %zu, column %d: %g is not a probability "
			 "(0..1)", what, row + 1, col + 1, p);
}

gwb_status gwb_metrics_check_codes(const int32_t *y, size_t n, int K, const char *what)
{
	size_t i;

	if (!n)
		return gwb_error(GWB_EINVAL, "metrics.%s: no rows", what);
	for (i = 0; i < n; i++)
		if (y[i] < 0 || y[i] >= K)
			return gwb_error(GWB_EINVAL, "metrics.%s: row %zu: class code %d is not in "
					 "0..%d", what, i + 1, y[i], K - 1);
	return GWB_OK;
}

static gwb_status check_proba(const int32_t *y, const double *proba, size_t n, int K,
			      const char *what)
{
	gwb_status st;
	size_t i;

	if ((st = gwb_metrics_check_codes(y, n, K, what)))
		return st;
	for (i = 0; i < n; i++)
		for (int k = 0; k < K; k++) {
			double p = proba[i * (size_t)K + (size_t)k];
			if (!(p >= 0 && p <= 1))
				return gwb_metrics_bad_proba(what, i, k, p);
		}
	return GWB_OK;
}

gwb_status gwb_metrics_log_loss(const int32_t *y, const double *proba, size_t n, int K,
				double *out)
{
	double s = 0, eps = DBL_EPSILON;
	gwb_status st;
	size_t i;

	if ((st = check_proba(y, proba, n, K, "log_loss")))
		return st;
	for (i = 0; i < n; i++) {
		double p = proba[i * (size_t)K + (size_t)y[i]];
		p = p < eps ? eps : p > 1 - eps ? 1 - eps : p;
		s += -log(p);
	}
	*out = s / (double)n;
	return GWB_OK;
}

gwb_status gwb_metrics_brier(const int32_t *y, const double *proba, size_t n, int K, double *out)
{
	double s = 0;
	gwb_status st;
	size_t i;

	if ((st = check_proba(y, proba, n, K, "brier")))
		return st;
	for (i = 0; i < n; i++) {
		double r = 0;
		for (int k = 0; k < K; k++) {
			double e = (double)(y[i] == k) - proba[i * (size_t)K + (size_t)k];
			r += e * e;
		}
		s += r;
	}
	*out = gwb_metrics_brier_finish(s, n, K);
	return GWB_OK;
}

double gwb_metrics_brier_finish(double sum, size_t n, int K)
{
	sum /= (double)n;
	return K < 3 ? sum * 0.5 : sum;
}

/* ---- regression -------------------------------------------------------------------------------- */

gwb_status gwb_metrics_nan_row(size_t row, bool truth)
{
	return gwb_error(GWB_EINVAL, "metrics: row %zu: the %s is NaN", row + 1,
			 truth ? "truth" : "prediction");
}

gwb_status gwb_metrics_truth_stats(const double *y, size_t n, double *mean, double *sst)
{
	double sy = 0, st2 = 0, m;
	size_t i;

	if (!n)
		return gwb_error(GWB_EINVAL, "metrics: no rows");
	for (i = 0; i < n; i++) {
		if (isnan(y[i]))
			return gwb_metrics_nan_row(i, true);
		sy += y[i];
	}
	m = sy / (double)n;
	for (i = 0; i < n; i++)
		st2 += (y[i] - m) * (y[i] - m);
	*mean = m;
	*sst = st2;
	return GWB_OK;
}

void gwb_metrics_regression_finish(const gwb_regression_sums *s, size_t n,
				   gwb_regression_metrics *out)
{
	out->mse = s->ss / (double)n;
	out->rmse = sqrt(out->mse);
	out->mae = s->sa / (double)n;
	out->mape = s->sm / (double)n;
	out->max_error = s->mx;
	out->r2 = n < 2 ? NAN : s->sst != 0 ? 1 - s->ss / s->sst : s->ss == 0 ? 1.0 : 0.0;
}

gwb_status gwb_metrics_regression(const double *y, const double *p, size_t n,
				  gwb_regression_metrics *out)
{
	gwb_regression_sums s = {0};
	double mean;
	gwb_status st;
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++)  /* the first row with a NaN on either side */
		if (isnan(y[i]) || isnan(p[i]))
			return gwb_metrics_nan_row(i, isnan(y[i]));
	if ((st = gwb_metrics_truth_stats(y, n, &mean, &s.sst)))
		return st;
	for (i = 0; i < n; i++) {
		double e = y[i] - p[i], a = fabs(e), ay = fabs(y[i]);
		s.ss += e * e;
		s.sa += a;
		s.sm += a / (ay > DBL_EPSILON ? ay : DBL_EPSILON);
		if (a > s.mx)
			s.mx = a;
	}
	gwb_metrics_regression_finish(&s, n, out);
	return GWB_OK;
}
