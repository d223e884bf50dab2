/* parquet_read.c - a Parquet file into a Dataset (parquet.h). The file is mapped; the footer
 * is parsed (parquet_thrift.c), the flat top-level columns asked for are checked (nested,
 * repeated, INT96 and FIXED_LEN_BYTE_ARRAY columns refused by name), then every column chunk
 * of every row group is an item on the thread pool (gwb_parallel_items), decoded into the
 * Dataset's columns: numbers as float32, strings as codes into a per-chunk table that is
 * merged afterwards into sorted levels (the CSV reader's order: by value when every level
 * reads as a number, else by bytes). Only the chosen columns' pages are touched. Every offset
 * and count from the file is checked (size.h) before use; errors name the file, column, row
 * group and byte offset. Uses dataset, pool, intr, hash, suggest, csv (its number rule), the
 * codecs and levels of parquet_enc.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "csv.h"
#include "hash.h"
#include "hugemap.h"
#include "intr.h"
#include "parquet.h"
#include "parquet_impl.h"
#include "pool.h"
#include "size.h"
#include "suggest.h"

#define MAX_LEVELS (1 << 24)   /* category codes stay exact in float32 */
#define MAX_CLASSES 65536      /* as the CSV reader */

void gwb_parquet_opts_init(gwb_parquet_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->task = -1;
}

bool gwb_parquet_is_parquet(const char *path)
{
	unsigned char a[5], b[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	bool ok = false;

	if (fd < 0)
		return false;
	/* PAR1 at both ends; or at the start followed by a binary byte (a page header's
	 * first, 0x15 for every writer): a truncated Parquet file, not a CSV with a PAR1 column */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= 5 &&
	    pread(fd, a, 5, 0) == 5 && !memcmp(a, "PAR1", 4))
		ok = (a[4] < 0x20 && a[4] != '\t' && a[4] != '\n' && a[4] != '\r') ||
		     (st.st_size >= 12 && pread(fd, b, 4, st.st_size - 4) == 4 &&
		      !memcmp(b, "PAR1", 4));
	close(fd);
	return ok;
}

/* --- a set of strings (a chunk's levels, then a column's) ----------------------------------- */

typedef struct strtab {
	char **s;
	int n, cap;
	int32_t *slot;    /* open addressing: code + 1, 0 = empty */
	size_t nslot;
	/* a free-text column's chunk (pcol.free_text): every value appended, none looked up, the
	 * strings in arena; rowcode[i]: row i of the row group's string (rows with one) */
	bool append;
	gwb_arena *arena;
	uint32_t *rowcode;
} strtab;

static void strtab_free(strtab *t)
{
	int i;

	if (t->arena)
		gwb_arena_free(t->arena);
	else
		for (i = 0; i < t->n; i++)
			free(t->s[i]);
	free(t->s);
	free(t->slot);
	free(t->rowcode);
	memset(t, 0, sizeof(*t));
}

/* the code of p[0..n) (added when new): >= 0, -1 out of memory, -2 too many levels, -3 a NUL
 * byte inside */
static int32_t strtab_code(strtab *t, const uint8_t *p, size_t n)
{
	uint64_t h;
	size_t i;

	if (t->append) {
		if (memchr(p, 0, n))
			return -3;
		if (t->n >= INT32_MAX - 1)
			return -2;
		if (t->n == t->cap) {
			int nc = t->cap ? (t->cap > (1 << 29) ? INT32_MAX - 1 : t->cap * 2) : 1024;
			char **ns = realloc(t->s, (size_t)nc * sizeof(*ns));
			if (!ns)
				return -1;
			t->s = ns;
			t->cap = nc;
		}
		if ((!t->arena && !(t->arena = gwb_arena_new())) ||
		    !(t->s[t->n] = gwb_arena_strndup(t->arena, (const char *)p, n)))
			return -1;
		return t->n++;
	}
	if ((size_t)t->n * 2 >= t->nslot) {
		size_t ns = t->nslot ? t->nslot * 2 : 64, k;
		int32_t *sl = calloc(ns, sizeof(*sl));
		if (!sl)
			return -1;
		for (k = 0; k < (size_t)t->n; k++) {
			size_t j = gwb_xxh64(t->s[k], strlen(t->s[k]), 0) & (ns - 1);
			while (sl[j])
				j = (j + 1) & (ns - 1);
			sl[j] = (int32_t)k + 1;
		}
		free(t->slot);
		t->slot = sl;
		t->nslot = ns;
	}
	if (memchr(p, 0, n))
		return -3;
	h = gwb_xxh64(p, n, 0);
	for (i = h & (t->nslot - 1); t->slot[i]; i = (i + 1) & (t->nslot - 1)) {
		const char *s = t->s[t->slot[i] - 1];
		if (!strncmp(s, (const char *)p, n) && s[n] == 0)
			return t->slot[i] - 1;
	}
	if (t->n >= MAX_LEVELS)
		return -2;
	if (t->n == t->cap) {
		int nc = t->cap ? t->cap * 2 : 16;
		char **ns = realloc(t->s, (size_t)nc * sizeof(*ns));
		if (!ns)
			return -1;
		t->s = ns;
		t->cap = nc;
	}
	if (!(t->s[t->n] = strndup((const char *)p, n)))
		return -1;
	t->slot[i] = t->n + 1;
	return t->n++;
}

/* --- the columns asked for ------------------------------------------------------------------ */

typedef struct pcol {
	int field;                /* top-level field index */
	int leaf;                 /* its column chunk index */
	const pq_schema_el *el;
	int max_def;
	bool text;
	bool free_text;           /* text kept as strings (gwb_text), decided from a sample */
	double div;               /* decimal: 10^scale; else 1 */
	float *out;               /* its column: rows floats (X, or yr for the target) */
	uint64_t *wout;           /* a 64-bit feature's exact values (dataset.h's wide), or NULL */
	bool wint;                /* ...int64 (INT32, INT64 but decimals), else float64 */
} pcol;

typedef struct scratch scratch;

typedef struct reader {
	const char *path;
	const uint8_t *map;
	size_t size, footer_at;
	pq_meta m;
	int nsel;
	pcol *sel;
	size_t *first;            /* first row of each row group */
	strtab *tabs;             /* [g * nsel + k]: a text column's levels in row group g */
	gwb_status *st;           /* per column chunk [g * nsel + k] */
	scratch *work;            /* per worker, reused from chunk to chunk */
	int nwork;
	size_t *order;            /* the items, largest decoded size first (read_item) */
	char **msg;
} reader;

struct scratch {
	uint8_t *raw;  size_t nraw;
	uint32_t *lev; size_t nlev;
	uint32_t *idx; size_t nidx;
	float *val;    size_t nval;
	uint64_t *w64; size_t nw64;   /* the 64-bit values beside val (pcol.wout) */
	int64_t *i64;  size_t ni64;
	uint8_t *str;  size_t nstr;
};

static bool grow(void **p, size_t *have, size_t n, size_t elem)
{
	size_t bytes;
	void *q;

	if (n <= *have)
		return true;
	if (gwb_mul_size(n, elem, &bytes) || !(q = realloc(*p, bytes ? bytes : 1)))
		return false;
	*p = q;
	*have = n;
	return true;
}

static void scratch_free(scratch *s)
{
	free(s->raw);
	free(s->lev);
	free(s->idx);
	free(s->val);
	free(s->w64);
	free(s->i64);
	free(s->str);
}

/* one column chunk's decoding state */
typedef struct chunk {
	reader *r;
	int g;
	const pcol *c;
	strtab *tab;
	size_t page_at;           /* the page being read (for messages) */
	float *dnum;              /* dictionary: numbers... */
	uint64_t *dw64;           /* (and their 64-bit values, for a pcol.wout column) */
	int32_t *dcode;           /* ...or codes into tab */
	size_t ndict;
	bool have_dict;
	scratch *s;
} chunk;

