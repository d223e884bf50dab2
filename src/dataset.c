/* dataset.c - the Dataset: allocation, release, row subsets, column subsets, summaries. */
#define _GNU_SOURCE
#include "dataset.h"
#include "hash.h"
#include "hugemap.h"
#include "buffer.h"
#include "gpu.h"
#include "intr.h"
#include "size.h"
#include "pool.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

gwb_status gwb_dataset_new(size_t rows, int features, gwb_task task, int classes,
			   gwb_dataset **out)
{
	gwb_dataset *d;
	size_t cells;

	*out = NULL;
	if (features < 0 || (task == GWB_TASK_CLASSIFICATION && classes < 0))
		return gwb_error(GWB_EINVAL, "dataset: features (%d) and classes (%d) must be >= 0",
				 features, classes);
	if (gwb_mul3_size(rows, (size_t)features + 1, sizeof(float), &cells))
		return gwb_error(GWB_ENOMEM, "dataset: %zu rows x %d features overflows memory",
				 rows, features);
	cells = rows * (size_t)features;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto oom;
	d->rows = rows;
	d->features = features;
	d->task = task;
	/* calloc: the kernel hands out zero pages lazily, so a large table costs nothing until
	 * it is written. One extra element keeps malloc(0) out of the picture. */
	d->X = calloc(cells + 1, sizeof(float));
	d->names = calloc((size_t)features + 1, sizeof(char *));
	d->cat_levels = calloc((size_t)features + 1, sizeof(char **));
	d->cat_count = calloc((size_t)features + 1, sizeof(int));
	if (!d->X || !d->names || !d->cat_levels || !d->cat_count)
		goto oom_free;
	if (task == GWB_TASK_CLASSIFICATION) {
		d->classes = classes;
		d->y = calloc(rows + 1, sizeof(int32_t));
		d->class_names = calloc((size_t)classes + 1, sizeof(char *));
		if (!d->y || !d->class_names)
			goto oom_free;
	} else {
		d->yr = calloc(rows + 1, sizeof(float));
		if (!d->yr)
			goto oom_free;
	}
	/* a large X is page-locked on its first crossing to the GPU (buffer.h); no cost here */
	gwb_host_track(d->X, cells * sizeof(float));
	*out = d;
	return GWB_OK;
oom_free:
	gwb_dataset_free(d);
oom:
	return gwb_error(GWB_ENOMEM, "dataset: out of memory for %zu rows x %d features (%zu bytes)",
			 rows, features, cells * sizeof(float) + rows * sizeof(float));
}

void gwb_dataset_free(gwb_dataset *d)
{
	int j, k;

	if (!d)
		return;
	gwb_dataset_to_cpu(d);
	gwb_host_untrack(d->X);  /* unregistered before it is freed (buffer.h) */
	free(d->X);
	free(d->y);
	free(d->yr);
	if (d->class_names)
		for (k = 0; k < d->classes; k++)
			free(d->class_names[k]);
	free(d->class_names);
	if (d->names)
		for (j = 0; j < d->features; j++)
			free(d->names[j]);
	free(d->names);
	free(d->target);
	if (d->cat_levels)
		for (j = 0; j < d->features; j++)
			gwb_strv_free(d->cat_levels[j], d->cat_count[j]);
	free(d->cat_levels);
	free(d->cat_count);
	if (d->text)
		for (j = 0; j < d->features; j++)
			gwb_text_free(d->text[j]);
	free(d->text);
	if (d->wide)
		for (j = 0; j < d->features; j++)
			gwb_num64_free(d->wide[j]);
	free(d->wide);
	free(d);
}

gwb_num64 *gwb_num64_new(gwb_numtype t, size_t rows)
{
	gwb_num64 *w = calloc(1, sizeof(*w));
	size_t i;

	if (!w)
		return NULL;
	w->type = t;
	if (t == GWB_DT_I64) {
		if (!(w->i = malloc((rows + 1) * sizeof(int64_t))))
			goto oom;
		for (i = 0; i < rows; i++)
			w->i[i] = GWB_I64_NA;
	} else {
		if (!(w->f = malloc((rows + 1) * sizeof(double))))
			goto oom;
		for (i = 0; i < rows; i++)
			w->f[i] = NAN;
	}
	return w;
oom:
	free(w);
	return NULL;
}

