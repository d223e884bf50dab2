/* verbs_gpu.c - the table verbs on a GPU-resident Dataset (verbs_gpu.h): the backend choice and
 * its reason, the device views of a table's columns (X's float32 columns, the exact 64-bit ones
 * and the target, which gwb_dataset_to_gpu put there), category ranks for the keys, and the
 * results: filter and sort gather every column on the device and copy the new table back once
 * (the device copy stays as the result's); group_by and value_counts bring back per-group
 * numbers only and build their tables as the CPU path does (gwb_table_build from the groups'
 * first rows), then put the result on the device. */
#define _GNU_SOURCE
#include "verbs_gpu.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "column.h"
#include "gpu.h"
#include "intr.h"
#include "verbs.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/verbs.h"
#endif

static struct {
	bool gpu;
	char why[256];
} note;

static int group_method;   /* gwb_verbs_gpu_group_method */

void gwb_verbs_gpu_group_method(int method)
{
	group_method = method;
}

const char *gwb_verbs_note(const char **why)
{
	if (why)
		*why = note.why;
	return note.gpu ? "gpu" : "cpu";
}

void gwb_verbs_note_reset(void)
{
	note.gpu = false;
	note.why[0] = 0;
}

void gwb_verbs_note_set(bool gpu, const char *fmt, ...)
{
	va_list ap;

	note.gpu = gpu;
	va_start(ap, fmt);
	vsnprintf(note.why, sizeof(note.why), fmt, ap);
	va_end(ap);
}

static bool resident(const gwb_dataset *d)
{
	return d->xbuf && d->xbuf->device == GWB_DEVICE_GPU && d->ybuf;
}

/* bytes of the table (what a verb reads at least once) */
static double table_bytes(const gwb_dataset *d)
{
	double b = (double)d->rows * 4.0 * (d->features + 1);
	int j;

	for (j = 0; d->wide && j < d->features; j++)
		if (d->wide[j])
			b += (double)d->rows * 8.0;
	return b;
}

gwb_status gwb_verbs_pick(gwb_dataset *d, gwb_backend req, const char *verb, const char *lacks,
			  bool *gpu)
{
	gwb_backend b;
	gwb_status st;
	char why[200];

	*gpu = false;
	if (req == GWB_BACKEND_AUTO)
		req = gwb_backend_default;
	if (req == GWB_BACKEND_CPU) {
		gwb_verbs_note_set(false, "cpu requested");
		return GWB_OK;
	}
	if (req == GWB_BACKEND_GPU) {
		if (!gwb_gpu_available())
			return gwb_error(GWB_ENODEV, "%s: backend = \"gpu\" asked for, but %s", verb,
					 gwb_gpu_unavailable_reason());
		if (lacks) {
			gwb_verbs_note_set(false, "gpu requested, but %s: ran on the CPU", lacks);
			return GWB_OK;
		}
		if (!resident(d)) {
			if ((st = gwb_dataset_to_gpu(d)))
				return st;
			gwb_verbs_note_set(true, "gpu requested (the table was put on the device, "
					   "where it stays)");
		} else {
			gwb_verbs_note_set(true, "gpu requested");
		}
		*gpu = true;
		return GWB_OK;
	}
	if (!resident(d)) {
		gwb_verbs_note_set(false, "auto: the table is on the host (d:to(\"gpu\") puts it "
				   "on the device)");
		return GWB_OK;
	}
	if (lacks) {
		gwb_verbs_note_set(false, "auto: the table is on the device, but %s", lacks);
		return GWB_OK;
	}
	if ((st = gwb_backend_choose(GWB_BACKEND_AUTO, table_bytes(d), GWB_VERBS_GPU_MIN_BYTES, &b,
				     why, sizeof(why))))
		return st;
	*gpu = b == GWB_BACKEND_GPU;
	gwb_verbs_note_set(*gpu, "%s (the table is on the device)", why);
	return GWB_OK;
}

