/* rf.h - random forests on the GPU: the trainer behind gwb_rf_train(backend = "gpu") and
 * prediction over a forest copied to the device. Plain C (extern "C"); the implementations live
 * in kernels/rf_train.cu and kernels/rf_predict.cu and exist only in CUDA builds, so host code
 * calls them inside #ifdef GWB_HAVE_CUDA.
 *
 * Training follows forest.h's contract node for node (bootstrap counts, breadth-first order,
 * the lazy Fisher-Yates feature draw, candidate order and ties), so a GPU forest can be compared
 * with a CPU forest split by split. How it runs on the device:
 *   - the codes (uint8, column-major) and the labels go to the device once;
 *   - trees are grown in batches that fit in free device memory (cudaMemGetInfo first); in a
 *     batch every tree advances one level per step, and each kernel covers the nodes of every
 *     tree of the batch;
 *   - a node's in-bag rows are a contiguous segment of a row-id array; each level splits the
 *     segments by a stable prefix-sum partition into the next level's array (rows of leaves
 *     are dropped), so memory follows the rows, not 2^depth;
 *   - histograms (rows, per-class weights or w and w*y per code) are built in shared memory by
 *     chunks of rows; a node of one chunk finds its split in the same block, larger nodes add
 *     their chunks into a global histogram and the last block to finish searches it; the best
 *     split comes from a block reduction with forest.h's order as the tie-break;
 *   - a few counts (chunks, nodes and rows of the next level) are read back per level; node
 *     records stay on the device until the batch ends and then come back in one copy per array.
 * The caller owns everything it passes; nothing here keeps device memory after it returns. */
#ifndef GWB_KERNELS_RF_H
#define GWB_KERNELS_RF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/dataset.h"
#include "../src/forest.h"
#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Grow job->p->trees trees into f (gwb_forest_alloc_nodes + tree_offset), like
 * gwb_rf_train_cpu. With bootstrap and params.oob, also the OOB (gwb_forest_oob_set): after each
 * batch a kernel walks every training row's codes down the batch's trees where its in-bag count
 * (regenerated from the RNG) is 0 and adds the leaf values to per-row double sums on the device;
 * at the end the per-row labels / means come back (4 or 8 bytes a row) and are scored on the
 * host exactly as the CPU scores them; f->timing.oob_ms says how long. When job->q is NULL the data is quantized here: edges placed on the host
 * exactly as gwb_quant_build places them (same row sample), codes computed on the device.
 * Sets f->timing.grow_ms, kernel_ms, transfer_ms (and quantize_ms when it quantized).
 * GWB_ENOMEM with bytes needed and free when one tree cannot fit on the device. */
gwb_status gwb_rf_train_gpu(const gwb_rf_job *job, gwb_forest *f);

/* Sibling histogram subtraction (params.subtract, default true). It applies when every node
 * draws all F features (max_features = "all", the regression default, or a count or fraction
 * that comes to F): then a node's histogram covers its children's features. Of two open
 * siblings whose parent kept its histogram, the larger (the right one on a tie) is derived as
 * parent - smaller sibling when it has at least min_rows in-bag rows (about 3 x bins x channels
 * x element bytes / 32: a derived histogram reads two kept ones, a built one reads a 32-byte
 * sector per row and feature), and the smaller sibling is built and kept. A node keeps its
 * histogram (indexed by feature, in a level slot of mtry x bins x channels) when its children
 * may be derived: not on the last split level, at least 2 x min_rows rows. The kept histograms
 * of one level must fit in a quarter of free device memory (with those of the level before
 * still held). Where they do not, in two steps: first the level keeps only its smaller
 * siblings' histograms (those its derived siblings read), so it still derives and only the
 * next level derives none (counted in fallbacks); only where even those do not fit does the
 * level build every histogram. Counts are exact (integer histograms in unweighted
 * classification), so the trees are the same bit for bit; with weights or regression the sums
 * are float/double and may differ in the last bits (as atomics' order already makes them), so
 * a near-tie split may tip. GWB_RF_GPU_SUB_MIN=n (1..2^28) and GWB_RF_GPU_SUB_BUDGET=bytes
 * in the environment override min_rows and the budget (tests); other values are ignored with
 * a warning on stderr. */
typedef struct gwb_rf_sub_stats {
	bool active;       /* the last training used subtraction (valid and asked for) */
	int min_rows;
	size_t kept;       /* histograms kept for a next level */
	size_t derived;    /* histograms derived by subtraction */
	size_t fallbacks;  /* levels whose parents' histograms did not fit (next derives none) */
} gwb_rf_sub_stats;

/* The counts of the last gwb_rf_train_gpu call (process-wide, not thread-safe). */
void gwb_rf_gpu_sub_stats(gwb_rf_sub_stats *out);

