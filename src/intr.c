/* intr.c - interrupt flag, progress reporting (each finished run goes to the phase hook that
 * prof.c installs), clock and CPU count. */
#define _GNU_SOURCE
#include "intr.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t intr_flag;

void gwb_intr_raise(void)
{
	intr_flag = 1;
}

bool gwb_intr_pending(void)
{
	return intr_flag != 0;
}

void gwb_intr_clear(void)
{
	intr_flag = 0;
}

int gwb_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		n = CPU_COUNT(&set);
	return n < 1 ? 1 : (n > 1024 ? 1024 : (int)n);
}

double gwb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_median(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double gwb_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_median);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;
static gwb_progress_sink sink_fn;
static void *sink_ctx;
#define MAXDEPTH 4
static struct level {
	char label[64];
	double total, t0, last;
	double done, metric;      /* latest update, for gwb_progress_get */
	char metric_name[32];
} lv[MAXDEPTH];
static int depth;     /* active levels */
static int overflow;  /* begins past MAXDEPTH (ignored; their ends are matched) */

static gwb_progress_phase_fn phase_fn;   /* prof.c's phase record */
/* The open call (gwb_progress_call_begin at depth 0): its start, how deeply calls nest, and
 * whether its run has ended and waits for the call's end to report it. */
static struct {
	int nest;
	bool open, held;
	double t0;
} call;

void gwb_progress_set_phase_hook(gwb_progress_phase_fn fn)
{
	pthread_mutex_lock(&prog_lock);
	phase_fn = fn;
	pthread_mutex_unlock(&prog_lock);
}

void gwb_progress_set_sink(gwb_progress_sink fn, void *ctx)
{
	pthread_mutex_lock(&prog_lock);
	sink_fn = fn;
	sink_ctx = ctx;
	pthread_mutex_unlock(&prog_lock);
}

static void emit(double done, const char *mname, double metric, bool finished, int event)
{
	struct level *t = &lv[depth - 1];
	gwb_progress p = {
		.label = t->label, .done = done, .total = t->total,
		.metric_name = mname, .metric = metric,
		.elapsed_s = gwb_now() - t->t0, .finished = finished, .event = event,
		.depth = depth - 1,
	};
	if (depth > 1) {
		p.parent_label = lv[depth - 2].label;
		p.parent_done = lv[depth - 2].done;
		p.parent_total = lv[depth - 2].total;
	}
	if (sink_fn)
		sink_fn(&p, sink_ctx);
}

static void end_locked(void);

void gwb_progress_begin(const char *label, double total)
{
	struct level *t;
	bool from_call;

	pthread_mutex_lock(&prog_lock);
	if (call.held) {  /* a second run inside the call: the first one reports its end now */
		call.held = false;
		end_locked();
	}
	from_call = call.open && depth == 0;
	if (depth == MAXDEPTH) {
		overflow++;
		pthread_mutex_unlock(&prog_lock);
		return;
	}
	t = &lv[depth++];
	snprintf(t->label, sizeof(t->label), "%s", label ? label : "");
	t->total = total;
	t->t0 = from_call ? call.t0 : gwb_now();
	t->last = 0;
	t->done = 0;
	t->metric = 0;
	t->metric_name[0] = '\0';
	emit(0, NULL, 0, false, GWB_PROGRESS_BEGIN);
	pthread_mutex_unlock(&prog_lock);
}

void gwb_progress_update(double done, const char *metric_name, double metric)
{
	struct level *t;
	double now;

	pthread_mutex_lock(&prog_lock);
	if (!depth || overflow) {
		pthread_mutex_unlock(&prog_lock);
		return;
	}
	t = &lv[depth - 1];
	now = gwb_now();
	t->done = done;
	t->metric = metric;
	if (metric_name)
		snprintf(t->metric_name, sizeof(t->metric_name), "%s", metric_name);
	else
		t->metric_name[0] = '\0';
	if (now - t->last >= 0.1) {
		t->last = now;
		emit(done, metric_name, metric, false, GWB_PROGRESS_UPDATE);
	}
	pthread_mutex_unlock(&prog_lock);
}