const char *gwb_verbs_gpu_lacks_rows(const gwb_dataset *d)
{
	int j;

	if (d->rows > 0x7ffffffe)
		return "it has more than 2^31 rows";
	for (j = 0; j < d->features; j++)
		if (gwb_dataset_is_text(d, j))
			return "a free-text column stays on the host";
	return NULL;
}

gwb_status gwb_verbs_gpu_program(const gwb_expr *e, gwb_expr_ins **out, int *n, int *depth)
{
	int m, d0, i, o = 0, sp = 0, deep = 0, extra = 0;
	const gwb_expr_ins *code = gwb_expr_program(e, &m, &d0);
	gwb_expr_ins *p;

	(void)d0;
	*out = NULL;
	*n = *depth = 0;
	for (i = 0; i < m; i++)
		extra += code[i].op == GWB_XOP_CMPC;
	if (!(p = malloc(((size_t)m + 2 * (size_t)extra + 1) * sizeof(*p))))
		return gwb_error(GWB_ENOMEM, "filter: out of memory for the expression's program");
	for (i = 0; i < m; i++) {
		const gwb_expr_ins *in = &code[i];
		if (in->op != GWB_XOP_CMPC) {
			p[o++] = *in;
			continue;
		}
		if (in->ival < GWB_XOP_LT || in->ival > GWB_XOP_NE) {
			free(p);
			return gwb_error(GWB_EINVAL, "filter: a fused comparison with the "
					 "comparison %lld", (long long)in->ival);
		}
		/* the three instructions fuse() made it of, as compiled */
		p[o++] = (gwb_expr_ins){GWB_XOP_COL, in->col, 0, 0};
		p[o++] = (gwb_expr_ins){GWB_XOP_NUM, 0, in->num, 0};
		p[o++] = (gwb_expr_ins){(int)in->ival, 0, 0, 0};
	}
	for (i = 0; i < o; i++) {   /* the deepest stack of the program as it now is */
		switch (p[i].op) {
		case GWB_XOP_COL: case GWB_XOP_NUM: case GWB_XOP_CMPI:
			sp++;
			break;
		case GWB_XOP_ADD: case GWB_XOP_SUB: case GWB_XOP_MUL: case GWB_XOP_DIV:
		case GWB_XOP_LT: case GWB_XOP_LE: case GWB_XOP_GT: case GWB_XOP_GE:
		case GWB_XOP_EQ: case GWB_XOP_NE: case GWB_XOP_AND: case GWB_XOP_OR:
			sp--;
			break;
		case GWB_XOP_NEG: case GWB_XOP_NOT: case GWB_XOP_ISNAN:
			break;
		default:   /* one that expr.c added and the device's evaluator does not know */
			free(p);
			return gwb_error(GWB_EINVAL, "filter: the expression's instruction %d is "
					 "unknown to the device", p[i].op);
		}
		if (sp < 1) {
			free(p);
			return gwb_error(GWB_EINVAL, "filter: the expression's program underflows "
					 "its stack at %d", i);
		}
		if (sp > deep)
			deep = sp;
	}
	*out = p;
	*n = o;
	*depth = deep;
	return GWB_OK;
}

const char *gwb_verbs_gpu_lacks_expr(const gwb_expr *e)
{
#ifdef GWB_HAVE_CUDA
	gwb_expr_ins *code;
	int n, depth;

	if (gwb_verbs_gpu_program(e, &code, &n, &depth))
		return "the expression has an instruction the device lacks";
	free(code);
	if (depth > GWB_VG_MAXDEPTH || n > 256)
		return "the expression is deeper than the device evaluates";
#else
	(void)e;
#endif
	return NULL;
}

const char *gwb_verbs_gpu_lacks_keys(const gwb_dataset *d, int nk)
{
	if (d->rows > 0x7ffffffe)
		return "it has more than 2^31 rows";
	return nk > 4 ? "more than 4 keys" : NULL;
}

const char *gwb_verbs_gpu_lacks_agg(int agg)
{
	return agg == GWB_AGG_NUNIQUE ? "nunique is computed on the CPU only" : NULL;
}