void gwb_num64_free(gwb_num64 *w)
{
	if (!w)
		return;
	if (w->map) {
		gwb_hugemap_free(w->i ? (void *)w->i : (void *)w->f, w->map);
	} else {
		free(w->i);
		free(w->f);
	}
	free(w);
}

gwb_num64 *gwb_num64_take(const gwb_num64 *w, const size_t *idx, size_t n)
{
	gwb_num64 *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return NULL;
	c->type = w->type;
	if (w->type == GWB_DT_I64) {
		if (!(c->i = malloc((n + 1) * sizeof(int64_t))))
			goto oom;
		for (i = 0; i < n; i++) {
			size_t r = idx ? idx[i] : i;
			c->i[i] = r == SIZE_MAX ? GWB_I64_NA : w->i[r];
		}
	} else {
		if (!(c->f = malloc((n + 1) * sizeof(double))))
			goto oom;
		for (i = 0; i < n; i++) {
			size_t r = idx ? idx[i] : i;
			c->f[i] = r == SIZE_MAX ? NAN : w->f[r];
		}
	}
	return c;
oom:
	free(c);
	return NULL;
}

gwb_status gwb_dataset_attach_wide(gwb_dataset *d, int j, gwb_num64 *w)
{
	if (!d->wide && !(d->wide = calloc((size_t)d->features + 1, sizeof(*d->wide))))
		return gwb_error(GWB_ENOMEM, "dataset: out of memory for the 64-bit columns");
	gwb_num64_free(d->wide[j]);
	d->wide[j] = w;
	d->sum_ok = false;
	return GWB_OK;
}

gwb_status gwb_dataset_set_wide(gwb_dataset *d, int j, gwb_num64 *w)
{
	float *x = d->X + (size_t)j * d->rows;
	size_t i;
	gwb_status st;

	if ((st = gwb_dataset_attach_wide(d, j, w)))
		return st;
	if (w->type == GWB_DT_I64)
		for (i = 0; i < d->rows; i++)
			x[i] = w->i[i] == GWB_I64_NA ? NAN : (float)w->i[i];
	else
		for (i = 0; i < d->rows; i++)
			x[i] = (float)w->f[i];
	d->sum_ok = false;
	return GWB_OK;
}

bool gwb_dataset_has_wide(const gwb_dataset *d)
{
	int j;

	for (j = 0; d->wide && j < d->features; j++)
		if (d->wide[j])
			return true;
	return false;
}

const char *gwb_dataset_dtype_name(const gwb_dataset *d, int j)
{
	if (gwb_dataset_is_text(d, j))
		return "text";
	if (d->cat_levels && d->cat_levels[j])
		return "category";
	switch (gwb_dataset_dtype(d, j)) {
	case GWB_DT_I64: return "i64";
	case GWB_DT_F64: return "f64";
	default: return "f32";
	}
}

gwb_text *gwb_text_new(size_t rows)
{
	gwb_text *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->v = calloc(rows + 1, sizeof(char *));
	t->arena = gwb_arena_new();
	if (!t->v || !t->arena) {
		gwb_text_free(t);
		return NULL;
	}
	return t;
}

void gwb_text_free(gwb_text *t)
{
	if (!t)
		return;
	free(t->v);
	gwb_arena_free(t->arena);
	free(t);
}

gwb_status gwb_dataset_set_text(gwb_dataset *d, int j, gwb_text *t)
{
	float *x = d->X + (size_t)j * d->rows;
	size_t i;

	if (!d->text && !(d->text = calloc((size_t)d->features + 1, sizeof(*d->text))))
		return gwb_error(GWB_ENOMEM, "dataset: out of memory for the text columns");
	gwb_text_free(d->text[j]);
	d->text[j] = t;
	for (i = 0; i < d->rows; i++)
		x[i] = t->v[i] ? 0.0f : NAN;
	d->sum_ok = false;
	return GWB_OK;
}

gwb_status gwb_dataset_text_check(const gwb_dataset *d, const char *what)
{
	int j;

	for (j = 0; d->text && j < d->features; j++)
		if (d->text[j]) {
			const char *n = d->names && d->names[j] ? d->names[j] : "?";
			return gwb_error(GWB_EINVAL, "%s: column \"%s\" holds free text (kind \"text\": "
					 "most rows differ), which a model cannot split on; drop it "
					 "(d:drop{\"%s\"}) or read it as a category (data.load(path, "
					 "{categorical = {\"%s\"}}))", what, n, n, n);
		}
	return GWB_OK;
}

