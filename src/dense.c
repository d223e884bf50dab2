/* dense.c - the dense Matrix: allocation, element access, conversion, generators, covariance,
 * symmetry checks, compensated norms, binary save/load. */
#include "dense.h"
#include "blas.h"
#include "lapack.h"
#include "intr.h"
#include "size.h"
#include "hash.h"

#include "gpu.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

#define GWBM_MAGIC "GWBM"
#define GWBM_VERSION 1u

size_t gwb_dtype_size(gwb_dtype t)
{
	return t == GWB_F32 ? 4 : 8;
}

const char *gwb_dtype_name(gwb_dtype t)
{
	return t == GWB_F32 ? "f32" : "f64";
}

gwb_status gwb_dtype_parse(const char *s, gwb_dtype *out)
{
	if (!strcmp(s, "f32") || !strcmp(s, "float32") || !strcmp(s, "single") ||
	    !strcmp(s, "float")) {
		*out = GWB_F32;
		return GWB_OK;
	}
	if (!strcmp(s, "f64") || !strcmp(s, "float64") || !strcmp(s, "double")) {
		*out = GWB_F64;
		return GWB_OK;
	}
	return gwb_error(GWB_EINVAL, "dtype must be \"f32\" or \"f64\" (got \"%s\")", s);
}

static gwb_status alloc_matrix(size_t count, size_t rows, size_t cols, gwb_dtype dtype,
			       gwb_layout layout, bool batched, gwb_matrix **out)
{
	gwb_matrix *A;
	size_t es = gwb_dtype_size(dtype), n, bytes;

	*out = NULL;
	if (!rows || !cols || !count)
		return gwb_error(GWB_EINVAL, "matrix dimensions must be >= 1 (got %zu x %zu, count %zu)",
				 rows, cols, count);
	if (gwb_mul3_size(rows, cols, count, &n) || gwb_mul_size(n, es, &bytes))
		return gwb_error(GWB_EINVAL, "matrix of %zu x %zu (x%zu) is too large", rows, cols,
				 count);
	A = calloc(1, sizeof(*A));
	if (!A)
		return gwb_error(GWB_ENOMEM, "out of memory allocating a matrix header");
	A->data = calloc(n, es);
	if (!A->data) {
		free(A);
		return gwb_error(GWB_ENOMEM,
				 "out of memory: a %zu x %zu %s matrix%s needs %.1f MiB of host memory",
				 rows, cols, gwb_dtype_name(dtype), count > 1 ? " batch" : "",
				 (double)n * es / 1048576.0);
	}
	A->rows = rows;
	A->cols = cols;
	A->count = count;
	A->batched = batched;
	A->dtype = dtype;
	A->layout = layout;
	/* a large matrix is page-locked on its first crossing to the GPU (buffer.h) */
	gwb_host_track(A->data, n * es);
	*out = A;
	return GWB_OK;
}

gwb_status gwb_matrix_new(size_t rows, size_t cols, gwb_dtype dtype, gwb_layout layout,
			  gwb_matrix **out)
{
	return alloc_matrix(1, rows, cols, dtype, layout, false, out);
}

gwb_status gwb_matrix_new_batch(size_t count, size_t n, gwb_dtype dtype, gwb_matrix **out)
{
	return alloc_matrix(count, n, n, dtype, GWB_ROW_MAJOR, true, out);
}

void gwb_matrix_free(gwb_matrix *A)
{
	if (!A)
		return;
	gwb_buf_free(A->buf);  /* its host pointer is A->data, borrowed */
	gwb_host_untrack(A->data);  /* unregistered before it is freed (buffer.h) */
	free(A->data);
	free(A);
}

/* --- residency ---------------------------------------------------------------------------- */

gwb_device gwb_matrix_device(const gwb_matrix *A)
{
	return A->buf ? A->buf->device : GWB_DEVICE_CPU;
}

gwb_status gwb_matrix_host(const gwb_matrix *A)
{
	gwb_matrix *M = (gwb_matrix *)A;  /* the host copy is a cache */
	void *p;

	if (!M->buf || M->buf->host_valid)
		return GWB_OK;
	if (!M->data) {
		size_t bytes = gwb_matrix_bytes(M);
		if (!(M->data = malloc(bytes ? bytes : 1)))
			return gwb_error(GWB_ENOMEM, "out of host memory for a host copy of a GPU "
					 "matrix (%.1f MiB)", bytes / 1048576.0);
		M->buf->host = M->data;
		M->buf->host_borrowed = true;
	}
	return gwb_buf_host(M->buf, &p);
}

