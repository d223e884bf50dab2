/* plot_png.c - the PNG back end of plots (plot_canvas.h): the primitives rasterized into an
 * RGB buffer (lines as runs of round stamps, filled rectangles and circles, text in a 5 x 7
 * bitmap font drawn below and scaled by the canvas scale), clipped to a rectangle, then
 * encoded by libpng's simplified write API into memory. Uses fmt.c (UTF-8 sequences) and
 * libpng (linked statically), nothing else of gwb. */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "plot_canvas.h"
#include "size.h"

/* The font: printable ASCII (32 to 126), 7 rows of 5 columns each, '#' is ink. Drawn for
 * gwb; any other character is drawn as the hollow box at the end. */
static const char *const font[96] = {
	/*   */ "....." "....." "....." "....." "....." "....." ".....",
	/* ! */ "..#.." "..#.." "..#.." "..#.." "..#.." "....." "..#..",
	/* " */ ".#.#." ".#.#." ".#.#." "....." "....." "....." ".....",
	/* # */ ".#.#." ".#.#." "#####" ".#.#." "#####" ".#.#." ".#.#.",
	/* $ */ "..#.." ".####" "#.#.." ".###." "..#.#" "####." "..#..",
	/* % */ "##..." "##..#" "...#." "..#.." ".#..." "#..##" "...##",
	/* & */ ".##.." "#..#." "#.#.." ".#..." "#.#.#" "#..#." ".##.#",
	/* ' */ "..#.." "..#.." ".#..." "....." "....." "....." ".....",
	/* ( */ "...#." "..#.." ".#..." ".#..." ".#..." "..#.." "...#.",
	/* ) */ ".#..." "..#.." "...#." "...#." "...#." "..#.." ".#...",
	/* * */ "....." "..#.." "#.#.#" ".###." "#.#.#" "..#.." ".....",
	/* + */ "....." "..#.." "..#.." "#####" "..#.." "..#.." ".....",
	/* , */ "....." "....." "....." "....." ".##.." "..#.." ".#...",
	/* - */ "....." "....." "....." "#####" "....." "....." ".....",
	/* . */ "....." "....." "....." "....." "....." ".##.." ".##..",
	/* / */ "....." "....#" "...#." "..#.." ".#..." "#...." ".....",
	/* 0 */ ".###." "#...#" "#..##" "#.#.#" "##..#" "#...#" ".###.",
	/* 1 */ "..#.." ".##.." "..#.." "..#.." "..#.." "..#.." ".###.",
	/* 2 */ ".###." "#...#" "....#" "...#." "..#.." ".#..." "#####",
	/* 3 */ "#####" "...#." "..#.." "...#." "....#" "#...#" ".###.",
	/* 4 */ "...#." "..##." ".#.#." "#..#." "#####" "...#." "...#.",
	/* 5 */ "#####" "#...." "####." "....#" "....#" "#...#" ".###.",
	/* 6 */ "..##." ".#..." "#...." "####." "#...#" "#...#" ".###.",
	/* 7 */ "#####" "....#" "...#." "..#.." ".#..." ".#..." ".#...",
	/* 8 */ ".###." "#...#" "#...#" ".###." "#...#" "#...#" ".###.",
	/* 9 */ ".###." "#...#" "#...#" ".####" "....#" "...#." ".##..",
	/* : */ "....." ".##.." ".##.." "....." ".##.." ".##.." ".....",
	/* ; */ "....." ".##.." ".##.." "....." ".##.." "..#.." ".#...",
	/* < */ "...#." "..#.." ".#..." "#...." ".#..." "..#.." "...#.",
	/* = */ "....." "....." "#####" "....." "#####" "....." ".....",
	/* > */ ".#..." "..#.." "...#." "....#" "...#." "..#.." ".#...",
	/* ? */ ".###." "#...#" "....#" "...#." "..#.." "....." "..#..",
	/* @ */ ".###." "#...#" "....#" ".##.#" "#.#.#" "#.#.#" ".###.",
	/* A */ ".###." "#...#" "#...#" "#####" "#...#" "#...#" "#...#",
	/* B */ "####." "#...#" "#...#" "####." "#...#" "#...#" "####.",
	/* C */ ".###." "#...#" "#...." "#...." "#...." "#...#" ".###.",
	/* D */ "###.." "#..#." "#...#" "#...#" "#...#" "#..#." "###..",
	/* E */ "#####" "#...." "#...." "####." "#...." "#...." "#####",
	/* F */ "#####" "#...." "#...." "####." "#...." "#...." "#....",
	/* G */ ".###." "#...#" "#...." "#.###" "#...#" "#...#" ".####",
	/* H */ "#...#" "#...#" "#...#" "#####" "#...#" "#...#" "#...#",
	/* I */ ".###." "..#.." "..#.." "..#.." "..#.." "..#.." ".###.",
	/* J */ "..###" "...#." "...#." "...#." "...#." "#..#." ".##..",
	/* K */ "#...#" "#..#." "#.#.." "##..." "#.#.." "#..#." "#...#",
	/* L */ "#...." "#...." "#...." "#...." "#...." "#...." "#####",
	/* M */ "#...#" "##.##" "#.#.#" "#.#.#" "#...#" "#...#" "#...#",
	/* N */ "#...#" "#...#" "##..#" "#.#.#" "#..##" "#...#" "#...#",
	/* O */ ".###." "#...#" "#...#" "#...#" "#...#" "#...#" ".###.",
	/* P */ "####." "#...#" "#...#" "####." "#...." "#...." "#....",
	/* Q */ ".###." "#...#" "#...#" "#...#" "#.#.#" "#..#." ".##.#",
	/* R */ "####." "#...#" "#...#" "####." "#.#.." "#..#." "#...#",
	/* S */ ".####" "#...." "#...." ".###." "....#" "....#" "####.",
	/* T */ "#####" "..#.." "..#.." "..#.." "..#.." "..#.." "..#..",
	/* U */ "#...#" "#...#" "#...#" "#...#" "#...#" "#...#" ".###.",
	/* V */ "#...#" "#...#" "#...#" "#...#" "#...#" ".#.#." "..#..",
	/* W */ "#...#" "#...#" "#...#" "#.#.#" "#.#.#" "#.#.#" ".#.#.",
	/* X */ "#...#" "#...#" ".#.#." "..#.." ".#.#." "#...#" "#...#",
	/* Y */ "#...#" "#...#" ".#.#." "..#.." "..#.." "..#.." "..#..",
	/* Z */ "#####" "....#" "...#." "..#.." ".#..." "#...." "#####",
	/* [ */ ".###." ".#..." ".#..." ".#..." ".#..." ".#..." ".###.",
	/* \ */ "....." "#...." ".#..." "..#.." "...#." "....#" ".....",
	/* ] */ ".###." "...#." "...#." "...#." "...#." "...#." ".###.",
	/* ^ */ "..#.." ".#.#." "#...#" "....." "....." "....." ".....",
	/* _ */ "....." "....." "....." "....." "....." "....." "#####",
	/* ` */ ".#..." "..#.." "...#." "....." "....." "....." ".....",
	/* a */ "....." "....." ".###." "....#" ".####" "#...#" ".####",
	/* b */ "#...." "#...." "#.##." "##..#" "#...#" "#...#" "####.",
	/* c */ "....." "....." ".###." "#...." "#...." "#...#" ".###.",
	/* d */ "....#" "....#" ".##.#" "#..##" "#...#" "#...#" ".####",
	/* e */ "....." "....." ".###." "#...#" "#####" "#...." ".###.",
	/* f */ "..##." ".#..#" ".#..." "###.." ".#..." ".#..." ".#...",
	/* g */ "....." ".####" "#...#" "#...#" ".####" "....#" ".###.",
	/* h */ "#...." "#...." "#.##." "##..#" "#...#" "#...#" "#...#",
	/* i */ "..#.." "....." ".##.." "..#.." "..#.." "..#.." ".###.",
	/* j */ "...#." "....." "..##." "...#." "...#." "#..#." ".##..",
	/* k */ "#...." "#...." "#..#." "#.#.." "##..." "#.#.." "#..#.",
	/* l */ ".##.." "..#.." "..#.." "..#.." "..#.." "..#.." ".###.",
	/* m */ "....." "....." "##.#." "#.#.#" "#.#.#" "#...#" "#...#",
	/* n */ "....." "....." "#.##." "##..#" "#...#" "#...#" "#...#",
	/* o */ "....." "....." ".###." "#...#" "#...#" "#...#" ".###.",
	/* p */ "....." "....." "####." "#...#" "####." "#...." "#....",
	/* q */ "....." "....." ".##.#" "#..##" ".####" "....#" "....#",
	/* r */ "....." "....." "#.##." "##..#" "#...." "#...." "#....",
	/* s */ "....." "....." ".###." "#...." ".###." "....#" "####.",
	/* t */ ".#..." ".#..." "###.." ".#..." ".#..." ".#..#" "..##.",
	/* u */ "....." "....." "#...#" "#...#" "#...#" "#..##" ".##.#",
	/* v */ "....." "....." "#...#" "#...#" "#...#" ".#.#." "..#..",
	/* w */ "....." "....." "#...#" "#...#" "#.#.#" "#.#.#" ".#.#.",
	/* x */ "....." "....." "#...#" ".#.#." "..#.." ".#.#." "#...#",
	/* y */ "....." "....." "#...#" "#...#" ".####" "....#" ".###.",
	/* z */ "....." "....." "#####" "...#." "..#.." ".#..." "#####",
	/* { */ "...#." "..#.." "..#.." ".#..." "..#.." "..#.." "...#.",
	/* | */ "..#.." "..#.." "..#.." "..#.." "..#.." "..#.." "..#..",
	/* } */ ".#..." "..#.." "..#.." "...#." "..#.." "..#.." ".#...",
	/* ~ */ "....." "....." ".#..." "#.#.#" "...#." "....." ".....",
	/* ? */ "#####" "#...#" "#...#" "#...#" "#...#" "#...#" "#####",
};

