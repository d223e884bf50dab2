// eig_cusolver.cu - the library paths of the dense eigensolvers: cusolverDnXsyevd (all
// pairs), cusolverDnXsyevdx (a subset by index), cusolverDnXsyevBatched (batches, for
// comparison with our Jacobi kernel) and gesvdj (SVD). We add no work around the library
// call: one copy in, the call, one copy out.
#include <cusolverDn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/intr.h"
#include "common.cuh"
#include "eig.h"
#include "handles.h"

namespace {

cusolverDnHandle_t solver_handle(gwb_status *rc)
{
	return gwb_cusolver(rc);
}

gwb_status sol_check(cusolverStatus_t s, const char *what)
{
	if (s == CUSOLVER_STATUS_SUCCESS)
		return GWB_OK;
	return gwb_error(GWB_ECUDA, "cuSOLVER %s failed (status %d)", what, (int)s);
}

gwb_status tcopy(void *dst, const void *src, size_t bytes, gwb_xfer_dir dir, double *ms)
{
	double t = gwb_now();
	gwb_status rc = gwb_copy(dst, src, bytes, dir, false);
	*ms += (gwb_now() - t) * 1e3;
	return rc;
}

// Device time between two events recorded on stream 0 around library calls.
struct dtimer {
	cudaEvent_t a = nullptr, b = nullptr;
	gwb_status start()
	{
		gwb_status rc;
		if ((rc = CUDA_CHECK(cudaEventCreate(&a))) || (rc = CUDA_CHECK(cudaEventCreate(&b))))
			return rc;
		return CUDA_CHECK(cudaEventRecord(a, 0));
	}
	gwb_status stop(double *ms)
	{
		float f = 0;
		gwb_status rc = CUDA_CHECK(cudaEventRecord(b, 0));
		if (!rc)
			rc = CUDA_CHECK(cudaEventSynchronize(b));
		if (!rc)
			cudaEventElapsedTime(&f, a, b);
		*ms += f;
		return rc;
	}
	~dtimer()
	{
		if (a)
			cudaEventDestroy(a);
		if (b)
			cudaEventDestroy(b);
	}
};

// Host copy of device values of type dtype into doubles.
gwb_status values_back(const void *dW, int dtype, size_t cnt, double *out, double *ms)
{
	if (dtype)
		return tcopy(out, dW, cnt * 8, GWB_D2H, ms);
	float *h = (float *)malloc(cnt * 4);
	if (!h)
		return gwb_error(GWB_ENOMEM, "out of memory");
	gwb_status rc = tcopy(h, dW, cnt * 4, GWB_D2H, ms);
	for (size_t i = 0; !rc && i < cnt; i++)
		out[i] = h[i];
	free(h);
	return rc;
}

// Columns [c0, c0 + k) of a device n x * matrix of dtype into doubles (column-major).
gwb_status columns_back(const void *dA, int dtype, size_t n, size_t c0, size_t k, double *out,
			double *ms)
{
	size_t es = dtype ? 8 : 4;
	const char *src = (const char *)dA + c0 * n * es;
	return values_back(src, dtype, n * k, out, ms);
}

// Record a library call in the telemetry as one "kernel" with its measured time.
void record(const char *name, size_t items, double bytes, double ms)
{
	int grid[3] = {(int)items, 1, 1}, block[3] = {0, 0, 0};
	gwb_prof_kernel(name, grid, block, 0, 0, 0, 0, bytes, ms, nullptr, nullptr);
}

gwb_status check_info(const int *dinfo, size_t cnt, const char *what, double *ms)
{
	int *h = (int *)malloc(cnt * sizeof(int));
	if (!h)
		return gwb_error(GWB_ENOMEM, "out of memory");
	gwb_status rc = tcopy(h, dinfo, cnt * sizeof(int), GWB_D2H, ms);
	for (size_t i = 0; !rc && i < cnt; i++)
		if (h[i] != 0) {
			rc = gwb_error(h[i] > 0 ? GWB_ENOCONV : GWB_EINVAL,
				       "cuSOLVER %s: info = %d for matrix %zu (%s)", what, h[i], i + 1,
				       h[i] > 0 ? "did not converge" : "bad argument");
		}
	free(h);
	return rc;
}

} // namespace

