/* forest.h - the random forest: training parameters, the model as flat node arrays, prediction,
 * OOB and importances, save/load, JSON export, and the training dispatcher that picks a backend.
 * The CPU trainer (rf_cpu.c) is the reference; a GPU trainer must make the same choices, so this
 * header documents them exactly (node order, RNG, feature draw, split order, ties).
 * The caller owns a gwb_forest and frees it with gwb_forest_free().
 *
 * ---- How a tree is grown (both backends) ------------------------------------------------------
 * Data: gwb_quant codes (quantize.h), bins <= 256, NaN in its own bin.
 * Bootstrap: every row r gets an in-bag count c(t, r) for tree t, independent per row
 *   (a Poisson(1) bootstrap, which is what per-row counts of n draws with replacement tend to):
 *       u = (uint32_t)(gwb_rng_hash(seed, GWB_RNG_STREAM_BOOT, t, r) >> 32)
 *       c = number of k in 0..GWB_RF_POISSON_K-1 with u >= gwb_rf_poisson_u32[k]
 *   (gwb_rf_boot_count). bootstrap = false: c = 1 for every row. Rows with c = 0 are out of bag.
 *   A row's training weight is w = c * sample_weight[r] * class_weight[y[r]] (1 when absent).
 * Growth is level-wise: all open nodes of depth k are split before any node of depth k+1.
 * Node order in a tree is breadth first: node 0 is the root; the children of the nodes split
 *   at depth k are appended in the order of their parents, left child then right child.
 * A node is a leaf when: its depth = params.depth, or count < min_split, or count < 2*min_leaf,
 *   or its weight is 0, or it is pure (gini/entropy: impurity <= GWB_RF_PURE_EPS; mse: variance
 *   <= GWB_RF_PURE_EPS * (1 + weighted mean of the centred y^2)), or it has no valid split.
 * Feature draw for node n (tree-local index) of tree t: a lazy Fisher-Yates shuffle of 0..F-1,
 *       for i = 0, 1, ...: h = gwb_rng_hash(seed, GWB_RNG_STREAM_FEAT, ((uint64_t)t << 32) | n, i)
 *                          j = i + (int)(h % (uint64_t)(F - i));  swap(perm[i], perm[j])
 *   and perm[i] is the i-th feature examined. Features are examined in that order until mtry
 *   features that are not constant in the node (rows in at least two codes) were examined, or
 *   all F were (as scikit-learn does: constant features do not count towards max_features).
 * Histograms: per node, feature and code: in-bag row count n (rows, not bootstrap copies) and
 *   the weight sums: per class w_k (classification) or w and w*y (regression; y is centred on
 *   the weighted mean of the whole training target first, gwb_rf_job.y_center).
 *   CPU accumulates in double. Sibling subtraction: the larger child's histogram is the
 *   parent's minus the smaller child's when that is cheaper (a performance choice only).
 * Candidates of a feature with nb value bins, in this order, t = 0 .. nb-1:
 *       left = codes 0..t (value v <= threshold), right = codes t+1..nb-1, and the NaN code
 *       goes first left, then right (only right when t = nb-1; only the one side "left" when
 *       the node has no NaN in this feature, and then nan_left is set afterwards to the side
 *       with the larger weight).
 *   Valid: both sides hold >= min_leaf rows and a weight > 0.
 *   Gain (double): imp(P) - W_L/W_P * imp(L) - W_R/W_P * imp(R), with
 *       gini    imp = 1 - sum_k (w_k/W)^2
 *       entropy imp = -sum_{w_k>0} (w_k/W) * log2(w_k/W)
 *       mse     gain computed as (S_L^2/W_L + S_R^2/W_R - S_P^2/W_P) / W_P, S = sum w*y
 *   The best split is the first one with the strictly greatest gain in the order above (features
 *   in draw order, then t, then NaN left before right). It is taken when
 *   W_P/W_root * gain >= min_impurity_decrease - 1e-12 (scikit-learn's rule); else the node is
 *   a leaf.
 * Node values: classification value[k] = w_k / W (a distribution, also for inner nodes; 1/K
 *   when W = 0, a root that drew no row); regression value[0] = weighted mean of y (not
 *   centred; y_center when W = 0). Forest: proba = mean over trees
 *   of the leaf distributions, label = first argmax; regression = mean of the leaf values.
 * Prediction from floats: x is NaN ? go nan_left : (x <= threshold ? left : right). threshold is
 *   the bin's upper edge (gwb_quant_threshold), so codes and floats agree exactly.
 * OOB: after growing, each row is predicted by the trees where c(t, r) = 0 (trees summed in
 *   order, in double, so the result does not depend on threads); oob = accuracy or R^2 over
 *   rows with at least one such tree. The CPU computes it from the floats (gwb_forest_oob_cpu);
 *   the GPU trainer from the codes already on the device, regenerating c(t, r) from the RNG
 *   (no in-bag mask is stored), with the same sums in the same order: both end in
 *   gwb_forest_oob_set, so the score and every row's OOB prediction are identical. */