typedef struct raster {
	gwb_canvas c;          /* first: the canvas the layout sees */
	unsigned char *rgb;    /* w x h x 3 */
	int cx0, cy0, cx1, cy1;   /* the clip rectangle, [cx0, cx1) x [cy0, cy1) */
} raster;

static void pset(raster *p, int x, int y, uint32_t c)
{
	unsigned char *q;

	if (x < p->cx0 || y < p->cy0 || x >= p->cx1 || y >= p->cy1)
		return;
	q = p->rgb + ((size_t)y * (size_t)p->c.w + (size_t)x) * 3;
	q[0] = (unsigned char)(c >> 16);
	q[1] = (unsigned char)(c >> 8);
	q[2] = (unsigned char)c;
}

/* fill [x0, x1) x [y0, y1), bounded by the clip first (no loop over what is cut off) */
static void fill(raster *p, double x0, double y0, double x1, double y1, uint32_t c)
{
	int a, b, e, f, x, y;

	if (!(x0 == x0 && y0 == y0 && x1 == x1 && y1 == y1))
		return;
	a = (int)fmax(floor(x0 + 0.5), p->cx0);
	b = (int)fmin(floor(x1 + 0.5), p->cx1);
	e = (int)fmax(floor(y0 + 0.5), p->cy0);
	f = (int)fmin(floor(y1 + 0.5), p->cy1);
	for (y = e; y < f; y++)
		for (x = a; x < b; x++)
			pset(p, x, y, c);
}