gwb_status gwb_matrix_to(gwb_matrix *A, gwb_device d)
{
	gwb_status rc;
	gwb_buf *b;

	if (gwb_matrix_device(A) == d)
		return GWB_OK;
	if (d == GWB_DEVICE_CPU) {
		if ((rc = gwb_matrix_host(A)) || (rc = gwb_buf_to(A->buf, GWB_DEVICE_CPU)))
			return rc;
		gwb_buf_free(A->buf);  /* host only again */
		A->buf = NULL;
		return GWB_OK;
	}
	if (!gwb_gpu_available()) {
		if (A->batched)
			return gwb_error(GWB_ENODEV, "cannot move the batch of %zu %zu x %zu %s matrices "
					 "to the GPU: %s", A->count, A->rows, A->cols,
					 gwb_dtype_name(A->dtype), gwb_gpu_unavailable_reason());
		return gwb_error(GWB_ENODEV, "cannot move the %zu x %zu %s matrix to the GPU: %s",
				 A->rows, A->cols, gwb_dtype_name(A->dtype),
				 gwb_gpu_unavailable_reason());
	}
	if ((rc = gwb_buf_wrap(A->data, gwb_matrix_bytes(A), false, A->batched ? "mat.batch" :
			       "mat.data", &b)))
		return rc;
	if ((rc = gwb_buf_to(b, GWB_DEVICE_GPU))) {
		gwb_buf_free(b);
		return rc;
	}
	A->buf = b;
	return GWB_OK;
}

gwb_status gwb_matrix_host_wrote(gwb_matrix *A, size_t off, size_t n)
{
	size_t es = gwb_dtype_size(A->dtype);

	A->sum_ok = false;
	if (!A->buf)
		return GWB_OK;
	return gwb_buf_host_wrote(A->buf, off * es, n * es);
}

bool gwb_matrix_checksum(gwb_matrix *A, uint64_t *out)
{
	if (!A->sum_ok) {
		if (!A->data || (A->buf && !A->buf->host_valid))
			return false;
		A->sum = gwb_xxh64(A->data, gwb_matrix_bytes(A), 0);
		A->sum_ok = true;
	}
	*out = A->sum;
	return true;
}

gwb_status gwb_matrix_dev(const gwb_matrix *A, const void **p, bool *tmp)
{
	gwb_status rc;
	void *d = NULL;

	*p = NULL;
	*tmp = false;
	if (A->buf) {
		rc = gwb_buf_dev(A->buf, &d, tmp);
		*p = d;
		return rc;
	} else {
		gwb_buf w;  /* a view of the host data, for one temporary upload */
		memset(&w, 0, sizeof(w));
		w.host = A->data;
		w.host_valid = true;
		w.host_borrowed = true;
		w.bytes = gwb_matrix_bytes(A);
		snprintf(w.purpose, sizeof(w.purpose), "%s", A->batched ? "mat.batch.upload" :
			 "mat.upload");
		rc = gwb_buf_dev(&w, &d, tmp);
		*p = d;
		return rc;
	}
}

void gwb_matrix_dev_done(const gwb_matrix *A, const void *p, bool tmp)
{
	gwb_buf_dev_done(A->buf, (void *)p, tmp);
}

gwb_status gwb_matrix_adopt_dev(size_t count, size_t rows, size_t cols, bool batched,
				gwb_dtype dtype, gwb_layout layout, void *dev, gwb_matrix **out)
{
	gwb_matrix *A = calloc(1, sizeof(*A));
	gwb_status rc;

	*out = NULL;
	if (!A)
		return gwb_error(GWB_ENOMEM, "out of memory");
	A->rows = rows;
	A->cols = cols;
	A->count = count;
	A->batched = batched;
	A->dtype = dtype;
	A->layout = layout;
	if ((rc = gwb_buf_adopt_dev(dev, gwb_matrix_bytes(A), batched ? "mat.batch" : "mat.data",
				    &A->buf))) {
		free(A);
		return rc;
	}
	*out = A;
	return GWB_OK;
}

size_t gwb_matrix_bytes(const gwb_matrix *A)
{
	return A->rows * A->cols * A->count * gwb_dtype_size(A->dtype);
}

double gwb_matrix_get(const gwb_matrix *A, size_t b, size_t i, size_t j)
{
	size_t o = gwb_matrix_index(A, b, i, j);

	return A->dtype == GWB_F32 ? (double)((const float *)A->data)[o] : ((const double *)A->data)[o];
}

void gwb_matrix_set(gwb_matrix *A, size_t b, size_t i, size_t j, double v)
{
	size_t o = gwb_matrix_index(A, b, i, j);

	A->sum_ok = false;
	if (A->dtype == GWB_F32)
		((float *)A->data)[o] = (float)v;
	else
		((double *)A->data)[o] = v;
}

