/* quantize.c - quantile edges per feature and uint8 codes (see quantize.h). */
#include "quantize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "intr.h"
#include "pool.h"

/* Sort floats (no NaN) ascending: an LSD radix sort on order-preserving keys, 3 passes of 11
 * bits. tmp and keys are scratch of n entries each. */
static void sort_floats(float *v, size_t n, uint32_t *keys, uint32_t *tmp)
{
	size_t i, cnt[2048];
	int pass;

	for (i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		keys[i] = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
	}
	for (pass = 0; pass < 3; pass++) {
		int sh = pass * 11;
		size_t sum = 0;
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(keys[i] >> sh) & 2047]++;
		for (i = 0; i < 2048; i++) {
			size_t c = cnt[i];
			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[cnt[(keys[i] >> sh) & 2047]++] = keys[i];
		memcpy(keys, tmp, n * sizeof(uint32_t));
	}
	for (i = 0; i < n; i++) {
		uint32_t k = keys[i], u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
		memcpy(&v[i], &u, 4);
	}
}

/* A value strictly between a < b when there is room, else a (so that v <= m keeps a left and
 * sends b right). */
static float midpoint(float a, float b)
{
	float m = (float)(((double)a + (double)b) * 0.5);

	if (!(m < b) || m < a)
		m = a;
	return m;
}

typedef struct qjob {
	const gwb_dataset *d;
	gwb_quant *q;
	const size_t *sample;   /* row indices to place edges from, or NULL = all rows */
	size_t nsample;
	float **vbuf;           /* per thread: nsample values */
	uint32_t **kbuf, **tbuf;
} qjob;

static void quant_feature(void *ctx, size_t jj, int tid)
{
	qjob *job = ctx;
	const gwb_dataset *d = job->d;
	gwb_quant *q = job->q;
	int j = (int)jj, maxnb = q->bins - 1, nb, ne = 0;
	const float *x = d->X + (size_t)j * d->rows;
	float *v = job->vbuf[tid], *E = q->edges + (size_t)j * (size_t)(q->bins - 1);
	uint8_t *codes = q->codes + (size_t)j * d->rows;
	size_t i, n = 0, distinct;
	uint8_t nan = 0;

	for (i = 0; i < job->nsample; i++) {
		float a = x[job->sample ? job->sample[i] : i];
		if (a == a)
			v[n++] = a;
	}
	sort_floats(v, n, job->kbuf[tid], job->tbuf[tid]);
	distinct = n ? 1 : 0;
	for (i = 1; i < n; i++)
		distinct += v[i] != v[i - 1];
	if (n == 0) {
		nb = 1;
	} else if (distinct <= (size_t)maxnb) {
		for (i = 1; i < n; i++)
			if (v[i] != v[i - 1])
				E[ne++] = midpoint(v[i - 1], v[i]);
		nb = ne + 1;
	} else {
		int k;
		for (k = 1; k < maxnb; k++) {
			size_t at = (size_t)((double)k * (double)n / (double)maxnb);
			float e;
			if (at == 0 || at >= n)
				continue;
			e = v[at - 1] < v[at] ? midpoint(v[at - 1], v[at]) : v[at];
			if (e >= v[n - 1])
				continue;  /* the last bin would be empty */
			if (ne == 0 || e > E[ne - 1])
				E[ne++] = e;
		}
		nb = ne + 1;
	}
	q->nbins[j] = nb;
	for (i = 0; i < d->rows; i++) {
		float a = x[i];
		uint8_t c = gwb_quant_code(E, nb, a);
		nan |= (uint8_t)(a != a);
		codes[i] = c;
	}
	q->has_nan[j] = nan;
}

