/* sparse.c - CSR matrices: allocation, triplets -> CSR, SpMV on CPU threads, checks, norms,
 * and generators (Laplacians, random symmetric, k-nearest-neighbour graph Laplacians). */
#define _GNU_SOURCE
#include "sparse.h"

#include "hash.h"
#include "blas.h"

#include "fileio.h"
#include "gpu.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/sparse.h"
#endif
#include "intr.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#define I32_LIMIT ((int64_t)INT32_MAX)

/* ---------------------------------------------------------------- basics */

gwb_status gwb_csr_alloc(int64_t rows, int64_t cols, int64_t nnz, bool force_wide,
			 gwb_csr **out)
{
	gwb_csr *A;
	size_t ib;

	*out = NULL;
	if (rows < 0 || cols < 0 || nnz < 0)
		return gwb_error(GWB_EINVAL, "sparse matrix: negative size %lldx%lld with %lld entries",
				 (long long)rows, (long long)cols, (long long)nnz);
	A = calloc(1, sizeof(*A));
	if (!A)
		return gwb_error(GWB_ENOMEM, "sparse matrix: out of memory");
	A->rows = rows;
	A->cols = cols;
	A->nnz = nnz;
	A->sym = -1;
	A->wide = force_wide || nnz > I32_LIMIT || rows >= I32_LIMIT || cols >= I32_LIMIT;
	ib = A->wide ? 8 : 4;
	if (A->wide) {
		A->rp64 = calloc((size_t)rows + 1, ib);
		A->ci64 = malloc(nnz ? (size_t)nnz * ib : 1);
	} else {
		A->rp32 = calloc((size_t)rows + 1, ib);
		A->ci32 = malloc(nnz ? (size_t)nnz * ib : 1);
	}
	A->val = malloc(nnz ? (size_t)nnz * sizeof(double) : 1);
	if (!A->val || !(A->wide ? (void *)A->rp64 : (void *)A->rp32) ||
	    !(A->wide ? (void *)A->ci64 : (void *)A->ci32)) {
		size_t need = ((size_t)rows + 1) * ib + (size_t)nnz * (ib + 8);
		gwb_csr_free(A);
		return gwb_error(GWB_ENOMEM, "sparse matrix %lldx%lld with %lld nonzeros: cannot "
				 "allocate %zu bytes", (long long)rows, (long long)cols,
				 (long long)nnz, need);
	}
	*out = A;
	return GWB_OK;
}

gwb_status gwb_csr_to(gwb_csr *A, bool gpu)
{
	if (!gpu) {
#ifdef GWB_HAVE_CUDA
		if (A->gpu)   /* a host-only matrix must not load the GPU plugin */
			gwb_gpu_csr_free(A->gpu);
#endif
		A->gpu = NULL;
		return GWB_OK;
	}
	if (A->gpu)
		return GWB_OK;
	if (!gwb_gpu_available())
		return gwb_error(GWB_ENODEV, "cannot move the %lld x %lld sparse matrix to the GPU: %s",
				 (long long)A->rows, (long long)A->cols, gwb_gpu_unavailable_reason());
#ifdef GWB_HAVE_CUDA
	return gwb_gpu_csr_upload(A, &A->gpu);
#else
	return GWB_ENODEV;
#endif
}

void gwb_csr_free(gwb_csr *A)
{
	if (!A)
		return;
#ifdef GWB_HAVE_CUDA
	if (A->gpu)   /* freeing a host-only matrix must not load the GPU plugin */
		gwb_gpu_csr_free(A->gpu);
#endif
	free(A->rp32);
	free(A->ci32);
	free(A->rp64);
	free(A->ci64);
	free(A->val);
	free(A);
}

uint64_t gwb_csr_checksum(gwb_csr *A)
{
	size_t ib = A->wide ? sizeof(int64_t) : sizeof(int32_t);
	if (!A->sum_ok) {
		gwb_xxh64_state h;
		gwb_xxh64_init(&h, 0);
		gwb_xxh64_update(&h, A->wide ? (const void *)A->rp64 : (const void *)A->rp32,
				 (size_t)(A->rows + 1) * ib);
		gwb_xxh64_update(&h, A->wide ? (const void *)A->ci64 : (const void *)A->ci32,
				 (size_t)A->nnz * ib);
		gwb_xxh64_update(&h, A->val, (size_t)A->nnz * sizeof(double));
		A->sum = gwb_xxh64_final(&h);
		A->sum_ok = true;
	}
	return A->sum;
}

size_t gwb_csr_bytes(const gwb_csr *A)
{
	size_t ib = A->wide ? 8 : 4;
	return ((size_t)A->rows + 1) * ib + (size_t)A->nnz * (ib + sizeof(double));
}

static inline void set_rp(gwb_csr *A, int64_t i, int64_t v)
{
	if (A->wide)
		A->rp64[i] = v;
	else
		A->rp32[i] = (int32_t)v;
}
static inline void set_ci(gwb_csr *A, int64_t p, int64_t v)
{
	if (A->wide)
		A->ci64[p] = v;
	else
		A->ci32[p] = (int32_t)v;
}

struct cv {
	int64_t c;
	double v;
};

static int cv_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct cv *)a)->c, y = ((const struct cv *)b)->c;
	return (x > y) - (x < y);
}

/* Sort a long row in place by column, as qsort would, but stopping (false) on Ctrl-C: a heap
 * sort, checked every 2^16 sift steps, for rows too long to sort within ~0.1 s. */
