/* eig_dense.c - the drivers of the dense eigen problems: eigenpairs of one symmetric matrix
 * (gwb_eig_dense) and the SVD of a general one (gwb_svd_dense), their methods and options,
 * where a call runs (eigd_choose: the chooser, or where the matrix lies), the CPU solve on a
 * worker that Ctrl-C can abandon, the pairs wanted taken from the solution, and a result's
 * vectors as a Matrix (gwb_eigen_matrix). The solvers are eig_lapack.c (CPU) and
 * eig_dense_gpu.c (GPU, through its table), the checks and notes eig_dense_check.c; batches
 * are eig_batched.c. It may use those, dense.h, eig.h, backend.h, intr.h and switches.h. */
#define _GNU_SOURCE
#include "eig_dense_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#include "switches.h"

static const char *const method_names[GWB_DM_COUNT] = {
	"auto", "syevd", "syevr", "jacobi", "mixed", "cusolver",
};

const char *gwb_dense_method_name(gwb_dense_method m)
{
	return (unsigned)m < GWB_DM_COUNT ? method_names[m] : "?";
}

gwb_status gwb_dense_method_parse(const char *s, gwb_dense_method *out)
{
	int i;

	for (i = 0; i < GWB_DM_COUNT; i++)
		if (!strcmp(s, method_names[i])) {
			*out = (gwb_dense_method)i;
			return GWB_OK;
		}
	if (!strcmp(s, "lapack")) {
		*out = GWB_DM_SYEVD;
		return GWB_OK;
	}
	return gwb_error(GWB_EINVAL, "method must be one of auto, syevd (or lapack), syevr, jacobi, "
			 "mixed, cusolver for a dense matrix (got \"%s\")", s);
}

void gwb_dense_opts_default(gwb_dense_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->which = GWB_END_SMALLEST;
	o->method = GWB_DM_AUTO;
	o->backend = GWB_BACKEND_AUTO;
	o->vectors = true;
	o->residuals = true;
	o->dtype = -1;
	gwb_gpu_set_default(&o->gpus);
}

/* The symmetric matrix A (one matrix) into dst as f64 in its own storage order, and the
 * triangle LAPACK should read so that it sees A's lower one: row-major data read as
 * column-major is A^T, whose upper triangle is A's lower ("U"); column-major: "L". */
static char sym_copy_f64(const gwb_matrix *A, double *dst)
{
	size_t nn = A->rows * A->cols, i;

	if (A->dtype == GWB_F64) {
		memcpy(dst, gwb_matrix_ptr(A, 0), nn * sizeof(double));
	} else {
		const float *s = gwb_matrix_ptr(A, 0);
		for (i = 0; i < nn; i++)
			dst[i] = s[i];
	}
	return A->layout == GWB_ROW_MAJOR ? 'U' : 'L';
}

/* --- one dense matrix -------------------------------------------------------------------- */

/* Copy pairs [lo, lo + cnt) of a full solution (w, V column-major n x n) into slot `at` of e. */
static void take_pairs(gwb_eigen *e, size_t at, const double *w, const double *V, size_t lo,
		       size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt; i++) {
		e->values[at + i] = w[lo + i];
		if (e->vectors && V)
			memcpy(gwb_eigen_vector(e, 0, at + i), V + (lo + i) * e->n, e->n * sizeof(double));
	}
}

/* Where a dense operation runs: the chooser's answer, except that "auto" follows a
 * GPU-resident input to the GPU, and an explicit "cpu" on one copies it back (and says so). */
gwb_status eigd_choose(const gwb_matrix *A, gwb_backend req, double bytes, double min_bytes,
		       gwb_backend *be, char *why, size_t why_size)
{
	gwb_status rc;

	if (gwb_matrix_device(A) == GWB_DEVICE_GPU && req == GWB_BACKEND_AUTO) {
		*be = GWB_BACKEND_GPU;
		snprintf(why, why_size, "auto: the matrix is on the GPU");
		return GWB_OK;
	}
	rc = gwb_backend_choose(req, bytes, min_bytes, be, why, why_size);
	if (!rc && *be == GWB_BACKEND_CPU && gwb_matrix_device(A) == GWB_DEVICE_GPU) {
		/* a GPU-resident operand on the CPU backend: its host copy, copied only if stale */
		size_t l = strlen(why);
		char b[32];
		bool current = A->data && A->buf->host_valid;
		gwb_fmt_bytes(b, sizeof(b), (double)gwb_matrix_bytes(A));
		if (current)
			snprintf(why + l, why_size - l, "%sthe matrix is on the GPU: the CPU solve read "
				 "its host copy (current, nothing copied)", l ? "; " : "");
		else
			snprintf(why + l, why_size - l, "%sthe matrix is on the GPU: %s copied to the "
				 "host for the CPU solve (kept as its host copy)", l ? "; " : "", b);
		rc = gwb_matrix_host(A);
	}
	return rc;
}