void *gwb_matrix_ptr(const gwb_matrix *A, size_t b)
{
	return (char *)A->data + b * A->rows * A->cols * gwb_dtype_size(A->dtype);
}

gwb_status gwb_matrix_convert(const gwb_matrix *A, size_t b, gwb_dtype dtype, gwb_layout layout,
			      gwb_matrix **out)
{
	size_t b0 = b == SIZE_MAX ? 0 : b, nb = b == SIZE_MAX ? A->count : 1, q, i, j;
	gwb_matrix *B;
	gwb_status rc;

	if (b != SIZE_MAX && b >= A->count)
		return gwb_error(GWB_EINVAL, "matrix index %zu out of range (count %zu)", b + 1,
				 A->count);
	rc = alloc_matrix(nb, A->rows, A->cols, dtype, layout, A->batched && nb > 1, out);
	if (rc)
		return rc;
	B = *out;
	if (dtype == A->dtype && layout == A->layout) {
		memcpy(B->data, gwb_matrix_ptr(A, b0), gwb_matrix_bytes(B));
		return GWB_OK;
	}
	for (q = 0; q < nb; q++)
		for (i = 0; i < A->rows; i++)
			for (j = 0; j < A->cols; j++)
				gwb_matrix_set(B, q, i, j, gwb_matrix_get(A, b0 + q, i, j));
	return GWB_OK;
}

gwb_status gwb_matrix_to_f64_colmajor(const gwb_matrix *A, size_t b, double **out)
{
	size_t r = A->rows, c = A->cols, i, j;
	double *d = malloc(r * c * sizeof(double));

	*out = NULL;
	if (!d)
		return gwb_error(GWB_ENOMEM, "out of memory: %.1f MiB for an f64 copy of a %zu x %zu "
				 "matrix", (double)r * c * 8 / 1048576.0, r, c);
	if (A->dtype == GWB_F64 && A->layout == GWB_COL_MAJOR) {
		memcpy(d, gwb_matrix_ptr(A, b), r * c * sizeof(double));
	} else if (A->dtype == GWB_F64) {
		const double *s = gwb_matrix_ptr(A, b);
		for (i = 0; i < r; i++)
			for (j = 0; j < c; j++)
				d[j * r + i] = s[i * c + j];
	} else {
		for (i = 0; i < r; i++)
			for (j = 0; j < c; j++)
				d[j * r + i] = gwb_matrix_get(A, b, i, j);
	}
	*out = d;
	return GWB_OK;
}

static uint64_t seed_state(uint64_t seed)
{
	uint64_t s = seed ^ 0x5851F42D4C957F2Dull;

	gwb_rng_next(&s);
	return s;
}

/* --- generators -------------------------------------------------------------------------- */

/* Stops with GWB_EINTR on Ctrl-C (checked every row: n normals). */
static gwb_status fill_goe(gwb_matrix *A, size_t b, uint64_t *rng, const char *what)
{
	size_t n = A->rows, i, j;

	for (i = 0; i < n; i++) {
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "%s: interrupted after %zu of %zu rows", what, i, n);
		gwb_matrix_set(A, b, i, i, gwb_rng_normal(rng) * sqrt(2.0));
		for (j = i + 1; j < n; j++) {
			double v = gwb_rng_normal(rng);
			gwb_matrix_set(A, b, i, j, v);
			gwb_matrix_set(A, b, j, i, v);
		}
	}
	return GWB_OK;
}

gwb_status gwb_matrix_randn(size_t rows, size_t cols, bool sym, gwb_dtype dtype, uint64_t seed,
			    gwb_matrix **out)
{
	uint64_t rng = seed_state(seed);
	gwb_status rc;
	size_t i, n;

	if (sym && rows != cols)
		return gwb_error(GWB_EINVAL, "a symmetric matrix must be square (got %zu x %zu)",
				 rows, cols);
	rc = gwb_matrix_new(rows, cols, dtype, GWB_ROW_MAJOR, out);
	if (rc)
		return rc;
	if (sym) {
		rc = fill_goe(*out, 0, &rng, "mat.randn");
		goto out_check;
	}
	n = rows * cols;
	for (i = 0; i < n; i++) {
		double v = gwb_rng_normal(&rng);
		if (!(i & 0xffff) && gwb_intr_pending()) {
			rc = gwb_error(GWB_EINTR, "mat.randn: interrupted after %zu of %zu values", i, n);
			goto out_check;
		}
		if (dtype == GWB_F32)
			((float *)(*out)->data)[i] = (float)v;
		else
			((double *)(*out)->data)[i] = v;
	}
	return GWB_OK;
out_check:
	if (rc) {
		gwb_matrix_free(*out);
		*out = NULL;
	}
	return rc;
}

