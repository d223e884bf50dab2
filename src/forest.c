/* forest.c - the forest model: parameters, summary, OOB, importances, prediction, save/load,
 * JSON export, and the training dispatcher (see forest.h for the contract). */
#define _GNU_SOURCE
#include "forest.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#include "size.h"
#include "pool.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
/* "auto" trains on the GPU from this estimate up (rows x mtry x min(depth, 16) x trees): on an
 * H200 host (16 cores) the GPU won end to end from 5 MB (1,000 rows x 32 features, 100 trees,
 * depth 10: 10.3 ms against 12.2) and lost below 1 MB (iris: 4.2 ms against 1.0);
 * scripts/bench/rf_gpu.lua measures it, man/gwb.1 repeats it. */
#define RF_AUTO_MIN_BYTES GWB_RF_GPU_TRAIN_MIN_BYTES
#else
#define RF_AUTO_MIN_BYTES 0
#endif

/* ---- parameters ----------------------------------------------------------------------------- */

void gwb_rf_params_init(gwb_rf_params *p)
{
	memset(p, 0, sizeof(*p));
	p->trees = 100;
	p->depth = 32;
	p->bins = 64;
	p->max_features = GWB_MF_DEFAULT;
	p->min_leaf = 1;
	p->min_split = 2;
	p->bootstrap = true;
	p->criterion = GWB_CRIT_DEFAULT;
	p->seed = 1;
	p->backend = GWB_BACKEND_AUTO;
	p->progress = true;
	p->subtract = true;
	p->oob = true;
	gwb_gpu_set_default(&p->gpus);
}

static const char *const crit_names[] = {"default", "gini", "entropy", "mse"};

const char *gwb_rf_criterion_name(gwb_rf_criterion c)
{
	return (unsigned)c < 4 ? crit_names[c] : "?";
}

gwb_status gwb_rf_criterion_parse(const char *s, gwb_rf_criterion *out)
{
	int i;

	for (i = 1; i < 4; i++)
		if (s && !strcmp(s, crit_names[i])) {
			*out = (gwb_rf_criterion)i;
			return GWB_OK;
		}
	if (s && (!strcmp(s, "squared_error") || !strcmp(s, "mse"))) {
		*out = GWB_CRIT_MSE;
		return GWB_OK;
	}
	return gwb_error(GWB_EINVAL, "criterion must be \"gini\", \"entropy\" or \"mse\" (got \"%s\")",
			 s ? s : "(nil)");
}

int gwb_rf_mtry(const gwb_rf_params *p, int F, gwb_task task)
{
	int m;

	switch (p->max_features) {
	case GWB_MF_SQRT:
		m = (int)floor(sqrt((double)F));
		break;
	case GWB_MF_LOG2:
		m = (int)floor(log2((double)F));
		break;
	case GWB_MF_ALL:
		m = F;
		break;
	case GWB_MF_FRACTION:
		m = (int)floor(p->max_features_value * F);
		break;
	case GWB_MF_COUNT:
		m = (int)p->max_features_value;
		break;
	default:
		m = task == GWB_TASK_CLASSIFICATION ? (int)floor(sqrt((double)F)) : F;
		break;
	}
	return m < 1 ? 1 : (m > F ? F : m);
}

gwb_status gwb_rf_params_check(const gwb_rf_params *p, const gwb_dataset *d)
{
	size_t i;

	if (!d || d->rows == 0 || d->features <= 0)
		return gwb_error(GWB_EINVAL, "rf.train: the dataset is empty (%zu rows, %d features): "
				 "load or split it so that it has rows", d ? d->rows : 0,
				 d ? d->features : 0);
	if (d->no_target)
		return gwb_error(GWB_EINVAL, "rf.train: the table has no target: choose one with "
				 "d:set_target(\"column\")");
	if (p->trees < 1)
		return gwb_error(GWB_EINVAL, "rf.train: trees must be >= 1 (got %d)", p->trees);
	if (p->depth < 1 || p->depth > GWB_RF_MAX_DEPTH)
		return gwb_error(GWB_EINVAL, "rf.train: depth must be between 1 and %d (got %d)",
				 GWB_RF_MAX_DEPTH, p->depth);
	if (p->bins < 2 || p->bins > GWB_QUANT_MAX_BINS)
		return gwb_error(GWB_EINVAL, "rf.train: bins must be between 2 and 256 (got %d): codes "
				 "are one byte, one bin is kept for missing values", p->bins);
	if (p->max_features == GWB_MF_FRACTION &&
	    !(p->max_features_value > 0 && p->max_features_value <= 1))
		return gwb_error(GWB_EINVAL, "rf.train: max_features as a fraction must be in (0, 1] "
				 "(got %g)", p->max_features_value);
	if (p->max_features == GWB_MF_COUNT &&
	    !(p->max_features_value >= 1 && p->max_features_value <= d->features))
		return gwb_error(GWB_EINVAL, "rf.train: max_features as a count must be between 1 and "
				 "the %d features (got %g)", d->features, p->max_features_value);
	if ((unsigned)p->max_features > GWB_MF_COUNT)
		return gwb_error(GWB_EINVAL, "rf.train: unknown max_features kind %d", p->max_features);
	if (p->min_leaf < 1)
		return gwb_error(GWB_EINVAL, "rf.train: min_leaf must be >= 1 (got %d)", p->min_leaf);
	if (p->min_split < 2)
		return gwb_error(GWB_EINVAL, "rf.train: min_split must be >= 2 (got %d)", p->min_split);
	if (!(p->min_impurity_decrease >= 0) || isinf(p->min_impurity_decrease))
		return gwb_error(GWB_EINVAL, "rf.train: min_impurity_decrease must be a finite number "
				 ">= 0 (got %g)", p->min_impurity_decrease);
	if (p->threads < 0 || p->threads > 1024)
		return gwb_error(GWB_EINVAL, "rf.train: threads must be 0 (all cores) .. 1024 (got %d)",
				 p->threads);
	if (p->block < 0 || p->block > 1024 || (p->block && p->block % 32))
		return gwb_error(GWB_EINVAL, "rf.train: block must be a multiple of 32 up to 1024, or 0 "
				 "for the trainer's choice (got %d)", p->block);
	if ((unsigned)p->criterion > GWB_CRIT_MSE)
		return gwb_error(GWB_EINVAL, "rf.train: unknown criterion %d", p->criterion);
	if (d->task == GWB_TASK_CLASSIFICATION) {
		if (!d->y || d->classes < 1)
			return gwb_error(GWB_EINVAL, "rf.train: the dataset has no classes to learn");
		if (p->criterion == GWB_CRIT_MSE)
			return gwb_error(GWB_EINVAL, "rf.train: criterion \"mse\" is for regression, but "
					 "the target '%s' holds classes: use \"gini\" or \"entropy\"",
					 d->target ? d->target : "?");
		for (i = 0; i < d->rows; i++)
			if (d->y[i] < 0 || d->y[i] >= d->classes)
				return gwb_error(GWB_EINVAL, "rf.train: row %zu has class code %d outside "
						 "0..%d", i + 1, d->y[i], d->classes - 1);
		if (p->class_weight)
			for (i = 0; i < (size_t)d->classes; i++)
				if (!(p->class_weight[i] >= 0) || isinf(p->class_weight[i]))
					return gwb_error(GWB_EINVAL, "rf.train: class_weight of class '%s' "
							 "must be a finite number >= 0 (got %g)",
							 d->class_names && d->class_names[i] ?
							 d->class_names[i] : "?", p->class_weight[i]);
	} else {
		if (!d->yr)
			return gwb_error(GWB_EINVAL, "rf.train: the dataset has no target values");
		if (p->criterion == GWB_CRIT_GINI || p->criterion == GWB_CRIT_ENTROPY)
			return gwb_error(GWB_EINVAL, "rf.train: criterion \"%s\" is for classification, "
					 "but the target '%s' is numeric (regression): use "
					 "criterion = \"mse\", or load the target as classes",
					 gwb_rf_criterion_name(p->criterion), d->target ? d->target : "?");
		if (p->class_weight || p->class_weight_balanced)
			return gwb_error(GWB_EINVAL, "rf.train: class_weight needs a classification "
					 "target, but '%s' is numeric", d->target ? d->target : "?");
		for (i = 0; i < d->rows; i++)
			if (!isfinite(d->yr[i]))
				return gwb_error(GWB_EINVAL, "rf.train: the target '%s' is missing or not "
						 "finite at row %zu: drop such rows first",
						 d->target ? d->target : "?", i + 1);
	}
	if (p->sample_weight) {
		double s = 0;
		for (i = 0; i < d->rows; i++) {
			if (!(p->sample_weight[i] >= 0) || isinf(p->sample_weight[i]))
				return gwb_error(GWB_EINVAL, "rf.train: weights[%zu] must be a finite "
						 "number >= 0 (got %g)", i + 1, p->sample_weight[i]);
			s += p->sample_weight[i];
		}
		if (!(s > 0))
			return gwb_error(GWB_EINVAL, "rf.train: the sample weights sum to 0");
	}
	return GWB_OK;
}

