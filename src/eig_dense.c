/* eig_dense.c - eigenpairs of dense symmetric matrices and batches of them, and the SVD of
 * general dense matrices: LAPACK through the Fortran ABI on the CPU (batches spread over
 * pthreads), a cyclic Jacobi reference, f32 solves refined to f64, and the GPU paths
 * (kernels/eig.h) behind GWB_HAVE_CUDA. Every result gets residuals and orthogonality when
 * vectors are kept. */
#define _GNU_SOURCE
#include "eig.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blas.h"
#include "dense.h"
#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#include "pool.h"
#include "lapack.h"
#include "switches.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/eig.h"
#endif

/* LAPACK and BLAS, Fortran ABI (gfortran: hidden string lengths appended as size_t). */
extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
		    double *w, double *work, const int *lwork, int *iwork, const int *liwork,
		    int *info, size_t, size_t);
extern void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda,
		    float *w, float *work, const int *lwork, int *iwork, const int *liwork,
		    int *info, size_t, size_t);
extern void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n,
		    double *a, const int *lda, const double *vl, const double *vu, const int *il,
		    const int *iu, const double *abstol, int *m, double *w, double *z,
		    const int *ldz, int *isuppz, double *work, const int *lwork, int *iwork,
		    const int *liwork, int *info, size_t, size_t, size_t);
extern void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda,
		    double *s, double *u, const int *ldu, double *vt, const int *ldvt, double *work,
		    const int *lwork, int *iwork, int *info, size_t);

static const char *const method_names[GWB_DM_COUNT] = {
	"auto", "syevd", "syevr", "jacobi", "mixed", "cusolver",
};

const char *gwb_dense_method_name(gwb_dense_method m)
{
	return (unsigned)m < GWB_DM_COUNT ? method_names[m] : "?";
}

gwb_status gwb_dense_method_parse(const char *s, gwb_dense_method *out)
{
	int i;

	for (i = 0; i < GWB_DM_COUNT; i++)
		if (!strcmp(s, method_names[i])) {
			*out = (gwb_dense_method)i;
			return GWB_OK;
		}
	if (!strcmp(s, "lapack")) {
		*out = GWB_DM_SYEVD;
		return GWB_OK;
	}
	return gwb_error(GWB_EINVAL, "method must be one of auto, syevd (or lapack), syevr, jacobi, "
			 "mixed, cusolver for a dense matrix (got \"%s\")", s);
}

void gwb_dense_opts_default(gwb_dense_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->which = GWB_END_SMALLEST;
	o->method = GWB_DM_AUTO;
	o->backend = GWB_BACKEND_AUTO;
	o->vectors = true;
	o->residuals = true;
	o->dtype = -1;
	gwb_gpu_set_default(&o->gpus);
}

static int dgemm(char ta, char tb, int m, int n, int k, double alpha, const double *a, int lda,
		 const double *b, int ldb, double beta, double *c, int ldc)
{
	dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
	return 0;
}

/* --- LAPACK wrappers (column-major, overwrite a) ------------------------------------------ */

static gwb_status lapack_dsyevd(int n, double *a, double *w, bool vectors, char uplo)
{
	char jobz = vectors ? 'V' : 'N';
	int lwork = -1, liwork = -1, info = 0, iw = 0;
	double wq = 0;
	double *work;
	int *iwork;

	dsyevd_(&jobz, &uplo, &n, a, &n, w, &wq, &lwork, &iw, &liwork, &info, 1, 1);
	if (info)
		return gwb_error(GWB_EINVAL, "dsyevd workspace query failed (info %d)", info);
	lwork = (int)wq + 1;
	liwork = iw + 1;
	work = malloc((size_t)lwork * sizeof(double));
	iwork = malloc((size_t)liwork * sizeof(int));
	if (!work || !iwork) {
		free(work);
		free(iwork);
		return gwb_error(GWB_ENOMEM, "out of memory: dsyevd needs %.1f MiB of workspace",
				 ((double)lwork * 8 + (double)liwork * 4) / 1048576.0);
	}
	dsyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	free(work);
	free(iwork);
	if (info > 0)
		return gwb_error(GWB_ENOCONV, "LAPACK dsyevd did not converge (info %d); try "
				 "method = \"jacobi\"", info);
	if (info < 0)
		return gwb_error(GWB_EINVAL, "LAPACK dsyevd: bad argument %d", -info);
	return GWB_OK;
}

static gwb_status lapack_ssyevd(int n, float *a, float *w, bool vectors)
{
	char jobz = vectors ? 'V' : 'N', uplo = 'L';
	int lwork = -1, liwork = -1, info = 0, iw = 0;
	float wq = 0;
	float *work;
	int *iwork;

	ssyevd_(&jobz, &uplo, &n, a, &n, w, &wq, &lwork, &iw, &liwork, &info, 1, 1);
	if (info)
		return gwb_error(GWB_EINVAL, "ssyevd workspace query failed (info %d)", info);
	lwork = (int)wq + 1;
	liwork = iw + 1;
	work = malloc((size_t)lwork * sizeof(float));
	iwork = malloc((size_t)liwork * sizeof(int));
	if (!work || !iwork) {
		free(work);
		free(iwork);
		return gwb_error(GWB_ENOMEM, "out of memory: ssyevd workspace");
	}
	ssyevd_(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	free(work);
	free(iwork);
	if (info > 0)
		return gwb_error(GWB_ENOCONV, "LAPACK ssyevd did not converge (info %d)", info);
	if (info < 0)
		return gwb_error(GWB_EINVAL, "LAPACK ssyevd: bad argument %d", -info);
	return GWB_OK;
}

/* Eigenpairs il..iu (1-based) through dsyevr; w and z receive iu-il+1 of them. */
static gwb_status lapack_dsyevr(int n, double *a, int il, int iu, double *w, double *z,
				bool vectors)
{
	char jobz = vectors ? 'V' : 'N', range = 'I', uplo = 'L';
	int lwork = -1, liwork = -1, info = 0, iw = 0, m = 0, ldz = n;
	double wq = 0, vl = 0, vu = 0, abstol = 0;
	double *work = NULL, *zz = z;
	int *iwork = NULL, *isuppz = NULL;
	gwb_status rc = GWB_OK;

	isuppz = malloc(2 * (size_t)n * sizeof(int));
	if (!isuppz)
		return gwb_error(GWB_ENOMEM, "out of memory: dsyevr");
	if (!vectors) {
		zz = &wq;  /* not referenced */
		ldz = 1;
	}
	dsyevr_(&jobz, &range, &uplo, &n, a, &n, &vl, &vu, &il, &iu, &abstol, &m, w, zz, &ldz, isuppz,
		&wq, &lwork, &iw, &liwork, &info, 1, 1, 1);
	if (info) {
		rc = gwb_error(GWB_EINVAL, "dsyevr workspace query failed (info %d)", info);
		goto out;
	}
	lwork = (int)wq + 1;
	liwork = iw + 1;
	work = malloc((size_t)lwork * sizeof(double));
	iwork = malloc((size_t)liwork * sizeof(int));
	if (!work || !iwork) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: dsyevr workspace");
		goto out;
	}
	dsyevr_(&jobz, &range, &uplo, &n, a, &n, &vl, &vu, &il, &iu, &abstol, &m, w, zz, &ldz, isuppz,
		work, &lwork, iwork, &liwork, &info, 1, 1, 1);
	if (info > 0)
		rc = gwb_error(GWB_ENOCONV, "LAPACK dsyevr failed (info %d); try method = \"syevd\"",
			       info);
	else if (info < 0)
		rc = gwb_error(GWB_EINVAL, "LAPACK dsyevr: bad argument %d", -info);
	else if (m != iu - il + 1)
		rc = gwb_error(GWB_ENOCONV, "LAPACK dsyevr returned %d pairs, expected %d", m,
			       iu - il + 1);
out:
	free(work);
	free(iwork);
	free(isuppz);
	return rc;
}

/* Pairs 1..k and n-k+1..n (w, z: 2k of them, smallest end first) of a (column-major, lower
 * triangle; destroyed) with dsyevr's own steps run so that the tridiagonal reduction, most
 * of the cost, happens once for both ends: dsytrd, dstemr (MRRR) at each end, dormtr. */