static bool sort_row_interruptible(struct cv *r, int64_t len)
{
	int64_t start, end, steps = 0;

	for (start = len / 2 - 1, end = len;;) {
		int64_t root, child;
		struct cv t;
		if (!(++steps & 0xffff) && gwb_intr_pending())
			return false;
		if (start >= 0) {
			root = start--;
		} else {
			if (--end <= 0)
				return true;
			t = r[0];
			r[0] = r[end];
			r[end] = t;
			root = 0;
		}
		while ((child = 2 * root + 1) < end) {
			if (child + 1 < end && r[child].c < r[child + 1].c)
				child++;
			if (r[root].c >= r[child].c)
				break;
			t = r[root];
			r[root] = r[child];
			r[child] = t;
			root = child;
		}
	}
}

#define LONG_ROW ((int64_t)1 << 16)   /* longer rows sort with the interruptible sort */

gwb_status gwb_csr_from_coo(int64_t rows, int64_t cols, int64_t n, const int64_t *I,
			    const int64_t *J, const double *V, bool mirror, gwb_csr **out)
{
	int64_t *cnt = NULL, total = 0;
	struct cv *tmp = NULL;
	gwb_csr *A = NULL;
	gwb_status st;

	*out = NULL;
	for (int64_t e = 0; e < n; e++)
		if (I[e] < 0 || I[e] >= rows || J[e] < 0 || J[e] >= cols)
			return gwb_error(GWB_EINVAL, "sparse matrix: entry %lld at (%lld, %lld) is "
					 "outside %lldx%lld (indices are 1-based in files, 0-based "
					 "here)", (long long)e + 1, (long long)I[e], (long long)J[e],
					 (long long)rows, (long long)cols);
	if (mirror && rows != cols)
		return gwb_error(GWB_EINVAL, "sparse matrix: a symmetric matrix must be square "
				 "(got %lldx%lld)", (long long)rows, (long long)cols);
	cnt = calloc((size_t)rows + 1, sizeof(int64_t));
	if (!cnt)
		return gwb_error(GWB_ENOMEM, "sparse matrix: out of memory for %lld rows", (long long)rows);
	for (int64_t e = 0; e < n; e++) {
		cnt[I[e] + 1]++;
		if (mirror && I[e] != J[e])
			cnt[J[e] + 1]++;
	}
	for (int64_t i = 0; i < rows; i++)
		cnt[i + 1] += cnt[i];
	total = cnt[rows];
	tmp = malloc((size_t)(total ? total : 1) * sizeof(*tmp));
	if (!tmp) {
		st = gwb_error(GWB_ENOMEM, "sparse matrix: cannot allocate %zu bytes for %lld entries",
			       (size_t)total * sizeof(*tmp), (long long)total);
		goto out_free_cnt;
	}
	{
		int64_t *pos = malloc((size_t)(rows ? rows : 1) * sizeof(int64_t));
		if (!pos) {
			st = gwb_error(GWB_ENOMEM, "sparse matrix: out of memory");
			goto out_free_tmp;
		}
		memcpy(pos, cnt, (size_t)rows * sizeof(int64_t));
		for (int64_t e = 0; e < n; e++) {
			tmp[pos[I[e]]++] = (struct cv){J[e], V ? V[e] : 1.0};
			if (mirror && I[e] != J[e])
				tmp[pos[J[e]]++] = (struct cv){I[e], V ? V[e] : 1.0};
		}
		free(pos);
	}
	/* sort each row and sum duplicates in place; a negative column marks the row's end */
	int64_t kept = 0;
	for (int64_t i = 0; i < rows; i++) {
		struct cv *r = tmp + cnt[i];
		int64_t len = cnt[i + 1] - cnt[i], w = 0;
		if (len > LONG_ROW) {
			if (!sort_row_interruptible(r, len)) {
				st = gwb_error(GWB_EINTR, "sparse matrix: interrupted while sorting "
					       "row %lld of %lld (%lld entries)", (long long)i + 1,
					       (long long)rows, (long long)len);
				goto out_free_tmp;
			}
		} else if (len > 1) {
			qsort(r, (size_t)len, sizeof(*r), cv_cmp);
		}
		if (!(i & 0xfff) && gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "sparse matrix: interrupted after %lld of %lld rows",
				       (long long)i, (long long)rows);
			goto out_free_tmp;
		}
		for (int64_t p = 0; p < len; p++) {
			if (w > 0 && r[w - 1].c == r[p].c)
				r[w - 1].v += r[p].v;
			else
				r[w++] = r[p];
		}
		kept += w;
		if (w < len)
			r[w].c = -1;
	}
	st = gwb_csr_alloc(rows, cols, kept, false, &A);
	if (st)
		goto out_free_tmp;
	{
		int64_t p = 0;
		for (int64_t i = 0; i < rows; i++) {
			struct cv *r = tmp + cnt[i];
			int64_t len = cnt[i + 1] - cnt[i];
			set_rp(A, i, p);
			for (int64_t q = 0; q < len; q++) {
				if (r[q].c < 0)
					break;
				set_ci(A, p, r[q].c);
				A->val[p++] = r[q].v;
			}
		}
		set_rp(A, rows, p);
	}
	*out = A;
	st = GWB_OK;
out_free_tmp:
	free(tmp);
out_free_cnt:
	free(cnt);
	return st;
}

/* ---------------------------------------------------------------- SpMV */

struct spmv_ctx {
	const gwb_csr *A;
	const double *x;
	double *y;
	int b;
	double alpha;
	double *dot;   /* gwb_csr_spmv_dot: per part, the sum of x_i y_i and its compensation */
	double beta, gamma;  /* gwb_csr_spmm_axpby: y = alpha A x + beta x + gamma z */
	const double *z;     /* (NULL: gamma is 0) */
};

