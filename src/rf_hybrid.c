/* rf_hybrid.c - the hybrid forest: the GPU trainer and a pool of CPU workers grow the trees of
 * one forest at the same time from one queue of tree indices (gwb_rf_sched, forest.h). The
 * GPU claims batches from the front, the CPU one tree at a time from the back; when no tree is
 * free the GPU also claims those the CPU is still growing, and the CPU drops them, so the fit
 * ends when the GPU alone would have ended or sooner. Each tree depends only on its index (RNG
 * streams per tree), so the forest is the one either backend grows, tree for tree. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forest.h"
#include "intr.h"
#include "quantize.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
#endif

struct gwb_rf_sched {
	pthread_mutex_t mu;
	int trees;
	atomic_int lo;      /* the front's trees are [0, lo) */
	int hi;             /* free trees are [lo, hi); the back claims hi - 1 */
	int done_min;       /* every tree of [done_min, trees) was grown by the back */
	unsigned char *back_done;
	int min_batch;      /* the front's smallest claim while trees are free */
	atomic_int stop;
	atomic_int front_grown, back_grown, dropped;
	bool progress;
};

static void report(gwb_rf_sched *s)
{
	if (s->progress)
		gwb_progress_update(atomic_load(&s->front_grown) + atomic_load(&s->back_grown),
				    "cpu trees", atomic_load(&s->back_grown));
}

