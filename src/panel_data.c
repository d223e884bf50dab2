/* panel_data.c - what the live panel samples (panel_impl.h): the progress state the sink
 * records (label, counts, metric, the enclosing run), the telemetry totals when an operation
 * begins (so that its summary speaks of it alone), and the snapshot each frame is drawn from:
 * progress, CPU use and RSS, phases, and, once gwb has used the GPU, its memory by purpose,
 * kernels and transfers (never creating a CUDA context); the sparkline's history and the
 * summary text (scrollback, panel.status()). No ncurses here. It may use prof.h, intr.h,
 * gpu.h and fmt.h; it defines panel_st, the state the panel's files share. */
#define _GNU_SOURCE
#include "panel_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

struct panel_state panel_st = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.wake = {-1, -1},
};

/* --- small helpers ------------------------------------------------------------------------- */

void panel_secs(char *buf, size_t n, double s)
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

size_t panel_appendf(char *buf, size_t n, size_t at, const char *fmt, ...)
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

/* --- the progress state (the sink records it) --------------------------------------------- */

int panel_progress_locked(const gwb_progress *p)
{
	int edge = 0;

	if (p->depth > 0) {
		snprintf(panel_st.p_parent, sizeof(panel_st.p_parent), "%s",
			 p->parent_label ? p->parent_label : "");
		panel_st.p_parent_done = p->parent_done;
		panel_st.p_parent_total = p->parent_total;
	}
	switch (p->event) {
	case GWB_PROGRESS_BEGIN:
		snprintf(panel_st.p_label, sizeof(panel_st.p_label), "%s",
			 p->label ? p->label : "");
		panel_st.p_total = p->total;
		panel_st.p_done = 0;
		panel_st.p_metric_name[0] = '\0';
		if (p->depth < 4)
			panel_st.p_t0s[p->depth] = gwb_now();
		panel_st.p_tcur = gwb_now();
		if (p->depth == 0) {
			panel_st.p_parent[0] = '\0';
			panel_st.p_t0 = panel_st.p_tcur;
			panel_st.p_active = true;
			edge = 1;
		}
		break;
	case GWB_PROGRESS_UPDATE:
		panel_st.p_done = p->done;
		panel_st.p_metric = p->metric;
		snprintf(panel_st.p_metric_name, sizeof(panel_st.p_metric_name), "%s",
			 p->metric_name ? p->metric_name : "");
		break;
	case GWB_PROGRESS_END:
		if (p->depth > 0) {
			/* back to the enclosing run */
			snprintf(panel_st.p_label, sizeof(panel_st.p_label), "%s",
				 panel_st.p_parent);
			panel_st.p_total = p->parent_total;
			panel_st.p_done = p->parent_done;
			panel_st.p_metric_name[0] = '\0';
			panel_st.p_tcur = panel_st.p_t0s[p->depth - 1 < 4 ? p->depth - 1 : 3];
			if (p->depth == 1)
				panel_st.p_parent[0] = '\0';
			break;
		}
		panel_st.p_done = p->total > 0 ? p->total : panel_st.p_done;
		panel_st.p_active = false;
		panel_st.p_parent[0] = '\0';
		snprintf(panel_st.p_last_label, sizeof(panel_st.p_last_label), "%s",
			 panel_st.p_label);
		panel_st.p_last_elapsed = p->elapsed_s;
		panel_st.p_interrupted = gwb_intr_pending();
		edge = -1;
		break;
	}
	return edge;
}

/* --- the operation's baseline ---------------------------------------------------------------- */

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

