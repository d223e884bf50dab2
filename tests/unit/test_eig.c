/* test_eig.c - unit tests for the dense Matrix (dense.c), the eigen result (eig.c) and the
 * dense drivers (eig_dense.c): compensated sums, generators, symmetry, save/load and its
 * checksum, the Jacobi reference against LAPACK, residuals, sorting, threads, the SVD. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dense.h"
#include "eig.h"

static void test_kahan_dot(void **state)
{
	/* 1 + 1e-16 * 1e6 terms: the naive sum loses every small term, the compensated keeps them. */
	size_t n = 1000001, i;
	double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double)), naive = 0;
	(void)state;
	x[0] = 1.0;
	y[0] = 1.0;
	for (i = 1; i < n; i++) {
		x[i] = 1e-16;
		y[i] = 1.0;
	}
	for (i = 0; i < n; i++)
		naive += x[i] * y[i];
	assert_true(naive == 1.0);
	assert_true(fabs(gwb_dot_kahan(x, y, n) - (1.0 + 1e-10)) < 1e-22);
	free(x);
	free(y);
}

static void test_matrix_access_and_convert(void **state)
{
	gwb_matrix *A, *B;
	(void)state;
	assert_int_equal(gwb_matrix_new(3, 4, GWB_F64, GWB_ROW_MAJOR, &A), GWB_OK);
	gwb_matrix_set(A, 0, 2, 3, 7.0);
	assert_true(((double *)A->data)[2 * 4 + 3] == 7.0);
	assert_int_equal(gwb_matrix_convert(A, SIZE_MAX, GWB_F32, GWB_COL_MAJOR, &B), GWB_OK);
	assert_true(((float *)B->data)[3 * 3 + 2] == 7.0f);
	assert_true(gwb_matrix_get(B, 0, 2, 3) == 7.0);
	gwb_matrix_free(B);
	gwb_matrix_free(A);
	assert_int_equal(gwb_matrix_new(0, 4, GWB_F64, GWB_ROW_MAJOR, &A), GWB_EINVAL);
	assert_null(A);
}

static void test_symmetry_check(void **state)
{
	gwb_matrix *A;
	double rel;
	size_t at[2];
	(void)state;
	assert_int_equal(gwb_matrix_randn(20, 20, true, GWB_F64, 3, &A), GWB_OK);
	assert_true(gwb_matrix_is_symmetric(A, 0, 0.0, &rel, at));
	assert_true(rel == 0.0);
	gwb_matrix_set(A, 0, 4, 9, gwb_matrix_get(A, 0, 4, 9) + 1.0);
	assert_false(gwb_matrix_is_symmetric(A, 0, 1e-10, &rel, at));
	assert_int_equal(at[0], 4);
	assert_int_equal(at[1], 9);
	gwb_matrix_free(A);
}

static void test_spectrum_generators(void **state)
{
	static const gwb_spectrum kinds[] = {GWB_SPEC_GRADED, GWB_SPEC_CLUSTERED, GWB_SPEC_REPEATED,
					     GWB_SPEC_UNIFORM};
	double lam[50];
	uint64_t rng = 1;
	size_t k, i;
	(void)state;
	for (k = 0; k < 4; k++) {
		gwb_spectrum_values(kinds[k], 50, &rng, lam);
		for (i = 1; i < 50; i++)
			assert_true(lam[i] >= lam[i - 1]);
	}
	gwb_spectrum_values(GWB_SPEC_REPEATED, 50, &rng, lam);
	assert_true(lam[0] == -2.0 && lam[49] == 3.0);
}

static void test_save_load_checksum(void **state)
{
	char path[] = "/tmp/gwb-unit-XXXXXX";
	int fd = mkstemp(path);
	gwb_matrix *A, *B;
	FILE *f;
	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(gwb_matrix_batch(3, 5, GWB_SPEC_GRADED, GWB_F32, 2, &A), GWB_OK);
	assert_int_equal(gwb_matrix_save(A, path), GWB_OK);
	assert_int_equal(gwb_matrix_load(path, &B), GWB_OK);
	assert_true(B->batched && B->count == 3 && B->rows == 5 && B->dtype == GWB_F32);
	assert_memory_equal(A->data, B->data, gwb_matrix_bytes(A));
	gwb_matrix_free(B);
	/* Flip one data byte: the checksum catches it. */
	f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, 48 + 17, SEEK_SET);
	fputc(0x5a, f);
	fclose(f);
	assert_int_equal(gwb_matrix_load(path, &B), GWB_ECORRUPT);
	assert_non_null(strstr(gwb_errmsg(), "checksum"));
	assert_null(B);
	gwb_matrix_free(A);
	unlink(path);
}

