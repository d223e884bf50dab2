/* eig_lobpcg.c - LOBPCG (Knyazev 2001) with a Jacobi preconditioner, the basis [X W P]
 * orthonormalized every iteration (SVQB: the robust form of Hetmaniuk & Lehoucq). Written
 * once over the block operations (eig_sparse_ops.c) and the shared steps (eig_block.c);
 * uses sparse.c for the diagonal and nothing above them. */
#include "eig_sparse_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LOBPCG (Knyazev 2001) with a Jacobi preconditioner; the basis [X W P] is orthonormalized
 * every iteration (SVQB), the robust form of Hetmaniuk & Lehoucq. */
gwb_status sp_lobpcg(solve *S)
{
	sp_op *o = S->o;
	int k = S->k, b = S->opt->block;
	size_t n = (size_t)o->n;
	double *Q = NULL, *AQ = NULL, *T = NULL, *dinv = NULL, *theta = NULL, *res = NULL, *C = NULL;
	gwb_status st;

	if (b <= 0)
		b = k + (k / 4 > 3 ? k / 4 : 3);
	if (3 * b > o->N)
		b = (int)(o->N / 3);
	if (b < k) {
		return gwb_error(GWB_EINVAL, "eig.solve: lobpcg needs n >= 3k (n = %lld, k = %d); use "
				 "method = \"dense\" or \"lanczos\"", (long long)o->N, k);
	}
	int mmax = 3 * b;
	if ((st = sp_alloc(o, n * mmax, &Q)) || (st = sp_alloc(o, n * mmax, &AQ)) ||
	    (st = sp_alloc(o, n * mmax, &T)) || (st = sp_alloc(o, n, &dinv)))
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
		double *d = malloc((size_t)o->N * sizeof(double) + 8);
		if (!d) {
			st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
			goto out;
		}
		gwb_csr_diag(o->A, d);  /* the whole diagonal; this rank's rows at o->off */
		for (size_t i = 0; i < n; i++)
			d[o->off + i] = d[o->off + i] != 0 ? 1.0 / fabs(d[o->off + i]) : 1.0;
		st = sp_put(o, dinv, d + o->off, n);
		free(d);
		if (st)
			goto out;
	}
	/* X: random, orthonormal; Rayleigh-Ritz */
	if ((st = sp_random_block(o, Q, b, S->opt->seed)))
		goto out;
	int r, nb = b;   /* columns in the current X block */
	if ((st = sp_orthonormalize(o, Q, b, T, &r)))
		goto out;
	nb = r;
	if ((st = sp_spmm(o, Q, AQ, nb)) ||
	    (st = sp_rayleigh_ritz(o, Q, AQ, nb, T, theta, res, nb, NULL)))
		goto out;
	int np = 0;  /* columns of P, stored after W */
	int outer;
	for (outer = 0; outer < S->maxiter; outer++) {
		if ((st = sp_check_intr("eig.solve")))
			goto out;
		int conv = 0;
		double mx = 0;
		for (int i = 0; i < k; i++) {
			if (res[i] <= S->opt->tol * S->normA && conv == i)
				conv++;
			if (res[i] > mx)
				mx = res[i];
		}
		if ((st = sp_record(S, conv, mx)))
			goto out;
		if (conv == k) {
			S->converged = true;
			break;
		}
		/* W = D^-1 R, R = AX - X theta (into Q after X, P shifted after W) */
		double *Wb = Q + n * nb;
		if (np > 0 && (st = sp_copy(o, Q + n * (2 * nb), Q + n * nb, n * np)))
			goto out;  /* P was stored at [nb, nb+np); move it behind W */
		if ((st = sp_copy(o, T, AQ, n * nb)))
			goto out;
		{
			double *D = calloc((size_t)nb * nb, sizeof(double));
			if (!D) {
				st = gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
				goto out;
			}
			for (int i = 0; i < nb; i++)
				D[i + i * nb] = -theta[i];
			st = sp_gemm_nn(o, Q, nb, D, nb, 1.0, T);
			free(D);
			if (st)
				goto out;
		}
		if ((st = sp_rowscale(o, dinv, T, Wb, nb)))
			goto out;
		/* sp_orthonormalize [X W P]: X is orthonormal; W, P orthogonal to X, then to each other */
		if ((st = sp_orth_against(o, Q, nb, Wb, nb + np)))
			goto out;
		int rw;
		if ((st = sp_orthonormalize(o, Wb, nb + np, T, &rw)))
			goto out;
		int m = nb + rw;
		if ((st = sp_spmm(o, Wb, AQ + n * nb, rw)))
			goto out;
		/* Rayleigh-Ritz on [X W P]; new X = Q C(:, 1:nb), new P = Q(:, nb:) C(nb:, 1:nb) */
		if ((st = sp_gemm_tn(o, Q, m, AQ, m, C)))
			goto out;
		sp_symmetrize(C, m);
		if ((st = sp_syev(o, C, m, theta)))
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
			st = sp_gemm_nn(o, B, m, C, nb, 0.0, T);
			if (!st && m > nb)
				st = sp_gemm_nn(o, B + n * nb, m - nb, Cp, nb, 0.0, T + n * nb);
			if (!st)
				st = sp_copy(o, B, T, n * (m > nb ? 2 * nb : nb));
		}
		free(Cp);
		if (st)
			goto out;
		np = m > nb ? nb : 0;
		if ((st = sp_residual_norms(o, Q, AQ, nb, theta, T, res, NULL)))
			goto out;
	}
	memcpy(S->theta, theta, (size_t)k * sizeof(double));
	memcpy(S->res, res, (size_t)k * sizeof(double));
	if ((st = sp_copy(o, S->X, Q, n * k)))
		goto out;
	snprintf(S->note, sizeof(S->note), "LOBPCG, Jacobi preconditioner, block %d, %d iterations",
		 b, outer);
out:
	sp_free(o, Q);
	sp_free(o, AQ);
	sp_free(o, T);
	sp_free(o, dinv);
	free(theta);
	free(res);
	free(C);
	return st;
}
