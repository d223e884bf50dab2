/* eig_sparse_ops.c - the block operations of the sparse eigensolvers: the sp_* calls every
 * method makes (each times its phase under GWB_EIG_PROF, counts products A x and calls the
 * solve's backend table, eig_sparse_impl.h) and the CPU table: threaded SpMV/SpMM (sparse.c),
 * BLAS for the Gram matrices and updates (DGEMV/DSYRK/DGEMM) with compensated loops where
 * BLAS cannot serve, fused axpby with its norm, the hashed random fill, LAPACK QR. The GPU
 * table is eig_sparse_ops_gpu.c's; gwb_sp_ops_get picks one of the two. Uses sparse.c, the
 * thread pool, lapack.c/blas.c and intr.c; nothing of the methods above it. */
#define _GNU_SOURCE
#include "eig_sparse_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "lapack.h"
#include "mpi.h"
#include "pool.h"
#include "sparse_dist.h"

extern void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
		    double *work, const int *lwork, int *info);
extern void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
		    const double *tau, double *work, const int *lwork, int *info);

const char *const sp_ph_names[PH_COUNT] = {"spmm", "gram X^T Y", "update X C", "vector ops",
	"small eig (host)", "host<->device", "setup (checks, upload)"};

const char *sp_fn(const sp_op *o)
{
	return o->fn ? o->fn : "eig.solve";
}

/* ================================================================ the CPU table */

static gwb_status cpu_attach(sp_op *o, gwb_csr *A, unsigned flags)
{
	(void)o;
	(void)A;
	(void)flags;
	return GWB_OK;
}

static void cpu_detach(sp_op *o, const gwb_csr *A)
{
	(void)o;
	(void)A;
}

static gwb_status cpu_sync(void)
{
	return GWB_OK;
}

static gwb_status cpu_alloc(sp_op *o, size_t cnt, double **p)
{
	*p = malloc(cnt * sizeof(double) + 8);
	if (!*p)
		return gwb_error(GWB_ENOMEM, "%s: cannot allocate %zu bytes of work space",
				 sp_fn(o), cnt * sizeof(double));
	return GWB_OK;
}

static void cpu_free(double *p)
{
	free(p);
}

static gwb_status cpu_put(double *dst, const double *host, size_t cnt)
{
	memcpy(dst, host, cnt * sizeof(double));
	return GWB_OK;
}

static gwb_status cpu_get(double *host, const double *src, size_t cnt)
{
	memcpy(host, src, cnt * sizeof(double));
	return GWB_OK;
}

static gwb_status cpu_copy(double *dst, const double *src, size_t cnt)
{
	memmove(dst, src, cnt * sizeof(double));
	return GWB_OK;
}

/* Y = s A X, b columns (dist: this rank's rows, the halo exchanged while its own block is
 * multiplied). */
static gwb_status cpu_spmm(sp_op *o, const double *X, double *Y, int b)
{
	if (o->dist)
		return gwb_csr_dist_spmm(o->dist, o->sign, X, Y, b, NULL);
	gwb_csr_spmm_scaled(o->A, o->sign, X, Y, b);
	return GWB_OK;
}

/* Out = alpha A X + beta X + gamma Z in the product's pass over the rows: the separate axpby
 * read three blocks and wrote one more (lap3d 128^3, block 16: 78 s of vector ops against
 * 168 s of products before) */
static gwb_status cpu_cheb_step(sp_op *o, const double *X, const double *Z, double *Out, int m,
				double alpha, double beta, double gamma)
{
	if (o->dist)
		return gwb_csr_dist_spmm_axpby(o->dist, alpha, X, beta, Z, gamma, Out, m);
	gwb_csr_spmm_axpby(o->A, alpha, X, beta, Z, gamma, Out, m);
	return GWB_OK;
}

/* one pass: the dot product is taken as y is written */
static gwb_status cpu_spmv_dot(sp_op *o, const double *x, double *y, double *d)
{
	if (o->dist) {
		gwb_status st = gwb_csr_dist_spmm(o->dist, o->sign, x, y, 1, d);
		return st ? st : sp_allsum(o, d, 1);
	}
	*d = gwb_csr_spmv_dot(o->A, o->sign, x, y);
	return GWB_OK;
}

/* ---- G = X^T Y (p x q, column-major, on the host), compensated (Dot2) on the CPU */

