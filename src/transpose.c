/* transpose.c - cache-blocked row-major -> column-major transpose, optionally over pthreads. */
#define _GNU_SOURCE
#include "transpose.h"

#include <pthread.h>
#include <unistd.h>

int gwb_transpose_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)(n > 1024 ? 1024 : n) : 1;
}

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
	size_t c0, c1;   /* this worker's column range */
};

/* Blocks of b x b: read b rows of b contiguous floats, write b columns of b contiguous
 * floats. For b = 32 a block is 4 KiB on each side, well inside L1. */
static void tblock(const struct tjob *t)
{
	size_t i0, j0, i, j, b = t->b;

	for (j0 = t->c0; j0 < t->c1; j0 += b) {
		size_t j1 = j0 + b < t->c1 ? j0 + b : t->c1;
		for (i0 = 0; i0 < t->rows; i0 += b) {
			size_t i1 = i0 + b < t->rows ? i0 + b : t->rows;
			for (j = j0; j < j1; j++) {
				const float *s = t->src + i0 * t->lds + j;
				float *d = t->dst + j * t->ldd + i0;
				for (i = i0; i < i1; i++, s += t->lds)
					*d++ = *s;
			}
		}
	}
}

static void *tworker(void *arg)
{
	tblock(arg);
	return NULL;
}

gwb_status gwb_transpose_f32(const float *src, size_t rows, size_t cols, size_t lds, float *dst,
			     size_t ldd, int block, int threads)
{
	struct tjob jobs[64];
	pthread_t tid[64];
	size_t per, c;
	int k, n, started;

	if (lds < cols || ldd < rows)
		return gwb_error(GWB_EINVAL, "transpose: strides too small (lds %zu < cols %zu or "
				 "ldd %zu < rows %zu)", lds, cols, ldd, rows);
	if (block <= 0)
		block = 32;
	if (!rows || !cols)
		return GWB_OK;
	if (threads <= 0)
		threads = rows * cols >= ((size_t)1 << 22) ? gwb_transpose_cpus() : 1;
	if (threads > 64)
		threads = 64;
	/* Hand out whole blocks of columns. */
	per = (cols + (size_t)threads - 1) / (size_t)threads;
	per = (per + (size_t)block - 1) / (size_t)block * (size_t)block;
	for (n = 0, c = 0; c < cols && n < threads; n++, c += per) {
		struct tjob t = {src, dst, rows, cols, lds, ldd, (size_t)block, c,
				 c + per < cols ? c + per : cols};
		jobs[n] = t;
	}
	for (k = 1; k < n; k++)
		if (pthread_create(&tid[k], NULL, tworker, &jobs[k]))
			break;
	started = k;   /* workers 1..started-1 run; the rest we do here */
	tblock(&jobs[0]);
	for (k = started; k < n; k++)
		tblock(&jobs[k]);
	for (k = 1; k < started; k++)
		pthread_join(tid[k], NULL);
	return GWB_OK;
}
