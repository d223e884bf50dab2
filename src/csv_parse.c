/* csv_parse.c - records into rows, for both CSV readers (csv.c's sequential one and
 * csv_par.c's byte ranges): the number parser (gwb_csv_parse_float, correctly rounded float32:
 * Clinger's fast path with a midpoint guard, strtof for the rest), the quote-aware tokenizer
 * (SSE2 field scan), the level dictionaries (string -> code in first-seen order), the row
 * store (row-major rows in mmap'd chunks that the reader owns and build() releases) and the
 * converters that fill it: the one-pass fast paths for rows of numbers (csv_fast_row) and of
 * mixed fields (csv_mixed_row), and csv_convert_row after the tokenizer for everything else,
 * which gives the same values and says file:line:column for what it refuses. */
#define _GNU_SOURCE
#include "csv_impl.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hugemap.h"

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

void csv_dict_free(struct dict *d)
{
	int i;

	if (d->arena)
		gwb_arena_free(d->arena);
	else
		for (i = 0; i < d->n; i++)
			free(d->str[i]);
	free(d->str);
	free(d->slot);
	memset(d, 0, sizeof(*d));
}

static int dict_rehash(struct dict *d, size_t nslot)
{
	struct dslot *s = calloc(nslot, sizeof(*s));
	size_t i, k;

	if (!s)
		return -1;
	for (i = 0; i < d->nslot; i++) {
		if (!d->slot[i].code)
			continue;
		for (k = d->slot[i].hash & (nslot - 1); s[k].code; k = (k + 1) & (nslot - 1))
			;
		s[k] = d->slot[i];
	}
	free(d->slot);
	d->slot = s;
	d->nslot = nslot;
	return 0;
}

/* The code of s[0..n), adding it when new. -1 out of memory, -2 too many levels. A probe
 * compares the slot's hash first: a new level (most of them in a column of free text) is
 * placed without reading any other level's string. */
static int dict_append(struct dict *d, const char *s, size_t n, int32_t *code)
{
	char *c;

	if (d->n >= (d->text ? INT32_MAX - 1 : MAX_LEVELS))
		return -2;
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 16;
		char **ns = realloc(d->str, (size_t)cap * sizeof(*ns));
		if (!ns)
			return -1;
		d->str = ns;
		d->cap = cap;
	}
	if (d->text) {
		if ((!d->arena && !(d->arena = gwb_arena_new())) ||
		    !(c = gwb_arena_strndup(d->arena, s, n)))
			return -1;
	} else {
		if (!(c = malloc(n + 1)))
			return -1;
		memcpy(c, s, n);
		c[n] = 0;
	}
	d->str[d->n] = c;
	*code = d->n++;
	return 0;
}

int csv_dict_code(struct dict *d, const char *s, size_t n, int32_t *code)
{
	uint32_t h;
	size_t k;
	int rc;

	if (d->append || d->text)
		return dict_append(d, s, n, code);
	if (d->may_append && ++d->looks == APPEND_PROBE && d->n > APPEND_PROBE / 2) {
		d->append = true;
		free(d->slot);
		d->slot = NULL;
		d->nslot = 0;
		return dict_append(d, s, n, code);
	}
	h = str_hash(s, n);
	if (!d->slot && dict_rehash(d, 64))
		return -1;
	for (k = h & (d->nslot - 1); d->slot[k].code; k = (k + 1) & (d->nslot - 1)) {
		int i = d->slot[k].code - 1;
		if (d->slot[k].hash == h && !strncmp(d->str[i], s, n) && d->str[i][n] == 0) {
			*code = i;
			return 0;
		}
	}
	if ((rc = dict_append(d, s, n, code)))
		return rc;
	d->slot[k].hash = h;
	d->slot[k].code = *code + 1;
	if ((size_t)d->n * 2 > d->nslot && dict_rehash(d, d->nslot * 2))
		return -1;
	return 0;
}

/* --- the levels' final order ------------------------------------------------------------ */

bool csv_levels_numeric(const struct dict *d)
{
	int i;

	for (i = 0; i < d->n; i++) {
		float v;
		bool ovf;
		if (!gwb_csv_parse_float(d->str[i], strlen(d->str[i]), &v, &ovf) || isnan(v))
			return false;
	}
	return d->n > 0;
}

