// handles.cu - the process's cuBLAS, cuSOLVER and cuSPARSE handles, created on first use and destroyed
// by gwb_gpu_handles_release() when gwb shuts down (src/gpu.c), so the device memory they hold
// (tens of MB of library workspace each) is given back and compute-sanitizer sees no leak.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <pthread.h>

#include "common.cuh"
#include "handles.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t blas;
static cusolverDnHandle_t solver;
static cusparseHandle_t sparse;

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
	pthread_mutex_lock(&lock);
	if (sparse)
		cusparseDestroy(sparse);
	sparse = nullptr;
	if (solver)
		cusolverDnDestroy(solver);
	if (blas)
		cublasDestroy(blas);
	solver = nullptr;
	blas = nullptr;
	pthread_mutex_unlock(&lock);
}
