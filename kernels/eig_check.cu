// eig_check.cu - the checks of dense eigen results where the data is: symmetry, Frobenius
// norms, residuals ||Av - lambda v|| / (||A|| ||v||), orthogonality ||V^T V - I||_max and the
// ascending sort of Jacobi's pairs, on the device. Same definitions as the CPU checks in
// eig_dense.c / dense.c: f64 arithmetic (f32 data is widened first, as the CPU converts),
// differences divided by ||A|| before squaring, Neumaier-compensated sums reduced as
// (sum, compensation) pairs. Everything runs on the default stream; only per-matrix or
// per-pair numbers come back to the host.
#include <cublas_v2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.cuh"
#include "eig.h"
#include "handles.h"

namespace {

// Neumaier's two-sum step: (s, c) += x.
__device__ __forceinline__ void nadd(double &s, double &c, double x)
{
	double t = s + x;
	c += fabs(s) >= fabs(x) ? (s - t) + x : (x - t) + s;
	s = t;
}

// Combine two (sum, compensation) pairs.
__device__ __forceinline__ void ncombine(double &s, double &c, double s2, double c2)
{
	nadd(s, c, s2);
	c += c2;
}

// Block-wide reduction of (s, c) pairs; the result is valid in thread 0. blockDim.x is a
// multiple of 32, at most 1024.
__device__ void block_nsum(double &s, double &c)
{
	__shared__ double ss[32], cs[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	for (int o = 16; o; o >>= 1) {
		double s2 = __shfl_down_sync(0xffffffffu, s, o), c2 = __shfl_down_sync(0xffffffffu, c, o);
		ncombine(s, c, s2, c2);
	}
	__syncthreads();
	if (lane == 0) {
		ss[w] = s;
		cs[w] = c;
	}
	__syncthreads();
	if (w == 0) {
		s = lane < nw ? ss[lane] : 0.0;
		c = lane < nw ? cs[lane] : 0.0;
		for (int o = 16; o; o >>= 1) {
			double s2 = __shfl_down_sync(0xffffffffu, s, o);
			double c2 = __shfl_down_sync(0xffffffffu, c, o);
			ncombine(s, c, s2, c2);
		}
	}
}

// Max with NaN winning (as the CPU's `d > worst || d != d`).
__device__ __forceinline__ double nmax(double a, double b)
{
	return (b > a || b != b) ? b : a;
}

__device__ double block_max(double v)
{
	__shared__ double sm[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	for (int o = 16; o; o >>= 1)
		v = nmax(v, __shfl_down_sync(0xffffffffu, v, o));
	__syncthreads();
	if (lane == 0)
		sm[w] = v;
	__syncthreads();
	if (w == 0) {
		v = lane < nw ? sm[lane] : 0.0;
		for (int o = 16; o; o >>= 1)
			v = nmax(v, __shfl_down_sync(0xffffffffu, v, o));
	}
	return v;
}

// Per (matrix b = blockIdx.y, part g = blockIdx.x): max |a_ij - a_ji| (NaN -> inf) and
// max |a_ij| over the upper triangle rows assigned to this part.
template <typename T>
__global__ void chk_sym(const T *__restrict__ A, int n, int parts, double *__restrict__ out)
{
	size_t b = blockIdx.x, nn = (size_t)n * n;
	const T *a = A + b * nn;
	double dmax = 0.0, amax = 0.0;
	for (size_t e = (size_t)blockIdx.y * blockDim.x + threadIdx.x; e < nn;
	     e += (size_t)parts * blockDim.x) {
		int i = (int)(e / n), j = (int)(e % n);
		if (j < i)
			continue;
		double x = (double)a[e], y = (double)a[(size_t)j * n + i];
		double d = fabs(x - y);
		if (x != x || y != y)
			d = INFINITY;
		dmax = fmax(dmax, d);
		if (x == x)
			amax = fmax(amax, fabs(x));
		if (y == y)
			amax = fmax(amax, fabs(y));
	}
	dmax = block_max(dmax);
	__syncthreads();
	amax = block_max(amax);
	if (threadIdx.x == 0) {
		out[(b * parts + blockIdx.y) * 2] = dmax;
		out[(b * parts + blockIdx.y) * 2 + 1] = amax;
	}
}

// Per (matrix, part): compensated sum of squares of the part's elements, as a pair.
template <typename T>
__global__ void chk_sumsq(const T *__restrict__ A, size_t len, int parts, double *__restrict__ out)
{
	size_t b = blockIdx.x;
	const T *a = A + b * len;
	double s = 0.0, c = 0.0;
	for (size_t e = (size_t)blockIdx.y * blockDim.x + threadIdx.x; e < len;
	     e += (size_t)parts * blockDim.x) {
		double x = (double)a[e];
		nadd(s, c, x * x);
	}
	block_nsum(s, c);
	if (threadIdx.x == 0) {
		out[(b * parts + blockIdx.y) * 2] = s;
		out[(b * parts + blockIdx.y) * 2 + 1] = c;
	}
}

template <typename T>
__global__ void chk_widen(const T *__restrict__ in, double *__restrict__ out, size_t len)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = (double)in[i];
}

// One block per pair c (of count * k): residual of column c of AV against lambda V.
__global__ void chk_resid(const double *__restrict__ AV, const double *__restrict__ V,
			  const double *__restrict__ vals, const double *__restrict__ normA, int n,
			  int k, double *__restrict__ res)
{
	size_t c = blockIdx.x, b = c / (size_t)k;
	const double *y = AV + c * n, *v = V + c * n;
	double lam = vals[c], nA = normA[b];
	double s = 0.0, cs = 0.0, t = 0.0, ct = 0.0;
	for (int r = threadIdx.x; r < n; r += blockDim.x) {
		double d = (y[r] - lam * v[r]) / nA;
		nadd(s, cs, d * d);
		nadd(t, ct, v[r] * v[r]);
	}
	block_nsum(s, cs);
	__syncthreads();
	block_nsum(t, ct);
	if (threadIdx.x == 0) {
		double nv = sqrt(t + ct);
		res[c] = sqrt(s + cs) / (nv > 0 ? nv : 1.0);
	}
}

// Per (matrix, part): max |G_ij - delta_ij| of the k x k Gram matrix (lower triangle only
// when lower: a SYRK result).
__global__ void chk_orth(const double *__restrict__ G, int k, int parts, bool lower,
			 double *__restrict__ out)
{
	size_t b = blockIdx.x, kk = (size_t)k * k;
	const double *g = G + b * kk;
	double w = 0.0;
	for (size_t e = (size_t)blockIdx.y * blockDim.x + threadIdx.x; e < kk;
	     e += (size_t)parts * blockDim.x) {
		int col = (int)(e / k), row = (int)(e % k);
		if (lower && row < col)
			continue;
		w = nmax(w, fabs(g[e] - (row == col ? 1.0 : 0.0)));
	}
	w = block_max(w);
	if (threadIdx.x == 0)
		out[b * parts + blockIdx.y] = w;
}

// Rank sort of each matrix's values (ascending, ties by index): perm[b*n + rank] = i.
__global__ void chk_rank(const double *__restrict__ vals, int n, int *__restrict__ perm)
{
	int i = blockIdx.y * blockDim.x + threadIdx.x;
	size_t b = blockIdx.x;
	if (i >= n)
		return;
	const double *w = vals + b * n;
	double x = w[i];
	int r = 0;
	for (int j = 0; j < n; j++) {
		double y = w[j];
		r += (y < x) || (y == x && j < i) || (x != x && (y == y || j < i)) ? 1 : 0;
	}
	perm[b * n + r] = i;
}

// out column r of matrix b = in column perm[b*n + r]; values likewise.
template <typename T>
__global__ void chk_permute(const T *__restrict__ in, T *__restrict__ out,
			    const double *__restrict__ vin, double *__restrict__ vout,
			    const int *__restrict__ perm, int n)
{
	size_t b = blockIdx.x;
	int r = blockIdx.y, src = perm[b * n + r];
	size_t base = b * (size_t)n * n;
	if (in)
		for (int e = threadIdx.x; e < n; e += blockDim.x)
			out[base + (size_t)r * n + e] = in[base + (size_t)src * n + e];
	if (threadIdx.x == 0)
		vout[b * n + r] = vin[b * n + src];
}

int threads_for(size_t n)
{
	size_t t = (n + 31) / 32 * 32;
	return (int)(t < 32 ? 32 : t > 256 ? 256 : t);
}

// Parts per matrix for the reductions: enough blocks to fill the GPU for a single big
// matrix, one for a large batch.
int parts_for(size_t count, size_t len)
{
	size_t want = (264 + count - 1) / count, most = (len + 65535) / 65536;
	size_t p = want < most ? want : most;
	return (int)(p < 1 ? 1 : p > 1024 ? 1024 : p);
}

gwb_status blas_check(cublasStatus_t s, const char *what)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return GWB_OK;
	return gwb_error(GWB_ECUDA, "cuBLAS %s failed (status %d)", what, (int)s);
}

gwb_status back(void *dst, const void *src, size_t bytes)
{
	return gwb_copy(dst, src, bytes, GWB_D2H, false);
}

} // namespace

