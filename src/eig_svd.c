/* eig_svd.c - the sparse SVD (gwb_svd_sparse, sparse.h): randomized subspace iteration on A
 * and A^T, one operator for each side (rows- and columns-long blocks), Householder QR of the
 * block each step (LAPACK or cuSOLVER through the backend table), the small SVD of R on the
 * host, and a Chebyshev filter on A^T A between iterations once the block shows a gap.
 * Written once over the block operations (eig_sparse_ops.c); uses sparse.c for A^T and
 * backend.c for the choice, nothing above them. */
#define _GNU_SOURCE
#include "eig_sparse_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "mpi.h"
#include "sparse_dist.h"

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
static gwb_status svd_filter(sp_op *oA, sp_op *oT, double *V, double *W1, double *W2, double *T,
			     int b, int d, double cut, double top)
{
	size_t len = (size_t)oT->n * b;
	double e = cut / 2, c = cut / 2;
	double sigma = e / (top - c), sigma1 = sigma, tau = 2 / sigma1;
	double *X = V, *Yc = W1, *Yn = W2;
	gwb_status st;

	if ((st = sp_spmm(oA, X, T, b)) || (st = sp_spmm(oT, T, Yc, b)) ||
	    (st = sp_axpby(oT, len, -c * sigma1 / e, X, 0, NULL, sigma1 / e, Yc)))
		return st;
	for (int i = 2; i <= d; i++) {
		double sigma2 = 1 / (tau - sigma);
		if ((st = sp_spmm(oA, Yc, T, b)) || (st = sp_spmm(oT, T, Yn, b)) ||
		    (st = sp_axpby(oT, len, -2 * sigma2 * c / e, Yc, -sigma * sigma2, X,
				   2 * sigma2 / e, Yn)))
			return st;
		double *t = X;
		X = Yc;
		Yc = Yn;
		Yn = t;
		sigma = sigma2;
		if (i % 8 == 0 && (st = sp_check_intr(sp_fn(oT))))
			return st;
	}
	return Yc == V ? GWB_OK : sp_copy(oT, V, Yc, len);
}