static void disk(raster *p, double cx, double cy, double r, uint32_t c)
{
	int x, y, x0, x1, y0, y1;

	if (!(cx == cx && cy == cy) || r <= 0)
		return;
	if (r < 0.75) {
		pset(p, (int)floor(cx), (int)floor(cy), c);
		return;
	}
	x0 = (int)fmax(floor(cx - r), p->cx0);
	x1 = (int)fmin(ceil(cx + r), p->cx1 - 1);
	y0 = (int)fmax(floor(cy - r), p->cy0);
	y1 = (int)fmin(ceil(cy + r), p->cy1 - 1);
	for (y = y0; y <= y1; y++)
		for (x = x0; x <= x1; x++) {
			double dx = x + 0.5 - cx, dy = y + 0.5 - cy;

			if (dx * dx + dy * dy <= r * r)
				pset(p, x, y, c);
		}
}

static void rs_polyline(gwb_canvas *c, const double *xy, size_t n, uint32_t color, double width)
{
	raster *p = (raster *)c;
	double r = width / 2;
	size_t i;

	for (i = 1; i < n; i++) {
		double x0 = xy[2 * i - 2], y0 = xy[2 * i - 1], x1 = xy[2 * i], y1 = xy[2 * i + 1];
		double len = hypot(x1 - x0, y1 - y0), k, steps;

		if (!(len == len) || len > 1e6)   /* far off the picture: left to the clip */
			continue;
		steps = ceil(len * 2) + 1;
		for (k = 0; k <= steps; k++) {
			double t = k / steps;

			disk(p, x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, r, color);
		}
	}
}

static void rs_rect(gwb_canvas *c, double x, double y, double w, double h, uint32_t f,
		     uint32_t stroke, double width)
{
	raster *p = (raster *)c;

	if (f != GWB_PLOT_NONE)
		fill(p, x, y, x + w, y + h, f);
	if (stroke != GWB_PLOT_NONE) {
		double lw = fmax(1, floor(width + 0.5));

		fill(p, x, y, x + w, y + lw, stroke);
		fill(p, x, y + h - lw, x + w, y + h, stroke);
		fill(p, x, y, x + lw, y + h, stroke);
		fill(p, x + w - lw, y, x + w, y + h, stroke);
	}
}