/* ---- the model: lifecycle ------------------------------------------------------------------- */

gwb_status gwb_forest_new(const gwb_dataset *d, const gwb_rf_params *p, int mtry,
			  const double *class_weight, gwb_forest **out)
{
	gwb_forest *f;
	int j;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto oom;
	f->trees = p->trees;
	f->features = d->features;
	f->task = d->task;
	f->classes = d->task == GWB_TASK_CLASSIFICATION ? d->classes : 0;
	f->outputs = f->classes ? f->classes : 1;
	f->train_rows = d->rows;
	f->params = *p;
	f->params.class_weight = NULL;
	f->params.sample_weight = NULL;
	f->criterion = p->criterion;
	f->mtry = mtry;
	f->bins_used = p->bins;
	f->oob = NAN;
	f->names = calloc((size_t)d->features + 1, sizeof(char *));
	f->importance = calloc((size_t)d->features + 1, sizeof(double));
	f->class_names = calloc((size_t)f->classes + 1, sizeof(char *));
	f->class_weight = calloc((size_t)f->classes + 1, sizeof(double));
	f->tree_offset = calloc((size_t)f->trees + 1, sizeof(int64_t));
	if (!f->names || !f->importance || !f->class_names || !f->class_weight || !f->tree_offset)
		goto oom_free;
	for (j = 0; j < d->features; j++)
		if (d->names && d->names[j] && !(f->names[j] = strdup(d->names[j])))
			goto oom_free;
	for (j = 0; j < f->classes; j++) {
		if (d->class_names && d->class_names[j] &&
		    !(f->class_names[j] = strdup(d->class_names[j])))
			goto oom_free;
		f->class_weight[j] = class_weight ? class_weight[j] : 1.0;
	}
	if (d->target && !(f->target = strdup(d->target)))
		goto oom_free;
	f->cat_levels = calloc((size_t)d->features + 1, sizeof(char **));
	f->cat_count = calloc((size_t)d->features + 1, sizeof(int));
	if (!f->cat_levels || !f->cat_count)
		goto oom_free;
	for (j = 0; j < d->features; j++)
		if (d->cat_levels && d->cat_levels[j]) {
			if (!(f->cat_levels[j] = gwb_strv_copy(d->cat_levels[j], d->cat_count[j])))
				goto oom_free;
			f->cat_count[j] = d->cat_count[j];
		}
	*out = f;
	return GWB_OK;
oom_free:
	gwb_forest_free(f);
oom:
	return gwb_error(GWB_ENOMEM, "rf: out of memory for the forest's metadata");
}

static void free_nodes(gwb_forest *f)
{
	free(f->feature);
	free(f->threshold_bin);
	free(f->threshold);
	free(f->nan_left);
	free(f->left);
	free(f->right);
	free(f->count);
	free(f->weight);
	free(f->impurity);
	free(f->value);
	f->feature = NULL;
	f->threshold_bin = NULL;
	f->threshold = NULL;
	f->nan_left = NULL;
	f->left = f->right = f->count = NULL;
	f->weight = NULL;
	f->impurity = NULL;
	f->value = NULL;
	f->nodes = 0;
}

gwb_status gwb_forest_alloc_nodes(gwb_forest *f, size_t n)
{
	size_t bytes;

	free_nodes(f);
	/* (every array below is at most (outputs + 16) doubles a node) */
	if (gwb_mul3_size(n + 1, (size_t)f->outputs + 16, sizeof(double), &bytes))
		return gwb_error(GWB_ENOMEM, "rf: %zu nodes overflow memory", n);
	f->feature = calloc(n + 1, sizeof(int32_t));
	f->threshold_bin = calloc(n + 1, 1);
	f->threshold = calloc(n + 1, sizeof(float));
	f->nan_left = calloc(n + 1, 1);
	f->left = calloc(n + 1, sizeof(int32_t));
	f->right = calloc(n + 1, sizeof(int32_t));
	f->count = calloc(n + 1, sizeof(int32_t));
	f->weight = calloc(n + 1, sizeof(double));
	f->impurity = calloc(n + 1, sizeof(float));
	f->value = calloc(n * (size_t)f->outputs + 1, sizeof(float));
	if (!f->feature || !f->threshold_bin || !f->threshold || !f->nan_left || !f->left ||
	    !f->right || !f->count || !f->weight || !f->impurity || !f->value) {
		free_nodes(f);
		return gwb_error(GWB_ENOMEM, "rf: out of memory for %zu nodes (%zu bytes)", n,
				 n * (37 + 4 * (size_t)f->outputs));
	}
	f->nodes = n;
	return GWB_OK;
}

void gwb_forest_copy_nodes(gwb_forest *dst, size_t at, const gwb_forest *src, size_t from,
			   size_t n)
{
	size_t O = (size_t)dst->outputs;

	if (!n)
		return;
	memcpy(dst->feature + at, src->feature + from, n * sizeof(int32_t));
	memcpy(dst->left + at, src->left + from, n * sizeof(int32_t));
	memcpy(dst->right + at, src->right + from, n * sizeof(int32_t));
	memcpy(dst->count + at, src->count + from, n * sizeof(int32_t));
	memcpy(dst->threshold_bin + at, src->threshold_bin + from, n);
	memcpy(dst->nan_left + at, src->nan_left + from, n);
	memcpy(dst->threshold + at, src->threshold + from, n * sizeof(float));
	memcpy(dst->impurity + at, src->impurity + from, n * sizeof(float));
	memcpy(dst->weight + at, src->weight + from, n * sizeof(double));
	memcpy(dst->value + at * O, src->value + from * O, n * O * sizeof(float));
}

void gwb_forest_free(gwb_forest *f)
{
	int j;

	if (!f)
		return;
#ifdef GWB_HAVE_CUDA
	if (f->gpu_model)  /* the nodes kept on the device for prediction (rf_predict.cu) */
		gwb_rf_gpu_model_free(f);
#endif
	free_nodes(f);
	free(f->oob_label);
	free(f->oob_value);
	if (f->names)
		for (j = 0; j < f->features; j++)
			free(f->names[j]);
	if (f->class_names)
		for (j = 0; j < f->classes; j++)
			free(f->class_names[j]);
	if (f->cat_levels)
		for (j = 0; j < f->features; j++)
			gwb_strv_free(f->cat_levels[j], f->cat_count[j]);
	free(f->cat_levels);
	free(f->cat_count);
	free(f->names);
	free(f->class_names);
	free(f->target);
	free(f->class_weight);
	free(f->importance);
	free(f->tree_offset);
	free(f);
}

gwb_status gwb_forest_validate(const gwb_forest *f)
{
	int t;

	if (f->trees < 1 || f->features < 1 || f->outputs < 1 ||
	    (f->task == GWB_TASK_CLASSIFICATION) != (f->classes > 0))
		return gwb_error(GWB_ECORRUPT, "forest: impossible shape (%d trees, %d features, "
				 "%d classes)", f->trees, f->features, f->classes);
	if (f->tree_offset[0] != 0 || (size_t)f->tree_offset[f->trees] != f->nodes)
		return gwb_error(GWB_ECORRUPT, "forest: tree offsets do not cover the %zu nodes",
				 f->nodes);
	for (t = 0; t < f->trees; t++) {
		int64_t b = f->tree_offset[t], e = f->tree_offset[t + 1], n = e - b, i;
		if (n < 1 || n > INT32_MAX)
			return gwb_error(GWB_ECORRUPT, "forest: tree %d has %lld nodes", t + 1,
					 (long long)n);
		for (i = 0; i < n; i++) {
			int64_t g = b + i;
			int32_t fe = f->feature[g];
			if (fe < 0) {
				if (fe != -1 || f->left[g] != -1 || f->right[g] != -1)
					return gwb_error(GWB_ECORRUPT, "forest: tree %d node %lld is a "
							 "malformed leaf", t + 1, (long long)i);
				continue;
			}
			if (fe >= f->features || f->left[g] <= i || f->right[g] <= i ||
			    f->left[g] >= n || f->right[g] >= n || f->left[g] == f->right[g])
				return gwb_error(GWB_ECORRUPT, "forest: tree %d node %lld has a feature "
						 "or child out of range", t + 1, (long long)i);
			if (isnan(f->threshold[g]) || f->threshold[g] == -INFINITY)
				return gwb_error(GWB_ECORRUPT, "forest: tree %d node %lld has threshold "
						 "%g", t + 1, (long long)i, f->threshold[g]);
		}
	}
	return GWB_OK;
}

