/* test_mm.c - Matrix Market reader/writer and CSR construction: round trips, duplicates,
 * symmetric/pattern/integer/skew/array files, and every malformed-input error with its line. */
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
#include "mm.h"
#include "sparse.h"

static gwb_csr *read_ok(const char *text)
{
	gwb_csr *A = NULL;
	gwb_matrix *D = NULL;
	gwb_status st = gwb_mm_read_mem(text, strlen(text), "t.mtx", &A, &D);
	if (st)
		fail_msg("unexpected error: %s", gwb_errmsg());
	assert_non_null(A);
	assert_null(D);
	return A;
}

/* The error message of a read that must fail with EPARSE and mention `want`. */
static void read_fails(const char *text, const char *want)
{
	gwb_csr *A = NULL;
	gwb_matrix *D = NULL;
	gwb_status st = gwb_mm_read_mem(text, strlen(text), "t.mtx", &A, &D);
	assert_int_equal(st, GWB_EPARSE);
	assert_null(A);
	assert_null(D);
	if (!strstr(gwb_errmsg(), want))
		fail_msg("message \"%s\" does not mention \"%s\"", gwb_errmsg(), want);
}

static void test_general_duplicates_summed(void **state)
{
	(void)state;
	gwb_csr *A = read_ok("%%MatrixMarket matrix coordinate real general\n"
			     "% a comment\n%\n"
			     "3 4 5\n"
			     "1 1 1.5\n3 4 -2\n1 1 2.5\n2 3 1e-3\n\n3 1 7\n");
	assert_int_equal(A->rows, 3);
	assert_int_equal(A->cols, 4);
	assert_int_equal(A->nnz, 4);  /* (1,1) given twice */
	assert_true(gwb_csr_get(A, 0, 0) == 4.0);
	assert_true(gwb_csr_get(A, 2, 3) == -2.0);
	assert_true(gwb_csr_get(A, 1, 2) == 1e-3);
	assert_true(gwb_csr_get(A, 2, 0) == 7.0);
	assert_true(gwb_csr_get(A, 0, 1) == 0.0);
	assert_false(gwb_csr_is_symmetric(A, NULL));
	gwb_csr_free(A);
}

static void test_symmetric_pattern_integer(void **state)
{
	(void)state;
	gwb_csr *A = read_ok("%%MatrixMarket matrix coordinate real symmetric\n"
			     "3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n");
	assert_int_equal(A->nnz, 6);
	assert_true(gwb_csr_get(A, 0, 1) == -1.0 && gwb_csr_get(A, 1, 0) == -1.0);
	assert_true(gwb_csr_get(A, 1, 2) == -1.0);
	assert_int_equal(A->sym, 1);
	assert_true(gwb_csr_is_symmetric(A, NULL));
	gwb_csr_free(A);

	A = read_ok("%%MatrixMarket matrix coordinate pattern symmetric\n4 4 3\n2 1\n3 2\n4 3\n");
	assert_int_equal(A->nnz, 6);
	assert_true(gwb_csr_get(A, 3, 2) == 1.0 && gwb_csr_get(A, 2, 3) == 1.0);
	gwb_csr_free(A);

	A = read_ok("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -3\n2 1 12\n");
	assert_true(gwb_csr_get(A, 0, 1) == -3.0 && gwb_csr_get(A, 1, 0) == 12.0);
	gwb_csr_free(A);

	/* banner words are case-insensitive; CRLF line ends are fine */
	A = read_ok("%%MatrixMarket MATRIX Coordinate Real Skew-Symmetric\r\n2 2 1\r\n2 1 5\r\n");
	assert_true(gwb_csr_get(A, 1, 0) == 5.0 && gwb_csr_get(A, 0, 1) == -5.0);
	gwb_csr_free(A);
}

