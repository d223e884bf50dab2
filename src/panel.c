/* panel.c - the live ncurses panel (see panel.h). One thread, the panel thread, owns ncurses
 * and the capture pipe; the rest of the program talks to it through `pl` under its mutex and
 * a wake pipe. Lock order: intr.c's progress lock, then pl.mu; the panel thread never takes the
 * progress lock (the progress sink may wait for it to close). */
#define _GNU_SOURCE
#include "panel.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

#include <readline/readline.h>

#include "fileio.h"
#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#include "prof.h"
#include "progress_log.h"

#define APPEAR_AFTER_S 0.3
#define FRAME_S 0.1
#define CAPTURE_MAX (16u << 20)   /* output kept for the replay; older bytes are dropped */
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

/* --- shared state -------------------------------------------------------------------------- */

enum { ST_DOWN, ST_PENDING, ST_UP };

static struct {
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
} pl = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.wake = {-1, -1},
};

/* Owned by the panel thread while it is up (and by whoever tears down after it exits). */
static struct {
	SCREEN *scr;
	FILE *out_fp, *in_fp;
	int tty_fd;                 /* dup of the original stdout (the terminal) */
	int saved_err;              /* dup of the original stderr */
	bool cap_err;               /* stderr is the terminal too: capture it (else leave it be,
				       so that 2>file still goes to the file) */
	int cap_r;                  /* capture pipe, read end (non-blocking) */
	struct termios tio;
	bool have_tio;
	char *cap;                  /* raw output captured while up, for the replay */
	size_t cap_len, cap_size;
	long cap_dropped;
	char log[LOG_LINES][LOG_LINE_MAX];
	int log_head, log_n;
	char cur[LOG_LINE_MAX];
	int cur_len;
	int esc;                    /* escape-sequence parser state */
	bool colors;
} ui = {.tty_fd = -1, .saved_err = -1, .cap_r = -1};

static volatile sig_atomic_t restore_fd = -1;  /* for the fatal-signal handler */
static struct termios restore_tio;
static volatile sig_atomic_t restore_have_tio;

/* --- small helpers ------------------------------------------------------------------------- */

static void human_bytes(char *buf, size_t n, double b)
{
	gwb_fmt_bytes(buf, n, b);  /* one format for sizes everywhere (fmt.h) */
}

