// spmv.cu - the device CSR matrix, our SpMV/SpMM kernel and cuSPARSE's, and their benchmark.
// Our kernel gives each row a segment of LANES threads (1..32, a whole warp for long rows),
// chosen from the mean row length; a segment reads its row's entries coalesced and reduces
// with warp shuffles (one vector: spmv_seg, one accumulator; spmm_seg, each thread carrying
// up to 4 columns of a column-major block, is what gwb_gpu_spmm runs only for one column or
// sizes past 2^31: column-major blocks otherwise go through spmm_via_rows below).
// Blocks in row-major order (the Chebyshev filter's layout on the GPU): spmm_rows, one thread
// per (row, column): the b threads of a row read its entries together (one broadcast load)
// and gather b contiguous doubles of X per entry, so the matrix is read once for the whole
// block and each gather is one or two cache lines instead of b.
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

template <int LANES, typename I>
__global__ void spmv_seg(int64_t n, const I *__restrict__ rp, const I *__restrict__ ci,
			 const double *__restrict__ val, const double *__restrict__ x,
			 double *__restrict__ y, double alpha)
{
	int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	int64_t row = t / LANES;
	int lane = (int)(t % LANES);
	if (row >= n)
		return;  // whole segments leave together: LANES divides the block size
	double acc = 0;
	I b = rp[row], e = rp[row + 1];
	for (I p = b + lane; p < e; p += LANES)
		acc += val[p] * x[ci[p]];
	if (LANES > 1) {
		unsigned mask = LANES == 32 ? 0xffffffffu
					    : (((1u << LANES) - 1) << ((threadIdx.x % 32) / LANES * LANES));
#pragma unroll
		for (int off = LANES / 2; off > 0; off /= 2)
			acc += __shfl_down_sync(mask, acc, off, LANES);
	}
	if (lane == 0)
		y[row] = alpha * acc;
}

// Y (n x b, row-major) = alpha A X (cols x b, row-major) + beta X + gamma Z (beta, gamma
// only for square A: one step of the Chebyshev recurrence in one pass); one thread per
// (row, column).
template <typename I>
__global__ void spmm_rows(int64_t n, const I *__restrict__ rp, const I *__restrict__ ci,
			  const double *__restrict__ val, const double *__restrict__ X,
			  double *__restrict__ Y, int b, double alpha, double beta,
			  const double *__restrict__ Z, double gamma)
{
	int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= n * b)
		return;
	int64_t row = t / b;
	int c = (int)(t - row * b);
	I s = rp[row], e = rp[row + 1];
	double acc0 = 0, acc1 = 0;
	I p = s;
	for (; p + 1 < e; p += 2) {
		acc0 += val[p] * X[(int64_t)ci[p] * b + c];
		acc1 += val[p + 1] * X[(int64_t)ci[p + 1] * b + c];
	}
	if (p < e)
		acc0 += val[p] * X[(int64_t)ci[p] * b + c];
	double v = alpha * (acc0 + acc1);
	if (beta != 0)
		v += beta * X[t];
	if (gamma != 0)
		v += gamma * Z[t];
	Y[t] = v;
}

// Measured on the H200 (bench/results/eig-sparse-2026-11-30b.txt): rows of ~5 entries run
// fastest with one thread per row (lap1000: 1 lane 0.032 ms, 8 lanes 0.063, cuSPARSE 0.044),
// rows of ~100 with 16-32 lanes; a segment of about a third of the row length in between.
static int pick_lanes(int64_t n, int64_t nnz)
{
	double avg = n ? (double)nnz / n : 1;
	if (avg <= 8)
		return 1;
	int lanes = 2;
	while (lanes < 32 && 3 * lanes < avg)
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
		       (double)(g->n + g->cols) * 8 * nb;
	if (nb == 1)
		return gwb_launch("spmv_seg", spmv_seg<LANES, I>, grid, dim3(block), 0, 0, bytes,
				  g->n, (const I *)g->rp, (const I *)g->ci, (const double *)g->val, X,
				  Y, alpha);
	return gwb_launch("spmm_seg", spmm_seg<LANES, I>, grid, dim3(block), 0, 0, bytes, g->n,
			  (const I *)g->rp, (const I *)g->ci, (const double *)g->val, X,
			  (int64_t)g->cols, Y, nb, alpha);
}