static gwb_status lapack_both_ends(int n, double *a, int k, double *w, double *z, bool vectors)
{
	char uplo = 'L', jobz = vectors ? 'V' : 'N', range = 'I', side = 'L', trans = 'N';
	int lwork = -1, liwork = -1, info = 0, iw = 0, m = 0, end, k2 = 2 * k, tryrac = 1;
	int ldz = vectors ? n : 1, lw_trd, lw_mr, lw_or = 0;
	double wq = 0, vl = 0, vu = 0, dz = 0;
	double *d = malloc(5 * (size_t)n * sizeof(double)), *e = d ? d + n : NULL;
	double *d2 = d ? d + 2 * (size_t)n : NULL, *e2 = d ? d + 3 * (size_t)n : NULL;
	double *wt = d ? d + 4 * (size_t)n : NULL;   /* dstemr's W: n entries, not just m */
	double *tau = malloc((size_t)n * sizeof(double)), *work = NULL;
	int *iwork = NULL, *isuppz = malloc(2 * (size_t)n * sizeof(int));
	gwb_status rc = GWB_OK;

	if (!d || !tau || !isuppz) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: subset solve of order %d", n);
		goto out;
	}
	dsytrd_(&uplo, &n, a, &n, d, e, tau, &wq, &lwork, &info, 1);
	lw_trd = (int)wq + 1;
	{
		int il = 1;
		dstemr_(&jobz, &range, &n, d2, e2, &vl, &vu, &il, &k, &m, wt, vectors ? z : &dz, &ldz,
			&k, isuppz, &tryrac, &wq, &lwork, &iw, &liwork, &info, 1, 1);
	}
	if (info) {
		rc = gwb_error(GWB_EINVAL, "dstemr workspace query failed (info %d)", info);
		goto out;
	}
	lw_mr = (int)wq + 1;
	liwork = iw + 1;
	if (vectors) {
		dormtr_(&side, &uplo, &trans, &n, &k2, a, &n, tau, z, &n, &wq, &lwork, &info, 1, 1, 1);
		lw_or = (int)wq + 1;
	}
	lwork = lw_trd > lw_mr ? lw_trd : lw_mr;
	if (lw_or > lwork)
		lwork = lw_or;
	work = malloc((size_t)lwork * sizeof(double));
	iwork = malloc((size_t)liwork * sizeof(int));
	if (!work || !iwork) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: subset solve workspace");
		goto out;
	}
	dsytrd_(&uplo, &n, a, &n, d, e, tau, work, &lwork, &info, 1);
	if (info) {
		rc = gwb_error(GWB_EINVAL, "LAPACK dsytrd: bad argument %d", -info);
		goto out;
	}
	for (end = 0; end < 2; end++) {
		int il = end ? n - k + 1 : 1, iu = end ? n : k;
		memcpy(d2, d, (size_t)n * sizeof(double));
		memcpy(e2, e, (size_t)(n - 1) * sizeof(double));
		e2[n - 1] = 0;
		tryrac = 1;
		dstemr_(&jobz, &range, &n, d2, e2, &vl, &vu, &il, &iu, &m, wt,
			vectors ? z + (size_t)end * k * n : &dz, &ldz, &k, isuppz, &tryrac, work,
			&lwork, iwork, &liwork, &info, 1, 1);
		if (info || m != k) {
			rc = gwb_error(GWB_ENOCONV, "LAPACK dstemr failed (info %d, %d of %d pairs); "
				       "try method = \"syevd\"", info, m, k);
			goto out;
		}
		memcpy(w + end * k, wt, (size_t)k * sizeof(double));
	}
	if (vectors) {
		dormtr_(&side, &uplo, &trans, &n, &k2, a, &n, tau, z, &n, work, &lwork, &info, 1, 1,
			1);
		if (info)
			rc = gwb_error(GWB_EINVAL, "LAPACK dormtr: bad argument %d", -info);
	}
out:
	free(d);
	free(tau);
	free(work);
	free(iwork);
	free(isuppz);
	return rc;
}

/* --- the cyclic Jacobi reference ----------------------------------------------------------- */

static double off_norm(size_t n, const double *a)
{
	double s = 0.0, c = 0.0;
	size_t i, j;

	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++) {
			double t, u;
			if (i == j)
				continue;
			t = a[j * n + i] * a[j * n + i];
			u = s + t;
			c += s >= t ? (s - u) + t : (t - u) + s;
			s = u;
		}
	return sqrt(s + c);
}

/* The cyclic Jacobi sweeps; hist (may be NULL) receives one entry per sweep: the sweep,
 * whether it rotated nothing, and the off-diagonal norm relative to ||A||_F. */
static gwb_status jacobi_ref(size_t n, double *a, double *w, double *V, double tol,
			     int max_sweeps, int *sweeps, gwb_eigen *hist);

gwb_status gwb_eig_jacobi_ref(size_t n, double *a, double *w, double *V, double tol,
			      int max_sweeps, int *sweeps)
{
	return jacobi_ref(n, a, w, V, tol, max_sweeps, sweeps, NULL);
}

static gwb_status jacobi_ref(size_t n, double *a, double *w, double *V, double tol,
			     int max_sweeps, int *sweeps, gwb_eigen *hist)
{
	size_t p, q, r, i;
	double nrm = 0.0, tiny;
	int sweep, rotations = 1;

	if (tol <= 0)
		tol = DBL_EPSILON;
	if (max_sweeps <= 0)
		max_sweeps = 50;
	if (V) {
		memset(V, 0, n * n * sizeof(double));
		for (i = 0; i < n; i++)
			V[i * n + i] = 1.0;
	}
	for (i = 0; i < n * n; i++)
		nrm += a[i] * a[i];
	nrm = sqrt(nrm);
	tiny = 1e-2 * DBL_EPSILON * nrm / (double)(n ? n : 1);
	for (sweep = 0; sweep < max_sweeps && rotations; sweep++) {
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "interrupted");
		rotations = 0;
		for (p = 0; p + 1 < n; p++)
			for (q = p + 1; q < n; q++) {
				double apq = a[q * n + p], app = a[p * n + p], aqq = a[q * n + q];
				double theta, t, c, s;
				if (fabs(apq) <= tol * sqrt(fabs(app * aqq)) || fabs(apq) <= tiny)
					continue;
				rotations++;
				theta = (aqq - app) / (2.0 * apq);
				if (fabs(theta) > 1e150)
					t = 0.5 / theta;
				else
					t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(1.0 + theta * theta));
				c = 1.0 / sqrt(1.0 + t * t);
				s = t * c;
				/* Columns p and q, then rows p and q (symmetric: keep both halves). */
				for (r = 0; r < n; r++) {
					double x = a[p * n + r], y = a[q * n + r];
					a[p * n + r] = c * x - s * y;
					a[q * n + r] = s * x + c * y;
				}
				for (r = 0; r < n; r++) {
					double x = a[r * n + p], y = a[r * n + q];
					a[r * n + p] = c * x - s * y;
					a[r * n + q] = s * x + c * y;
				}
				a[q * n + p] = a[p * n + q] = 0.0;
				if (V)
					for (r = 0; r < n; r++) {
						double x = V[p * n + r], y = V[q * n + r];
						V[p * n + r] = c * x - s * y;
						V[q * n + r] = s * x + c * y;
					}
			}
		if (hist) {
			double off = off_norm(n, a) / (nrm > 0 ? nrm : 1.0);
			gwb_status hrc = gwb_eigen_history_push(hist, sweep + 1, rotations ? 0 : (int)n,
								off);
			if (hrc)
				return hrc;
			gwb_progress_update((double)(sweep + 1), "off-diagonal", off);
		}
	}
	if (sweeps)
		*sweeps = sweep;
	/* Sort ascending (selection sort moving vectors). */
	for (i = 0; i < n; i++)
		w[i] = a[i * n + i];
	for (p = 0; p + 1 < n; p++) {
		size_t best = p;
		for (q = p + 1; q < n; q++)
			if (w[q] < w[best])
				best = q;
		if (best != p) {
			double t = w[p];
			w[p] = w[best];
			w[best] = t;
			if (V)
				for (r = 0; r < n; r++) {
					t = V[p * n + r];
					V[p * n + r] = V[best * n + r];
					V[best * n + r] = t;
				}
		}
	}
	if (rotations)
		return gwb_error(GWB_ENOCONV, "Jacobi did not converge in %d sweeps (off-diagonal "
				 "norm %.3g relative)", max_sweeps, off_norm(n, a) / (nrm > 0 ? nrm : 1));
	return GWB_OK;
}

/* --- mixed precision: f32 solve, then f64 refinement ------------------------------------- */

/* Refine approximate eigenvectors Q (n x n column-major f64, orthogonal to f32 accuracy) of the
 * f64 matrix a: orthogonalize Q by two Newton-Schulz steps (Q <- Q (3I - Q^T Q) / 2), rotate
 * B = Q^T A Q (nearly diagonal), finish with Jacobi on B (quadratic convergence from there),
 * V = Q W. w, V receive the f64 pairs. */
static gwb_status refine_f64(int n, const double *a, double *Q, double *w, double *V,
			     int *sweeps)
{
	size_t nn = (size_t)n * n;
	double *T = malloc(nn * sizeof(double)), *Q2 = malloc(nn * sizeof(double));
	double *W = malloc(nn * sizeof(double));
	gwb_status rc = GWB_OK;
	int it, i;

	if (!T || !Q2 || !W) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: f64 refinement of order %d", n);
		goto out;
	}
	for (it = 0; it < 2; it++) {
		dgemm('T', 'N', n, n, n, 1.0, Q, n, Q, n, 0.0, T, n);
		for (i = 0; i < n; i++)
			T[(size_t)i * n + i] -= 3.0;
		/* Q2 = Q * (-(T - 3I)) / 2 = Q (3I - Q^T Q) / 2 */
		dgemm('N', 'N', n, n, n, -0.5, Q, n, T, n, 0.0, Q2, n);
		memcpy(Q, Q2, nn * sizeof(double));
	}
	dgemm('N', 'N', n, n, n, 1.0, a, n, Q, n, 0.0, T, n);   /* T = A Q */
	dgemm('T', 'N', n, n, n, 1.0, Q, n, T, n, 0.0, Q2, n);  /* Q2 = Q^T A Q */
	/* Symmetrize the rounding. */
	for (i = 0; i < n; i++) {
		int j;
		for (j = i + 1; j < n; j++) {
			double s = 0.5 * (Q2[(size_t)j * n + i] + Q2[(size_t)i * n + j]);
			Q2[(size_t)j * n + i] = Q2[(size_t)i * n + j] = s;
		}
	}
	rc = gwb_eig_jacobi_ref((size_t)n, Q2, w, W, 0, 20, sweeps);
	if (rc)
		goto out;
	dgemm('N', 'N', n, n, n, 1.0, Q, n, W, n, 0.0, V, n);
out:
	free(T);
	free(Q2);
	free(W);
	return rc;
}

