/* sparse.h - the sparse matrix: CSR, f64 values, 32-bit row offsets and column indices when
 * they fit (nnz and order below 2^31), 64-bit beyond. Built by generators (Laplacians, random
 * symmetric, k-nearest-neighbour graph Laplacians), from triplets, and by the Matrix Market
 * reader (mm.c); read by the sparse eigensolvers (eig_sparse.c and the files of
 * eig_sparse_impl.h, kernels/eig_sparse.cu).
 * The caller owns a matrix and frees it with gwb_csr_free(). */
#ifndef GWB_SPARSE_H
#define GWB_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "dataset.h"
#include "pool.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_csr {
	int64_t rows, cols;
	int64_t nnz;
	bool wide;            /* 64-bit indices (rp64/ci64) instead of 32-bit (rp32/ci32) */
	int32_t *rp32, *ci32; /* rows+1 offsets and nnz column indices (when !wide) */
	int64_t *rp64, *ci64; /* the same, 64-bit (when wide) */
	double *val;          /* nnz values; columns ascending within a row, no duplicates */
	int sym;              /* symmetry: -1 unknown, 0 no, 1 yes (exactly) */
	char name[96];        /* where it came from ("laplacian2d(317)", "bcsstk04.mtx") */
	struct gwb_gpu_csr *gpu; /* GPU-resident copy (A:to("gpu"), kernels/sparse.h) or NULL;
				  * owned, used in place by the GPU solvers; the host arrays stay
				  * valid (a CSR is never written after it is built) */
	uint64_t sum;         /* the run log's XXH64 of the arrays (lapi_sparse.c), cached */
	bool sum_ok;
} gwb_csr;

/* Residency: "gpu" uploads once (all or nothing; without a GPU the error says why), "cpu"
 * frees the device copy. */
gwb_status gwb_csr_to(gwb_csr *A, bool gpu);

/* Row offset and column index accessors (whatever the index width). */
static inline int64_t gwb_csr_rp(const gwb_csr *A, int64_t i)
{
	return A->wide ? A->rp64[i] : (int64_t)A->rp32[i];
}
static inline int64_t gwb_csr_ci(const gwb_csr *A, int64_t p)
{
	return A->wide ? A->ci64[p] : (int64_t)A->ci32[p];
}

/* An empty (all-zero) rows x cols matrix with room for nnz entries; index width chosen by
 * size (force_wide forces 64-bit). Offsets are zero; the caller fills them. GWB_ENOMEM. */
gwb_status gwb_csr_alloc(int64_t rows, int64_t cols, int64_t nnz, bool force_wide,
			 gwb_csr **out);
void gwb_csr_free(gwb_csr *A);

/* XXH64 of the CSR arrays (offsets, indices, values), computed once and cached in A->sum (a
 * CSR is never written after it is built): the run log's checksum, and what the ranks of an
 * MPI job compare before a distributed solve. */
uint64_t gwb_csr_checksum(gwb_csr *A);

/* Bytes held by the matrix (indices + values). */
size_t gwb_csr_bytes(const gwb_csr *A);

/* Build from triplets (0-based; any order; duplicates summed; explicit zeros kept). With
 * mirror, each off-diagonal (i, j) also adds (j, i) (symmetric storage of one triangle).
 * Indices out of range are GWB_EINVAL naming the entry. */
gwb_status gwb_csr_from_coo(int64_t rows, int64_t cols, int64_t n, const int64_t *I,
			    const int64_t *J, const double *V, bool mirror, gwb_csr **out);

/* y = A x (multithreaded for large matrices). */
void gwb_csr_spmv(const gwb_csr *A, const double *x, double *y);
/* Y = A X for b column-major vectors (ld = cols for X, rows for Y). */
void gwb_csr_spmm(const gwb_csr *A, const double *X, double *Y, int b);
/* Y = alpha A X (the scaling applied as Y is written). */
void gwb_csr_spmm_scaled(const gwb_csr *A, double alpha, const double *X, double *Y, int b);
/* Y = alpha A X + beta X + gamma Z for a square A (Z may be NULL when gamma is 0; Y must not
 * be X or Z): a Chebyshev filter's step in one pass over the rows, Z and Y n x b like X. */
void gwb_csr_spmm_axpby(const gwb_csr *A, double alpha, const double *X, double beta,
			const double *Z, double gamma, double *Y, int b);
/* y = alpha A x for a square A, returning x^T y (compensated sums): Lanczos' product and its
 * diagonal coefficient in one pass over y. */
double gwb_csr_spmv_dot(const gwb_csr *A, double alpha, const double *x, double *y);

/* Exact structural and numerical symmetry; caches the answer in A->sym. When not symmetric,
 * at (may be NULL) receives an offending (row, col), 0-based. */