template <typename I>
static gwb_status launch_ours_i(const gwb_gpu_csr *g, const double *X, double *Y, int b,
				double alpha)
{
	switch (g->lanes) {
	case 1: return launch_ours_t<1, I>(g, X, Y, b, alpha);
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
		const double *Xc = X + (size_t)c * g->cols;
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
		if ((st = SPCHECK(cusparseCreateDnVec(&vx, g->cols, (void *)X, CUDA_R_64F), "CreateDnVec")))
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
	if ((st = SPCHECK(cusparseCreateDnMat(&mx, g->cols, b, g->cols, (void *)X, CUDA_R_64F,
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

template <typename I>
static gwb_status spmm_rows_ours_i(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha,
				   double beta = 0, const double *Z = nullptr, double gamma = 0)
{
	const int block = 256;
	int64_t threads = g->n * b;
	dim3 grid((unsigned)((threads + block - 1) / block));
	double bytes = (double)g->nnz * (8 + sizeof(I)) + (double)(g->n + 1) * sizeof(I) +
		       (double)(g->n + g->cols) * 8 * b + (double)g->n * 8 * b * ((beta != 0) + (gamma != 0));
	return gwb_launch("spmm_rows", spmm_rows<I>, grid, dim3(block), 0, 0, bytes, g->n,
			  (const I *)g->rp, (const I *)g->ci, (const double *)g->val, X, Y, b, alpha,
			  beta, Z, gamma);
}

static gwb_status spmm_rows_ours(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha)
{
	return g->wide ? spmm_rows_ours_i<long long>(g, X, Y, b, alpha)
		       : spmm_rows_ours_i<int>(g, X, Y, b, alpha);
}

static gwb_status spmm_rows_cusparse(gwb_gpu_csr *g, const double *X, double *Y, int b,
				     double alpha)
{
	cusparseHandle_t h = (cusparseHandle_t)g->sp;
	cusparseSpMatDescr_t A = (cusparseSpMatDescr_t)g->mat;
	cusparseDnMatDescr_t mx, my;
	double beta = 0;
	size_t need = 0;
	gwb_status st;
	if ((st = SPCHECK(cusparseCreateDnMat(&mx, g->cols, b, b, (void *)X, CUDA_R_64F,
					      CUSPARSE_ORDER_ROW), "CreateDnMat (rows)")))
		return st;
	if ((st = SPCHECK(cusparseCreateDnMat(&my, g->n, b, b, Y, CUDA_R_64F, CUSPARSE_ORDER_ROW),
			  "CreateDnMat (rows)"))) {
		cusparseDestroyDnMat(mx);
		return st;
	}
	st = SPCHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					     CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, mx, &beta, my,
					     CUDA_R_64F, CUSPARSE_SPMM_CSR_ALG2, &need),
		     "SpMM_bufferSize (row-major, CSR_ALG2)");
	if (!st)
		st = gwb_sp_scratch(g, need);
	if (!st)
		st = SPCHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
					  CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, mx, &beta, my,
					  CUDA_R_64F, CUSPARSE_SPMM_CSR_ALG2, g->spbuf),
			     "SpMM (row-major, CSR_ALG2)");
	cusparseDestroyDnMat(mx);
	cusparseDestroyDnMat(my);
	return st;
}

extern "C" gwb_status gwb_gpu_spmm_rows(gwb_gpu_csr *g, const double *X, double *Y, int b,
					double alpha, int kind)
{
	if (b == 1)
		return gwb_gpu_spmm(g, X, Y, 1, alpha, kind);
	if (kind == GWB_SPMV_CUSPARSE)
		return spmm_rows_cusparse(g, X, Y, b, alpha);
	return spmm_rows_ours(g, X, Y, b, alpha);
}

extern "C" gwb_status gwb_gpu_cheb_step_rows(gwb_gpu_csr *g, const double *X, const double *Z,
					     double *Y, int b, double alpha, double beta, double gamma)
{
	if (g->n != g->cols)
		return gwb_error(GWB_EINVAL, "gwb_gpu_cheb_step_rows: the matrix must be square");
	return g->wide ? spmm_rows_ours_i<long long>(g, X, Y, b, alpha, beta, Z, gamma)
		       : spmm_rows_ours_i<int>(g, X, Y, b, alpha, beta, Z, gamma);
}

extern "C" gwb_status gwb_gpu_sp_transpose(gwb_gpu_csr *g, int64_t rows, int cols, const double *A,
					double *B)
{
	const double one = 1, zero = 0;
	// B (cols x rows, column-major) = A^T, A rows x cols column-major
	return BLCHECK(cublasDgeam((cublasHandle_t)g->bl, CUBLAS_OP_T, CUBLAS_OP_N, cols, (int)rows,
				   &one, A, (int)rows, &zero, B, cols, B, cols), "Dgeam (transpose)");
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

// Column-major blocks through row-major copies: X^T into scratch, spmm_rows, the result
// transposed back (two cuBLAS geam passes over the block cost far less than gathering b
// scattered columns per nonzero: rs100k, 16 columns, 1.10 ms column-major vs 0.17 row-major).
static gwb_status spmm_via_rows(gwb_gpu_csr *g, const double *X, double *Y, int b, double alpha)
{
	size_t need = (size_t)(g->n + g->cols) * b;
	gwb_status st;
	if (need > g->tbuf_size) {
		gwb_gpu_free(g->tbuf);
		g->tbuf = nullptr;
		g->tbuf_size = 0;
		if ((st = gwb_gpu_malloc((void **)&g->tbuf, need * sizeof(double), "sparse.spmm")))
			return st;
		g->tbuf_size = need;
	}
	double *Xr = g->tbuf, *Yr = g->tbuf + (size_t)g->cols * b;
	if ((st = gwb_gpu_sp_transpose(g, g->cols, b, X, Xr)) ||
	    (st = spmm_rows_ours(g, Xr, Yr, b, alpha)))
		return st;
	return gwb_gpu_sp_transpose(g, b, (int)g->n, Yr, Y);
}

extern "C" gwb_status gwb_gpu_spmm(gwb_gpu_csr *g, const double *X, double *Y, int b,
				   double alpha, int kind)
{
	if (kind == GWB_SPMV_CUSPARSE)
		return spmm_cusparse(g, X, Y, b, alpha);
	if (b > 1 && g->n < INT32_MAX && g->cols < INT32_MAX)
		return spmm_via_rows(g, X, Y, b, alpha);
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
	g->cols = A->cols;
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
	gwb_gpu_free(g->tbuf);
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
	double *dx = nullptr, *dy = nullptr, *dX = nullptr, *dXr = nullptr, *dY = nullptr;
	const int B = 16;
	std::vector<double> x(A->cols), yc(A->rows), yg(A->rows);
	std::vector<double> Xh, Yc, Yg;
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	gwb_status st;
	static const int sweep_lanes[6] = {1, 2, 4, 8, 16, 32};

	memset(out, 0, sizeof(*out));
	if (reps < 1)
		reps = 1;
	uint64_t s = 12345;
	auto rnd = [&s]() {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		return (double)(s >> 11) * 0x1.0p-53 - 0.5;
	};
	for (auto &v : x)
		v = rnd();
	gwb_csr_spmv(A, x.data(), yc.data());
	double ymax = 0;
	for (double v : yc)
		ymax = std::max(ymax, fabs(v));
	if (!(ymax > 0))
		ymax = 1;
	// median time of reps runs of f after 3 warm-ups; f returns a status
	auto timed = [&](auto f, double *ms) -> gwb_status {
		std::vector<float> t;
		for (int r = 0; r < reps + 3; r++) {
			cudaEventRecord(e0, 0);
			gwb_status s2 = f();
			if (s2)
				return s2;
			cudaEventRecord(e1, 0);
			if ((s2 = CUDA_CHECK(cudaEventSynchronize(e1))))
				return s2;
			float v = 0;
			cudaEventElapsedTime(&v, e0, e1);
			if (r >= 3)
				t.push_back(v);
		}
		*ms = median(t);
		return GWB_OK;
	};
	auto check_vec = [&](double *err) -> gwb_status {
		gwb_status s2 = gwb_copy(yg.data(), dy, A->rows * 8, GWB_D2H, false);
		double e = 0;
		for (int64_t i = 0; !s2 && i < A->rows; i++)
			e = std::max(e, fabs(yg[i] - yc[i]) / ymax);
		*err = std::max(*err, e);
		return s2;
	};
	if ((st = gwb_gpu_csr_upload(A, &g)) ||
	    (st = gwb_gpu_malloc((void **)&dx, A->cols * 8, "sparse.bench")) ||
	    (st = gwb_gpu_malloc((void **)&dy, A->rows * 8, "sparse.bench")) ||
	    (st = gwb_copy(dx, x.data(), A->cols * 8, GWB_H2D, false)) ||
	    (st = CUDA_CHECK(cudaEventCreate(&e0))) || (st = CUDA_CHECK(cudaEventCreate(&e1))))
		goto out;
	out->lanes = g->lanes;
	for (int kind = GWB_SPMV_OURS; kind <= GWB_SPMV_CUSPARSE; kind++) {
		double *ms = kind == GWB_SPMV_OURS ? &out->ours_ms : &out->cusparse_ms;
		if ((st = timed([&]() { return gwb_gpu_spmm(g, dx, dy, 1, 1.0, kind); }, ms)) ||
		    (st = check_vec(kind == GWB_SPMV_OURS ? &out->ours_err : &out->cusparse_err)))
			goto out;
	}
	for (int l = 0; l < 6; l++) {
		g->lanes = sweep_lanes[l];
		st = timed([&]() { return gwb_gpu_spmm(g, dx, dy, 1, 1.0, GWB_SPMV_OURS); },
			   &out->sweep_ms[l]);
		if (!st)
			st = check_vec(&out->ours_err);
		g->lanes = out->lanes;
		if (st)
			goto out;
	}
	out->bytes = (double)A->nnz * (8 + (A->wide ? 8 : 4)) + (double)(A->rows + 1) * (A->wide ? 8 : 4) +
		     (double)A->cols * 8 + (double)A->rows * 8;
	out->ours_gbps = out->ours_ms > 0 ? out->bytes / (out->ours_ms * 1e6) : 0;
	out->cusparse_gbps = out->cusparse_ms > 0 ? out->bytes / (out->cusparse_ms * 1e6) : 0;

	/* a block of B vectors, column-major and row-major */
	out->block_b = B;
	Xh.resize((size_t)A->cols * B);
	Yc.resize((size_t)A->rows * B);
	Yg.resize((size_t)A->rows * B);
	for (auto &v : Xh)
		v = rnd();
	gwb_csr_spmm(A, Xh.data(), Yc.data(), B);
	{
		std::vector<double> Xr((size_t)A->cols * B);
		for (int64_t i = 0; i < A->cols; i++)
			for (int c = 0; c < B; c++)
				Xr[(size_t)i * B + c] = Xh[(size_t)c * A->cols + i];
		if ((st = gwb_gpu_malloc((void **)&dX, Xh.size() * 8, "sparse.bench")) ||
		    (st = gwb_gpu_malloc((void **)&dXr, Xh.size() * 8, "sparse.bench")) ||
		    (st = gwb_gpu_malloc((void **)&dY, Yc.size() * 8, "sparse.bench")) ||
		    (st = gwb_copy(dX, Xh.data(), Xh.size() * 8, GWB_H2D, false)) ||
		    (st = gwb_copy(dXr, Xr.data(), Xr.size() * 8, GWB_H2D, false)))
			goto out;
	}
	{
		double ym = 0;
		for (double v : Yc)
			ym = std::max(ym, fabs(v));
		if (!(ym > 0))
			ym = 1;
		for (int v = 0; v < 4; v++) {
			bool rows = v >= 2;
			int kind = v % 2 ? GWB_SPMV_CUSPARSE : GWB_SPMV_OURS;
			st = timed([&]() {
				return rows ? gwb_gpu_spmm_rows(g, dXr, dY, B, 1.0, kind)
					    : gwb_gpu_spmm(g, dX, dY, B, 1.0, kind);
			}, &out->blk_ms[v]);
			if (!st)
				st = gwb_copy(Yg.data(), dY, Yg.size() * 8, GWB_D2H, false);
			if (st)
				goto out;
			double e = 0;
			for (int64_t i = 0; i < A->rows; i++)
				for (int c = 0; c < B; c++) {
					double got = rows ? Yg[(size_t)i * B + c] : Yg[(size_t)c * A->rows + i];
					e = std::max(e, fabs(got - Yc[(size_t)c * A->rows + i]) / ym);
				}
			out->blk_err[v] = e;
		}
	}
out:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	gwb_gpu_free(dx);
	gwb_gpu_free(dy);
	gwb_gpu_free(dX);
	gwb_gpu_free(dXr);
	gwb_gpu_free(dY);
	gwb_gpu_csr_free(g);
	return st;
}