static const char *const spec_names[] = {"randn", "graded", "clustered", "repeated", "uniform"};

gwb_status gwb_spectrum_parse(const char *s, gwb_spectrum *out)
{
	size_t i;

	for (i = 0; i < sizeof(spec_names) / sizeof(spec_names[0]); i++)
		if (!strcmp(s, spec_names[i])) {
			*out = (gwb_spectrum)i;
			return GWB_OK;
		}
	return gwb_error(GWB_EINVAL, "spectrum must be one of randn, graded, clustered, repeated, "
			 "uniform (got \"%s\")", s);
}

const char *gwb_spectrum_name(gwb_spectrum s)
{
	return (unsigned)s < 5 ? spec_names[s] : "?";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void gwb_spectrum_values(gwb_spectrum s, size_t n, uint64_t *rng, double *lam)
{
	size_t i;

	switch (s) {
	case GWB_SPEC_GRADED:
		/* Magnitudes from 1 down to 1e-12, random signs. */
		for (i = 0; i < n; i++) {
			double mag = n > 1 ? pow(10.0, -12.0 * (double)i / (double)(n - 1)) : 1.0;
			lam[i] = gwb_rng_uniform(rng) < 0.5 ? -mag : mag;
		}
		break;
	case GWB_SPEC_CLUSTERED: {
		/* Four cluster centres; members 1e-8 apart. */
		static const double c[4] = {-1.0, -0.25, 0.5, 1.0};
		for (i = 0; i < n; i++)
			lam[i] = c[i % 4] + 1e-8 * (double)(i / 4);
		break;
	}
	case GWB_SPEC_REPEATED: {
		/* Three distinct values, exactly repeated. */
		static const double c[3] = {-2.0, 1.0, 3.0};
		for (i = 0; i < n; i++)
			lam[i] = c[i % 3];
		break;
	}
	case GWB_SPEC_UNIFORM:
	case GWB_SPEC_RANDN:
	default:
		for (i = 0; i < n; i++)
			lam[i] = n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : 0.0;
		break;
	}
	qsort(lam, n, sizeof(double), cmp_double);
}

/* Haar-random orthogonal Q (column-major n x n) by modified Gram-Schmidt, twice, on a
 * Gaussian matrix. */
static gwb_status random_orthogonal(size_t n, uint64_t *rng, double *Q)
{
	size_t i, j, r, pass;

	for (i = 0; i < n * n; i++)
		Q[i] = gwb_rng_normal(rng);
	for (j = 0; j < n; j++) {
		double *qj = Q + j * n, nrm;
		if (gwb_intr_pending())   /* a column costs 4 n j flops: < 0.1 s up to n = 4096 */
			return gwb_error(GWB_EINTR, "interrupted building a random orthogonal matrix "
					 "(column %zu of %zu)", j + 1, n);
		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < j; i++) {
				const double *qi = Q + i * n;
				double d = gwb_dot_kahan(qi, qj, n);
				for (r = 0; r < n; r++)
					qj[r] -= d * qi[r];
			}
		nrm = sqrt(gwb_dot_kahan(qj, qj, n));
		if (nrm == 0.0)
			return gwb_error(GWB_EINVAL, "random orthogonal matrix: rank deficiency");
		for (r = 0; r < n; r++)
			qj[r] /= nrm;
	}
	return GWB_OK;
}

static gwb_status spectral_fill(gwb_matrix *A, size_t b, const double *lam, uint64_t *rng,
				double *Q, double *row)
{
	size_t n = A->rows, i, j, k;
	gwb_status rc = random_orthogonal(n, rng, Q);

	if (rc)
		return rc;
	/* A = Q diag(lam) Q^T: a_ij = sum_k q_ik lam_k q_jk. */
	for (i = 0; i < n; i++) {
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "interrupted building Q diag(l) Q^T (row %zu of %zu)",
					 i + 1, n);
		for (k = 0; k < n; k++)
			row[k] = Q[k * n + i] * lam[k];
		for (j = i; j < n; j++) {
			double s = 0.0, c = 0.0;
			for (k = 0; k < n; k++) {
				double t = row[k] * Q[k * n + j], u = s + t;
				c += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
				s = u;
			}
			gwb_matrix_set(A, b, i, j, s + c);
			gwb_matrix_set(A, b, j, i, s + c);
		}
	}
	return GWB_OK;
}