/* All pairs of one matrix, f64 column-major a (destroyed), on the CPU. */
static gwb_status cpu_all_pairs(gwb_dense_method m, int n, double *a, const gwb_matrix *A,
				size_t b, double tol, int max_sweeps, double *w, double *V,
				int *iters, gwb_eigen *hist)
{
	gwb_status rc;

	*iters = 0;
	switch (m) {
	case GWB_DM_JACOBI:
		return jacobi_ref((size_t)n, a, w, V, tol, max_sweeps, iters, hist);
	case GWB_DM_MIXED: {
		size_t nn = (size_t)n * n, i;
		float *s = malloc(nn * sizeof(float)), *ws = malloc((size_t)n * sizeof(float));
		double *Q = malloc(nn * sizeof(double)), *Vt = V ? NULL : malloc(nn * sizeof(double));
		if (!s || !ws || !Q || (!V && !Vt)) {
			rc = gwb_error(GWB_ENOMEM, "out of memory: mixed-precision solve of order %d", n);
		} else {
			/* Solve 2^-e A (largest entry near 1; scaling by a power of two is exact)
			 * and scale the values back: entries far outside the f32 range (1e+-160)
			 * neither overflow nor flush to zero in the f32 solve, nor overflow the
			 * squares of the f64 Jacobi finish. a is ours to change. */
			double mx = 0;
			int ex = 0;
			for (i = 0; i < nn; i++)
				mx = fmax(mx, fabs(a[i]));
			if (mx > 0 && isfinite(mx))
				frexp(mx, &ex);
			for (i = 0; i < nn; i++) {
				a[i] = ldexp(a[i], -ex);
				s[i] = (float)a[i];
			}
			rc = lapack_ssyevd(n, s, ws, true);
			if (!rc) {
				for (i = 0; i < nn; i++)
					Q[i] = s[i];
				rc = refine_f64(n, a, Q, w, V ? V : Vt, iters);
			}
			for (i = 0; !rc && i < (size_t)n; i++)
				w[i] = ldexp(w[i], ex);
		}
		(void)A;
		(void)b;
		free(s);
		free(ws);
		free(Q);
		free(Vt);
		return rc;
	}
	default:
		rc = lapack_dsyevd(n, a, w, V != NULL, 'L');
		if (!rc && V)
			memcpy(V, a, (size_t)n * n * sizeof(double));
		return rc;
	}
}

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
static gwb_status dense_check(gwb_eigen *e, size_t b, const gwb_matrix *A, size_t ab,
			      double *orth)
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
	dgemm(ta, 'N', (int)n, (int)k, (int)n, 1.0, src, (int)n, V, (int)n, 1.0, R, (int)n);
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

static void fold_orth(gwb_eigen *e, double o)
{
	if (o == o && (e->orthogonality != e->orthogonality || o > e->orthogonality))
		e->orthogonality = o;
}

gwb_status gwb_eig_dense_check(gwb_eigen *e, size_t b, const gwb_matrix *A, size_t ab)
{
	double o;
	gwb_status rc = dense_check(e, b, A, ab, &o);

	if (!rc) {
		fold_orth(e, o);
		gwb_eigen_update_max(e);
	}
	return rc;
}

/* --- a small parallel-for over matrices --------------------------------------------------- */

typedef gwb_status (*item_fn)(void *ctx, size_t i);

typedef struct pfor {
	item_fn fn;
	void *ctx;
	size_t count;
	atomic_int failed;
	pthread_mutex_t lock;
	gwb_status rc;
	char msg[512];
} pfor;

static void pfor_item(void *arg, size_t i, int worker)
{
	pfor *p = arg;
	gwb_status rc;

	(void)worker;
	if (atomic_load(&p->failed))
		return;
	if (gwb_intr_pending())
		rc = gwb_error(GWB_EINTR, "interrupted");
	else
		rc = p->fn(p->ctx, i);
	if (rc) {
		pthread_mutex_lock(&p->lock);
		if (!p->rc) {
			p->rc = rc;
			snprintf(p->msg, sizeof(p->msg), "%s", gwb_errmsg());
		}
		pthread_mutex_unlock(&p->lock);
		atomic_store(&p->failed, 1);
	}
	if ((i & 63) == 0)
		gwb_progress_update((double)i, NULL, 0);
}

static int online_cpus(void)
{
	return gwb_cpu_count();
}

/* Run fn(ctx, i) for i in [0, count) on `threads` workers of the pool (0 = online CPUs). The
 * first error wins and stops the others; its message is restored on the calling thread. */
static gwb_status parallel_for(size_t count, int threads, item_fn fn, void *ctx)
{
	pfor p;

	if (threads <= 0)
		threads = online_cpus();
	memset(&p, 0, sizeof(p));
	p.fn = fn;
	p.ctx = ctx;
	p.count = count;
	atomic_init(&p.failed, 0);
	pthread_mutex_init(&p.lock, NULL);
	/* BLAS on one thread even when we run on one (blas.h): OpenBLAS spreading each call of
	 * thousands of small matrices over its own pool costs far more than the work (measured:
	 * 4.6x slower for 500 matrices of 32 even on one of our threads). */
	gwb_blas_serial_begin();
	gwb_parallel_items(threads, count, pfor_item, &p);
	pthread_mutex_destroy(&p.lock);
	gwb_blas_serial_end();
	if (p.rc)
		return gwb_error(p.rc, "%s", p.msg);
	return GWB_OK;
}

/* --- checks shared by the drivers ---------------------------------------------------------- */

static double default_sym_tol(const gwb_matrix *A)
{
	return A->dtype == GWB_F32 ? 1e-5 : 1e-10;
}

static gwb_status check_symmetric(const gwb_matrix *A, size_t b, double tol, const char *fn)
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

#ifdef GWB_HAVE_CUDA
/* The GPU mixed path converts each f64 matrix to f32 as it is (the CPU path scales first):
 * refuse matrices whose largest entry (amax, per matrix, from the device symmetry check) f32
 * cannot carry with room for the sweeps' products. */
static gwb_status check_f32_range(const gwb_matrix *A, const double *amax, const char *fn)
{
	size_t b;

	if (A->dtype != GWB_F64)
		return GWB_OK;
	for (b = 0; b < A->count; b++) {
		double mx = amax[b];
		if (mx > 1e30 || (mx > 0 && mx < 1e-30)) {
			char where[64] = "";
			if (A->count > 1)
				snprintf(where, sizeof(where), " (matrix %zu of the batch)", b + 1);
			return gwb_error(GWB_EINVAL, "%s: method \"mixed\" on the GPU solves in f32 "
					 "first, and the matrix%s has entries up to %.3g, outside the "
					 "range it can carry (1e-30 .. 1e30): use method = \"jacobi\" "
					 "(any range), backend = \"cpu\", or scale the matrix", fn,
					 where, mx);
		}
	}
	return GWB_OK;
}
#endif

static void set_str(char *dst, size_t size, const char *s)
{
	size_t i;

	for (i = 0; i + 1 < size && s[i]; i++)
		dst[i] = s[i];
	dst[i] = 0;
}

static void add_note(gwb_eigen *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append a sentence to e->note ("; " between sentences). */
static void add_note(gwb_eigen *e, const char *fmt, ...)
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

/* The symmetric matrix A (one matrix) into dst as f64 in its own storage order, and the
 * triangle LAPACK should read so that it sees A's lower one: row-major data read as
 * column-major is A^T, whose upper triangle is A's lower ("U"); column-major: "L". */
static char sym_copy_f64(const gwb_matrix *A, double *dst)
{
	size_t nn = A->rows * A->cols, i;

	if (A->dtype == GWB_F64) {
		memcpy(dst, gwb_matrix_ptr(A, 0), nn * sizeof(double));
	} else {
		const float *s = gwb_matrix_ptr(A, 0);
		for (i = 0; i < nn; i++)
			dst[i] = s[i];
	}
	return A->layout == GWB_ROW_MAJOR ? 'U' : 'L';
}

/* On the reference BLAS, the first CPU result says so (once per process) and how to install
 * OpenBLAS. */
#ifdef GWB_HAVE_CUDA
/* The operand was host-resident and crossed to the GPU for this call only: say so, with the
 * bytes, and how to keep it there (issue 12: a mixed call copies and says so). */
static void note_upload(gwb_eigen *e, const gwb_matrix *A, const char *what)
{
	char b[32];

	add_note(e, "%s is on the host: %s copied to the GPU for this call (%s:to(\"gpu\") keeps it "
		 "there for the next)", what, gwb_fmt_bytes(b, sizeof(b), (double)gwb_matrix_bytes(A)),
		 what);
}
#endif

static void note_blas(gwb_eigen *e)
{
	if (!strcmp(e->backend, "cpu") && gwb_blas_take_first_note())
		add_note(e, "%s", gwb_blas_reference_note());
}

/* --- the GPU paths ------------------------------------------------------------------------
 * The input is used where it is (a GPU-resident matrix in place, else one staged upload);
 * symmetry, residuals, orthogonality and Jacobi's sort run on the device (eig_check.cu);
 * vectors stay there (e->dvectors) until a host read. Nothing between the upload and the
 * values' copy back waits for the device except the solvers' own info checks. */
#ifdef GWB_HAVE_CUDA
/* Symmetry of every matrix on the device; the first failure is re-examined on the host for
 * the message (worst element). amax (count, may be NULL) receives max |a_ij| per matrix. */
static gwb_status gpu_symmetric(const gwb_matrix *A, const void *dA, double tol, const char *fn,
				double *amax, double *ms)
{
	size_t b, count = A->count;
	double *rel = malloc(count * sizeof(double)), t0 = gwb_now();
	gwb_status rc;

	if (!rel)
		return gwb_error(GWB_ENOMEM, "out of memory");
	rc = gwb_gpu_sym_check(dA, A->dtype, count, (int)A->rows, rel, amax);
	for (b = 0; !rc && b < count; b++)
		if (!(rel[b] <= tol)) {
			if (!(rc = gwb_matrix_host(A)) && !(rc = check_symmetric(A, b, tol, fn)))
				rc = gwb_error(GWB_EINVAL, "%s: matrix %zu is not symmetric: relative "
					       "asymmetry %.3g exceeds sym_tol = %.3g", fn, b + 1,
					       rel[b], tol);
		}
	free(rel);
	*ms += (gwb_now() - t0) * 1e3;
	return rc;
}

/* Residuals and orthogonality of a result whose vectors are on the device, normalised as
 * dense_check does (max |lambda| with every pair, else ||A||_F). */
static gwb_status gpu_check(gwb_eigen *e, const gwb_matrix *A, const void *dA, const void *dV,
			    int vdtype)
{
	size_t count = e->count, k = e->k, n = e->n, b, i;
	double *normA = calloc(count, sizeof(double)), *orth = calloc(count, sizeof(double));
	gwb_status rc = GWB_OK;

	if (!normA || !orth) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out;
	}
	if (k == n) {
		for (b = 0; b < count; b++) {
			normA[b] = 0.0;
			for (i = 0; i < k; i++)
				if (fabs(e->values[b * k + i]) > normA[b])
					normA[b] = fabs(e->values[b * k + i]);
		}
	} else if ((rc = gwb_gpu_fro_norm(dA, A->dtype, count, n * n, normA))) {
		goto out;
	}
	for (b = 0; b < count; b++)
		if (normA[b] == 0.0)
			normA[b] = 1.0;
	rc = gwb_gpu_eig_check(dA, A->dtype, A->layout == GWB_ROW_MAJOR, count, (int)n, (int)k, dV,
			       vdtype, e->values, normA, e->residuals, orth, &e->check_ms);
	if (rc)
		goto out;
	for (b = 0; b < count; b++)
		fold_orth(e, orth[b]);
	gwb_eigen_update_max(e);
out:
	free(normA);
	free(orth);
	return rc;
}