struct lvl *csv_levels_make(const struct dict *d, bool numeric)
{
	struct lvl *l = malloc(((size_t)d->n + 1) * sizeof(*l));
	int i;

	if (!l)
		return NULL;
	for (i = 0; i < d->n; i++) {
		unsigned char b[8 * LVL_KEY] = {0};
		int k;
		/* the first bytes, big-endian (a string's end leaves zeros, as strcmp sees it) */
		memcpy(b, d->str[i], strnlen(d->str[i], sizeof(b)));
		for (k = 0; k < LVL_KEY; k++) {
			uint64_t w;
			memcpy(&w, b + 8 * k, 8);
			l[i].key[k] = __builtin_bswap64(w);
		}
		l[i].v = 0;
		if (numeric) {
			bool ovf;
			gwb_csv_parse_float(d->str[i], strlen(d->str[i]), &l[i].v, &ovf);
		}
		l[i].code = i;
		l[i].s = d->str[i];
	}
	return l;
}

/* Sort l[0..n) into out[0..n) (out may be l itself), t scratch of n that may be overwritten:
 * a merge sort whose levels alternate between the two buffers (no copy back), with the
 * comparison inlined (qsort's function call per comparison, and its indirect sort of elements
 * over 32 bytes, cost twice as much on a column of a million levels). */
static void lvl_msort(struct lvl *l, struct lvl *out, struct lvl *t, size_t n, bool numeric)
{
	size_t h = n / 2, i, j, k = 0;

	if (n <= 16) {
		if (out != l)
			memcpy(out, l, n * sizeof(*l));
		for (i = 1; i < n; i++) {
			struct lvl x = out[i];
			for (j = i; j > 0 && csv_level_cmp(&x, &out[j - 1], numeric) < 0; j--)
				out[j] = out[j - 1];
			out[j] = x;
		}
		return;
	}
	/* both halves sorted into the buffer that is not out, then merged into out */
	{
		struct lvl *other = out == l ? t : l;
		lvl_msort(l, other, out, h, numeric);
		lvl_msort(l + h, other + h, out + h, n - h, numeric);
		for (i = 0, j = h; i < h && j < n;)
			out[k++] = csv_level_cmp(&other[j], &other[i], numeric) < 0 ? other[j++]
										      : other[i++];
		while (i < h)
			out[k++] = other[i++];
		while (j < n)
			out[k++] = other[j++];
	}
}

bool csv_levels_sort(struct lvl *l, size_t n, bool numeric)
{
	struct lvl *t = malloc((n + 1) * sizeof(*t));

	if (!t)
		return false;
	lvl_msort(l, l, t, n, numeric);
	free(t);
	return true;
}

/* Sort d's levels: levels that all read as numbers ("2", "10", "1.5") by value, others by
 * bytes. Returns old code -> new code (caller frees). */
int32_t *csv_dict_sort(struct dict *d)
{
	int32_t *map = malloc(((size_t)d->n + 1) * sizeof(*map));
	struct lvl *l;
	bool numeric;
	int i;

	if (!map)
		return NULL;
	if (d->sorted) {
		for (i = 0; i < d->n; i++)
			map[i] = i;
		return map;
	}
	numeric = csv_levels_numeric(d);
	if (!(l = csv_levels_make(d, numeric))) {
		free(map);
		return NULL;
	}
	if (!csv_levels_sort(l, (size_t)d->n, numeric)) {
		free(l);
		free(map);
		return NULL;
	}
	for (i = 0; i < d->n; i++) {
		map[l[i].code] = i;
		d->str[i] = (char *)l[i].s;
	}
	free(l);
	free(d->slot);
	d->slot = NULL;
	d->nslot = 0;
	d->sorted = true;
	return map;
}

/* --- records ---------------------------------------------------------------------------- */