/* ---- prediction ----------------------------------------------------------------------------- */

/* A node packed for traversal (one 16-byte load per step): feat < 0 for a leaf, else the
 * feature with bit 30 set when NaN goes left. */
typedef struct pnode {
	int32_t feat;
	float thr;
	int32_t left, right;
} pnode;

#define PNODE_NANL 0x40000000

static pnode *pack_nodes(const gwb_forest *f)
{
	pnode *P = malloc((f->nodes + 1) * sizeof(pnode));
	size_t g;

	if (!P)
		return NULL;
	for (g = 0; g < f->nodes; g++) {
		P[g].feat = f->feature[g] < 0 ? -1 :
			    (f->feature[g] | (f->nan_left[g] ? PNODE_NANL : 0));
		P[g].thr = f->threshold[g];
		P[g].left = f->left[g];
		P[g].right = f->right[g];
	}
	return P;
}

#define PRED_BLOCK 256

typedef struct pred_job {
	const gwb_forest *f;
	const pnode *P;
	const float *X;
	size_t rows;
	double *acc;        /* rows x outputs sums over trees */
	int32_t *ntrees;    /* OOB only: trees summed per row */
	const bool *use;    /* NULL: every tree; else OOB: bootstrap counts re-derived */
	bool oob;
} pred_job;

static void pred_block(void *ctx, size_t blk, int tid)
{
	pred_job *j = ctx;
	const gwb_forest *f = j->f;
	size_t r0 = blk * PRED_BLOCK, r1 = r0 + PRED_BLOCK, i;
	int32_t node[PRED_BLOCK];
	uint16_t row[PRED_BLOCK], act[PRED_BLOCK];
	int t, k, K = f->outputs, m, na, q;
	(void)tid;

	if (r1 > j->rows)
		r1 = j->rows;
	for (t = 0; t < f->trees; t++) {
		const pnode *P = j->P + f->tree_offset[t];
		/* the rows of the block this tree predicts */
		m = 0;
		for (i = r0; i < r1; i++)
			if (!j->oob || !gwb_rf_boot_count(f->params.seed, f->params.bootstrap,
							  (uint64_t)t, i))
				row[m++] = (uint16_t)(i - r0);
		/* all rows step down together, so the loads of different rows overlap */
		for (q = 0; q < m; q++) {
			node[q] = 0;
			act[q] = (uint16_t)q;
		}
		for (na = m; na > 0;) {
			int nn = 0;
			for (q = 0; q < na; q++) {
				int a = act[q];
				pnode nd = P[node[a]];
				float x;
				int right;
				if (nd.feat < 0)
					continue;
				x = j->X[(size_t)(nd.feat & ~PNODE_NANL) * j->rows + r0 + row[a]];
				right = !((x <= nd.thr) | ((x != x) & ((nd.feat & PNODE_NANL) != 0)));
				node[a] = right ? nd.right : nd.left;
				act[nn++] = (uint16_t)a;
			}
			na = nn;
		}
		for (q = 0; q < m; q++) {
			size_t r = r0 + row[q];
			const float *v = f->value + (size_t)(f->tree_offset[t] + node[q]) * (size_t)K;
			for (k = 0; k < K; k++)
				j->acc[r * (size_t)K + (size_t)k] += v[k];
			if (j->ntrees)
				j->ntrees[r]++;
		}
	}
}

/* Sums of tree outputs per row (acc, rows x outputs, zeroed here). */
static gwb_status predict_sums(const gwb_forest *f, const float *X, size_t rows, int threads,
			       bool oob, double **acc_out, int32_t **ntrees_out)
{
	pred_job j = {.f = f, .X = X, .rows = rows, .oob = oob};

	if (threads <= 0)
		threads = gwb_cpu_count();
	j.acc = calloc(rows * (size_t)f->outputs + 1, sizeof(double));
	if (ntrees_out)
		j.ntrees = calloc(rows + 1, sizeof(int32_t));
	j.P = pack_nodes(f);
	if (!j.acc || (ntrees_out && !j.ntrees) || !j.P) {
		free(j.acc);
		free(j.ntrees);
		free((void *)j.P);
		return gwb_error(GWB_ENOMEM, "rf: out of memory predicting %zu rows", rows);
	}
	gwb_parallel_items(threads, (rows + PRED_BLOCK - 1) / PRED_BLOCK, pred_block, &j);
	free((void *)j.P);
	*acc_out = j.acc;
	if (ntrees_out)
		*ntrees_out = j.ntrees;
	return GWB_OK;
}

gwb_status gwb_forest_check_data(const gwb_forest *f, const gwb_dataset *d)
{
	if (!d || d->rows == 0)
		return gwb_error(GWB_EINVAL, "rf: the dataset to predict is empty");
	if (d->features != f->features)
		return gwb_error(GWB_EINVAL, "rf: the forest was trained on %d features but the "
				 "dataset has %d: use data with the same columns", f->features,
				 d->features);
	return GWB_OK;
}

bool gwb_forest_predict_maybe_gpu(const gwb_forest *f, const gwb_dataset *d)
{
#ifdef GWB_HAVE_CUDA
	return gwb_dataset_gpu_X(d) || gwb_backend_default == GWB_BACKEND_GPU ||
	       (double)d->rows * f->trees * 64.0 >= GWB_RF_GPU_PREDICT_MIN_BYTES;
#else
	(void)f;
	(void)d;
	return false;
#endif
}

static int argmax(const double *v, int K)
{
	int k, best = 0;

	for (k = 1; k < K; k++)
		if (v[k] > v[best])
			best = k;
	return best;
}

gwb_status gwb_forest_predict_proba(const gwb_forest *f, const gwb_dataset *d, int threads,
				    float *out)
{
	double *acc;
	size_t i, n;
	gwb_status st;

	if (f->task != GWB_TASK_CLASSIFICATION)
		return gwb_error(GWB_EINVAL, "rf: predict_proba needs a classification forest; this "
				 "one is a regression forest (use predict)");
	if ((st = gwb_forest_check_data(f, d)))
		return st;
#ifdef GWB_HAVE_CUDA
	if (gwb_forest_predict_maybe_gpu(f, d)) {
		/* on the GPU when "auto" finds the work large enough (kernels/rf_predict.cu) */
		bool done = false;
		if ((st = gwb_rf_predict_auto(f, d, out, NULL, NULL, &done)) || done)
			return st;
	}
#endif
	if ((st = predict_sums(f, d->X, d->rows, threads, false, &acc, NULL)))
		return st;
	n = d->rows * (size_t)f->outputs;
	for (i = 0; i < n; i++)
		out[i] = (float)(acc[i] / f->trees);
	free(acc);
	return GWB_OK;
}

gwb_status gwb_forest_predict(const gwb_forest *f, const gwb_dataset *d, int threads,
			      int32_t *labels, float *values)
{
	double *acc;
	size_t i;
	gwb_status st;

	if ((st = gwb_forest_check_data(f, d)))
		return st;
#ifdef GWB_HAVE_CUDA
	if (gwb_forest_predict_maybe_gpu(f, d)) {
		/* on the GPU when "auto" finds the work large enough (kernels/rf_predict.cu) */
		bool done = false;
		if ((st = gwb_rf_predict_auto(f, d, NULL, labels, values, &done)) || done)
			return st;
	}
#endif
	if ((st = predict_sums(f, d->X, d->rows, threads, false, &acc, NULL)))
		return st;
	for (i = 0; i < d->rows; i++) {
		if (f->task == GWB_TASK_CLASSIFICATION) {
			if (labels)
				labels[i] = argmax(acc + i * (size_t)f->outputs, f->outputs);
		} else if (values) {
			values[i] = (float)(acc[i] / f->trees);
		}
	}
	free(acc);
	return GWB_OK;
}