gwb_status gwb_matrix_from_spectrum(size_t n, const double *lambda, gwb_dtype dtype,
				    uint64_t seed, gwb_matrix **out)
{
	uint64_t rng = seed_state(seed);
	double *Q, *row;
	gwb_status rc = gwb_matrix_new(n, n, dtype, GWB_ROW_MAJOR, out);

	if (rc)
		return rc;
	Q = malloc(n * n * sizeof(double));
	row = malloc(n * sizeof(double));
	if (!Q || !row) {
		rc = gwb_error(GWB_ENOMEM, "out of memory building a %zu x %zu spectral matrix", n, n);
		goto out_free;
	}
	rc = spectral_fill(*out, 0, lambda, &rng, Q, row);
out_free:
	free(Q);
	free(row);
	if (rc) {
		gwb_matrix_free(*out);
		*out = NULL;
	}
	return rc;
}

gwb_status gwb_matrix_batch(size_t count, size_t n, gwb_spectrum spec, gwb_dtype dtype,
			    uint64_t seed, gwb_matrix **out)
{
	uint64_t rng = seed_state(seed);
	double *Q = NULL, *row = NULL, *lam = NULL;
	gwb_status rc = gwb_matrix_new_batch(count, n, dtype, out);
	size_t b;

	if (rc)
		return rc;
	/* progress per matrix, and Ctrl-C between matrices (one takes far less than 100 ms) */
	gwb_progress_begin("mat.batch", (double)count);
	if (spec != GWB_SPEC_RANDN) {
		Q = malloc(n * n * sizeof(double));
		row = malloc(n * sizeof(double));
		lam = malloc(n * sizeof(double));
		if (!Q || !row || !lam) {
			rc = gwb_error(GWB_ENOMEM, "out of memory building a batch of %zu x %zu "
				       "matrices", n, n);
			goto out_free;
		}
	}
	for (b = 0; b < count && !rc; b++) {
		if (gwb_intr_pending()) {
			rc = gwb_error(GWB_EINTR, "mat.batch: interrupted after %zu of %zu matrices", b,
				       count);
			break;
		}
		if (spec == GWB_SPEC_RANDN) {
			rc = fill_goe(*out, b, &rng, "mat.batch");
		} else {
			gwb_spectrum_values(spec, n, &rng, lam);
			rc = spectral_fill(*out, b, lam, &rng, Q, row);
		}
		if ((b & 15) == 0)
			gwb_progress_update((double)b, NULL, 0);
	}
out_free:
	gwb_progress_end();
	free(Q);
	free(row);
	free(lam);
	if (rc) {
		gwb_matrix_free(*out);
		*out = NULL;
	}
	return rc;
}

gwb_status gwb_matrix_laplacian1d(size_t n, gwb_dtype dtype, gwb_matrix **out)
{
	size_t i;
	gwb_status rc;

	*out = NULL;
	if (n < 1 || n > GWB_DENSE_MAX_GEN)
		return gwb_error(GWB_EINVAL, "mat.laplacian1d: n must be in 1..%d for a dense matrix "
				 "(got %zu); use a sparse matrix for larger orders",
				 GWB_DENSE_MAX_GEN, n);
	rc = gwb_matrix_new(n, n, dtype, GWB_ROW_MAJOR, out);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		gwb_matrix_set(*out, 0, i, i, 2.0);
		if (i + 1 < n) {
			gwb_matrix_set(*out, 0, i, i + 1, -1.0);
			gwb_matrix_set(*out, 0, i + 1, i, -1.0);
		}
	}
	return GWB_OK;
}

gwb_status gwb_matrix_laplacian2d(size_t m, gwb_dtype dtype, gwb_matrix **out)
{
	size_t n = m * m, x, y;
	gwb_status rc;

	*out = NULL;
	if (m < 1 || m > 90 || n > GWB_DENSE_MAX_GEN)
		return gwb_error(GWB_EINVAL, "mat.laplacian2d: a dense m x m grid needs m in 1..90 "
				 "(order m^2 <= %d; got m = %zu); use a sparse matrix for larger "
				 "grids", GWB_DENSE_MAX_GEN, m);
	rc = gwb_matrix_new(n, n, dtype, GWB_ROW_MAJOR, out);
	if (rc)
		return rc;
	for (y = 0; y < m; y++)
		for (x = 0; x < m; x++) {
			size_t i = y * m + x;
			gwb_matrix_set(*out, 0, i, i, 4.0);
			if (x + 1 < m) {
				gwb_matrix_set(*out, 0, i, i + 1, -1.0);
				gwb_matrix_set(*out, 0, i + 1, i, -1.0);
			}
			if (y + 1 < m) {
				gwb_matrix_set(*out, 0, i, i + m, -1.0);
				gwb_matrix_set(*out, 0, i + m, i, -1.0);
			}
		}
	return GWB_OK;
}

