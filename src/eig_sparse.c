/* eig_sparse.c - sparse symmetric eigensolvers written once over block operations (ops_*),
 * which run on CPU threads or, through kernels/sparse.h, on the GPU (cuBLAS GEMMs for the
 * blocked orthogonalizations, our SpMV or cuSPARSE). Small projected problems (Rayleigh-
 * Ritz, Gram matrices) are solved on the host with LAPACK: they are at most a few hundred
 * square, where a device round trip costs more than the work.
 *
 * Every method targets the smallest eigenvalues of s*A with s = +1 ("smallest") or -1
 * ("largest"), so one code path serves both ends. */
#define _GNU_SOURCE
#include "eig_sparse.h"

#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "intr.h"
#include "lapack.h"
#include "switches.h"
#include "gpu.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/sparse.h"
#endif

/* LAPACK through the Fortran ABI (hidden string lengths last). */
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
		   double *w, double *work, const int *lwork, int *info, size_t, size_t);

static const char *const method_names[GWB_SPM_COUNT] = {
	"auto", "lanczos", "chebyshev", "lobpcg", "randomized", "rand+lanczos", "dense",
};

const char *gwb_sp_method_name(gwb_sp_method m)
{
	return (unsigned)m < GWB_SPM_COUNT ? method_names[m] : "?";
}

gwb_status gwb_sp_method_parse(const char *s, gwb_sp_method *out)
{
	for (int i = 0; s && i < GWB_SPM_COUNT; i++)
		if (!strcmp(s, method_names[i])) {
			*out = (gwb_sp_method)i;
			return GWB_OK;
		}
	if (s && (!strcmp(s, "cheb") || !strcmp(s, "chefsi")))
		return (*out = GWB_SPM_CHEBYSHEV), GWB_OK;
	if (s && (!strcmp(s, "rsvd") || !strcmp(s, "subspace")))
		return (*out = GWB_SPM_RANDOMIZED), GWB_OK;
	return gwb_error(GWB_EINVAL, "method must be \"auto\", \"lanczos\", \"chebyshev\", "
			 "\"lobpcg\", \"randomized\", \"rand+lanczos\" or \"dense\" (got \"%s\")",
			 s ? s : "(nil)");
}

void gwb_sp_opts_default(gwb_sp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->k = 6;
	o->which = GWB_SMALLEST;
	o->tol = 1e-10;
	o->method = GWB_SPM_AUTO;
	o->seed = 1;
	o->vectors = true;
	o->backend = GWB_BACKEND_AUTO;
}

/* ================================================================ block operations */

typedef struct ops {
	gwb_csr *A;
	int64_t n;
	double sign;          /* +1: smallest of A; -1: smallest of -A (largest of A) */
	bool gpu;
	int spmv_kind;        /* gwb_spmv_kind (GPU) */
	struct gwb_gpu_csr *g; /* device copy when gpu */
	long spmv;            /* matrix-vector products so far */
	bool rows;            /* GPU: filter blocks in row-major order (better gathers) */
	bool prof;            /* GWB_EIG_PROF: synchronize and time every operation */
	double ph[8];         /* seconds per phase (enum below) when prof */
	const char *fn;       /* the Lua function for messages: "eig.solve" (NULL) or "eig.svd" */
	double reorth_s;      /* Lanczos: seconds in CGS2 against the basis */
	long nreorth;         /* Lanczos: CGS2 calls */
} ops;

static const char *opfn(const ops *o)
{
	return o->fn ? o->fn : "eig.solve";
}

/* Phases of the per-operation profile (GWB_EIG_PROF=1 prints them to stderr): the GPU is
 * synchronized after each operation so its time lands in the phase that queued it. */
enum { PH_SPMM, PH_GRAM, PH_UPDATE, PH_VEC, PH_SYEV, PH_XFER, PH_SETUP, PH_COUNT };
static const char *const ph_names[PH_COUNT] = {"spmm", "gram X^T Y", "update X C", "vector ops",
	"small eig (host)", "host<->device", "setup (checks, upload)"};

static double prof_begin(const ops *o)
{
	return o->prof ? gwb_now() : 0;
}

static void prof_end(ops *o, int ph, double t0)
{
	if (!o->prof)
		return;
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		(void)gwb_gpu_sp_sync();
#endif
	o->ph[ph] += gwb_now() - t0;
}

static gwb_status op_alloc(ops *o, size_t cnt, double **p)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_malloc((void **)p, cnt * sizeof(double), "eig.sparse");
#endif
	*p = malloc(cnt * sizeof(double) + 8);
	if (!*p)
		return gwb_error(GWB_ENOMEM, "%s: cannot allocate %zu bytes of work space",
				 opfn(o), cnt * sizeof(double));
	return GWB_OK;
}

static void op_free(ops *o, double *p)
{
	if (!p)
		return;
#ifdef GWB_HAVE_CUDA
	if (o->gpu) {
		gwb_gpu_free(p);
		return;
	}
#endif
	(void)o;
	free(p);
}

static gwb_status op_put_raw(ops *o, double *dst, const double *host, size_t cnt)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_sp_put(dst, host, cnt);
#endif
	(void)o;
	memcpy(dst, host, cnt * sizeof(double));
	return GWB_OK;
}

static gwb_status op_put(ops *o, double *dst, const double *host, size_t cnt)
{
	double t0 = prof_begin(o);
	gwb_status st = op_put_raw(o, dst, host, cnt);
	prof_end(o, PH_XFER, t0);
	return st;
}

static gwb_status op_get_raw(ops *o, double *host, const double *src, size_t cnt)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_sp_get(host, src, cnt);
#endif
	(void)o;
	memcpy(host, src, cnt * sizeof(double));
	return GWB_OK;
}

static gwb_status op_get(ops *o, double *host, const double *src, size_t cnt)
{
	double t0 = prof_begin(o);
	gwb_status st = op_get_raw(o, host, src, cnt);
	prof_end(o, PH_XFER, t0);
	return st;
}

static gwb_status op_copy_raw(ops *o, double *dst, const double *src, size_t cnt)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_sp_copy(dst, src, cnt);
#endif
	(void)o;
	memmove(dst, src, cnt * sizeof(double));
	return GWB_OK;
}

static gwb_status op_copy(ops *o, double *dst, const double *src, size_t cnt)
{
	double t0 = prof_begin(o);
	gwb_status st = op_copy_raw(o, dst, src, cnt);
	prof_end(o, PH_VEC, t0);
	return st;
}

/* Y = s A X, b columns. */
static gwb_status op_spmm_raw(ops *o, const double *X, double *Y, int b)
{
	o->spmv += b;
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_spmm(o->g, X, Y, b, o->sign, o->spmv_kind);
#endif
	gwb_csr_spmm_scaled(o->A, o->sign, X, Y, b);
	return GWB_OK;
}

static gwb_status op_spmm(ops *o, const double *X, double *Y, int b)
{
	double t0 = prof_begin(o);
	gwb_status st = op_spmm_raw(o, X, Y, b);
	prof_end(o, PH_SPMM, t0);
	return st;
}

static gwb_status op_gemm_tn(ops *o, const double *X, int p, const double *Y, int q, double *G);

/* y = s A x and *d = x^T y: on the CPU one pass (the dot product is taken as y is written);
 * on the GPU the product, then the dot product (op_gemm_tn) */
static gwb_status op_spmv_dot(ops *o, const double *x, double *y, double *d)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu) {
		gwb_status st = op_spmm(o, x, y, 1);
		return st ? st : op_gemm_tn(o, x, 1, y, 1, d);
	}
#endif
	double t0 = prof_begin(o);
	o->spmv++;
	*d = gwb_csr_spmv_dot(o->A, o->sign, x, y);
	prof_end(o, PH_SPMM, t0);
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

static gwb_status op_gemm_tn_raw(ops *o, const double *X, int p, const double *Y, int q, double *G)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_gemm_tn(o->g, o->n, X, p, Y, q, G);
#endif
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
		return gwb_error(GWB_ENOMEM, "%s: out of memory", opfn(o));
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

static gwb_status op_gemm_tn(ops *o, const double *X, int p, const double *Y, int q, double *G)
{
	double t0 = prof_begin(o);
	gwb_status st = op_gemm_tn_raw(o, X, p, Y, q, G);
	prof_end(o, PH_GRAM, t0);
	return st;
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

static gwb_status op_gemm_nn_raw(ops *o, const double *X, int p, const double *C, int q, double beta,
			     double *Y)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_gemm_nn(o->g, o->n, X, p, C, q, beta, Y);
#endif
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

static gwb_status op_gemm_nn(ops *o, const double *X, int p, const double *C, int q, double beta,
			     double *Y)
{
	double t0 = prof_begin(o);
	gwb_status st = op_gemm_nn_raw(o, X, p, C, q, beta, Y);
	prof_end(o, PH_UPDATE, t0);
	return st;
}

/* ---- z = a x + b y + c z (x, y may be NULL when a, b are 0) */

struct axpby_ctx {
	double a, b, c;
	const double *x, *y;
	double *z;
	double *sq;   /* op_axpby_norm: per part, the sum of z_i^2 and its compensation */
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

static gwb_status op_axpby_raw(ops *o, size_t len, double a, const double *x, double b,
			   const double *y, double c, double *z)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_axpby3(len, a, x, b, y, c, z);
#endif
	(void)o;
	struct axpby_ctx k = {a, b, c, x, y, z, NULL};
	gwb_parallel_for((int64_t)len, 1 << 15, axpby_part, &k);
	return GWB_OK;
}

static gwb_status op_axpby(ops *o, size_t len, double a, const double *x, double b,
			   const double *y, double c, double *z)
{
	double t0 = prof_begin(o);
	gwb_status st = op_axpby_raw(o, len, a, x, b, y, c, z);
	prof_end(o, PH_VEC, t0);
	return st;
}

static gwb_status vnorm(ops *o, const double *w, double *nrm);

/* z = a x + b y + c z and *nrm = ||z||: on the CPU one pass (compensated sum of squares, as
 * vnorm's); on the GPU op_axpby then vnorm */
static gwb_status op_axpby_norm(ops *o, size_t len, double a, const double *x, double b,
				const double *y, double c, double *z, double *nrm)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu) {
		gwb_status st = op_axpby(o, len, a, x, b, y, c, z);
		return st ? st : vnorm(o, z, nrm);
	}
#endif
	double t0 = prof_begin(o);
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
	prof_end(o, PH_VEC, t0);
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

static gwb_status op_rowscale_raw(ops *o, const double *d, const double *X, double *Y, int b)
{
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		return gwb_gpu_rowscale(o->n, b, d, X, Y);
#endif
	struct rs_ctx c = {d, X, Y, o->n, b};
	gwb_parallel_for(o->n, 1 << 15, rs_part, &c);
	return GWB_OK;
}

static gwb_status op_rowscale(ops *o, const double *d, const double *X, double *Y, int b)
{
	double t0 = prof_begin(o);
	gwb_status st = op_rowscale_raw(o, d, X, Y, b);
	prof_end(o, PH_VEC, t0);
	return st;
}

/* ---- the GPU filter's row-major blocks: Y = s A X (X, Y n x b row-major) and transposes
 * between the layouts (the CPU keeps column-major everywhere) */

static gwb_status op_spmm_rows(ops *o, const double *X, double *Y, int b)
{
	gwb_status st = GWB_OK;
	double t0 = prof_begin(o);
	o->spmv += b;
#ifdef GWB_HAVE_CUDA
	st = gwb_gpu_spmm_rows(o->g, X, Y, b, o->sign, o->spmv_kind);
#else
	(void)X;
	(void)Y;
	st = gwb_error(GWB_EINVAL, "eig.solve: row-major blocks need the GPU");
#endif
	prof_end(o, PH_SPMM, t0);
	return st;
}

/* Out = a sA X + b X + g Z on the filter's blocks (Z may be NULL when g is 0): one fused pass
 * of our row-major kernel on the GPU, a product and an update elsewhere. */
static gwb_status op_cheb_step(ops *o, bool rows, const double *X, const double *Z, double *Out,
			       int m, double a, double b, double g)
{
	gwb_status st;
#ifdef GWB_HAVE_CUDA
	if (rows && o->spmv_kind != GWB_SPMV_CUSPARSE) {
		double t0 = prof_begin(o);
		o->spmv += m;
		st = gwb_gpu_cheb_step_rows(o->g, X, Z, Out, m, a * o->sign, b, g);
		prof_end(o, PH_SPMM, t0);
		return st;
	}
#endif
	if ((st = rows ? op_spmm_rows(o, X, Out, m) : op_spmm(o, X, Out, m)))
		return st;
	return op_axpby(o, (size_t)o->n * m, b, X, g, Z, a, Out);
}

/* B (b x n column-major, i.e. n x b row-major) = A^T, or back (to_rows false: A is the
 * row-major block, B column-major n x b) */
