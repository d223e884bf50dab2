/* csv.c - streaming RFC 4180 reader into a Dataset (see csv.h for the contract).
 *
 * The file is read in blocks of READ_BLOCK bytes. A record is first split into fields
 * (tokenize: quote aware, never copies), and only once it is complete are its fields converted,
 * so a record cut by the end of a block is simply tokenized again after the refill. Converted
 * rows go row-major into blocks of about CHUNK_BYTES (mmap'd, so releasing one returns its
 * pages at once); at the end each block is transposed into the column-major Dataset and
 * unmapped, so the peak memory is the table once plus one block. */
#define _GNU_SOURCE
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fileio.h"
#include "intr.h"
#include "switches.h"
#include "transpose.h"

#define READ_BLOCK ((size_t)1 << 20)
#define CHUNK_BYTES ((size_t)4 << 20)
#define SAMPLE_ROWS 2000
#define MAX_LEVELS (1 << 24)          /* category codes stay exact in float32 */
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

/* --- numbers ---------------------------------------------------------------------------- */

static const double pow10_tab[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static const double negpow10_tab[23] = {
	1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11,
	1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
};

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void make_c_locale(void)
{
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* strtof in the C locale (glibc's strtof is correctly rounded) for what the fast path leaves. */
static bool slow_float(const char *s, size_t n, float *out, bool *ovf)
{
	char tmp[128], *buf = tmp, *end;
	bool ok;
	float f;

	if (n >= sizeof(tmp) && !(buf = malloc(n + 1)))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	pthread_once(&c_locale_once, make_c_locale);
	errno = 0;
	f = c_locale ? strtof_l(buf, &end, c_locale) : strtof(buf, &end);
	ok = end == buf + n && n > 0;
	if (ok && errno == ERANGE && isinf(f))
		*ovf = true;
	if (ok)
		*out = f;
	if (buf != tmp)
		free(buf);
	return ok;
}

/* -f when neg, without a branch (signs in data are often random). */
static inline float with_sign(float f, bool neg)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	b ^= (uint32_t)neg << 31;
	memcpy(&f, &b, 4);
	return f;
}

/* w * 10^exp10 (w has at most 19 digits) as the correctly rounded float, when the fast
 * arithmetic can prove it; false sends the caller to strtof. */
static inline bool float_fast(uint64_t w, int exp10, bool neg, float *out)
{
	if (!w) {
		*out = with_sign(0.0f, neg);
		return true;
	}
	/* Clinger's fast path: w and 10^|e| are exact doubles, so one operation gives the correctly
	 * rounded double. Rounding that double to float is then correct unless it lies exactly
	 * on a midpoint between two floats (its low 29 mantissa bits are 1000...0): those rare
	 * cases, and numbers outside the normal float range, go to strtof. */
	if (w <= ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
		double d = (double)(int64_t)w;   /* exact; the signed conversion is one instruction */
		uint64_t bits;
		if (exp10 < 0) {
			/* Multiplying by the rounded 10^-k is off by at most 2 units in the last
			 * place of the double; unless that lands within 4 units of a float midpoint,
			 * rounding to float gives the same result as the exact quotient, for the
			 * price of a multiply instead of a divide. */
			double m = d * negpow10_tab[-exp10];
			uint64_t mb;
			memcpy(&mb, &m, sizeof(mb));
			if (m >= FLT_MIN && m <= FLT_MAX &&
			    (uint32_t)((mb & 0x1fffffffu) - 0x10000000u + 4u) > 8u) {
				float f = (float)m;
				*out = with_sign(f, neg);
				return true;
			}
			d = d / pow10_tab[-exp10];
		} else {
			d = d * pow10_tab[exp10];
		}
		memcpy(&bits, &d, sizeof(bits));
		if (d >= FLT_MIN && d <= FLT_MAX && (bits & 0x1fffffffu) != 0x10000000u) {
			float f = (float)d;
			*out = with_sign(f, neg);
			return true;
		}
	}
	return false;
}

bool gwb_csv_parse_float(const char *s, size_t n, float *out, bool *overflow)
{
	const char *p, *e;
	uint64_t w = 0;
	int nd = 0, exp10 = 0;
	bool neg = false, any = false;

	*overflow = false;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return false;
	p = s;
	e = s + n;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	/* digits accumulate into w without branches; more than 19 (w may have wrapped) go to
	 * strtof, as do leading zeros that push the count over (rare in data) */
	{
		const char *q = p;
		int nfrac = 0;
		for (; p < e && (unsigned)(*p - '0') < 10; p++)
			w = w * 10 + (unsigned)(*p - '0');
		nd = (int)(p - q);
		if (p < e && *p == '.') {
			const char *f = ++p;
			for (; p < e && (unsigned)(*p - '0') < 10; p++)
				w = w * 10 + (unsigned)(*p - '0');
			nfrac = (int)(p - f);
		}
		nd += nfrac;
		any = nd > 0;
		exp10 = -nfrac;
		if (nd > 19)
			goto slow;
	}
	if (!any) {
		/* inf, infinity, nan in any case go to strtof; anything else is text. */
		if (p < e && (*p == 'i' || *p == 'I' || *p == 'n' || *p == 'N'))
			goto slow;
		return false;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		int es = 1, ex = 0;
		bool ed = false;
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			es = *p++ == '-' ? -1 : 1;
		for (; p < e && (unsigned)(*p - '0') < 10; p++) {
			ed = true;
			if (ex < 100000)
				ex = ex * 10 + (*p - '0');
		}
		if (!ed)
			return false;
		exp10 += es * ex;
	}
	if (p != e)
		return false;
	if (float_fast(w, exp10, neg, out))
		return true;
slow:
	return slow_float(s, n, out, overflow);
}

/* --- dictionaries: string -> code, in order of first appearance --------------------------- */

struct dict {
	char **str;       /* code -> string (owned) */
	uint32_t *hash;   /* code -> hash */
	int n, cap;
	int32_t *slot;    /* open addressing: code + 1, 0 = empty */
	size_t nslot;
};

/* The dictionaries' hash: eight bytes a step (a level is hashed on every record that holds
 * it, byte-at-a-time FNV-1a was 4 % of a mixed file's load), a multiply-xorshift mix. Only
 * lookups use it: codes come from first-seen order. */
static uint32_t str_hash(const char *s, size_t n)
{
	const uint64_t k = 0x9E3779B97F4A7C15ull;
	uint64_t h = k ^ (uint64_t)n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	h *= 0xBF58476D1CE4E5B9ull;
	return (uint32_t)(h >> 32);
}

static void dict_free(struct dict *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		free(d->str[i]);
	free(d->str);
	free(d->hash);
	free(d->slot);
	memset(d, 0, sizeof(*d));
}

static int dict_rehash(struct dict *d, size_t nslot)
{
	int32_t *s = calloc(nslot, sizeof(*s));
	int i;

	if (!s)
		return -1;
	for (i = 0; i < d->n; i++) {
		size_t k = d->hash[i] & (nslot - 1);
		while (s[k])
			k = (k + 1) & (nslot - 1);
		s[k] = i + 1;
	}
	free(d->slot);
	d->slot = s;
	d->nslot = nslot;
	return 0;
}

/* The code of s[0..n), adding it when new. -1 out of memory, -2 too many levels. */
static int dict_code(struct dict *d, const char *s, size_t n, int32_t *code)
{
	uint32_t h = str_hash(s, n);
	size_t k;
	char *c;

	if (!d->slot && dict_rehash(d, 64))
		return -1;
	for (k = h & (d->nslot - 1); d->slot[k]; k = (k + 1) & (d->nslot - 1)) {
		int i = d->slot[k] - 1;
		if (d->hash[i] == h && !strncmp(d->str[i], s, n) && d->str[i][n] == 0) {
			*code = i;
			return 0;
		}
	}
	if (d->n >= MAX_LEVELS)
		return -2;
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		char **ns = realloc(d->str, (size_t)cap * sizeof(*ns));
		uint32_t *nh;
		if (!ns)
			return -1;
		d->str = ns;
		nh = realloc(d->hash, (size_t)cap * sizeof(*nh));
		if (!nh)
			return -1;
		d->hash = nh;
		d->cap = cap;
	}
	if (!(c = malloc(n + 1)))
		return -1;
	memcpy(c, s, n);
	c[n] = 0;
	d->str[d->n] = c;
	d->hash[d->n] = h;
	d->slot[k] = d->n + 1;
	*code = d->n++;
	if ((size_t)d->n * 2 > d->nslot && dict_rehash(d, d->nslot * 2))
		return -1;
	return 0;
}

/* --- the reader ----------------------------------------------------------------------------- */

struct field {
	const char *p;
	size_t n;
	int q;            /* 0 unquoted, 1 quoted, 2 quoted with "" escapes inside */
};

enum { TOK_REC, TOK_MORE, TOK_EOF, TOK_ERR };

struct col {
	int numeric;      /* 1 numeric, 0 categorical */
	struct dict dict;
	int feature;      /* index among features; -1 for the target */
	size_t missing;
	/* sniffing */
	int row0_text;
	size_t seen_num, seen_text;   /* numbers and text among the sampled data rows */
};

struct rd {
	const char *path;
	int fd;
	char *buf;
	size_t cap, len;
	size_t pos;        /* start of the next record in buf */
	size_t line;       /* physical line of buf[pos], 1-based */
	size_t off;        /* file offset of buf[0] */
	size_t size;       /* file size */
	size_t block;      /* read size (the buffer grows for longer records) */
	bool eof;
	char sep;
	struct field *f;
	int nf, fcap;
	size_t nl;         /* newlines inside quotes in the last record */
	char *scratch;
	size_t scap;
	bool crlf;
	bool nul_check;    /* refuse NUL bytes (set once the first block was looked at) */
	gwb_csv_info info;

	const char *const *missing;
	int n_missing;
	bool numeric_missing;   /* a missing marker reads as a number ("-999"): check it first */

	int ncol;
	struct col *cols;
	char **names;
	struct dict name_set;   /* the names, code = column (set_names) */
	int target;        /* column index of the target */

	/* rows, row-major in mmap'd chunks */
	float **chunk;
	size_t nchunk, chunk_cap, chunk_rows, cur_rows, rows;
	size_t *chunk_n;   /* rows in each chunk (the last one's is cur_rows until sealed) */
	float *tv;         /* target value (or category code) per row */
	size_t tv_cap;
	size_t nmiss;      /* missing values the fast paths read (convert_row counts per column) */

	/* after the parallel reader: the rows of range i (part_rows[i], in order) carry its own
	 * level codes in categorical column j, which part_map[i * ncol + j] takes to the merged
	 * dictionary's (NULL: the same) */
	int npart;
	size_t *part_rows;
	int32_t **part_map;
};

/* path:line:col of buf offset `at`, counting from the record that starts at `rec` on `line`. */
static gwb_status fail_at(struct rd *r, gwb_status st, size_t rec, size_t line, size_t at,
			  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static gwb_status fail_at(struct rd *r, gwb_status st, size_t rec, size_t line, size_t at,
			  const char *fmt, ...)
{
	char msg[768];
	size_t i, bol = rec, col;
	va_list ap;

	for (i = rec; i < at && i < r->len; i++)
		if (r->buf[i] == '\n')
			line++, bol = i + 1;
	col = at - bol + 1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return gwb_error(st, "%s:%zu:%zu: %s", r->path, line, col, msg);
}

/* Show a field (at most 40 bytes, control characters escaped) for a message. */
static const char *show(const char *p, size_t n, char *out, size_t outsz)
{
	size_t i, k = 0;

	out[k++] = '"';
	for (i = 0; i < n && k + 6 < outsz; i++) {
		unsigned char c = (unsigned char)p[i];
		if (i == 40) {
			memcpy(out + k, "...", 3);
			k += 3;
			break;
		}
		if (c < 32 || c == 127)
			k += (size_t)snprintf(out + k, outsz - k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	out[k++] = '"';
	out[k] = 0;
	return out;
}

/* The first separator, '\n' or '\r' at or after p (end when none): 16 bytes at a time where
 * SSE2 is there (every x86-64). */
static inline const char *scan_field(const char *p, const char *end, char sep)
{
#ifdef __SSE2__
	const __m128i vs = _mm_set1_epi8(sep), vn = _mm_set1_epi8('\n'), vr = _mm_set1_epi8('\r');

	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
		int m = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, vs),
								    _mm_cmpeq_epi8(x, vn)),
						       _mm_cmpeq_epi8(x, vr)));
		if (m)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#endif
	while (p < end && *p != sep && *p != '\n' && *p != '\r')
		p++;
	return p;
}

