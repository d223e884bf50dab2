// spmv.cu - the device CSR matrix, our SpMV/SpMM kernel and cuSPARSE's, and their benchmark.
// Our kernel gives each row a segment of LANES threads (2..32, a whole warp for long rows),
// chosen from the mean row length; a segment reads its row's entries coalesced and reduces
// with warp shuffles. For blocks of vectors each thread carries up to 4 columns, so the
// matrix is read once per 4 columns.
#include <cublas_v2.h>
#include <cusparse.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>

#include "common.cuh"
#include "handles.h"
#include "sparse.h"
#include "sparse_impl.cuh"

gwb_status gwb_cusparse_check(int st, const char *what, int line)
{
	if (st == CUSPARSE_STATUS_SUCCESS)
		return GWB_OK;
	return gwb_error(GWB_ECUDA, "cuSPARSE %s failed: %s (kernels/spmv.cu:%d)", what,
			 cusparseGetErrorString((cusparseStatus_t)st), line);
}

gwb_status gwb_cublas_check(int st, const char *what, int line)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return GWB_OK;
	return gwb_error(GWB_ECUDA, "cuBLAS %s failed: status %d (kernels/%d)", what, st, line);
}

template <int LANES, typename I>
__global__ void spmm_seg(int64_t n, const I *__restrict__ rp, const I *__restrict__ ci,
			 const double *__restrict__ val, const double *__restrict__ X, int64_t ldx,
			 double *__restrict__ Y, int nb, double alpha)
{
	int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	int64_t row = t / LANES;
	int lane = (int)(t % LANES);
	int c0 = blockIdx.y * 4;
	if (row >= n)
		return;  // whole segments leave together: LANES divides the block size
	const double *x = X + (int64_t)c0 * ldx;
	double acc[4] = {0, 0, 0, 0};
	I b = rp[row], e = rp[row + 1];
	for (I p = b + lane; p < e; p += LANES) {
		double a = val[p];
		I c = ci[p];
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (k < nb)
				acc[k] += a * x[c + k * ldx];
	}
	unsigned mask = LANES == 32 ? 0xffffffffu : (((1u << LANES) - 1) << ((threadIdx.x % 32) / LANES * LANES));
#pragma unroll
	for (int k = 0; k < 4; k++) {
#pragma unroll
		for (int off = LANES / 2; off > 0; off /= 2)
			acc[k] += __shfl_down_sync(mask, acc[k], off, LANES);
	}
	if (lane == 0) {
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (k < nb)
				Y[row + (int64_t)(c0 + k) * n] = alpha * acc[k];
	}
}

static int pick_lanes(int64_t n, int64_t nnz)
{
	double avg = n ? (double)nnz / n : 1;
	int lanes = 2;
	while (lanes < 32 && lanes < avg)
		lanes *= 2;
	return lanes;
}

template <int LANES, typename I>
static gwb_status launch_ours_t(const gwb_gpu_csr *g, const double *X, double *Y, int nb,
				double alpha)
{
	const int block = 256;
	int64_t threads = g->n * LANES;
	dim3 grid((unsigned)((threads + block - 1) / block), 1);
	double bytes = (double)g->nnz * (8 + sizeof(I)) + (double)(g->n + 1) * sizeof(I) +
		       (double)g->n * 16 * nb;
	return gwb_launch("spmm_seg", spmm_seg<LANES, I>, grid, dim3(block), 0, 0, bytes, g->n,
			  (const I *)g->rp, (const I *)g->ci, (const double *)g->val, X,
			  (int64_t)g->n, Y, nb, alpha);
}

template <typename I>
static gwb_status launch_ours_i(const gwb_gpu_csr *g, const double *X, double *Y, int b,
				double alpha)
{
	switch (g->lanes) {
	case 2: return launch_ours_t<2, I>(g, X, Y, b, alpha);
	case 4: return launch_ours_t<4, I>(g, X, Y, b, alpha);
	case 8: return launch_ours_t<8, I>(g, X, Y, b, alpha);
	case 16: return launch_ours_t<16, I>(g, X, Y, b, alpha);
	default: return launch_ours_t<32, I>(g, X, Y, b, alpha);
	}
}

static gwb_status spmm_ours(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha)
{
	// columns in chunks of 4 (the kernel handles min(4, remaining) through nb)
	gwb_status st = GWB_OK;
	for (int c = 0; c < b && !st; c += 4) {
		int nb = std::min(4, b - c);
		const double *Xc = X + (size_t)c * g->n;
		double *Yc = Y + (size_t)c * g->n;
		st = g->wide ? launch_ours_i<long long>(g, Xc, Yc, nb, alpha)
			     : launch_ours_i<int>(g, Xc, Yc, nb, alpha);
	}
	return st;
}

