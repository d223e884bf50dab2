/* eig_batched.c - every eigenpair of every matrix of a batch (gwb_eig_batched): on the CPU,
 * LAPACK (or Jacobi, or f32 + f64 refinement) a matrix at a time on the pool's workers, BLAS
 * on one thread each, the first error stopping the rest; on the GPU, the batched solvers of
 * eig_dense_gpu.c; with several devices (o->gpus, or CPU stand-ins for tests) the matrices
 * dealt in contiguous ranges, each device solving its range, the results gathered in order.
 * It may use eig_lapack.c, eig_dense_check.c, eig_dense_gpu.c's table and eig_dense.c's
 * chooser (eig_dense_impl.h), pool.h, mgpu.h, dense.h, eig.h, intr.h and switches.h. */
#define _GNU_SOURCE
#include "eig_dense_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "gpu.h"
#include "intr.h"
#include "pool.h"
#include "switches.h"

/* --- a small parallel-for over matrices --------------------------------------------------- */

typedef gwb_status (*item_fn)(void *ctx, size_t i);

typedef struct pfor {
	item_fn fn;
	void *ctx;
	size_t count;
	atomic_int failed;
	pthread_mutex_t lock;
	gwb_status rc;
	char msg[512];
} pfor;

static void pfor_item(void *arg, size_t i, int worker)
{
	pfor *p = arg;
	gwb_status rc;

	(void)worker;
	if (atomic_load(&p->failed))
		return;
	if (gwb_intr_pending())
		rc = gwb_error(GWB_EINTR, "interrupted");
	else
		rc = p->fn(p->ctx, i);
	if (rc) {
		pthread_mutex_lock(&p->lock);
		if (!p->rc) {
			p->rc = rc;
			snprintf(p->msg, sizeof(p->msg), "%s", gwb_errmsg());
		}
		pthread_mutex_unlock(&p->lock);
		atomic_store(&p->failed, 1);
	}
	if ((i & 63) == 0)
		gwb_progress_update((double)i, NULL, 0);
}

static int online_cpus(void)
{
	return gwb_cpu_count();
}

/* Run fn(ctx, i) for i in [0, count) on `threads` workers of the pool (0 = online CPUs). The
 * first error wins and stops the others; its message is restored on the calling thread. */
static gwb_status parallel_for(size_t count, int threads, item_fn fn, void *ctx)
{
	pfor p;

	if (threads <= 0)
		threads = online_cpus();
	memset(&p, 0, sizeof(p));
	p.fn = fn;
	p.ctx = ctx;
	p.count = count;
	atomic_init(&p.failed, 0);
	pthread_mutex_init(&p.lock, NULL);
	/* BLAS on one thread even when we run on one (blas.h): OpenBLAS spreading each call of
	 * thousands of small matrices over its own pool costs far more than the work (measured:
	 * 4.6x slower for 500 matrices of 32 even on one of our threads). */
	gwb_blas_serial_begin();
	gwb_parallel_items(threads, count, pfor_item, &p);
	pthread_mutex_destroy(&p.lock);
	gwb_blas_serial_end();
	if (p.rc)
		return gwb_error(p.rc, "%s", p.msg);
	return GWB_OK;
}

/* --- batches ------------------------------------------------------------------------------ */

typedef struct batch_ctx {
	const gwb_matrix *B;
	gwb_eigen *e;
	gwb_dense_method m;
	double tol;
	int max_sweeps;
	bool check;
	double *orth;         /* per matrix */
	atomic_int max_iters;
} batch_ctx;