/* G = Xc^T Xc (lower triangle, p x p column-major) of the centred r x p column-major Xc,
 * through BLAS: DSYRK on blocks of COV_BLOCK rows (a block's sums carry at most
 * COV_BLOCK eps of relative rounding), the block results added with Neumaier's
 * compensation, so many rows cost no more accuracy than one block. Centring first keeps the
 * products small where the means are large. */
#define COV_BLOCK 512
static gwb_status centred_gram(const double *Xc, size_t r, int p, double *G)
{
	size_t pp = (size_t)p * p, r0, i;
	double *T = malloc(pp * sizeof(double)), *E = calloc(pp, sizeof(double));
	double one = 1.0, zero = 0.0;
	char uplo = 'L', tr = 'T';
	int ldx = (int)r;

	if (!T || !E) {
		free(T);
		free(E);
		return gwb_error(GWB_ENOMEM, "out of memory: covariance of %d features", p);
	}
	if (r > INT32_MAX) {
		free(T);
		free(E);
		return gwb_error(GWB_EINVAL, "covariance: %zu rows exceed BLAS's 32-bit sizes", r);
	}
	memset(G, 0, pp * sizeof(double));
	for (r0 = 0; r0 < r; r0 += COV_BLOCK) {
		int rb = (int)(r - r0 < COV_BLOCK ? r - r0 : COV_BLOCK);
		if (gwb_intr_pending()) {
			free(T);
			free(E);
			return gwb_error(GWB_EINTR, "covariance: interrupted after %zu of %zu rows", r0,
					 r);
		}
		dsyrk_(&uplo, &tr, &p, &rb, &one, Xc + r0, &ldx, &zero, T, &p, 1, 1);
		for (i = 0; i < pp; i++) {
			double s, t, u;
			if (i % (size_t)p < i / (size_t)p)
				continue;   /* upper triangle: DSYRK leaves it alone */
			s = G[i];
			t = T[i];
			u = s + t;
			E[i] += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
			G[i] = u;
		}
	}
	for (i = 0; i < pp; i++)
		G[i] += E[i];
	free(T);
	free(E);
	return GWB_OK;
}

gwb_status gwb_matrix_cov(const gwb_dataset *d, bool corr, gwb_matrix **out)
{
	size_t r = d->rows, i;
	int p = d->features, a, b;
	double *C = NULL, *mean = NULL, *Xc = NULL;
	gwb_status rc;

	*out = NULL;
	if (p < 1)
		return gwb_error(GWB_EINVAL, "covariance: the dataset has no features");
	if (r < 2)
		return gwb_error(GWB_EINVAL, "covariance needs at least 2 rows (got %zu)", r);
	mean = malloc((size_t)p * sizeof(double));
	Xc = malloc((size_t)p * r * sizeof(double));
	if (!mean || !Xc) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: covariance of %zu x %d needs %.1f MiB", r, p,
			       (double)p * r * 8 / 1048576.0);
		goto out_free;
	}
	for (a = 0; a < p; a++) {
		const float *x = d->X + (size_t)a * r;
		double s = 0.0, c = 0.0;
		if (gwb_intr_pending()) {
			rc = gwb_error(GWB_EINTR, "covariance: interrupted while centring feature %d of "
				       "%d", a + 1, p);
			goto out_free;
		}
		for (i = 0; i < r; i++) {
			double t = x[i], u = s + t;
			if (t != t) {
				rc = gwb_error(GWB_EINVAL, "covariance: feature %d (%s) has a missing "
					       "value at row %zu; drop or impute missing values first",
					       a + 1, d->names && d->names[a] ? d->names[a] : "?", i + 1);
				goto out_free;
			}
			c += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
			s = u;
		}
		mean[a] = (s + c) / (double)r;
		for (i = 0; i < r; i++)
			Xc[(size_t)a * r + i] = (double)x[i] - mean[a];
	}
	rc = gwb_matrix_new((size_t)p, (size_t)p, GWB_F64, GWB_ROW_MAJOR, out);
	if (rc)
		goto out_free;
	C = (*out)->data;
	rc = centred_gram(Xc, r, p, C);
	if (rc) {
		gwb_matrix_free(*out);
		*out = NULL;
		goto out_free;
	}
	for (a = 0; a < p; a++)
		for (b = a; b < p; b++) {
			double v = C[(size_t)a * p + b] / (double)(r - 1);   /* lower: (b, a) */
			C[(size_t)a * p + b] = v;
			C[(size_t)b * p + a] = v;
		}
	if (corr) {
		for (a = 0; a < p; a++)
			mean[a] = sqrt(C[(size_t)a * p + a]);  /* reuse: standard deviations */
		for (a = 0; a < p; a++)
			for (b = 0; b < p; b++) {
				double s = mean[a] * mean[b];
				C[(size_t)a * p + b] = a == b ? 1.0 : s > 0 ? C[(size_t)a * p + b] / s : 0.0;
			}
	}