static void test_errors_name_the_line(void **state)
{
	(void)state;
	read_fails("", "empty file");
	read_fails("hello\n", "not a Matrix Market file");
	read_fails("%%MatrixMarket matrix coordinate real\n", "5 words");
	read_fails("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
		   "complex matrices are not supported");
	read_fails("%%MatrixMarket matrix coordinate real hermitian\n", "hermitian");
	read_fails("%%MatrixMarket vector coordinate real general\n", "'vector'");
	read_fails("%%MatrixMarket matrix coordinate real general\n% only comments\n",
		   "before the size line");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3\n", "t.mtx:2: bad size line");
	read_fails("%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", "square");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2\n",
		   "t.mtx:4: expected 3 values");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2 1 9\n",
		   "t.mtx:4: expected 3 values (row col value), found more");
	read_fails("%%MatrixMarket matrix coordinate real general\n%c\n3 3 2\n1 1 1\n4 1 1\n",
		   "t.mtx:5: entry (4, 1) is outside the matrix 1..3 x 1..3");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", "t.mtx:3: entry (0, 1)");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n",
		   "t.mtx:3: value 'abc' is not a real number");
	read_fails("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n",
		   "not an integer");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 1\nx 1 1\n",
		   "t.mtx:3: row and column must be integers");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n",
		   "after 2 of the 3 entries");
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n",
		   "t.mtx:4: more entries than the 1");
	read_fails("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
		   "diagonal");
	read_fails("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", "after 3 of 4 values");
	/* size lines that promise more than the file can hold fail before any allocation */
	read_fails("%%MatrixMarket matrix coordinate real general\n3 3 4000000000000\n1 1 1\n",
		   "more than the rest of the file can hold");
	read_fails("%%MatrixMarket matrix array real general\n4000000000 4000000000\n1\n",
		   "more than the rest of the file can hold");
	read_fails("%%MatrixMarket matrix coordinate real general\n9000000000000 3 1\n1 1 1\n",
		   "sizes beyond 1099511627776");
}

/* A legal file may declare a large order with few entries: sizes are checked by what is stored
 * (the entries), not by rows x cols or the file's length (issue 26). */
static void test_large_order_few_entries(void **state)
{
	const char *t = "%%MatrixMarket matrix coordinate real general\n2000000 2000000 2\n"
			"1 1 1.5\n2000000 2000000 2.5\n";
	gwb_csr *A = NULL;
	(void)state;
	assert_int_equal(gwb_mm_read_mem(t, strlen(t), "big.mtx", &A, NULL), GWB_OK);
	assert_int_equal(A->rows, 2000000);
	assert_int_equal(A->cols, 2000000);
	assert_int_equal(A->nnz, 2);
	gwb_csr_free(A);
}

static void test_array_format(void **state)
{
	gwb_csr *A = NULL;
	gwb_matrix *D = NULL;
	const char *g = "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n";
	const char *s = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
	(void)state;
	assert_int_equal(gwb_mm_read_mem(g, strlen(g), "g.mtx", &A, &D), GWB_OK);
	assert_null(A);
	assert_non_null(D);
	assert_int_equal(D->rows, 2);
	assert_int_equal(D->cols, 3);
	/* column-major order in the file */
	assert_true(gwb_matrix_get(D, 0, 0, 0) == 1 && gwb_matrix_get(D, 0, 1, 0) == 2);
	assert_true(gwb_matrix_get(D, 0, 0, 2) == 5 && gwb_matrix_get(D, 0, 1, 2) == 6);
	gwb_matrix_free(D);
	assert_int_equal(gwb_mm_read_mem(s, strlen(s), "s.mtx", &A, &D), GWB_OK);
	/* lower triangle by columns: (1,1)=1 (2,1)=2 (3,1)=3 (2,2)=4 (3,2)=5 (3,3)=6 */
	assert_true(gwb_matrix_get(D, 0, 0, 2) == 3 && gwb_matrix_get(D, 0, 2, 0) == 3);
	assert_true(gwb_matrix_get(D, 0, 1, 2) == 5 && gwb_matrix_get(D, 0, 2, 1) == 5);
	assert_true(gwb_matrix_get(D, 0, 2, 2) == 6);
	gwb_matrix_free(D);
	/* a coordinate-only caller gets a clear error */
	assert_int_equal(gwb_mm_read_mem(g, strlen(g), "g.mtx", &A, NULL), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "array"));
}

static void tmp_path(char *buf, size_t n, const char *name)
{
	const char *d = getenv("GWB_TEST_TMP");
	snprintf(buf, n, "%s/%s.%d", d ? d : "/tmp", name, (int)getpid());
}