static gwb_status op_transpose(ops *o, const double *A, double *B, int b, bool to_rows)
{
	gwb_status st;
	double t0 = prof_begin(o);
#ifdef GWB_HAVE_CUDA
	st = to_rows ? gwb_gpu_sp_transpose(o->g, o->n, b, A, B)
		     : gwb_gpu_sp_transpose(o->g, b, (int)o->n, A, B);
#else
	(void)A;
	(void)B;
	(void)b;
	(void)to_rows;
	st = gwb_error(GWB_EINVAL, "eig.solve: row-major blocks need the GPU");
#endif
	prof_end(o, PH_VEC, t0);
	return st;
}

/* ================================================================ small dense helpers */

/* Symmetric eigen decomposition of the m x m column-major G (overwritten by the vectors),
 * values ascending into w. */
/* OpenBLAS spins its threads on problems of a few dozen rows: the small projected problems
 * run on one BLAS thread (blas.h's push/pop, restored after). */
static gwb_status small_syev(double *G, int m, double *w)
{
	int info = 0, lwork = -1, old = gwb_blas_threads_push(m < 400 ? 1 : 0);
	double q;
	dsyev_("V", "U", &m, G, &m, w, &q, &lwork, &info, 1, 1);
	lwork = (int)q + 1;
	double *work = malloc((size_t)lwork * sizeof(double));
	if (!work) {
		gwb_blas_threads_pop(old);
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	}
	dsyev_("V", "U", &m, G, &m, w, work, &lwork, &info, 1, 1);
	free(work);
	gwb_blas_threads_pop(old);
	if (info)
		return gwb_error(GWB_ENOCONV, "eig.solve: LAPACK dsyev failed on the %dx%d projected "
				 "problem (info %d)", m, m, info);
	return GWB_OK;
}

static gwb_status o_syev(ops *o, double *G, int m, double *w)
{
	double t0 = prof_begin(o);
	gwb_status st = small_syev(G, m, w);
	if (o->prof)
		o->ph[PH_SYEV] += gwb_now() - t0;
	return st;
}

static void symmetrize(double *G, int m)
{
	for (int j = 0; j < m; j++)
		for (int i = j + 1; i < m; i++) {
			double v = 0.5 * (G[i + j * m] + G[j + i * m]);
			G[i + j * m] = G[j + i * m] = v;
		}
}

/* Orthonormalize the n x m block S in place (SVQB twice, Stathopoulos & Wu): the columns
 * left span the same space; columns that were (numerically) dependent are dropped. T is an
 * n x m scratch block. Returns the rank in *r. */
static gwb_status orthonormalize(ops *o, double *S, int m, double *T, int *r)
{
	double *G = NULL, *w = NULL, *C = NULL;
	gwb_status st = GWB_OK;
	int rank = m;

	G = malloc((size_t)m * m * sizeof(double));
	w = malloc((size_t)m * sizeof(double));
	C = malloc((size_t)m * m * sizeof(double));
	if (!G || !w || !C) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	for (int pass = 0; pass < 2 && rank > 0; pass++) {
		if ((st = op_gemm_tn(o, S, rank, S, rank, G)))
			goto out;
		symmetrize(G, rank);
		double dmax = 0;
		for (int i = 0; i < rank; i++)
			if (G[i + i * rank] > dmax)
				dmax = G[i + i * rank];
		if (!(dmax > 0)) {
			rank = 0;
			break;
		}
		/* D^-1/2 G D^-1/2, then its eigenvectors scaled by lambda^-1/2 */
		double *dd = malloc((size_t)rank * sizeof(double));
		if (!dd) {
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int i = 0; i < rank; i++)
			dd[i] = G[i + i * rank] > dmax * 1e-300 ? 1.0 / sqrt(G[i + i * rank]) : 0.0;
		for (int j = 0; j < rank; j++)
			for (int i = 0; i < rank; i++)
				G[i + j * rank] *= dd[i] * dd[j];
		if ((st = o_syev(o, G, rank, w))) {
			free(dd);
			goto out;
		}
		double lmax = w[rank - 1];
		int keep = 0;
		/* keep eigen directions above a relative threshold (largest first) */
		for (int j = rank - 1; j >= 0; j--) {
			if (!(w[j] > lmax * 1e-14 * rank))
				break;
			double s = 1.0 / sqrt(w[j]);
			for (int i = 0; i < rank; i++)
				C[i + keep * rank] = dd[i] * G[i + j * rank] * s;
			keep++;
		}
		free(dd);
		if ((st = op_gemm_nn(o, S, rank, C, keep, 0.0, T)))
			goto out;
		if ((st = op_copy(o, S, T, (size_t)o->n * keep)))
			goto out;
		rank = keep;
	}
	*r = rank;
out:
	free(G);
	free(w);
	free(C);
	return st;
}

/* S -= Q (Q^T S), twice (block classical Gram-Schmidt with reorthogonalization). */
static gwb_status orth_against(ops *o, const double *Q, int nq, double *S, int m)
{
	gwb_status st = GWB_OK;
	if (nq <= 0 || m <= 0)
		return GWB_OK;
	double *H = malloc((size_t)nq * m * sizeof(double));
	if (!H)
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	for (int pass = 0; pass < 2 && !st; pass++) {
		st = op_gemm_tn(o, Q, nq, S, m, H);
		for (int t = 0; !st && t < nq * m; t++)
			H[t] = -H[t];
		if (!st)
			st = op_gemm_nn(o, Q, nq, H, m, 1.0, S);
	}
	free(H);
	return st;
}

/* S -= Q (Q^T S) once: for components already tiny (a Krylov vector against converged
 * eigenvectors, which A maps into their own span up to their residual) one pass leaves
 * eps of them. */
static gwb_status orth_once(ops *o, const double *Q, int nq, double *w, double *tmp)
{
	gwb_status st = op_gemm_tn(o, Q, nq, w, 1, tmp);
	for (int t = 0; !st && t < nq; t++)
		tmp[t] = -tmp[t];
	return st ? st : op_gemm_nn(o, Q, nq, tmp, 1, 1.0, w);
}

/* ================================================================ state shared by methods */

typedef struct solve {
	ops *o;
	const gwb_sp_opts *opt;
	int k;                /* wanted */
	double normA;         /* estimate of ||A||_2 */
	double lo, hi;        /* bounds of the spectrum of s*A: lo <= lambda_min, hi >= lambda_max */
	gwb_eigen *e;         /* history goes here */
	int iter;             /* outer iterations so far (all phases) */
	int maxiter;
	double *X;            /* result: n x k Ritz vectors (backend memory) */
	double *theta;        /* k Ritz values of s*A (host) */
	double *res;          /* k residual norms ||s A x - theta x|| (host) */
	bool converged;
	char note[256];
	const double *defl;   /* Lanczos: keep every vector orthogonal to these (backend memory) */
	int ndefl;
	double stop_above;    /* Lanczos: stop once a leading converged value reaches this
			       * (the deflated check); INFINITY: converge k */
	int found;            /* Lanczos: leading pairs in X/theta/res when it returned */
	double hist_res;      /* the deflated check: the residual its history entries show */
	double gap;           /* bounds(): (theta_2 - theta_1) / (theta_max - theta_2) of its run */
	double mass;          /* bounds(): n x the Gauss weight of theta_1 (eigenvalues near it) */
} solve;

static gwb_status check_intr(const char *fn)
{
	if (gwb_intr_pending())
		return gwb_error(GWB_EINTR, "%s: interrupted", fn);
	return GWB_OK;
}

static gwb_status record(solve *S, int conv, double maxres)
{
	if (S->stop_above < INFINITY) {
		/* the deflated check: the solve's k pairs stay converged while it runs */
		conv = S->k;
		maxres = S->hist_res;
	}
	S->iter++;
	gwb_progress_update(S->iter, "residual", maxres / (S->normA > 0 ? S->normA : 1));
	return gwb_eigen_history_push(S->e, S->iter, conv, maxres / (S->normA > 0 ? S->normA : 1));
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
	uint64_t key;
};
static void rnd_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct rnd_ctx *c = p;
	(void)part;
	for (int64_t i = lo; i < hi; i++)
		c->X[i] = hash_uniform(c->key, (uint64_t)i);
}

static gwb_status random_block(ops *o, double *X, int b, uint64_t seed)
{
	size_t cnt = (size_t)o->n * b;
	/* element i hashes key + (i + 1) G: with a key linear in the seed (seed G + c), seed s + 1
	 * gave seed s's numbers shifted by one place, and the callers' fresh blocks (seed + 7 +
	 * outer, ...) were shifted copies of the start; the finalizer makes nearby seeds
	 * unrelated. The key is mixed here on the host, so the GPU (handed the key) and the CPU
	 * still draw the same numbers. */
	uint64_t key = mix_seed(seed);
	double t0 = prof_begin(o);
	gwb_status st = GWB_OK;
#ifdef GWB_HAVE_CUDA
	if (o->gpu)
		st = gwb_gpu_sp_random(X, cnt, key);
	else
#endif
	{
		struct rnd_ctx c = {X, key};
		gwb_parallel_for((int64_t)cnt, 1 << 16, rnd_part, &c);
	}
	prof_end(o, PH_VEC, t0);
	return st;
}

/* res[i] = ||AX_i - theta_i X_i|| for the first nres columns (T: n x nres scratch); with
 * gram, also ||X^T X - I||_max into *orth. */
static gwb_status residual_norms(ops *o, const double *X, const double *AX, int nres,
				 const double *theta, double *T, double *res, double *orth)
{
	gwb_status st;
	double *D = calloc((size_t)nres * nres, sizeof(double));
	if (!D)
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	if ((st = op_copy(o, T, AX, (size_t)o->n * nres)))
		goto out;
	for (int i = 0; i < nres; i++)
		D[i + i * nres] = -theta[i];
	if ((st = op_gemm_nn(o, X, nres, D, nres, 1.0, T)))
		goto out;
	if ((st = op_gemm_tn(o, T, nres, T, nres, D)))
		goto out;
	for (int i = 0; i < nres; i++)
		res[i] = sqrt(fabs(D[i + i * nres]));
	if (orth) {
		if ((st = op_gemm_tn(o, X, nres, X, nres, D)))
			goto out;
		double mx = 0;
		for (int j = 0; j < nres; j++)
			for (int i = 0; i < nres; i++) {
				double v = fabs(D[i + j * nres] - (i == j));
				if (v > mx)
					mx = v;
			}
		*orth = mx;
	}
out:
	free(D);
	return st;
}

/* Rayleigh-Ritz on the orthonormal n x m block Q with AQ = s A Q: values ascending into
 * theta, Q <- Q C, AQ <- AQ C (T scratch n x m); residual norms of the first nres pairs. */
static gwb_status rayleigh_ritz(ops *o, double *Q, double *AQ, int m, double *T, double *theta,
				double *res, int nres, double *Cout)
{
	gwb_status st;
	double *G = malloc((size_t)m * m * sizeof(double));
	double *R = malloc((size_t)m * m * sizeof(double));
	if (!G || !R) {
		free(G);
		free(R);
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	}
	if ((st = op_gemm_tn(o, Q, m, AQ, m, G)))
		goto out;
	symmetrize(G, m);
	if ((st = o_syev(o, G, m, theta)))
		goto out;
	if (Cout)
		memcpy(Cout, G, (size_t)m * m * sizeof(double));
	if ((st = op_gemm_nn(o, Q, m, G, m, 0.0, T)) || (st = op_copy(o, Q, T, (size_t)o->n * m)))
		goto out;
	if ((st = op_gemm_nn(o, AQ, m, G, m, 0.0, T)) || (st = op_copy(o, AQ, T, (size_t)o->n * m)))
		goto out;
	if (nres > 0)
		st = residual_norms(o, Q, AQ, nres, theta, T, res, NULL);
out:
	free(G);
	free(R);
	return st;
}

/* ================================================================ spectrum bounds */

/* A short Lanczos run (full reorthogonalization) for bounds lo <= lambda_min(sA) and
 * hi >= lambda_max(sA), and ||A||_2. */
