/* plot.c - the drawing model of saved plots (plot.h) and its layout: the axes' ranges from the
 * data (or as given), ticks at 1, 2, 5 x 10^k (decades on a log scale) or the caller's fixed
 * ones, margins measured from the labels, then grid, primitives (clipped to the plot area),
 * frame, ticks, labels, title and legend drawn on a canvas (plot_canvas.h): SVG (plot_svg.c)
 * or PNG (plot_png.c); gwb_plot_save writes the bytes through fileio.c's atomic save. */
#define _GNU_SOURCE
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fileio.h"
#include "plot_canvas.h"
#include "size.h"

#define GRID_COLOR  0xE6E6E6u
#define AXIS_COLOR  0x333333u
#define TEXT_COLOR  0x222222u
#define MAX_TICKS   64

gwb_plot *gwb_plot_new(void)
{
	gwb_plot *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->x.lo = p->x.hi = p->y.lo = p->y.hi = NAN;
	p->grid = true;
	return p;
}

static void axis_free(gwb_plot_axis *a)
{
	size_t i;

	free(a->label);
	for (i = 0; i < a->nticks; i++)
		free(a->tick_labels ? a->tick_labels[i] : NULL);
	free(a->ticks);
	free(a->tick_labels);
}

void gwb_plot_free(gwb_plot *p)
{
	size_t i, j;

	if (!p)
		return;
	free(p->title);
	axis_free(&p->x);
	axis_free(&p->y);
	for (i = 0; i < p->nitems; i++) {
		gwb_plot_item *it = &p->items[i];

		free(it->x);
		free(it->y);
		free(it->colors);
		if (it->texts)
			for (j = 0; j < it->n; j++)
				free(it->texts[j]);
		free(it->texts);
	}
	free(p->items);
	for (i = 0; i < p->nlegend; i++)
		free(p->legend[i].label);
	free(p->legend);
	free(p);
}

gwb_plot_item *gwb_plot_add(gwb_plot *p, gwb_plot_kind kind, size_t n)
{
	gwb_plot_item *it;
	size_t pts = kind == GWB_PLOT_RECTS ? 2 * n : n, bytes;

	if (p->nitems == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		gwb_plot_item *a = realloc(p->items, cap * sizeof(*a));

		if (!a)
			return NULL;
		p->items = a;
		p->cap = cap;
	}
	it = &p->items[p->nitems];
	memset(it, 0, sizeof(*it));
	if (gwb_mul_size(pts ? pts : 1, sizeof(double), &bytes))
		return NULL;
	it->x = malloc(bytes);
	it->y = malloc(bytes);
	if (kind == GWB_PLOT_TEXTS)
		it->texts = calloc(n ? n : 1, sizeof(char *));
	if (!it->x || !it->y || (kind == GWB_PLOT_TEXTS && !it->texts)) {
		free(it->x);
		free(it->y);
		free(it->texts);
		return NULL;
	}
	it->kind = kind;
	it->n = n;
	it->stroke = GWB_PLOT_NONE;
	it->size = kind == GWB_PLOT_POINTS ? 3 : 2;
	p->nitems++;
	return it;
}

gwb_status gwb_plot_setstr(char **dst, const char *s)
{
	char *c = strdup(s ? s : "");

	if (!c)
		return gwb_error(GWB_ENOMEM, "plot: out of memory for a label");
	free(*dst);
	*dst = c;
	return GWB_OK;
}

gwb_status gwb_plot_ticks(gwb_plot_axis *a, size_t n)
{
	size_t i;

	for (i = 0; i < a->nticks; i++)
		free(a->tick_labels[i]);
	free(a->ticks);
	free(a->tick_labels);
	a->nticks = 0;
	a->ticks = calloc(n ? n : 1, sizeof(double));
	a->tick_labels = calloc(n ? n : 1, sizeof(char *));
	if (!a->ticks || !a->tick_labels) {
		free(a->ticks);
		free(a->tick_labels);
		a->ticks = NULL;
		a->tick_labels = NULL;
		return gwb_error(GWB_ENOMEM, "plot: out of memory for %zu ticks", n);
	}
	a->nticks = n;
	return GWB_OK;
}

