/* progress_log.c - progress as plain lines for logs (progress_log.h): one line every few
 * seconds of a long call, "rf.train: 45% (45 of 100 trees), 9.8/s, eta 5.6 s", then
 * "rf.train: done, 100 in 10.2 s" when a run that printed ends; a run with nothing to count
 * (a LAPACK call waited on) says "running for 3.0 s", then "done in 9.3 s". Nested runs
 * (rf.cv's folds) name their enclosing run. */
#include "progress_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool quiet;
static double next_at[4];   /* elapsed seconds of the next line, per depth */
static bool printed[4];     /* a line was written for the run at this depth */

void gwb_progress_log_set_quiet(bool q)
{
	pthread_mutex_lock(&mu);
	quiet = q;
	pthread_mutex_unlock(&mu);
}

bool gwb_progress_log_quiet(void)
{
	bool q;

	pthread_mutex_lock(&mu);
	q = quiet;
	pthread_mutex_unlock(&mu);
	return q;
}

/* Seconds before the first line and between lines; false when GWB_PROGRESS_INTERVAL=0 turns
 * the lines off (tests/run: tests compare what gwb prints). */
static bool intervals(double *first, double *every)
{
	const char *e = getenv("GWB_PROGRESS_INTERVAL");
	double v = e && *e ? atof(e) : -1;

	if (v == 0)
		return false;
	*first = v > 0 ? v : 3.0;
	*every = v > 0 ? v : 5.0;
	return true;
}

static void write_line(const gwb_progress *p, bool done)
{
	char el[32], eta[32], lead[160];

	if (p->depth > 0 && p->parent_label)
		snprintf(lead, sizeof(lead), "%s > %s", p->parent_label, p->label ? p->label : "");
	else
		snprintf(lead, sizeof(lead), "%s", p->label ? p->label : "");
	gwb_fmt_ms(el, sizeof(el), p->elapsed_s * 1e3);
	if (done && p->done > 0) {
		fprintf(stderr, "%s: done, %.0f in %s\n", lead, p->done, el);
	} else if (done) {  /* a run that counts nothing (a LAPACK call waited on) */
		fprintf(stderr, "%s: done in %s\n", lead, el);
	} else if (p->total > 0) {
		double rate = p->elapsed_s > 0 ? p->done / p->elapsed_s : 0;
		if (p->done > 0)
			gwb_fmt_ms(eta, sizeof(eta), p->elapsed_s * (p->total - p->done) / p->done * 1e3);
		else
			snprintf(eta, sizeof(eta), "?");
		fprintf(stderr, "%s: %.0f%% (%.0f of %.0f) after %s, %.3g/s, eta %s", lead,
			100 * p->done / p->total, p->done, p->total, el, rate, eta);
	} else if (p->done > 0) {
		fprintf(stderr, "%s: %.0f after %s", lead, p->done, el);
	} else {
		fprintf(stderr, "%s: running for %s", lead, el);
	}
	/* "seconds" (gwb_run_interruptible's wait) repeats the time just written */
	if (!done && p->metric_name && strcmp(p->metric_name, "seconds"))
		fprintf(stderr, ", %s %.3g", p->metric_name, p->metric);
	fputc('\n', stderr);
	fflush(stderr);
}

void gwb_progress_log_sink(const gwb_progress *p, void *ctx)
{
	int d = p->depth < 0 ? 0 : p->depth > 3 ? 3 : p->depth;
	double first, every;

	(void)ctx;
	if (!intervals(&first, &every))
		return;
	pthread_mutex_lock(&mu);
	if (quiet) {
		pthread_mutex_unlock(&mu);
		return;
	}
	switch (p->event) {
	case GWB_PROGRESS_BEGIN:
		next_at[d] = first;
		printed[d] = false;
		break;
	case GWB_PROGRESS_UPDATE:
		if (p->elapsed_s >= next_at[d]) {
			write_line(p, false);
			printed[d] = true;
			while (next_at[d] <= p->elapsed_s)
				next_at[d] += every;
		}
		break;
	case GWB_PROGRESS_END:
		if (printed[d])
			write_line(p, true);
		printed[d] = false;
		break;
	}
	pthread_mutex_unlock(&mu);
}
