/* csv.c - streaming RFC 4180 reader into a Dataset (see csv.h for the contract).
 *
 * The file is read in blocks of READ_BLOCK bytes. A record is first split into fields
 * (tokenize: quote aware, never copies), and only once it is complete are its fields converted,
 * so a record cut by the end of a block is simply tokenized again after the refill. Converted
 * rows go row-major into blocks of about CHUNK_BYTES (mmap'd, so releasing one returns its
 * pages at once); at the end each block is transposed into the column-major Dataset and
 * unmapped, so the peak memory is the table once plus one block. */
#define _GNU_SOURCE
#include "csv_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hugemap.h"
#include "intr.h"
#include "switches.h"
#include "suggest.h"
#include "zio.h"

#define READ_BLOCK ((size_t)1 << 20)
#define CHUNK_BYTES ((size_t)4 << 20)
#define SAMPLE_ROWS 2000
#define MAX_CLASSES 65536
#define PROGRESS_MIN_BYTES ((size_t)16 << 20)

static const char *const default_missing[] = {"NA", "NaN", "nan", "N/A", "?"};

void gwb_csv_opts_init(gwb_csv_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->header = -1;
	o->task = -1;
	o->progress = true;
}

/* --- the reader ----------------------------------------------------------------------------- */


/* What a "binary data" message adds when the bytes came out of a gzip/zstd stream. */
static const char *z_hint(const struct rd *r)
{
	return r->z || r->zi ? " (only CSV is read compressed: decompress a .gwbd or .npy file "
			       "first)" : "";
}

/* Move buf[keep..len) to the front and read more. Grows the buffer when keep is 0 and it is
 * full (a record longer than the buffer). Returns the shift applied to offsets. */
static gwb_status refill(struct rd *r, size_t keep, size_t *shift)
{
	ssize_t got;

	*shift = keep;
	if (keep) {
		memmove(r->buf, r->buf + keep, r->len - keep);
		r->len -= keep;
		r->off += keep;
		r->pos -= keep;
	} else if (r->len == r->cap) {
		size_t cap = r->cap * 2;
		char *nb = realloc(r->buf, cap + 1);
		if (!nb)
			return gwb_error(GWB_ENOMEM, "%s: out of memory for a record longer than %zu "
					 "bytes near line %zu", r->path, r->cap, r->line);
		r->buf = nb;
		r->cap = cap;
	}
	while (r->len < r->cap) {
		if (r->zi) {  /* a compressed file's image: read as a file is */
			size_t zgot;
			gwb_status st = gwb_zimage_pread(r->zi, r->buf + r->len, r->cap - r->len,
							 r->off + r->len, &zgot);
			if (st)
				return st;
			got = (ssize_t)zgot;
		} else if (r->z) {  /* a gzip or zstd stream: decompressed a block at a time */
			size_t zgot;
			gwb_status st = gwb_zreader_read(r->z, r->buf + r->len, r->cap - r->len,
							 &zgot);
			if (st)
				return st;
			got = (ssize_t)zgot;
		} else {
			got = read(r->fd, r->buf + r->len, r->cap - r->len);
		}
		if (got < 0 && errno == EINTR) {
			if (gwb_intr_pending())
				break;
			continue;
		}
		if (got < 0)
			return gwb_error(GWB_EIO, "%s: read failed after %zu bytes: %s", r->path,
					 r->off + r->len, strerror(errno));
		if (got == 0) {
			r->eof = true;
			break;
		}
		if (r->nul_check && memchr(r->buf + r->len, 0, (size_t)got)) {
			size_t at = (size_t)((char *)memchr(r->buf + r->len, 0, (size_t)got) - r->buf);
			return gwb_error(GWB_EPARSE, "%s: binary data (a NUL byte at %s offset "
					 "%zu); %s%s", r->path, r->z || r->zi ? "uncompressed" : "byte",
					 r->off + at, GWB_LOAD_FORMATS, z_hint(r));
		}
		r->len += (size_t)got;
	}
	return GWB_OK;
}

/* Candidate separators, most common first. */
static const char seps[] = {',', '\t', ';', '|'};

/* Pick the separator whose count per line (outside quotes) is the same and largest over the
 * first lines of the sample. */
static char sniff_sep(const char *s, size_t n, bool eof)
{
	int counts[4][32], lines = 0, k, i;
	int best = -1, best_count = 0;
	bool inq = false;
	size_t j;

	memset(counts, 0, sizeof(counts));
	for (j = 0; j < n && lines < 32; j++) {
		char c = s[j];
		if (c == '"')
			inq = !inq;
		else if (!inq && c == '\n')
			lines++;
		else if (!inq)
			for (k = 0; k < 4; k++)
				if (c == seps[k])
					counts[k][lines]++;
	}
	if (j == n && eof && lines < 32 && n && s[n - 1] != '\n')
		lines++;   /* the last line has no newline */
	if (!lines)
		return ',';
	for (k = 0; k < 4; k++) {
		int c0 = counts[k][0], same = 1;
		for (i = 1; i < lines; i++)
			if (counts[k][i] != c0)
				same = 0;
		if (same && c0 > best_count) {
			best = k;
			best_count = c0;
		}
	}
	if (best < 0) {
		/* No separator is consistent: take the one that is most often present. */
		int most = 0;
		for (k = 0; k < 4; k++) {
			int present = 0;
			for (i = 0; i < lines; i++)
				present += counts[k][i] > 0;
			if (present > most) {
				most = present;
				best = k;
			}
		}
	}
	return best < 0 ? ',' : seps[best];
}