gwb_status gwb_quant_build(const gwb_dataset *d, int bins, size_t sample, uint64_t seed,
			   int threads, gwb_quant **out)
{
	gwb_quant *q = NULL;
	qjob job = {0};
	size_t *idx = NULL, i, cells;
	int j, t;
	gwb_status st = GWB_OK;

	*out = NULL;
	if (bins < 2 || bins > GWB_QUANT_MAX_BINS)
		return gwb_error(GWB_EINVAL, "bins must be between 2 and 256 (got %d): codes are uint8 "
				 "and one bin is kept for missing values", bins);
	if (!d || d->rows == 0 || d->features <= 0)
		return gwb_error(GWB_EINVAL, "quantize: the dataset is empty (%zu rows, %d features)",
				 d ? d->rows : 0, d ? d->features : 0);
	if (threads <= 0)
		threads = gwb_cpu_count();
	if (threads > d->features)
		threads = d->features;
	if (!sample)
		sample = GWB_QUANT_DEFAULT_SAMPLE;
	cells = d->rows * (size_t)d->features;
	q = calloc(1, sizeof(*q));
	if (!q)
		goto oom;
	q->rows = d->rows;
	q->features = d->features;
	q->bins = bins;
	q->codes = malloc(cells);
	q->nbins = calloc((size_t)d->features, sizeof(int));
	q->has_nan = calloc((size_t)d->features, 1);
	q->edges = calloc((size_t)d->features * (size_t)(bins - 1), sizeof(float));
	q->offset = calloc((size_t)d->features + 1, sizeof(int));
	if (!q->codes || !q->nbins || !q->has_nan || !q->edges || !q->offset)
		goto oom;

	job.d = d;
	job.q = q;
	job.nsample = d->rows;
	if (d->rows > sample) {
		/* A Bernoulli sample of about `sample` rows, chosen by the counter RNG. */
		uint64_t cut = (uint64_t)((double)sample / (double)d->rows * 18446744073709551615.0);
		size_t n = 0;
		idx = malloc((sample + sample / 8 + 64) * sizeof(size_t));
		if (!idx)
			goto oom;
		for (i = 0; i < d->rows && n < sample + sample / 8 + 64; i++)
			if (gwb_rng_hash(seed, GWB_RNG_STREAM_QUANT, 0, i) < cut)
				idx[n++] = i;
		job.sample = idx;
		job.nsample = n;
	}
	job.vbuf = calloc((size_t)threads, sizeof(float *));
	job.kbuf = calloc((size_t)threads, sizeof(uint32_t *));
	job.tbuf = calloc((size_t)threads, sizeof(uint32_t *));
	if (!job.vbuf || !job.kbuf || !job.tbuf)
		goto oom;
	for (t = 0; t < threads; t++) {
		job.vbuf[t] = malloc((job.nsample + 1) * sizeof(float));
		job.kbuf[t] = malloc((job.nsample + 1) * sizeof(uint32_t));
		job.tbuf[t] = malloc((job.nsample + 1) * sizeof(uint32_t));
		if (!job.vbuf[t] || !job.kbuf[t] || !job.tbuf[t])
			goto oom;
	}
	gwb_parallel_items(threads, (size_t)d->features, quant_feature, &job);
	for (j = 0; j < d->features; j++)
		q->offset[j + 1] = q->offset[j] + q->nbins[j] + 1;
	*out = q;
	q = NULL;
	goto out_free;
oom:
	st = gwb_error(GWB_ENOMEM, "quantize: out of memory for %zu rows x %d features (%zu bytes of "
		       "codes)", d->rows, d->features, cells);
out_free:
	if (job.vbuf)
		for (t = 0; t < threads; t++) {
			free(job.vbuf[t]);
			free(job.kbuf ? job.kbuf[t] : NULL);
			free(job.tbuf ? job.tbuf[t] : NULL);
		}
	free(job.vbuf);
	free(job.kbuf);
	free(job.tbuf);
	free(idx);
	gwb_quant_free(q);
	return st;
}

float gwb_quant_threshold(const gwb_quant *q, int j, int t)
{
	if (t >= q->nbins[j] - 1)
		return INFINITY;
	return q->edges[(size_t)j * (size_t)(q->bins - 1) + (size_t)t];
}

void gwb_quant_free(gwb_quant *q)
{
	if (!q)
		return;
	free(q->codes);
	free(q->nbins);
	free(q->has_nan);
	free(q->edges);
	free(q->offset);
	free(q);
}
