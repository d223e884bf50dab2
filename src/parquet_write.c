/* parquet_write.c - a Dataset written as a Parquet file (parquet.h): row groups of at most
 * row_group rows, each column one chunk of one v1 data page (PLAIN FLOAT for numbers, INT64 and
 * DOUBLE for int64 and float64 columns; a PLAIN
 * dictionary page of the levels and RLE_DICTIONARY indices for categories and a text target),
 * REQUIRED columns, or OPTIONAL with RLE definition levels where a column has missing
 * values; pages compressed with snappy (the default), zstd, gzip or not at all; the footer
 * with the schema and key-value metadata (gwb.target, gwb.task, gwb.columns) in Thrift's
 * compact protocol (parquet_thrift.c). The file is built in memory and saved through
 * fileio.c's atomic save. Uses dataset, fileio, intr, csv (its number rule), size. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fileio.h"
#include "intr.h"
#include "parquet.h"
#include "parquet_impl.h"
#include "size.h"

/* one column as written */
typedef struct wcol {
	const char *name;
	const float *x;          /* numbers or codes (NaN = missing) */
	const int32_t *y;        /* a class target's codes (instead of x) */
	float *yval;             /* a numeric class target's values by code */
	char **levels;           /* text: the dictionary */
	int nlev;
	char *const *text;       /* a text column's strings (NULL = missing), written PLAIN */
	const gwb_num64 *wide;   /* a 64-bit column's values, written INT64 or DOUBLE */
	bool optional;
} wcol;

/* the physical type column c is written as */
static int col_type(const wcol *c)
{
	if (c->levels || c->text)
		return PQ_BYTE_ARRAY;
	if (c->wide)
		return c->wide->type == GWB_DT_I64 ? PQ_INT64 : PQ_DOUBLE;
	return PQ_FLOAT;
}

/* written as BYTE_ARRAY (UTF-8 strings) */
static inline bool col_str(const wcol *c)
{
	return c->levels || c->text;
}

typedef struct wchunk {
	int64_t dict_at, data_at, comp, uncomp;
} wchunk;

static float col_at(const wcol *c, size_t i)
{
	return c->y ? (c->yval ? c->yval[c->y[i]] : (float)c->y[i]) : c->x[i];
}

/* a page: header + compressed body, into f; *comp / *uncomp grow by its sizes */
static gwb_status put_page(pq_buf *f, int codec, int type, const pq_buf *body, int32_t nvals,
			   int encoding, wchunk *w)
{
	pq_buf z = {0}, h = {0};
	int last = 0, l2 = 0;
	gwb_status st;

	if ((st = pq_compress(codec, body->p, body->n, &z)))
		goto out;
	if (z.oom || body->n > INT32_MAX || z.n > INT32_MAX) {
		st = gwb_error(GWB_ENOMEM, "save: a page of %zu bytes (at most 2 GiB: use a "
			       "smaller row_group)", body->n);
		goto out;
	}
	pq_tw_i32(&h, &last, 1, type);
	pq_tw_i32(&h, &last, 2, (int32_t)body->n);
	pq_tw_i32(&h, &last, 3, (int32_t)z.n);
	if (type == PQ_PAGE_DICT) {
		pq_tw_struct(&h, &last, 7);
		pq_tw_i32(&h, &l2, 1, nvals);
		pq_tw_i32(&h, &l2, 2, PQ_ENC_PLAIN);
		pq_tw_stop(&h);
	} else {
		pq_tw_struct(&h, &last, 5);
		pq_tw_i32(&h, &l2, 1, nvals);
		pq_tw_i32(&h, &l2, 2, encoding);
		pq_tw_i32(&h, &l2, 3, PQ_ENC_RLE);
		pq_tw_i32(&h, &l2, 4, PQ_ENC_RLE);
		pq_tw_stop(&h);
	}
	pq_tw_stop(&h);
	pq_put(f, h.p, h.n);
	pq_put(f, z.p, z.n);
	w->comp += (int64_t)(h.n + z.n);
	w->uncomp += (int64_t)(h.n + body->n);
	st = f->oom || h.oom ? gwb_error(GWB_ENOMEM, "save: out of memory") : GWB_OK;
out:
	free(z.p);
	free(h.p);
	return st;
}

