/* test_blas.c - the BLAS layer (blas.c): detection rule, thread policy (one thread inside
 * every gwb parallel-for, restored after, nesting, a call's own count), and the covariance
 * through BLAS against fully compensated dot products. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "dataset.h"
#include "dense.h"
#include "forest.h"
#include "intr.h"
#include "sparse.h"

static void test_classify(void **state)
{
	(void)state;
	assert_string_equal(gwb_blas_classify("OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY "
					      "Zen MAX_THREADS=64", NULL), "OpenBLAS");
	assert_string_equal(gwb_blas_classify("", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"),
			    "reference");
	assert_string_equal(gwb_blas_classify(NULL, "/usr/lib64/libblas.so.3"), "reference");
	assert_string_equal(gwb_blas_classify(NULL, "/usr/lib64/librefblas.so.3"), "reference");
	/* OpenBLAS's own libblas.so.3 (Debian's openblas-pthread folder) is not the reference */
	assert_string_equal(gwb_blas_classify("", "/usr/lib/x86_64-linux-gnu/openblas-pthread/"
					      "libblas.so.3"), "OpenBLAS");
	assert_string_equal(gwb_blas_classify("Intel(R) Math Kernel Library Version 2020.0.0", ""),
			    "MKL");
	assert_string_equal(gwb_blas_classify("BLIS 0.9.0", NULL), "BLIS");
	assert_string_equal(gwb_blas_classify("FlexiBLAS (backend OPENBLAS)", NULL), "FlexiBLAS");
	assert_string_equal(gwb_blas_classify(NULL, "/opt/vendor/libvendorblas.so"), "unknown");
	assert_string_equal(gwb_blas_classify(NULL, NULL), "unknown");
}

static void test_info(void **state)
{
	gwb_blas_info bi;
	(void)state;
	gwb_blas_get_info(&bi);
	assert_non_null(bi.name);
	assert_true(bi.threads >= 1);
	assert_non_null(bi.threads_from);
	assert_true(bi.blas_path[0] != 0);     /* dladdr found the file dgemm_ comes from */
	assert_true(bi.lapack_path[0] != 0);
	assert_int_equal(bi.reference, !strcmp(bi.name, "reference"));
	assert_int_equal(gwb_blas_reference_note() != NULL, bi.reference);
	if (bi.settable && !strcmp(bi.threads_from, "gwb"))
		assert_int_equal(bi.default_threads, gwb_cpu_count() < 64 ? gwb_cpu_count() : 64);
}

static atomic_int seen_max, seen_calls;

static void record(int n)
{
	int prev = atomic_load(&seen_max);
	while (n > prev && !atomic_compare_exchange_weak(&seen_max, &prev, n))
		;
	atomic_fetch_add(&seen_calls, 1);
}

static void item_forest(void *ctx, size_t i, int tid)
{
	(void)ctx;
	(void)i;
	(void)tid;
	record(gwb_blas_threads());
}

static void part_sparse(void *ctx, int64_t lo, int64_t hi, int part)
{
	(void)ctx;
	(void)lo;
	(void)hi;
	(void)part;
	record(gwb_blas_threads());
}

/* A parallel section inside a parallel section: BLAS stays at one thread throughout. */
static void item_nested(void *ctx, size_t i, int tid)
{
	(void)ctx;
	(void)tid;
	if (i == 0)
		gwb_parallel_items(2, 4, item_forest, NULL);
	record(gwb_blas_threads());
}

