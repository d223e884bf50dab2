/* plot.h - the drawing model every saved plot is made from: a title, two axes (label, linear
 * or log scale, range, fixed ticks for categories) and a list of primitives in data
 * coordinates (lines, points, rectangles, texts) with a legend; laid out once (ticks, margins,
 * legend) and drawn by two back ends, SVG text (plot_svg.c) and a PNG raster (plot_png.c).
 * The caller owns a gwb_plot and frees it with gwb_plot_free(); everything the setters store
 * (strings, arrays) is the plot's. Rendered bytes are the caller's (free()). */
#ifndef GWB_PLOT_H
#define GWB_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define GWB_PLOT_NONE 0xFFFFFFFFu   /* "no colour": a rectangle without an outline */
#define GWB_PLOT_MAX_SIDE 10000     /* the largest width or height in pixels */

typedef enum gwb_plot_kind {
	GWB_PLOT_LINE,    /* a polyline through n points (broken where a point is NaN) */
	GWB_PLOT_POINTS,  /* n filled circles */
	GWB_PLOT_RECTS,   /* n filled rectangles, corners (x[2i], y[2i]) and (x[2i+1], y[2i+1]) */
	GWB_PLOT_TEXTS,   /* n strings centred at (x[i], y[i]) */
} gwb_plot_kind;

typedef struct gwb_plot_item {
	gwb_plot_kind kind;
	size_t n;          /* points, rectangles or texts */
	double *x, *y;     /* n positions (2n corners for rectangles), data coordinates */
	uint32_t color;    /* 0xRRGGBB: the line, the points, the fill, the text */
	uint32_t *colors;  /* a colour per element (points, rectangles, texts), or NULL */
	uint32_t stroke;   /* rectangles: the outline, or GWB_PLOT_NONE */
	double size;       /* line width or point radius in pixels of a 640 x 480 picture */
	char **texts;      /* texts: n UTF-8 strings */
} gwb_plot_item;

typedef struct gwb_plot_axis {
	char *label;       /* under the x axis, beside the y axis; NULL for none */
	bool log;          /* log10 scale: values <= 0 are not drawn */
	bool flip;         /* lo at the top (y) or at the right (x): a heatmap's rows */
	double lo, hi;     /* the range; NaN: from the data (padded 4 %) */
	size_t nticks;     /* fixed ticks (categories), else chosen (1, 2, 5 x 10^k) */
	double *ticks;
	char **tick_labels;
} gwb_plot_axis;

typedef enum gwb_plot_shape { GWB_PLOT_SWATCH_RECT, GWB_PLOT_SWATCH_LINE, GWB_PLOT_SWATCH_POINT }
	gwb_plot_shape;

typedef struct gwb_plot_legend {
	char *label;
	uint32_t color;
	gwb_plot_shape shape;
} gwb_plot_legend;

typedef struct gwb_plot {
	char *title;
	gwb_plot_axis x, y;
	bool grid;              /* light lines at the ticks */
	gwb_plot_item *items;
	size_t nitems, cap;
	gwb_plot_legend *legend;
	size_t nlegend;
} gwb_plot;

typedef enum gwb_plot_format { GWB_PLOT_SVG, GWB_PLOT_PNG } gwb_plot_format;

/* A plot with no items, axes from the data, grid on; NULL when out of memory. */
gwb_plot *gwb_plot_new(void);
void gwb_plot_free(gwb_plot *p);

/* Append an item of kind with room for n elements (x, y and, for texts, n NULL strings;
 * colors stays NULL). NULL when out of memory (the plot is unchanged). */
gwb_plot_item *gwb_plot_add(gwb_plot *p, gwb_plot_kind kind, size_t n);

/* Store a copy of s in *dst (freeing the old one); GWB_ENOMEM. */
gwb_status gwb_plot_setstr(char **dst, const char *s);

/* Room for n fixed ticks on axis a (values 0, labels NULL); GWB_ENOMEM. */
gwb_status gwb_plot_ticks(gwb_plot_axis *a, size_t n);

/* Append a legend entry; GWB_ENOMEM. */
gwb_status gwb_plot_legend_add(gwb_plot *p, const char *label, uint32_t color,
			       gwb_plot_shape shape);

/* The format a file name asks for by its extension (.svg, .png, any case); GWB_EINVAL with a
 * message naming the path otherwise. */
gwb_status gwb_plot_format_of(const char *path, gwb_plot_format *fmt);

/* Draw p at w x h pixels (16 to GWB_PLOT_MAX_SIDE each) into *out (n bytes, the caller's). */
gwb_status gwb_plot_render(const gwb_plot *p, gwb_plot_format fmt, int w, int h,
			   unsigned char **out, size_t *n);

/* Render p in the format path's extension names and save it atomically (fileio.c); *bytes:
 * the file's size. Errors name the path (and errno's text for the write). */
gwb_status gwb_plot_save(const gwb_plot *p, const char *path, int w, int h, size_t *bytes);

#endif