static gwb_status put_chunk(pq_buf *f, int codec, const wcol *c, size_t r0, size_t r1,
			    wchunk *w)
{
	size_t n = r1 - r0, i, nn = 0;
	pq_buf body = {0};
	uint32_t *v = malloc((n + 1) * sizeof(*v));
	gwb_status st = GWB_OK;

	if (!v)
		return gwb_error(GWB_ENOMEM, "save: out of memory for %zu rows", n);
	memset(w, 0, sizeof(*w));
	w->dict_at = -1;
	if (c->levels) {   /* the dictionary page: every level, PLAIN */
		int j;
		w->dict_at = (int64_t)f->n;
		for (j = 0; j < c->nlev; j++) {
			size_t len = strlen(c->levels[j] ? c->levels[j] : "");
			uint32_t l4 = (uint32_t)len;
			pq_put(&body, &l4, 4);
			pq_put(&body, c->levels[j] ? c->levels[j] : "", len);
		}
		if ((st = put_page(f, codec, PQ_PAGE_DICT, &body, c->nlev, 0, w)))
			goto out;
		body.n = 0;
	}
	w->data_at = (int64_t)f->n;
	if (c->optional) {   /* definition levels: 4-byte length, then the hybrid runs */
		size_t at;
		uint32_t len;
		for (i = 0; i < n; i++)
			v[i] = !isnan(col_at(c, r0 + i));
		pq_put(&body, "\0\0\0\0", 4);
		at = body.n;
		pq_rle_put(&body, v, n, 1);
		len = (uint32_t)(body.n - at);
		if (!body.oom)
			memcpy(body.p + at - 4, &len, 4);
	}
	if (c->text) {   /* PLAIN byte arrays of the rows that have one */
		for (i = 0; i < n; i++) {
			const char *t = c->text[r0 + i];
			uint32_t l4;
			if (!t)
				continue;
			l4 = (uint32_t)strlen(t);
			pq_put(&body, &l4, 4);
			pq_put(&body, t, l4);
		}
	} else if (c->levels) {
		int bw = pq_bit_width(c->nlev > 1 ? (uint32_t)(c->nlev - 1) : 1);
		for (i = 0; i < n; i++) {
			float x = col_at(c, r0 + i);
			if (!isnan(x))
				v[nn++] = (uint32_t)x;
		}
		pq_put_byte(&body, (uint8_t)bw);
		pq_rle_put(&body, v, nn, bw);
	} else if (c->wide) {   /* 8 bytes a value, the missing ones left out */
		for (i = 0; i < n; i++) {
			float x = col_at(c, r0 + i);
			if (isnan(x) && c->optional)
				continue;
			if (c->wide->type == GWB_DT_I64)
				pq_put(&body, &c->wide->i[r0 + i], 8);
			else
				pq_put(&body, &c->wide->f[r0 + i], 8);
		}
	} else {
		for (i = 0; i < n; i++) {
			float x = col_at(c, r0 + i);
			if (!isnan(x) || !c->optional)
				pq_put(&body, &x, 4);
		}
	}
	st = put_page(f, codec, PQ_PAGE_DATA, &body, (int32_t)n,
		      c->levels ? PQ_ENC_RLE_DICT : PQ_ENC_PLAIN, w);
out:
	free(v);
	free(body.p);
	return st;
}

static void json_str(pq_buf *b, const char *s)
{
	pq_put_byte(b, '"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') {
			pq_put_byte(b, '\\');
			pq_put_byte(b, ch);
		} else if (ch < 0x20) {
			char e[8];
			snprintf(e, sizeof(e), "\\u%04x", ch);
			pq_put(b, e, 6);
		} else {
			pq_put_byte(b, ch);
		}
	}
	pq_put_byte(b, '"');
}

static void put_kv(pq_buf *f, const char *k, const char *v, size_t vn)
{
	int l = 0;

	pq_tw_bin(f, &l, 1, k, strlen(k));
	pq_tw_bin(f, &l, 2, v, vn);
	pq_tw_stop(f);
}

static int codec_of(const char *s)
{
	if (!s || !strcmp(s, "snappy"))
		return PQ_CODEC_SNAPPY;
	if (!strcmp(s, "zstd"))
		return PQ_CODEC_ZSTD;
	if (!strcmp(s, "gzip"))
		return PQ_CODEC_GZIP;
	if (!strcmp(s, "none") || !strcmp(s, "uncompressed"))
		return PQ_CODEC_NONE;
	return -1;
}