static gwb_status bounds(solve *S)
{
	ops *o = S->o;
	int m = o->n < 40 ? (int)o->n : 40;
	double *V = NULL, *w = NULL, *H = NULL, *h = NULL, *th = NULL;
	gwb_status st;
	int j, steps = 0;
	double beta = 0;

	if ((st = op_alloc(o, (size_t)o->n * (m + 1), &V)))
		return st;
	H = calloc((size_t)m * m, sizeof(double));
	h = malloc((size_t)(m + 1) * sizeof(double));
	th = malloc((size_t)m * sizeof(double));
	if (!H || !h || !th) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	if ((st = random_block(o, V, 1, S->opt->seed ^ 0xB0B0)))
		goto out;
	if ((st = op_gemm_tn(o, V, 1, V, 1, h)))
		goto out;
	if ((st = op_axpby(o, (size_t)o->n, 0, NULL, 0, NULL, 1.0 / sqrt(h[0]), V)))
		goto out;
	for (j = 0; j < m; j++) {
		w = V + (size_t)(j + 1) * o->n;
		if ((st = op_spmm(o, V + (size_t)j * o->n, w, 1)))
			goto out;
		double hh[64];
		for (int i = 0; i <= j; i++)
			hh[i] = 0;
		for (int pass = 0; pass < 2; pass++) {
			if ((st = op_gemm_tn(o, V, j + 1, w, 1, h)))
				goto out;
			for (int i = 0; i <= j; i++) {
				hh[i] += h[i];
				h[i] = -h[i];
			}
			if ((st = op_gemm_nn(o, V, j + 1, h, 1, 1.0, w)))
				goto out;
		}
		for (int i = 0; i <= j; i++)
			H[i + j * m] = H[j + i * m] = hh[i];
		if ((st = op_gemm_tn(o, w, 1, w, 1, h)))
			goto out;
		beta = sqrt(h[0]);
		steps = j + 1;
		if (j + 1 < m) {
			if (!(beta > 1e-12 * (fabs(H[j + j * m]) + 1e-300)))
				break;
			H[j + 1 + j * m] = H[j + (j + 1) * m] = 0; /* filled by the next h */
			if ((st = op_axpby(o, (size_t)o->n, 0, NULL, 0, NULL, 1.0 / beta, w)))
				goto out;
		}
	}
	{
		int ms = steps;
		double *G = malloc((size_t)ms * ms * sizeof(double));
		if (!G) {
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int c = 0; c < ms; c++)
			for (int r = 0; r < ms; r++)
				G[r + c * ms] = H[r + c * m];
		st = o_syev(o, G, ms, th);
		if (!st) {
			/* residual of the extreme Ritz pairs: beta * |last component| */
			double r0 = fabs(beta * G[ms - 1]);
			double r1 = fabs(beta * G[ms - 1 + (size_t)(ms - 1) * ms]);
			double spread = th[ms - 1] - th[0];
			S->lo = th[0] - r0 - 1e-3 * spread;
			S->hi = th[ms - 1] + r1 + 1e-2 * spread + 1e-300;
			if (steps == o->n) {  /* exact */
				S->lo = th[0];
				S->hi = th[ms - 1];
			}
			S->normA = fmax(fabs(S->lo), fabs(S->hi));
			/* what the auto rule reads: the gap ratio of the wanted end (the two
			 * extreme Ritz values against the rest of the spread), and how many
			 * eigenvalues the extreme Ritz value stands for (n times its Gauss
			 * quadrature weight: the start vector's squared first component) */
			S->gap = ms > 2 ? (th[1] - th[0]) / (th[ms - 1] - th[1] + 1e-300) : 1;
			S->mass = (double)o->n * G[0] * G[0];
		}
		free(G);
	}
out:
	op_free(o, V);
	free(H);
	free(h);
	free(th);
	return st;
}

/* ================================================================ block methods */

/* Chebyshev filter (Zhou & Saad, scaled): Y <- p_d(sA) Y, damping [a, b], with lambda0 the
 * lowest end. W and Z are n x m scratch. */
static gwb_status cheb_filter(ops *o, double *Y, int m, int d, double a, double b,
			      double lam0, double *W, double *Z)
{
	size_t len = (size_t)o->n * m;
	double e = (b - a) / 2, c = (b + a) / 2;
	double sigma = e / (lam0 - c), sigma1 = sigma, tau = 2 / sigma1;
	gwb_status st;
	double *X = Y, *Yc = W, *Ynew = Z;
	/* GPU: the recurrence runs on row-major copies (one transpose in, one out), where a
	 * product gathers b contiguous doubles per nonzero instead of b scattered ones */
	bool rows = o->rows && m > 1 && o->n < INT32_MAX;

	if (rows) {
		if ((st = op_transpose(o, Y, W, m, true)))
			return st;
		X = W;
		Yc = Z;
		Ynew = Y;
	}
	/* Yc = (A X - c X) * sigma1 / e */
	if ((st = op_cheb_step(o, rows, X, NULL, Yc, m, sigma1 / e, -c * sigma1 / e, 0)))
		return st;
	for (int i = 2; i <= d; i++) {
		double sigma2 = 1 / (tau - sigma);
		/* Ynew = 2 sigma2/e (A Yc - c Yc) - sigma sigma2 X */
		if ((st = op_cheb_step(o, rows, Yc, X, Ynew, m, 2 * sigma2 / e, -2 * sigma2 * c / e,
				       -sigma * sigma2)))
			return st;
		double *t = X;
		X = Yc;
		Yc = Ynew;
		Ynew = t;
		sigma = sigma2;
		if (i % 8 == 0 && (st = check_intr(opfn(o))))
			return st;
	}
	if (rows) {
		if (Yc != Y)
			return op_transpose(o, Yc, Y, m, false);
		/* the result sits in Y's buffer: out through X's (free now) */
		double *F = X;
		if ((st = op_transpose(o, Yc, F, m, false)))
			return st;
		return op_copy(o, Y, F, len);
	}
	if (Yc != Y)
		return op_copy(o, Y, Yc, len);
	return GWB_OK;
}

/* Subspace iteration with a polynomial filter: Chebyshev (cheb) or the shifted power
 * (hi I - sA), the randomized subspace iteration. */
static gwb_status subspace(solve *S, bool cheb, int max_outer)
{
	ops *o = S->o;
	int k = S->k, m = S->opt->block;
	size_t n = (size_t)o->n;
	double *Y = NULL, *AY = NULL, *W = NULL, *Z = NULL, *theta = NULL, *res = NULL;
	gwb_status st;
	int deg = S->opt->degree > 0 ? S->opt->degree : 16;

	if (m <= 0)  /* k + max(6, k/2): fewest products A x on Laplacians and randsym */
		m = k + (k / 2 > 6 ? k / 2 : 6);
	if (m > o->n)
		m = (int)o->n;
	if (m < k)
		m = k;
	if ((st = op_alloc(o, n * m, &Y)) || (st = op_alloc(o, n * m, &AY)) ||
	    (st = op_alloc(o, n * m, &W)) || (st = op_alloc(o, n * m, &Z)))
		goto out;
	theta = malloc((size_t)m * sizeof(double));
	res = malloc((size_t)m * sizeof(double));
	if (!theta || !res) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	if ((st = random_block(o, Y, m, S->opt->seed)))
		goto out;
	int r;
	if ((st = orthonormalize(o, Y, m, W, &r)))
		goto out;
	double cut = S->lo + 0.5 * (S->hi - S->lo);  /* first filter: damp the upper half */
	/* Hard locking: the leading converged pairs (columns 0..nl-1 of Y, values and residuals
	 * in theta/res) are no longer filtered; the active columns nl..r-1 are kept orthogonal
	 * to them and get their own Rayleigh-Ritz. */
	int nl = 0, outer;
	for (outer = 0; outer < max_outer; outer++) {
		if ((st = check_intr("eig.solve")))
			goto out;
		double *Ya = Y + n * nl, *AYa = AY + n * nl;
		int ra = r - nl;
		if (cheb) {
			if ((st = cheb_filter(o, Ya, ra, deg, cut, S->hi, S->lo, W, Z)))
				goto out;
		} else {
			/* Y <- (hi I - sA) Y, deg times, normalizing through the orthonormalization */
			for (int t = 0; t < deg; t++) {
				if ((st = op_spmm(o, Ya, W, ra)))
					goto out;
				if ((st = op_axpby(o, n * ra, -1.0, W, 0, NULL, S->hi, Ya)))
					goto out;
				if (t % 4 == 3 && t + 1 < deg &&
				    (st = orthonormalize(o, Ya, ra, W, &ra)))
					goto out;
			}
		}
		int r2;
		if ((st = orth_against(o, Y, nl, Ya, ra)) || (st = orthonormalize(o, Ya, ra, W, &r2)))
			goto out;
		if (r2 < r - nl) {
			/* refill the dropped directions with random vectors */
			int miss = r - nl - r2;
			if ((st = random_block(o, Ya + n * r2, miss, S->opt->seed + 7 + outer)))
				goto out;
			if ((st = orth_against(o, Y, nl + r2, Ya + n * r2, miss)) ||
			    (st = orthonormalize(o, Ya + n * r2, miss, W, &miss)))
				goto out;
			r2 += miss;
		}
		ra = r2;
		r = nl + ra;
		if (r < k) {
			st = gwb_error(GWB_ENOCONV, "eig.solve: the subspace collapsed to rank %d < k = %d",
				       r, k);
			goto out;
		}
		if ((st = op_spmm(o, Ya, AYa, ra)))
			goto out;
		int want = k - nl < ra ? k - nl : ra;
		if ((st = rayleigh_ritz(o, Ya, AYa, ra, W, theta + nl, res + nl, want, NULL)))
			goto out;
		int conv = nl;
		double mx = 0;
		for (int i = 0; i < k; i++) {
			if (i >= nl && res[i] <= S->opt->tol * S->normA && conv == i)
				conv++;
			if (res[i] > mx)
				mx = res[i];
		}
		if ((st = record(S, conv, mx)))
			goto out;
		if (conv == k) {
			S->converged = true;
			outer++;
			break;
		}
		nl = conv;
		/* next damping interval starts at the largest Ritz value of the block */
		cut = theta[r - 1];
		if (!(cut > theta[k - 1]) || cut >= S->hi)
			cut = theta[k - 1] + 0.5 * (S->hi - theta[k - 1]);
		if (!cheb)
			continue;
		/* the filter degree grows while progress per iteration is poor (a degree chosen
		 * from Chebyshev theory per pair overshot here: more products in all; so did one
		 * aimed at tol from the measured rate per product: lap150 12704 products against
		 * 8776, the rate improves as the cut moves up; aimed halfway and capped at 1.5x a
		 * step it saved 5-8% on lap60/lap150 but cost 4% on lap317 (18022 against 17368)
		 * and 6% on randsym 20k, so the fixed 1.25x stays) */
		if (deg < 200)
			deg = deg + deg / 4;
	}
	/* locked and active pairs together, ascending (a locked value may exceed an active one
	 * by rounding): sort the first k by value, moving vectors on the backend */
	{
		int kk = k, *idx = malloc((size_t)k * sizeof(int));
		double *P = idx ? calloc((size_t)kk * kk, sizeof(double)) : NULL;
		if (!P) {
			free(idx);
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int i = 0; i < kk; i++)
			idx[i] = i;
		for (int i = 1; i < kk; i++)
			for (int j = i; j > 0 && theta[idx[j]] < theta[idx[j - 1]]; j--) {
				int t = idx[j];
				idx[j] = idx[j - 1];
				idx[j - 1] = t;
			}
		for (int i = 0; i < kk; i++) {
			P[idx[i] + (size_t)i * kk] = 1.0;
			S->theta[i] = theta[idx[i]];
			S->res[i] = res[idx[i]];
		}
		st = op_gemm_nn(o, Y, kk, P, kk, 0.0, S->X);
		free(P);
		free(idx);
		if (st)
			goto out;
	}
	snprintf(S->note, sizeof(S->note), "%s subspace iteration, block %d, %s %d, %d iterations",
		 cheb ? "Chebyshev-filtered" : "randomized", m, cheb ? "final degree" : "power steps",
		 deg, outer);
out:
	op_free(o, Y);
	op_free(o, AY);
	op_free(o, W);
	op_free(o, Z);
	free(theta);
	free(res);
	return st;
}

/* LOBPCG (Knyazev 2001) with a Jacobi preconditioner; the basis [X W P] is orthonormalized
 * every iteration (SVQB), the robust form of Hetmaniuk & Lehoucq. */