// The solver's work copy of the input: a device-to-device copy of dA_in (the caller's stays
// intact), or the host array A sent up.
static gwb_status work_copy(void *dA, const void *A, const void *dA_in, size_t bytes, double *ms)
{
	if (dA_in)
		return CUDA_CHECK(cudaMemcpyAsync(dA, dA_in, bytes, cudaMemcpyDeviceToDevice, 0));
	return tcopy(dA, A, bytes, GWB_H2D, ms);
}

extern "C" gwb_status gwb_gpu_cusolver_batched(const void *A, const void *dA_in, int dtype,
					       size_t count, int n, double *values,
					       double *vectors, void **dvec, gwb_gpu_eig_stats *st)
{
	gwb_status rc = GWB_OK;
	size_t es = dtype ? 8 : 4, nn = (size_t)n * n;
	cudaDataType t = dtype ? CUDA_R_64F : CUDA_R_32F;
	cusolverEigMode_t jobz =
		(vectors || dvec) ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
	void *dA = nullptr, *dW = nullptr, *dwork = nullptr, *hwork = nullptr;
	int *dinfo = nullptr;
	size_t dbytes = 0, hbytes = 0;
	cusolverDnParams_t params = nullptr;
	cusolverDnHandle_t h;
	dtimer tm;

	memset(st, 0, sizeof(*st));
	if (dvec)
		*dvec = nullptr;
	if ((rc = gwb_gpu_init()))
		return rc;
	h = solver_handle(&rc);
	if (!h)
		return rc;
	snprintf(st->variant, sizeof(st->variant), "cusolver-XsyevBatched %s", dtype ? "f64" : "f32");
	if ((rc = sol_check(cusolverDnCreateParams(&params), "CreateParams")))
		return rc;
	if ((rc = gwb_gpu_malloc(&dA, count * nn * es, "eig.cusolver.A")) ||
	    (rc = gwb_gpu_malloc(&dW, count * n * es, "eig.cusolver.W")) ||
	    (rc = gwb_gpu_malloc((void **)&dinfo, count * sizeof(int), "eig.cusolver.info")))
		goto out;
	if ((rc = work_copy(dA, A, dA_in, count * nn * es, &st->transfer_ms)))
		goto out;
	if ((rc = sol_check(cusolverDnXsyevBatched_bufferSize(h, params, jobz, CUBLAS_FILL_MODE_LOWER,
							      n, t, dA, n, t, dW, t, &dbytes,
							      &hbytes, (int64_t)count),
			    "XsyevBatched_bufferSize")))
		goto out;
	if (dbytes && (rc = gwb_gpu_malloc(&dwork, dbytes, "eig.cusolver.work")))
		goto out;
	if (hbytes && !(hwork = malloc(hbytes))) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: %zu bytes of cuSOLVER host workspace", hbytes);
		goto out;
	}
	if ((rc = tm.start()))
		goto out;
	if ((rc = sol_check(cusolverDnXsyevBatched(h, params, jobz, CUBLAS_FILL_MODE_LOWER, n, t, dA,
						   n, t, dW, t, dwork, dbytes, hwork, hbytes, dinfo,
						   (int64_t)count),
			    "XsyevBatched")))
		goto out;
	if ((rc = tm.stop(&st->kernel_ms)))
		goto out;
	record("cusolverDnXsyevBatched", count, (double)count * nn * es * 2, st->kernel_ms);
	if ((rc = check_info(dinfo, count, "XsyevBatched", &st->transfer_ms)))
		goto out;
	// XsyevBatched leaves each matrix's pairs unordered: sort them where they are
	if ((rc = gwb_gpu_eig_sort_w(dW, dtype, (vectors || dvec) ? dA : nullptr, dtype, count, n,
				     values)))
		goto out;
	if (dvec) {
		*dvec = dA;  // the caller's now
		dA = nullptr;
	} else if (vectors)
		rc = values_back(dA, dtype, count * nn, vectors, &st->transfer_ms);
out:
	if (params)
		cusolverDnDestroyParams(params);
	gwb_gpu_free(dA);
	gwb_gpu_free(dW);
	gwb_gpu_free(dwork);
	gwb_gpu_free(dinfo);
	free(hwork);
	return rc;
}