gwb_status gwb_parquet_save(const gwb_dataset *d, const char *path, const gwb_parquet_wopts *o)
{
	int codec = codec_of(o ? o->compression : NULL), nc, j, g, ng;
	size_t per = o && o->row_group ? o->row_group : (size_t)1 << 20, rows = d->rows, i;
	wcol *cols = NULL;
	wchunk *ch = NULL;
	pq_buf f = {0}, js = {0};
	gwb_status st = GWB_OK;
	float *yval = NULL;
	int last = 0, l2;

	if (codec < 0)
		return gwb_error(GWB_EINVAL, "save: compression must be \"snappy\", \"zstd\", "
				 "\"gzip\" or \"none\" (got \"%s\")", o->compression);
	if (!rows)
		return gwb_error(GWB_EINVAL, "save: %s: the Dataset has no rows", path);
	nc = d->features + (d->no_target ? 0 : 1);
	ng = (int)((rows + per - 1) / per);
	if ((rows + per - 1) / per > INT32_MAX / 2)
		return gwb_error(GWB_EINVAL, "save: %zu row groups of %zu rows are too many", (rows + per - 1) / per, per);
	cols = calloc((size_t)nc + 1, sizeof(*cols));
	ch = calloc((size_t)nc * (size_t)ng + 1, sizeof(*ch));
	if (!cols || !ch)
		goto oom;
	for (j = 0; j < d->features; j++) {
		wcol *c = &cols[j];
		const float *x = d->X + (size_t)j * rows;
		c->name = d->names[j] ? d->names[j] : "";
		c->x = x;
		if (d->cat_levels[j]) {
			c->levels = d->cat_levels[j];
			c->nlev = d->cat_count[j];
		}
		if (gwb_dataset_is_text(d, j))
			c->text = d->text[j]->v;
		if (gwb_dataset_dtype(d, j) != GWB_DT_F32)
			c->wide = d->wide[j];
		for (i = 0; i < rows && !c->optional; i++)
			c->optional = isnan(x[i]);
	}
	if (!d->no_target) {
		wcol *c = &cols[d->features];
		c->name = d->target ? d->target : "target";
		if (d->task == GWB_TASK_REGRESSION) {
			c->x = d->yr;
			for (i = 0; i < rows && !c->optional; i++)
				c->optional = isnan(d->yr[i]);
		} else {
			bool numeric = d->classes > 0;
			c->y = d->y;
			if (!(yval = malloc(((size_t)d->classes + 1) * sizeof(float))))
				goto oom;
			for (j = 0; j < d->classes && numeric; j++) {
				bool ovf;
				const char *s = d->class_names[j] ? d->class_names[j] : "";
				numeric = gwb_csv_parse_float(s, strlen(s), &yval[j], &ovf) &&
					  !isnan(yval[j]);
			}
			if (numeric) {
				c->yval = yval;
			} else {
				c->levels = d->class_names;
				c->nlev = d->classes;
			}
		}
	}
	pq_put(&f, "PAR1", 4);
	for (g = 0; g < ng; g++) {
		size_t r0 = (size_t)g * per, r1 = r0 + per < rows ? r0 + per : rows;
		if (gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "save: %s: interrupted (the old file, if any, is "
				       "left as it was)", path);
			goto out;
		}
		for (j = 0; j < nc; j++)
			if ((st = put_chunk(&f, codec, &cols[j], r0, r1,
					    &ch[(size_t)g * (size_t)nc + (size_t)j])))
				goto out;
	}
	/* the footer: FileMetaData */
	{
		size_t at = f.n;
		uint32_t flen;
		pq_tw_i32(&f, &last, 1, 1);
		pq_tw_list(&f, &last, 2, PQ_T_STRUCT, (size_t)nc + 1);
		l2 = 0;
		pq_tw_bin(&f, &l2, 4, "schema", 6);
		pq_tw_i32(&f, &l2, 5, nc);
		pq_tw_stop(&f);
		for (j = 0; j < nc; j++) {
			const wcol *c = &cols[j];
			l2 = 0;
			pq_tw_i32(&f, &l2, 1, col_type(c));
			pq_tw_i32(&f, &l2, 3, c->optional ? PQ_OPTIONAL : PQ_REQUIRED);
			pq_tw_bin(&f, &l2, 4, c->name, strlen(c->name));
			if (col_str(c)) {
				int l3 = 0, l4 = 0;
				pq_tw_i32(&f, &l2, 6, PQ_CT_UTF8);
				pq_tw_struct(&f, &l2, 10);
				pq_tw_struct(&f, &l3, PQ_LT_STRING);
				(void)l4;
				pq_tw_stop(&f);
				pq_tw_stop(&f);
			}
			pq_tw_stop(&f);
		}
		pq_tw_i64(&f, &last, 3, (int64_t)rows);
		pq_tw_list(&f, &last, 4, PQ_T_STRUCT, (size_t)ng);
		for (g = 0; g < ng; g++) {
			size_t r0 = (size_t)g * per, r1 = r0 + per < rows ? r0 + per : rows;
			int64_t total = 0;
			l2 = 0;
			pq_tw_list(&f, &l2, 1, PQ_T_STRUCT, (size_t)nc);
			for (j = 0; j < nc; j++) {
				const wchunk *w = &ch[(size_t)g * (size_t)nc + (size_t)j];
				const wcol *c = &cols[j];
				int l3 = 0, l4 = 0;
				total += w->uncomp;
				pq_tw_i64(&f, &l3, 2, w->dict_at >= 0 ? w->dict_at : w->data_at);
				pq_tw_struct(&f, &l3, 3);
				pq_tw_i32(&f, &l4, 1, col_type(c));
				pq_tw_list(&f, &l4, 2, PQ_T_I32, c->levels ? 3 : 2);
				pq_tw_elem_i32(&f, c->levels ? PQ_ENC_PLAIN : PQ_ENC_PLAIN);
				pq_tw_elem_i32(&f, PQ_ENC_RLE);
				if (c->levels)
					pq_tw_elem_i32(&f, PQ_ENC_RLE_DICT);
				pq_tw_list(&f, &l4, 3, PQ_T_BIN, 1);
				pq_tw_elem_bin(&f, c->name, strlen(c->name));
				pq_tw_i32(&f, &l4, 4, codec);
				pq_tw_i64(&f, &l4, 5, (int64_t)(r1 - r0));
				pq_tw_i64(&f, &l4, 6, w->uncomp);
				pq_tw_i64(&f, &l4, 7, w->comp);
				pq_tw_i64(&f, &l4, 9, w->data_at);
				if (w->dict_at >= 0)
					pq_tw_i64(&f, &l4, 11, w->dict_at);
				pq_tw_stop(&f);
				pq_tw_stop(&f);
			}
			pq_tw_i64(&f, &l2, 2, total);
			pq_tw_i64(&f, &l2, 3, (int64_t)(r1 - r0));
			pq_tw_stop(&f);
		}
		/* key-value metadata: the target, the task, the column names */
		pq_tw_list(&f, &last, 5, PQ_T_STRUCT, d->no_target ? 2 : 3);
		pq_put_byte(&js, '[');
		for (j = 0; j < nc; j++) {
			if (j)
				pq_put_byte(&js, ',');
			json_str(&js, cols[j].name);
		}
		pq_put_byte(&js, ']');
		put_kv(&f, "gwb.columns", js.p ? (const char *)js.p : "", js.n);
		if (d->no_target) {
			put_kv(&f, "gwb.no_target", "true", 4);
		} else {
			const char *t = cols[d->features].name;
			const char *task = d->task == GWB_TASK_CLASSIFICATION ? "classification"
									      : "regression";
			put_kv(&f, "gwb.target", t, strlen(t));
			put_kv(&f, "gwb.task", task, strlen(task));
		}
		pq_tw_bin(&f, &last, 6, "gwb " GWB_VERSION, strlen("gwb " GWB_VERSION));
		pq_tw_stop(&f);
		if (f.oom || js.oom || f.n - at > UINT32_MAX)
			goto oom;
		flen = (uint32_t)(f.n - at);
		pq_put(&f, &flen, 4);
		pq_put(&f, "PAR1", 4);
		if (f.oom)
			goto oom;
	}
	st = gwb_file_save(path, f.p, f.n, "save");
	goto out;
oom:
	st = gwb_error(GWB_ENOMEM, "save: %s: out of memory building the Parquet file", path);
out:
	free(f.p);
	free(js.p);
	free(cols);
	free(ch);
	free(yval);
	return st;
}