gwb_status gwb_text_distinct(char *const *v, size_t rows, size_t **first, size_t **counts,
			     size_t *k)
{
	return gwb_text_codes(v, rows, NULL, first, counts, k);
}

gwb_status gwb_text_codes(char *const *v, size_t rows, int32_t *ids, size_t **first,
			  size_t **counts, size_t *k)
{
	size_t nslot = 64, i, n = 0, *slot, *fst, *cnt = NULL;
	uint64_t *hs;

	*k = 0;
	while (nslot < 2 * rows)
		nslot *= 2;
	slot = calloc(nslot, sizeof(*slot));   /* distinct index + 1; 0 empty */
	hs = malloc(nslot * sizeof(*hs));
	fst = malloc((rows + 1) * sizeof(*fst));
	if (counts)
		cnt = malloc((rows + 1) * sizeof(*cnt));
	if (!slot || !hs || !fst || (counts && !cnt)) {
		free(slot);
		free(hs);
		free(fst);
		free(cnt);
		return gwb_error(GWB_ENOMEM, "text: out of memory for the distinct values of %zu rows",
				 rows);
	}
	if (ids && rows >= (size_t)INT32_MAX) {
		free(slot);
		free(hs);
		free(fst);
		free(cnt);
		return gwb_error(GWB_EINVAL, "text: %zu rows are too many to number (2^31)", rows);
	}
	for (i = 0; i < rows; i++) {
		const char *s = v[i];
		size_t len, at;
		uint64_t h;
		if (!s) {
			if (ids)
				ids[i] = -1;
			continue;
		}
		len = strlen(s);
		h = gwb_xxh64(s, len, 0);
		for (at = h & (nslot - 1); slot[at]; at = (at + 1) & (nslot - 1))
			if (hs[at] == h && !strcmp(v[fst[slot[at] - 1]], s))
				break;
		if (!slot[at]) {
			slot[at] = ++n;
			hs[at] = h;
			fst[n - 1] = i;
			if (cnt)
				cnt[n - 1] = 0;
		}
		if (cnt)
			cnt[slot[at] - 1]++;
		if (ids)
			ids[i] = (int32_t)(slot[at] - 1);
	}
	free(slot);
	free(hs);
	*k = n;
	if (first)
		*first = fst;
	else
		free(fst);
	if (counts)
		*counts = cnt;
	return GWB_OK;
}

/* A copy of t's rows idx[0..n) (idx NULL: the first n rows); NULL when out of memory. */
static gwb_text *text_copy(const gwb_text *t, const size_t *idx, size_t n)
{
	gwb_text *c = gwb_text_new(n);
	size_t i;

	if (!c)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *s = t->v[idx ? idx[i] : i];
		if (s && !(c->v[i] = gwb_arena_strndup(c->arena, s, strlen(s)))) {
			gwb_text_free(c);
			return NULL;
		}
	}
	return c;
}

char **gwb_strv_copy(char *const *v, int n)
{
	char **c = calloc((size_t)(n < 0 ? 0 : n) + 1, sizeof(char *));
	int k;

	if (!c)
		return NULL;
	for (k = 0; k < n; k++)
		if (v[k] && !(c[k] = strdup(v[k]))) {
			gwb_strv_free(c, k);
			return NULL;
		}
	return c;
}

void gwb_strv_free(char **v, int n)
{
	int k;

	if (!v)
		return;
	for (k = 0; k < n; k++)
		free(v[k]);
	free(v);
}

/* Copy names, target name, class names, dictionaries and text of columns cols[0..n) of src
 * into dst (whose arrays gwb_dataset_new allocated). cols NULL = all columns in order; rows
 * idx[0..dst->rows) of src's text (idx NULL: the same rows). */