/* Split the record starting at buf[cur] into r->f. TOK_REC sets *next to the first byte after
 * it (its line end consumed); TOK_MORE asks for more bytes; TOK_EOF when no bytes are left. */
/* Step *pp over the line end it points at (\n, \r or \r\n; a \r\n marks the file as CRLF).
 * false: a \r ends the buffer before the end of the file, and its \n may be in the next block. */
static inline bool eat_eol(struct rd *r, const char **pp, const char *end)
{
	const char *p = *pp;

	if (*p == '\r') {
		if (p + 1 == end && !r->eof)
			return false;
		p++;
		if (p < end && *p == '\n') {
			p++;
			r->crlf = true;
		}
	} else {
		p++;
	}
	*pp = p;
	return true;
}

static int tokenize(struct rd *r, size_t cur, size_t *next, size_t line, gwb_status *err)
{
	const char *p = r->buf + cur, *end = r->buf + r->len;
	char sep = r->sep;

	r->nf = 0;
	r->nl = 0;
	if (p == end)
		return r->eof ? TOK_EOF : TOK_MORE;
	for (;;) {
		struct field *f;
		if (r->nf == r->fcap) {
			int cap = r->fcap ? r->fcap * 2 : 64;
			struct field *nf = realloc(r->f, (size_t)cap * sizeof(*nf));
			if (!nf) {
				*err = gwb_error(GWB_ENOMEM, "%s: out of memory splitting a row", r->path);
				return TOK_ERR;
			}
			r->f = nf;
			r->fcap = cap;
		}
		f = &r->f[r->nf++];
		if (p < end && *p == '"') {
			const char *q = p + 1;
			int esc = 0;
			size_t nl = 0;
			for (;;) {
				const char *z = memchr(q, '"', (size_t)(end - q));
				const char *s;
				for (s = q; (s = memchr(s, '\n', (size_t)((z ? z : end) - s))); s++)
					nl++;
				if (!z) {
					if (!r->eof)
						return TOK_MORE;
					*err = fail_at(r, GWB_EPARSE, cur, line, (size_t)(p - r->buf),
						       "quoted field never closed (no matching '\"' before "
						       "the end of the file); close the quote or escape "
						       "inner quotes as \"\"");
					return TOK_ERR;
				}
				if (z + 1 == end && !r->eof)
					return TOK_MORE;
				if (z + 1 < end && z[1] == '"') {
					esc = 1;
					q = z + 2;
					continue;
				}
				q = z;
				break;
			}
			r->nl += nl;
			f->p = p + 1;
			f->n = (size_t)(q - p - 1);
			f->q = 1 + esc;
			p = q + 1;
			while (p < end && *p == ' ' && sep != ' ')
				p++;
			if (p == end) {
				if (!r->eof)
					return TOK_MORE;
				break;
			}
			if (*p == sep) {
				p++;
				continue;
			}
			if (*p == '\n' || *p == '\r')
				goto line_end;
			{
				char b[64];
				*err = fail_at(r, GWB_EPARSE, cur, line, (size_t)(p - r->buf),
					       "unexpected %s after a closing quote; a quote inside a "
					       "quoted field is written \"\"",
					       show(p, 1, b, sizeof(b)));
			}
			return TOK_ERR;
		} else {
			const char *s = p;
			p = scan_field(p, end, sep);
			f->p = s;
			f->n = (size_t)(p - s);
			f->q = 0;
			if (p == end) {
				if (!r->eof)
					return TOK_MORE;
				break;
			}
			if (*p == sep) {
				p++;
				if (p == end && !r->eof)
					return TOK_MORE;
				continue;
			}
			goto line_end;
		}
	}
	*next = (size_t)(p - r->buf);
	return TOK_REC;
line_end:
	if (!eat_eol(r, &p, end))
		return TOK_MORE;
	*next = (size_t)(p - r->buf);
	return TOK_REC;
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
		got = read(r->fd, r->buf + r->len, r->cap - r->len);
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
			return gwb_error(GWB_EPARSE, "%s: binary data (a NUL byte at offset %zu); "
					 "data.load reads CSV text or .gwbd files", r->path, r->off + at);
		}
		r->len += (size_t)got;
	}
	return GWB_OK;
}

static bool is_missing(const struct rd *r, const char *p, size_t n)
{
	int i;

	if (!n)
		return true;
	for (i = 0; i < r->n_missing; i++) {
		const char *m = r->missing[i];
		if (m[0] == p[0] && strlen(m) == n && !memcmp(m, p, n))
			return true;
	}
	return false;
}

/* The text of field f: trimmed when unquoted, unescaped when it holds "" pairs. */
static gwb_status field_text(struct rd *r, const struct field *f, const char **p, size_t *n)
{
	size_t i, k;

	if (f->q == 0) {
		const char *s = f->p;
		size_t m = f->n;
		while (m && (*s == ' ' || *s == '\t') && r->sep != *s)
			s++, m--;
		while (m && (s[m - 1] == ' ' || s[m - 1] == '\t') && r->sep != s[m - 1])
			m--;
		*p = s;
		*n = m;
		return GWB_OK;
	}
	if (f->q == 1) {
		*p = f->p;
		*n = f->n;
		return GWB_OK;
	}
	if (f->n + 1 > r->scap) {
		char *s = realloc(r->scratch, f->n + 1);
		if (!s)
			return gwb_error(GWB_ENOMEM, "%s: out of memory for a %zu-byte field", r->path,
					 f->n);
		r->scratch = s;
		r->scap = f->n + 1;
	}
	for (i = 0, k = 0; i < f->n; i++) {
		r->scratch[k++] = f->p[i];
		if (f->p[i] == '"' && i + 1 < f->n && f->p[i + 1] == '"')
			i++;
	}
	*p = r->scratch;
	*n = k;
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

static void part_free(struct rd *r);

static void rd_free(struct rd *r)
{
	size_t i;
	int j;

	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->f);
	free(r->scratch);
	for (i = 0; i < r->nchunk; i++)
		if (r->chunk[i])   /* (store_chunks releases those it stored) */
			munmap(r->chunk[i], r->chunk_rows * (size_t)(r->ncol - 1) * sizeof(float));
	free(r->chunk);
	free(r->chunk_n);
	free(r->tv);
	if (r->cols)
		for (j = 0; j < r->ncol; j++)
			dict_free(&r->cols[j].dict);
	free(r->cols);
	if (r->names)
		for (j = 0; j < r->ncol; j++)
			free(r->names[j]);
	free(r->names);
	part_free(r);
	dict_free(&r->name_set);
}

