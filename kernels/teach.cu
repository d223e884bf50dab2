// teach.cu - the lesson kernels (kernels/teach.h says what each measures). Every kernel is
// small on purpose: one idea each, so what a lesson shows is the idea and not something else.
// Kernels end by writing their accumulator only when it equals an impossible value, so the
// compiler keeps the loads without the kernels writing anything.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common.cuh"
#include "teach.h"

#include "../src/intr.h"

namespace {

constexpr float kNever = -1.2345e30f;

// --- timing ---------------------------------------------------------------------------------

// One device buffer set freed on every return.
struct Bufs {
	std::vector<void *> p;
	~Bufs()
	{
		for (void *x : p)
			gwb_gpu_free(x);
	}
	gwb_status get(void **out, size_t bytes)
	{
		gwb_status rc = gwb_gpu_malloc(out, bytes, "teach");
		if (!rc)
			p.push_back(*out);
		return rc;
	}
};

struct Events {
	cudaEvent_t a = nullptr, b = nullptr;
	~Events()
	{
		if (a)
			cudaEventDestroy(a);
		if (b)
			cudaEventDestroy(b);
	}
};

// Median ms of reps runs of fn() (after one warm-up run), each timed with events on the
// default stream. fn returns a status; an interrupt between runs returns GWB_EINTR.
template <typename F> gwb_status timed(int reps, F fn, double *ms_out)
{
	Events ev;
	gwb_status rc;
	if ((rc = CUDA_CHECK(cudaEventCreate(&ev.a))) || (rc = CUDA_CHECK(cudaEventCreate(&ev.b))))
		return rc;
	if ((rc = fn()) || (rc = CUDA_CHECK(cudaDeviceSynchronize())))
		return rc;
	std::vector<double> t;
	for (int r = 0; r < std::max(reps, 1); r++) {
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "teach: interrupted");
		float ms = 0;
		cudaEventRecord(ev.a, 0);
		if ((rc = fn()))
			return rc;
		cudaEventRecord(ev.b, 0);
		if ((rc = CUDA_CHECK(cudaEventSynchronize(ev.b))) ||
		    (rc = CUDA_CHECK(cudaEventElapsedTime(&ms, ev.a, ev.b))))
			return rc;
		t.push_back(ms);
	}
	std::sort(t.begin(), t.end());
	size_t k = t.size();
	*ms_out = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
	return GWB_OK;
}

int sm_count()
{
	int dev = 0, sms = 0;
	cudaGetDevice(&dev);
	if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
		sms = 1;
	return sms;
}

__global__ void teach_fill(float *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (float)(i % 97) * 0.25f;
}

gwb_status fill(float *p, size_t n)
{
	return gwb_launch("teach_fill", teach_fill, dim3(1024), dim3(256), 0, 0, (double)n * 4, p, n);
}

// --- memory hierarchy ----------------------------------------------------------------------

// Every block reads the whole set (float4 elements), `passes` times, through L1.
__global__ void teach_sweep_sm(const float4 *__restrict__ a, size_t n4, int passes, float *sink)
{
	float s = 0;
	for (int p = 0; p < passes; p++)
		for (size_t i = threadIdx.x; i < n4; i += blockDim.x) {
			float4 v = __ldca(a + i);
			s += v.x + v.y + v.z + v.w;
		}
	if (s == kNever)
		sink[0] = s;
}

// The blocks share the set (grid-stride), `passes` times, loads cached in L2 only.
__global__ void teach_sweep_dev(const float4 *__restrict__ a, size_t n4, int passes, float *sink)
{
	float s = 0;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (int p = 0; p < passes; p++)
		for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += stride) {
			float4 v = __ldcg(a + i);
			s += v.x + v.y + v.z + v.w;
		}
	if (s == kNever)
		sink[0] = s;
}

// Eight independent FMA chains per thread in registers.
__global__ void teach_fma(int iters, float seed, float *sink)
{
	float a[8];
#pragma unroll
	for (int k = 0; k < 8; k++)
		a[k] = seed + threadIdx.x * 1e-7f + k;
	const float b = 0.999f, c = 1e-4f;
	for (int i = 0; i < iters; i++) {
#pragma unroll
		for (int k = 0; k < 8; k++)
			a[k] = fmaf(a[k], b, c);
	}
	float s = 0;
#pragma unroll
	for (int k = 0; k < 8; k++)
		s += a[k];
	if (s == kNever)
		sink[0] = s;
}

