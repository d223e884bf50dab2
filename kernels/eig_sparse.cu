// eig_sparse.cu - the block operations of the sparse eigensolvers (src/eig_sparse.c) on the
// GPU: Gram matrices X^T Y and block updates X C through cuBLAS (the blocked
// reorthogonalization), fused z = a x + b y + c z (the Chebyshev recurrence), the Jacobi row
// scaling, and copies. Small matrices travel to and from the host, where LAPACK solves them.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <string.h>

#include "common.cuh"
#include "handles.h"
#include "sparse.h"
#include "sparse_impl.cuh"

static gwb_status small_scratch(gwb_gpu_csr *g, size_t cnt)
{
	if (cnt <= g->dsmall_size)
		return GWB_OK;
	gwb_gpu_free(g->dsmall);
	g->dsmall = nullptr;
	g->dsmall_size = 0;
	size_t want = cnt < 4096 ? 4096 : cnt;
	gwb_status st = gwb_gpu_malloc((void **)&g->dsmall, want * sizeof(double), "eig.sparse.small");
	if (!st)
		g->dsmall_size = want;
	return st;
}

extern "C" gwb_status gwb_gpu_gemm_tn(gwb_gpu_csr *g, int64_t n, const double *X, int p,
				      const double *Y, int q, double *G)
{
	gwb_status st;
	const double one = 1, zero = 0;
	if ((st = small_scratch(g, (size_t)p * q)))
		return st;
	/* one vector against a basis (Lanczos' CGS2, the CPU's DGEMV twin) */
	if (q == 1 && p > 2)
		st = BLCHECK(cublasDgemv_64((cublasHandle_t)g->bl, CUBLAS_OP_T, n, p, &one, X, n, Y, 1,
					    &zero, g->dsmall, 1), "Dgemv (X^T y)");
	else
		st = BLCHECK(cublasDgemm_64((cublasHandle_t)g->bl, CUBLAS_OP_T, CUBLAS_OP_N, p, q, n,
					    &one, X, n, Y, n, &zero, g->dsmall, p), "Dgemm (X^T Y)");
	if (st)
		return st;
	return CUDA_CHECK(cudaMemcpy(G, g->dsmall, (size_t)p * q * sizeof(double),
				     cudaMemcpyDeviceToHost));
}

extern "C" gwb_status gwb_gpu_gemm_nn(gwb_gpu_csr *g, int64_t n, const double *X, int p,
				      const double *C, int q, double beta, double *Y)
{
	gwb_status st;
	const double one = 1;
	if ((st = small_scratch(g, (size_t)p * q)))
		return st;
	if ((st = CUDA_CHECK(cudaMemcpy(g->dsmall, C, (size_t)p * q * sizeof(double),
					cudaMemcpyHostToDevice))))
		return st;
	if (q == 1)  /* y = X c + beta y (the CPU's DGEMV twin) */
		return BLCHECK(cublasDgemv_64((cublasHandle_t)g->bl, CUBLAS_OP_N, n, p, &one, X, n,
					      g->dsmall, 1, &beta, Y, 1), "Dgemv (X c)");
	return BLCHECK(cublasDgemm_64((cublasHandle_t)g->bl, CUBLAS_OP_N, CUBLAS_OP_N, n, q, p, &one,
				      X, n, g->dsmall, p, &beta, Y, n), "Dgemm (X C)");
}

__global__ void axpby3_kernel(size_t len, double a, const double *__restrict__ x, double b,
			      const double *__restrict__ y, double c, double *__restrict__ z)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x) {
		double v = c == 0 ? 0 : c * z[i];
		if (a != 0)
			v += a * x[i];
		if (b != 0)
			v += b * y[i];
		z[i] = v;
	}
}

static unsigned grid_for(size_t len)
{
	static int sms;
	if (!sms) {
		int dev = 0;
		cudaGetDevice(&dev);
		if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
			sms = 1;
		cudaGetLastError();
	}
	size_t blocks = (len + 255) / 256, cap = (size_t)sms * 8;
	return (unsigned)(blocks < cap ? (blocks ? blocks : 1) : cap);
}

extern "C" gwb_status gwb_gpu_axpby3(size_t len, double a, const double *x, double b,
				     const double *y, double c, double *z)
{
	double bytes = (double)len * 8 * (1 + (a != 0) + (b != 0) + (c != 0));
	return gwb_launch("axpby3", axpby3_kernel, dim3(grid_for(len)), dim3(256), 0, 0, bytes, len,
			  a, x, b, y, c, z);
}

__global__ void rowscale_kernel(int64_t n, int b, const double *__restrict__ d,
				const double *__restrict__ X, double *__restrict__ Y)
{
	size_t len = (size_t)n * b;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x)
		Y[i] = d[i % n] * X[i];
}

extern "C" gwb_status gwb_gpu_rowscale(int64_t n, int b, const double *d, const double *X,
				       double *Y)
{
	size_t len = (size_t)n * b;
	return gwb_launch("rowscale", rowscale_kernel, dim3(grid_for(len)), dim3(256), 0, 0,
			  (double)len * 24, n, b, d, X, Y);
}