gwb_status gwb_plot_legend_add(gwb_plot *p, const char *label, uint32_t color,
			       gwb_plot_shape shape)
{
	gwb_plot_legend *l = realloc(p->legend, (p->nlegend + 1) * sizeof(*l));
	char *s;

	if (!l)
		return gwb_error(GWB_ENOMEM, "plot: out of memory for the legend");
	p->legend = l;
	if (!(s = strdup(label ? label : "")))
		return gwb_error(GWB_ENOMEM, "plot: out of memory for the legend");
	l[p->nlegend++] = (gwb_plot_legend){s, color, shape};
	return GWB_OK;
}

gwb_status gwb_plot_format_of(const char *path, gwb_plot_format *fmt)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

	if (dot && (!slash || dot > slash)) {
		if (!strcasecmp(dot, ".svg")) {
			*fmt = GWB_PLOT_SVG;
			return GWB_OK;
		}
		if (!strcasecmp(dot, ".png")) {
			*fmt = GWB_PLOT_PNG;
			return GWB_OK;
		}
	}
	return gwb_error(GWB_EINVAL, "plot save: %s: the name must end in .svg or .png (the "
			 "format is chosen by it)", path);
}

/* --- layout --------------------------------------------------------------------------------- */

/* one axis as laid out: its range in drawn units (log10 for a log axis), ticks and labels */
typedef struct ax {
	const gwb_plot_axis *a;
	double lo, hi;
	size_t n;
	double t[MAX_TICKS];
	char lab[MAX_TICKS][48];
	const char *fixed[MAX_TICKS];   /* the caller's labels (not copied) */
} ax;

static double fwd(const ax *x, double v)
{
	if (x->a->log)
		return v > 0 ? log10(v) : NAN;
	return v;
}

static void widen(double *lo, double *hi, double v)
{
	if (v == v && isfinite(v)) {
		if (v < *lo)
			*lo = v;
		if (v > *hi)
			*hi = v;
	}
}

static void range_of(const gwb_plot *p, ax *x, bool isx)
{
	double lo = INFINITY, hi = -INFINITY, span;
	const gwb_plot_axis *a = x->a;
	size_t i, j;

	for (i = 0; i < p->nitems; i++) {
		const gwb_plot_item *it = &p->items[i];
		const double *v = isx ? it->x : it->y;
		size_t m = it->kind == GWB_PLOT_RECTS ? 2 * it->n : it->n;

		for (j = 0; j < m; j++)
			widen(&lo, &hi, fwd(x, v[j]));
	}
	for (i = 0; i < a->nticks; i++)
		widen(&lo, &hi, fwd(x, a->ticks[i]));
	if (lo > hi) {
		lo = 0;
		hi = 1;
	}
	if (a->lo == a->lo && fwd(x, a->lo) == fwd(x, a->lo))
		lo = fwd(x, a->lo);
	if (a->hi == a->hi && fwd(x, a->hi) == fwd(x, a->hi))
		hi = fwd(x, a->hi);
	if (hi < lo) {
		double t = lo;

		lo = hi;
		hi = t;
	}
	if (hi == lo) {
		double d = fabs(lo) > 0 ? fabs(lo) * 0.1 : 0.5;

		lo -= d;
		hi += d;
	}
	span = hi - lo;
	if (!(a->lo == a->lo))
		lo -= 0.04 * span;
	if (!(a->hi == a->hi))
		hi += 0.04 * span;
	x->lo = lo;
	x->hi = hi;
}

static void label_linear(char *b, size_t n, double v, double step)
{
	double m = fabs(v);
	int dec = (int)fmax(0, -floor(log10(step) + 1e-9));

	if (fabs(v) < step * 1e-6)
		v = 0;
	if (m != 0 && (m >= 1e6 || m < 1e-4))
		snprintf(b, n, "%.3g", v);
	else
		snprintf(b, n, "%.*f", dec > 10 ? 10 : dec, v);
}