/* Hand device vectors (n x k per matrix, es bytes each) to the result. */
static gwb_status gpu_keep_vectors(gwb_eigen *e, void *dV, int vdtype)
{
	size_t bytes = e->count * e->k * e->n * (vdtype ? 8 : 4);
	gwb_status rc = gwb_buf_adopt_dev(dV, bytes, "eig.vectors", &e->dvectors);

	if (rc)
		gwb_gpu_free(dV);
	e->dvec_dtype = vdtype;
	return rc;
}

/* Columns [c0, c0 + cnt) of a device n x * column-major array into dst at column `at`. */
static gwb_status dev_columns(void *dst, size_t at, const void *src, size_t n, size_t c0,
			      size_t cnt, size_t es)
{
	const gwb_buf_ops *g = gwb_buf_ops_get(GWB_DEVICE_GPU);

	if (!g)
		return GWB_ENODEV;
	return g->copy((char *)dst + at * n * es, (const char *)src + c0 * n * es, cnt * n * es);
}

static gwb_status gpu_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen *e,
			    gwb_dense_method m, bool all, size_t k, double tol, const char *fn)
{
	size_t n = A->rows, kk = e->k, es;
	bool want_v = o->vectors, tmp = false;
	const void *dA = NULL;
	void *dV = NULL, *dV2 = NULL, *sel = NULL;
	double *w = NULL, amax = 0, x0 = gwb_gpu_copy_ms(), sym_ms = 0;
	int vdtype = A->dtype;
	gwb_gpu_eig_stats st, st2;
	gwb_status rc;

	memset(&st, 0, sizeof(st));
	memset(&st2, 0, sizeof(st2));
	if (!(w = malloc(n * sizeof(double))))
		return gwb_error(GWB_ENOMEM, "out of memory");
	if ((rc = gwb_matrix_dev(A, &dA, &tmp)))
		goto out;
	if (tmp)
		note_upload(e, A, "A");
	if ((rc = gpu_symmetric(A, dA, tol, fn, &amax, &sym_ms)))
		goto out;
	if (m == GWB_DM_MIXED && (rc = check_f32_range(A, &amax, fn)))
		goto out;
	if (m == GWB_DM_JACOBI || m == GWB_DM_MIXED) {
		/* all pairs, sorted on the device */
		vdtype = m == GWB_DM_MIXED ? 1 : (int)A->dtype;
		rc = gwb_gpu_jacobi_batched(NULL, dA, A->dtype, 1, (int)n,
					    m == GWB_DM_MIXED ? 2 : (int)A->dtype, o->tol,
					    o->max_sweeps, w, NULL, want_v ? &dV : NULL, &st);
		set_str(e->method, sizeof(e->method), st.variant);
		set_str(e->dtype, sizeof(e->dtype), m == GWB_DM_MIXED ? "f32+f64" :
			gwb_dtype_name(A->dtype));
	} else if (m == GWB_DM_SYEVR && !all) {
		/* a subset by index: one call per end */
		size_t at = o->which == GWB_END_BOTH ? k : 0;
		if (o->which != GWB_END_LARGEST)
			rc = gwb_gpu_syevd(NULL, dA, A->dtype, (int)n, 1, (int)k, w, NULL,
					   want_v ? &dV : NULL, &st);
		if (!rc && o->which != GWB_END_SMALLEST)
			rc = gwb_gpu_syevd(NULL, dA, A->dtype, (int)n, (int)(n - k + 1), (int)n, w + at,
					   NULL, want_v ? &dV2 : NULL, &st2);
		set_str(e->method, sizeof(e->method), "cusolver-Xsyevdx");
		all = true;  /* w holds exactly the kk pairs wanted, in order */
	} else {
		rc = gwb_gpu_syevd(NULL, dA, A->dtype, (int)n, 0, 0, w, NULL, want_v ? &dV : NULL, &st);
		set_str(e->method, sizeof(e->method), "cusolver-Xsyevd");
	}
	if (rc)
		goto out;
	e->kernel_ms = st.kernel_ms + st2.kernel_ms + sym_ms;
	e->check_ms = sym_ms;
	e->iterations = st.sweeps;
	e->converged = st.unconverged == 0;
	/* the requested ends: values on the host, vector columns on the device */
	es = vdtype ? 8 : 4;
	if (all) {
		memcpy(e->values, w, kk * sizeof(double));
	} else if (o->which == GWB_END_SMALLEST) {
		memcpy(e->values, w, k * sizeof(double));
	} else if (o->which == GWB_END_LARGEST) {
		memcpy(e->values, w + n - k, k * sizeof(double));
	} else {
		memcpy(e->values, w, k * sizeof(double));
		memcpy(e->values + k, w + n - k, k * sizeof(double));
	}
	if (want_v) {
		bool direct = dV && !dV2 && (all || o->which == GWB_END_SMALLEST);
		if (direct) {
			sel = dV;  /* the first kk columns are the ones wanted */
			dV = NULL;
		} else {
			if ((rc = gwb_gpu_malloc(&sel, n * kk * es, "eig.vectors")))
				goto out;
			if (dV2) {  /* two subset calls */
				if (dV && (rc = dev_columns(sel, 0, dV, n, 0, k, es)))
					goto out;
				rc = dev_columns(sel, dV ? k : 0, dV2, n, 0, k, es);
			} else if (o->which == GWB_END_LARGEST) {
				rc = dev_columns(sel, 0, dV, n, n - k, k, es);
			} else {  /* both ends of a full solution */
				if (!(rc = dev_columns(sel, 0, dV, n, 0, k, es)))
					rc = dev_columns(sel, k, dV, n, n - k, k, es);
			}
			if (rc)
				goto out;
		}
		if (o->residuals && (rc = gpu_check(e, A, dA, sel, vdtype)))
			goto out;
		e->kernel_ms += e->check_ms - sym_ms;
		rc = gpu_keep_vectors(e, sel, vdtype);
		sel = NULL;
	}
out:
	e->transfer_ms = gwb_gpu_copy_ms() - x0;
	gwb_matrix_dev_done(A, dA, tmp);
	gwb_gpu_free(dV);
	gwb_gpu_free(dV2);
	gwb_gpu_free(sel);
	free(w);
	return rc;
}