#ifndef GWB_FOREST_H
#define GWB_FOREST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "dataset.h"
#include "quantize.h"
#include "mgpu.h"
#include "rng.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the bootstrap (rng.h holds the counter-based hash and its streams) ------------------ */

/* floor(P(Poisson(1) <= k) * 2^32) for k = 0..11 (the last ones saturate). */
#define GWB_RF_POISSON_K 12
static const uint32_t gwb_rf_poisson_u32[GWB_RF_POISSON_K] = {
	1580030168u, 3160060337u, 3950075421u, 4213413783u, 4279248373u, 4292415291u,
	4294609777u, 4294923276u, 4294962463u, 4294966817u, 4294967252u, 4294967292u,
};

/* The in-bag count of row r in tree t (0..12). */
static inline int gwb_rf_boot_count(uint64_t seed, int bootstrap, uint64_t t, uint64_t r)
{
	uint32_t u;
	int k, c = 0;

	if (!bootstrap)
		return 1;
	u = (uint32_t)(gwb_rng_hash(seed, GWB_RNG_STREAM_BOOT, t, r) >> 32);
	for (k = 0; k < GWB_RF_POISSON_K; k++)
		c += u >= gwb_rf_poisson_u32[k];
	return c;
}

/* ---- parameters ----------------------------------------------------------------------------- */

typedef enum gwb_rf_criterion {
	GWB_CRIT_DEFAULT = 0,  /* gini for classification, mse for regression */
	GWB_CRIT_GINI,
	GWB_CRIT_ENTROPY,
	GWB_CRIT_MSE,
} gwb_rf_criterion;

typedef enum gwb_rf_mf {
	GWB_MF_DEFAULT = 0,  /* sqrt for classification, all for regression (scikit-learn's) */
	GWB_MF_SQRT,         /* max(1, floor(sqrt(F))) */
	GWB_MF_LOG2,         /* max(1, floor(log2(F))) */
	GWB_MF_ALL,          /* F */
	GWB_MF_FRACTION,     /* max(1, floor(value * F)), 0 < value <= 1 */
	GWB_MF_COUNT,        /* value, 1 <= value <= F */
} gwb_rf_mf;

#define GWB_RF_PURE_EPS 1e-12

