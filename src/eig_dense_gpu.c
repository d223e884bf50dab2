/* eig_dense_gpu.c - the GPU paths of the dense eigen drivers, as one table (eigd_gpu_ops,
 * eig_dense_impl.h) that a build without CUDA leaves out: one matrix through cuSOLVER
 * Xsyevd / Xsyevdx or our Jacobi kernel, batches through our batched Jacobi or cuSOLVER's,
 * the SVD through gesvdj, and a batch's device vectors gathered across devices. The input is
 * used where it is (a GPU-resident matrix in place, else one staged upload, said in the
 * note); symmetry, residuals, orthogonality and Jacobi's sort run on the device
 * (eig_check.cu); vectors stay there (e->dvectors) until a host read. Nothing between the
 * upload and the values' copy back waits for the device except the solvers' own info checks.
 * The one file of the dense solvers that tests GWB_HAVE_CUDA; it may use kernels/eig.h, gpu.h,
 * buffer.h, mgpu.h, dense.h and eig_dense_check.c. */
#define _GNU_SOURCE
#include "eig_dense_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/eig.h"

/* The GPU mixed path converts each f64 matrix to f32 as it is (the CPU path scales first):
 * refuse matrices whose largest entry (amax, per matrix, from the device symmetry check) f32
 * cannot carry with room for the sweeps' products. */
static gwb_status check_f32_range(const gwb_matrix *A, const double *amax, const char *fn)
{
	size_t b;

	if (A->dtype != GWB_F64)
		return GWB_OK;
	for (b = 0; b < A->count; b++) {
		double mx = amax[b];
		if (mx > 1e30 || (mx > 0 && mx < 1e-30)) {
			char where[64] = "";
			if (A->count > 1)
				snprintf(where, sizeof(where), " (matrix %zu of the batch)", b + 1);
			return gwb_error(GWB_EINVAL, "%s: method \"mixed\" on the GPU solves in f32 "
					 "first, and the matrix%s has entries up to %.3g, outside the "
					 "range it can carry (1e-30 .. 1e30): use method = \"jacobi\" "
					 "(any range), backend = \"cpu\", or scale the matrix", fn,
					 where, mx);
		}
	}
	return GWB_OK;
}

/* The operand was host-resident and crossed to the GPU for this call only: say so, with the
 * bytes, and how to keep it there (issue 12: a mixed call copies and says so). */
static void note_upload(gwb_eigen *e, const gwb_matrix *A, const char *what)
{
	char b[32];

	eigd_note(e, "%s is on the host: %s copied to the GPU for this call (%s:to(\"gpu\") keeps "
		  "it there for the next)", what, gwb_fmt_bytes(b, sizeof(b),
		  (double)gwb_matrix_bytes(A)), what);
}

/* Symmetry of every matrix on the device; the first failure is re-examined on the host for
 * the message (worst element). amax (count, may be NULL) receives max |a_ij| per matrix. */
static gwb_status gpu_symmetric(const gwb_matrix *A, const void *dA, double tol, const char *fn,
				double *amax, double *ms)
{
	size_t b, count = A->count;
	double *rel = malloc(count * sizeof(double)), t0 = gwb_now();
	gwb_status rc;

	if (!rel)
		return gwb_error(GWB_ENOMEM, "out of memory");
	rc = gwb_gpu_sym_check(dA, A->dtype, count, (int)A->rows, rel, amax);
	for (b = 0; !rc && b < count; b++)
		if (!(rel[b] <= tol)) {
			if (!(rc = gwb_matrix_host(A)) && !(rc = eigd_check_symmetric(A, b, tol, fn)))
				rc = gwb_error(GWB_EINVAL, "%s: matrix %zu is not symmetric: relative "
					       "asymmetry %.3g exceeds sym_tol = %.3g", fn, b + 1,
					       rel[b], tol);
		}
	free(rel);
	*ms += (gwb_now() - t0) * 1e3;
	return rc;
}

/* Residuals and orthogonality of a result whose vectors are on the device, normalised as
 * dense_check does (max |lambda| with every pair, else ||A||_F). */
