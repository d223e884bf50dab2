/* verbs.h - the table verbs' device half (issue 30): masks from a compiled expression,
 * stream compaction, gathers, the stable multi-key order (CUB radix sort of order-preserving
 * keys, LSD over the keys) and groups of rows with their aggregates, on columns that already
 * lie on the GPU. Plain C (extern "C"); the implementations are kernels/verbs.cu and exist only
 * in CUDA builds (src/verbs_gpu.c calls them inside #ifdef GWB_HAVE_CUDA).
 *
 * Same answers as verbs.c: keys are verbs.c's order-preserving integers (numbers by their bits
 * with -0 folded into 0, categories by the rank of their label, missing largest, desc reversed
 * but missing still last), sorts are stable, groups are numbered in the sorted order of their
 * keys and their first row is the smallest; min and max are exact (a zero takes the sign of the
 * group's first zero, as the CPU's first-wins scan does); medians follow column.c's linear rule
 * with no fused multiply-add; sums are double atomics (the CPU's compensated sums agree to
 * rounding). Device arrays passed in are the caller's; device arrays handed out are from
 * gwb_gpu_malloc and the caller gives them back with gwb_gpu_free (or gwb_vg_groups_free). */
#ifndef GWB_KERNELS_VERBS_H
#define GWB_KERNELS_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/expr.h"
#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A column on the device: type a gwb_col_type (column.h: F32 0, I32 1, F64 2, U8 3, I64 4),
 * v its device values (one a row). */
typedef struct gwb_dcol {
	int type;
	const void *v;
} gwb_dcol;

/* A key: its column, the rank of each category code among the labels (device, nlevels
 * entries; NULL for numbers), and the direction. */
typedef struct gwb_vkey {
	gwb_dcol col;
	const uint64_t *rank;
	int nlevels;
	int desc;
} gwb_vkey;

/* The most keys a group-by on the device takes (more: the CPU's). */
#define GWB_VG_MAXKEYS 4
/* The deepest expression stack the device evaluates (deeper: the CPU's). */
#define GWB_VG_MAXDEPTH 16

/* dmask[i] (device, rows bytes) = 1 where the condition program code[0..n) holds for row i of
 * cols[0..ncols) (host array of device columns), as gwb_expr_mask computes it. */
gwb_status gwb_vg_expr_mask(const gwb_expr_ins *code, int n, const gwb_dcol *cols, int ncols,
			    size_t rows, uint8_t *dmask);

/* The rows where dmask (device) is set, in order, into didx (device, rows entries); *k of
 * them (CUB DeviceSelect::Flagged). */
gwb_status gwb_vg_select(const uint8_t *dmask, size_t rows, uint32_t *didx, size_t *k);

/* dst[i] = src[idx[i]] for i < k, elements of elem bytes (4 or 8); all on the device. */
gwb_status gwb_vg_gather(const void *src, int elem, const uint32_t *didx, size_t k, void *dst);

/* The stable order of rows [0, rows) by keys[0..nk) into dperm (device, rows entries). */
gwb_status gwb_vg_order(const gwb_vkey *keys, int nk, size_t rows, uint32_t *dperm);

/* Rows grouped by keys: gid (device, rows), first and count (device, ngroups). method 0: the
 * direct table when the keys' combined range is small, else sort-based; 1: always direct
 * (falls back to sort when the range is too large); 2: always sort-based. *used says which ran
 * (1 direct, 2 sort). */
typedef struct gwb_vgroups {
	size_t rows, ngroups;
	uint32_t *gid, *first, *count;
	int method;
} gwb_vgroups;
gwb_status gwb_vg_groups(const gwb_vkey *keys, int nk, size_t rows, int method, gwb_vgroups *g);
void gwb_vg_groups_free(gwb_vgroups *g);

/* One aggregate over the groups (verbs.h's gwb_agg numbers: count 0, sum 1, mean 2, min 3,
 * max 4, std 5, var 6, median 7, first 8, last 9; count_all 11) of column c into out[0..G)
 * (host doubles). i64 (for an int64 column's sum, min, max, first and last): out holds int64
 * bits instead, as gwb_groups_agg_i64; *exact false when a sum might leave int64 (then ask
 * again with i64 false for doubles). */
gwb_status gwb_vg_agg(const gwb_vgroups *g, int agg, const gwb_dcol *c, bool i64, double *out,
		      bool *exact);

#ifdef __cplusplus
}
#endif
#endif
