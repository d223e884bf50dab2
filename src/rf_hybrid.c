/* rf_hybrid.c - the hybrid forest: the GPU trainer (the front) and a pool of CPU workers (the
 * back) grow the trees of one forest at the same time from one queue of tree indices
 * (gwb_rf_sched, forest.h). Each tree depends only on its index (RNG streams per tree), so the
 * forest is the one either backend grows, tree for tree.
 *
 * Who grows what is planned from the two sides' speeds, measured as the fit runs (before both
 * have grown a tree, from the ratio recorded on the H200 host, gwb_rf_hybrid_ratio): the back
 * grows m trees in rounds of one tree per worker, the front the rest, and m is the share that
 * ends the fit soonest (gwb_rf_hybrid_plan). The front claims consecutive indices from the
 * front in batches and leaves the back's share free; a CPU worker starts a tree only while the
 * plan gives the back more trees than it is growing, so a back that cannot finish a tree
 * before the front ends grows none; and it starts at all only where the plan ends the fit at
 * least 5 % sooner (MIN_GAIN; else it never builds its host codes). When nothing is
 * free the front takes over the trees the back is still growing where it would finish them
 * sooner (the predicted remainder of each against the front's time for them); the back drops
 * those, checking between nodes. So the slow side never holds the finish line by more than a
 * misprediction, and the fit ends about when the front alone would have, or sooner. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forest.h"
#include "intr.h"
#include "quantize.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/rf.h"
#endif

/* ---- the rule ----------------------------------------------------------------------------- */

/* A CPU worker's time for one tree x the GPU trainer's trees per second, measured on the H200
 * host (16 cores, one tree on each of the 16 CPU threads at once; the GPU alone end to end,
 * OOB included), scripts/bench/rf_gpu.lua's hybrid rows on 2026-12-01:
 *     100,000 x 32, 1,000 trees, depth 10:   434  (a CPU tree 58 ms, the GPU 7,540 trees/s)
 *     1,000,000 x 64, 200 trees, depth 20:   350  (2.15 s, 163 trees/s)
 *     800,000 x 256, 100 trees, depth 10:    772  (1.09 s, 711 trees/s)
 * It matters only for forests of more trees than it (with fewer, the GPU grows them all before
 * a CPU worker finishes one), where the GPU's fixed costs are spread thin; there it stays
 * between 350 and 800 whatever the size, so one number stands for it: 400. With 15 workers
 * the CPU then adds at most 15 / 415 = 3.6 % to the GPU. A prior only: once both sides have
 * grown a tree the plan uses their measured rates. */
#define RATIO_RECORDED 400.0

double gwb_rf_hybrid_ratio(const gwb_rf_params *p, size_t rows, int mtry)
{
	(void)rows;
	(void)mtry;
	return p->hybrid_ratio > 0 ? p->hybrid_ratio : RATIO_RECORDED;
}

int gwb_rf_hybrid_plan(int R, int running, int front, int W, double rho, double *finish)
{
	int best_m = running, cand[5], nc = 0, k, all = R + front;
	double best = INFINITY;

	if (rho <= 0)
		rho = 1e-9;
	if (W < 1 || R <= running) {
		if (finish)
			*finish = fmax(running > 0 ? 1 : 0, (all - running) / rho);
		return running < R ? running : R;
	}
	/* in units of a back tree's time: r rounds grow up to r W of the R trees; the front grows
	 * the rest and the `front` it holds at rho trees per unit. The best r is near
	 * (R + front) / (rho + W). */
	cand[nc++] = 0;
	cand[nc++] = 1;
	k = (int)floor(all / (rho + W));
	cand[nc++] = k;
	cand[nc++] = k + 1;
	cand[nc++] = (R + W - 1) / W;
	for (int i = 0; i < nc; i++) {
		int r = cand[i], m;
		double f, rounds, need;
		if (r < 0 || (r == 0 && running > 0) || (double)r * W < running)
			continue;
		need = ceil(all - rho * r);  /* the fewest that let the front end within r rounds */
		m = need > (double)r * W ? r * W : need < 0 ? 0 : (int)need;
		if (m > R)
			m = R;
		if (m < running)
			m = running;
		rounds = m > 0 ? ceil((double)m / W) : 0;
		f = fmax(rounds, (all - m) / rho);
		if (f < best - 1e-9 || (f <= best + 1e-9 && m < best_m)) {
			best = f;
			best_m = m;
		}
	}
	if (finish)
		*finish = best;
	return best_m;
}