extern "C" gwb_status gwb_gpu_sp_put(double *dst, const double *host, size_t cnt)
{
	return gwb_copy(dst, host, cnt * sizeof(double), GWB_H2D, false);
}

extern "C" gwb_status gwb_gpu_sp_get(double *host, const double *src, size_t cnt)
{
	return gwb_copy(host, src, cnt * sizeof(double), GWB_D2H, false);
}

extern "C" gwb_status gwb_gpu_sp_copy(double *dst, const double *src, size_t cnt)
{
	if (!cnt || dst == src)
		return GWB_OK;
	return CUDA_CHECK(cudaMemcpy(dst, src, cnt * sizeof(double), cudaMemcpyDeviceToDevice));
}

extern "C" gwb_status gwb_gpu_sp_sync(void)
{
	return CUDA_CHECK(cudaDeviceSynchronize());
}

// The same hash as random_block in src/eig_sparse.c: element i uniform in [-1, 1).
__global__ void random_kernel(size_t cnt, unsigned long long key, double *__restrict__ X)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < cnt;
	     i += (size_t)gridDim.x * blockDim.x) {
		unsigned long long z = key + (i + 1) * 0x9E3779B97F4A7C15ULL;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		z ^= z >> 31;
		X[i] = (double)(z >> 11) * 0x1.0p-52 - 1.0;
	}
}

extern "C" gwb_status gwb_gpu_sp_random(double *X, size_t cnt, uint64_t key)
{
	if (!cnt)
		return GWB_OK;
	return gwb_launch("random_fill", random_kernel, dim3(grid_for(cnt)), dim3(256), 0, 0,
			  (double)cnt * 8, cnt, (unsigned long long)key, X);
}

static gwb_status solver_check(int st, const char *what, int line)
{
	if (st == CUSOLVER_STATUS_SUCCESS)
		return GWB_OK;
	return gwb_error(GWB_ECUDA, "cuSOLVER %s failed: status %d (kernels/eig_sparse.cu:%d)", what,
			 st, line);
}
#define SOCHECK(x, what) solver_check((int)(x), what, __LINE__)

// Householder QR of the m x b column-major block A (device): A <- Q (orthonormal columns,
// cusolverDnDgeqrf + Dorgqr), R (host, b x b column-major, upper triangular).
extern "C" gwb_status gwb_gpu_qr(gwb_gpu_csr *g, int64_t m, int b, double *A, double *R)
{
	gwb_status st = GWB_OK;
	cusolverDnHandle_t h = gwb_cusolver(&st);
	double *tau = nullptr, *work = nullptr;
	int *dinfo = nullptr, lw1 = 0, lw2 = 0, info = 0;
	(void)g;
	if (!h)
		return st;
	if (m > INT32_MAX || b > m)
		return gwb_error(GWB_EINVAL, "eig.svd: the GPU QR of a %lldx%d block needs rows < 2^31 "
				 "and block <= rows; use a smaller block/k (backend = \"cpu\" has the "
				 "same row limit)", (long long)m, b);
	if ((st = gwb_gpu_malloc((void **)&tau, (size_t)b * sizeof(double), "eig.sparse.qr")) ||
	    (st = gwb_gpu_malloc((void **)&dinfo, sizeof(int), "eig.sparse.qr")) ||
	    (st = SOCHECK(cusolverDnDgeqrf_bufferSize(h, (int)m, b, A, (int)m, &lw1),
			  "Dgeqrf_bufferSize")) ||
	    (st = SOCHECK(cusolverDnDorgqr_bufferSize(h, (int)m, b, b, A, (int)m, tau, &lw2),
			  "Dorgqr_bufferSize")))
		goto out;
	if (lw2 > lw1)
		lw1 = lw2;
	if ((st = gwb_gpu_malloc((void **)&work, (size_t)(lw1 > 0 ? lw1 : 1) * sizeof(double),
				 "eig.sparse.qr")) ||
	    (st = SOCHECK(cusolverDnDgeqrf(h, (int)m, b, A, (int)m, tau, work, lw1, dinfo),
			  "Dgeqrf")) ||
	    (st = CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost))))
		goto out;
	if (info) {
		st = gwb_error(GWB_ECUDA, "cuSOLVER Dgeqrf: bad argument %d", -info);
		goto out;
	}
	if ((st = CUDA_CHECK(cudaMemcpy2D(R, (size_t)b * sizeof(double), A, (size_t)m * sizeof(double),
					  (size_t)b * sizeof(double), b, cudaMemcpyDeviceToHost))))
		goto out;
	for (int j = 0; j < b; j++)
		for (int i = j + 1; i < b; i++)
			R[i + (size_t)j * b] = 0;
	if ((st = SOCHECK(cusolverDnDorgqr(h, (int)m, b, b, A, (int)m, tau, work, lw1, dinfo),
			  "Dorgqr")) ||
	    (st = CUDA_CHECK(cudaMemcpy(&info, dinfo, sizeof(int), cudaMemcpyDeviceToHost))))
		goto out;
	if (info)
		st = gwb_error(GWB_ECUDA, "cuSOLVER Dorgqr: bad argument %d", -info);
out:
	gwb_gpu_free(tau);
	gwb_gpu_free(work);
	gwb_gpu_free(dinfo);
	return st;
}