typedef struct gwb_rf_params {
	int trees;                    /* >= 1 */
	int depth;                    /* maximum depth, >= 1 (the root is depth 0); <= GWB_RF_MAX_DEPTH */
	int bins;                     /* codes per feature incl. the NaN bin, 2..256 */
	gwb_rf_mf max_features;
	double max_features_value;    /* for GWB_MF_FRACTION and GWB_MF_COUNT */
	int min_leaf;                 /* >= 1: in-bag rows a leaf must hold */
	int min_split;                /* >= 2: in-bag rows a node needs to be split */
	double min_impurity_decrease; /* >= 0 */
	bool bootstrap;
	gwb_rf_criterion criterion;
	bool class_weight_balanced;   /* w_k = rows / (classes * rows of class k) */
	const double *class_weight;   /* or explicit weights, classes entries; NULL = 1 (not owned) */
	const float *sample_weight;   /* rows entries >= 0, NULL = 1 (not owned) */
	uint64_t seed;
	int threads;                  /* CPU threads, 0 = all cores */
	int block;                    /* GPU threads per block, 0 = the trainer's choice */
	gwb_backend backend;
	size_t quantile_sample;       /* rows used to place edges, 0 = GWB_QUANT_DEFAULT_SAMPLE */
	bool progress;                /* report trees done through intr.h */
	bool hybrid;                  /* backend = "hybrid": CPU threads and the GPU grow the trees
					 of one forest at once (gwb_rf_sched); backend is then GPU */
	bool require_gpu;             /* hybrid without a GPU is an error, not a CPU fallback */
	bool hybrid_cpu_front;        /* hybrid's front side is a second CPU pool, not the GPU
					 (tests the scheduler on a machine without a GPU) */
	double hybrid_ratio;          /* hybrid: a CPU tree's cost in GPU trees before anything
					 is measured; 0 = the recorded one (gwb_rf_hybrid_ratio) */
	bool subtract;                /* GPU: a sibling's histogram as parent - sibling where every
					 node draws all features and the node has enough rows
					 (default true; the same trees bit for bit with integer
					 counts, unweighted classification; up to rounding
					 otherwise; no effect on the CPU backend) */
	bool oob;                     /* compute the OOB score after growing (default true; needs
					 bootstrap; not saved: a loaded forest says true) */
	gwb_gpu_set gpus;             /* GPU backend: the devices the trees are dealt to (mgpu.h;
					 default device 0 alone). gpus.cpu: CPU stand-ins, each
					 "device" a CPU trainer (tests of the dealing without a
					 GPU). Not saved. */
	bool keep;                    /* Ctrl-C during training (CPU backend): keep the trees
					 finished so far (trees 0..k-1, the forest of k trees) and
					 return them marked partial, instead of nothing */
	int tree_first;               /* the RNG index of the first tree grown (f:grow: the trees
					 after an existing forest's T are T, T+1, ...); 0
					 otherwise. Not saved. */
	bool ranks;                   /* under mpirun with several ranks: the trees dealt to the
					 ranks (ranks = "all", the default; rf_ranks.c); false:
					 this rank grows every tree alone ("self"). No effect in
					 a job of one. Not saved. */
} gwb_rf_params;

#define GWB_RF_MAX_DEPTH 64

/* Defaults: 100 trees, depth 32, 64 bins, max_features and criterion by task, min_leaf 1,
 * min_split 2, bootstrap, seed 1, all cores, backend auto, progress on. */
void gwb_rf_params_init(gwb_rf_params *p);

/* Check p against d (bad values, criterion vs task, empty data, class_weight size...).
 * GWB_EINVAL with a message that names the parameter and says what is allowed. */
gwb_status gwb_rf_params_check(const gwb_rf_params *p, const gwb_dataset *d);

/* The resolved max_features count for F features and task. */
int gwb_rf_mtry(const gwb_rf_params *p, int features, gwb_task task);

/* Names for criterion / max_features ("gini", "sqrt", ...) and their parsers. */
const char *gwb_rf_criterion_name(gwb_rf_criterion c);
gwb_status gwb_rf_criterion_parse(const char *s, gwb_rf_criterion *out);

/* ---- the model ------------------------------------------------------------------------------ */

/* What a hybrid fit did (gwb_rf_timing.hybrid): trees each side grew into the forest, each
 * side's busy time, and the CPU trees begun and then dropped because the GPU claimed them. */
typedef struct gwb_rf_hybrid_timing {
	bool used;
	bool cpu_started;    /* the CPU side started (built its host codes); false when the plan
				left it no tree */
	int gpu_trees, cpu_trees, cpu_dropped, cpu_workers;
	double gpu_busy_ms, cpu_busy_ms;
	double gpu_trees_per_s, cpu_trees_per_s;  /* measured rates (busy time), for a rule */
	double ratio;        /* the CPU-tree / GPU-tree cost ratio the last decision used
				(measured once both sides had grown trees) */
	double ratio_prior;  /* the one it started from (gwb_rf_hybrid_ratio) */
} gwb_rf_hybrid_timing;