static gwb_status corrupt(const chunk *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static gwb_status corrupt(const chunk *k, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return gwb_error(GWB_EPARSE, "%s: column \"%s\", row group %d, page at byte offset %zu: "
			 "%s; the file is damaged (write it again, or leave this column out with "
			 "columns = {...})", k->r->path, k->c->el->name, k->g + 1, k->page_at, what);
}

static gwb_status unsupported(const chunk *k, const char *what)
{
	return gwb_error(GWB_EINVAL, "%s: column \"%s\" (row group %d, page at byte offset %zu) "
			 "uses %s, which gwb does not read; load the other columns with columns = "
			 "{...}, or write the file again with another codec or encoding", k->r->path,
			 k->c->el->name, k->g + 1, k->page_at, what);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float num_i64(const pcol *c, int64_t v)
{
	return c->div != 1 ? (float)((double)v / c->div) : (float)v;
}

/* A 64-bit value of column c (pcol.wout) from an integer: itself (int64), or a decimal's
 * value as a double. */
static uint64_t wide_i64(const pcol *c, int64_t v)
{
	double d;

	if (c->wint)
		return (uint64_t)v;
	d = c->div != 1 ? (double)v / c->div : (double)v;
	memcpy(&v, &d, 8);
	return (uint64_t)v;
}

/* PLAIN numbers: n values of c's type from p[0..end) into out (and, for a 64-bit column, w64
 * when not NULL); *used = bytes */
static bool plain_nums(const pcol *c, const uint8_t *p, const uint8_t *end, float *out, size_t n,
		       size_t *used, uint64_t *w64)
{
	size_t i, w = c->el->type == PQ_INT64 || c->el->type == PQ_DOUBLE ? 8 : 4, need;

	if (c->el->type == PQ_BOOLEAN) {
		need = (n + 7) / 8;
		if ((size_t)(end - p) < need)
			return false;
		for (i = 0; i < n; i++)
			out[i] = (float)((p[i >> 3] >> (i & 7)) & 1);
		*used = need;
		return true;
	}
	if (gwb_mul_size(n, w, &need) || (size_t)(end - p) < need)
		return false;
	*used = need;
	if (c->el->type == PQ_FLOAT) {
		memcpy(out, p, need);
		return true;
	}
	for (i = 0; i < n; i++, p += w) {
		switch (c->el->type) {
		case PQ_INT32:
			out[i] = num_i64(c, (int32_t)le32(p));
			if (w64)
				w64[i] = wide_i64(c, (int32_t)le32(p));
			break;
		case PQ_INT64: {
			int64_t v;
			memcpy(&v, p, 8);
			out[i] = num_i64(c, v);
			if (w64)
				w64[i] = wide_i64(c, v);
			break;
		}
		case PQ_FLOAT: memcpy(&out[i], p, 4); break;
		default: {
			double v;
			memcpy(&v, p, 8);
			out[i] = (float)v;
			if (w64)
				memcpy(&w64[i], &v, 8);
		}
		}
	}
	*used = need;
	return true;
}

/* PLAIN INT64 / DOUBLE values of a page of n rows, those present (lev[i] != 0; lev NULL: all)
 * one after another at p (the caller checked their bytes): each row's exact value into wo (NA / NaN where absent) and its
 * float into fo (NaN where absent), in one pass */
static void plain_wide(const pcol *c, const uint8_t *p, size_t n, const uint32_t *lev,
		       uint64_t *wo, float *fo)
{
	size_t i, j = 0;
	uint64_t na = (uint64_t)GWB_I64_NA;
	bool dbl = c->el->type == PQ_DOUBLE, plain_int = c->wint && c->div == 1;

	if (!c->wint) {
		double nan = NAN;
		memcpy(&na, &nan, 8);
	}
	for (i = 0; i < n; i++) {
		uint64_t v;
		if (lev && !lev[i]) {
			wo[i] = na;
			fo[i] = NAN;
			continue;
		}
		memcpy(&v, p + 8 * j++, 8);
		if (dbl) {
			double d;
			memcpy(&d, &v, 8);
			wo[i] = v;
			fo[i] = (float)d;
		} else if (plain_int) {
			wo[i] = v;
			fo[i] = (float)(int64_t)v;
		} else {
			wo[i] = wide_i64(c, (int64_t)v);
			fo[i] = num_i64(c, (int64_t)v);
		}
	}
}

/* PLAIN strings: n values into codes (into tab) */
static gwb_status plain_strs(chunk *k, const uint8_t *p, const uint8_t *end, uint32_t *out,
			     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t len;
		int32_t code;
		if (end - p < 4 || (len = le32(p)) > (size_t)(end - p) - 4)
			return corrupt(k, "string %zu of %zu runs past the page", i + 1, n);
		code = strtab_code(k->tab, p + 4, len);
		if (code < 0)
			goto bad;
		out[i] = (uint32_t)code;
		p += 4 + (size_t)len;
		continue;
bad:
		if (code == -3)
			return gwb_error(GWB_EINVAL, "%s: column \"%s\" holds binary data (a NUL byte "
					 "in a value, row group %d); gwb reads text columns only: leave "
					 "it out with columns = {...}", k->r->path, k->c->el->name,
					 k->g + 1);
		if (code == -2)
			return gwb_error(GWB_EINVAL, "%s: column \"%s\" has more than %d distinct "
					 "values; leave it out with columns = {...}", k->r->path,
					 k->c->el->name, MAX_LEVELS);
		return gwb_error(GWB_ENOMEM, "%s: out of memory for column \"%s\"'s levels",
				 k->r->path, k->c->el->name);
	}
	return GWB_OK;
}

/* DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY strings */
static gwb_status delta_strs(chunk *k, int enc, const uint8_t *p, const uint8_t *end,
			     uint32_t *out, size_t n)
{
	scratch *s = k->s;
	int64_t *pre = NULL, *len;
	size_t used, i, plen = 0, cap = 0, n2;
	const uint8_t *q;
	gwb_status st = GWB_OK;

	if (gwb_mul_size(n, 2, &n2) || !grow((void **)&s->i64, &s->ni64, n2 + 1, sizeof(int64_t)))
		return gwb_error(GWB_ENOMEM, "%s: out of memory decoding column \"%s\"",
				 k->r->path, k->c->el->name);
	len = s->i64;
	if (enc == PQ_ENC_DELTA_BYTE_ARRAY) {
		pre = s->i64 + n;
		if (!pq_delta_get(p, end, pre, n, &used))
			return corrupt(k, "bad prefix lengths (DELTA_BYTE_ARRAY)");
		p += used;
	}
	if (!pq_delta_get(p, end, len, n, &used))
		return corrupt(k, "bad lengths (%s)", pq_encoding_name(enc));
	q = p + used;
	for (i = 0; i < n; i++) {
		int64_t pl = pre ? pre[i] : 0;
		int32_t code;
		size_t need;
		if (len[i] < 0 || pl < 0 || (uint64_t)len[i] > (uint64_t)(end - q) ||
		    (size_t)pl > plen)
			return corrupt(k, "value %zu of %zu has a length past the page", i + 1, n);
		if (gwb_add_size((size_t)pl, (size_t)len[i], &need) ||
		    !grow((void **)&s->str, &cap, need + 1, 1)) {
			return gwb_error(GWB_ENOMEM, "%s: out of memory decoding column \"%s\"",
					 k->r->path, k->c->el->name);
		}
		s->nstr = cap;
		if (len[i])
			memcpy(s->str + pl, q, (size_t)len[i]);
		q += len[i];
		plen = need;
		code = strtab_code(k->tab, s->str, need);
		if (code < 0) {
			st = code == -1 ? gwb_error(GWB_ENOMEM, "%s: out of memory", k->r->path)
				: gwb_error(GWB_EINVAL, "%s: column \"%s\" holds %s; leave it out with "
					    "columns = {...}", k->r->path, k->c->el->name,
					    code == -3 ? "binary data (a NUL byte in a value)"
						       : "too many distinct values");
			return st;
		}
		out[i] = (uint32_t)code;
	}
	return GWB_OK;
}

/* the non-null values of a data page: p[0..end) in enc, nn of them, into vals (numbers) or
 * idx (codes) */
static gwb_status page_values(chunk *k, int enc, const uint8_t *p, const uint8_t *end,
			      size_t nn, float *vals, uint32_t *idx)
{
	const pcol *c = k->c;
	uint64_t *w64 = c->wout ? k->s->w64 : NULL;
	size_t used, i;
	int type = c->el->type;

	switch (enc) {
	case PQ_ENC_PLAIN:
		if (c->text)
			return plain_strs(k, p, end, idx, nn);
		if (!plain_nums(c, p, end, vals, nn, &used, w64))
			return corrupt(k, "%zu PLAIN values need more bytes than the page's %zu", nn,
				       (size_t)(end - p));
		return GWB_OK;
	case PQ_ENC_PLAIN_DICT:
	case PQ_ENC_RLE_DICT: {
		pq_rle rl;
		if (!k->have_dict)
			return corrupt(k, "dictionary indices without a dictionary page");
		if (p >= end) {
			if (nn)
				return corrupt(k, "an empty dictionary-encoded page");
			return GWB_OK;
		}
		if (*p > 32)
			return corrupt(k, "dictionary indices of %d bits", *p);
		pq_rle_init(&rl, p + 1, end, *p);
		if (!pq_rle_get(&rl, idx, nn))
			return corrupt(k, "dictionary indices end before the page's %zu values", nn);
		for (i = 0; i < nn; i++) {
			if (idx[i] >= k->ndict)
				return corrupt(k, "dictionary index %u of a dictionary of %zu", idx[i],
					       k->ndict);
			if (c->text)
				idx[i] = (uint32_t)k->dcode[idx[i]];
			else
				vals[i] = k->dnum[idx[i]];
			if (w64)
				w64[i] = k->dw64[idx[i]];
		}
		return GWB_OK;
	}
	case PQ_ENC_RLE:
		if (type == PQ_BOOLEAN) {
			pq_rle rl;
			uint32_t n4;
			if (end - p < 4 || (n4 = le32(p)) > (size_t)(end - p) - 4)
				return corrupt(k, "an RLE boolean run length past the page");
			pq_rle_init(&rl, p + 4, p + 4 + n4, 1);
			if (!pq_rle_get(&rl, idx, nn))
				return corrupt(k, "RLE booleans end before the page's %zu values", nn);
			for (i = 0; i < nn; i++)
				vals[i] = (float)idx[i];
			return GWB_OK;
		}
		break;
	case PQ_ENC_DELTA_BINARY:
		if (type == PQ_INT32 || type == PQ_INT64) {
			if (!grow((void **)&k->s->i64, &k->s->ni64, nn + 1, sizeof(int64_t)))
				return gwb_error(GWB_ENOMEM, "%s: out of memory", k->r->path);
			if (!pq_delta_get(p, end, k->s->i64, nn, &used))
				return corrupt(k, "bad DELTA_BINARY_PACKED data for %zu values", nn);
			for (i = 0; i < nn; i++) {
				int64_t v = type == PQ_INT32 ? (int32_t)k->s->i64[i] : k->s->i64[i];
				vals[i] = num_i64(c, v);
				if (w64)
					w64[i] = wide_i64(c, v);
			}
			return GWB_OK;
		}
		break;
	case PQ_ENC_DELTA_LENGTH:
	case PQ_ENC_DELTA_BYTE_ARRAY:
		if (c->text)
			return delta_strs(k, enc, p, end, idx, nn);
		break;
	case PQ_ENC_BYTE_STREAM_SPLIT:
		if (type != PQ_BOOLEAN && !c->text) {
			size_t w = type == PQ_INT64 || type == PQ_DOUBLE ? 8 : 4, need, b;
			uint8_t v[8];
			if (gwb_mul_size(nn, w, &need) || (size_t)(end - p) != need)
				return corrupt(k, "BYTE_STREAM_SPLIT data of %zu bytes for %zu values",
					       (size_t)(end - p), nn);
			for (i = 0; i < nn; i++) {
				for (b = 0; b < w; b++)
					v[b] = p[b * nn + i];
				if (!plain_nums(c, v, v + w, vals + i, 1, &used, w64 ? w64 + i : NULL))
					return corrupt(k, "BYTE_STREAM_SPLIT data");
			}
			return GWB_OK;
		}
		break;
	default:
		break;
	}
	{
		char what[96];
		snprintf(what, sizeof(what), "the %s encoding (%d)", pq_encoding_name(enc), enc);
		return unsupported(k, what);
	}
}

static gwb_status dict_page(chunk *k, const uint8_t *p, const uint8_t *end, int32_t num,
			    int enc)
{
	size_t n;

	if (k->have_dict)
		return corrupt(k, "a second dictionary page");
	if (enc != PQ_ENC_PLAIN && enc != PQ_ENC_PLAIN_DICT)
		return corrupt(k, "a dictionary page in %s", pq_encoding_name(enc));
	if (num < 0)
		return corrupt(k, "a dictionary of %d values", num);
	n = (size_t)num;
	if (n > (size_t)(end - p) * 8 + 8)   /* each value takes a bit at least */
		return corrupt(k, "a dictionary of %zu values in %zu bytes", n, (size_t)(end - p));
	if (k->c->text) {
		uint32_t *codes;
		gwb_status st;
		if (!(codes = malloc((n + 1) * sizeof(*codes))))
			return gwb_error(GWB_ENOMEM, "%s: out of memory", k->r->path);
		if ((st = plain_strs(k, p, end, codes, n))) {
			free(codes);
			return st;
		}
		k->dcode = (int32_t *)codes;
	} else {
		size_t used;
		if (!(k->dnum = malloc((n + 1) * sizeof(float))) ||
		    (k->c->wout && !(k->dw64 = malloc((n + 1) * sizeof(uint64_t)))))
			return gwb_error(GWB_ENOMEM, "%s: out of memory", k->r->path);
		if (!plain_nums(k->c, p, end, k->dnum, n, &used, k->dw64))
			return corrupt(k, "a dictionary of %zu values cut short", n);
	}
	k->ndict = n;
	k->have_dict = true;
	return GWB_OK;
}

/* Decode row group g's chunk of column c into c->out (its rows); limit > 0: stop after the
 * page that reaches limit rows (the sample that decides free text). */
static gwb_status read_chunk(reader *r, int g, const pcol *c, strtab *tab, scratch *s,
			     size_t limit)
{
	const pq_colmeta *cm = &r->m.rg[g].cols[c->leaf];
	chunk k = {r, g, c, tab, 0, NULL, NULL, NULL, 0, false, s};
	size_t rows = r->first[g + 1] - r->first[g], done = 0, start, end, pos;
	float *out = c->out + r->first[g];
	gwb_status st = GWB_OK;

	k.page_at = cm->data_page_offset > 0 ? (size_t)cm->data_page_offset : 0;
	if (!cm->has_meta)
		return corrupt(&k, "the column chunk has no metadata");
	if (cm->external)
		return unsupported(&k, "a column chunk stored in another file");
	if (cm->type != c->el->type)
		return corrupt(&k, "the chunk's type %d differs from the schema's %d", cm->type,
			       c->el->type);
	if (!pq_codec_supported(cm->codec)) {
		char what[96];
		snprintf(what, sizeof(what), "the %s codec (gwb reads uncompressed, snappy, gzip "
			 "and zstd)", pq_codec_name(cm->codec));
		return unsupported(&k, what);
	}
	if (cm->data_page_offset < 4 || cm->total_compressed < 0)
		return corrupt(&k, "a chunk at offset %lld of %lld bytes",
			       (long long)cm->data_page_offset, (long long)cm->total_compressed);
	start = (size_t)cm->data_page_offset;
	if (cm->dict_page_offset >= 4 && (size_t)cm->dict_page_offset < start)
		start = (size_t)cm->dict_page_offset;
	if ((uint64_t)cm->total_compressed > r->footer_at ||
	    start > r->footer_at - (size_t)cm->total_compressed)
		return corrupt(&k, "a chunk of %lld bytes at offset %zu runs past the data (%zu "
			       "bytes before the footer)", (long long)cm->total_compressed, start,
			       r->footer_at);
	end = start + (size_t)cm->total_compressed;
	pos = start;
	if (tab->append && !(tab->rowcode = malloc((rows + 1) * sizeof(*tab->rowcode))))
		goto oom;
	while (done < rows && (!limit || done < limit)) {
		pq_page h;
		size_t used, body, n, nn, i, clen, ulen;
		uint32_t one;
		bool wide_plain, dense;
		const uint8_t *data, *dend;
		char why[200];
		int type;

		k.page_at = pos;
		if (gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "%s: interrupted", r->path);
			goto out;
		}
		if (pos >= end) {
			st = corrupt(&k, "the chunk ends after %zu of its %zu rows", done, rows);
			goto out;
		}
		if ((st = pq_page_parse(r->map + pos, end - pos, &h, &used, why, sizeof(why)))) {
			st = corrupt(&k, "a bad page header (%s)", why);
			goto out;
		}
		body = pos + used;
		if (h.compressed < 0 || h.uncompressed < 0 || (size_t)h.compressed > end - body) {
			st = corrupt(&k, "a page of %d bytes where the chunk has %zu left",
				     h.compressed, end - body);
			goto out;
		}
		clen = (size_t)h.compressed;
		ulen = (size_t)h.uncompressed;
		type = h.type;
		pos = body + clen;
		if (type == PQ_PAGE_INDEX || (type != PQ_PAGE_DICT && type != PQ_PAGE_DATA &&
					      type != PQ_PAGE_DATA_V2))
			continue;   /* index pages and page types from the future: skipped */
		if ((type == PQ_PAGE_DICT && !h.has_dict) || (type == PQ_PAGE_DATA && !h.has_v1) ||
		    (type == PQ_PAGE_DATA_V2 && !h.has_v2)) {
			st = corrupt(&k, "a page of type %d without its header", type);
			goto out;
		}
		if (h.num_values < 0) {
			st = corrupt(&k, "a page of %d values", h.num_values);
			goto out;
		}
		n = (size_t)h.num_values;
		if (type != PQ_PAGE_DICT && n > rows - done) {
			st = corrupt(&k, "a page of %zu values where the row group has %zu rows left",
				     n, rows - done);
			goto out;
		}
		/* a page decompresses to at most ~1 GB for every byte of it the codec can expand;
		 * a size past what the page could hold is refused before it is allocated */
		if (ulen > (size_t)1 << 31 || (cm->codec == PQ_CODEC_NONE && ulen != clen)) {
			st = corrupt(&k, "a page that says it holds %zu bytes in %zu", ulen, clen);
			goto out;
		}
		if (type != PQ_PAGE_DICT && !c->max_def && c->el->type == PQ_FLOAT &&
		    h.encoding == PQ_ENC_PLAIN && ulen == n * 4 &&
		    (type == PQ_PAGE_DATA || (!h.def_len && !h.rep_len && h.is_compressed))) {
			/* a required FLOAT column in PLAIN: the page is the column's values, so
			 * it is decompressed straight into place */
			if ((st = pq_decompress(cm->codec, r->map + body, clen, (uint8_t *)(out + done),
						ulen, why, sizeof(why)))) {
				st = corrupt(&k, "%s", why);
				goto out;
			}
			done += n;
			continue;
		}
		if (type == PQ_PAGE_DATA_V2) {
			size_t lev;
			if (h.def_len < 0 || h.rep_len < 0 ||
			    (lev = (size_t)h.def_len + (size_t)h.rep_len) > clen || lev > ulen) {
				st = corrupt(&k, "level bytes (%d + %d) past the page", h.def_len,
					     h.rep_len);
				goto out;
			}
			if (h.rep_len) {
				st = corrupt(&k, "repetition levels in a flat column");
				goto out;
			}
			if (!grow((void **)&s->raw, &s->nraw, ulen + 1, 1))
				goto oom;
			memcpy(s->raw, r->map + body, lev);
			if (h.is_compressed && cm->codec != PQ_CODEC_NONE) {
				if ((st = pq_decompress(cm->codec, r->map + body + lev, clen - lev,
							s->raw + lev, ulen - lev, why, sizeof(why)))) {
					st = corrupt(&k, "%s", why);
					goto out;
				}
			} else if (clen != ulen) {
				st = corrupt(&k, "an uncompressed page of %zu bytes that says %zu",
					     clen, ulen);
				goto out;
			} else {
				memcpy(s->raw + lev, r->map + body + lev, clen - lev);
			}
		} else {
			if (!grow((void **)&s->raw, &s->nraw, ulen + 1, 1))
				goto oom;
			if ((st = pq_decompress(cm->codec, r->map + body, clen, s->raw, ulen, why,
						sizeof(why)))) {
				st = corrupt(&k, "%s", why);
				goto out;
			}
		}
		data = s->raw;
		dend = s->raw + ulen;
		if (type == PQ_PAGE_DICT) {
			if ((st = dict_page(&k, data, dend, h.num_values, h.encoding)))
				goto out;
			continue;
		}
		if (!grow((void **)&s->lev, &s->nlev, n + 1, sizeof(uint32_t)) ||
		    !grow((void **)&s->idx, &s->nidx, n + 1, sizeof(uint32_t)) ||
		    !grow((void **)&s->val, &s->nval, n + 1, sizeof(float)) ||
		    (c->wout && !grow((void **)&s->w64, &s->nw64, n + 1, sizeof(uint64_t))))
			goto oom;
		/* PLAIN INT64 / DOUBLE values of a 64-bit column: decoded by plain_wide */
		wide_plain = c->wout && !c->text && !tab->append && h.encoding == PQ_ENC_PLAIN &&
			     (c->el->type == PQ_INT64 || c->el->type == PQ_DOUBLE);
		dense = false;   /* s->lev left unwritten: every row has a value */
		/* definition levels (flat: 0 = null, 1 = a value) */
		nn = n;
		if (c->max_def) {
			pq_rle rl;
			if (type == PQ_PAGE_DATA) {
				uint32_t l4;
				if (h.def_enc != PQ_ENC_RLE) {
					char what[80];
					snprintf(what, sizeof(what), "definition levels in %s",
						 pq_encoding_name(h.def_enc));
					st = unsupported(&k, what);
					goto out;
				}
				if (dend - data < 4 || (l4 = le32(data)) > (size_t)(dend - data) - 4) {
					st = corrupt(&k, "definition levels past the page");
					goto out;
				}
				pq_rle_init(&rl, data + 4, data + 4 + l4, 1);
				data += 4 + (size_t)l4;
			} else {
				pq_rle_init(&rl, data, data + h.def_len, 1);
				data += h.def_len;
			}
			if (pq_rle_const(&rl, n, &one)) {   /* no nulls (or all): one run */
				nn = one ? n : 0;
				dense = one && wide_plain;
				if (!dense)
					for (i = 0; i < n; i++)
						s->lev[i] = one;
			} else {
				if (!pq_rle_get(&rl, s->lev, n)) {
					st = corrupt(&k, "definition levels end before the page's "
						     "%zu values", n);
					goto out;
				}
				for (i = 0, nn = 0; i < n; i++)
					nn += s->lev[i] != 0;
			}
		} else if (type == PQ_PAGE_DATA_V2) {
			data += h.def_len;
		}
		if (wide_plain) {
			/* PLAIN 64-bit values: read once, into the exact column and the float one */
			if ((size_t)(dend - data) / 8 < nn) {
				st = corrupt(&k, "%zu PLAIN values need more bytes than the page's %zu",
					     nn, (size_t)(dend - data));
				goto out;
			}
			plain_wide(c, data, n, c->max_def && !dense ? s->lev : NULL, c->wout + r->first[g] + done, out + done);
			done += n;
			continue;
		}
		if ((st = page_values(&k, h.encoding, data, dend, nn, s->val, s->idx)))
			goto out;
		if (tab->append) {   /* free text: the strings' codes aside, 0 or NaN in out */
			size_t j = 0;
			for (i = 0; i < n; i++) {
				bool has = !c->max_def || s->lev[i];
				tab->rowcode[done + i] = has ? s->idx[j++] : 0;
				out[done + i] = has ? 0.0f : NAN;
			}
		} else if (c->max_def) {
			size_t j = 0;
			if (c->wout) {   /* nulls: int64's NA or NaN */
				uint64_t *wo = c->wout + r->first[g] + done, na = (uint64_t)GWB_I64_NA;
				double nan = NAN;
				if (!c->wint)
					memcpy(&na, &nan, 8);
				for (i = 0; i < n; i++)
					wo[i] = s->lev[i] ? s->w64[j++] : na;
				j = 0;
			}
			for (i = 0; i < n; i++)
				out[done + i] = s->lev[i] ? (c->text ? (float)s->idx[j++] : s->val[j++])
							  : NAN;
		} else {
			if (c->wout)
				memcpy(c->wout + r->first[g] + done, s->w64, n * sizeof(uint64_t));
			for (i = 0; i < n; i++)
				out[done + i] = c->text ? (float)s->idx[i] : s->val[i];
		}
		done += n;
	}
out:
	free(k.dnum);
	free(k.dw64);
	free(k.dcode);
	return st;
oom:
	st = gwb_error(GWB_ENOMEM, "%s: out of memory decoding column \"%s\" (row group %d)",
		       r->path, c->el->name, g + 1);
	goto out;
}

