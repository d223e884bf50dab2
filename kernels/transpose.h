/* transpose.h - the GPU transpose of a float32 table from row-major (rows x cols, one record
 * after another) to column-major (cols x rows, one feature after another): the first step of
 * the forest pipeline and the first teaching kernel. Three variants, for measurement:
 *   NAIVE   one thread per element; reads coalesced, writes strided by `rows` (each warp's
 *           32 stores land in 32 different segments);
 *   TILED   a tile x tile block staged in shared memory so that both the reads and the writes
 *           are coalesced; reading a tile column hits one shared-memory bank tile times over
 *           (a 32-way bank conflict for tile 32);
 *   PADDED  the same with one extra column per tile row (tile + 1 floats), which spreads a
 *           tile column over all 32 banks and removes the conflict.
 * Plain C (extern "C"), implemented in kernels/transpose.cu, present only in CUDA builds: host
 * code calls it inside #ifdef GWB_HAVE_CUDA. Every launch goes through gwb_launch (recorded in
 * gpu.kernels() as transpose_naive / transpose_tiled / transpose_padded). */
#ifndef GWB_KERNELS_TRANSPOSE_H
#define GWB_KERNELS_TRANSPOSE_H

#include <stddef.h>

#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_transpose_kernel {
	GWB_TRANSPOSE_NAIVE = 0,
	GWB_TRANSPOSE_TILED = 1,
	GWB_TRANSPOSE_PADDED = 2,
} gwb_transpose_kernel;

/* "naive", "tiled", "padded". */
const char *gwb_transpose_kernel_name(gwb_transpose_kernel k);

/* Run one variant once on device buffers: d_dst[c * rows + r] = d_src[r * cols + c].
 * tile: 16, 32 or 64 (the tile side; blocks are tile x 8 threads); ignored by NAIVE.
 * stream: a cudaStream_t (NULL = the default stream). When kernel_ms is not NULL the call
 * waits for the kernel and stores its CUDA-event time; otherwise it returns at once.
 * The caller owns both buffers (rows * cols floats each, not overlapping). GWB_EINVAL for a
 * bad tile, GWB_ECUDA with the call site when a launch fails. */
gwb_status gwb_gpu_transpose(const float *d_src, float *d_dst, size_t rows, size_t cols,
			     gwb_transpose_kernel k, int tile, void *stream, float *kernel_ms);

/* Timings of one host round trip (gwb_gpu_transpose_host). */
typedef struct gwb_transpose_timing {
	double h2d_ms;        /* host -> device copy of the input (wall, the copy alone) */
	double kernel_ms;     /* median over reps of the kernel alone */
	double kernel_min_ms; /* fastest rep */
	double d2h_ms;        /* device -> host copy of the result (wall, the copy alone) */
	double register_ms;   /* page-locking src and dst before the copies (0 when they were
			       * registered already or are not tracked: buffer.h) */
	int h2d_registered;   /* 1: the input crossed from registered memory; 0: staged */
	int d2h_registered;   /* 1: the result landed in registered memory; 0: staged */
	double gbps;          /* effective bandwidth: 2 * bytes / kernel_ms (read + write) */
	double copy_ms;       /* cudaMemcpy device -> device of the same bytes (median) */
	double copy_gbps;     /* 2 * bytes / copy_ms: what the memory system does for a copy */
	int reps;
} gwb_transpose_timing;

/* Copy src (host, rows x cols row-major) to the device, run variant k reps times (>= 1;
 * timed one by one), time a device-to-device copy of the same size for reference, and copy
 * the result back into dst (host, column-major: dst[c * rows + r]). Where the caller tracked
 * src and dst (gwb_host_track, buffer.h) they are page-locked first, timed apart
 * (register_ms), so the copies run at the pinned rate; else they go through the staging
 * ring. Device memory (two buffers, purpose "data.transpose") is freed before returning. GWB_ENODEV without a GPU,
 * GWB_ENOMEM with bytes needed and free when the device is too full. */
gwb_status gwb_gpu_transpose_host(const float *src, float *dst, size_t rows, size_t cols,
				  gwb_transpose_kernel k, int tile, int reps,
				  gwb_transpose_timing *t);

#ifdef __cplusplus
}
#endif
#endif
