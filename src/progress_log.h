/* progress_log.h - progress as plain lines, for output that is not a terminal (a script piped
 * into tee, CI logs): a long call writes one line to stderr every few seconds (percent, rate,
 * ETA) and one when it ends; short calls write nothing. The front end installs it as the
 * progress sink when stderr is not a terminal (panel.c's fallback); --quiet turns it off. */
#ifndef GWB_PROGRESS_LOG_H
#define GWB_PROGRESS_LOG_H

#include <stdbool.h>

#include "intr.h"

/* The sink (intr.h's gwb_progress_sink). The first line comes after 3 s, then one every 5 s;
 * GWB_PROGRESS_INTERVAL=<seconds> sets both, 0 turns the lines off (tests/run does). */
void gwb_progress_log_sink(const gwb_progress *p, void *ctx);

/* Progress lines off (--quiet) or on (the default). */
void gwb_progress_log_set_quiet(bool quiet);
bool gwb_progress_log_quiet(void);

#endif