/* The CPU side takes part only where the plan ends the fit at least this much sooner than the
 * GPU alone: below it the CPU's workers cost the GPU side about what they add (on the H200
 * host, 100,000 x 32, 1,000 trees: the plan gave 15 workers 30 trees, 3 % of the work, and the
 * GPU side ran 5 % slower while they did: memory traffic and the host thread's copies). */
#define MIN_GAIN 0.05

/* The plan for R trees from the start and its gain over the front alone (a fraction). */
static int plan_gain(int R, int W, double rho, double *gain)
{
	double fin, alone = R / rho;
	int m = gwb_rf_hybrid_plan(R, 0, 0, W, rho, &fin);

	*gain = alone > 0 ? 1 - fin / alone : 0;
	return m;
}

bool gwb_rf_hybrid_pays(const gwb_rf_params *p, size_t rows, int mtry, char *why, size_t n)
{
	int W = (p->threads > 0 ? p->threads : gwb_cpu_count()) - 1, m;
	double rho = gwb_rf_hybrid_ratio(p, rows, mtry), gain;

	if (W < 1)
		return false;
	m = plan_gain(p->trees, W, rho, &gain);
	if (m < 1 || gain < MIN_GAIN)
		return false;
	snprintf(why, n, "auto: hybrid: a CPU tree costs %.0f GPU trees%s, so %d CPU threads can "
		 "grow %d of %d trees, ~%.0f%% sooner", rho, p->hybrid_ratio > 0 ? "" : " (recorded)",
		 W, m, p->trees, 100 * gain);
	return true;
}

/* ---- the queue ---------------------------------------------------------------------------- */