static gwb_status lobpcg(solve *S)
{
	ops *o = S->o;
	int k = S->k, b = S->opt->block;
	size_t n = (size_t)o->n;
	double *Q = NULL, *AQ = NULL, *T = NULL, *dinv = NULL, *theta = NULL, *res = NULL, *C = NULL;
	gwb_status st;

	if (b <= 0)
		b = k + (k / 4 > 3 ? k / 4 : 3);
	if (3 * b > o->n)
		b = (int)(o->n / 3);
	if (b < k) {
		return gwb_error(GWB_EINVAL, "eig.solve: lobpcg needs n >= 3k (n = %lld, k = %d); use "
				 "method = \"dense\" or \"lanczos\"", (long long)o->n, k);
	}
	int mmax = 3 * b;
	if ((st = op_alloc(o, n * mmax, &Q)) || (st = op_alloc(o, n * mmax, &AQ)) ||
	    (st = op_alloc(o, n * mmax, &T)) || (st = op_alloc(o, n, &dinv)))
		goto out;
	theta = malloc((size_t)mmax * sizeof(double));
	res = malloc((size_t)mmax * sizeof(double));
	C = malloc((size_t)mmax * mmax * sizeof(double));
	if (!theta || !res || !C) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	{
		/* Jacobi: 1/|a_ii| (1 where the diagonal is zero) */
		double *d = malloc(n * sizeof(double));
		if (!d) {
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		gwb_csr_diag(o->A, d);
		for (size_t i = 0; i < n; i++)
			d[i] = d[i] != 0 ? 1.0 / fabs(d[i]) : 1.0;
		st = op_put(o, dinv, d, n);
		free(d);
		if (st)
			goto out;
	}
	/* X: random, orthonormal; Rayleigh-Ritz */
	if ((st = random_block(o, Q, b, S->opt->seed)))
		goto out;
	int r, nb = b;   /* columns in the current X block */
	if ((st = orthonormalize(o, Q, b, T, &r)))
		goto out;
	nb = r;
	if ((st = op_spmm(o, Q, AQ, nb)) ||
	    (st = rayleigh_ritz(o, Q, AQ, nb, T, theta, res, nb, NULL)))
		goto out;
	int np = 0;  /* columns of P, stored after W */
	int outer;
	for (outer = 0; outer < S->maxiter; outer++) {
		if ((st = check_intr("eig.solve")))
			goto out;
		int conv = 0;
		double mx = 0;
		for (int i = 0; i < k; i++) {
			if (res[i] <= S->opt->tol * S->normA && conv == i)
				conv++;
			if (res[i] > mx)
				mx = res[i];
		}
		if ((st = record(S, conv, mx)))
			goto out;
		if (conv == k) {
			S->converged = true;
			break;
		}
		/* W = D^-1 R, R = AX - X theta (into Q after X, P shifted after W) */
		double *Wb = Q + n * nb;
		if (np > 0 && (st = op_copy(o, Q + n * (2 * nb), Q + n * nb, n * np)))
			goto out;  /* P was stored at [nb, nb+np); move it behind W */
		if ((st = op_copy(o, T, AQ, n * nb)))
			goto out;
		{
			double *D = calloc((size_t)nb * nb, sizeof(double));
			if (!D) {
				st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
				goto out;
			}
			for (int i = 0; i < nb; i++)
				D[i + i * nb] = -theta[i];
			st = op_gemm_nn(o, Q, nb, D, nb, 1.0, T);
			free(D);
			if (st)
				goto out;
		}
		if ((st = op_rowscale(o, dinv, T, Wb, nb)))
			goto out;
		/* orthonormalize [X W P]: X is orthonormal; W, P orthogonal to X, then to each other */
		if ((st = orth_against(o, Q, nb, Wb, nb + np)))
			goto out;
		int rw;
		if ((st = orthonormalize(o, Wb, nb + np, T, &rw)))
			goto out;
		int m = nb + rw;
		if ((st = op_spmm(o, Wb, AQ + n * nb, rw)))
			goto out;
		/* Rayleigh-Ritz on [X W P]; new X = Q C(:, 1:nb), new P = Q(:, nb:) C(nb:, 1:nb) */
		if ((st = op_gemm_tn(o, Q, m, AQ, m, C)))
			goto out;
		symmetrize(C, m);
		if ((st = o_syev(o, C, m, theta)))
			goto out;
		double *Cp = malloc((size_t)(m - nb) * nb * sizeof(double) + 8);
		if (!Cp) {
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int j = 0; j < nb; j++)
			for (int i = nb; i < m; i++)
				Cp[(i - nb) + (size_t)j * (m - nb)] = C[i + (size_t)j * m];
		for (int pass = 0; pass < 2 && !st; pass++) {
			double *B = pass ? AQ : Q;
			st = op_gemm_nn(o, B, m, C, nb, 0.0, T);
			if (!st && m > nb)
				st = op_gemm_nn(o, B + n * nb, m - nb, Cp, nb, 0.0, T + n * nb);
			if (!st)
				st = op_copy(o, B, T, n * (m > nb ? 2 * nb : nb));
		}
		free(Cp);
		if (st)
			goto out;
		np = m > nb ? nb : 0;
		if ((st = residual_norms(o, Q, AQ, nb, theta, T, res, NULL)))
			goto out;
	}
	memcpy(S->theta, theta, (size_t)k * sizeof(double));
	memcpy(S->res, res, (size_t)k * sizeof(double));
	if ((st = op_copy(o, S->X, Q, n * k)))
		goto out;
	snprintf(S->note, sizeof(S->note), "LOBPCG, Jacobi preconditioner, block %d, %d iterations",
		 b, outer);
out:
	op_free(o, Q);
	op_free(o, AQ);
	op_free(o, T);
	op_free(o, dinv);
	free(theta);
	free(res);
	free(C);
	return st;
}

/* ================================================================ thick-restart Lanczos */

/* w <- w - V(:, 0:j) (V(:, 0:j)^T w), twice: classical Gram-Schmidt with one
 * reorthogonalization (CGS2), each pass one X^T w and one X c over the whole basis (DGEMV on
 * BLAS's threads, cuBLAS on the GPU), never a vector at a time; the coefficients are added
 * into h (j values) when h is not NULL. Timed into o->reorth_s. */
static gwb_status cgs2(ops *o, const double *V, int j, double *w, double *h, double *tmp)
{
	gwb_status st = GWB_OK;
	double t0 = gwb_now();
	for (int pass = 0; pass < 2 && !st; pass++) {
		if ((st = op_gemm_tn(o, V, j, w, 1, tmp)))
			break;
		for (int i = 0; i < j; i++) {
			if (h)
				h[i] += tmp[i];
			tmp[i] = -tmp[i];
		}
		st = op_gemm_nn(o, V, j, tmp, 1, 1.0, w);
	}
	o->reorth_s += gwb_now() - t0;
	o->nreorth++;
	return st;
}

static gwb_status vnorm(ops *o, const double *w, double *nrm)
{
	double g;
	gwb_status st = op_gemm_tn(o, w, 1, w, 1, &g);
	*nrm = sqrt(fabs(g));
	return st;
}

/* Q <- Q R^-1 with R the Cholesky factor of Q^T Q (n x b, nearly orthonormal): one Gram
 * matrix (DGEMM) and one update (DGEMM), twice (CholQR2). The update goes into the work
 * block *W (n x b at least) and the two pointers are swapped, not copied back: *Q may come
 * back as the other buffer (columns past b are the caller's to carry over). G: b x b host
 * scratch. A direction that Cholesky finds dependent is left as it is (the caller's CGS2 and
 * measured checks take over). */
static gwb_status chol_qr(ops *o, double **Qp, int b, double **Wp, double *G)
{
	double *Q = *Qp, *W = *Wp;
	gwb_status st = GWB_OK;
	double t0 = gwb_now();
	double *R = malloc((size_t)b * b * sizeof(double));
	if (!R)
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	for (int pass = 0; pass < 2 && !st; pass++) {
		if ((st = op_gemm_tn(o, Q, b, Q, b, G)))
			break;
		double off = 0;
		for (int t = 0; t < b * b; t++)
			off = fmax(off, fabs(G[t] - (t % (b + 1) == 0)));
		/* G = R^T R (upper R, column-major), then R <- R^-1 in place */
		bool okc = true;
		memset(R, 0, (size_t)b * b * sizeof(double));
		for (int j = 0; j < b && okc; j++) {
			for (int i = 0; i <= j; i++) {
				double s = 0.5 * (G[i + (size_t)j * b] + G[j + (size_t)i * b]);
				for (int q = 0; q < i; q++)
					s -= R[q + (size_t)i * b] * R[q + (size_t)j * b];
				if (i < j)
					R[i + (size_t)j * b] = s / R[i + (size_t)i * b];
				else if (s > 0.25)
					R[j + (size_t)j * b] = sqrt(s);
				else
					okc = false;
			}
		}
		if (!okc)
			break;
		for (int j = b - 1; j >= 0; j--) {  /* invert the upper triangle, column by column */
			double d = 1.0 / R[j + (size_t)j * b];
			R[j + (size_t)j * b] = d;
			for (int i = j - 1; i >= 0; i--) {
				double s = 0;
				for (int q = i + 1; q <= j; q++)
					s += R[i + (size_t)q * b] * R[q + (size_t)j * b];
				R[i + (size_t)j * b] = -s / R[i + (size_t)i * b];
			}
		}
		/* upper-triangular inverse computed right to left: entry (i, j) uses the
		 * original R(i, i) */
		if (!st)
			st = op_gemm_nn(o, Q, b, R, b, 0.0, W);
		if (!st) {
			double *t = Q;
			Q = W;
			W = t;
		}
		if (off < 1e-8)
			break;  /* R was I + O(loss): orthonormal to rounding after one pass */
	}
	*Qp = Q;
	*Wp = W;
	free(R);
	o->reorth_s += gwb_now() - t0;
	return st;
}

/* Thick-restart Lanczos (Wu & Simon 2000) on s*A with partial reorthogonalization (Simon
 * 1984). The omega recurrence, generalised to the restarted projected matrix H (the kept
 * Ritz values on its diagonal, their couplings to the first new vector in an arrow), estimates
 * |v_i^T v_{j+1}| for every basis vector, the kept Ritz vectors included; a step costs one
 * product and the local three-term orthogonalization until the largest estimate passes
 * reorth_tol, and only then are the new vector and the next one orthogonalized against the
 * whole basis by CGS2 (cgs2 above). The first vector after a restart, full_reorth and an
 * exact (n-dimensional) basis always take CGS2. The estimate is checked against the measured
 * V^T v_m every cycle (the whole Gram matrix every 8th): a basis that lost more goes on with
 * CGS2 every step. reorth_tol defaults to min(sqrt(eps), tol / 10): semi-orthogonality
 * (sqrt(eps)) keeps the Ritz values exact, but the returned vectors inherit the basis' loss,
 * which must stay under the residual asked for.
 * v0 (backend memory, may be NULL) is the start vector. With S->stop_above finite (the
 * deflated check), the run stops as soon as its leading converged pairs reach a value >=
 * stop_above; S->found says how many leading pairs X holds (k otherwise). */
static gwb_status lanczos_run(solve *S, const double *v0)
{
	ops *o = S->o;
	int k = S->k, m = S->opt->ncv;
	size_t n = (size_t)o->n;
	double eps = DBL_EPSILON;
	double rtol = S->opt->reorth_tol > 0 ? S->opt->reorth_tol : fmin(sqrt(eps), 0.1 * S->opt->tol);
	double *V = NULL, *Wk = NULL, *H = NULL, *Y = NULL, *th = NULL, *h = NULL, *tmp = NULL;
	double *om0 = NULL, *om1 = NULL, *om2 = NULL, *G = NULL, *dtmp = NULL;
	gwb_status st;
	long full0 = o->nreorth;

	S->found = 0;
	int64_t room = o->n - S->ndefl;  /* dimension of the space Lanczos works in */
	/* a basis of 60 (randsym 100k, k = 10: 570 products against 610 with 40; the partial
	 * scheme makes its longer cycles cheap), 40 past 4M rows (memory: n x 61 doubles) */
	int base = o->n > 4000000 ? 40 : 60;
	if (m <= 0)
		m = 2 * k + 20 > base ? 2 * k + 20 : base;
	if (m > room)
		m = (int)room;
	if (m <= k)
		m = k + 1 <= room ? k + 1 : (int)room;
	bool exact = m == room;
	/* Wk: the restart product V Y (m columns) and, at the end, A X and a residual block
	 * (2k columns; more than m + 1 when deflation shrank the basis). The restart and its
	 * Cholesky QR swap V and Wk instead of copying back, so both get the larger size */
	size_t vcols = (size_t)(m + 1 > 2 * k ? m + 1 : 2 * k);
	if ((st = op_alloc(o, n * vcols, &V)) || (st = op_alloc(o, n * vcols, &Wk)))
		goto out;
	H = calloc((size_t)m * m, sizeof(double));
	Y = malloc((size_t)m * m * sizeof(double));
	th = malloc((size_t)m * sizeof(double));
	h = calloc((size_t)m + 1, sizeof(double));
	tmp = calloc((size_t)m + 1, sizeof(double));
	om0 = calloc((size_t)m + 2, sizeof(double));
	om1 = calloc((size_t)m + 2, sizeof(double));
	om2 = calloc((size_t)m + 2, sizeof(double));
	G = malloc((size_t)(m + 1) * (m + 1) * sizeof(double));
	dtmp = malloc((size_t)(S->ndefl + 1) * sizeof(double));
	if (!H || !Y || !th || !h || !tmp || !om0 || !om1 || !om2 || !G || !dtmp) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	if (v0)
		st = op_copy(o, V, v0, n);
	else
		st = random_block(o, V, 1, S->opt->seed + 7919 * (uint64_t)S->ndefl);
	if (!st && S->ndefl)
		st = orth_against(o, S->defl, S->ndefl, V, 1);
	if (st)
		goto out;
	double nv;
	if ((st = vnorm(o, V, &nv)))
		goto out;
	if ((st = op_axpby(o, n, 0, NULL, 0, NULL, 1.0 / nv, V)))
		goto out;

	int l = 0;            /* kept Ritz vectors */
	bool force = false;   /* CGS2 for the next vector */
	bool full_forced = false;  /* the partial scheme lost orthogonality: CGS2 from now on */
	double beta = 0;
	om1[0] = 1;           /* omega_{j,.}: om1; omega_{j-1,.}: om0 */
	/* A partial step drops its CGS2 coefficients (Simon's scheme), so the kept Ritz vectors
	 * of the next cycle satisfy A y = theta y + s v only up to the dropped part, which lies
	 * in the discarded directions: each step it feeds up to `drop` / beta into the new
	 * vector's overlap with them, a source the recurrence adds for the kept indices. */
	double drop = 0;
	int outer;
	for (outer = 0; outer < S->maxiter; outer++) {
		if ((st = check_intr("eig.solve")))
			goto out;
		double cyc_loss = 0;  /* largest loss of orthogonality seen this cycle */
		double cyc_drop = 0;  /* largest ||V^T w|| beta dropped by a partial step */
		for (int j = l; j < m; j++) {
			double *vj = V + n * j, *w = V + n * (j + 1);
			bool full = S->opt->full_reorth || full_forced || j == l || force || exact;
			bool have_beta = false;   /* beta = ||w|| already (the local step's fused norm) */
			double a_j = 0;
			force = false;
			if ((st = full ? op_spmm(o, vj, w, 1) : op_spmv_dot(o, vj, w, &a_j)))
				goto out;
			if (full) {
				memset(h, 0, (size_t)(j + 1) * sizeof(double));
				if ((st = cgs2(o, V, j + 1, w, h, tmp)))
					goto out;
				for (int i = 0; i <= j; i++)
					H[i + j * m] = H[j + i * m] = h[i];
			} else {
				/* local: w -= alpha v_j + beta_{j-1} v_{j-1}, one fused pass; a second
				 * pass against both only when the step cancelled most of A v_j (beta
				 * under 1e-3 of ||A v_j||), where the local error would grow */
				double bprev = H[j - 1 + j * m], bn;
				if ((st = op_axpby_norm(o, n, -a_j, vj, -bprev, vj - n, 1.0, w, &bn)))
					goto out;
				if (bn > 1e-3 * sqrt(a_j * a_j + bprev * bprev + bn * bn)) {
					beta = bn;
					have_beta = true;
				} else {
					if ((st = op_gemm_tn(o, V + n * (j - 1), 2, w, 1, tmp)))
						goto out;
					a_j += tmp[1];
					tmp[0] = -tmp[0];
					tmp[1] = -tmp[1];
					if ((st = op_gemm_nn(o, V + n * (j - 1), 2, tmp, 1, 1.0, w)))
						goto out;
				}
				H[j + j * m] = a_j;
			}
			/* deflation: the locked directions (where the projected operator is 0) out of
			 * w, after every orthogonalization against V (one pass: w's components along
			 * them are of the order of their residuals) */
			if (S->ndefl) {
				if ((st = orth_once(o, S->defl, S->ndefl, w, dtmp)))
					goto out;
				have_beta = false;
			}
			if (!have_beta && (st = vnorm(o, w, &beta)))
				goto out;
			/* omega recurrence for the new vector (om2 = omega_{j+1,.}); column i of H
			 * holds A v_i's coefficients, so sum_q H(q,i) omega_{j,q} estimates
			 * v_i^T A v_j for kept and Lanczos vectors alike */
			if (!full && beta > 0) {
				double mx = 0;
				for (int i = 0; i + 1 < j; i++) {
					double s = 0;
					for (int q = 0; q <= j; q++)
						s += H[q + i * m] * om1[q];
					s -= H[j + j * m] * om1[i];
					s -= H[j - 1 + j * m] * om0[i];
					s /= beta;
					s += (s >= 0 ? 1 : -1) * (eps * S->normA + (i < l ? drop : 0)) / beta;
					om2[i] = s;
					if (fabs(s) > mx)
						mx = fabs(s);
				}
				if (mx > cyc_loss)
					cyc_loss = mx;
				if (mx > rtol) {
					memset(h, 0, (size_t)(j + 1) * sizeof(double));
					if ((st = cgs2(o, V, j + 1, w, h, tmp)))
						goto out;
					double cn = 0;
					for (int i = 0; i <= j; i++)
						cn += h[i] * h[i];
					cn = sqrt(cn) * beta;
					cyc_drop = cn > cyc_drop ? cn : cyc_drop;
					if (S->ndefl && (st = orth_against(o, S->defl, S->ndefl, w, 1)))
						goto out;
					if ((st = vnorm(o, w, &beta)))
						goto out;
					for (int i = 0; i < j; i++)
						om2[i] = eps;
					force = true;
				}
			} else
				for (int i = 0; i < j; i++)
					om2[i] = eps;
			if (j >= 1)
				om2[j - 1] = eps;
			om2[j] = eps;
			om2[j + 1] = 1;
			if (j + 1 < m) {
				if (!(beta > 100 * eps * S->normA)) {
					/* invariant subspace: continue with a random vector orthogonal to V */
					if ((st = random_block(o, w, 1, S->opt->seed + 1000 + j + 97 * outer)))
						goto out;
					if (S->ndefl && (st = orth_against(o, S->defl, S->ndefl, w, 1)))
						goto out;
					if ((st = cgs2(o, V, j + 1, w, NULL, tmp)) || (st = vnorm(o, w, &nv)))
						goto out;
					if ((st = op_axpby(o, n, 0, NULL, 0, NULL, 1.0 / nv, w)))
						goto out;
					H[j + 1 + j * m] = H[j + (j + 1) * m] = 0;
					beta = 0;
					force = true;
				} else {
					if ((st = op_axpby(o, n, 0, NULL, 0, NULL, 1.0 / beta, w)))
						goto out;
					H[j + 1 + j * m] = H[j + (j + 1) * m] = beta;
				}
			} else if (beta > 0 && (st = op_axpby(o, n, 0, NULL, 0, NULL, 1.0 / beta, w)))
				goto out;
			double *t = om0;
			om0 = om1;
			om1 = om2;
			om2 = t;
		}
		/* the omega recurrence is an estimate: measure the residual vector against the
		 * basis every cycle (one DGEMV) and the whole basis every 8th; when it lost
		 * orthogonality beyond reorth_tol, start again from the sum of the current Ritz
		 * vectors with CGS2 every step */
		bool measured = !S->opt->full_reorth && !full_forced && !exact;
		if (measured) {
			double lost = 0;
			bool whole = outer % 8 == 0;
			int cols = whole ? m + 1 : 1;
			if ((st = op_gemm_tn(o, V, m + 1, whole ? V : V + n * m, cols, G)))
				goto out;
			for (int b = 0; b < cols; b++)
				for (int a = 0; a <= m; a++) {
					double d = fabs(G[a + b * (m + 1)] - (a == (whole ? b : m)));
					lost = d > lost ? d : lost;
				}
			if (whole)  /* V^T v_m first, for the restart */
				memmove(G, G + (size_t)m * (m + 1), (size_t)(m + 1) * sizeof(double));
			if (lost > cyc_loss)
				cyc_loss = lost;
			if (lost > 10 * rtol) {
				/* V(:,0) <- sum of the k wanted Ritz vectors of this cycle, normalized */
				full_forced = true;
				memcpy(Y, H, (size_t)m * m * sizeof(double));
				symmetrize(Y, m);
				if ((st = o_syev(o, Y, m, th)))
					goto out;
reset_full:
				for (int q = 0; q < m; q++) {
					tmp[q] = 0;
					for (int i = 0; i < k; i++)
						tmp[q] += Y[q + (size_t)i * m];
				}
				if ((st = op_gemm_nn(o, V, m, tmp, 1, 0.0, Wk)) || (st = vnorm(o, Wk, &nv)) ||
				    (st = op_axpby(o, n, 1.0 / nv, Wk, 0, NULL, 0, V)))
					goto out;
				memset(H, 0, (size_t)m * m * sizeof(double));
				for (int i = 0; i <= m; i++)
					om0[i] = om1[i] = eps;
				om1[0] = 1;
				l = 0;
				force = true;
				continue;
			}
		}
		/* Ritz pairs of H */
		memcpy(Y, H, (size_t)m * m * sizeof(double));
		symmetrize(Y, m);
		if ((st = o_syev(o, Y, m, th)))
			goto out;
		int conv = 0;
		double mx = 0;
		for (int i = 0; i < k; i++) {
			double r = fabs(beta * Y[m - 1 + (size_t)i * m]);
			if (exact)
				r = 0;
			if (r <= S->opt->tol * S->normA && conv == i)
				conv++;
			if (r > mx)
				mx = r;
		}
		/* the deflated check: once its smallest Ritz pair is accurate to sqrt(tol) and lies
		 * (with its residual interval) above the k-th value found, nothing was missed. A
		 * random start sees every direction, and the extreme one converges first: a missed
		 * copy below would have pulled the smallest Ritz value down before this pair got
		 * there (or lies within the residual of it) */
		if (S->stop_above < INFINITY && !exact) {
			double r1 = fabs(beta * Y[m - 1]);
			if (r1 <= sqrt(S->opt->tol) * S->normA &&
			    th[0] - r1 >= S->stop_above + S->opt->tol * S->normA) {
				if ((st = record(S, 0, r1)))
					goto out;
				S->found = 0;
				S->converged = true;
				outer++;
				break;
			}
		}
		/* pairs that must converge: k, or (deflated check) up to the first converged value
		 * at or above stop_above */
		int need = k;
		for (int i = 0; i < conv; i++)
			if (th[i] >= S->stop_above) {
				need = i + 1;
				break;
			}
		if ((st = record(S, conv < need ? conv : need, mx)))
			goto out;
		bool last = outer + 1 == S->maxiter;
		if (conv >= need || last) {
			/* Ritz vectors and their true residuals */
			if ((st = op_gemm_nn(o, V, m, Y, need, 0.0, S->X)))
				goto out;
			if ((st = op_spmm(o, S->X, Wk, need)))
				goto out;
			if ((st = residual_norms(o, S->X, Wk, need, th, Wk + n * need, S->res, NULL)))
				goto out;
			memcpy(S->theta, th, (size_t)need * sizeof(double));
			S->found = need;
			bool ok = true;
			for (int i = 0; i < need; i++)
				if (!(S->res[i] <= S->opt->tol * S->normA))
					ok = false;
			if (ok) {
				S->converged = true;
				outer++;
				break;
			}
			if (last || exact) {
				outer++;
				break;
			}
			if (!full_forced && !S->opt->full_reorth) {
				/* the estimates say converged, the true residuals do not: the basis is
				 * not orthogonal enough; go on with CGS2 every step (Y holds this
				 * cycle's Ritz vectors) */
				full_forced = true;
				goto reset_full;
			}
		}
		/* thick restart: keep l Ritz vectors, the residual vector next */
		l = k + (m - k) / 2;
		if (l > m - 1)
			l = m - 1;
		if ((st = op_gemm_nn(o, V, m, Y, l, 0.0, Wk)) || (st = op_copy(o, Wk + n * l, V + n * m, n)))
			goto out;
		double *swp = V;   /* the kept vectors and the residual vector are the new basis */
		V = Wk;
		Wk = swp;
		memset(H, 0, (size_t)m * m * sizeof(double));
		for (int i = 0; i < l; i++) {
			H[i + i * m] = th[i];
			H[i + l * m] = H[l + i * m] = beta * Y[m - 1 + (size_t)i * m];
		}
		for (int i = 0; i <= m; i++)
			om0[i] = om1[i] = eps;
		om1[l] = 1;
		drop = cyc_drop;
		if (measured && cyc_loss > 0.01 * rtol) {
			/* the kept Ritz vectors inherit the basis' loss of orthogonality, and CGS2
			 * against a basis that is not orthonormal leaves the new vector as far off:
			 * the recurrence, restarted at eps, would fall behind (~30x a cycle). So the
			 * kept block is made orthonormal again (Cholesky QR: blocked, BLAS-3; its R is
			 * I + O(loss), so H's diagonal and arrow stay right to that order) and the
			 * residual vector orthogonalized against it by CGS2 */
			double *v_before = V;
			if ((st = chol_qr(o, &V, l, &Wk, G)))
				goto out;
			if (V != v_before && (st = op_copy(o, V + n * l, Wk + n * l, n)))
				goto out;   /* the residual vector follows the swapped block */
			if ((st = cgs2(o, V, l, V + n * l, NULL, tmp)) ||
			    (st = vnorm(o, V + n * l, &nv)) ||
			    (st = op_axpby(o, n, 0, NULL, 0, NULL, 1.0 / nv, V + n * l)))
				goto out;
		} else if (measured) {
			/* the residual vector's measured overlap with the kept Ritz vectors,
			 * y_i^T v_m = Y_i^T (V^T v_m), starts the recurrence of the next cycle */
			for (int i = 0; i < l; i++) {
				double s = 0;
				for (int a = 0; a < m; a++)
					s += Y[a + (size_t)i * m] * G[a];
				om1[i] = s + (s >= 0 ? eps : -eps);
			}
		}
		force = true;
	}
	snprintf(S->note, sizeof(S->note), "thick-restart Lanczos, basis %d, %d restarts, %s "
		 "reorthogonalization (%ld CGS2 passes)", m, outer, S->opt->full_reorth ? "full" :
		 full_forced ? "partial then full" : "partial", o->nreorth - full0);
out:
	op_free(o, V);
	op_free(o, Wk);
	free(H);
	free(Y);
	free(th);
	free(h);
	free(tmp);
	free(om0);
	free(om1);
	free(om2);
	free(G);
	free(dtmp);
	return st;
}

/* Lanczos from one start vector sees one vector of each eigenspace, so a copy of a repeated
 * eigenvalue can be missed. After it converges, Lanczos runs again from a random start with
 * every vector kept orthogonal to the pairs found (deflation), until its leading converged
 * value reaches the k-th one (most often its first pair: a check costs the products of one
 * pair, not of k); any value it finds below the k-th joins them, and the check repeats until
 * none does. */
static gwb_status lanczos(solve *S, const double *v0)
{
	ops *o = S->o;
	int k = S->k, rounds = 0;
	size_t n = (size_t)o->n;
	double *X2 = NULL, *M = NULL, *th2 = NULL, *res2 = NULL;
	gwb_status st;
	char note[256];

	S->stop_above = INFINITY;
	if ((st = lanczos_run(S, v0)) || !S->converged)
		return st;
	memcpy(note, S->note, sizeof(note));
	if (o->n < 2 * (int64_t)k + 2)
		return GWB_OK;   /* no room for a deflated run */
	if ((st = op_alloc(o, n * k, &X2)) || (st = op_alloc(o, n * 2 * k, &M)))
		goto out;
	th2 = malloc((size_t)k * sizeof(double));
	res2 = malloc((size_t)k * sizeof(double));
	if (!th2 || !res2) {
		st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		goto out;
	}
	long prods0 = o->spmv;
	for (rounds = 1; rounds <= 8; rounds++) {
		double tol = S->opt->tol * S->normA;
		solve D = *S;
		D.X = X2;
		D.theta = th2;
		D.res = res2;
		D.defl = S->X;
		D.ndefl = k;
		D.converged = false;
		D.iter = S->iter;
		D.stop_above = S->theta[k - 1] - tol;
		D.hist_res = 0;
		for (int i = 0; i < k; i++)
			D.hist_res = S->res[i] > D.hist_res ? S->res[i] : D.hist_res;
		st = lanczos_run(&D, NULL);
		S->iter = D.iter;
		if (st)
			goto out;
		if (!D.converged) {
			snprintf(S->note, sizeof(S->note), "%.100s; multiplicity check incomplete", note);
			S->converged = false;
			goto out;
		}
		/* merge: the k smallest of theta and th2 (X2 is orthogonal to X) */
		int f = D.found;
		if (!(f > 0 && th2[0] < S->theta[k - 1] - tol))
			break;
		int a = 0, b = 0;
		double *C = calloc((size_t)2 * k * k, sizeof(double));
		double *nt = malloc((size_t)k * sizeof(double)), *nr = malloc((size_t)k * sizeof(double));
		if (!C || !nt || !nr) {
			free(C);
			free(nt);
			free(nr);
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		for (int i = 0; i < k; i++) {
			bool from_x = b >= f || (a < k && S->theta[a] <= th2[b]);
			int src = from_x ? a : k + b;
			nt[i] = from_x ? S->theta[a] : th2[b];
			nr[i] = from_x ? S->res[a] : res2[b];
			C[src + (size_t)i * 2 * k] = 1.0;
			if (from_x)
				a++;
			else
				b++;
		}
		/* [X X2] C -> selected columns */
		st = op_copy(o, M, S->X, n * k);
		if (!st)
			st = op_copy(o, M + n * k, X2, n * f);
		if (!st && f < k)
			st = op_axpby(o, n * (k - f), 0, NULL, 0, NULL, 0, M + n * (k + f));
		if (!st)
			st = op_gemm_nn(o, M, 2 * k, C, k, 0.0, S->X);
		memcpy(S->theta, nt, (size_t)k * sizeof(double));
		memcpy(S->res, nr, (size_t)k * sizeof(double));
		free(C);
		free(nt);
		free(nr);
		if (st)
			goto out;
	}
	snprintf(S->note, sizeof(S->note), "%.100s; %d deflated check%s (%ld products)", note,
		 rounds > 8 ? 8 : rounds, rounds == 1 ? "" : "s", o->spmv - prods0);
out:
	op_free(o, X2);
	op_free(o, M);
	free(th2);
	free(res2);
	return st;
}

/* ================================================================ dense (small n) */

static gwb_status dense_solve(solve *S)
{
	ops *o = S->o;
	int n = (int)o->n, k = S->k;
	double *D = calloc((size_t)n * n, sizeof(double)), *w = malloc((size_t)n * sizeof(double));
	gwb_status st;
	if (!D || !w) {
		free(D);
		free(w);
		return gwb_error(GWB_ENOMEM, "eig.solve: cannot allocate a dense %dx%d copy", n, n);
	}
	for (int i = 0; i < n; i++)
		for (int64_t p = gwb_csr_rp(o->A, i); p < gwb_csr_rp(o->A, i + 1); p++)
			D[i + gwb_csr_ci(o->A, p) * (size_t)n] = o->sign * o->A->val[p];
	st = o_syev(o, D, n, w);
	if (!st) {
		memcpy(S->theta, w, (size_t)k * sizeof(double));
		st = op_put(o, S->X, D, (size_t)n * k);
		S->converged = true;
		if (!st)
			st = record(S, k, 0);
		snprintf(S->note, sizeof(S->note), "dense LAPACK dsyev on the %dx%d matrix", n, n);
	}
	free(D);
	free(w);
	return st;
}

/* ================================================================ driver */

/* The auto rule between Lanczos and the Chebyshev filter, from what bounds()' short Lanczos
 * run measured: its Ritz gap at the wanted end divided by how many eigenvalues its extreme
 * Ritz value stands for (n x its Gauss weight) estimates the gap ratio of the wanted end,
 * within ~3x (one random start: the weight is a sample). A wide gap (random sparse
 * matrices: 4e-4 .. 1e-2 at either end; the 100^2 Laplacian, 2e-4 .. 6e-4) converges in few
 * Lanczos steps, ~5x fewer products than the block filter needs (randsym 100k: 570 against
 * 4149; lap100: 450 ms against 550-790); a crowded end (the 200^2 and 317^2 Laplacians,
 * 3e-5 .. 9e-5, dozens of eigenvalues under the first Ritz value; laplacian1d 2000) is
 * where the filter's block products and high degree win. On the GPU the filter stays: a
 * Lanczos step is a handful of small kernels and host round trips, the filter one fused
 * kernel per degree (the lead's GPU rows measure method = "lanczos" beside it). Writes
 * the reason into why. */
static gwb_sp_method auto_pick(const solve *S, char *why, size_t len)
{
	double mass = S->mass > 1 ? S->mass : 1, g = S->gap / mass;
	const double cut = 1.5e-4;
	gwb_sp_method m = g >= cut && !S->o->gpu ? GWB_SPM_LANCZOS : GWB_SPM_CHEBYSHEV;
	snprintf(why, len, "auto: %s (gap ratio of the wanted end ~%.2g %s %.2g: a 40-step "
		 "Lanczos run's Ritz gap %.2g over ~%.3g eigenvalues at its extreme value%s)",
		 gwb_sp_method_name(m), g, g >= cut ? ">=" : "<", cut, S->gap, S->mass,
		 g >= cut && S->o->gpu ? "; the GPU keeps the filter" : "");
	return m;
}

/* One end: the k smallest of s*A into theta/res/X (backend memory). */
static gwb_status solve_end(solve *S, gwb_sp_method method)
{
	gwb_status st;
	int maxit = S->opt->maxiter;

	switch (method) {
	case GWB_SPM_DENSE:
		return dense_solve(S);
	case GWB_SPM_LANCZOS:
		S->maxiter = maxit > 0 ? maxit : 2000;
		return lanczos(S, NULL);
	case GWB_SPM_LOBPCG:
		S->maxiter = maxit > 0 ? maxit : 20000;
		return lobpcg(S);
	case GWB_SPM_RANDOMIZED:
		S->maxiter = maxit > 0 ? maxit : 20000;
		return subspace(S, false, S->maxiter);
	case GWB_SPM_RAND_LANCZOS: {
		/* a few randomized iterations, then Lanczos from the sum of their Ritz vectors */
		st = subspace(S, false, 3);
		if (st)
			return st;
		if (S->converged)
			return GWB_OK;
		double *v0 = NULL, *ones = malloc((size_t)S->k * sizeof(double));
		if (!ones)
			return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		for (int i = 0; i < S->k; i++)
			ones[i] = 1.0;
		st = op_alloc(S->o, (size_t)S->o->n, &v0);
		if (!st)
			st = op_gemm_nn(S->o, S->X, S->k, ones, 1, 0.0, v0);
		free(ones);
		S->maxiter = maxit > 0 ? maxit : 2000;
		if (!st)
			st = lanczos(S, v0);
		op_free(S->o, v0);
		if (!st) {
			char t[160];
			snprintf(t, sizeof(t), "3 randomized iterations, then %.120s", S->note);
			memcpy(S->note, t, sizeof(t));
		}
		return st;
	}
	case GWB_SPM_CHEBYSHEV:
	default:
		S->maxiter = maxit > 0 ? maxit : 5000;
		return subspace(S, true, S->maxiter);
	}
}

gwb_status gwb_eig_sparse(gwb_csr *A, const gwb_sp_opts *opt, gwb_eigen **out)
{
	gwb_eigen *e = NULL;
	gwb_status st;
	int64_t at[2];
	int k = opt->k, ends = opt->which == GWB_BOTH ? 2 : 1;
	double t0 = gwb_now();
	ops o = {0};
	gwb_backend be;
	char why[160] = "";
	gwb_sp_method method = opt->method;
	char used[40] = "";   /* the method(s) that ran, "lobpcg+chebyshev" for two ends */

	*out = NULL;
	if (A->rows != A->cols)
		return gwb_error(GWB_EINVAL, "eig.solve: the matrix must be square (got %lldx%lld)",
				 (long long)A->rows, (long long)A->cols);
	if (k < 1 || (int64_t)k * ends >= A->rows)
		return gwb_error(GWB_EINVAL, "eig.solve: k must be in [1, n%s) = [1, %lld) for this "
				 "%lldx%lld matrix (got k = %d)", ends == 2 ? "/2" : "",
				 (long long)((A->rows + ends - 1) / ends), (long long)A->rows,
				 (long long)A->rows, k);
	if (!(opt->tol > 0) || opt->tol >= 1)
		return gwb_error(GWB_EINVAL, "eig.solve: tol must be in (0, 1) (got %g)", opt->tol);
	if (gwb_csr_has_nonfinite(A, at))
		return gwb_error(GWB_EINVAL, "eig.solve: the matrix has a NaN or Inf at (%lld, %lld) "
				 "(1-based); clean the data first", (long long)at[0] + 1,
				 (long long)at[1] + 1);
	if (A->sym != 1 && !gwb_csr_is_symmetric(A, at))
		return gwb_error(GWB_EINVAL, "eig.solve: the matrix is not symmetric: entry (%lld, %lld) "
				 "= %.17g but (%lld, %lld) = %.17g (1-based); these methods need a "
				 "symmetric matrix (use (A + A^T)/2)", (long long)at[0] + 1,
				 (long long)at[1] + 1, gwb_csr_get(A, at[0], at[1]), (long long)at[1] + 1,
				 (long long)at[0] + 1, gwb_csr_get(A, at[1], at[0]));
	/* auto: dense LAPACK for small n; LOBPCG for the smallest end when a Jacobi
	 * preconditioner pays (a positive diagonal varying by 10x or more: stiffness matrices,
	 * bcsstk06 needs 12x fewer products A x than with Chebyshev); otherwise Chebyshev-
	 * filtered subspace iteration (Laplacians: constant diagonal, Jacobi is a mere scaling) */
	bool jacobi_pays = false;
	if (method == GWB_SPM_AUTO && A->rows > 400) {
		double dmin = INFINITY, dmax = 0;
		for (int64_t i = 0; i < A->rows; i++) {
			double d = gwb_csr_get(A, i, i);
			dmin = d < dmin ? d : dmin;
			dmax = d > dmax ? d : dmax;
		}
		jacobi_pays = dmin > 0 && dmax >= 10 * dmin && 3 * (int64_t)(k + 3) < A->rows;
	}
	if (method == GWB_SPM_AUTO && A->rows <= 400)
		method = GWB_SPM_DENSE;
	if (method == GWB_SPM_DENSE && A->rows > 8192)
		return gwb_error(GWB_EINVAL, "eig.solve: method \"dense\" is for n <= 8192 (got %lld)",
				 (long long)A->rows);
	/* bytes the GPU path moves: the matrix once, then many passes over blocks */
	double bytes = (double)gwb_csr_bytes(A) * 50 + (double)A->rows * 8 * 4 * (2 * k + 10);
	if (A->gpu && opt->backend == GWB_BACKEND_AUTO && method != GWB_SPM_DENSE) {
		be = GWB_BACKEND_GPU;
		snprintf(why, sizeof(why), "auto: the matrix is on the GPU");
	} else if ((st = gwb_backend_choose(opt->backend, bytes, 0, &be, why, sizeof(why)))) {
		return st;
	}
	if (method == GWB_SPM_DENSE)
		be = GWB_BACKEND_CPU;
	if ((st = gwb_eigen_new((size_t)A->rows, (size_t)A->rows, (size_t)k * ends, 1, true, false, &e)))
		return st;
	o.A = A;
	o.n = A->rows;
	o.spmv_kind = opt->spmv_kind;
	{
		const char *pe = getenv("GWB_EIG_PROF");
		o.prof = pe && *pe && strcmp(pe, "0");
	}
	double tx = 0;
#ifdef GWB_HAVE_CUDA
	if (be == GWB_BACKEND_GPU) {
		double t1 = gwb_now();
		if (A->gpu) {
			o.g = A->gpu;  /* resident: used in place, not freed here */
		} else if ((st = gwb_gpu_csr_upload(A, &o.g))) {
			gwb_eigen_free(e);
			return st;
		}
		o.gpu = true;
		/* the optimisation switches (switches.h; GWB_EIG_COLMAJOR=1 turns rows off) */
		o.rows = gwb_switch_on(GWB_SW_EIG_ROWMAJOR);
		if (o.spmv_kind == GWB_SPMV_AUTO && !gwb_switch_on(GWB_SW_SPMV_OURS))
			o.spmv_kind = GWB_SPMV_CUSPARSE;
		tx += gwb_now() - t1;
	}
#endif
	if (o.prof)
		o.ph[PH_SETUP] = gwb_now() - t0;
	gwb_progress_begin("eig.solve", 0);
	double *X = NULL;
	for (int end = 0; end < ends; end++) {
		solve S = {0};
		bool largest = opt->which == GWB_LARGEST || end == 1;
		o.sign = largest ? -1.0 : 1.0;
		gwb_sp_method m_end = method;
		char auto_why[200] = "";
		if (m_end == GWB_SPM_AUTO)
			m_end = !largest && jacobi_pays ? GWB_SPM_LOBPCG : GWB_SPM_CHEBYSHEV;
		if (method == GWB_SPM_AUTO && m_end == GWB_SPM_LOBPCG)
			snprintf(auto_why, sizeof(auto_why), "auto: lobpcg (positive diagonal varying "
				 "10x or more: Jacobi pays)");
		S.o = &o;
		S.opt = opt;
		S.k = k;
		S.e = e;
		S.stop_above = INFINITY;
		S.theta = malloc((size_t)k * sizeof(double));
		S.res = calloc((size_t)k, sizeof(double));
		if (!S.theta || !S.res) {
			free(S.theta);
			free(S.res);
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			break;
		}
		if (!(st = op_alloc(&o, (size_t)o.n * k * 2 + 1, &X))) {
			S.X = X;
			if (m_end == GWB_SPM_DENSE) {
				S.normA = gwb_csr_norm_inf(A);
				st = solve_end(&S, m_end);
			} else if (!(st = bounds(&S))) {
				if (method == GWB_SPM_AUTO && m_end == GWB_SPM_CHEBYSHEV)
					m_end = auto_pick(&S, auto_why, sizeof(auto_why));
				if (m_end == GWB_SPM_CHEBYSHEV && !gwb_switch_on(GWB_SW_EIG_CHEBYSHEV))
					m_end = GWB_SPM_LANCZOS;  /* the switch eig.chebyshev off */
				st = solve_end(&S, m_end);
			}
		}
		if (end == 0 || strcmp(used, gwb_sp_method_name(m_end)))
			snprintf(used + strlen(used), sizeof(used) - strlen(used), "%s%s", end ? "+" : "",
				 gwb_sp_method_name(m_end));
		if (!st) {
			/* true residuals of the returned pairs on the backend, orthogonality */
			double orth = 0;
			if (m_end == GWB_SPM_DENSE) {
				double *AX = X + (size_t)o.n * k, *R = malloc((size_t)o.n * k * sizeof(double));
				if (!R)
					st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
				if (!st && !(st = op_spmm(&o, X, AX, k)))
					st = residual_norms(&o, X, AX, k, S.theta, R, S.res, &orth);
				free(R);
			} else {
				double *AX = X + (size_t)o.n * k, *R = NULL;
				if (!(st = op_alloc(&o, (size_t)o.n * k, &R)) && !(st = op_spmm(&o, X, AX, k)))
					st = residual_norms(&o, X, AX, k, S.theta, R, S.res, &orth);
				op_free(&o, R);
			}
			if (!st) {
				double normA = S.normA > 0 ? S.normA : 1;
				if (opt->vectors) {
					double t1 = gwb_now();
					st = op_get(&o, e->vectors + (size_t)end * k * o.n, X, (size_t)o.n * k);
					if (o.gpu)  /* on the CPU op_get is a copy in memory, not a transfer */
						tx += gwb_now() - t1;
				}
				for (int i = 0; i < k; i++) {
					e->values[end * k + i] = o.sign * S.theta[i];
					e->residuals[end * k + i] = S.res[i] / normA;
				}
				if (!(e->orthogonality >= orth))
					e->orthogonality = orth;
				e->iterations += S.iter;
				e->converged = end == 0 ? S.converged : e->converged && S.converged;
				char ro[48] = "";
				if (o.nreorth)
					snprintf(ro, sizeof(ro), "; reorthogonalization %.0f ms", o.reorth_s * 1e3);
				/* the whole note: e->note is sized for the longest (eig.h) */
				snprintf(e->note, sizeof(e->note), "%s%s%s; %ld products A x%s; "
					 "||A||_2 ~ %.6g%s%s", auto_why, *auto_why ? "; " : "", S.note,
					 o.spmv, ro, normA, *why ? "; " : "", why);
			}
		}
		op_free(&o, X);
		X = NULL;
		free(S.theta);
		free(S.res);
		if (st)
			break;
	}
	gwb_progress_end();
#ifdef GWB_HAVE_CUDA
	if (o.g && o.g != A->gpu)
		gwb_gpu_csr_free(o.g);
#endif
	if (st) {
		gwb_eigen_free(e);
		return st;
	}
	gwb_eigen_sort(e, 0);
	gwb_eigen_update_max(e);
	if (!opt->vectors) {
		free(e->vectors);
		e->vectors = NULL;
	}
	snprintf(e->method, sizeof(e->method), "%s", used);
	snprintf(e->backend, sizeof(e->backend), "%s", o.gpu ? "gpu" : "cpu");
	e->total_ms = (gwb_now() - t0) * 1e3;
	e->transfer_ms = tx * 1e3;
	if (o.prof) {
		double sum = 0;
		fprintf(stderr, "eig.solve phases (%s, %s, %ld products A x, synchronized after each "
			"operation):", e->method, e->backend, o.spmv);
		for (int p = 0; p < PH_COUNT; p++) {
			fprintf(stderr, " %s %.1f ms;", ph_names[p], o.ph[p] * 1e3);
			sum += o.ph[p];
		}
		fprintf(stderr, " other %.1f ms; total %.1f ms\n", e->total_ms - sum * 1e3, e->total_ms);
	}
	e->kernel_ms = e->total_ms - e->transfer_ms;
	*out = e;
	return GWB_OK;
}

/* ================================================================ randomized SVD */

extern void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
		    double *work, const int *lwork, int *info);
extern void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
		    const double *tau, double *work, const int *lwork, int *info);
