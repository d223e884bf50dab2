/* intr.h - the interrupt flag and the progress hook used by every long operation.
 * SIGINT only sets the flag (lua.c's laction idea); C loops poll gwb_intr_pending() between
 * steps and return GWB_EINTR after freeing what they hold. Progress goes to one sink, which
 * the front end chooses (a stderr bar on a tty, the panel later, nothing otherwise). */
#ifndef GWB_INTR_H
#define GWB_INTR_H

#include <stdbool.h>

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
	bool finished;     /* set on the last report (gwb_progress_end) */
} gwb_progress;

typedef void (*gwb_progress_sink)(const gwb_progress *p, void *ctx);

/* Install the sink (NULL = none). */
void gwb_progress_set_sink(gwb_progress_sink fn, void *ctx);

/* Begin, update and end a progress run. Updates are rate limited (about 10 Hz) and thread
 * safe; they are cheap enough to call once per tree, level or iteration. */
void gwb_progress_begin(const char *label, double total);
void gwb_progress_update(double done, const char *metric_name, double metric);
void gwb_progress_end(void);

/* The stderr progress bar (used by the front end when stderr is a tty). */
void gwb_progress_stderr_sink(const gwb_progress *p, void *ctx);

/* Monotonic clock in seconds. */
double gwb_now(void);

#ifdef __cplusplus
}
#endif
#endif