/* path:line:col of buf offset `at`, counting from the record that starts at `rec` on `line`. */
gwb_status csv_fail_at(struct rd *r, gwb_status st, size_t rec, size_t line, size_t at,
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
const char *csv_show(const char *p, size_t n, char *out, size_t outsz)
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

int csv_tokenize(struct rd *r, size_t cur, size_t *next, size_t line, gwb_status *err)
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
					*err = csv_fail_at(r, GWB_EPARSE, cur, line, (size_t)(p - r->buf),
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
				*err = csv_fail_at(r, GWB_EPARSE, cur, line, (size_t)(p - r->buf),
					       "unexpected %s after a closing quote; a quote inside a "
					       "quoted field is written \"\"",
					       csv_show(p, 1, b, sizeof(b)));
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

bool csv_is_missing(const struct rd *r, const char *p, size_t n)
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
gwb_status csv_field_text(struct rd *r, const struct field *f, const char **p, size_t *n)
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

/* The column of a name (dict codes are column indices: set_names adds one name per column, in
 * order), -1 when no column has it. */
int csv_dict_find(const struct dict *d, const char *s, size_t n)
{
	uint32_t h = str_hash(s, n);
	size_t k;

	if (!d->slot)
		return -1;
	for (k = h & (d->nslot - 1); d->slot[k].code; k = (k + 1) & (d->nslot - 1)) {
		int i = d->slot[k].code - 1;
		if (d->slot[k].hash == h && !strncmp(d->str[i], s, n) && d->str[i][n] == 0)
			return i;
	}
	return -1;
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
	m = gwb_hugemap_new(bytes);
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
gwb_status csv_reserve_row(struct rd *r, float **row)
{
	gwb_status st;

	if (r->cur_rows == r->chunk_rows || !r->nchunk)
		if ((st = new_chunk(r)))
			return st;
	if (r->wide && r->rows >= r->wcap && !csv_wide_reserve(r, r->rows))
		return gwb_error(GWB_ENOMEM, "%s: out of memory after %zu rows", r->path, r->rows);
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

/* --- exact 64-bit values (issue 30) ------------------------------------------------------- */

/* The exact value of the number s[0..n) (one the float parser accepted, not a NaN): true with
 * *iv for an integer literal that int64 holds (GWB_I64_NA excepted), else false with *dv, the
 * correctly rounded double (Clinger's fast path, strtod for the rest). */
static bool num64(const char *s, size_t n, int64_t *iv, double *dv)
{
	const char *p = s, *e = s + n, *q;
	uint64_t w = 0;
	int nd, nfrac = 0, exp10 = 0;
	bool neg;

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	neg = p < e && *p == '-';
	p += p < e && (*p == '-' || *p == '+');
	q = p;
	p = digits(p, e, &w);
	nd = (int)(p - q);
	if (p == e && nd > 0 && nd <= 19 && w <= (uint64_t)INT64_MAX) {
		*iv = neg ? -(int64_t)w : (int64_t)w;
		return true;
	}
	if (p < e && *p == '.') {
		q = ++p;
		p = digits(p, e, &w);
		nfrac = (int)(p - q);
	}
	nd += nfrac;
	exp10 = -nfrac;
	if (p < e && (*p == 'e' || *p == 'E')) {
		int es = 1, ex = 0;
		if (++p < e && (*p == '+' || *p == '-'))
			es = *p++ == '-' ? -1 : 1;
		for (q = p; p < e && (unsigned)(*p - '0') < 10 && ex < 10000; p++)
			ex = ex * 10 + (*p - '0');
		exp10 += es * ex;
	}
	if (p == e && nd > 0 && nd <= 19 && w <= ((uint64_t)1 << 53) && exp10 >= -22 &&
	    exp10 <= 22) {
		double d = (double)(int64_t)w;
		d = exp10 < 0 ? d / pow10_tab[-exp10] : d * pow10_tab[exp10];
		*dv = neg ? -d : d;
		return false;
	}
	{
		char tmp[128], *buf = tmp;
		size_t len = (size_t)(e - s);
		while (len && (*s == ' ' || *s == '\t'))
			s++, len--;
		if (len >= sizeof(tmp) && !(buf = malloc(len + 1))) {
			*dv = NAN;
			return false;
		}
		memcpy(buf, s, len);
		buf[len] = 0;
		pthread_once(&c_locale_once, make_c_locale);
		*dv = c_locale ? strtod_l(buf, NULL, c_locale) : strtod(buf, NULL);
		if (buf != tmp)
			free(buf);
	}
	return false;
}

void csv_wide_flip(struct rd *r, struct col *c, int k)
{
	uint64_t *cell = r->wcol ? r->wcol[k] : NULL;   /* (none before a first row) */
	size_t row;

	for (row = 0; cell && row < r->rows; row++) {
		int64_t v = (int64_t)cell[row];
		double d = v == GWB_I64_NA ? NAN : (double)v;
		memcpy(&cell[row], &d, 8);
	}
	c->wint = 0;
}

bool csv_wide_reserve(struct rd *r, size_t rows)
{
	size_t cap = r->wcap, k, F = (size_t)r->ncol - 1;
	int j, failed = -1;

	if (rows < cap)
		return true;
	if (!r->wcol && !(r->wcol = calloc(F + 1, sizeof(*r->wcol))))
		return false;
	if (!cap) {   /* about the rows the bytes to read hold (2 bytes a field at least; a
		       * small floor: a file of a million columns has a million arrays) */
		cap = r->west / (2 * (size_t)r->ncol) + 16;
		if (cap > ((size_t)1 << 26))
			cap = (size_t)1 << 26;
	}
	while (cap <= rows)
		cap *= 2;
	for (j = 0; j < r->ncol; j++) {
		uint64_t *n;
		if (j == r->target || !r->cols[j].numeric)
			continue;
		k = (size_t)r->cols[j].feature;
		if (!r->wmap)
			n = realloc(r->wcol[k], (cap + 1) * sizeof(uint64_t));
		else if (r->wcol[k])
			n = gwb_hugemap_resize(r->wcol[k], csv_wide_bytes(r->wcap), csv_wide_bytes(cap));
		else
			n = gwb_hugemap_reserve(csv_wide_bytes(cap));
		if (!n) {
			failed = j;
			goto fail;
		}
		r->wcol[k] = n;
	}
	r->wcap = cap;
	return true;
fail:
	/* a mapped column's size follows wcap: those grown before the failure go back to it */
	for (j = 0; r->wmap && j < failed; j++) {
		uint64_t *n;
		if (j == r->target || !r->cols[j].numeric)
			continue;
		k = (size_t)r->cols[j].feature;
		if (!r->wcap) {
			gwb_hugemap_free(r->wcol[k], csv_wide_bytes(cap));
			r->wcol[k] = NULL;
		} else if ((n = gwb_hugemap_resize(r->wcol[k], csv_wide_bytes(cap),
						    csv_wide_bytes(r->wcap)))) {
			r->wcol[k] = n;
		}
	}
	return false;
}

size_t csv_wide_bytes(size_t cap)
{
	/* (two pages over: csv_par.c's join lays whole pages a page past a column's end) */
	return (cap + 1) * sizeof(uint64_t) + 2 * gwb_hugemap_page();
}

void csv_wide_free(struct rd *r)
{
	size_t k;

	for (k = 0; r->wcol && k + 1 < (size_t)r->ncol; k++) {
		if (r->wmap)
			gwb_hugemap_free(r->wcol[k], csv_wide_bytes(r->wcap));
		else
			free(r->wcol[k]);
	}
	free(r->wcol);
	r->wcol = NULL;
	r->wcap = 0;
}

/* Feature k's value of this row: the exact value of s[0..n) (a number, not a NaN): kind 1
 * the integer iv, 2 the double dv, 0 not known yet (num64 reads it). */
static inline void wide_put(struct rd *r, struct col *c, int k, const char *s, size_t n,
			    int kind, int64_t iv, double dv)
{
	uint64_t *cell = &r->wcol[k][r->rows];

	if (kind == 1 || (kind == 0 && num64(s, n, &iv, &dv))) {
		if (c->wint) {
			*cell = (uint64_t)iv;
			return;
		}
		dv = (double)iv;
	} else if (c->wint) {
		csv_wide_flip(r, c, k);
	}
	memcpy(cell, &dv, 8);
}

static inline void wide_missing(struct rd *r, const struct col *c, int k)
{
	double nan = NAN;

	if (c->wint)
		r->wcol[k][r->rows] = (uint64_t)GWB_I64_NA;
	else
		memcpy(&r->wcol[k][r->rows], &nan, 8);
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

/* fast_number for the commonest shapes, [sign] 1-7 digits '.' 1-7 digits (fixed decimals, as
 * most writers print) and [sign] 1-15 digits (integers, ids), read as one or two 8-byte words with
 * at least 18 bytes left: the same value and end as fast_number (the same arithmetic), in fewer
 * steps; anything else goes to it. */
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
		} else if (n1 > 0 && n1 < 8 && q[n1] != '.' && q[n1] != 'e' && q[n1] != 'E') {
			/* an integer of 1-7 digits: exact in float32 (float_fast's result) */
			int s1 = 8 * (8 - n1);
			a = (a << s1) | (0x3030303030303030ull & ((1ull << s1) - 1));
			*pp = q + n1;
			*v = with_sign((float)parse8(a), neg);
			return true;
		} else if (n1 == 8 && end - q >= 16) {
			/* an integer of 9-15 digits (ids): two words */
			memcpy(&b, q + 8, 8);
			m = ((b + 0x4646464646464646ull) | (b - 0x3030303030303030ull)) &
			    0x8080808080808080ull;
			int n2 = m ? __builtin_ctzll(m) >> 3 : 8;
			char t = q[8 + n2];
			if (n2 > 0 && n2 < 8 && t != '.' && t != 'e' && t != 'E') {
				int s2 = 8 * (8 - n2);
				b = (b << s2) | (0x3030303030303030ull & ((1ull << s2) - 1));
				*pp = q + 8 + n2;
				return float_fast((uint64_t)parse8(a) * pow10_u64[n2] + parse8(b), 0, neg,
						  v);
			}
		}
	}
	return fast_number(pp, end, v);
}

/* fast_decimal that also gives the exact 64-bit value (issue 30): *kind 1 with *iv for an
 * integer literal int64 holds, 2 with *dv (the correctly rounded double) for any other
 * number, 0 when the caller must work it out (num64). Same float, same end as fast_decimal.
 * Inlined always (the compiler kept it out of line: its four results then went through the
 * stack, a call per numeric field). */
static inline __attribute__((always_inline)) bool
fast_decimal_w(const char **pp, const char *end, float *v, int64_t *iv, double *dv, int *kind)
{
	const char *p = *pp;

	*kind = 0;
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
				uint64_t w, bits;
				double d;
				a = (a << s1) | (0x3030303030303030ull & ((1ull << s1) - 1));
				b = (b << s2) | (0x3030303030303030ull & ((1ull << s2) - 1));
				*pp = q + n1 + 1 + n2;
				w = (uint64_t)parse8(a) * pow10_u64[n2] + parse8(b);
				d = (double)(int64_t)w / pow10_tab[n2];   /* w < 10^14: exact */
				*dv = neg ? -d : d;
				*kind = 2;
				/* d is the correctly rounded double of the decimal (10^-7 < d < 10^14,
				 * or 0), so its float is the decimal's unless d lies exactly on a float
				 * midpoint (float_fast's guard): the float without a second rounding */
				memcpy(&bits, &d, sizeof(bits));
				if (w && (bits & 0x1fffffffu) != 0x10000000u) {
					*v = with_sign((float)d, neg);
					return true;
				}
				return float_fast(w, -n2, neg, v);
			}
		} else if (n1 > 0 && n1 < 8 && q[n1] != '.' && q[n1] != 'e' && q[n1] != 'E') {
			int s1 = 8 * (8 - n1);
			int64_t w;
			a = (a << s1) | (0x3030303030303030ull & ((1ull << s1) - 1));
			*pp = q + n1;
			w = (int64_t)parse8(a);
			*v = with_sign((float)w, neg);
			*iv = neg ? -w : w;
			*kind = 1;
			return true;
		} else if (n1 == 8 && end - q >= 16) {
			memcpy(&b, q + 8, 8);
			m = ((b + 0x4646464646464646ull) | (b - 0x3030303030303030ull)) &
			    0x8080808080808080ull;
			int n2 = m ? __builtin_ctzll(m) >> 3 : 8;
			char t = q[8 + n2];
			if (n2 > 0 && n2 < 8 && t != '.' && t != 'e' && t != 'E') {
				int s2 = 8 * (8 - n2);
				uint64_t w;
				b = (b << s2) | (0x3030303030303030ull & ((1ull << s2) - 1));
				*pp = q + 8 + n2;
				w = (uint64_t)parse8(a) * pow10_u64[n2] + parse8(b);   /* < 10^15 */
				*iv = neg ? -(int64_t)w : (int64_t)w;
				*kind = 1;
				return float_fast(w, 0, neg, v);
			}
		}
	}
	return fast_number(pp, end, v);
}