/* Column norms of the n x k block T (through its Gram matrix's diagonal). */
static gwb_status col_norms(sp_op *o, const double *T, int k, double *G, double *nrm)
{
	gwb_status st = sp_gemm_tn(o, T, k, T, k, G);
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
	sp_op oA = {0}, oT = {0};
	gwb_backend be;
	char why[160] = "";
	gwb_status st;
	double *V = NULL, *Z = NULL, *Y = NULL, *Q = NULL, *Tm = NULL, *Tn = NULL;
	double *R = NULL, *s = NULL, *Ur = NULL, *Wr = NULL, *C = NULL, *G = NULL, *r1 = NULL,
	       *r2 = NULL;
	int it = 0, fdeg = 0;
	bool conv = false;
	int size = opt->alone ? 1 : gwb_mpi_size();
	int64_t *sa = NULL, *sc = NULL;  /* dist: the rows of A and of A^T dealt to the ranks */
	int64_t mr = rows, mc = cols;    /* this process's lengths of the two sides' vectors */
	char dnote[160] = "";

	*out = NULL;
	/* under mpirun: the same matrix on every rank, checked first */
	if (size > 1 && (st = gwb_csr_ranks_check((gwb_csr *)A, "eig.svd")))
		return st;
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
	bool dist = size > 1 && rows >= 64 * (int64_t)size && cols >= 64 * (int64_t)size;
	if (A->gpu && opt->backend == GWB_BACKEND_AUTO && !dist) {
		be = GWB_BACKEND_GPU;
		snprintf(why, sizeof(why), "auto: the matrix is on the GPU");
	} else if ((st = gwb_backend_choose(opt->backend, bytes, 0, &be, why, sizeof(why)))) {
		return st;
	}
	if (dist && be == GWB_BACKEND_GPU) {
		if (opt->backend == GWB_BACKEND_GPU)
			return gwb_error(GWB_EINVAL, "eig.svd: the SVD dealt to MPI ranks runs on their "
					 "CPUs (the GPU halo is not built); use backend = \"cpu\", or "
					 "ranks = \"self\" for each rank's own GPU solve");
		be = GWB_BACKEND_CPU;
	}
	/* the backend's table of block operations, chosen once for both sides */
	if ((st = gwb_sp_ops_get(be == GWB_BACKEND_GPU ? GWB_DEVICE_GPU : GWB_DEVICE_CPU, &oA.ops)))
		return st;
	oT.ops = oA.ops;
	if ((st = gwb_csr_transpose(A, &At)))
		return st;
	if ((st = gwb_eigen_new((size_t)cols, (size_t)rows, (size_t)k, 1, opt->vectors, true, &e)))
		goto out;
	oA.A = (gwb_csr *)A;
	oA.n = oA.N = rows;
	oT.A = At;
	oT.n = oT.N = cols;
	if (dist) {
		/* A's rows and A^T's rows (A's columns) dealt separately, each balanced by its own
		 * nonzeros: A V reads V by A^T's blocks, A^T Q reads Q by A's */
		int rank = gwb_mpi_rank();
		int64_t hs[2], hr[2], nz[2];
		int nb[2];
		sa = malloc((size_t)(size + 1) * sizeof(int64_t));
		sc = malloc((size_t)(size + 1) * sizeof(int64_t));
		if (!sa || !sc) {
			st = gwb_error(GWB_ENOMEM, "eig.svd: out of memory");
			goto out;
		}
		gwb_csr_dist_partition(A, size, sa);
		gwb_csr_dist_partition(At, size, sc);
		if ((st = gwb_csr_dist_new(A, sa, sc, "eig.svd", &oA.dist)) ||
		    (st = gwb_csr_dist_new(At, sc, sa, "eig.svd", &oT.dist)))
			goto out;
		oA.n = mr = sa[rank + 1] - sa[rank];
		oA.off = sa[rank];
		oA.starts = sa;
		oT.n = mc = sc[rank + 1] - sc[rank];
		oT.off = sc[rank];
		oT.starts = sc;
		gwb_csr_dist_volume(oA.dist, &hs[0], &hr[0], &nb[0], &nz[0]);
		gwb_csr_dist_volume(oT.dist, &hs[1], &hr[1], &nb[1], &nz[1]);
		snprintf(dnote, sizeof(dnote), "; rows of A and A^T dealt to %d MPI ranks (rank %d: "
			 "%lld + %lld rows, halo %lld + %lld B in per product pair)", size, rank,
			 (long long)mr, (long long)mc, (long long)hr[0], (long long)hr[1]);
	}
	oA.sign = oT.sign = 1.0;
	oA.fn = oT.fn = "eig.svd";
	{
		const char *pe = getenv("GWB_EIG_PROF");
		oA.prof = oT.prof = pe && *pe && strcmp(pe, "0");
	}
	{
		double t1 = gwb_now();
		if ((st = oA.ops->attach(&oA, (gwb_csr *)A, SP_ATTACH_KIND)))
			goto out;
		oT.spmv_kind = oA.spmv_kind;  /* the switch read once for both sides */
		if ((st = oT.ops->attach(&oT, At, 0)))
			goto out;
		if (!oA.ops->host)  /* the uploads */
			tx += gwb_now() - t1;
	}
	/* n-length blocks on oT, m-length on oA */
	if ((st = sp_alloc(&oT, (size_t)mc * b, &V)) || (st = sp_alloc(&oT, (size_t)mc * b, &Z)) ||
	    (st = sp_alloc(&oT, (size_t)mc * b, &Tn)) || (st = sp_alloc(&oA, (size_t)mr * b, &Y)) ||
	    (st = sp_alloc(&oA, (size_t)mr * b, &Q)) || (st = sp_alloc(&oA, (size_t)mr * b, &Tm)))
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
	if ((st = sp_random_block(&oT, V, b, opt->seed)) || (st = sp_qr(&oT, V, b, R)))
		goto done;
	double smax = 0;
	for (it = 1; it <= maxit; it++) {
		if ((st = sp_check_intr("eig.svd")))
			goto done;
		/* Y = A V = Q R; R = Ur S Wr^T: u = Q Ur, v = V Wr, A v = s u */
		if ((st = sp_spmm(&oA, V, Y, b)) || (st = sp_copy(&oA, Q, Y, (size_t)mr * b)) ||
		    (st = sp_qr(&oA, Q, b, R)) || (st = small_svd(R, b, s, Ur, Wr)))
			goto done;
		smax = s[0] > smax ? s[0] : smax;
		double scale = smax > 0 ? smax : 1;
		/* Z = A^T Q; residuals of the first k: A v - s u = Y Wr - Q Ur S and
		 * A^T u - s v = Z Ur - V Wr S */
		if ((st = sp_spmm(&oT, Q, Z, b)))
			goto done;
		for (int j = 0; j < k; j++)
			for (int i = 0; i < b; i++)
				C[i + (size_t)j * b] = -Ur[i + (size_t)j * b] * s[j];
		if ((st = sp_gemm_nn(&oA, Y, b, Wr, k, 0.0, Tm)) ||
		    (st = sp_gemm_nn(&oA, Q, b, C, k, 1.0, Tm)) || (st = col_norms(&oA, Tm, k, G, r1)))
			goto done;
		for (int j = 0; j < k; j++)
			for (int i = 0; i < b; i++)
				C[i + (size_t)j * b] = -Wr[i + (size_t)j * b] * s[j];
		if ((st = sp_gemm_nn(&oT, Z, b, Ur, k, 0.0, Tn)) ||
		    (st = sp_gemm_nn(&oT, V, b, C, k, 1.0, Tn)) || (st = col_norms(&oT, Tn, k, G, r2)))
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
		if ((st = sp_copy(&oT, V, Z, (size_t)mc * b)))
			goto done;
		int d = svd_filter_degree(s, k, b);
		if (d >= 2 && (st = svd_filter(&oA, &oT, V, Z, Tn, Tm, b, d, s[b - 1] * s[b - 1],
					       s[0] * s[0])))
			goto done;
		if (d >= 2)
			fdeg = d;
		if ((st = sp_qr(&oT, V, b, R)))
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
		if ((st = sp_gemm_nn(&oA, Q, b, Ur, k, 0.0, Tm)) ||
		    (st = sp_gemm_nn(&oT, V, b, Wr, k, 0.0, Tn)))
			goto done;
		t1 = gwb_now();
		if (dist) {  /* every rank's rows to every rank */
			if ((st = sp_gather_block(&oA, Tm, k, e->left)) ||
			    (st = sp_gather_block(&oT, Tn, k, e->vectors)))
				goto done;
		} else if ((st = sp_get(&oA, e->left, Tm, (size_t)rows * k)) ||
			   (st = sp_get(&oT, e->vectors, Tn, (size_t)cols * k))) {
			goto done;
		}
		if (!oA.ops->host)  /* on the CPU a copy in memory, not a transfer */
			tx += gwb_now() - t1;
		/* orthogonality: the larger of ||V^T V - I||_max and ||U^T U - I||_max (G is b x b,
		 * k <= b) */
		double orth = 0;
		for (int side = 0; side < 2; side++) {
			if ((st = side ? sp_gemm_tn(&oA, Tm, k, Tm, k, G) : sp_gemm_tn(&oT, Tn, k, Tn, k, G)))
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
	snprintf(e->backend, sizeof(e->backend), "%s", oA.ops->name);
	snprintf(e->note, sizeof(e->note), "randomized SVD, block %d, %d iterations, Chebyshev "
		 "degree %d on A^T A, %s QR; %ld products; ||A||_2 ~ %.6g%s", b, it, fdeg,
		 dist ? "TSQR over the ranks, LAPACK" : oA.ops->qr_name, oA.spmv + oT.spmv, smax,
		 dnote);
done:
	gwb_progress_end();
out:
	if (!st && (oA.prof || oT.prof)) {
		fprintf(stderr, "eig.svd phases (%s, %ld + %ld products):", oA.ops->name,
			oA.spmv, oT.spmv);
		for (int q = 0; q < PH_COUNT; q++)
			fprintf(stderr, " %s %.1f ms;", q == PH_SYEV ? "QR + small SVD" : sp_ph_names[q],
				(oA.ph[q] + oT.ph[q]) * 1e3);
		fprintf(stderr, " total %.1f ms\n", (gwb_now() - t0) * 1e3);
	}
	sp_free(&oT, V);
	sp_free(&oT, Z);
	sp_free(&oT, Tn);
	sp_free(&oA, Y);
	sp_free(&oA, Q);
	sp_free(&oA, Tm);
	if (oA.ops) {
		oA.ops->detach(&oA, A);
		oT.ops->detach(&oT, At);
	}
	gwb_csr_dist_free(oA.dist);
	gwb_csr_dist_free(oT.dist);
	free(sa);
	free(sc);
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