/* Knuth's TwoSum: *s + p with the rounding error added to *e (branch-free) */
static inline void two_sum(double *s, double *e, double p)
{
	double t = *s + p, z = t - *s;
	*e += (*s - (t - z)) + (p - z);
	*s = t;
}

/* Rows [lo, hi) for up to 8 columns at a time: each matrix entry is read once per 8 vectors.
 * One vector: two accumulators per row, so a row's multiply-adds are two chains, not one. */
#define SPMV_ROWS(RP, CI)                                                                     \
	for (int k0 = 0; k0 < c->b; k0 += 8) {                                                \
		int nb = c->b - k0 < 8 ? c->b - k0 : 8;                                       \
		const double *x = c->x + (size_t)k0 * A->cols;                                \
		double *y = c->y + (size_t)k0 * A->rows;                                      \
		if (nb == 1) {                                                                \
			double ds = 0, de = 0;                                                \
			for (int64_t i = lo; i < hi; i++) {                                   \
				double s0 = 0, s1 = 0;                                        \
				int64_t q = RP[i], e = RP[i + 1];                             \
				for (; q + 1 < e; q += 2) {                                   \
					s0 += v[q] * x[CI[q]];                                \
					s1 += v[q + 1] * x[CI[q + 1]];                        \
				}                                                             \
				if (q < e)                                                    \
					s0 += v[q] * x[CI[q]];                                \
				double yi = alpha * (s0 + s1);                                \
				if (c->beta != 0 || c->z)                                     \
					yi += c->beta * x[i] +                                \
					      (c->z ? c->gamma * c->z[(size_t)k0 * A->rows + i] : 0); \
				y[i] = yi;                                                    \
				if (dot)                                                      \
					two_sum(&ds, &de, x[i] * yi);                         \
			}                                                                     \
			if (dot) {                                                            \
				dot[2 * part] = ds;                                           \
				dot[2 * part + 1] = de;                                       \
			}                                                                     \
			continue;                                                             \
		}                                                                             \
		for (int64_t i = lo; i < hi; i++) {                                           \
			double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                               \
			for (int64_t q = RP[i]; q < RP[i + 1]; q++) {                         \
				const double a = v[q], *xc = x + CI[q];                       \
				for (int k = 0; k < nb; k++)                                  \
					s[k] += a * xc[(size_t)k * A->cols];                  \
			}                                                                     \
			if (c->beta != 0 || c->z) {                                           \
				const double *zz = c->z ? c->z + (size_t)k0 * A->rows : NULL; \
				for (int k = 0; k < nb; k++)                                  \
					y[i + (size_t)k * A->rows] = alpha * s[k] +           \
						c->beta * x[i + (size_t)k * A->cols] +        \
						(zz ? c->gamma * zz[i + (size_t)k * A->rows] : 0); \
			} else {                                                              \
				for (int k = 0; k < nb; k++)                                  \
					y[i + (size_t)k * A->rows] = alpha * s[k];            \
			}                                                                     \
		}                                                                             \
	}

static void spmv_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct spmv_ctx *c = p;
	const gwb_csr *A = c->A;
	const double *v = A->val, alpha = c->alpha;
	double *dot = c->dot;
	if (A->wide) {
		const int64_t *rp = A->rp64, *ci = A->ci64;
		SPMV_ROWS(rp, ci)
	} else {
		const int32_t *rp = A->rp32, *ci = A->ci32;
		SPMV_ROWS(rp, ci)
	}
}
#undef SPMV_ROWS

static int64_t spmv_grain(const gwb_csr *A, int b)
{
	/* about 100k multiply-adds per part (the workers are persistent: a part costs
	 * microseconds to hand out) */
	double per_row = A->rows ? (double)A->nnz * b / A->rows + 1 : 1;
	int64_t g = (int64_t)(1e5 / per_row);
	return g < 64 ? 64 : g;
}

void gwb_csr_spmv(const gwb_csr *A, const double *x, double *y)
{
	struct spmv_ctx c = {A, x, y, 1, 1.0, NULL, 0, 0, NULL};
	gwb_parallel_for(A->rows, spmv_grain(A, 1), spmv_part, &c);
}

void gwb_csr_spmm(const gwb_csr *A, const double *X, double *Y, int b)
{
	gwb_csr_spmm_scaled(A, 1.0, X, Y, b);
}

void gwb_csr_spmm_scaled(const gwb_csr *A, double alpha, const double *X, double *Y, int b)
{
	struct spmv_ctx c = {A, X, Y, b, alpha, NULL, 0, 0, NULL};
	gwb_parallel_for(A->rows, spmv_grain(A, b), spmv_part, &c);
}

void gwb_csr_spmm_axpby(const gwb_csr *A, double alpha, const double *X, double beta,
			const double *Z, double gamma, double *Y, int b)
{
	struct spmv_ctx c = {A, X, Y, b, alpha, NULL, beta, gamma, gamma != 0 ? Z : NULL};
	gwb_parallel_for(A->rows, spmv_grain(A, b), spmv_part, &c);
}

double gwb_csr_spmv_dot(const gwb_csr *A, double alpha, const double *x, double *y)
{
	double dot[128] = {0};
	struct spmv_ctx c = {A, x, y, 1, alpha, dot, 0, 0, NULL};
	gwb_parallel_for(A->rows, spmv_grain(A, 1), spmv_part, &c);
	double s = 0, e = 0;
	for (int t = 0; t < 64; t++) {
		two_sum(&s, &e, dot[2 * t]);
		e += dot[2 * t + 1];
	}
	return s + e;
}

