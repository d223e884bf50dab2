/* rf_multi.c - a forest grown on several devices (params.gpus, mgpu.h): the trees are dealt to
 * the devices in contiguous ranges in index order (gwb_deal), each device grows its range with
 * the one-device trainer (its own copy of the codes, quantized there; tree t's RNG index is t
 * wherever it grows, job.tree_first), and the ranges are put together in order, so the forest
 * is the one a single device grows for the same seed. One device: the trainer runs on the
 * calling thread with the job as given (today's path, OOB on the device included). Several:
 * each device's trainer runs without OOB, and gwb_forest_finish computes it on the CPU from the
 * merged forest (forest.h: the same sums in the same order as the GPU's, so the same score). */
#include "forest.h"

#include "intr.h"
#include "prof.h"

#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
#endif

#include <stdlib.h>
#include <string.h>

typedef struct multi_ctx {
	const gwb_rf_job *job;
	gwb_forest *f;                       /* one device: grown here directly */
	gwb_rf_params p[GWB_GPU_MAX];        /* per device: trees = its range, no OOB */
	gwb_rf_job sub[GWB_GPU_MAX];
	gwb_forest *part[GWB_GPU_MAX];       /* per device: its trees (NULL: none dealt) */
} multi_ctx;

static gwb_status train_one(const gwb_rf_job *job, gwb_forest *f)
{
#ifdef GWB_HAVE_CUDA
	if (!job->p->gpus.cpu)
		return gwb_rf_train_gpu(job, f);  /* kernels/rf_train.cu */
#endif
	return gwb_rf_train_cpu(job, f);
}

static gwb_status multi_work(void *arg, int slot, int dev)
{
	multi_ctx *c = arg;
	const gwb_rf_job *job = c->job;
	const gwb_gpu_set *s = &job->p->gpus;
	size_t lo, hi;
	gwb_status rc;

	(void)dev;
	if (s->n == 1)
		return train_one(job, c->f);
	gwb_deal((size_t)job->p->trees, s->n, slot, &lo, &hi);
	if (hi == lo)
		return GWB_OK;  /* more devices than trees */
	c->p[slot] = *job->p;
	c->p[slot].trees = (int)(hi - lo);
	c->p[slot].oob = false;       /* computed once over the whole forest (above) */
	c->p[slot].progress = false;  /* the caller's run reports the forest */
	c->sub[slot] = *job;
	c->sub[slot].p = &c->p[slot];
	c->sub[slot].tree_first = job->tree_first + (int)lo;
	if (job->p->gpus.cpu && job->threads > s->n)  /* stand-ins share the cores */
		c->sub[slot].threads = job->threads / s->n;
	if ((rc = gwb_forest_new(job->d, &c->p[slot], job->mtry, job->class_weight,
				 &c->part[slot])))
		return rc;
	return train_one(&c->sub[slot], c->part[slot]);
}

/* The devices' ranges, in order, into f (nodes, offsets, thresholds from each part). */
static gwb_status merge(multi_ctx *c, int n, gwb_forest *f)
{
	size_t total = 0, at = 0;
	int s, t, t0 = 0;
	gwb_status rc;

	for (s = 0; s < n; s++)
		if (c->part[s])
			total += (size_t)c->part[s]->tree_offset[c->part[s]->trees];
	if ((rc = gwb_forest_alloc_nodes(f, total)))
		return rc;
	f->tree_offset[0] = 0;
	for (s = 0; s < n; s++) {
		gwb_forest *g = c->part[s];
		size_t m;
		if (!g)
			continue;
		m = (size_t)g->tree_offset[g->trees];
		for (t = 1; t <= g->trees; t++)
			f->tree_offset[t0 + t] = (int64_t)at + g->tree_offset[t];
		gwb_forest_copy_nodes(f, at, g, 0, m);
		at += m;
		t0 += g->trees;
		/* the slowest device sets the pace; device work is counted once per device */
		if (g->timing.quantize_ms > f->timing.quantize_ms)
			f->timing.quantize_ms = g->timing.quantize_ms;
		f->timing.subtract_kept += g->timing.subtract_kept;
		f->timing.subtract_derived += g->timing.subtract_derived;
	}
	return GWB_OK;
}

gwb_status gwb_rf_train_devices(const gwb_rf_job *job, gwb_forest *f)
{
	const gwb_gpu_set *s = &job->p->gpus;
	double t0 = gwb_now(), k0 = 0, x0 = 0, k1 = 0, x1 = 0;
	multi_ctx *c;
	gwb_status rc;
	int i;

	if (s->n > 1 && job->sched)
		return gwb_error(GWB_EINVAL, "rf.train: backend = \"hybrid\" runs on one GPU; drop "
				 "gpus or the hybrid backend");
	c = calloc(1, sizeof(*c));
	if (!c)
		return gwb_error(GWB_ENOMEM, "rf.train: out of host memory");
	c->job = job;
	c->f = f;
	if (s->n > 1) {
		gwb_prof_flush();
		gwb_prof_totals(&k0, &x0);
		if (job->p->progress)
			gwb_progress_begin(s->cpu ? "rf.train devices (cpu stand-ins)" : "rf.train gpus",
					   job->p->trees);
	}
	rc = gwb_gpu_run(s, multi_work, c);
	if (s->n > 1) {
		if (job->p->progress)
			gwb_progress_end();
		if (!rc)
			rc = merge(c, s->n, f);
		gwb_prof_flush();
		gwb_prof_totals(&k1, &x1);
		f->timing.kernel_ms = k1 - k0;  /* summed over the devices */
		f->timing.transfer_ms = x1 - x0;
		f->timing.grow_ms = (gwb_now() - t0) * 1e3 - f->timing.quantize_ms;
	}
	for (i = 0; i < GWB_GPU_MAX; i++)
		gwb_forest_free(c->part[i]);
	free(c);
	return rc;
}