static void ticks_of(ax *x, double px, double per)
{
	const gwb_plot_axis *a = x->a;
	double span = x->hi - x->lo, target = fmax(2, fmin(10, px / per)), raw, mag, f, step, v;
	size_t i;

	x->n = 0;
	if (a->nticks) {
		for (i = 0; i < a->nticks && x->n < MAX_TICKS; i++) {
			double t = fwd(x, a->ticks[i]);

			if (!(t == t) || t < x->lo - 1e-9 * span || t > x->hi + 1e-9 * span)
				continue;
			x->t[x->n] = t;
			x->fixed[x->n] = a->tick_labels[i] ? a->tick_labels[i] : "";
			x->n++;
		}
		return;
	}
	if (a->log && span >= 1) {   /* decades, every k-th when there are many */
		double k = ceil(span / target);

		for (v = ceil(x->lo / k - 1e-9) * k; v <= x->hi + 1e-9 && x->n < MAX_TICKS; v += k) {
			x->t[x->n] = v;
			snprintf(x->lab[x->n], sizeof(x->lab[0]), "%g", pow(10, v));
			x->n++;
		}
		if (x->n >= 2)
			return;
		x->n = 0;
	}
	if (a->log) {   /* less than two decades: 1, 2, 5 x 10^k in the value space */
		double vlo = pow(10, x->lo), vhi = pow(10, x->hi);

		raw = (vhi - vlo) / target;
		mag = pow(10, floor(log10(raw)));
		f = raw / mag;
		step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
		for (v = ceil(vlo / step) * step; v <= vhi * (1 + 1e-12) && x->n < MAX_TICKS; v += step) {
			if (v <= 0)
				continue;
			x->t[x->n] = log10(v);
			label_linear(x->lab[x->n], sizeof(x->lab[0]), v, step);
			x->n++;
		}
		return;
	}
	raw = span / target;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
	for (v = ceil(x->lo / step - 1e-9) * step; v <= x->hi + 1e-9 * span && x->n < MAX_TICKS;
	     v += step) {
		x->t[x->n] = v;
		label_linear(x->lab[x->n], sizeof(x->lab[0]), v, step);
		x->n++;
	}
}

static const char *tick_label(const ax *x, size_t i)
{
	return x->a->nticks ? x->fixed[i] : x->lab[i];
}

/* s cut to at most k characters (the last one '~' when cut) into b */
static const char *fit(char *b, size_t bn, const char *s, size_t k)
{
	size_t n = strlen(s), i = 0, c = 0, q;

	if (gwb_canvas_textlen(s) <= k || k == 0)
		return k == 0 ? "" : s;
	while (i < n && c + 1 < k) {
		q = gwb_utf8_seq((const unsigned char *)s + i, n - i);
		q = q ? q : 1;
		if (i + q + 2 > bn)
			break;
		i += q;
		c++;
	}
	memcpy(b, s, i);
	b[i] = '~';
	b[i + 1] = 0;
	return b;
}

typedef struct frame {
	double left, top, pw, ph;   /* the plot area */
	ax x, y;
} frame;

static double px_x(const frame *f, double v)
{
	double t = fwd(&f->x, v), u = (t - f->x.lo) / (f->x.hi - f->x.lo);

	return f->x.a->flip ? f->left + f->pw * (1 - u) : f->left + f->pw * u;
}

static double px_y(const frame *f, double v)
{
	double t = fwd(&f->y, v), u = (t - f->y.lo) / (f->y.hi - f->y.lo);

	return f->y.a->flip ? f->top + f->ph * u : f->top + f->ph * (1 - u);
}

