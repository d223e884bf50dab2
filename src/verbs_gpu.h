/* verbs_gpu.h - the table verbs on a GPU-resident Dataset (issue 30): where a verb runs
 * (backend "auto" | "cpu" | "gpu", and why, for the run log) and the device paths of filter,
 * sort, group_by:agg and value_counts (kernels/verbs.h does the work). Their answers are
 * verbs.c's: the same rows in the same order, the same groups, exact counts, min, max, first,
 * last and medians, sums and means to rounding. A result is the caller's (gwb_dataset_free)
 * and lies on the device too (its xbuf, wbuf and ybuf), so the next verb reads it there. In a
 * CPU build every device path says "built without CUDA" and the chooser keeps the CPU. */
#ifndef GWB_VERBS_GPU_H
#define GWB_VERBS_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "dataset.h"
#include "expr.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tables that move fewer bytes than this stay on the CPU under "auto" (a device verb costs a
 * few dozen launches and two or three waits for counts, ~0.3 ms). */
#define GWB_VERBS_GPU_MIN_BYTES (16.0 * 1024 * 1024)

/* Where verb (a name for messages) runs on d. lacks: why the device cannot take this case
 * (NULL: it can). "cpu": the CPU. "gpu": the device, putting a host table there first (it
 * stays); a case the device lacks runs on the CPU and says so; GWB_ENODEV without a GPU.
 * "auto": the device when d lies there, the case is one it takes and the table moves at
 * least GWB_VERBS_GPU_MIN_BYTES; else the CPU. The choice and its reason are kept for
 * gwb_verbs_note (the run log's backend and why). */
gwb_status gwb_verbs_pick(gwb_dataset *d, gwb_backend req, const char *verb, const char *lacks,
			  bool *gpu);
/* The last verb's backend ("cpu" | "gpu") and *why; gwb_verbs_note_reset before a verb (then
 * "cpu", why ""), gwb_verbs_note_set to record one (a fallback after a device failure). */
const char *gwb_verbs_note(const char **why);
void gwb_verbs_note_reset(void);
void gwb_verbs_note_set(bool gpu, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Why the device does not take these (NULL: it does). */
const char *gwb_verbs_gpu_lacks_rows(const gwb_dataset *d);       /* filter, sort: every column */
const char *gwb_verbs_gpu_lacks_expr(const gwb_expr *e);
/* e's program for the device's evaluator (kernels/verbs.cu), which knows the opcodes up to
 * GWB_XOP_CMPI: each GWB_XOP_CMPC (a column compared with a constant, fused by expr.c) expanded
 * back into GWB_XOP_COL col, GWB_XOP_NUM num and the comparison ival, the same doubles compared.
 * *out (the caller's, free()) holds *n instructions, *depth the deepest stack they reach.
 * GWB_EINVAL for an opcode the device does not know. In every build (unit-tested on the CPU). */
gwb_status gwb_verbs_gpu_program(const gwb_expr *e, gwb_expr_ins **out, int *n, int *depth);
const char *gwb_verbs_gpu_lacks_keys(const gwb_dataset *d, int nk);
const char *gwb_verbs_gpu_lacks_agg(int agg);

/* filter: the rows where the condition e (compiled against d's columns, gwb_lua_push_columns'
 * order) holds, or, e NULL, where the host mask (d->rows bytes) is set. */
gwb_status gwb_verbs_gpu_filter(gwb_dataset *d, const gwb_expr *e, const uint8_t *mask,
				gwb_dataset **out);
/* sort by columns cols[0..nk) (desc[k]: descending), stable, missing last. */
gwb_status gwb_verbs_gpu_sort(gwb_dataset *d, const int *cols, const bool *desc, int nk,
			      gwb_dataset **out);
/* group_by(keys[0..nk)):agg{...}: a[k] names the result column, its aggregate (gwb_agg) and
 * column (-1: count()); the result as g_agg builds it (keys, then the aggregates in order). */
typedef struct gwb_vagg {
	const char *name;
	int agg;
	int col;
} gwb_vagg;
gwb_status gwb_verbs_gpu_agg(gwb_dataset *d, const int *keys, int nk, const gwb_vagg *a, int na,
			     gwb_dataset **out);
/* How the device groups rows for the next group_by / value_counts: 0 its choice (a direct
 * table when the keys' combined range is small, else sorting), 1 direct, 2 sort-based (the
 * option groups = "direct" | "sort", for measuring both; GWB_VERBS_GROUP overrides). */
void gwb_verbs_gpu_group_method(int method);
/* gwb_col_distinct of column j: the distinct values that are not missing in order of first
 * appearance and their counts (*vals and *counts the caller's, free()). */
gwb_status gwb_verbs_gpu_distinct(gwb_dataset *d, int j, double **vals, size_t **counts,
				  size_t *k);

#ifdef __cplusplus
}
#endif
#endif