/* The fast path for the common record: numbers only, unquoted, no blanks, every column
 * numeric. One pass over the bytes parses each number and checks the separator after it,
 * writing straight into the row. Anything else (a quote, text, an empty field, a missing
 * marker, a number strtof must settle, the end of the buffer) returns false before the row
 * counts, and the record goes through tokenize and csv_convert_row, which handle every case and
 * produce the same values. */
bool csv_fast_row(struct rd *r, size_t cur, size_t *next, float *row, float *tval)
{
	const char *p = r->buf + cur, *end = r->buf + r->len;
	const char sep = r->sep;
	const int ncol = r->ncol, target = r->target;
	const bool wide = r->wide;
	int j, k = 0;

	for (j = 0; j < ncol; j++) {
		const char *s0 = p;
		int64_t iv = 0;
		double dv = 0;
		int kind = 0;
		float v;

		if (!(wide ? fast_decimal_w(&p, end, &v, &iv, &dv, &kind) : fast_decimal(&p, end, &v)))
			return false;
		if (p == end) {
			if (!r->eof || j != ncol - 1)
				return false;
		} else if (j < ncol - 1 ? *p != sep : (*p != '\n' && *p != '\r')) {
			return false;
		}
		if (j == target) {
			*tval = v;
		} else {
			if (wide)
				wide_put(r, &r->cols[j], k, s0, (size_t)(p - s0), kind, iv, dv);
			row[k++] = v;
		}
		if (j < ncol - 1)
			p++;
	}
	if (p < end && !eat_eol(r, &p, end))
		return false;
	*next = (size_t)(p - r->buf);
	return true;
}

