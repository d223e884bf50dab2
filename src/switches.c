/* switches.c - the registry of optimisation switches (switches.h): the one table of what can
 * be turned off, and the levels a value comes from. */
#include "switches.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Environment variables that predate the registry; each parser returns 1, 0 or -1. */
static int env_zero_off(const char *v) { return !strcmp(v, "0") ? 0 : !strcmp(v, "1") ? 1 : -1; }
static int env_vote(const char *v) { return !strcmp(v, "atomic") ? 0 : !strcmp(v, "block") ? 1 : -1; }
static int env_set_off(const char *v) { return *v && strcmp(v, "0") ? 0 : -1; }
static int env_width_off(const char *v) { return atoi(v) >= 1 ? 0 : -1; }

static const struct entry {
	gwb_switch_info i;
	int (*parse)(const char *value);
} table[GWB_SW_COUNT] = {
	[GWB_SW_RF_SUBTRACT] = {{"rf.subtract",
		"sibling histogram subtraction: the larger child's histogram as parent - sibling",
		true, GWB_SW_CPU | GWB_SW_GPU,
		"rf_cpu.c subtract_item / rf_train.cu k_plan + k_derive",
		"every child's histogram built from its rows",
		"GWB_RF_SUBTRACT", "GWB_RF_SUBTRACT=0 turns it off"}, env_zero_off},
	[GWB_SW_RF_ROWMAJOR] = {{"rf.rowmajor",
		"CPU trainer: row-major copies of each node's codes (one gather per row, not per feature)",
		true, GWB_SW_CPU, "rf_cpu.c: row-major code copies per level",
		"column-major gathers per feature",
		"GWB_RF_ROWMAJOR", "GWB_RF_ROWMAJOR=0 turns it off"}, env_zero_off},
	[GWB_SW_RF_SMEM_HIST] = {{"rf.smem_hist",
		"GPU trainer: histograms of a node chunk in shared memory, merged once into global",
		true, GWB_SW_GPU, "rf_train.cu k_hist: shared-memory histogram, then one merge",
		"rows of multi-chunk nodes added straight into the global histogram (global atomics)",
		"", ""}, NULL},
	[GWB_SW_RF_PREDICT_VOTE] = {{"rf.predict_vote",
		"GPU prediction: votes reduced per block before one atomic per class",
		true, GWB_SW_GPU, "rf_predict.cu: GWB_RF_VOTE_BLOCK",
		"rf_predict.cu: GWB_RF_VOTE_ATOMIC (one atomic per row, tree and class)",
		"GWB_RF_PREDICT_VOTE", "GWB_RF_PREDICT_VOTE=atomic turns it off, =block on"}, env_vote},
	[GWB_SW_TRANSPOSE_TILE] = {{"transpose.tile",
		"d:transpose: cache-blocked (CPU) / shared-memory tiled (GPU) transpose",
		true, GWB_SW_CPU | GWB_SW_GPU,
		"transpose.c blocks with SSE tiles / transpose.cu transpose_tiled|padded",
		"the naive loop / transpose_naive", "", ""}, NULL},
	[GWB_SW_TRANSPOSE_PAD] = {{"transpose.pad",
		"d:transpose GPU: one padding column per tile row (no shared-memory bank conflicts)",
		true, GWB_SW_GPU, "transpose.cu transpose_padded", "transpose.cu transpose_tiled",
		"", ""}, NULL},
	[GWB_SW_JACOBI_SMEM] = {{"jacobi.smem",
		"batched Jacobi: the whole matrix G resident in shared memory where it fits",
		true, GWB_SW_GPU, "jacobi.cu plan: smem variant",
		"jacobi.cu plan: blocked over column pairs (global memory)",
		"GWB_JACOBI_BLOCK", "GWB_JACOBI_BLOCK=w (w >= 1) turns it off, with block width w"},
		env_width_off},
	[GWB_SW_JACOBI_SHIFT] = {{"jacobi.shift",
		"batched Jacobi: shift sigma from a power iteration (tight, fewer sweeps)",
		true, GWB_SW_GPU, "jacobi.cu compute_shift: min(1.5 rho, ||A||_F)",
		"jacobi.cu compute_shift: ||A||_F alone", "", ""}, NULL},
	[GWB_SW_SPMV_OURS] = {{"spmv.ours",
		"GPU sparse products: our SpMV (row segments) and SpMM kernels",
		true, GWB_SW_GPU, "spmv.cu: GWB_SPMV_OURS where auto", "spmv.cu: cuSPARSE",
		"", ""}, NULL},
	[GWB_SW_EIG_CHEBYSHEV] = {{"eig.chebyshev",
		"sparse eig.solve: Chebyshev-filtered subspace iteration",
		true, GWB_SW_CPU | GWB_SW_GPU, "eig_cheb.c sp_subspace(): Chebyshev filter",
		"eig_lanczos.c sp_lanczos(): thick-restart Lanczos", "", ""}, NULL},
	[GWB_SW_EIG_MIXED] = {{"eig.mixed",
		"dense method \"mixed\": f32 solve refined to f64",
		true, GWB_SW_CPU | GWB_SW_GPU,
		"eig_dense.c ssyevd + refine_f64 / jacobi.cu f32 + Newton-Schulz + f64 sweeps",
		"the f64 solve (dsyevd / the f64 Jacobi kernel)", "", ""}, NULL},
	[GWB_SW_EIG_ROWMAJOR] = {{"eig.rowmajor",
		"GPU Chebyshev filter on row-major blocks (one fused SpMM step per degree)",
		true, GWB_SW_GPU, "eig_cheb.c + eig_sparse_ops_gpu.c: gwb_gpu_spmm_rows",
		"column-major blocks",
		"GWB_EIG_COLMAJOR", "GWB_EIG_COLMAJOR=1 turns it off"}, env_set_off},
	[GWB_SW_CSV_FAST] = {{"csv.fast",
		"data.load (CSV): one-pass parsers for rows of numbers and of mixed fields",
		true, GWB_SW_CPU, "csv_parse.c csv_fast_row / csv_mixed_row",
		"csv_parse.c: the quote-aware tokenizer for every record (as opts.slow)",
		"", ""}, NULL},
	[GWB_SW_CSV_PARALLEL] = {{"csv.parallel",
		"data.load (CSV): large files parsed in byte ranges by all CPUs (numeric, text, quoted)",
		true, GWB_SW_CPU, "csv_par.c csv_parallel_load", "csv.c: one thread", "", ""}, NULL},
	[GWB_SW_COPY_PINNED] = {{"copy.pinned",
		"host <-> device copies staged through pinned (page-locked) buffers",
		true, GWB_SW_GPU, "buffer.c gwb_gpu_copy_in/out: the pinned staging ring",
		"buffer.c: one pageable cudaMemcpy", "", ""}, NULL},
	[GWB_SW_COPY_STREAMED] = {{"copy.streamed",
		"staged host <-> device copies: DMA of one chunk overlapped with the host's next",
		true, GWB_SW_GPU, "buffer.c: chunks in flight on the copy stream while the host "
		"fills the next", "buffer.c: each chunk waited for before the next (no overlap)",
		"", ""}, NULL},
	[GWB_SW_METRICS_GPU] = {{"metrics.gpu",
		"metrics of a Predictions object (f:predict on the GPU) computed where it lies",
		true, GWB_SW_GPU, "lapi_metrics.c -> metrics.cu: counts, sorts and sums on the device",
		"the predictions copied back and judged by metrics.c", "", ""}, NULL},
	[GWB_SW_RF_JUDGE_GPU] = {{"rf.judge_gpu",
		"rf.search on one GPU: each fold's forest judged on the device where it grew",
		true, GWB_SW_GPU, "rf_train.cu k_judge: the fold's rows walk every batch's trees to "
		"each cut depth; the trees never come back", "rf_eval.c: the forest read back, cut "
		"on the host and predicted (rf_predict.cu) for each depth and count", "", ""}, NULL},
};