static void rs_circle(gwb_canvas *c, double cx, double cy, double r, uint32_t f)
{
	disk((raster *)c, cx, cy, r, f);
}

static void rs_text(gwb_canvas *c, double x, double y, const char *s, uint32_t color,
		     int anchor, bool rotate)
{
	raster *p = (raster *)c;
	const unsigned char *t = (const unsigned char *)s;
	int sc = c->scale, cw = GWB_CANVAS_CW * sc, asc = 7 * sc;
	size_t len = gwb_canvas_textlen(s), n = strlen(s), i = 0, q;
	double wd = (double)len * cw - sc, u0 = 0;
	int k = 0;

	if (anchor == GWB_ANCHOR_MIDDLE)
		u0 = -wd / 2;
	else if (anchor == GWB_ANCHOR_END)
		u0 = -wd;
	while (i < n) {
		const char *g;
		int gx, gy, dx, dy;

		q = gwb_utf8_seq(t + i, n - i);
		g = q == 1 && t[i] >= 32 && t[i] < 127 ? font[t[i] - 32] : font[95];
		i += q ? q : 1;
		for (gy = 0; gy < 7; gy++)
			for (gx = 0; gx < 5; gx++) {
				if (g[gy * 5 + gx] != '#')
					continue;
				for (dy = 0; dy < sc; dy++)
					for (dx = 0; dx < sc; dx++) {
						double u = u0 + k * cw + gx * sc + dx;   /* along the baseline */
						double v = gy * sc + dy - asc;        /* down from it */
						double px = rotate ? x + v : x + u;
						double py = rotate ? y - u : y + v;

						pset(p, (int)floor(px + 0.5), (int)floor(py + 0.5), color);
					}
			}
		k++;
	}
}

static void rs_clip(gwb_canvas *c, bool on, double x, double y, double w, double h)
{
	raster *p = (raster *)c;

	p->cx0 = p->cy0 = 0;
	p->cx1 = c->w;
	p->cy1 = c->h;
	if (!on)
		return;
	p->cx0 = (int)fmax(0, floor(x));
	p->cy0 = (int)fmax(0, floor(y));
	p->cx1 = (int)fmin(c->w, ceil(x + w));
	p->cy1 = (int)fmin(c->h, ceil(y + h));
}

static void rs_release(gwb_canvas *c)
{
	raster *p = (raster *)c;

	free(p->rgb);
	free(p);
}

static gwb_status rs_finish(gwb_canvas *c, unsigned char **out, size_t *n)
{
	raster *p = (raster *)c;
	png_image img;
	png_alloc_size_t size = 0;
	unsigned char *buf;
	gwb_status st = GWB_OK;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	img.width = (png_uint_32)c->w;
	img.height = (png_uint_32)c->h;
	img.format = PNG_FORMAT_RGB;
	if (!png_image_write_to_memory(&img, NULL, &size, 0, p->rgb, 0, NULL)) {
		st = gwb_error(GWB_EIO, "plot: libpng could not encode the picture: %s", img.message);
		goto out_release;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		st = gwb_error(GWB_ENOMEM, "plot: out of memory for a %zu-byte PNG", (size_t)size);
		goto out_release;
	}
	if (!png_image_write_to_memory(&img, buf, &size, 0, p->rgb, 0, NULL)) {
		st = gwb_error(GWB_EIO, "plot: libpng could not encode the picture: %s", img.message);
		free(buf);
		goto out_release;
	}
	*out = buf;
	*n = size;
out_release:
	png_image_free(&img);
	rs_release(c);
	return st;
}

gwb_canvas *gwb_canvas_png(int w, int h, int scale)
{
	raster *p = calloc(1, sizeof(*p));
	size_t bytes;

	if (!p)
		return NULL;
	if (gwb_mul3_size((size_t)w, (size_t)h, 3, &bytes) || !(p->rgb = malloc(bytes))) {
		free(p);
		return NULL;
	}
	memset(p->rgb, 0xFF, bytes);
	p->c = (gwb_canvas){w, h, scale, rs_polyline, rs_rect, rs_circle, rs_text, rs_clip,
			    rs_finish, rs_release};
	rs_clip(&p->c, false, 0, 0, 0, 0);
	return &p->c;
}