static gwb_status gpu_check(gwb_eigen *e, const gwb_matrix *A, const void *dA, const void *dV,
			    int vdtype)
{
	size_t count = e->count, k = e->k, n = e->n, b, i;
	double *normA = calloc(count, sizeof(double)), *orth = calloc(count, sizeof(double));
	gwb_status rc = GWB_OK;

	if (!normA || !orth) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out;
	}
	if (k == n) {
		for (b = 0; b < count; b++) {
			normA[b] = 0.0;
			for (i = 0; i < k; i++)
				if (fabs(e->values[b * k + i]) > normA[b])
					normA[b] = fabs(e->values[b * k + i]);
		}
	} else if ((rc = gwb_gpu_fro_norm(dA, A->dtype, count, n * n, normA))) {
		goto out;
	}
	for (b = 0; b < count; b++)
		if (normA[b] == 0.0)
			normA[b] = 1.0;
	rc = gwb_gpu_eig_check(dA, A->dtype, A->layout == GWB_ROW_MAJOR, count, (int)n, (int)k, dV,
			       vdtype, e->values, normA, e->residuals, orth, &e->check_ms);
	if (rc)
		goto out;
	for (b = 0; b < count; b++)
		eigd_fold_orth(e, orth[b]);
	gwb_eigen_update_max(e);
out:
	free(normA);
	free(orth);
	return rc;
}

/* Hand device vectors (n x k per matrix, es bytes each) to the result. */
static gwb_status gpu_keep_vectors(gwb_eigen *e, void *dV, int vdtype)
{
	size_t bytes = e->count * e->k * e->n * (vdtype ? 8 : 4);
	gwb_status rc = gwb_buf_adopt_dev(dV, bytes, "eig.vectors", &e->dvectors);

	if (rc)
		gwb_gpu_free(dV);
	e->dvec_dtype = vdtype;
	return rc;
}

/* Columns [c0, c0 + cnt) of a device n x * column-major array into dst at column `at`. */
static gwb_status dev_columns(void *dst, size_t at, const void *src, size_t n, size_t c0,
			      size_t cnt, size_t es)
{
	const gwb_buf_ops *g = gwb_buf_ops_get(GWB_DEVICE_GPU);

	if (!g)
		return GWB_ENODEV;
	return g->copy((char *)dst + at * n * es, (const char *)src + c0 * n * es, cnt * n * es);
}