// Shared-memory reads, lane-consecutive words (no conflicts), float4 per thread per step.
__global__ void teach_smem_read(int iters, float *sink)
{
	__shared__ float4 buf[1024];
	for (int i = threadIdx.x; i < 1024; i += blockDim.x)
		buf[i] = make_float4(i, i + 1, i + 2, i + 3);
	__syncthreads();
	float s = 0;
	for (int it = 0; it < iters; it++) {
		float4 v = buf[(threadIdx.x + it * 32) & 1023];
		s += v.x + v.y + v.z + v.w;
	}
	if (s == kNever)
		sink[0] = s;
}

// --- coalescing -----------------------------------------------------------------------------

template <typename V> __device__ __forceinline__ float vsum(V v);
template <> __device__ __forceinline__ float vsum<float>(float v) { return v; }
template <> __device__ __forceinline__ float vsum<float2>(float2 v) { return v.x + v.y; }
template <> __device__ __forceinline__ float vsum<float4>(float4 v) { return v.x + v.y + v.z + v.w; }

// Thread i reads element i * stride (i < m): neighbouring threads `stride` elements apart.
template <typename V>
__global__ void teach_stride(const V *__restrict__ a, size_t m, int stride, float *sink)
{
	float s = 0;
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m; i += step)
		s += vsum<V>(__ldcg(a + i * stride));
	if (s == kNever)
		sink[0] = s;
}

// Sum of feature f over the rows: row-major (AoS: a row's features together) or column-major.
__global__ void teach_feature(const float *__restrict__ x, size_t rows, int F, int f, int soa,
			      float *out)
{
	float s = 0;
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += step)
		s += __ldcg(soa ? x + (size_t)f * rows + r : x + r * F + f);
	if (s == kNever)
		out[0] = s;
}

// --- bank conflicts -------------------------------------------------------------------------

// Lane l reads word (l * stride + 32 it) mod 8192: the bank of a word is its index mod 32, so
// the warp's 32 reads fall into 32 / gcd(stride, 32) banks, gcd(stride, 32) reads per bank.
__global__ void teach_banks(int stride, int iters, float *sink)
{
	__shared__ float buf[8192];
	for (int i = threadIdx.x; i < 8192; i += blockDim.x)
		buf[i] = (float)i;
	__syncthreads();
	int lane = threadIdx.x & 31;
	float s = 0;
	for (int it = 0; it < iters; it++)
		s += buf[(lane * stride + it * 32 + (threadIdx.x >> 5)) & 8191];
	if (s == kNever)
		sink[0] = s;
}

// A 32 x 32 tile stored with row pitch P (32 or 33), read by column: lane l reads row l.
template <int P> __global__ void teach_tile(int iters, float *sink)
{
	__shared__ float tile[32 * P];
	for (int i = threadIdx.x; i < 32 * P; i += blockDim.x)
		tile[i] = (float)i;
	__syncthreads();
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	float s = 0;
	for (int it = 0; it < iters; it++)
		s += tile[lane * P + ((it + w) & 31)];
	if (s == kNever)
		sink[0] = s;
}

// --- atomics: votes -------------------------------------------------------------------------

__device__ __forceinline__ int class_of(size_t r, int C)
{
	uint32_t h = (uint32_t)(r * 2654435761u);
	h ^= h >> 15;
	return (int)(((unsigned long long)h * (unsigned)C) >> 32);  // multiply-shift, no division
}

__global__ void teach_vote_global(size_t rows, int C, unsigned *counts)
{
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += step)
		atomicAdd(&counts[class_of(r, C)], 1u);
}

__global__ void teach_vote_block(size_t rows, int C, unsigned *counts)
{
	extern __shared__ unsigned sc[];
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		sc[c] = 0;
	__syncthreads();
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += step)
		atomicAdd(&sc[class_of(r, C)], 1u);
	__syncthreads();
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		if (sc[c])
			atomicAdd(&counts[c], sc[c]);
}