/* Whether text column k is free text: the rule of the CSV reader (gwb_text_looks_free) over
 * the first FREE_SAMPLE rows of the first row group, decoded ahead on this thread. */
#define FREE_SAMPLE 2000
static gwb_status sample_free_text(reader *r, int k)
{
	pcol *c = &r->sel[k];
	strtab t = {0};
	scratch sc;
	size_t rows0 = r->first[1] - r->first[0], m = rows0 < FREE_SAMPLE ? rows0 : FREE_SAMPLE;
	size_t i, nn = 0, distinct = 0;
	uint8_t *seen = NULL;
	gwb_status st;

	memset(&sc, 0, sizeof(sc));
	if (!m)
		return GWB_OK;
	if ((st = read_chunk(r, 0, c, &t, &sc, FREE_SAMPLE)))
		goto out;
	if (!(seen = calloc((size_t)t.n + 1, 1))) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	for (i = 0; i < m; i++) {
		float x = c->out[i];
		if (isnan(x) || x < 0 || x >= (float)t.n)
			continue;
		nn++;
		if (!seen[(size_t)x]++)
			distinct++;
	}
	c->free_text = gwb_text_looks_free(nn, distinct);
out:
	free(seen);
	strtab_free(&t);
	scratch_free(&sc);
	return st;
}