/* map[c] = f's class code for d's class code c, or -1 when f has no class of that name. */
static gwb_status class_map(const gwb_forest *f, const gwb_dataset *d, int *map)
{
	int c, k;

	for (c = 0; c < d->classes; c++) {
		const char *name = d->class_names ? d->class_names[c] : NULL;
		map[c] = -1;
		if (!name) {
			map[c] = c < f->classes ? c : -1;
			continue;
		}
		for (k = 0; k < f->classes; k++)
			if (f->class_names[k] && !strcmp(f->class_names[k], name))
				map[c] = k;
	}
	return GWB_OK;
}

/* Accuracy or R^2 of the sums acc (rows x outputs) against d's target. */
static gwb_status score_sums(const gwb_forest *f, const gwb_dataset *d, const double *acc,
			     double *out)
{
	size_t i;

	if (f->task == GWB_TASK_CLASSIFICATION) {
		int *map;
		size_t right = 0;
		if (d->task != GWB_TASK_CLASSIFICATION || !d->y)
			return gwb_error(GWB_EINVAL, "rf: score needs class labels, but the dataset's "
					 "target '%s' is numeric", d->target ? d->target : "?");
		map = calloc((size_t)d->classes + 1, sizeof(int));
		if (!map)
			return gwb_error(GWB_ENOMEM, "rf: out of memory");
		class_map(f, d, map);
		for (i = 0; i < d->rows; i++) {
			int y = d->y[i];
			if (y >= 0 && y < d->classes && map[y] >= 0 &&
			    argmax(acc + i * (size_t)f->outputs, f->outputs) == map[y])
				right++;
		}
		free(map);
		*out = (double)right / (double)d->rows;
	} else {
		double mean = 0, ss = 0, sr = 0;
		if (d->task != GWB_TASK_REGRESSION || !d->yr)
			return gwb_error(GWB_EINVAL, "rf: score of a regression forest needs a numeric "
					 "target, but the dataset's target '%s' holds classes",
					 d->target ? d->target : "?");
		for (i = 0; i < d->rows; i++)
			mean += d->yr[i];
		mean /= (double)d->rows;
		for (i = 0; i < d->rows; i++) {
			double p = acc[i] / f->trees, y = d->yr[i];
			sr += (y - p) * (y - p);
			ss += (y - mean) * (y - mean);
		}
		*out = ss > 0 ? 1 - sr / ss : (sr == 0 ? 1.0 : 0.0);
	}
	return GWB_OK;
}

#ifdef GWB_HAVE_CUDA
/* The score of per-row predictions (labels: f's class codes; values: regression means). */
static gwb_status score_pred(const gwb_forest *f, const gwb_dataset *d, const int32_t *lab,
			     const float *val, double *out)
{
	size_t i;

	if (f->task == GWB_TASK_CLASSIFICATION) {
		int *map;
		size_t right = 0;
		if (d->task != GWB_TASK_CLASSIFICATION || !d->y)
			return gwb_error(GWB_EINVAL, "rf: score needs class labels, but the dataset's "
					 "target '%s' is numeric", d->target ? d->target : "?");
		map = calloc((size_t)d->classes + 1, sizeof(int));
		if (!map)
			return gwb_error(GWB_ENOMEM, "rf: out of memory");
		class_map(f, d, map);
		for (i = 0; i < d->rows; i++) {
			int y = d->y[i];
			right += y >= 0 && y < d->classes && map[y] >= 0 && lab[i] == map[y];
		}
		free(map);
		*out = (double)right / (double)d->rows;
	} else {
		double mean = 0, ss = 0, sr = 0;
		if (d->task != GWB_TASK_REGRESSION || !d->yr)
			return gwb_error(GWB_EINVAL, "rf: score of a regression forest needs a numeric "
					 "target, but the dataset's target '%s' holds classes",
					 d->target ? d->target : "?");
		for (i = 0; i < d->rows; i++)
			mean += d->yr[i];
		mean /= (double)d->rows;
		for (i = 0; i < d->rows; i++) {
			double p = val[i], y = d->yr[i];
			sr += (y - p) * (y - p);
			ss += (y - mean) * (y - mean);
		}
		*out = ss > 0 ? 1 - sr / ss : (sr == 0 ? 1.0 : 0.0);
	}
	return GWB_OK;
}
#endif

gwb_status gwb_forest_score(const gwb_forest *f, const gwb_dataset *d, int threads, double *out)
{
	double *acc;
	gwb_status st;

	if ((st = gwb_forest_check_data(f, d)))
		return st;
#ifdef GWB_HAVE_CUDA
	if (gwb_forest_predict_maybe_gpu(f, d)) {
		/* large work: labels (or means) on the GPU, 4 bytes a row back, scored here */
		bool cls = f->task == GWB_TASK_CLASSIFICATION, done = false;
		void *p = malloc(d->rows * 4 + 4);
		if (!p)
			return gwb_error(GWB_ENOMEM, "rf: out of memory scoring %zu rows", d->rows);
		st = gwb_rf_predict_auto(f, d, NULL, cls ? p : NULL, cls ? NULL : p, &done);
		if (!st && done)
			st = score_pred(f, d, cls ? p : NULL, cls ? NULL : p, out);
		free(p);
		if (st || done)
			return st;
	}
#endif
	if ((st = predict_sums(f, d->X, d->rows, threads, false, &acc, NULL)))
		return st;
	st = score_sums(f, d, acc, out);
	free(acc);
	return st;
}

gwb_status gwb_forest_permutation_importance(const gwb_forest *f, const gwb_dataset *d,
					     int repeats, uint64_t seed, int threads,
					     double *mean, double *std)
{
	float *X = NULL, *col = NULL;
	double base, *acc, *drops = NULL;
	size_t cells, i;
	int j, r;
	gwb_status st;

	if (repeats < 1)
		return gwb_error(GWB_EINVAL, "rf: permutation importance needs repeats >= 1 (got %d)",
				 repeats);
	if ((st = gwb_forest_score(f, d, threads, &base)))
		return st;
	cells = d->rows * (size_t)d->features;
	X = malloc(cells * sizeof(float));
	col = malloc(d->rows * sizeof(float));
	drops = malloc((size_t)repeats * sizeof(double));
	if (!X || !col || !drops) {
		st = gwb_error(GWB_ENOMEM, "rf: out of memory for permutation importance (%zu bytes)",
			       cells * sizeof(float));
		goto out_free;
	}
	memcpy(X, d->X, cells * sizeof(float));
	for (j = 0; j < d->features; j++) {
		float *c = X + (size_t)j * d->rows;
		double m = 0, v = 0;
		memcpy(col, c, d->rows * sizeof(float));
		for (r = 0; r < repeats; r++) {
			double s;
			/* Fisher-Yates with the counter RNG. */
			memcpy(c, col, d->rows * sizeof(float));
			for (i = d->rows - 1; i > 0; i--) {
				uint64_t h = gwb_rng_hash(seed, GWB_RNG_STREAM_PERM,
							  ((uint64_t)j << 32) | (uint64_t)r, i);
				size_t k = (size_t)(h % (i + 1));
				float tmp = c[i];
				c[i] = c[k];
				c[k] = tmp;
			}
			if (gwb_intr_pending()) {
				st = gwb_error(GWB_EINTR, "rf: permutation importance interrupted");
				goto out_free;
			}
			if ((st = predict_sums(f, X, d->rows, threads, false, &acc, NULL)))
				goto out_free;
			st = score_sums(f, d, acc, &s);
			free(acc);
			if (st)
				goto out_free;
			drops[r] = base - s;
			m += drops[r];
		}
		m /= repeats;
		for (r = 0; r < repeats; r++)
			v += (drops[r] - m) * (drops[r] - m);
		mean[j] = m;
		std[j] = sqrt(v / repeats);
		memcpy(c, col, d->rows * sizeof(float));
	}
out_free:
	free(X);
	free(col);
	free(drops);
	return st;
}

/* ---- summary, importance, OOB --------------------------------------------------------------- */