/* ---------------------------------------------------------------- checks and norms */

double gwb_csr_get(const gwb_csr *A, int64_t i, int64_t j)
{
	int64_t lo = gwb_csr_rp(A, i), hi = gwb_csr_rp(A, i + 1) - 1;
	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2, c = gwb_csr_ci(A, mid);
		if (c == j)
			return A->val[mid];
		if (c < j)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0.0;
}

static bool has_entry(const gwb_csr *A, int64_t i, int64_t j, double *v)
{
	int64_t lo = gwb_csr_rp(A, i), hi = gwb_csr_rp(A, i + 1) - 1;
	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2, c = gwb_csr_ci(A, mid);
		if (c == j) {
			*v = A->val[mid];
			return true;
		}
		if (c < j)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

bool gwb_csr_is_symmetric(gwb_csr *A, int64_t at[2])
{
	if (A->rows != A->cols) {
		A->sym = 0;
		if (at)
			at[0] = at[1] = -1;
		return false;
	}
	for (int64_t i = 0; i < A->rows; i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++) {
			int64_t j = gwb_csr_ci(A, p);
			double v = 0;
			if (j <= i)
				continue;
			if (!has_entry(A, j, i, &v)) {
				if (A->val[p] == 0)
					continue;
			} else if (v == A->val[p])
				continue;
			A->sym = 0;
			if (at) {
				at[0] = i;
				at[1] = j;
			}
			return false;
		}
	/* entries below the diagonal without a partner above */
	for (int64_t i = 0; i < A->rows; i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++) {
			int64_t j = gwb_csr_ci(A, p);
			double v;
			if (j >= i || A->val[p] == 0)
				continue;
			if (!has_entry(A, j, i, &v)) {
				A->sym = 0;
				if (at) {
					at[0] = i;
					at[1] = j;
				}
				return false;
			}
		}
	A->sym = 1;
	return true;
}

bool gwb_csr_has_nonfinite(const gwb_csr *A, int64_t at[2])
{
	for (int64_t i = 0; i < A->rows; i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++)
			if (!isfinite(A->val[p])) {
				if (at) {
					at[0] = i;
					at[1] = gwb_csr_ci(A, p);
				}
				return true;
			}
	return false;
}

double gwb_csr_norm_inf(const gwb_csr *A)
{
	double m = 0;
	for (int64_t i = 0; i < A->rows; i++) {
		double s = 0;
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++)
			s += fabs(A->val[p]);
		if (s > m)
			m = s;
	}
	return m;
}

double gwb_csr_norm_fro(const gwb_csr *A)
{
	double s = 0, c = 0;
	for (int64_t p = 0; p < A->nnz; p++) {
		double y = A->val[p] * A->val[p] - c, t = s + y;
		c = (t - s) - y;
		s = t;
	}
	return sqrt(s);
}

void gwb_csr_diag(const gwb_csr *A, double *d)
{
	for (int64_t i = 0; i < A->rows; i++)
		d[i] = i < A->cols ? gwb_csr_get(A, i, i) : 0.0;
}

/* ---------------------------------------------------------------- generators */

/* Stencil Laplacian on an nx x ny x nz grid (unused dimensions 1): 2*dims on the diagonal,
 * -1 to each grid neighbour. Rows are built in order, so the CSR is written directly. */
static gwb_status stencil(int dims, int64_t nx, int64_t ny, int64_t nz, gwb_csr **out)
{
	int64_t n, nnz;
	gwb_csr *A;
	gwb_status st;

	*out = NULL;
	if (nx < 1 || ny < 1 || nz < 1)
		return gwb_error(GWB_EINVAL, "laplacian%dd: grid sizes must be >= 1 (got %lld x %lld "
				 "x %lld)", dims, (long long)nx, (long long)ny, (long long)nz);
	if ((double)nx * ny * nz > 4e9)
		return gwb_error(GWB_EINVAL, "laplacian%dd: order %.3g is beyond what fits in memory "
				 "here; use a smaller grid", dims, (double)nx * ny * nz);
	n = nx * ny * nz;
	nnz = n + 2 * ((nx - 1) * ny * nz + (dims > 1 ? nx * (ny - 1) * nz : 0) +
		       (dims > 2 ? nx * ny * (nz - 1) : 0));
	if ((st = gwb_csr_alloc(n, n, nnz, false, &A)))
		return st;
	int64_t p = 0;
	double dg = 2.0 * dims;
	for (int64_t z = 0; z < nz; z++)
		for (int64_t y = 0; y < ny; y++)
			for (int64_t x = 0; x < nx; x++) {
				int64_t i = x + nx * (y + ny * z);
				set_rp(A, i, p);
#define PUT(col, v) (set_ci(A, p, (col)), A->val[p++] = (v))
				if (z > 0)
					PUT(i - nx * ny, -1.0);
				if (y > 0)
					PUT(i - nx, -1.0);
				if (x > 0)
					PUT(i - 1, -1.0);
				PUT(i, dg);
				if (x + 1 < nx)
					PUT(i + 1, -1.0);
				if (y + 1 < ny)
					PUT(i + nx, -1.0);
				if (z + 1 < nz)
					PUT(i + nx * ny, -1.0);
#undef PUT
			}
	set_rp(A, n, p);
	A->sym = 1;
	if (dims == 1)
		snprintf(A->name, sizeof(A->name), "laplacian1d(%lld)", (long long)nx);
	else if (dims == 2)
		snprintf(A->name, sizeof(A->name), "laplacian2d(%lldx%lld)", (long long)nx, (long long)ny);
	else
		snprintf(A->name, sizeof(A->name), "laplacian3d(%lldx%lldx%lld)", (long long)nx,
			 (long long)ny, (long long)nz);
	*out = A;
	return GWB_OK;
}