/* Free-text column k's strings, row group by row group, into a gwb_text (the tables' arenas
 * move to it). */
static gwb_status build_free_text(reader *r, int k, gwb_text **out)
{
	gwb_text *t = gwb_text_new(r->first[r->m.nrg]);
	const float *x = r->sel[k].out;
	int g;

	*out = NULL;
	if (!t)
		return gwb_error(GWB_ENOMEM, "%s: out of memory for text column \"%s\"", r->path,
				 r->sel[k].el->name);
	for (g = 0; g < r->m.nrg; g++) {
		strtab *tab = &r->tabs[(size_t)g * (size_t)r->nsel + (size_t)k];
		size_t j, f = r->first[g];
		for (j = f; j < r->first[g + 1]; j++)
			if (!isnan(x[j]) && tab->rowcode && tab->rowcode[j - f] < (uint32_t)tab->n)
				t->v[j] = tab->s[tab->rowcode[j - f]];
		if (tab->arena) {
			gwb_arena_adopt(t->arena, tab->arena);
			tab->arena = NULL;
		}
		free(tab->s);
		tab->s = NULL;
		tab->n = tab->cap = 0;
	}
	*out = t;
	return GWB_OK;
}

typedef struct item_weight {
	int64_t bytes;
	size_t i;
} item_weight;