extern "C" gwb_status gwb_gpu_sym_check(const void *dA, int dtype, size_t count, int n,
					double *rel, double *amax)
{
	size_t nn = (size_t)n * n;
	int parts = parts_for(count, nn), th = 256;
	double *dout = nullptr, *h = nullptr;
	gwb_status rc;

	if ((rc = gwb_gpu_malloc((void **)&dout, count * parts * 2 * sizeof(double), "eig.check")))
		return rc;
	if (!(h = (double *)malloc(count * parts * 2 * sizeof(double)))) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out;
	}
	if (dtype)
		rc = gwb_launch("chk_sym_f64", chk_sym<double>, dim3((unsigned)count, parts), dim3(th),
				0, 0, (double)count * nn * 8, (const double *)dA, n, parts, dout);
	else
		rc = gwb_launch("chk_sym_f32", chk_sym<float>, dim3((unsigned)count, parts), dim3(th),
				0, 0, (double)count * nn * 4, (const float *)dA, n, parts, dout);
	// the kernel's time is not the copy's: wait for it first
	if (rc || (rc = CUDA_CHECK(cudaStreamSynchronize(0))) ||
	    (rc = back(h, dout, count * parts * 2 * sizeof(double))))
		goto out;
	for (size_t b = 0; b < count; b++) {
		double dm = 0, am = 0;
		for (int g = 0; g < parts; g++) {
			dm = fmax(dm, h[(b * parts + g) * 2]);
			am = fmax(am, h[(b * parts + g) * 2 + 1]);
		}
		rel[b] = dm == 0.0 ? 0.0 : dm / (am > 0 ? am : 1e-300);
		if (amax)
			amax[b] = am;
	}
