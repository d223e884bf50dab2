/* panel_draw.c - the live panel's frame, drawn with ncurses on the panel thread from a
 * snapshot (panel_impl.h's struct snap): the header (device or CPU), progress with ETA, the
 * operation's phases, CPU, the GPU memory bar by purpose, the sparkline, transfers, the kernel
 * table, the captured output and the prompt or hint line; colours, glyphs (UTF-8 or ASCII)
 * and the terminal's size; GWB_PANEL_SNAPSHOT's text copy of the screen. It only draws: what
 * it shows comes from panel_data.c, the screen is set up by panel.c. It may use ncurses,
 * panel_data.c (panel_st, the formatting helpers), fmt.h and fileio.h. */
#define _GNU_SOURCE
#include "panel_impl.h"

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <wchar.h>

#include "fileio.h"
#include "fmt.h"

enum { C_OURS = 1, C_OTHERS, C_FREE, C_HEAD, C_BAR, C_DIM, C_WARN, C_P2, C_P3, C_P4 };

static bool colors;   /* the terminal has colours (panel_draw_init) */

void panel_draw_init(void)
{
	colors = has_colors();
	if (colors) {
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
}

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
	if (colors && pair)
		attron(COLOR_PAIR(pair));
	if (extra)
		attron(extra);
}

static void style_off(int pair, int extra)
{
	if (colors && pair)
		attroff(COLOR_PAIR(pair));
	if (extra)
		attroff(extra);
}

