/* eig_dense_check.c - what every dense eigen driver checks and writes into its result: the
 * symmetry an input must have (the message names the element and what to do), residuals
 * ||Av - lv|| / (||A|| ||v||) in one GEMM and orthogonality ||V^T V - I|| in one SYRK with
 * compensated norms (gwb_eig_dense_check, e:check(A)), the SVD's residuals, and the result's
 * method text and notes. CPU only: the device's checks are kernels/eig_check.cu, called from
 * eig_dense_gpu.c. It may use dense.h, eig.h, lapack.h and blas.h (the reference-BLAS note). */
#define _GNU_SOURCE
#include "eig_dense_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "lapack.h"

/* --- residuals and orthogonality ---------------------------------------------------------- */

/* Sum of squares of x[0..n) / scale, compensated but streaming: plain sums over blocks of
 * 256 (positive terms, so a block's relative error is below 256 eps and the loop
 * vectorizes), the block sums added with Neumaier's compensation. Dividing before squaring
 * keeps entries near the ends of the f64 range from overflowing or underflowing. */
static double sumsq_scaled(const double *x, size_t n, double scale)
{
	double s = 0.0, c = 0.0, inv = 1.0 / scale;
	size_t i0, i;

	for (i0 = 0; i0 < n; i0 += 256) {
		size_t i1 = i0 + 256 < n ? i0 + 256 : n;
		double t = 0.0, u;
		for (i = i0; i < i1; i++) {
			double d = x[i] * inv;
			t += d * d;
		}
		u = s + t;
		c += s >= t ? (s - u) + t : (t - u) + s;
		s = u;
	}
	return s + c;
}

/* Residuals of matrix b's pairs and its orthogonality (returned in *orth); thread safe for
 * distinct b. One GEMM for the residuals (R = A V - V diag(l), in place), one SYRK for the
 * orthogonality (V^T V, whose diagonal gives ||v||^2 too), then one streaming pass over R.
 * An f64 A is read where it lies (row-major data is A^T in column-major terms: transa = T);
 * an f32 A is widened to f64 first. */
gwb_status eigd_check(gwb_eigen *e, size_t b, const gwb_matrix *A, size_t ab, double *orth)
{
	size_t n = e->n, k = e->k, i, j, r;
	double *a = NULL, *R = NULL, *G = NULL, normA = 0.0, worst = 0.0, one = 1.0, zero = 0.0;
	const double *V = gwb_eigen_vector(e, b, 0), *src;
	char ta = 'N', uplo = 'L', tr = 'T';
	int in = (int)n, ik = (int)k;
	gwb_status rc = GWB_OK;

	*orth = NAN;
	if (!V)
		return GWB_OK;
	if (A->rows != n || A->cols != n)
		return gwb_error(GWB_EINVAL, "residual check: matrix is %zu x %zu, result order %zu",
				 A->rows, A->cols, n);
	if (A->dtype == GWB_F64) {
		src = gwb_matrix_ptr(A, ab);
		if (A->layout == GWB_ROW_MAJOR)
			ta = 'T';
	} else {
		rc = gwb_matrix_to_f64_colmajor(A, ab, &a);
		if (rc)
			return rc;
		src = a;
	}
	R = malloc(n * k * sizeof(double));
	G = malloc(k * k * sizeof(double));
	if (!R || !G) {
		rc = gwb_error(GWB_ENOMEM, "out of memory computing residuals (%zu x %zu)", n, k);
		goto out;
	}
	memcpy(R, V, n * k * sizeof(double));
	for (i = 0; i < k; i++) {
		double lam = -e->values[b * k + i];
		for (r = 0; r < n; r++)
			R[i * n + r] *= lam;
	}
	/* R = A V - V diag(l) */
	eigd_dgemm(ta, 'N', (int)n, (int)k, (int)n, 1.0, src, (int)n, V, (int)n, 1.0, R, (int)n);
	/* G = V^T V, lower triangle */
	dsyrk_(&uplo, &tr, &ik, &in, &one, V, &in, &zero, G, &ik, 1, 1);
	if (k == n) {
		for (i = 0; i < k; i++)
			if (fabs(e->values[b * k + i]) > normA)
				normA = fabs(e->values[b * k + i]);
	} else {
		normA = gwb_matrix_norm_fro(A, ab);
	}
	if (normA == 0.0 || !isfinite(normA))
		normA = 1.0;
	for (i = 0; i < k; i++) {
		double nv = sqrt(G[i * k + i]);
		e->residuals[b * k + i] = sqrt(sumsq_scaled(R + i * n, n, normA)) /
					  (nv > 0 ? nv : 1.0);
	}
	for (j = 0; j < k; j++)
		for (i = j; i < k; i++) {
			double d = fabs(G[j * k + i] - (i == j ? 1.0 : 0.0));
			if (d > worst || d != d)
				worst = d;
		}
	*orth = worst;
out:
	free(a);
	free(R);
	free(G);
	return rc;
}