static void rd_free(struct rd *r)
{
	size_t i;
	int j;

	gwb_zreader_free(r->z);
	gwb_zimage_free(r->zi);
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->f);
	free(r->scratch);
	for (i = 0; i < r->nchunk; i++)
		if (r->chunk[i])   /* (csv_store_chunks releases those it stored) */
			gwb_hugemap_free(r->chunk[i], r->chunk_rows * (size_t)(r->ncol - 1) * sizeof(float));
	free(r->chunk);
	free(r->chunk_n);
	free(r->tv);
	csv_wide_free(r);
	if (r->cols)
		for (j = 0; j < r->ncol; j++)
			csv_dict_free(&r->cols[j].dict);
	free(r->cols);
	if (r->names)
		for (j = 0; j < r->ncol; j++)
			free(r->names[j]);
	free(r->names);
	csv_part_free(r);
	csv_dict_free(&r->name_set);
}

/* Sniff the header and each column's kind from the first rows (up to SAMPLE_ROWS, within the
 * first block). Leaves r->pos and r->line where they were. */
static gwb_status sniff(struct rd *r, const gwb_csv_opts *o, int *header)
{
	size_t cur = r->pos, next, line = r->line;
	char **row0 = NULL;
	struct dict *seen = NULL;   /* per column: the distinct texts of the data rows sampled */
	int rows = 0, j, t, repeats = 0, any_num_col_text0 = 0, all_text0 = 1;
	gwb_status st = GWB_OK;

	for (;;) {
		t = csv_tokenize(r, cur, &next, line, &st);
		if (t == TOK_ERR)
			goto out;
		if (t == TOK_MORE) {
			size_t shift;
			if (rows >= 2 && r->len >= r->block)
				break;
			if (gwb_intr_pending()) {   /* a record longer than the buffer grows it */
				st = gwb_error(GWB_EINTR, "%s: loading interrupted", r->path);
				goto out;
			}
			if ((st = refill(r, r->pos, &shift)))
				goto out;
			cur -= shift;
			continue;
		}
		if (t == TOK_EOF)
			break;
		line += 1 + r->nl;
		if (r->nf == 1 && r->f[0].n == 0 && r->f[0].q == 0) {
			cur = next;
			continue;   /* blank line */
		}
		if (rows == 0) {
			r->ncol = r->nf;
			r->cols = calloc((size_t)r->ncol, sizeof(*r->cols));
			row0 = calloc((size_t)r->ncol, sizeof(*row0));
			seen = calloc((size_t)r->ncol, sizeof(*seen));
			if (!r->cols || !row0 || !seen) {
				st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
				goto out;
			}
		}
		for (j = 0; j < r->nf && j < r->ncol; j++) {
			const char *p;
			size_t n;
			float v;
			bool ovf;
			if ((st = csv_field_text(r, &r->f[j], &p, &n)))
				goto out;
			if (csv_is_missing(r, p, n)) {
				if (rows == 0)
					all_text0 = 0;
				continue;
			}
			if (gwb_csv_parse_float(p, n, &v, &ovf)) {
				if (rows == 0)
					all_text0 = 0;
				else
					r->cols[j].seen_num++;
				continue;
			}
			if (rows == 0) {
				r->cols[j].row0_text = 1;
				if (!(row0[j] = strndup(p, n))) {
					st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
					goto out;
				}
			} else {
				int32_t code;
				r->cols[j].seen_text++;
				if (row0[j] && strlen(row0[j]) == n && !memcmp(row0[j], p, n))
					repeats = 1;
				if (csv_dict_code(&seen[j], p, n, &code) == -1) {
					st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
					goto out;
				}
			}
		}
		rows++;
		cur = next;
		if (rows > SAMPLE_ROWS)
			break;
	}
	if (rows == 0) {
		st = gwb_error(GWB_EPARSE, "%s: empty file (no rows); data.load needs a header "
			       "line and data rows", r->path);
		goto out;
	}
	for (j = 0; j < r->ncol; j++)
		if (r->cols[j].row0_text && r->cols[j].seen_num > r->cols[j].seen_text)
			any_num_col_text0 = 1;
	if (o->header >= 0)
		*header = o->header;
	else if (any_num_col_text0)
		*header = 1;
	else if (all_text0 && (rows == 1 || !repeats))
		*header = 1;
	else
		*header = 0;
	/* Column kinds from the data rows of the sample (row 0 counts when it is data): text
	 * makes a column categorical unless numbers are the majority, in which case the text is
	 * most likely a typo or an unlisted missing-value marker and loading stops there with a
	 * message that says how to read it either way. */
	for (j = 0; j < r->ncol; j++) {
		struct col *c = &r->cols[j];
		size_t text = c->seen_text + (!*header && c->row0_text);
		c->numeric = text == 0 || c->seen_num > text;
		c->seen_distinct = (size_t)seen[j].n;
	}
out:
	if (row0)
		for (j = 0; j < r->ncol; j++)
			free(row0[j]);
	free(row0);
	if (seen)
		for (j = 0; j < r->ncol; j++)
			csv_dict_free(&seen[j]);
	free(seen);
	return st;
}