extern void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
		    const int *lda, double *s, double *u, const int *ldu, double *vt,
		    const int *ldvt, double *work, const int *lwork, int *info, size_t, size_t);

void gwb_svd_opts_default(gwb_svd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->k = 6;
	o->tol = 1e-10;
	o->seed = 1;
	o->vectors = true;
	o->backend = GWB_BACKEND_AUTO;
}

/* Householder QR of the o->n x b block X (backend memory): X <- Q, R (host, b x b). */
static gwb_status op_qr(ops *o, double *X, int b, double *R)
{
	gwb_status st = GWB_OK;
	double t0 = prof_begin(o);
	/* LAPACK and cuSOLVER take 32-bit sizes; b <= rows holds by construction (b <= min) */
	if (o->n > INT32_MAX || b > o->n)
		return gwb_error(GWB_EINVAL, "%s: the QR of a %lldx%d block needs fewer than 2^31 rows "
				 "and block <= rows (on the CPU and the GPU alike); use a smaller "
				 "block/k, or a matrix with fewer than 2^31 rows and columns", opfn(o),
				 (long long)o->n, b);
#ifdef GWB_HAVE_CUDA
	if (o->gpu) {
		st = gwb_gpu_qr(o->g, o->n, b, X, R);
		prof_end(o, PH_SYEV, t0);
		return st;
	}
#endif
	int m = (int)o->n, lwork = -1, info = 0;
	double q1 = 0, q2 = 0, *tau = malloc((size_t)b * sizeof(double)), *work = NULL;
	if (!tau)
		return gwb_error(GWB_ENOMEM, "%s: out of memory", opfn(o));
	/* tall and skinny: below a few million entries the work per OpenBLAS thread is a few
	 * microseconds, less than waking them (as for the small eigenproblems above) */
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
	if (o->prof)
		o->ph[PH_SYEV] += gwb_now() - t0;
	return st;
}