typedef struct gwb_rf_timing {
	double total_ms;     /* the whole gwb_rf_train call (wall) */
	double quantize_ms;
	double grow_ms;      /* growing the trees (GPU: includes kernels and transfers) */
	double oob_ms;       /* OOB (GPU: on the device, within the trainer) */
	double kernel_ms;    /* GPU only: kernel time (CUDA events) of the whole call */
	double transfer_ms;  /* GPU only: host<->device copies of the whole call */
	double host_ms;      /* total_ms - kernel_ms - transfer_ms: host work and waits, >= 0 */
	double overlap_ms;   /* kernels and copies at once (their sum beyond the wall): then
			      * kernel + transfer + host - overlap = total */
	size_t subtract_kept;     /* GPU only: histograms kept for sibling subtraction */
	size_t subtract_derived;  /* GPU only: histograms derived as parent - sibling */
	gwb_rf_hybrid_timing hybrid;
} gwb_rf_timing;

typedef struct gwb_forest {
	int trees;
	int features;
	gwb_task task;
	int classes;              /* classification: class count; regression: 0 */
	int outputs;              /* values per node: classes, or 1 for regression */
	gwb_rf_criterion criterion;
	size_t train_rows;

	/* Nodes of all trees, tree t's nodes at global indices tree_offset[t] .. tree_offset[t+1]-1,
	 * in the breadth-first order described above. */
	size_t nodes;
	int64_t *tree_offset;     /* trees + 1 entries */
	int32_t *feature;         /* split feature, -1 for a leaf */
	uint8_t *threshold_bin;   /* code <= threshold_bin goes left (0 for a leaf) */
	float *threshold;         /* value <= threshold goes left (+inf: only NaN goes right) */
	uint8_t *nan_left;        /* 1: NaN goes left */
	int32_t *left, *right;    /* children as tree-local indices; -1 for a leaf */
	int32_t *count;           /* in-bag rows reaching the node (bootstrap copies counted once) */
	double *weight;           /* sum of training weights reaching the node */
	float *impurity;          /* of the node, by the criterion (mse: weighted variance) */
	float *value;             /* node g's outputs at value[g * outputs], see above */

	/* Summary, filled by gwb_forest_finish. */
	int depth_reached;
	size_t leaves;
	double *importance;       /* features: impurity importance, sums to 1 (0s if no split) */
	double oob;               /* OOB accuracy or R^2; NaN when not available */
	size_t oob_rows;          /* rows with at least one out-of-bag tree */
	/* Per training row, the OOB prediction (the run, not the model: not saved; NULL when OOB
	 * was not computed): classification oob_label[r] = f's class code, -1 when no tree had
	 * r out of bag; regression oob_value[r] = mean of those trees, NaN when none. */
	int32_t *oob_label;
	float *oob_value;

	/* Metadata. */
	char **names;             /* features names (may hold NULLs) */
	char **class_names;       /* classes names (may hold NULLs) */
	char *target;
	double *class_weight;     /* classes: resolved class weights used in training */
	gwb_rf_params params;     /* as trained (pointers cleared, threads as resolved) */
	int mtry;                 /* resolved max_features */
	int bins_used;            /* the bins parameter */

	/* The run, not the model (not saved). */
	gwb_backend backend;      /* where it was trained: CPU or GPU */
	char backend_why[160];
	gwb_rf_timing timing;
	int file_version;         /* loaded: the file's format version; 0 = trained here */
	int trees_asked;          /* > trees: a partial forest (Ctrl-C with params.keep); else 0 */
	void *gpu_model;          /* CUDA builds: the forest's nodes on the device for prediction,
				     made by the first GPU prediction (rf_predict.cu), freed with f */
	const struct gwb_forest *view_of;  /* a view of the first trees (rf_eval.h): the forest
				     whose arrays it shares; that forest's device model serves it */
	/* The categorical features' levels as trained: a code c in X is level cat_levels[j][c]
	 * (the training data's dictionary). cat_levels[j] NULL: a numeric feature. Both arrays
	 * NULL when unknown (a file of version < 3): data is then scored by its codes as given.
	 * Scoring matches new data's levels onto these by label (levels.h). */
	char ***cat_levels;
	int *cat_count;
} gwb_forest;