/* Only runs that were shown (lasted past the first update interval) are `finished`; every run
 * gets its END event. Each run is also recorded as a phase. */
static void end_locked(void)
{
	struct level *t = &lv[depth - 1];
	double el = gwb_now() - t->t0;

	if (t->label[0] && phase_fn)
		phase_fn(t->label, el * 1e3);
	emit(t->total, NULL, 0, t->last > 0, GWB_PROGRESS_END);
	depth--;
}

void gwb_progress_end(void)
{
	pthread_mutex_lock(&prog_lock);
	if (overflow)
		overflow--;
	else if (depth == 1 && call.open && !call.held)
		call.held = true;  /* reported at gwb_progress_call_end */
	else if (depth)
		end_locked();
	pthread_mutex_unlock(&prog_lock);
}

void gwb_progress_call_begin(void)
{
	pthread_mutex_lock(&prog_lock);
	if (call.nest++ == 0 && depth == 0) {
		call.open = true;
		call.held = false;
		call.t0 = gwb_now();
	}
	pthread_mutex_unlock(&prog_lock);
}

void gwb_progress_call_end(void)
{
	pthread_mutex_lock(&prog_lock);
	if (call.nest > 0 && --call.nest == 0 && call.open) {
		if (call.held && depth == 1)
			end_locked();
		call.open = call.held = false;
	}
	pthread_mutex_unlock(&prog_lock);
}

bool gwb_progress_get(gwb_progress *out, char *label, size_t n)
{
	static _Thread_local char mname[32];
	struct level *t;
	bool active;

	pthread_mutex_lock(&prog_lock);
	active = depth > 0;
	t = &lv[depth > 0 ? depth - 1 : 0];
	memset(out, 0, sizeof(*out));
	if (label && n)
		snprintf(label, n, "%s", active ? t->label : "");
	memcpy(mname, t->metric_name, sizeof(mname));
	out->label = label;
	out->done = t->done;
	out->total = t->total;
	out->metric_name = active && mname[0] ? mname : NULL;
	out->metric = t->metric;
	out->elapsed_s = active ? gwb_now() - t->t0 : 0;
	out->finished = !active;
	out->event = GWB_PROGRESS_UPDATE;
	out->depth = active ? depth - 1 : 0;
	pthread_mutex_unlock(&prog_lock);
	return active;
}

void gwb_progress_stderr_sink(const gwb_progress *p, void *ctx)
{
	char bar[31];
	int fill = 0;
	(void)ctx;

	if (p->event == GWB_PROGRESS_BEGIN || (p->event == GWB_PROGRESS_END && !p->finished))
		return;
	if (p->elapsed_s < 0.3 && !p->finished)
		return;  /* short work shows nothing */
	if (p->total > 0) {
		double f = p->done / p->total;
		fill = (int)(f * 30 + 0.5);
		if (fill > 30)
			fill = 30;
		if (fill < 0)
			fill = 0;
	}
	memset(bar, '#', (size_t)fill);
	memset(bar + fill, '.', (size_t)(30 - fill));
	bar[30] = '\0';
	if (p->total > 0) {
		double eta = p->done > 0 ? p->elapsed_s * (p->total - p->done) / p->done : 0;
		fprintf(stderr, "\r%-10s [%s] %.0f/%.0f  %.1fs  eta %.1fs", p->label, bar,
			p->done, p->total, p->elapsed_s, eta);
	} else {
		fprintf(stderr, "\r%-10s %.0f  %.1fs", p->label, p->done, p->elapsed_s);
	}
	if (p->metric_name)
		fprintf(stderr, "  %s %.3g", p->metric_name, p->metric);
	fputs(p->finished ? "\n" : "\033[K", stderr);
	fflush(stderr);
}

/* --- a blocking call on a worker that can be abandoned ------------------------------------ */