/* Remember the telemetry totals as an operation begins (called without panel_st.mu held). */
void panel_take_baseline(void)
{
	static struct base_collect b;  /* the outermost begin runs on one thread at a time */
	gwb_xfer_stat x;

	b.nph = b.nk = 0;
	gwb_prof_each_phase(base_phase_cb, &b);
	gwb_prof_each_kernel_nowait(base_kernel_cb, &b, NULL);
	gwb_prof_transfers(&x);
	pthread_mutex_lock(&panel_st.mu);
	memcpy(panel_st.base_phase, b.ph, sizeof(b.ph[0]) * (size_t)b.nph);
	panel_st.nbase_phase = b.nph;
	memcpy(panel_st.base_k, b.k, sizeof(b.k[0]) * (size_t)b.nk);
	panel_st.nbase_k = b.nk;
	panel_st.base_x = x;
	pthread_mutex_unlock(&panel_st.mu);
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

void panel_collect(struct snap *s, bool sample)
{
	static gwb_gpu_info info_cache;
	static bool have_info;
	double now = gwb_now();

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&panel_st.mu);
	s->active = panel_st.p_active;
	memcpy(s->label, panel_st.p_label, sizeof(s->label));
	memcpy(s->metric_name, panel_st.p_metric_name, sizeof(s->metric_name));
	memcpy(s->last_label, panel_st.p_last_label, sizeof(s->last_label));
	s->done = panel_st.p_done;
	s->total = panel_st.p_total;
	s->metric = panel_st.p_metric;
	s->elapsed = panel_st.p_active ? now - panel_st.p_tcur : 0;
	memcpy(s->parent, panel_st.p_parent, sizeof(s->parent));
	s->parent_done = panel_st.p_parent_done;
	s->parent_total = panel_st.p_parent_total;
	s->last_elapsed = panel_st.p_last_elapsed;
	s->interrupted = panel_st.p_interrupted;
	pthread_mutex_unlock(&panel_st.mu);

	gwb_prof_proc(&s->proc);
	s->ncpu = gwb_cpu_count();
	gwb_prof_each_phase(phase_cb, s);
	/* the phases of this operation (the panel's line shows the session's) */
	pthread_mutex_lock(&panel_st.mu);
	{
		int i, j;
		for (i = 0; i < s->nphases; i++) {
			double ms = s->phase_ms[i];
			for (j = 0; j < panel_st.nbase_phase; j++)
				if (!strcmp(panel_st.base_phase[j].name, s->phase_name[i]))
					ms -= panel_st.base_phase[j].ms;
			if (ms <= 1e-9)
				continue;
			memcpy(s->op_phase_name[s->op_nphases], s->phase_name[i], sizeof(s->phase_name[0]));
			s->op_phase_ms[s->op_nphases++] = ms;
		}
	}
	pthread_mutex_unlock(&panel_st.mu);

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
			pthread_mutex_lock(&panel_st.mu);
			for (int i = 0; i < s->nk; i++) {
				struct krow d = s->k[i];
				for (int j = 0; j < panel_st.nbase_k; j++)
					if (!strcmp(panel_st.base_k[j].name, d.name)) {
						d.launches -= panel_st.base_k[j].launches;
						d.total_ms -= panel_st.base_k[j].ms;
					}
				if (d.launches <= 0)
					continue;
				s->op_nk++;
				s->op_kernel_ms += d.total_ms;
				if (s->op_nk == 1 || d.total_ms > s->op_top.total_ms)
					s->op_top = d;
			}
			for (int i = 0; i < 3; i++) {
				s->op_x.count[i] = s->x.count[i] - panel_st.base_x.count[i];
				s->op_x.bytes[i] = s->x.bytes[i] - panel_st.base_x.bytes[i];
				s->op_x.ms[i] = s->x.ms[i] - panel_st.base_x.ms[i];
				s->op_x.pinned_bytes[i] = s->x.pinned_bytes[i] - panel_st.base_x.pinned_bytes[i];
			}
			pthread_mutex_unlock(&panel_st.mu);
		}
	}

	pthread_mutex_lock(&panel_st.mu);
	if (sample) {
		/* CPU cores busy over the last interval (at least half a second) */
		if (panel_st.last_wall == 0) {
			panel_st.last_wall = panel_st.open_wall = now;
			panel_st.last_cpu_s = panel_st.open_cpu_s = s->proc.cpu_s;
		} else if (now - panel_st.last_wall >= 0.5) {
			panel_st.cpu_cores = (s->proc.cpu_s - panel_st.last_cpu_s) /
					     (now - panel_st.last_wall);
			panel_st.last_wall = now;
			panel_st.last_cpu_s = s->proc.cpu_s;
		}
		if (s->gpu != panel_st.spark_gpu) {
			panel_st.nspark = 0;
			panel_st.spark_gpu = s->gpu;
		}
		panel_st.spark[panel_st.spark_head] = s->gpu ?
			(double)(s->mem_total - s->mem_free) : (double)s->proc.rss_bytes;
		panel_st.spark_head = (panel_st.spark_head + 1) % SPARK_N;
		if (panel_st.nspark < SPARK_N)
			panel_st.nspark++;
		if (s->ours > panel_st.peak_ours)
			panel_st.peak_ours = s->ours;
	}
	panel_st.last.gpu = s->gpu;
	panel_st.last.mem_free = s->mem_free;
	panel_st.last.mem_total = s->mem_total;
	panel_st.last.ours = s->ours;
	panel_st.last.nk = s->nk < 8 ? s->nk : 8;
	for (int i = 0; i < panel_st.last.nk; i++) {
		snprintf(panel_st.last.k[i].name, sizeof(panel_st.last.k[i].name), "%s",
			 s->k[i].name);
		panel_st.last.k[i].block = s->k[i].block[0] * s->k[i].block[1] * s->k[i].block[2];
		panel_st.last.k[i].occupancy = s->k[i].occupancy;
	}
	s->cpu_cores = panel_st.cpu_cores;
	if (panel_st.open_wall > 0 && now - panel_st.open_wall > 0.05)
		s->cpu_cores_avg = (s->proc.cpu_s - panel_st.open_cpu_s) /
				   (now - panel_st.open_wall);
	pthread_mutex_unlock(&panel_st.mu);
}