#ifndef GWB_HAVE_CUDA

static gwb_status no_cuda(void)
{
	return gwb_error(GWB_ENODEV, "the table verbs on the GPU: built without CUDA");
}

gwb_status gwb_verbs_gpu_filter(gwb_dataset *d, const gwb_expr *e, const uint8_t *mask,
				gwb_dataset **out)
{
	(void)d, (void)e, (void)mask, (void)out;
	return no_cuda();
}

gwb_status gwb_verbs_gpu_sort(gwb_dataset *d, const int *cols, const bool *desc, int nk,
			      gwb_dataset **out)
{
	(void)d, (void)cols, (void)desc, (void)nk, (void)out;
	return no_cuda();
}

gwb_status gwb_verbs_gpu_agg(gwb_dataset *d, const int *keys, int nk, const gwb_vagg *a, int na,
			     gwb_dataset **out)
{
	(void)d, (void)keys, (void)nk, (void)a, (void)na, (void)out;
	return no_cuda();
}

gwb_status gwb_verbs_gpu_distinct(gwb_dataset *d, int j, double **vals, size_t **counts,
				  size_t *k)
{
	(void)d, (void)j, (void)vals, (void)counts, (void)k;
	return no_cuda();
}

#else

/* --- device views of the table ------------------------------------------------------------- */

static const char *colname(const gwb_dataset *d, int j)
{
	return j < d->features ? (d->names[j] ? d->names[j] : "") : (d->target ? d->target : "");
}

/* column j of a resident d on the device, typed as gwb_col_of types it */
static gwb_dcol dcol_of(const gwb_dataset *d, int j)
{
	gwb_dcol c;

	if (j < d->features) {
		if (d->wbuf && d->wbuf[j]) {
			c.type = d->wide[j]->type == GWB_DT_I64 ? GWB_COL_I64 : GWB_COL_F64;
			c.v = d->wbuf[j]->dev;
		} else {
			c.type = GWB_COL_F32;
			c.v = (const float *)d->xbuf->dev + (size_t)j * d->rows;
		}
		return c;
	}
	c.type = d->y ? GWB_COL_I32 : GWB_COL_F32;
	c.v = d->ybuf->dev;
	return c;
}

static const char *const *rank_levels;   /* for cmp_level (qsort has no context) */

static int cmp_level(const void *a, const void *b)
{
	const char *x = rank_levels[*(const int *)a], *y = rank_levels[*(const int *)b];

	return strcmp(x ? x : "", y ? y : "");
}

/* the key of column j: a category's ranks (labels in strcmp order, as verbs.c) on the device,
 * made once per table and column (d->rbuf, given back with its device copy) */
static gwb_status vkey_of(gwb_dataset *d, int j, bool desc, gwb_vkey *k)
{
	gwb_col c;
	int n, i, *ord;
	uint64_t *h, *dr = NULL;
	gwb_status st;

	gwb_col_of(d, j, &c);
	k->col = dcol_of(d, j);
	k->rank = NULL;
	k->nlevels = 0;
	k->desc = desc;
	if (!c.levels)
		return GWB_OK;
	n = c.nlevels;
	if (!d->rbuf && !(d->rbuf = calloc((size_t)d->features + 2, sizeof(gwb_buf *))))
		return gwb_error(GWB_ENOMEM, "keys: out of memory");
	if (!d->rbuf[j]) {
		ord = malloc(((size_t)n + 1) * sizeof(int));
		h = malloc(((size_t)n + 1) * sizeof(uint64_t));
		if (!ord || !h) {
			free(ord);
			free(h);
			return gwb_error(GWB_ENOMEM, "keys: out of memory for %d labels", n);
		}
		for (i = 0; i < n; i++)
			ord[i] = i;
		rank_levels = (const char *const *)c.levels;
		qsort(ord, (size_t)n, sizeof(int), cmp_level);
		for (i = 0; i < n; i++)
			h[ord[i]] = (uint64_t)i;
		free(ord);
		if (!(st = gwb_gpu_malloc((void **)&dr, ((size_t)n + 1) * 8, "data.ranks")) &&
		    !(st = gwb_gpu_copy_in(dr, h, (size_t)n * 8)) &&
		    (st = gwb_buf_adopt_dev(dr, (size_t)n * 8, "data.ranks", &d->rbuf[j])))
			gwb_gpu_free(dr);
		else if (st)
			gwb_gpu_free(dr);
		free(h);
		if (st)
			return st;
	}
	k->rank = d->rbuf[j]->dev;
	k->nlevels = n;
	return GWB_OK;
}

