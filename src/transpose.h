/* transpose.h - CPU cache-blocked transpose of float32 tables from row-major (one record after
 * another, as a CSV or a C array of structs lays them out) to column-major (one feature after
 * another, the Dataset layout). The GPU kernels live in kernels/transpose.h. */
#ifndef GWB_TRANSPOSE_H
#define GWB_TRANSPOSE_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[j * ldd + i] = src[i * lds + j] for i < rows, j < cols. lds >= cols and ldd >= rows are
 * the row stride of src and the column stride of dst (in elements). The copy goes in square
 * blocks of `block` elements (0 = 64) so that both sides stay in cache; threads > 1 splits the
 * blocks over that many pthreads (0 = one per online CPU for large tables, 1 = serial).
 * src and dst must not overlap. GWB_EINVAL for bad strides. */
gwb_status gwb_transpose_f32(const float *src, size_t rows, size_t cols, size_t lds, float *dst,
			     size_t ldd, int block, int threads);

/* The plain double loop, for reference and for the benchmark's "naive" line. */
void gwb_transpose_f32_naive(const float *src, size_t rows, size_t cols, float *dst);

#ifdef __cplusplus
}
#endif
#endif