/* --- the summary (scrollback and panel.status) ------------------------------------------------- */

void panel_summary_of(const struct snap *s, char *buf, size_t n, bool utf8)
{
	const char *dot = utf8 ? " \xc2\xb7 " : " | ";
	char a[32], b[32];
	size_t at = 0;
	int i;

	buf[0] = '\0';
	if (s->active) {
		panel_secs(a, sizeof(a), s->elapsed);
		if (s->total > 0)
			at = panel_appendf(buf, n, at, "gwb: %s %.0f/%.0f after %s", s->label,
					   s->done, s->total, a);
		else
			at = panel_appendf(buf, n, at, "gwb: %s %.0f after %s", s->label, s->done,
					   a);
		if (s->metric_name[0])
			at = panel_appendf(buf, n, at, ", %s %.3g", s->metric_name, s->metric);
	} else if (s->last_label[0]) {
		panel_secs(a, sizeof(a), s->last_elapsed);
		at = panel_appendf(buf, n, at, s->interrupted ?
				   "gwb: %s stopped by Ctrl-C after %s" : "gwb: %s done in %s",
				   s->last_label, a);
	} else {
		at = panel_appendf(buf, n, at, "gwb: idle");
	}
	/* the phases, unless the only one is the operation itself */
	if (s->op_nphases > 1 || (s->op_nphases == 1 && strcmp(s->op_phase_name[0],
							    s->active ? s->label : s->last_label)))
		for (i = 0; i < s->op_nphases && i < 6; i++) {
			panel_secs(a, sizeof(a), s->op_phase_ms[i] / 1e3);
			at = panel_appendf(buf, n, at, "%s%s %s", i ? ", " : dot,
					   s->op_phase_name[i], a);
		}
	gwb_fmt_bytes(a, sizeof(a), (double)s->proc.rss_bytes);
	gwb_fmt_bytes(b, sizeof(b), (double)s->proc.rss_peak_bytes);
	at = panel_appendf(buf, n, at, "%s%.1f cores, %d threads, RSS %s", dot,
			   s->cpu_cores_avg > 0 ? s->cpu_cores_avg : s->cpu_cores,
			   s->proc.threads, a);
	if (strcmp(a, b))
		at = panel_appendf(buf, n, at, " (peak %s)", b);
	if (s->gpu && (s->op_nk || s->op_x.count[0] + s->op_x.count[1] + s->op_x.count[2] ||
		       s->ours)) {
		const char *name = s->info.name;
		if (!strncmp(name, "NVIDIA ", 7))
			name += 7;
		gwb_fmt_bytes(a, sizeof(a), (double)s->ours);
		gwb_fmt_bytes(b, sizeof(b), (double)(s->mem_total - s->mem_free));
		at = panel_appendf(buf, n, at, "\ngwb: %s%sours %s of %s used", name, dot, a, b);
		if (s->op_nk) {
			panel_secs(a, sizeof(a), s->op_kernel_ms / 1e3);
			panel_secs(b, sizeof(b), s->op_top.total_ms / 1e3);
			at = panel_appendf(buf, n, at, "%s%d kernel%s %s, top %s %s at %.0f%% occupancy", dot,
					   s->op_nk, s->op_nk == 1 ? "" : "s", a, s->op_top.name, b,
					   s->op_top.occupancy * 100);
		}
		for (i = 0; i < 3; i++) {
			static const char *dn[3] = {"H2D", "D2H", "D2D"};
			if (s->op_x.count[i] <= 0)
				continue;
			gwb_fmt_bytes(a, sizeof(a), s->op_x.bytes[i]);
			at = panel_appendf(buf, n, at, "%s%s %s %.1f GB/s", dot, dn[i], a,
					   s->op_x.ms[i] > 0 ?
					   s->op_x.bytes[i] / (s->op_x.ms[i] * 1e6) : 0.0);
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
	panel_collect(s, false);
	panel_summary_of(s, buf, n, false);
	free(s);
}
