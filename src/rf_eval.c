/* rf_eval.c - a forest judged on a fold of its training data (rf_eval.h): one prediction of
 * labels and probabilities (or values), every headline metric from metrics.c; the metric names
 * rf.cv and rf.search take; views of a forest's first trees. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "metrics.h"
#include "mgpu.h"
#include "mpi.h"
#include "nearest.h"
#include "rf_eval.h"

#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
#endif

static const char *const names[GWB_RFM_COUNT + 1] = {
	"accuracy", "balanced_accuracy", "f1_macro", "f1_weighted", "precision_macro",
	"recall_macro", "roc_auc", "log_loss", "r2", "rmse", "mae", "mape", NULL,
};

const char *gwb_rf_metric_name(gwb_rf_metric m)
{
	return m >= 0 && m < GWB_RFM_COUNT ? names[m] : "?";
}

bool gwb_rf_metric_higher_better(gwb_rf_metric m)
{
	return m != GWB_RFM_LOG_LOSS && m != GWB_RFM_RMSE && m != GWB_RFM_MAE && m != GWB_RFM_MAPE;
}

bool gwb_rf_metric_for(gwb_rf_metric m, gwb_task task)
{
	return task == GWB_TASK_CLASSIFICATION ? m < GWB_RFM_R2 : m >= GWB_RFM_R2;
}

gwb_status gwb_rf_metric_parse(const char *name, gwb_task task, const char *fn, gwb_rf_metric *out)
{
	const char *list[GWB_RFM_COUNT + 1], *near;
	char known[256] = "";
	size_t n = 0;
	int m;

	for (m = 0; m < GWB_RFM_COUNT; m++) {
		if (!gwb_rf_metric_for((gwb_rf_metric)m, task))
			continue;
		if (!strcmp(name, names[m])) {
			*out = (gwb_rf_metric)m;
			return GWB_OK;
		}
		list[n++] = names[m];
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 n > 1 ? ", " : "", names[m]);
	}
	list[n] = NULL;
	for (m = 0; m < GWB_RFM_COUNT; m++)
		if (!strcmp(name, names[m]))
			return gwb_error(GWB_EINVAL, "%s: metric = \"%s\" is not for %s (these are: %s)",
					 fn, name, task == GWB_TASK_CLASSIFICATION ? "classification"
					 : "regression", known);
	near = gwb_nearest_name(name, list, n);
	return gwb_error(GWB_EINVAL, "%s: unknown metric \"%s\"%s%s%s (known: %s)", fn, name,
			 near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "", known);
}

/* Every classification metric of d (K classes) from labels and probabilities (rows x K). */
static gwb_status score_class(const gwb_dataset *d, int K, const int32_t *lab, const float *pf,
			      double *out)
{
	size_t n = d->rows, i;
	double *pd = malloc(n * (size_t)K * sizeof(double) + 1);
	int64_t *cm = malloc((size_t)K * (size_t)K * sizeof(int64_t));
	double a[3];
	gwb_status st = GWB_OK;

	if (!pd || !cm) {
		st = gwb_error(GWB_ENOMEM, "rf: out of memory judging %zu rows", n);
		goto out;
	}
	for (i = 0; i < n * (size_t)K; i++)
		pd[i] = pf[i];
	if ((st = gwb_metrics_confusion(d->y, lab, n, K, cm)))
		goto out;
	out[GWB_RFM_ACCURACY] = gwb_metrics_accuracy(cm, K);
	out[GWB_RFM_BALANCED_ACCURACY] = gwb_metrics_balanced_accuracy(cm, K);
	gwb_metrics_prf_avg(cm, K, GWB_AVG_MACRO, a);
	out[GWB_RFM_PRECISION_MACRO] = a[0];
	out[GWB_RFM_RECALL_MACRO] = a[1];
	out[GWB_RFM_F1_MACRO] = a[2];
	gwb_metrics_prf_avg(cm, K, GWB_AVG_WEIGHTED, a);
	out[GWB_RFM_F1_WEIGHTED] = a[2];
	if (K == 2) {  /* the second class is the positive one */
		uint8_t *pb = malloc(n);
		double *sc = malloc(n * sizeof(double));
		if (pb && sc) {
			for (i = 0; i < n; i++) {
				pb[i] = d->y[i] == 1;
				sc[i] = pd[i * 2 + 1];
			}
			if (gwb_metrics_roc_auc_binary(pb, sc, n, &out[GWB_RFM_ROC_AUC]))
				out[GWB_RFM_ROC_AUC] = NAN;  /* one class in this fold */
		}
		free(pb);
		free(sc);
	} else if (gwb_metrics_roc_auc_multi(d->y, pd, n, K, false, GWB_AVG_MACRO,
					     &out[GWB_RFM_ROC_AUC])) {
		out[GWB_RFM_ROC_AUC] = NAN;  /* a class without rows in this fold */
	}
	gwb_error_clear();
	if (gwb_metrics_log_loss(d->y, pd, n, K, &out[GWB_RFM_LOG_LOSS])) {
		out[GWB_RFM_LOG_LOSS] = NAN;
		gwb_error_clear();
	}
out:
	free(pd);
	free(cm);
	return st;
}