static gwb_status gpu_batched(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
			      gwb_dense_method m, double tol, const char *fn)
{
	size_t n = B->rows, count = B->count;
	bool want_v = o->vectors, tmp = false;
	const void *dB = NULL;
	void *dV = NULL;
	double *amax = NULL, x0 = gwb_gpu_copy_ms(), sym_ms = 0;
	int vdtype = B->dtype;
	gwb_gpu_eig_stats st;
	gwb_status rc;

	memset(&st, 0, sizeof(st));
	if (!(amax = malloc(count * sizeof(double))))
		return gwb_error(GWB_ENOMEM, "out of memory");
	if ((rc = gwb_matrix_dev(B, &dB, &tmp)))
		goto out;
	if (tmp)
		note_upload(e, B, "B");
	if ((rc = gpu_symmetric(B, dB, tol, fn, amax, &sym_ms)))
		goto out;
	/* auto: our Jacobi kernel where it is the fastest measured (n <= 64 on an H200:
	 * 3.9 ms for 4000 f32 matrices and 6.3 ms in f64, against 8.4 and 13.5 ms for
	 * cusolverDnXsyevBatched), the library above (7.0 vs 8.0 ms at n = 128 f32, 12.4
	 * vs 15.9 in f64, 21.8 vs 55 ms at n = 256 f64; see
	 * bench/results/eig-dense-2026-11-30b.txt). method = "jacobi" forces ours. */
	if (m == GWB_DM_AUTO)
		m = n <= 64 ? GWB_DM_JACOBI : GWB_DM_CUSOLVER;
	if (m == GWB_DM_CUSOLVER || m == GWB_DM_SYEVD) {
		rc = gwb_gpu_cusolver_batched(NULL, dB, B->dtype, count, (int)n, e->values, NULL,
					      want_v ? &dV : NULL, &st);
	} else if (m == GWB_DM_MIXED && (rc = check_f32_range(B, amax, fn))) {
		goto out;
	} else {
		vdtype = m == GWB_DM_MIXED ? 1 : (int)B->dtype;
		rc = gwb_gpu_jacobi_batched(NULL, dB, B->dtype, count, (int)n,
					    m == GWB_DM_MIXED ? 2 : (int)B->dtype, o->tol,
					    o->max_sweeps, e->values, NULL, want_v ? &dV : NULL, &st);
	}
	if (rc)
		goto out;
	set_str(e->method, sizeof(e->method), st.variant);
	e->kernel_ms = st.kernel_ms + sym_ms;
	e->check_ms = sym_ms;
	e->iterations = st.sweeps;
	e->converged = st.unconverged == 0;
	if (dV) {
		if (o->residuals && (rc = gpu_check(e, B, dB, dV, vdtype)))
			goto out;
		e->kernel_ms += e->check_ms - sym_ms;
		rc = gpu_keep_vectors(e, dV, vdtype);
		dV = NULL;
	}
out:
	e->transfer_ms = gwb_gpu_copy_ms() - x0;
	gwb_matrix_dev_done(B, dB, tmp);
	gwb_gpu_free(dV);
	free(amax);
	return rc;
}
#endif

/* --- one dense matrix -------------------------------------------------------------------- */

/* Copy pairs [lo, lo + cnt) of a full solution (w, V column-major n x n) into slot `at` of e. */
static void take_pairs(gwb_eigen *e, size_t at, const double *w, const double *V, size_t lo,
		       size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt; i++) {
		e->values[at + i] = w[lo + i];
		if (e->vectors && V)
			memcpy(gwb_eigen_vector(e, 0, at + i), V + (lo + i) * e->n, e->n * sizeof(double));
	}
}

/* Where a dense operation runs: the chooser's answer, except that "auto" follows a
 * GPU-resident input to the GPU, and an explicit "cpu" on one copies it back (and says so). */
static gwb_status choose_dense(const gwb_matrix *A, gwb_backend req, double bytes,
			       double min_bytes, gwb_backend *be, char *why, size_t why_size)
{
	gwb_status rc;

	if (gwb_matrix_device(A) == GWB_DEVICE_GPU && req == GWB_BACKEND_AUTO) {
		*be = GWB_BACKEND_GPU;
		snprintf(why, why_size, "auto: the matrix is on the GPU");
		return GWB_OK;
	}
	rc = gwb_backend_choose(req, bytes, min_bytes, be, why, why_size);
	if (!rc && *be == GWB_BACKEND_CPU && gwb_matrix_device(A) == GWB_DEVICE_GPU) {
		/* a GPU-resident operand on the CPU backend: its host copy, copied only if stale */
		size_t l = strlen(why);
		char b[32];
		bool current = A->data && A->buf->host_valid;
		gwb_fmt_bytes(b, sizeof(b), (double)gwb_matrix_bytes(A));
		if (current)
			snprintf(why + l, why_size - l, "%sthe matrix is on the GPU: the CPU solve read "
				 "its host copy (current, nothing copied)", l ? "; " : "");
		else
			snprintf(why + l, why_size - l, "%sthe matrix is on the GPU: %s copied to the "
				 "host for the CPU solve (kept as its host copy)", l ? "; " : "", b);
		rc = gwb_matrix_host(A);
	}
	return rc;
}

/* One CPU solve of gwb_eig_dense, run by gwb_run_interruptible: it touches only what it
 * holds (never the caller's matrix), so that it can be abandoned. */
typedef struct solve_job {
	gwb_dense_method m;
	gwb_eig_end which;
	int n, k, iters, max_sweeps;
	bool syevr, vectors;  /* dsyevr for k pairs at the requested ends, else all pairs */
	char uplo;            /* syevd: the triangle of a to read (sym_copy_f64) */
	double tol;
	double *a, *a2;       /* the matrix (destroyed); a copy for dsyevr's second end */
	double *w, *V, *z;    /* values; all vectors (n x n); dsyevr's vectors (n x kk) */
	gwb_eigen *hist;      /* Jacobi's sweep history (the result), or NULL */
} solve_job;

static gwb_status solve_run(void *arg)
{
	solve_job *j = arg;
	gwb_status rc = GWB_OK;
	size_t at;

	if (!j->syevr && j->m == GWB_DM_SYEVD)   /* vectors overwrite a: no copy */
		return lapack_dsyevd(j->n, j->a, j->w, j->vectors, j->uplo);
	if (!j->syevr)
		return cpu_all_pairs(j->m, j->n, j->a, NULL, 0, j->tol, j->max_sweeps, j->w,
				     j->vectors ? j->V : NULL, &j->iters, j->hist);
	if (j->which == GWB_END_BOTH)   /* one tridiagonal reduction for both ends */
		return lapack_both_ends(j->n, j->a, j->k, j->w, j->z, j->vectors);
	at = j->which == GWB_END_LARGEST ? (size_t)(j->n - j->k + 1) : 1;
	rc = lapack_dsyevr(j->n, j->a, (int)at, j->which == GWB_END_LARGEST ? j->n : j->k, j->w,
			   j->z, j->vectors);
	return rc;
}

/* An abandoned solve_job frees everything when its solve ends. */
static void solve_release(void *arg)
{
	solve_job *j = arg;

	free(j->a);
	free(j->a2);
	free(j->w);
	free(j->V);
	free(j->z);
	gwb_eigen_free(j->hist);
	free(j);
}

static gwb_status eig_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out);

/* A call's threads option is BLAS's thread count for the call (blas.h). */
gwb_status gwb_eig_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	int token = gwb_blas_threads_push(o->threads);
	gwb_status rc = eig_dense(A, o, out);

	gwb_blas_threads_pop(token);
	return rc;
}