struct gtn_ctx {
	const double *X, *Y;
	int64_t n;
	int p, q;
	double *part;   /* per part: p*q sums then p*q compensations */
};

/* Compensated (Neumaier) dot products for narrow products (Lanczos coefficients, norms);
 * a 4x4 register-tiled kernel for block Gram matrices, whose rounding the second pass of
 * every orthonormalization removes. */
static void gtn_part(void *pp, int64_t lo, int64_t hi, int part)
{
	struct gtn_ctx *c = pp;
	int pq = c->p * c->q;
	double *s = c->part + (size_t)part * 2 * pq, *e = s + pq;
	const int64_t n = c->n;
	for (int t = 0; t < 2 * pq; t++)
		s[t] = 0;
	if (c->q <= 2 || c->p <= 2) {
		for (int j = 0; j < c->q; j++) {
			const double *y = c->Y + (size_t)j * n;
			for (int i = 0; i < c->p; i++) {
				const double *x = c->X + (size_t)i * n;
				double S = 0, E = 0;
				for (int64_t r = lo; r < hi; r++) {
					double pr = x[r] * y[r], t = S + pr;
					E += fabs(S) >= fabs(pr) ? (S - t) + pr : (pr - t) + S;
					S = t;
				}
				s[i + j * c->p] = S;
				e[i + j * c->p] = E;
			}
		}
		return;
	}
	for (int64_t b0 = lo; b0 < hi; b0 += 1024) {
		int64_t b1 = b0 + 1024 < hi ? b0 + 1024 : hi;
		for (int j0 = 0; j0 < c->q; j0 += 4) {
			int nj = c->q - j0 < 4 ? c->q - j0 : 4;
			for (int i0 = 0; i0 < c->p; i0 += 4) {
				int ni = c->p - i0 < 4 ? c->p - i0 : 4;
				double acc[4][4] = {{0}};
				const double *x[4], *y[4];
				for (int t = 0; t < 4; t++) {
					x[t] = c->X + (size_t)(i0 + (t < ni ? t : 0)) * n;
					y[t] = c->Y + (size_t)(j0 + (t < nj ? t : 0)) * n;
				}
				for (int64_t r = b0; r < b1; r++) {
					double xv[4] = {x[0][r], x[1][r], x[2][r], x[3][r]};
					double yv[4] = {y[0][r], y[1][r], y[2][r], y[3][r]};
					for (int a = 0; a < 4; a++)
						for (int bb = 0; bb < 4; bb++)
							acc[a][bb] += xv[a] * yv[bb];
				}
				for (int a = 0; a < ni; a++)
					for (int bb = 0; bb < nj; bb++)
						s[(i0 + a) + (size_t)(j0 + bb) * c->p] += acc[a][bb];
			}
		}
	}
}

static gwb_status gemm_tn_local(sp_op *o, const double *X, int p, const double *Y, int q,
				 double *G)
{
	int T = gwb_cpu_threads();
	int pq = p * q;
	if (p > 2 && q == 1 && o->n <= INT32_MAX) {
		/* one vector against a basis (Lanczos' CGS2, deflation): DGEMV reads X once, on
		 * BLAS's threads; the second pass removes its rounding */
		char tt = 'T';
		int in = (int)o->n, one_i = 1;
		double one = 1.0, zero = 0.0;
		dgemv_(&tt, &in, &p, &one, X, &in, Y, &one_i, &zero, G, &one_i, 1);
		return GWB_OK;
	}
	if (X == Y && p == q && p > 2 && o->n <= INT32_MAX) {
		/* a block's own Gram matrix (orthonormalizations, Cholesky QR, the measured
		 * loss of orthogonality): DSYRK, half DGEMM's work, mirrored */
		char up = 'U', tt = 'T';
		int in = (int)o->n;
		double one = 1.0, zero = 0.0;
		dsyrk_(&up, &tt, &p, &in, &one, X, &in, &zero, G, &p, 1, 1);
		for (int j = 0; j < p; j++)
			for (int i = j + 1; i < p; i++)
				G[i + (size_t)j * p] = G[j + (size_t)i * p];
		return GWB_OK;
	}
	if (p > 2 && q > 2 && o->n <= INT32_MAX) {
		/* Block Gram matrices through BLAS (its threads; the second pass of every
		 * orthonormalization removes their rounding, as it did the tiled loop's). */
		char tt = 'T', tn = 'N';
		int in = (int)o->n;
		double one = 1.0, zero = 0.0;
		dgemm_(&tt, &tn, &p, &q, &in, &one, X, &in, Y, &in, &zero, G, &p, 1, 1);
		return GWB_OK;
	}
	double *part = calloc((size_t)T * 2 * pq, sizeof(double));
	if (!part)
		return gwb_error(GWB_ENOMEM, "%s: out of memory", sp_fn(o));
	struct gtn_ctx c = {X, Y, o->n, p, q, part};
	int64_t grain = (int64_t)(3e4 / (pq > 0 ? pq : 1));
	gwb_parallel_for(o->n, grain < 2048 ? 2048 : grain, gtn_part, &c);
	for (int t = 0; t < pq; t++) {
		double S = 0, E = 0;
		for (int h = 0; h < T; h++) {
			double a = part[(size_t)h * 2 * pq + t];
			double u = S + a, z = u - S;
			E += ((S - (u - z)) + (a - z)) + part[(size_t)h * 2 * pq + pq + t];
			S = u;
		}
		G[t] = S + E;
	}
	free(part);
	return GWB_OK;
}