/* The hybrid forest's queue of tree indices (rf_hybrid.c). Trees are independent and each
 * one's RNG stream is keyed by its index, so any side grows tree t the same way, node for node.
 * The front side (the GPU trainer, or a CPU pool in tests) claims consecutive indices from the
 * front in batches; the back side (the CPU workers) claims one tree at a time from the back.
 * The split between them is planned from both sides' measured speeds (gwb_rf_hybrid_plan):
 * the front's claims leave the back its share, a back worker starts a tree only while the
 * plan gives the back more than it is growing, and when nothing is free the front takes over
 * the back's trees it would finish sooner (they are dropped there: a worker checks
 * gwb_rf_sched_dropped between nodes). The front's trees are [0, front), the back's
 * [front, trees). */
typedef struct gwb_rf_sched gwb_rf_sched;
/* Front: up to `want` trees (the side's batch size; the queue may give fewer so the other side
 * keeps its share, and may wait for the back), the first index in *first; 0 when every tree is
 * grown or claimed, or the fit stopped. */
int gwb_rf_sched_front(gwb_rf_sched *s, int want, int *first);
/* Front: the n trees from `first` (of one claim) are grown: progress and the front's rate. */
void gwb_rf_sched_front_grown(gwb_rf_sched *s, int first, int n);
/* Back: whether the back starts at all (false: the plan leaves it nothing; it then builds no
 * host codes). */
bool gwb_rf_sched_back_begin(gwb_rf_sched *s);
/* Back: one tree index, -1 when none is left for the back (this worker then stops). */
int gwb_rf_sched_back(gwb_rf_sched *s);
/* Back: tree t is grown (kept when t >= the front's end), or dropped (the front took it). */
void gwb_rf_sched_back_done(gwb_rf_sched *s, int t);
void gwb_rf_sched_back_dropped(gwb_rf_sched *s, int t);
/* True when tree t (claimed by the back) is now the front's, or the fit stopped: drop it. */
bool gwb_rf_sched_dropped(gwb_rf_sched *s, int t);
/* A side failed or was interrupted: stop both. */
void gwb_rf_sched_stop(gwb_rf_sched *s);
/* The final split: trees [0, front) are the front's. */
int gwb_rf_sched_front_end(gwb_rf_sched *s);
/* Front, after its last claim: wait for the back to finish; *fb = its forest (trees
 * [*front, trees), the others empty; NULL when it grew none). GWB_EINTR when the fit stopped. */
gwb_status gwb_rf_sched_back_result(gwb_rf_sched *s, const gwb_forest **fb, int *front);

/* The rule. gwb_rf_hybrid_ratio: a CPU worker's time for one tree x the GPU's trees per
 * second, the prior before anything is measured (params.hybrid_ratio, else the model recorded
 * on an H200 host in rf_hybrid.c). gwb_rf_hybrid_plan: of R trees left to either side
 * (running of them being grown by the back's W workers; the front holds `front` more), how
 * many the back should grow so the fit ends soonest, rho = that ratio; *finish (may be NULL)
 * = the predicted end in back-tree times. gwb_rf_hybrid_pays: "auto"'s test (the GPU chosen):
 * the plan gives the CPU trees and ends at least 5 % sooner than the GPU alone; why (n bytes)
 * says so with the numbers. */
double gwb_rf_hybrid_ratio(const gwb_rf_params *p, size_t rows, int mtry);
int gwb_rf_hybrid_plan(int R, int running, int front, int W, double rho, double *finish);
bool gwb_rf_hybrid_pays(const gwb_rf_params *p, size_t rows, int mtry, char *why, size_t n);