// --- histograms -----------------------------------------------------------------------------

// codes: features x rows (column-major uint8), y: rows (0/1); hist: features x B x 2.
__global__ void teach_hist_global(const uint8_t *__restrict__ codes, const uint8_t *__restrict__ y,
				  size_t rows, int F, int B, unsigned *hist)
{
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += step) {
		int c = y[r];
		for (int f = 0; f < F; f++) {
			int b = (int)((unsigned)codes[(size_t)f * rows + r] * (unsigned)B >> 8);
			atomicAdd(&hist[((size_t)f * B + b) * 2 + c], 1u);
		}
	}
}

__global__ void teach_hist_smem(const uint8_t *__restrict__ codes, const uint8_t *__restrict__ y,
				size_t rows, int F, int B, unsigned *hist)
{
	extern __shared__ unsigned sh[];
	int cells = F * B * 2;
	for (int i = threadIdx.x; i < cells; i += blockDim.x)
		sh[i] = 0;
	__syncthreads();
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += step) {
		int c = y[r];
		for (int f = 0; f < F; f++) {
			int b = (int)((unsigned)codes[(size_t)f * rows + r] * (unsigned)B >> 8);
			atomicAdd(&sh[(f * B + b) * 2 + c], 1u);
		}
	}
	__syncthreads();
	for (int i = threadIdx.x; i < cells; i += blockDim.x)
		if (sh[i])
			atomicAdd(&hist[i], sh[i]);
}

__global__ void teach_codes(uint8_t *codes, uint8_t *y, size_t rows, int F)
{
	size_t step = (size_t)gridDim.x * blockDim.x;
	for (size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; r < rows; r += step) {
		uint32_t h = (uint32_t)(r * 2654435761u) ^ 0x9e3779b9u;
		y[r] = (uint8_t)(h >> 31);
		for (int f = 0; f < F; f++) {
			h ^= h << 13;
			h ^= h >> 17;
			h ^= h << 5;
			codes[(size_t)f * rows + r] = (uint8_t)(h >> 24);
		}
	}
}

// --- divergence -----------------------------------------------------------------------------

// Warps with w * 1024 / nwarps < frac1024 split: lanes 0..15 take one branch, 16..31 the
// other (the same amount of work each), so such a warp runs both branches one after the other.
__global__ void teach_diverge(int frac1024, int iters, float *sink)
{
	int warp = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5);
	int nwarps = (int)(((size_t)gridDim.x * blockDim.x) >> 5);
	bool split = (long long)warp * 1024 < (long long)frac1024 * nwarps;
	bool other = split && (threadIdx.x & 31) >= 16;
	float a = threadIdx.x * 1e-3f, b = 1.0f;
	if (other) {
		for (int i = 0; i < iters; i++)
			a = fmaf(a, 0.999f, 1e-3f);
	} else {
		for (int i = 0; i < iters; i++)
			b = fmaf(b, 1.001f, -1e-3f);
	}
	if (a + b == kNever)
		sink[0] = a;
}

// --- launches -------------------------------------------------------------------------------

__global__ void teach_small(float *p, size_t off, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[off + i] = p[off + i] * 0.5f + 1.0f;
}

}  // namespace

extern "C" gwb_status gwb_teach_gpu_sweep(const size_t *sizes, int n, int per_sm, double touched,
					  int reps, double *gbps)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	size_t maxb = 0;
	for (int i = 0; i < n; i++)
		maxb = std::max(maxb, sizes[i]);
	Bufs b;
	float *a = nullptr, *sink = nullptr;
	if ((rc = b.get((void **)&a, maxb)) || (rc = b.get((void **)&sink, 16)) ||
	    (rc = fill(a, maxb / 4)))
		return rc;
	int sms = sm_count();
	for (int i = 0; i < n; i++) {
		size_t n4 = sizes[i] / 16;
		int grid = per_sm ? 2 * sms : 8 * sms;
		double per_pass = per_sm ? (double)grid * n4 * 16 : (double)n4 * 16;
		int passes = (int)std::max(1.0, std::min(1e6, touched / per_pass));
		double ms = 0;
		auto run = [&]() {
			return per_sm ? gwb_launch("teach_sweep_sm", teach_sweep_sm, dim3(grid), dim3(512), 0, 0,
						   per_pass * passes, (const float4 *)a, n4, passes, sink)
				      : gwb_launch("teach_sweep_dev", teach_sweep_dev, dim3(grid), dim3(512), 0,
						   0, per_pass * passes, (const float4 *)a, n4, passes, sink);
		};
		if ((rc = timed(reps, run, &ms)))
			return rc;
		gbps[i] = per_pass * passes / (ms * 1e6);
		gwb_progress_update(i + 1, NULL, 0);
	}
	return GWB_OK;
}