/* Every regression metric of d from predicted values. */
static gwb_status score_reg(const gwb_dataset *d, const float *v, double *out)
{
	size_t n = d->rows, i;
	double *y = malloc(n * sizeof(double) + 1), *p = malloc(n * sizeof(double) + 1);
	gwb_regression_metrics r;
	gwb_status st;

	if (!y || !p) {
		st = gwb_error(GWB_ENOMEM, "rf: out of memory judging %zu rows", n);
		goto out;
	}
	for (i = 0; i < n; i++) {
		y[i] = d->yr[i];
		p[i] = v[i];
	}
	if ((st = gwb_metrics_regression(y, p, n, &r)))
		goto out;
	out[GWB_RFM_R2] = r.r2;
	out[GWB_RFM_RMSE] = r.rmse;
	out[GWB_RFM_MAE] = r.mae;
	out[GWB_RFM_MAPE] = r.mape;
out:
	free(y);
	free(p);
	return st;
}

static void metrics_nan(double *out)
{
	int m;

	for (m = 0; m < GWB_RFM_COUNT; m++)
		out[m] = NAN;
}

gwb_status gwb_rf_eval(const gwb_forest *f, const gwb_dataset *d, int threads, double *out)
{
	size_t n = d->rows;
	gwb_status st;

	metrics_nan(out);
	if (!n)
		return gwb_error(GWB_EINVAL, "rf: no rows to judge the forest on");
	if (f->task == GWB_TASK_CLASSIFICATION) {
		int K = f->classes;
		int32_t *lab = malloc(n * sizeof(int32_t));
		float *pf = malloc(n * (size_t)K * sizeof(float));
		if (!lab || !pf)
			st = gwb_error(GWB_ENOMEM, "rf: out of memory judging %zu rows", n);
		else if (d->task != GWB_TASK_CLASSIFICATION || d->classes != K)
			st = gwb_error(GWB_EINVAL, "rf: the table's classes are not the forest's");
		/* labels from predict (its argmax over double sums), probabilities as predict_proba's */
		else if (!(st = gwb_forest_predict_labels_proba(f, d, threads, lab, pf)))
			st = score_class(d, K, lab, pf, out);
		free(lab);
		free(pf);
		return st;
	} else {
		float *v = malloc(n * sizeof(float));
		if (!v)
			st = gwb_error(GWB_ENOMEM, "rf: out of memory judging %zu rows", n);
		else if (!(st = gwb_forest_predict(f, d, threads, NULL, v)))
			st = score_reg(d, v, out);
		free(v);
		return st;
	}
}

/* The metrics of a forest of `trees` trees on d from its sums per row (rows x outputs, in
 * double: forest.c's predict_sums), finished as forest.c's predict_out finishes them: labels
 * the first argmax of the sums, probabilities and values sums / trees in float. */
static gwb_status eval_sums(const gwb_dataset *d, int trees, const double *sums, double *out)
{
	size_t n = d->rows, i, k;
	gwb_status st;

	metrics_nan(out);
	if (d->task == GWB_TASK_CLASSIFICATION) {
		size_t K = (size_t)d->classes;
		int32_t *lab = malloc(n * sizeof(int32_t) + 1);
		float *pf = malloc(n * K * sizeof(float) + 1);
		if (!lab || !pf) {
			st = gwb_error(GWB_ENOMEM, "rf: out of memory judging %zu rows", n);
		} else {
			for (i = 0; i < n; i++) {
				const double *a = sums + i * K;
				size_t best = 0;
				for (k = 1; k < K; k++)
					if (a[k] > a[best])
						best = k;
				lab[i] = (int32_t)best;
				for (k = 0; k < K; k++)
					pf[i * K + k] = (float)(a[k] / trees);
			}
			st = score_class(d, (int)K, lab, pf, out);
		}
		free(lab);
		free(pf);
	} else {
		float *v = malloc(n * sizeof(float) + 1);
		if (!v) {
			st = gwb_error(GWB_ENOMEM, "rf: out of memory judging %zu rows", n);
		} else {
			for (i = 0; i < n; i++)
				v[i] = (float)(sums[i] / trees);
			st = score_reg(d, v, out);
		}
		free(v);
	}
	return st;
}

