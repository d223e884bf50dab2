/* teach.h - the GPU measurements behind the `teach` lessons (lua/gwb/teach.lua writes the
 * lessons, src/lapi_teach.c binds these and the CPU counterparts of src/teach.c). Each call
 * allocates what it needs through gwb_gpu_malloc (purpose "teach"), launches its kernels
 * through gwb_launch (so gpu.kernels(), the panel and gpu.profile see them, named teach_*),
 * times them with CUDA events (median of reps, after a warm-up), frees everything before it
 * returns (also on GWB_EINTR, checked between launches), and returns GWB_ENODEV without a GPU.
 * Sizes are the caller's: src/lapi_teach.c scales them to the free device memory. `work` (0..1]
 * scales the iteration counts of the kernels that loop on chip (1: the lesson's full size).
 * Plain C (extern "C"), implemented in kernels/teach.cu, present only in CUDA builds. */
#ifndef GWB_KERNELS_TEACH_H
#define GWB_KERNELS_TEACH_H

#include <stddef.h>

#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Working-set sweep. per_sm = 1: every block reads the whole working set (L1 then L2 as it
 * grows: what one SM sees); per_sm = 0: the blocks share the set (grid-stride) and the loads
 * skip L1 (L2 then device memory). sizes[i] bytes (multiples of 16); gbps[i] = bytes read /
 * time. touched: total bytes each size reads (>= the set), chosen by the caller. */
gwb_status gwb_teach_gpu_sweep(const size_t *sizes, int n, int per_sm, double touched, int reps,
			       double *gbps);
/* Registers and shared memory: FP32 FMA throughput from registers (flops/s; 3 operands read and
 * one written per FMA: reg_bytes_per_s), and shared-memory read bandwidth without conflicts. */
gwb_status gwb_teach_gpu_onchip(int reps, double work, double *fma_flops, double *reg_bytes_per_s,
				double *smem_gbps);
/* Strided reads: elements of `width` bytes (4, 8, 16: float, float2/double, float4/double2),
 * the i-th thread reading element i * stride of a `bytes` buffer. gbps = useful bytes / time. */
gwb_status gwb_teach_gpu_stride(size_t bytes, int width, const int *strides, int n, int reps,
				double *gbps);
/* Feature scan: the sum of one feature of rows x features float32 stored row-major (AoS) and
 * column-major (SoA); ms of each. */
gwb_status gwb_teach_gpu_soa(size_t rows, int features, int reps, double *aos_ms,
			     double *soa_ms);
/* Shared-memory bank conflicts: a warp reads word lane * stride (ms for `iters` reads), and a
 * 32 x 32 float tile read by column unpadded (row pitch 32) and padded (pitch 33). */
gwb_status gwb_teach_gpu_banks(const int *strides, int n, int reps, double work, double *ms,
			       double *tile_ms, double *padded_ms);
/* Votes of `rows` rows into classes[i] classes: global atomics against a per-block
 * shared-memory count then one atomic per class per block. Checks both totals. */
gwb_status gwb_teach_gpu_vote(size_t rows, const int *classes, int n, int reps,
			      double *global_ms, double *block_ms);
/* Histograms of `rows` rows x `features` uint8 codes (two classes), bins[i] bins: global
 * atomics against shared-memory histograms (features x bins x 2 counters per block) merged
 * once per block. occ[i]: theoretical occupancy of the shared kernel at its shared memory. */
gwb_status gwb_teach_gpu_hist(size_t rows, int features, const int *bins, int n, int reps,
			      double *global_ms, double *smem_ms, double *occ, double *smem_bytes);
/* Divergence: fraction frac[i] of the warps split in two halves that take different branches
 * (each branch the same work); ms of each. */
gwb_status gwb_teach_gpu_divergence(const double *frac, int n, int reps, double work,
				    double *ms);
/* Launch overhead: `count` launches of a kernel over `elems` elements each, against one launch
 * over count * elems elements; ms of each (launch to last kernel done). */
gwb_status gwb_teach_gpu_launch(int count, int elems, int reps, double *many_ms, double *one_ms);

#ifdef __cplusplus
}
#endif
#endif
