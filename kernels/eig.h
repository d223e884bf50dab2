/* eig.h (kernels) - the GPU side of the dense eigensolvers, callable from C: our batched
 * one-sided Jacobi kernel (jacobi.cu), cuSOLVER (eig_cusolver.cu) and the device-side checks
 * (eig_check.cu). The input is a device pointer dA when not NULL (used in place, never
 * modified), else the host array A (copied up through the staging ring). Values come back
 * to the host per matrix, ascending (Jacobi's are sorted on the device). Vectors: with
 * dvec != NULL they stay on the device in the solver's precision (*dvec, from
 * gwb_gpu_malloc, the caller owns it; vector i of matrix b at (b * k + i) * n elements);
 * else with `vectors` != NULL they come back as doubles, vector i of matrix b at
 * vectors + (b * k + i) * n. Work buffers are freed before return (to the pool). */
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
gwb_status gwb_gpu_jacobi_batched(const void *A, const void *dA, int dtype, size_t count,
				  int n, int compute, double tol, int max_sweeps, double *values,
				  double *vectors, void **dvec, gwb_gpu_eig_stats *st);

/* cuSOLVER's batched symmetric solver on the same input (XsyevBatched; syevjBatched when the
 * runtime lacks it), for comparison. */
gwb_status gwb_gpu_cusolver_batched(const void *A, const void *dA, int dtype, size_t count,
				    int n, double *values, double *vectors, void **dvec,
				    gwb_gpu_eig_stats *st);

/* One dense symmetric matrix (column-major, dtype 0/1) through cusolverDnXsyevd (il == 0) or
 * cusolverDnXsyevdx for eigenvalues il..iu (1-based, inclusive). values: the pairs found
 * (iu - il + 1, or n), vectors likewise (may be NULL). */
gwb_status gwb_gpu_syevd(const void *A, const void *dA, int dtype, int n, int il, int iu,
			 double *values, double *vectors, void **dvec, gwb_gpu_eig_stats *st);

/* --- checks on the device (eig_check.cu) ----------------------------------------------
 * Same definitions as the CPU checks (f64, compensated); inputs are device pointers. */

/* Relative asymmetry max |a_ij - a_ji| / max |a_ij| (NaN counts as infinite asymmetry) of each
 * of `count` n x n matrices of dtype; rel[count] and amax[count] (may be NULL) on the host. */
gwb_status gwb_gpu_sym_check(const void *dA, int dtype, size_t count, int n, double *rel,
			     double *amax);
/* Frobenius norm of each of `count` arrays of len elements; fro[count] on the host. */
gwb_status gwb_gpu_fro_norm(const void *dA, int dtype, size_t count, size_t len, double *fro);
/* Residuals ||A v - lambda v|| / (normA ||v||) of every pair and ||V^T V - I||_max of each
 * matrix: A count n x n (adtype; a_rowmajor: stored row-major), V count n x k column-major
 * (vdtype), values and normA (count) on the host. residuals (count * k) and orth (count) on
 * the host; the device time is added to *kernel_ms (may be NULL). */
gwb_status gwb_gpu_eig_check(const void *dA, int adtype, bool a_rowmajor, size_t count, int n,
			     int k, const void *dV, int vdtype, const double *values,
			     const double *normA, double *residuals, double *orth,
			     double *kernel_ms);
/* Sort every matrix's pairs ascending on the device: dvals count * n doubles, dV (may be NULL)
 * count n x n column-major of vdtype, permuted with them. */
gwb_status gwb_gpu_eig_sort(double *dvals, void *dV, int vdtype, size_t count, int n);
/* The same for values dW of wdtype (a library's output, f32 or f64, left unsorted on the
 * device); the sorted values come back to the host as doubles in values (count * n). */
gwb_status gwb_gpu_eig_sort_w(const void *dW, int wdtype, void *dV, int vdtype, size_t count,
			      int n, double *values);

/* SVD of a general m x n f64 column-major matrix through cuSOLVER gesvdj (the economy size
 * min(m,n)): s (descending), U (m x p column-major) and V (n x p), p = min(m, n); U and V may
 * be NULL. */
gwb_status gwb_gpu_svd(const double *A, int m, int n, double *s, double *U, double *V,
		       gwb_gpu_eig_stats *st);

#ifdef __cplusplus
}
#endif
#endif