static gwb_status eig_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	static const char *fn = "eig.solve";
	size_t n = A->rows, k, kk;
	bool all, want_v = o->vectors;
	gwb_dense_method m = o->method;
	gwb_backend be;
	char why[160] = "";
	double t0 = gwb_now(), t1, tol = o->sym_tol > 0 ? o->sym_tol : default_sym_tol(A);
	double *a = NULL, *w = NULL, *V = NULL;
	gwb_eigen *e = NULL;
	gwb_status rc;
	int iters = 0;

	*out = NULL;
	if (A->count != 1)
		return gwb_error(GWB_EINVAL, "%s: got a batch of %zu matrices; use eig.batched(B) for "
				 "batches", fn, A->count);
	if (A->rows != A->cols)
		return check_symmetric(A, 0, tol, fn);  /* the not-square message */
	if (n > 46340)
		return gwb_error(GWB_EINVAL, "%s: order %zu is too large for a dense solver (LAPACK "
				 "32-bit indexing); use a sparse matrix and an iterative method", fn, n);
	k = o->k ? o->k : n;
	if (k > n)
		return gwb_error(GWB_EINVAL, "%s: k = %zu exceeds the order of the matrix (%zu)", fn, k, n);
	all = o->k == 0 || (o->which == GWB_END_BOTH ? 2 * k >= n : k >= n);
	kk = all ? n : (o->which == GWB_END_BOTH ? 2 * k : k);
	if (m == GWB_DM_CUSOLVER && o->backend == GWB_BACKEND_CPU)
		return gwb_error(GWB_EINVAL, "%s: method \"cusolver\" runs on the GPU; drop "
				 "backend = \"cpu\" or choose method = \"syevd\"", fn);
	rc = choose_dense(A, m == GWB_DM_CUSOLVER ? GWB_BACKEND_GPU : o->backend,
			  (double)n * n * gwb_dtype_size(A->dtype), 8.0 * 1048576, &be, why,
			  sizeof(why));
	if (rc)
		return rc;
	if (be == GWB_BACKEND_CPU && (rc = check_symmetric(A, 0, tol, fn)))
		return rc;
	if (m == GWB_DM_AUTO || m == GWB_DM_CUSOLVER)
		m = all ? GWB_DM_SYEVD : GWB_DM_SYEVR;
	if (m == GWB_DM_MIXED && !gwb_switch_on(GWB_SW_EIG_MIXED))  /* switches.h: the f64 solve */
		m = be == GWB_BACKEND_GPU ? GWB_DM_JACOBI : all ? GWB_DM_SYEVD : GWB_DM_SYEVR;
	/* GPU results keep their vectors on the device: no host array for them */
	rc = gwb_eigen_new(n, n, kk, 1, want_v && be == GWB_BACKEND_CPU, false, &e);
	if (rc)
		return rc;
	set_str(e->backend, sizeof(e->backend), be == GWB_BACKEND_GPU ? "gpu" : "cpu");
	set_str(e->note, sizeof(e->note), why);
	set_str(e->dtype, sizeof(e->dtype), m == GWB_DM_MIXED ? "f32+f64" :
		(A->dtype == GWB_F32 && be == GWB_BACKEND_GPU && m != GWB_DM_JACOBI) ? "f32" : "f64");

	if (be == GWB_BACKEND_GPU) {
#ifdef GWB_HAVE_CUDA
		rc = gpu_dense(A, o, e, m, all, k, tol, fn);
		if (rc)
			goto out_free;
		goto done;
#else
		rc = gwb_error(GWB_ENODEV, "%s: this gwb was built without CUDA", fn);
		goto out_free;
#endif
	}
	w = malloc(n * sizeof(double));
	if (!w) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out_free;
	}
	{
		/* The LAPACK drivers cannot poll Ctrl-C: they run on a worker (solve_job), which
		 * owns a, w, V, z (and e, for Jacobi's history) once abandoned. */
		solve_job *j;
		bool gone = false, syevd = m == GWB_DM_SYEVD;
		char uplo = 'L';
		if (syevd) {
			/* A in its own storage order, no transpose (sym_copy_f64) */
			if ((a = malloc(n * n * sizeof(double))))
				uplo = sym_copy_f64(A, a);
			else
				rc = gwb_error(GWB_ENOMEM, "out of memory: %zu x %zu matrix", n, n);
		} else {
			rc = gwb_matrix_to_f64_colmajor(A, 0, &a);
		}
		if (rc)
			goto out_free;
		if (!(j = calloc(1, sizeof(*j)))) {
			rc = gwb_error(GWB_ENOMEM, "out of memory");
			goto out_free;
		}
		j->m = m;
		j->n = (int)n;
		j->k = (int)k;
		j->which = o->which;
		j->vectors = want_v;
		j->tol = o->tol;
		j->max_sweeps = o->max_sweeps;
		j->a = a;
		j->w = w;
		j->uplo = uplo;
		j->syevr = m == GWB_DM_SYEVR && !all;
		if (j->syevr) {
			if (want_v && !(j->z = malloc(n * kk * sizeof(double))))
				rc = gwb_error(GWB_ENOMEM, "out of memory");
		} else if (!syevd && (want_v || m == GWB_DM_MIXED)) {
			if (!(V = j->V = malloc(n * n * sizeof(double))))
				rc = gwb_error(GWB_ENOMEM, "out of memory: %zu x %zu vectors", n, n);
		}
		if (rc) {
			free(j->z);
			free(j->a2);
			free(j);
			goto out_free;
		}
		if (m == GWB_DM_JACOBI) {
			j->hist = e;
			gwb_progress_begin("eig.solve jacobi", 0);
		}
		rc = gwb_run_interruptible(m == GWB_DM_JACOBI ? NULL : j->syevr ? "eig.solve dsyevr" :
					   m == GWB_DM_MIXED ? "eig.solve mixed" : "eig.solve dsyevd",
					   solve_run, solve_release, j, &gone);
		if (m == GWB_DM_JACOBI)
			gwb_progress_end();
		if (gone) {
			a = w = V = NULL;
			if (m == GWB_DM_JACOBI)
				e = NULL;
			goto out_free;
		}
		iters = j->iters;
		if (!rc && j->syevr)
			take_pairs(e, 0, w, j->z, 0, kk);
		free(j->z);
		free(j->a2);
		free(j);
		if (rc)
			goto out_free;
		if (m == GWB_DM_SYEVR && !all) {
			set_str(e->method, sizeof(e->method), "lapack-dsyevr");
			add_note(e, "subset: %zu of %zu pairs at %s through LAPACK dsyevr's steps (MRRR "
				 "on the tridiagonal for the wanted pairs only%s)", k, n,
				 o->which == GWB_END_BOTH ? "each end" : o->which == GWB_END_LARGEST ?
				 "the largest end" : "the smallest end", o->which == GWB_END_BOTH ?
				 "; one reduction for both ends" : "");
			e->converged = true;
			t1 = gwb_now();
			e->kernel_ms = (t1 - t0) * 1e3;
			goto finish;
		}
		e->iterations = iters;
		e->converged = true;
		set_str(e->method, sizeof(e->method), m == GWB_DM_JACOBI ? "jacobi-cyclic" :
			m == GWB_DM_MIXED ? "lapack-ssyevd+f64-refine" : "lapack-dsyevd");
		t1 = gwb_now();
		e->kernel_ms = (t1 - t0) * 1e3;
		if (syevd && want_v) {
			V = a;   /* dsyevd left the vectors in a */
			a = NULL;
		}
	}
	/* Select the requested ends from the full solution. */
	if (!all)
		add_note(e, "all %zu pairs solved (method %s), %zu kept; method = \"auto\" or "
			 "\"syevr\" computes only the pairs wanted", n, gwb_dense_method_name(m), kk);
	if (all && V && e->vectors) {
		/* every pair: the result takes the solver's vectors as they are */
		free(e->vectors);
		e->vectors = V;
		V = NULL;
		memcpy(e->values, w, n * sizeof(double));
	} else if (all) {
		take_pairs(e, 0, w, V, 0, n);
	} else if (o->which == GWB_END_SMALLEST) {
		take_pairs(e, 0, w, V, 0, k);
	} else if (o->which == GWB_END_LARGEST) {
		take_pairs(e, 0, w, V, n - k, k);
	} else {
		take_pairs(e, 0, w, V, 0, k);
		take_pairs(e, k, w, V, n - k, k);
	}
finish:
	if (e->vectors && o->residuals) {
		double tc = gwb_now();
		rc = gwb_eig_dense_check(e, 0, A, 0);
		if (rc)
			goto out_free;
		e->check_ms = (gwb_now() - tc) * 1e3;
	}
#ifdef GWB_HAVE_CUDA
done:
#endif
	note_blas(e);
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out_free:
	free(a);
	free(w);
	free(V);
	gwb_eigen_free(e);
	return rc;
}

gwb_status gwb_eigen_matrix(const gwb_eigen *e, size_t b, gwb_matrix **out)
{
	size_t n = e->n, k = e->k;
	gwb_matrix *V;
	gwb_status rc;

	*out = NULL;
	if (e->dvectors) {
		size_t bytes = n * k * (e->dvec_dtype ? 8 : 4);
		const gwb_buf_ops *g = e->dvectors->ops;
		void *d;
		if ((rc = g->alloc(&d, bytes, "mat.data")))
			return rc;
		if ((rc = g->copy(d, (const char *)e->dvectors->dev + b * bytes, bytes)) ||
		    (rc = gwb_matrix_adopt_dev(1, n, k, false, e->dvec_dtype ? GWB_F64 : GWB_F32,
					       GWB_COL_MAJOR, d, out))) {
			g->free(d);
			return rc;
		}
		return GWB_OK;
	}
	if (!e->vectors)
		return gwb_error(GWB_EINVAL, "this result has no vectors: solve with {vectors = true}");
	if ((rc = gwb_matrix_new(n, k, GWB_F64, GWB_COL_MAJOR, &V)))
		return rc;
	memcpy(V->data, gwb_eigen_vector(e, b, 0), n * k * sizeof(double));
	*out = V;
	return GWB_OK;
}

/* --- batches ------------------------------------------------------------------------------ */

typedef struct batch_ctx {
	const gwb_matrix *B;
	gwb_eigen *e;
	gwb_dense_method m;
	double tol;
	int max_sweeps;
	bool check;
	double *orth;         /* per matrix */
	atomic_int max_iters;
} batch_ctx;

static gwb_status batch_solve_one(void *arg, size_t b)
{
	batch_ctx *c = arg;
	gwb_eigen *e = c->e;
	size_t n = e->n;
	double *a = NULL, *V = e->vectors ? gwb_eigen_vector(e, b, 0) : NULL;
	gwb_status rc;
	int iters = 0, prev;

	if (c->m == GWB_DM_SYEVD && c->B->dtype == GWB_F32) {
		/* An f32 batch on the CPU: LAPACK ssyevd in f32, like the GPU's f32 path. */
		size_t i, nn = n * n;
		float *s = malloc(nn * sizeof(float)), *ws = malloc(n * sizeof(float));
		const float *src = gwb_matrix_ptr(c->B, b);
		if (!s || !ws) {
			free(s);
			free(ws);
			return gwb_error(GWB_ENOMEM, "out of memory");
		}
		memcpy(s, src, nn * sizeof(float));  /* symmetric: layout does not matter */
		rc = lapack_ssyevd((int)n, s, ws, V != NULL);
		if (!rc) {
			for (i = 0; i < n; i++)
				e->values[b * n + i] = ws[i];
			if (V)
				for (i = 0; i < nn; i++)
					V[i] = s[i];
		}
		free(s);
		free(ws);
	} else {
		rc = gwb_matrix_to_f64_colmajor(c->B, b, &a);
		if (rc)
			return rc;
		rc = cpu_all_pairs(c->m, (int)n, a, c->B, b, c->tol, c->max_sweeps,
				   e->values + b * n, V, &iters, NULL);
		free(a);
	}
	if (rc)
		return rc;
	prev = atomic_load(&c->max_iters);
	while (iters > prev && !atomic_compare_exchange_weak(&c->max_iters, &prev, iters))
		;
	return GWB_OK;
}

static gwb_status batch_check_one(void *arg, size_t b)
{
	batch_ctx *c = arg;

	return dense_check(c->e, b, c->B, b, &c->orth[b]);
}

/* One device's share of a batch: the GPU solver, or the LAPACK loop on `threads` threads (the
 * CPU backend, and the CPU stand-ins of gpus.cpu). t0: the call's start (CPU kernel_ms). */