void eigd_fold_orth(gwb_eigen *e, double o)
{
	if (o == o && (e->orthogonality != e->orthogonality || o > e->orthogonality))
		e->orthogonality = o;
}

gwb_status gwb_eig_dense_check(gwb_eigen *e, size_t b, const gwb_matrix *A, size_t ab)
{
	double o;
	gwb_status rc = eigd_check(e, b, A, ab, &o);

	if (!rc) {
		eigd_fold_orth(e, o);
		gwb_eigen_update_max(e);
	}
	return rc;
}

/* --- symmetry: what every driver asks of its input ----------------------------------------- */

double eigd_sym_tol(const gwb_matrix *A)
{
	return A->dtype == GWB_F32 ? 1e-5 : 1e-10;
}

gwb_status eigd_check_symmetric(const gwb_matrix *A, size_t b, double tol, const char *fn)
{
	double rel;
	size_t at[2];

	if (A->rows != A->cols)
		return gwb_error(GWB_EINVAL, "%s: the matrix is %zu x %zu, not square; a symmetric "
				 "eigensolver needs a square symmetric matrix: use eig.svd(A) for "
				 "general matrices", fn, A->rows, A->cols);
	if (!gwb_matrix_is_symmetric(A, b, tol, &rel, at)) {
		char where[64] = "";
		if (A->count > 1)
			snprintf(where, sizeof(where), " (matrix %zu of the batch)", b + 1);
		return gwb_error(GWB_EINVAL, "%s: the matrix%s is not symmetric: relative asymmetry "
				 "%.3g at (%zu, %zu) exceeds sym_tol = %.3g; use eig.svd(A) for "
				 "general matrices, or symmetrize it ((A + A^T) / 2)", fn, where, rel,
				 at[0] + 1, at[1] + 1, tol);
	}
	return GWB_OK;
}

/* --- the result's text: method, notes -------------------------------------------------------- */

void eigd_set_str(char *dst, size_t size, const char *s)
{
	size_t i;

	for (i = 0; i + 1 < size && s[i]; i++)
		dst[i] = s[i];
	dst[i] = 0;
}

/* Append a sentence to e->note ("; " between sentences). */
void eigd_note(gwb_eigen *e, const char *fmt, ...)
{
	size_t len = strlen(e->note);
	va_list ap;

	if (len + 3 >= sizeof(e->note))
		return;
	if (len) {
		memcpy(e->note + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(e->note + len, sizeof(e->note) - len, fmt, ap);
	va_end(ap);
}

/* On the reference BLAS, the first CPU result says so (once per process) and how to install
 * OpenBLAS. */
void eigd_note_blas(gwb_eigen *e)
{
	if (!strcmp(e->backend, "cpu") && gwb_blas_take_first_note())
		eigd_note(e, "%s", gwb_blas_reference_note());
}

/* --- the SVD ---------------------------------------------------------------------------------- */

/* Residuals max(||A v - s u||, ||A^T u - s v||) / s_max per triplet, and the orthogonality of
 * V and U. */
gwb_status eigd_svd_check(gwb_eigen *e, const double *a)
{
	size_t m = e->m, n = e->n, k = e->k, i, r;
	double *AV = malloc(m * k * sizeof(double)), *ATU = malloc(n * k * sizeof(double));
	double *G = malloc(k * k * sizeof(double)), smax = e->values[0], worst = 0.0;
	int pass;

	if (!AV || !ATU || !G) {
		free(AV);
		free(ATU);
		free(G);
		return gwb_error(GWB_ENOMEM, "out of memory checking the SVD");
	}
	if (!(smax > 0))
		smax = 1.0;
	eigd_dgemm('N', 'N', (int)m, (int)k, (int)n, 1.0, a, (int)m, e->vectors, (int)n, 0.0, AV, (int)m);
	eigd_dgemm('T', 'N', (int)n, (int)k, (int)m, 1.0, a, (int)m, e->left, (int)m, 0.0, ATU, (int)n);
	for (i = 0; i < k; i++) {
		double s1 = 0, s2 = 0, sv = e->values[i];
		for (r = 0; r < m; r++) {
			double d = AV[i * m + r] - sv * e->left[i * m + r];
			s1 += d * d;
		}
		for (r = 0; r < n; r++) {
			double d = ATU[i * n + r] - sv * e->vectors[i * n + r];
			s2 += d * d;
		}
		e->residuals[i] = sqrt(s1 > s2 ? s1 : s2) / smax;
	}
	for (pass = 0; pass < 2; pass++) {
		const double *X = pass ? e->left : e->vectors;
		int len = (int)(pass ? m : n);
		eigd_dgemm('T', 'N', (int)k, (int)k, len, 1.0, X, len, X, len, 0.0, G, (int)k);
		for (i = 0; i < k * k; i++) {
			double d = fabs(G[i] - (i % (k + 1) == 0 ? 1.0 : 0.0));
			if (d > worst)
				worst = d;
		}
	}
	e->orthogonality = worst;
	gwb_eigen_update_max(e);
	free(AV);
	free(ATU);
	free(G);
	return GWB_OK;
}