static gwb_status batch_solve_one(void *arg, size_t b)
{
	batch_ctx *c = arg;
	gwb_eigen *e = c->e;
	size_t n = e->n;
	double *a = NULL, *V = e->vectors ? gwb_eigen_vector(e, b, 0) : NULL;
	gwb_status rc;
	int iters = 0, prev;

	if (c->m == GWB_DM_SYEVD && c->B->dtype == GWB_F32) {
		/* An f32 batch on the CPU: LAPACK ssyevd in f32, like the GPU's f32 path. */
		size_t i, nn = n * n;
		float *s = malloc(nn * sizeof(float)), *ws = malloc(n * sizeof(float));
		const float *src = gwb_matrix_ptr(c->B, b);
		if (!s || !ws) {
			free(s);
			free(ws);
			return gwb_error(GWB_ENOMEM, "out of memory");
		}
		memcpy(s, src, nn * sizeof(float));  /* symmetric: layout does not matter */
		rc = eigd_ssyevd((int)n, s, ws, V != NULL);
		if (!rc) {
			for (i = 0; i < n; i++)
				e->values[b * n + i] = ws[i];
			if (V)
				for (i = 0; i < nn; i++)
					V[i] = s[i];
		}
		free(s);
		free(ws);
	} else {
		rc = gwb_matrix_to_f64_colmajor(c->B, b, &a);
		if (rc)
			return rc;
		rc = eigd_all_pairs(c->m, (int)n, a, c->B, b, c->tol, c->max_sweeps,
				   e->values + b * n, V, &iters, NULL);
		free(a);
	}
	if (rc)
		return rc;
	prev = atomic_load(&c->max_iters);
	while (iters > prev && !atomic_compare_exchange_weak(&c->max_iters, &prev, iters))
		;
	return GWB_OK;
}

static gwb_status batch_check_one(void *arg, size_t b)
{
	batch_ctx *c = arg;

	return eigd_check(c->e, b, c->B, b, &c->orth[b]);
}

/* One device's share of a batch: the GPU solver, or the LAPACK loop on `threads` threads (the
 * CPU backend, and the CPU stand-ins of gpus.cpu). t0: the call's start (CPU kernel_ms). */
static gwb_status batched_part(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
			       gwb_backend be, gwb_dense_method m, double tol, const char *fn,
			       int threads, double t0)
{
	batch_ctx c;
	gwb_status rc;

	if (be == GWB_BACKEND_GPU) {
		const eigd_gpu_ops *g;
		if ((rc = eigd_gpu_get(fn, &g)))
			return rc;
		return g->batched(B, o, e, m, tol, fn);
	}
	memset(&c, 0, sizeof(c));
	c.B = B;
	c.e = e;
	c.tol = o->tol;
	c.max_sweeps = o->max_sweeps;
	atomic_init(&c.max_iters, 0);
	if (m == GWB_DM_AUTO)
		m = GWB_DM_SYEVD;
	c.m = m;
	rc = parallel_for(B->count, threads, batch_solve_one, &c);
	if (rc)
		return rc;
	e->iterations = atomic_load(&c.max_iters);
	e->converged = true;
	eigd_set_str(e->method, sizeof(e->method), m == GWB_DM_JACOBI ? "jacobi-cyclic" :
		m == GWB_DM_MIXED ? "lapack-ssyevd+f64-refine" :
		B->dtype == GWB_F32 ? "lapack-ssyevd" : "lapack-dsyevd");
	e->kernel_ms = (gwb_now() - t0) * 1e3;
	return GWB_OK;
}

/* Dealing a batch to the devices of o->gpus (mgpu.h): matrices in contiguous ranges in index
 * order, each device solving its range from its own copy (a host view of the range, uploaded
 * there), the results gathered in order. Device 0 alone is today's path on the calling thread
 * with B itself (in place when B is GPU-resident). */
typedef struct bdev_ctx {
	const gwb_matrix *B;
	const gwb_dense_opts *o;
	gwb_eigen *e;
	gwb_backend be;
	gwb_dense_method m;
	double tol, t0;
	const char *fn;
	bool direct;
	gwb_matrix view[GWB_GPU_MAX];
	gwb_eigen *part[GWB_GPU_MAX];
} bdev_ctx;