/* fold[i] in 0..k-1. Classification is stratified: within each class, rows (in their order, or
 * shuffled) are cut into k runs whose sizes follow scikit-learn's StratifiedKFold (the sorted
 * labels dealt round-robin), so shuffle = false reproduces cross_val_score's folds. Regression:
 * k contiguous runs of the (shuffled) rows, as KFold. */
void gwb_rf_make_folds(const gwb_dataset *d, int k, bool shuffle, uint64_t seed, int *fold,
		       size_t *order)
{
	size_t n = d->rows, i;

	for (i = 0; i < n; i++)
		order[i] = i;
	if (shuffle)
		for (i = n - 1; i > 0; i--) {
			size_t j = (size_t)(gwb_rng_hash(seed, GWB_RNG_STREAM_CV, 0, i) % (i + 1)), t;
			t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
	if (d->task == GWB_TASK_CLASSIFICATION) {
		int K = d->classes, c, f;
		size_t *cnt = calloc((size_t)K + 1, sizeof(size_t));
		size_t *alloc = calloc((size_t)k * (size_t)K + 1, sizeof(size_t));
		size_t *seen = calloc((size_t)K + 1, sizeof(size_t)), pos = 0;
		if (!cnt || !alloc || !seen) {
			for (i = 0; i < n; i++)
				fold[order[i]] = (int)(i % (size_t)k);
			goto out;
		}
		for (i = 0; i < n; i++)
			cnt[d->y[i]]++;
		for (c = 0; c < K; c++)
			for (i = 0; i < cnt[c]; i++, pos++)
				alloc[(pos % (size_t)k) * (size_t)K + (size_t)c]++;
		for (i = 0; i < n; i++) {
			size_t r = order[i], s;
			c = d->y[r];
			s = seen[c]++;
			for (f = 0; f < k - 1 && s >= alloc[(size_t)f * (size_t)K + (size_t)c]; f++)
				s -= alloc[(size_t)f * (size_t)K + (size_t)c];
			fold[r] = f;
		}
out:
		free(cnt);
		free(alloc);
		free(seen);
	} else {
		size_t b = 0;
		int f;
		for (f = 0; f < k; f++) {
			size_t sz = n / (size_t)k + ((size_t)f < n % (size_t)k);
			for (i = b; i < b + sz; i++)
				fold[order[i]] = f;
			b += sz;
		}
	}
}

void gwb_forest_view(const gwb_forest *f, int n, gwb_forest *view)
{
	*view = *f;
	view->trees = n;
	view->nodes = (size_t)f->tree_offset[n];
	view->gpu_model = NULL;  /* a GPU prediction of the view uses f's device model */
	view->view_of = f->view_of ? f->view_of : f;
	view->oob_label = NULL;
	view->oob_value = NULL;
}

void gwb_forest_view_release(gwb_forest *view)
{
#ifdef GWB_HAVE_CUDA
	if (view->gpu_model)
		gwb_rf_gpu_model_free(view);
#endif
	view->gpu_model = NULL;
}

gwb_status gwb_rf_cv_grid(gwb_dataset *const *train, gwb_dataset *const *test, int k,
			  const gwb_rf_params *p, const int *depths, int nd, const int *counts,
			  int nc, double *out, gwb_rf_cv_timing *tm)
{
	gwb_rf_params q = *p;
	int f, c, e, max = 0, ncut = 0;
	int *cuts = malloc(((size_t)nd + 1) * sizeof(int));
	double *sums = NULL;
	gwb_status st = GWB_OK;
	size_t flo = 0, fhi = (size_t)k, nout = (size_t)nd * (size_t)nc * (size_t)k * GWB_RFM_COUNT;
	/* under mpirun (ranks = "all"): the folds dealt to the ranks in order, each fold's forest
	 * grown by its rank alone, then every fold's numbers summed onto every rank (one rank
	 * wrote each, the others 0: the sum is that rank's value exactly) */
	bool dealt = q.ranks && gwb_mpi_size() > 1;

	for (c = 0; c < nc; c++)
		if (counts[c] > max)
			max = counts[c];
	q.trees = max;
	q.depth = 1;
	for (e = 0; e < nd; e++)
		if (depths[e] > q.depth)
			q.depth = depths[e];
	q.oob = false;  /* the folds judge the forest; OOB is not asked for */
	q.keep = false; /* a fold's forest is whole or an error (Ctrl-C stops the search) */
	if (!cuts)
		return gwb_error(GWB_ENOMEM, "rf: out of memory");
	if (dealt) {
		gwb_deal((size_t)k, gwb_mpi_size(), gwb_mpi_rank(), &flo, &fhi);
		q.ranks = false;
		memset(out, 0, nout * sizeof(double));
	}
	/* one GPU: each fold's forest judged where it grows (the cut depths ascending, each once) */
	for (e = 0; e < nd; e++) {
		int at = 0;
		while (at < ncut && cuts[at] < depths[e])
			at++;
		if (at == ncut || cuts[at] != depths[e]) {
			memmove(cuts + at + 1, cuts + at, (size_t)(ncut - at) * sizeof(int));
			cuts[at] = depths[e];
			ncut++;
		}
	}
	{   /* one buffer of the sums for the largest fold, reused fold after fold */
		size_t most = 0;
		for (f = (int)flo; f < (int)fhi; f++)
			if (test[f]->rows > most)
				most = test[f]->rows;
		/* a rank may be dealt no fold (k < ranks): then there is nothing to hold */
		if (fhi > flo)
			most *= (size_t)(train[flo]->task == GWB_TASK_CLASSIFICATION
					 ? train[flo]->classes : 1);
		if (fhi > flo && !(sums = malloc((size_t)nc * (size_t)ncut * most * sizeof(double) + 1)))
			st = gwb_error(GWB_ENOMEM, "rf: out of memory for the folds' predictions");
	}
	for (f = (int)flo; f < (int)fhi && !st; f++) {
		gwb_forest *F = NULL;
		double t0;
		gwb_rf_judge j = {.test = test[f], .cuts = cuts, .nd = ncut, .counts = counts, .nc = nc,
				  .sums = sums};
		size_t per = test[f]->rows * (size_t)(train[f]->task == GWB_TASK_CLASSIFICATION
						       ? train[f]->classes : 1);
		if ((st = gwb_rf_train_judged(train[f], &q, &j, &F)))
			break;
		t0 = gwb_now();
		if (j.done) {
			if (tm) {
				tm->train_ms += j.total_ms;
				tm->kernel_ms += j.kernel_ms;
				tm->transfer_ms += j.transfer_ms;
				tm->forests++;
				tm->judged++;
			}
			for (e = 0; e < nd && !st; e++) {
				int at = 0;
				while (cuts[at] != depths[e])
					at++;
				for (c = 0; c < nc && !st; c++)
					st = eval_sums(test[f], counts[c],
						       sums + ((size_t)c * (size_t)ncut + (size_t)at) * per,
						       out + (((size_t)e * (size_t)nc + (size_t)c) *
							      (size_t)k + (size_t)f) * GWB_RFM_COUNT);
			}
			if (tm)
				tm->eval_ms += (gwb_now() - t0) * 1e3;
			if (st)
				break;
			continue;
		}
		if (tm) {
			tm->train_ms += F->timing.total_ms;
			tm->kernel_ms += F->timing.kernel_ms;
			tm->transfer_ms += F->timing.transfer_ms;
			tm->forests++;
		}
		for (e = 0; e < nd && !st; e++) {
			gwb_forest *D = NULL;
			if (depths[e] < q.depth &&
			    (st = gwb_forest_truncate(F, train[f], depths[e], &D)))
				break;
			for (c = 0; c < nc && !st; c++) {
				gwb_forest v;
				gwb_forest_view(D ? D : F, counts[c], &v);
				st = gwb_rf_eval(&v, test[f], q.threads,
						 out + (((size_t)e * (size_t)nc + (size_t)c) * (size_t)k +
							(size_t)f) * GWB_RFM_COUNT);
				gwb_forest_view_release(&v);
			}
			gwb_forest_free(D);
		}
		gwb_forest_free(F);
		if (tm)
			tm->eval_ms += (gwb_now() - t0) * 1e3;
		if (st)
			break;
	}
	free(sums);
	free(cuts);
	if (st)
		return st;
	return dealt ? gwb_mpi_allreduce(out, nout, GWB_MPI_SUM) : GWB_OK;
}

void gwb_rf_fold_stats(const double *v, int k, size_t stride, double *mean, double *std,
		       int *used)
{
	double m = 0, q = 0;
	int f, n = 0;

	for (f = 0; f < k; f++)
		if (!isnan(v[(size_t)f * stride])) {
			m += v[(size_t)f * stride];
			n++;
		}
	m = n ? m / n : NAN;
	for (f = 0; f < k; f++) {
		double x = v[(size_t)f * stride];
		if (!isnan(x))
			q += (x - m) * (x - m);
	}
	*mean = m;
	*std = n ? sqrt(q / n) : NAN;
	if (used)
		*used = n;
}
