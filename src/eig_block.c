/* eig_block.c - the steps the sparse eigensolvers build from the block operations
 * (eig_sparse_ops.c): the small projected eigenproblem on the host (LAPACK dsyev on one BLAS
 * thread), SVQB orthonormalization, block Gram-Schmidt against a basis, Rayleigh-Ritz,
 * residual norms and orthogonality, the progress record of an iteration. Written once for
 * every backend: they call the sp_* operations, never a device. Uses eig_sparse_ops.c,
 * lapack.c/blas.c, eig.c (history) and intr.c. */
#define _GNU_SOURCE
#include "eig_sparse_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "lapack.h"

/* LAPACK through the Fortran ABI (hidden string lengths last). */
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
		   double *w, double *work, const int *lwork, int *info, size_t, size_t);

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

gwb_status sp_syev(sp_op *o, double *G, int m, double *w)
{
	double t0 = sp_prof_begin(o);
	gwb_status st = small_syev(G, m, w);
	if (o->prof)
		o->ph[PH_SYEV] += gwb_now() - t0;
	return st;
}

void sp_symmetrize(double *G, int m)
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
gwb_status sp_orthonormalize(sp_op *o, double *S, int m, double *T, int *r)
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
		if ((st = sp_gemm_tn(o, S, rank, S, rank, G)))
			goto out;
		sp_symmetrize(G, rank);
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
		if ((st = sp_syev(o, G, rank, w))) {
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
		if ((st = sp_gemm_nn(o, S, rank, C, keep, 0.0, T)))
			goto out;
		if ((st = sp_copy(o, S, T, (size_t)o->n * keep)))
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
gwb_status sp_orth_against(sp_op *o, const double *Q, int nq, double *S, int m)
{
	gwb_status st = GWB_OK;
	if (nq <= 0 || m <= 0)
		return GWB_OK;
	double *H = malloc((size_t)nq * m * sizeof(double));
	if (!H)
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	for (int pass = 0; pass < 2 && !st; pass++) {
		st = sp_gemm_tn(o, Q, nq, S, m, H);
		for (int t = 0; !st && t < nq * m; t++)
			H[t] = -H[t];
		if (!st)
			st = sp_gemm_nn(o, Q, nq, H, m, 1.0, S);
	}
	free(H);
	return st;
}

/* S -= Q (Q^T S) once: for components already tiny (a Krylov vector against converged
 * eigenvectors, which A maps into their own span up to their residual) one pass leaves
 * eps of them. */
gwb_status sp_orth_once(sp_op *o, const double *Q, int nq, double *w, double *tmp)
{
	gwb_status st = sp_gemm_tn(o, Q, nq, w, 1, tmp);
	for (int t = 0; !st && t < nq; t++)
		tmp[t] = -tmp[t];
	return st ? st : sp_gemm_nn(o, Q, nq, tmp, 1, 1.0, w);
}

gwb_status sp_check_intr(const char *fn)
{
	if (gwb_intr_pending())
		return gwb_error(GWB_EINTR, "%s: interrupted", fn);
	return GWB_OK;
}

gwb_status sp_record(solve *S, int conv, double maxres)
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

/* res[i] = ||AX_i - theta_i X_i|| for the first nres columns (T: n x nres scratch); with
 * gram, also ||X^T X - I||_max into *orth. */
gwb_status sp_residual_norms(sp_op *o, const double *X, const double *AX, int nres,
				 const double *theta, double *T, double *res, double *orth)
{
	gwb_status st;
	double *D = calloc((size_t)nres * nres, sizeof(double));
	if (!D)
		return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
	if ((st = sp_copy(o, T, AX, (size_t)o->n * nres)))
		goto out;
	for (int i = 0; i < nres; i++)
		D[i + i * nres] = -theta[i];
	if ((st = sp_gemm_nn(o, X, nres, D, nres, 1.0, T)))
		goto out;
	if ((st = sp_gemm_tn(o, T, nres, T, nres, D)))
		goto out;
	for (int i = 0; i < nres; i++)
		res[i] = sqrt(fabs(D[i + i * nres]));
	if (orth) {
		if ((st = sp_gemm_tn(o, X, nres, X, nres, D)))
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
gwb_status sp_rayleigh_ritz(sp_op *o, double *Q, double *AQ, int m, double *T, double *theta,
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
	if ((st = sp_gemm_tn(o, Q, m, AQ, m, G)))
		goto out;
	sp_symmetrize(G, m);
	if ((st = sp_syev(o, G, m, theta)))
		goto out;
	if (Cout)
		memcpy(Cout, G, (size_t)m * m * sizeof(double));
	if ((st = sp_gemm_nn(o, Q, m, G, m, 0.0, T)) || (st = sp_copy(o, Q, T, (size_t)o->n * m)))
		goto out;
	if ((st = sp_gemm_nn(o, AQ, m, G, m, 0.0, T)) || (st = sp_copy(o, AQ, T, (size_t)o->n * m)))
		goto out;
	if (nres > 0)
		st = sp_residual_norms(o, Q, AQ, nres, theta, T, res, NULL);
out:
	free(G);
	free(R);
	return st;
}