/* G = X^T Y over this process's rows; dist: summed over the ranks (one MPI_Allreduce of p x q
 * doubles). A rank without rows adds zeros (BLAS refuses a leading dimension of 0). */
static gwb_status cpu_gemm_tn(sp_op *o, const double *X, int p, const double *Y, int q, double *G)
{
	gwb_status st = GWB_OK;
	if (o->n > 0)
		st = gemm_tn_local(o, X, p, Y, q, G);
	else
		memset(G, 0, (size_t)p * q * sizeof(double));
	return st ? st : sp_allsum(o, G, (size_t)p * q);
}

/* ---- Y = X C + beta Y (X n x p, C p x q on the host, Y n x q) */

struct gnn_ctx {
	const double *X, *C;
	double *Y;
	int64_t n;
	int p, q;
	double beta;
};

static void gnn_part(void *pp, int64_t lo, int64_t hi, int part)
{
	struct gnn_ctx *c = pp;
	(void)part;
	for (int64_t b0 = lo; b0 < hi; b0 += 512) {
		int64_t b1 = b0 + 512 < hi ? b0 + 512 : hi;
		for (int j = 0; j < c->q; j++) {
			double *y = c->Y + (size_t)j * c->n;
			if (c->beta == 0)
				for (int64_t r = b0; r < b1; r++)
					y[r] = 0;
			else if (c->beta != 1)
				for (int64_t r = b0; r < b1; r++)
					y[r] *= c->beta;
			for (int l = 0; l < c->p; l++) {
				double a = c->C[l + (size_t)j * c->p];
				const double *x = c->X + (size_t)l * c->n;
				if (a == 0)
					continue;
				for (int64_t r = b0; r < b1; r++)
					y[r] += a * x[r];
			}
		}
	}
}

static gwb_status cpu_gemm_nn(sp_op *o, const double *X, int p, const double *C, int q,
			      double beta, double *Y)
{
	if (o->n == 0)
		return GWB_OK;  /* a rank without rows (dist) */
	if (q == 1 && o->n <= INT32_MAX) {
		/* y = X c + beta y: DGEMV (Lanczos' CGS2 update) */
		char tn = 'N';
		int in = (int)o->n, one_i = 1;
		double one = 1.0;
		dgemv_(&tn, &in, &p, &one, X, &in, C, &one_i, &beta, Y, &one_i, 1);
		return GWB_OK;
	}
	if (o->n <= INT32_MAX) {
		/* Y = X C + beta Y through BLAS (its threads). */
		char tn = 'N';
		int in = (int)o->n;
		double one = 1.0;
		dgemm_(&tn, &tn, &in, &q, &p, &one, X, &in, C, &p, &beta, Y, &in, 1, 1);
		return GWB_OK;
	}
	struct gnn_ctx c = {X, C, Y, o->n, p, q, beta};
	int64_t grain = (int64_t)(2e5 / ((double)p * q + 1));
	gwb_parallel_for(o->n, grain < 1024 ? 1024 : grain, gnn_part, &c);
	return GWB_OK;
}

/* ---- z = a x + b y + c z (x, y may be NULL when a, b are 0) */

struct axpby_ctx {
	double a, b, c;
	const double *x, *y;
	double *z;
	double *sq;   /* cpu_axpby_norm: per part, the sum of z_i^2 and its compensation */
};