gwb_status gwb_csr_laplacian1d(int64_t n, gwb_csr **out) { return stencil(1, n, 1, 1, out); }
gwb_status gwb_csr_laplacian2d(int64_t nx, int64_t ny, gwb_csr **out)
{
	return stencil(2, nx, ny, 1, out);
}
gwb_status gwb_csr_laplacian3d(int64_t nx, int64_t ny, int64_t nz, gwb_csr **out)
{
	return stencil(3, nx, ny, nz, out);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

gwb_status gwb_laplacian_eigenvalues(int dims, int64_t nx, int64_t ny, int64_t nz, int64_t m,
				     double *out)
{
	int64_t s[3] = {nx, dims > 1 ? ny : 1, dims > 2 ? nz : 1};
	int64_t lim[3], cnt;
	double *all;

	/* the m smallest sums use at most the m smallest 1-D values per axis */
	for (int d = 0; d < 3; d++)
		lim[d] = s[d] < m ? s[d] : m;
	cnt = lim[0] * lim[1] * lim[2];
	all = malloc((size_t)cnt * sizeof(double));
	if (!all)
		return gwb_error(GWB_ENOMEM, "laplacian eigenvalues: out of memory");
	int64_t q = 0;
	for (int64_t a = 1; a <= lim[0]; a++)
		for (int64_t b = 1; b <= lim[1]; b++)
			for (int64_t c = 1; c <= lim[2]; c++) {
				double v = 0;
				int64_t k[3] = {a, b, c};
				for (int d = 0; d < dims; d++) {
					double t = sin((double)k[d] * M_PI / (2.0 * (double)(s[d] + 1)));
					v += 4.0 * t * t;
				}
				all[q++] = v;
			}
	qsort(all, (size_t)cnt, sizeof(double), dbl_cmp);
	for (int64_t i = 0; i < m; i++)
		out[i] = i < cnt ? all[i] : NAN;
	free(all);
	return GWB_OK;
}

/* The random generators refuse more entries than this (2^48: 6.8 PB of COO triples) before
 * llround, which is undefined past 2^63, and the byte counts, which overflow near 2^60. */
#define GWB_RAND_MAX_ENTRIES 0x1p48

gwb_status gwb_csr_randsym(int64_t n, double density, uint64_t seed, bool diag, gwb_csr **out)
{
	int64_t m, e = 0;
	int64_t *I, *J;
	double *V;
	uint64_t s = seed * 0x2545F4914F6CDD1DULL + 1;
	gwb_status st;

	*out = NULL;
	if (n < 1)
		return gwb_error(GWB_EINVAL, "randsym: n must be >= 1 (got %lld)", (long long)n);
	if (!(density > 0 && density <= 1))
		return gwb_error(GWB_EINVAL, "randsym: density must be in (0, 1] (got %g)", density);
	{
		double want = density * (double)n * (double)(n - 1) / 2.0;
		/* + n: the arrays below hold room for a diagonal too */
		if (!(want + (double)n < GWB_RAND_MAX_ENTRIES))
			return gwb_error(GWB_EINVAL, "randsym: density * n * (n - 1) / 2 + n = %.3g "
					 "entries (density %g, n %lld) is more than any memory holds "
					 "(limit 2^48); use a smaller density or n", want + (double)n,
					 density, (long long)n);
		m = (int64_t)llround(want);
	}
	if (n > 1 && m < 1)
		m = 1;
	if (n == 1)
		m = 0;
	I = malloc((size_t)(m + n) * sizeof(int64_t));
	J = malloc((size_t)(m + n) * sizeof(int64_t));
	V = malloc((size_t)(m + n) * sizeof(double));
	if (!I || !J || !V) {
		st = gwb_error(GWB_ENOMEM, "randsym: cannot allocate %zu bytes for %lld entries",
			       (size_t)(m + n) * 24, (long long)(m + n));
		goto out_free;
	}
	for (int64_t t = 0; t < m; t++) {
		int64_t i, j;
		do {
			i = (int64_t)(gwb_rng_next(&s) % (uint64_t)n);
			j = (int64_t)(gwb_rng_next(&s) % (uint64_t)n);
		} while (i == j);
		I[e] = i < j ? i : j;
		J[e] = i < j ? j : i;
		V[e++] = 2.0 * (double)(gwb_rng_next(&s) >> 11) * 0x1.0p-53 - 1.0;
	}
	if (diag)
		for (int64_t i = 0; i < n; i++) {
			I[e] = J[e] = i;
			V[e++] = 2.0 * (double)(gwb_rng_next(&s) >> 11) * 0x1.0p-53 - 1.0;
		}
	st = gwb_csr_from_coo(n, n, e, I, J, V, true, out);
	if (!st) {
		(*out)->sym = 1;
		snprintf((*out)->name, sizeof((*out)->name), "randsym(%lld, %g)", (long long)n, density);
	}
out_free:
	free(I);
	free(J);
	free(V);
	return st;
}

gwb_status gwb_csr_random(int64_t rows, int64_t cols, double density, uint64_t seed,
			  gwb_csr **out)
{
	int64_t m;
	int64_t *I, *J;
	double *V;
	uint64_t s = seed * 0x2545F4914F6CDD1DULL + 7;
	gwb_status st;

	*out = NULL;
	if (rows < 1 || cols < 1)
		return gwb_error(GWB_EINVAL, "sprand: rows and cols must be >= 1 (got %lldx%lld)",
				 (long long)rows, (long long)cols);
	if (!(density > 0 && density <= 1))
		return gwb_error(GWB_EINVAL, "sprand: density must be in (0, 1] (got %g)", density);
	double want = density * (double)rows * (double)cols;
	if (!(want < GWB_RAND_MAX_ENTRIES))
		return gwb_error(GWB_EINVAL, "sprand: density * rows * cols = %.3g entries (density %g, "
				 "rows %lld, cols %lld) is more than any memory holds (limit 2^48); use "
				 "a smaller density, rows or cols", want, density, (long long)rows,
				 (long long)cols);
	m = (int64_t)llround(want);
	if (m < 1)
		m = 1;
	I = malloc((size_t)m * sizeof(int64_t));
	J = malloc((size_t)m * sizeof(int64_t));
	V = malloc((size_t)m * sizeof(double));
	if (!I || !J || !V) {
		st = gwb_error(GWB_ENOMEM, "sprand: cannot allocate %zu bytes for %lld entries",
			       (size_t)m * 24, (long long)m);
		goto out_free;
	}
	for (int64_t t = 0; t < m; t++) {
		if (!(t & 0xfffff) && gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "sprand: interrupted after %lld of %lld entries",
				       (long long)t, (long long)m);
			goto out_free;
		}
		I[t] = (int64_t)(gwb_rng_next(&s) % (uint64_t)rows);
		J[t] = (int64_t)(gwb_rng_next(&s) % (uint64_t)cols);
		V[t] = 2.0 * (double)(gwb_rng_next(&s) >> 11) * 0x1.0p-53 - 1.0;
	}
	/* positions drawn twice are summed (from_coo), like any duplicate */
	st = gwb_csr_from_coo(rows, cols, m, I, J, V, false, out);
	if (!st)
		snprintf((*out)->name, sizeof((*out)->name), "sprand(%lld, %lld, %g)", (long long)rows,
			 (long long)cols, density);
out_free:
	free(I);
	free(J);
	free(V);
	return st;
}