/* --- rows taken on the device -------------------------------------------------------------- */

static gwb_status copy_names(const gwb_dataset *d, gwb_dataset *r)
{
	int j, k;

	r->no_target = d->no_target;
	if (d->target && !(r->target = strdup(d->target)))
		return GWB_ENOMEM;
	if (r->task == GWB_TASK_CLASSIFICATION)
		for (k = 0; k < r->classes; k++)
			if (d->class_names[k] && !(r->class_names[k] = strdup(d->class_names[k])))
				return GWB_ENOMEM;
	for (j = 0; j < d->features; j++) {
		if (d->names[j] && !(r->names[j] = strdup(d->names[j])))
			return GWB_ENOMEM;
		if (d->cat_levels && d->cat_levels[j]) {
			if (!(r->cat_levels[j] = gwb_strv_copy(d->cat_levels[j], d->cat_count[j])))
				return GWB_ENOMEM;
			r->cat_count[j] = d->cat_count[j];
		}
	}
	return GWB_OK;
}

/* A new Dataset of rows didx[0..k) (device) of the resident d: every column gathered on the
 * device, the new table copied back once, the device copies kept as the result's. */
static gwb_status take_dev(const gwb_dataset *d, const uint32_t *didx, size_t k, gwb_dataset **out)
{
	size_t xb = k * (size_t)d->features * sizeof(float);
	gwb_dataset *r = NULL;
	void *xd = NULL, *yd = NULL;
	gwb_status st;
	int j;

	double t0 = gwb_now(), t1 = 0, t2 = 0, t3 = 0;

	*out = NULL;
	if ((st = gwb_dataset_new(k, d->features, d->task, d->classes, &r)))
		return st;
	t1 = gwb_now();
	if (copy_names(d, r)) {
		st = gwb_error(GWB_ENOMEM, "rows: out of memory copying names");
		goto fail;
	}
	if ((st = gwb_gpu_malloc(&xd, xb ? xb : 4, "data.X")) ||
	    (st = gwb_gpu_malloc(&yd, k ? k * 4 : 4, "data.y")))
		goto fail;
	for (j = 0; j < d->features && !st; j++)
		st = gwb_vg_gather((const float *)d->xbuf->dev + (size_t)j * d->rows, 4, didx, k,
				   (float *)xd + (size_t)j * k);
	if (st || (st = gwb_vg_gather(d->ybuf->dev, 4, didx, k, yd)))
		goto fail;
	if (gwb_dataset_has_wide(d)) {
		if (!(r->wbuf = calloc((size_t)d->features + 1, sizeof(gwb_buf *)))) {
			st = gwb_error(GWB_ENOMEM, "rows: out of memory");
			goto fail;
		}
		for (j = 0; j < d->features; j++) {
			gwb_num64 *w;
			void *wd = NULL;
			if (!d->wide[j])
				continue;
			if ((st = gwb_gpu_malloc(&wd, k ? k * 8 : 8, "data.wide")))
				goto fail;
			if ((st = gwb_buf_adopt_dev(wd, k * 8, "data.wide", &r->wbuf[j]))) {
				gwb_gpu_free(wd);
				goto fail;
			}
			if ((st = gwb_vg_gather(d->wbuf[j]->dev, 8, didx, k, wd)))
				goto fail;
			w = calloc(1, sizeof(*w));
			if (w) {
				w->type = d->wide[j]->type;
				if (w->type == GWB_DT_I64)
					w->i = malloc(k * 8 + 8);
				else
					w->f = malloc(k * 8 + 8);
			}
			if (!w || (!w->i && !w->f) || gwb_dataset_attach_wide(r, j, w)) {
				gwb_num64_free(w);
				st = gwb_error(GWB_ENOMEM, "rows: out of memory for %zu rows", k);
				goto fail;
			}
			if (k && (st = gwb_gpu_copy_out(w->type == GWB_DT_I64 ? (void *)w->i
							: (void *)w->f, wd, k * 8)))
				goto fail;
		}
	}
	t2 = gwb_now();
	/* X through the staging ring: registering a new table's fresh pages would cost more
	 * than the copy (it never crosses again: its device copy is xd) */
	gwb_host_untrack(r->X);
	st = xb ? gwb_gpu_copy_out(r->X, xd, xb) : GWB_OK;
	gwb_host_track(r->X, xb);
	if (st ||
	    (k && (st = gwb_gpu_copy_out(r->y ? (void *)r->y : (void *)r->yr, yd, k * 4))))
		goto fail;
	if ((st = gwb_buf_adopt_dev(xd, xb, "data.X", &r->xbuf)))
		goto fail;
	xd = NULL;
	if ((st = gwb_buf_adopt_dev(yd, k * 4, "data.y", &r->ybuf)))
		goto fail;
	t3 = gwb_now();
	if (getenv("GWB_VERBS_PROF"))   /* where a device verb's rows go (ms) */
		fprintf(stderr, "verbs_gpu rows %zu: new table %.3f, gathers + 64-bit columns back "
			"%.3f, X and y back %.3f ms\n", k, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
			(t3 - t2) * 1e3);
	*out = r;
	return GWB_OK;
fail:
	gwb_gpu_free(xd);
	if (!r || !r->ybuf)
		gwb_gpu_free(yd);
	gwb_dataset_free(r);
	return st;
}