static int cmp_weight(const void *a, const void *b)
{
	const item_weight *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The order items are handed out in: the largest chunks (decompressed bytes, the work of
 * decoding them) first, so that a large chunk (a long text column) does not start last and
 * keep one worker busy after the others finish. */
static size_t *item_order(const reader *r, size_t nitems)
{
	item_weight *w = malloc((nitems + 1) * sizeof(*w));
	size_t *order = malloc((nitems + 1) * sizeof(*order)), i;

	if (!w || !order) {
		free(w);
		free(order);
		return NULL;
	}
	for (i = 0; i < nitems; i++) {
		const pq_colmeta *cm = &r->m.rg[i / (size_t)r->nsel].cols[r->sel[i % (size_t)r->nsel].leaf];
		w[i].bytes = cm->total_uncompressed > 0 ? cm->total_uncompressed
							 : cm->total_compressed;
		w[i].i = i;
	}
	qsort(w, nitems, sizeof(*w), cmp_weight);
	for (i = 0; i < nitems; i++)
		order[i] = w[i].i;
	free(w);
	return order;
}

/* the i-th item handed out: r->order[i], row group order[i] / nsel, column order[i] % nsel
 * (one column chunk) */
static void read_item(void *ctx, size_t j, int worker)
{
	reader *r = ctx;
	size_t i = r->order[j];
	int g = (int)(i / (size_t)r->nsel), k = (int)(i % (size_t)r->nsel);
	gwb_status st;

	r->tabs[i].append = r->sel[k].free_text;
	st = read_chunk(r, g, &r->sel[k], &r->tabs[i], &r->work[worker], 0);
	r->st[i] = st;
	if (st)
		r->msg[i] = strdup(gwb_errmsg());
}

/* --- levels in the CSV reader's order ------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_numstr(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	float u = 0, v = 0;
	bool o;

	gwb_csv_parse_float(x, strlen(x), &u, &o);
	gwb_csv_parse_float(y, strlen(y), &v, &o);
	if (u != v)
		return u < v ? -1 : 1;
	return strcmp(x, y);
}

/* Merge text column k's per-row-group tables into sorted levels and recode its rows. */
static gwb_status merge_levels(reader *r, int k, char ***levels, int *count)
{
	strtab all = {0};
	int32_t **maps = NULL, *rank = NULL;
	char **sorted = NULL;
	bool numeric;
	gwb_status st = GWB_OK;
	int g, i;

	if (!(maps = calloc((size_t)r->m.nrg + 1, sizeof(*maps))))
		goto oom;
	for (g = 0; g < r->m.nrg; g++) {
		strtab *t = &r->tabs[(size_t)g * (size_t)r->nsel + (size_t)k];
		if (!(maps[g] = malloc(((size_t)t->n + 1) * sizeof(int32_t))))
			goto oom;
		for (i = 0; i < t->n; i++) {
			int32_t c = strtab_code(&all, (const uint8_t *)t->s[i], strlen(t->s[i]));
			if (c == -2) {
				st = gwb_error(GWB_EINVAL, "%s: column \"%s\" has more than %d distinct "
					       "values; leave it out with columns = {...}", r->path,
					       r->sel[k].el->name, MAX_LEVELS);
				goto out;
			}
			if (c < 0)
				goto oom;
			maps[g][i] = c;
		}
	}
	if (!(sorted = malloc(((size_t)all.n + 1) * sizeof(*sorted))) ||
	    !(rank = malloc(((size_t)all.n + 1) * sizeof(*rank))))
		goto oom;
	numeric = all.n > 0;
	for (i = 0; i < all.n; i++) {
		float v;
		bool ovf;
		sorted[i] = all.s[i];
		if (numeric)
			numeric = gwb_csv_parse_float(all.s[i], strlen(all.s[i]), &v, &ovf) &&
				  !isnan(v);
	}
	qsort(sorted, (size_t)all.n, sizeof(*sorted), numeric ? cmp_numstr : cmp_str);
	for (i = 0; i < all.n; i++) {
		int32_t c = strtab_code(&all, (const uint8_t *)sorted[i], strlen(sorted[i]));
		if (c < 0)   /* (found, never added: only a table's growth can fail here) */
			goto oom;
		rank[c] = i;
	}
	for (g = 0; g < r->m.nrg; g++) {
		size_t j;
		float *x = r->sel[k].out;
		for (j = r->first[g]; j < r->first[g + 1]; j++)
			if (!isnan(x[j]))
				x[j] = (float)rank[maps[g][(int32_t)x[j]]];
	}
	/* the strings move from the table to the levels */
	*levels = sorted;
	*count = all.n;
	sorted = NULL;
	free(all.s);
	all.s = NULL;
	all.n = 0;
	goto out;
oom:
	st = gwb_error(GWB_ENOMEM, "%s: out of memory merging column \"%s\"'s levels", r->path,
		       r->sel[k].el->name);
out:
	if (maps)
		for (g = 0; g < r->m.nrg; g++)
			free(maps[g]);
	free(maps);
	free(rank);
	free(sorted);
	strtab_free(&all);
	return st;
}

/* --- the schema ------------------------------------------------------------------------------ */

/* Top-level fields: their schema element, first leaf and leaf count. */
typedef struct field {
	int el, leaf, leaves;
} field;

static gwb_status walk_schema(reader *r, field **out, int *nf)
{
	const pq_meta *m = &r->m;
	int top = m->schema[0].num_children, i, j, leaf = 0, f;
	field *fs;

	if (top < 0 || top > m->nschema - 1)
		return gwb_error(GWB_EPARSE, "%s: the schema's root says %d columns in %d elements; "
				 "the footer is damaged", r->path, top, m->nschema);
	if (!(fs = calloc((size_t)top + 1, sizeof(*fs))))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
	for (f = 0, i = 1; f < top; f++) {
		long pending;
		if (i >= m->nschema)
			goto bad;
		fs[f].el = i;
		fs[f].leaf = leaf;
		pending = m->schema[i].num_children;
		if (pending < 0)
			goto bad;
		if (!pending)
			fs[f].leaves = 1;
		j = i + 1;
		while (pending > 0) {
			if (j >= m->nschema || m->schema[j].num_children < 0)
				goto bad;
			pending += m->schema[j].num_children - 1;
			if (!m->schema[j].num_children)
				fs[f].leaves++;
			j++;
		}
		leaf += fs[f].leaves;
		i = j;
	}
	if (i != m->nschema)
		goto bad;
	for (i = 0; i < m->nrg; i++)
		if (m->rg[i].ncols != leaf) {
			free(fs);
			return gwb_error(GWB_EPARSE, "%s: row group %d has %d column chunks where the "
					 "schema has %d columns; the footer is damaged", r->path, i + 1,
					 m->rg[i].ncols, leaf);
		}
	*out = fs;
	*nf = top;
	return GWB_OK;
bad:
	free(fs);
	return gwb_error(GWB_EPARSE, "%s: the schema's element tree does not add up (%d elements); "
			 "the footer is damaged", r->path, m->nschema);
}

/* Why field f cannot be read, or NULL */
static const char *refuse(const pq_meta *m, const field *f)
{
	const pq_schema_el *e = &m->schema[f->el];

	if (e->num_children > 0)
		return e->converted == PQ_CT_LIST || e->logical == PQ_LT_LIST ? "a nested type (a list)"
		       : e->converted == PQ_CT_MAP || e->logical == PQ_LT_MAP ? "a nested type (a map)"
		       : "a nested type (a struct)";
	if (e->rep == PQ_REPEATED)
		return "a nested type (a repeated field)";
	switch (e->type) {
	case PQ_INT96: return "the INT96 type (an old timestamp format)";
	case PQ_FIXED: return e->logical == PQ_LT_UUID ? "FIXED_LEN_BYTE_ARRAY (a UUID)"
		       : e->logical == PQ_LT_FLOAT16 ? "FIXED_LEN_BYTE_ARRAY (a float16)"
		       : "FIXED_LEN_BYTE_ARRAY (a decimal or fixed-size binary)";
	case PQ_BOOLEAN: case PQ_INT32: case PQ_INT64: case PQ_FLOAT: case PQ_DOUBLE:
	case PQ_BYTE_ARRAY:
		return NULL;
	default: return "an unknown physical type";
	}
}

static const char *meta_get(const pq_meta *m, const char *key)
{
	int i;

	for (i = 0; i < m->nkv; i++)
		if (m->keys[i] && !strcmp(m->keys[i], key))
			return m->vals[i];
	return NULL;
}

static int find_field(const pq_meta *m, const field *fs, int nf, const char *name)
{
	int i;

	for (i = 0; i < nf; i++)
		if (!strcmp(m->schema[fs[i].el].name, name))
			return i;
	return -1;
}

static gwb_status unknown_column(reader *r, const field *fs, int nf, const char *name,
				 const char *what)
{
	const char **names = malloc(((size_t)nf + 1) * sizeof(*names));
	char near[256] = "", list[512];
	size_t k = 0;
	int i;

	if (!names)
		return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
	list[0] = 0;
	for (i = 0; i < nf; i++) {
		names[i] = r->m.schema[fs[i].el].name;
		if (k + 40 < sizeof(list))
			k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", i ? ", " : "",
					      names[i]);
	}
	gwb_suggest(name, names, (size_t)nf, NULL, near, sizeof(near));
	free(names);
	return gwb_error(GWB_EINVAL, "%s: unknown %s \"%s\"%s%s; the columns are: %s", r->path,
			 what, name, *near ? ": did you mean " : "", near, list);
}

