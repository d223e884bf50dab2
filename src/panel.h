/* panel.h - the live ncurses panel: device, memory (ours by purpose / others / free), progress
 * with ETA, top kernels, transfers, CPU threads/RSS/phases and a memory sparkline, redrawn at
 * about 10 Hz from a snapshot of the telemetry (prof.h, intr.h, gpu.h).
 *
 * It appears by itself when a progress run (gwb_progress_begin) lasts longer than about 0.3 s on
 * an interactive terminal, and closes when the run ends (or when the command that started it
 * returns), leaving a compact summary in the scrollback. panel.on() keeps it up between commands
 * with the REPL's prompt below it. While it is up, standard output and error are captured
 * through a pipe: the panel shows the newest lines and writes everything back to the terminal
 * when it closes, so nothing printed is lost or garbled.
 *
 * One thread owns ncurses (the panel thread); everything here may be called from any thread
 * except where noted. The terminal is always restored: at close, at exit (atexit) and on fatal
 * signals. */
#ifndef GWB_PANEL_H
#define GWB_PANEL_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* Decide once, at start: allowed is false for --no-panel, NO_COLOR or a non-tty stdout.
 * Installs the progress sink (the panel, or the stderr bar when the panel is not allowed and
 * stderr is a tty). */
void gwb_panel_setup(bool allowed);

/* A one-shot command (gwb rf train ...) runs: the panel's hints name no Lua (panel.on()). */
void gwb_panel_set_cli(void);

/* Whether the panel may appear at all (setup's decision). */
bool gwb_panel_allowed(void);

/* Keep the panel up between commands, with the prompt below it. GWB_EINVAL with the reason
 * when it cannot be shown (not allowed, terminal too small or unknown). */
gwb_status gwb_panel_on(void);

/* Close a persistent panel (and any panel that is up). Safe when none is up. */
void gwb_panel_off(void);

/* True while the panel is on screen; persistent: kept up by gwb_panel_on(). */
bool gwb_panel_is_up(void);
bool gwb_panel_persistent(void);

/* The front end calls this after each command (script, -e chunk, REPL line) returns: a
 * non-persistent panel still up (its operation never ended, e.g. after an error) closes. */
void gwb_panel_command_end(void);

/* Tear everything down now (atexit does this too). */
void gwb_panel_shutdown(void);

/* The prompt while a persistent panel is up (repl.c): readline's callback interface draws
 * through gwb_panel_rl_redisplay into the panel's bottom line. Called on the main thread. */
void gwb_panel_rl_redisplay(void);

/* A short text of what the panel would show now (progress, phases, CPU, GPU memory, top
 * kernels), the same that it leaves in the scrollback; for panel.status() and tests.
 * Writes at most n bytes into buf. */
void gwb_panel_summary(char *buf, size_t n);

/* Counters for tests and panel.status(): how many times it opened, lines captured. */
typedef struct gwb_panel_stats {
	int opened;          /* times the panel appeared */
	long captured_bytes; /* output captured while it was up (total) */
	int rows, cols;      /* size of the last frame drawn */
	long frames;         /* frames drawn */
	char reason[160];    /* why it is not allowed / could not open ("" when fine) */
	/* the GPU as the panel's latest snapshot saw it (gpu false when gwb has not used it) */
	bool gpu;
	size_t mem_free, mem_total, ours;
	int nk;
	struct { char name[64]; int block; double occupancy; } k[8];
} gwb_panel_stats;
void gwb_panel_get_stats(gwb_panel_stats *out);

#endif