static gwb_status bdev_work(void *arg, int slot, int dev)
{
	bdev_ctx *c = arg;
	const gwb_gpu_set *s = &c->o->gpus;
	const gwb_matrix *B = c->B;
	size_t lo, hi, nn = B->rows * B->cols;
	int threads = c->o->threads > 0 ? c->o->threads : gwb_cpu_count();
	gwb_status rc;

	(void)dev;
	if (c->direct)
		return batched_part(B, c->o, c->e, c->be, c->m, c->tol, c->fn, c->o->threads, c->t0);
	gwb_deal(B->count, s->n, slot, &lo, &hi);
	if (hi == lo)
		return GWB_OK;  /* more devices than matrices */
	c->view[slot] = *B;
	c->view[slot].count = hi - lo;
	c->view[slot].data = (char *)B->data + lo * nn * gwb_dtype_size(B->dtype);
	c->view[slot].buf = NULL;  /* host memory: uploaded to this device by the solver */
	c->view[slot].sum_ok = false;
	if ((rc = gwb_eigen_new(B->rows, B->rows, B->rows, hi - lo, c->e->vectors != NULL, false,
				&c->part[slot])))
		return rc;
	threads = threads / s->n > 0 ? threads / s->n : 1;  /* stand-ins share the cores */
	return batched_part(&c->view[slot], c->o, c->part[slot], c->be, c->m, c->tol, c->fn,
			    threads, c->t0);
}

/* The parts into e, in slot order: values, residuals, host vectors; device vectors into one
 * array on the calling thread's device (peer copies); the slowest device's times. */
static gwb_status bdev_gather(bdev_ctx *c)
{
	const gwb_gpu_set *s = &c->o->gpus;
	gwb_eigen *e = c->e;
	const eigd_gpu_ops *g;
	size_t n = e->n, lo, hi, es = 0;
	gwb_status rc;
	bool first = true;
	int k;

	e->converged = true;
	for (k = 0; k < s->n; k++) {
		gwb_eigen *p = c->part[k];
		if (!p)
			continue;
		gwb_deal(c->B->count, s->n, k, &lo, &hi);
		memcpy(e->values + lo * n, p->values, (hi - lo) * n * sizeof(double));
		if (e->residuals && p->residuals)
			memcpy(e->residuals + lo * n, p->residuals, (hi - lo) * n * sizeof(double));
		if (e->vectors && p->vectors)
			memcpy(e->vectors + lo * n * n, p->vectors, (hi - lo) * n * n * sizeof(double));
		eigd_fold_orth(e, p->orthogonality);
		if (p->iterations > e->iterations)
			e->iterations = p->iterations;
		e->converged = e->converged && p->converged;
		if (p->kernel_ms > e->kernel_ms)
			e->kernel_ms = p->kernel_ms;
		if (p->transfer_ms > e->transfer_ms)
			e->transfer_ms = p->transfer_ms;
		if (p->check_ms > e->check_ms)
			e->check_ms = p->check_ms;
		if (first) {
			eigd_set_str(e->method, sizeof(e->method), p->method);
			first = false;
		}
		if (p->dvectors) {
			es = p->dvec_dtype ? 8 : 4;
			e->dvec_dtype = p->dvec_dtype;
		}
	}
	if (e->residuals)
		gwb_eigen_update_max(e);
	if (!es)
		return GWB_OK;
	if ((rc = eigd_gpu_get(c->fn, &g)))
		return rc;
	return g->gather(e, c->part, s, c->B->count, es);
}

static gwb_status batched_devices(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
				  gwb_backend be, gwb_dense_method m, double tol, const char *fn,
				  double t0)
{
	const gwb_gpu_set *s = &o->gpus;
	bdev_ctx *c = calloc(1, sizeof(*c));
	gwb_status rc;
	int k;

	if (!c)
		return gwb_error(GWB_ENOMEM, "%s: out of host memory for the per-device batch state "
				 "(%zu bytes)", fn, sizeof(*c));
	*c = (bdev_ctx){.B = B, .o = o, .e = e, .be = be, .m = m, .tol = tol, .t0 = t0, .fn = fn,
			.direct = s->n == 1 && (s->cpu || s->ids[0] == gwb_gpu_current())};
	if (!c->direct && (rc = gwb_matrix_host(B)))  /* the devices' shares come from the host */
		goto out;
	rc = gwb_gpu_run(s, bdev_work, c);
	if (!rc && !c->direct)
		rc = bdev_gather(c);
out:
	for (k = 0; k < GWB_GPU_MAX; k++)
		gwb_eigen_free(c->part[k]);
	free(c);
	return rc;
}