gwb_status gwb_verbs_gpu_filter(gwb_dataset *d, const gwb_expr *e, const uint8_t *mask,
				gwb_dataset **out)
{
	int nc = d->features + !d->no_target, j, n, depth;
	gwb_dcol *cols = NULL;
	gwb_expr_ins *code = NULL;
	uint8_t *dm = NULL;
	uint32_t *idx = NULL;
	size_t k = 0;
	gwb_status st;
	double t0 = gwb_now();

	*out = NULL;
	if ((st = gwb_gpu_malloc((void **)&dm, d->rows + 1, "verbs.mask")) ||
	    (st = gwb_gpu_malloc((void **)&idx, (d->rows + 1) * 4, "verbs.rows")))
		goto out;
	if (e) {   /* the program with its OP_CMPCs expanded (the device's evaluator lacks it) */
		if ((st = gwb_verbs_gpu_program(e, &code, &n, &depth)))
			goto out;
		if (!(cols = calloc((size_t)nc + 1, sizeof(*cols)))) {
			st = gwb_error(GWB_ENOMEM, "filter: out of memory");
			goto out;
		}
		for (j = 0; j < nc; j++)
			cols[j] = dcol_of(d, j);
		st = gwb_vg_expr_mask(code, n, cols, nc, d->rows, dm);
	} else if (d->rows) {
		st = gwb_gpu_copy_in(dm, mask, d->rows);
	}
	if (st || (st = gwb_vg_select(dm, d->rows, idx, &k)))
		goto out;
	if (getenv("GWB_VERBS_PROF"))
		fprintf(stderr, "verbs_gpu filter of %zu rows: mask and select %.3f ms, %zu kept\n",
			d->rows, (gwb_now() - t0) * 1e3, k);
	if ((st = take_dev(d, idx, k, out)))
		goto out;
out:
	free(code);
	free(cols);
	gwb_gpu_free(dm);
	gwb_gpu_free(idx);
	return st;
}

