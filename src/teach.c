/* teach.c - the CPU measurements of the lessons (teach.h). Each measurement is a small loop
 * with one idea; results go into a volatile sink so the compiler keeps the loads. */
#define _GNU_SOURCE
#include "teach.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "pool.h"

static volatile double sink;

#define MAXREPS 32

static void *alloc(size_t bytes, const char *what, gwb_status *rc)
{
	void *p = aligned_alloc(64, (bytes + 63) & ~(size_t)63);

	*rc = p ? GWB_OK : gwb_error(GWB_ENOMEM, "teach: out of host memory for %s (%zu bytes)",
				     what, bytes);
	return p;
}

static gwb_status intr(void)
{
	return gwb_intr_pending() ? gwb_error(GWB_EINTR, "teach: interrupted") : GWB_OK;
}

static void fill(float *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (float)(i % 97) * 0.25f;
}

/* Sum of a[0..n) (n a multiple of 16 floats for the vector part) in four vector chains of four
 * floats: the loads, not the adds, set the pace. GCC/clang vector extensions, no intrinsics. */
typedef float v4f __attribute__((vector_size(16)));

static double sum4(const float *a, size_t n)
{
	v4f s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
	size_t i;
	float r = 0;

	for (i = 0; i + 16 <= n; i += 16) {
		v4f x0, x1, x2, x3;
		memcpy(&x0, a + i, 16);
		memcpy(&x1, a + i + 4, 16);
		memcpy(&x2, a + i + 8, 16);
		memcpy(&x3, a + i + 12, 16);
		s0 += x0;
		s1 += x1;
		s2 += x2;
		s3 += x3;
	}
	for (; i < n; i++)
		r += a[i];
	s0 += s1 + s2 + s3;
	return (double)s0[0] + s0[1] + s0[2] + s0[3] + r;
}

/* A compiler barrier: memory may have changed, so a loop around it really reloads. */
#define BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")

gwb_status gwb_teach_cpu_sweep(const size_t *sizes, int n, double touched, int reps, double *gbps)
{
	size_t maxb = 0;
	gwb_status rc;
	float *a;
	double t[MAXREPS];

	for (int i = 0; i < n; i++)
		maxb = sizes[i] > maxb ? sizes[i] : maxb;
	if (!(a = alloc(maxb, "the working set", &rc)))
		return rc;
	fill(a, maxb / 4);
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int i = 0; i < n && !rc; i++) {
		size_t m = sizes[i] / 4;
		long passes = (long)(touched / (double)sizes[i]);
		if (passes < 1)
			passes = 1;
		sink += sum4(a, m);  /* warm: the set is in the cache it fits */
		for (int r = 0; r < reps && !(rc = intr()); r++) {
			double t0 = gwb_now(), s = 0;
			for (long p = 0; p < passes; p++) {
				BARRIER(a);
				s += sum4(a, m);
			}
			t[r] = gwb_now() - t0;
			sink += s;
		}
		if (!rc)
			gbps[i] = (double)passes * sizes[i] / (gwb_median(t, reps) * 1e9);
		gwb_progress_update(i + 1, NULL, 0);
	}
	free(a);
	return rc;
}

static size_t sysfs_size(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[32];
	size_t v = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof buf, f)) {
		char *end;
		v = strtoul(buf, &end, 10);
		if (*end == 'K')
			v <<= 10;
		else if (*end == 'M')
			v <<= 20;
	}
	fclose(f);
	return v;
}

void gwb_teach_cpu_caches(size_t *l1, size_t *l2, size_t *l3)
{
	*l1 = *l2 = *l3 = 0;
	for (int i = 0; i < 8; i++) {
		char p[128], type[32] = "";
		FILE *f;
		snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		size_t level = sysfs_size(p);
		if (!level)
			continue;
		snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if ((f = fopen(p, "r"))) {
			if (!fgets(type, sizeof type, f))
				type[0] = 0;
			fclose(f);
		}
		if (strncmp(type, "Instruction", 11) == 0)
			continue;
		snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		size_t s = sysfs_size(p);
		if (level == 1)
			*l1 = s;
		else if (level == 2)
			*l2 = s;
		else if (level == 3)
			*l3 = s;
	}
}