static gwb_status copy_meta(const gwb_dataset *src, gwb_dataset *dst, const int *cols,
			    const size_t *idx)
{
	int j, k;

	dst->no_target = src->no_target;
	if (src->target && !(dst->target = strdup(src->target)))
		goto oom;
	if (dst->task == GWB_TASK_CLASSIFICATION && src->class_names)
		for (k = 0; k < dst->classes && k < src->classes; k++)
			if (src->class_names[k] &&
			    !(dst->class_names[k] = strdup(src->class_names[k])))
				goto oom;
	for (j = 0; j < dst->features; j++) {
		int s = cols ? cols[j] : j;
		if (src->names && src->names[s] && !(dst->names[j] = strdup(src->names[s])))
			goto oom;
		if (src->cat_levels && src->cat_levels[s]) {
			if (!(dst->cat_levels[j] = gwb_strv_copy(src->cat_levels[s],
								 src->cat_count[s])))
				goto oom;
			dst->cat_count[j] = src->cat_count[s];
		}
		if (gwb_dataset_is_text(src, s)) {
			gwb_text *t = text_copy(src->text[s], idx, dst->rows);
			if (!t || gwb_dataset_set_text(dst, j, t)) {
				gwb_text_free(t);
				goto oom;
			}
		}
		if (src->wide && src->wide[s]) {
			/* (X's float32 values were copied with the rest of X) */
			gwb_num64 *w = gwb_num64_take(src->wide[s], idx, dst->rows);
			if (!w || gwb_dataset_attach_wide(dst, j, w)) {
				gwb_num64_free(w);
				goto oom;
			}
		}
	}
	return GWB_OK;
oom:
	return gwb_error(GWB_ENOMEM, "dataset: out of memory copying names");
}

/* A device copy of X on the calling thread's device into *out. */
static gwb_status gwb_dataset_to_gpu_on(gwb_dataset *d, gwb_buf **out);

/* A device copy of bytes of host memory p (not registered: copied through the staging ring,
 * so the owner of p keeps freeing it as before) as a GPU-resident buffer. */
static gwb_status dev_copy_of(const void *p, size_t bytes, const char *purpose, gwb_buf **out)
{
	void *dev = NULL;
	gwb_status st;

	if ((st = gwb_gpu_malloc(&dev, bytes ? bytes : 1, purpose)))
		return st;
	if (bytes && (st = gwb_gpu_copy_in(dev, p, bytes))) {
		gwb_gpu_free(dev);
		return st;
	}
	if ((st = gwb_buf_adopt_dev(dev, bytes, purpose, out)))
		gwb_gpu_free(dev);
	return st;
}

/* the target and the 64-bit columns beside xbuf (the verbs read them on the device) */
static gwb_status dataset_rest_to_gpu(gwb_dataset *d)
{
	gwb_status st = GWB_OK;
	int j;

	if (!d->ybuf)
		st = d->y ? dev_copy_of(d->y, d->rows * sizeof(int32_t), "data.y", &d->ybuf)
			  : dev_copy_of(d->yr, d->rows * sizeof(float), "data.y", &d->ybuf);
	if (st || !gwb_dataset_has_wide(d))
		return st;
	if (!d->wbuf && !(d->wbuf = calloc((size_t)d->features + 1, sizeof(gwb_buf *))))
		return gwb_error(GWB_ENOMEM, "to(\"gpu\"): out of memory");
	for (j = 0; j < d->features && !st; j++) {
		const gwb_num64 *w = d->wide[j];
		if (!w || d->wbuf[j])
			continue;
		st = dev_copy_of(w->type == GWB_DT_I64 ? (const void *)w->i : (const void *)w->f,
				 d->rows * 8, "data.wide", &d->wbuf[j]);
	}
	return st;
}

static void dataset_rest_to_cpu(gwb_dataset *d)
{
	int j;

	gwb_buf_free(d->ybuf);
	d->ybuf = NULL;
	if (d->wbuf)
		for (j = 0; j < d->features; j++)
			gwb_buf_free(d->wbuf[j]);
	free(d->wbuf);
	d->wbuf = NULL;
	if (d->rbuf)
		for (j = 0; j <= d->features; j++)
			gwb_buf_free(d->rbuf[j]);
	free(d->rbuf);
	d->rbuf = NULL;
}

gwb_status gwb_dataset_to_gpu(gwb_dataset *d)
{
	gwb_status st;

	if (d->xbuf)
		return GWB_OK;
	if ((st = gwb_dataset_to_gpu_on(d, &d->xbuf)))
		return st;
	if ((st = dataset_rest_to_gpu(d))) {   /* all or nothing */
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", gwb_errmsg());
		dataset_rest_to_cpu(d);
		gwb_buf_free(d->xbuf);
		d->xbuf = NULL;
		return gwb_error(st, "to(\"gpu\"): the target and 64-bit columns: %s; the dataset "
				 "stays on the host", msg);
	}
	return GWB_OK;
}