/* The levels (GNU range designators: every entry starts unset). */
#define UNSET {{[0 ... GWB_SW_COUNT - 1] = -1}}
static gwb_switch_layer g_global = UNSET, g_call = UNSET, g_ablate = UNSET;
#undef UNSET
static bool g_ablating;
static atomic_ulong g_reads[GWB_SW_COUNT];

const gwb_switch_info *gwb_switch_get(int id)
{
	return id >= 0 && id < GWB_SW_COUNT ? &table[id].i : NULL;
}

int gwb_switch_find(const char *name)
{
	for (int i = 0; name && i < GWB_SW_COUNT; i++)
		if (!strcmp(table[i].i.name, name))
			return i;
	return -1;
}

gwb_status gwb_switch_unknown(const char *fn, const char *name)
{
	char known[512];
	size_t n = 0;

	known[0] = 0;
	for (int i = 0; i < GWB_SW_COUNT && n < sizeof(known); i++)
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "",
				      table[i].i.name);
	return gwb_error(GWB_EINVAL, "%s: unknown switch \"%s\"; known switches: %s (see "
			 "gwb.switches())", fn, name ? name : "?", known);
}

int gwb_switch_env(int id)
{
	const struct entry *e = id >= 0 && id < GWB_SW_COUNT ? &table[id] : NULL;
	const char *v;

	if (!e || !e->parse || !(v = getenv(e->i.env)))
		return -1;
	return e->parse(v);
}

