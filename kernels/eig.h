/* eig.h (kernels) - the GPU side of the dense eigensolvers, callable from C: our batched
 * one-sided Jacobi kernel (jacobi.cu) and cuSOLVER (eig_cusolver.cu). Inputs and outputs are
 * host arrays; device buffers are allocated through gwb_gpu_malloc and freed before return.
 * Values come back per matrix in the order the solver produced them (the caller sorts);
 * vectors as n-vectors of doubles, vector i of matrix b at vectors + (b * k + i) * n. */
#ifndef GWB_KERNELS_EIG_H
#define GWB_KERNELS_EIG_H

#include <stdbool.h>
#include <stddef.h>

#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_gpu_eig_stats {
	double kernel_ms;     /* device time of kernels and library calls */
	double transfer_ms;   /* host<->device copies */
	int sweeps;           /* Jacobi: most sweeps any matrix took (library: reported or 0) */
	int unconverged;      /* matrices that hit the sweep limit */
	char variant[64];     /* e.g. "jacobi-smem f64 threads=512" */
} gwb_gpu_eig_stats;

/* Batched one-sided Jacobi: `count` symmetric n x n matrices at A (dtype 0 = f32, 1 = f64;
 * symmetric, so either layout). compute: 0 = f32, 1 = f64, 2 = f32 sweeps + f64 refinement
 * (input must be f64). tol: rotation threshold (0 = default); max_sweeps (0 = 30). values:
 * count * n; vectors (may be NULL): count * n * n. */
gwb_status gwb_gpu_jacobi_batched(const void *A, int dtype, size_t count, int n, int compute,
				  double tol, int max_sweeps, double *values, double *vectors,
				  gwb_gpu_eig_stats *st);

/* cuSOLVER's batched symmetric solver on the same input (XsyevBatched; syevjBatched when the
 * runtime lacks it), for comparison. */
gwb_status gwb_gpu_cusolver_batched(const void *A, int dtype, size_t count, int n,
				    double *values, double *vectors, gwb_gpu_eig_stats *st);

/* One dense symmetric matrix (column-major, dtype 0/1) through cusolverDnXsyevd (il == 0) or
 * cusolverDnXsyevdx for eigenvalues il..iu (1-based, inclusive). values: the pairs found
 * (iu - il + 1, or n), vectors likewise (may be NULL). */
gwb_status gwb_gpu_syevd(const void *A, int dtype, int n, int il, int iu, double *values,
			 double *vectors, gwb_gpu_eig_stats *st);

/* SVD of a general m x n f64 column-major matrix through cuSOLVER gesvdj (the economy size
 * min(m,n)): s (descending), U (m x p column-major) and V (n x p), p = min(m, n); U and V may
 * be NULL. */
gwb_status gwb_gpu_svd(const double *A, int m, int n, double *s, double *U, double *V,
		       gwb_gpu_eig_stats *st);

#ifdef __cplusplus
}
#endif
#endif