/* The fast path for records of files with text (categorical) columns, quotes and missing
 * values: numbers as csv_fast_row reads them, empty fields and missing markers, text quoted or
 * not (with "" escapes), in one pass. It declines (false, before the row counts) what it does
 * not settle the way csv_convert_row would: a newline inside quotes, blanks after a
 * closing quote, a NaN, a missing target, a number with blanks or one strtof must settle, a
 * ragged row, the end of the buffer. A level it added to a dictionary before declining is
 * the one csv_convert_row adds for that field, in the same order, so the codes do not change;
 * the missing values of a declined row are not counted (*nmiss counts those of this row). */
bool csv_mixed_row(struct rd *r, size_t cur, size_t *next, float *row, float *tval,
		   size_t *nmiss)
{
	const char *p = r->buf + cur, *end = r->buf + r->len;
	const char sep = r->sep;
	const int ncol = r->ncol, target = r->target;
	const bool wide = r->wide;
	size_t miss = 0;
	int j;

	for (j = 0; j < ncol; j++) {
		struct col *c = &r->cols[j];
		const char *s = p;
		size_t n = 0;
		int64_t wiv = 0;
		double wdv = 0;
		int wkind = 0;
		float v;

		if (p == end)
			return false;
		if (*p == '"') {
			const char *z = memchr(p + 1, '"', (size_t)(end - p - 1));
			bool esc = false;
			/* "" pairs inside: the closing quote is the first one not doubled */
			while (z && z + 1 < end && z[1] == '"') {
				esc = true;
				z = memchr(z + 2, '"', (size_t)(end - z - 2));
			}
			if (!z || z + 1 == end || memchr(p + 1, '\n', (size_t)(z - p - 1)))
				return false;
			s = p + 1;
			n = (size_t)(z - s);
			p = z + 1;
			if (*p != sep && *p != '\n' && *p != '\r')
				return false;
			if (esc) {   /* the text with each "" as one " (csv_field_text's) */
				size_t i, k;
				char *t;
				if (n + 1 > r->scap) {
					if (!(t = realloc(r->scratch, n + 1)))
						return false;
					r->scratch = t;
					r->scap = n + 1;
				}
				t = r->scratch;
				for (i = 0, k = 0; i < n; i++) {
					t[k++] = s[i];
					i += s[i] == '"';
				}
				s = t;
				n = k;
			}
		} else {
			if (c->numeric && !r->numeric_missing) {
				const char *q = p;
				if ((wide ? fast_decimal_w(&q, end, &v, &wiv, &wdv, &wkind)
					  : fast_decimal(&q, end, &v)) && q < end &&
				    (*q == sep || *q == '\n' || *q == '\r')) {
					s = p;
					n = (size_t)(q - p);
					p = q;
					goto store;
				}
				wkind = 0;
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
		if (csv_is_missing(r, s, n)) {
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
			if (csv_dict_code(&c->dict, s, n, &code))
				return false;
			v = (float)code;
		}
store:
		if (j == target) {
			*tval = v;
		} else {
			if (wide && c->numeric) {
				if (isnan(v))
					wide_missing(r, c, c->feature);
				else
					wide_put(r, c, c->feature, s, n, wkind, wiv, wdv);
			}
			row[c->feature] = v;
		}
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
gwb_status csv_convert_row(struct rd *r, size_t rec, size_t line)
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
		return csv_fail_at(r, GWB_EPARSE, rec, line, at,
			       "ragged row: %d fields where the %s has %d; quote values that contain "
			       "the separator '%s'", r->nf, r->info.header ? "header" : "first row",
			       r->ncol, r->sep == '\t' ? "\\t" : (char[]){r->sep, 0});
	}
	const bool wide = r->wide;

	if ((st = csv_reserve_row(r, &row)))
		return st;
	for (j = 0; j < r->ncol; j++) {
		struct col *c = &r->cols[j];
		const struct field *f = &r->f[j];
		const char *p = f->p;
		size_t n = f->n;
		float v;
		if (f->q == 0 && c->numeric && !r->numeric_missing) {
			/* the hot path: an unquoted number */
			bool ovf;
			if (gwb_csv_parse_float(f->p, f->n, &v, &ovf) && !ovf && !isnan(v))
				goto store;
		}
		if ((st = csv_field_text(r, f, &p, &n)))
			return st;
		if (csv_is_missing(r, p, n)) {
			if (j == r->target) {
				char b[64];
				return csv_fail_at(r, GWB_EPARSE, rec, line,
					       (size_t)(f->p - r->buf) - (f->q ? 1 : 0),
					       "missing target value %s in column \"%s\"; remove the "
					       "row or fill the value", csv_show(p, n, b, sizeof(b)),
					       r->names[j]);
			}
			c->missing++;
			v = NAN;
		} else if (c->numeric) {
			bool ovf;
			char b[64];
			if (!gwb_csv_parse_float(p, n, &v, &ovf))
				return csv_fail_at(r, GWB_EPARSE, rec, line,
					       (size_t)(f->p - r->buf) - (f->q ? 1 : 0),
					       "text %s in numeric column \"%s\"; if the column is "
					       "categorical pass categorical = {\"%s\"}, if it marks a "
					       "missing value pass missing = {%s}",
					       csv_show(p, n, b, sizeof(b)), r->names[j], r->names[j],
					       csv_show(p, n, b, sizeof(b)));
			if (ovf && !r->wide)   /* (a float64 column holds it; X then holds +-inf) */
				return csv_fail_at(r, GWB_EPARSE, rec, line,
					       (size_t)(f->p - r->buf) - (f->q ? 1 : 0),
					       "number %s in column \"%s\" is outside the float32 "
					       "range (|x| <= 3.4e38)", csv_show(p, n, b, sizeof(b)),
					       r->names[j]);
			if (isnan(v))
				c->missing++;
		} else {
			int32_t code;
			int e = csv_dict_code(&c->dict, p, n, &code);
			if (e == -1)
				return gwb_error(GWB_ENOMEM, "%s: out of memory for the levels of "
						 "column \"%s\"", r->path, r->names[j]);
			if (e == -2)
				return csv_fail_at(r, GWB_EPARSE, rec, line, (size_t)(f->p - r->buf),
					       "column \"%s\" has more than %d distinct values; it "
					       "cannot be categorical", r->names[j], MAX_LEVELS);
			v = (float)code;
		}
store:
		if (j == r->target) {
			r->tv[r->rows] = v;
		} else {
			if (wide && c->numeric) {
				if (isnan(v))
					wide_missing(r, c, c->feature);
				else
					wide_put(r, c, c->feature, p, n, 0, 0, 0);
			}
			row[c->feature] = v;
		}
	}
	r->cur_rows++;
	r->rows++;
	return GWB_OK;
}