/* One CPU solve of gwb_eig_dense, run by gwb_run_interruptible: it touches only what it
 * holds (never the caller's matrix), so that it can be abandoned. */
typedef struct solve_job {
	gwb_dense_method m;
	gwb_eig_end which;
	int n, k, iters, max_sweeps;
	bool syevr, vectors;  /* dsyevr for k pairs at the requested ends, else all pairs */
	char uplo;            /* syevd: the triangle of a to read (sym_copy_f64) */
	double tol;
	double *a, *a2;       /* the matrix (destroyed); a copy for dsyevr's second end */
	double *w, *V, *z;    /* values; all vectors (n x n); dsyevr's vectors (n x kk) */
	gwb_eigen *hist;      /* Jacobi's sweep history (the result), or NULL */
} solve_job;

static gwb_status solve_run(void *arg)
{
	solve_job *j = arg;
	gwb_status rc = GWB_OK;
	size_t at;

	if (!j->syevr && j->m == GWB_DM_SYEVD)   /* vectors overwrite a: no copy */
		return eigd_dsyevd(j->n, j->a, j->w, j->vectors, j->uplo);
	if (!j->syevr)
		return eigd_all_pairs(j->m, j->n, j->a, NULL, 0, j->tol, j->max_sweeps, j->w,
				     j->vectors ? j->V : NULL, &j->iters, j->hist);
	if (j->which == GWB_END_BOTH)   /* one tridiagonal reduction for both ends */
		return eigd_both_ends(j->n, j->a, j->k, j->w, j->z, j->vectors);
	at = j->which == GWB_END_LARGEST ? (size_t)(j->n - j->k + 1) : 1;
	rc = eigd_dsyevr(j->n, j->a, (int)at, j->which == GWB_END_LARGEST ? j->n : j->k, j->w,
			   j->z, j->vectors);
	return rc;
}

/* An abandoned solve_job frees everything when its solve ends. */
static void solve_release(void *arg)
{
	solve_job *j = arg;

	free(j->a);
	free(j->a2);
	free(j->w);
	free(j->V);
	free(j->z);
	gwb_eigen_free(j->hist);
	free(j);
}

static gwb_status eig_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out);

/* A call's threads option is BLAS's thread count for the call (blas.h). */
gwb_status gwb_eig_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	int token = gwb_blas_threads_push(o->threads);
	gwb_status rc = eig_dense(A, o, out);

	gwb_blas_threads_pop(token);
	return rc;
}