static gwb_status draw_items(const gwb_plot *p, const frame *f, gwb_canvas *c)
{
	double sc = c->scale / 2.0;
	size_t i, j;

	for (i = 0; i < p->nitems; i++) {
		const gwb_plot_item *it = &p->items[i];

		if (it->kind == GWB_PLOT_LINE) {
			double *xy;
			size_t run = 0, bytes;

			if (gwb_mul_size(it->n ? it->n : 1, 2 * sizeof(double), &bytes) ||
			    !(xy = malloc(bytes)))
				return gwb_error(GWB_ENOMEM, "plot: out of memory for a line of %zu "
						 "points", it->n);
			for (j = 0; j <= it->n; j++) {
				double a = j < it->n ? px_x(f, it->x[j]) : NAN;
				double b = j < it->n ? px_y(f, it->y[j]) : NAN;

				if (a == a && b == b && fabs(a) < 1e7 && fabs(b) < 1e7) {
					xy[2 * run] = a;
					xy[2 * run + 1] = b;
					run++;
					continue;
				}
				if (run == 1)
					c->circle(c, xy[0], xy[1], fmax(1, it->size * sc / 2), it->color);
				else if (run > 1)
					c->polyline(c, xy, run, it->color, it->size * sc);
				run = 0;
			}
			free(xy);
		} else if (it->kind == GWB_PLOT_POINTS) {
			for (j = 0; j < it->n; j++) {
				double a = px_x(f, it->x[j]), b = px_y(f, it->y[j]);

				if (a == a && b == b && fabs(a) < 1e7 && fabs(b) < 1e7)
					c->circle(c, a, b, it->size * sc,
						  it->colors ? it->colors[j] : it->color);
			}
		} else if (it->kind == GWB_PLOT_RECTS) {
			for (j = 0; j < it->n; j++) {
				double a = px_x(f, it->x[2 * j]), b = px_y(f, it->y[2 * j]);
				double e = px_x(f, it->x[2 * j + 1]), g = px_y(f, it->y[2 * j + 1]);

				if (!(a == a && b == b && e == e && g == g))
					continue;
				a = fmax(-1e6, fmin(1e6, a));
				e = fmax(-1e6, fmin(1e6, e));
				b = fmax(-1e6, fmin(1e6, b));
				g = fmax(-1e6, fmin(1e6, g));
				c->rect(c, fmin(a, e), fmin(b, g), fabs(e - a), fabs(g - b),
					it->colors ? it->colors[j] : it->color, it->stroke,
					fmax(1, sc));
			}
		} else {
			for (j = 0; j < it->n; j++) {
				double a = px_x(f, it->x[j]), b = px_y(f, it->y[j]);

				if (a == a && b == b && it->texts[j])
					c->text(c, a, b + 3.5 * c->scale, it->texts[j],
						it->colors ? it->colors[j] : it->color,
						GWB_ANCHOR_MIDDLE, false);
			}
		}
	}
	return GWB_OK;
}

static void draw_legend(const gwb_plot *p, const frame *f, gwb_canvas *c)
{
	int s = c->scale;
	double cw = GWB_CANVAS_CW * s, row = 12 * s, pad = 5 * s, sw = 2 * cw, wmax = 0, w, h, x0,
	       y0, y;
	size_t i, shown = p->nlegend, maxrows = (size_t)fmax(1, (f->ph - 2 * pad) / row);
	char b[160], more[48];

	if (!p->nlegend)
		return;
	if (shown > maxrows)
		shown = maxrows - (maxrows > 1);   /* room for "+N more" */
	for (i = 0; i < shown; i++)
		wmax = fmax(wmax, (double)gwb_canvas_textlen(fit(b, sizeof(b), p->legend[i].label, 28)));
	snprintf(more, sizeof(more), "+%zu more", p->nlegend - shown);
	if (shown < p->nlegend)
		wmax = fmax(wmax, (double)strlen(more));
	w = pad + sw + cw + wmax * cw + pad;
	h = pad + (double)(shown + (shown < p->nlegend)) * row + pad / 2;
	x0 = f->left + f->pw - w - 4 * s;
	y0 = f->top + 4 * s;
	c->rect(c, x0, y0, w, h, 0xFFFFFF, 0xBBBBBB, fmax(1, s / 2.0));
	for (i = 0; i < shown; i++) {
		const gwb_plot_legend *l = &p->legend[i];
		double cy = y0 + pad + row * (double)i + row / 2;

		if (l->shape == GWB_PLOT_SWATCH_LINE) {
			double xy[4] = {x0 + pad, cy, x0 + pad + sw, cy};

			c->polyline(c, xy, 2, l->color, s);
		} else if (l->shape == GWB_PLOT_SWATCH_POINT) {
			c->circle(c, x0 + pad + sw / 2, cy, 1.5 * s, l->color);
		} else {
			c->rect(c, x0 + pad, cy - 3 * s, sw, 6 * s, l->color, GWB_PLOT_NONE, 0);
		}
		c->text(c, x0 + pad + sw + cw, cy + 3.5 * s, fit(b, sizeof(b), l->label, 28), TEXT_COLOR,
			GWB_ANCHOR_START, false);
	}
	if (shown < p->nlegend) {
		y = y0 + pad + row * (double)shown + row / 2;
		c->text(c, x0 + pad, y + 3.5 * s, more, TEXT_COLOR, GWB_ANCHOR_START, false);
	}
}

