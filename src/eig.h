/* eig.h - the eigen result shared by every eigensolver (dense, batched, sparse, SVD): values
 * ascending, optional vectors, per-pair residuals, orthogonality, iterations, a convergence
 * history, the method and backend that ran, and timings. The solver that fills a result
 * owns it until it hands it to the caller; the caller frees it with gwb_eigen_free(). */
#ifndef GWB_EIG_H
#define GWB_EIG_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "mgpu.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of the convergence history (iterative solvers; Jacobi sweeps). */
typedef struct gwb_eig_hist {
	int iteration;        /* iteration or sweep number, from 1 */
	int converged;        /* pairs converged so far (Jacobi: matrices converged) */
	double max_residual;  /* largest residual estimate (Jacobi: off(A)/||A||) */
} gwb_eig_hist;

typedef struct gwb_eigen {
	size_t n;             /* order of the matrix (SVD: columns of A) */
	size_t m;             /* SVD: rows of A; otherwise equal to n */
	size_t k;             /* pairs held per matrix */
	size_t count;         /* matrices: 1, or the size of a batch */
	bool svd;             /* values are singular values (descending), vectors are right
			       * singular vectors, left holds the left ones */
	double *values;       /* count * k; per matrix ascending (SVD: descending) */
	double *vectors;      /* NULL, or count * k vectors of n doubles: vector i of matrix b at
			       * vectors + (b * k + i) * n (an n x k column-major block per matrix) */
	double *left;         /* SVD with vectors: count * k vectors of m doubles; else NULL */
	double *residuals;    /* NULL, or count * k: ||A v - lambda v|| / (||A|| ||v||) per pair
			       * (SVD: max(||A v - s u||, ||A^T u - s v||) / ||A||) */
	double max_residual;  /* over all pairs (NaN when residuals were not computed) */
	double orthogonality; /* max over matrices of ||V^T V - I||_max (NaN without vectors) */
	int iterations;       /* iterations or sweeps (batched: the largest over the batch) */
	bool converged;       /* the method reached its tolerance */
	gwb_eig_hist *hist;   /* hist_len entries of convergence history */
	size_t hist_len, hist_cap;
	char method[64];      /* "lapack-syevd", "jacobi", "cusolver-syevd", "lanczos", ... */
	char backend[8];      /* "cpu" or "gpu" */
	char dtype[8];        /* precision the solver worked in: "f32", "f64", "f32+f64" */
	char note[1024];      /* why this method/backend was chosen (for printing and the log) */
	double kernel_ms;     /* device kernel time (CPU: compute time), checks included */
	double transfer_ms;   /* host<->device copies */
	double check_ms;      /* of kernel_ms (GPU) or of the host time (CPU): symmetry,
			       * residual and orthogonality checks */
	double total_ms;      /* wall time of the whole call; host_ms = total - kernel - transfer */
	struct gwb_buf *dvectors; /* GPU results: the vectors on the device, in the solver's
				   * precision dvec_dtype, laid out as `vectors`; `vectors` stays
				   * NULL until gwb_eigen_host_vectors() (or NULL: none) */
	int dvec_dtype;       /* 0 = f32, 1 = f64 */
} gwb_eigen;

/* A result for `count` matrices of order n with k pairs each; values and residuals allocated
 * (NaN-filled), vectors allocated when `vectors`. m is the row count for SVD (else n).
 * GWB_ENOMEM with bytes. */
gwb_status gwb_eigen_new(size_t n, size_t m, size_t k, size_t count, bool vectors, bool svd,
			 gwb_eigen **out);
/* Free a result and everything it holds (NULL is fine). */
void gwb_eigen_free(gwb_eigen *e);

/* Vectors kept (on the host or the device). */
static inline bool gwb_eigen_has_vectors(const gwb_eigen *e)
{
	return e->vectors || e->dvectors;
}
/* Make e->vectors hold the vectors on the host (a GPU result copies them once, widened to
 * f64, and caches them). GWB_OK with e->vectors NULL when the result has no vectors. */
gwb_status gwb_eigen_host_vectors(gwb_eigen *e);
/* Vector i of matrix b into out[n] (copies just that vector from the device when the host
 * has no copy). */
gwb_status gwb_eigen_vector_copy(const gwb_eigen *e, size_t b, size_t i, double *out);

/* Append one history entry (grows the array; GWB_ENOMEM). */
gwb_status gwb_eigen_history_push(gwb_eigen *e, int iteration, int converged,
				  double max_residual);

/* Sort the pairs of matrix b by value, ascending (descending for SVD), moving vectors, left
 * vectors and residuals with them. */
void gwb_eigen_sort(gwb_eigen *e, size_t b);

/* Vector i of matrix b (NULL when vectors were not kept). */
static inline double *gwb_eigen_vector(const gwb_eigen *e, size_t b, size_t i)
{
	return e->vectors ? e->vectors + (b * e->k + i) * e->n : NULL;
}

/* y = A x for an operator of order n (used to compute residuals for any matrix type). */
typedef gwb_status (*gwb_matvec_fn)(void *ctx, const double *x, double *y);

/* Residuals of matrix b's pairs through a matvec, given ||A|| (any consistent norm; the
 * dense code uses Frobenius), compensated; updates e->residuals and e->max_residual. */
gwb_status gwb_eigen_residuals_op(gwb_eigen *e, size_t b, gwb_matvec_fn mv, void *ctx,
				  double normA);