gwb_status gwb_eig_batched(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen **out)
{
	static const char *fn = "eig.batched";
	size_t n = B->rows, count = B->count, b;
	double t0 = gwb_now(), tol = o->sym_tol > 0 ? o->sym_tol : eigd_sym_tol(B);
	gwb_dense_method m = o->method;
	gwb_backend be;
	char why[160] = "";
	batch_ctx c;
	gwb_eigen *e = NULL;
	gwb_status rc;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	if (B->rows != B->cols)
		return eigd_check_symmetric(B, 0, tol, fn);  /* the not-square message */
	if (m == GWB_DM_SYEVR)
		return gwb_error(GWB_EINVAL, "%s: method \"syevr\" (a subset) is for eig.solve; a "
				 "batch gets all pairs (syevd, jacobi, mixed, cusolver)", fn);
	if (m == GWB_DM_MIXED && B->dtype != GWB_F64)
		return gwb_error(GWB_EINVAL, "%s: method \"mixed\" refines to f64 and needs an f64 "
				 "batch (make it with dtype = \"f64\")", fn);
	if (m == GWB_DM_CUSOLVER && o->backend == GWB_BACKEND_CPU)
		return gwb_error(GWB_EINVAL, "%s: method \"cusolver\" runs on the GPU; drop backend "
				 "= \"cpu\"", fn);
	if (o->gpus.cpu) {  /* tests: CPU stand-ins for the devices of gpus (mgpu.h) */
		be = GWB_BACKEND_CPU;
		snprintf(why, sizeof(why), "%d CPU stand-ins for GPUs (gpu_standin = \"cpu\")",
			 o->gpus.n);
	} else if ((rc = eigd_choose(B, m == GWB_DM_CUSOLVER || (o->gpus.n > 1 &&
						o->backend == GWB_BACKEND_AUTO) ? GWB_BACKEND_GPU :
				      o->backend, (double)gwb_matrix_bytes(B), 4.0 * 1048576, &be,
				      why, sizeof(why)))) {
		return rc;  /* several devices asked for: the GPU, whatever the size */
	}
	if (m == GWB_DM_MIXED && !gwb_switch_on(GWB_SW_EIG_MIXED))  /* switches.h: the f64 solve */
		m = be == GWB_BACKEND_GPU ? GWB_DM_JACOBI : GWB_DM_SYEVD;
	if (be == GWB_BACKEND_CPU)
		for (b = 0; b < count; b++)
			if ((rc = eigd_check_symmetric(B, b, tol, fn)))
				return rc;
	/* GPU results keep their vectors on the device: no host array for them */
	rc = gwb_eigen_new(n, n, n, count, o->vectors && be == GWB_BACKEND_CPU, false, &e);
	if (rc)
		return rc;
	eigd_set_str(e->backend, sizeof(e->backend), be == GWB_BACKEND_GPU ? "gpu" : "cpu");
	eigd_set_str(e->note, sizeof(e->note), why);
	eigd_set_str(e->dtype, sizeof(e->dtype), m == GWB_DM_MIXED ? "f32+f64" : gwb_dtype_name(B->dtype));
	c.B = B;
	c.e = e;
	c.tol = o->tol;
	c.max_sweeps = o->max_sweeps;
	atomic_init(&c.max_iters, 0);
	gwb_progress_begin(fn, (double)count);
	/* one device (the default): the solver on this thread, as it always ran; several (or
	 * CPU stand-ins): the matrices dealt to them and the results gathered in order */
	rc = batched_devices(B, o, e, be, m, tol, fn, t0);
	if (rc)
		goto out_free;
	if (e->vectors && o->residuals) {  /* CPU results (GPU ones were checked there) */
		double tc = gwb_now();
		c.orth = malloc(count * sizeof(double));
		if (!c.orth) {
			rc = gwb_error(GWB_ENOMEM, "out of memory");
			goto out_free;
		}
		rc = parallel_for(count, o->threads, batch_check_one, &c);
		if (rc)
			goto out_free;
		for (b = 0; b < count; b++)
			eigd_fold_orth(e, c.orth[b]);
		gwb_eigen_update_max(e);
		e->check_ms = (gwb_now() - tc) * 1e3;
	}
	eigd_note_blas(e);
	e->total_ms = (gwb_now() - t0) * 1e3;
	*out = e;
	e = NULL;
out_free:
	gwb_progress_end();
	free(c.orth);
	gwb_eigen_free(e);
	return rc;
}