/* z_i <- a x_i + b y_i + c z_i, returning it */
static inline double axpby_at(const struct axpby_ctx *k, int64_t i)
{
	double v = k->c == 0 ? 0 : k->c * k->z[i];
	if (k->a != 0)
		v += k->a * k->x[i];
	if (k->b != 0)
		v += k->b * k->y[i];
	k->z[i] = v;
	return v;
}

static void axpby_part(void *pp, int64_t lo, int64_t hi, int part)
{
	struct axpby_ctx *k = pp;
	if (!k->sq) {
		for (int64_t i = lo; i < hi; i++)
			(void)axpby_at(k, i);
		return;
	}
	/* two TwoSum lanes (branch-free): the sums' add chains overlap */
	double s[2] = {0, 0}, e[2] = {0, 0};
	for (int64_t i = lo; i < hi; i++) {
		double v = axpby_at(k, i);
		double p = v * v, t = s[i & 1] + p, zz = t - s[i & 1];
		e[i & 1] += (s[i & 1] - (t - zz)) + (p - zz);
		s[i & 1] = t;
	}
	double t = s[0] + s[1], zz = t - s[0];
	k->sq[2 * part] = t;
	k->sq[2 * part + 1] = e[0] + e[1] + (s[0] - (t - zz)) + (s[1] - zz);
}

static gwb_status cpu_axpby(size_t len, double a, const double *x, double b, const double *y,
			    double c, double *z)
{
	struct axpby_ctx k = {a, b, c, x, y, z, NULL};
	gwb_parallel_for((int64_t)len, 1 << 15, axpby_part, &k);
	return GWB_OK;
}

/* one pass: the compensated sum of squares (as sp_norm's) taken as z is written */
static gwb_status cpu_axpby_norm(size_t len, double a, const double *x, double b,
				 const double *y, double c, double *z, double *nrm)
{
	double sq[128] = {0};
	struct axpby_ctx k = {a, b, c, x, y, z, sq};
	gwb_parallel_for((int64_t)len, 1 << 15, axpby_part, &k);
	double s = 0, e = 0;
	for (int t = 0; t < 64; t++) {
		double u = s + sq[2 * t], v = u - s;
		e += (s - (u - v)) + (sq[2 * t] - v) + sq[2 * t + 1];
		s = u;
	}
	*nrm = sqrt(fabs(s + e));
	return GWB_OK;
}

/* ---- Y = diag(d) X (b columns) */

struct rs_ctx {
	const double *d, *X;
	double *Y;
	int64_t n;
	int b;
};
static void rs_part(void *pp, int64_t lo, int64_t hi, int part)
{
	struct rs_ctx *c = pp;
	(void)part;
	for (int j = 0; j < c->b; j++)
		for (int64_t i = lo; i < hi; i++)
			c->Y[i + j * c->n] = c->d[i] * c->X[i + j * c->n];
}

static gwb_status cpu_rowscale(sp_op *o, const double *d, const double *X, double *Y, int b)
{
	struct rs_ctx c = {d, X, Y, o->n, b};
	gwb_parallel_for(o->n, 1 << 15, rs_part, &c);
	return GWB_OK;
}

/* The CPU keeps column-major blocks everywhere: o->rows is never set for it. */
static gwb_status cpu_no_rows(void)
{
	return gwb_error(GWB_EINVAL, "eig.solve: row-major blocks need the GPU");
}

static gwb_status cpu_spmm_rows(sp_op *o, const double *X, double *Y, int b)
{
	(void)o;
	(void)X;
	(void)Y;
	(void)b;
	return cpu_no_rows();
}

static gwb_status cpu_cheb_step_rows(sp_op *o, const double *X, const double *Z, double *Out,
				     int m, double alpha, double beta, double gamma)
{
	(void)o;
	(void)X;
	(void)Z;
	(void)Out;
	(void)m;
	(void)alpha;
	(void)beta;
	(void)gamma;
	return cpu_no_rows();
}

static gwb_status cpu_transpose(sp_op *o, const double *A, double *B, int b, bool to_rows)
{
	(void)o;
	(void)A;
	(void)B;
	(void)b;
	(void)to_rows;
	return cpu_no_rows();
}