static void human_secs(char *buf, size_t n, double s)
{
	if (s < 0 || s != s)
		snprintf(buf, n, "?");
	else if (s < 1)
		snprintf(buf, n, "%.0f ms", s * 1e3);
	else if (s < 60)
		snprintf(buf, n, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, n, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void wake_panel(void)
{
	if (pl.wake[1] >= 0) {
		char c = 1;
		ssize_t r = write(pl.wake[1], &c, 1);
		(void)r;
	}
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* --- the progress sink ---------------------------------------------------------------------- */

static void *panel_main(void *arg);
static void request_close_and_join(void);

static bool start_thread_locked(int initial_state)
{
	if (pl.thread_live)
		return true;
	if (pl.wake[0] < 0) {
		if (pipe2(pl.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
			pl.wake[0] = pl.wake[1] = -1;
			return false;
		}
	}
	pl.stop = false;
	pl.state = initial_state;
	if (pthread_create(&pl.thread, NULL, panel_main, NULL) != 0) {
		pl.state = ST_DOWN;
		return false;
	}
	pl.thread_live = true;
	return true;
}

static void fallback_sink(const gwb_progress *p, void *ctx);

struct base_collect {
	struct base_phase ph[MAX_PHASES];
	int nph;
	struct base_kernel k[MAX_KROWS];
	int nk;
};

static void base_phase_cb(const char *name, double ms, long count, void *ctx)
{
	struct base_collect *b = ctx;
	(void)count;

	if (b->nph < MAX_PHASES) {
		snprintf(b->ph[b->nph].name, sizeof(b->ph[0].name), "%s", name);
		b->ph[b->nph++].ms = ms;
	}
}

static void base_kernel_cb(const gwb_kernel_stat *k, void *ctx)
{
	struct base_collect *b = ctx;

	if (b->nk < MAX_KROWS) {
		snprintf(b->k[b->nk].name, sizeof(b->k[0].name), "%s", k->name);
		b->k[b->nk].ms = k->total_ms;
		b->k[b->nk++].launches = k->launches;
	}
}

/* Remember the telemetry totals as an operation begins (called without pl.mu held). */
static void take_baseline(void)
{
	static struct base_collect b;  /* the outermost begin runs on one thread at a time */
	gwb_xfer_stat x;

	b.nph = b.nk = 0;
	gwb_prof_each_phase(base_phase_cb, &b);
	gwb_prof_each_kernel_nowait(base_kernel_cb, &b, NULL);
	gwb_prof_transfers(&x);
	pthread_mutex_lock(&pl.mu);
	memcpy(pl.base_phase, b.ph, sizeof(b.ph[0]) * (size_t)b.nph);
	pl.nbase_phase = b.nph;
	memcpy(pl.base_k, b.k, sizeof(b.k[0]) * (size_t)b.nk);
	pl.nbase_k = b.nk;
	pl.base_x = x;
	pthread_mutex_unlock(&pl.mu);
}

static void panel_sink(const gwb_progress *p, void *ctx)
{
	bool close_now = false, fallback;

	if (p->event == GWB_PROGRESS_BEGIN && p->depth == 0)
		take_baseline();
	pthread_mutex_lock(&pl.mu);
	fallback = !pl.allowed;
	if (p->depth > 0) {
		snprintf(pl.p_parent, sizeof(pl.p_parent), "%s", p->parent_label ? p->parent_label : "");
		pl.p_parent_done = p->parent_done;
		pl.p_parent_total = p->parent_total;
	}
	switch (p->event) {
	case GWB_PROGRESS_BEGIN:
		snprintf(pl.p_label, sizeof(pl.p_label), "%s", p->label ? p->label : "");
		pl.p_total = p->total;
		pl.p_done = 0;
		pl.p_metric_name[0] = '\0';
		if (p->depth < 4)
			pl.p_t0s[p->depth] = gwb_now();
		pl.p_tcur = gwb_now();
		if (p->depth == 0) {
			pl.p_parent[0] = '\0';
			pl.p_t0 = pl.p_tcur;
			pl.p_active = true;
			if (pl.allowed && !pl.thread_live)
				start_thread_locked(ST_PENDING);
		}
		break;
	case GWB_PROGRESS_UPDATE:
		pl.p_done = p->done;
		pl.p_metric = p->metric;
		snprintf(pl.p_metric_name, sizeof(pl.p_metric_name), "%s",
			 p->metric_name ? p->metric_name : "");
		break;
	case GWB_PROGRESS_END:
		if (p->depth > 0) {
			/* back to the enclosing run */
			snprintf(pl.p_label, sizeof(pl.p_label), "%s", pl.p_parent);
			pl.p_total = p->parent_total;
			pl.p_done = p->parent_done;
			pl.p_metric_name[0] = '\0';
			pl.p_tcur = pl.p_t0s[p->depth - 1 < 4 ? p->depth - 1 : 3];
			if (p->depth == 1)
				pl.p_parent[0] = '\0';
			break;
		}
		pl.p_done = p->total > 0 ? p->total : pl.p_done;
		pl.p_active = false;
		pl.p_parent[0] = '\0';
		snprintf(pl.p_last_label, sizeof(pl.p_last_label), "%s", pl.p_label);
		pl.p_last_elapsed = p->elapsed_s;
		pl.p_interrupted = gwb_intr_pending();
		close_now = pl.thread_live && !pl.persistent;
		break;
	}
	pthread_cond_broadcast(&pl.cv);
	pthread_mutex_unlock(&pl.mu);
	wake_panel();
	if (close_now)
		request_close_and_join();
	if (fallback)
		fallback_sink(p, ctx);
}

/* The sink for when the panel is not allowed: the stderr bar if stderr is a terminal, else a
 * line every few seconds (progress_log.c); --quiet: neither. */
static void fallback_sink(const gwb_progress *p, void *ctx)
{
	if (gwb_progress_log_quiet())
		return;
	if (isatty(STDERR_FILENO))
		gwb_progress_stderr_sink(p, ctx);
	else
		gwb_progress_log_sink(p, ctx);
}

static void at_exit(void)
{
	gwb_panel_shutdown();
}

void gwb_panel_setup(bool allowed)
{
	const char *term = getenv("TERM");

	pthread_mutex_lock(&pl.mu);
	pl.allowed = allowed;
	if (!allowed)
		snprintf(pl.reason, sizeof(pl.reason),
			 "the panel is off (--no-panel, NO_COLOR or output is not a terminal)");
	else if (!term || !*term || !strcmp(term, "dumb")) {
		pl.allowed = false;
		snprintf(pl.reason, sizeof(pl.reason),
			 "the panel is off: TERM is %s", term && *term ? "dumb" : "not set");
	}
	if (!pl.setup_done) {
		pl.setup_done = true;
		atexit(at_exit);
	}
	if (pl.allowed) {
		/* Only LC_CTYPE (UTF-8 glyphs, readline's multibyte input): number formatting
		 * (LC_NUMERIC) must stay "C" for Lua. Done here, on the main thread, at start. */
		setlocale(LC_CTYPE, "");
		pl.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	}
	allowed = pl.allowed;
	pthread_mutex_unlock(&pl.mu);
	gwb_progress_set_sink(allowed ? panel_sink : fallback_sink, NULL);
}

void gwb_panel_set_cli(void)
{
	pthread_mutex_lock(&pl.mu);
	pl.cli = true;
	pthread_mutex_unlock(&pl.mu);
}

bool gwb_panel_allowed(void)
{
	bool a;

	pthread_mutex_lock(&pl.mu);
	a = pl.allowed;
	pthread_mutex_unlock(&pl.mu);
	return a;
}

bool gwb_panel_is_up(void)
{
	bool up;

	pthread_mutex_lock(&pl.mu);
	up = pl.state == ST_UP;
	pthread_mutex_unlock(&pl.mu);
	return up;
}

bool gwb_panel_persistent(void)
{
	bool p;

	pthread_mutex_lock(&pl.mu);
	p = pl.persistent && pl.thread_live;
	pthread_mutex_unlock(&pl.mu);
	return p;
}

/* Ask the panel thread to close and wait for it. Flushes stdio first, while the panel still
 * drains the capture pipe, so that everything written so far is replayed in order. */
static void request_close_and_join(void)
{
	pthread_t t;

	fflush(stdout);
	fflush(stderr);
	pthread_mutex_lock(&pl.mu);
	if (!pl.thread_live) {
		pthread_mutex_unlock(&pl.mu);
		return;
	}
	pl.stop = true;
	t = pl.thread;
	pthread_cond_broadcast(&pl.cv);
	pthread_mutex_unlock(&pl.mu);
	wake_panel();
	pthread_join(t, NULL);
	pthread_mutex_lock(&pl.mu);
	pl.thread_live = false;
	pl.state = ST_DOWN;
	pl.persistent = false;
	pthread_mutex_unlock(&pl.mu);
}

gwb_status gwb_panel_on(void)
{
	double t0 = gwb_now();
	int st;

	pthread_mutex_lock(&pl.mu);
	if (!pl.allowed) {
		pthread_mutex_unlock(&pl.mu);
		return gwb_error(GWB_EINVAL, "panel.on: %s", pl.reason);
	}
	pl.persistent = true;
	if (!pl.thread_live && !start_thread_locked(ST_PENDING)) {
		pl.persistent = false;
		pthread_mutex_unlock(&pl.mu);
		return gwb_error(GWB_EINVAL, "panel.on: could not start the panel thread");
	}
	pthread_cond_broadcast(&pl.cv);  /* a pending panel opens now */
	pthread_mutex_unlock(&pl.mu);
	wake_panel();
	/* wait until it is on screen or has given up */
	for (;;) {
		pthread_mutex_lock(&pl.mu);
		st = pl.state == ST_UP ? 1 : (!pl.thread_live || !pl.allowed) ? -1 : 0;
		pthread_mutex_unlock(&pl.mu);
		if (st || gwb_now() - t0 > 2)
			break;
		usleep(2000);
	}
	if (st != 1) {
		request_close_and_join();
		return gwb_error(GWB_EINVAL, "panel.on: %s", pl.reason[0] ? pl.reason :
				 "the terminal could not be set up");
	}
	return GWB_OK;
}

void gwb_panel_off(void)
{
	request_close_and_join();
}

void gwb_panel_command_end(void)
{
	bool close_now;

	pthread_mutex_lock(&pl.mu);
	close_now = pl.thread_live && !pl.persistent;
	pthread_mutex_unlock(&pl.mu);
	if (close_now)
		request_close_and_join();
}

void gwb_panel_shutdown(void)
{
	request_close_and_join();
}

void gwb_panel_get_stats(gwb_panel_stats *out)
{
	pthread_mutex_lock(&pl.mu);
	*out = pl.last;
	out->opened = pl.opened;
	out->captured_bytes = pl.captured_total;
	out->rows = pl.rows;
	out->cols = pl.cols;
	out->frames = pl.frames;
	snprintf(out->reason, sizeof(out->reason), "%s", pl.allowed ? "" : pl.reason);
	pthread_mutex_unlock(&pl.mu);
}

/* --- readline's display, while a persistent panel is up --------------------------------------- */

void gwb_panel_rl_redisplay(void)
{
	const char *buf = rl_line_buffer ? rl_line_buffer : "";
	size_t n = strlen(buf);

	pthread_mutex_lock(&pl.mu);
	if (n + 1 > pl.line_cap) {
		char *nl = realloc(pl.line, n + 64);
		if (nl) {
			pl.line = nl;
			pl.line_cap = n + 64;
		}
	}
	if (pl.line && n + 1 <= pl.line_cap) {
		memcpy(pl.line, buf, n + 1);
		pl.point = rl_point;
	}
	snprintf(pl.prompt, sizeof(pl.prompt), "%s", rl_display_prompt ? rl_display_prompt :
		 rl_prompt ? rl_prompt : "");
	pl.prompt_active = true;
	pthread_mutex_unlock(&pl.mu);
	wake_panel();
}

/* --- the snapshot ----------------------------------------------------------------------------- */

static void purpose_cb(const char *purpose, size_t bytes, int count, void *ctx)
{
	struct snap *s = ctx;
	(void)count;

	if (s->npurposes < MAX_PURPOSES) {
		snprintf(s->purpose[s->npurposes], sizeof(s->purpose[0]), "%s", purpose);
		s->purpose_bytes[s->npurposes++] = bytes;
	}
}

static void kernel_cb(const gwb_kernel_stat *k, void *ctx)
{
	struct snap *s = ctx;
	struct krow *r;

	s->kernel_ms += k->total_ms;
	if (s->nk >= MAX_KROWS)
		return;
	r = &s->k[s->nk++];
	snprintf(r->name, sizeof(r->name), "%s", k->name);
	r->launches = k->launches;
	r->total_ms = k->total_ms;
	r->bytes = k->bytes;
	r->occupancy = k->occupancy;
	memcpy(r->block, k->block, sizeof(r->block));
	memcpy(r->grid, k->grid, sizeof(r->grid));
	r->regs = k->regs;
	r->smem = k->dyn_smem + k->static_smem;
	r->meas_gbps = r->meas_peak = -1;
	if (k->measured_launches > 0 && k->measured_ns > 0) {
		r->meas_gbps = k->measured_bytes / k->measured_ns;
		if (k->dram_peak_bps > 0)
			r->meas_peak = r->meas_gbps * 1e9 / k->dram_peak_bps;
		s->any_measured = true;
	}
}

static void phase_cb(const char *name, double ms, long count, void *ctx)
{
	struct snap *s = ctx;
	(void)count;

	if (s->nphases < MAX_PHASES) {
		snprintf(s->phase_name[s->nphases], sizeof(s->phase_name[0]), "%s", name);
		s->phase_ms[s->nphases++] = ms;
	} else {
		/* keep the newest: shift left */
		memmove(s->phase_name[0], s->phase_name[1], sizeof(s->phase_name[0]) * (MAX_PHASES - 1));
		memmove(s->phase_ms, s->phase_ms + 1, sizeof(s->phase_ms[0]) * (MAX_PHASES - 1));
		snprintf(s->phase_name[MAX_PHASES - 1], sizeof(s->phase_name[0]), "%s", name);
		s->phase_ms[MAX_PHASES - 1] = ms;
	}
}

static void name_cb(const char *name, void *ctx)
{
	(void)name;
	++*(int *)ctx;
}

/* Has gwb touched the GPU? (Then reading it costs nothing new.) */
static bool gpu_in_use(void)
{
	int nalloc = 0, nreg = 0;
	gwb_xfer_stat x;

	gwb_gpu_ledger_total(&nalloc);
	if (nalloc)
		return true;
	gwb_prof_each_registered(name_cb, &nreg);
	if (nreg)
		return true;
	gwb_prof_transfers(&x);
	return x.count[0] + x.count[1] + x.count[2] > 0;
}

static void collect(struct snap *s, bool sample)
{
	static gwb_gpu_info info_cache;
	static bool have_info;
	double now = gwb_now();

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&pl.mu);
	s->active = pl.p_active;
	memcpy(s->label, pl.p_label, sizeof(s->label));
	memcpy(s->metric_name, pl.p_metric_name, sizeof(s->metric_name));
	memcpy(s->last_label, pl.p_last_label, sizeof(s->last_label));
	s->done = pl.p_done;
	s->total = pl.p_total;
	s->metric = pl.p_metric;
	s->elapsed = pl.p_active ? now - pl.p_tcur : 0;
	memcpy(s->parent, pl.p_parent, sizeof(s->parent));
	s->parent_done = pl.p_parent_done;
	s->parent_total = pl.p_parent_total;
	s->last_elapsed = pl.p_last_elapsed;
	s->interrupted = pl.p_interrupted;
	pthread_mutex_unlock(&pl.mu);

	gwb_prof_proc(&s->proc);
	s->ncpu = gwb_cpu_count();
	gwb_prof_each_phase(phase_cb, s);
	/* the phases of this operation (the panel's line shows the session's) */
	pthread_mutex_lock(&pl.mu);
	{
		int i, j;
		for (i = 0; i < s->nphases; i++) {
			double ms = s->phase_ms[i];
			for (j = 0; j < pl.nbase_phase; j++)
				if (!strcmp(pl.base_phase[j].name, s->phase_name[i]))
					ms -= pl.base_phase[j].ms;
			if (ms <= 1e-9)
				continue;
			memcpy(s->op_phase_name[s->op_nphases], s->phase_name[i], sizeof(s->phase_name[0]));
			s->op_phase_ms[s->op_nphases++] = ms;
		}
	}
	pthread_mutex_unlock(&pl.mu);

	if (gpu_in_use()) {
		if (!have_info && gwb_gpu_get_info(&info_cache) == GWB_OK)
			have_info = true;
		if (have_info) {
			s->gpu = true;
			s->info = info_cache;
			if (gwb_gpu_mem(&s->mem_free, &s->mem_total) != GWB_OK)
				s->mem_total = info_cache.mem_total, s->mem_free = 0;
			s->ours = gwb_gpu_ledger_total(&s->nalloc);
			gwb_gpu_ledger_each(purpose_cb, s);
			gwb_prof_transfers(&s->x);
			gwb_prof_each_kernel_nowait(kernel_cb, s, &s->pending);
			pthread_mutex_lock(&pl.mu);
			for (int i = 0; i < s->nk; i++) {
				struct krow d = s->k[i];
				for (int j = 0; j < pl.nbase_k; j++)
					if (!strcmp(pl.base_k[j].name, d.name)) {
						d.launches -= pl.base_k[j].launches;
						d.total_ms -= pl.base_k[j].ms;
					}
				if (d.launches <= 0)
					continue;
				s->op_nk++;
				s->op_kernel_ms += d.total_ms;
				if (s->op_nk == 1 || d.total_ms > s->op_top.total_ms)
					s->op_top = d;
			}
			for (int i = 0; i < 3; i++) {
				s->op_x.count[i] = s->x.count[i] - pl.base_x.count[i];
				s->op_x.bytes[i] = s->x.bytes[i] - pl.base_x.bytes[i];
				s->op_x.ms[i] = s->x.ms[i] - pl.base_x.ms[i];
				s->op_x.pinned_bytes[i] = s->x.pinned_bytes[i] - pl.base_x.pinned_bytes[i];
			}
			pthread_mutex_unlock(&pl.mu);
		}
	}

	pthread_mutex_lock(&pl.mu);
	if (sample) {
		/* CPU cores busy over the last interval (at least half a second) */
		if (pl.last_wall == 0) {
			pl.last_wall = pl.open_wall = now;
			pl.last_cpu_s = pl.open_cpu_s = s->proc.cpu_s;
		} else if (now - pl.last_wall >= 0.5) {
			pl.cpu_cores = (s->proc.cpu_s - pl.last_cpu_s) / (now - pl.last_wall);
			pl.last_wall = now;
			pl.last_cpu_s = s->proc.cpu_s;
		}
		if (s->gpu != pl.spark_gpu) {
			pl.nspark = 0;
			pl.spark_gpu = s->gpu;
		}
		pl.spark[pl.spark_head] = s->gpu ? (double)(s->mem_total - s->mem_free) :
					 (double)s->proc.rss_bytes;
		pl.spark_head = (pl.spark_head + 1) % SPARK_N;
		if (pl.nspark < SPARK_N)
			pl.nspark++;
		if (s->ours > pl.peak_ours)
			pl.peak_ours = s->ours;
	}
	pl.last.gpu = s->gpu;
	pl.last.mem_free = s->mem_free;
	pl.last.mem_total = s->mem_total;
	pl.last.ours = s->ours;
	pl.last.nk = s->nk < 8 ? s->nk : 8;
	for (int i = 0; i < pl.last.nk; i++) {
		snprintf(pl.last.k[i].name, sizeof(pl.last.k[i].name), "%s", s->k[i].name);
		pl.last.k[i].block = s->k[i].block[0] * s->k[i].block[1] * s->k[i].block[2];
		pl.last.k[i].occupancy = s->k[i].occupancy;
	}
	s->cpu_cores = pl.cpu_cores;
	if (pl.open_wall > 0 && now - pl.open_wall > 0.05)
		s->cpu_cores_avg = (s->proc.cpu_s - pl.open_cpu_s) / (now - pl.open_wall);
	pthread_mutex_unlock(&pl.mu);
}

/* --- the summary (scrollback and panel.status) ------------------------------------------------- */

static size_t appendf(char *buf, size_t n, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t appendf(char *buf, size_t n, size_t at, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (at >= n)
		return at;
	va_start(ap, fmt);
	r = vsnprintf(buf + at, n - at, fmt, ap);
	va_end(ap);
	if (r < 0)
		return at;
	return at + (size_t)r < n ? at + (size_t)r : n - 1;
}

static void summary_of(const struct snap *s, char *buf, size_t n, bool utf8)
{
	const char *dot = utf8 ? " \xc2\xb7 " : " | ";
	char a[32], b[32];
	size_t at = 0;
	int i;

	buf[0] = '\0';
	if (s->active) {
		human_secs(a, sizeof(a), s->elapsed);
		if (s->total > 0)
			at = appendf(buf, n, at, "gwb: %s %.0f/%.0f after %s", s->label, s->done,
				     s->total, a);
		else
			at = appendf(buf, n, at, "gwb: %s %.0f after %s", s->label, s->done, a);
		if (s->metric_name[0])
			at = appendf(buf, n, at, ", %s %.3g", s->metric_name, s->metric);
	} else if (s->last_label[0]) {
		human_secs(a, sizeof(a), s->last_elapsed);
		at = appendf(buf, n, at, s->interrupted ? "gwb: %s stopped by Ctrl-C after %s" :
			     "gwb: %s done in %s", s->last_label, a);
	} else {
		at = appendf(buf, n, at, "gwb: idle");
	}
	/* the phases, unless the only one is the operation itself */
	if (s->op_nphases > 1 || (s->op_nphases == 1 && strcmp(s->op_phase_name[0],
							    s->active ? s->label : s->last_label)))
		for (i = 0; i < s->op_nphases && i < 6; i++) {
			human_secs(a, sizeof(a), s->op_phase_ms[i] / 1e3);
			at = appendf(buf, n, at, "%s%s %s", i ? ", " : dot, s->op_phase_name[i], a);
		}
	human_bytes(a, sizeof(a), (double)s->proc.rss_bytes);
	human_bytes(b, sizeof(b), (double)s->proc.rss_peak_bytes);
	at = appendf(buf, n, at, "%s%.1f cores, %d threads, RSS %s", dot,
		     s->cpu_cores_avg > 0 ? s->cpu_cores_avg : s->cpu_cores, s->proc.threads, a);
	if (strcmp(a, b))
		at = appendf(buf, n, at, " (peak %s)", b);
	if (s->gpu && (s->op_nk || s->op_x.count[0] + s->op_x.count[1] + s->op_x.count[2] ||
		       s->ours)) {
		const char *name = s->info.name;
		if (!strncmp(name, "NVIDIA ", 7))
			name += 7;
		human_bytes(a, sizeof(a), (double)s->ours);
		human_bytes(b, sizeof(b), (double)(s->mem_total - s->mem_free));
		at = appendf(buf, n, at, "\ngwb: %s%sours %s of %s used", name, dot, a, b);
		if (s->op_nk) {
			human_secs(a, sizeof(a), s->op_kernel_ms / 1e3);
			human_secs(b, sizeof(b), s->op_top.total_ms / 1e3);
			at = appendf(buf, n, at, "%s%d kernel%s %s, top %s %s at %.0f%% occupancy", dot,
				     s->op_nk, s->op_nk == 1 ? "" : "s", a, s->op_top.name, b,
				     s->op_top.occupancy * 100);
		}
		for (i = 0; i < 3; i++) {
			static const char *dn[3] = {"H2D", "D2H", "D2D"};
			if (s->op_x.count[i] <= 0)
				continue;
			human_bytes(a, sizeof(a), s->op_x.bytes[i]);
			at = appendf(buf, n, at, "%s%s %s %.1f GB/s", dot, dn[i], a,
				     s->op_x.ms[i] > 0 ? s->op_x.bytes[i] / (s->op_x.ms[i] * 1e6) : 0.0);
		}
	}
	(void)at;
}

void gwb_panel_summary(char *buf, size_t n)
{
	struct snap *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(buf, n, "gwb: out of memory");
		return;
	}
	collect(s, false);
	summary_of(s, buf, n, false);
	free(s);
}

/* --- output capture ---------------------------------------------------------------------------- */

static void log_push_line(void)
{
	int slot = (ui.log_head + ui.log_n) % LOG_LINES;

	ui.cur[ui.cur_len] = '\0';
	if (ui.log_n == LOG_LINES) {
		slot = ui.log_head;
		ui.log_head = (ui.log_head + 1) % LOG_LINES;
	} else {
		ui.log_n++;
	}
	memcpy(ui.log[slot], ui.cur, (size_t)ui.cur_len + 1);
	ui.cur_len = 0;
}

/* Feed captured bytes into the panel's view of the output: escape sequences and control
 * characters are dropped, \r rewinds the line, \t expands. */
static void log_feed(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (ui.esc == 1) {          /* after ESC */
			ui.esc = c == '[' ? 2 : c == ']' ? 3 : 0;
			continue;
		}
		if (ui.esc == 2) {          /* CSI: until a final byte */
			if (c >= 0x40 && c <= 0x7e)
				ui.esc = 0;
			continue;
		}
		if (ui.esc == 3) {          /* OSC: until BEL or ESC */
			if (c == 7)
				ui.esc = 0;
			else if (c == 27)
				ui.esc = 1;
			continue;
		}
		if (c == 27) {
			ui.esc = 1;
		} else if (c == '\n') {
			log_push_line();
		} else if (c == '\r') {
			if (i + 1 < n && p[i + 1] == '\n')
				continue;
			ui.cur_len = 0;
		} else if (c == '\b') {
			if (ui.cur_len)
				ui.cur_len--;
		} else if (c == '\t') {
			do
				ui.cur[ui.cur_len++] = ' ';
			while (ui.cur_len % 8 && ui.cur_len < LOG_LINE_MAX - 1);
		} else if (c >= 0x20 || c >= 0x80) {
			if (ui.cur_len < LOG_LINE_MAX - 1)
				ui.cur[ui.cur_len++] = (char)c;
		}
		if (ui.cur_len >= LOG_LINE_MAX - 1)
			log_push_line();
	}
}

static void cap_append(const char *p, size_t n)
{
	if (ui.cap_len + n > ui.cap_size) {
		size_t want = ui.cap_size ? ui.cap_size * 2 : 65536;
		while (want < ui.cap_len + n)
			want *= 2;
		if (want > CAPTURE_MAX)
			want = CAPTURE_MAX;
		if (want > ui.cap_size) {
			char *nc = realloc(ui.cap, want);
			if (nc) {
				ui.cap = nc;
				ui.cap_size = want;
			}
		}
	}
	if (ui.cap_len + n > ui.cap_size) {
		/* full: drop the oldest bytes */
		size_t drop = ui.cap_len + n - ui.cap_size;
		if (drop > ui.cap_len)
			drop = ui.cap_len;
		memmove(ui.cap, ui.cap + drop, ui.cap_len - drop);
		ui.cap_len -= drop;
		ui.cap_dropped += (long)drop;
		if (n > ui.cap_size) {
			ui.cap_dropped += (long)(n - ui.cap_size);
			p += n - ui.cap_size;
			n = ui.cap_size;
		}
	}
	if (ui.cap) {
		memcpy(ui.cap + ui.cap_len, p, n);
		ui.cap_len += n;
	}
}

/* Read what is in the capture pipe now. Returns bytes read. */
static long drain_capture(void)
{
	char buf[8192];
	long total = 0;
	ssize_t r;

	if (ui.cap_r < 0)
		return 0;
	for (;;) {
		r = read(ui.cap_r, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		cap_append(buf, (size_t)r);
		log_feed(buf, (size_t)r);
		total += r;
	}
	if (total) {
		pthread_mutex_lock(&pl.mu);
		pl.captured_total += total;
		pthread_mutex_unlock(&pl.mu);
	}
	return total;
}

/* --- terminal restore on fatal signals ----------------------------------------------------------- */

static const int fatal_sigs[] = {SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL};
static struct sigaction old_fatal[sizeof(fatal_sigs) / sizeof(fatal_sigs[0])];

static void on_fatal(int sig)
{
	static const char seq[] = "\033[0m\033[?25h\033[?1049l\r\n";
	int fd = restore_fd;

	if (fd >= 0) {
		if (restore_have_tio)
			tcsetattr(fd, TCSANOW, &restore_tio);
		write_all(fd, seq, sizeof(seq) - 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fatal_handlers(bool install)
{
	size_t i;

	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++) {
		if (install) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_fatal;
			sigemptyset(&sa.sa_mask);
			sa.sa_flags = SA_RESETHAND;
			sigaction(fatal_sigs[i], &sa, &old_fatal[i]);
		} else {
			sigaction(fatal_sigs[i], &old_fatal[i], NULL);
		}
	}
}

/* --- open / close (panel thread) ----------------------------------------------------------------- */

enum { C_OURS = 1, C_OTHERS, C_FREE, C_HEAD, C_BAR, C_DIM, C_WARN, C_P2, C_P3, C_P4 };

static bool ui_open(void)
{
	int p[2] = {-1, -1}, in_fd = -1, out_fd = -1;
	const char *term = getenv("TERM");

	fflush(stdout);
	fflush(stderr);
	ui.tty_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	ui.saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (ui.tty_fd < 0 || ui.saved_err < 0)
		goto fail;
	ui.have_tio = tcgetattr(ui.tty_fd, &ui.tio) == 0;
	out_fd = fcntl(ui.tty_fd, F_DUPFD_CLOEXEC, 3);
	in_fd = isatty(STDIN_FILENO) ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3) :
					 fcntl(ui.tty_fd, F_DUPFD_CLOEXEC, 3);
	if (out_fd < 0 || in_fd < 0)
		goto fail;
	ui.out_fp = fdopen(out_fd, "w");
	if (!ui.out_fp)
		goto fail;
	out_fd = -1;
	ui.in_fp = fdopen(in_fd, "r");
	if (!ui.in_fp)
		goto fail;
	in_fd = -1;
	ui.scr = newterm(term, ui.out_fp, ui.in_fp);
	if (!ui.scr) {
		snprintf(pl.reason, sizeof(pl.reason), "the terminal '%s' is not known to ncurses",
			 term ? term : "");
		goto fail;
	}
	set_term(ui.scr);
	noecho();
	cbreak();
	curs_set(0);
	ui.colors = has_colors();
	if (ui.colors) {
		start_color();
		use_default_colors();
		init_pair(C_OURS, COLOR_GREEN, -1);
		init_pair(C_OTHERS, COLOR_YELLOW, -1);
		init_pair(C_FREE, COLOR_BLUE, -1);
		init_pair(C_HEAD, COLOR_BLACK, COLOR_CYAN);
		init_pair(C_BAR, COLOR_CYAN, -1);
		init_pair(C_DIM, COLOR_WHITE, -1);
		init_pair(C_WARN, COLOR_RED, -1);
		init_pair(C_P2, COLOR_CYAN, -1);
		init_pair(C_P3, COLOR_MAGENTA, -1);
		init_pair(C_P4, COLOR_WHITE, -1);
	}
	/* Capture stdout and stderr from now on. */
	if (pipe2(p, O_CLOEXEC) != 0)
		goto fail_screen;
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	ui.cap_err = isatty(STDERR_FILENO);
	if (dup2(p[1], STDOUT_FILENO) < 0 || (ui.cap_err && dup2(p[1], STDERR_FILENO) < 0)) {
		dup2(ui.tty_fd, STDOUT_FILENO);
		dup2(ui.saved_err, STDERR_FILENO);
		close(p[0]);
		close(p[1]);
		goto fail_screen;
	}
	close(p[1]);
	ui.cap_r = p[0];
	ui.cap_len = 0;
	ui.cap_dropped = 0;
	ui.log_n = ui.log_head = ui.cur_len = ui.esc = 0;
	if (ui.have_tio) {
		restore_tio = ui.tio;
		restore_have_tio = 1;
	}
	restore_fd = ui.tty_fd;
	fatal_handlers(true);
	return true;

fail_screen:
	endwin();
	delscreen(ui.scr);
	ui.scr = NULL;
fail:
	if (!pl.reason[0])
		snprintf(pl.reason, sizeof(pl.reason), "could not set up the terminal: %s",
			 strerror(errno));
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	if (ui.in_fp)
		fclose(ui.in_fp);
	if (ui.out_fp)
		fclose(ui.out_fp);
	ui.in_fp = ui.out_fp = NULL;
	if (ui.tty_fd >= 0)
		close(ui.tty_fd);
	if (ui.saved_err >= 0)
		close(ui.saved_err);
	ui.tty_fd = ui.saved_err = -1;
	return false;
}

static void ui_close(const char *summary)
{
	fatal_handlers(false);
	drain_capture();
	/* stdout and stderr back to the terminal before anything else */
	dup2(ui.tty_fd, STDOUT_FILENO);
	if (ui.cap_err)
		dup2(ui.saved_err, STDERR_FILENO);
	drain_capture();
	close(ui.cap_r);
	ui.cap_r = -1;
	endwin();
	delscreen(ui.scr);
	ui.scr = NULL;
	fclose(ui.out_fp);
	fclose(ui.in_fp);
	ui.out_fp = ui.in_fp = NULL;
	if (ui.have_tio)
		tcsetattr(ui.tty_fd, TCSADRAIN, &ui.tio);
	restore_fd = -1;
	restore_have_tio = 0;
	/* the replay: everything printed while the panel was up, then the summary */
	if (ui.cap_dropped) {
		char note[128];
		int k = snprintf(note, sizeof(note), "[gwb panel: %ld bytes of earlier output were "
				 "dropped]\n", ui.cap_dropped);
		write_all(ui.tty_fd, note, (size_t)k);
	}
	write_all(ui.tty_fd, ui.cap, ui.cap_len);
	if (ui.cap_len && ui.cap[ui.cap_len - 1] != '\n')
		write_all(ui.tty_fd, "\n", 1);
	if (summary && *summary) {
		write_all(ui.tty_fd, summary, strlen(summary));
		write_all(ui.tty_fd, "\n", 1);
	}
	free(ui.cap);
	ui.cap = NULL;
	ui.cap_len = ui.cap_size = 0;
	close(ui.tty_fd);
	close(ui.saved_err);
	ui.tty_fd = ui.saved_err = -1;
}

/* --- drawing ---------------------------------------------------------------------------------------- */

static int W, H;

/* Put s at (y, x), at most maxw columns (UTF-8 aware; our glyphs are one column wide). */
static void put(int y, int x, int maxw, const char *s)
{
	int cols = 0;
	const char *p = s;

	if (y < 0 || y >= H || x >= W || maxw <= 0)
		return;
	if (x + maxw > W)
		maxw = W - x;
	while (*p && cols < maxw) {
		unsigned char c = (unsigned char)*p;
		int len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		int k;
		for (k = 1; k < len; k++)
			if (!p[k])
				break;
		if (k < len)
			break;
		p += len;
		cols++;
	}
	mvaddnstr(y, x, s, (int)(p - s));
}

static void putf(int y, int x, int maxw, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void putf(int y, int x, int maxw, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	put(y, x, maxw, buf);
}

static void style_on(int pair, int extra)
{
	if (ui.colors && pair)
		attron(COLOR_PAIR(pair));
	if (extra)
		attron(extra);
}

static void style_off(int pair, int extra)
{
	if (ui.colors && pair)
		attroff(COLOR_PAIR(pair));
	if (extra)
		attroff(extra);
}

static const char *glyph(int which)
{
	/* 0 full, 1 others, 2 free, 3 progress empty */
	static const char *u[] = {"\xe2\x96\x88", "\xe2\x96\x93", "\xe2\x96\x91", "\xc2\xb7"};
	static const char *a[] = {"#", "=", ".", "."};
	return pl.utf8 ? u[which] : a[which];
}

/* A horizontal bar of width w: segments of fractions f[0..n) drawn with glyphs g and colors. */
static void bar(int y, int x, int w, const double *f, const int *g, const int *col, int n)
{
	int i, j, at = 0;

	for (i = 0; i < n && at < w; i++) {
		int cells = (int)floor(f[i] * w + 0.5);
		if (i == n - 1)
			cells = w - at;
		if (cells > w - at)
			cells = w - at;
		style_on(col[i], 0);
		for (j = 0; j < cells; j++)
			put(y, x + at + j, 1, glyph(g[i]));
		style_off(col[i], 0);
		at += cells;
	}
}

static void draw_progress_bar(int y, int x, int w, double frac)
{
	static const char *eighths[] = {"", "\xe2\x96\x8f", "\xe2\x96\x8e", "\xe2\x96\x8d",
		"\xe2\x96\x8c", "\xe2\x96\x8b", "\xe2\x96\x8a", "\xe2\x96\x89"};
	int i, full, part;

	if (w <= 0)
		return;
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	full = (int)(frac * w);
	part = (int)((frac * w - full) * 8);
	style_on(C_BAR, 0);
	for (i = 0; i < full; i++)
		put(y, x + i, 1, glyph(0));
	if (full < w && part && pl.utf8)
		put(y, x + full, 1, eighths[part]);
	style_off(C_BAR, 0);
	style_on(C_DIM, A_DIM);
	for (i = full + (part && pl.utf8 ? 1 : 0); i < w; i++)
		put(y, x + i, 1, glyph(3));
	style_off(C_DIM, A_DIM);
}

static void draw_sparkline(int y, int x, int w, double *maxv)
{
	static const char *u[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
		"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
	static const char *a[] = {"_", ".", ":", "-", "=", "+", "*", "#"};
	double v[SPARK_N], mx = 0, mn = 0;
	int n, i;

	pthread_mutex_lock(&pl.mu);
	n = pl.nspark < w ? pl.nspark : w;
	for (i = 0; i < n; i++)
		v[i] = pl.spark[(pl.spark_head - n + i + SPARK_N) % SPARK_N];
	pthread_mutex_unlock(&pl.mu);
	for (i = 0; i < n; i++) {
		if (v[i] > mx)
			mx = v[i];
		if (i == 0 || v[i] < mn)
			mn = v[i];
	}
	*maxv = mx;
	mn = 0;  /* an honest scale: from zero to the largest value in view */
	style_on(C_OURS, 0);
	for (i = 0; i < n; i++) {
		int lvl = mx > mn ? (int)((v[i] - mn) / (mx - mn) * 7 + 0.5) : 0;
		if (lvl < 0)
			lvl = 0;
		if (lvl > 7)
			lvl = 7;
		put(y, x + i, 1, pl.utf8 ? u[lvl] : a[lvl]);
	}
	style_off(C_OURS, 0);
}

static void fmt_block(char *buf, size_t n, const int *b)
{
	if (b[1] <= 1 && b[2] <= 1)
		snprintf(buf, n, "%d", b[0]);
	else if (b[2] <= 1)
		snprintf(buf, n, "%dx%d", b[0], b[1]);
	else
		snprintf(buf, n, "%dx%dx%d", b[0], b[1], b[2]);
}

static void draw(const struct snap *s, bool persistent)
{
	char a[48], b[48], c[48], d[48];
	const char *dot = pl.utf8 ? " \xc2\xb7 " : " | ";
	int y = 0, i, log_rows, krows, bottom;

	erase();
	if (H < 3 || W < 20) {
		put(0, 0, W, "gwb panel: window too small");
		return;
	}
	/* header */
	style_on(C_HEAD, A_REVERSE * !ui.colors | A_BOLD);
	move(0, 0);
	for (i = 0; i < W; i++)
		addch(' ');
	if (s->gpu)
		putf(0, 0, W, " gwb %s%s%d SMs%sCC %d.%d%sSM %d MHz%smem %d MHz %d-bit", s->info.name,
		     dot, s->info.sms, dot, s->info.cc_major, s->info.cc_minor, dot,
		     s->info.clock_khz / 1000, dot, s->info.mem_clock_khz / 1000,
		     s->info.mem_bus_bits);
	else
		putf(0, 0, W, " gwb%sCPU: %d cores%sno GPU in use", dot, s->ncpu, dot);
	style_off(C_HEAD, A_REVERSE * !ui.colors | A_BOLD);
	y = 1;

	/* progress */
	if (s->active) {
		double frac = s->total > 0 ? s->done / s->total : 0;
		double eta = s->done > 0 && s->total > 0 ? s->elapsed * (s->total - s->done) / s->done : -1;
		int lw = 12, bw;
		char right[128];
		human_secs(a, sizeof(a), s->elapsed);
		human_secs(b, sizeof(b), eta);
		int dec = s->total != floor(s->total) || s->done != floor(s->done) ? 1 : 0;
		if (s->total > 0)
			snprintf(right, sizeof(right), " %.*f/%.*f %3.0f%% %s eta %s", dec, s->done, dec,
				 s->total, frac * 100, a, b);
		else
			snprintf(right, sizeof(right), " %.*f %s", dec, s->done, a);
		if (s->metric_name[0]) {
			size_t l = strlen(right);
			snprintf(right + l, sizeof(right) - l, " %s %.3g", s->metric_name, s->metric);
		}
		char lab[160];
		if (s->parent[0])
			snprintf(lab, sizeof(lab), "%s %.0f/%.0f %s %s", s->parent, s->parent_done + 1,
				 s->parent_total, pl.utf8 ? "\xe2\x80\xba" : ">", s->label);
		else
			snprintf(lab, sizeof(lab), "%s", s->label);
		lw = (int)strlen(lab) + 2;
		if (lw < 12)
			lw = 12;
		if (lw > W / 3)
			lw = W / 3;
		style_on(0, A_BOLD);
		put(y, 0, lw - 1, lab);
		style_off(0, A_BOLD);
		bw = W - lw - (int)strlen(right);
		if (bw > 40)
			bw = W - lw - (int)strlen(right) > 60 ? 60 : bw;
		if (s->total > 0 && bw >= 5) {
			draw_progress_bar(y, lw, bw, frac);
			put(y, lw + bw, W - lw - bw, right);
		} else {
			put(y, lw, W - lw, right);
		}
	} else if (s->last_label[0]) {
		human_secs(a, sizeof(a), s->last_elapsed);
		putf(y, 0, W, "idle%slast: %s, %s", dot, s->last_label, a);
	} else {
		put(y, 0, W, "idle");
	}
	y++;
	/* phases: this operation's (not the session's), as many as fit, then "+N more" */
	if (s->op_nphases || s->active) {
		char line[512], item[160], run[160] = "";
		size_t at = 0, room = (size_t)(W > 0 ? W : 0), dw = 3;  /* a separator's columns */
		at = appendf(line, sizeof(line), at, "phases");
		if (s->active) {
			human_secs(a, sizeof(a), s->elapsed);
			snprintf(run, sizeof(run), "%s %s (running)", s->label, a);
		}
		for (i = 0; i < s->op_nphases; i++) {
			size_t more = i + 1 < s->op_nphases || run[0] ? 12 : 0;  /* " +NN more" */
			human_secs(a, sizeof(a), s->op_phase_ms[i] / 1e3);
			snprintf(item, sizeof(item), "%s %s", s->op_phase_name[i], a);
			if (at + dw + strlen(item) + more + (run[0] ? dw + strlen(run) : 0) > room &&
			    i > 0) {
				at = appendf(line, sizeof(line), at, "%s+%d more", dot, s->op_nphases - i);
				break;
			}
			at = appendf(line, sizeof(line), at, "%s%s", i ? dot : "  ", item);
		}
		if (run[0])
			at = appendf(line, sizeof(line), at, "%s%s", s->op_nphases ? dot : "  ", run);
		put(y++, 0, W, line);
	}
	/* CPU */
	human_bytes(a, sizeof(a), (double)s->proc.rss_bytes);
	human_bytes(b, sizeof(b), (double)s->proc.rss_peak_bytes);
	putf(y++, 0, W, "cpu     %.1f of %d cores busy%s%d threads%sRSS %s (peak %s)", s->cpu_cores,
	     s->ncpu, dot, s->proc.threads, dot, a, b);

	if (s->gpu && H >= 12) {
		/* the bar: our purposes (the 3 largest in their own colours, the rest together),
		 * other processes, free */
		static const int pcol[4] = {C_OURS, C_P2, C_P3, C_P4};
		double used = (double)(s->mem_total - s->mem_free), tot = (double)s->mem_total;
		double others = used - (double)s->ours, f[6], rest = 0;
		int g[6], col[6], ord[MAX_PURPOSES], np = 0, nseg = 0, j;
		int bw = W - 8 > 50 ? 50 : W - 8;
		if (others < 0)
			others = 0;
		for (i = 0; i < s->npurposes; i++)
			ord[i] = i;
		for (i = 1; i < s->npurposes; i++)  /* largest first */
			for (j = i; j > 0 && s->purpose_bytes[ord[j]] > s->purpose_bytes[ord[j - 1]]; j--) {
				int t = ord[j];
				ord[j] = ord[j - 1];
				ord[j - 1] = t;
			}
		for (i = 0; i < s->npurposes; i++) {
			double fr = tot > 0 ? s->purpose_bytes[ord[i]] / tot : 0;
			if (i < 3) {
				f[nseg] = fr;
				g[nseg] = 0;
				col[nseg++] = pcol[i];
				np++;
			} else {
				rest += fr;
			}
		}
		if (rest > 0) {
			f[nseg] = rest;
			g[nseg] = 0;
			col[nseg++] = pcol[3];
		}
		/* every purpose we hold gets at least one cell */
		for (i = 0; i < nseg; i++)
			if (f[i] > 0 && f[i] * bw < 1)
				f[i] = 1.0 / bw;
		f[nseg] = tot > 0 ? others / tot : 0;
		g[nseg] = 1;
		col[nseg++] = C_OTHERS;
		f[nseg] = 0;  /* free: the remainder */
		g[nseg] = 2;
		col[nseg++] = C_FREE;
		put(y, 0, 8, "memory");
		if (bw > 4)
			bar(y, 8, bw, f, g, col, nseg);
		human_bytes(a, sizeof(a), (double)s->ours);
		human_bytes(b, sizeof(b), others);
		human_bytes(c, sizeof(c), (double)s->mem_free);
		human_bytes(d, sizeof(d), tot);
		{
			int x = 8 + (bw > 4 ? bw + 1 : 0);
			style_on(C_OURS, 0);
			putf(y, x, W - x, "ours %s", a);
			style_off(C_OURS, 0);
			x += 5 + (int)strlen(a);
			style_on(C_OTHERS, 0);
			putf(y, x, W - x, " others %s", b);
			style_off(C_OTHERS, 0);
			x += 8 + (int)strlen(b);
			putf(y, x, W - x, " free %s/%s", c, d);
		}
		y++;
		/* by purpose, in the bar's colours */
		{
			int x = 8;
			if (!s->npurposes)
				put(y, x, W - x, "(no live allocations of ours)");
			for (i = 0; i < s->npurposes && x < W; i++) {
				char item[96];
				human_bytes(a, sizeof(a), (double)s->purpose_bytes[ord[i]]);
				snprintf(item, sizeof(item), "%s %s", s->purpose[ord[i]], a);
				if (i) {
					put(y, x, W - x, dot);
					x += 3;  /* " · " and " | " are three columns */
				}
				style_on(pcol[i < 3 ? i : 3], 0);
				put(y, x, W - x, item);
				style_off(pcol[i < 3 ? i : 3], 0);
				x += (int)strlen(item);
			}
			y++;
		}
		(void)np;
	}
	/* sparkline */
	if (H >= 10) {
		double mx = 0;
		int sx = 8, sw = W - 8 - 22;
		if (sw > 8) {
			put(y, 0, 8, s->gpu ? "gpu mem" : "rss");
			draw_sparkline(y, sx, sw, &mx);
			human_bytes(a, sizeof(a), mx);
			putf(y, sx + sw + 1, W - sx - sw - 1, "max %s", a);
			y++;
		}
	}
	/* transfers */
	if (s->gpu) {
		char line[512];
		size_t at = appendf(line, sizeof(line), 0, "xfer    ");
		static const char *dn[3] = {"H2D", "D2H", "D2D"};
		int any = 0;
		for (i = 0; i < 3; i++) {
			if (!s->x.count[i])
				continue;
			human_bytes(a, sizeof(a), s->x.bytes[i]);
			at = appendf(line, sizeof(line), at, "%s%s %s %.1f GB/s", any++ ? dot : "", dn[i], a,
				     s->x.ms[i] > 0 ? s->x.bytes[i] / (s->x.ms[i] * 1e6) : 0.0);
			if (s->x.bytes[i] > 0 && i < 2)
				at = appendf(line, sizeof(line), at, " (%.0f%% pinned)",
					     100 * s->x.pinned_bytes[i] / s->x.bytes[i]);
		}
		if (!any)
			appendf(line, sizeof(line), at, "none yet");
		put(y++, 0, W, line);
	}

	/* bottom: prompt (persistent) or the hint line */
	bottom = H - 1;
	/* rows left for the kernel table and the output */
	{
		int left = bottom - y;
		bool have_log = ui.log_n > 0 || ui.cur_len > 0 || persistent;
		int want_k = s->gpu ? (s->nk ? s->nk : 1) + 1 : 0;
		int half = left / 2 > 2 ? left / 2 : 2;
		krows = have_log ? (want_k < half ? want_k : half) : want_k;
		if (krows > left)
			krows = left;
		if (krows < 0)
			krows = 0;
		log_rows = have_log ? left - krows : 0;
	}
	if (krows > 0) {
		int nw = W - 57;
		bool wide = W >= 110;
		/* measured beside declared, where gpu.profile measured (CUPTI's DRAM bytes) */
		bool meas = s->any_measured && W >= 100;
		int mcol;
		if (wide)
			nw = W - 57 - 24;
		if (meas)
			nw -= 16;
		mcol = nw + 57 + (wide ? 24 : 0);
		if (nw < 8)
			nw = 8;
		char head[64];
		if (s->pending)
			snprintf(head, sizeof(head), "kernel (by time; %d pending)", s->pending);
		else
			snprintf(head, sizeof(head), "kernel (by total time)");
		style_on(0, A_BOLD | A_UNDERLINE);
		putf(y, 0, W, "%-*.*s %8s %9s %8s %4s %7s %5s %7s%s", nw, nw, head,
		     "launches", "mean us", "block", "regs", "smem", "occ%", "GB/s",
		     wide ? "     grid     total ms" : "");
		if (meas)
			putf(y, mcol, W - mcol, " %9s %5s", "meas GB/s", "%peak");
		style_off(0, A_BOLD | A_UNDERLINE);
		y++;
		if (!s->nk && krows > 1) {
			put(y, 0, W, "(no kernels launched since gpu.reset())");
			y++;
		}
		for (i = 0; i < s->nk && i < krows - 1 && i < MAX_KROWS; i++) {
			const struct krow *k = &s->k[i];
			char blk[24], grd[32], nm[80];
			double mean_us = k->launches ? k->total_ms * 1e3 / k->launches : 0;
			double gbps = k->total_ms > 0 ? k->bytes / (k->total_ms * 1e6) : 0;
			fmt_block(blk, sizeof(blk), k->block);
			fmt_block(grd, sizeof(grd), k->grid);
			human_bytes(a, sizeof(a), (double)k->smem);
			if ((int)strlen(k->name) > nw)
				snprintf(nm, sizeof(nm), "%.*s~", nw - 1, k->name);
			else
				snprintf(nm, sizeof(nm), "%s", k->name);
			putf(y, 0, W, "%-*s %8ld %9.1f %8s %4d %7s %5.0f %7.1f", nw, nm, k->launches,
			     mean_us, blk, k->regs, k->smem ? a : "0", k->occupancy * 100, gbps);
			if (wide)
				putf(y, nw + 57, W - nw - 57, " %9s %12.2f", grd, k->total_ms);
			if (meas && k->meas_gbps >= 0 && k->meas_peak >= 0)
				putf(y, mcol, W - mcol, " %9.1f %4.0f%%", k->meas_gbps, k->meas_peak * 100);
			else if (meas && k->meas_gbps >= 0)
				putf(y, mcol, W - mcol, " %9.1f %5s", k->meas_gbps, "-");
			else if (meas)
				putf(y, mcol, W - mcol, " %9s %5s", "-", "-");
			y++;
		}
	}
	/* the output captured while the panel is up: newest lines */
	if (log_rows > 0) {
		int n = ui.log_n + (ui.cur_len ? 1 : 0), first, row;
		style_on(C_DIM, A_DIM);
		move(y, 0);
		for (i = 0; i < W; i++)
			addstr(pl.utf8 ? "\xe2\x94\x80" : "-");
		put(y, 2, W - 2, " output ");
		style_off(C_DIM, A_DIM);
		y++;
		log_rows--;
		first = n > log_rows ? n - log_rows : 0;
		for (row = first; row < n && y < bottom; row++) {
			const char *line;
			if (row < ui.log_n) {
				line = ui.log[(ui.log_head + row) % LOG_LINES];
			} else {
				ui.cur[ui.cur_len] = '\0';
				line = ui.cur;
			}
			put(y++, 0, W, line);
		}
	}
	if (persistent) {
		char prompt[128], *line = NULL;
		int point = 0, plen, x0, avail;
		bool active;
		pthread_mutex_lock(&pl.mu);
		active = pl.prompt_active;
		snprintf(prompt, sizeof(prompt), "%s", pl.prompt);
		if (pl.line)
			line = strdup(pl.line);
		point = pl.point;
		pthread_mutex_unlock(&pl.mu);
		if (active) {
			size_t ll = line ? strlen(line) : 0;
			plen = (int)strlen(prompt);
			avail = W - plen - 1;
			if (avail < 4)
				avail = 4;
			x0 = point > avail ? point - avail : 0;
			if ((size_t)x0 > ll)
				x0 = (int)ll;
			style_on(0, A_BOLD);
			put(bottom, 0, W, prompt);
			style_off(0, A_BOLD);
			put(bottom, plen, W - plen, line ? line + x0 : "");
			move(bottom, plen + point - x0 < W ? plen + point - x0 : W - 1);
			curs_set(1);
		} else {
			style_on(C_DIM, A_DIM);
			put(bottom, 0, W, s->active ? "(running: Ctrl-C stops it)" : "");
			style_off(C_DIM, A_DIM);
			curs_set(0);
		}
		free(line);
	} else {
		style_on(C_DIM, A_DIM);
		if (pl.cli)  /* a one-shot command: no Lua to type */
			putf(bottom, 0, W, "Ctrl-C stops%s--no-panel turns it off", dot);
		else
			putf(bottom, 0, W, "Ctrl-C stops%spanel.on() keeps this up%sgwb --no-panel "
			     "turns it off", dot, dot);
		style_off(C_DIM, A_DIM);
	}
}

/* --- the panel thread ---------------------------------------------------------------------------- */

static void check_size(void)
{
	struct winsize ws;

	if (ioctl(ui.tty_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS)) {
		resizeterm(ws.ws_row, ws.ws_col);
		clearok(stdscr, TRUE);
	}
	W = COLS;
	H = LINES;
}

/* GWB_PANEL_SNAPSHOT=path: write the frame on screen as text to path (every fifth frame),
 * for captures where no terminal multiplexer can read the screen back. */
static void snapshot_frame(const char *path, long frame)
{
	gwb_afile af;
	FILE *f;
	int y;

	if (gwb_afile_open(&af, path, "GWB_PANEL_SNAPSHOT"))
		return;
	f = af.fp;
	fprintf(f, "frame %ld, %dx%d\n", frame, W, H);
	for (y = 0; y < H; y++) {
		wchar_t row[512];
		char mb[2048];
		int n = mvinnwstr(y, 0, row, W < 511 ? W : 511);
		size_t k;
		if (n < 0)
			n = 0;
		row[n] = L'\0';
		k = wcstombs(mb, row, sizeof(mb) - 1);
		if (k == (size_t)-1)
			k = 0;
		mb[k] = '\0';
		while (k && mb[k - 1] == ' ')
			mb[--k] = '\0';
		fprintf(f, "%s\n", mb);
	}
	gwb_afile_commit(&af);
}

static void drain_wake(void)
{
	char buf[64];

	while (read(pl.wake[0], buf, sizeof(buf)) > 0)
		;
}

static void *panel_main(void *arg)
{
	struct snap *s = calloc(1, sizeof(*s));
	char summary[1024];
	bool persistent;
	(void)arg;

	if (!s)
		goto out;
	/* Pending: appear only if the operation is still running after APPEAR_AFTER_S. */
	for (;;) {
		double wait;
		struct timeval tv;
		fd_set fds;
		pthread_mutex_lock(&pl.mu);
		if (pl.stop || (pl.state == ST_PENDING && !pl.p_active && !pl.persistent)) {
			pthread_mutex_unlock(&pl.mu);
			goto out;
		}
		if (pl.state == ST_UP || pl.persistent) {
			pthread_mutex_unlock(&pl.mu);
			break;
		}
		wait = pl.p_t0 + APPEAR_AFTER_S - gwb_now();
		pthread_mutex_unlock(&pl.mu);
		if (wait <= 0)
			break;
		FD_ZERO(&fds);
		FD_SET(pl.wake[0], &fds);
		tv.tv_sec = 0;
		tv.tv_usec = (long)(wait * 1e6);
		select(pl.wake[0] + 1, &fds, NULL, NULL, &tv);
		drain_wake();
	}
	if (!ui_open()) {
		/* no panel after all: the sink falls back to the stderr bar from now on (the
		 * panel thread never touches the progress lock, so it does not reinstall it) */
		pthread_mutex_lock(&pl.mu);
		pl.allowed = false;
		pl.state = ST_DOWN;
		pthread_mutex_unlock(&pl.mu);
		goto out;
	}
	pthread_mutex_lock(&pl.mu);
	pl.state = ST_UP;
	pl.opened++;
	pl.last_wall = pl.open_wall = 0;
	pl.cpu_cores = 0;
	pl.prompt_active = false;
	pthread_mutex_unlock(&pl.mu);

	for (;;) {
		struct timeval tv = {0, (long)(FRAME_S * 1e6)};
		double t_next = gwb_now() + FRAME_S;
		fd_set fds;
		bool stop;
		int mx;

		pthread_mutex_lock(&pl.mu);
		stop = pl.stop;
		persistent = pl.persistent;
		pthread_mutex_unlock(&pl.mu);
		if (stop)
			break;
		drain_capture();
		collect(s, true);
		check_size();
		draw(s, persistent);
		refresh();
		if (getenv("GWB_PANEL_SNAPSHOT") && pl.frames % 5 == 0)
			snapshot_frame(getenv("GWB_PANEL_SNAPSHOT"), pl.frames);
		pthread_mutex_lock(&pl.mu);
		pl.frames++;
		pl.rows = H;
		pl.cols = W;
		pthread_mutex_unlock(&pl.mu);
		/* sleep until the next frame, waking early for output or a request */
		for (;;) {
			double left = t_next - gwb_now();
			if (left <= 0)
				break;
			tv.tv_sec = 0;
			tv.tv_usec = (long)(left * 1e6);
			FD_ZERO(&fds);
			FD_SET(pl.wake[0], &fds);
			FD_SET(ui.cap_r, &fds);
			mx = pl.wake[0] > ui.cap_r ? pl.wake[0] : ui.cap_r;
			if (select(mx + 1, &fds, NULL, NULL, &tv) <= 0)
				continue;
			if (FD_ISSET(ui.cap_r, &fds))
				drain_capture();
			if (FD_ISSET(pl.wake[0], &fds)) {
				drain_wake();
				break;  /* redraw now (prompt changed, stop requested, ...) */
			}
		}
	}
	collect(s, false);
	summary_of(s, summary, sizeof(summary), pl.utf8);
	ui_close(summary);
out:
	free(s);
	pthread_mutex_lock(&pl.mu);
	pl.state = ST_DOWN;
	pl.prompt_active = false;
	pthread_mutex_unlock(&pl.mu);
	return NULL;
}