static gwb_status batched_part(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
			       gwb_backend be, gwb_dense_method m, double tol, const char *fn,
			       int threads, double t0)
{
	batch_ctx c;
	gwb_status rc;

	if (be == GWB_BACKEND_GPU) {
#ifdef GWB_HAVE_CUDA
		return gpu_batched(B, o, e, m, tol, fn);
#else
		(void)tol;
		return gwb_error(GWB_ENODEV, "%s: this gwb was built without CUDA", fn);
#endif
	}
	memset(&c, 0, sizeof(c));
	c.B = B;
	c.e = e;
	c.tol = o->tol;
	c.max_sweeps = o->max_sweeps;
	atomic_init(&c.max_iters, 0);
	if (m == GWB_DM_AUTO)
		m = GWB_DM_SYEVD;
	c.m = m;
	rc = parallel_for(B->count, threads, batch_solve_one, &c);
	if (rc)
		return rc;
	e->iterations = atomic_load(&c.max_iters);
	e->converged = true;
	set_str(e->method, sizeof(e->method), m == GWB_DM_JACOBI ? "jacobi-cyclic" :
		m == GWB_DM_MIXED ? "lapack-ssyevd+f64-refine" :
		B->dtype == GWB_F32 ? "lapack-ssyevd" : "lapack-dsyevd");
	e->kernel_ms = (gwb_now() - t0) * 1e3;
	return GWB_OK;
}

/* Dealing a batch to the devices of o->gpus (mgpu.h): matrices in contiguous ranges in index
 * order, each device solving its range from its own copy (a host view of the range, uploaded
 * there), the results gathered in order. Device 0 alone is today's path on the calling thread
 * with B itself (in place when B is GPU-resident). */
typedef struct bdev_ctx {
	const gwb_matrix *B;
	const gwb_dense_opts *o;
	gwb_eigen *e;
	gwb_backend be;
	gwb_dense_method m;
	double tol, t0;
	const char *fn;
	bool direct;
	gwb_matrix view[GWB_GPU_MAX];
	gwb_eigen *part[GWB_GPU_MAX];
} bdev_ctx;

static gwb_status bdev_work(void *arg, int slot, int dev)
{
	bdev_ctx *c = arg;
	const gwb_gpu_set *s = &c->o->gpus;
	const gwb_matrix *B = c->B;
	size_t lo, hi, nn = B->rows * B->cols;
	int threads = c->o->threads > 0 ? c->o->threads : gwb_cpu_count();
	gwb_status rc;

	(void)dev;
	if (c->direct)
		return batched_part(B, c->o, c->e, c->be, c->m, c->tol, c->fn, c->o->threads, c->t0);
	gwb_deal(B->count, s->n, slot, &lo, &hi);
	if (hi == lo)
		return GWB_OK;  /* more devices than matrices */
	c->view[slot] = *B;
	c->view[slot].count = hi - lo;
	c->view[slot].data = (char *)B->data + lo * nn * gwb_dtype_size(B->dtype);
	c->view[slot].buf = NULL;  /* host memory: uploaded to this device by the solver */
	c->view[slot].sum_ok = false;
	if ((rc = gwb_eigen_new(B->rows, B->rows, B->rows, hi - lo, c->e->vectors != NULL, false,
				&c->part[slot])))
		return rc;
	threads = threads / s->n > 0 ? threads / s->n : 1;  /* stand-ins share the cores */
	return batched_part(&c->view[slot], c->o, c->part[slot], c->be, c->m, c->tol, c->fn,
			    threads, c->t0);
}

/* The parts into e, in slot order: values, residuals, host vectors; device vectors into one
 * array on the calling thread's device (peer copies); the slowest device's times. */
static gwb_status bdev_gather(bdev_ctx *c)
{
	const gwb_gpu_set *s = &c->o->gpus;
	gwb_eigen *e = c->e;
	size_t n = e->n, lo, hi, es = 0, total = 0;
	void *dst = NULL;
	gwb_status rc = GWB_OK;
	bool first = true;
	int k;

	e->converged = true;
	for (k = 0; k < s->n; k++) {
		gwb_eigen *p = c->part[k];
		if (!p)
			continue;
		gwb_deal(c->B->count, s->n, k, &lo, &hi);
		memcpy(e->values + lo * n, p->values, (hi - lo) * n * sizeof(double));
		if (e->residuals && p->residuals)
			memcpy(e->residuals + lo * n, p->residuals, (hi - lo) * n * sizeof(double));
		if (e->vectors && p->vectors)
			memcpy(e->vectors + lo * n * n, p->vectors, (hi - lo) * n * n * sizeof(double));
		fold_orth(e, p->orthogonality);
		if (p->iterations > e->iterations)
			e->iterations = p->iterations;
		e->converged = e->converged && p->converged;
		if (p->kernel_ms > e->kernel_ms)
			e->kernel_ms = p->kernel_ms;
		if (p->transfer_ms > e->transfer_ms)
			e->transfer_ms = p->transfer_ms;
		if (p->check_ms > e->check_ms)
			e->check_ms = p->check_ms;
		if (first) {
			set_str(e->method, sizeof(e->method), p->method);
			first = false;
		}
		if (p->dvectors) {
			es = p->dvec_dtype ? 8 : 4;
			e->dvec_dtype = p->dvec_dtype;
		}
	}
	if (e->residuals)
		gwb_eigen_update_max(e);
	if (!es)
		return GWB_OK;
#ifdef GWB_HAVE_CUDA
	total = c->B->count * n * n * es;
	if ((rc = gwb_gpu_malloc(&dst, total, "eig.vectors")))
		return rc;
	for (k = 0; k < s->n && !rc; k++) {
		gwb_eigen *p = c->part[k];
		if (!p || !p->dvectors)
			continue;
		gwb_deal(c->B->count, s->n, k, &lo, &hi);
		rc = CUDA_CHECK(cudaMemcpyPeer((char *)dst + lo * n * n * es, gwb_gpu_current(),
					       p->dvectors->dev, s->ids[k], (hi - lo) * n * n * es));
	}
	if (rc) {
		gwb_gpu_free(dst);
		return rc;
	}
	rc = gwb_buf_adopt_dev(dst, total, "eig.vectors", &e->dvectors);
	if (rc)
		gwb_gpu_free(dst);
#else
	(void)dst;
	(void)total;
#endif
	return rc;
}

static gwb_status batched_devices(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
				  gwb_backend be, gwb_dense_method m, double tol, const char *fn,
				  double t0)
{
	const gwb_gpu_set *s = &o->gpus;
	bdev_ctx *c = calloc(1, sizeof(*c));
	gwb_status rc;
	int k;

	if (!c)
		return gwb_error(GWB_ENOMEM, "%s: out of host memory for the per-device batch state "
				 "(%zu bytes)", fn, sizeof(*c));
	*c = (bdev_ctx){.B = B, .o = o, .e = e, .be = be, .m = m, .tol = tol, .t0 = t0, .fn = fn,
			.direct = s->n == 1 && (s->cpu || s->ids[0] == gwb_gpu_current())};
	if (!c->direct && (rc = gwb_matrix_host(B)))  /* the devices' shares come from the host */
		goto out;
	rc = gwb_gpu_run(s, bdev_work, c);
	if (!rc && !c->direct)
		rc = bdev_gather(c);
out:
	for (k = 0; k < GWB_GPU_MAX; k++)
		gwb_eigen_free(c->part[k]);
	free(c);
	return rc;
}

gwb_status gwb_eig_batched(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen **out)
{
	static const char *fn = "eig.batched";
	size_t n = B->rows, count = B->count, b;
	double t0 = gwb_now(), tol = o->sym_tol > 0 ? o->sym_tol : default_sym_tol(B);
	gwb_dense_method m = o->method;
	gwb_backend be;
	char why[160] = "";
	batch_ctx c;
	gwb_eigen *e = NULL;
	gwb_status rc;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	if (B->rows != B->cols)
		return check_symmetric(B, 0, tol, fn);  /* the not-square message */
	if (m == GWB_DM_SYEVR)
		return gwb_error(GWB_EINVAL, "%s: method \"syevr\" (a subset) is for eig.solve; a "
				 "batch gets all pairs (syevd, jacobi, mixed, cusolver)", fn);
	if (m == GWB_DM_MIXED && B->dtype != GWB_F64)
		return gwb_error(GWB_EINVAL, "%s: method \"mixed\" refines to f64 and needs an f64 "
				 "batch (make it with dtype = \"f64\")", fn);
	if (m == GWB_DM_CUSOLVER && o->backend == GWB_BACKEND_CPU)
		return gwb_error(GWB_EINVAL, "%s: method \"cusolver\" runs on the GPU; drop backend "
				 "= \"cpu\"", fn);
	if (o->gpus.cpu) {  /* tests: CPU stand-ins for the devices of gpus (mgpu.h) */
		be = GWB_BACKEND_CPU;
		snprintf(why, sizeof(why), "%d CPU stand-ins for GPUs (gpu_standin = \"cpu\")",
			 o->gpus.n);
	} else if ((rc = choose_dense(B, m == GWB_DM_CUSOLVER || (o->gpus.n > 1 &&
						o->backend == GWB_BACKEND_AUTO) ? GWB_BACKEND_GPU :
				      o->backend, (double)gwb_matrix_bytes(B), 4.0 * 1048576, &be,
				      why, sizeof(why)))) {
		return rc;  /* several devices asked for: the GPU, whatever the size */
	}
	if (m == GWB_DM_MIXED && !gwb_switch_on(GWB_SW_EIG_MIXED))  /* switches.h: the f64 solve */
		m = be == GWB_BACKEND_GPU ? GWB_DM_JACOBI : GWB_DM_SYEVD;
	if (be == GWB_BACKEND_CPU)
		for (b = 0; b < count; b++)
			if ((rc = check_symmetric(B, b, tol, fn)))
				return rc;
	/* GPU results keep their vectors on the device: no host array for them */
	rc = gwb_eigen_new(n, n, n, count, o->vectors && be == GWB_BACKEND_CPU, false, &e);
	if (rc)
		return rc;
	set_str(e->backend, sizeof(e->backend), be == GWB_BACKEND_GPU ? "gpu" : "cpu");
	set_str(e->note, sizeof(e->note), why);
	set_str(e->dtype, sizeof(e->dtype), m == GWB_DM_MIXED ? "f32+f64" : gwb_dtype_name(B->dtype));
	c.B = B;
	c.e = e;
	c.tol = o->tol;
	c.max_sweeps = o->max_sweeps;
	atomic_init(&c.max_iters, 0);
	gwb_progress_begin(fn, (double)count);
	/* one device (the default): the solver on this thread, as it always ran; several (or
	 * CPU stand-ins): the matrices dealt to them and the results gathered in order */
	rc = batched_devices(B, o, e, be, m, tol, fn, t0);
	if (rc)
		goto out_free;
	if (e->vectors && o->residuals) {  /* CPU results (GPU ones were checked there) */
		double tc = gwb_now();
		c.orth = malloc(count * sizeof(double));
		if (!c.orth) {
			rc = gwb_error(GWB_ENOMEM, "out of memory");
			goto out_free;
		}
		rc = parallel_for(count, o->threads, batch_check_one, &c);
		if (rc)
			goto out_free;
		for (b = 0; b < count; b++)
			fold_orth(e, c.orth[b]);
		gwb_eigen_update_max(e);
		e->check_ms = (gwb_now() - tc) * 1e3;
	}
	note_blas(e);
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out_free:
	gwb_progress_end();
	free(c.orth);
	gwb_eigen_free(e);
	return rc;
}