gwb_status gwb_csr_transpose(const gwb_csr *A, gwb_csr **out)
{
	gwb_csr *T;
	gwb_status st = gwb_csr_alloc(A->cols, A->rows, A->nnz, A->wide, &T);
	int64_t *next;

	*out = NULL;
	if (st)
		return st;
	next = calloc((size_t)A->cols + 1, sizeof(int64_t));
	if (!next) {
		gwb_csr_free(T);
		return gwb_error(GWB_ENOMEM, "sparse transpose: out of memory");
	}
	/* counting sort by column; rows are visited in order, so each row of T is ascending */
	for (int64_t p = 0; p < A->nnz; p++)
		next[gwb_csr_ci(A, p) + 1]++;
	for (int64_t j = 0; j < A->cols; j++)
		next[j + 1] += next[j];
	for (int64_t j = 0; j <= A->cols; j++) {
		if (T->wide)
			T->rp64[j] = next[j];
		else
			T->rp32[j] = (int32_t)next[j];
	}
	for (int64_t i = 0; i < A->rows; i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++) {
			int64_t q = next[gwb_csr_ci(A, p)]++;
			if (T->wide)
				T->ci64[q] = i;
			else
				T->ci32[q] = (int32_t)i;
			T->val[q] = A->val[p];
		}
	free(next);
	T->sym = A->sym;
	snprintf(T->name, sizeof(T->name), "%.80s^T", A->name);
	*out = T;
	return GWB_OK;
}

/* ---------------------------------------------------------------- kNN graph Laplacian */

struct knn_ctx {
	const float *Z;   /* standardised features, row-major rows x f */
	int64_t rows;
	int f, k;
	int64_t *nb;      /* rows x k neighbour indices */
	double *dist;     /* rows x k squared distances */
};

static void knn_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct knn_ctx *c = p;
	(void)part;
	for (int64_t i = lo; i < hi; i++) {
		if (gwb_intr_pending())
			return;   /* (a row is rows x f work: Ctrl-C is seen within one) */
		int64_t *nb = c->nb + i * c->k;
		double *dd = c->dist + i * c->k;
		int have = 0;
		const float *zi = c->Z + i * c->f;
		for (int64_t j = 0; j < c->rows; j++) {
			if (j == i)
				continue;
			const float *zj = c->Z + j * c->f;
			double s = 0;
			for (int t = 0; t < c->f; t++) {
				double d = (double)zi[t] - zj[t];
				s += d * d;
			}
			if (have == c->k && s >= dd[have - 1])
				continue;
			/* insertion into the sorted list (ties: smaller index first) */
			int q = have < c->k ? have++ : have - 1;
			while (q > 0 && dd[q - 1] > s) {
				dd[q] = dd[q - 1];
				nb[q] = nb[q - 1];
				q--;
			}
			dd[q] = s;
			nb[q] = j;
		}
	}
}