/* ||V^T V - I||_max of matrix b's vectors (compensated dots); NaN without vectors. Also
 * folds it into e->orthogonality. */
double gwb_eigen_orthogonality(gwb_eigen *e, size_t b);

/* Recompute e->max_residual from e->residuals. */
void gwb_eigen_update_max(gwb_eigen *e);

/* --- dense and batched drivers (eig_dense.c, eig_batched.c; eig_dense_impl.h: the pieces) --
 * Symmetric dense matrices on the CPU (LAPACK dsyevd/ssyevd/dsyevr through the Fortran ABI, a
 * cyclic Jacobi reference, f32 sweeps + f64 refinement) or the GPU (cuSOLVER Xsyevd/syevdx,
 * our batched Jacobi kernel, cuSOLVER's batched Jacobi for comparison), and the SVD of
 * general dense matrices (LAPACK dgesdd, cuSOLVER gesvdj). */
struct gwb_matrix;

typedef enum gwb_eig_end { GWB_END_SMALLEST = 0, GWB_END_LARGEST, GWB_END_BOTH } gwb_eig_end;

typedef enum gwb_dense_method {
	GWB_DM_AUTO = 0,
	GWB_DM_SYEVD,      /* LAPACK dsyevd/ssyevd (CPU) or cusolverDnXsyevd (GPU) */
	GWB_DM_SYEVR,      /* LAPACK dsyevr / cusolverDnXsyevdx: a subset of k pairs */
	GWB_DM_JACOBI,     /* cyclic Jacobi (CPU reference) / our batched Jacobi kernel (GPU) */
	GWB_DM_MIXED,      /* f32 solve, then f64 refinement to f64-level residuals */
	GWB_DM_CUSOLVER,   /* batched: cuSOLVER syevjBatched (comparison) */
	GWB_DM_COUNT
} gwb_dense_method;

typedef struct gwb_dense_opts {
	size_t k;             /* pairs wanted per end; 0 = all */
	gwb_eig_end which;
	gwb_dense_method method;
	double tol;           /* Jacobi: rotation threshold (0 = dtype default); else unused */
	int max_sweeps;       /* Jacobi: 0 = default (30) */
	gwb_backend backend;
	bool vectors;         /* keep eigenvectors (residuals and orthogonality need them) */
	bool residuals;       /* compute residuals/orthogonality (default true) */
	int threads;          /* CPU: batches run on this many threads (BLAS on one each); one
			       * matrix: BLAS threads for the call; 0 = the default (blas.h) */
	double sym_tol;       /* relative asymmetry allowed (0 = 100 eps of the dtype) */
	int dtype;            /* batched GPU: -1 = the matrix's dtype, else gwb_dtype to compute in */
	gwb_gpu_set gpus;     /* batched: the devices the matrices are dealt to (mgpu.h; default
			       * device 0 alone; gpus.cpu: CPU stand-ins, tests) */
} gwb_dense_opts;

void gwb_dense_opts_default(gwb_dense_opts *o);
const char *gwb_dense_method_name(gwb_dense_method m);
gwb_status gwb_dense_method_parse(const char *s, gwb_dense_method *out);

/* Eigenpairs of one symmetric dense matrix (A->count must be 1). Non-symmetric input is
 * GWB_EINVAL pointing to eig.svd. The result's k is the number of pairs kept (2k for BOTH). */
gwb_status gwb_eig_dense(const struct gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out);

/* All eigenpairs of every matrix of a batch (a single matrix counts as a batch of one). */
gwb_status gwb_eig_batched(const struct gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen **out);
/* The same batch on the ranks of an MPI job (eig_ranks.c): the matrices dealt to the ranks in
 * order, each range solved by gwb_eig_batched, values, residuals and vectors gathered on every
 * rank in matrix order; the ranks' batches are compared first (count, order, checksum). A job
 * of one: gwb_eig_batched. Every rank must call it (a collective). */
gwb_status gwb_eig_batched_ranks(const struct gwb_matrix *B, const gwb_dense_opts *o,
				 gwb_eigen **out);

/* Singular value decomposition of a general dense matrix: k largest singular values
 * (0 = all, min(m, n)), descending, right vectors in e->vectors and left in e->left. */
gwb_status gwb_svd_dense(const struct gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out);

/* Cyclic Jacobi reference on an n x n symmetric column-major f64 matrix a (destroyed): values
 * w (ascending), vectors V (n x n column-major, may be NULL). Off-diagonal threshold tol
 * relative to ||A||_F (0 = n eps). *sweeps receives the sweeps used; GWB_ENOCONV after
 * max_sweeps. */
gwb_status gwb_eig_jacobi_ref(size_t n, double *a, double *w, double *V, double tol,
			      int max_sweeps, int *sweeps);

/* Matrix b's vectors as an n x k column-major Matrix: GPU-resident (in the solver's precision)
 * when the result is on the device, else a host f64 copy. The caller owns it. */
gwb_status gwb_eigen_matrix(const gwb_eigen *e, size_t b, struct gwb_matrix **out);

/* Residuals and orthogonality of matrix b of a dense result against matrix b of A (rows of A
 * must equal e->n); normalizes by ||A||_2 = max |lambda| when every eigenvalue was computed,
 * else by ||A||_F. */
gwb_status gwb_eig_dense_check(gwb_eigen *e, size_t b, const struct gwb_matrix *A, size_t ab);

#ifdef __cplusplus
}
#endif
#endif