static void test_thread_policy(void **state)
{
	gwb_blas_info bi;
	int tok;
	(void)state;
	gwb_blas_get_info(&bi);
	if (!bi.settable)
		skip();   /* the reference BLAS: one thread always */
	assert_int_equal(gwb_blas_set_default_threads(3), GWB_OK);
	assert_int_equal(gwb_blas_threads(), 3);

	atomic_store(&seen_max, 0);
	atomic_store(&seen_calls, 0);
	gwb_parallel_items(2, 16, item_forest, NULL);
	assert_int_equal(atomic_load(&seen_calls), 16);
	assert_int_equal(atomic_load(&seen_max), 1);
	assert_int_equal(gwb_blas_threads(), 3);

	atomic_store(&seen_max, 0);
	atomic_store(&seen_calls, 0);
	gwb_parallel_for(1 << 20, 1, part_sparse, NULL);   /* gwb_cpu_threads() parts */
	assert_true(atomic_load(&seen_calls) >= 1);
	assert_int_equal(atomic_load(&seen_max), gwb_cpu_threads() > 1 ? 1 : 3);
	assert_int_equal(gwb_blas_threads(), 3);

	atomic_store(&seen_max, 0);
	gwb_parallel_items(2, 8, item_nested, NULL);
	assert_int_equal(atomic_load(&seen_max), 1);
	assert_int_equal(gwb_blas_threads(), 3);

	/* serial sections nest; the outermost end restores */
	gwb_blas_serial_begin();
	gwb_blas_serial_begin();
	assert_int_equal(gwb_blas_threads(), 1);
	gwb_blas_serial_end();
	assert_int_equal(gwb_blas_threads(), 1);
	tok = gwb_blas_threads_push(2);   /* inside a section: no effect */
	assert_int_equal(gwb_blas_threads(), 1);
	gwb_blas_threads_pop(tok);
	gwb_blas_serial_end();
	assert_int_equal(gwb_blas_threads(), 3);

	/* a call's own count, then back */
	tok = gwb_blas_threads_push(1);
	assert_int_equal(gwb_blas_threads(), 1);
	gwb_blas_threads_pop(tok);
	assert_int_equal(gwb_blas_threads(), 3);
	assert_int_equal(gwb_blas_threads_push(0), -1);   /* 0: leave it */
	assert_int_equal(gwb_blas_threads(), 3);

	assert_int_equal(gwb_blas_set_default_threads(-1), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "got -1"));
	assert_int_equal(gwb_blas_set_default_threads(0), GWB_OK);
	gwb_blas_get_info(&bi);
	assert_string_equal(bi.threads_from, "gwb");
}

/* The covariance as it was computed before BLAS: Neumaier-compensated dot products of the
 * centred f64 columns. */
static double ref_dot(const double *x, const double *y, size_t n)
{
	double s = 0, c = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		double t = x[i] * y[i], u = s + t;
		c += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
		s = u;
	}
	return s + c;
}

static void test_cov_blas_vs_compensated(void **state)
{
	const size_t r = 5000;   /* ten BLAS blocks of 512 rows, the last one partial */
	const int p = 6;
	gwb_dataset *d = NULL;
	gwb_matrix *C = NULL;
	double *Xc = malloc((size_t)p * r * sizeof(double)), worst = 0;
	uint64_t rng = 42;
	size_t i;
	int a, b;
	(void)state;
	assert_non_null(Xc);
	assert_int_equal(gwb_dataset_new(r, p, GWB_TASK_REGRESSION, 0, &d), GWB_OK);
	/* large means with small spread, correlated columns, and one nearly uncorrelated:
	 * the cases where the summation order shows */
	for (i = 0; i < r; i++) {
		double z = gwb_rng_normal(&rng);
		for (a = 0; a < p; a++) {
			double v = a == p - 1 ? gwb_rng_normal(&rng) : z + 0.1 * a * gwb_rng_normal(&rng);
			d->X[(size_t)a * r + i] = (float)(1e4 * (a + 1) + v * (a + 1));
		}
	}
	assert_int_equal(gwb_matrix_cov(d, false, &C), GWB_OK);
	for (a = 0; a < p; a++) {
		double s = 0, c = 0, mean;
		for (i = 0; i < r; i++) {
			double t = d->X[(size_t)a * r + i], u = s + t;
			c += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
			s = u;
		}
		mean = (s + c) / (double)r;
		for (i = 0; i < r; i++)
			Xc[(size_t)a * r + i] = (double)d->X[(size_t)a * r + i] - mean;
	}
	for (a = 0; a < p; a++)
		for (b = 0; b < p; b++) {
			double ref = ref_dot(Xc + (size_t)a * r, Xc + (size_t)b * r, r) / (double)(r - 1);
			double saa = ref_dot(Xc + (size_t)a * r, Xc + (size_t)a * r, r) / (double)(r - 1);
			double sbb = ref_dot(Xc + (size_t)b * r, Xc + (size_t)b * r, r) / (double)(r - 1);
			double got = ((const double *)C->data)[(size_t)a * p + b];
			double rel = fabs(got - ref) / sqrt(saa * sbb);
			if (rel > worst)
				worst = rel;
			assert_true(got == ((const double *)C->data)[(size_t)b * p + a]);
		}
	print_message("cov: worst |BLAS - compensated| / sqrt(C_aa C_bb) = %.3g\n", worst);
	/* the stated tolerance (dense.h): 1e-13 of sqrt(C_aa C_bb) */
	assert_true(worst <= 1e-13);
	gwb_matrix_free(C);
	gwb_dataset_free(d);
	free(Xc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_thread_policy),
		cmocka_unit_test(test_cov_blas_vs_compensated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