/* Abandoned workers still running. exit() would run the libraries' destructors under them
 * (OpenBLAS frees its buffers: the worker then faults, and buffered output is lost), so while
 * any runs, the process leaves at the first exit handler: stdio flushed, then _exit. */
static atomic_int live_abandoned;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void leave_now(int status, void *arg)
{
	(void)arg;
	if (atomic_load(&live_abandoned) > 0) {
		fflush(NULL);
		_exit(status);
	}
}

static void register_leave(void)
{
	on_exit(leave_now, NULL);
}

struct worker_job {
	gwb_status (*fn)(void *);
	void (*release)(void *);
	void *arg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool finished;   /* fn returned (rc, msg set) */
	bool abandoned;  /* the caller left: the worker releases arg and the job */
	gwb_status rc;
	char msg[1024];
};

static void *worker_main(void *p)
{
	struct worker_job *j = p;
	gwb_status rc = j->fn(j->arg);
	bool gone;

	pthread_mutex_lock(&j->mu);
	j->rc = rc;
	snprintf(j->msg, sizeof(j->msg), "%s", rc ? gwb_errmsg() : "");
	j->finished = true;
	gone = j->abandoned;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	if (gone) {
		if (j->release)
			j->release(j->arg);
		pthread_mutex_destroy(&j->mu);
		pthread_cond_destroy(&j->cv);
		free(j);
		atomic_fetch_sub(&live_abandoned, 1);
	}
	return NULL;
}

gwb_status gwb_run_interruptible(const char *label, gwb_status (*fn)(void *arg),
				 void (*release)(void *arg), void *arg, bool *abandoned)
{
	struct worker_job *j = calloc(1, sizeof(*j));
	pthread_attr_t at;
	pthread_t tid;
	gwb_status rc;
	bool left = false;
	double t0 = gwb_now();

	*abandoned = false;
	if (!j)
		return gwb_error(GWB_ENOMEM, "out of memory starting a worker");
	j->fn = fn;
	j->release = release;
	j->arg = arg;
	pthread_mutex_init(&j->mu, NULL);
	pthread_cond_init(&j->cv, NULL);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	/* a thread of its own, not a parallel loop: the call runs there while this one watches
	 * for an interrupt (and may leave it behind) */
	if (pthread_create(&tid, &at, worker_main, j)) {
		/* no thread: run it here, uninterruptible but correct */
		pthread_attr_destroy(&at);
		pthread_mutex_destroy(&j->mu);
		pthread_cond_destroy(&j->cv);
		free(j);
		return fn(arg);
	}
	pthread_attr_destroy(&at);
	if (label)
		gwb_progress_begin(label, 0);
	pthread_mutex_lock(&j->mu);
	while (!j->finished) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&j->cv, &j->mu, &ts);
		if (j->finished)
			break;
		if (gwb_intr_pending()) {
			/* registered at the first abandon, so it runs before the exit handlers and
			 * destructors of everything loaded before */
			pthread_once(&exit_once, register_leave);
			atomic_fetch_add(&live_abandoned, 1);
			j->abandoned = left = true;
			break;
		}
		if (label) {
			pthread_mutex_unlock(&j->mu);
			gwb_progress_update(0, "seconds", gwb_now() - t0);
			pthread_mutex_lock(&j->mu);
		}
	}
	pthread_mutex_unlock(&j->mu);
	if (label)
		gwb_progress_end();
	if (left) {
		*abandoned = true;
		return gwb_error(GWB_EINTR, "%s%sinterrupted after %.1f s (the computation is left "
				 "to finish in the background and its memory is freed when it ends)",
				 label ? label : "", label ? ": " : "", gwb_now() - t0);
	}
	rc = j->rc;
	if (rc)
		gwb_error(rc, "%s", j->msg);
	pthread_mutex_destroy(&j->mu);
	pthread_cond_destroy(&j->cv);
	free(j);
	return rc;
}