/* Sniff the header and each column's kind from the first rows (up to SAMPLE_ROWS, within the
 * first block). Leaves r->pos and r->line where they were. */
static gwb_status sniff(struct rd *r, const gwb_csv_opts *o, int *header)
{
	size_t cur = r->pos, next, line = r->line;
	char **row0 = NULL;
	int rows = 0, j, t, repeats = 0, any_num_col_text0 = 0, all_text0 = 1;
	gwb_status st = GWB_OK;

	for (;;) {
		t = tokenize(r, cur, &next, line, &st);
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
			if (!r->cols || !row0) {
				st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
				goto out;
			}
		}
		for (j = 0; j < r->nf && j < r->ncol; j++) {
			const char *p;
			size_t n;
			float v;
			bool ovf;
			if ((st = field_text(r, &r->f[j], &p, &n)))
				goto out;
			if (is_missing(r, p, n)) {
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
				r->cols[j].seen_text++;
				if (row0[j] && strlen(row0[j]) == n && !memcmp(row0[j], p, n))
					repeats = 1;
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
	}
out:
	if (row0)
		for (j = 0; j < r->ncol; j++)
			free(row0[j]);
	free(row0);
	return st;
}

/* The column of a name (dict codes are column indices: set_names adds one name per column, in
 * order), -1 when no column has it. */
static int dict_find(const struct dict *d, const char *s, size_t n)
{
	uint32_t h = str_hash(s, n);
	size_t k;

	if (!d->slot)
		return -1;
	for (k = h & (d->nslot - 1); d->slot[k]; k = (k + 1) & (d->nslot - 1)) {
		int i = d->slot[k] - 1;
		if (d->hash[i] == h && !strncmp(d->str[i], s, n) && d->str[i][n] == 0)
			return i;
	}
	return -1;
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
		if (header && (st = field_text(r, &r->f[j], &p, &n)))
			goto out;
		if (!n) {
			snprintf(nb, sizeof(nb), "col%d", j + 1);
			p = nb;
			n = strlen(nb);
		}
		if ((base = dict_find(set, p, n)) >= 0) {
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
				if (dict_find(set, nn, strlen(nn)) < 0)
					break;
			}
			next[base] = s + 1;
			p = nn;
			n = strlen(nn);
		}
		if (!(r->names[j] = strndup(p, n)) || (e = dict_code(set, p, n, &code)) == -1) {
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
		if ((j = dict_find(&r->name_set, o->target, strlen(o->target))) >= 0) {
			r->target = j;
			return GWB_OK;
		}
		{
			char list[512];
			size_t k = 0;
			for (j = 0; j < r->ncol && k + 40 < sizeof(list); j++)
				k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", j ? ", " : "",
						      r->names[j]);
			if (j < r->ncol)
				snprintf(list + k, sizeof(list) - k, ", ... (%d columns)", r->ncol);
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

#define HUGE_PAGE ((size_t)2 << 20)

/* Ask for transparent huge pages over the 2 MiB-aligned interior of [p, p + n): a table is
 * written once, page by page, and 2 MiB faults cost far less than 512 small ones. Only a
 * hint: without THP nothing changes. */
static void hint_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	uintptr_t a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

/* An anonymous mapping of n bytes aligned to 2 MiB (so that all of it can use huge pages);
 * released with munmap(p, n). NULL when out of memory. */
static void *map_aligned(size_t n)
{
	size_t len, page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a;
	char *m;

	n = (n + page - 1) / page * page;
	len = n + HUGE_PAGE;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (a > (uintptr_t)m)
		munmap(m, a - (uintptr_t)m);
	if ((uintptr_t)m + len > a + n)
		munmap((void *)(a + n), (uintptr_t)m + len - (a + n));
	hint_huge((void *)a, n);
	return (void *)a;
}

static gwb_status new_chunk(struct rd *r)
{
	size_t bytes = r->chunk_rows * (size_t)(r->ncol - 1) * sizeof(float);
	void *m;

	if (r->nchunk == r->chunk_cap) {
		size_t cap = r->chunk_cap ? r->chunk_cap * 2 : 64;
		float **nc = realloc(r->chunk, cap * sizeof(*nc));
		size_t *nn;
		if (!nc)
			return gwb_error(GWB_ENOMEM, "%s: out of memory after %zu rows", r->path, r->rows);
		r->chunk = nc;
		nn = realloc(r->chunk_n, cap * sizeof(*nn));
		if (!nn)
			return gwb_error(GWB_ENOMEM, "%s: out of memory after %zu rows", r->path, r->rows);
		r->chunk_n = nn;
		r->chunk_cap = cap;
	}
	if (r->nchunk)
		r->chunk_n[r->nchunk - 1] = r->cur_rows;
	m = map_aligned(bytes ? bytes : 1);
	if (!m)
		return gwb_error(GWB_ENOMEM, "%s: out of memory after %zu rows (%zu bytes held)",
				 r->path, r->rows, r->nchunk * bytes);
	r->chunk[r->nchunk] = m;
	r->chunk_n[r->nchunk++] = 0;
	r->cur_rows = 0;
	return GWB_OK;
}

/* Room for one more row: *row points at its features in the current chunk, r->tv[r->rows]
 * takes its target. The row counts only once the caller bumps cur_rows and rows. */
static gwb_status reserve_row(struct rd *r, float **row)
{
	gwb_status st;

	if (r->cur_rows == r->chunk_rows || !r->nchunk)
		if ((st = new_chunk(r)))
			return st;
	if (r->rows == r->tv_cap) {
		size_t cap = r->tv_cap ? r->tv_cap * 2 : 1024;
		float *nt = realloc(r->tv, cap * sizeof(*nt));
		if (!nt)
			return gwb_error(GWB_ENOMEM, "%s: out of memory after %zu rows", r->path, r->rows);
		r->tv = nt;
		r->tv_cap = cap;
	}
	*row = r->chunk[r->nchunk - 1] + r->cur_rows * (size_t)(r->ncol - 1);
	return GWB_OK;
}

/* Eight ASCII digits (first digit in the lowest byte) to their value, as fast_float does. */
static inline uint32_t parse8(uint64_t v)
{
	const uint64_t mask = 0x000000FF000000FFull, mul1 = 0x000F424000000064ull,
		       mul2 = 0x0000271000000001ull;

	v -= 0x3030303030303030ull;
	v = v * 10 + (v >> 8);
	return (uint32_t)(((v & mask) * mul1 + ((v >> 16) & mask) * mul2) >> 32);
}

static const uint64_t pow10_u64[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
				      100000000};

/* Accumulate the digits at p into *w (w = 10 w + digit), eight at a time while 8 bytes are
 * readable; returns the first byte that is not a digit. *w wraps past 19 digits, which the
 * caller refuses by the count. */
static inline const char *digits(const char *p, const char *end, uint64_t *w)
{
	while (end - p >= 8) {
		uint64_t v, m;
		int n, sh;
		memcpy(&v, p, 8);
		/* a byte's high bit is set where it is not '0'..'9' (exact up to the first such) */
		m = ((v + 0x4646464646464646ull) | (v - 0x3030303030303030ull)) &
		    0x8080808080808080ull;
		n = m ? __builtin_ctzll(m) >> 3 : 8;
		if (!n)
			return p;
		sh = 8 * (8 - n);
		if (sh)   /* shift the n digits up, '0's in front */
			v = (v << sh) | (0x3030303030303030ull & ((1ull << sh) - 1));
		*w = *w * pow10_u64[n] + parse8(v);
		p += n;
		if (n < 8)
			return p;
	}
	for (; p < end && (unsigned)(*p - '0') < 10; p++)
		*w = *w * 10 + (unsigned)(*p - '0');
	return p;
}

/* A plain number at *pp (sign, digits, fraction, exponent: no blanks, at most 19 digits) that
 * the fast arithmetic settles: *v and *pp moved past it. false leaves *pp anywhere (the caller
 * restarts the field), for text, an empty field or a number strtof must settle. */
static inline bool fast_number(const char **pp, const char *end, float *v)
{
	const char *p = *pp, *q;
	uint64_t w = 0;
	int nd, nfrac = 0, exp10;
	bool neg;

	if (p == end)
		return false;
	neg = *p == '-';      /* branch-free: random signs would defeat the predictor */
	p += (*p == '-') | (*p == '+');
	q = p;
	p = digits(p, end, &w);
	nd = (int)(p - q);
	if (p < end && *p == '.') {
		q = ++p;
		p = digits(p, end, &w);
		nfrac = (int)(p - q);
	}
	nd += nfrac;
	if (nd == 0 || nd > 19)
		return false;
	exp10 = -nfrac;
	if (p < end && (*p == 'e' || *p == 'E')) {
		int es = 1, ex = 0;
		if (++p < end && (*p == '+' || *p == '-'))
			es = *p++ == '-' ? -1 : 1;
		for (q = p; p < end && (unsigned)(*p - '0') < 10 && ex < 10000; p++)
			ex = ex * 10 + (*p - '0');
		if (p == q)
			return false;
		exp10 += es * ex;
	}
	*pp = p;
	return float_fast(w, exp10, neg, v);
}

/* fast_number for the commonest shape, [sign] 1-7 digits '.' 1-7 digits (fixed decimals, as
 * most writers print), read as two 8-byte words with at least 18 bytes left: the same value
 * and end as fast_number (the same arithmetic), in fewer steps; anything else goes to it. */
static inline bool fast_decimal(const char **pp, const char *end, float *v)
{
	const char *p = *pp;

	if (end - p >= 18) {
		bool neg = *p == '-';
		const char *q = p + ((*p == '-') | (*p == '+'));
		uint64_t a, b, m;
		memcpy(&a, q, 8);
		m = ((a + 0x4646464646464646ull) | (a - 0x3030303030303030ull)) & 0x8080808080808080ull;
		int n1 = m ? __builtin_ctzll(m) >> 3 : 8;
		if (n1 > 0 && n1 < 8 && q[n1] == '.') {
			memcpy(&b, q + n1 + 1, 8);
			m = ((b + 0x4646464646464646ull) | (b - 0x3030303030303030ull)) &
			    0x8080808080808080ull;
			int n2 = m ? __builtin_ctzll(m) >> 3 : 8;
			char t = q[n1 + 1 + n2];
			if (n2 > 0 && n2 < 8 && t != 'e' && t != 'E') {
				int s1 = 8 * (8 - n1), s2 = 8 * (8 - n2);
				a = (a << s1) | (0x3030303030303030ull & ((1ull << s1) - 1));
				b = (b << s2) | (0x3030303030303030ull & ((1ull << s2) - 1));
				*pp = q + n1 + 1 + n2;
				return float_fast((uint64_t)parse8(a) * pow10_u64[n2] + parse8(b), -n2,
						  neg, v);
			}
		}
	}
	return fast_number(pp, end, v);
}

/* The fast path for the common record: numbers only, unquoted, no blanks, every column
 * numeric. One pass over the bytes parses each number and checks the separator after it,
 * writing straight into the row. Anything else (a quote, text, an empty field, a missing
 * marker, a number strtof must settle, the end of the buffer) returns false before the row
 * counts, and the record goes through tokenize and convert_row, which handle every case and
 * produce the same values. */
static bool fast_row(struct rd *r, size_t cur, size_t *next, float *row, float *tval)
{
	const char *p = r->buf + cur, *end = r->buf + r->len;
	const char sep = r->sep;
	const int ncol = r->ncol, target = r->target;
	int j, k = 0;

	for (j = 0; j < ncol; j++) {
		float v;

		if (!fast_decimal(&p, end, &v))
			return false;
		if (p == end) {
			if (!r->eof || j != ncol - 1)
				return false;
		} else if (j < ncol - 1 ? *p != sep : (*p != '\n' && *p != '\r')) {
			return false;
		}
		if (j == target)
			*tval = v;
		else
			row[k++] = v;
		if (j < ncol - 1)
			p++;
	}
	if (p < end && !eat_eol(r, &p, end))
		return false;
	*next = (size_t)(p - r->buf);
	return true;
}

/* The fast path for records of files with text (categorical) columns, quotes and missing
 * values: numbers as fast_row reads them, empty fields and missing markers, text quoted or
 * not, in one pass. It declines (false, before the row counts) what it does not settle the
 * way convert_row would: a quote escaped as "" or a newline inside quotes, blanks after a
 * closing quote, a NaN, a missing target, a number with blanks or one strtof must settle, a
 * ragged row, the end of the buffer. A level it added to a dictionary before declining is
 * the one convert_row adds for that field, in the same order, so the codes do not change;
 * the missing values of a declined row are not counted (*nmiss counts those of this row). */
static bool mixed_row(struct rd *r, size_t cur, size_t *next, float *row, float *tval,
		      size_t *nmiss)
{
	const char *p = r->buf + cur, *end = r->buf + r->len;
	const char sep = r->sep;
	const int ncol = r->ncol, target = r->target;
	size_t miss = 0;
	int j;

	for (j = 0; j < ncol; j++) {
		struct col *c = &r->cols[j];
		const char *s;
		size_t n;
		float v;

		if (p == end)
			return false;
		if (*p == '"') {
			const char *z = memchr(p + 1, '"', (size_t)(end - p - 1));
			if (!z || z + 1 == end || z[1] == '"' || memchr(p + 1, '\n', (size_t)(z - p - 1)))
				return false;
			s = p + 1;
			n = (size_t)(z - s);
			p = z + 1;
			if (*p != sep && *p != '\n' && *p != '\r')
				return false;
		} else {
			if (c->numeric && !r->numeric_missing) {
				const char *q = p;
				if (fast_decimal(&q, end, &v) && q < end &&
				    (*q == sep || *q == '\n' || *q == '\r')) {
					p = q;
					goto store;
				}
			}
			s = p;
			p = scan_field(p, end, sep);
			if (p == end)
				return false;
			n = (size_t)(p - s);
			while (n && (*s == ' ' || *s == '\t') && sep != *s)
				s++, n--;
			while (n && (s[n - 1] == ' ' || s[n - 1] == '\t') && sep != s[n - 1])
				n--;
		}
		if (is_missing(r, s, n)) {
			if (j == target)
				return false;
			miss++;
			v = NAN;
		} else if (c->numeric) {
			bool ovf;
			if (!gwb_csv_parse_float(s, n, &v, &ovf) || ovf || isnan(v))
				return false;
		} else {
			int32_t code;
			if (dict_code(&c->dict, s, n, &code))
				return false;
			v = (float)code;
		}
store:
		if (j == target)
			*tval = v;
		else
			row[c->feature] = v;
		if (j < ncol - 1) {
			if (*p != sep)
				return false;
			p++;
		} else if (*p != '\n' && *p != '\r') {
			return false;
		}
	}
	if (!eat_eol(r, &p, end))
		return false;
	*next = (size_t)(p - r->buf);
	*nmiss += miss;
	return true;
}

/* Convert the fields of the record that starts at buf[rec] on line `line`. */
static gwb_status convert_row(struct rd *r, size_t rec, size_t line)
{
	float *row;
	int j;
	gwb_status st;

	if (r->nf != r->ncol) {
		size_t at;
		if (r->nf < r->ncol) {
			const struct field *l = &r->f[r->nf - 1];
			at = (size_t)(l->p - r->buf) + l->n + (l->q ? 1 : 0);
		} else {
			at = (size_t)(r->f[r->ncol].p - r->buf) - (r->f[r->ncol].q ? 1 : 0);
		}
		return fail_at(r, GWB_EPARSE, rec, line, at,
			       "ragged row: %d fields where the %s has %d; quote values that contain "
			       "the separator '%s'", r->nf, r->info.header ? "header" : "first row",
			       r->ncol, r->sep == '\t' ? "\\t" : (char[]){r->sep, 0});
	}
	if ((st = reserve_row(r, &row)))
		return st;
	for (j = 0; j < r->ncol; j++) {
		struct col *c = &r->cols[j];
		const struct field *f = &r->f[j];
		const char *p;
		size_t n;
		float v;
		if (f->q == 0 && c->numeric && !r->numeric_missing) {
			/* the hot path: an unquoted number */
			bool ovf;
			if (gwb_csv_parse_float(f->p, f->n, &v, &ovf) && !ovf && !isnan(v))
				goto store;
		}
		if ((st = field_text(r, f, &p, &n)))
			return st;
		if (is_missing(r, p, n)) {
			if (j == r->target) {
				char b[64];
				return fail_at(r, GWB_EPARSE, rec, line,
					       (size_t)(f->p - r->buf) - (f->q ? 1 : 0),
					       "missing target value %s in column \"%s\"; remove the "
					       "row or fill the value", show(p, n, b, sizeof(b)),
					       r->names[j]);
			}
			c->missing++;
			v = NAN;
		} else if (c->numeric) {
			bool ovf;
			char b[64];
			if (!gwb_csv_parse_float(p, n, &v, &ovf))
				return fail_at(r, GWB_EPARSE, rec, line,
					       (size_t)(f->p - r->buf) - (f->q ? 1 : 0),
					       "text %s in numeric column \"%s\"; if the column is "
					       "categorical pass categorical = {\"%s\"}, if it marks a "
					       "missing value pass missing = {%s}",
					       show(p, n, b, sizeof(b)), r->names[j], r->names[j],
					       show(p, n, b, sizeof(b)));
			if (ovf)
				return fail_at(r, GWB_EPARSE, rec, line,
					       (size_t)(f->p - r->buf) - (f->q ? 1 : 0),
					       "number %s in column \"%s\" is outside the float32 "
					       "range (|x| <= 3.4e38)", show(p, n, b, sizeof(b)),
					       r->names[j]);
			if (isnan(v))
				c->missing++;
		} else {
			int32_t code;
			int e = dict_code(&c->dict, p, n, &code);
			if (e == -1)
				return gwb_error(GWB_ENOMEM, "%s: out of memory for the levels of "
						 "column \"%s\"", r->path, r->names[j]);
			if (e == -2)
				return fail_at(r, GWB_EPARSE, rec, line, (size_t)(f->p - r->buf),
					       "column \"%s\" has more than %d distinct values; it "
					       "cannot be categorical", r->names[j], MAX_LEVELS);
			v = (float)code;
		}
store:
		if (j == r->target)
			r->tv[r->rows] = v;
		else
			row[c->feature] = v;
	}
	r->cur_rows++;
	r->rows++;
	return GWB_OK;
}

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
	return strcmp(x, y);   /* "1" and "1.0": a stable order all the same */
}

/* Sort a dictionary's levels and return old code -> new code (caller frees). */
static int32_t *sort_levels(struct dict *d)
{
	char **sorted = malloc(((size_t)d->n + 1) * sizeof(*sorted));
	int32_t *map = malloc(((size_t)d->n + 1) * sizeof(*map));
	int i;

	if (!sorted || !map) {
		free(sorted);
		free(map);
		return NULL;
	}
	if (d->n)   /* (a column of missing values only has no levels) */
		memcpy(sorted, d->str, (size_t)d->n * sizeof(*sorted));
	/* levels that all read as numbers ("2", "10", "1.5") sort by value, others by bytes */
	{
		bool numeric = d->n > 0;
		for (i = 0; i < d->n && numeric; i++) {
			float v;
			bool ovf;
			numeric = gwb_csv_parse_float(d->str[i], strlen(d->str[i]), &v, &ovf) && !isnan(v);
		}
		qsort(sorted, (size_t)d->n, sizeof(*sorted), numeric ? cmp_numstr : cmp_str);
	}
	/* the dictionary still finds codes by string: look each sorted string up */
	for (i = 0; i < d->n; i++) {
		int32_t old = -1;
		dict_code(d, sorted[i], strlen(sorted[i]), &old);
		map[old] = i;
	}
	if (d->n)
		memcpy(d->str, sorted, (size_t)d->n * sizeof(*sorted));
	free(sorted);
	return map;
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

/* fn on each of n job structs (size bytes apart), job 0 on this thread and the others on
 * threads of their own (one that cannot start runs here); returns when all are done. */
static void run_jobs(void *jobs, size_t size, int n, void *(*fn)(void *))
{
	pthread_t tid[64];
	char *j = jobs;
	int k, started;

	for (k = 1; k < n && k < 64; k++)
		if (pthread_create(&tid[k], NULL, fn, j + (size_t)k * size))
			break;
	started = k;
	fn(j);
	for (k = started; k < n; k++)
		fn(j + (size_t)k * size);
	for (k = 1; k < started; k++)
		pthread_join(tid[k], NULL);
}

/* Transpose chunks [c0, c1) into X (rows r->rows apart) from row row0, releasing each at once;
 * *stop set (by any group) ends them all between chunks. */
struct store_job {
	struct rd *r;
	float *X;
	size_t c0, c1, row0, stored;
	atomic_int *stop;
};

static void *store_group(void *arg)
{
	struct store_job *j = arg;
	struct rd *r = j->r;
	size_t F = (size_t)r->ncol - 1, row = j->row0;

	for (size_t i = j->c0; i < j->c1; i++) {
		/* a chunk is 4 MiB: far less than 100 ms apart */
		if (atomic_load(j->stop) || gwb_intr_pending()) {
			atomic_store(j->stop, 1);
			break;
		}
		gwb_transpose_f32(r->chunk[i], r->chunk_n[i], F, F, j->X + row, r->rows, 32, 1);
		munmap(r->chunk[i], r->chunk_rows * F * sizeof(float));
		r->chunk[i] = NULL;
		row += r->chunk_n[i];
		j->stored += r->chunk_n[i];
	}
	return NULL;
}

/* The row-major chunks into the column-major X, on the threads the rows were read with (in
 * contiguous groups of chunks: the transposes and the first touch of X's new pages run side by
 * side); *stored: the rows stored. */
static gwb_status store_chunks(struct rd *r, float *X, size_t *stored)
{
	struct store_job jobs[64];
	atomic_int stop;
	size_t per, c = 0, row = 0;
	int n = r->info.threads > 1 ? r->info.threads : 1, k;

	if (n > 64)
		n = 64;
	if ((size_t)n > r->nchunk)
		n = r->nchunk ? (int)r->nchunk : 1;
	atomic_init(&stop, 0);
	per = (r->nchunk + (size_t)n - 1) / (size_t)n;
	for (k = 0; k < n; k++) {
		size_t c1 = c + per < r->nchunk ? c + per : r->nchunk;
		jobs[k] = (struct store_job){r, X, c, c1, row, 0, &stop};
		for (; c < c1; c++)
			row += r->chunk_n[c];
	}
	run_jobs(jobs, sizeof(jobs[0]), n, store_group);
	*stored = 0;
	for (k = 0; k < n; k++)
		*stored += jobs[k].stored;
	if (atomic_load(&stop))
		return gwb_error(GWB_EINTR, "%s: loading interrupted (%zu of %zu rows stored)",
				 r->path, *stored, r->rows);
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
	/* (no huge pages for X: the transpose writes the start of every column first, so 2 MiB
	 * pages would make F x 2 MiB resident ahead of the chunks released; and measured on a
	 * 1M x 16 load, their faults (zeroing and compaction, 2 MiB each) took 80 ms against
	 * 45 ms for the 4 KiB ones) */
	/* features: transpose each row-major chunk into the columns, releasing it at once */
	if (r->nchunk)
		r->chunk_n[r->nchunk - 1] = r->cur_rows;
	if ((st = store_chunks(r, d->X, &done)))
		goto fail;
	r->nchunk = 0;
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
		if (!(map = sort_levels(&c->dict))) {
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
		int32_t *map = sort_levels(&tc->dict);
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
	gwb_dataset_free(d);
	return st;
}

/* --- the parallel reader ------------------------------------------------------------------
 * A large file is cut into byte ranges, eight per thread (at least PAR_RANGE_MIN bytes each),
 * which the threads take in turn as they finish one (prun). A record belongs to the range its
 * first byte lies in. A worker finds the first record start of its range, the byte after the
 * first newline outside quotes at or after the range's first byte less one (whether that byte
 * lies inside quotes comes from the parity of the quotes before it, counted over all ranges in
 * a first pass; when no quoted field of the first block holds a line break the pass is
 * skipped and "outside" assumed, which the check below proves or refutes). It then reads
 * records with the sequential reader's own steps (fast_row, mixed_row, tokenize
 * and convert_row) until one starts past its range, with pread into its own buffer, into its
 * own chunks, dictionaries and missing counts. Then the ranges are checked: each must end
 * exactly where the next one started, which makes every start a true record start (by
 * induction from the first range, which starts on the first data row); it fails only where
 * quotes are used in a way their parity cannot see (a quote inside an unquoted field), and then
 * the quotes are counted (if they were not) or the sequential reader reads the file. The
 * dictionaries are merged in range order, each worker's levels in its own first-seen order,
 * which is the first-seen order of the whole file: the codes do not depend on the thread count.
 * A parse error stops every worker and the sequential reader reads the file again, so that the
 * error it reports is the first one, with its line and column. */

#define PAR_MIN_BYTES ((size_t)64 << 20)
#define PAR_RANGE_MIN ((size_t)4 << 20)

enum { PAR_ERROR = -1, PAR_DECLINED = 0, PAR_DONE = 1, PAR_MISMATCH = 2 };

struct pworker {
	/* buf, len, pos, eof, cols (own dictionaries), chunks, tv. Aligned to a cache line with
	 * the array (aligned_alloc): a worker writes pos and len every record, and its
	 * neighbour reads its own fields every record, so a shared line ping-pongs */
	_Alignas(64) struct rd r;
	size_t a, b;            /* file range: records starting in [a, b) */
	size_t qa, qb;          /* the first pass counts the quotes in [qa, qb) */
	size_t quotes;
	size_t start, end;      /* the first record start it found, the one it stopped at */
	bool inq;               /* byte a - 1 lies inside quotes */
	bool all_numeric;       /* try fast_row first */
	int fd;
	gwb_status st;
	int declined;           /* a parse error: the sequential reader reads the file */
	bool first;             /* the range that starts at the first data row */
	char msg[400];          /* the worker thread's error message (messages are per thread) */
	atomic_int *stop;
	atomic_size_t *done;    /* bytes parsed by all workers (progress) */
	bool progress;
};

/* pread more after buf[keep..len), moving it to the front (or growing the buffer). A NUL
 * byte is a parse error (the sequential reader reports it). */
static gwb_status prefill(struct rd *r, int fd, size_t keep, size_t limit)
{
	ssize_t got;

	if (keep) {
		memmove(r->buf, r->buf + keep, r->len - keep);
		r->len -= keep;
		r->off += keep;
		r->pos -= keep;
	} else if (r->len == r->cap) {
		char *nb = realloc(r->buf, r->cap * 2 + 1);
		if (!nb)
			return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		r->buf = nb;
		r->cap *= 2;
	}
	while (r->len < r->cap && !r->eof) {
		size_t want = r->cap - r->len;
		if (r->off + r->len >= limit) {
			r->eof = true;
			break;
		}
		if (want > limit - (r->off + r->len))
			want = limit - (r->off + r->len);
		got = pread(fd, r->buf + r->len, want, (off_t)(r->off + r->len));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return gwb_error(GWB_EIO, "%s: read failed: %s", r->path, strerror(errno));
		if (got == 0) {
			r->eof = true;
			break;
		}
		if (memchr(r->buf + r->len, 0, (size_t)got))
			return gwb_error(GWB_EPARSE, "%s: a NUL byte", r->path);
		r->len += (size_t)got;
	}
	r->buf[r->len] = 0;
	return GWB_OK;
}

/* Stop every worker after an error in this one, keeping its message for the caller. */
static void *pfail(struct pworker *w, gwb_status st)
{
	w->st = st;
	snprintf(w->msg, sizeof(w->msg), "%s", gwb_errmsg());
	atomic_store(w->stop, 1);
	return NULL;
}

/* A parse error declines (the sequential reader finds it again); anything else fails. */
static void *pdecline(struct pworker *w, gwb_status st)
{
	if (st != GWB_EPARSE)
		return pfail(w, st);
	w->declined = 1;
	atomic_store(w->stop, 1);
	return NULL;
}

static size_t count_quotes(const char *p, size_t n)
{
	size_t k = 0, i = 0;
#ifdef __SSE2__
	const __m128i vq = _mm_set1_epi8('"');

	/* per-byte counters (a match is -1), summed every 255 blocks before they wrap */
	while (i + 16 <= n) {
		__m128i acc = _mm_setzero_si128();
		size_t stop = i + 16 * 255 < n ? i + 16 * 255 : n;
		for (; i + 16 <= stop; i += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(x, vq));
		}
		acc = _mm_sad_epu8(acc, _mm_setzero_si128());
		k += (size_t)_mm_cvtsi128_si32(acc) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(acc, 8));
	}
#endif
	for (; i < n; i++)
		k += p[i] == '"';
	return k;
}

/* The quotes in the file's bytes [at, hi), read into the worker's buffer, added to *q; true
 * when it failed (w->st set) or was stopped. */
static bool pcount_span(struct pworker *w, size_t at, size_t hi, size_t *q)
{
	struct rd *r = &w->r;

	while (at < hi) {
		if (atomic_load(w->stop))
			return true;
		size_t want = hi - at < r->cap ? hi - at : r->cap;
		ssize_t got = pread(w->fd, r->buf, want, (off_t)at);
		if (got < 0 && errno == EINTR) {
			if (gwb_intr_pending()) {
				pfail(w, gwb_error(GWB_EINTR, "%s: loading interrupted", r->path));
				return true;
			}
			continue;
		}
		if (got < 0) {
			pfail(w, gwb_error(GWB_EIO, "%s: read failed: %s", r->path, strerror(errno)));
			return true;
		}
		if (got == 0)
			break;
		*q += count_quotes(r->buf, (size_t)got);
		at += (size_t)got;
	}
	return false;
}

/* A line break inside quotes in p[0..n), or p ends inside quotes. */
static bool quoted_break(const char *p, size_t n)
{
	const char *q = memchr(p, '"', n), *end = p + n;

	while (q) {
		const char *z = memchr(q + 1, '"', (size_t)(end - q - 1));
		if (!z || memchr(q + 1, '\n', (size_t)(z - q - 1)) || memchr(q + 1, '\r', (size_t)(z - q - 1)))
			return true;
		q = z + 1 < end ? memchr(z + 1, '"', (size_t)(end - z - 1)) : NULL;
	}
	return false;
}

/* The first pass: the quotes in the range's [qa, qb). */
static void *pcount(void *arg)
{
	struct pworker *w = arg;
	size_t q = 0;

	if (!pcount_span(w, w->qa, w->qb, &q))
		w->quotes = q;
	return NULL;
}

static void *pwork(void *arg)
{
	struct pworker *w = arg;
	struct rd *r = &w->r;
	size_t next, last_report = 0;
	gwb_status st;
	int t;

	r->len = r->pos = 0;
	r->eof = false;
	r->line = 0;       /* lines read (the sum over the ranges is the file's) */
	if (w->first) {
		r->off = w->a;
	} else {
		bool inq = w->inq;
		r->off = w->a - 1;
		for (;;) {
			char c;
			if (r->pos == r->len) {
				if (r->eof)
					break;
				if ((st = prefill(r, w->fd, r->len, r->size)))
					return pdecline(w, st);
				continue;
			}
			c = r->buf[r->pos++];
			if (c == '"')
				inq = !inq;
			else if (c == '\n' && !inq)
				break;
		}
	}
	w->start = r->off + r->pos;
	for (;;) {
		float *row;
		if (atomic_load(w->stop))
			return NULL;
		if (r->off + r->pos >= w->b)
			break;   /* this record is the next range's */
		if (r->pos == r->len) {
			if (r->eof)
				break;
			if ((st = prefill(r, w->fd, r->pos, r->size)))
				return pdecline(w, st);
			if (gwb_intr_pending())
				return pfail(w, gwb_error(GWB_EINTR, "%s: loading interrupted", r->path));
			continue;
		}
		if ((st = reserve_row(r, &row)))
			return pfail(w, st);
		if ((w->all_numeric && fast_row(r, r->pos, &next, row, &r->tv[r->rows])) ||
		    mixed_row(r, r->pos, &next, row, &r->tv[r->rows], &r->nmiss)) {
			r->cur_rows++;
			r->rows++;
			r->line++;
			r->pos = next;
		} else {
			t = tokenize(r, r->pos, &next, r->line, &st);
			if (t == TOK_ERR)
				return pdecline(w, st);
			if (t == TOK_EOF)
				break;
			if (t == TOK_MORE) {
				if ((st = prefill(r, w->fd, r->pos, r->size)))
					return pdecline(w, st);
				if (gwb_intr_pending())
					return pfail(w, gwb_error(GWB_EINTR, "%s: loading interrupted",
								  r->path));
				continue;
			}
			if (!(r->nf == 1 && !r->f[0].n && !r->f[0].q) &&
			    (st = convert_row(r, r->pos, r->line)))
				return pdecline(w, st);
			r->line += 1 + r->nl;
			r->pos = next;
		}
		if (w->progress && r->off + r->pos - last_report > ((size_t)8 << 20)) {
			size_t d = r->off + r->pos - last_report;
			last_report = r->off + r->pos;
			gwb_progress_update((double)atomic_fetch_add(w->done, d) + (double)d, NULL, 0);
		}
	}
	w->end = r->off + r->pos;
	return NULL;
}

/* Run fn on the n ranges' workers over `threads` threads (this one too), each taking the next
 * range when it is done with one: a thread that runs slower (a busy core, a VM's vCPU that
 * the host slows) takes fewer ranges instead of holding up the end. */
struct prun_ctx {
	struct pworker *w;
	int n;
	atomic_int next;
	void *(*fn)(void *);
};

static void *prun_main(void *arg)
{
	struct prun_ctx *c = arg;
	int i;

	while ((i = atomic_fetch_add(&c->next, 1)) < c->n)
		c->fn(&c->w[i]);
	return NULL;
}

static void prun(struct pworker *w, int n, int threads, void *(*fn)(void *))
{
	struct prun_ctx c = {w, n, 0, fn};

	if (threads > n)
		threads = n;
	run_jobs(&c, 0, threads, prun_main);   /* size 0: every thread gets the one context */
}

/* Merge the workers' dictionaries of column j into r's, in range order; the map of worker i
 * (local code -> merged code) goes to r->part_map[i * ncol + j], NULL where it is the
 * identity. PAR_DECLINED when the merged column has too many levels (the sequential reader
 * says where), PAR_ERROR when out of memory. */
static int merge_levels(struct rd *r, struct pworker *w, int n, int j, gwb_status *st)
{
	int i, k;

	for (i = 0; i < n; i++) {
		struct dict *d = &w[i].r.cols[j].dict;
		int32_t *map;
		bool ident = true;
		if (!d->n)
			continue;
		if (!(map = malloc((size_t)d->n * sizeof(*map)))) {
			*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			return PAR_ERROR;
		}
		for (k = 0; k < d->n; k++) {
			int e = dict_code(&r->cols[j].dict, d->str[k], strlen(d->str[k]), &map[k]);
			if (e) {
				free(map);
				if (e == -2)
					return PAR_DECLINED;
				*st = gwb_error(GWB_ENOMEM, "%s: out of memory for the levels of "
						"column \"%s\"", r->path, r->names[j]);
				return PAR_ERROR;
			}
			ident &= map[k] == k;
		}
		if (ident)
			free(map);
		else
			r->part_map[(size_t)i * (size_t)r->ncol + (size_t)j] = map;
	}
	return PAR_DONE;
}

static void part_free(struct rd *r)
{
	size_t i;

	if (r->part_map)
		for (i = 0; i < (size_t)r->npart * (size_t)r->ncol; i++)
			free(r->part_map[i]);
	free(r->part_map);
	free(r->part_rows);
	r->part_map = NULL;
	r->part_rows = NULL;
	r->npart = 0;
}

/* Try the parallel reader from file offset `start` (the first data row); parity: count the
 * quotes first. PAR_DONE (rows in r), PAR_DECLINED or PAR_MISMATCH (r untouched), PAR_ERROR
 * (st set). */
static int parallel_load(struct rd *r, size_t start, int threads, size_t range_min, bool parity,
			 bool progress, gwb_status *st)
{
	struct pworker *w;
	atomic_int stop;
	atomic_size_t done;
	size_t per, total_rows = 0, total_chunks = 0, k;
	int n, i, j, result = PAR_DONE;
	bool all_numeric = true;

	if (threads > 64)
		threads = 64;
	/* eight ranges a thread (of at least range_min bytes, at most 64): the threads take them
	 * as they finish, so that the slowest thread does not set the time */
	size_t nr = (r->size - start) / (range_min ? range_min : 1);
	if (nr > (size_t)threads * 8)
		nr = (size_t)threads * 8;
	if (nr > 64)
		nr = 64;
	if (nr < (size_t)threads)
		nr = (size_t)threads;
	int ranges = (int)nr;
	per = (r->size - start + (size_t)ranges - 1) / (size_t)ranges;
	if ((w = aligned_alloc(64, (size_t)ranges * sizeof(*w))))
		memset(w, 0, (size_t)ranges * sizeof(*w));
	if (!w) {
		*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		return PAR_ERROR;
	}
	for (j = 0; j < r->ncol; j++)
		all_numeric &= r->cols[j].numeric != 0;
	atomic_init(&stop, 0);
	atomic_init(&done, start);
	for (n = 0; n < ranges; n++) {
		struct rd *q = &w[n].r;
		w[n].a = start + (size_t)n * per;
		w[n].b = w[n].a + per < r->size ? w[n].a + per : r->size;
		if (w[n].a >= r->size)
			w[n].a = w[n].b = r->size;
		w[n].qa = n ? w[n].a - 1 : w[n].a;
		w[n].qb = w[n].b - 1;
		w[n].fd = r->fd;
		w[n].first = n == 0;
		w[n].all_numeric = all_numeric && !r->numeric_missing;
		w[n].stop = &stop;
		w[n].done = &done;
		w[n].progress = progress;
		q->path = r->path;
		q->sep = r->sep;
		q->ncol = r->ncol;
		q->target = r->target;
		q->names = r->names;
		q->info.header = r->info.header;
		q->missing = r->missing;
		q->n_missing = r->n_missing;
		q->numeric_missing = r->numeric_missing;
		q->chunk_rows = r->chunk_rows;
		q->size = r->size;
		q->fd = -1;
		q->cap = ((size_t)1 << 20);
		q->buf = malloc(q->cap + 1);
		q->cols = malloc((size_t)r->ncol * sizeof(*q->cols));
		if (!q->buf || !q->cols) {
			*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			result = PAR_ERROR;
			n++;
			goto out;
		}
		memcpy(q->cols, r->cols, (size_t)r->ncol * sizeof(*q->cols));
		for (j = 0; j < r->ncol; j++) {
			memset(&q->cols[j].dict, 0, sizeof(q->cols[j].dict));
			q->cols[j].missing = 0;
		}
	}
	if (parity) {
		bool inq = false;
		prun(w, n - 1, threads, pcount);   /* the last range's count is not needed */
		for (i = 0; i < n; i++) {
			w[i].inq = inq;
			inq ^= w[i].quotes & 1;
		}
	}
	for (i = 0; i < n && !w[i].st; i++)
		;
	if (i == n)
		prun(w, n, threads, pwork);
	for (i = 0; i < n; i++) {
		if (w[i].st && result != PAR_ERROR) {
			*st = gwb_error(w[i].st, "%s", w[i].msg);
			result = PAR_ERROR;
		}
		if (w[i].declined && result == PAR_DONE)
			result = PAR_DECLINED;
		if (result == PAR_DONE && i + 1 < n && w[i].end != w[i + 1].start)
			result = PAR_MISMATCH;
		total_rows += w[i].r.rows;
		total_chunks += w[i].r.nchunk;
	}
	if (result != PAR_DONE)
		goto out;
	r->part_map = calloc((size_t)n * (size_t)r->ncol, sizeof(*r->part_map));
	r->part_rows = calloc((size_t)n, sizeof(*r->part_rows));
	if (!r->part_map || !r->part_rows) {
		*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		result = PAR_ERROR;
		goto out;
	}
	r->npart = n;
	for (j = 0; j < r->ncol && result == PAR_DONE; j++)
		if (!r->cols[j].numeric)
			result = merge_levels(r, w, n, j, st);
	if (result != PAR_DONE)
		goto out;
	/* hand the workers' chunks and targets to r, in range order */
	r->chunk = calloc(total_chunks + 1, sizeof(*r->chunk));
	r->chunk_n = calloc(total_chunks + 1, sizeof(*r->chunk_n));
	r->tv = malloc((total_rows + 1) * sizeof(float));
	if (!r->chunk || !r->chunk_n || !r->tv) {
		*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		result = PAR_ERROR;
		goto out;
	}
	r->chunk_cap = total_chunks + 1;
	for (i = 0; i < n; i++) {
		struct rd *q = &w[i].r;
		const int32_t *tmap = r->part_map[(size_t)i * (size_t)r->ncol + (size_t)r->target];
		if (q->nchunk)
			q->chunk_n[q->nchunk - 1] = q->cur_rows;
		for (k = 0; k < q->nchunk; k++) {
			r->chunk[r->nchunk] = q->chunk[k];
			r->chunk_n[r->nchunk++] = q->chunk_n[k];
		}
		q->nchunk = 0;
		if (tmap)   /* a categorical target: the merged codes */
			for (k = 0; k < q->rows; k++)
				r->tv[r->rows + k] = (float)tmap[(int32_t)q->tv[k]];
		else if (q->rows)
			memcpy(r->tv + r->rows, q->tv, q->rows * sizeof(float));
		r->part_rows[i] = q->rows;
		r->rows += q->rows;
		r->line += q->line;
		r->crlf |= q->crlf;
		r->nmiss += q->nmiss;
		for (j = 0; j < r->ncol; j++)
			r->cols[j].missing += q->cols[j].missing;
	}
	r->cur_rows = r->nchunk ? r->chunk_n[r->nchunk - 1] : 0;
	r->tv_cap = total_rows + 1;
out:
	for (i = 0; i < n; i++) {
		struct rd *q = &w[i].r;
		for (k = 0; k < q->nchunk; k++)
			munmap(q->chunk[k], q->chunk_rows * (size_t)(q->ncol - 1) * sizeof(float));
		free(q->chunk);
		free(q->chunk_n);
		free(q->tv);
		free(q->buf);
		free(q->f);
		free(q->scratch);
		if (q->cols)
			for (j = 0; j < q->ncol; j++)
				dict_free(&q->cols[j].dict);
		free(q->cols);
	}
	free(w);
	if (result != PAR_DONE && result != PAR_ERROR) {
		/* leave r as it was for the sequential reader */
		free(r->chunk);
		free(r->chunk_n);
		free(r->tv);
		r->chunk = NULL;
		r->chunk_n = NULL;
		r->tv = NULL;
		r->nchunk = r->chunk_cap = r->rows = r->cur_rows = r->tv_cap = 0;
		for (j = 0; j < r->ncol; j++)
			dict_free(&r->cols[j].dict);
		part_free(r);
	}
	return result;
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
	bool progress = false, fast, slow;
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
	if (r.len >= 2 && ((unsigned char)r.buf[0] == 0xff && (unsigned char)r.buf[1] == 0xfe)) {
		st = gwb_error(GWB_EPARSE, "%s: UTF-16 text (byte order mark FF FE); save it as "
			       "UTF-8", path);
		goto out;
	}
	if (memchr(r.buf, 0, r.len)) {
		st = gwb_error(GWB_EPARSE, "%s: binary data (a NUL byte at offset %zu); data.load "
			       "reads CSV text or .gwbd files", path,
			       (size_t)((char *)memchr(r.buf, 0, r.len) - r.buf));
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
					       "first %zu); data.load reads CSV text or .gwbd files",
					       path, ctl, n);
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
		t = tokenize(&r, r.pos, &next, r.line, &st);
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
		k = dict_find(&r.name_set, opts->categorical[j], strlen(opts->categorical[j]));
		if (k < 0) {
			st = gwb_error(GWB_EINVAL, "%s: categorical column \"%s\" is not in the file",
				       path, opts->categorical[j]);
			goto out;
		}
		r.cols[k].numeric = 0;
	}
	r.chunk_rows = CHUNK_BYTES / ((size_t)(r.ncol - 1) * sizeof(float));
	if (r.chunk_rows < 64)
		r.chunk_rows = 64;
	if (opts->progress && r.size >= PROGRESS_MIN_BYTES) {
		gwb_progress_begin("load", (double)r.size);
		progress = true;
	}
	/* the data rows */
	fast = !r.numeric_missing;
	for (j = 0; j < r.ncol; j++)
		fast &= r.cols[j].numeric;
	/* the switches (switches.h): csv.fast off reads every record through the tokenizer (as
	 * opts->slow does), csv.parallel off keeps to one thread */
	slow = opts->slow || !gwb_switch_on(GWB_SW_CSV_FAST);
	if (!slow && r.size && r.size >= (opts->par_min ? opts->par_min : PAR_MIN_BYTES) &&
	    gwb_switch_on(GWB_SW_CSV_PARALLEL)) {
		int threads = opts->threads > 0 ? opts->threads : gwb_cpu_count();
		if (threads > 1) {
			/* a quoted field with a line break in the first block: count the quotes first
			 * to find where the ranges start. Otherwise each range starts after its first
			 * line break, and the check that every range ends where the next one starts
			 * proves those starts (a quoted line break later on fails it, and the quotes
			 * are counted then) */
			bool parity = quoted_break(r.buf, r.len);
			/* ranges of PAR_RANGE_MIN bytes and more; the tests' small par_min makes them
			 * small too (several a thread on a small file) */
			size_t rmin = opts->par_min ? opts->par_min : PAR_RANGE_MIN;
			int pr = parallel_load(&r, r.off + r.pos, threads, rmin, parity, progress, &st);
			if (pr == PAR_MISMATCH && !parity)
				pr = parallel_load(&r, r.off + r.pos, threads, rmin, true, progress, &st);
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
			if ((st = reserve_row(&r, &row)))
				goto out;
			if ((fast && fast_row(&r, r.pos, &next, row, &r.tv[r.rows])) ||
			    mixed_row(&r, r.pos, &next, row, &r.tv[r.rows], &r.nmiss)) {
				r.cur_rows++;
				r.rows++;
				r.line++;
				r.pos = next;
				continue;
			}
		}
		t = tokenize(&r, r.pos, &next, r.line, &st);
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
				gwb_progress_update((double)(r.off + r.pos), NULL, 0);
			continue;
		}
		if (!(r.nf == 1 && !r.f[0].n && !r.f[0].q)) {
			if ((st = convert_row(&r, r.pos, r.line)))
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
	r.info.missing = r.nmiss;
	for (j = 0; j < r.ncol; j++)
		r.info.missing += r.cols[j].missing;
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

/* --- writing -------------------------------------------------------------------------------- */

#define WBLOCK_ROWS 2048

struct wjob {
	const gwb_dataset *d;
	char sep;
	int decimals;
	size_t r0, r1;
	char *buf;
	size_t len, cap;
	int oom;
};

static int wreserve(struct wjob *w, size_t more)
{
	if (w->len + more <= w->cap)
		return 0;
	size_t cap = (w->cap ? w->cap * 2 : 1 << 16);
	while (cap < w->len + more)
		cap *= 2;
	char *nb = realloc(w->buf, cap);
	if (!nb) {
		w->oom = 1;
		return -1;
	}
	w->buf = nb;
	w->cap = cap;
	return 0;
}

static void wtext(struct wjob *w, const char *s)
{
	size_t n = strlen(s), i;
	bool q = n && (s[0] == ' ' || s[n - 1] == ' ' || s[0] == '\t' || s[n - 1] == '\t');

	for (i = 0; i < n && !q; i++)
		q = s[i] == w->sep || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!n) {
		/* an empty string would read back as missing: write it quoted */
		q = true;
	}
	if (wreserve(w, 2 * n + 3))
		return;
	if (!q) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
		return;
	}
	w->buf[w->len++] = '"';
	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			w->buf[w->len++] = '"';
		w->buf[w->len++] = s[i];
	}
	w->buf[w->len++] = '"';
}