/* R (b x b, destroyed) = U diag(s) W^T, s descending (LAPACK dgesvd on the host). */
static gwb_status small_svd(double *R, int b, double *s, double *U, double *W)
{
	int info = 0, lwork = -1;
	double q, *VT = malloc((size_t)b * b * sizeof(double)), *work = NULL;
	if (!VT)
		return gwb_error(GWB_ENOMEM, "eig.svd: out of memory");
	int old = gwb_blas_threads_push(b < 400 ? 1 : 0);
	dgesvd_("A", "A", &b, &b, R, &b, s, U, &b, VT, &b, &q, &lwork, &info, 1, 1);
	lwork = (int)q + 1;
	work = malloc((size_t)lwork * sizeof(double));
	if (!work) {
		free(VT);
		gwb_blas_threads_pop(old);
		return gwb_error(GWB_ENOMEM, "eig.svd: out of memory");
	}
	dgesvd_("A", "A", &b, &b, R, &b, s, U, &b, VT, &b, work, &lwork, &info, 1, 1);
	gwb_blas_threads_pop(old);
	for (int j = 0; j < b; j++)
		for (int i = 0; i < b; i++)
			W[i + (size_t)j * b] = VT[j + (size_t)i * b];
	free(VT);
	free(work);
	if (info)
		return gwb_error(GWB_ENOCONV, "eig.svd: LAPACK dgesvd failed on the %dx%d projected "
				 "problem (info %d)", b, b, info);
	return GWB_OK;
}