/* --- the target ---------------------------------------------------------------------------- */

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* d holds the target in yr (numbers or text codes); make it the task's. */
static gwb_status finish_target(reader *r, gwb_dataset *d, const char *name, int task,
				char **levels, int nlev, bool text)
{
	size_t i, nd = 0;
	float *vals = NULL;
	int32_t *y;
	char **cn;
	int j;

	if (text && task == GWB_TASK_REGRESSION)
		return gwb_error(GWB_EINVAL, "%s: target \"%s\" holds text (e.g. \"%s\"); it cannot "
				 "be a regression target", r->path, name, nlev ? levels[0] : "");
	for (i = 0; i < d->rows; i++)
		if (isnan(d->yr[i]))
			return gwb_error(GWB_EINVAL, "%s: missing target value in row %zu of column "
					 "\"%s\"; choose another target (target = ...), or load it "
					 "with target = false and filter the rows first", r->path,
					 i + 1, name);
	if (text) {
		task = GWB_TASK_CLASSIFICATION;
		nd = (size_t)nlev;
	} else {
		/* the CSV reader's rule: integral values, at most 32 distinct; a small set finds
		 * that without sorting the column (sorted only for a forced classification of
		 * more distinct values) */
		float few[33];
		size_t nfew = 0, k;
		bool integral = true, over = false;
		for (i = 0; i < d->rows && task != GWB_TASK_REGRESSION; i++) {
			float v = d->yr[i];
			integral &= v == floorf(v) && fabsf(v) <= 16777216.0f;
			for (k = 0; k < nfew && few[k] != v; k++)
				;
			if (k == nfew) {
				if (nfew == 33) {
					over = true;
					break;
				}
				few[nfew++] = v;
			}
		}
		if (task < 0)
			task = integral && !over && nfew <= 32 && (nfew <= 2 || nfew * 2 <= d->rows)
				       ? GWB_TASK_CLASSIFICATION : GWB_TASK_REGRESSION;
		if (task == GWB_TASK_REGRESSION)
			return GWB_OK;
		if (!(vals = malloc(((over ? d->rows : nfew) + 1) * sizeof(float))))
			return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		if (over) {
			memcpy(vals, d->yr, d->rows * sizeof(float));
			qsort(vals, d->rows, sizeof(float), cmp_float);
		} else {
			memcpy(vals, few, nfew * sizeof(float));
			qsort(vals, nfew, sizeof(float), cmp_float);
		}
		for (i = 0; i < (over ? d->rows : nfew); i++)
			if (i == 0 || vals[i] != vals[nd - 1])
				vals[nd++] = vals[i];
	}
	if (nd > MAX_CLASSES) {
		free(vals);
		return gwb_error(GWB_EINVAL, "%s: target \"%s\" has %zu distinct values, too many "
				 "for classification (at most %d); use task = \"regression\"",
				 r->path, name, nd, MAX_CLASSES);
	}
	y = malloc((d->rows + 1) * sizeof(*y));
	cn = calloc(nd + 1, sizeof(*cn));
	if (!y || !cn) {
		free(y);
		free(cn);
		free(vals);
		return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
	}
	for (i = 0; i < d->rows; i++) {
		if (text) {
			y[i] = (int32_t)d->yr[i];
		} else {
			size_t lo = 0, hi = nd;
			while (hi - lo > 1) {
				size_t mid = (lo + hi) / 2;
				if (vals[mid] <= d->yr[i])
					lo = mid;
				else
					hi = mid;
			}
			y[i] = (int32_t)lo;
		}
	}
	for (j = 0; j < (int)nd; j++) {
		if (text) {
			cn[j] = levels[j];
			levels[j] = NULL;
		} else {
			char b[32];
			snprintf(b, sizeof(b), "%.9g", (double)vals[j]);
			if (!(cn[j] = strdup(b))) {
				gwb_strv_free(cn, j);
				free(y);
				free(vals);
				return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			}
		}
	}
	free(vals);
	free(d->yr);
	d->yr = NULL;
	d->y = y;
	d->class_names = cn;
	d->classes = (int)nd;
	d->task = GWB_TASK_CLASSIFICATION;
	return GWB_OK;
}

