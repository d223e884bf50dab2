/* panel_impl.h - what the pieces of the live panel share (panel.h is the public contract):
 * panel_data.c samples (the progress state the sink records, the telemetry snapshot a frame
 * is drawn from, the operation's baseline, the summary text), panel_draw.c renders a snapshot
 * with ncurses, panel.c runs the panel: the sink, the thread, the terminal and the output
 * capture. Internal: nothing outside src/panel*.c includes it. panel_st is shared by all
 * three under panel_st.mu (lock order in panel.c); the struct snap a frame is drawn from
 * belongs to whoever filled it. */
#ifndef GWB_PANEL_IMPL_H
#define GWB_PANEL_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"
#include "intr.h"
#include "panel.h"
#include "prof.h"

#define LOG_LINES 256             /* newest output lines the panel can show */
#define LOG_LINE_MAX 400
#define SPARK_N 512
#define MAX_KROWS 48
#define MAX_PURPOSES 12
#define MAX_PHASES 12

/* --- what the panel draws: one snapshot per frame ------------------------------------------ */

struct krow {
	char name[64];
	long launches;
	double total_ms, bytes, occupancy;
	int block[3], grid[3], regs;
	size_t smem;
	double meas_gbps, meas_peak;  /* CUPTI-measured DRAM GB/s and its fraction of the peak
				       * (gpu.profile); < 0 when not measured */
};

struct snap {
	/* progress (copied by the sink) */
	bool active;
	char label[64], parent[64];
	double done, total, metric, elapsed, parent_done, parent_total;
	char metric_name[32];
	char last_label[64];
	double last_elapsed;
	bool interrupted;
	/* CPU */
	gwb_proc_stat proc;
	double cpu_cores;   /* cores busy over the last second */
	double cpu_cores_avg; /* since the panel opened */
	int ncpu;
	char phase_name[MAX_PHASES][48];
	double phase_ms[MAX_PHASES];
	int nphases;
	char op_phase_name[MAX_PHASES][48];   /* this operation's share of each phase */
	double op_phase_ms[MAX_PHASES];
	int op_nphases;
	/* GPU (only when gwb has used it: the panel never creates a CUDA context) */
	bool gpu;
	gwb_gpu_info info;
	size_t mem_free, mem_total, ours;
	int nalloc;
	char purpose[MAX_PURPOSES][48];
	size_t purpose_bytes[MAX_PURPOSES];
	int npurposes;
	gwb_xfer_stat x;
	struct krow k[MAX_KROWS];
	int nk, pending;
	double kernel_ms;
	bool any_measured;     /* a kernel row carries CUPTI's measured bytes */
	/* this operation only (since its progress run began) */
	int op_nk;
	double op_kernel_ms;
	struct krow op_top;   /* launches and total_ms are this operation's */
	gwb_xfer_stat op_x;
};

/* --- the state the panel's pieces share (panel_data.c defines it) --------------------------- */

struct panel_state {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool setup_done, allowed, persistent, thread_live, stop, utf8;
	bool cli;                   /* a one-shot command: hints that name no Lua */
	int state;
	pthread_t thread;
	int wake[2];                /* wake pipe: [0] read by the panel thread */
	char reason[160];
	/* progress as the sink last saw it */
	bool p_active, p_interrupted;
	gwb_panel_stats last;        /* GPU part of the latest snapshot */
	/* telemetry totals when the current operation began, so that the summary and the
	 * phases line speak of this operation only */
	struct base_phase { char name[48]; double ms; } base_phase[MAX_PHASES];
	int nbase_phase;
	struct base_kernel { char name[64]; double ms; long launches; } base_k[MAX_KROWS];
	int nbase_k;
	gwb_xfer_stat base_x;
	char p_label[64], p_metric_name[32], p_last_label[64], p_parent[64];
	double p_parent_done, p_parent_total, p_t0s[4], p_tcur;
	double p_done, p_total, p_metric, p_t0, p_last_elapsed;
	/* the prompt (persistent mode), from readline on the main thread */
	char prompt[128];
	char *line;
	size_t line_cap;
	int point;
	bool prompt_active;
	/* counters */
	int opened;
	long captured_total, frames;
	int rows, cols;
	/* memory history for the sparkline (bytes used: GPU when in use, else RSS) */
	double spark[SPARK_N];
	int nspark, spark_head;
	bool spark_gpu;
	/* CPU rate */
	double last_cpu_s, last_wall;
	double open_cpu_s, open_wall;
	double cpu_cores;
	size_t peak_ours;
};
extern struct panel_state panel_st;

/* The output captured while the panel is up, as the panel shows it: the newest lines, a ring,
 * and the line being written (panel.c feeds it, panel_draw.c shows it). */
struct panel_outlog {
	char log[LOG_LINES][LOG_LINE_MAX];
	int log_head, log_n;
	char cur[LOG_LINE_MAX];
	int cur_len;
};

/* --- panel_data.c: what the panel samples ----------------------------------------------- */

/* A duration for the panel ("350 ms", "2.5 s", "3m07s", "1h02m"; "?" when unknown). */
void panel_secs(char *buf, size_t n, double s);
/* snprintf at buf + at, returning the new end (clamped to n - 1). */
size_t panel_appendf(char *buf, size_t n, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Remember the telemetry totals as an operation begins (called without panel_st.mu held). */
void panel_take_baseline(void);
/* Record a progress event in panel_st (panel_st.mu held): 1 when a top-level run began, -1
 * when one ended, else 0. */
int panel_progress_locked(const gwb_progress *p);
/* Fill s from panel_st and the telemetry; sample: a frame (the CPU rate, the sparkline). */
void panel_collect(struct snap *s, bool sample);
/* The summary text of s (scrollback, panel.status()). */
void panel_summary_of(const struct snap *s, char *buf, size_t n, bool utf8);

/* --- panel_draw.c: the frame, with ncurses (on the panel thread) ----------------------- */

/* Colours, once the screen is set up. */
void panel_draw_init(void);
/* Follow the terminal's size (tty_fd); rows and cols receive it. */
void panel_draw_resize(int tty_fd, int *rows, int *cols);
/* Draw s and the output out (its current line is terminated in place); persistent: the
 * prompt in the bottom row, else the hint line. */
void panel_draw(const struct snap *s, bool persistent, struct panel_outlog *out);
/* The frame on screen as text into path (GWB_PANEL_SNAPSHOT). */
void panel_draw_snapshot(const char *path, long frame);

#endif