static void test_round_trip(void **state)
{
	char path[256];
	gwb_csr *A, *B;
	gwb_matrix *D = NULL;
	(void)state;
	tmp_path(path, sizeof(path), "rt.mtx");
	/* symmetric: written as the lower triangle, read back identical, values exact */
	assert_int_equal(gwb_csr_randsym(200, 0.05, 3, true, &A), GWB_OK);
	assert_int_equal(gwb_mm_write_csr(A, path, "round trip"), GWB_OK);
	assert_int_equal(gwb_mm_read(path, &B, &D), GWB_OK);
	assert_int_equal(B->nnz, A->nnz);
	assert_int_equal(B->sym, 1);
	for (int64_t p = 0; p < A->nnz; p++) {
		assert_int_equal(gwb_csr_ci(A, p), gwb_csr_ci(B, p));
		assert_true(A->val[p] == B->val[p]);
	}
	for (int64_t i = 0; i <= A->rows; i++)
		assert_int_equal(gwb_csr_rp(A, i), gwb_csr_rp(B, i));
	gwb_csr_free(B);
	/* general: a non-symmetric matrix stays general */
	A->val[1] += 1.0;
	A->sym = -1;
	assert_int_equal(gwb_mm_write_csr(A, path, NULL), GWB_OK);
	assert_int_equal(gwb_mm_read(path, &B, &D), GWB_OK);
	assert_int_not_equal(B->sym, 1);
	assert_int_equal(B->nnz, A->nnz);
	assert_true(B->val[1] == A->val[1]);
	gwb_csr_free(B);
	gwb_csr_free(A);
	/* dense: array format */
	assert_int_equal(gwb_matrix_randn(5, 3, false, GWB_F64, 9, &D), GWB_OK);
	assert_int_equal(gwb_mm_write_dense(D, path, NULL), GWB_OK);
	gwb_matrix *E = NULL;
	assert_int_equal(gwb_mm_read(path, &B, &E), GWB_OK);
	assert_non_null(E);
	for (size_t i = 0; i < 5; i++)
		for (size_t j = 0; j < 3; j++)
			assert_true(gwb_matrix_get(D, 0, i, j) == gwb_matrix_get(E, 0, i, j));
	gwb_matrix_free(D);
	gwb_matrix_free(E);
	unlink(path);
	/* a missing file is EIO naming the path */
	assert_int_equal(gwb_mm_read("/nonexistent/x.mtx", &B, NULL), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "/nonexistent/x.mtx"));
}

static void test_csr_build_and_spmv(void **state)
{
	int64_t I[] = {0, 2, 1, 0, 2, 2};
	int64_t J[] = {0, 1, 1, 0, 2, 0};
	double V[] = {1, 2, 3, 4, 5, 6};
	gwb_csr *A, *W;
	double x[3] = {1, -2, 0.5}, y[3], yw[3];
	(void)state;
	assert_int_equal(gwb_csr_from_coo(3, 3, 6, I, J, V, false, &A), GWB_OK);
	assert_int_equal(A->nnz, 5);
	assert_false(A->wide);
	gwb_csr_spmv(A, x, y);
	assert_true(y[0] == 5.0);           /* (1+4)*1 */
	assert_true(y[1] == -6.0);
	assert_true(y[2] == 6.0 - 4.0 + 2.5);
	/* the same matrix with 64-bit indices gives the same product */
	assert_int_equal(gwb_csr_alloc(3, 3, A->nnz, true, &W), GWB_OK);
	assert_true(W->wide);
	for (int64_t i = 0; i <= 3; i++)
		W->rp64[i] = gwb_csr_rp(A, i);
	for (int64_t p = 0; p < A->nnz; p++) {
		W->ci64[p] = gwb_csr_ci(A, p);
		W->val[p] = A->val[p];
	}
	gwb_csr_spmv(W, x, yw);
	for (int i = 0; i < 3; i++)
		assert_true(y[i] == yw[i]);
	int64_t at[2];
	assert_false(gwb_csr_is_symmetric(W, at));
	assert_int_equal(at[0], 2);  /* (3,1) has no (1,3) partner */
	assert_int_equal(at[1], 0);
	gwb_csr_free(W);
	gwb_csr_free(A);
	/* out-of-range triplets are refused */
	int64_t Ib[] = {3};
	assert_int_equal(gwb_csr_from_coo(3, 3, 1, Ib, J, V, false, &A), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "outside"));
}