/* Degree of the Chebyshev filter on A^T A between iterations, from the Ritz values s
 * (descending, b of them): high enough to damp [0, s_b^2] fast, low enough that s_1 is
 * amplified at most 1e3 times more than s_k (the k-th direction keeps ~13 digits through the
 * QR); 0 when the block shows no gap. */
static int svd_filter_degree(const double *s, int k, int b)
{
	double cut = s[b - 1] * s[b - 1], half = cut / 2;
	if (b <= k || !(s[k - 1] > s[b - 1] * (1 + 1e-8)) || !(cut > 0))
		return 0;
	double x1 = (s[0] * s[0] - half) / half, xk = (s[k - 1] * s[k - 1] - half) / half;
	double gap = acosh(x1) - acosh(xk);
	double d = gap > 0 ? log(1e3) / gap : 32;
	return d < 2 ? 2 : d > 32 ? 32 : (int)d;
}

/* V <- p_d(A^T A) V, the scaled Chebyshev filter (Zhou & Saad) damping [0, cut] with top the
 * upper end (~s_1^2); W1, W2 cols x b and T rows x b scratch. */
static gwb_status svd_filter(ops *oA, ops *oT, double *V, double *W1, double *W2, double *T,
			     int b, int d, double cut, double top)
{
	size_t len = (size_t)oT->n * b;
	double e = cut / 2, c = cut / 2;
	double sigma = e / (top - c), sigma1 = sigma, tau = 2 / sigma1;
	double *X = V, *Yc = W1, *Yn = W2;
	gwb_status st;

	if ((st = op_spmm(oA, X, T, b)) || (st = op_spmm(oT, T, Yc, b)) ||
	    (st = op_axpby(oT, len, -c * sigma1 / e, X, 0, NULL, sigma1 / e, Yc)))
		return st;
	for (int i = 2; i <= d; i++) {
		double sigma2 = 1 / (tau - sigma);
		if ((st = op_spmm(oA, Yc, T, b)) || (st = op_spmm(oT, T, Yn, b)) ||
		    (st = op_axpby(oT, len, -2 * sigma2 * c / e, Yc, -sigma * sigma2, X,
				   2 * sigma2 / e, Yn)))
			return st;
		double *t = X;
		X = Yc;
		Yc = Yn;
		Yn = t;
		sigma = sigma2;
		if (i % 8 == 0 && (st = check_intr(opfn(oT))))
			return st;
	}
	return Yc == V ? GWB_OK : op_copy(oT, V, Yc, len);
}

