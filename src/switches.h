/* switches.h - the optimisation switches: one registry (src/switches.c) of every named code
 * path that can be turned off to measure what it buys (gwb.switches, opts.switches, gwb.ablate).
 * Code asks gwb_switch_on(GWB_SW_x) where it chooses a path; the answer comes from, strongest
 * first: an ablation in progress (gwb.ablate), the current call's opts.switches, the global
 * setting (gwb.switches{...}), the legacy environment variable, the registry's default.
 * The strings returned are static. Values are written only between calls (by the Lua thread);
 * reads from worker threads and the CUDA plugin are safe. */
#ifndef GWB_SWITCHES_H
#define GWB_SWITCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_switch_id {
	GWB_SW_RF_SUBTRACT = 0,  /* sibling histogram subtraction (CPU, GPU) */
	GWB_SW_RF_ROWMAJOR,      /* row-major code copies in the CPU trainer */
	GWB_SW_RF_SMEM_HIST,     /* GPU trainer: shared-memory histograms vs global atomics */
	GWB_SW_RF_PREDICT_VOTE,  /* GPU prediction: block vote vs plain atomics */
	GWB_SW_TRANSPOSE_TILE,   /* d:transpose: blocked / tiled vs the naive loop (CPU, GPU) */
	GWB_SW_TRANSPOSE_PAD,    /* d:transpose GPU: +1 padded shared tiles */
	GWB_SW_JACOBI_SMEM,      /* batched Jacobi: G resident in shared memory vs blocked */
	GWB_SW_JACOBI_SHIFT,     /* batched Jacobi: power-iteration shift vs the Frobenius bound */
	GWB_SW_SPMV_OURS,        /* GPU SpMV/SpMM: our kernels vs cuSPARSE */
	GWB_SW_EIG_CHEBYSHEV,    /* sparse eig: Chebyshev-filtered subspace vs thick-restart Lanczos */
	GWB_SW_EIG_MIXED,        /* dense eig method "mixed": f32 solve + f64 refinement vs f64 */
	GWB_SW_EIG_ROWMAJOR,     /* GPU Chebyshev filter on row-major blocks vs column-major */
	GWB_SW_CSV_FAST,         /* CSV: one-pass path for rows of plain numbers vs the tokenizer */
	GWB_SW_CSV_PARALLEL,     /* CSV: byte ranges parsed by all CPUs vs one thread */
	GWB_SW_COPY_PINNED,      /* host <-> device copies staged through pinned memory */
	GWB_SW_COPY_STREAMED,    /* host <-> device copies overlapped with work on streams */
	GWB_SW_METRICS_GPU,      /* metrics of a GPU prediction computed on the device */
	GWB_SW_RF_JUDGE_GPU,     /* rf.search on one GPU: folds judged on the device, not read back */
	GWB_SW_COUNT
} gwb_switch_id;

/* Where a switch selects a code path (bits of gwb_switch_info.backends). */
enum { GWB_SW_CPU = 1, GWB_SW_GPU = 2 };

typedef struct gwb_switch_info {
	const char *name;      /* "rf.subtract" */
	const char *desc;      /* one line: what the optimisation is */
	bool def;              /* the default */
	unsigned backends;     /* GWB_SW_CPU | GWB_SW_GPU */
	const char *on_path;   /* the code path it selects when on (file: what) */
	const char *off_path;  /* ... and when off */
	const char *env;       /* legacy environment variable that sets it, "" for none */
	const char *env_doc;   /* how that variable maps ("GWB_RF_SUBTRACT=0 turns it off") */
} gwb_switch_info;

/* A set of values, one per switch: 1 on, 0 off, -1 not set at this level. */
typedef struct gwb_switch_layer {
	int8_t v[GWB_SW_COUNT];
} gwb_switch_layer;

/* The value in effect for switch id; counts a read (gwb_switch_reads), so an ablation can
 * tell the switches the measured work consulted from those it never reached. */
bool gwb_switch_on(gwb_switch_id id);

/* The value in effect without counting a read; *source (may be NULL) gets where it comes from:
 * "ablate", "call", "global", "env", "default". */
bool gwb_switch_peek(gwb_switch_id id, const char **source);

/* The registry entry of id (0 <= id < GWB_SW_COUNT), or NULL. */
const gwb_switch_info *gwb_switch_get(int id);

/* The id of a name, or -1. */
int gwb_switch_find(const char *name);

/* GWB_EINVAL with "fn: unknown switch \"name\"; known: a, b, ..." in gwb_errmsg(). */
gwb_status gwb_switch_unknown(const char *fn, const char *name);

/* The value given by the switch's environment variable: 1, 0, or -1 (unset or not a setting
 * it understands). */
int gwb_switch_env(int id);

/* The global level (gwb.switches{...}): get, set (1, 0, or -1 to unset). */
int gwb_switch_global(int id);
void gwb_switch_set_global(int id, int v);

/* The per-call level: set every switch that over sets (v >= 0) over the current call level,
 * saving the previous call level in *saved; gwb_switch_call_pop restores it. Calls nest. */
void gwb_switch_call_push(const gwb_switch_layer *over, gwb_switch_layer *saved);
void gwb_switch_call_pop(const gwb_switch_layer *saved);

/* The ablation level (gwb.ablate): NULL clears it. */
void gwb_switch_ablate(const gwb_switch_layer *l);

/* A layer with every entry -1. */
void gwb_switch_layer_clear(gwb_switch_layer *l);

/* Reads of each switch (gwb_switch_on) since the last reset. */
unsigned long gwb_switch_reads(int id);
void gwb_switch_reads_reset(void);

#ifdef __cplusplus
}
#endif
#endif