static gwb_status eig_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	static const char *fn = "eig.solve";
	size_t n = A->rows, k, kk;
	bool all, want_v = o->vectors;
	gwb_dense_method m = o->method;
	gwb_backend be;
	char why[160] = "";
	double t0 = gwb_now(), t1, tol = o->sym_tol > 0 ? o->sym_tol : eigd_sym_tol(A);
	double *a = NULL, *w = NULL, *V = NULL;
	gwb_eigen *e = NULL;
	gwb_status rc;
	int iters = 0;

	*out = NULL;
	if (A->count != 1)
		return gwb_error(GWB_EINVAL, "%s: got a batch of %zu matrices; use eig.batched(B) for "
				 "batches", fn, A->count);
	if (A->rows != A->cols)
		return eigd_check_symmetric(A, 0, tol, fn);  /* the not-square message */
	if (n > 46340)
		return gwb_error(GWB_EINVAL, "%s: order %zu is too large for a dense solver (LAPACK "
				 "32-bit indexing); use a sparse matrix and an iterative method", fn, n);
	k = o->k ? o->k : n;
	if (k > n)
		return gwb_error(GWB_EINVAL, "%s: k = %zu exceeds the order of the matrix (%zu)", fn, k, n);
	all = o->k == 0 || (o->which == GWB_END_BOTH ? 2 * k >= n : k >= n);
	kk = all ? n : (o->which == GWB_END_BOTH ? 2 * k : k);
	if (m == GWB_DM_CUSOLVER && o->backend == GWB_BACKEND_CPU)
		return gwb_error(GWB_EINVAL, "%s: method \"cusolver\" runs on the GPU; drop "
				 "backend = \"cpu\" or choose method = \"syevd\"", fn);
	rc = eigd_choose(A, m == GWB_DM_CUSOLVER ? GWB_BACKEND_GPU : o->backend,
			  (double)n * n * gwb_dtype_size(A->dtype), 8.0 * 1048576, &be, why,
			  sizeof(why));
	if (rc)
		return rc;
	if (be == GWB_BACKEND_CPU && (rc = eigd_check_symmetric(A, 0, tol, fn)))
		return rc;
	if (m == GWB_DM_AUTO || m == GWB_DM_CUSOLVER)
		m = all ? GWB_DM_SYEVD : GWB_DM_SYEVR;
	if (m == GWB_DM_MIXED && !gwb_switch_on(GWB_SW_EIG_MIXED))  /* switches.h: the f64 solve */
		m = be == GWB_BACKEND_GPU ? GWB_DM_JACOBI : all ? GWB_DM_SYEVD : GWB_DM_SYEVR;
	/* GPU results keep their vectors on the device: no host array for them */
	rc = gwb_eigen_new(n, n, kk, 1, want_v && be == GWB_BACKEND_CPU, false, &e);
	if (rc)
		return rc;
	eigd_set_str(e->backend, sizeof(e->backend), be == GWB_BACKEND_GPU ? "gpu" : "cpu");
	eigd_set_str(e->note, sizeof(e->note), why);
	eigd_set_str(e->dtype, sizeof(e->dtype), m == GWB_DM_MIXED ? "f32+f64" :
		(A->dtype == GWB_F32 && be == GWB_BACKEND_GPU && m != GWB_DM_JACOBI) ? "f32" : "f64");

	if (be == GWB_BACKEND_GPU) {
		const eigd_gpu_ops *g;
		if ((rc = eigd_gpu_get(fn, &g)) || (rc = g->solve(A, o, e, m, all, k, tol, fn)))
			goto out_free;
		goto done;
	}
	w = malloc(n * sizeof(double));
	if (!w) {
		rc = gwb_error(GWB_ENOMEM, "out of memory");
		goto out_free;
	}
	{
		/* The LAPACK drivers cannot poll Ctrl-C: they run on a worker (solve_job), which
		 * owns a, w, V, z (and e, for Jacobi's history) once abandoned. */
		solve_job *j;
		bool gone = false, syevd = m == GWB_DM_SYEVD;
		char uplo = 'L';
		if (syevd) {
			/* A in its own storage order, no transpose (sym_copy_f64) */
			if ((a = malloc(n * n * sizeof(double))))
				uplo = sym_copy_f64(A, a);
			else
				rc = gwb_error(GWB_ENOMEM, "out of memory: %zu x %zu matrix", n, n);
		} else {
			rc = gwb_matrix_to_f64_colmajor(A, 0, &a);
		}
		if (rc)
			goto out_free;
		if (!(j = calloc(1, sizeof(*j)))) {
			rc = gwb_error(GWB_ENOMEM, "out of memory");
			goto out_free;
		}
		j->m = m;
		j->n = (int)n;
		j->k = (int)k;
		j->which = o->which;
		j->vectors = want_v;
		j->tol = o->tol;
		j->max_sweeps = o->max_sweeps;
		j->a = a;
		j->w = w;
		j->uplo = uplo;
		j->syevr = m == GWB_DM_SYEVR && !all;
		if (j->syevr) {
			if (want_v && !(j->z = malloc(n * kk * sizeof(double))))
				rc = gwb_error(GWB_ENOMEM, "out of memory");
		} else if (!syevd && (want_v || m == GWB_DM_MIXED)) {
			if (!(V = j->V = malloc(n * n * sizeof(double))))
				rc = gwb_error(GWB_ENOMEM, "out of memory: %zu x %zu vectors", n, n);
		}
		if (rc) {
			free(j->z);
			free(j->a2);
			free(j);
			goto out_free;
		}
		if (m == GWB_DM_JACOBI) {
			j->hist = e;
			gwb_progress_begin("eig.solve jacobi", 0);
		}
		rc = gwb_run_interruptible(m == GWB_DM_JACOBI ? NULL : j->syevr ? "eig.solve dsyevr" :
					   m == GWB_DM_MIXED ? "eig.solve mixed" : "eig.solve dsyevd",
					   solve_run, solve_release, j, &gone);
		if (m == GWB_DM_JACOBI)
			gwb_progress_end();
		if (gone) {
			a = w = V = NULL;
			if (m == GWB_DM_JACOBI)
				e = NULL;
			goto out_free;
		}
		iters = j->iters;
		if (!rc && j->syevr)
			take_pairs(e, 0, w, j->z, 0, kk);
		free(j->z);
		free(j->a2);
		free(j);
		if (rc)
			goto out_free;
		if (m == GWB_DM_SYEVR && !all) {
			eigd_set_str(e->method, sizeof(e->method), "lapack-dsyevr");
			eigd_note(e, "subset: %zu of %zu pairs at %s through LAPACK dsyevr's steps (MRRR "
				 "on the tridiagonal for the wanted pairs only%s)", k, n,
				 o->which == GWB_END_BOTH ? "each end" : o->which == GWB_END_LARGEST ?
				 "the largest end" : "the smallest end", o->which == GWB_END_BOTH ?
				 "; one reduction for both ends" : "");
			e->converged = true;
			t1 = gwb_now();
			e->kernel_ms = (t1 - t0) * 1e3;
			goto finish;
		}
		e->iterations = iters;
		e->converged = true;
		eigd_set_str(e->method, sizeof(e->method), m == GWB_DM_JACOBI ? "jacobi-cyclic" :
			m == GWB_DM_MIXED ? "lapack-ssyevd+f64-refine" : "lapack-dsyevd");
		t1 = gwb_now();
		e->kernel_ms = (t1 - t0) * 1e3;
		if (syevd && want_v) {
			V = a;   /* dsyevd left the vectors in a */
			a = NULL;
		}
	}
	/* Select the requested ends from the full solution. */
	if (!all)
		eigd_note(e, "all %zu pairs solved (method %s), %zu kept; method = \"auto\" or "
			 "\"syevr\" computes only the pairs wanted", n, gwb_dense_method_name(m), kk);
	if (all && V && e->vectors) {
		/* every pair: the result takes the solver's vectors as they are */
		free(e->vectors);
		e->vectors = V;
		V = NULL;
		memcpy(e->values, w, n * sizeof(double));
	} else if (all) {
		take_pairs(e, 0, w, V, 0, n);
	} else if (o->which == GWB_END_SMALLEST) {
		take_pairs(e, 0, w, V, 0, k);
	} else if (o->which == GWB_END_LARGEST) {
		take_pairs(e, 0, w, V, n - k, k);
	} else {
		take_pairs(e, 0, w, V, 0, k);
		take_pairs(e, k, w, V, n - k, k);
	}
