/* plot_canvas.h - what a plot back end draws: a canvas of primitives in pixels (y down),
 * filled by plot.c's layout and implemented by plot_svg.c (SVG text) and plot_png.c (an RGB
 * raster encoded by libpng). Text is measured the same way for both: a cell of
 * GWB_CANVAS_CW x GWB_CANVAS_CH pixels per character at scale 1 (plot_png.c's 5 x 7 font
 * with a column and a row of space; monospace at 10 px in SVG), times the canvas scale. */
#ifndef GWB_PLOT_CANVAS_H
#define GWB_PLOT_CANVAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fmt.h"
#include "status.h"

#define GWB_CANVAS_CW 6   /* a character's advance at scale 1 */
#define GWB_CANVAS_CH 8   /* a character's height (7 rows of ink and one of space) */

enum { GWB_ANCHOR_START, GWB_ANCHOR_MIDDLE, GWB_ANCHOR_END };

typedef struct gwb_canvas gwb_canvas;
struct gwb_canvas {
	int w, h, scale;   /* pixels; scale multiplies the font and the sizes */
	/* n points (xy pairs) joined by lines of width px */
	void (*polyline)(gwb_canvas *c, const double *xy, size_t n, uint32_t color, double width);
	/* a rectangle's fill (GWB_PLOT_NONE: none) and outline (GWB_PLOT_NONE: none) */
	void (*rect)(gwb_canvas *c, double x, double y, double w, double h, uint32_t fill,
		     uint32_t stroke, double width);
	void (*circle)(gwb_canvas *c, double cx, double cy, double r, uint32_t fill);
	/* text with its baseline's anchor point at (x, y); rotate: read bottom to top */
	void (*text)(gwb_canvas *c, double x, double y, const char *s, uint32_t color, int anchor,
		     bool rotate);
	/* later primitives are drawn only inside this rectangle (on) or everywhere (off) */
	void (*clip)(gwb_canvas *c, bool on, double x, double y, double w, double h);
	/* the picture's bytes (the caller's) once drawing ends; releases the canvas */
	gwb_status (*finish)(gwb_canvas *c, unsigned char **out, size_t *n);
	void (*release)(gwb_canvas *c);   /* give up without bytes */
};

/* The characters of s as drawn: a valid UTF-8 sequence counts one, so does an invalid byte. */
static inline size_t gwb_canvas_textlen(const char *s)
{
	size_t k = 0, n = strlen(s), i = 0, q;

	while (i < n) {
		q = gwb_utf8_seq((const unsigned char *)s + i, n - i);
		i += q ? q : 1;
		k++;
	}
	return k;
}

/* New canvases of w x h at scale, all white; NULL when out of memory. */
gwb_canvas *gwb_canvas_svg(int w, int h, int scale);
gwb_canvas *gwb_canvas_png(int w, int h, int scale);

#endif
