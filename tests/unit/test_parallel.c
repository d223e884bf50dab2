/* test_parallel.c - gwb_parallel_for's persistent workers (pool.c): every index of every
 * call is visited exactly once, by parts numbered below gwb_cpu_threads(); a call from inside
 * a part and calls from two threads at once finish and cover their ranges; the fused
 * Lanczos product gwb_csr_spmv_dot equals the scaled product and a compensated dot; the
 * OpenBLAS idle policy is set before the library loads. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "sparse.h"

#define N_MAX 100000

struct cover {
	atomic_int *hits;
	atomic_int parts_seen;     /* bit per part index */
	atomic_int bad_part;
	int nested;                /* a part runs a parallel-for of its own over this many */
	atomic_int *inner;
};

static void cover_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct cover *c = p;
	if (part < 0 || part >= gwb_cpu_threads() || part >= 31)
		atomic_store(&c->bad_part, 1);
	else
		atomic_fetch_or(&c->parts_seen, 1 << part);
	for (int64_t i = lo; i < hi; i++)
		atomic_fetch_add(&c->hits[i], 1);
	if (c->nested) {
		struct cover in = {c->inner, 0, 0, 0, NULL};
		gwb_parallel_for(c->nested, 1, cover_part, &in);
		if (atomic_load(&in.bad_part))
			atomic_store(&c->bad_part, 1);
	}
}

static void check_once(atomic_int *hits, int64_t n, int times)
{
	for (int64_t i = 0; i < n; i++)
		if (atomic_load(&hits[i]) != times)
			fail_msg("index %lld visited %d times, expected %d", (long long)i,
				 atomic_load(&hits[i]), times);
}

static void test_every_index_once(void **state)
{
	(void)state;
	atomic_int *hits = calloc(N_MAX, sizeof(atomic_int));
	assert_non_null(hits);
	static const int64_t sizes[] = {0, 1, 2, 3, 63, 64, 1000, 4097, N_MAX};
	static const int64_t grains[] = {1, 7, 64, 1 << 15, 1 << 20};
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t g = 0; g < sizeof(grains) / sizeof(grains[0]); g++) {
			struct cover c = {hits, 0, 0, 0, NULL};
			memset(hits, 0, N_MAX * sizeof(atomic_int));
			/* back-to-back calls: the workers spin between them, or sleep and wake */
			for (int r = 0; r < 50; r++)
				gwb_parallel_for(sizes[s], grains[g], cover_part, &c);
			check_once(hits, sizes[s], 50);
			assert_int_equal(atomic_load(&c.bad_part), 0);
			if (sizes[s] / grains[g] >= gwb_cpu_threads() && gwb_cpu_threads() > 1)
				assert_int_equal(atomic_load(&c.parts_seen),
						 (1 << (gwb_cpu_threads() < 31 ? gwb_cpu_threads() : 31)) - 1);
		}
	free(hits);
}

static void test_nested_call(void **state)
{
	(void)state;
	atomic_int *hits = calloc(1000, sizeof(atomic_int)), *inner = calloc(500, sizeof(atomic_int));
	assert_non_null(hits);
	assert_non_null(inner);
	struct cover c = {hits, 0, 0, 500, inner};
	gwb_parallel_for(1000, 1, cover_part, &c);
	check_once(hits, 1000, 1);
	/* each outer part ran one inner parallel-for over 500 */
	int parts = __builtin_popcount((unsigned)atomic_load(&c.parts_seen));
	check_once(inner, 500, parts);
	assert_int_equal(atomic_load(&c.bad_part), 0);
	free(hits);
	free(inner);
}

struct racer {
	atomic_int *hits;
	int calls;
};

static void *race_main(void *p)
{
	struct racer *r = p;
	struct cover c = {r->hits, 0, 0, 0, NULL};
	for (int i = 0; i < r->calls; i++)
		gwb_parallel_for(20000, 64, cover_part, &c);
	return NULL;
}

static void test_two_threads_at_once(void **state)
{
	(void)state;
	struct racer a = {calloc(20000, sizeof(atomic_int)), 300};
	struct racer b = {calloc(20000, sizeof(atomic_int)), 300};
	assert_non_null(a.hits);
	assert_non_null(b.hits);
	pthread_t ta, tb;
	assert_int_equal(pthread_create(&ta, NULL, race_main, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, race_main, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	check_once(a.hits, 20000, 300);
	check_once(b.hits, 20000, 300);
	free(a.hits);
	free(b.hits);
}

static void test_spmv_dot(void **state)
{
	(void)state;
	gwb_csr *A = NULL;
	const int64_t n = 30000;
	assert_int_equal(gwb_csr_randsym(n, 3e-4, 7, true, &A), GWB_OK);
	double *x = malloc(n * sizeof(double)), *y1 = malloc(n * sizeof(double)),
	       *y2 = malloc(n * sizeof(double));
	assert_non_null(x);
	assert_non_null(y1);
	assert_non_null(y2);
	for (int64_t i = 0; i < n; i++)
		x[i] = sin(0.37 * (double)i) + 1e-3 * (double)(i % 11);
	double d = gwb_csr_spmv_dot(A, -1.0, x, y1);
	gwb_csr_spmm_scaled(A, -1.0, x, y2, 1);
	long double ref = 0, mag = 0;
	for (int64_t i = 0; i < n; i++) {
		assert_true(y1[i] == y2[i]);   /* the same rows, the same order of sums */
		ref += (long double)x[i] * y2[i];
		mag += fabsl((long double)x[i] * y2[i]);
	}
	assert_true(fabs(d - (double)ref) <= 4 * 2.2e-16 * (double)mag + 1e-300);
	/* alpha = 1 is gwb_csr_spmm */
	gwb_csr_spmm(A, x, y2, 1);
	gwb_csr_spmm_scaled(A, 1.0, x, y1, 1);
	for (int64_t i = 0; i < n; i++)
		assert_true(y1[i] == y2[i]);
	free(x);
	free(y1);
	free(y2);
	gwb_csr_free(A);
}

static char user_timeout[64];   /* OPENBLAS_THREAD_TIMEOUT as the test started ("" unset) */

static void test_openblas_idle_policy(void **state)
{
	(void)state;
	gwb_blas_info bi;
	gwb_blas_get_info(&bi);   /* loads the library */
	const char *v = getenv("OPENBLAS_THREAD_TIMEOUT");
	assert_non_null(v);       /* set before the load; a value the user set is kept */
	assert_string_equal(v, user_timeout[0] ? user_timeout : "16");
}

int main(void)
{
	const char *u = getenv("OPENBLAS_THREAD_TIMEOUT");
	if (u)
		strncpy(user_timeout, u, sizeof(user_timeout) - 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_index_once),
		cmocka_unit_test(test_nested_call),
		cmocka_unit_test(test_two_threads_at_once),
		cmocka_unit_test(test_spmv_dot),
		cmocka_unit_test(test_openblas_idle_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
