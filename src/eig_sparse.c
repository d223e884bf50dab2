/* eig_sparse.c - the sparse symmetric eigen driver (eig_sparse.h): checks the matrix, picks
 * the method (auto: dense LAPACK for small n, LOBPCG where Jacobi pays, else Lanczos or the
 * Chebyshev filter by the gap ratio bounds() measures) and the backend, whose table of block
 * operations (eig_sparse_impl.h) it chooses once per solve, runs each wanted end, checks the
 * true residuals and orthogonality and fills the result. Every method targets the smallest
 * eigenvalues of s*A with s = +1 ("smallest") or -1 ("largest"), so one code path serves
 * both ends. The methods are eig_lanczos.c, eig_cheb.c and eig_lobpcg.c; the sparse SVD is
 * eig_svd.c. Uses them, eig_block.c, eig_sparse_ops.c, sparse.c, backend.c and switches.c. */
#define _GNU_SOURCE
#include "eig_sparse_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "sparse_dist.h"
#include "switches.h"

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


/* ================================================================ dense (small n) */

static gwb_status dense_solve(solve *S)
{
	sp_op *o = S->o;
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
	st = sp_syev(o, D, n, w);
	if (!st) {
		memcpy(S->theta, w, (size_t)k * sizeof(double));
		st = sp_put(o, S->X, D, (size_t)n * k);
		S->converged = true;
		if (!st)
			st = sp_record(S, k, 0);
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
	gwb_sp_method m = g >= cut && !S->o->ops->keeps_filter ? GWB_SPM_LANCZOS : GWB_SPM_CHEBYSHEV;
	snprintf(why, len, "auto: %s (gap ratio of the wanted end ~%.2g %s %.2g: a 40-step "
		 "Lanczos run's Ritz gap %.2g over ~%.3g eigenvalues at its extreme value%s)",
		 gwb_sp_method_name(m), g, g >= cut ? ">=" : "<", cut, S->gap, S->mass,
		 g >= cut && S->o->ops->keeps_filter ? "; the GPU keeps the filter" : "");
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
		return sp_lanczos(S, NULL);
	case GWB_SPM_LOBPCG:
		S->maxiter = maxit > 0 ? maxit : 20000;
		return sp_lobpcg(S);
	case GWB_SPM_RANDOMIZED:
		S->maxiter = maxit > 0 ? maxit : 20000;
		return sp_subspace(S, false, S->maxiter);
	case GWB_SPM_RAND_LANCZOS: {
		/* a few randomized iterations, then Lanczos from the sum of their Ritz vectors */
		st = sp_subspace(S, false, 3);
		if (st)
			return st;
		if (S->converged)
			return GWB_OK;
		double *v0 = NULL, *ones = malloc((size_t)S->k * sizeof(double));
		if (!ones)
			return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		for (int i = 0; i < S->k; i++)
			ones[i] = 1.0;
		st = sp_alloc(S->o, (size_t)S->o->n, &v0);
		if (!st)
			st = sp_gemm_nn(S->o, S->X, S->k, ones, 1, 0.0, v0);
		free(ones);
		S->maxiter = maxit > 0 ? maxit : 2000;
		if (!st)
			st = sp_lanczos(S, v0);
		sp_free(S->o, v0);
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
		return sp_subspace(S, true, S->maxiter);
	}
}

gwb_status gwb_eig_sparse(gwb_csr *A, const gwb_sp_opts *opt, gwb_eigen **out)
{
	gwb_eigen *e = NULL;
	gwb_status st;
	int64_t at[2];
	int k = opt->k, ends = opt->which == GWB_BOTH ? 2 : 1;
	double t0 = gwb_now();
	sp_op o = {0};
	gwb_backend be;
	char why[160] = "";
	gwb_sp_method method = opt->method;
	char used[40] = "";   /* the method(s) that ran, "lobpcg+chebyshev" for two ends */
	int64_t *starts = NULL;
	char dnote[200] = ""; /* dist: how the rows were dealt */
	int size = opt->alone ? 1 : gwb_mpi_size();

	*out = NULL;
	/* under mpirun: the same matrix on every rank, checked before anything that could end
	 * one rank alone (a mismatched matrix fails the checks below differently per rank) */
	if (size > 1 && (st = gwb_csr_ranks_check(A, "eig.solve")))
		return st;
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
	/* under mpirun the rows are dealt to the ranks (CPU ranks: the halo moves through host
	 * memory); a dense solve, and a matrix with fewer than 64 rows a rank, is solved by every
	 * rank alone (the same numbers: nothing to deal) */
	bool dist = size > 1 && method != GWB_SPM_DENSE && A->rows >= 64 * (int64_t)size;
	if (dist && be == GWB_BACKEND_GPU) {
		if (opt->backend == GWB_BACKEND_GPU)
			return gwb_error(GWB_EINVAL, "eig.solve: the solve dealt to MPI ranks runs on "
					 "their CPUs (the GPU halo is not built); use backend = \"cpu\", "
					 "or ranks = \"self\" for each rank's own GPU solve");
		be = GWB_BACKEND_CPU;
		snprintf(why, sizeof(why), "CPU ranks: the solve is dealt to %d MPI ranks", size);
	}
	if ((st = gwb_eigen_new((size_t)A->rows, (size_t)A->rows, (size_t)k * ends, 1, true, false, &e)))
		return st;
	o.A = A;
	o.n = o.N = A->rows;
	o.spmv_kind = opt->spmv_kind;
	if (dist) {
		int rank = gwb_mpi_rank();
		int64_t hs, hr, nz;
		int nb;
		if (!(starts = malloc((size_t)(size + 1) * sizeof(int64_t)))) {
			gwb_eigen_free(e);
			return gwb_error(GWB_ENOMEM, "eig.solve: out of memory");
		}
		gwb_csr_dist_partition(A, size, starts);
		if ((st = gwb_csr_dist_new(A, starts, starts, "eig.solve", &o.dist))) {
			free(starts);
			gwb_eigen_free(e);
			return st;
		}
		o.n = starts[rank + 1] - starts[rank];
		o.off = starts[rank];
		o.starts = starts;
		gwb_csr_dist_volume(o.dist, &hs, &hr, &nb, &nz);
		snprintf(dnote, sizeof(dnote), "; rows dealt to %d MPI ranks (rank %d: %lld rows, %lld "
			 "nonzeros, halo %lld B in and %lld B out per product from %d ranks)", size,
			 rank, (long long)o.n, (long long)nz, (long long)hr, (long long)hs, nb);
	}
	{
		const char *pe = getenv("GWB_EIG_PROF");
		o.prof = pe && *pe && strcmp(pe, "0");
	}
	/* the backend's table of block operations, chosen once for the solve; attach makes A
	 * usable there (the GPU: its resident copy, or an upload) */
	double tx = 0, ta = gwb_now();
	if ((st = gwb_sp_ops_get(be == GWB_BACKEND_GPU ? GWB_DEVICE_GPU : GWB_DEVICE_CPU, &o.ops)) ||
	    (st = o.ops->attach(&o, A, SP_ATTACH_ROWS | SP_ATTACH_KIND))) {
		gwb_eigen_free(e);
		return st;
	}
	if (!o.ops->host)  /* the upload */
		tx += gwb_now() - ta;
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
		if (!(st = sp_alloc(&o, (size_t)o.n * k * 2 + 1, &X))) {
			S.X = X;
			if (m_end == GWB_SPM_DENSE) {
				S.normA = gwb_csr_norm_inf(A);
				st = solve_end(&S, m_end);
			} else if (!(st = sp_bounds(&S))) {
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
				if (!st && !(st = sp_spmm(&o, X, AX, k)))
					st = sp_residual_norms(&o, X, AX, k, S.theta, R, S.res, &orth);
				free(R);
			} else {
				double *AX = X + (size_t)o.n * k, *R = NULL;
				if (!(st = sp_alloc(&o, (size_t)o.n * k, &R)) && !(st = sp_spmm(&o, X, AX, k)))
					st = sp_residual_norms(&o, X, AX, k, S.theta, R, S.res, &orth);
				sp_free(&o, R);
			}
			if (!st) {
				double normA = S.normA > 0 ? S.normA : 1;
				if (opt->vectors && o.dist) {
					/* every rank's rows to every rank: the vectors one process returns */
					st = sp_gather_block(&o, X, k, e->vectors + (size_t)end * k * o.N);
				} else if (opt->vectors) {
					double t1 = gwb_now();
					st = sp_get(&o, e->vectors + (size_t)end * k * o.n, X, (size_t)o.n * k);
					if (!o.ops->host)  /* on the CPU a copy in memory, not a transfer */
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
					 "||A||_2 ~ %.6g%s%s%s", auto_why, *auto_why ? "; " : "", S.note,
					 o.spmv, ro, normA, *why ? "; " : "", why, dnote);
			}
		}
		sp_free(&o, X);
		X = NULL;
		free(S.theta);
		free(S.res);
		if (st)
			break;
	}
	gwb_progress_end();
	o.ops->detach(&o, A);
	gwb_csr_dist_free(o.dist);
	free(starts);
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
	snprintf(e->backend, sizeof(e->backend), "%s", o.ops->name);
	e->total_ms = (gwb_now() - t0) * 1e3;
	e->transfer_ms = tx * 1e3;
	if (o.prof) {
		double sum = 0;
		fprintf(stderr, "eig.solve phases (%s, %s, %ld products A x, synchronized after each "
			"operation):", e->method, e->backend, o.spmv);
		for (int p = 0; p < PH_COUNT; p++) {
			fprintf(stderr, " %s %.1f ms;", sp_ph_names[p], o.ph[p] * 1e3);
			sum += o.ph[p];
		}
		fprintf(stderr, " other %.1f ms; total %.1f ms\n", e->total_ms - sum * 1e3, e->total_ms);
	}
	e->kernel_ms = e->total_ms - e->transfer_ms;
	*out = e;
	return GWB_OK;
}