finish:
	if (e->vectors && o->residuals) {
		double tc = gwb_now();
		rc = gwb_eig_dense_check(e, 0, A, 0);
		if (rc)
			goto out_free;
		e->check_ms = (gwb_now() - tc) * 1e3;
	}
done:
	eigd_note_blas(e);
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out_free:
	free(a);
	free(w);
	free(V);
	gwb_eigen_free(e);
	return rc;
}

gwb_status gwb_eigen_matrix(const gwb_eigen *e, size_t b, gwb_matrix **out)
{
	size_t n = e->n, k = e->k;
	gwb_matrix *V;
	gwb_status rc;

	*out = NULL;
	if (e->dvectors) {
		size_t bytes = n * k * (e->dvec_dtype ? 8 : 4);
		const gwb_buf_ops *g = e->dvectors->ops;
		void *d;
		if ((rc = g->alloc(&d, bytes, "mat.data")))
			return rc;
		if ((rc = g->copy(d, (const char *)e->dvectors->dev + b * bytes, bytes)) ||
		    (rc = gwb_matrix_adopt_dev(1, n, k, false, e->dvec_dtype ? GWB_F64 : GWB_F32,
					       GWB_COL_MAJOR, d, out))) {
			g->free(d);
			return rc;
		}
		return GWB_OK;
	}
	if (!e->vectors)
		return gwb_error(GWB_EINVAL, "this result has no vectors: solve with {vectors = true}");
	if ((rc = gwb_matrix_new(n, k, GWB_F64, GWB_COL_MAJOR, &V)))
		return rc;
	memcpy(V->data, gwb_eigen_vector(e, b, 0), n * k * sizeof(double));
	*out = V;
	return GWB_OK;
}

/* dgesdd of gwb_eig_svd on a worker (gwb_run_interruptible), abandoned on Ctrl-C. */
typedef struct svd_job {
	int m, n;
	bool vectors;
	double *a, *s, *U, *VT;   /* a is destroyed */
} svd_job;

static gwb_status svd_run(void *arg)
{
	svd_job *j = arg;

	return eigd_dgesdd(j->m, j->n, j->a, j->s, j->U, j->VT, j->vectors);
}

static void svd_release(void *arg)
{
	svd_job *j = arg;

	free(j->a);
	free(j->s);
	free(j->U);
	free(j->VT);
	free(j);
}


static gwb_status svd_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out);

gwb_status gwb_svd_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	int token = gwb_blas_threads_push(o->threads);
	gwb_status rc = svd_dense(A, o, out);

	gwb_blas_threads_pop(token);
	return rc;
}