/* --- the load ---------------------------------------------------------------------------- */

static gwb_status map_file(reader *r, int *fdp)
{
	struct stat sb;
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);
	uint32_t flen;
	const uint8_t *m;
	char why[200];
	gwb_status st;

	if (fd < 0)
		return gwb_error(GWB_EIO, "%s: cannot open: %s", r->path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return gwb_error(GWB_EIO, "%s: not a regular file", r->path);
	}
	*fdp = fd;
	r->size = (size_t)sb.st_size;
	if (r->size < 12)
		return gwb_error(GWB_EPARSE, "%s: %zu bytes, too short for a Parquet file (the magic "
				 "PAR1, data, a footer, its length and PAR1 again)", r->path, r->size);
	m = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return gwb_error(GWB_EIO, "%s: cannot map %zu bytes: %s", r->path, r->size,
				 strerror(errno));
	r->map = m;
	if (memcmp(m, "PAR1", 4) || memcmp(m + r->size - 4, "PAR1", 4))
		return gwb_error(GWB_EPARSE, "%s: not a Parquet file (it does not %s with the magic "
				 "PAR1%s)", r->path, memcmp(m, "PAR1", 4) ? "start" : "end",
				 memcmp(m, "PAR1", 4) ? "" : "; it may be truncated: copy it again");
	flen = le32(m + r->size - 8);
	if ((size_t)flen > r->size - 12)
		return gwb_error(GWB_EPARSE, "%s: the footer length (%u bytes) exceeds the file "
				 "(%zu bytes); the file is truncated or damaged: copy it again",
				 r->path, flen, r->size);
	r->footer_at = r->size - 8 - flen;
	if ((st = pq_meta_parse(m + r->footer_at, flen, &r->m, why, sizeof(why))))
		return gwb_error(st, "%s: the footer (FileMetaData at byte offset %zu, %u bytes) is "
				 "damaged: %s", r->path, r->footer_at, flen, why);
	return GWB_OK;
}