static gwb_status gwb_dataset_to_gpu_on(gwb_dataset *d, gwb_buf **out)
{
	size_t bytes = d->rows * (size_t)d->features * sizeof(float);
	gwb_buf *b = NULL;
	gwb_status st;

	if ((st = gwb_gpu_init()))
		return gwb_error(st, "to(\"gpu\"): no GPU: %s", gwb_gpu_unavailable_reason());
	if ((st = gwb_buf_wrap(d->X, bytes, false, "data.X", &b)))
		return st;
	if ((st = gwb_buf_to(b, GWB_DEVICE_GPU))) {  /* pinned staging (buffer.h) */
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", gwb_errmsg());
		gwb_buf_free(b);
		return gwb_error(st, "to(\"gpu\"): the dataset's %zu x %d features need %zu bytes "
				 "on the device: %s; the dataset stays on the host", d->rows,
				 d->features, bytes, msg);
	}
	*out = b;
	return GWB_OK;
}

void gwb_dataset_to_cpu(gwb_dataset *d)
{
	int i;

	if (d && d->xbuf) {
		gwb_buf_free(d->xbuf);  /* the device copy back to the pool; X is borrowed */
		d->xbuf = NULL;
	}
	if (d)
		dataset_rest_to_cpu(d);
	for (i = 1; d && i < GWB_GPU_MAX; i++) {
		gwb_buf_free(d->xrep[i]);  /* each back to its own device's pool (gpu.c) */
		d->xrep[i] = NULL;
	}
}

gwb_status gwb_dataset_to_gpus(gwb_dataset *d, const gwb_gpu_set *s)
{
	bool made[GWB_GPU_MAX] = {false};
	int i, dev, prev = gwb_gpu_current();
	gwb_status st = GWB_OK;

	for (i = 0; i < s->n && !st; i++) {
		dev = s->ids[i];
		if (dev == 0) {
			made[0] = !d->xbuf;
			st = gwb_dataset_to_gpu(d);
			continue;
		}
		if (d->xrep[dev])
			continue;
		if ((st = gwb_gpu_use(dev)))
			break;
		st = gwb_dataset_to_gpu_on(d, &d->xrep[dev]);
		made[dev] = !st;
		gwb_gpu_use(prev);
		if (st) {
			char msg[1024];
			snprintf(msg, sizeof(msg), "%s", gwb_errmsg());
			st = gwb_error(st, "%s (on GPU %d)", msg, dev);
		}
	}
	if (st) {
		for (dev = 0; dev < GWB_GPU_MAX; dev++) {
			if (!made[dev])
				continue;
			if (dev == 0) {
				gwb_buf_free(d->xbuf);
				d->xbuf = NULL;
				dataset_rest_to_cpu(d);
			} else {
				gwb_buf_free(d->xrep[dev]);
				d->xrep[dev] = NULL;
			}
		}
	}
	return st;
}

int gwb_dataset_gpu_devices(const gwb_dataset *d, int *ids)
{
	int n = 0, i;

	if (d->xbuf && d->xbuf->device == GWB_DEVICE_GPU)
		ids[n++] = 0;
	for (i = 1; i < GWB_GPU_MAX; i++)
		if (d->xrep[i])
			ids[n++] = i;
	return n;
}

gwb_status gwb_dataset_take(const gwb_dataset *d, const size_t *idx, size_t n, gwb_dataset **out)
{
	gwb_dataset *s;
	gwb_status st;
	size_t i;
	int j;

	*out = NULL;
	for (i = 0; i < n; i++)
		if (idx[i] >= d->rows)
			return gwb_error(GWB_EINVAL, "dataset: row index %zu out of range (rows = %zu)",
					 idx[i] + 1, d->rows);
	st = gwb_dataset_new(n, d->features, d->task, d->classes, &s);
	if (st)
		return st;
	for (j = 0; j < d->features; j++) {
		const float *src = d->X + (size_t)j * d->rows;
		float *dst = s->X + (size_t)j * n;
		for (i = 0; i < n; i++)
			dst[i] = src[idx[i]];
	}
	if (d->y)
		for (i = 0; i < n; i++)
			s->y[i] = d->y[idx[i]];
	if (d->yr)
		for (i = 0; i < n; i++)
			s->yr[i] = d->yr[idx[i]];
	if ((st = copy_meta(d, s, NULL, idx))) {
		gwb_dataset_free(s);
		return st;
	}
	*out = s;
	return GWB_OK;
}