/* Column names: the header's fields (colN for an empty one, or every one without a header).
 * A repeated name gets the first suffix no earlier column has: x, x.2, x.3. r->name_set holds
 * the names (code = column), so renaming and every lookup by name are linear in the size of
 * the header, however many names repeat. */
static gwb_status set_names(struct rd *r, int header)
{
	struct dict *set = &r->name_set;
	int *next = NULL;   /* per column: the next suffix to try for its name */
	gwb_status st = GWB_OK;
	char nb[32], *nn = NULL;
	size_t nncap = 0;
	int j;

	r->names = calloc((size_t)r->ncol, sizeof(*r->names));
	next = calloc((size_t)r->ncol, sizeof(*next));
	if (!r->names || !next) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory for %d column names", r->path, r->ncol);
		goto out;
	}
	for (j = 0; j < r->ncol; j++) {
		const char *p = NULL;
		size_t n = 0;
		int32_t code;
		int base, e = 0;
		if ((j & 4095) == 0 && gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "%s: loading interrupted in the header (column %d of "
				       "%d)", r->path, j + 1, r->ncol);
			goto out;
		}
		if (header && (st = csv_field_text(r, &r->f[j], &p, &n)))
			goto out;
		if (!n) {
			snprintf(nb, sizeof(nb), "col%d", j + 1);
			p = nb;
			n = strlen(nb);
		}
		if ((base = csv_dict_find(set, p, n)) >= 0) {
			/* taken: the base's next free suffix (remembered, so n copies of one name
			 * cost n probes in all) */
			int s = next[base] ? next[base] : 2;
			if (nncap < n + 16) {
				char *g = realloc(nn, n + 16);
				if (!g) {
					st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
					goto out;
				}
				nn = g;
				nncap = n + 16;
			}
			memcpy(nn, p, n);
			for (;; s++) {
				snprintf(nn + n, 16, ".%d", s);
				if (csv_dict_find(set, nn, strlen(nn)) < 0)
					break;
			}
			next[base] = s + 1;
			p = nn;
			n = strlen(nn);
		}
		if (!(r->names[j] = strndup(p, n)) || (e = csv_dict_code(set, p, n, &code)) == -1) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory for %d column names", r->path,
				       r->ncol);
			goto out;
		}
		if (e == -2) {
			st = gwb_error(GWB_EPARSE, "%s: more than %d columns", r->path, MAX_LEVELS);
			goto out;
		}
	}
out:
	free(next);
	free(nn);
	return st;
}

static gwb_status pick_target(struct rd *r, const gwb_csv_opts *o)
{
	int j;

	if (r->ncol < 2)
		return gwb_error(GWB_EINVAL, "%s: only one column (\"%s\"); need at least one feature "
				 "and a target (is the separator right? pass sep = \";\" or \"\\t\")",
				 r->path, r->names[0]);
	if (o->target) {
		if ((j = csv_dict_find(&r->name_set, o->target, strlen(o->target))) >= 0) {
			r->target = j;
			return GWB_OK;
		}
		{
			char list[512];
			size_t k = 0;
			for (j = 0; j < r->ncol && k + 40 < sizeof(list); j++)
				k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", j ? ", " : "",
						      r->names[j]);
			char near[256];
			if (j < r->ncol)
				snprintf(list + k, sizeof(list) - k, ", ... (%d columns)", r->ncol);
			if (gwb_suggest(o->target, (const char *const *)r->names, (size_t)r->ncol, NULL,
					near, sizeof(near)))
				return gwb_error(GWB_EINVAL, "%s: unknown target \"%s\": did you mean %s? "
						 "(the columns are: %s)", r->path, o->target, near, list);
			return gwb_error(GWB_EINVAL, "%s: unknown target \"%s\"; the columns are: %s",
					 r->path, o->target, list);
		}
	}
	j = o->target_index;
	if (j == 0)
		j = r->ncol;
	else if (j < 0)
		j = r->ncol + 1 + j;
	if (j < 1 || j > r->ncol)
		return gwb_error(GWB_EINVAL, "%s: target index %d out of range (the file has %d "
				 "columns)", r->path, o->target_index, r->ncol);
	r->target = j - 1;
	return GWB_OK;
}


/* Codes of categorical feature column j (x, one per row) to the sorted order `map`. Rows the
 * parallel reader read carry their range's codes, which its part map takes to the merged ones
 * first. */