gwb_status gwb_verbs_gpu_sort(gwb_dataset *d, const int *cols, const bool *desc, int nk,
			      gwb_dataset **out)
{
	gwb_vkey keys[16];
	uint32_t *perm = NULL;
	gwb_status st = GWB_OK;
	int k;

	*out = NULL;
	if (nk > 16)
		return gwb_error(GWB_EINVAL, "sort: at most 16 keys");
	for (k = 0; k < nk && !st; k++)
		st = vkey_of(d, cols[k], desc[k], &keys[k]);
	if (!st && !(st = gwb_gpu_malloc((void **)&perm, (d->rows + 1) * 4, "verbs.rows")) &&
	    !(st = gwb_vg_order(keys, nk, d->rows, perm)))
		st = take_dev(d, perm, d->rows, out);
	gwb_gpu_free(perm);
	return st;
}

/* the groups of rows by keys[0..nk) of d; method from GWB_VERBS_GROUP (direct | sort), else
 * gwb_verbs_gpu_group_method's */
static gwb_status make_groups(gwb_dataset *d, const int *keys, int nk, gwb_vgroups *g)
{
	gwb_vkey vk[GWB_VG_MAXKEYS];
	const char *m = getenv("GWB_VERBS_GROUP");
	gwb_status st = GWB_OK;
	int k;

	if (nk > GWB_VG_MAXKEYS)
		return gwb_error(GWB_EINVAL, "group_by: more than %d keys on the device",
				 GWB_VG_MAXKEYS);
	for (k = 0; k < nk && !st; k++)
		st = vkey_of(d, keys[k], false, &vk[k]);
	if (!st)
		st = gwb_vg_groups(vk, nk, d->rows, m && !strcmp(m, "sort") ? 2 :
				   m && !strcmp(m, "direct") ? 1 : group_method, g);
	return st;
}

/* first[g] (host size_t) from the device's uint32 */
static gwb_status first_rows(const gwb_vgroups *g, size_t **first)
{
	uint32_t *h = malloc((g->ngroups + 1) * 4);
	size_t *f = malloc((g->ngroups + 1) * sizeof(size_t)), i;
	gwb_status st;

	*first = NULL;
	if (!h || !f) {
		free(h);
		free(f);
		return gwb_error(GWB_ENOMEM, "group_by: out of memory for %zu groups", g->ngroups);
	}
	st = g->ngroups ? gwb_gpu_copy_out(h, g->first, g->ngroups * 4) : GWB_OK;
	for (i = 0; !st && i < g->ngroups; i++)
		f[i] = h[i];
	free(h);
	if (st)
		free(f);
	else
		*first = f;
	return st;
}