extern "C" gwb_status gwb_gpu_syevd(const void *A, const void *dA_in, int dtype, int n, int il,
				    int iu, double *values, double *vectors, void **dvec,
				    gwb_gpu_eig_stats *st)
{
	gwb_status rc = GWB_OK;
	size_t es = dtype ? 8 : 4, nn = (size_t)n * n;
	cudaDataType t = dtype ? CUDA_R_64F : CUDA_R_32F;
	cusolverEigMode_t jobz =
		(vectors || dvec) ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
	void *dA = nullptr, *dW = nullptr, *dwork = nullptr, *hwork = nullptr;
	int *dinfo = nullptr;
	size_t dbytes = 0, hbytes = 0;
	int64_t found = n;
	double vl = 0, vu = 0;
	cusolverDnParams_t params = nullptr;
	cusolverDnHandle_t h;
	dtimer tm;
	bool subset = il > 0;

	memset(st, 0, sizeof(*st));
	if (dvec)
		*dvec = nullptr;
	if ((rc = gwb_gpu_init()))
		return rc;
	h = solver_handle(&rc);
	if (!h)
		return rc;
	snprintf(st->variant, sizeof(st->variant), "cusolver-%s %s", subset ? "Xsyevdx" : "Xsyevd",
		 dtype ? "f64" : "f32");
	if ((rc = sol_check(cusolverDnCreateParams(&params), "CreateParams")))
		return rc;
	if ((rc = gwb_gpu_malloc(&dA, nn * es, "eig.cusolver.A")) ||
	    (rc = gwb_gpu_malloc(&dW, (size_t)n * es, "eig.cusolver.W")) ||
	    (rc = gwb_gpu_malloc((void **)&dinfo, sizeof(int), "eig.cusolver.info")))
		goto out;
	if ((rc = work_copy(dA, A, dA_in, nn * es, &st->transfer_ms)))
		goto out;
	if (subset) {
		float vlf = 0, vuf = 0;
		void *pvl = dtype ? (void *)&vl : (void *)&vlf, *pvu = dtype ? (void *)&vu : (void *)&vuf;
		if ((rc = sol_check(cusolverDnXsyevdx_bufferSize(h, params, jobz, CUSOLVER_EIG_RANGE_I,
								 CUBLAS_FILL_MODE_LOWER, n, t, dA, n,
								 pvl, pvu, il, iu, &found, t, dW, t,
								 &dbytes, &hbytes),
				    "Xsyevdx_bufferSize")))
			goto out;
		if (dbytes && (rc = gwb_gpu_malloc(&dwork, dbytes, "eig.cusolver.work")))
			goto out;
		if (hbytes && !(hwork = malloc(hbytes))) {
			rc = gwb_error(GWB_ENOMEM, "out of memory: cuSOLVER host workspace");
			goto out;
		}
		if ((rc = tm.start()))
			goto out;
		if ((rc = sol_check(cusolverDnXsyevdx(h, params, jobz, CUSOLVER_EIG_RANGE_I,
						      CUBLAS_FILL_MODE_LOWER, n, t, dA, n, pvl, pvu, il,
						      iu, &found, t, dW, t, dwork, dbytes, hwork, hbytes,
						      dinfo),
				    "Xsyevdx")))
			goto out;
	} else {
		if ((rc = sol_check(cusolverDnXsyevd_bufferSize(h, params, jobz, CUBLAS_FILL_MODE_LOWER,
								n, t, dA, n, t, dW, t, &dbytes,
								&hbytes),
				    "Xsyevd_bufferSize")))
			goto out;
		if (dbytes && (rc = gwb_gpu_malloc(&dwork, dbytes, "eig.cusolver.work")))
			goto out;
		if (hbytes && !(hwork = malloc(hbytes))) {
			rc = gwb_error(GWB_ENOMEM, "out of memory: cuSOLVER host workspace");
			goto out;
		}
		if ((rc = tm.start()))
			goto out;
		if ((rc = sol_check(cusolverDnXsyevd(h, params, jobz, CUBLAS_FILL_MODE_LOWER, n, t, dA,
						     n, t, dW, t, dwork, dbytes, hwork, hbytes, dinfo),
				    "Xsyevd")))
			goto out;
	}
	if ((rc = tm.stop(&st->kernel_ms)))
		goto out;
	record(subset ? "cusolverDnXsyevdx" : "cusolverDnXsyevd", 1, (double)nn * es * 2,
	       st->kernel_ms);
	if ((rc = check_info(dinfo, 1, subset ? "Xsyevdx" : "Xsyevd", &st->transfer_ms)))
		goto out;
	if (subset && found != iu - il + 1) {
		rc = gwb_error(GWB_ENOCONV, "cuSOLVER Xsyevdx found %lld pairs, expected %d",
			       (long long)found, iu - il + 1);
		goto out;
	}
	if ((rc = values_back(dW, dtype, (size_t)found, values, &st->transfer_ms)))
		goto out;
	if (dvec) {
		*dvec = dA;  // the caller's now: columns 0 .. found - 1 hold the vectors
		dA = nullptr;
	} else if (vectors)
		rc = columns_back(dA, dtype, (size_t)n, 0, (size_t)found, vectors, &st->transfer_ms);
out:
	if (params)
		cusolverDnDestroyParams(params);
	gwb_gpu_free(dA);
	gwb_gpu_free(dW);
	gwb_gpu_free(dwork);
	gwb_gpu_free(dinfo);
	free(hwork);
	return rc;
}

