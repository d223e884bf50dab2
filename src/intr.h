/* intr.h - what every long operation uses: the interrupt flag, the progress hook, a clock and
 * the CPU count that sets default thread counts.
 * SIGINT only sets the flag (lua.c's laction idea); C loops poll gwb_intr_pending() between
 * steps and return GWB_EINTR after freeing what they hold. Progress goes to one sink, which
 * the front end chooses (a stderr bar on a tty, the panel later, nothing otherwise). */
#ifndef GWB_INTR_H
#define GWB_INTR_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Async-signal-safe: request that the running operation stop. */
void gwb_intr_raise(void);
/* True once an interrupt was requested and not yet cleared. */
bool gwb_intr_pending(void);
/* Forget a pending interrupt (the REPL does this before each command). */
void gwb_intr_clear(void);

/* One progress report: label ("train"), done out of total (total 0 = unknown), and an
 * optional metric (name NULL when none), e.g. "residual" 3.2e-9. */
typedef struct gwb_progress {
	const char *label;
	double done;
	double total;
	const char *metric_name;
	double metric;
	double elapsed_s;  /* seconds since gwb_progress_begin */
	bool finished;     /* set on the last report of a run that was shown (lasted past the
			      first update interval) */
	int event;         /* GWB_PROGRESS_UPDATE, _BEGIN (sent once, done 0) or _END (sent
			      once, whether or not the run was shown) */
	int depth;         /* 0 for a run, 1.. for a run begun inside another (rf.cv's folds) */
	const char *parent_label;  /* the enclosing run when depth > 0, else NULL */
	double parent_done, parent_total;
} gwb_progress;

enum { GWB_PROGRESS_UPDATE = 0, GWB_PROGRESS_BEGIN = 1, GWB_PROGRESS_END = 2 };

typedef void (*gwb_progress_sink)(const gwb_progress *p, void *ctx);

/* Install the sink (NULL = none). */
void gwb_progress_set_sink(gwb_progress_sink fn, void *ctx);

/* Where every finished run is recorded as a phase (label, milliseconds): prof.c installs
 * gwb_prof_phase here before main runs (NULL = nowhere). Called under the progress lock. */
typedef void (*gwb_progress_phase_fn)(const char *label, double ms);
void gwb_progress_set_phase_hook(gwb_progress_phase_fn fn);

/* Begin, update and end a progress run. Updates are rate limited (about 10 Hz) and thread
 * safe; they are cheap enough to call once per tree, level or iteration. Runs nest (up to 4
 * deep): a begin inside a run starts an inner run, its end returns to the outer one. */
void gwb_progress_begin(const char *label, double total);
void gwb_progress_update(double done, const char *metric_name, double metric);
void gwb_progress_end(void);

/* A call around its progress run (gwb_rf_train around the trainer's "rf.train"): the run
 * begun first inside the call at depth 0 is timed from the call's start, and its end is held
 * until the call ends, so the END event (the panel's summary, the log's closing line, the
 * phase) carries the whole call's time, not only the part the run covered. Inside another
 * run (rf.cv's folds) a call is nothing. Calls nest; every begin needs its end, on error
 * paths too. */
void gwb_progress_call_begin(void);
void gwb_progress_call_end(void);

/* The current run as of the latest update (not rate limited), for a display that polls:
 * copies the label into label[n]; returns false when no run is active. */
bool gwb_progress_get(gwb_progress *out, char *label, size_t n);

/* The stderr progress bar (used by the front end when stderr is a tty). */
void gwb_progress_stderr_sink(const gwb_progress *p, void *ctx);

/* Run fn(arg) on a worker thread and wait for it, polling the interrupt flag every 20 ms: for
 * a call that cannot poll the flag itself (a LAPACK driver). With a label, the wait is a
 * progress run of that name (total unknown), so the panel shows it. Returns fn's status, its
 * message moved to the calling thread. On an interrupt it returns GWB_EINTR at once with
 * *abandoned set: the worker runs on to its end and then calls release(arg), which frees
 * everything fn uses (arg included); the caller must touch none of it again. Otherwise
 * release is not called and the caller keeps arg. */
gwb_status gwb_run_interruptible(const char *label, gwb_status (*fn)(void *arg),
				 void (*release)(void *arg), void *arg, bool *abandoned);

/* The cores this process may run on (sched_getaffinity: taskset and containers limit it),
 * 1..1024: the default thread count of every parallel operation. */
int gwb_cpu_count(void);

/* Monotonic clock in seconds. */
double gwb_now(void);

/* The median of v[0..n) (n >= 1; v is sorted in place): what every repeated timing reports. */
double gwb_median(double *v, int n);

#ifdef __cplusplus
}
#endif
#endif