gwb_status gwb_teach_cpu_stride(size_t bytes, const int *strides, int n, int reps, double *gbps)
{
	gwb_status rc;
	float *a;
	double t[MAXREPS];
	size_t len = bytes / 4;

	if (!(a = alloc(bytes, "the strided buffer", &rc)))
		return rc;
	fill(a, len);
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int i = 0; i < n && !rc; i++) {
		size_t s = strides[i] < 1 ? 1 : (size_t)strides[i], m = len / s;
		for (int r = 0; r < reps && !(rc = intr()); r++) {
			float c[8] = {0};
			double t0 = gwb_now();
			BARRIER(a);
			for (size_t k = 0; k + 8 <= m; k += 8)
				for (int u = 0; u < 8; u++)  /* eight independent chains */
					c[u] += a[(k + u) * s];
			t[r] = gwb_now() - t0;
			sink += c[0] + c[1] + c[2] + c[3] + c[4] + c[5] + c[6] + c[7];
		}
		if (!rc)
			gbps[i] = (double)m * 4 / (gwb_median(t, reps) * 1e9);
	}
	free(a);
	return rc;
}

gwb_status gwb_teach_cpu_soa(size_t rows, int features, int reps, double *aos_ms, double *soa_ms)
{
	gwb_status rc;
	size_t F = (size_t)features, f = F / 2;
	float *x;
	double t[MAXREPS];

	if (!(x = alloc(rows * F * 4, "the feature table", &rc)))
		return rc;
	fill(x, rows * F);
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int soa = 0; soa < 2 && !rc; soa++) {
		for (int r = 0; r < reps && !(rc = intr()); r++) {
			double t0 = gwb_now();
			float s = 0;
			BARRIER(x);
			if (soa) {
				s = (float)sum4(x + f * rows, rows);
			} else {
				for (size_t i = 0; i < rows; i++)
					s += x[i * F + f];
			}
			t[r] = gwb_now() - t0;
			sink += s;
		}
		if (!rc)
			*(soa ? soa_ms : aos_ms) = gwb_median(t, reps) * 1e3;
	}
	free(x);
	return rc;
}

gwb_status gwb_teach_cpu_sets(size_t rows, const int *pitches, int n, int reps, double *ns)
{
	gwb_status rc = GWB_OK;
	double t[MAXREPS];
	int pmax = 0;

	for (int i = 0; i < n; i++)
		pmax = pitches[i] > pmax ? pitches[i] : pmax;
	float *a = alloc(rows * (size_t)pmax * 4, "the matrix", &rc);
	if (!a)
		return rc;
	fill(a, rows * (size_t)pmax);
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int i = 0; i < n && !rc; i++) {
		size_t P = (size_t)pitches[i];
		for (int r = 0; r < reps && !(rc = intr()); r++) {
			double t0 = gwb_now();
			float s = 0;
			BARRIER(a);
			/* 16 columns share one 64-byte line per row: the walk down column c + 1 finds
			 * the lines of column c in the cache only if they were not evicted */
			for (size_t c = 0; c < 16; c++)
				for (size_t k = 0; k < rows; k++)
					s += a[k * P + c];
			t[r] = gwb_now() - t0;
			sink += s;
		}
		if (!rc)
			ns[i] = gwb_median(t, reps) * 1e9 / (16.0 * rows);
	}
	free(a);
	return rc;
}

/* --- threads ------------------------------------------------------------------------------ */

struct vote_job {
	size_t lo, hi;
	int C, B, F, shared;
	unsigned *counts;     /* shared counters (atomics) or this thread's own */
	const uint8_t *codes; /* histogram: features x rows; NULL for votes */
	const uint8_t *y;
	size_t rows;
};

/* Row r's class in 0..C-1: a hash scaled by multiply-shift (no division in the loop). */
static int class_of(size_t r, int C)
{
	uint32_t h = (uint32_t)(r * 2654435761u);

	h ^= h >> 15;
	return (int)(((uint64_t)h * (uint32_t)C) >> 32);
}

