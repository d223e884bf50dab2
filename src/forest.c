/* forest.c - the forest model: parameters, summary, OOB, importances, prediction (see forest.h
 * for the contract; rf.c trains one, forest_io.c saves, loads and exports it). */
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
	p->ranks = true;
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
	if (gwb_dataset_text_check(d, "rf.train"))
		return GWB_EINVAL;
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

gwb_status gwb_forest_truncate(const gwb_forest *f, const gwb_dataset *d, int depth,
			       gwb_forest **out)
{
	gwb_rf_params p = f->params;
	gwb_forest *g = NULL;
	int32_t *dep = NULL;
	size_t keep = 0, maxn = 0, at = 0;
	gwb_status st;
	int t;

	*out = NULL;
	if (depth < 1 || depth > GWB_RF_MAX_DEPTH)
		return gwb_error(GWB_EINVAL, "rf: a forest cut at depth %d (1 to %d)", depth,
				 GWB_RF_MAX_DEPTH);
	/* Breadth-first order puts every node of depth <= depth before the deeper ones, so each
	 * tree's cut is a prefix of its nodes: count them. */
	for (t = 0; t < f->trees; t++) {
		size_t n = (size_t)(f->tree_offset[t + 1] - f->tree_offset[t]);
		if (n > maxn)
			maxn = n;
	}
	if (!(dep = calloc(maxn + 1, sizeof(int32_t))))
		return gwb_error(GWB_ENOMEM, "rf: out of memory");
	for (t = 0; t < f->trees; t++) {
		int64_t b = f->tree_offset[t], n = f->tree_offset[t + 1] - b, i;
		for (i = 0; i < n && dep[i] <= depth; i++) {
			keep++;
			if (f->feature[b + i] >= 0)
				dep[f->left[b + i]] = dep[f->right[b + i]] = dep[i] + 1;
		}
		memset(dep, 0, (size_t)n * sizeof(int32_t));
	}
	p.depth = depth;
	p.trees = f->trees;
	if ((st = gwb_forest_new(d, &p, f->mtry, f->class_weight, &g)) ||
	    (st = gwb_forest_alloc_nodes(g, keep)))
		goto out;
	g->params = f->params;
	g->params.depth = depth;
	g->bins_used = f->bins_used;
	g->backend = f->backend;
	snprintf(g->backend_why, sizeof(g->backend_why), "%s", f->backend_why);
	for (t = 0; t < f->trees; t++) {
		int64_t b = f->tree_offset[t], n = f->tree_offset[t + 1] - b, i;
		g->tree_offset[t] = (int64_t)at;
		for (i = 0; i < n && dep[i] <= depth; i++)
			if (f->feature[b + i] >= 0)
				dep[f->left[b + i]] = dep[f->right[b + i]] = dep[i] + 1;
		gwb_forest_copy_nodes(g, at, f, (size_t)b, (size_t)i);
		for (int64_t j = 0; j < i; j++)
			if (dep[j] == depth && g->feature[at + (size_t)j] >= 0) {
				size_t x = at + (size_t)j;  /* a leaf now, as a tree grown to depth */
				g->feature[x] = -1;
				g->left[x] = g->right[x] = -1;
				g->threshold_bin[x] = 0;
				g->threshold[x] = 0;
				g->nan_left[x] = 0;
			}
		at += (size_t)i;
		memset(dep, 0, (size_t)n * sizeof(int32_t));
	}
	g->tree_offset[f->trees] = (int64_t)at;
	st = gwb_forest_finish(g, NULL, 1);
out:
	free(dep);
	if (st)
		gwb_forest_free(g);
	else
		*out = g;
	return st;
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

/* The one prediction under predict, predict_proba and predict_labels_proba: on the GPU where
 * "auto" finds the work large enough (kernels/rf_predict.cu), else one sum of the trees per row
 * on the CPU. Classification fills labels (the first argmax of the double sums) and proba
 * (sums / trees), regression values; each output may be NULL. */
static gwb_status predict_out(const gwb_forest *f, const gwb_dataset *d, int threads,
			      int32_t *labels, float *proba, float *values)
{
	double *acc;
	size_t i, K = (size_t)f->outputs;
	gwb_status st;

	if ((st = gwb_forest_check_data(f, d)))
		return st;
#ifdef GWB_HAVE_CUDA
	if (gwb_forest_predict_maybe_gpu(f, d)) {
		bool done = false;
		if ((st = gwb_rf_predict_auto(f, d, proba, labels, values, &done)) || done)
			return st;
	}
#endif
	if ((st = predict_sums(f, d->X, d->rows, threads, false, &acc, NULL)))
		return st;
	for (i = 0; i < d->rows; i++) {
		const double *a = acc + i * K;
		if (f->task != GWB_TASK_CLASSIFICATION) {
			if (values)
				values[i] = (float)(a[0] / f->trees);
			continue;
		}
		if (labels)
			labels[i] = argmax(a, (int)K);
		for (size_t k = 0; proba && k < K; k++)
			proba[i * K + k] = (float)(a[k] / f->trees);
	}
	free(acc);
	return GWB_OK;
}

gwb_status gwb_forest_predict_proba(const gwb_forest *f, const gwb_dataset *d, int threads,
				    float *out)
{
	if (f->task != GWB_TASK_CLASSIFICATION)
		return gwb_error(GWB_EINVAL, "rf: predict_proba needs a classification forest; this "
				 "one is a regression forest (use predict)");
	return predict_out(f, d, threads, NULL, out, NULL);
}

gwb_status gwb_forest_predict(const gwb_forest *f, const gwb_dataset *d, int threads,
			      int32_t *labels, float *values)
{
	return predict_out(f, d, threads, labels, NULL,
			   f->task == GWB_TASK_CLASSIFICATION ? NULL : values);
}

gwb_status gwb_forest_predict_labels_proba(const gwb_forest *f, const gwb_dataset *d,
					   int threads, int32_t *labels, float *proba)
{
	if (f->task != GWB_TASK_CLASSIFICATION)
		return gwb_error(GWB_EINVAL, "rf: labels and probabilities need a classification "
				 "forest; this one is a regression forest (use predict)");
	return predict_out(f, d, threads, labels, proba, NULL);
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