gwb_status gwb_forest_oob_set(gwb_forest *f, const gwb_dataset *d, const int32_t *labels,
			      const double *values)
{
	size_t i, n = 0, rows = d->rows;

	free(f->oob_label);
	free(f->oob_value);
	f->oob_label = NULL;
	f->oob_value = NULL;
	f->oob = NAN;
	f->oob_rows = 0;
	if (f->task == GWB_TASK_CLASSIFICATION) {
		size_t right = 0;
		if (!labels)
			return gwb_error(GWB_EINVAL, "rf: OOB labels missing");
		if (!(f->oob_label = malloc(rows * sizeof(int32_t) + 1)))
			return gwb_error(GWB_ENOMEM, "rf: out of memory for %zu OOB predictions", rows);
		memcpy(f->oob_label, labels, rows * sizeof(int32_t));
		for (i = 0; i < rows; i++) {
			if (labels[i] < 0)
				continue;
			n++;
			right += labels[i] == d->y[i];
		}
		f->oob = n ? (double)right / (double)n : NAN;
	} else {
		double mean = 0, ss = 0, sr = 0;
		if (!values)
			return gwb_error(GWB_EINVAL, "rf: OOB values missing");
		if (!(f->oob_value = malloc(rows * sizeof(float) + 1)))
			return gwb_error(GWB_ENOMEM, "rf: out of memory for %zu OOB predictions", rows);
		for (i = 0; i < rows; i++) {
			f->oob_value[i] = (float)values[i];
			if (!isnan(values[i])) {
				n++;
				mean += d->yr[i];
			}
		}
		if (n) {
			mean /= (double)n;
			for (i = 0; i < rows; i++) {
				double p = values[i], y = d->yr[i];
				if (isnan(p))
					continue;
				sr += (y - p) * (y - p);
				ss += (y - mean) * (y - mean);
			}
		}
		f->oob = n && ss > 0 ? 1 - sr / ss : NAN;
	}
	f->oob_rows = n;
	return GWB_OK;
}

gwb_status gwb_forest_oob_cpu(gwb_forest *f, const gwb_dataset *d, int threads)
{
	double *acc, *val = NULL;
	int32_t *nt, *lab = NULL;
	size_t i;
	gwb_status st;
	int K = f->outputs;

	if ((st = predict_sums(f, d->X, d->rows, threads, true, &acc, &nt)))
		return st;
	if (f->task == GWB_TASK_CLASSIFICATION)
		lab = malloc(d->rows * sizeof(int32_t) + 1);
	else
		val = malloc(d->rows * sizeof(double) + 1);
	if (!lab && !val) {
		st = gwb_error(GWB_ENOMEM, "rf: out of memory for %zu OOB predictions", d->rows);
		goto out_free;
	}
	for (i = 0; i < d->rows; i++) {
		if (lab)
			lab[i] = nt[i] ? argmax(acc + i * (size_t)K, K) : -1;
		else
			val[i] = nt[i] ? acc[i] / nt[i] : NAN;
	}
	st = gwb_forest_oob_set(f, d, lab, val);
out_free:
	free(lab);
	free(val);
	free(acc);
	free(nt);
	return st;
}

gwb_status gwb_forest_finish(gwb_forest *f, const gwb_dataset *d, int threads)
{
	double *imp, tot_all = 0;
	int t, j, used = 0;
	gwb_status st;

	if ((st = gwb_forest_validate(f)))
		return st;
	imp = calloc((size_t)f->features + 1, sizeof(double));
	if (!imp)
		return gwb_error(GWB_ENOMEM, "rf: out of memory");
	f->leaves = 0;
	f->depth_reached = 0;
	memset(f->importance, 0, (size_t)f->features * sizeof(double));
	for (t = 0; t < f->trees; t++) {
		int64_t b = f->tree_offset[t], n = f->tree_offset[t + 1] - b, i;
		int32_t *dep = calloc((size_t)n, sizeof(int32_t));
		double tot = 0;
		if (!dep) {
			free(imp);
			return gwb_error(GWB_ENOMEM, "rf: out of memory");
		}
		memset(imp, 0, (size_t)f->features * sizeof(double));
		for (i = 0; i < n; i++) {
			int64_t g = b + i;
			if (f->feature[g] < 0) {
				f->leaves++;
				if (dep[i] > f->depth_reached)
					f->depth_reached = dep[i];
				continue;
			}
			dep[f->left[g]] = dep[f->right[g]] = dep[i] + 1;
			{
				int64_t l = b + f->left[g], r = b + f->right[g];
				double dec = f->weight[g] * f->impurity[g] -
					     f->weight[l] * f->impurity[l] -
					     f->weight[r] * f->impurity[r];
				imp[f->feature[g]] += dec > 0 ? dec : 0;
			}
		}
		free(dep);
		for (j = 0; j < f->features; j++)
			tot += imp[j];
		if (n > 1 && tot > 0) {
			used++;
			for (j = 0; j < f->features; j++)
				f->importance[j] += imp[j] / tot;
		}
	}
	free(imp);
	for (j = 0; j < f->features; j++)
		tot_all += f->importance[j];
	for (j = 0; j < f->features && used && tot_all > 0; j++)
		f->importance[j] /= tot_all;
	if (f->oob_label || f->oob_value)
		return GWB_OK;  /* the trainer computed OOB already (the GPU's, on the device) */
	f->oob = NAN;
	f->oob_rows = 0;
	if (d && f->params.bootstrap && f->params.oob) {
		double t0 = gwb_now();
		st = gwb_forest_oob_cpu(f, d, threads);
		f->timing.oob_ms = (gwb_now() - t0) * 1e3;
		if (st)
			return st;
	}
	return GWB_OK;
}

/* ---- the training dispatcher ---------------------------------------------------------------- */

