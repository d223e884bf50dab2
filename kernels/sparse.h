/* sparse.h (kernels) - the GPU side of sparse matrices and the sparse eigensolvers, for host
 * C code (extern "C"; call only inside #ifdef GWB_HAVE_CUDA). A gwb_gpu_csr is a device copy
 * of a CSR matrix plus the cuBLAS/cuSPARSE handles and scratch the block operations need; the
 * caller owns it and frees it with gwb_gpu_csr_free(). Block pointers are device memory from
 * gwb_gpu_malloc, column-major with leading dimension n; small matrices (Gram, coefficient
 * blocks) live on the host. */
#ifndef GWB_KERNELS_SPARSE_H
#define GWB_KERNELS_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/sparse.h"
#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_gpu_csr gwb_gpu_csr;

/* Which SpMV: ours (a segment of 1..32 lanes per row, by mean row length; blocks of vectors
 * one thread per (row, column) on row-major copies) or cuSPARSE (SpMV / SpMM column-major,
 * SpMM CSR_ALG2 on the filter's row-major blocks); auto = ours. */
typedef enum gwb_spmv_kind { GWB_SPMV_AUTO = 0, GWB_SPMV_OURS, GWB_SPMV_CUSPARSE } gwb_spmv_kind;

gwb_status gwb_gpu_csr_upload(const gwb_csr *A, gwb_gpu_csr **out);
void gwb_gpu_csr_free(gwb_gpu_csr *g);

/* Y = alpha A X for b columns (A rows x cols: X cols x b, Y rows x b, column-major). Ours
 * (auto) with b > 1 and rows, cols < 2^31 transposes X into row-major scratch, runs spmm_rows
 * and transposes Y back (spmm_via_rows); the scratch, (rows + cols) x b doubles, stays with
 * g (grown on demand) until gwb_gpu_csr_free. One column, or sizes past 2^31: spmm_seg. */
gwb_status gwb_gpu_spmm(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha,
			int kind);
/* The same with X and Y in row-major order (ld b): ours (spmm_rows, auto) or cuSPARSE SpMM
 * CSR_ALG2. */
gwb_status gwb_gpu_spmm_rows(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha,
			     int kind);
/* One Chebyshev step on row-major blocks of a square matrix, our kernel, one pass:
 * Y = alpha A X + beta X + gamma Z (Z may be NULL when gamma is 0). */
gwb_status gwb_gpu_cheb_step_rows(gwb_gpu_csr *g, const double *X, const double *Z, double *Y,
				  int b, double alpha, double beta, double gamma);
/* B (cols x rows, column-major) = A^T for A rows x cols column-major (cuBLAS geam); turns a
 * column-major block into row-major and back. rows < 2^31. */
gwb_status gwb_gpu_sp_transpose(gwb_gpu_csr *g, int64_t rows, int cols, const double *A, double *B);
/* X[i] = a hash of (key, i) uniform in [-1, 1), i < cnt (the solvers' random starts; the
 * CPU path in src/eig_sparse.c computes the same numbers). */
gwb_status gwb_gpu_sp_random(double *X, size_t cnt, uint64_t key);
/* Householder QR of the m x b column-major block A (device, m < 2^31, b <= m): A <- Q with
 * orthonormal columns (cuSOLVER geqrf + orgqr), R (host, b x b, upper triangular). */
gwb_status gwb_gpu_qr(gwb_gpu_csr *g, int64_t m, int b, double *A, double *R);
/* Wait for the device (phase timing). */
gwb_status gwb_gpu_sp_sync(void);
/* G (host, p x q) = X^T Y, X n x p, Y n x q (cuBLAS). */
gwb_status gwb_gpu_gemm_tn(gwb_gpu_csr *g, int64_t n, const double *X, int p, const double *Y,
			   int q, double *G);
/* Y = X C + beta Y, C (host) p x q (cuBLAS). */
gwb_status gwb_gpu_gemm_nn(gwb_gpu_csr *g, int64_t n, const double *X, int p, const double *C,
			   int q, double beta, double *Y);
/* z = a x + b y + c z (x, y may be NULL when a, b are 0). */
gwb_status gwb_gpu_axpby3(size_t len, double a, const double *x, double b, const double *y,
			  double c, double *z);
/* Y = diag(d) X, b columns of n. */
gwb_status gwb_gpu_rowscale(int64_t n, int b, const double *d, const double *X, double *Y);
/* Copies: host -> device, device -> host, device -> device (cnt doubles). */
gwb_status gwb_gpu_sp_put(double *dst, const double *host, size_t cnt);
gwb_status gwb_gpu_sp_get(double *host, const double *src, size_t cnt);
gwb_status gwb_gpu_sp_copy(double *dst, const double *src, size_t cnt);

/* SpMV measured: ours and cuSPARSE on the same matrix and vector, median of reps timed with
 * CUDA events after a warm-up; bytes is the minimum traffic (matrix + x once + y). Both
 * results are checked against the CPU product (max relative difference). */
typedef struct gwb_spmv_bench {
	double ours_ms, cusparse_ms;
	double bytes;
	double ours_gbps, cusparse_gbps;
	double ours_err, cusparse_err;   /* max |y - y_cpu| / max |y_cpu| */
	int lanes;                       /* threads per row our kernel used */
	/* ours with 1, 2, 4, 8, 16, 32 lanes per row (one vector); ours_err covers them all */
	double sweep_ms[6];
	/* a block of block_b vectors: ours and cuSPARSE in column-major order (ours: the
	 * block transposed to row-major, spmm_rows, transposed back, i.e. gwb_gpu_spmm's
	 * spmm_via_rows, the two transposes included in the time / cuSPARSE SpMM) and in
	 * row-major order (spmm_rows / cuSPARSE SpMM CSR_ALG2); errors against the CPU as
	 * above */
	int block_b;
	double blk_ms[4];                /* ours col, cuSPARSE col, ours rows, cuSPARSE rows */
	double blk_err[4];
} gwb_spmv_bench;
gwb_status gwb_gpu_spmv_bench(const gwb_csr *A, int reps, gwb_spmv_bench *out);

#ifdef __cplusplus
}
#endif
#endif
