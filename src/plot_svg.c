/* plot_svg.c - the SVG back end of plots (plot_canvas.h): each primitive written as an SVG
 * element into a growing text buffer, coordinates in pixels with two decimals, text escaped
 * for XML (& < > " ', control characters and invalid UTF-8 as U+FFFD), clipping by a
 * clipPath per plot area. Uses fmt.c (UTF-8 sequences) and nothing else of gwb. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "plot_canvas.h"
#include "size.h"

typedef struct svg {
	gwb_canvas c;      /* first: the canvas the layout sees */
	char *buf;
	size_t len, cap;
	bool oom;          /* an append failed: finish reports GWB_ENOMEM */
	bool clipped;      /* inside a <g clip-path> */
	int nclip;         /* clip paths made so far (their ids) */
} svg;

static void put(svg *s, const char *p, size_t n)
{
	size_t need;

	if (s->oom)
		return;
	if (gwb_add_size(s->len, n + 1, &need)) {
		s->oom = true;
		return;
	}
	if (need > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *b;

		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		b = realloc(s->buf, cap);
		if (!b) {
			s->oom = true;
			return;
		}
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = 0;
}

static void putf(svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(svg *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	put(s, tmp, (size_t)k < sizeof(tmp) ? (size_t)k : sizeof(tmp) - 1);
}

/* text escaped for XML character data and attribute values */
static void put_escaped(svg *s, const char *t)
{
	const unsigned char *p = (const unsigned char *)t;
	size_t n = strlen(t), i = 0, q;

	while (i < n) {
		unsigned char ch = p[i];

		switch (ch) {
		case '&': put(s, "&amp;", 5); i++; continue;
		case '<': put(s, "&lt;", 4); i++; continue;
		case '>': put(s, "&gt;", 4); i++; continue;
		case '"': put(s, "&quot;", 6); i++; continue;
		case '\'': put(s, "&apos;", 6); i++; continue;
		default: break;
		}
		if (ch < 0x20 || ch == 0x7f) {   /* not allowed in XML 1.0 (tab and newline blur) */
			put(s, ch == '\t' || ch == '\n' ? " " : "\xEF\xBF\xBD", ch == '\t' || ch == '\n' ? 1 : 3);
			i++;
			continue;
		}
		q = gwb_utf8_seq(p + i, n - i);
		if (!q) {
			put(s, "\xEF\xBF\xBD", 3);
			i++;
			continue;
		}
		put(s, t + i, q);
		i += q;
	}
}

static void put_color(svg *s, const char *attr, uint32_t c)
{
	if (c == GWB_PLOT_NONE)
		putf(s, " %s=\"none\"", attr);
	else
		putf(s, " %s=\"#%06x\"", attr, (unsigned)(c & 0xFFFFFF));
}

static void svg_polyline(gwb_canvas *c, const double *xy, size_t n, uint32_t color, double width)
{
	svg *s = (svg *)c;
	size_t i;

	if (n < 2)
		return;
	put(s, "<polyline points=\"", 18);
	for (i = 0; i < n; i++)
		putf(s, "%s%.2f,%.2f", i ? " " : "", xy[2 * i], xy[2 * i + 1]);
	put(s, "\" fill=\"none\"", 13);
	put_color(s, "stroke", color);
	putf(s, " stroke-width=\"%.2f\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n", width);
}

static void svg_rect(gwb_canvas *c, double x, double y, double w, double h, uint32_t fill,
		     uint32_t stroke, double width)
{
	svg *s = (svg *)c;

	putf(s, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", x, y, w, h);
	put_color(s, "fill", fill);
	if (stroke != GWB_PLOT_NONE) {
		put_color(s, "stroke", stroke);
		putf(s, " stroke-width=\"%.2f\"", width);
	}
	put(s, "/>\n", 3);
}

static void svg_circle(gwb_canvas *c, double cx, double cy, double r, uint32_t fill)
{
	svg *s = (svg *)c;

	putf(s, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\"", cx, cy, r);
	put_color(s, "fill", fill);
	put(s, "/>\n", 3);
}

static void svg_text(gwb_canvas *c, double x, double y, const char *t, uint32_t color,
		     int anchor, bool rotate)
{
	static const char *const an[] = {"start", "middle", "end"};
	svg *s = (svg *)c;

	putf(s, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\"", x, y, an[anchor]);
	if (rotate)
		putf(s, " transform=\"rotate(-90 %.2f %.2f)\"", x, y);
	put_color(s, "fill", color);
	put(s, ">", 1);
	put_escaped(s, t);
	put(s, "</text>\n", 8);
}

static void svg_clip(gwb_canvas *c, bool on, double x, double y, double w, double h)
{
	svg *s = (svg *)c;

	if (s->clipped) {
		put(s, "</g>\n", 5);
		s->clipped = false;
	}
	if (!on)
		return;
	s->nclip++;
	putf(s, "<clipPath id=\"area%d\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
	     "height=\"%.2f\"/></clipPath>\n<g clip-path=\"url(#area%d)\">\n",
	     s->nclip, x, y, w, h, s->nclip);
	s->clipped = true;
}

static void svg_release(gwb_canvas *c)
{
	svg *s = (svg *)c;

	free(s->buf);
	free(s);
}

static gwb_status svg_finish(gwb_canvas *c, unsigned char **out, size_t *n)
{
	svg *s = (svg *)c;

	svg_clip(c, false, 0, 0, 0, 0);
	put(s, "</svg>\n", 7);
	if (s->oom) {
		svg_release(c);
		return gwb_error(GWB_ENOMEM, "plot: out of memory writing the SVG text");
	}
	*out = (unsigned char *)s->buf;
	*n = s->len;
	free(s);
	return GWB_OK;
}

gwb_canvas *gwb_canvas_svg(int w, int h, int scale)
{
	svg *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = (gwb_canvas){w, h, scale, svg_polyline, svg_rect, svg_circle, svg_text, svg_clip,
			    svg_finish, svg_release};
	putf(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	     "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, monospace\" "
	     "font-size=\"%d\">\n", w, h, w, h, 10 * scale);
	putf(s, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", w, h);
	if (s->oom) {
		svg_release(&s->c);
		return NULL;
	}
	return &s->c;
}