static gwb_status gpu_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen *e,
			    gwb_dense_method m, bool all, size_t k, double tol, const char *fn)
{
	size_t n = A->rows, kk = e->k, es;
	bool want_v = o->vectors, tmp = false;
	const void *dA = NULL;
	void *dV = NULL, *dV2 = NULL, *sel = NULL;
	double *w = NULL, amax = 0, x0 = gwb_gpu_copy_ms(), sym_ms = 0;
	int vdtype = A->dtype;
	gwb_gpu_eig_stats st, st2;
	gwb_status rc;

	memset(&st, 0, sizeof(st));
	memset(&st2, 0, sizeof(st2));
	if (!(w = malloc(n * sizeof(double))))
		return gwb_error(GWB_ENOMEM, "out of memory");
	if ((rc = gwb_matrix_dev(A, &dA, &tmp)))
		goto out;
	if (tmp)
		note_upload(e, A, "A");
	if ((rc = gpu_symmetric(A, dA, tol, fn, &amax, &sym_ms)))
		goto out;
	if (m == GWB_DM_MIXED && (rc = check_f32_range(A, &amax, fn)))
		goto out;
	if (m == GWB_DM_JACOBI || m == GWB_DM_MIXED) {
		/* all pairs, sorted on the device */
		vdtype = m == GWB_DM_MIXED ? 1 : (int)A->dtype;
		rc = gwb_gpu_jacobi_batched(NULL, dA, A->dtype, 1, (int)n,
					    m == GWB_DM_MIXED ? 2 : (int)A->dtype, o->tol,
					    o->max_sweeps, w, NULL, want_v ? &dV : NULL, &st);
		eigd_set_str(e->method, sizeof(e->method), st.variant);
		eigd_set_str(e->dtype, sizeof(e->dtype), m == GWB_DM_MIXED ? "f32+f64" :
			gwb_dtype_name(A->dtype));
	} else if (m == GWB_DM_SYEVR && !all) {
		/* a subset by index: one call per end */
		size_t at = o->which == GWB_END_BOTH ? k : 0;
		if (o->which != GWB_END_LARGEST)
			rc = gwb_gpu_syevd(NULL, dA, A->dtype, (int)n, 1, (int)k, w, NULL,
					   want_v ? &dV : NULL, &st);
		if (!rc && o->which != GWB_END_SMALLEST)
			rc = gwb_gpu_syevd(NULL, dA, A->dtype, (int)n, (int)(n - k + 1), (int)n, w + at,
					   NULL, want_v ? &dV2 : NULL, &st2);
		eigd_set_str(e->method, sizeof(e->method), "cusolver-Xsyevdx");
		all = true;  /* w holds exactly the kk pairs wanted, in order */
	} else {
		rc = gwb_gpu_syevd(NULL, dA, A->dtype, (int)n, 0, 0, w, NULL, want_v ? &dV : NULL, &st);
		eigd_set_str(e->method, sizeof(e->method), "cusolver-Xsyevd");
	}
	if (rc)
		goto out;
	e->kernel_ms = st.kernel_ms + st2.kernel_ms + sym_ms;
	e->check_ms = sym_ms;
	e->iterations = st.sweeps;
	e->converged = st.unconverged == 0;
	/* the requested ends: values on the host, vector columns on the device */
	es = vdtype ? 8 : 4;
	if (all) {
		memcpy(e->values, w, kk * sizeof(double));
	} else if (o->which == GWB_END_SMALLEST) {
		memcpy(e->values, w, k * sizeof(double));
	} else if (o->which == GWB_END_LARGEST) {
		memcpy(e->values, w + n - k, k * sizeof(double));
	} else {
		memcpy(e->values, w, k * sizeof(double));
		memcpy(e->values + k, w + n - k, k * sizeof(double));
	}
	if (want_v) {
		bool direct = dV && !dV2 && (all || o->which == GWB_END_SMALLEST);
		if (direct) {
			sel = dV;  /* the first kk columns are the ones wanted */
			dV = NULL;
		} else {
			if ((rc = gwb_gpu_malloc(&sel, n * kk * es, "eig.vectors")))
				goto out;
			if (dV2) {  /* two subset calls */
				if (dV && (rc = dev_columns(sel, 0, dV, n, 0, k, es)))
					goto out;
				rc = dev_columns(sel, dV ? k : 0, dV2, n, 0, k, es);
			} else if (o->which == GWB_END_LARGEST) {
				rc = dev_columns(sel, 0, dV, n, n - k, k, es);
			} else {  /* both ends of a full solution */
				if (!(rc = dev_columns(sel, 0, dV, n, 0, k, es)))
					rc = dev_columns(sel, k, dV, n, n - k, k, es);
			}
			if (rc)
				goto out;
		}
		if (o->residuals && (rc = gpu_check(e, A, dA, sel, vdtype)))
			goto out;
		e->kernel_ms += e->check_ms - sym_ms;
		rc = gpu_keep_vectors(e, sel, vdtype);
		sel = NULL;
	}
out:
	e->transfer_ms = gwb_gpu_copy_ms() - x0;
	gwb_matrix_dev_done(A, dA, tmp);
	gwb_gpu_free(dV);
	gwb_gpu_free(dV2);
	gwb_gpu_free(sel);
	free(w);
	return rc;
}

static gwb_status gpu_batched(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
			      gwb_dense_method m, double tol, const char *fn)
{
	size_t n = B->rows, count = B->count;
	bool want_v = o->vectors, tmp = false;
	const void *dB = NULL;
	void *dV = NULL;
	double *amax = NULL, x0 = gwb_gpu_copy_ms(), sym_ms = 0;
	int vdtype = B->dtype;
	gwb_gpu_eig_stats st;
	gwb_status rc;

	memset(&st, 0, sizeof(st));
	if (!(amax = malloc(count * sizeof(double))))
		return gwb_error(GWB_ENOMEM, "out of memory");
	if ((rc = gwb_matrix_dev(B, &dB, &tmp)))
		goto out;
	if (tmp)
		note_upload(e, B, "B");
	if ((rc = gpu_symmetric(B, dB, tol, fn, amax, &sym_ms)))
		goto out;
	/* auto: our Jacobi kernel where it is the fastest measured (n <= 64 on an H200:
	 * 3.9 ms for 4000 f32 matrices and 6.3 ms in f64, against 8.4 and 13.5 ms for
	 * cusolverDnXsyevBatched), the library above (7.0 vs 8.0 ms at n = 128 f32, 12.4
	 * vs 15.9 in f64, 21.8 vs 55 ms at n = 256 f64; see
	 * bench/results/eig-dense-2026-11-30b.txt). method = "jacobi" forces ours. */
	if (m == GWB_DM_AUTO)
		m = n <= 64 ? GWB_DM_JACOBI : GWB_DM_CUSOLVER;
	if (m == GWB_DM_CUSOLVER || m == GWB_DM_SYEVD) {
		rc = gwb_gpu_cusolver_batched(NULL, dB, B->dtype, count, (int)n, e->values, NULL,
					      want_v ? &dV : NULL, &st);
	} else if (m == GWB_DM_MIXED && (rc = check_f32_range(B, amax, fn))) {
		goto out;
	} else {
		vdtype = m == GWB_DM_MIXED ? 1 : (int)B->dtype;
		rc = gwb_gpu_jacobi_batched(NULL, dB, B->dtype, count, (int)n,
					    m == GWB_DM_MIXED ? 2 : (int)B->dtype, o->tol,
					    o->max_sweeps, e->values, NULL, want_v ? &dV : NULL, &st);
	}
	if (rc)
		goto out;
	eigd_set_str(e->method, sizeof(e->method), st.variant);
	e->kernel_ms = st.kernel_ms + sym_ms;
	e->check_ms = sym_ms;
	e->iterations = st.sweeps;
	e->converged = st.unconverged == 0;
	if (dV) {
		if (o->residuals && (rc = gpu_check(e, B, dB, dV, vdtype)))
			goto out;
		e->kernel_ms += e->check_ms - sym_ms;
		rc = gpu_keep_vectors(e, dV, vdtype);
		dV = NULL;
	}
out:
	e->transfer_ms = gwb_gpu_copy_ms() - x0;
	gwb_matrix_dev_done(B, dB, tmp);
	gwb_gpu_free(dV);
	free(amax);
	return rc;
}