/* Column norms of the n x k block T (through its Gram matrix's diagonal). */
static gwb_status col_norms(ops *o, const double *T, int k, double *G, double *nrm)
{
	gwb_status st = op_gemm_tn(o, T, k, T, k, G);
	for (int i = 0; !st && i < k; i++)
		nrm[i] = sqrt(fabs(G[i + (size_t)i * k]));
	return st;
}

gwb_status gwb_svd_sparse(const gwb_csr *A, const gwb_svd_opts *opt, gwb_eigen **out)
{
	int64_t at[2], rows = A->rows, cols = A->cols, p = rows < cols ? rows : cols;
	int k = opt->k, b = opt->block, maxit = opt->maxiter > 0 ? opt->maxiter : 5000;
	double t0 = gwb_now(), tx = 0;
	gwb_csr *At = NULL;
	gwb_eigen *e = NULL;
	ops oA = {0}, oT = {0};
	gwb_backend be;
	char why[160] = "";
	gwb_status st;
	double *V = NULL, *Z = NULL, *Y = NULL, *Q = NULL, *Tm = NULL, *Tn = NULL;
	double *R = NULL, *s = NULL, *Ur = NULL, *Wr = NULL, *C = NULL, *G = NULL, *r1 = NULL,
	       *r2 = NULL;
	int it = 0, fdeg = 0;
	bool conv = false;

	*out = NULL;
	if (rows < 1 || cols < 1)
		return gwb_error(GWB_EINVAL, "eig.svd: the matrix is empty (%lldx%lld)",
				 (long long)rows, (long long)cols);
	if (k < 1 || k > p)
		return gwb_error(GWB_EINVAL, "eig.svd: k must be in [1, min(rows, cols)] = [1, %lld] for "
				 "this %lldx%lld matrix (got k = %d)", (long long)p, (long long)rows,
				 (long long)cols, k);
	if (!(opt->tol > 0) || opt->tol >= 1)
		return gwb_error(GWB_EINVAL, "eig.svd: tol must be in (0, 1) (got %g)", opt->tol);
	if (gwb_csr_has_nonfinite(A, at))
		return gwb_error(GWB_EINVAL, "eig.svd: the matrix has a NaN or Inf at (%lld, %lld) "
				 "(1-based); clean the data first", (long long)at[0] + 1,
				 (long long)at[1] + 1);
	if (b <= 0)
		b = k + (k > 10 ? k : 10);
	if (b > p)
		b = (int)p;
	if (b < k)
		return gwb_error(GWB_EINVAL, "eig.svd: block must be >= k (got block = %d, k = %d)", b, k);
	double bytes = (double)gwb_csr_bytes(A) * 2 * 50 + (double)(rows + cols) * 8 * 4 * b;
	if (A->gpu && opt->backend == GWB_BACKEND_AUTO) {
		be = GWB_BACKEND_GPU;
		snprintf(why, sizeof(why), "auto: the matrix is on the GPU");
	} else if ((st = gwb_backend_choose(opt->backend, bytes, 0, &be, why, sizeof(why)))) {
		return st;
	}
	if ((st = gwb_csr_transpose(A, &At)))
		return st;
	if ((st = gwb_eigen_new((size_t)cols, (size_t)rows, (size_t)k, 1, opt->vectors, true, &e)))
		goto out;
	oA.A = (gwb_csr *)A;
	oA.n = rows;
	oT.A = At;
	oT.n = cols;
	oA.sign = oT.sign = 1.0;
	oA.fn = oT.fn = "eig.svd";
	{
		const char *pe = getenv("GWB_EIG_PROF");
		oA.prof = oT.prof = pe && *pe && strcmp(pe, "0");
	}
#ifdef GWB_HAVE_CUDA
	if (be == GWB_BACKEND_GPU) {
		double t1 = gwb_now();
		if (A->gpu)
			oA.g = A->gpu;  /* resident: used in place */
		else if ((st = gwb_gpu_csr_upload(A, &oA.g)))
			goto out;
		if ((st = gwb_gpu_csr_upload(At, &oT.g)))
			goto out;
		oA.gpu = oT.gpu = true;
		if (!gwb_switch_on(GWB_SW_SPMV_OURS))
			oA.spmv_kind = oT.spmv_kind = GWB_SPMV_CUSPARSE;
		tx += gwb_now() - t1;
	}
#endif
	/* n-length blocks on oT, m-length on oA */
	if ((st = op_alloc(&oT, (size_t)cols * b, &V)) || (st = op_alloc(&oT, (size_t)cols * b, &Z)) ||
	    (st = op_alloc(&oT, (size_t)cols * b, &Tn)) || (st = op_alloc(&oA, (size_t)rows * b, &Y)) ||
	    (st = op_alloc(&oA, (size_t)rows * b, &Q)) || (st = op_alloc(&oA, (size_t)rows * b, &Tm)))
		goto out;
	R = malloc((size_t)b * b * sizeof(double));
	Ur = malloc((size_t)b * b * sizeof(double));
	Wr = malloc((size_t)b * b * sizeof(double));
	C = malloc((size_t)b * b * sizeof(double));
	G = malloc((size_t)b * b * sizeof(double));
	s = malloc((size_t)b * sizeof(double));
	r1 = malloc((size_t)b * sizeof(double));
	r2 = malloc((size_t)b * sizeof(double));
	if (!R || !Ur || !Wr || !C || !G || !s || !r1 || !r2) {
		st = gwb_error(GWB_ENOMEM, "eig.svd: out of memory");
		goto out;
	}
	gwb_progress_begin("eig.svd", 0);
	if ((st = random_block(&oT, V, b, opt->seed)) || (st = op_qr(&oT, V, b, R)))
		goto done;
	double smax = 0;
	for (it = 1; it <= maxit; it++) {
		if ((st = check_intr("eig.svd")))
			goto done;
		/* Y = A V = Q R; R = Ur S Wr^T: u = Q Ur, v = V Wr, A v = s u */
		if ((st = op_spmm(&oA, V, Y, b)) || (st = op_copy(&oA, Q, Y, (size_t)rows * b)) ||
		    (st = op_qr(&oA, Q, b, R)) || (st = small_svd(R, b, s, Ur, Wr)))
			goto done;
		smax = s[0] > smax ? s[0] : smax;
		double scale = smax > 0 ? smax : 1;
		/* Z = A^T Q; residuals of the first k: A v - s u = Y Wr - Q Ur S and
		 * A^T u - s v = Z Ur - V Wr S */
		if ((st = op_spmm(&oT, Q, Z, b)))
			goto done;
		for (int j = 0; j < k; j++)
			for (int i = 0; i < b; i++)
				C[i + (size_t)j * b] = -Ur[i + (size_t)j * b] * s[j];
		if ((st = op_gemm_nn(&oA, Y, b, Wr, k, 0.0, Tm)) ||
		    (st = op_gemm_nn(&oA, Q, b, C, k, 1.0, Tm)) || (st = col_norms(&oA, Tm, k, G, r1)))
			goto done;
		for (int j = 0; j < k; j++)
			for (int i = 0; i < b; i++)
				C[i + (size_t)j * b] = -Wr[i + (size_t)j * b] * s[j];
		if ((st = op_gemm_nn(&oT, Z, b, Ur, k, 0.0, Tn)) ||
		    (st = op_gemm_nn(&oT, V, b, C, k, 1.0, Tn)) || (st = col_norms(&oT, Tn, k, G, r2)))
			goto done;
		int nconv = 0;
		double mx = 0;
		for (int i = 0; i < k; i++) {
			double r = fmax(r1[i], r2[i]) / scale;
			if (r <= opt->tol && nconv == i)
				nconv++;
			mx = r > mx ? r : mx;
		}
		if ((st = gwb_eigen_history_push(e, it, nconv, mx)))
			goto done;
		gwb_progress_update(it, "residual", mx);
		conv = nconv == k;
		if (conv || it == maxit)
			break;
		/* next V: an orthonormal basis of p(A^T A) A^T Q, p a Chebyshev polynomial that
		 * damps [0, s_b^2] (s_b: the smallest singular value the block sees) */
		if ((st = op_copy(&oT, V, Z, (size_t)cols * b)))
			goto done;
		int d = svd_filter_degree(s, k, b);
		if (d >= 2 && (st = svd_filter(&oA, &oT, V, Z, Tn, Tm, b, d, s[b - 1] * s[b - 1],
					       s[0] * s[0])))
			goto done;
		if (d >= 2)
			fdeg = d;
		if ((st = op_qr(&oT, V, b, R)))
			goto done;
	}
	if (it > maxit)
		it = maxit;
	{
		double scale = smax > 0 ? smax : 1;
		for (int i = 0; i < k; i++) {
			e->values[i] = s[i];
			e->residuals[i] = fmax(r1[i], r2[i]) / scale;
		}
	}
	if (opt->vectors) {
		/* u = Q Ur(:, 1:k) into Tm, v = V Wr(:, 1:k) into Tn, then to the host */
		double t1;
		if ((st = op_gemm_nn(&oA, Q, b, Ur, k, 0.0, Tm)) ||
		    (st = op_gemm_nn(&oT, V, b, Wr, k, 0.0, Tn)))
			goto done;
		t1 = gwb_now();
		if ((st = op_get(&oA, e->left, Tm, (size_t)rows * k)) ||
		    (st = op_get(&oT, e->vectors, Tn, (size_t)cols * k)))
			goto done;
		if (oA.gpu)  /* on the CPU op_get is a copy in memory, not a transfer */
			tx += gwb_now() - t1;
		/* orthogonality: the larger of ||V^T V - I||_max and ||U^T U - I||_max (G is b x b,
		 * k <= b) */
		double orth = 0;
		for (int side = 0; side < 2; side++) {
			if ((st = side ? op_gemm_tn(&oA, Tm, k, Tm, k, G) : op_gemm_tn(&oT, Tn, k, Tn, k, G)))
				goto done;
			for (int j = 0; j < k; j++)
				for (int i = 0; i < k; i++) {
					double x = fabs(G[i + (size_t)j * k] - (i == j));
					if (!(x <= orth))
						orth = x;   /* NaN too */
				}
		}
		e->orthogonality = orth;
	}
	gwb_eigen_update_max(e);
	e->iterations = it;
	e->converged = conv;
	snprintf(e->method, sizeof(e->method), "randomized");
	snprintf(e->backend, sizeof(e->backend), "%s", oA.gpu ? "gpu" : "cpu");
	snprintf(e->note, sizeof(e->note), "randomized SVD, block %d, %d iterations, Chebyshev "
		 "degree %d on A^T A, %s QR; %ld products; ||A||_2 ~ %.6g", b, it, fdeg,
		 oA.gpu ? "cuSOLVER" : "LAPACK", oA.spmv + oT.spmv, smax);
done:
	gwb_progress_end();
out:
	if (!st && (oA.prof || oT.prof)) {
		fprintf(stderr, "eig.svd phases (%s, %ld + %ld products):", oA.gpu ? "gpu" : "cpu",
			oA.spmv, oT.spmv);
		for (int q = 0; q < PH_COUNT; q++)
			fprintf(stderr, " %s %.1f ms;", q == PH_SYEV ? "QR + small SVD" : ph_names[q],
				(oA.ph[q] + oT.ph[q]) * 1e3);
		fprintf(stderr, " total %.1f ms\n", (gwb_now() - t0) * 1e3);
	}
	op_free(&oT, V);
	op_free(&oT, Z);
	op_free(&oT, Tn);
	op_free(&oA, Y);
	op_free(&oA, Q);
	op_free(&oA, Tm);
#ifdef GWB_HAVE_CUDA
	if (oA.g && oA.g != A->gpu)
		gwb_gpu_csr_free(oA.g);
	if (oT.g)
		gwb_gpu_csr_free(oT.g);
#endif
	gwb_csr_free(At);
	free(R);
	free(Ur);
	free(Wr);
	free(C);
	free(G);
	free(s);
	free(r1);
	free(r2);
	if (st) {
		gwb_eigen_free(e);
		return st;
	}
	e->total_ms = (gwb_now() - t0) * 1e3;
	e->transfer_ms = tx * 1e3;
	e->kernel_ms = e->total_ms - e->transfer_ms;
	*out = e;
	return GWB_OK;
}