/* Fill the n x b block with numbers uniform in [-1, 1): element i is a hash of (seed, i)
 * (splitmix64), so the block is generated in parallel, on the device when the GPU runs, and
 * the CPU and GPU paths start from the same vectors (kernels/eig_sparse.cu computes the
 * same hash). A Gaussian start (log/cos per number) cost ~90 ms on the host for 100k x 16. */
static inline double hash_uniform(uint64_t key, uint64_t i)
{
	uint64_t z = key + (i + 1) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* splitmix64's finalizer of seed + G: a bijection of 64 bits whose outputs for consecutive
 * seeds share no linear structure. */
static uint64_t mix_seed(uint64_t seed)
{
	uint64_t z = seed + 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

struct rnd_ctx {
	double *X;
	uint64_t key, first;  /* X[i] is element first + i of the whole block */
};
static void rnd_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct rnd_ctx *c = p;
	(void)part;
	for (int64_t i = lo; i < hi; i++)
		c->X[i] = hash_uniform(c->key, c->first + (uint64_t)i);
}

static gwb_status cpu_random(double *X, size_t cnt, uint64_t key)
{
	struct rnd_ctx c = {X, key, 0};
	gwb_parallel_for((int64_t)cnt, 1 << 16, rnd_part, &c);
	return GWB_OK;
}

/* Householder QR of the m x b column-major X (m >= b): X <- Q, R (b x b). */
static gwb_status lapack_qr(sp_op *o, int m, double *X, int b, double *R)
{
	gwb_status st = GWB_OK;
	int lwork = -1, info = 0;
	double q1 = 0, q2 = 0, *tau = malloc((size_t)b * sizeof(double)), *work = NULL;
	if (!tau)
		return gwb_error(GWB_ENOMEM, "%s: out of memory", sp_fn(o));
	/* tall and skinny: below a few million entries the work per OpenBLAS thread is a few
	 * microseconds, less than waking them (as for the small eigenproblems, eig_block.c) */
	int old = gwb_blas_threads_push((double)m * b < 4e6 ? 1 : 0);
	dgeqrf_(&m, &b, X, &m, tau, &q1, &lwork, &info);
	dorgqr_(&m, &b, &b, X, &m, tau, &q2, &lwork, &info);
	lwork = (int)(q1 > q2 ? q1 : q2) + 1;
	work = malloc((size_t)lwork * sizeof(double));
	if (!work) {
		free(tau);
		gwb_blas_threads_pop(old);
		return gwb_error(GWB_ENOMEM, "eig.svd: out of memory");
	}
	dgeqrf_(&m, &b, X, &m, tau, work, &lwork, &info);
	if (!info) {
		for (int j = 0; j < b; j++)
			for (int i = 0; i < b; i++)
				R[i + (size_t)j * b] = i <= j ? X[i + (size_t)j * m] : 0.0;
		dorgqr_(&m, &b, &b, X, &m, tau, work, &lwork, &info);
	}
	free(tau);
	free(work);
	gwb_blas_threads_pop(old);
	if (info)
		st = gwb_error(GWB_EINVAL, "eig.svd: LAPACK QR failed (info %d)", info);
	return st;
}

/* dist: the QR of a block whose rows are dealt to the ranks. TSQR (Demmel et al.): each rank
 * factors its rows, X_r = Q_r R_r; the ranks' R_r (b x b each) are gathered on every rank and
 * the stacked (size b) x b matrix factored again, redundantly, [R_0; ...] = Q2 R; X_r <-
 * Q_r Q2_r, Q2_r rank r's b rows of Q2. Householder throughout: as stable as one QR. A rank
 * with fewer than b rows cannot factor alone: then the block is gathered whole and every rank
 * factors it and keeps its rows. */
static gwb_status dist_qr(sp_op *o, double *X, int b, double *R)
{
	int size = gwb_mpi_size(), rank = gwb_mpi_rank();
	int64_t fewest = INT64_MAX;
	gwb_status st;
	for (int r = 0; r < size; r++)
		if (o->starts[r + 1] - o->starts[r] < fewest)
			fewest = o->starts[r + 1] - o->starts[r];
	if (fewest < b || o->N > INT32_MAX) {
		double *full = malloc((size_t)o->N * b * sizeof(double) + 8);
		if (!full)
			return gwb_error(GWB_ENOMEM, "%s: out of memory", sp_fn(o));
		st = sp_gather_block(o, X, b, full);
		if (!st)
			st = lapack_qr(o, (int)o->N, full, b, R);
		for (int j = 0; !st && j < b; j++)
			memcpy(X + (size_t)j * o->n, full + (size_t)j * o->N + o->off,
			       (size_t)o->n * sizeof(double));
		free(full);
		return st;
	}
	size_t bb = (size_t)b * b;
	double *Rl = malloc(bb * sizeof(double)), *S = NULL, *Q = malloc((size_t)o->n * b * sizeof(double));
	double *C = malloc(bb * sizeof(double));
	size_t *lens = calloc((size_t)size, sizeof(size_t));
	if (!Rl || !Q || !C || !lens) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory", sp_fn(o));
		goto out;
	}
	if ((st = lapack_qr(o, (int)o->n, X, b, Rl)))
		goto out;
	if ((st = gwb_mpi_gather(Rl, bb * sizeof(double), 0, true, (void **)&S, lens)))
		goto out;
	{
		/* S holds the R_r one after the other (b x b column-major each): the stacked
		 * (size b) x b matrix, column-major */
		int sb = size * b;
		double *T = malloc((size_t)sb * b * sizeof(double));
		if (!T) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory", sp_fn(o));
			goto out;
		}
		for (int r = 0; r < size; r++)
			for (int j = 0; j < b; j++)
				memcpy(T + (size_t)j * sb + (size_t)r * b, S + (size_t)r * bb + (size_t)j * b,
				       (size_t)b * sizeof(double));
		st = lapack_qr(o, sb, T, b, R);
		for (int j = 0; !st && j < b; j++)
			memcpy(C + (size_t)j * b, T + (size_t)j * sb + (size_t)rank * b,
			       (size_t)b * sizeof(double));
		free(T);
	}
	if (!st) {
		char tn = 'N';
		int in = (int)o->n;
		double one = 1.0, zero = 0.0;
		memcpy(Q, X, (size_t)o->n * b * sizeof(double));
		dgemm_(&tn, &tn, &in, &b, &b, &one, Q, &in, C, &b, &zero, X, &in, 1, 1);
	}