static gwb_status spmm_cusparse(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha)
{
	cusparseHandle_t h = (cusparseHandle_t)g->sp;
	cusparseSpMatDescr_t A = (cusparseSpMatDescr_t)g->mat;
	double beta = 0;
	size_t need = 0;
	gwb_status st;
	if (b == 1) {
		cusparseDnVecDescr_t vx, vy;
		if ((st = SPCHECK(cusparseCreateDnVec(&vx, g->n, (void *)X, CUDA_R_64F), "CreateDnVec")))
			return st;
		if ((st = SPCHECK(cusparseCreateDnVec(&vy, g->n, Y, CUDA_R_64F), "CreateDnVec"))) {
			cusparseDestroyDnVec(vx);
			return st;
		}
		st = SPCHECK(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vx,
						     &beta, vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT,
						     &need), "SpMV_bufferSize");
		if (!st)
			st = gwb_sp_scratch(g, need);
		if (!st)
			st = SPCHECK(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vx, &beta,
						  vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, g->spbuf),
				     "SpMV");
		cusparseDestroyDnVec(vx);
		cusparseDestroyDnVec(vy);
		return st;
	}
	cusparseDnMatDescr_t mx, my;
	if ((st = SPCHECK(cusparseCreateDnMat(&mx, g->n, b, g->n, (void *)X, CUDA_R_64F,
					      CUSPARSE_ORDER_COL), "CreateDnMat")))
		return st;
	if ((st = SPCHECK(cusparseCreateDnMat(&my, g->n, b, g->n, Y, CUDA_R_64F, CUSPARSE_ORDER_COL),
			  "CreateDnMat"))) {
		cusparseDestroyDnMat(mx);
		return st;
	}
	st = SPCHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					     CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, mx, &beta, my,
					     CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT, &need),
		     "SpMM_bufferSize");
	if (!st)
		st = gwb_sp_scratch(g, need);
	if (!st)
		st = SPCHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					  CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, mx, &beta, my,
					  CUDA_R_64F, CUSPARSE_SPMM_ALG_DEFAULT, g->spbuf), "SpMM");
	cusparseDestroyDnMat(mx);
	cusparseDestroyDnMat(my);
	return st;
}

gwb_status gwb_sp_scratch(gwb_gpu_csr *g, size_t need)
{
	if (need <= g->spbuf_size)
		return GWB_OK;
	gwb_gpu_free(g->spbuf);
	g->spbuf = nullptr;
	g->spbuf_size = 0;
	gwb_status st = gwb_gpu_malloc(&g->spbuf, need, "sparse.cusparse");
	if (!st)
		g->spbuf_size = need;
	return st;
}

extern "C" gwb_status gwb_gpu_spmm(gwb_gpu_csr *g, const double *X, double *Y, int b,
				   double alpha, int kind)
{
	if (kind == GWB_SPMV_CUSPARSE || (kind == GWB_SPMV_AUTO && b > 1))
		return spmm_cusparse(g, X, Y, b, alpha);
	return spmm_ours(g, X, Y, b, alpha);
}

extern "C" gwb_status gwb_gpu_csr_upload(const gwb_csr *A, gwb_gpu_csr **out)
{
	gwb_gpu_csr *g;
	gwb_status st;
	size_t ib = A->wide ? 8 : 4;

	*out = nullptr;
	if ((st = gwb_gpu_init()))
		return st;
	g = (gwb_gpu_csr *)calloc(1, sizeof(*g));
	if (!g)
		return gwb_error(GWB_ENOMEM, "out of memory");
	g->n = A->rows;
	g->nnz = A->nnz;
	g->wide = A->wide;
	g->lanes = pick_lanes(A->rows, A->nnz);
	if ((st = gwb_gpu_malloc(&g->rp, (A->rows + 1) * ib, "sparse.csr")) ||
	    (st = gwb_gpu_malloc(&g->ci, (A->nnz ? A->nnz : 1) * ib, "sparse.csr")) ||
	    (st = gwb_gpu_malloc((void **)&g->val, (A->nnz ? A->nnz : 1) * 8, "sparse.csr")))
		goto fail;
	if ((st = gwb_copy(g->rp, A->wide ? (void *)A->rp64 : (void *)A->rp32, (A->rows + 1) * ib,
			   GWB_H2D, false)) ||
	    (A->nnz && (st = gwb_copy(g->ci, A->wide ? (void *)A->ci64 : (void *)A->ci32,
				      A->nnz * ib, GWB_H2D, false))) ||
	    (A->nnz && (st = gwb_copy(g->val, A->val, A->nnz * 8, GWB_H2D, false))))
		goto fail;
	{
		/* the plugin's shared handles (kernels/handles.cu): creating them per matrix cost a
		 * cuBLAS workspace allocation and tens of ms on every solve */
		cusparseHandle_t sp = gwb_cusparse(&st);
		cublasHandle_t bl = sp ? gwb_cublas(&st) : nullptr;
		if (!sp || !bl)
			goto fail;
		g->sp = sp;
		g->bl = bl;
		cusparseSpMatDescr_t m;
		cusparseIndexType_t it = A->wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
		if ((st = SPCHECK(cusparseCreateCsr(&m, A->rows, A->cols, A->nnz, g->rp, g->ci, g->val,
						    it, it, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
				  "CreateCsr")))
			goto fail;
		g->mat = m;
	}
	*out = g;
	return GWB_OK;
fail:
	gwb_gpu_csr_free(g);
	return st;
}

extern "C" void gwb_gpu_csr_free(gwb_gpu_csr *g)
{
	if (!g)
		return;
	if (g->mat)
		cusparseDestroySpMat((cusparseSpMatDescr_t)g->mat);
	gwb_gpu_free(g->rp);
	gwb_gpu_free(g->ci);
	gwb_gpu_free(g->val);
	gwb_gpu_free(g->spbuf);
	gwb_gpu_free(g->dsmall);
	free(g);
}

static double median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v.empty() ? 0 : v[v.size() / 2];
}