out_free:
	free(mean);
	free(Xc);
	return rc;
}

bool gwb_matrix_is_symmetric(const gwb_matrix *A, size_t b, double tol, double *rel,
			     size_t at[2])
{
	size_t n = A->rows, i, j, wi = 0, wj = 0;
	double amax = 0.0, dmax = 0.0, r;

	if (A->rows != A->cols) {
		if (rel)
			*rel = INFINITY;
		return false;
	}
	for (i = 0; i < n; i++)
		for (j = i; j < n; j++) {
			double x = gwb_matrix_get(A, b, i, j), y = gwb_matrix_get(A, b, j, i);
			double d = fabs(x - y);
			if (x != x || y != y)
				d = INFINITY;
			if (fabs(x) > amax)
				amax = fabs(x);
			if (fabs(y) > amax)
				amax = fabs(y);
			if (d > dmax) {
				dmax = d;
				wi = i;
				wj = j;
			}
		}
	r = dmax == 0.0 ? 0.0 : dmax / (amax > 0 ? amax : 1e-300);
	if (rel)
		*rel = r;
	if (at) {
		at[0] = wi;
		at[1] = wj;
	}
	return r <= tol;
}

double gwb_matrix_norm_fro(const gwb_matrix *A, size_t b)
{
	size_t n = gwb_matrix_elems(A), i;
	double s = 0.0, c = 0.0;

	if (A->dtype == GWB_F64) {
		const double *x = gwb_matrix_ptr(A, b);
		return sqrt(gwb_dot_kahan(x, x, n));
	}
	{
		const float *x = gwb_matrix_ptr(A, b);
		for (i = 0; i < n; i++) {
			double t = (double)x[i] * x[i], u = s + t;
			c += s >= t ? (s - u) + t : (t - u) + s;
			s = u;
		}
	}
	return sqrt(s + c);
}

double gwb_dot_kahan(const double *x, const double *y, size_t n)
{
	return gwb_dot_kahan_strided(x, 1, y, 1, n);
}

double gwb_dot_kahan_strided(const double *x, size_t incx, const double *y, size_t incy,
			     size_t n)
{
	double s = 0.0, c = 0.0;
	size_t i;

	for (i = 0; i < n; i++) {
		double t = x[i * incx] * y[i * incy], u = s + t;
		c += fabs(s) >= fabs(t) ? (s - u) + t : (t - u) + s;
		s = u;
	}
	return s + c;
}

/* --- binary save/load -------------------------------------------------------------------- */

/* On-disk header, little-endian, 48 bytes. */
struct gwbm_header {
	char magic[4];
	uint32_t version;
	uint32_t dtype;
	uint32_t layout;
	uint32_t batched;
	uint32_t reserved;
	uint64_t rows, cols, count;
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001B3ull;
	}
	return h;
}

#define FNV_OFFSET 0xCBF29CE484222325ull

gwb_status gwb_matrix_save(const gwb_matrix *A, const char *path)
{
	struct gwbm_header h;
	uint64_t sum;
	size_t bytes = gwb_matrix_bytes(A);
	gwb_afile af;
	gwb_status rc = GWB_OK;
	FILE *f;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GWBM_MAGIC, 4);
	h.version = GWBM_VERSION;
	h.dtype = (uint32_t)A->dtype;
	h.layout = (uint32_t)A->layout;
	h.batched = A->batched;
	h.rows = A->rows;
	h.cols = A->cols;
	h.count = A->count;
	sum = fnv1a(fnv1a(FNV_OFFSET, &h, sizeof(h)), A->data, bytes);
	if ((rc = gwb_afile_open(&af, path, "A:save")))
		return rc;
	f = af.fp;
	if (fwrite(&h, sizeof(h), 1, f) != 1 || fflush(f) ||
	    (rc = gwb_afile_write(&af, A->data, bytes)) ||    /* (stops on Ctrl-C) */
	    fwrite(&sum, sizeof(sum), 1, f) != 1) {
		if (!rc)
			rc = gwb_error(GWB_EIO, "A:save: cannot write %s: %s; it was left as it "
				       "was", path, strerror(errno));
		gwb_afile_abort(&af);
		return rc;
	}
	return gwb_afile_commit(&af);
}