/* Where the CPU trainer takes its trees from when it shares a forest with another side (the
 * hybrid trainer hands one to each CPU side it runs); without one it grows every tree, in
 * order. The trainer knows nothing else of the other side. */
typedef struct gwb_rf_tree_source {
	void *ctx;
	int (*next)(void *ctx);                 /* the next tree to grow; < 0 when none is left */
	bool (*taken)(void *ctx, int t);        /* another side took tree t: stop growing it */
	void (*done)(void *ctx, int t, bool dropped); /* t grown, or dropped (nodes discarded) */
	void (*stop)(void *ctx);                /* this side failed: hand out no more trees */
	bool (*kept)(void *ctx, int t);         /* after the run: tree t is this side's to keep */
} gwb_rf_tree_source;

/* A forest judged where one GPU grew it (rf.search's folds, rf_eval.c): the GPU trainer codes
 * test's rows against its own edges and, after each batch, walks them down the batch's trees to
 * every cut depth, adding the values of the node reached (or the leaf above it) to per-row
 * double sums, tree after tree in index order (forest.c's predict_sums: the CPU's sums bit for
 * bit); after tree counts[c] - 1 the sums are copied out. The trees are not read back: the
 * forest exists only on the device, for this. The trainer sets done (false: it could not, and
 * the caller gets the forest instead); gwb_rf_train_judged fills the times. */
typedef struct gwb_rf_judge {
	const gwb_dataset *test;
	const int *cuts;      /* nd depths, strictly ascending, 1..GWB_RF_MAX_DEPTH */
	int nd;
	const int *counts;    /* nc tree counts, 1..trees */
	int nc;
	double *sums;         /* nc x nd x test rows x outputs, written: [((c * nd + e) * rows + i) *
			       * outputs + k] */
	bool done;
	double total_ms, kernel_ms, transfer_ms;
} gwb_rf_judge;

/* Everything a backend trainer needs, prepared by gwb_rf_train. */
typedef struct gwb_rf_job {
	const gwb_dataset *d;
	const gwb_quant *q;
	const gwb_rf_params *p;      /* checked */
	int mtry;
	int threads;                 /* resolved CPU thread count */
	gwb_rf_criterion criterion;  /* resolved (never DEFAULT) */
	const double *class_weight;  /* classes entries (classification), else NULL */
	double y_center;             /* regression: weighted target mean subtracted before growing */
	gwb_rf_sched *sched;         /* hybrid, GPU trainer: grow only the trees claimed here
				      * (NULL: all) */
	bool sched_front;            /* claim from the front (GPU side), else from the back */
	const gwb_rf_tree_source *trees; /* hybrid, CPU trainer: its trees (NULL: all) */
	int tree_first;              /* gpus > 1: this device's trees are tree_first ..
				      * tree_first + p->trees - 1 of the forest (their RNG index;
				      * local tree t is global tree_first + t); 0 otherwise */
	gwb_rf_judge *judge;         /* one GPU (rf.search): judge instead of reading back */
} gwb_rf_job;

/* The dispatcher: check parameters, choose the backend (gwb_backend_choose), quantize, call the
 * chosen trainer, then compute OOB, importances and the summary. On any error (GWB_EINTR on
 * Ctrl-C included) nothing is returned and everything is freed. */
gwb_status gwb_rf_train(const gwb_dataset *d, const gwb_rf_params *p, gwb_forest **out);

/* The same, judged on the device where the choice is one GPU (not hybrid, several devices or
 * ranks): then j->done, *out NULL, j's times filled; otherwise as gwb_rf_train, j->done false. */
gwb_status gwb_rf_train_judged(const gwb_dataset *d, const gwb_rf_params *p, gwb_rf_judge *j,
			       gwb_forest **out);

/* The CPU trainer (rf_cpu.c): grows f->trees trees into f's node arrays (gwb_forest_set_nodes)
 * and sets f->timing.grow_ms. A GPU trainer has the same shape:
 *     gwb_status gwb_rf_train_gpu(const gwb_rf_job *job, gwb_forest *f); */