struct gwb_rf_sched {
	pthread_mutex_t mu;
	pthread_cond_t cv;     /* a back tree ended, a worker left, the back finished, stop */
	int trees;
	atomic_int lo;         /* the front's trees are [0, lo) */
	int hi;                /* free trees are [lo, hi); the back claims hi - 1 */
	int done_min;          /* every tree of [done_min, trees) was grown by the back */
	unsigned char *back_done;
	double *t_claim;       /* when tree t was claimed (gwb_now) */
	double *suf;           /* scratch for the takeover rule (trees + 1) */
	int back_running;      /* back trees being grown */
	int front_inflight;    /* trees the front claimed and has not grown yet */
	int back_alive;        /* back workers that may still claim trees */
	double ratio0;         /* the prior: a back tree's time x the front's rate */
	double front_fixed;    /* the front's fixed cost per claim, s */
	int front_workers;     /* trees the front grows at once when each claim is one tree */
	/* measured */
	int front_n;           /* trees the front grew */
	double front_busy;     /* seconds of its claims (summed over workers) */
	double front_mark;     /* single front worker: when its last claim ended */
	double back_sum;       /* seconds of the back's trees */
	int back_timed;
	double ratio_used;     /* the last ratio a decision used */
	/* the back's result, for the front's OOB */
	bool back_finished;
	const gwb_forest *back_forest;
	int failed_side;       /* -1 none, 0 the front, 1 the back failed first */
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

/* Rates under the lock: the front's trees per second and a back tree's seconds, measured or
 * (one of them) from the prior ratio; 0 when neither side has measured anything yet. */
static double front_rate(const gwb_rf_sched *s)
{
	if (s->front_n > 0 && s->front_busy > 0)
		return s->front_workers * s->front_n / s->front_busy;
	if (s->back_timed > 0)
		return s->ratio0 / (s->back_sum / s->back_timed);
	return 0;
}

/* The age of the oldest tree the back is growing (0 when none): a back tree takes at least
 * that long, which corrects a prior that thought the back faster before it finished one. */
static double back_oldest(const gwb_rf_sched *s, double now)
{
	double age = 0;
	int lo = atomic_load(&s->lo);

	if (s->back_running <= 0)
		return 0;
	for (int t = s->hi > lo ? s->hi : lo; t < s->done_min; t++)
		if (!s->back_done[t] && now - s->t_claim[t] > age)
			age = now - s->t_claim[t];
	return age;
}

static double back_tree_s(const gwb_rf_sched *s)
{
	if (s->back_timed > 0)
		return s->back_sum / s->back_timed;
	if (s->front_n > 0 && s->front_busy > 0)
		return fmax(s->ratio0 / front_rate(s), back_oldest(s, gwb_now()));
	return 0;
}

static double ratio(gwb_rf_sched *s)
{
	double r = s->ratio0;

	if (s->front_n > 0 && s->front_busy > 0 && s->back_timed > 0)
		r = front_rate(s) * back_tree_s(s);
	else if (s->front_n > 0 && s->front_busy > 0)
		r = fmax(r, front_rate(s) * back_oldest(s, gwb_now()));
	s->ratio_used = r;
	return r;
}

/* The back's share of what is left: free trees plus those it grows (the front finishes what
 * it holds first). */
static int back_share(gwb_rf_sched *s)
{
	int R = s->hi - atomic_load(&s->lo) + s->back_running;

	if (s->back_alive < 1)
		return s->back_running;
	return gwb_rf_hybrid_plan(R, s->back_running, s->front_inflight, s->back_alive, ratio(s),
				  NULL);
}

/* Nothing free: how many of the back's trees [lo, done_min) the front takes over (a prefix:
 * the back claims from the top down, so the lowest were begun last). Each tree's remainder is
 * predicted from its age (growing again once it is overdue); the front's time for k trees is
 * its fixed cost + k / rate. The k that ends soonest wins, the smallest on ties; 0 means
 * wait (for at most *wait_s). Nothing measured yet: all of them. */
static int takeover(gwb_rf_sched *s, int lo, double now, double *wait_s)
{
	int n = s->done_min - lo, best_k = n;
	double tc = back_tree_s(s), g = front_rate(s), best;

	if (n <= 0)
		return 0;
	if (!(tc > 0) || !(g > 0))
		return n;
	s->suf[n] = 0;
	for (int j = n - 1; j >= 0; j--) {
		int t = lo + j;
		double e = now - s->t_claim[t], rem = s->back_done[t] ? 0 : fmax(tc - e, e - 0.8 * tc);
		s->suf[j] = fmax(s->suf[j + 1], rem);
	}
	best = s->front_fixed + n / g;
	for (int k = n - 1; k >= 0; k--) {
		double e = fmax(k ? s->front_fixed + k / g : 0, s->suf[k]);
		if (e <= best) {
			best = e;
			best_k = k;
		}
	}
	if (best_k == 0)
		*wait_s = fmin(fmax(0.25 * s->suf[0], 0.002), 0.1);
	return best_k;
}

static void timed_wait(gwb_rf_sched *s, double sec)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)sec;
	ts.tv_nsec += (long)((sec - floor(sec)) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

int gwb_rf_sched_front(gwb_rf_sched *s, int want, int *first)
{
	int n = 0, lo = 0;

	if (want < 1)
		want = 1;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		double now = gwb_now(), wait_s = 0.005;
		lo = atomic_load(&s->lo);
		if (atomic_load(&s->stop) || gwb_intr_pending())
			break;
		if (s->hi > lo) {
			n = s->hi - lo - (back_share(s) - s->back_running);
			if (n > 0)
				break;
			n = 0;  /* every free tree is the back's share: wait for it to take them */
		} else if (lo >= s->done_min) {
			break;  /* every tree left was grown by the back */
		} else if ((n = takeover(s, lo, now, &wait_s)) > 0) {
			break;
		}
		timed_wait(s, wait_s);
	}
	if (n > want)
		n = want;
	if (n > 0) {
		double now = gwb_now();
		*first = lo;
		atomic_store(&s->lo, lo + n);
		if (s->hi < lo + n)
			s->hi = lo + n;  /* taken over from the back */
		for (int t = lo; t < lo + n; t++)
			s->t_claim[t] = now;
		s->front_inflight += n;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

void gwb_rf_sched_front_grown(gwb_rf_sched *s, int first, int n)
{
	double now = gwb_now();

	pthread_mutex_lock(&s->mu);
	if (first >= 0 && first < s->trees) {
		double since = s->t_claim[first];
		if (s->front_workers == 1 && s->front_mark > since)
			since = s->front_mark;  /* a claim grown in several batches */
		s->front_busy += now - since;
		s->front_n += n;
		s->front_mark = now;
		s->front_inflight -= n;
	}
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add(&s->front_grown, n);
	report(s);
}

bool gwb_rf_sched_back_begin(gwb_rf_sched *s)
{
	bool go;

	pthread_mutex_lock(&s->mu);
	go = !atomic_load(&s->stop) && s->hi > atomic_load(&s->lo) && back_share(s) > 0;
	if (go) {  /* and only where its share pays for what it costs the front */
		double gain;
		plan_gain(s->trees, s->back_alive, ratio(s), &gain);
		go = gain >= MIN_GAIN;
	}
	if (!go) {
		s->back_alive = 0;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return go;
}

int gwb_rf_sched_back(gwb_rf_sched *s)
{
	int t = -1;

	pthread_mutex_lock(&s->mu);
	if (!atomic_load(&s->stop) && s->hi > atomic_load(&s->lo) && back_share(s) > s->back_running) {
		t = --s->hi;
		s->back_running++;
		s->t_claim[t] = gwb_now();
	}
	if (t < 0 && s->back_alive > 0) {
		s->back_alive--;  /* this worker leaves: the front takes what is free */
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return t;
}

void gwb_rf_sched_back_done(gwb_rf_sched *s, int t)
{
	pthread_mutex_lock(&s->mu);
	s->back_done[t] = 1;
	s->back_running--;
	s->back_sum += gwb_now() - s->t_claim[t];
	s->back_timed++;
	while (s->done_min > 0 && s->back_done[s->done_min - 1])
		s->done_min--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add(&s->back_grown, 1);
	report(s);
}

void gwb_rf_sched_back_dropped(gwb_rf_sched *s, int t)
{
	(void)t;
	pthread_mutex_lock(&s->mu);
	s->back_running--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add(&s->dropped, 1);
}

bool gwb_rf_sched_dropped(gwb_rf_sched *s, int t)
{
	return atomic_load(&s->stop) || t < atomic_load(&s->lo);
}

void gwb_rf_sched_stop(gwb_rf_sched *s)
{
	pthread_mutex_lock(&s->mu);
	atomic_store(&s->stop, 1);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

int gwb_rf_sched_front_end(gwb_rf_sched *s)
{
	return atomic_load(&s->lo);
}

/* The back side is done (fb: its trees, NULL when it grew none or failed). */
static void back_finish(gwb_rf_sched *s, const gwb_forest *fb)
{
	pthread_mutex_lock(&s->mu);
	s->back_alive = 0;
	if (!atomic_load(&s->stop)) {
		s->back_finished = true;
		s->back_forest = fb;
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

gwb_status gwb_rf_sched_back_result(gwb_rf_sched *s, const gwb_forest **fb, int *front)
{
	bool ok;

	pthread_mutex_lock(&s->mu);
	while (!s->back_finished && !atomic_load(&s->stop))
		pthread_cond_wait(&s->cv, &s->mu);
	ok = s->back_finished;
	*fb = s->back_forest;
	*front = atomic_load(&s->lo);
	pthread_mutex_unlock(&s->mu);
	return ok ? GWB_OK : gwb_error(GWB_EINTR, "rf.train: the hybrid fit stopped");
}

/* ---- the hybrid trainer ------------------------------------------------------------------- */

/* The queue as the CPU trainer sees it (gwb_rf_tree_source): the back side takes trees one at
 * a time from the back and drops the ones the front takes over; a CPU front (tests) takes
 * them one at a time from the front. */
static int src_front_next(void *ctx)
{
	int first;

	return gwb_rf_sched_front(ctx, 1, &first) < 1 ? -1 : first;
}

static int src_back_next(void *ctx)
{
	return gwb_rf_sched_back(ctx);
}

static bool src_front_taken(void *ctx, int t)
{
	(void)ctx;
	(void)t;
	return false;   /* the front's trees are its own once claimed */
}

static bool src_back_taken(void *ctx, int t)
{
	return gwb_rf_sched_dropped(ctx, t);
}

static void src_front_done(void *ctx, int t, bool dropped)
{
	(void)dropped;   /* never: nothing takes the front's trees */
	gwb_rf_sched_front_grown(ctx, t, 1);
}

static void src_back_done(void *ctx, int t, bool dropped)
{
	if (dropped)
		gwb_rf_sched_back_dropped(ctx, t);
	else
		gwb_rf_sched_back_done(ctx, t);
}

static void src_stop(void *ctx)
{
	gwb_rf_sched_stop(ctx);
}

static bool src_front_kept(void *ctx, int t)
{
	return t < gwb_rf_sched_front_end(ctx);
}

static bool src_back_kept(void *ctx, int t)
{
	return t >= gwb_rf_sched_front_end(ctx);
}

typedef struct side {
	gwb_rf_job job;
	gwb_rf_params p;
	gwb_forest *f;
	gwb_rf_sched *s;
	gwb_rf_tree_source src;   /* the CPU trainer's view of s */
	int which;         /* 0 the front, 1 the back */
	bool cpu;          /* a CPU pool (the back; the front too in tests) */
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
		pthread_mutex_lock(&sd->s->mu);
		if (sd->s->failed_side < 0 && !atomic_load(&sd->s->stop))
			sd->s->failed_side = sd->which;
		pthread_mutex_unlock(&sd->s->mu);
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

/* Move src's node arrays into f (f has none yet; src gets f's NULLs). */
static void take_nodes(gwb_forest *f, gwb_forest *src)
{
	gwb_forest tmp;

#define MV(x) (tmp.x = f->x, f->x = src->x, src->x = tmp.x)
	MV(feature);
	MV(threshold_bin);
	MV(threshold);
	MV(nan_left);
	MV(left);
	MV(right);
	MV(count);
	MV(weight);
	MV(impurity);
	MV(value);
	MV(nodes);
#undef MV
	memcpy(f->tree_offset, src->tree_offset, ((size_t)f->trees + 1) * sizeof(int64_t));
}

/* fa's nodes (trees [0, front)) then fb's (trees [front, trees); the others have none there)
 * into f. */
static gwb_status merge(gwb_forest *f, gwb_forest *fa, gwb_forest *fb, int front)
{
	size_t na, nb = fb->nodes;
	gwb_status st;

	if (front >= f->trees || nb == 0) {
		take_nodes(f, fa);
		return GWB_OK;
	}
	if (front == 0) {
		take_nodes(f, fb);
		return GWB_OK;
	}
	na = (size_t)fa->tree_offset[front];
	if ((st = gwb_forest_alloc_nodes(f, na + nb)))  /* its error names the nodes and bytes */
		return st;
	gwb_forest_copy_nodes(f, 0, fa, 0, na);
	gwb_forest_copy_nodes(f, na, fb, 0, nb);
	memcpy(f->tree_offset, fa->tree_offset, ((size_t)front + 1) * sizeof(int64_t));
	for (int t = front + 1; t <= f->trees; t++)
		f->tree_offset[t] = (int64_t)na + fb->tree_offset[t];
	return GWB_OK;
}

gwb_status gwb_rf_train_hybrid(const gwb_rf_job *job, gwb_forest *f, bool cpu_front)
{
	const gwb_rf_params *p = job->p;
	gwb_rf_sched s;
	side fr, bk;
	gwb_quant *q = NULL;
	pthread_t tid;
	bool started = false, back_ran = false;
	double t0 = gwb_now(), tq = 0;
	gwb_status st = GWB_OK;
	int threads = p->threads > 0 ? p->threads : gwb_cpu_count();

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	s.trees = p->trees;
	s.hi = s.done_min = p->trees;
	s.failed_side = -1;
	s.progress = p->progress;
	s.back_done = calloc((size_t)p->trees + 1, 1);
	s.t_claim = calloc((size_t)p->trees + 1, sizeof(double));
	s.suf = calloc((size_t)p->trees + 2, sizeof(double));
	memset(&fr, 0, sizeof(fr));
	memset(&bk, 0, sizeof(bk));
	if (!s.back_done || !s.t_claim || !s.suf) {
		st = gwb_error(GWB_ENOMEM, "rf.train: out of memory");
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		side *sd = k ? &bk : &fr;
		sd->job = *job;
		sd->p = *p;
		sd->p.progress = false;    /* the queue reports progress for both */
		sd->job.p = &sd->p;
		sd->job.sched = &s;
		sd->job.sched_front = k == 0;
		sd->s = &s;
		sd->which = k;
		sd->cpu = k == 1 || cpu_front;
		sd->src = k == 0 ? (gwb_rf_tree_source){&s, src_front_next, src_front_taken,
							 src_front_done, src_stop, src_front_kept}
				 : (gwb_rf_tree_source){&s, src_back_next, src_back_taken,
							 src_back_done, src_stop, src_back_kept};
		sd->job.trees = sd->cpu ? &sd->src : NULL;
		if ((st = gwb_forest_new(job->d, p, job->mtry, job->class_weight, &sd->f)))
			goto out;
	}
	/* OOB: the GPU side's, over every tree (its own batches as it grows them, then the
	 * back's, gwb_rf_sched_back_result); two CPU pools leave it to gwb_forest_finish. */
	fr.p.oob = !cpu_front && p->oob;
	bk.p.oob = false;
	/* The GPU side quantizes on the device (the same edges as the host's) and starts at once;
	 * the CPU side builds the host codes when it starts its first tree. The front host
	 * thread keeps one core. */
	fr.job.q = NULL;
	bk.p.threads = cpu_front ? (threads > 1 ? threads / 2 : 1) : (threads > 1 ? threads - 1 : 1);
	if (cpu_front)
		fr.p.threads = threads - bk.p.threads > 0 ? threads - bk.p.threads : 1;
	bk.job.threads = bk.p.threads;
	fr.job.threads = fr.p.threads;
	s.back_alive = bk.p.threads;
	s.front_workers = cpu_front ? fr.p.threads : 1;
	s.front_fixed = cpu_front ? 0 : (p->depth + 1) * 1e-3;  /* a batch's level steps */
	s.ratio0 = cpu_front ? (double)fr.p.threads : gwb_rf_hybrid_ratio(p, job->d->rows, job->mtry);
	if (cpu_front && p->hybrid_ratio > 0)
		s.ratio0 = p->hybrid_ratio;
	s.ratio_used = s.ratio0;
	if (p->progress)
		gwb_progress_begin("rf.train hybrid", p->trees);
	if (cpu_front) {  /* both sides need host codes: build them before either starts */
		tq = gwb_now();
		if ((st = gwb_quant_build(job->d, p->bins, p->quantile_sample, p->seed, threads, &q)))
			goto out_progress;
		fr.job.q = bk.job.q = q;
		f->timing.quantize_ms = (gwb_now() - tq) * 1e3;
	}
	/* Whether the back starts is decided before the front thread exists (the prior ratio is
	 * all either side has then), so the front's first claim never races it: a front that
	 * claimed while the back was still counted alive would take only its own share, and
	 * the rest would cost it a second batch (a second pass of level steps) */
	bool back_go = gwb_rf_sched_back_begin(&s);
	/* The GPU side is a thread of its own, not a parallel loop: it runs the whole training
	 * beside the CPU workers (which run on the pool, pool.h). */
	if (pthread_create(&tid, NULL, front_main, &fr)) {
		st = gwb_error(GWB_ENOMEM, "rf.train: cannot start the hybrid trainer's thread");
		goto out_progress;
	}
	started = true;
	if (back_go) {
		back_ran = true;
		if (!q) {
			if ((st = gwb_quant_build(job->d, p->bins, p->quantile_sample, p->seed,
						  bk.p.threads, &q))) {
				snprintf(bk.err, sizeof(bk.err), "%s", gwb_errmsg());
				bk.st = st;
				pthread_mutex_lock(&s.mu);
				if (s.failed_side < 0)
					s.failed_side = 1;
				pthread_mutex_unlock(&s.mu);
				gwb_rf_sched_stop(&s);
			}
			bk.job.q = q;
		}
		if (!st)
			grow(&bk);
	}
	back_finish(&s, back_ran && !bk.st ? bk.f : NULL);
	pthread_join(tid, NULL);
	started = false;
	st = GWB_OK;
	if (fr.st || bk.st || gwb_intr_pending()) {
		/* the side that failed first; the other one only stopped */
		side *bad = s.failed_side == 1 ? &bk : s.failed_side == 0 ? &fr : fr.st ? &fr : &bk;
		if (!bad->st || bad->st == GWB_EINTR || gwb_intr_pending())
			st = gwb_error(GWB_EINTR, "rf.train: interrupted after %d of %d trees (hybrid); "
				       "no forest was made", atomic_load(&s.front_grown) +
				       atomic_load(&s.back_grown), p->trees);
		else
			st = gwb_error(bad->st, "%s", bad->err);
	} else {
		int front = gwb_rf_sched_front_end(&s);
		for (int t = front; t < p->trees; t++)
			if (!s.back_done[t]) {
				st = gwb_error(GWB_EINVAL, "rf.train: hybrid scheduler lost tree %d (a bug)", t);
				goto out_progress;
			}
		if (!cpu_front)
			take_nodes(f, fr.f);  /* the GPU side put the CPU's trees after its own */
		else if ((st = merge(f, fr.f, bk.f, front)))
			goto out_progress;
		if (fr.f->oob_label || fr.f->oob_value) {  /* the GPU's OOB over every tree */
			f->oob_label = fr.f->oob_label;
			f->oob_value = fr.f->oob_value;
			fr.f->oob_label = NULL;
			fr.f->oob_value = NULL;
			f->oob = fr.f->oob;
			f->oob_rows = fr.f->oob_rows;
			f->timing.oob_ms = fr.f->timing.oob_ms;
		}
		gwb_rf_hybrid_timing *h = &f->timing.hybrid;
		h->used = true;
		h->gpu_trees = front;
		h->cpu_trees = p->trees - front;
		h->cpu_dropped = atomic_load(&s.dropped);
		h->cpu_workers = bk.p.threads;
		h->cpu_started = back_ran;
		h->gpu_busy_ms = fr.busy_ms;
		h->cpu_busy_ms = bk.busy_ms;
		h->gpu_trees_per_s = fr.busy_ms > 0 ? front / (fr.busy_ms * 1e-3) : 0;
		h->cpu_trees_per_s = bk.busy_ms > 0 ? h->cpu_trees / (bk.busy_ms * 1e-3) : 0;
		h->ratio = s.ratio_used;
		h->ratio_prior = s.ratio0;
		f->timing.kernel_ms = fr.f->timing.kernel_ms;
		f->timing.transfer_ms = fr.f->timing.transfer_ms;
		if (!cpu_front)
			f->timing.quantize_ms = fr.f->timing.quantize_ms;  /* on the device */
		f->timing.grow_ms = (gwb_now() - t0) * 1e3 - f->timing.oob_ms;
		if (front == 0)   /* the CPU grew every tree (a GPU side may have scored OOB) */
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
	free(s.t_claim);
	free(s.suf);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	return st;
}