/* How gwb_rf_predict_gpu reduces the trees' votes. */
typedef enum gwb_rf_vote {
	GWB_RF_VOTE_BLOCK = 0,   /* per-block reduction in shared memory, one atomic per class */
	GWB_RF_VOTE_ATOMIC = 1,  /* every (row, tree) adds its leaf to global memory by atomics */
} gwb_rf_vote;

typedef struct gwb_rf_predict_stats {
	double kernel_ms;     /* CUDA-event time of the prediction kernels (quantize + traverse) */
	double transfer_ms;   /* host<->device copies */
	double total_ms;      /* the whole call */
} gwb_rf_predict_stats;

/* Predict d with f on the GPU. Any of proba (rows x classes, row-major), labels and values
 * (regression) may be NULL. block = threads per block (0 = default 256), vote = reduction.
 * Results equal gwb_forest_predict_proba's up to float rounding of the sums. stats may be
 * NULL. The forest's nodes go to the device on the first call and stay there (f->gpu_model);
 * the rows are read in place when d is GPU-resident (gwb_dataset_gpu_X), else copied up. */
gwb_status gwb_rf_predict_gpu(const gwb_forest *f, const gwb_dataset *d, int block,
			      gwb_rf_vote vote, float *proba, int32_t *labels, float *values,
			      gwb_rf_predict_stats *stats);

/* What a kept prediction holds. */
typedef enum gwb_rf_out {
	GWB_RF_OUT_AUTO = 0,    /* labels for classification, values for regression */
	GWB_RF_OUT_LABELS = 1,  /* int32 class codes of f, rows entries */
	GWB_RF_OUT_PROBA = 2,   /* float, rows x classes row-major */
	GWB_RF_OUT_VALUES = 3,  /* float regression values, rows entries */
} gwb_rf_out;

/* A prediction kept on the device until read: f:predict on the GPU returns one (wrapped as a
 * Lua Predictions object), and nothing is copied back until a value is read. The caller owns
 * it and frees it with gwb_rf_gpu_pred_free(). */
typedef struct gwb_rf_gpu_pred {
	size_t rows;
	int per_row;          /* values per row: classes for PROBA, else 1 */
	int classes;          /* the forest's classes (labels are codes 0..classes-1); 0: regression */
	gwb_rf_out what;
	size_t bytes;         /* rows x per_row x 4 */
	void *dev;            /* device memory (gwb_gpu_malloc, "rf.predictions") */
	void *host;           /* the host copy, NULL until the first read */
	gwb_rf_predict_stats stats;  /* the prediction call */
	double read_ms;       /* the copy back of the first read */
} gwb_rf_gpu_pred;

/* Predict d on the GPU keeping the result on the device (what: labels, proba or values). */
gwb_status gwb_rf_predict_gpu_keep(const gwb_forest *f, const gwb_dataset *d, gwb_rf_out what,
				   gwb_rf_gpu_pred **out);
/* The host copy (made by the first call, then cached). */
gwb_status gwb_rf_gpu_pred_host(gwb_rf_gpu_pred *p, const void **host);
void gwb_rf_gpu_pred_free(gwb_rf_gpu_pred *p);

/* Whether a prediction of d goes to the GPU: always when d is GPU-resident, else when
 * gwb_backend_choose("auto", or the --backend default) picks it for this much work. */
gwb_status gwb_rf_predict_wants_gpu(const gwb_forest *f, const gwb_dataset *d, bool *use);

/* Free the device copy of f's nodes that the first GPU prediction made (f->gpu_model; NULL
 * is fine). Called by gwb_forest_free. */
void gwb_rf_gpu_model_free(gwb_forest *f);

/* "auto" crossovers. Training (the dispatcher's estimate rows x mtry x min(depth, 16) x trees),
 * measured on an H200 host with 16 cores, end to end with transfers: the GPU won from 5 MB
 * (1,000 x 32, 100 trees, depth 10: 10.3 ms against 12.2; 100,000 x 32: 29 ms against 211)
 * and lost below 1 MB (iris: 4.2 ms against 1.0); scripts/bench/rf_gpu.lua prints the table.
 * Predicting (rows x trees x 64): an estimate, not yet measured against the CPU: a GPU call
 * costs a host-to-device copy of the rows (8 GB/s pageable there; 56 ms for 200,000 x 256). */
#define GWB_RF_GPU_TRAIN_MIN_BYTES 5e6
#define GWB_RF_GPU_PREDICT_MIN_BYTES 1e9

/* Predict with the GPU when gwb_backend_choose("auto" or the --backend default) picks it for
 * this much work; *done says whether it did (then the outputs are written). Called by
 * gwb_forest_predict and gwb_forest_predict_proba. The switch rf.predict_vote (switches.h;
 * GWB_RF_PREDICT_VOTE=atomic turns it off) selects the vote reduction, GWB_RF_PREDICT_BLOCK=n
 * the block size (for benchmarks). */
gwb_status gwb_rf_predict_auto(const gwb_forest *f, const gwb_dataset *d, float *proba,
			       int32_t *labels, float *values, bool *done);

#ifdef __cplusplus
}
#endif
#endif