gwb_status gwb_rf_train_cpu(const gwb_rf_job *job, gwb_forest *f);
/* The hybrid trainer (rf_hybrid.c): job->q is not used (the GPU side quantizes on the device;
 * the CPU side builds the host codes when it starts its first tree); cpu_front: a CPU pool
 * stands in for the GPU (tests of the scheduler without a GPU). Fills f's nodes, the OOB (the
 * GPU side's, over every tree; with cpu_front gwb_forest_finish scores it), grow, kernel and
 * transfer times and f->timing.hybrid. A failure or an interrupt on either side stops both;
 * nothing is kept. */
gwb_status gwb_rf_train_hybrid(const gwb_rf_job *job, gwb_forest *f, bool cpu_front);
/* The device trainer (rf_multi.c): job->p->gpus's devices grow the trees, dealt in contiguous
 * ranges in index order and put together in order: the same forest as one device grows. One
 * device: gwb_rf_train_gpu on the calling thread (gpus.cpu: gwb_rf_train_cpu), unchanged.
 * Several: one host thread per device, OOB left to gwb_forest_finish (the CPU's, identical). */
gwb_status gwb_rf_train_devices(const gwb_rf_job *job, gwb_forest *f);

/* The ranks of an MPI job (rf_ranks.c, mpi.h; params.ranks): the trees dealt to the ranks in
 * contiguous ranges in index order, each range grown by train(ctx, job of the range, forest of
 * the range) (the trainer the dispatcher chose), every range gathered on every rank and put
 * together in order into f: the forest one process grows, byte for byte. OOB left to
 * gwb_forest_finish. One rank: not called. A rank whose trainer fails still joins the gather,
 * so every rank returns an error (naming the failed rank) instead of waiting. */
typedef gwb_status (*gwb_rf_trainer)(void *ctx, const gwb_rf_job *job, gwb_forest *f);
gwb_status gwb_rf_train_ranks(const gwb_rf_job *job, gwb_forest *f, gwb_rf_trainer train,
			      void *ctx);
/* Every rank's d against rank 0's (rows, features, task, classes, XXH64 of the values): the
 * first rank that differs is named with its host and both shapes (GWB_EINVAL, from fn). One
 * rank: GWB_OK. Every rank must call it (a collective). */
gwb_status gwb_rf_ranks_check_data(const gwb_dataset *d, const char *fn);

/* A forest with metadata copied from d and p, and no nodes yet. */
gwb_status gwb_forest_new(const gwb_dataset *d, const gwb_rf_params *p, int mtry,
			  const double *class_weight, gwb_forest **out);
/* Allocate node arrays for `nodes` nodes (contents zero; tree_offset to be filled). */
gwb_status gwb_forest_alloc_nodes(gwb_forest *f, size_t nodes);
/* Copy nodes [from, from + n) of src into dst's arrays from node `at` on (dst holds at least
 * at + n nodes; same outputs). Tree-local children need no change. The one node copy between
 * forests: the multi-device merge, the hybrid's two sides, the GPU side taking the CPU's. */
void gwb_forest_copy_nodes(gwb_forest *dst, size_t at, const gwb_forest *src, size_t from,
			   size_t n);
/* The forest f cut at depth (1..GWB_RF_MAX_DEPTH): each tree keeps its nodes of depth <= depth
 * (a prefix of its nodes in breadth-first order) and those at depth become leaves. Node values
 * are set on every node and a node's split never depends on the depth limit (forest.h's
 * growth rules), so this is node for node the forest trained with that depth (rf.search
 * judges every depth of a grid from the deepest). d: the training data (names, classes,
 * levels for the metadata). The caller frees *out. */
gwb_status gwb_forest_truncate(const gwb_forest *f, const gwb_dataset *d, int depth,
			       gwb_forest **out);
/* Summary after the nodes are set: depth_reached, leaves, impurity importance; and OOB from d
 * (the training data, re-deriving the bootstrap counts) when bootstrap and params.oob are on
 * and the trainer did not compute it already (the GPU trainer does, on the device). */