gwb_status gwb_matrix_load(const char *path, gwb_matrix **out)
{
	struct gwbm_header h;
	uint64_t sum, want;
	long len;
	size_t bytes, es;
	gwb_matrix *A = NULL;
	gwb_status rc;
	FILE *f;

	*out = NULL;
	f = fopen(path, "rb");
	if (!f)
		return gwb_error(GWB_EIO, "cannot open %s: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		rc = gwb_error(GWB_EIO, "cannot read %s: %s", path, strerror(errno));
		goto out_close;
	}
	if (len < 4 || fread(h.magic, 4, 1, f) != 1 || memcmp(h.magic, GWBM_MAGIC, 4)) {
		rc = gwb_error(GWB_EPARSE, "%s is not a gwb matrix file (no GWBM magic); use "
			       "mat.read for Matrix Market files", path);
		goto out_close;
	}
	rewind(f);
	if ((size_t)len < sizeof(h) + 8 || fread(&h, sizeof(h), 1, f) != 1) {
		rc = gwb_error(GWB_ECORRUPT, "%s: truncated (%ld bytes; a matrix file has at least "
			       "%zu)", path, len, sizeof(h) + 8);
		goto out_close;
	}
	if (memcmp(h.magic, GWBM_MAGIC, 4)) {
		rc = gwb_error(GWB_EPARSE, "%s is not a gwb matrix file (no GWBM magic); use "
			       "mat.read for Matrix Market files", path);
		goto out_close;
	}
	if (h.version != GWBM_VERSION || h.dtype > 1 || h.layout > 1) {
		rc = gwb_error(GWB_EPARSE, "%s: unsupported matrix file (version %u, dtype %u, "
			       "layout %u); it was written by a newer gwb?", path, h.version,
			       h.dtype, h.layout);
		goto out_close;
	}
	es = gwb_dtype_size((gwb_dtype)h.dtype);
	/* every size against what the file holds, one field at a time (no product can wrap) */
	{
		uint64_t data = (uint64_t)len - sizeof(h) - 8, lim = data / es;
		const char *field = NULL;
		uint64_t val = 0;
		if (!h.rows || h.rows > lim || h.rows > ((uint64_t)1 << 32))
			field = "rows", val = h.rows;
		else if (!h.cols || h.cols > (lim /= h.rows) || h.cols > ((uint64_t)1 << 32))
			field = "cols", val = h.cols;
		else if (!h.count || h.count > (lim /= h.cols))
			field = "count", val = h.count;
		if (field) {
			rc = gwb_error(GWB_ECORRUPT, "%s: truncated or corrupt: the header says %s = %llu, but the %llu data "
				       "bytes of the file hold at most %llu (1 to 2^32 rows and cols, "
				       "%zu bytes a value)", path, field, (unsigned long long)val,
				       (unsigned long long)data, (unsigned long long)lim, es);
			goto out_close;
		}
		if (h.rows * h.cols * h.count * es != data) {
			rc = gwb_error(GWB_ECORRUPT, "%s: truncated or corrupt (header says %llu x %llu "
				       "x %llu but the file holds %ld bytes)", path,
				       (unsigned long long)h.rows, (unsigned long long)h.cols,
				       (unsigned long long)h.count, len);
			goto out_close;
		}
	}
	rc = alloc_matrix(h.count, h.rows, h.cols, (gwb_dtype)h.dtype, (gwb_layout)h.layout,
			  h.batched != 0, &A);
	if (rc)
		goto out_close;
	bytes = gwb_matrix_bytes(A);
	if (fread(A->data, 1, bytes, f) != bytes || fread(&sum, sizeof(sum), 1, f) != 1) {
		rc = gwb_error(GWB_ECORRUPT, "%s: truncated while reading the data", path);
		goto out_free;
	}
	want = fnv1a(fnv1a(FNV_OFFSET, &h, sizeof(h)), A->data, bytes);
	if (sum != want) {
		rc = gwb_error(GWB_ECORRUPT, "%s: checksum mismatch (the file is corrupt; stored "
			       "%016llx, computed %016llx)", path, (unsigned long long)sum,
			       (unsigned long long)want);
		goto out_free;
	}
	fclose(f);
	*out = A;
	return GWB_OK;
out_free:
	gwb_matrix_free(A);
out_close:
	fclose(f);
	return rc;
}