static gwb_status svd_dense(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen **out)
{
	static const char *fn = "eig.svd";
	size_t m = A->rows, n = A->cols, p = m < n ? m : n, k, i, r;
	double t0 = gwb_now();
	double *a = NULL, *s = NULL, *U = NULL, *VT = NULL;
	bool want_v = o->vectors;
	gwb_backend be;
	char why[160] = "";
	gwb_eigen *e = NULL;
	gwb_status rc;

	*out = NULL;
	if (A->count != 1)
		return gwb_error(GWB_EINVAL, "%s: got a batch of %zu matrices; pass one matrix", fn,
				 A->count);
	if (m > 46340 || n > 46340 || m * n > (size_t)INT32_MAX)
		return gwb_error(GWB_EINVAL, "%s: %zu x %zu is too large for a dense SVD", fn, m, n);
	k = o->k ? o->k : p;
	if (k > p)
		return gwb_error(GWB_EINVAL, "%s: k = %zu exceeds min(rows, cols) = %zu", fn, k, p);
	rc = gwb_backend_choose(o->method == GWB_DM_CUSOLVER ? GWB_BACKEND_GPU : o->backend,
				(double)m * n * 8, 8.0 * 1048576, &be, why, sizeof(why));
	if (rc)
		return rc;
	rc = gwb_eigen_new(n, m, k, 1, want_v, true, &e);
	if (rc)
		return rc;
	eigd_set_str(e->backend, sizeof(e->backend), be == GWB_BACKEND_GPU ? "gpu" : "cpu");
	eigd_set_str(e->note, sizeof(e->note), why);
	rc = gwb_matrix_to_f64_colmajor(A, 0, &a);
	if (rc)
		goto out_free;
	s = malloc(p * sizeof(double));
	if (want_v) {
		U = malloc(m * p * sizeof(double));
		VT = malloc(p * n * sizeof(double));
	}
	if (!s || (want_v && (!U || !VT))) {
		rc = gwb_error(GWB_ENOMEM, "out of memory: SVD of %zu x %zu", m, n);
		goto out_free;
	}
	if (be == GWB_BACKEND_GPU) {
		/* the GPU returns V (n x p), not V^T: VT holds V here */
		const eigd_gpu_ops *g;
		if ((rc = eigd_gpu_get(fn, &g)) ||
		    (rc = g->svd(a, (int)m, (int)n, want_v, s, U, VT, e)))
			goto out_free;
	} else {
		double *a2 = NULL;
		if (want_v) {
			/* dgesdd destroys a; keep a copy for the check. */
			a2 = malloc(m * n * sizeof(double));
			if (!a2) {
				rc = gwb_error(GWB_ENOMEM, "out of memory");
				goto out_free;
			}
			memcpy(a2, a, m * n * sizeof(double));
		}
		{
			svd_job *j = calloc(1, sizeof(*j));
			bool gone = false;
			if (!j) {
				free(a2);
				rc = gwb_error(GWB_ENOMEM, "out of memory");
				goto out_free;
			}
			j->m = (int)m;
			j->n = (int)n;
			j->vectors = want_v;
			j->a = a2 ? a2 : a;
			j->s = s;
			j->U = U;
			j->VT = VT;
			rc = gwb_run_interruptible("eig.svd dgesdd", svd_run, svd_release, j, &gone);
			if (gone) {
				/* the worker owns what it works on; a stays ours unless it is that */
				if (!a2)
					a = NULL;
				s = U = VT = NULL;
				goto out_free;
			}
			free(j);
		}
		free(a2);
		if (rc)
			goto out_free;
		eigd_set_str(e->method, sizeof(e->method), "lapack-dgesdd");
		for (i = 0; i < k; i++) {
			e->values[i] = s[i];
			if (want_v) {
				for (r = 0; r < n; r++)
					e->vectors[i * n + r] = VT[r * p + i];
				memcpy(e->left + i * m, U + i * m, m * sizeof(double));
			}
		}
		e->kernel_ms = (gwb_now() - t0) * 1e3;
	}
	e->converged = true;
	if (want_v && o->residuals) {
		/* a is intact on the CPU path (dgesdd worked on a copy) and on the GPU path. */
		double tc = gwb_now();
		rc = eigd_svd_check(e, a);
		e->check_ms = (gwb_now() - tc) * 1e3;
		if (rc)
			goto out_free;
	}
	eigd_note_blas(e);
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out_free:
	free(a);
	free(s);
	free(U);
	free(VT);
	gwb_eigen_free(e);
	return rc;
}
