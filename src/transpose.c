/* transpose.c - cache-blocked row-major -> column-major transpose, optionally over pthreads. */
#define _GNU_SOURCE
#include "transpose.h"
#include "intr.h"
#include "pool.h"

#include <unistd.h>
#ifdef __SSE2__
#include <xmmintrin.h>
#endif

void gwb_transpose_f32_naive(const float *src, size_t rows, size_t cols, float *dst)
{
	size_t i, j;

	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			dst[j * rows + i] = src[i * cols + j];
}

struct tjob {
	const float *src;
	float *dst;
	size_t rows, cols, lds, ldd, b;
	size_t r0, r1;   /* this worker's row range */
};

#ifdef __SSE2__
/* 4 x 4 floats through registers: four row loads, a shuffle transpose, four column stores. */
static inline void t4x4(const float *s, size_t lds, float *d, size_t ldd)
{
	__m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + lds), r2 = _mm_loadu_ps(s + 2 * lds),
	       r3 = _mm_loadu_ps(s + 3 * lds);

	_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
	_mm_storeu_ps(d, r0);
	_mm_storeu_ps(d + ldd, r1);
	_mm_storeu_ps(d + 2 * ldd, r2);
	_mm_storeu_ps(d + 3 * ldd, r3);
}
#endif

/* Row panels of b rows, each cut into b x b blocks. A panel of the source is contiguous and
 * read once; each block writes b columns of b contiguous floats (whole cache lines), and the
 * block is small enough (4 KiB for b = 32) to stay in L1 between its reads and writes. Inside
 * a block, 4 x 4 tiles go through SSE registers; the ragged edges element by element. */
static void tblock(const struct tjob *t)
{
	size_t i0, j0, i, j, b = t->b;

	for (i0 = t->r0; i0 < t->r1; i0 += b) {
		size_t i1 = i0 + b < t->r1 ? i0 + b : t->r1;
		for (j0 = 0; j0 < t->cols; j0 += b) {
			size_t j1 = j0 + b < t->cols ? j0 + b : t->cols, i4 = i0, j4 = j0;
#ifdef __SSE2__
			size_t ie = i0 + (i1 - i0) / 4 * 4, je = j0 + (j1 - j0) / 4 * 4;
			for (j = j0; j < je; j += 4)
				for (i = i0; i < ie; i += 4)
					t4x4(t->src + i * t->lds + j, t->lds, t->dst + j * t->ldd + i,
					     t->ldd);
			/* what the 4 x 4 tiles left: the right strip (all rows) and the bottom
			 * strip (the tiled columns) */
			for (j = je; j < j1; j++)
				for (i = i0; i < i1; i++)
					t->dst[j * t->ldd + i] = t->src[i * t->lds + j];
			i4 = ie;
			j4 = je;
			for (j = j0; j < j4; j++)
				for (i = i4; i < i1; i++)
					t->dst[j * t->ldd + i] = t->src[i * t->lds + j];
#else
			(void)i4;
			(void)j4;
			for (j = j0; j < j1; j++) {
				const float *s = t->src + i0 * t->lds + j;
				float *d = t->dst + j * t->ldd + i0;
				for (i = i0; i < i1; i++, s += t->lds)
					*d++ = *s;
			}
#endif
		}
	}
}

static void tpanel(void *jobs, size_t i, int worker)
{
	(void)worker;
	tblock((struct tjob *)jobs + i);
}

gwb_status gwb_transpose_f32(const float *src, size_t rows, size_t cols, size_t lds, float *dst,
			     size_t ldd, int block, int threads)
{
	struct tjob jobs[64];
	size_t per, c;
	int n;

	if (lds < cols || ldd < rows)
		return gwb_error(GWB_EINVAL, "transpose: strides too small (lds %zu < cols %zu or "
				 "ldd %zu < rows %zu)", lds, cols, ldd, rows);
	if (block <= 0)
		block = 64;
	if (!rows || !cols)
		return GWB_OK;
	if (threads <= 0)
		threads = rows * cols >= ((size_t)1 << 22) ? gwb_cpu_count() : 1;
	if (threads > 64)
		threads = 64;
	/* Hand out whole row panels. */
	per = (rows + (size_t)threads - 1) / (size_t)threads;
	per = (per + (size_t)block - 1) / (size_t)block * (size_t)block;
	for (n = 0, c = 0; c < rows && n < threads; n++, c += per) {
		struct tjob t = {src, dst, rows, cols, lds, ldd, (size_t)block, c,
				 c + per < rows ? c + per : rows};
		jobs[n] = t;
	}
	gwb_parallel_items(n, (size_t)n, tpanel, jobs);
	return GWB_OK;
}