static const char *glyph(int which)
{
	/* 0 full, 1 others, 2 free, 3 progress empty */
	static const char *u[] = {"\xe2\x96\x88", "\xe2\x96\x93", "\xe2\x96\x91", "\xc2\xb7"};
	static const char *a[] = {"#", "=", ".", "."};
	return panel_st.utf8 ? u[which] : a[which];
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
	if (full < w && part && panel_st.utf8)
		put(y, x + full, 1, eighths[part]);
	style_off(C_BAR, 0);
	style_on(C_DIM, A_DIM);
	for (i = full + (part && panel_st.utf8 ? 1 : 0); i < w; i++)
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

	pthread_mutex_lock(&panel_st.mu);
	n = panel_st.nspark < w ? panel_st.nspark : w;
	for (i = 0; i < n; i++)
		v[i] = panel_st.spark[(panel_st.spark_head - n + i + SPARK_N) % SPARK_N];
	pthread_mutex_unlock(&panel_st.mu);
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
		put(y, x + i, 1, panel_st.utf8 ? u[lvl] : a[lvl]);
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

void panel_draw(const struct snap *s, bool persistent, struct panel_outlog *out)
{
	char a[48], b[48], c[48], d[48];
	const char *dot = panel_st.utf8 ? " \xc2\xb7 " : " | ";
	int y = 0, i, log_rows, krows, bottom;

	erase();
	if (H < 3 || W < 20) {
		put(0, 0, W, "gwb panel: window too small");
		return;
	}
	/* header */
	style_on(C_HEAD, A_REVERSE * !colors | A_BOLD);
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
	style_off(C_HEAD, A_REVERSE * !colors | A_BOLD);
	y = 1;

	/* progress */
	if (s->active) {
		double frac = s->total > 0 ? s->done / s->total : 0;
		double eta = s->done > 0 && s->total > 0 ? s->elapsed * (s->total - s->done) / s->done : -1;
		int lw = 12, bw;
		char right[128];
		panel_secs(a, sizeof(a), s->elapsed);
		panel_secs(b, sizeof(b), eta);
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
				 s->parent_total, panel_st.utf8 ? "\xe2\x80\xba" : ">", s->label);
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
		panel_secs(a, sizeof(a), s->last_elapsed);
		putf(y, 0, W, "idle%slast: %s, %s", dot, s->last_label, a);
	} else {
		put(y, 0, W, "idle");
	}
	y++;
	/* phases: this operation's (not the session's), as many as fit, then "+N more" */
	if (s->op_nphases || s->active) {
		char line[512], item[160], run[160] = "";
		size_t at = 0, room = (size_t)(W > 0 ? W : 0), dw = 3;  /* a separator's columns */
		at = panel_appendf(line, sizeof(line), at, "phases");
		if (s->active) {
			panel_secs(a, sizeof(a), s->elapsed);
			snprintf(run, sizeof(run), "%s %s (running)", s->label, a);
		}
		for (i = 0; i < s->op_nphases; i++) {
			size_t more = i + 1 < s->op_nphases || run[0] ? 12 : 0;  /* " +NN more" */
			panel_secs(a, sizeof(a), s->op_phase_ms[i] / 1e3);
			snprintf(item, sizeof(item), "%s %s", s->op_phase_name[i], a);
			if (at + dw + strlen(item) + more + (run[0] ? dw + strlen(run) : 0) > room &&
			    i > 0) {
				at = panel_appendf(line, sizeof(line), at, "%s+%d more", dot, s->op_nphases - i);
				break;
			}
			at = panel_appendf(line, sizeof(line), at, "%s%s", i ? dot : "  ", item);
		}
		if (run[0])
			at = panel_appendf(line, sizeof(line), at, "%s%s", s->op_nphases ? dot : "  ", run);
		put(y++, 0, W, line);
	}
	/* CPU */
	gwb_fmt_bytes(a, sizeof(a), (double)s->proc.rss_bytes);
	gwb_fmt_bytes(b, sizeof(b), (double)s->proc.rss_peak_bytes);
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
		gwb_fmt_bytes(a, sizeof(a), (double)s->ours);
		gwb_fmt_bytes(b, sizeof(b), others);
		gwb_fmt_bytes(c, sizeof(c), (double)s->mem_free);
		gwb_fmt_bytes(d, sizeof(d), tot);
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
				gwb_fmt_bytes(a, sizeof(a), (double)s->purpose_bytes[ord[i]]);
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
			gwb_fmt_bytes(a, sizeof(a), mx);
			putf(y, sx + sw + 1, W - sx - sw - 1, "max %s", a);
			y++;
		}
	}
	/* transfers */
	if (s->gpu) {
		char line[512];
		size_t at = panel_appendf(line, sizeof(line), 0, "xfer    ");
		static const char *dn[3] = {"H2D", "D2H", "D2D"};
		int any = 0;
		for (i = 0; i < 3; i++) {
			if (!s->x.count[i])
				continue;
			gwb_fmt_bytes(a, sizeof(a), s->x.bytes[i]);
			at = panel_appendf(line, sizeof(line), at, "%s%s %s %.1f GB/s", any++ ? dot : "", dn[i], a,
					   s->x.ms[i] > 0 ?
					   s->x.bytes[i] / (s->x.ms[i] * 1e6) : 0.0);
			if (s->x.bytes[i] > 0 && i < 2)
				at = panel_appendf(line, sizeof(line), at, " (%.0f%% pinned)",
						   100 * s->x.pinned_bytes[i] / s->x.bytes[i]);
		}
		if (!any)
			panel_appendf(line, sizeof(line), at, "none yet");
		put(y++, 0, W, line);
	}

	/* bottom: prompt (persistent) or the hint line */
	bottom = H - 1;
	/* rows left for the kernel table and the output */
	{
		int left = bottom - y;
		bool have_log = out->log_n > 0 || out->cur_len > 0 || persistent;
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
			gwb_fmt_bytes(a, sizeof(a), (double)k->smem);
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
		int n = out->log_n + (out->cur_len ? 1 : 0), first, row;
		style_on(C_DIM, A_DIM);
		move(y, 0);
		for (i = 0; i < W; i++)
			addstr(panel_st.utf8 ? "\xe2\x94\x80" : "-");
		put(y, 2, W - 2, " output ");
		style_off(C_DIM, A_DIM);
		y++;
		log_rows--;
		first = n > log_rows ? n - log_rows : 0;
		for (row = first; row < n && y < bottom; row++) {
			const char *line;
			if (row < out->log_n) {
				line = out->log[(out->log_head + row) % LOG_LINES];
			} else {
				out->cur[out->cur_len] = '\0';
				line = out->cur;
			}
			put(y++, 0, W, line);
		}
	}
	if (persistent) {
		char prompt[128], *line = NULL;
		int point = 0, plen, x0, avail;
		bool active;
		pthread_mutex_lock(&panel_st.mu);
		active = panel_st.prompt_active;
		snprintf(prompt, sizeof(prompt), "%s", panel_st.prompt);
		if (panel_st.line)
			line = strdup(panel_st.line);
		point = panel_st.point;
		pthread_mutex_unlock(&panel_st.mu);
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
		if (panel_st.cli)  /* a one-shot command: no Lua to type */
			putf(bottom, 0, W, "Ctrl-C stops%s--no-panel turns it off", dot);
		else
			putf(bottom, 0, W, "Ctrl-C stops%spanel.on() keeps this up%sgwb --no-panel "
			     "turns it off", dot, dot);
		style_off(C_DIM, A_DIM);
	}
}

/* --- the terminal's size and the text snapshot ------------------------------------------------ */

void panel_draw_resize(int tty_fd, int *rows, int *cols)
{
	struct winsize ws;

	if (ioctl(tty_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS)) {
		resizeterm(ws.ws_row, ws.ws_col);
		clearok(stdscr, TRUE);
	}
	W = COLS;
	H = LINES;
	*rows = H;
	*cols = W;
}

/* GWB_PANEL_SNAPSHOT=path: write the frame on screen as text to path (every fifth frame),
 * for captures where no terminal multiplexer can read the screen back. */
void panel_draw_snapshot(const char *path, long frame)
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