static const double wpow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

static void wnum(struct wjob *w, float v)
{
	char *o;
	double a;

	if (isnan(v) || wreserve(w, 48))
		return;
	o = w->buf + w->len;
	a = fabs((double)v);
	if (w->decimals >= 0 && w->decimals <= 9 && a * wpow10[w->decimals] < 9e15) {
		uint64_t x = (uint64_t)llround(a * wpow10[w->decimals]);
		uint64_t ip = x / (uint64_t)wpow10[w->decimals], fp = x % (uint64_t)wpow10[w->decimals];
		char t[24];
		int k = 0, i;
		if (v < 0 && x)
			*o++ = '-';
		do {
			t[k++] = (char)('0' + ip % 10);
			ip /= 10;
		} while (ip);
		while (k)
			*o++ = t[--k];
		if (w->decimals) {
			*o++ = '.';
			for (i = w->decimals - 1; i >= 0; i--) {
				o[i] = (char)('0' + fp % 10);
				fp /= 10;
			}
			o += w->decimals;
		}
		w->len = (size_t)(o - w->buf);
		return;
	}
	/* the shortest of %.6g .. %.9g that reads back as the same float (9 always does) */
	{
		int prec, k = 0;
		for (prec = 6; prec <= 9; prec++) {
			float b;
			bool ovf;
			k = snprintf(o, 48, "%.*g", prec, (double)v);
			if (prec == 9 || (gwb_csv_parse_float(o, (size_t)k, &b, &ovf) && b == v))
				break;
		}
		w->len += (size_t)k;
	}
}