static gwb_status layout(const gwb_plot *p, gwb_canvas *c)
{
	int s = c->scale;
	double cw = GWB_CANVAS_CW * s, lh = GWB_CANVAS_CH * s, pad = 8 * s, tick = 4 * s, gap = 3 * s;
	double ytw = 0, right, bottom, slot;
	size_t i, k, kx, ky, ymax = (size_t)fmax(4, 0.35 * c->w / cw), xmax;
	frame f;
	char b[160];
	gwb_status st;

	memset(&f, 0, sizeof(f));
	f.x.a = &p->x;
	f.y.a = &p->y;
	range_of(p, &f.x, true);
	range_of(p, &f.y, false);
	f.top = pad + (p->title ? 2 * lh : 0);
	bottom = pad + tick + gap + lh + (p->x.label ? 2 * lh : 0);
	f.ph = c->h - f.top - bottom;
	ticks_of(&f.y, f.ph, 3 * lh);
	for (i = 0; i < f.y.n; i++)
		ytw = fmax(ytw, (double)gwb_canvas_textlen(fit(b, sizeof(b), tick_label(&f.y, i), ymax)));
	f.left = pad + (p->y.label ? 2 * lh : 0) + ytw * cw + tick + gap;
	right = pad + 3 * cw;
	f.pw = c->w - f.left - right;
	if (f.pw < 16 || f.ph < 16)
		return gwb_error(GWB_EINVAL, "plot save: %d x %d pixels leave no room for the plot "
				 "beside its labels; give a larger width and height", c->w, c->h);
	ticks_of(&f.x, f.pw, 10 * cw);
	/* fixed ticks closer than their labels need: label every kx-th (ky-th) only */
	slot = f.x.n ? f.pw / (double)f.x.n : f.pw;
	kx = f.x.a->nticks && slot < 4 * cw ? (size_t)ceil(4 * cw / slot) : 1;
	ky = f.y.a->nticks && f.y.n && f.ph / (double)f.y.n < 1.4 * lh ?
	     (size_t)ceil(1.4 * lh / (f.ph / (double)f.y.n)) : 1;
	xmax = (size_t)fmax(1, f.x.a->nticks ? slot * (double)kx / cw - 1 : 16);

	if (p->grid) {
		for (i = 0; i < f.x.n; i++) {
			double a = px_x(&f, f.x.a->log ? pow(10, f.x.t[i]) : f.x.t[i]);
			double xy[4] = {a, f.top, a, f.top + f.ph};

			c->polyline(c, xy, 2, GRID_COLOR, fmax(1, s / 2.0));
		}
		for (i = 0; i < f.y.n; i++) {
			double a = px_y(&f, f.y.a->log ? pow(10, f.y.t[i]) : f.y.t[i]);
			double xy[4] = {f.left, a, f.left + f.pw, a};

			c->polyline(c, xy, 2, GRID_COLOR, fmax(1, s / 2.0));
		}
	}
	c->clip(c, true, f.left, f.top, f.pw, f.ph);
	st = draw_items(p, &f, c);
	c->clip(c, false, 0, 0, 0, 0);
	if (st)
		return st;
	c->rect(c, f.left, f.top, f.pw, f.ph, GWB_PLOT_NONE, AXIS_COLOR, fmax(1, s / 2.0));
	for (i = 0; i < f.x.n; i++) {
		double a = px_x(&f, f.x.a->log ? pow(10, f.x.t[i]) : f.x.t[i]);
		double xy[4] = {a, f.top + f.ph, a, f.top + f.ph + tick};

		c->polyline(c, xy, 2, AXIS_COLOR, fmax(1, s / 2.0));
		if (i % kx)
			continue;
		c->text(c, a, f.top + f.ph + tick + gap + lh - s,
			fit(b, sizeof(b), tick_label(&f.x, i), xmax), TEXT_COLOR, GWB_ANCHOR_MIDDLE,
			false);
	}
	for (i = 0; i < f.y.n; i++) {
		double a = px_y(&f, f.y.a->log ? pow(10, f.y.t[i]) : f.y.t[i]);
		double xy[4] = {f.left - tick, a, f.left, a};

		c->polyline(c, xy, 2, AXIS_COLOR, fmax(1, s / 2.0));
		if (i % ky)
			continue;
		c->text(c, f.left - tick - gap, a + 3.5 * s, fit(b, sizeof(b), tick_label(&f.y, i), ymax),
			TEXT_COLOR, GWB_ANCHOR_END, false);
	}
	k = (size_t)fmax(1, (c->w - 2 * pad) / cw);
	if (p->x.label)
		c->text(c, f.left + f.pw / 2, c->h - pad, fit(b, sizeof(b), p->x.label, k), TEXT_COLOR,
			GWB_ANCHOR_MIDDLE, false);
	if (p->y.label)
		c->text(c, pad + lh, f.top + f.ph / 2,
			fit(b, sizeof(b), p->y.label, (size_t)fmax(1, f.ph / cw)), TEXT_COLOR,
			GWB_ANCHOR_MIDDLE, true);
	if (p->title)
		c->text(c, c->w / 2.0, pad + lh, fit(b, sizeof(b), p->title, k), 0x000000,
			GWB_ANCHOR_MIDDLE, false);
	draw_legend(p, &f, c);
	return GWB_OK;
}

