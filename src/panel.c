/* panel.c - the live ncurses panel (see panel.h): the progress sink that starts and closes it,
 * the panel thread, the terminal (set up, restored at close, at exit and on fatal signals),
 * the capture of stdout and stderr while it is up and their replay, panel.on()'s prompt. One
 * thread, the panel thread, owns ncurses and the capture pipe; the rest of the program talks
 * to it through `panel_st` (panel_impl.h) under its mutex and a wake pipe. Lock order: intr.c's
 * progress lock, then panel_st.mu; the panel thread never takes the progress lock (the
 * progress sink may wait for it to close). What a frame shows is sampled by panel_data.c and
 * drawn by panel_draw.c; it may use those, intr.h, progress_log.h, ncurses and readline. */
#define _GNU_SOURCE
#include "panel_impl.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <termios.h>
#include <unistd.h>

#include <readline/readline.h>

#include "progress_log.h"

#define APPEAR_AFTER_S 0.3
#define FRAME_S 0.1
#define CAPTURE_MAX (16u << 20)   /* output kept for the replay; older bytes are dropped */

/* --- the panel's own state ------------------------------------------------------------------ */

enum { ST_DOWN, ST_PENDING, ST_UP };

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
	struct panel_outlog out;    /* what the panel shows of it */
	int esc;                    /* escape-sequence parser state */
} ui = {.tty_fd = -1, .saved_err = -1, .cap_r = -1};

static volatile sig_atomic_t restore_fd = -1;  /* for the fatal-signal handler */
static struct termios restore_tio;
static volatile sig_atomic_t restore_have_tio;

/* --- small helpers ------------------------------------------------------------------------- */