gwb_status gwb_dataset_select(const gwb_dataset *d, const int *cols, int n, gwb_dataset **out)
{
	gwb_dataset *s;
	gwb_status st;
	int j;

	*out = NULL;
	for (j = 0; j < n; j++)
		if (cols[j] < 0 || cols[j] >= d->features)
			return gwb_error(GWB_EINVAL, "dataset: column %d out of range (features = %d)",
					 cols[j] + 1, d->features);
	st = gwb_dataset_new(d->rows, n, d->task, d->classes, &s);
	if (st)
		return st;
	for (j = 0; j < n; j++)
		memcpy(s->X + (size_t)j * d->rows, d->X + (size_t)cols[j] * d->rows,
		       d->rows * sizeof(float));
	if (d->y)
		memcpy(s->y, d->y, d->rows * sizeof(int32_t));
	if (d->yr)
		memcpy(s->yr, d->yr, d->rows * sizeof(float));
	if ((st = copy_meta(d, s, cols, NULL))) {
		gwb_dataset_free(s);
		return st;
	}
	*out = s;
	return GWB_OK;
}

int gwb_dataset_find(const gwb_dataset *d, const char *name)
{
	int j;

	for (j = 0; j < d->features; j++)
		if (d->names && d->names[j] && !strcmp(d->names[j], name))
			return j;
	return -1;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

gwb_status gwb_dataset_find_many(const gwb_dataset *d, const char *const *names, int n, int *out)
{
	size_t nslot = 16, k;
	int32_t *slot;   /* feature + 1, 0 = empty */
	int i, j;

	if ((size_t)n * (size_t)d->features <= 65536 || !d->names) {
		for (i = 0; i < n; i++)
			if (names[i])
				out[i] = gwb_dataset_find(d, names[i]);
		return GWB_OK;
	}
	while (nslot < 2 * (size_t)d->features)
		nslot *= 2;
	if (!(slot = calloc(nslot, sizeof(*slot))))
		return gwb_error(GWB_ENOMEM, "dataset: out of memory indexing %d names", d->features);
	for (j = 0; j < d->features; j++) {
		if (!d->names[j])
			continue;
		for (k = name_hash(d->names[j]) & (nslot - 1); slot[k]; k = (k + 1) & (nslot - 1))
			if (!strcmp(d->names[slot[k] - 1], d->names[j]))
				break;
		if (!slot[k])
			slot[k] = j + 1;   /* the first column of a name wins, as in gwb_dataset_find */
	}
	for (i = 0; i < n; i++) {
		if (!names[i])
			continue;
		out[i] = -1;
		for (k = name_hash(names[i]) & (nslot - 1); slot[k]; k = (k + 1) & (nslot - 1))
			if (!strcmp(d->names[slot[k] - 1], names[i])) {
				out[i] = slot[k] - 1;
				break;
			}
	}
	free(slot);
	return GWB_OK;
}

size_t gwb_dataset_bytes(const gwb_dataset *d)
{
	size_t b = sizeof(*d);
	int j, k;

	b += d->rows * (size_t)d->features * sizeof(float);
	b += d->rows * (d->y ? sizeof(int32_t) : sizeof(float));
	for (j = 0; j < d->features; j++) {
		b += sizeof(char *) + sizeof(char **) + sizeof(int);
		if (d->names[j])
			b += strlen(d->names[j]) + 1;
		if (d->cat_levels[j])
			for (k = 0; k < d->cat_count[j]; k++)
				b += sizeof(char *) + strlen(d->cat_levels[j][k]) + 1;
		if (gwb_dataset_is_text(d, j))
			b += d->rows * sizeof(char *) + gwb_arena_bytes(d->text[j]->arena);
		if (d->wide && d->wide[j])
			b += sizeof(gwb_num64) + d->rows * 8;
	}
	for (k = 0; k < d->classes; k++)
		if (d->class_names && d->class_names[k])
			b += sizeof(char *) + strlen(d->class_names[k]) + 1;
	return b;
}

size_t gwb_dataset_missing(const gwb_dataset *d, int col)
{
	const float *x = d->X + (size_t)col * d->rows;
	size_t i, m = 0;

	if (gwb_dataset_is_text(d, col)) {
		for (i = 0; i < d->rows; i++)
			m += !d->text[col]->v[i];
		return m;
	}
	for (i = 0; i < d->rows; i++)
		m += isnan(x[i]) ? 1 : 0;
	return m;
}

gwb_status gwb_dataset_check(const gwb_dataset *d)
{
	size_t i;

	if (d->task == GWB_TASK_CLASSIFICATION) {
		if (!d->y || d->classes < 1)
			return gwb_error(GWB_EINVAL, "dataset: classification without labels");
		for (i = 0; i < d->rows; i++)
			if (d->y[i] < 0 || d->y[i] >= d->classes)
				return gwb_error(GWB_ECORRUPT, "dataset: label %d of row %zu is outside "
						 "0..%d", (int)d->y[i], i + 1, d->classes - 1);
	} else if (!d->yr) {
		return gwb_error(GWB_EINVAL, "dataset: regression without targets");
	}
	return GWB_OK;
}

/* --- describe ----------------------------------------------------------------------------- */

/* gwb_colstats_of for a 64-bit column: min, max and mean of the exact values, distinct by
 * their bits (an int64 or a double, -0 as 0). */
static gwb_status colstats_wide(const gwb_num64 *w, size_t n, gwb_colstats *out)
{
	size_t i, k = 0, nslot = 64, distinct = 0;
	double sum = 0, c = 0, mn = INFINITY, mx = -INFINITY, mean, ss = 0;
	uint64_t *set;
	uint8_t *used;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		double v = w->type == GWB_DT_I64 ? (w->i[i] == GWB_I64_NA ? NAN : (double)w->i[i])
						 : w->f[i];
		double t;
		if (isnan(v)) {
			out->missing++;
			continue;
		}
		k++;
		t = sum + v;   /* Neumaier, as column.h's gwb_ksum */
		c += fabs(sum) >= fabs(v) ? (sum - t) + v : (v - t) + sum;
		sum = t;
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
	}
	if (!k) {
		out->min = out->max = out->mean = out->std = NAN;
		return GWB_OK;
	}
	mean = (sum + c) / (double)k;
	for (i = 0; i < n; i++) {
		double v = w->type == GWB_DT_I64 ? (w->i[i] == GWB_I64_NA ? NAN : (double)w->i[i])
						 : w->f[i];
		if (!isnan(v))
			ss += (v - mean) * (v - mean);
	}
	out->min = mn;
	out->max = mx;
	out->mean = mean;
	out->std = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
	while (nslot < 2 * k)
		nslot *= 2;
	set = malloc(nslot * sizeof(*set));
	used = calloc(nslot, 1);
	if (!set || !used) {
		free(set);
		free(used);
		return gwb_error(GWB_ENOMEM, "describe: out of memory (%zu bytes)", nslot * 9);
	}
	for (i = 0; i < n; i++) {
		uint64_t b, h;
		if (w->type == GWB_DT_I64) {
			if (w->i[i] == GWB_I64_NA)
				continue;
			b = (uint64_t)w->i[i];
		} else {
			double v = w->f[i];
			if (isnan(v))
				continue;
			if (v == 0)
				v = 0.0;
			memcpy(&b, &v, sizeof(b));
		}
		h = b * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		for (h &= nslot - 1; used[h] && set[h] != b; h = (h + 1) & (nslot - 1))
			;
		if (!used[h]) {
			used[h] = 1;
			set[h] = b;
			distinct++;
		}
	}
	free(set);
	free(used);
	out->distinct = distinct;
	return GWB_OK;
}