extern "C" gwb_status gwb_gpu_svd(const double *A, int m, int n, double *s, double *U, double *V,
				  gwb_gpu_eig_stats *st)
{
	gwb_status rc = GWB_OK;
	int p = m < n ? m : n, lwork = 0;
	bool vec = U && V;
	cusolverEigMode_t jobz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
	double *dA = nullptr, *dS = nullptr, *dU = nullptr, *dV = nullptr, *dwork = nullptr;
	int *dinfo = nullptr;
	gesvdjInfo_t info = nullptr;
	cusolverDnHandle_t h;
	dtimer tm;

	memset(st, 0, sizeof(*st));
	if ((rc = gwb_gpu_init()))
		return rc;
	h = solver_handle(&rc);
	if (!h)
		return rc;
	snprintf(st->variant, sizeof(st->variant), "cusolver-gesvdj f64");
	if ((rc = sol_check(cusolverDnCreateGesvdjInfo(&info), "CreateGesvdjInfo")))
		return rc;
	cusolverDnXgesvdjSetTolerance(info, 1e-14);
	cusolverDnXgesvdjSetMaxSweeps(info, 100);
	if ((rc = gwb_gpu_malloc((void **)&dA, (size_t)m * n * 8, "eig.svd.A")) ||
	    (rc = gwb_gpu_malloc((void **)&dS, (size_t)p * 8, "eig.svd.S")) ||
	    (rc = gwb_gpu_malloc((void **)&dU, (size_t)m * p * 8, "eig.svd.U")) ||
	    (rc = gwb_gpu_malloc((void **)&dV, (size_t)n * p * 8, "eig.svd.V")) ||
	    (rc = gwb_gpu_malloc((void **)&dinfo, sizeof(int), "eig.svd.info")))
		goto out;
	if ((rc = tcopy(dA, A, (size_t)m * n * 8, GWB_H2D, &st->transfer_ms)))
		goto out;
	if ((rc = sol_check(cusolverDnDgesvdj_bufferSize(h, jobz, 1, m, n, dA, m, dS, dU, m, dV, n,
							 &lwork, info),
			    "Dgesvdj_bufferSize")))
		goto out;
	if ((rc = gwb_gpu_malloc((void **)&dwork, (size_t)(lwork > 0 ? lwork : 1) * 8,
				 "eig.svd.work")))
		goto out;
	if ((rc = tm.start()))
		goto out;
	if ((rc = sol_check(cusolverDnDgesvdj(h, jobz, 1, m, n, dA, m, dS, dU, m, dV, n, dwork, lwork,
					      dinfo, info),
			    "Dgesvdj")))
		goto out;
	if ((rc = tm.stop(&st->kernel_ms)))
		goto out;
	record("cusolverDnDgesvdj", 1, (double)m * n * 16, st->kernel_ms);
	{
		int sweeps = 0;
		cusolverDnXgesvdjGetSweeps(h, info, &sweeps);
		st->sweeps = sweeps;
	}
	if ((rc = check_info(dinfo, 1, "Dgesvdj", &st->transfer_ms)))
		goto out;
	if ((rc = tcopy(s, dS, (size_t)p * 8, GWB_D2H, &st->transfer_ms)))
		goto out;
	if (vec && !(rc = tcopy(U, dU, (size_t)m * p * 8, GWB_D2H, &st->transfer_ms)))
		rc = tcopy(V, dV, (size_t)n * p * 8, GWB_D2H, &st->transfer_ms);
out:
	if (info)
		cusolverDnDestroyGesvdjInfo(info);
	gwb_gpu_free(dA);
	gwb_gpu_free(dS);
	gwb_gpu_free(dU);
	gwb_gpu_free(dV);
	gwb_gpu_free(dwork);
	gwb_gpu_free(dinfo);
	return rc;
}