static void vote_worker(void *p, size_t k, int worker)
{
	struct vote_job *j = (struct vote_job *)p + k;

	(void)worker;
	if (!j->codes) {
		for (size_t r = j->lo; r < j->hi; r++) {
			unsigned *c = &j->counts[class_of(r, j->C)];
			if (j->shared)
				__atomic_fetch_add(c, 1u, __ATOMIC_RELAXED);
			else
				(*c)++;
		}
		return;
	}
	for (size_t r = j->lo; r < j->hi; r++) {
		int y = j->y[r];
		for (int f = 0; f < j->F; f++) {
			unsigned *c = &j->counts[((size_t)f * j->B + ((unsigned)j->codes[(size_t)f * j->rows + r] * j->B >> 8)) * 2 + y];
			if (j->shared)
				__atomic_fetch_add(c, 1u, __ATOMIC_RELAXED);
			else
				(*c)++;
		}
	}
}

/* Runs the job over `threads` workers of the pool; shared: one counter array of `cells`, else
 * one per worker, summed into out. Returns seconds (negative when memory ran out). */
static double run_counts(struct vote_job base, size_t cells, int threads, unsigned *out)
{
	struct vote_job jobs[64];
	unsigned *priv = NULL;
	double t0;

	/* each thread's counters start on a cache line of their own (no false sharing) */
	size_t pitch = (cells + 15) & ~(size_t)15;

	threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
	memset(out, 0, cells * sizeof(unsigned));
	if (!base.shared && !(priv = aligned_alloc(64, (size_t)threads * pitch * sizeof(unsigned))))
		return -1;
	t0 = gwb_now();
	for (int k = 0; k < threads; k++) {
		jobs[k] = base;
		jobs[k].lo = base.rows * k / threads;
		jobs[k].hi = base.rows * (k + 1) / threads;
		jobs[k].counts = base.shared ? out : priv + (size_t)k * pitch;
		if (!base.shared)
			memset(jobs[k].counts, 0, cells * sizeof(unsigned));
	}
	gwb_parallel_items(threads, (size_t)threads, vote_worker, jobs);
	if (!base.shared)
		for (int k = 0; k < threads; k++)
			for (size_t c = 0; c < cells; c++)
				out[c] += priv[(size_t)k * pitch + c];
	t0 = gwb_now() - t0;
	free(priv);
	return t0;
}

static gwb_status counts_series(struct vote_job base, const int *sizes, int n, int threads,
				int reps, double *shared_ms, double *private_ms, const char *what)
{
	gwb_status rc = GWB_OK;
	double t[MAXREPS];
	int smax = 1;

	for (int i = 0; i < n; i++)
		smax = sizes[i] > smax ? sizes[i] : smax;
	size_t cmax = base.codes ? (size_t)base.F * smax * 2 : (size_t)smax;
	unsigned *a = calloc(cmax, sizeof(unsigned)), *b = calloc(cmax, sizeof(unsigned));
	if (!a || !b) {
		free(a);
		free(b);
		return gwb_error(GWB_ENOMEM, "teach: out of host memory for counters");
	}
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int i = 0; i < n && !rc; i++) {
		size_t cells = base.codes ? (size_t)base.F * sizes[i] * 2 : (size_t)sizes[i];
		if (base.codes)
			base.B = sizes[i];
		else
			base.C = sizes[i];
		for (int mode = 0; mode < 2 && !rc; mode++) {
			base.shared = mode == 0;
			for (int r = 0; r < reps && !(rc = intr()); r++)
				if ((t[r] = run_counts(base, cells, threads, mode == 0 ? a : b)) < 0)
					rc = gwb_error(GWB_ENOMEM, "teach: out of host memory for %d "
						       "per-thread copies of %zu counters", threads, cells);
			if (!rc)
				(mode == 0 ? shared_ms : private_ms)[i] = gwb_median(t, reps) * 1e3;
		}
		if (!rc && memcmp(a, b, cells * sizeof(unsigned)) != 0)
			rc = gwb_error(GWB_EINVAL, "teach: shared and private %s disagree", what);
		gwb_progress_update(i + 1, NULL, 0);
	}
	free(a);
	free(b);
	return rc;
}

gwb_status gwb_teach_cpu_vote(size_t rows, const int *classes, int n, int threads, int reps,
			      double *shared_ms, double *private_ms)
{
	struct vote_job base = {0};

	base.rows = rows;
	return counts_series(base, classes, n, threads, reps, shared_ms, private_ms, "votes");
}

