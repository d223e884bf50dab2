/* eig_lapack.c - the CPU solvers behind the dense eigen drivers: LAPACK dsyevd / ssyevd /
 * dsyevr / dgesdd through the Fortran ABI (lapack.h), dsyevr's own steps for both ends of a
 * spectrum from one tridiagonal reduction, the cyclic Jacobi reference, and f32 solves refined
 * to f64 (Newton-Schulz + Jacobi). Each works on host arrays its caller owns and returns a
 * status; none knows the GPU or where a call runs. It may use lapack.h, eig.h (the Jacobi
 * history) and intr.h (Ctrl-C and progress); eig_dense.c and eig_batched.c call it through
 * eig_dense_impl.h. */
#define _GNU_SOURCE
#include "eig_dense_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "lapack.h"

int eigd_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double *a, int lda,
	       const double *b, int ldb, double beta, double *c, int ldc)
{
	dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
	return 0;
}

/* --- LAPACK wrappers (column-major, overwrite a) ------------------------------------------ */

gwb_status eigd_dsyevd(int n, double *a, double *w, bool vectors, char uplo)
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

gwb_status eigd_ssyevd(int n, float *a, float *w, bool vectors)
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
gwb_status eigd_dsyevr(int n, double *a, int il, int iu, double *w, double *z, bool vectors)
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
gwb_status eigd_both_ends(int n, double *a, int k, double *w, double *z, bool vectors)
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

gwb_status gwb_eig_jacobi_ref(size_t n, double *a, double *w, double *V, double tol,
			      int max_sweeps, int *sweeps)
{
	return eigd_jacobi(n, a, w, V, tol, max_sweeps, sweeps, NULL);
}

/* The cyclic Jacobi sweeps; hist (may be NULL) receives one entry per sweep: the sweep,
 * whether it rotated nothing, and the off-diagonal norm relative to ||A||_F. */
gwb_status eigd_jacobi(size_t n, double *a, double *w, double *V, double tol, int max_sweeps,
		       int *sweeps, gwb_eigen *hist)
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
		eigd_dgemm('T', 'N', n, n, n, 1.0, Q, n, Q, n, 0.0, T, n);
		for (i = 0; i < n; i++)
			T[(size_t)i * n + i] -= 3.0;
		/* Q2 = Q * (-(T - 3I)) / 2 = Q (3I - Q^T Q) / 2 */
		eigd_dgemm('N', 'N', n, n, n, -0.5, Q, n, T, n, 0.0, Q2, n);
		memcpy(Q, Q2, nn * sizeof(double));
	}
	eigd_dgemm('N', 'N', n, n, n, 1.0, a, n, Q, n, 0.0, T, n);   /* T = A Q */
	eigd_dgemm('T', 'N', n, n, n, 1.0, Q, n, T, n, 0.0, Q2, n);  /* Q2 = Q^T A Q */
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
	eigd_dgemm('N', 'N', n, n, n, 1.0, Q, n, W, n, 0.0, V, n);
out:
	free(T);
	free(Q2);
	free(W);
	return rc;
}

/* All pairs of one matrix, f64 column-major a (destroyed), on the CPU. */
gwb_status eigd_all_pairs(gwb_dense_method m, int n, double *a, const gwb_matrix *A, size_t b,
			  double tol, int max_sweeps, double *w, double *V, int *iters,
			  gwb_eigen *hist)
{
	gwb_status rc;

	*iters = 0;
	switch (m) {
	case GWB_DM_JACOBI:
		return eigd_jacobi((size_t)n, a, w, V, tol, max_sweeps, iters, hist);
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
			rc = eigd_ssyevd(n, s, ws, true);
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
		rc = eigd_dsyevd(n, a, w, V != NULL, 'L');
		if (!rc && V)
			memcpy(V, a, (size_t)n * n * sizeof(double));
		return rc;
	}
}

/* --- SVD ---------------------------------------------------------------------------------- */

gwb_status eigd_dgesdd(int m, int n, double *a, double *s, double *U, double *VT, bool vectors)
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