static void *wformat(void *arg)
{
	struct wjob *w = arg;
	const gwb_dataset *d = w->d;
	size_t i;
	int j;

	w->len = 0;
	for (i = w->r0; i < w->r1 && !w->oom; i++) {
		for (j = 0; j < d->features; j++) {
			float v = d->X[(size_t)j * d->rows + i];
			if (d->cat_levels[j] && !isnan(v) && v >= 0 && (int)v < d->cat_count[j])
				wtext(w, d->cat_levels[j][(int)v]);
			else
				wnum(w, v);
			if (!wreserve(w, 1))
				w->buf[w->len++] = w->sep;
		}
		if (d->task == GWB_TASK_CLASSIFICATION)
			wtext(w, d->class_names[d->y[i]] ? d->class_names[d->y[i]] : "");
		else
			wnum(w, d->yr[i]);
		if (!wreserve(w, 1))
			w->buf[w->len++] = '\n';
	}
	return NULL;
}


gwb_status gwb_csv_write(const gwb_dataset *d, const char *path, char sep, int decimals,
			 int threads)
{
	struct wjob jobs[64];
	gwb_status st = GWB_OK;
	size_t r0;
	gwb_afile a;
	int k, j, nt;

	if (!sep)
		sep = ',';
	if (sep == '"' || sep == '\n' || sep == '\r')
		return gwb_error(GWB_EINVAL, "write_csv: the separator cannot be a quote or a newline");
	if (decimals > 9)
		return gwb_error(GWB_EINVAL, "write_csv: decimals must be <= 9 (got %d)", decimals);
	nt = threads > 0 ? threads : gwb_cpu_count();
	if (nt > 64)
		nt = 64;
	if ((st = gwb_afile_open(&a, path, "write_csv")))
		return st;
	memset(jobs, 0, sizeof(jobs));
	for (k = 0; k < nt; k++) {
		jobs[k].d = d;
		jobs[k].sep = sep;
		jobs[k].decimals = decimals;
	}
	/* the header */
	for (j = 0; j <= d->features; j++) {
		wtext(&jobs[0], j < d->features ? (d->names[j] ? d->names[j] : "") :
			       (d->target ? d->target : "target"));
		if (!wreserve(&jobs[0], 1))
			jobs[0].buf[jobs[0].len++] = j < d->features ? sep : '\n';
	}
	if (jobs[0].oom || (st = gwb_afile_write(&a, jobs[0].buf, jobs[0].len)))
		goto out;
	gwb_progress_begin("write", (double)d->rows);
	for (r0 = 0; r0 < d->rows;) {
		int n = 0;
		for (k = 0; k < nt && r0 < d->rows; k++, n++) {
			jobs[k].r0 = r0;
			jobs[k].r1 = r0 + WBLOCK_ROWS < d->rows ? r0 + WBLOCK_ROWS : d->rows;
			r0 = jobs[k].r1;
		}
		run_jobs(jobs, sizeof(jobs[0]), n, wformat);
		for (k = 0; k < n; k++) {
			if (jobs[k].oom) {
				st = gwb_error(GWB_ENOMEM, "write_csv: out of memory");
				goto out_end;
			}
			if ((st = gwb_afile_write(&a, jobs[k].buf, jobs[k].len)))
				goto out_end;
		}
		gwb_progress_update((double)r0, NULL, 0);
		if (gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "write_csv: interrupted after %zu rows; %s was "
				       "left as it was", r0, path);
			goto out_end;
		}
	}
out_end:
	gwb_progress_end();
out:
	if (!st && jobs[0].oom)
		st = gwb_error(GWB_ENOMEM, "write_csv: out of memory");
	for (k = 0; k < nt; k++)
		free(jobs[k].buf);
	if (st) {
		gwb_afile_abort(&a);
		return st;
	}
	return gwb_afile_commit(&a);
}