static void wake_panel(void)
{
	if (panel_st.wake[1] >= 0) {
		char c = 1;
		ssize_t r = write(panel_st.wake[1], &c, 1);
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
	if (panel_st.thread_live)
		return true;
	if (panel_st.wake[0] < 0) {
		if (pipe2(panel_st.wake, O_CLOEXEC | O_NONBLOCK) != 0) {
			panel_st.wake[0] = panel_st.wake[1] = -1;
			return false;
		}
	}
	panel_st.stop = false;
	panel_st.state = initial_state;
	if (pthread_create(&panel_st.thread, NULL, panel_main, NULL) != 0) {
		panel_st.state = ST_DOWN;
		return false;
	}
	panel_st.thread_live = true;
	return true;
}

static void fallback_sink(const gwb_progress *p, void *ctx);

static void panel_sink(const gwb_progress *p, void *ctx)
{
	bool close_now = false, fallback;
	int edge;

	if (p->event == GWB_PROGRESS_BEGIN && p->depth == 0)
		panel_take_baseline();
	pthread_mutex_lock(&panel_st.mu);
	fallback = !panel_st.allowed;
	edge = panel_progress_locked(p);
	if (edge > 0 && panel_st.allowed && !panel_st.thread_live)
		start_thread_locked(ST_PENDING);
	else if (edge < 0)
		close_now = panel_st.thread_live && !panel_st.persistent;
	pthread_cond_broadcast(&panel_st.cv);
	pthread_mutex_unlock(&panel_st.mu);
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

	pthread_mutex_lock(&panel_st.mu);
	panel_st.allowed = allowed;
	if (!allowed)
		snprintf(panel_st.reason, sizeof(panel_st.reason),
			 "the panel is off (--no-panel, NO_COLOR or output is not a terminal)");
	else if (!term || !*term || !strcmp(term, "dumb")) {
		panel_st.allowed = false;
		snprintf(panel_st.reason, sizeof(panel_st.reason),
			 "the panel is off: TERM is %s", term && *term ? "dumb" : "not set");
	}
	if (!panel_st.setup_done) {
		panel_st.setup_done = true;
		atexit(at_exit);
	}
	if (panel_st.allowed) {
		/* Only LC_CTYPE (UTF-8 glyphs, readline's multibyte input): number formatting
		 * (LC_NUMERIC) must stay "C" for Lua. Done here, on the main thread, at start. */
		setlocale(LC_CTYPE, "");
		panel_st.utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	}
	allowed = panel_st.allowed;
	pthread_mutex_unlock(&panel_st.mu);
	gwb_progress_set_sink(allowed ? panel_sink : fallback_sink, NULL);
}

void gwb_panel_set_cli(void)
{
	pthread_mutex_lock(&panel_st.mu);
	panel_st.cli = true;
	pthread_mutex_unlock(&panel_st.mu);
}

bool gwb_panel_allowed(void)
{
	bool a;

	pthread_mutex_lock(&panel_st.mu);
	a = panel_st.allowed;
	pthread_mutex_unlock(&panel_st.mu);
	return a;
}

bool gwb_panel_is_up(void)
{
	bool up;

	pthread_mutex_lock(&panel_st.mu);
	up = panel_st.state == ST_UP;
	pthread_mutex_unlock(&panel_st.mu);
	return up;
}

bool gwb_panel_persistent(void)
{
	bool p;

	pthread_mutex_lock(&panel_st.mu);
	p = panel_st.persistent && panel_st.thread_live;
	pthread_mutex_unlock(&panel_st.mu);
	return p;
}

/* Ask the panel thread to close and wait for it. Flushes stdio first, while the panel still
 * drains the capture pipe, so that everything written so far is replayed in order. */
static void request_close_and_join(void)
{
	pthread_t t;

	fflush(stdout);
	fflush(stderr);
	pthread_mutex_lock(&panel_st.mu);
	if (!panel_st.thread_live) {
		pthread_mutex_unlock(&panel_st.mu);
		return;
	}
	panel_st.stop = true;
	t = panel_st.thread;
	pthread_cond_broadcast(&panel_st.cv);
	pthread_mutex_unlock(&panel_st.mu);
	wake_panel();
	pthread_join(t, NULL);
	pthread_mutex_lock(&panel_st.mu);
	panel_st.thread_live = false;
	panel_st.state = ST_DOWN;
	panel_st.persistent = false;
	pthread_mutex_unlock(&panel_st.mu);
}

gwb_status gwb_panel_on(void)
{
	double t0 = gwb_now();
	int st;

	pthread_mutex_lock(&panel_st.mu);
	if (!panel_st.allowed) {
		pthread_mutex_unlock(&panel_st.mu);
		return gwb_error(GWB_EINVAL, "panel.on: %s", panel_st.reason);
	}
	panel_st.persistent = true;
	if (!panel_st.thread_live && !start_thread_locked(ST_PENDING)) {
		panel_st.persistent = false;
		pthread_mutex_unlock(&panel_st.mu);
		return gwb_error(GWB_EINVAL, "panel.on: could not start the panel thread");
	}
	pthread_cond_broadcast(&panel_st.cv);  /* a pending panel opens now */
	pthread_mutex_unlock(&panel_st.mu);
	wake_panel();
	/* wait until it is on screen or has given up */
	for (;;) {
		pthread_mutex_lock(&panel_st.mu);
		st = panel_st.state == ST_UP ? 1 :
		     (!panel_st.thread_live || !panel_st.allowed) ? -1 : 0;
		pthread_mutex_unlock(&panel_st.mu);
		if (st || gwb_now() - t0 > 2)
			break;
		usleep(2000);
	}
	if (st != 1) {
		request_close_and_join();
		return gwb_error(GWB_EINVAL, "panel.on: %s", panel_st.reason[0] ? panel_st.reason :
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

	pthread_mutex_lock(&panel_st.mu);
	close_now = panel_st.thread_live && !panel_st.persistent;
	pthread_mutex_unlock(&panel_st.mu);
	if (close_now)
		request_close_and_join();
}

void gwb_panel_shutdown(void)
{
	request_close_and_join();
}

void gwb_panel_get_stats(gwb_panel_stats *out)
{
	pthread_mutex_lock(&panel_st.mu);
	*out = panel_st.last;
	out->opened = panel_st.opened;
	out->captured_bytes = panel_st.captured_total;
	out->rows = panel_st.rows;
	out->cols = panel_st.cols;
	out->frames = panel_st.frames;
	snprintf(out->reason, sizeof(out->reason), "%s", panel_st.allowed ? "" : panel_st.reason);
	pthread_mutex_unlock(&panel_st.mu);
}

/* --- readline's display, while a persistent panel is up --------------------------------------- */

void gwb_panel_rl_redisplay(void)
{
	const char *buf = rl_line_buffer ? rl_line_buffer : "";
	size_t n = strlen(buf);

	pthread_mutex_lock(&panel_st.mu);
	if (n + 1 > panel_st.line_cap) {
		char *nl = realloc(panel_st.line, n + 64);
		if (nl) {
			panel_st.line = nl;
			panel_st.line_cap = n + 64;
		}
	}
	if (panel_st.line && n + 1 <= panel_st.line_cap) {
		memcpy(panel_st.line, buf, n + 1);
		panel_st.point = rl_point;
	}
	snprintf(panel_st.prompt, sizeof(panel_st.prompt), "%s",
		 rl_display_prompt ? rl_display_prompt : rl_prompt ? rl_prompt : "");
	panel_st.prompt_active = true;
	pthread_mutex_unlock(&panel_st.mu);
	wake_panel();
}

/* --- output capture ---------------------------------------------------------------------------- */

static void log_push_line(void)
{
	int slot = (ui.out.log_head + ui.out.log_n) % LOG_LINES;

	ui.out.cur[ui.out.cur_len] = '\0';
	if (ui.out.log_n == LOG_LINES) {
		slot = ui.out.log_head;
		ui.out.log_head = (ui.out.log_head + 1) % LOG_LINES;
	} else {
		ui.out.log_n++;
	}
	memcpy(ui.out.log[slot], ui.out.cur, (size_t)ui.out.cur_len + 1);
	ui.out.cur_len = 0;
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
			ui.out.cur_len = 0;
		} else if (c == '\b') {
			if (ui.out.cur_len)
				ui.out.cur_len--;
		} else if (c == '\t') {
			do
				ui.out.cur[ui.out.cur_len++] = ' ';
			while (ui.out.cur_len % 8 && ui.out.cur_len < LOG_LINE_MAX - 1);
		} else if (c >= 0x20 || c >= 0x80) {
			if (ui.out.cur_len < LOG_LINE_MAX - 1)
				ui.out.cur[ui.out.cur_len++] = (char)c;
		}
		if (ui.out.cur_len >= LOG_LINE_MAX - 1)
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
		pthread_mutex_lock(&panel_st.mu);
		panel_st.captured_total += total;
		pthread_mutex_unlock(&panel_st.mu);
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
		snprintf(panel_st.reason, sizeof(panel_st.reason),
			 "the terminal '%s' is not known to ncurses", term ? term : "");
		goto fail;
	}
	set_term(ui.scr);
	noecho();
	cbreak();
	curs_set(0);
	panel_draw_init();
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
	ui.out.log_n = ui.out.log_head = ui.out.cur_len = ui.esc = 0;
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
	if (!panel_st.reason[0])
		snprintf(panel_st.reason, sizeof(panel_st.reason),
			 "could not set up the terminal: %s", strerror(errno));
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

/* --- the panel thread ---------------------------------------------------------------------------- */

static void drain_wake(void)
{
	char buf[64];

	while (read(panel_st.wake[0], buf, sizeof(buf)) > 0)
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
		pthread_mutex_lock(&panel_st.mu);
		if (panel_st.stop || (panel_st.state == ST_PENDING && !panel_st.p_active &&
				      !panel_st.persistent)) {
			pthread_mutex_unlock(&panel_st.mu);
			goto out;
		}
		if (panel_st.state == ST_UP || panel_st.persistent) {
			pthread_mutex_unlock(&panel_st.mu);
			break;
		}
		wait = panel_st.p_t0 + APPEAR_AFTER_S - gwb_now();
		pthread_mutex_unlock(&panel_st.mu);
		if (wait <= 0)
			break;
		FD_ZERO(&fds);
		FD_SET(panel_st.wake[0], &fds);
		tv.tv_sec = 0;
		tv.tv_usec = (long)(wait * 1e6);
		select(panel_st.wake[0] + 1, &fds, NULL, NULL, &tv);
		drain_wake();
	}
	if (!ui_open()) {
		/* no panel after all: the sink falls back to the stderr bar from now on (the
		 * panel thread never touches the progress lock, so it does not reinstall it) */
		pthread_mutex_lock(&panel_st.mu);
		panel_st.allowed = false;
		panel_st.state = ST_DOWN;
		pthread_mutex_unlock(&panel_st.mu);
		goto out;
	}
	pthread_mutex_lock(&panel_st.mu);
	panel_st.state = ST_UP;
	panel_st.opened++;
	panel_st.last_wall = panel_st.open_wall = 0;
	panel_st.cpu_cores = 0;
	panel_st.prompt_active = false;
	pthread_mutex_unlock(&panel_st.mu);

	for (;;) {
		struct timeval tv = {0, (long)(FRAME_S * 1e6)};
		double t_next = gwb_now() + FRAME_S;
		fd_set fds;
		bool stop;
		int mx, rows, cols;

		pthread_mutex_lock(&panel_st.mu);
		stop = panel_st.stop;
		persistent = panel_st.persistent;
		pthread_mutex_unlock(&panel_st.mu);
		if (stop)
			break;
		drain_capture();
		panel_collect(s, true);
		panel_draw_resize(ui.tty_fd, &rows, &cols);
		panel_draw(s, persistent, &ui.out);
		refresh();
		if (getenv("GWB_PANEL_SNAPSHOT") && panel_st.frames % 5 == 0)
			panel_draw_snapshot(getenv("GWB_PANEL_SNAPSHOT"), panel_st.frames);
		pthread_mutex_lock(&panel_st.mu);
		panel_st.frames++;
		panel_st.rows = rows;
		panel_st.cols = cols;
		pthread_mutex_unlock(&panel_st.mu);
		/* sleep until the next frame, waking early for output or a request */
		for (;;) {
			double left = t_next - gwb_now();
			if (left <= 0)
				break;
			tv.tv_sec = 0;
			tv.tv_usec = (long)(left * 1e6);
			FD_ZERO(&fds);
			FD_SET(panel_st.wake[0], &fds);
			FD_SET(ui.cap_r, &fds);
			mx = panel_st.wake[0] > ui.cap_r ? panel_st.wake[0] : ui.cap_r;
			if (select(mx + 1, &fds, NULL, NULL, &tv) <= 0)
				continue;
			if (FD_ISSET(ui.cap_r, &fds))
				drain_capture();
			if (FD_ISSET(panel_st.wake[0], &fds)) {
				drain_wake();
				break;  /* redraw now (prompt changed, stop requested, ...) */
			}
		}
	}
	panel_collect(s, false);
	panel_summary_of(s, summary, sizeof(summary), panel_st.utf8);
	ui_close(summary);
out:
	free(s);
	pthread_mutex_lock(&panel_st.mu);
	panel_st.state = ST_DOWN;
	panel_st.prompt_active = false;
	pthread_mutex_unlock(&panel_st.mu);
	return NULL;
}
