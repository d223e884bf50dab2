// handles.cu - the process's cuBLAS, cuSOLVER and cuSPARSE handles, created on first use and destroyed
// by gwb_gpu_handles_release() when gwb shuts down (src/gpu.c), so the device memory they hold
// (tens of MB of library workspace each) is given back and compute-sanitizer sees no leak.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <pthread.h>

#include "common.cuh"
#include "handles.h"
#include "../src/mgpu.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
// One set per device (a handle is bound to the device current at its creation), indexed by
// the calling thread's device (mgpu.h): gpus = 1 uses entry 0 alone.
static cublasHandle_t blas_dev[GWB_GPU_MAX];
static cusolverDnHandle_t solver_dev[GWB_GPU_MAX];
static cusparseHandle_t sparse_dev[GWB_GPU_MAX];
#define blas (blas_dev[gwb_gpu_current()])
#define solver (solver_dev[gwb_gpu_current()])
#define sparse (sparse_dev[gwb_gpu_current()])

cublasHandle_t gwb_cublas(gwb_status *rc)
{
	pthread_mutex_lock(&lock);
	if (!blas && cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
		blas = nullptr;
		*rc = gwb_error(GWB_ECUDA, "cublasCreate failed (is the GPU out of memory?)");
	}
	pthread_mutex_unlock(&lock);
	return blas;
}

cusolverDnHandle_t gwb_cusolver(gwb_status *rc)
{
	pthread_mutex_lock(&lock);
	if (!solver && cusolverDnCreate(&solver) != CUSOLVER_STATUS_SUCCESS) {
		solver = nullptr;
		*rc = gwb_error(GWB_ECUDA, "cusolverDnCreate failed (is the GPU out of memory?)");
	}
	pthread_mutex_unlock(&lock);
	return solver;
}

cusparseHandle_t gwb_cusparse(gwb_status *rc)
{
	pthread_mutex_lock(&lock);
	if (!sparse && cusparseCreate(&sparse) != CUSPARSE_STATUS_SUCCESS) {
		sparse = nullptr;
		*rc = gwb_error(GWB_ECUDA, "cusparseCreate failed (is the GPU out of memory?)");
	}
	pthread_mutex_unlock(&lock);
	return sparse;
}

extern "C" void gwb_gpu_handles_release(void)
{
	int prev = gwb_gpu_current();

	pthread_mutex_lock(&lock);
	for (int d = 0; d < GWB_GPU_MAX; d++) {
		if (!sparse_dev[d] && !solver_dev[d] && !blas_dev[d])
			continue;
		if (d != prev)
			cudaSetDevice(d);  // destroy each on its own device
		if (sparse_dev[d])
			cusparseDestroy(sparse_dev[d]);
		sparse_dev[d] = nullptr;
		if (solver_dev[d])
			cusolverDnDestroy(solver_dev[d]);
		if (blas_dev[d])
			cublasDestroy(blas_dev[d]);
		solver_dev[d] = nullptr;
		blas_dev[d] = nullptr;
		if (d != prev)
			cudaSetDevice(prev);
	}
	cudaGetLastError();
	pthread_mutex_unlock(&lock);
}