gwb_status gwb_csr_knn_laplacian(const gwb_dataset *d, int k, double sigma, bool normalized,
				 gwb_csr **out)
{
	int64_t n = (int64_t)d->rows, e = 0;
	int f = d->features;
	float *Z = NULL;
	int64_t *nb = NULL, *I = NULL, *J = NULL;
	double *dist = NULL, *V = NULL, *deg = NULL;
	gwb_csr *W = NULL;
	gwb_status st;

	*out = NULL;
	if (k < 1 || (int64_t)k >= n)
		return gwb_error(GWB_EINVAL, "knn_laplacian: k must be in [1, rows-1] = [1, %lld] "
				 "(got %d)", (long long)n - 1, k);
	Z = malloc((size_t)n * f * sizeof(float));
	nb = malloc((size_t)n * k * sizeof(int64_t));
	dist = malloc((size_t)n * k * sizeof(double));
	I = malloc((size_t)n * k * sizeof(int64_t) + n * sizeof(int64_t));
	J = malloc((size_t)n * k * sizeof(int64_t) + n * sizeof(int64_t));
	V = malloc((size_t)n * k * sizeof(double) + n * sizeof(double));
	deg = calloc((size_t)n, sizeof(double));
	if (!Z || !nb || !dist || !I || !J || !V || !deg) {
		st = gwb_error(GWB_ENOMEM, "knn_laplacian: out of memory for %lld rows", (long long)n);
		goto out_free;
	}
	for (int t = 0; t < f; t++) {
		const float *x = d->X + (size_t)t * n;
		double mu = 0, var = 0;
		for (int64_t i = 0; i < n; i++) {
			if (isnan(x[i])) {
				st = gwb_error(GWB_EINVAL, "knn_laplacian: row %lld has a missing value "
					       "in feature %d; drop or impute missing values first",
					       (long long)i + 1, t + 1);
				goto out_free;
			}
			mu += x[i];
		}
		mu /= (double)n;
		for (int64_t i = 0; i < n; i++)
			var += (x[i] - mu) * (x[i] - mu);
		double sd = sqrt(var / (double)n);
		if (!(sd > 0))
			sd = 1;
		for (int64_t i = 0; i < n; i++)
			Z[i * f + t] = (float)((x[i] - mu) / sd);
	}
	struct knn_ctx c = {Z, n, f, k, nb, dist};
	gwb_parallel_for(n, 16, knn_part, &c);
	if (gwb_intr_pending()) {
		st = gwb_error(GWB_EINTR, "knn_laplacian: interrupted while finding the neighbours "
			       "of %lld rows", (long long)n);
		goto out_free;
	}
	/* union of directed edges: keep (i, j) once; if j lists i too, only the i < j copy */
	for (int64_t i = 0; i < n; i++)
		for (int q = 0; q < k; q++) {
			int64_t j = nb[i * k + q];
			bool mutual = false;
			for (int r = 0; r < k; r++)
				if (nb[j * k + r] == i)
					mutual = true;
			if (mutual && j < i)
				continue;
			double w = sigma > 0 ? exp(-dist[i * k + q] / (2 * sigma * sigma)) : 1.0;
			I[e] = i;
			J[e] = j;
			V[e++] = -w;
			deg[i] += w;
			deg[j] += w;
		}
	if (normalized) {
		for (int64_t t = 0; t < e; t++)
			V[t] /= sqrt(deg[I[t]] * deg[J[t]]);
		for (int64_t i = 0; i < n; i++) {
			I[e] = J[e] = i;
			V[e++] = 1.0;
		}
	} else
		for (int64_t i = 0; i < n; i++) {
			I[e] = J[e] = i;
			V[e++] = deg[i];
		}
	st = gwb_csr_from_coo(n, n, e, I, J, V, true, &W);
	if (!st) {
		W->sym = 1;
		snprintf(W->name, sizeof(W->name), "knn_laplacian(k=%d)", k);
		*out = W;
	}
out_free:
	free(Z);
	free(nb);
	free(dist);
	free(I);
	free(J);
	free(V);
	free(deg);
	return st;
}

/* ---------------------------------------------------------------- binary save/load */

#define GWBS_MAGIC "GWBS"
#define GWBS_VERSION 1u