gwb_status gwb_rf_train(const gwb_dataset *d, const gwb_rf_params *p0, gwb_forest **out)
{
	gwb_rf_params p = *p0;
	gwb_rf_job job = {0};
	gwb_quant *q = NULL;
	gwb_forest *f = NULL;
	double *cw = NULL, t0 = gwb_now(), t1, bytes;
	gwb_backend b;
	char why[160];
	gwb_status st;
	size_t i;
	int k;
	bool hybrid_cpu;

	*out = NULL;
	if ((st = gwb_rf_params_check(&p, d)))
		return st;
	if (p.criterion == GWB_CRIT_DEFAULT)
		p.criterion = d->task == GWB_TASK_CLASSIFICATION ? GWB_CRIT_GINI : GWB_CRIT_MSE;
	if (p.gpus.n < 1)  /* params not from gwb_rf_params_init: device 0 alone */
		gwb_gpu_set_default(&p.gpus);
	if (!p.threads)
		p.threads = gwb_cpu_count();
	job.d = d;
	job.p = &p;
	job.mtry = gwb_rf_mtry(&p, d->features, d->task);
	job.threads = p.threads;
	job.criterion = p.criterion;
	job.tree_first = p.tree_first;
	if (p.tree_first && p.hybrid)  /* the hybrid queue numbers trees from 0 */
		return gwb_error(GWB_EINVAL, "rf: backend = \"hybrid\" cannot grow trees after "
				 "existing ones; use \"cpu\" or \"gpu\"");
	if (d->task == GWB_TASK_CLASSIFICATION) {
		cw = calloc((size_t)d->classes + 1, sizeof(double));
		if (!cw)
			return gwb_error(GWB_ENOMEM, "rf.train: out of memory");
		for (k = 0; k < d->classes; k++)
			cw[k] = p.class_weight ? p.class_weight[k] : 1.0;
		if (p.class_weight_balanced) {
			size_t *cnt = calloc((size_t)d->classes + 1, sizeof(size_t));
			if (!cnt) {
				free(cw);
				return gwb_error(GWB_ENOMEM, "rf.train: out of memory");
			}
			for (i = 0; i < d->rows; i++)
				cnt[d->y[i]]++;
			for (k = 0; k < d->classes; k++)
				cw[k] = cnt[k] ? (double)d->rows / ((double)d->classes * (double)cnt[k]) : 0;
			free(cnt);
		}
		job.class_weight = cw;
	} else {
		double sw = 0, sy = 0;
		for (i = 0; i < d->rows; i++) {
			double w = p.sample_weight ? p.sample_weight[i] : 1.0;
			sw += w;
			sy += w * d->yr[i];
		}
		job.y_center = sw > 0 ? sy / sw : 0;
	}

	/* What the GPU path would read from device memory: the codes of mtry features per level. */
	bytes = (double)d->rows * job.mtry * (p.depth < 16 ? p.depth : 16) * p.trees;
	hybrid_cpu = p.hybrid && p.hybrid_cpu_front;
	if (p.hybrid && !hybrid_cpu) {
		/* hybrid: the GPU and the CPU together; without a GPU the CPU alone (said in why),
		 * or an error when the caller requires the GPU */
		if (gwb_gpu_available()) {
			b = GWB_BACKEND_GPU;
			snprintf(why, sizeof(why), "hybrid: the GPU and %d CPU threads grow the trees "
				 "together", p.threads > 1 ? p.threads - 1 : 1);
		} else if (p.require_gpu) {
			st = gwb_error(GWB_ENODEV, "rf.train: backend = \"hybrid\" with require_gpu = "
				       "true, but there is no GPU: %s", gwb_gpu_unavailable_reason());
			goto out_free;
		} else {
			p.hybrid = false;
			b = GWB_BACKEND_CPU;
			snprintf(why, sizeof(why), "hybrid asked for, but no GPU (%.80s): trained on the "
				 "CPU alone", gwb_gpu_unavailable_reason());
		}
	} else if (hybrid_cpu) {
		b = GWB_BACKEND_CPU;
		snprintf(why, sizeof(why), "hybrid with two CPU pools (hybrid_front = \"cpu\")");
	} else if (p.gpus.cpu) {
		b = GWB_BACKEND_CPU;  /* tests: CPU stand-ins for the devices of gpus (mgpu.h) */
		snprintf(why, sizeof(why), "%d CPU stand-ins for GPUs (gpu_standin = \"cpu\")",
			 p.gpus.n);
	} else if ((st = gwb_backend_choose(p.gpus.n > 1 && p.backend == GWB_BACKEND_AUTO ?
					    GWB_BACKEND_GPU : p.backend, bytes, RF_AUTO_MIN_BYTES,
					    &b, why, sizeof(why)))) {
		goto out_free;  /* several devices asked for: the GPU, whatever the size */
	} else if (b == GWB_BACKEND_GPU && p.backend == GWB_BACKEND_AUTO && p.gpus.n <= 1 &&
		   gwb_backend_default == GWB_BACKEND_AUTO &&
		   gwb_rf_hybrid_pays(&p, d->rows, job.mtry, why, sizeof(why))) {
		p.hybrid = true;  /* "auto": the CPU's share pays (rf_hybrid.c's rule, in why) */
	}
	t1 = gwb_now();
#ifdef GWB_HAVE_CUDA
	if (b == GWB_BACKEND_GPU)
		st = GWB_OK;  /* job.q = NULL: the GPU trainer quantizes on the device (rf.h) */
	else
#endif
	if (p.hybrid)
		st = GWB_OK;  /* the hybrid trainer builds the host codes itself, beside the GPU */
	else
		st = gwb_quant_build(d, p.bins, p.quantile_sample, p.seed, p.threads, &q);
	if (st)
		goto out_free;
	job.q = q;
	if ((st = gwb_forest_new(d, &p, job.mtry, cw, &f)))
		goto out_free;
	f->timing.quantize_ms = (gwb_now() - t1) * 1e3;
	f->backend = b;
	snprintf(f->backend_why, sizeof(f->backend_why), "%s", why);
	if (p.hybrid) {
		st = gwb_rf_train_hybrid(&job, f, hybrid_cpu);  /* rf_hybrid.c */
	} else {
		switch (b) {
#ifdef GWB_HAVE_CUDA
		case GWB_BACKEND_GPU:
			st = gwb_rf_train_devices(&job, f);  /* rf_multi.c: gpus = 1 is rf_train.cu */
			break;
#endif
		default:
			st = p.gpus.cpu ? gwb_rf_train_devices(&job, f) : gwb_rf_train_cpu(&job, f);
			break;
		}
	}
	if (st)
		goto out_free;
	if (f->trees < p.trees) {  /* keep = true and Ctrl-C: the trees finished so far */
		f->trees_asked = p.trees;
		f->params.trees = f->trees;
	}
	gwb_quant_free(q);
	q = NULL;
	if ((st = gwb_forest_finish(f, d, p.threads)))
		goto out_free;
	f->timing.total_ms = (gwb_now() - t0) * 1e3;
	/* kernels and copies overlap on their streams: what is left is at least 0 */
	f->timing.host_ms = f->timing.total_ms - f->timing.kernel_ms - f->timing.transfer_ms;
	f->timing.overlap_ms = 0;
	if (f->timing.host_ms < 0) {
		f->timing.overlap_ms = -f->timing.host_ms;
		f->timing.host_ms = 0;
	}
	*out = f;
	f = NULL;
out_free:
	gwb_forest_free(f);
	gwb_quant_free(q);
	free(cw);
	return st;
}

/* ---- files ---------------------------------------------------------------------------------- */

static const char magic[10] = "GWBFOREST";  /* 9 letters and a NUL */

typedef struct wbuf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
} wbuf;

