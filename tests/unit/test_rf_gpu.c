/* test_rf_gpu.c - the GPU forest against the CPU reference (kernels/rf_train.cu,
 * kernels/rf_predict.cu): node-for-node equality on small forests, accuracy / R^2 parity on
 * iris, digits, diabetes and a synthetic 100k x 32 set, NaN handling, batches, sibling
 * histogram subtraction (same trees with and without), prediction (block and atomic votes),
 * the OOB computed on the device against the CPU's, and bad options. Every test skips when
 * no GPU is usable. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "dataset.h"
#include "forest.h"
#include "gpu.h"
#include "synth.h"

#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
#endif

#define NEED_GPU()                                                                   \
	do {                                                                         \
		if (!gpu_ok()) {                                                     \
			print_message("skip: no GPU (%s)\n", gwb_gpu_unavailable_reason()); \
			skip();                                                      \
		}                                                                    \
	} while (0)

static bool gpu_ok(void)
{
#ifdef GWB_HAVE_CUDA
	return gwb_gpu_available();
#else
	return false;
#endif
}

static const char *dataset_path(const char *name)
{
	static char buf[512];
	const char *root = getenv("GWB_ROOT");
	snprintf(buf, sizeof(buf), "%s/datasets/%s", root ? root : ".", name);
	return buf;
}

static gwb_dataset *load(const char *name, gwb_task task)
{
	gwb_csv_opts o;
	gwb_dataset *d = NULL;

	gwb_csv_opts_init(&o);
	o.task = (int)task;
	o.target_index = 0;
	if (gwb_csv_load(dataset_path(name), &o, &d, NULL)) {
		/* tests may run from the build folder */
		char alt[600];
		snprintf(alt, sizeof(alt), "../../%s", dataset_path(name));
		if (gwb_csv_load(alt, &o, &d, NULL))
			fail_msg("cannot load %s: %s", name, gwb_errmsg());
	}
	return d;
}

static gwb_dataset *synth(size_t rows, int features, int classes, bool regression,
			  uint64_t seed)
{
	gwb_synth_opts o;
	gwb_dataset *d = NULL;

	gwb_synth_opts_init(&o, regression ? GWB_SYNTH_REGRESSION : GWB_SYNTH_CLASSIFICATION);
	o.rows = rows;
	o.features = features;
	o.informative = features / 2;
	o.redundant = 0;
	if (!regression)
		o.classes = classes;
	o.seed = seed;
	assert_int_equal(gwb_synth(&o, &d), GWB_OK);
	return d;
}

/* rows with i % 5 != 0 train, the others test */
static void split(const gwb_dataset *d, gwb_dataset **tr, gwb_dataset **te)
{
	size_t *a = malloc(d->rows * sizeof(size_t)), *b = malloc(d->rows * sizeof(size_t));
	size_t na = 0, nb = 0, i;

	for (i = 0; i < d->rows; i++) {
		if (i % 5)
			a[na++] = i;
		else
			b[nb++] = i;
	}
	assert_int_equal(gwb_dataset_take(d, a, na, tr), GWB_OK);
	assert_int_equal(gwb_dataset_take(d, b, nb, te), GWB_OK);
	free(a);
	free(b);
}

static gwb_forest *train(const gwb_dataset *d, gwb_rf_params *p, gwb_backend b)
{
	gwb_forest *f = NULL;
	gwb_status st;

	p->backend = b;
	p->progress = false;
	st = gwb_rf_train(d, p, &f);
	if (st)
		fail_msg("train (%s): %s", gwb_backend_name(b), gwb_errmsg());
	assert_int_equal(f->backend, b);
	return f;
}