static void recode(const struct rd *r, int j, float *x, const int32_t *map)
{
	size_t i, i0 = 0, i1;
	int p, np = r->npart ? r->npart : 1;

	for (p = 0; p < np; p++, i0 = i1) {
		const int32_t *pm = r->npart ? r->part_map[(size_t)p * (size_t)r->ncol + (size_t)j]
					     : NULL;
		i1 = r->npart ? i0 + r->part_rows[p] : r->rows;
		if (pm) {
			for (i = i0; i < i1; i++)
				if (!isnan(x[i]))
					x[i] = (float)map[pm[(int32_t)x[i]]];
		} else {
			for (i = i0; i < i1; i++)
				if (!isnan(x[i]))
					x[i] = (float)map[(int32_t)x[i]];
		}
	}
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* Text column j (x: its codes, NaN where missing) into a gwb_text: the k-th value present in a
 * range is the k-th string its dictionary appended; the ranges' arenas move to the column. */
static gwb_status build_text(struct rd *r, int j, const float *x, gwb_text **out)
{
	gwb_text *t = gwb_text_new(r->rows);
	size_t i, i0 = 0, i1;
	int p, np = r->npart ? r->npart : 1;

	*out = NULL;
	if (!t)
		return gwb_error(GWB_ENOMEM, "%s: out of memory for text column \"%s\"", r->path,
				 r->names[j]);
	for (p = 0; p < np; p++, i0 = i1) {
		struct dict *d = r->npart ? &r->part_text[(size_t)p * (size_t)r->ncol + (size_t)j]
					  : &r->cols[j].dict;
		int k = 0;
		i1 = r->npart ? i0 + r->part_rows[p] : r->rows;
		for (i = i0; i < i1; i++)
			if (!isnan(x[i]) && k < d->n)
				t->v[i] = d->str[k++];
		if (d->arena) {
			gwb_arena_adopt(t->arena, d->arena);
			d->arena = NULL;
		}
		free(d->str);
		d->str = NULL;
		d->n = d->cap = 0;
	}
	*out = t;
	return GWB_OK;
}

/* The 64-bit columns this read makes (issue 30): each numeric feature's type, the one its
 * values have (int64 while every value was an integer literal, else float64) unless dtype or
 * dtypes ask otherwise, a gwb_num64 for each in (*wides)[feature] (NULL: float32 only) that
 * takes the reader's column (r->wcol). */
static gwb_status wide_plan(struct rd *r, const gwb_csv_opts *o, gwb_num64 ***wides)
{
	int F = r->ncol - 1, j, k;
	gwb_num64 **w;

	*wides = NULL;
	for (k = 0; k < o->n_dtypes; k++) {
		j = csv_dict_find(&r->name_set, o->dtype_names[k], strlen(o->dtype_names[k]));
		if (j < 0 || j == r->target || !r->cols[j].numeric)
			return gwb_error(GWB_EINVAL, "%s: dtypes: column \"%s\" %s", r->path,
					 o->dtype_names[k], j < 0 ? "is not in the file" :
					 j == r->target ? "is the target (a target is float32 or "
					 "classes)" : "holds text, not numbers");
	}
	if (!r->wide)
		return GWB_OK;
	if (!(w = calloc((size_t)F + 1, sizeof(*w))))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
	*wides = w;
	for (j = 0; j < r->ncol; j++) {
		struct col *c = &r->cols[j];
		int want = o->f32 ? GWB_DT_F32 : -1, f = c->feature;
		gwb_numtype t;
		if (j == r->target || !c->numeric)
			continue;
		for (k = 0; k < o->n_dtypes; k++)
			if (!strcmp(o->dtype_names[k], r->names[j]))
				want = o->dtype_types[k];
		if (want == GWB_DT_F32)
			continue;
		if (want == GWB_DT_I64 && !c->wint)
			return gwb_error(GWB_EINVAL, "%s: dtypes: column \"%s\" holds numbers that are "
					 "not integers (a fraction, an exponent or beyond int64); "
					 "\"i64\" needs integers: ask for \"f64\"", r->path,
					 r->names[j]);
		t = want == GWB_DT_F64 || !c->wint ? GWB_DT_F64 : GWB_DT_I64;
		if (!r->wcol || !r->wcol[f] || !(w[f] = calloc(1, sizeof(*w[f]))))
			return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		w[f]->type = t;
		w[f]->map = r->wmap ? csv_wide_bytes(r->wcap) : 0;
		if (t == GWB_DT_F64 && c->wint) {   /* int64 values asked as float64 */
			uint64_t *v = r->wcol[f];
			size_t i;
			for (i = 0; i < r->rows; i++) {
				int64_t x = (int64_t)v[i];
				double dv = x == GWB_I64_NA ? NAN : (double)x;
				memcpy(&v[i], &dv, 8);
			}
		}
		if (t == GWB_DT_I64)
			w[f]->i = (int64_t *)(void *)r->wcol[f];
		else
			w[f]->f = (double *)(void *)r->wcol[f];
		r->wcol[f] = NULL;
	}
	return GWB_OK;
}

/* Build the dataset from what was read; frees chunks as they are transposed. */
static gwb_status build(struct rd *r, const gwb_csv_opts *o, gwb_dataset **out)
{
	struct col *tc = &r->cols[r->target];
	int F = r->ncol - 1, j, classes = 0;
	gwb_task task;
	float *vals = NULL;
	size_t i, nd = 0, done;
	gwb_dataset *d = NULL;
	gwb_num64 **wides = NULL;
	gwb_status st;
	bool integral = true;

	if (!tc->numeric) {
		if (o->task == GWB_TASK_REGRESSION)
			return gwb_error(GWB_EINVAL, "%s: target \"%s\" holds text (e.g. \"%s\"); it "
					 "cannot be a regression target", r->path, r->names[r->target],
					 tc->dict.n ? tc->dict.str[0] : "");
		task = GWB_TASK_CLASSIFICATION;
		classes = tc->dict.n;
	} else {
		/* Inference needs only: integral values, at most 32 distinct. A small set finds
		 * that without sorting the column; the sort is for the classes themselves. */
		float few[33];
		size_t nfew = 0;
		for (i = 0; i < r->rows && (o->task < 0 || o->task == GWB_TASK_CLASSIFICATION); i++) {
			float v = r->tv[i];
			size_t k;
			if (v != floorf(v) || fabsf(v) > 16777216.0f)
				integral = false;
			if (!integral && o->task < 0)
				break;
			for (k = 0; k < nfew && few[k] != v; k++)
				;
			if (k == nfew) {
				if (nfew == 33) {
					if (o->task < 0)
						break;
					continue;
				}
				few[nfew++] = v;
			}
		}
		if (o->task >= 0)
			task = (gwb_task)o->task;
		else if (integral && nfew <= 32 && (nfew <= 2 || nfew * 2 <= r->rows))
			task = GWB_TASK_CLASSIFICATION;
		else
			task = GWB_TASK_REGRESSION;
		if (task == GWB_TASK_CLASSIFICATION) {
			/* the few distinct values seen are all of them when the scan went to the end
			 * (and none is a NaN): sort those instead of the column */
			bool all = i == r->rows && nfew <= 32;
			size_t k;
			for (k = 0; k < nfew; k++)
				all &= few[k] == few[k];
			vals = malloc(((all ? nfew : r->rows) + 1) * sizeof(float));
			if (!vals)
				return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			if (all) {
				memcpy(vals, few, nfew * sizeof(float));
				qsort(vals, nfew, sizeof(float), cmp_float);
				nd = nfew;
			} else {
				memcpy(vals, r->tv, r->rows * sizeof(float));
				qsort(vals, r->rows, sizeof(float), cmp_float);
				for (i = 0; i < r->rows; i++)
					if (i == 0 || vals[i] != vals[nd - 1])
						vals[nd++] = vals[i];
			}
		}
		if (task == GWB_TASK_CLASSIFICATION && nd > MAX_CLASSES) {
			free(vals);
			return gwb_error(GWB_EINVAL, "%s: target \"%s\" has %zu distinct values, too many "
					 "for classification (at most %d); use task = \"regression\"",
					 r->path, r->names[r->target], nd, MAX_CLASSES);
		}
		classes = task == GWB_TASK_CLASSIFICATION ? (int)nd : 0;
	}
	if ((st = gwb_dataset_new(r->rows, F, task, classes, &d)))
		goto fail;
	if ((st = wide_plan(r, o, &wides)))
		goto fail;
	/* (no huge pages for X: the transpose writes the start of every column first, so 2 MiB
	 * pages would make F x 2 MiB resident ahead of the chunks released; and measured on a
	 * 1M x 16 load, their faults (zeroing and compaction, 2 MiB each) took 80 ms against
	 * 45 ms for the 4 KiB ones) */
	/* features: transpose each row-major chunk into the columns, releasing it at once */
	if (r->nchunk)
		r->chunk_n[r->nchunk - 1] = r->cur_rows;
	if ((st = csv_store_chunks(r, d->X, &done)))
		goto fail;
	r->nchunk = 0;
	for (j = 0; wides && j < F; j++) {   /* X keeps the correctly rounded float32 of the text */
		if (wides[j] && (st = gwb_dataset_attach_wide(d, j, wides[j])))
			goto fail;
		wides[j] = NULL;
	}
	free(wides);
	wides = NULL;
	/* names, dictionaries in sorted order */
	for (j = 0; j < r->ncol; j++) {
		struct col *c = &r->cols[j];
		int32_t *map;
		if (j == r->target)
			continue;
		d->names[c->feature] = r->names[j];
		r->names[j] = NULL;
		if (c->numeric)
			continue;
		if (c->text) {
			gwb_text *t;
			if ((st = build_text(r, j, d->X + (size_t)c->feature * r->rows, &t)))
				goto fail;
			if ((st = gwb_dataset_set_text(d, c->feature, t))) {
				gwb_text_free(t);
				goto fail;
			}
			continue;
		}
		if (!(map = csv_dict_sort(&c->dict))) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			goto fail;
		}
		recode(r, j, d->X + (size_t)c->feature * r->rows, map);
		free(map);
		d->cat_levels[c->feature] = c->dict.str;
		d->cat_count[c->feature] = c->dict.n;
		c->dict.str = NULL;
		c->dict.n = 0;
	}
	d->target = r->names[r->target];
	r->names[r->target] = NULL;
	if (task == GWB_TASK_REGRESSION) {
		memcpy(d->yr, r->tv, r->rows * sizeof(float));
	} else if (!tc->numeric) {
		int32_t *map = csv_dict_sort(&tc->dict);
		if (!map) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			goto fail;
		}
		for (i = 0; i < r->rows; i++)
			d->y[i] = map[(int32_t)r->tv[i]];
		free(map);
		for (j = 0; j < classes; j++) {
			d->class_names[j] = tc->dict.str[j];
			tc->dict.str[j] = NULL;
		}
	} else {
		for (i = 0; i < r->rows; i++) {
			/* binary search the sorted distinct values */
			size_t lo = 0, hi = nd;
			while (hi - lo > 1) {
				size_t mid = (lo + hi) / 2;
				if (vals[mid] <= r->tv[i])
					lo = mid;
				else
					hi = mid;
			}
			d->y[i] = (int32_t)lo;
		}
		for (j = 0; j < classes; j++) {
			char b[32];
			snprintf(b, sizeof(b), "%.9g", (double)vals[j]);
			if (!(d->class_names[j] = strdup(b))) {
				st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
				goto fail;
			}
		}
	}
	free(vals);
	*out = d;
	return GWB_OK;