gwb_status gwb_plot_render(const gwb_plot *p, gwb_plot_format fmt, int w, int h,
			   unsigned char **out, size_t *n)
{
	gwb_canvas *c;
	gwb_status st;
	int s;

	if (w < 16 || h < 16 || w > GWB_PLOT_MAX_SIDE || h > GWB_PLOT_MAX_SIDE)
		return gwb_error(GWB_EINVAL, "plot save: width and height must be 16 to %d pixels "
				 "(got %d x %d)", GWB_PLOT_MAX_SIDE, w, h);
	s = (int)fmax(1, floor((w < h ? w : h) / 320.0 + 0.5));
	c = fmt == GWB_PLOT_SVG ? gwb_canvas_svg(w, h, s) : gwb_canvas_png(w, h, s);
	if (!c)
		return gwb_error(GWB_ENOMEM, "plot save: out of memory for a %d x %d picture", w, h);
	st = layout(p, c);
	if (st) {
		c->release(c);
		return st;
	}
	return c->finish(c, out, n);
}

gwb_status gwb_plot_save(const gwb_plot *p, const char *path, int w, int h, size_t *bytes)
{
	gwb_plot_format fmt;
	unsigned char *buf = NULL;
	size_t n = 0;
	gwb_status st;

	if ((st = gwb_plot_format_of(path, &fmt)))
		return st;
	if ((st = gwb_plot_render(p, fmt, w, h, &buf, &n)))
		return st;
	st = gwb_file_save(path, buf, n, "plot save");
	free(buf);
	if (!st && bytes)
		*bytes = n;
	return st;
}