gwb_status gwb_verbs_gpu_agg(gwb_dataset *d, const int *keys, int nk, const gwb_vagg *a, int na,
			     gwb_dataset **out)
{
	gwb_vgroups g = {0};
	gwb_colspec *spec = NULL;
	size_t *first = NULL, G, i;
	double *vals = NULL;
	gwb_status st;
	int k;

	*out = NULL;
	if ((st = make_groups(d, keys, nk, &g)) || (st = first_rows(&g, &first)))
		goto out;
	G = g.ngroups;
	spec = calloc((size_t)(nk + na) + 1, sizeof(*spec));
	vals = malloc(((size_t)na * G + 1) * sizeof(double));
	if (!spec || !vals) {
		st = gwb_error(GWB_ENOMEM, "group_by: out of memory for %zu groups", G);
		goto out;
	}
	for (k = 0; k < nk; k++) {
		spec[k].name = colname(d, keys[k]);
		gwb_col_of(d, keys[k], &spec[k].src);
		spec[k].idx = first;
	}
	for (k = 0; k < na && !st; k++) {
		gwb_col c = {0};
		gwb_dcol dc = {GWB_COL_U8, NULL};
		double *o = vals + (size_t)k * G;
		gwb_col_type ot = GWB_COL_F64;
		bool exact = false, ex2;
		if (a[k].col >= 0) {
			gwb_col_of(d, a[k].col, &c);
			dc = dcol_of(d, a[k].col);
		}
		if (a[k].col >= 0 && gwb_agg_exact_i64((gwb_agg)a[k].agg, &c)) {
			if ((st = gwb_vg_agg(&g, a[k].agg, &dc, true, o, &exact)))
				break;
			ot = exact ? GWB_COL_I64 : GWB_COL_F64;
		}
		if (!exact && (st = gwb_vg_agg(&g, a[k].agg, a[k].col >= 0 ? &dc : NULL, false, o,
					       &ex2)))
			break;
		if (!exact && (a[k].agg == GWB_AGG_COUNT || a[k].agg == GWB_AGG_COUNT_ALL)) {
			int64_t *io = (int64_t *)(void *)o;   /* counts are integers */
			for (i = 0; i < G; i++)
				io[i] = (int64_t)o[i];
			ot = GWB_COL_I64;
		}
		spec[nk + k] = (gwb_colspec){a[k].name, {G, ot, o, NULL, 0, NULL, NULL}, NULL};
		if ((a[k].agg == GWB_AGG_FIRST || a[k].agg == GWB_AGG_LAST) && c.levels) {
			spec[nk + k].src.levels = c.levels;
			spec[nk + k].src.nlevels = c.nlevels;
		}
	}
	if (!st && !(st = gwb_table_build(G, spec, nk + na, -1, out)) &&
	    (st = gwb_dataset_to_gpu(*out))) {   /* the result lies where the table did */
		gwb_dataset_free(*out);
		*out = NULL;
	}
out:
	gwb_vg_groups_free(&g);
	free(first);
	free(spec);
	free(vals);
	return st;
}

static const size_t *cmp_first;   /* for cmp_by_first */

static int cmp_by_first(const void *a, const void *b)
{
	size_t x = cmp_first[*(const size_t *)a], y = cmp_first[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

gwb_status gwb_verbs_gpu_distinct(gwb_dataset *d, int j, double **vals, size_t **counts,
				  size_t *k)
{
	gwb_vgroups g = {0};
	size_t *first = NULL, *ord = NULL, *cnt = NULL, G, i, used = 0;
	uint32_t *hc = NULL;
	double *v = NULL;
	gwb_col c;
	gwb_status st;

	*vals = NULL;
	*counts = NULL;
	*k = 0;
	gwb_col_of(d, j, &c);
	if ((st = make_groups(d, &j, 1, &g)) || (st = first_rows(&g, &first)))
		goto out;
	G = g.ngroups;
	ord = malloc((G + 1) * sizeof(size_t));
	cnt = malloc((G + 1) * sizeof(size_t));
	hc = malloc((G + 1) * 4);
	v = malloc((G + 1) * sizeof(double));
	if (!ord || !cnt || !hc || !v) {
		st = gwb_error(GWB_ENOMEM, "value_counts: out of memory for %zu values", G);
		goto out;
	}
	if (G && (st = gwb_gpu_copy_out(hc, g.count, G * 4)))
		goto out;
	for (i = 0; i < G; i++)
		ord[i] = i;
	cmp_first = first;   /* in order of first appearance, as gwb_col_distinct lists them */
	qsort(ord, G, sizeof(size_t), cmp_by_first);
	for (i = 0; i < G; i++) {
		size_t r = first[ord[i]];
		double x = gwb_col_at(&c, r);
		if (isnan(x) || (c.levels && (x < 0 || x >= c.nlevels)))
			continue;   /* the missing values' group */
		if (c.type == GWB_COL_I64)
			memcpy(&v[used], &((const int64_t *)c.v)[r], 8);   /* exact: int64 bits */
		else
			v[used] = x == 0 ? 0.0 : x;
		cnt[used++] = hc[ord[i]];
	}
	*vals = v;
	*counts = cnt;
	*k = used;
	v = NULL;
	cnt = NULL;
out:
	gwb_vg_groups_free(&g);
	free(first);
	free(ord);
	free(cnt);
	free(hc);
	free(v);
	return st;
}

#endif