/* Every node equal: structure, split, counts, weights, values. */
static void assert_same_forest(const gwb_forest *a, const gwb_forest *b, bool exact_weights)
{
	size_t g;
	int t, k;

	assert_int_equal(a->trees, b->trees);
	for (t = 0; t <= a->trees; t++)
		if (a->tree_offset[t] != b->tree_offset[t])
			fail_msg("tree %d starts at node %lld (CPU) and %lld (GPU)", t,
				 (long long)a->tree_offset[t], (long long)b->tree_offset[t]);
	assert_int_equal(a->nodes, b->nodes);
	for (g = 0; g < a->nodes; g++) {
		if (a->feature[g] != b->feature[g] || a->threshold_bin[g] != b->threshold_bin[g] ||
		    a->nan_left[g] != b->nan_left[g] || a->left[g] != b->left[g] ||
		    a->right[g] != b->right[g] || a->count[g] != b->count[g])
			fail_msg("node %zu differs: CPU feature %d bin %d nan_left %d children %d,%d "
				 "count %d; GPU feature %d bin %d nan_left %d children %d,%d count %d",
				 g, a->feature[g], a->threshold_bin[g], a->nan_left[g], a->left[g],
				 a->right[g], a->count[g], b->feature[g], b->threshold_bin[g],
				 b->nan_left[g], b->left[g], b->right[g], b->count[g]);
		if (a->feature[g] >= 0 && a->threshold[g] != b->threshold[g])
			fail_msg("node %zu: threshold %.9g (CPU) vs %.9g (GPU): edges differ", g,
				 a->threshold[g], b->threshold[g]);
		if (exact_weights) {
			assert_true(a->weight[g] == b->weight[g]);
			assert_true(a->impurity[g] == b->impurity[g]);
			for (k = 0; k < a->outputs; k++)
				assert_true(a->value[g * a->outputs + k] == b->value[g * b->outputs + k]);
		} else {
			assert_true(fabs(a->weight[g] - b->weight[g]) <= 1e-5 * (1 + fabs(a->weight[g])));
		}
	}
}

static double score(const gwb_forest *f, const gwb_dataset *d)
{
	double s = 0;
	assert_int_equal(gwb_forest_score(f, d, 0, &s), GWB_OK);
	return s;
}

/* ---- node-for-node equality ------------------------------------------------------------------ */

static void same_nodes(const gwb_dataset *d, gwb_rf_params *p, bool exact)
{
	gwb_forest *a = train(d, p, GWB_BACKEND_CPU), *b = train(d, p, GWB_BACKEND_GPU);

	assert_same_forest(a, b, exact);
	assert_true(a->oob == b->oob || (isnan(a->oob) && isnan(b->oob)));
	gwb_forest_free(a);
	gwb_forest_free(b);
}

