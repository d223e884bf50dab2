/* eig_sparse.h - eigenpairs at one end (or both ends) of a sparse symmetric matrix: thick-
 * restart Lanczos (partial or full reorthogonalization, CGS2 against the basis),
 * Chebyshev-filtered subspace iteration, LOBPCG with a Jacobi preconditioner, randomized
 * subspace iteration and randomized start + Lanczos refinement, on CPU threads or the GPU.
 * One algorithm per method, written once over a small set of block operations that each
 * backend provides.
 * The caller owns the returned gwb_eigen (gwb_eigen_free). */
#ifndef GWB_EIG_SPARSE_H
#define GWB_EIG_SPARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "eig.h"
#include "sparse.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_which { GWB_SMALLEST = 0, GWB_LARGEST, GWB_BOTH } gwb_which;

typedef enum gwb_sp_method {
	GWB_SPM_AUTO = 0,
	GWB_SPM_LANCZOS,     /* thick-restart Lanczos */
	GWB_SPM_CHEBYSHEV,   /* Chebyshev-filtered subspace iteration */
	GWB_SPM_LOBPCG,      /* LOBPCG, Jacobi preconditioner */
	GWB_SPM_RANDOMIZED,  /* randomized subspace iteration (block power + Rayleigh-Ritz) */
	GWB_SPM_RAND_LANCZOS,/* randomized subspace as the start, then Lanczos */
	GWB_SPM_DENSE,       /* densify and call LAPACK (small matrices) */
	GWB_SPM_COUNT
} gwb_sp_method;

typedef struct gwb_sp_opts {
	int k;                /* pairs wanted (per end for GWB_BOTH) */
	gwb_which which;
	double tol;           /* residual ||Av - lv|| <= tol * ||A||_2 (estimated) per pair */
	int maxiter;          /* outer iterations (restarts / block iterations); 0 = default */
	gwb_sp_method method;
	int ncv;              /* Lanczos basis size; 0 = auto */
	int block;            /* block size of block methods; 0 = auto */
	int degree;           /* Chebyshev polynomial degree; 0 = auto */
	bool full_reorth;     /* Lanczos: reorthogonalize every step */
	double reorth_tol;    /* Lanczos: reorthogonalize when the estimated loss of
			       * orthogonality exceeds this (0 = min(sqrt(eps), tol / 10)) */
	uint64_t seed;
	bool vectors;         /* keep eigenvectors in the result */
	gwb_backend backend;
	bool no_defl_check;   /* Lanczos: skip the deflated run that looks for missed copies of
			       * repeated eigenvalues (deflated_check = false; ARPACK and SLEPc
			       * have none: faster by its products, blind to a missed copy) */
	bool alone;           /* ranks = "self": under mpirun, this process solves alone (the
			       * default, "all", deals the rows to the ranks: sparse_dist.h) */
	int spmv_kind;        /* GPU SpMV: 0 auto (ours, vectors and blocks: row-major blocks for
			       * the Chebyshev filter), 1 ours, 2 cuSPARSE (SpMV and SpMM) */
} gwb_sp_opts;

/* Defaults: k = 6, smallest, tol 1e-10, auto method, vectors kept, auto backend. */
void gwb_sp_opts_default(gwb_sp_opts *o);

const char *gwb_sp_method_name(gwb_sp_method m);
gwb_status gwb_sp_method_parse(const char *s, gwb_sp_method *out);

/* Solve. A must be square, symmetric and finite; k in [1, n). The result holds k pairs
 * (2k for GWB_BOTH, the k smallest then the k largest, ascending overall), true residuals
 * ||Av - lv|| / ||A||_2, the convergence history, method, backend and timings. */
gwb_status gwb_eig_sparse(gwb_csr *A, const gwb_sp_opts *o, gwb_eigen **out);

#ifdef __cplusplus
}
#endif
#endif
