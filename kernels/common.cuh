// common.cuh - checks and the one launch helper every kernel goes through (ggml-cuda style).
// gwb_launch() records name, grid, block, shared memory, registers, theoretical occupancy,
// CUDA-event time and the bytes the caller says the launch moves, into prof.c. It never
// synchronizes (times are resolved later) unless GWB_DEBUG_SYNC is defined (make DEBUG=1).
#pragma once

#include <cuda_runtime.h>

#include "../src/buffer.h"
#include "../src/gpu.h"
#include "../src/prof.h"
#include "../src/status.h"
#include "profile.h"

struct gwb_func_attr {
	const void *fn;
	int regs;
	size_t static_smem;
	int occ_threads;     // block size and dynamic smem of the cached occupancy
	size_t occ_smem;
	double occ;          // theoretical occupancy for them (0..1)
};

// Cached cudaFuncGetAttributes per kernel (a handful of kernels; linear lookup). The first
// launch of a kernel also registers it by name (gwb_prof_register_kernel), so
// gpu.occupancy("name", block) can ask the runtime about it later. Per host thread (one per
// device with gpus > 1, mgpu.h), so device threads never share the cache.
static inline gwb_func_attr *gwb_attr_of(const void *fn, const char *name)
{
	static thread_local gwb_func_attr cache[128];
	static thread_local int n;
	for (int i = 0; i < n; i++)
		if (cache[i].fn == fn)
			return &cache[i];
	cudaFuncAttributes a;
	gwb_func_attr e = {fn, 0, 0, -1, 0, 0.0};
	if (cudaFuncGetAttributes(&a, fn) == cudaSuccess) {
		e.regs = a.numRegs;
		e.static_smem = a.sharedSizeBytes;
	}
	cudaGetLastError();
	gwb_prof_register_kernel(name, fn);
	if (n == 128)
		return nullptr;  // full: record without registers/smem rather than another kernel's
	cache[n] = e;
	return &cache[n++];
}

// Theoretical occupancy of fn at this block size and dynamic shared memory, cached for the
// last configuration (launch loops repeat one configuration).
template <typename K>
static inline double gwb_occupancy_of(gwb_func_attr *attr, K kernel, int threads, size_t smem)
{
	static int max_thr = 0;
	if (attr && attr->occ_threads == threads && attr->occ_smem == smem)
		return attr->occ;
	if (!max_thr) {
		int dev = 0;
		cudaGetDevice(&dev);
		if (cudaDeviceGetAttribute(&max_thr, cudaDevAttrMaxThreadsPerMultiProcessor, dev) !=
		    cudaSuccess)
			max_thr = 2048;
	}
	int blocks_per_sm = 0;
	cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads, smem);
	cudaGetLastError();
	double occ = max_thr > 0 ? (double)blocks_per_sm * threads / max_thr : 0;
	if (attr) {
		attr->occ_threads = threads;
		attr->occ_smem = smem;
		attr->occ = occ;
	}
	return occ;
}

// Launch kernel<<<grid, block, smem, stream>>>(args...) and record it. Returns a status.
template <typename... KArgs, typename... Args>
static gwb_status gwb_launch(const char *name, void (*kernel)(KArgs...), dim3 grid, dim3 block,
			     size_t smem, cudaStream_t stream, double bytes, Args... args)
{
	if (!gwb_prof_enabled()) {
		// telemetry off (gwb.telemetry(false), GWB_TELEMETRY=0): just the launch
		kernel<<<grid, block, smem, stream>>>(args...);
		gwb_status rc0 = CUDA_CHECK(cudaPeekAtLastError());
#ifdef GWB_DEBUG_SYNC
		if (!rc0)
			rc0 = CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
		gwb_gpu_profile_tick();  // gpu.profile's live decode, when one is due (profile.h)
		return rc0;
	}
	gwb_func_attr *attr = gwb_attr_of((const void *)kernel, name);
	int threads = (int)(block.x * block.y * block.z);
	double occ = gwb_occupancy_of(attr, kernel, threads, smem);

	void *ev0 = nullptr, *ev1 = nullptr;
	gwb_status rc;
	if ((rc = gwb_prof_events(&ev0, &ev1)))
		return rc;
	cudaEvent_t e0 = (cudaEvent_t)ev0, e1 = (cudaEvent_t)ev1;
	cudaEventRecord(e0, stream);
	kernel<<<grid, block, smem, stream>>>(args...);
	rc = CUDA_CHECK(cudaPeekAtLastError());
	cudaEventRecord(e1, stream);
	int g[3] = {(int)grid.x, (int)grid.y, (int)grid.z};
	int b[3] = {(int)block.x, (int)block.y, (int)block.z};
	gwb_prof_kernel(name, g, b, smem, attr ? attr->static_smem : 0, attr ? attr->regs : 0, occ,
			bytes, -1.0, (void *)e0, (void *)e1);
#ifdef GWB_DEBUG_SYNC
	if (!rc)
		rc = CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
	gwb_gpu_profile_tick();  // gpu.profile's live decode, when one is due (profile.h)
	return rc;
}

// Timed copy that records a transfer. cudaMemcpy keeps its own semantics (it returns once a
// host-side buffer may be reused; a device-to-device copy may still be running): the time comes
// from two pooled events resolved later, like a launch's, so recording never adds a wait.
// Host memory that is not pinned (pinned = false) crosses through the pinned staging ring of
// buffer.h (chunked, multi-threaded fill, overlapped DMA) once the copy is large enough to
// gain from it; the semantics are the same.
static inline gwb_status gwb_copy(void *dst, const void *src, size_t bytes, gwb_xfer_dir dir,
				  bool pinned)
{
	static const cudaMemcpyKind kinds[3] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
						cudaMemcpyDeviceToDevice};
	if (!pinned && dir == GWB_H2D)
		return gwb_gpu_copy_in(dst, src, bytes);
	if (!pinned && dir == GWB_D2H)
		return gwb_gpu_copy_out(dst, src, bytes);
	if (!gwb_prof_enabled())
		return CUDA_CHECK(cudaMemcpy(dst, src, bytes, kinds[dir]));
	void *ev0 = nullptr, *ev1 = nullptr;
	gwb_status rc;
	if ((rc = gwb_prof_events(&ev0, &ev1)))
		return rc;
	cudaEventRecord((cudaEvent_t)ev0, 0);
	rc = CUDA_CHECK(cudaMemcpy(dst, src, bytes, kinds[dir]));
	cudaEventRecord((cudaEvent_t)ev1, 0);
	if (rc) {  // a failed copy is not a transfer
		cudaEventDestroy((cudaEvent_t)ev0);
		cudaEventDestroy((cudaEvent_t)ev1);
		cudaGetLastError();
		return rc;
	}
	gwb_prof_transfer_events(dir, (double)bytes, pinned, -1.0, ev0, ev1);
	return rc;
}