static void test_gpu_nodes_iris(void **state)
{
	gwb_dataset *d;
	gwb_rf_params p;
	(void)state;

	NEED_GPU();
	d = load("iris.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.trees = 8;
	same_nodes(d, &p, true);
	p.criterion = GWB_CRIT_ENTROPY;
	p.max_features = GWB_MF_ALL;
	p.min_leaf = 3;
	p.bins = 16;
	same_nodes(d, &p, true);
	gwb_dataset_free(d);
}

static void test_gpu_nodes_digits(void **state)
{
	gwb_dataset *d;
	gwb_rf_params p;
	(void)state;

	NEED_GPU();
	d = load("digits.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.trees = 6;
	p.depth = 12;  /* digits has constant pixels: the feature draw goes past mtry */
	same_nodes(d, &p, true);
	p.bootstrap = false;
	p.min_split = 10;
	p.block = 128;
	same_nodes(d, &p, true);
	gwb_dataset_free(d);
}

/* rf.search judges every depth of a grid by cutting the deepest forest (gwb_forest_truncate):
 * on the GPU too, a forest grown without a depth limit and cut at k is node for node the
 * forest the GPU grows to depth k (and the CPU's). */
static void test_gpu_truncate_is_shallow_forest(void **state)
{
	gwb_dataset *d;
	gwb_rf_params p;
	gwb_forest *deep, *cut, *direct, *cpu;
	(void)state;

	NEED_GPU();
	d = load("digits.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.trees = 6;
	p.depth = GWB_RF_MAX_DEPTH;
	deep = train(d, &p, GWB_BACKEND_GPU);
	assert_true(deep->depth_reached >= 8);
	for (int k = 2; k <= 10; k += 2) {
		p.depth = k;
		direct = train(d, &p, GWB_BACKEND_GPU);
		cpu = train(d, &p, GWB_BACKEND_CPU);
		assert_int_equal(gwb_forest_truncate(deep, d, k, &cut), GWB_OK);
		assert_same_forest(direct, cut, true);
		assert_same_forest(cpu, cut, true);
		gwb_forest_free(direct);
		gwb_forest_free(cpu);
		gwb_forest_free(cut);
	}
	gwb_forest_free(deep);
	gwb_dataset_free(d);
}

/* 20,000 rows: nodes of several chunks (global histograms, last-block search), NaN in
 * two features, 256 bins and several batches. */
static void test_gpu_nodes_large_nan(void **state)
{
	gwb_dataset *d;
	gwb_rf_params p;
	size_t i;
	(void)state;

	NEED_GPU();
	d = synth(20000, 12, 3, false, 7);
	for (i = 0; i < d->rows; i += 7)
		d->X[i] = NAN;                       /* feature 0 */
	for (i = 3; i < d->rows; i += 11)
		d->X[5 * d->rows + i] = NAN;         /* feature 5 */
	gwb_rf_params_init(&p);
	p.trees = 6;
	p.depth = 9;
	p.bins = 256;
	same_nodes(d, &p, true);
	setenv("GWB_RF_GPU_BATCH", "2", 1);
	p.max_features = GWB_MF_ALL;
	p.depth = 6;
	same_nodes(d, &p, true);
	unsetenv("GWB_RF_GPU_BATCH");
	gwb_dataset_free(d);
}

/* 60 classes at 256 bins: one feature's histogram is 61 x 256 cells, so the 4 drawn features
 * do not fit in shared memory together: blocks per feature group, every node through its
 * global histogram. */
static void test_gpu_nodes_feature_groups(void **state)
{
	gwb_synth_opts o;
	gwb_dataset *d = NULL;
	gwb_rf_params p;
	(void)state;

	NEED_GPU();
	gwb_synth_opts_init(&o, GWB_SYNTH_CLASSIFICATION);
	o.rows = 6000;
	o.features = 16;
	o.informative = 10;
	o.redundant = 0;
	o.classes = 60;
	o.clusters_per_class = 1;
	o.seed = 11;
	assert_int_equal(gwb_synth(&o, &d), GWB_OK);
	gwb_rf_params_init(&p);
	p.trees = 4;
	p.depth = 8;
	p.bins = 256;
	same_nodes(d, &p, true);
	gwb_dataset_free(d);
}

/* Float weights (class_weight balanced) and regression: sums differ in the last bits, so
 * splits may differ at near ties; the structure of the first levels must still agree. */
static void test_gpu_weighted_and_regression(void **state)
{
	gwb_dataset *d, *tr, *te;
	gwb_rf_params p;
	gwb_forest *a, *b;
	(void)state;

	NEED_GPU();
	d = load("iris.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.trees = 4;
	p.class_weight_balanced = true;
	a = train(d, &p, GWB_BACKEND_CPU);
	b = train(d, &p, GWB_BACKEND_GPU);
	assert_int_equal(a->feature[0], b->feature[0]);
	assert_int_equal(a->threshold_bin[0], b->threshold_bin[0]);
	assert_true(fabs(score(a, d) - score(b, d)) <= 0.02);
	gwb_forest_free(a);
	gwb_forest_free(b);
	gwb_dataset_free(d);

	d = load("diabetes.csv", GWB_TASK_REGRESSION);
	split(d, &tr, &te);
	gwb_rf_params_init(&p);
	p.trees = 60;
	a = train(tr, &p, GWB_BACKEND_CPU);
	b = train(tr, &p, GWB_BACKEND_GPU);
	assert_int_equal(a->feature[0], b->feature[0]);
	print_message("diabetes R2: cpu %.4f gpu %.4f (oob %.4f %.4f)\n", score(a, te),
		      score(b, te), a->oob, b->oob);
	assert_true(fabs(score(a, te) - score(b, te)) <= 0.01);
	assert_true(fabs(a->oob - b->oob) <= 0.01);
	gwb_forest_free(a);
	gwb_forest_free(b);
	gwb_dataset_free(tr);
	gwb_dataset_free(te);
	gwb_dataset_free(d);
}

/* ---- sibling histogram subtraction ----------------------------------------------------------- */

#ifdef GWB_HAVE_CUDA
/* Train on the GPU without and with subtraction; the trees must be the same (exact: node for
 * node, weights included, when the histograms are integer counts). Returns the stats of the
 * run with subtraction. */
static gwb_rf_sub_stats sub_pair(const gwb_dataset *d, gwb_rf_params *p, bool exact)
{
	gwb_rf_sub_stats st;
	gwb_forest *a, *b;

	p->subtract = false;
	a = train(d, p, GWB_BACKEND_GPU);
	gwb_rf_gpu_sub_stats(&st);
	assert_false(st.active);
	assert_int_equal(st.derived, 0);
	p->subtract = true;
	b = train(d, p, GWB_BACKEND_GPU);
	gwb_rf_gpu_sub_stats(&st);
	if (exact) {
		assert_same_forest(a, b, true);
	} else {
		/* float/double sums: the last bits may differ, so near ties may split otherwise;
		 * the root and the predictions must agree */
		assert_int_equal(a->feature[0], b->feature[0]);
		assert_int_equal(a->threshold_bin[0], b->threshold_bin[0]);
		assert_true(fabs(score(a, d) - score(b, d)) <= 0.01);
	}
	gwb_forest_free(a);
	gwb_forest_free(b);
	return st;
}
#endif

static void test_gpu_subtract(void **state)
{
#ifdef GWB_HAVE_CUDA
	gwb_dataset *d;
	gwb_rf_params p;
	gwb_rf_sub_stats st;
	size_t i;
	bool light = getenv("GWB_RF_GPU_LIGHT") != NULL;  /* under compute-sanitizer: smaller */
	static const double cw[3] = {1, 2.5, 1};
	(void)state;

	NEED_GPU();
	/* iris, every feature drawn: derive every node it can (min rows 1), and against the CPU */
	d = load("iris.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.trees = 8;
	p.max_features = GWB_MF_ALL;
	setenv("GWB_RF_GPU_SUB_MIN", "1", 1);
	st = sub_pair(d, &p, true);
	assert_true(st.active);
	assert_int_equal(st.min_rows, 1);
	assert_true(st.derived > 0);
	assert_true(st.kept >= st.derived);
	assert_int_equal(st.fallbacks, 0);
	p.subtract = true;
	same_nodes(d, &p, true);
	/* sqrt features: not valid, not used */
	p.max_features = GWB_MF_SQRT;
	p.subtract = true;
	gwb_forest_free(train(d, &p, GWB_BACKEND_GPU));
	gwb_rf_gpu_sub_stats(&st);
	assert_false(st.active);
	assert_int_equal(st.derived, 0);
	/* class weights that are not all 1: float histograms (iris's balanced weights are all
	 * exactly 1 and keep integer counts), still deriving every node it can */
	p.max_features = GWB_MF_ALL;
	p.class_weight = cw;
	st = sub_pair(d, &p, false);
	assert_true(st.active);
	assert_int_equal(st.min_rows, 1);
	assert_true(st.derived > 0);
	p.class_weight = NULL;
	unsetenv("GWB_RF_GPU_SUB_MIN");
	gwb_dataset_free(d);

	/* digits at the default min rows: the top levels derive */
	if (!light) {
		d = load("digits.csv", GWB_TASK_CLASSIFICATION);
		gwb_rf_params_init(&p);
		p.trees = 4;
		p.depth = 8;
		p.max_features = GWB_MF_ALL;
		st = sub_pair(d, &p, true);
		print_message("digits: min rows %d, kept %zu, derived %zu\n", st.min_rows, st.kept,
			      st.derived);
		assert_true(st.derived > 0);
		gwb_dataset_free(d);
	}

	/* 20,000 rows with NaN, 256 bins, several chunks per node and two batches; then a budget
	 * of three kept histograms per level: the levels that keep more build every node */
	d = synth(20000, 12, 3, false, 7);
	for (i = 0; i < d->rows; i += 7)
		d->X[i] = NAN;
	gwb_rf_params_init(&p);
	p.trees = light ? 2 : 4;
	p.depth = light ? 5 : 8;
	p.bins = 256;
	p.max_features = GWB_MF_ALL;
	setenv("GWB_RF_GPU_BATCH", "2", 1);
	st = sub_pair(d, &p, true);
	assert_true(st.derived > 0);
	assert_int_equal(st.fallbacks, 0);
	/* two trees a batch: level 0 keeps 2 roots, level 1 cannot keep its 4 nodes as parents
	 * but keeps the 2 smaller siblings its 2 derived nodes need */
	setenv("GWB_RF_GPU_SUB_BUDGET", "147456", 1);  /* 3 x 12 features x 256 bins x 4 x 4 B */
	st = sub_pair(d, &p, true);
	print_message("budget of 3: kept %zu, derived %zu, levels without %zu\n", st.kept,
		      st.derived, st.fallbacks);
	assert_true(st.fallbacks > 0);
	assert_true(st.derived > 0);
	/* a budget below one histogram: nothing kept, nothing derived, the same trees */
	setenv("GWB_RF_GPU_SUB_BUDGET", "1000", 1);
	st = sub_pair(d, &p, true);
	assert_true(st.active);
	assert_int_equal(st.kept, 0);
	assert_int_equal(st.derived, 0);
	assert_true(st.fallbacks > 0);
	unsetenv("GWB_RF_GPU_SUB_BUDGET");
	unsetenv("GWB_RF_GPU_BATCH");
	p.subtract = true;
	same_nodes(d, &p, true);
	gwb_dataset_free(d);

	if (light)
		return;
	/* regression: all features by default; double sums */
	d = load("diabetes.csv", GWB_TASK_REGRESSION);
	gwb_rf_params_init(&p);
	p.trees = 20;
	setenv("GWB_RF_GPU_SUB_MIN", "8", 1);  /* 442 rows: below the default's reach */
	st = sub_pair(d, &p, false);
	unsetenv("GWB_RF_GPU_SUB_MIN");
	assert_true(st.active);
	assert_true(st.derived > 0);
	gwb_dataset_free(d);
#else
	(void)state;
	skip();
#endif
}

/* ---- accuracy parity ------------------------------------------------------------------------- */

static void parity(gwb_dataset *d, int trees, int depth, double tol, const char *name)
{
	gwb_dataset *tr, *te;
	gwb_rf_params p;
	gwb_forest *a, *b;
	double sa, sb;

	split(d, &tr, &te);
	gwb_rf_params_init(&p);
	p.trees = trees;
	p.depth = depth;
	a = train(tr, &p, GWB_BACKEND_CPU);
	b = train(tr, &p, GWB_BACKEND_GPU);
	sa = score(a, te);
	sb = score(b, te);
	print_message("%s: cpu %.4f gpu %.4f (grow %.1f / %.1f ms, kernels %.1f ms)\n", name, sa,
		      sb, a->timing.grow_ms, b->timing.grow_ms, b->timing.kernel_ms);
	assert_true(fabs(sa - sb) <= tol);
	gwb_forest_free(a);
	gwb_forest_free(b);
	gwb_dataset_free(tr);
	gwb_dataset_free(te);
}

static void test_gpu_parity_accuracy(void **state)
{
	gwb_dataset *d;
	(void)state;

	NEED_GPU();
	if (getenv("GWB_RF_GPU_LIGHT")) {  /* under compute-sanitizer: the other tests suffice */
		print_message("skip: GWB_RF_GPU_LIGHT set\n");
		skip();
	}
	d = load("iris.csv", GWB_TASK_CLASSIFICATION);
	parity(d, 100, 32, 0.01, "iris");
	gwb_dataset_free(d);
	d = load("digits.csv", GWB_TASK_CLASSIFICATION);
	parity(d, 100, 32, 0.01, "digits");
	gwb_dataset_free(d);
	d = synth(100000, 32, 2, false, 1);
	parity(d, 50, 10, 0.01, "synthetic 100k x 32");
	gwb_dataset_free(d);
	d = synth(20000, 16, 0, true, 3);
	parity(d, 40, 12, 0.01, "synthetic regression 20k x 16");
	gwb_dataset_free(d);
}

/* ---- prediction ------------------------------------------------------------------------------ */

static void test_gpu_predict(void **state)
{
#ifdef GWB_HAVE_CUDA
	gwb_dataset *d, *tr, *te;
	gwb_rf_params p;
	gwb_forest *f;
	float *pc, *pg, *pa, *vc, *vg;
	int32_t *lc, *lg;
	size_t i, n;
	int k, K, bad = 0;
	gwb_rf_predict_stats st;
	(void)state;

	NEED_GPU();
	d = synth(30000, 20, 4, false, 5);
	for (i = 0; i < d->rows; i += 13)
		d->X[2 * d->rows + i] = NAN;
	split(d, &tr, &te);
	gwb_rf_params_init(&p);
	p.trees = 40;
	p.depth = 14;
	f = train(tr, &p, GWB_BACKEND_CPU);
	n = te->rows;
	K = f->outputs;
	pc = malloc(n * K * sizeof(float));
	pg = malloc(n * K * sizeof(float));
	pa = malloc(n * K * sizeof(float));
	lc = malloc(n * sizeof(int32_t));
	lg = malloc(n * sizeof(int32_t));
	assert_int_equal(gwb_forest_predict_proba(f, te, 0, pc), GWB_OK);
	assert_int_equal(gwb_forest_predict(f, te, 0, lc, NULL), GWB_OK);
	assert_int_equal(gwb_rf_predict_gpu(f, te, 0, GWB_RF_VOTE_BLOCK, pg, lg, NULL, &st), GWB_OK);
	assert_int_equal(gwb_rf_predict_gpu(f, te, 64, GWB_RF_VOTE_ATOMIC, pa, NULL, NULL, NULL),
			 GWB_OK);
	for (i = 0; i < n; i++) {
		float top = -1, second = -1;
		for (k = 0; k < K; k++) {
			float v = pc[i * K + k];
			assert_true(fabsf(v - pg[i * K + k]) <= 1e-5f);
			assert_true(fabsf(v - pa[i * K + k]) <= 1e-5f);
			if (v > top) {
				second = top;
				top = v;
			} else if (v > second) {
				second = v;
			}
		}
		if (top - second > 1e-5f)
			bad += lc[i] != lg[i];
	}
	assert_int_equal(bad, 0);
	assert_true(st.kernel_ms > 0);
	gwb_forest_free(f);

	/* regression means */
	gwb_dataset_free(d);
	gwb_dataset_free(tr);
	gwb_dataset_free(te);
	d = synth(8000, 10, 0, true, 2);
	split(d, &tr, &te);
	gwb_rf_params_init(&p);
	p.trees = getenv("GWB_RF_GPU_LIGHT") ? 5 : 30;
	f = train(tr, &p, GWB_BACKEND_GPU);
	n = te->rows;
	vc = malloc(n * sizeof(float));
	vg = malloc(n * sizeof(float));
	assert_int_equal(gwb_forest_predict(f, te, 0, NULL, vc), GWB_OK);
	assert_int_equal(gwb_rf_predict_gpu(f, te, 0, GWB_RF_VOTE_BLOCK, NULL, NULL, vg, NULL),
			 GWB_OK);
	for (i = 0; i < n; i++)
		assert_true(fabsf(vc[i] - vg[i]) <= 1e-4f * (1 + fabsf(vc[i])));
	free(vc);
	free(vg);
	gwb_forest_free(f);
	free(pc);
	free(pg);
	free(pa);
	free(lc);
	free(lg);
	gwb_dataset_free(d);
	gwb_dataset_free(tr);
	gwb_dataset_free(te);
#else
	(void)state;
	skip();
#endif
}

/* ---- out of bag on the device ---------------------------------------------------------------- */

/* The GPU trainer's OOB (computed on the device from the codes, bootstrap counts regenerated)
 * against the CPU's OOB of the same forest (floats, gwb_forest_oob_cpu): the same score and
 * the same prediction for every row. */
static void same_oob(const gwb_dataset *d, gwb_rf_params *p, const char *name)
{
	gwb_forest *f = train(d, p, GWB_BACKEND_GPU);
	size_t i, n = d->rows, bad = 0;
	double oob = f->oob;
	int32_t *lab = NULL;
	float *val = NULL;

	assert_true(f->oob_label || f->oob_value);
	assert_true(f->timing.oob_ms > 0);
	if (f->oob_label) {
		lab = malloc(n * sizeof(int32_t));
		memcpy(lab, f->oob_label, n * sizeof(int32_t));
	} else {
		val = malloc(n * sizeof(float));
		memcpy(val, f->oob_value, n * sizeof(float));
	}
	assert_int_equal(gwb_forest_oob_cpu(f, d, 0), GWB_OK);
	for (i = 0; i < n; i++) {
		if (lab && lab[i] != f->oob_label[i])
			bad++;
		if (val && !(val[i] == f->oob_value[i] ||
			     (isnan(val[i]) && isnan(f->oob_value[i]))))
			bad++;
	}
	print_message("%s: oob gpu %.6f cpu %.6f on %zu rows, %zu rows differ\n", name, oob,
		      f->oob, f->oob_rows, bad);
	assert_int_equal(bad, 0);
	assert_true(oob == f->oob || (isnan(oob) && isnan(f->oob)));
	free(lab);
	free(val);
	gwb_forest_free(f);
}

static void test_gpu_oob(void **state)
{
	gwb_dataset *d;
	gwb_rf_params p;
	gwb_forest *f;
	size_t i;
	(void)state;

	NEED_GPU();
	d = load("iris.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.trees = 30;
	same_oob(d, &p, "iris");
	/* oob = false: none computed, on either side */
	p.oob = false;
	f = train(d, &p, GWB_BACKEND_GPU);
	assert_true(isnan(f->oob));
	assert_null(f->oob_label);
	gwb_forest_free(f);
	gwb_dataset_free(d);

	d = load("digits.csv", GWB_TASK_CLASSIFICATION);  /* 10 classes: sums in global memory */
	gwb_rf_params_init(&p);
	p.trees = 25;
	p.depth = 12;
	same_oob(d, &p, "digits");
	gwb_dataset_free(d);

	/* synthetic with NaN in two features, 4 classes, several batches of trees */
	d = synth(40000, 24, 4, false, 9);
	for (i = 0; i < d->rows; i += 7)
		d->X[3 * d->rows + i] = NAN;
	for (i = 0; i < d->rows; i += 11)
		d->X[5 * d->rows + i] = NAN;
	gwb_rf_params_init(&p);
	p.trees = 20;
	p.depth = 10;
	setenv("GWB_RF_GPU_BATCH", "6", 1);
	same_oob(d, &p, "synthetic 40k x 24 (batches of 6 trees)");
	unsetenv("GWB_RF_GPU_BATCH");
	p.class_weight_balanced = true;  /* float histograms, weighted leaves */
	same_oob(d, &p, "synthetic, balanced class weights");
	gwb_dataset_free(d);

	/* regression: double means per row */
	d = synth(20000, 12, 0, true, 4);
	gwb_rf_params_init(&p);
	p.trees = 20;
	p.depth = 10;
	same_oob(d, &p, "synthetic regression 20k x 12");
	gwb_dataset_free(d);
	d = load("diabetes.csv", GWB_TASK_REGRESSION);
	gwb_rf_params_init(&p);
	p.trees = 3;  /* few trees: some rows are in every tree's bag (NaN predictions) */
	same_oob(d, &p, "diabetes, 3 trees");
	gwb_dataset_free(d);
}

/* A GPU-resident dataset: trained and predicted in place (same trees as from the host), the
 * kept prediction (device until read) equal to the copied one, the GPU score equal to the
 * score of those labels, and the device copy given back by to_cpu. */
static void test_gpu_resident(void **state)
{
#ifdef GWB_HAVE_CUDA
	gwb_dataset *d;
	gwb_rf_params p;
	gwb_forest *a, *b;
	gwb_rf_gpu_pred *kp = NULL;
	const void *h;
	int32_t *lab;
	size_t i, right = 0, before, after;
	double s = 0;
	(void)state;

	NEED_GPU();
	d = synth(20000, 16, 3, false, 8);
	gwb_rf_params_init(&p);
	p.trees = 10;
	p.depth = 8;
	a = train(d, &p, GWB_BACKEND_GPU);
	before = gwb_gpu_ledger_total(NULL);
	assert_int_equal(gwb_dataset_to_gpu(d), GWB_OK);
	assert_non_null(gwb_dataset_gpu_X(d));
	assert_int_equal(gwb_gpu_ledger_total(NULL) - before, d->rows * d->features * 4);
	b = train(d, &p, GWB_BACKEND_GPU);
	assert_same_forest(a, b, true);
	assert_true(a->oob == b->oob);
	lab = malloc(d->rows * sizeof(int32_t));
	assert_int_equal(gwb_rf_predict_gpu(b, d, 0, GWB_RF_VOTE_BLOCK, NULL, lab, NULL, NULL),
			 GWB_OK);
	assert_int_equal(gwb_rf_predict_gpu_keep(b, d, GWB_RF_OUT_AUTO, &kp), GWB_OK);
	assert_int_equal(kp->what, GWB_RF_OUT_LABELS);
	assert_null(kp->host);  /* nothing copied back yet */
	assert_int_equal(gwb_rf_gpu_pred_host(kp, &h), GWB_OK);
	assert_memory_equal(h, lab, d->rows * sizeof(int32_t));
	for (i = 0; i < d->rows; i++)
		right += lab[i] == d->y[i];
	assert_int_equal(gwb_forest_score(b, d, 0, &s), GWB_OK);  /* resident: on the GPU */
	assert_true(s == (double)right / (double)d->rows);
	gwb_rf_gpu_pred_free(kp);
	free(lab);
	gwb_dataset_to_cpu(d);
	assert_null(gwb_dataset_gpu_X(d));
	after = gwb_gpu_ledger_total(NULL);
	assert_true(after <= before + b->nodes * 32 + 1024 * 1024);  /* only f's cached model */
	gwb_forest_free(a);
	gwb_forest_free(b);
	gwb_dataset_free(d);
#else
	(void)state;
	skip();
#endif
}

/* ---- errors and bookkeeping ------------------------------------------------------------------ */

static void test_gpu_errors_and_ledger(void **state)
{
	gwb_dataset *d;
	gwb_rf_params p;
	gwb_forest *f = NULL;
	int before, after;
	(void)state;

	NEED_GPU();
	d = load("iris.csv", GWB_TASK_CLASSIFICATION);
	gwb_rf_params_init(&p);
	p.progress = false;
	p.backend = GWB_BACKEND_GPU;
	p.block = 100;
	assert_int_equal(gwb_rf_train(d, &p, &f), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "block"));
	assert_null(f);
	gwb_gpu_ledger_total(&before);
	p.block = 0;
	p.trees = 3;
	p.depth = 20;  /* levels grow as needed: no 2^depth buffers */
	assert_int_equal(gwb_rf_train(d, &p, &f), GWB_OK);
	assert_true(f->timing.kernel_ms > 0);
	assert_true(f->depth_reached <= 20);
	gwb_gpu_ledger_total(&after);
	assert_int_equal(before, after);  /* nothing left on the device */
	gwb_forest_free(f);
	gwb_dataset_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_nodes_iris),
		cmocka_unit_test(test_gpu_nodes_digits),
		cmocka_unit_test(test_gpu_truncate_is_shallow_forest),
		cmocka_unit_test(test_gpu_nodes_large_nan),
		cmocka_unit_test(test_gpu_nodes_feature_groups),
		cmocka_unit_test(test_gpu_weighted_and_regression),
		cmocka_unit_test(test_gpu_subtract),
		cmocka_unit_test(test_gpu_parity_accuracy),
		cmocka_unit_test(test_gpu_predict),
		cmocka_unit_test(test_gpu_oob),
		cmocka_unit_test(test_gpu_resident),
		cmocka_unit_test(test_gpu_errors_and_ledger),
	};
	if (getenv("GWB_RF_GPU_FILTER"))  /* e.g. "test_gpu_nodes_*" for a sanitizer run */
		cmocka_set_test_filter(getenv("GWB_RF_GPU_FILTER"));
	return cmocka_run_group_tests_name("rf_gpu", tests, NULL, NULL);
}