out:
	free(h);
	gwb_gpu_free(dout);
	return rc;
}

extern "C" gwb_status gwb_gpu_fro_norm(const void *dA, int dtype, size_t count, size_t len,
				       double *fro)
{
	int parts = parts_for(count, len);
	double *dout = nullptr, *h = nullptr;
	gwb_status rc;

	if ((rc = gwb_gpu_malloc((void **)&dout, count * parts * 2 * sizeof(double), "eig.check")))
		return rc;
	if (!(h = (double *)malloc(count * parts * 2 * sizeof(double)))) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out;
	}
	if (dtype)
		rc = gwb_launch("chk_sumsq_f64", chk_sumsq<double>, dim3((unsigned)count, parts),
				dim3(256), 0, 0, (double)count * len * 8, (const double *)dA, len,
				parts, dout);
	else
		rc = gwb_launch("chk_sumsq_f32", chk_sumsq<float>, dim3((unsigned)count, parts),
				dim3(256), 0, 0, (double)count * len * 4, (const float *)dA, len,
				parts, dout);
	if (rc || (rc = CUDA_CHECK(cudaStreamSynchronize(0))) ||
	    (rc = back(h, dout, count * parts * 2 * sizeof(double))))
		goto out;
	for (size_t b = 0; b < count; b++) {
		double s = 0, c = 0;
		for (int g = 0; g < parts; g++) {
			double x = h[(b * parts + g) * 2], t = s + x;
			c += fabs(s) >= fabs(x) ? (s - t) + x : (x - t) + s;
			s = t;
			c += h[(b * parts + g) * 2 + 1];
		}
		fro[b] = sqrt(s + c);
	}
out:
	free(h);
	gwb_gpu_free(dout);
	return rc;
}

