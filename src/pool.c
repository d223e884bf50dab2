/* pool.c - the thread pool (pool.h): persistent workers that every parallel loop of gwb runs
 * on, the even ranges of gwb_parallel_for and the handed-out items of gwb_parallel_items. A
 * call made while the workers run another job (a parallel loop inside a part, or from a
 * second thread), or one that asks for more workers than the pool has, starts threads of its
 * own for that call. BLAS runs on one thread inside every parallel section (blas.h). */
#define _GNU_SOURCE
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "blas.h"
#include "intr.h"

#define PARTS_MAX 256   /* the most parts one call runs (gwb_parallel_items' limit) */
#define POOL_MAX 64     /* the most parts the pool runs (gwb_cpu_threads' limit) */

int gwb_cpu_threads(void)
{
	static int n;
	if (!n) {
		const char *e = getenv("GWB_THREADS");
		long v = e ? strtol(e, NULL, 10) : gwb_cpu_count();
		if (v < 1)
			v = 1;
		if (v > POOL_MAX)
			v = POOL_MAX;
		n = (int)v;
	}
	return n;
}

struct par_job {
	gwb_par_fn fn;
	void *ctx;
	int64_t lo, hi;
	int part;
};

static void *par_run(void *p)
{
	struct par_job *j = p;
	j->fn(j->ctx, j->lo, j->hi, j->part);
	return NULL;
}

/* The persistent workers: gwb_cpu_threads() - 1 of them, started on the first call (the
 * caller runs part 0). An iterative solver makes thousands of short parallel sections
 * (thick-restart Lanczos: an SpMV and vector passes of ~0.1-2 ms per step), and a thread
 * start and join costs ~40 us each on our VMs. A job is published by bumping `gen` (release)
 * after its parts are written; a worker spins a little (the next section usually follows at
 * once), then sleeps on `go`. One job at a time: a call made while the pool runs another
 * starts its own threads (par_spawn). */
#define POOL_SPIN 4000   /* pause instructions a worker spins (~20-80 us) before sleeping */

static struct {
	pthread_once_t once;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	int workers;              /* started */
	int sleepers;             /* workers waiting on go (under mu) */
	atomic_flag busy;         /* a job is running */
	/* the job's number << 7 | its parts: one word, so a worker that skips a job never reads
	 * the parts count of the next one */
	_Atomic uint64_t gen;
	_Atomic int pending;      /* parts 1..t-1 still running */
	struct par_job jobs[POOL_MAX];
} pool = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
	  PTHREAD_COND_INITIALIZER, 0, 0, ATOMIC_FLAG_INIT, 0, 0, {{0}}};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static void *pool_main(void *p)
{
	int me = (int)(intptr_t)p;
	uint64_t seen = 0;

	for (;;) {
		uint64_t g = atomic_load_explicit(&pool.gen, memory_order_acquire);
		for (int s = 0; g == seen && s < POOL_SPIN; s++) {
			cpu_relax();
			g = atomic_load_explicit(&pool.gen, memory_order_acquire);
		}
		if (g == seen) {
			pthread_mutex_lock(&pool.mu);
			while ((g = atomic_load_explicit(&pool.gen, memory_order_acquire)) == seen) {
				pool.sleepers++;
				pthread_cond_wait(&pool.go, &pool.mu);
				pool.sleepers--;
			}
			pthread_mutex_unlock(&pool.mu);
		}
		seen = g;
		/* a worker past this job's parts skips it (the caller waits only for parts < t) */
		if (me >= (int)(g & 127))
			continue;
		par_run(&pool.jobs[me]);
		if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&pool.mu);
			pthread_cond_signal(&pool.done);
			pthread_mutex_unlock(&pool.mu);
		}
	}
	return NULL;
}

static void pool_start(void)
{
	int t = gwb_cpu_threads();
	pthread_attr_t at;

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	for (int i = 1; i < t; i++) {
		pthread_t th;
		if (pthread_create(&th, &at, pool_main, (void *)(intptr_t)i))
			break;   /* fewer workers: jobs get no more parts than workers + 1 */
		pool.workers = i;
	}
	pthread_attr_destroy(&at);
}