gwb_status gwb_parquet_load(const char *path, const gwb_parquet_opts *o, gwb_dataset **out,
			    gwb_parquet_info *info)
{
	gwb_parquet_opts dflt;
	reader r;
	field *fs = NULL;
	int nf = 0, fd = -1, i, k, tsel = -1, nsel = 0, task;
	int *pick = NULL;
	char ***lev = NULL;
	int *nlev = NULL;
	gwb_dataset *d = NULL;
	gwb_status st;
	struct timespec t0, t1;
	size_t rows = 0, nitems = 0, t;
	bool no_target;
	const char *tname = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*out = NULL;
	if (!o) {
		gwb_parquet_opts_init(&dflt);
		o = &dflt;
	}
	memset(&r, 0, sizeof(r));
	r.path = path;
	if ((st = map_file(&r, &fd)))
		goto out;
	if ((st = walk_schema(&r, &fs, &nf)))
		goto out;
	/* the columns to read, in order */
	if (!(pick = calloc((size_t)nf + (size_t)(o->n_columns > 0 ? o->n_columns : 0) + 2,
			    sizeof(*pick))))
		goto oom;
	if (o->columns) {
		for (i = 0; i < o->n_columns; i++) {
			int f = find_field(&r.m, fs, nf, o->columns[i]), j;
			if (f < 0) {
				st = unknown_column(&r, fs, nf, o->columns[i], "column");
				goto out;
			}
			for (j = 0; j < nsel && pick[j] != f; j++)
				;
			if (j == nsel)
				pick[nsel++] = f;
		}
	} else {
		for (i = 0; i < nf; i++)
			pick[nsel++] = i;
	}
	/* the target: named, by index, saved by gwb, or the last column */
	no_target = o->no_target;
	task = o->task;
	if (!no_target && !o->target && !o->target_index) {
		const char *nt = meta_get(&r.m, "gwb.no_target");
		const char *st_name = meta_get(&r.m, "gwb.target");
		if (nt && !strcmp(nt, "true")) {
			no_target = true;
		} else if (st_name && find_field(&r.m, fs, nf, st_name) >= 0) {
			tname = st_name;
			if (task < 0 && meta_get(&r.m, "gwb.task"))
				task = !strcmp(meta_get(&r.m, "gwb.task"), "classification")
					       ? GWB_TASK_CLASSIFICATION : GWB_TASK_REGRESSION;
		}
	} else if (o->target) {
		tname = o->target;
	}
	if (!no_target) {
		if (tname) {
			int f = find_field(&r.m, fs, nf, tname);
			if (f < 0) {
				st = unknown_column(&r, fs, nf, tname, "target");
				goto out;
			}
			for (tsel = 0; tsel < nsel && pick[tsel] != f; tsel++)
				;
			if (tsel == nsel)
				pick[nsel++] = f;   /* a target outside columns = {...} is read too */
		} else {
			int j = o->target_index;
			j = j == 0 ? nsel : j < 0 ? nsel + 1 + j : j;
			if (j < 1 || j > nsel) {
				st = gwb_error(GWB_EINVAL, "%s: target index %d out of range (%d "
					       "columns are read)", path, o->target_index, nsel);
				goto out;
			}
			tsel = j - 1;
		}
		if (nsel < 2) {
			st = gwb_error(GWB_EINVAL, "%s: only one column (\"%s\") is read; need at least "
				       "one feature and a target (or target = false)", path,
				       nsel ? r.m.schema[fs[pick[0]].el].name : "");
			goto out;
		}
	}
	if (!nsel) {
		st = gwb_error(GWB_EINVAL, "%s: no columns to read", path);
		goto out;
	}
	for (k = 0; k < nsel; k++) {
		const char *why = refuse(&r.m, &fs[pick[k]]);
		if (why) {
			st = gwb_error(GWB_EINVAL, "%s: column \"%s\" is %s, which gwb does not read; "
				       "load the other columns with columns = {...}", path,
				       r.m.schema[fs[pick[k]].el].name, why);
			goto out;
		}
	}
	/* rows: each row group's first row */
	if (!(r.first = calloc((size_t)r.m.nrg + 2, sizeof(*r.first))))
		goto oom;
	for (i = 0; i < r.m.nrg; i++) {
		size_t n;
		if (r.m.rg[i].num_rows < 0 || gwb_u64_size((uint64_t)r.m.rg[i].num_rows, &n) ||
		    gwb_add_size(rows, n, &rows)) {
			st = gwb_error(GWB_EPARSE, "%s: row group %d says %lld rows; the footer is "
				       "damaged", path, i + 1, (long long)r.m.rg[i].num_rows);
			goto out;
		}
		r.first[i + 1] = rows;
	}
	if ((uint64_t)r.m.num_rows != rows) {
		st = gwb_error(GWB_EPARSE, "%s: the footer says %lld rows but its row groups hold %zu; "
			       "the footer is damaged", path, (long long)r.m.num_rows, rows);
		goto out;
	}
	if (!rows) {
		st = gwb_error(GWB_EINVAL, "%s: the file holds no rows", path);
		goto out;
	}
	{   /* (a file can claim any count; a row of a column takes at least a bit on disk, or a
	     * run header for a long run: 2^31 rows per byte is the bound refused here) */
		size_t cap;
		if (gwb_mul_size(r.size, (size_t)1 << 31, &cap) == GWB_OK && rows > cap) {
			st = gwb_error(GWB_EPARSE, "%s: %zu rows in %zu bytes; the footer is damaged",
				       path, rows, r.size);
			goto out;
		}
	}
	if ((st = gwb_dataset_new(rows, nsel - (no_target ? 0 : 1), GWB_TASK_REGRESSION, 0, &d)))
		goto out;
	if (!(r.sel = calloc((size_t)nsel, sizeof(*r.sel))))
		goto oom;
	r.nsel = nsel;
	for (k = 0, i = 0; k < nsel; k++) {
		pcol *c = &r.sel[k];
		const field *f = &fs[pick[k]];
		c->field = pick[k];
		c->leaf = f->leaf;
		c->el = &r.m.schema[f->el];
		c->max_def = c->el->rep == PQ_OPTIONAL ? 1 : 0;
		c->text = c->el->type == PQ_BYTE_ARRAY;
		c->div = 1;
		if ((c->el->converted == PQ_CT_DECIMAL || c->el->logical == PQ_LT_DECIMAL) &&
		    c->el->scale > 0 && c->el->scale < 40)
			c->div = pow(10, c->el->scale);
		if (k == tsel) {
			c->out = d->yr;
		} else {
			int pt = c->el->type;
			c->out = d->X + (size_t)i * rows;
			if (!(d->names[i] = strdup(c->el->name)))
				goto oom;
			if (!o->f32 && (pt == PQ_INT32 || pt == PQ_INT64 || pt == PQ_DOUBLE)) {
				/* INT32 and INT64 int64 (decimals float64), DOUBLE float64 (issue 30) */
				gwb_num64 *w;
				c->wint = pt != PQ_DOUBLE && c->div == 1;
				if (!(w = gwb_num64_new(c->wint ? GWB_DT_I64 : GWB_DT_F64, 0)))
					goto oom;
				free(w->i);
				free(w->f);
				w->i = NULL;
				w->f = NULL;
				/* on huge pages: a column written once, end to end, by the decoder,
				 * without a page fault every 4 KiB */
				w->map = (rows + 1) * 8;
				c->wout = gwb_hugemap_new(w->map);
				if (c->wint)
					w->i = (int64_t *)(void *)c->wout;
				else
					w->f = (double *)(void *)c->wout;
				if (!c->wout)
					w->map = 0;
				if (!c->wout || gwb_dataset_attach_wide(d, i, w)) {
					gwb_num64_free(w);
					goto oom;
				}
			}
			i++;
		}
	}
	/* free text or categories: a sample of each text feature column decides */
	for (k = 0; k < nsel; k++)
		if (k != tsel && r.sel[k].text && (st = sample_free_text(&r, k)))
			goto out;
	nitems = (size_t)r.m.nrg * (size_t)nsel;
	if (!(r.tabs = calloc(nitems + 1, sizeof(*r.tabs))) ||
	    !(r.st = calloc(nitems + 1, sizeof(*r.st))) ||
	    !(r.msg = calloc(nitems + 1, sizeof(*r.msg))))
		goto oom;
	{   /* every column chunk of every row group an item, taken as workers finish */
		int th = o->threads > 0 ? o->threads : gwb_cpu_threads();
		if ((size_t)th > nitems)
			th = (int)nitems;
		if (th < 1)
			th = 1;
		if (info)
			info->threads = th;
		if (!(r.work = calloc((size_t)th, sizeof(*r.work))))
			goto oom;
		r.nwork = th;
		if (!(r.order = item_order(&r, nitems)))
			goto oom;
		gwb_parallel_items(th, nitems, read_item, &r);
	}
	for (t = 0; t < nitems; t++)   /* the first failure in file order */
		if (r.st[t]) {
			st = gwb_error(r.st[t], "%s", r.msg[t] ? r.msg[t] : "out of memory");
			goto out;
		}
	/* text columns: merged levels; the target last */
	if (!(lev = calloc((size_t)nsel, sizeof(*lev))) || !(nlev = calloc((size_t)nsel, sizeof(int))))
		goto oom;
	for (k = 0, i = 0; k < nsel; k++) {
		if (r.sel[k].free_text) {
			gwb_text *tx;
			if ((st = build_free_text(&r, k, &tx)))
				goto out;
			if ((st = gwb_dataset_set_text(d, i, tx))) {
				gwb_text_free(tx);
				goto out;
			}
			i++;
			continue;
		}
		if (r.sel[k].text && (st = merge_levels(&r, k, &lev[k], &nlev[k])))
			goto out;
		if (k == tsel)
			continue;
		if (r.sel[k].text) {
			d->cat_levels[i] = lev[k];
			d->cat_count[i] = nlev[k];
			lev[k] = NULL;
		}
		i++;
	}
	if (no_target) {
		size_t j;
		d->no_target = true;
		for (j = 0; j < rows; j++)
			d->yr[j] = NAN;
	} else {
		const pcol *tc = &r.sel[tsel];
		if (!(d->target = strdup(tc->el->name)))
			goto oom;
		if ((st = finish_target(&r, d, tc->el->name, task, lev[tsel], nlev[tsel], tc->text)))
			goto out;
	}
	if (gwb_intr_pending()) {
		st = gwb_error(GWB_EINTR, "%s: interrupted", path);
		goto out;
	}
	if (info) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		info->bytes = r.size;
		info->row_groups = r.m.nrg;
		info->columns = nf;
		info->read = nsel;
		info->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
		snprintf(info->created_by, sizeof(info->created_by), "%s",
			 r.m.created_by ? r.m.created_by : "");
	}
	*out = d;
	d = NULL;
	st = GWB_OK;
	goto out;
oom:
	st = gwb_error(GWB_ENOMEM, "%s: out of memory", path);
out:
	gwb_dataset_free(d);
	if (lev) {
		for (k = 0; k < nsel; k++)
			if (lev[k])
				gwb_strv_free(lev[k], nlev[k]);
		free(lev);
	}
	free(nlev);
	if (r.tabs) {
		for (t = 0; t < nitems; t++)
			strtab_free(&r.tabs[t]);
		free(r.tabs);
	}
	if (r.msg)
		for (t = 0; t < nitems; t++)
			free(r.msg[t]);
	free(r.msg);
	free(r.st);
	free(r.order);
	for (i = 0; i < r.nwork; i++)
		scratch_free(&r.work[i]);
	free(r.work);
	free(r.sel);
	free(r.first);
	free(pick);
	free(fs);
	pq_meta_free(&r.m);
	if (r.map)
		munmap((void *)(uintptr_t)r.map, r.size);
	if (fd >= 0)
		close(fd);
	return st;
}