bool gwb_csr_is_symmetric(gwb_csr *A, int64_t at[2]);
/* First NaN/Inf value's (row, col) in at; false when all finite. */
bool gwb_csr_has_nonfinite(const gwb_csr *A, int64_t at[2]);
/* max_i sum_j |a_ij| (an upper bound of ||A||_2 for symmetric A) and Frobenius norm. */
double gwb_csr_norm_inf(const gwb_csr *A);
double gwb_csr_norm_fro(const gwb_csr *A);
/* The diagonal (rows entries, zeros where absent). */
void gwb_csr_diag(const gwb_csr *A, double *d);
/* Element (i, j) (binary search in row i; 0 when absent). */
double gwb_csr_get(const gwb_csr *A, int64_t i, int64_t j);

/* Generators (Dirichlet boundary: eigenvalues known in closed form).
 * laplacian1d(n): tridiag(-1, 2, -1), order n; eigenvalues 2 - 2 cos(k pi / (n + 1)).
 * laplacian2d(nx, ny): five-point stencil on an nx x ny grid, order nx*ny.
 * laplacian3d(nx, ny, nz): seven-point stencil, order nx*ny*nz. */
gwb_status gwb_csr_laplacian1d(int64_t n, gwb_csr **out);
gwb_status gwb_csr_laplacian2d(int64_t nx, int64_t ny, gwb_csr **out);
gwb_status gwb_csr_laplacian3d(int64_t nx, int64_t ny, int64_t nz, gwb_csr **out);
/* The exact k-th smallest (k from 1) eigenvalues of those Laplacians, ascending, m values. */
gwb_status gwb_laplacian_eigenvalues(int dims, int64_t nx, int64_t ny, int64_t nz, int64_t m,
				     double *out);

/* A random symmetric n x n matrix with about density * n^2 nonzeros: positions uniform over
 * the upper triangle (mirrored), values uniform in [-1, 1), plus a full diagonal when diag.
 * Deterministic for a seed. */
gwb_status gwb_csr_randsym(int64_t n, double density, uint64_t seed, bool diag, gwb_csr **out);

/* A random rows x cols matrix with about density * rows * cols nonzeros at uniform positions
 * (positions drawn twice are summed), values uniform in [-1, 1). Deterministic for a seed. */
gwb_status gwb_csr_random(int64_t rows, int64_t cols, double density, uint64_t seed,
			  gwb_csr **out);

/* A^T as a new CSR matrix (same index width). */
gwb_status gwb_csr_transpose(const gwb_csr *A, gwb_csr **out);

/* The k largest singular triplets of a sparse rows x cols matrix (any shape) by randomized
 * subspace iteration on A and A^T (implemented in eig_svd.c): V orthonormal (QR), Y = A V,
 * Y = Q R (QR: LAPACK dgeqrf/dorgqr, cuSOLVER geqrf/orgqr on the GPU), R = Ur S Vr^T, so
 * u = Q Ur, v = V Vr, A v = s u; Z = A^T Q gives ||A^T u - s v||, and V <- orth(Z) repeats
 * until every one of the k pairs has max(||Av - su||, ||A^T u - sv||) <= tol * s_1. */
typedef struct gwb_svd_opts {
	int k;                /* triplets wanted, 1 <= k <= min(rows, cols) */
	double tol;           /* relative to s_1 (||A||_2); default 1e-10 */
	int maxiter;          /* 0 = 5000 */
	int block;            /* subspace width; 0 = k + max(10, k) (at most min(rows, cols)) */
	uint64_t seed;
	bool vectors;         /* keep u (left) and v (right, e->vectors) in the result */
	gwb_backend backend;
	bool alone;           /* ranks = "self": under mpirun, this process solves alone (the
			       * default deals the rows of A and of A^T to the ranks) */
} gwb_svd_opts;
void gwb_svd_opts_default(gwb_svd_opts *o);
struct gwb_eigen;
/* The result: e->svd, values descending, e->vectors right (cols each), e->left left (rows
 * each), residuals max(||Av - su||, ||A^T u - sv||) / s_1, history per iteration. */
gwb_status gwb_svd_sparse(const gwb_csr *A, const gwb_svd_opts *o, struct gwb_eigen **out);

/* Graph Laplacian of the k-nearest-neighbour graph of a dataset's rows (features
 * standardised, Euclidean distance, exact search; the graph made symmetric by union).
 * Weights: 1 (sigma <= 0) or exp(-d^2 / (2 sigma^2)). normalized: I - D^-1/2 W D^-1/2 instead
 * of D - W. Rows with missing values are an error naming the row. */
gwb_status gwb_csr_knn_laplacian(const gwb_dataset *d, int k, double sigma, bool normalized,
				 gwb_csr **out);

/* Binary save/load (".gwbs"): magic "GWBS", version, rows, cols, nnz, index bits, symmetry,
 * name, then row offsets, column indices and values little-endian, and a 64-bit FNV-1a
 * checksum of everything before it. Load checks magic, version, sizes against the file
 * length and the checksum (GWB_ECORRUPT naming the file). gwb_csr_is_gwbs: the file starts
 * with the magic. */
gwb_status gwb_csr_save(const gwb_csr *A, const char *path);
gwb_status gwb_csr_load(const char *path, gwb_csr **out);
bool gwb_csr_is_gwbs(const char *path);


#ifdef __cplusplus
}
#endif
#endif