/* Threads of its own for this call (nested or concurrent calls, or more parts than the pool
 * has); a part whose thread cannot start runs here after part 0. */
static void par_spawn(int t, struct par_job *jobs)
{
	pthread_t th[PARTS_MAX];
	bool started[PARTS_MAX];

	for (int i = 1; i < t; i++)
		started[i] = pthread_create(&th[i], NULL, par_run, &jobs[i]) == 0;
	par_run(&jobs[0]);
	for (int i = 1; i < t; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else
			par_run(&jobs[i]);
	}
}

/* Run t > 1 parts of fn; `even` splits [0, n) into t equal ranges (the pool may run fewer
 * parts than asked: then fewer, longer ranges), otherwise every part gets [0, n) and part
 * numbers below t (the items shape: parts take their items from a shared counter). */
static void run_parts(int t, bool even, int64_t n, gwb_par_fn fn, void *ctx)
{
	gwb_blas_serial_begin();   /* our threads, so BLAS runs on one (blas.h) */
	pthread_once(&pool.once, pool_start);
	if ((!even && t > pool.workers + 1) ||
	    atomic_flag_test_and_set_explicit(&pool.busy, memory_order_acquire)) {
		struct par_job jobs[PARTS_MAX];
		for (int i = 0; i < t; i++)
			jobs[i] = even ? (struct par_job){fn, ctx, n * i / t, n * (i + 1) / t, i}
				       : (struct par_job){fn, ctx, 0, n, i};
		par_spawn(t, jobs);
		gwb_blas_serial_end();
		return;
	}
	if (t > pool.workers + 1)
		t = pool.workers + 1;
	for (int i = 0; i < t; i++)
		pool.jobs[i] = even ? (struct par_job){fn, ctx, n * i / t, n * (i + 1) / t, i}
				    : (struct par_job){fn, ctx, 0, n, i};
	atomic_store_explicit(&pool.pending, t - 1, memory_order_relaxed);
	uint64_t g = atomic_load_explicit(&pool.gen, memory_order_relaxed);
	atomic_store_explicit(&pool.gen, ((g >> 7) + 1) << 7 | (uint64_t)t, memory_order_release);
	pthread_mutex_lock(&pool.mu);
	if (pool.sleepers)
		pthread_cond_broadcast(&pool.go);
	pthread_mutex_unlock(&pool.mu);
	par_run(&pool.jobs[0]);
	for (int s = 0; atomic_load_explicit(&pool.pending, memory_order_acquire) && s < POOL_SPIN; s++)
		cpu_relax();
	if (atomic_load_explicit(&pool.pending, memory_order_acquire)) {
		pthread_mutex_lock(&pool.mu);
		while (atomic_load_explicit(&pool.pending, memory_order_acquire))
			pthread_cond_wait(&pool.done, &pool.mu);
		pthread_mutex_unlock(&pool.mu);
	}
	atomic_flag_clear_explicit(&pool.busy, memory_order_release);
	gwb_blas_serial_end();
}

void gwb_parallel_for(int64_t n, int64_t grain, gwb_par_fn fn, void *ctx)
{
	int t = gwb_cpu_threads();

	if (grain < 1)
		grain = 1;
	if (n / grain < t)
		t = (int)(n / grain);
	if (t <= 1) {
		if (n > 0)
			fn(ctx, 0, n, 0);
		return;
	}
	run_parts(t, true, n, fn, ctx);
}

struct items {
	gwb_item_fn fn;
	void *ctx;
	atomic_size_t next;
	size_t n;
};

static void items_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct items *it = p;

	(void)lo;
	(void)hi;
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&it->next, 1, memory_order_relaxed);
		if (i >= it->n)
			break;
		it->fn(it->ctx, i, part);
	}
}

void gwb_parallel_items(int threads, size_t n, gwb_item_fn fn, void *ctx)
{
	struct items it = {fn, ctx, 0, n};

	if (threads > PARTS_MAX)
		threads = PARTS_MAX;
	if ((size_t)threads > n)
		threads = (int)n;
	if (threads <= 1) {
		for (size_t i = 0; i < n; i++)
			fn(ctx, i, 0);
		return;
	}
	run_parts(threads, false, (int64_t)n, items_part, &it);
}