bool gwb_switch_peek(gwb_switch_id id, const char **source)
{
	const char *src = "default";
	int v;

	if ((int)id < 0 || id >= GWB_SW_COUNT)
		return false;
	if (g_ablating && g_ablate.v[id] >= 0) {
		v = g_ablate.v[id];
		src = "ablate";
	} else if (g_call.v[id] >= 0) {
		v = g_call.v[id];
		src = "call";
	} else if (g_global.v[id] >= 0) {
		v = g_global.v[id];
		src = "global";
	} else if ((v = gwb_switch_env(id)) >= 0) {
		src = "env";
	} else {
		v = table[id].i.def;
	}
	if (source)
		*source = src;
	return v != 0;
}

bool gwb_switch_on(gwb_switch_id id)
{
	if ((int)id < 0 || id >= GWB_SW_COUNT)
		return false;
	atomic_fetch_add_explicit(&g_reads[id], 1, memory_order_relaxed);
	return gwb_switch_peek(id, NULL);
}

int gwb_switch_global(int id)
{
	return id >= 0 && id < GWB_SW_COUNT ? g_global.v[id] : -1;
}

void gwb_switch_set_global(int id, int v)
{
	if (id >= 0 && id < GWB_SW_COUNT)
		g_global.v[id] = (int8_t)(v < 0 ? -1 : v != 0);
}

void gwb_switch_layer_clear(gwb_switch_layer *l)
{
	memset(l->v, -1, sizeof(l->v));
}

void gwb_switch_call_push(const gwb_switch_layer *over, gwb_switch_layer *saved)
{
	*saved = g_call;
	for (int i = 0; i < GWB_SW_COUNT; i++)
		if (over->v[i] >= 0)
			g_call.v[i] = over->v[i];
}

void gwb_switch_call_pop(const gwb_switch_layer *saved)
{
	g_call = *saved;
}

void gwb_switch_ablate(const gwb_switch_layer *l)
{
	g_ablating = l != NULL;
	if (l)
		g_ablate = *l;
	else
		gwb_switch_layer_clear(&g_ablate);
}

unsigned long gwb_switch_reads(int id)
{
	return id >= 0 && id < GWB_SW_COUNT ? atomic_load(&g_reads[id]) : 0;
}

void gwb_switch_reads_reset(void)
{
	for (int i = 0; i < GWB_SW_COUNT; i++)
		atomic_store(&g_reads[i], 0);
}