static void put(wbuf *b, const void *v, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t c = b->cap ? b->cap : 4096;
		unsigned char *q;
		while (c < b->n + n)
			c *= 2;
		if (!(q = realloc(b->p, c))) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(wbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_f64(wbuf *b, double v) { put(b, &v, 8); }

static void put_str(wbuf *b, const char *s)
{
	if (!s) {
		put_u32(b, UINT32_MAX);
		return;
	}
	put_u32(b, (uint32_t)strlen(s));
	put(b, s, strlen(s));
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

gwb_status gwb_forest_save(const gwb_forest *f, const char *path)
{
	wbuf b = {0};
	const gwb_rf_params *p = &f->params;
	size_t N = f->nodes;
	uint64_t len, sum;
	uint32_t ver = GWB_FOREST_VERSION;
	gwb_afile af;
	gwb_status st;
	FILE *fp;
	int j;
	bool ok;

	put_u32(&b, (uint32_t)f->task);
	put_u32(&b, (uint32_t)f->features);
	put_u32(&b, (uint32_t)f->classes);
	put_u32(&b, (uint32_t)f->outputs);
	put_u32(&b, (uint32_t)f->criterion);
	put_u32(&b, (uint32_t)f->trees);
	put_u64(&b, f->train_rows);
	put_u64(&b, N);
	/* parameters (no pointers, no thread count) */
	put_u32(&b, (uint32_t)p->depth);
	put_u32(&b, (uint32_t)p->bins);
	put_u32(&b, (uint32_t)p->max_features);
	put_f64(&b, p->max_features_value);
	put_u32(&b, (uint32_t)p->min_leaf);
	put_u32(&b, (uint32_t)p->min_split);
	put_f64(&b, p->min_impurity_decrease);
	put_u32(&b, p->bootstrap);
	put_u32(&b, p->class_weight_balanced);
	put_u64(&b, p->seed);
	put_u32(&b, (uint32_t)p->block);
	put_u64(&b, p->quantile_sample);
	put_u32(&b, (uint32_t)f->mtry);
	put_u32(&b, (uint32_t)f->backend);
	put_u32(&b, p->subtract);  /* version 2 */
	/* summary */
	put_u32(&b, (uint32_t)f->depth_reached);
	put_u64(&b, f->leaves);
	put_f64(&b, f->oob);
	put_u64(&b, f->oob_rows);
	/* names */
	put_str(&b, f->target);
	for (j = 0; j < f->features; j++)
		put_str(&b, f->names[j]);
	for (j = 0; j < f->classes; j++)
		put_str(&b, f->class_names[j]);
	put(&b, f->class_weight, (size_t)f->classes * sizeof(double));
	put(&b, f->importance, (size_t)f->features * sizeof(double));
	/* categorical levels (version 3) */
	for (j = 0; j < f->features; j++) {
		int k, n = f->cat_levels && f->cat_levels[j] ? f->cat_count[j] : -1;
		put_u32(&b, n < 0 ? UINT32_MAX : (uint32_t)n);
		for (k = 0; k < n; k++)
			put_str(&b, f->cat_levels[j][k]);
	}
	/* nodes */
	put(&b, f->tree_offset, ((size_t)f->trees + 1) * sizeof(int64_t));
	put(&b, f->feature, N * sizeof(int32_t));
	put(&b, f->threshold_bin, N);
	put(&b, f->threshold, N * sizeof(float));
	put(&b, f->nan_left, N);
	put(&b, f->left, N * sizeof(int32_t));
	put(&b, f->right, N * sizeof(int32_t));
	put(&b, f->count, N * sizeof(int32_t));
	put(&b, f->weight, N * sizeof(double));
	put(&b, f->impurity, N * sizeof(float));
	put(&b, f->value, N * (size_t)f->outputs * sizeof(float));
	if (b.oom) {
		free(b.p);
		return gwb_error(GWB_ENOMEM, "rf: out of memory writing %s", path);
	}
	len = b.n;
	sum = fnv1a(b.p, b.n);
	if ((st = gwb_afile_open(&af, path, "rf: save"))) {
		free(b.p);
		return st;
	}
	fp = af.fp;
	ok = fwrite(magic, 1, sizeof(magic), fp) == sizeof(magic) && fwrite(&ver, 4, 1, fp) == 1 &&
	     fwrite(&len, 8, 1, fp) == 1 && fflush(fp) == 0;
	st = ok ? gwb_afile_write(&af, b.p, b.n) : GWB_OK;   /* (stops on Ctrl-C) */
	ok = ok && !st && fwrite(&sum, 8, 1, fp) == 1;
	free(b.p);
	if (!ok) {
		if (!st)
			st = gwb_error(GWB_EIO, "rf: writing %s failed: %s; it was left as it was",
				       path, strerror(errno));
		gwb_afile_abort(&af);
		return st;
	}
	return gwb_afile_commit(&af);
}

typedef struct rbuf {
	const unsigned char *p;
	size_t n, at;
	bool bad;
} rbuf;

static void get(rbuf *b, void *v, size_t n)
{
	if (b->bad || n > b->n - b->at) {
		b->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, b->p + b->at, n);
	b->at += n;
}

static uint32_t get_u32(rbuf *b) { uint32_t v; get(b, &v, 4); return v; }
static uint64_t get_u64(rbuf *b) { uint64_t v; get(b, &v, 8); return v; }
static double get_f64(rbuf *b) { double v; get(b, &v, 8); return v; }

static char *get_str(rbuf *b)
{
	uint32_t n = get_u32(b);
	char *s;

	if (n == UINT32_MAX || b->bad)
		return NULL;
	if (n > b->n - b->at) {
		b->bad = true;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		b->bad = true;
		return NULL;
	}
	get(b, s, n);
	s[n] = '\0';
	return s;
}

/* A count read from a file, each item at least `per` bytes, against the `left` bytes that
 * can hold them: checked before anything is allocated for them. */
static gwb_status fits(const char *path, const char *field, uint64_t count, uint64_t per,
		       uint64_t left)
{
	if (count <= left / per)
		return GWB_OK;
	return gwb_error(GWB_ECORRUPT, "rf.load: %s is corrupt: %s = %llu, but %llu bytes hold at "
			 "most %llu (%llu bytes each)", path, field, (unsigned long long)count,
			 (unsigned long long)left, (unsigned long long)(left / per),
			 (unsigned long long)per);
}

/* The version-3 level lists: per feature a u32 count (UINT32_MAX: numeric), then the labels. */
static gwb_status load_levels(rbuf *b, gwb_forest *f, const char *path)
{
	gwb_status st;
	int j, k;

	f->cat_levels = calloc((size_t)f->features + 1, sizeof(char **));
	f->cat_count = calloc((size_t)f->features + 1, sizeof(int));
	if (!f->cat_levels || !f->cat_count)
		return gwb_error(GWB_ENOMEM, "rf.load: out of memory reading %s", path);
	for (j = 0; j < f->features; j++) {
		uint32_t n = get_u32(b);
		if (b->bad)
			break;
		if (n == UINT32_MAX)
			continue;
		/* each label takes at least its 4-byte length */
		if ((st = fits(path, "levels", n, 4, b->n - b->at)))
			return st;
		if (n > INT32_MAX - 1)
			break;
		if (!(f->cat_levels[j] = calloc((size_t)n + 1, sizeof(char *))))
			return gwb_error(GWB_ENOMEM, "rf.load: out of memory reading %s", path);
		f->cat_count[j] = (int)n;
		for (k = 0; k < (int)n && !b->bad; k++)
			f->cat_levels[j][k] = get_str(b);
	}
	if (b->bad || j < f->features)
		return gwb_error(GWB_ECORRUPT, "rf.load: %s has a valid checksum but an impossible "
				 "layout in its categorical levels (written by another program?)",
				 path);
	return GWB_OK;
}

gwb_status gwb_forest_load(const char *path, gwb_forest **out)
{
	FILE *fp;
	unsigned char *data = NULL, head[22];
	long size;
	uint32_t ver;
	uint64_t len, sum;
	rbuf b = {0};
	gwb_forest *f = NULL;
	gwb_status st = GWB_OK;
	size_t N;
	int j;

	*out = NULL;
	fp = fopen(path, "rb");
	if (!fp)
		return gwb_error(GWB_EIO, "rf.load: cannot open %s: %s", path, strerror(errno));
	if (fseek(fp, 0, SEEK_END) || (size = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
		fclose(fp);
		return gwb_error(GWB_EIO, "rf.load: cannot read %s: %s", path, strerror(errno));
	}
	if (size < (long)sizeof(head) || fread(head, 1, sizeof(head), fp) != sizeof(head) ||
	    memcmp(head, magic, sizeof(magic))) {
		fclose(fp);
		return gwb_error(GWB_EPARSE, "rf.load: %s is not a gwb forest file (no GWBFOREST "
				 "header): save one with f:save(path)", path);
	}
	memcpy(&ver, head + 10, 4);
	memcpy(&len, head + 14, 8);
	if (ver < 1 || ver > GWB_FOREST_VERSION) {
		fclose(fp);
		return gwb_error(GWB_EPARSE, "rf.load: %s is a forest file of version %u; this gwb "
				 "reads versions 1 to %d (a newer gwb wrote it? load it there)", path,
				 ver, GWB_FOREST_VERSION);
	}
	if (len != (uint64_t)size - sizeof(head) - 8) {
		fclose(fp);
		return gwb_error(GWB_ECORRUPT, "rf.load: %s is truncated or has trailing bytes (%ld "
				 "bytes, the header says %llu): the file is damaged", path, size,
				 (unsigned long long)(len + sizeof(head) + 8));
	}
	data = malloc(len + 1);
	if (!data) {
		fclose(fp);
		return gwb_error(GWB_ENOMEM, "rf.load: out of memory for %s (%llu bytes)", path,
				 (unsigned long long)len);
	}
	if (fread(data, 1, len, fp) != len || fread(&sum, 8, 1, fp) != 1) {
		fclose(fp);
		free(data);
		return gwb_error(GWB_ECORRUPT, "rf.load: %s is truncated", path);
	}
	fclose(fp);
	if (fnv1a(data, len) != sum) {
		free(data);
		return gwb_error(GWB_ECORRUPT, "rf.load: %s failed its checksum: the file is damaged",
				 path);
	}
	b.p = data;
	b.n = len;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto oom;
	f->task = (gwb_task)get_u32(&b);
	f->features = (int)get_u32(&b);
	f->classes = (int)get_u32(&b);
	f->outputs = (int)get_u32(&b);
	f->criterion = (gwb_rf_criterion)get_u32(&b);
	f->trees = (int)get_u32(&b);
	f->train_rows = get_u64(&b);
	N = get_u64(&b);
	if (b.bad || f->features < 1 || f->features > (1 << 24) || f->classes < 0 ||
	    f->classes > (1 << 24) || f->trees < 1 || f->trees > (1 << 24) ||
	    f->outputs != (f->classes ? f->classes : 1) || (unsigned)f->task > 1 ||
	    (unsigned)f->criterion > GWB_CRIT_MSE)
		goto corrupt;
	if ((st = fits(path, "features", (uint64_t)f->features, 4 + 8, len)) ||
	    (st = fits(path, "classes", (uint64_t)f->classes, 4 + 8, len)) ||
	    (st = fits(path, "trees", (uint64_t)f->trees + 1, 8, len)) ||
	    (st = fits(path, "nodes", N, 34 + 4 * (uint64_t)f->outputs, len)))
		goto out_free;
	gwb_rf_params_init(&f->params);
	f->params.trees = f->trees;
	f->params.criterion = f->criterion;
	f->params.depth = (int)get_u32(&b);
	f->params.bins = (int)get_u32(&b);
	f->params.max_features = (gwb_rf_mf)get_u32(&b);
	f->params.max_features_value = get_f64(&b);
	f->params.min_leaf = (int)get_u32(&b);
	f->params.min_split = (int)get_u32(&b);
	f->params.min_impurity_decrease = get_f64(&b);
	f->params.bootstrap = get_u32(&b) != 0;
	f->params.class_weight_balanced = get_u32(&b) != 0;
	f->params.seed = get_u64(&b);
	f->params.block = (int)get_u32(&b);
	f->params.quantile_sample = get_u64(&b);
	f->params.threads = 0;
	f->params.progress = false;
	f->mtry = (int)get_u32(&b);
	f->backend = (gwb_backend)get_u32(&b);
	f->file_version = (int)ver;
	if (ver >= 2) {
		uint32_t sub = get_u32(&b);
		if (sub > 1)
			goto corrupt;
		f->params.subtract = sub != 0;
	}
	f->bins_used = f->params.bins;
	f->depth_reached = (int)get_u32(&b);
	f->leaves = get_u64(&b);
	f->oob = get_f64(&b);
	f->oob_rows = get_u64(&b);
	snprintf(f->backend_why, sizeof(f->backend_why), "loaded from %s", path);
	f->names = calloc((size_t)f->features + 1, sizeof(char *));
	f->importance = calloc((size_t)f->features + 1, sizeof(double));
	f->class_names = calloc((size_t)f->classes + 1, sizeof(char *));
	f->class_weight = calloc((size_t)f->classes + 1, sizeof(double));
	f->tree_offset = calloc((size_t)f->trees + 1, sizeof(int64_t));
	if (!f->names || !f->importance || !f->class_names || !f->class_weight || !f->tree_offset)
		goto oom;
	f->target = get_str(&b);
	for (j = 0; j < f->features; j++)
		f->names[j] = get_str(&b);
	for (j = 0; j < f->classes; j++)
		f->class_names[j] = get_str(&b);
	get(&b, f->class_weight, (size_t)f->classes * sizeof(double));
	get(&b, f->importance, (size_t)f->features * sizeof(double));
	if (ver >= 3 && (st = load_levels(&b, f, path)))
		goto out_free;
	get(&b, f->tree_offset, ((size_t)f->trees + 1) * sizeof(int64_t));
	if (b.bad)
		goto corrupt;
	/* every node takes 34 bytes and 4 per output: a count beyond what is left is a lie */
	if ((st = fits(path, "nodes", N, 34 + 4 * (uint64_t)f->outputs, len - b.at)))
		goto out_free;
	if ((unsigned)f->backend > GWB_BACKEND_GPU ||
	    (unsigned)f->params.max_features > GWB_MF_COUNT)
		goto corrupt;
	if ((st = gwb_forest_alloc_nodes(f, N)))
		goto out_free;
	get(&b, f->feature, N * sizeof(int32_t));
	get(&b, f->threshold_bin, N);
	get(&b, f->threshold, N * sizeof(float));
	get(&b, f->nan_left, N);
	get(&b, f->left, N * sizeof(int32_t));
	get(&b, f->right, N * sizeof(int32_t));
	get(&b, f->count, N * sizeof(int32_t));
	get(&b, f->weight, N * sizeof(double));
	get(&b, f->impurity, N * sizeof(float));
	get(&b, f->value, N * (size_t)f->outputs * sizeof(float));
	if (b.bad || b.at != b.n)
		goto corrupt;
	if ((st = gwb_forest_validate(f))) {
		char why[256];
		snprintf(why, sizeof(why), "%s", gwb_errmsg());  /* not formatted into itself */
		st = gwb_error(GWB_ECORRUPT, "rf.load: %s: %s", path, why);
		goto out_free;
	}
	free(data);
	*out = f;
	return GWB_OK;
corrupt:
	st = gwb_error(GWB_ECORRUPT, "rf.load: %s has a valid checksum but an impossible layout "
		       "(written by another program?)", path);
	goto out_free;
oom:
	st = gwb_error(GWB_ENOMEM, "rf.load: out of memory reading %s", path);
out_free:
	if (f && !f->names)
		f->features = 0;
	if (f && !f->class_names)
		f->classes = 0;
	gwb_forest_free(f);
	free(data);
	return st;
}

static void json_str(FILE *fp, const char *s)
{
	if (!s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (size_t n = strlen(s), k; *s; s += k, n -= k) {
		unsigned char c = (unsigned char)*s;
		k = gwb_utf8_seq((const unsigned char *)s, n);
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20 || !k)
			fprintf(fp, "\\u%04x", c);   /* a control, or a byte of no valid UTF-8 */
		else
			fwrite(s, 1, k, fp);
		if (!k)
			k = 1;
	}
	fputc('"', fp);
}

static void json_num(FILE *fp, double v)
{
	if (isnan(v))
		fputs("null", fp);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", fp);
	else
		fprintf(fp, "%.9g", v);
}

gwb_status gwb_forest_export_json(const gwb_forest *f, const char *path)
{
	gwb_afile af;
	FILE *fp;
	int t, j, k;
	gwb_status st;

	if ((st = gwb_afile_open(&af, path, "rf: export_json")))
		return st;
	fp = af.fp;
	/* "version" is the JSON layout's own (1), not the binary file's */
	fprintf(fp, "{\"format\": \"gwb-forest\", \"version\": 1, \"task\": \"%s\", ",
		f->task == GWB_TASK_CLASSIFICATION ? "classification" : "regression");
	fputs("\"target\": ", fp);
	json_str(fp, f->target);
	fputs(", \"features\": [", fp);
	for (j = 0; j < f->features; j++) {
		if (j)
			fputs(", ", fp);
		json_str(fp, f->names[j]);
	}
	fputs("], \"classes\": [", fp);
	for (j = 0; j < f->classes; j++) {
		if (j)
			fputs(", ", fp);
		json_str(fp, f->class_names[j]);
	}
	fprintf(fp, "], \"criterion\": \"%s\", \"oob\": ", gwb_rf_criterion_name(f->criterion));
	json_num(fp, f->oob);
	fputs(", \"importance\": [", fp);
	for (j = 0; j < f->features; j++) {
		if (j)
			fputs(", ", fp);
		json_num(fp, f->importance[j]);
	}
	fputs("],\n\"trees\": [\n", fp);
	for (t = 0; t < f->trees; t++) {
		int64_t b = f->tree_offset[t], n = f->tree_offset[t + 1] - b, i;
		if (gwb_intr_pending() || ferror(fp))
			break;   /* commit says which */
		fprintf(fp, "%s{\"tree\": %d, \"nodes\": [\n", t ? ",\n" : "", t + 1);
		for (i = 0; i < n; i++) {
			int64_t g = b + i;
			fprintf(fp, "  {\"id\": %lld, ", (long long)i);
			if (f->feature[g] >= 0) {
				fprintf(fp, "\"feature\": %d, \"name\": ", f->feature[g]);
				json_str(fp, f->names[f->feature[g]]);
				fputs(", \"threshold\": ", fp);
				json_num(fp, f->threshold[g]);
				fprintf(fp, ", \"bin\": %d, \"nan_left\": %s, \"left\": %d, "
					"\"right\": %d, ", f->threshold_bin[g],
					f->nan_left[g] ? "true" : "false", f->left[g], f->right[g]);
			} else {
				fputs("\"leaf\": true, ", fp);
			}
			fprintf(fp, "\"count\": %d, \"weight\": ", f->count[g]);
			json_num(fp, f->weight[g]);
			fputs(", \"impurity\": ", fp);
			json_num(fp, f->impurity[g]);
			fputs(", \"value\": ", fp);
			if (f->classes) {
				fputc('[', fp);
				for (k = 0; k < f->outputs; k++) {
					if (k)
						fputs(", ", fp);
					json_num(fp, f->value[(size_t)g * (size_t)f->outputs + (size_t)k]);
				}
				fputc(']', fp);
			} else {
				json_num(fp, f->value[g]);
			}
			fprintf(fp, "}%s\n", i + 1 < n ? "," : "");
		}
		fputs("]}", fp);
	}
	fputs("\n]}\n", fp);
	return gwb_afile_commit(&af);   /* (reports a write error, refuses on Ctrl-C) */
}