gwb_status gwb_forest_finish(gwb_forest *f, const gwb_dataset *d, int threads);
/* The CPU OOB of f on its training data d (sets oob, oob_rows, oob_label / oob_value): the
 * reference the GPU's OOB is tested against. */
gwb_status gwb_forest_oob_cpu(gwb_forest *f, const gwb_dataset *d, int threads);
/* Set oob, oob_rows and the per-row OOB predictions from per-row results: classification
 * labels[r] (f's class code, -1 = no out-of-bag tree), regression values[r] (the double mean,
 * NaN = none); the other may be NULL. Copies what it keeps. */
gwb_status gwb_forest_oob_set(gwb_forest *f, const gwb_dataset *d, const int32_t *labels,
			      const double *values);
/* Structural checks (children in range and after their parent, features in range, thresholds
 * finite or +inf): used by load and by tests. */
gwb_status gwb_forest_validate(const gwb_forest *f);

void gwb_forest_free(gwb_forest *f);

/* ---- using a model -------------------------------------------------------------------------- */

/* Check that d can be predicted by f (feature count). */
gwb_status gwb_forest_check_data(const gwb_forest *f, const gwb_dataset *d);
/* Both of a classification forest's answers from one prediction: labels[i] as
 * gwb_forest_predict gives them and proba (rows x classes) as gwb_forest_predict_proba gives
 * them (the same values: one sum of the trees, on the GPU where "auto" sends it). */
gwb_status gwb_forest_predict_labels_proba(const gwb_forest *f, const gwb_dataset *d,
					   int threads, int32_t *labels, float *proba);
/* Class probabilities, rows x classes row-major (classification only). */
gwb_status gwb_forest_predict_proba(const gwb_forest *f, const gwb_dataset *d, int threads,
				    float *out);
/* Labels (class codes of f) or regression values, rows entries. */
gwb_status gwb_forest_predict(const gwb_forest *f, const gwb_dataset *d, int threads,
			      int32_t *labels, float *values);
/* Whether a prediction of d might go to the GPU (a GPU-resident d, or enough work for "auto",
 * or --backend gpu): a host-side test, so small work never loads the GPU plugin. */
bool gwb_forest_predict_maybe_gpu(const gwb_forest *f, const gwb_dataset *d);
/* Accuracy (classification; d's labels matched to f's classes by name) or R^2. On the GPU
 * for large work (labels or values computed there, scored on the host; R^2 from float means,
 * so it may differ from the CPU's in the last digits). */
gwb_status gwb_forest_score(const gwb_forest *f, const gwb_dataset *d, int threads, double *out);
/* Permutation importance on d: the mean and std (over `repeats` shuffles) of the score drop
 * when one feature's column is shuffled; features entries each. */
gwb_status gwb_forest_permutation_importance(const gwb_forest *f, const gwb_dataset *d,
					     int repeats, uint64_t seed, int threads,
					     double *mean, double *std);

/* ---- files ---------------------------------------------------------------------------------- */

/* Binary format: "GWBFOREST\0" magic, u32 version (GWB_FOREST_VERSION), u64 payload length,
 * the payload (little endian), then a u64 FNV-1a checksum of the payload. Timings and the thread
 * count are not saved, so equal forests give equal files. Version 2 added params.subtract (a
 * u32 after the backend); version 1 files still load, with file_version 1 (subtract unknown).
 * Version 3 added the categorical levels after the importances: per feature a u32 level count
 * (UINT32_MAX: numeric) and that many strings; older files load with cat_levels NULL. */
#define GWB_FOREST_VERSION 3
gwb_status gwb_forest_save(const gwb_forest *f, const char *path);
/* GWB_EIO (cannot open), GWB_ECORRUPT (truncated, checksum, impossible structure) or GWB_EPARSE
 * (not a forest file / unknown version), with the path and what was wrong. */
gwb_status gwb_forest_load(const char *path, gwb_forest **out);
/* The trees as JSON: {"task", "features", "classes", "trees": [{"nodes": [...]}]}. */
gwb_status gwb_forest_export_json(const gwb_forest *f, const char *path);

#ifdef __cplusplus
}
#endif
#endif