extern "C" gwb_status gwb_gpu_eig_check(const void *dA, int adtype, bool a_rowmajor,
					size_t count, int n, int k, const void *dV, int vdtype,
					const double *values, const double *normA,
					double *residuals, double *orth, double *kernel_ms)
{
	size_t nn = (size_t)n * n, nk = (size_t)n * k, kk = (size_t)k * k, pairs = count * k;
	double *A64 = nullptr, *V64 = nullptr, *AV = nullptr, *dvals = nullptr, *dnorm = nullptr;
	double *dres = nullptr, *dorth = nullptr, *horth = nullptr;
	const double *A = (const double *)dA, *V = (const double *)dV;
	const double one = 1.0, zero = 0.0;
	int parts = parts_for(count, kk);
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	cublasHandle_t h;
	gwb_status rc;

	if (!(h = gwb_cublas(&rc)))
		return rc;
	if ((rc = CUDA_CHECK(cudaEventCreate(&e0))) || (rc = CUDA_CHECK(cudaEventCreate(&e1))))
		goto out;
	if ((rc = gwb_gpu_malloc((void **)&AV, count * (nk > kk ? nk : kk) * 8, "eig.check.AV")) ||
	    (rc = gwb_gpu_malloc((void **)&dvals, pairs * 8, "eig.check")) ||
	    (rc = gwb_gpu_malloc((void **)&dnorm, count * 8, "eig.check")) ||
	    (rc = gwb_gpu_malloc((void **)&dres, pairs * 8, "eig.check")) ||
	    (rc = gwb_gpu_malloc((void **)&dorth, count * parts * 8, "eig.check")))
		goto out;
	if (!(horth = (double *)malloc(count * parts * 8))) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = gwb_copy(dvals, values, pairs * 8, GWB_H2D, false)) ||
	    (rc = gwb_copy(dnorm, normA, count * 8, GWB_H2D, false)))
		goto out;
	cudaEventRecord(e0, 0);
	if (!adtype) {
		if ((rc = gwb_gpu_malloc((void **)&A64, count * nn * 8, "eig.check.A64")) ||
		    (rc = gwb_launch("chk_widen_f32", chk_widen<float>, dim3(1024), dim3(256), 0, 0,
				     count * nn * 12.0, (const float *)dA, A64, count * nn)))
			goto out;
		A = A64;
	}
	if (!vdtype) {
		if ((rc = gwb_gpu_malloc((void **)&V64, count * nk * 8, "eig.check.V64")) ||
		    (rc = gwb_launch("chk_widen_f32", chk_widen<float>, dim3(1024), dim3(256), 0, 0,
				     count * nk * 12.0, (const float *)dV, V64, count * nk)))
			goto out;
		V = V64;
	}
	{
		// AV = A V; a row-major A is A^T in column-major terms.
		cublasOperation_t ta = a_rowmajor ? CUBLAS_OP_T : CUBLAS_OP_N;
		if (count == 1)
			rc = blas_check(cublasDgemm(h, ta, CUBLAS_OP_N, n, k, n, &one, A, n, V, n, &zero,
						    AV, n), "Dgemm (residuals)");
		else
			rc = blas_check(cublasDgemmStridedBatched(h, ta, CUBLAS_OP_N, n, k, n, &one, A, n,
								  (long long)nn, V, n, (long long)nk,
								  &zero, AV, n, (long long)nk,
								  (int)count), "DgemmStridedBatched (residuals)");
	}
	if (rc)
		goto out;
	if ((rc = gwb_launch("chk_resid", chk_resid, dim3((unsigned)pairs), dim3(threads_for(n)), 0, 0,
			     pairs * n * 16.0, (const double *)AV, V, (const double *)dvals,
			     (const double *)dnorm, n, k, dres)))
		goto out;
	// G = V^T V into AV's memory (the residual kernel is done with it: same stream)
	if (count == 1)
		rc = blas_check(cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, k, n, &one, V, n,
					    &zero, AV, k), "Dsyrk (orthogonality)");
	else
		rc = blas_check(cublasDgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, k, k, n, &one, V,
							  n, (long long)nk, V, n, (long long)nk,
							  &zero, AV, k, (long long)kk, (int)count),
				"DgemmStridedBatched (orthogonality)");
	if (rc)
		goto out;
	if ((rc = gwb_launch("chk_orth", chk_orth, dim3((unsigned)count, parts), dim3(256), 0, 0,
			     count * kk * 8.0, (const double *)AV, k, parts, count == 1, dorth)))
		goto out;
	cudaEventRecord(e1, 0);
	// wait here, so the copies below time only themselves (the wait is kernel time)
	if ((rc = CUDA_CHECK(cudaEventSynchronize(e1))))
		goto out;
	if ((rc = back(residuals, dres, pairs * 8)) || (rc = back(horth, dorth, count * parts * 8)))
		goto out;
	for (size_t b = 0; b < count; b++) {
		double w = 0;
		for (int g = 0; g < parts; g++) {
			double d = horth[b * parts + g];
			if (d > w || d != d)
				w = d;
		}
		orth[b] = w;
	}
	if (kernel_ms) {
		float ms = 0;
		if (cudaEventSynchronize(e1) == cudaSuccess && cudaEventElapsedTime(&ms, e0, e1) ==
		    cudaSuccess)
			*kernel_ms += ms;
		cudaGetLastError();
	}
out:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	gwb_gpu_free(A64);
	gwb_gpu_free(V64);
	gwb_gpu_free(AV);
	gwb_gpu_free(dvals);
	gwb_gpu_free(dnorm);
	gwb_gpu_free(dres);
	gwb_gpu_free(dorth);
	free(horth);
	return rc;
}

extern "C" gwb_status gwb_gpu_eig_sort(double *dvals, void *dV, int vdtype, size_t count, int n)
{
	size_t len = count * (size_t)n * n;
	int *perm = nullptr;
	double *v2 = nullptr;
	void *V2 = nullptr;
	unsigned th = (unsigned)threads_for((size_t)n);
	gwb_status rc;

	if ((rc = gwb_gpu_malloc((void **)&perm, count * n * sizeof(int), "eig.sort")) ||
	    (rc = gwb_gpu_malloc((void **)&v2, count * n * 8, "eig.sort")))
		goto out;
	if (dV && (rc = gwb_gpu_malloc(&V2, len * (vdtype ? 8 : 4), "eig.sort")))
		goto out;
	if ((rc = gwb_launch("chk_rank", chk_rank, dim3((unsigned)count, (n + th - 1) / th), dim3(th),
			     0, 0, (double)count * n * n * 8, (const double *)dvals, n, perm)))
		goto out;
	{
		dim3 g((unsigned)count, n);
		if (vdtype)
			rc = gwb_launch("chk_permute_f64", chk_permute<double>, g, dim3(th), 0, 0,
					len * 16.0, (const double *)dV, (double *)V2,
					(const double *)dvals, v2, (const int *)perm, n);
		else
			rc = gwb_launch("chk_permute_f32", chk_permute<float>, g, dim3(th), 0, 0,
					len * 8.0, (const float *)dV, (float *)V2,
					(const double *)dvals, v2, (const int *)perm, n);
	}
	if (rc)
		goto out;
	if ((rc = CUDA_CHECK(cudaMemcpyAsync(dvals, v2, count * n * 8, cudaMemcpyDeviceToDevice, 0))))
		goto out;
	if (dV)
		rc = CUDA_CHECK(cudaMemcpyAsync(dV, V2, len * (vdtype ? 8 : 4),
						cudaMemcpyDeviceToDevice, 0));
out:
	gwb_gpu_free(perm);
	gwb_gpu_free(v2);
	gwb_gpu_free(V2);
	return rc;
}

extern "C" gwb_status gwb_gpu_eig_sort_w(const void *dW, int wdtype, void *dV, int vdtype,
					 size_t count, int n, double *values)
{
	size_t len = count * (size_t)n;
	double *d64 = nullptr;
	gwb_status rc;

	if ((rc = gwb_gpu_malloc((void **)&d64, len * 8, "eig.sort")))
		return rc;
	if (wdtype)
		rc = CUDA_CHECK(cudaMemcpyAsync(d64, dW, len * 8, cudaMemcpyDeviceToDevice, 0));
	else
		rc = gwb_launch("chk_widen_f32", chk_widen<float>, dim3(256), dim3(256), 0, 0,
				len * 12.0, (const float *)dW, d64, len);
	if (!rc && !(rc = gwb_gpu_eig_sort(d64, dV, vdtype, count, n)))
		rc = back(values, d64, len * 8);
	gwb_gpu_free(d64);
	return rc;
}