gwb_status gwb_teach_cpu_hist(size_t rows, int features, const int *bins, int n, int threads,
			      int reps, double *shared_ms, double *private_ms)
{
	struct vote_job base = {0};
	gwb_status rc;
	uint8_t *codes = alloc(rows * (size_t)features, "the codes", &rc), *y;

	if (!codes)
		return rc;
	if (!(y = alloc(rows, "the classes", &rc))) {
		free(codes);
		return rc;
	}
	for (size_t r = 0; r < rows; r++) {
		uint32_t h = (uint32_t)(r * 2654435761u) ^ 0x9e3779b9u;
		y[r] = (uint8_t)(h >> 31);
		for (int f = 0; f < features; f++) {
			h ^= h << 13;
			h ^= h >> 17;
			h ^= h << 5;
			codes[(size_t)f * rows + r] = (uint8_t)(h >> 24);
		}
	}
	base.rows = rows;
	base.F = features;
	base.codes = codes;
	base.y = y;
	rc = counts_series(base, bins, n, threads, reps, shared_ms, private_ms, "histograms");
	free(codes);
	free(y);
	return rc;
}

gwb_status gwb_teach_cpu_branch(size_t elems, const double *frac, int n, int reps, double *ns)
{
	gwb_status rc;
	uint8_t *flag = alloc(elems, "the branch flags", &rc);
	double t[MAXREPS];
	uint64_t st = 0x9e3779b97f4a7c15ull;

	if (!flag)
		return rc;
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int i = 0; i < n && !rc; i++) {
		uint64_t cut = (uint64_t)(frac[i] * 18446744073709551615.0);
		for (size_t k = 0; k < elems; k++) {
			st ^= st << 13;
			st ^= st >> 7;
			st ^= st << 17;
			flag[k] = frac[i] >= 1.0 || st < cut;
		}
		for (int r = 0; r < reps && !(rc = intr()); r++) {
			double t0 = gwb_now();
			uint64_t a = 1, b = 1;
			for (size_t k = 0; k < elems; k++) {
				if (flag[k]) {
					__asm__ volatile("" ::: "memory");  /* keeps a real branch */
					a += k ^ 0x55;
				} else {
					b += k * 3;
				}
			}
			t[r] = gwb_now() - t0;
			sink += (double)(a + b);
		}
		if (!rc)
			ns[i] = gwb_median(t, reps) * 1e9 / (double)elems;
	}
	free(flag);
	return rc;
}

struct small_job {
	float *p;
	int elems, tasks;
};

/* A thread of its own per task, on purpose: the cost of starting one is what this lesson
 * measures (every parallel loop of gwb runs on the pool instead, pool.h). */
static void *small_worker(void *arg)
{
	struct small_job *j = arg;

	for (int k = 0; k < j->tasks; k++)
		for (int i = 0; i < j->elems; i++)
			j->p[(size_t)k * j->elems + i] = j->p[(size_t)k * j->elems + i] * 0.5f + 1.0f;
	return NULL;
}

gwb_status gwb_teach_cpu_launch(int count, int elems, int reps, double *many_ms, double *one_ms)
{
	gwb_status rc;
	float *p = alloc((size_t)count * elems * 4, "the tasks' data", &rc);
	double t[MAXREPS];

	if (!p)
		return rc;
	fill(p, (size_t)count * elems);
	reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
	for (int mode = 0; mode < 2 && !rc; mode++) {
		for (int r = 0; r < reps && !(rc = intr()); r++) {
			double t0 = gwb_now();
			int tasks = mode == 0 ? 1 : count;
			for (int k = 0; k < (mode == 0 ? count : 1); k++) {
				struct small_job j = {p + (size_t)k * elems, elems, tasks};
				pthread_t th;
				if (pthread_create(&th, NULL, small_worker, &j) == 0)
					pthread_join(th, NULL);
				else
					small_worker(&j);
			}
			t[r] = gwb_now() - t0;
		}
		if (!rc)
			*(mode == 0 ? many_ms : one_ms) = gwb_median(t, reps) * 1e3;
	}
	free(p);
	return rc;
}