static int scaled_iters(int full, double work)
{
	double v = full * std::min(1.0, std::max(work, 0.0));
	return std::max(16, (int)v);
}

extern "C" gwb_status gwb_teach_gpu_onchip(int reps, double work, double *fma_flops, double *reg_bytes_per_s,
					   double *smem_gbps)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	Bufs b;
	float *sink = nullptr;
	if ((rc = b.get((void **)&sink, 16)))
		return rc;
	int sms = sm_count(), grid = 8 * sms, block = 256, iters = scaled_iters(4096, work);
	double ms = 0;
	auto fma = [&]() {
		return gwb_launch("teach_fma", teach_fma, dim3(grid), dim3(block), 0, 0, 0.0, iters, 1.0f,
				  sink);
	};
	if ((rc = timed(reps, fma, &ms)))
		return rc;
	double fmas = (double)grid * block * iters * 8;
	*fma_flops = 2 * fmas / (ms * 1e-3);
	*reg_bytes_per_s = 16 * fmas / (ms * 1e-3);  // 3 reads + 1 write of 4 bytes per FMA
	int siters = scaled_iters(8192, work);
	auto smem = [&]() {
		return gwb_launch("teach_smem_read", teach_smem_read, dim3(grid), dim3(block), 0, 0, 0.0,
				  siters, sink);
	};
	if ((rc = timed(reps, smem, &ms)))
		return rc;
	*smem_gbps = (double)grid * block * siters * 16 / (ms * 1e6);
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_stride(size_t bytes, int width, const int *strides, int n,
					   int reps, double *gbps)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	if (width != 4 && width != 8 && width != 16)
		return gwb_error(GWB_EINVAL, "teach: element width must be 4, 8 or 16 bytes");
	Bufs b;
	float *a = nullptr, *sink = nullptr;
	if ((rc = b.get((void **)&a, bytes)) || (rc = b.get((void **)&sink, 16)) ||
	    (rc = fill(a, bytes / 4)))
		return rc;
	int grid = 16 * sm_count();
	for (int i = 0; i < n; i++) {
		int s = std::max(1, strides[i]);
		size_t m = bytes / width / s;
		double useful = (double)m * width, ms = 0;
		auto run = [&]() {
			if (width == 4)
				return gwb_launch("teach_stride_f1", teach_stride<float>, dim3(grid), dim3(256), 0, 0,
						  useful, (const float *)a, m, s, sink);
			if (width == 8)
				return gwb_launch("teach_stride_f2", teach_stride<float2>, dim3(grid), dim3(256), 0,
						  0, useful, (const float2 *)a, m, s, sink);
			return gwb_launch("teach_stride_f4", teach_stride<float4>, dim3(grid), dim3(256), 0, 0,
					  useful, (const float4 *)a, m, s, sink);
		};
		if ((rc = timed(reps, run, &ms)))
			return rc;
		gbps[i] = useful / (ms * 1e6);
	}
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_soa(size_t rows, int features, int reps, double *aos_ms,
					double *soa_ms)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	Bufs b;
	float *x = nullptr, *sink = nullptr;
	size_t n = rows * (size_t)features;
	if ((rc = b.get((void **)&x, n * 4)) || (rc = b.get((void **)&sink, 16)) || (rc = fill(x, n)))
		return rc;
	int grid = 16 * sm_count();
	for (int soa = 0; soa < 2; soa++) {
		auto run = [&]() {
			return gwb_launch(soa ? "teach_feature_soa" : "teach_feature_aos", teach_feature,
					  dim3(grid), dim3(256), 0, 0, (double)rows * 4, (const float *)x, rows,
					  features, features / 2, soa, sink);
		};
		if ((rc = timed(reps, run, soa ? soa_ms : aos_ms)))
			return rc;
	}
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_banks(const int *strides, int n, int reps, double work, double *ms,
					  double *tile_ms, double *padded_ms)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	Bufs b;
	float *sink = nullptr;
	if ((rc = b.get((void **)&sink, 16)))
		return rc;
	int grid = 4 * sm_count(), iters = scaled_iters(4096, work);
	for (int i = 0; i < n; i++) {
		int s = strides[i];
		auto run = [&]() {
			return gwb_launch("teach_banks", teach_banks, dim3(grid), dim3(256), 0, 0, 0.0, s, iters,
					  sink);
		};
		if ((rc = timed(reps, run, &ms[i])))
			return rc;
	}
	auto t32 = [&]() {
		return gwb_launch("teach_tile32", teach_tile<32>, dim3(grid), dim3(256), 0, 0, 0.0, iters, sink);
	};
	auto t33 = [&]() {
		return gwb_launch("teach_tile33", teach_tile<33>, dim3(grid), dim3(256), 0, 0, 0.0, iters, sink);
	};
	if ((rc = timed(reps, t32, tile_ms)) || (rc = timed(reps, t33, padded_ms)))
		return rc;
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_vote(size_t rows, const int *classes, int n, int reps,
					 double *global_ms, double *block_ms)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	int cmax = 1;
	for (int i = 0; i < n; i++)
		cmax = std::max(cmax, classes[i]);
	Bufs b;
	unsigned *counts = nullptr;
	if ((rc = b.get((void **)&counts, (size_t)cmax * sizeof(unsigned))))
		return rc;
	int grid = 8 * sm_count();
	std::vector<unsigned> host((size_t)cmax);
	for (int i = 0; i < n; i++) {
		int C = classes[i];
		for (int mode = 0; mode < 2; mode++) {
			auto run = [&]() {
				gwb_status r2 = CUDA_CHECK(cudaMemsetAsync(counts, 0, (size_t)C * sizeof(unsigned)));
				if (r2)
					return r2;
				return mode == 0
					       ? gwb_launch("teach_vote_global", teach_vote_global, dim3(grid),
							    dim3(256), 0, 0, (double)C * 4, rows, C, counts)
					       : gwb_launch("teach_vote_block", teach_vote_block, dim3(grid),
							    dim3(256), (size_t)C * sizeof(unsigned), 0,
							    (double)grid * C * 4, rows, C, counts);
			};
			if ((rc = timed(reps, run, mode == 0 ? &global_ms[i] : &block_ms[i])))
				return rc;
			if ((rc = CUDA_CHECK(cudaMemcpy(host.data(), counts, (size_t)C * sizeof(unsigned),
							cudaMemcpyDeviceToHost))))
				return rc;
			unsigned long long tot = 0;
			for (int c = 0; c < C; c++)
				tot += host[c];
			if (tot != rows)
				return gwb_error(GWB_ECUDA, "teach.atomics: %s votes add up to %llu, not %zu",
						 mode ? "block" : "global", tot, rows);
		}
	}
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_hist(size_t rows, int features, const int *bins, int n,
					 int reps, double *global_ms, double *smem_ms, double *occ,
					 double *smem_bytes)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	int bmax = 1;
	for (int i = 0; i < n; i++)
		bmax = std::max(bmax, bins[i]);
	Bufs b;
	uint8_t *codes = nullptr, *y = nullptr;
	unsigned *hist = nullptr;
	size_t hb = (size_t)features * bmax * 2 * sizeof(unsigned);
	if ((rc = b.get((void **)&codes, rows * features)) || (rc = b.get((void **)&y, rows)) ||
	    (rc = b.get((void **)&hist, hb)))
		return rc;
	int sms = sm_count(), dev = 0, max_thr = 2048, optin = 0;
	cudaGetDevice(&dev);
	cudaDeviceGetAttribute(&max_thr, cudaDevAttrMaxThreadsPerMultiProcessor, dev);
	cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
	if ((rc = gwb_launch("teach_codes", teach_codes, dim3(8 * sms), dim3(256), 0, 0,
			     (double)rows * (features + 1), codes, y, rows, features)))
		return rc;
	std::vector<unsigned> ref, got;
	for (int i = 0; i < n; i++) {
		int B = bins[i];
		size_t cells = (size_t)features * B * 2, smem = cells * sizeof(unsigned);
		smem_bytes[i] = (double)smem;
		occ[i] = 0;
		if ((int)smem > optin)
			return gwb_error(GWB_EINVAL, "teach.histogram: %d features x %d bins need %zu bytes of "
				         "shared memory per block; this GPU allows %d", features, B, smem, optin);
		if ((rc = CUDA_CHECK(cudaFuncSetAttribute(teach_hist_smem,
							  cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem))))
			return rc;
		int per_sm = 0;
		cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, teach_hist_smem, 256, smem);
		occ[i] = (double)per_sm * 256 / max_thr;
		int grid = std::max(1, per_sm) * sms;
		for (int mode = 0; mode < 2; mode++) {
			auto run = [&]() {
				gwb_status r2 = CUDA_CHECK(cudaMemsetAsync(hist, 0, cells * sizeof(unsigned)));
				if (r2)
					return r2;
				return mode == 0
					       ? gwb_launch("teach_hist_global", teach_hist_global, dim3(8 * sms),
							    dim3(256), 0, 0, (double)rows * (features + 1), codes, y,
							    rows, features, B, hist)
					       : gwb_launch("teach_hist_smem", teach_hist_smem, dim3(grid),
							    dim3(256), smem, 0, (double)rows * (features + 1), codes,
							    y, rows, features, B, hist);
			};
			if ((rc = timed(reps, run, mode == 0 ? &global_ms[i] : &smem_ms[i])))
				return rc;
			std::vector<unsigned> &h = mode == 0 ? ref : got;
			h.resize(cells);
			if ((rc = CUDA_CHECK(cudaMemcpy(h.data(), hist, cells * sizeof(unsigned),
							cudaMemcpyDeviceToHost))))
				return rc;
		}
		if (ref != got)
			return gwb_error(GWB_ECUDA, "teach.histogram: the shared-memory and global "
				         "histograms of %d bins differ", B);
		gwb_progress_update(i + 1, NULL, 0);
	}
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_divergence(const double *frac, int n, int reps, double work,
					       double *ms)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	Bufs b;
	float *sink = nullptr;
	if ((rc = b.get((void **)&sink, 16)))
		return rc;
	int grid = 8 * sm_count(), iters = scaled_iters(8192, work);
	for (int i = 0; i < n; i++) {
		int f = (int)(std::min(1.0, std::max(0.0, frac[i])) * 1024 + 0.5);
		auto run = [&]() {
			return gwb_launch("teach_diverge", teach_diverge, dim3(grid), dim3(256), 0, 0, 0.0, f,
					  iters, sink);
		};
		if ((rc = timed(reps, run, &ms[i])))
			return rc;
	}
	return GWB_OK;
}

extern "C" gwb_status gwb_teach_gpu_launch(int count, int elems, int reps, double *many_ms,
					   double *one_ms)
{
	gwb_status rc;
	if ((rc = gwb_gpu_init()))
		return rc;
	Bufs b;
	float *p = nullptr;
	size_t total = (size_t)count * elems;
	if ((rc = b.get((void **)&p, total * sizeof(float))) || (rc = fill(p, total)))
		return rc;
	int block = 128, per = (elems + block - 1) / block;
	auto many = [&]() {
		for (int k = 0; k < count; k++) {
			gwb_status r2 = gwb_launch("teach_small", teach_small, dim3(per), dim3(block), 0, 0,
						   (double)elems * 8, p, (size_t)k * elems, elems);
			if (r2)
				return r2;
		}
		return GWB_OK;
	};
	auto one = [&]() {
		int blocks = (int)((total + block - 1) / block);
		return gwb_launch("teach_batched", teach_small, dim3(blocks), dim3(block), 0, 0,
				  (double)total * 8, p, (size_t)0, (int)total);
	};
	if ((rc = timed(reps, many, many_ms)) || (rc = timed(reps, one, one_ms)))
		return rc;
	return GWB_OK;
}