/* --- SVD ---------------------------------------------------------------------------------- */

static gwb_status lapack_dgesdd(int m, int n, double *a, double *s, double *U, double *VT,
				bool vectors)
{
	char jobz = vectors ? 'S' : 'N';
	int p = m < n ? m : n, lwork = -1, info = 0, ldu = vectors ? m : 1, ldvt = vectors ? p : 1;
	double wq = 0, *work;
	int *iwork = malloc(8 * (size_t)p * sizeof(int));
	double dummy = 0;

	if (!iwork)
		return gwb_error(GWB_ENOMEM, "out of memory: dgesdd");
	dgesdd_(&jobz, &m, &n, a, &m, s, vectors ? U : &dummy, &ldu, vectors ? VT : &dummy, &ldvt,
		&wq, &lwork, iwork, &info, 1);
	if (info) {
		free(iwork);
		return gwb_error(GWB_EINVAL, "dgesdd workspace query failed (info %d)", info);
	}
	lwork = (int)wq + 1;
	work = malloc((size_t)lwork * sizeof(double));
	if (!work) {
		free(iwork);
		return gwb_error(GWB_ENOMEM, "out of memory: dgesdd needs %.1f MiB of workspace",
				 (double)lwork * 8 / 1048576.0);
	}
	dgesdd_(&jobz, &m, &n, a, &m, s, vectors ? U : &dummy, &ldu, vectors ? VT : &dummy, &ldvt,
		work, &lwork, iwork, &info, 1);
	free(work);
	free(iwork);
	if (info > 0)
		return gwb_error(GWB_ENOCONV, "LAPACK dgesdd did not converge (info %d)", info);
	if (info < 0)
		return gwb_error(GWB_EINVAL, "LAPACK dgesdd: bad argument %d", -info);
	return GWB_OK;
}

/* dgesdd of gwb_eig_svd on a worker (gwb_run_interruptible), abandoned on Ctrl-C. */
typedef struct svd_job {
	int m, n;
	bool vectors;
	double *a, *s, *U, *VT;   /* a is destroyed */
} svd_job;

static gwb_status svd_run(void *arg)
{
	svd_job *j = arg;

	return lapack_dgesdd(j->m, j->n, j->a, j->s, j->U, j->VT, j->vectors);
}

static void svd_release(void *arg)
{
	svd_job *j = arg;

	free(j->a);
	free(j->s);
	free(j->U);
	free(j->VT);
	free(j);
}

/* Residuals max(||A v - s u||, ||A^T u - s v||) / s_max per triplet, and the orthogonality of
 * V and U. */
static gwb_status svd_check(gwb_eigen *e, const double *a)
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
	dgemm('N', 'N', (int)m, (int)k, (int)n, 1.0, a, (int)m, e->vectors, (int)n, 0.0, AV, (int)m);
	dgemm('T', 'N', (int)n, (int)k, (int)m, 1.0, a, (int)m, e->left, (int)m, 0.0, ATU, (int)n);
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
		dgemm('T', 'N', (int)k, (int)k, len, 1.0, X, len, X, len, 0.0, G, (int)k);
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

static gwb_status svd_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out);

gwb_status gwb_svd_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	int token = gwb_blas_threads_push(o->threads);
	gwb_status rc = svd_dense(A, o, out);

	gwb_blas_threads_pop(token);
	return rc;
}

static gwb_status svd_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	static const char *fn = "eig.svd";
	size_t m = A->rows, n = A->cols, p = m < n ? m : n, k, i, r;
	double t0 = gwb_now();
	double *a = NULL, *s = NULL, *U = NULL, *VT = NULL;
	bool want_v = o->vectors;
	gwb_backend be;
	char why[160] = "";
	gwb_eigen *e = NULL;
	gwb_status rc;

	*out = NULL;
	if (A->count != 1)
		return gwb_error(GWB_EINVAL, "%s: got a batch of %zu matrices; pass one matrix", fn,
				 A->count);
	if (m > 46340 || n > 46340 || m * n > (size_t)INT32_MAX)
		return gwb_error(GWB_EINVAL, "%s: %zu x %zu is too large for a dense SVD", fn, m, n);
	k = o->k ? o->k : p;
	if (k > p)
		return gwb_error(GWB_EINVAL, "%s: k = %zu exceeds min(rows, cols) = %zu", fn, k, p);
	rc = gwb_backend_choose(o->method == GWB_DM_CUSOLVER ? GWB_BACKEND_GPU : o->backend,
				(double)m * n * 8, 8.0 * 1048576, &be, why, sizeof(why));
	if (rc)
		return rc;
	rc = gwb_eigen_new(n, m, k, 1, want_v, true, &e);
	if (rc)
		return rc;
	set_str(e->backend, sizeof(e->backend), be == GWB_BACKEND_GPU ? "gpu" : "cpu");
	set_str(e->note, sizeof(e->note), why);
	rc = gwb_matrix_to_f64_colmajor(A, 0, &a);
	if (rc)
		goto out_free;
	s = malloc(p * sizeof(double));
	if (want_v) {
		U = malloc(m * p * sizeof(double));
		VT = malloc(p * n * sizeof(double));
	}
	if (!s || (want_v && (!U || !VT))) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: SVD of %zu x %zu", m, n);
		goto out_free;
	}
	if (be == GWB_BACKEND_GPU) {
#ifdef GWB_HAVE_CUDA
		gwb_gpu_eig_stats st;
		/* gwb_gpu_svd returns V (n x p), not V^T: VT holds V here. */
		memset(&st, 0, sizeof(st));
		rc = gwb_gpu_svd(a, (int)m, (int)n, s, U, VT, &st);
		if (rc)
			goto out_free;
		e->kernel_ms = st.kernel_ms;
		e->transfer_ms = st.transfer_ms;
		e->iterations = st.sweeps;
		set_str(e->method, sizeof(e->method), st.variant);
		for (i = 0; i < k; i++) {
			e->values[i] = s[i];
			if (want_v) {
				memcpy(e->vectors + i * n, VT + i * n, n * sizeof(double));
				memcpy(e->left + i * m, U + i * m, m * sizeof(double));
			}
		}
#else
		rc = gwb_error(GWB_ENODEV, "%s: this gwb was built without CUDA", fn);
		goto out_free;
#endif
	} else {
		double *a2 = NULL;
		if (want_v) {
			/* dgesdd destroys a; keep a copy for the check. */
			a2 = malloc(m * n * sizeof(double));
			if (!a2) {
				rc = gwb_error(GWB_ENOMEM, "out of memory");
				goto out_free;
			}
			memcpy(a2, a, m * n * sizeof(double));
		}
		{
			svd_job *j = calloc(1, sizeof(*j));
			bool gone = false;
			if (!j) {
				free(a2);
				rc = gwb_error(GWB_ENOMEM, "out of memory");
				goto out_free;
			}
			j->m = (int)m;
			j->n = (int)n;
			j->vectors = want_v;
			j->a = a2 ? a2 : a;
			j->s = s;
			j->U = U;
			j->VT = VT;
			rc = gwb_run_interruptible("eig.svd dgesdd", svd_run, svd_release, j, &gone);
			if (gone) {
				/* the worker owns what it works on; a stays ours unless it is that */
				if (!a2)
					a = NULL;
				s = U = VT = NULL;
				goto out_free;
			}
			free(j);
		}
		free(a2);
		if (rc)
			goto out_free;
		set_str(e->method, sizeof(e->method), "lapack-dgesdd");
		for (i = 0; i < k; i++) {
			e->values[i] = s[i];
			if (want_v) {
				for (r = 0; r < n; r++)
					e->vectors[i * n + r] = VT[r * p + i];
				memcpy(e->left + i * m, U + i * m, m * sizeof(double));
			}
		}
		e->kernel_ms = (gwb_now() - t0) * 1e3;
	}
	e->converged = true;
	if (want_v && o->residuals) {
		/* a is intact on the CPU path (dgesdd worked on a copy) and on the GPU path. */
		double tc = gwb_now();
		rc = svd_check(e, a);
		e->check_ms = (gwb_now() - tc) * 1e3;
		if (rc)
			goto out_free;
	}
	note_blas(e);
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out_free:
	free(a);
	free(s);
	free(U);
	free(VT);
	gwb_eigen_free(e);
	return rc;
}