gwb_status gwb_colstats_of(const float *x, size_t n, gwb_colstats *out)
{
	size_t i, k = 0, nslot = 64, distinct = 0;
	double sum = 0, mn = INFINITY, mx = -INFINITY, mean, ss = 0;
	uint32_t *set;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < n; i++) {
		float v = x[i];
		if (isnan(v)) {
			out->missing++;
			continue;
		}
		k++;
		sum += v;
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
	}
	if (!k) {
		out->min = out->max = out->mean = out->std = NAN;
		return GWB_OK;
	}
	mean = sum / (double)k;
	for (i = 0; i < n; i++)
		if (!isnan(x[i]))
			ss += ((double)x[i] - mean) * ((double)x[i] - mean);
	out->min = mn;
	out->max = mx;
	out->mean = mean;
	out->std = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
	/* distinct: an open-addressing set of the bit patterns; 0xffffffff (a NaN) marks empty */
	while (nslot < 2 * k)
		nslot *= 2;
	set = malloc(nslot * sizeof(*set));
	if (!set)
		return gwb_error(GWB_ENOMEM, "describe: out of memory (%zu bytes)",
				 nslot * sizeof(*set));
	memset(set, 0xff, nslot * sizeof(*set));
	for (i = 0; i < n; i++) {
		float v = x[i];
		uint32_t b, h;
		if (isnan(v))
			continue;
		if (v == 0.0f)
			v = 0.0f;
		memcpy(&b, &v, sizeof(b));
		h = (b * 2654435761u) ^ (b >> 15);
		for (h &= (uint32_t)(nslot - 1); set[h] != 0xffffffffu && set[h] != b;
		     h = (h + 1) & (uint32_t)(nslot - 1))
			;
		if (set[h] != b) {
			set[h] = b;
			distinct++;
		}
	}
	free(set);
	out->distinct = distinct;
	return GWB_OK;
}