fail:
	free(vals);
	for (j = 0; wides && j < F; j++)
		gwb_num64_free(wides[j]);
	free(wides);
	gwb_dataset_free(d);
	return st;
}


gwb_status gwb_csv_load(const char *path, const gwb_csv_opts *opts, gwb_dataset **out,
			gwb_csv_info *info)
{
	struct rd r;
	gwb_csv_opts defo;
	struct stat sb;
	gwb_status st;
	size_t shift, next;
	int header = 0, j, k, t;
	bool progress = false, fast, slow, par;
	size_t par_min;
	double t0 = gwb_now();

	*out = NULL;
	if (!opts) {
		gwb_csv_opts_init(&defo);
		opts = &defo;
	}
	memset(&r, 0, sizeof(r));
	r.path = path;
	r.line = 1;
	r.info.threads = 1;
	r.missing = opts->missing ? opts->missing : default_missing;
	r.n_missing = opts->missing ? opts->n_missing
				    : (int)(sizeof(default_missing) / sizeof(*default_missing));
	for (j = 0; j < r.n_missing; j++) {
		float v;
		bool ovf;
		if (gwb_csv_parse_float(r.missing[j], strlen(r.missing[j]), &v, &ovf) && !isnan(v))
			r.numeric_missing = true;
	}
	r.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r.fd < 0)
		return gwb_error(GWB_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(r.fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		st = gwb_error(GWB_EIO, "%s: is a directory, not a CSV file", path);
		goto out;
	}
	r.size = S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0;
	r.info.bytes = r.size;
	r.block = opts->block ? opts->block : READ_BLOCK;
	r.cap = r.block;
	if (!(r.buf = malloc(r.cap + 1))) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory for the read buffer", path);
		goto out;
	}
	if ((st = refill(&r, 0, &shift)))
		goto out;
	/* the switches (switches.h): csv.fast off reads every record through the tokenizer (as
	 * opts->slow does), csv.parallel off keeps to one thread */
	slow = opts->slow || !gwb_switch_on(GWB_SW_CSV_FAST);
	par = !slow && opts->threads != 1 && (opts->threads > 1 || gwb_cpu_count() > 1);
	par_min = opts->par_min ? opts->par_min : PAR_MIN_BYTES;
	/* gzip or zstd, by the magic bytes whatever the name: the block read so far is the
	 * stream's head. A regular file expected to decompress to par_min bytes or more (and
	 * to fit in half the available memory) is decoded into an image on a thread of its own,
	 * which the byte-range reader reads as it grows (the decoding and the parsing overlap);
	 * anything else (pipes, stdin, small files, huge ones, one thread) streams through a
	 * zio.c reader under refill, sequentially (r.size 0 keeps the byte-range reader off),
	 * decoding ahead on a thread of its own unless one thread was asked for. Progress
	 * follows the compressed bytes when streaming. */
	if ((r.zkind = gwb_z_sniff(r.buf, r.len)) != GWB_Z_NONE) {
		uint64_t hint = r.size ? gwb_z_size_hint(r.fd, r.zkind, r.buf, r.len, r.size) : 0;
		r.zsize = r.size;
		if (par && hint >= par_min && gwb_zimage_fits(hint) &&
		    gwb_switch_on(GWB_SW_CSV_PARALLEL)) {
			if ((st = gwb_zimage_new(&r.zi, r.fd, r.zkind, path, r.buf, r.len)))
				goto out;
			r.size = (size_t)hint;
		} else {
			if ((st = gwb_zreader_new(&r.z, r.fd, r.zkind, path, r.buf, r.len,
						  opts->threads != 1 && gwb_cpu_count() > 1)))
				goto out;
			r.size = 0;
		}
		r.len = 0;
		r.eof = false;
		if ((st = refill(&r, 0, &shift)))
			goto out;
	}
	if (r.len >= 2 && ((unsigned char)r.buf[0] == 0xff && (unsigned char)r.buf[1] == 0xfe)) {
		st = gwb_error(GWB_EPARSE, "%s: UTF-16 text (byte order mark FF FE); save it as "
			       "UTF-8", path);
		goto out;
	}
	if (memchr(r.buf, 0, r.len)) {
		st = gwb_error(GWB_EPARSE, "%s: binary data (a NUL byte at %s offset %zu); %s%s",
			       path, r.z || r.zi ? "uncompressed" : "byte",
			       (size_t)((char *)memchr(r.buf, 0, r.len) - r.buf), GWB_LOAD_FORMATS,
			       z_hint(&r));
		goto out;
	}
	r.nul_check = true;
	if (r.len >= 3 && !memcmp(r.buf, "\xef\xbb\xbf", 3)) {
		r.pos = 3;
		r.info.bom = true;
	}
	{
		size_t i = r.pos;
		while (i < r.len && (r.buf[i] == ' ' || r.buf[i] == '\t' || r.buf[i] == '\n' ||
				     r.buf[i] == '\r'))
			i++;
		if (i == r.len && r.eof) {
			st = gwb_error(GWB_EPARSE, "%s: empty file (%zu bytes, no data); data.load "
				       "needs a header line and data rows", path, r.len);
			goto out;
		}
		/* Text files have few control characters; a binary file without NULs is rare but
		 * give it the same message. */
		{
			size_t ctl = 0, n = r.len - r.pos;
			for (i = r.pos; i < r.len; i++) {
				unsigned char c = (unsigned char)r.buf[i];
				ctl += (c < 32 && c != '\n' && c != '\r' && c != '\t') || c == 127;
			}
			if (ctl * 20 > n) {
				st = gwb_error(GWB_EPARSE, "%s: binary data (%zu control bytes in the "
					       "first %zu); %s%s", path, ctl, n, GWB_LOAD_FORMATS,
					       z_hint(&r));
				goto out;
			}
		}
	}
	r.sep = opts->sep ? opts->sep : sniff_sep(r.buf + r.pos, r.len - r.pos, r.eof);
	r.info.sep = r.sep;
	if ((st = sniff(&r, opts, &header)))
		goto out;
	r.info.header = header;
	/* the header row */
	for (;;) {
		t = csv_tokenize(&r, r.pos, &next, r.line, &st);
		if (t == TOK_ERR)
			goto out;
		if (t == TOK_MORE) {
			if (gwb_intr_pending()) {
				st = gwb_error(GWB_EINTR, "%s: loading interrupted in the header", path);
				goto out;
			}
			if ((st = refill(&r, r.pos, &shift)))
				goto out;
			continue;
		}
		if (t == TOK_REC && r.nf == 1 && !r.f[0].n && !r.f[0].q) {
			r.line++;
			r.pos = next;
			continue;
		}
		break;
	}
	if ((st = set_names(&r, header)))
		goto out;
	if (header) {
		r.line += 1 + r.nl;
		r.pos = next;
	}
	if ((st = pick_target(&r, opts)))
		goto out;
	for (j = 0, k = 0; j < r.ncol; j++)
		r.cols[j].feature = j == r.target ? -1 : k++;
	for (j = 0; j < opts->n_categorical; j++) {
		k = csv_dict_find(&r.name_set, opts->categorical[j], strlen(opts->categorical[j]));
		if (k < 0) {
			st = gwb_error(GWB_EINVAL, "%s: categorical column \"%s\" is not in the file",
				       path, opts->categorical[j]);
			goto out;
		}
		r.cols[k].numeric = 0;
		r.cols[k].seen_distinct = 0;   /* asked for as a category: never text */
	}
	/* Free text: a text column whose sampled values mostly differ (gwb_text_looks_free), or
	 * one the caller names; never the target */
	for (j = 0; j < r.ncol; j++) {
		struct col *c = &r.cols[j];
		c->text = j != r.target && !c->numeric &&
			  gwb_text_looks_free(c->seen_text, c->seen_distinct);
		c->dict.text = c->text;
	}
	for (j = 0; j < opts->n_text; j++) {
		k = csv_dict_find(&r.name_set, opts->text[j], strlen(opts->text[j]));
		if (k < 0 || k == r.target) {
			st = gwb_error(GWB_EINVAL, "%s: text column \"%s\" %s", path, opts->text[j],
				       k < 0 ? "is not in the file" : "is the target; a target is a "
				       "category or numbers");
			goto out;
		}
		r.cols[k].numeric = 0;
		r.cols[k].text = 1;
		r.cols[k].dict.text = true;
	}
	/* 64-bit cells beside the float32 ones unless every numeric feature is float32 */
	r.wide = !opts->f32 || opts->n_dtypes > 0;
	r.west = r.size;
	for (j = 0; j < r.ncol; j++)
		r.cols[j].wint = 1;
	r.chunk_rows = CHUNK_BYTES / ((size_t)(r.ncol - 1) * sizeof(float));
	if (r.chunk_rows < 64)
		r.chunk_rows = 64;
	/* progress by bytes: of the file (a compressed file's image: its expected size), of the
	 * compressed file, or read so far when the size is unknown (a pipe given by path) */
	if (opts->progress && (r.z ? r.zsize >= PROGRESS_MIN_BYTES / 4
			       : r.size >= PROGRESS_MIN_BYTES || !S_ISREG(sb.st_mode))) {
		gwb_progress_begin("load", (double)(r.z ? r.zsize : r.size));
		progress = true;
	}
	/* the data rows */
	fast = !r.numeric_missing;
	for (j = 0; j < r.ncol; j++)
		fast &= r.cols[j].numeric;
	if (!slow && r.size && r.size >= par_min && gwb_switch_on(GWB_SW_CSV_PARALLEL)) {
		int threads = opts->threads > 0 ? opts->threads : gwb_cpu_count();
		if (threads > 1) {
			/* a quoted field with a line break in the first block: count the quotes first
			 * to find where the ranges start. Otherwise each range starts after its first
			 * line break, and the check that every range ends where the next one starts
			 * proves those starts (a quoted line break later on fails it, and the quotes
			 * are counted then) */
			bool parity = csv_quoted_break(r.buf, r.len);
			/* ranges of PAR_RANGE_MIN bytes and more; the tests' small par_min makes them
			 * small too (several a thread on a small file) */
			size_t rmin = opts->par_min ? opts->par_min : PAR_RANGE_MIN;
			int pr = csv_parallel_load(&r, r.off + r.pos, threads, rmin, parity, progress, &st);
			if (pr == PAR_MISMATCH && !parity)
				pr = csv_parallel_load(&r, r.off + r.pos, threads, rmin, true, progress, &st);
			if (pr == PAR_ERROR)
				goto out;
			if (pr == PAR_DONE) {
				r.info.threads = threads;
				goto rows_done;
			}
		}
	}
	for (;;) {
		float *row;
		if (!slow) {
			if ((st = csv_reserve_row(&r, &row)))
				goto out;
			if ((fast && csv_fast_row(&r, r.pos, &next, row, &r.tv[r.rows])) ||
			    csv_mixed_row(&r, r.pos, &next, row, &r.tv[r.rows], &r.nmiss)) {
				r.cur_rows++;
				r.rows++;
				r.line++;
				r.pos = next;
				continue;
			}
		}
		t = csv_tokenize(&r, r.pos, &next, r.line, &st);
		if (t == TOK_ERR)
			goto out;
		if (t == TOK_EOF)
			break;
		if (t == TOK_MORE) {
			if (gwb_intr_pending()) {
				st = gwb_error(GWB_EINTR, "%s: loading interrupted after %zu rows", path,
					       r.rows);
				goto out;
			}
			if ((st = refill(&r, r.pos, &shift)))
				goto out;
			if (progress)
				gwb_progress_update((double)(r.z ? gwb_zreader_in(r.z) : r.off + r.pos),
						    NULL, 0);
			continue;
		}
		if (!(r.nf == 1 && !r.f[0].n && !r.f[0].q)) {
			if ((st = csv_convert_row(&r, r.pos, r.line)))
				goto out;
		}
		r.line += 1 + r.nl;
		r.pos = next;
	}