static void test_jacobi_reference_vs_lapack(void **state)
{
	gwb_matrix *A;
	gwb_dense_opts o;
	gwb_eigen *e;
	double *a, w[40], V[1600];
	int sweeps = 0;
	size_t i;
	(void)state;
	assert_int_equal(gwb_matrix_batch(1, 40, GWB_SPEC_CLUSTERED, GWB_F64, 4, &A), GWB_OK);
	A->batched = false;
	gwb_dense_opts_default(&o);
	o.backend = GWB_BACKEND_CPU;
	assert_int_equal(gwb_eig_dense(A, &o, &e), GWB_OK);
	assert_int_equal(gwb_matrix_to_f64_colmajor(A, 0, &a), GWB_OK);
	assert_int_equal(gwb_eig_jacobi_ref(40, a, w, V, 0, 0, &sweeps), GWB_OK);
	assert_true(sweeps >= 2 && sweeps < 30);
	for (i = 0; i < 40; i++)
		assert_true(fabs(w[i] - e->values[i]) < 1e-13);
	assert_true(e->max_residual < 1e-13);
	assert_true(e->orthogonality < 1e-13);
	free(a);
	gwb_eigen_free(e);
	gwb_matrix_free(A);
}

static void test_nonsymmetric_points_to_svd(void **state)
{
	gwb_matrix *A;
	gwb_dense_opts o;
	gwb_eigen *e = NULL;
	(void)state;
	assert_int_equal(gwb_matrix_randn(5, 5, false, GWB_F64, 1, &A), GWB_OK);
	gwb_dense_opts_default(&o);
	assert_int_equal(gwb_eig_dense(A, &o, &e), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "eig.svd"));
	assert_null(e);
	gwb_matrix_free(A);
}

static void test_batched_threads_match(void **state)
{
	gwb_matrix *B;
	gwb_dense_opts o;
	gwb_eigen *e1, *e4;
	(void)state;
	assert_int_equal(gwb_matrix_batch(37, 12, GWB_SPEC_RANDN, GWB_F64, 9, &B), GWB_OK);
	gwb_dense_opts_default(&o);
	o.backend = GWB_BACKEND_CPU;
	o.threads = 1;
	assert_int_equal(gwb_eig_batched(B, &o, &e1), GWB_OK);
	o.threads = 4;
	assert_int_equal(gwb_eig_batched(B, &o, &e4), GWB_OK);
	assert_memory_equal(e1->values, e4->values, 37 * 12 * sizeof(double));
	assert_true(e4->max_residual < 1e-13);
	gwb_eigen_free(e1);
	gwb_eigen_free(e4);
	gwb_matrix_free(B);
}

static void test_eigen_sort_and_history(void **state)
{
	gwb_eigen *e;
	size_t i;
	(void)state;
	assert_int_equal(gwb_eigen_new(3, 3, 3, 1, true, false, &e), GWB_OK);
	e->values[0] = 2;
	e->values[1] = -1;
	e->values[2] = 0.5;
	for (i = 0; i < 3; i++) {
		gwb_eigen_vector(e, 0, i)[0] = e->values[i];
		e->residuals[i] = (double)i;
	}
	gwb_eigen_sort(e, 0);
	assert_true(e->values[0] == -1 && e->values[1] == 0.5 && e->values[2] == 2);
	assert_true(gwb_eigen_vector(e, 0, 0)[0] == -1 && e->residuals[0] == 1.0);
	for (i = 0; i < 100; i++)
		assert_int_equal(gwb_eigen_history_push(e, (int)i + 1, 0, 1.0 / (double)(i + 1)), GWB_OK);
	assert_int_equal(e->hist_len, 100);
	assert_true(e->hist[99].iteration == 100);
	gwb_eigen_free(e);
}

static void test_svd_small(void **state)
{
	gwb_matrix *A;
	gwb_dense_opts o;
	gwb_eigen *e;
	(void)state;
	/* diag(3, 2) padded with a zero row: singular values 3 and 2. */
	assert_int_equal(gwb_matrix_new(3, 2, GWB_F64, GWB_ROW_MAJOR, &A), GWB_OK);
	gwb_matrix_set(A, 0, 0, 0, 2);
	gwb_matrix_set(A, 0, 1, 1, 3);
	gwb_dense_opts_default(&o);
	o.backend = GWB_BACKEND_CPU;
	assert_int_equal(gwb_svd_dense(A, &o, &e), GWB_OK);
	assert_true(fabs(e->values[0] - 3) < 1e-15 && fabs(e->values[1] - 2) < 1e-15);
	assert_true(e->max_residual < 1e-15);
	gwb_eigen_free(e);
	gwb_matrix_free(A);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kahan_dot),
		cmocka_unit_test(test_matrix_access_and_convert),
		cmocka_unit_test(test_symmetry_check),
		cmocka_unit_test(test_spectrum_generators),
		cmocka_unit_test(test_save_load_checksum),
		cmocka_unit_test(test_jacobi_reference_vs_lapack),
		cmocka_unit_test(test_nonsymmetric_points_to_svd),
		cmocka_unit_test(test_batched_threads_match),
		cmocka_unit_test(test_eigen_sort_and_history),
		cmocka_unit_test(test_svd_small),
	};
	return cmocka_run_group_tests_name("eig", tests, NULL, NULL);
}