out:
	free(Rl);
	free(S);
	free(Q);
	free(C);
	free(lens);
	return st;
}

static gwb_status cpu_qr(sp_op *o, double *X, int b, double *R)
{
	if (o->dist)
		return dist_qr(o, X, b, R);
	return lapack_qr(o, (int)o->n, X, b, R);
}

static const gwb_sp_ops cpu_ops = {
	.name = "cpu",
	.qr_name = "LAPACK",
	.host = true,
	.keeps_filter = false,
	.attach = cpu_attach,
	.detach = cpu_detach,
	.sync = cpu_sync,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.put = cpu_put,
	.get = cpu_get,
	.copy = cpu_copy,
	.random = cpu_random,
	.spmm = cpu_spmm,
	.spmv_dot = cpu_spmv_dot,
	.gemm_tn = cpu_gemm_tn,
	.gemm_nn = cpu_gemm_nn,
	.axpby = cpu_axpby,
	.axpby_norm = cpu_axpby_norm,
	.rowscale = cpu_rowscale,
	.cheb_step = cpu_cheb_step,
	.spmm_rows = cpu_spmm_rows,
	.cheb_step_rows = cpu_cheb_step_rows,
	.transpose = cpu_transpose,
	.qr = cpu_qr,
};

gwb_status gwb_sp_ops_get(gwb_device d, const gwb_sp_ops **out)
{
	if (d == GWB_DEVICE_GPU)
		return gwb_sp_ops_gpu(out);
	*out = &cpu_ops;
	return GWB_OK;
}

/* ================================================================ the operations */

gwb_status sp_alloc(sp_op *o, size_t cnt, double **p)
{
	return o->ops->alloc(o, cnt, p);
}

void sp_free(sp_op *o, double *p)
{
	if (!p)
		return;
	o->ops->free(p);
}

gwb_status sp_put(sp_op *o, double *dst, const double *host, size_t cnt)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->put(dst, host, cnt);
	sp_prof_end(o, PH_XFER, t0);
	return st;
}

gwb_status sp_get(sp_op *o, double *host, const double *src, size_t cnt)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->get(host, src, cnt);
	sp_prof_end(o, PH_XFER, t0);
	return st;
}

gwb_status sp_copy(sp_op *o, double *dst, const double *src, size_t cnt)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->copy(dst, src, cnt);
	sp_prof_end(o, PH_VEC, t0);
	return st;
}