rows_done:
	if (!r.rows) {
		st = gwb_error(GWB_EPARSE, "%s: a header but no data rows", path);
		goto out;
	}
	r.info.lines = r.line - 1;
	r.info.crlf = r.crlf;
	if (r.z) {
		r.info.compression = gwb_z_name(r.zkind);
		r.info.compressed_bytes = (size_t)gwb_zreader_in(r.z);
		r.info.bytes = (size_t)gwb_zreader_out(r.z);
	} else if (r.zi) {
		uint64_t zin, zout;
		gwb_zimage_done(r.zi, &zin, &zout);
		r.info.compression = gwb_z_name(r.zkind);
		r.info.compressed_bytes = (size_t)zin;
		r.info.bytes = (size_t)zout;
	} else if (!r.info.bytes) {
		r.info.bytes = r.off + r.len;  /* a stream of unknown size: what was read */
	}
	r.info.missing = r.nmiss;
	for (j = 0; j < r.ncol; j++)
		r.info.missing += r.cols[j].missing;
	gwb_zreader_free(r.z);
	r.z = NULL;
	gwb_zimage_free(r.zi);
	r.zi = NULL;
	close(r.fd);
	r.fd = -1;
	free(r.buf);
	r.buf = NULL;
	st = build(&r, opts, out);
out:
	if (progress)
		gwb_progress_end();
	r.info.seconds = gwb_now() - t0;
	if (info)
		*info = r.info;
	rd_free(&r);
	return st;
}