int gwb_rf_sched_front(gwb_rf_sched *s, int want, int *first)
{
	int n = 0, lo;

	if (want < 1)
		want = 1;
	pthread_mutex_lock(&s->mu);
	lo = atomic_load(&s->lo);
	if (!atomic_load(&s->stop)) {
		int free_n = s->hi - lo;
		if (free_n > 0) {
			/* a third of what is free (at least min_batch): the back keeps trees to grow
			 * while the front works, and the front's last claims are small */
			n = (free_n + 2) / 3;
			if (n < s->min_batch)
				n = s->min_batch;
			if (n > free_n)
				n = free_n;
		} else if (lo < s->done_min) {
			n = s->done_min - lo;  /* what the back is still growing: the front takes it */
		}
		if (n > want)
			n = want;
		*first = lo;
		atomic_store(&s->lo, lo + n);
		if (s->hi < lo + n)
			s->hi = lo + n;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

int gwb_rf_sched_back(gwb_rf_sched *s)
{
	int t = -1;

	pthread_mutex_lock(&s->mu);
	if (!atomic_load(&s->stop) && s->hi > atomic_load(&s->lo))
		t = --s->hi;
	pthread_mutex_unlock(&s->mu);
	return t;
}

void gwb_rf_sched_back_done(gwb_rf_sched *s, int t)
{
	pthread_mutex_lock(&s->mu);
	s->back_done[t] = 1;
	while (s->done_min > 0 && s->back_done[s->done_min - 1])
		s->done_min--;
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add(&s->back_grown, 1);
	report(s);
}

bool gwb_rf_sched_dropped(gwb_rf_sched *s, int t)
{
	return atomic_load(&s->stop) || t < atomic_load(&s->lo);
}

void gwb_rf_sched_front_grown(gwb_rf_sched *s, int n)
{
	atomic_fetch_add(&s->front_grown, n);
	report(s);
}

void gwb_rf_sched_stop(gwb_rf_sched *s)
{
	atomic_store(&s->stop, 1);
}

int gwb_rf_sched_front_end(gwb_rf_sched *s)
{
	return atomic_load(&s->lo);
}

/* ---- the hybrid trainer ------------------------------------------------------------------- */

typedef struct side {
	gwb_rf_job job;
	gwb_rf_params p;
	gwb_forest *f;
	gwb_rf_sched *s;
	bool cpu;          /* the front side is a CPU pool (tests: two CPU pools) */
	gwb_status st;
	char err[512];
	double busy_ms;
} side;

static gwb_status grow(side *sd)
{
	double t0 = gwb_now();
	gwb_status st;

#ifdef GWB_HAVE_CUDA
	if (!sd->cpu)
		st = gwb_rf_train_gpu(&sd->job, sd->f);
	else
#endif
		st = gwb_rf_train_cpu(&sd->job, sd->f);
	sd->busy_ms = (gwb_now() - t0) * 1e3;
	if (st) {
		snprintf(sd->err, sizeof(sd->err), "%s", gwb_errmsg());
		gwb_rf_sched_stop(sd->s);
	}
	sd->st = st;
	return st;
}

static void *front_main(void *arg)
{
	grow(arg);
	return NULL;
}

/* The trees the back grew are [front, trees) of fb (the others have no nodes there); the
 * front's are [0, front) of fa. */
static gwb_status merge(gwb_forest *f, const gwb_forest *fa, const gwb_forest *fb, int front)
{
	size_t na = front > 0 ? (size_t)fa->tree_offset[front] : 0, nb = fb->nodes;
	size_t K = (size_t)f->outputs;
	gwb_status st;

	if (front == 0)
		na = 0;
	if ((st = gwb_forest_alloc_nodes(f, na + nb)))
		return st;
#define CP(field, sz)                                                                  \
	do {                                                                           \
		if (na)                                                                \
			memcpy(f->field, fa->field, na * (sz));                        \
		if (nb)                                                                \
			memcpy(f->field + na * ((sz) / sizeof(*f->field)), fb->field,  \
			       nb * (sz));                                             \
	} while (0)
	CP(feature, sizeof(int32_t));
	CP(threshold_bin, 1);
	CP(threshold, sizeof(float));
	CP(nan_left, 1);
	CP(left, sizeof(int32_t));
	CP(right, sizeof(int32_t));
	CP(count, sizeof(int32_t));
	CP(weight, sizeof(double));
	CP(impurity, sizeof(float));
#undef CP
	if (na)
		memcpy(f->value, fa->value, na * K * sizeof(float));
	if (nb)
		memcpy(f->value + na * K, fb->value, nb * K * sizeof(float));
	for (int t = 0; t <= f->trees; t++)
		f->tree_offset[t] = t <= front ? (front ? fa->tree_offset[t] : 0)
					       : (int64_t)na + fb->tree_offset[t];
	return GWB_OK;
}

gwb_status gwb_rf_train_hybrid(const gwb_rf_job *job, gwb_forest *f, bool cpu_front)
{
	const gwb_rf_params *p = job->p;
	gwb_rf_sched s;
	side fr, bk;
	gwb_quant *q = NULL;
	pthread_t tid;
	bool started = false;
	double t0 = gwb_now(), tq;
	gwb_status st = GWB_OK;
	int threads = p->threads > 0 ? p->threads : gwb_cpu_count();

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	s.trees = p->trees;
	s.hi = s.done_min = p->trees;
	s.min_batch = cpu_front ? 1 : 4;
	s.progress = p->progress;
	if (!(s.back_done = calloc((size_t)p->trees + 1, 1))) {
		pthread_mutex_destroy(&s.mu);
		return gwb_error(GWB_ENOMEM, "rf.train: out of memory");
	}
	memset(&fr, 0, sizeof(fr));
	memset(&bk, 0, sizeof(bk));
	for (int k = 0; k < 2; k++) {
		side *sd = k ? &bk : &fr;
		sd->job = *job;
		sd->p = *p;
		sd->p.progress = false;    /* the queue reports progress for both */
		sd->p.oob = false;         /* a side's OOB covers only its trees: gwb_forest_finish
					    * scores the whole forest after the merge */
		sd->job.p = &sd->p;
		sd->job.sched = &s;
		sd->job.sched_front = k == 0;
		sd->s = &s;
		sd->cpu = k == 1 || cpu_front;
		if ((st = gwb_forest_new(job->d, p, job->mtry, job->class_weight, &sd->f)))
			goto out;
	}
	/* The GPU side quantizes on the device (the same edges as the host's) and starts at once;
	 * the CPU side needs the host codes first. The front host thread keeps one core. */
	fr.job.q = NULL;
	bk.p.threads = fr.cpu ? (threads > 1 ? threads / 2 : 1) : (threads > 1 ? threads - 1 : 1);
	fr.p.threads = fr.cpu ? (threads - bk.p.threads > 0 ? threads - bk.p.threads : 1) : fr.p.threads;
	bk.job.threads = bk.p.threads;
	fr.job.threads = fr.p.threads;
	if (p->progress)
		gwb_progress_begin("rf.train hybrid", p->trees);
	tq = gwb_now();
	if (cpu_front) {  /* both sides need host codes: build them before either starts */
		if ((st = gwb_quant_build(job->d, p->bins, p->quantile_sample, p->seed, threads, &q)))
			goto out_progress;
		fr.job.q = bk.job.q = q;
	}
	if (pthread_create(&tid, NULL, front_main, &fr)) {
		st = gwb_error(GWB_ENOMEM, "rf.train: cannot start the hybrid trainer's thread");
		goto out_progress;
	}
	started = true;
	if (!q) {
		st = gwb_quant_build(job->d, p->bins, p->quantile_sample, p->seed, bk.p.threads, &q);
		if (st) {
			gwb_rf_sched_stop(&s);
			goto out_join;
		}
		bk.job.q = q;
	}
	f->timing.quantize_ms = (gwb_now() - tq) * 1e3;
	grow(&bk);
out_join:
	pthread_join(tid, NULL);
	started = false;
	if (st)   /* the host codes failed (the message is this thread's) */
		goto out_progress;
	st = fr.st ? fr.st : bk.st;
	if (st == GWB_EINTR || (!st && gwb_intr_pending())) {
		st = gwb_error(GWB_EINTR, "rf.train: interrupted after %d of %d trees (hybrid); no "
			       "forest was made", atomic_load(&s.front_grown) + atomic_load(&s.back_grown),
			       p->trees);
	} else if (st) {
		st = gwb_error(st, "%s", fr.st ? fr.err : bk.err);
	} else {
		int front = gwb_rf_sched_front_end(&s);
		for (int t = front; t < p->trees; t++)
			if (!s.back_done[t]) {
				st = gwb_error(GWB_EINVAL, "rf.train: hybrid scheduler lost tree %d (a bug)", t);
				goto out_progress;
			}
		if ((st = merge(f, fr.f, bk.f, front)))
			goto out_progress;
		gwb_rf_hybrid_timing *h = &f->timing.hybrid;
		h->used = true;
		h->gpu_trees = front;
		h->cpu_trees = p->trees - front;
		h->cpu_dropped = atomic_load(&s.dropped);
		h->cpu_workers = bk.p.threads;
		h->gpu_busy_ms = fr.busy_ms;
		h->cpu_busy_ms = bk.busy_ms;
		h->gpu_trees_per_s = fr.busy_ms > 0 ? front / (fr.busy_ms * 1e-3) : 0;
		h->cpu_trees_per_s = bk.busy_ms > 0 ? h->cpu_trees / (bk.busy_ms * 1e-3) : 0;
		f->timing.kernel_ms = fr.f->timing.kernel_ms;
		f->timing.transfer_ms = fr.f->timing.transfer_ms;
		f->timing.grow_ms = (gwb_now() - t0) * 1e3;
		if (front == 0)   /* the CPU grew every tree (small work: the GPU was still starting) */
			f->backend = GWB_BACKEND_CPU;
	}
out_progress:
	if (p->progress)
		gwb_progress_end();
out:
	if (started) {
		gwb_rf_sched_stop(&s);
		pthread_join(tid, NULL);
	}
	gwb_forest_free(fr.f);
	gwb_forest_free(bk.f);
	gwb_quant_free(q);
	free(s.back_done);
	pthread_mutex_destroy(&s.mu);
	return st;
}

void gwb_rf_sched_count_dropped(gwb_rf_sched *s)
{
	atomic_fetch_add(&s->dropped, 1);
}