/* gwb_svd_dense on the GPU: a (host) through gwb_gpu_svd, which returns V (n x p), not V^T:
 * V holds V here. */
static gwb_status gpu_svd(const double *a, int m, int n, bool want_v, double *s, double *U,
			  double *V, gwb_eigen *e)
{
	size_t k = e->k, i;
	gwb_gpu_eig_stats st;
	gwb_status rc;

	memset(&st, 0, sizeof(st));
	rc = gwb_gpu_svd(a, m, n, s, U, V, &st);
	if (rc)
		return rc;
	e->kernel_ms = st.kernel_ms;
	e->transfer_ms = st.transfer_ms;
	e->iterations = st.sweeps;
	eigd_set_str(e->method, sizeof(e->method), st.variant);
	for (i = 0; i < k; i++) {
		e->values[i] = s[i];
		if (want_v) {
			memcpy(e->vectors + i * (size_t)n, V + i * (size_t)n, (size_t)n * sizeof(double));
			memcpy(e->left + i * (size_t)m, U + i * (size_t)m, (size_t)m * sizeof(double));
		}
	}
	return GWB_OK;
}

/* The batch's device vectors into one array on the calling thread's device (peer copies:
 * peer access where the topology allows, staged by the driver where not). */
static gwb_status gpu_gather(gwb_eigen *e, gwb_eigen *const *part, const gwb_gpu_set *s,
			     size_t count, size_t es)
{
	size_t n = e->n, lo, hi, total;
	void *dst = NULL;
	gwb_status rc = GWB_OK;
	int k;

	total = count * n * n * es;
	if ((rc = gwb_gpu_malloc(&dst, total, "eig.vectors")))
		return rc;
	for (k = 0; k < s->n && !rc; k++) {
		gwb_eigen *p = part[k];
		if (!p || !p->dvectors)
			continue;
		gwb_deal(count, s->n, k, &lo, &hi);
		rc = CUDA_CHECK(cudaMemcpyPeer((char *)dst + lo * n * n * es, gwb_gpu_current(),
					       p->dvectors->dev, s->ids[k], (hi - lo) * n * n * es));
	}
	if (rc) {
		gwb_gpu_free(dst);
		return rc;
	}
	rc = gwb_buf_adopt_dev(dst, total, "eig.vectors", &e->dvectors);
	if (rc)
		gwb_gpu_free(dst);
	return rc;
}

static const eigd_gpu_ops gpu_ops = {
	.solve = gpu_dense,
	.batched = gpu_batched,
	.svd = gpu_svd,
	.gather = gpu_gather,
};
#endif

gwb_status eigd_gpu_get(const char *fn, const eigd_gpu_ops **out)
{
#ifdef GWB_HAVE_CUDA
	(void)fn;
	*out = &gpu_ops;
	return GWB_OK;
#else
	*out = NULL;
	return gwb_error(GWB_ENODEV, "%s: this gwb was built without CUDA", fn);
#endif
}