struct gwbs_header {
	char magic[4];
	uint32_t version;
	int64_t rows, cols, nnz;
	uint32_t index_bits;
	int32_t sym;
	char name[96];
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static bool put(gwb_afile *a, const void *p, size_t n, uint64_t *h, gwb_status *st)
{
	*h = fnv1a(*h, p, n);
	return !*st && !(*st = gwb_afile_write(a, p, n));   /* (stops on Ctrl-C) */
}

gwb_status gwb_csr_save(const gwb_csr *A, const char *path)
{
	struct gwbs_header hd;
	size_t ib = A->wide ? 8 : 4;
	uint64_t h = 0xcbf29ce484222325ULL;
	gwb_afile a;
	gwb_status st;
	bool ok;

	if ((st = gwb_afile_open(&a, path, "save")))
		return st;
	memset(&hd, 0, sizeof(hd));
	memcpy(hd.magic, GWBS_MAGIC, 4);
	hd.version = GWBS_VERSION;
	hd.rows = A->rows;
	hd.cols = A->cols;
	hd.nnz = A->nnz;
	hd.index_bits = (uint32_t)ib * 8;
	hd.sym = A->sym;
	memcpy(hd.name, A->name, sizeof(hd.name));
	ok = put(&a, &hd, sizeof(hd), &h, &st) &&
	     put(&a, A->wide ? (void *)A->rp64 : (void *)A->rp32, ((size_t)A->rows + 1) * ib, &h,
		 &st) &&
	     put(&a, A->wide ? (void *)A->ci64 : (void *)A->ci32, (size_t)A->nnz * ib, &h, &st) &&
	     put(&a, A->val, (size_t)A->nnz * sizeof(double), &h, &st);
	ok = ok && !(st = gwb_afile_write(&a, &h, sizeof(h)));
	if (!ok) {
		gwb_afile_abort(&a);
		return st;
	}
	return gwb_afile_commit(&a);
}

bool gwb_csr_is_gwbs(const char *path)
{
	char m[4];
	FILE *f = fopen(path, "rb");
	bool yes = f && fread(m, 1, 4, f) == 4 && !memcmp(m, GWBS_MAGIC, 4);
	if (f)
		fclose(f);
	return yes;
}

gwb_status gwb_csr_load(const char *path, gwb_csr **out)
{
	struct gwbs_header hd;
	uint64_t h = 0xcbf29ce484222325ULL, want;
	gwb_csr *A = NULL;
	gwb_status st;
	long len;
	FILE *f = fopen(path, "rb");

	*out = NULL;
	if (!f)
		return gwb_error(GWB_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return gwb_error(GWB_EIO, "%s: cannot read", path);
	}
	if (fread(&hd, sizeof(hd), 1, f) != 1 || memcmp(hd.magic, GWBS_MAGIC, 4)) {
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: not a gwb sparse matrix file (no GWBS header)", path);
	}
	if (hd.version != GWBS_VERSION) {
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: unsupported .gwbs version %u (this gwb reads "
				 "version %d)", path, hd.version, GWBS_VERSION);
	}
	if ((hd.index_bits != 32 && hd.index_bits != 64) || hd.rows < 0 || hd.cols < 0 ||
	    hd.nnz < 0) {
		const char *field = hd.rows < 0 ? "rows" : hd.cols < 0 ? "cols" : hd.nnz < 0 ?
				    "nnz" : "index_bits";
		long long v = hd.rows < 0 ? (long long)hd.rows : hd.cols < 0 ? (long long)hd.cols :
			      hd.nnz < 0 ? (long long)hd.nnz : (long long)hd.index_bits;
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: damaged .gwbs header: %s = %lld (%s)", path,
				 field, v, strcmp(field, "index_bits") ? "it must be >= 0" :
				 "it must be 32 or 64");
	}
	size_t ib = hd.index_bits / 8;
	double need = sizeof(hd) + ((double)hd.rows + 1) * ib + (double)hd.nnz * (ib + 8) + 8;
	if (need != (double)len) {
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: the file has %ld bytes, its header's rows = %lld "
				 "and nnz = %lld imply %.0f (truncated?)", path, len,
				 (long long)hd.rows, (long long)hd.nnz, need);
	}
	/* columns cost no bytes in the file but a vector of cols doubles in every product:
	 * bounded as Matrix Market orders are (8 per byte of the file, or 2^20) */
	if (hd.cols > (len > (1 << 17) ? (int64_t)len * 8 : (int64_t)1 << 20)) {
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: the header's cols = %lld is more than a %ld-byte "
				 "file can hold (at most %lld: 8 per byte of the file, and never "
				 "less than 1048576)", path, (long long)hd.cols, len,
				 len > (1 << 17) ? (long long)len * 8 : 1LL << 20);
	}
	if ((st = gwb_csr_alloc(hd.rows, hd.cols, hd.nnz, ib == 8, &A))) {
		fclose(f);
		return st;
	}
	if (A->wide != (ib == 8)) {
		gwb_csr_free(A);
		fclose(f);
		return gwb_error(GWB_ECORRUPT, "%s: index width does not match the sizes", path);
	}
	h = fnv1a(h, &hd, sizeof(hd));
	void *rp = A->wide ? (void *)A->rp64 : (void *)A->rp32;
	void *ci = A->wide ? (void *)A->ci64 : (void *)A->ci32;
	bool ok = fread(rp, ib, (size_t)hd.rows + 1, f) == (size_t)hd.rows + 1 &&
		  fread(ci, ib, (size_t)hd.nnz, f) == (size_t)hd.nnz &&
		  fread(A->val, 8, (size_t)hd.nnz, f) == (size_t)hd.nnz &&
		  fread(&want, 8, 1, f) == 1;
	fclose(f);
	if (ok) {
		h = fnv1a(h, rp, ((size_t)hd.rows + 1) * ib);
		h = fnv1a(h, ci, (size_t)hd.nnz * ib);
		h = fnv1a(h, A->val, (size_t)hd.nnz * 8);
	}
	if (!ok || h != want) {
		gwb_csr_free(A);
		return gwb_error(GWB_ECORRUPT, "%s: checksum mismatch: the file is damaged", path);
	}
	/* structure checks, so a crafted file cannot send SpMV out of bounds */
	int64_t prev = 0;
	for (int64_t i = 0; i <= A->rows; i++) {
		int64_t r = gwb_csr_rp(A, i);
		if ((i == 0 && r != 0) || r < prev || r > A->nnz || (i == A->rows && r != A->nnz)) {
			gwb_csr_free(A);
			return gwb_error(GWB_ECORRUPT, "%s: bad row offsets at row %lld", path, (long long)i);
		}
		prev = r;
	}
	for (int64_t p = 0; p < A->nnz; p++)
		if (gwb_csr_ci(A, p) < 0 || gwb_csr_ci(A, p) >= A->cols) {
			gwb_csr_free(A);
			return gwb_error(GWB_ECORRUPT, "%s: column index out of range at entry %lld", path,
					 (long long)p);
		}
	memcpy(A->name, hd.name, sizeof(A->name));
	A->name[sizeof(A->name) - 1] = 0;
	A->sym = hd.sym >= -1 && hd.sym <= 1 ? hd.sym : -1;
	*out = A;
	return GWB_OK;
}