struct djob {
	const gwb_dataset *d;
	gwb_colstats *out;
	pthread_mutex_t mu;
	gwb_status st;
};

static void dcolumn(void *arg, size_t c, int worker)
{
	struct djob *j = arg;
	gwb_status st;
	bool stop;

	(void)worker;
	pthread_mutex_lock(&j->mu);
	stop = j->st != GWB_OK;
	pthread_mutex_unlock(&j->mu);
	if (stop)
		return;
	if (gwb_dataset_is_text(j->d, (int)c)) {
		gwb_colstats *o = &j->out[c];
		memset(o, 0, sizeof(*o));
		o->min = o->max = o->mean = o->std = NAN;
		o->missing = gwb_dataset_missing(j->d, (int)c);
		st = gwb_text_distinct(j->d->text[c]->v, j->d->rows, NULL, NULL, &o->distinct);
	} else if (j->d->wide && j->d->wide[c]) {
		st = colstats_wide(j->d->wide[c], j->d->rows, &j->out[c]);
	} else {
		st = gwb_colstats_of(j->d->X + c * j->d->rows, j->d->rows, &j->out[c]);
	}
	if (st) {
		pthread_mutex_lock(&j->mu);
		j->st = st;
		pthread_mutex_unlock(&j->mu);
	}
}

gwb_status gwb_dataset_describe(const gwb_dataset *d, gwb_colstats *out, int threads)
{
	struct djob j = {d, out, PTHREAD_MUTEX_INITIALIZER, GWB_OK};

	if (threads <= 0) {
		threads = d->rows * (size_t)d->features >= 1000000 ? gwb_cpu_count() : 1;
	}
	if (threads > 64)
		threads = 64;
	gwb_parallel_items(threads, d->features > 0 ? (size_t)d->features : 0, dcolumn, &j);
	pthread_mutex_destroy(&j.mu);
	return j.st;
}

uint64_t gwb_dataset_checksum(gwb_dataset *d)
{
	gwb_xxh64_state h;
	uint64_t shape[3] = {d->rows, (uint64_t)d->features, (uint64_t)d->task};

	if (d->sum_ok)
		return d->sum;
	gwb_xxh64_init(&h, 0);
	gwb_xxh64_update(&h, shape, sizeof(shape));
	if (d->X)
		gwb_xxh64_update(&h, d->X, d->rows * (size_t)d->features * sizeof(float));
	if (d->y)
		gwb_xxh64_update(&h, d->y, d->rows * sizeof(int32_t));
	if (d->yr)
		gwb_xxh64_update(&h, d->yr, d->rows * sizeof(float));
	for (int j = 0; d->text && j < d->features; j++) {
		size_t i;
		if (!d->text[j])
			continue;
		/* each string with its terminator, a missing one as a lone 0xff (no UTF-8 byte) */
		for (i = 0; i < d->rows; i++) {
			const char *v = d->text[j]->v[i];
			if (v)
				gwb_xxh64_update(&h, v, strlen(v) + 1);
			else
				gwb_xxh64_update(&h, "\xff", 1);
		}
	}
	for (int j = 0; d->wide && j < d->features; j++) {
		const gwb_num64 *w = d->wide[j];
		if (!w)
			continue;
		gwb_xxh64_update(&h, &w->type, sizeof(w->type));
		gwb_xxh64_update(&h, w->i ? (const void *)w->i : (const void *)w->f, d->rows * 8);
	}
	d->sum = gwb_xxh64_final(&h);
	d->sum_ok = true;
	return d->sum;
}