static void test_generators(void **state)
{
	gwb_csr *A;
	double ev[6];
	(void)state;
	assert_int_equal(gwb_csr_laplacian2d(4, 3, &A), GWB_OK);
	assert_int_equal(A->rows, 12);
	assert_int_equal(A->nnz, 12 + 2 * (3 * 3 + 4 * 2));
	assert_true(gwb_csr_is_symmetric(A, NULL));
	assert_true(gwb_csr_get(A, 5, 5) == 4.0 && gwb_csr_get(A, 5, 1) == -1.0);
	gwb_csr_free(A);
	assert_int_equal(gwb_csr_laplacian3d(3, 3, 3, &A), GWB_OK);
	assert_int_equal(A->nnz, 27 + 2 * 3 * (2 * 3 * 3));
	assert_true(gwb_csr_norm_inf(A) == 12.0);
	gwb_csr_free(A);
	/* closed-form eigenvalues: 1-D order 1 is 2; 2-D 2x2 grid is 2, 4, 4, 6 */
	assert_int_equal(gwb_laplacian_eigenvalues(1, 1, 1, 1, 1, ev), GWB_OK);
	assert_true(fabs(ev[0] - 2.0) < 1e-15);
	assert_int_equal(gwb_laplacian_eigenvalues(2, 2, 2, 1, 4, ev), GWB_OK);
	assert_true(fabs(ev[0] - 2) < 1e-14 && fabs(ev[1] - 4) < 1e-14 && fabs(ev[2] - 4) < 1e-14 &&
		    fabs(ev[3] - 6) < 1e-14);
	/* randsym: symmetric, deterministic per seed, density close to asked */
	gwb_csr *B;
	assert_int_equal(gwb_csr_randsym(1000, 0.01, 7, false, &A), GWB_OK);
	assert_int_equal(gwb_csr_randsym(1000, 0.01, 7, false, &B), GWB_OK);
	assert_true(gwb_csr_is_symmetric(A, NULL));
	assert_int_equal(A->nnz, B->nnz);
	assert_memory_equal(A->val, B->val, (size_t)A->nnz * sizeof(double));
	assert_true(fabs((double)A->nnz / 1e6 - 0.01) < 0.001);
	gwb_csr_free(A);
	gwb_csr_free(B);
	assert_int_equal(gwb_csr_randsym(10, 0, 1, false, &A), GWB_EINVAL);
	assert_int_equal(gwb_csr_laplacian2d(0, 3, &A), GWB_EINVAL);
}

static void test_knn_laplacian(void **state)
{
	gwb_dataset dd = {0}, *d = &dd;
	gwb_csr *L;
	(void)state;
	/* two well separated clusters of 20 points on a line (built by hand: only rows,
	 * features and X are read) */
	d->rows = 40;
	d->features = 2;
	d->X = calloc(80, sizeof(float));
	assert_non_null(d->X);
	for (int i = 0; i < 40; i++) {
		d->X[i] = (float)(i < 20 ? i : 1000 + i);
		d->X[40 + i] = (float)(i % 3);
	}
	assert_int_equal(gwb_csr_knn_laplacian(d, 4, 0, false, &L), GWB_OK);
	assert_true(gwb_csr_is_symmetric(L, NULL));
	/* rows sum to zero; no edge between the clusters */
	for (int64_t i = 0; i < 40; i++) {
		double s = 0;
		for (int64_t p = gwb_csr_rp(L, i); p < gwb_csr_rp(L, i + 1); p++) {
			s += L->val[p];
			assert_true((i < 20) == (gwb_csr_ci(L, p) < 20));
		}
		assert_true(fabs(s) < 1e-12);
		assert_true(gwb_csr_get(L, i, i) >= 4.0);
	}
	gwb_csr_free(L);
	assert_int_equal(gwb_csr_knn_laplacian(d, 40, 0, false, &L), GWB_EINVAL);
	d->X[5] = NAN;
	assert_int_equal(gwb_csr_knn_laplacian(d, 3, 0, false, &L), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "row 6"));
	free(d->X);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_general_duplicates_summed),
		cmocka_unit_test(test_symmetric_pattern_integer),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_large_order_few_entries),
		cmocka_unit_test(test_array_format),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_csr_build_and_spmv),
		cmocka_unit_test(test_generators),
		cmocka_unit_test(test_knn_laplacian),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