/* Y = s A X, b columns. */
gwb_status sp_spmm(sp_op *o, const double *X, double *Y, int b)
{
	double t0 = sp_prof_begin(o);
	o->spmv += b;
	gwb_status st = o->ops->spmm(o, X, Y, b);
	sp_prof_end(o, PH_SPMM, t0);
	return st;
}

/* y = s A x and *d = x^T y: one pass where the backend fuses them, else the product, then
 * the dot product (sp_gemm_tn) */
gwb_status sp_spmv_dot(sp_op *o, const double *x, double *y, double *d)
{
	if (!o->ops->spmv_dot) {
		gwb_status st = sp_spmm(o, x, y, 1);
		return st ? st : sp_gemm_tn(o, x, 1, y, 1, d);
	}
	double t0 = sp_prof_begin(o);
	o->spmv++;
	gwb_status st = o->ops->spmv_dot(o, x, y, d);
	sp_prof_end(o, PH_SPMM, t0);
	return st;
}

/* G = X^T Y (p x q, column-major, on the host) */
gwb_status sp_gemm_tn(sp_op *o, const double *X, int p, const double *Y, int q, double *G)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->gemm_tn(o, X, p, Y, q, G);
	sp_prof_end(o, PH_GRAM, t0);
	return st;
}

/* Y = X C + beta Y (X n x p, C p x q on the host, Y n x q) */
gwb_status sp_gemm_nn(sp_op *o, const double *X, int p, const double *C, int q, double beta,
		      double *Y)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->gemm_nn(o, X, p, C, q, beta, Y);
	sp_prof_end(o, PH_UPDATE, t0);
	return st;
}

/* z = a x + b y + c z (x, y may be NULL when a, b are 0) */
gwb_status sp_axpby(sp_op *o, size_t len, double a, const double *x, double b, const double *y,
		    double c, double *z)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->axpby(len, a, x, b, y, c, z);
	sp_prof_end(o, PH_VEC, t0);
	return st;
}

/* z = a x + b y + c z and *nrm = ||z||: one pass where the backend fuses them, else
 * sp_axpby, then sp_norm */
gwb_status sp_axpby_norm(sp_op *o, size_t len, double a, const double *x, double b,
			 const double *y, double c, double *z, double *nrm)
{
	if (!o->ops->axpby_norm) {
		gwb_status st = sp_axpby(o, len, a, x, b, y, c, z);
		return st ? st : sp_norm(o, z, nrm);
	}
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->axpby_norm(len, a, x, b, y, c, z, nrm);
	sp_prof_end(o, PH_VEC, t0);
	if (!st && o->dist) {
		double sq = *nrm * *nrm;
		st = sp_allsum(o, &sq, 1);
		*nrm = sqrt(sq);
	}
	return st;
}

gwb_status sp_allsum(sp_op *o, double *x, size_t cnt)
{
	if (!o->dist)
		return GWB_OK;
	double t0 = sp_prof_begin(o);
	gwb_status st = gwb_mpi_allreduce(x, cnt, GWB_MPI_SUM);
	if (o->prof)
		o->ph[PH_XFER] += gwb_now() - t0;
	return st;
}

gwb_status sp_gather_block(sp_op *o, const double *X, int b, double *full)
{
	if (!o->dist) {
		memcpy(full, X, (size_t)o->n * b * sizeof(double));
		return GWB_OK;
	}
	int size = gwb_mpi_size();
	double *all = NULL;
	gwb_status st = gwb_mpi_gather(X, (size_t)o->n * b * sizeof(double), 0, true,
				       (void **)&all, NULL);
	if (st)
		return st;
	size_t at = 0;
	for (int r = 0; r < size; r++) {
		int64_t nr = o->starts[r + 1] - o->starts[r];
		for (int j = 0; j < b; j++, at += (size_t)nr)
			memcpy(full + (size_t)j * o->N + o->starts[r], all + at,
			       (size_t)nr * sizeof(double));
	}
	free(all);
	return GWB_OK;
}

/* ||w|| (one column of n) */
gwb_status sp_norm(sp_op *o, const double *w, double *nrm)
{
	double g;
	gwb_status st = sp_gemm_tn(o, w, 1, w, 1, &g);
	*nrm = sqrt(fabs(g));
	return st;
}