extern "C" gwb_status gwb_gpu_spmv_bench(const gwb_csr *A, int reps, gwb_spmv_bench *out)
{
	gwb_gpu_csr *g = nullptr;
	double *dx = nullptr, *dy = nullptr;
	std::vector<double> x(A->cols), yc(A->rows), yg(A->rows);
	std::vector<float> t_ours, t_cus;
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	gwb_status st;

	memset(out, 0, sizeof(*out));
	if (reps < 1)
		reps = 1;
	uint64_t s = 12345;
	for (auto &v : x) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		v = (double)(s >> 11) * 0x1.0p-53 - 0.5;
	}
	gwb_csr_spmv(A, x.data(), yc.data());
	double ymax = 0;
	for (double v : yc)
		ymax = std::max(ymax, fabs(v));
	if (!(ymax > 0))
		ymax = 1;
	if ((st = gwb_gpu_csr_upload(A, &g)) ||
	    (st = gwb_gpu_malloc((void **)&dx, A->cols * 8, "sparse.bench")) ||
	    (st = gwb_gpu_malloc((void **)&dy, A->rows * 8, "sparse.bench")) ||
	    (st = gwb_copy(dx, x.data(), A->cols * 8, GWB_H2D, false)) ||
	    (st = CUDA_CHECK(cudaEventCreate(&e0))) || (st = CUDA_CHECK(cudaEventCreate(&e1))))
		goto out;
	out->lanes = g->lanes;
	for (int kind = GWB_SPMV_OURS; kind <= GWB_SPMV_CUSPARSE; kind++) {
		auto &t = kind == GWB_SPMV_OURS ? t_ours : t_cus;
		for (int r = 0; r < reps + 3; r++) {
			cudaEventRecord(e0, 0);
			if ((st = gwb_gpu_spmm(g, dx, dy, 1, 1.0, kind)))
				goto out;
			cudaEventRecord(e1, 0);
			if ((st = CUDA_CHECK(cudaEventSynchronize(e1))))
				goto out;
			float ms = 0;
			cudaEventElapsedTime(&ms, e0, e1);
			if (r >= 3)
				t.push_back(ms);
		}
		if ((st = gwb_copy(yg.data(), dy, A->rows * 8, GWB_D2H, false)))
			goto out;
		double err = 0;
		for (int64_t i = 0; i < A->rows; i++)
			err = std::max(err, fabs(yg[i] - yc[i]) / ymax);
		(kind == GWB_SPMV_OURS ? out->ours_err : out->cusparse_err) = err;
	}
	out->ours_ms = median(t_ours);
	out->cusparse_ms = median(t_cus);
	out->bytes = (double)A->nnz * (8 + (A->wide ? 8 : 4)) + (double)(A->rows + 1) * (A->wide ? 8 : 4) +
		     (double)A->cols * 8 + (double)A->rows * 8;
	out->ours_gbps = out->ours_ms > 0 ? out->bytes / (out->ours_ms * 1e6) : 0;
	out->cusparse_gbps = out->cusparse_ms > 0 ? out->bytes / (out->cusparse_ms * 1e6) : 0;
out:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	gwb_gpu_free(dx);
	gwb_gpu_free(dy);
	gwb_gpu_csr_free(g);
	return st;
}