/* Y = diag(d) X (b columns) */
gwb_status sp_rowscale(sp_op *o, const double *d, const double *X, double *Y, int b)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->rowscale(o, d, X, Y, b);
	sp_prof_end(o, PH_VEC, t0);
	return st;
}

/* the filter's row-major blocks: Y = s A X (X, Y n x b row-major) */
static gwb_status sp_spmm_rows(sp_op *o, const double *X, double *Y, int b)
{
	double t0 = sp_prof_begin(o);
	o->spmv += b;
	gwb_status st = o->ops->spmm_rows(o, X, Y, b);
	sp_prof_end(o, PH_SPMM, t0);
	return st;
}

/* Out = a sA X + b X + g Z on the filter's blocks (Z may be NULL when g is 0): one fused pass
 * where the backend has one for row-major blocks (o->cheb_fused), a product and an update
 * elsewhere. */
gwb_status sp_cheb_step(sp_op *o, bool rows, const double *X, const double *Z, double *Out,
			int m, double a, double b, double g)
{
	gwb_status st;
	if (rows && o->cheb_fused) {
		double t0 = sp_prof_begin(o);
		o->spmv += m;
		st = o->ops->cheb_step_rows(o, X, Z, Out, m, a * o->sign, b, g);
		sp_prof_end(o, PH_SPMM, t0);
		return st;
	}
	if (!rows && o->ops->cheb_step) {
		double t0 = sp_prof_begin(o);
		o->spmv += m;
		st = o->ops->cheb_step(o, X, Z, Out, m, a * o->sign, b, g);
		sp_prof_end(o, PH_SPMM, t0);
		return st;
	}
	if ((st = rows ? sp_spmm_rows(o, X, Out, m) : sp_spmm(o, X, Out, m)))
		return st;
	return sp_axpby(o, (size_t)o->n * m, b, X, g, Z, a, Out);
}

/* B (b x n column-major, i.e. n x b row-major) = A^T, or back (to_rows false: A is the
 * row-major block, B column-major n x b) */
gwb_status sp_transpose(sp_op *o, const double *A, double *B, int b, bool to_rows)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = o->ops->transpose(o, A, B, b, to_rows);
	sp_prof_end(o, PH_VEC, t0);
	return st;
}

/* Fill the n x b block with numbers uniform in [-1, 1) (the backend's random, the same
 * numbers on each). */
gwb_status sp_random_block(sp_op *o, double *X, int b, uint64_t seed)
{
	size_t cnt = (size_t)o->n * b;
	/* element i hashes key + (i + 1) G: with a key linear in the seed (seed G + c), seed s + 1
	 * gave seed s's numbers shifted by one place, and the callers' fresh blocks (seed + 7 +
	 * outer, ...) were shifted copies of the start; the finalizer makes nearby seeds
	 * unrelated. The key is mixed here on the host, so the GPU (handed the key) and the CPU
	 * still draw the same numbers. */
	uint64_t key = mix_seed(seed);
	double t0 = sp_prof_begin(o);
	if (o->dist) {
		/* this rank's rows of each column: the numbers one process draws there */
		for (int j = 0; j < b; j++) {
			struct rnd_ctx c = {X + (size_t)j * o->n, key, (uint64_t)j * o->N + o->off};
			gwb_parallel_for(o->n, 1 << 16, rnd_part, &c);
		}
		sp_prof_end(o, PH_VEC, t0);
		return GWB_OK;
	}
	gwb_status st = o->ops->random(X, cnt, key);
	sp_prof_end(o, PH_VEC, t0);
	return st;
}

/* Householder QR of the o->n x b block X (backend memory): X <- Q, R (host, b x b). */
gwb_status sp_qr(sp_op *o, double *X, int b, double *R)
{
	double t0 = sp_prof_begin(o);
	/* LAPACK and cuSOLVER take 32-bit sizes; b <= rows holds by construction (b <= min) */
	if (o->N > INT32_MAX || b > o->N)
		return gwb_error(GWB_EINVAL, "%s: the QR of a %lldx%d block needs fewer than 2^31 rows "
				 "and block <= rows (on the CPU and the GPU alike); use a smaller "
				 "block/k, or a matrix with fewer than 2^31 rows and columns", sp_fn(o),
				 (long long)o->N, b);
	gwb_status st = o->ops->qr(o, X, b, R);
	sp_prof_end(o, PH_SYEV, t0);
	return st;
}
