/* verbs.c - the table verbs' core (verbs.h). Every key becomes an order-preserving unsigned
 * integer (numbers by their bits with the sign folded, categories by the rank of their label,
 * a text key as a category of its distinct strings, missing values as the largest key), so
 * one machinery serves them all: sort packs the keys' varying bits into 64-bit words and
 * LSD-radix-sorts (key, row) pairs word by word, the last word first (stable, so earlier keys
 * decide), each pass over fixed row blocks; group-by numbers category keys of few label
 * combinations in one pass over their codes, and otherwise combines the keys' codes into one
 * number per row and numbers the distinct ones in order, directly when their range is small
 * and through a hash table otherwise; a join looks each left row up when the right keys are
 * unique (a left join) and otherwise numbers the right side's keys the same way. The row
 * loops run on the thread pool (gwb_parallel_for) in fixed chunks or blocks, so results
 * never depend on the thread count. */
#define _GNU_SOURCE
#include "verbs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "sparse.h"   /* gwb_parallel_for */

#define CHUNKS 64     /* fixed row chunks of the parallel loops */

static gwb_status oom(const char *what, size_t n)
{
	return gwb_error(GWB_ENOMEM, "%s: out of memory (%zu rows)", what, n);
}

static gwb_status intr(const char *what)
{
	return gwb_error(GWB_EINTR, "%s: interrupted", what);
}

/* --- keys ---------------------------------------------------------------------------------- */

static inline uint64_t okey_f64(double x)
{
	uint64_t b;

	if (isnan(x))
		return UINT64_MAX;
	if (x == 0)
		x = 0.0;
	memcpy(&b, &x, 8);
	return (b >> 63) ? ~b : b | (1ull << 63);
}

static inline uint64_t okey_f32(float x)
{
	uint32_t b;

	if (isnan(x))
		return UINT64_MAX;
	if (x == 0)
		x = 0.0f;
	memcpy(&b, &x, 4);
	return (b >> 31) ? (uint32_t)~b : b | (1u << 31);
}

static const char *const *rank_levels;   /* for cmp_level (qsort has no context) */

static int cmp_level(const void *a, const void *b)
{
	const char *x = rank_levels[*(const int *)a], *y = rank_levels[*(const int *)b];

	return strcmp(x ? x : "", y ? y : "");
}

/* rank[code] = the position of label code among the column's labels in strcmp order. */
static uint64_t *level_ranks(const gwb_col *c)
{
	int k, n = c->nlevels, *ord = malloc(((size_t)n + 1) * sizeof(int));
	uint64_t *rank = malloc(((size_t)n + 1) * sizeof(uint64_t));

	if (!ord || !rank) {
		free(ord);
		free(rank);
		return NULL;
	}
	for (k = 0; k < n; k++)
		ord[k] = k;
	rank_levels = (const char *const *)c->levels;
	qsort(ord, (size_t)n, sizeof(int), cmp_level);
	for (k = 0; k < n; k++)
		rank[ord[k]] = (uint64_t)k;
	free(ord);
	return rank;
}

/* keys of rows lo..hi of c (rows given by perm when not NULL) */
typedef struct keyfill {
	const gwb_col *c;
	const uint64_t *rank;    /* categories */
	const uint32_t *perm;
	uint64_t *out;
	bool desc;
} keyfill;

static inline uint64_t key_at(const keyfill *k, size_t r)
{
	uint64_t v;

	if (k->rank) {
		double x = gwb_col_at(k->c, r);
		v = isnan(x) || x < 0 || x >= k->c->nlevels ? UINT64_MAX : k->rank[(size_t)x];
	} else if (k->c->type == GWB_COL_F32) {
		v = okey_f32(((const float *)k->c->v)[r]);
	} else if (k->c->type == GWB_COL_I64) {
		v = gwb_okey_i64(((const int64_t *)k->c->v)[r]);   /* exact: 2^53 + 1 is its own */
	} else {
		v = okey_f64(gwb_col_at(k->c, r));
	}
	if (k->desc && v != UINT64_MAX)
		v = UINT64_MAX - 1 - v;
	return v;
}

static void keyfill_run(void *ctx, int64_t lo, int64_t hi, int part)
{
	keyfill *k = ctx;
	int64_t i;

	(void)part;
	if (k->perm)
		for (i = lo; i < hi; i++)
			k->out[i] = key_at(k, k->perm[i]);
	else
		for (i = lo; i < hi; i++)
			k->out[i] = key_at(k, (size_t)i);
}

static gwb_status fill_keys(const gwb_col *c, bool desc, const uint32_t *perm, size_t n,
			    uint64_t *out)
{
	keyfill k = {c, NULL, perm, out, desc};
	uint64_t *rank = NULL;

	if (c->levels && !(rank = level_ranks(c)))
		return oom("keys", n);
	k.rank = rank;
	gwb_parallel_for((int64_t)n, 65536, keyfill_run, &k);
	free(rank);
	return GWB_OK;
}

/* --- text keys ---------------------------------------------------------------------------- */

/* A text column seen as a category where it is a key (sort, group, join): its distinct
 * strings as labels (borrowed from the column, in order of first appearance) and int32 codes
 * (-1: missing), so labels order, group and match as a category's do. */
typedef struct textkey {
	int32_t *codes;
	char **levels;
} textkey;

static void textkey_free(textkey *tk)
{
	free(tk->codes);
	free(tk->levels);
	tk->codes = NULL;
	tk->levels = NULL;
}

/* *out: c itself, or (a text column) its category view, which tk holds until textkey_free */
static gwb_status key_view(const gwb_col *c, gwb_col *out, textkey *tk)
{
	size_t *first = NULL, k, i;
	gwb_status st;

	*out = *c;
	tk->codes = NULL;
	tk->levels = NULL;
	if (!c->text)
		return GWB_OK;
	if (!(tk->codes = malloc((c->n + 1) * sizeof(int32_t))))
		return oom("text key", c->n);
	if ((st = gwb_text_codes(c->text, c->n, tk->codes, &first, NULL, &k))) {
		textkey_free(tk);
		return st;
	}
	if (!(tk->levels = malloc((k + 1) * sizeof(char *)))) {
		free(first);
		textkey_free(tk);
		return oom("text key", c->n);
	}
	for (i = 0; i < k; i++)
		tk->levels[i] = c->text[first[i]];
	free(first);
	*out = (gwb_col){c->n, GWB_COL_I32, tk->codes, tk->levels, (int)k, NULL, NULL};
	return GWB_OK;
}

/* --- sort ---------------------------------------------------------------------------------- */

#define RBITS 11
#define RSIZE (1u << RBITS)
#define RBLOCKS 16          /* fixed row blocks of a radix pass (its histograms and scatter) */
#define RBLOCK_MIN 4096     /* rows a block must have before a pass is split */

/* One LSD radix pass over blocks of [0, n): each block counts its digits (hist), then,
 * from offsets in (digit, block) order, moves its (key, row) pairs to their place: stable,
 * and the result does not depend on how the blocks were dealt to threads. */
typedef struct radix_ctx {
	const uint64_t *ka;
	const uint32_t *ra;
	uint64_t *kb;
	uint32_t *rb;
	size_t n;
	int nb, sh;
	uint32_t *hist;     /* nb x RSIZE: counts, then the blocks' next positions */
} radix_ctx;

static void radix_hist(void *ctx, int64_t blo, int64_t bhi, int part)
{
	radix_ctx *x = ctx;
	int64_t b;

	(void)part;
	for (b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / (size_t)x->nb, hi = x->n * (size_t)(b + 1) / (size_t)x->nb;
		uint32_t *h = x->hist + (size_t)b * RSIZE;
		const uint64_t *k = x->ka;
		int sh = x->sh;
		memset(h, 0, RSIZE * sizeof(uint32_t));
		for (size_t i = lo; i < hi; i++)
			h[(k[i] >> sh) & (RSIZE - 1)]++;
	}
}

static void radix_scatter(void *ctx, int64_t blo, int64_t bhi, int part)
{
	radix_ctx *x = ctx;
	int64_t b;

	(void)part;
	for (b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / (size_t)x->nb, hi = x->n * (size_t)(b + 1) / (size_t)x->nb;
		uint32_t *h = x->hist + (size_t)b * RSIZE;
		const uint64_t *ka = x->ka;
		const uint32_t *ra = x->ra;
		uint64_t *kb = x->kb;
		uint32_t *rb = x->rb;
		int sh = x->sh;
		for (size_t i = lo; i < hi; i++) {
			uint32_t d = h[(ka[i] >> sh) & (RSIZE - 1)]++;
			kb[d] = ka[i];
			rb[d] = ra[i];
		}
	}
}

/* Stable LSD radix sort of (key, row) pairs by the key's bits [0, bits): one pass per 11-bit
 * digit that is not the same in every key, between the arrays and a second pair in turn. */
static gwb_status radix_pairs(uint64_t *key, uint32_t *row, size_t n, int bits)
{
	int passes = (bits + RBITS - 1) / RBITS, p, nb = n >= (size_t)RBLOCKS * RBLOCK_MIN ? RBLOCKS : 1;
	uint64_t *k2 = malloc((n + 1) * sizeof(uint64_t)), *ka = key, *kb = k2, *kt;
	uint32_t *r2 = malloc((n + 1) * sizeof(uint32_t)), *ra = row, *rb = r2, *rt;
	uint32_t *hist = malloc((size_t)nb * RSIZE * sizeof(uint32_t));
	gwb_status st = GWB_OK;

	if (!k2 || !r2 || !hist) {
		st = oom("sort", n);
		goto out;
	}
	for (p = 0; p < passes; p++) {
		radix_ctx x = {ka, ra, kb, rb, n, nb, p * RBITS, hist};
		uint32_t sum = 0, t;
		unsigned d;
		int b;
		bool same = false;
		gwb_parallel_for(nb, 1, radix_hist, &x);
		for (d = 0; d < RSIZE && !same; d++) {
			size_t tot = 0;
			for (b = 0; b < nb; b++)
				tot += hist[(size_t)b * RSIZE + d];
			same = tot == n;
		}
		if (same)   /* every key has the same digit here */
			continue;
		for (d = 0; d < RSIZE; d++)
			for (b = 0; b < nb; b++) {
				t = hist[(size_t)b * RSIZE + d];
				hist[(size_t)b * RSIZE + d] = sum;
				sum += t;
			}
		gwb_parallel_for(nb, 1, radix_scatter, &x);
		kt = ka, ka = kb, kb = kt;
		rt = ra, ra = rb, rb = rt;
		if (gwb_intr_pending()) {
			st = intr("sort");
			goto out;
		}
	}
	if (ka != key) {
		memcpy(key, ka, n * sizeof(uint64_t));
		memcpy(row, ra, n * sizeof(uint32_t));
	}
out:
	free(k2);
	free(r2);
	free(hist);
	return st;
}

static int bits_of(uint64_t x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

/* the smallest and largest of v[0..n), per part of the pool, combined after */
typedef struct range_ctx {
	const uint64_t *v;
	uint64_t lo[64], hi[64];   /* per part (gwb_cpu_threads() <= 64) */
	bool none[64];             /* the part saw a missing key (UINT64_MAX) */
	bool skip_missing;         /* leave UINT64_MAX out of lo/hi */
} range_ctx;

static void range_run(void *ctx, int64_t a, int64_t b, int part)
{
	range_ctx *x = ctx;
	uint64_t lo = UINT64_MAX, hi = 0;
	bool none = false;
	int64_t i;

	if (x->skip_missing) {
		for (i = a; i < b; i++) {
			uint64_t v = x->v[i];
			if (v == UINT64_MAX) {
				none = true;
				continue;
			}
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	} else {
		for (i = a; i < b; i++) {
			uint64_t v = x->v[i];
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	x->lo[part] = lo;
	x->hi[part] = hi;
	x->none[part] = none;
}

/* *lo, *hi over v[0..n) (missing keys left out when skip_missing; then *lo > *hi when every
 * key is missing); *missing whether a key is missing */
static void key_range(const uint64_t *v, size_t n, bool skip_missing, uint64_t *lo, uint64_t *hi,
		      bool *missing)
{
	range_ctx *x = malloc(sizeof(*x));
	int p;

	*lo = UINT64_MAX;
	*hi = 0;
	*missing = false;
	if (!x) {   /* (a few hundred bytes: serially then) */
		for (size_t i = 0; i < n; i++) {
			if (v[i] == UINT64_MAX && skip_missing) {
				*missing = true;
				continue;
			}
			*lo = v[i] < *lo ? v[i] : *lo;
			*hi = v[i] > *hi ? v[i] : *hi;
		}
		return;
	}
	for (p = 0; p < 64; p++) {
		x->lo[p] = UINT64_MAX;
		x->hi[p] = 0;
		x->none[p] = false;
	}
	x->v = v;
	x->skip_missing = skip_missing;
	gwb_parallel_for((int64_t)n, 65536, range_run, x);
	for (p = 0; p < 64; p++) {
		*lo = x->lo[p] < *lo ? x->lo[p] : *lo;
		*hi = x->hi[p] > *hi ? x->hi[p] : *hi;
		*missing |= x->none[p];
	}
	free(x);
}

/* words of packed keys first..last for the rows in their current order */
typedef struct pack_ctx {
	const uint64_t *kv, *mins;
	const int *bits;
	const uint32_t *row;
	uint64_t *word;
	size_t n;
	int first, last;
	bool ident;   /* row[i] == i (the first word packed) */
} pack_ctx;

static void pack_run(void *ctx, int64_t a, int64_t b, int part)
{
	pack_ctx *x = ctx;
	int64_t i;
	int k;

	(void)part;
	if (x->first == x->last) {   /* one key: its value less its minimum */
		const uint64_t *v = x->kv + (size_t)x->first * x->n, m = x->mins[x->first];
		if (x->ident)
			for (i = a; i < b; i++)
				x->word[i] = v[i] - m;
		else
			for (i = a; i < b; i++)
				x->word[i] = v[x->row[i]] - m;
		return;
	}
	for (i = a; i < b; i++) {
		uint64_t w = 0;
		size_t r = x->row[i];
		for (k = x->first; k <= x->last; k++) {
			uint64_t v = x->kv[(size_t)k * x->n + r] - x->mins[k];
			w = x->bits[k] ? (x->bits[k] == 64 ? v : (w << x->bits[k]) | v) : w;
		}
		x->word[i] = w;
	}
}

typedef struct rows_ctx {
	uint32_t *row;
	size_t *res;
} rows_ctx;

static void iota_run(void *ctx, int64_t a, int64_t b, int part)
{
	rows_ctx *x = ctx;

	(void)part;
	for (int64_t i = a; i < b; i++)
		x->row[i] = (uint32_t)i;
}

static void widen_run(void *ctx, int64_t a, int64_t b, int part)
{
	rows_ctx *x = ctx;

	(void)part;
	for (int64_t i = a; i < b; i++)
		x->res[i] = x->row[i];
}

static gwb_status table_order(const gwb_sortkey *keys, int nk, size_t n, size_t **perm)
{
	uint64_t *kv = NULL, *word = NULL, *mins = NULL;
	uint32_t *row = NULL;
	int *bits = NULL, k, last;
	size_t *res;
	gwb_status st = GWB_OK;
	rows_ctx rc;

	*perm = NULL;
	if (n > UINT32_MAX)
		return gwb_error(GWB_EINVAL, "sort: %zu rows are more than 2^32", n);
	kv = malloc(((size_t)nk * n + 1) * sizeof(uint64_t));
	word = malloc((n + 1) * sizeof(uint64_t));
	row = malloc((n + 1) * sizeof(uint32_t));
	mins = calloc((size_t)nk + 1, sizeof(uint64_t));
	bits = calloc((size_t)nk + 1, sizeof(int));
	if (!kv || !word || !row || !mins || !bits) {
		st = oom("sort", n);
		goto out;
	}
	/* each key's values and the bits its range needs */
	for (k = 0; k < nk; k++) {
		uint64_t *v = kv + (size_t)k * n, lo, hi;
		bool none;
		if ((st = fill_keys(&keys[k].col, keys[k].desc, NULL, n, v)))
			goto out;
		key_range(v, n, false, &lo, &hi, &none);
		mins[k] = n ? lo : 0;
		bits[k] = n ? bits_of(hi - lo) : 0;
	}
	rc.row = row;
	gwb_parallel_for((int64_t)n, 65536, iota_run, &rc);
	/* words of packed keys, sorted from the last word to the first */
	for (last = nk - 1; last >= 0;) {
		int first = last, used = bits[last];
		pack_ctx pc = {kv, mins, bits, row, word, n, 0, last, false};
		while (first > 0 && used + bits[first - 1] <= 64)
			used += bits[--first];
		pc.first = first;
		pc.ident = last == nk - 1;
		if (used) {
			gwb_parallel_for((int64_t)n, 65536, pack_run, &pc);
			if ((st = radix_pairs(word, row, n, used)))
				goto out;
		}
		last = first - 1;
	}
	res = malloc((n + 1) * sizeof(size_t));
	if (!res) {
		st = oom("sort", n);
		goto out;
	}
	rc.res = res;
	gwb_parallel_for((int64_t)n, 65536, widen_run, &rc);
	*perm = res;
out:
	free(kv);
	free(word);
	free(row);
	free(mins);
	free(bits);
	return st;
}

/* --- numbering distinct keys --------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Open addressing of uint64 keys to ids. */
typedef struct u64map {
	uint64_t *key;
	uint32_t *id;   /* UINT32_MAX = empty */
	size_t cap, used;
} u64map;

static bool map_init(u64map *m, size_t expect)
{
	size_t cap = 64;

	while (cap < expect * 2)
		cap *= 2;
	m->key = malloc(cap * sizeof(uint64_t));
	m->id = malloc(cap * sizeof(uint32_t));
	m->cap = cap;
	m->used = 0;
	if (!m->key || !m->id)
		return false;
	memset(m->id, 0xff, cap * sizeof(uint32_t));
	return true;
}

static void map_free(u64map *m)
{
	free(m->key);
	free(m->id);
}

static inline size_t map_slot(const u64map *m, uint64_t k)
{
	size_t h = gwb_mix64(k) & (m->cap - 1);

	while (m->id[h] != UINT32_MAX && m->key[h] != k)
		h = (h + 1) & (m->cap - 1);
	return h;
}

static bool map_grow(u64map *m)
{
	u64map n;
	size_t i;

	if (!map_init(&n, m->cap))
		return false;
	for (i = 0; i < m->cap; i++)
		if (m->id[i] != UINT32_MAX) {
			size_t h = map_slot(&n, m->key[i]);
			n.key[h] = m->key[i];
			n.id[h] = m->id[i];
		}
	n.used = m->used;
	map_free(m);
	*m = n;
	return true;
}

/* id of k, adding it with the next id when new; UINT32_MAX when out of memory */
static inline uint32_t map_put(u64map *m, uint64_t k)
{
	size_t h = map_slot(m, k);

	if (m->id[h] != UINT32_MAX)
		return m->id[h];
	if ((m->used + 1) * 2 > m->cap) {
		if (!map_grow(m))
			return UINT32_MAX;
		h = map_slot(m, k);
	}
	m->key[h] = k;
	m->id[h] = (uint32_t)m->used++;
	return m->id[h];
}

typedef struct rank_ctx {
	uint64_t *v;
	const u64map *m;
	const uint32_t *rank;   /* id -> rank */
	const uint32_t *dense;  /* direct table: v - lo -> rank (the missing key: range) */
	uint64_t lo, range;
} rank_ctx;

static void mark_run(void *ctx, int64_t a, int64_t b, int part)
{
	rank_ctx *x = ctx;
	uint32_t *dense = (uint32_t *)x->dense;
	int64_t i;

	(void)part;
	for (i = a; i < b; i++) {
		uint64_t v = x->v[i];
		size_t s = v == UINT64_MAX ? x->range : v - x->lo;
		if (!dense[s])   /* (every writer stores the same 1) */
			__atomic_store_n(&dense[s], 1, __ATOMIC_RELAXED);
	}
}

static void rank_run(void *ctx, int64_t a, int64_t b, int part)
{
	rank_ctx *x = ctx;
	int64_t i;

	(void)part;
	if (x->dense)
		for (i = a; i < b; i++)
			x->v[i] = x->dense[x->v[i] == UINT64_MAX ? x->range : x->v[i] - x->lo];
	else
		for (i = a; i < b; i++)
			x->v[i] = x->rank[x->m->id[map_slot(x->m, x->v[i])]];
}

/* Replace v[0..n) by the rank of each value among the distinct ones (ascending): *card of
 * them. Direct table when the range is small, else a hash table. *hashed says which. */
static gwb_status number_keys(uint64_t *v, size_t n, size_t *card, bool *hashed)
{
	uint64_t lo, hi;
	size_t i, k;
	bool missing;
	rank_ctx rc = {0};

	*card = 0;
	*hashed = false;
	if (!n)
		return GWB_OK;
	key_range(v, n, true, &lo, &hi, &missing);
	if (lo > hi)   /* every key missing */
		lo = hi = 0;
	rc.v = v;
	rc.lo = lo;
	if (hi - lo < (uint64_t)(n < (1u << 20) ? 1u << 20 : n) * 4) {
		/* a direct table over the range, one slot past it for the missing key */
		size_t range = (size_t)(hi - lo) + 1;
		uint32_t *dense = calloc(range + 1, sizeof(uint32_t));
		if (!dense)
			return oom("group keys", n);
		rc.dense = dense;
		rc.range = range;
		gwb_parallel_for((int64_t)n, 65536, mark_run, &rc);
		for (i = 0, k = 0; i <= range; i++)
			if (dense[i])
				dense[i] = (uint32_t)k++;
		gwb_parallel_for((int64_t)n, 65536, rank_run, &rc);
		free(dense);
		*card = k;
		return GWB_OK;
	}
	{
		u64map m;
		uint64_t *keys;
		uint32_t *rank;
		if (!map_init(&m, 1024))
			return oom("group keys", n);
		for (i = 0; i < n; i++)
			if (map_put(&m, v[i]) == UINT32_MAX) {
				map_free(&m);
				return oom("group keys", n);
			}
		keys = malloc((m.used + 1) * sizeof(uint64_t));
		rank = malloc((m.used + 1) * sizeof(uint32_t));
		if (!keys || !rank) {
			free(keys);
			free(rank);
			map_free(&m);
			return oom("group keys", n);
		}
		for (i = 0, k = 0; i < m.cap; i++)
			if (m.id[i] != UINT32_MAX)
				keys[k++] = m.key[i];
		qsort(keys, k, sizeof(uint64_t), cmp_u64);
		for (i = 0; i < k; i++)
			rank[m.id[map_slot(&m, keys[i])]] = (uint32_t)i;
		rc.m = &m;
		rc.rank = rank;
		gwb_parallel_for((int64_t)n, 65536, rank_run, &rc);
		*card = k;
		*hashed = true;
		free(keys);
		free(rank);
		map_free(&m);
	}
	return GWB_OK;
}

/* --- groups -------------------------------------------------------------------------------- */

void gwb_groups_free(gwb_groups *g)
{
	if (!g)
		return;
	free(g->gid);
	free(g->first);
	free(g->count);
	free(g->start);
	free(g->order);
	free(g);
}

/* A category key's codes straight from the column: which labels occur (seen), then every
 * row's label numbered among those in label order, missing last (what fill_keys and
 * number_keys give, without 64-bit keys in between). */
typedef struct catkey_ctx {
	const gwb_col *c;
	uint8_t *seen;       /* nlevels + 1: label k occurs; [nlevels]: a row is missing */
	const uint32_t *map; /* label (nlevels: missing) -> code */
	uint64_t *out;
} catkey_ctx;

static inline size_t cat_at(const gwb_col *c, size_t i)
{
	size_t nl = (size_t)c->nlevels;

	if (c->type == GWB_COL_F32) {
		float f = ((const float *)c->v)[i];
		return f >= 0 && f < (float)nl ? (size_t)f : nl;   /* NaN: missing */
	}
	double x = gwb_col_at(c, i);
	return x >= 0 && x < (double)nl ? (size_t)x : nl;
}

static void catkey_seen(void *ctx, int64_t a, int64_t b, int part)
{
	catkey_ctx *x = ctx;
	int64_t i;

	(void)part;
	for (i = a; i < b; i++) {
		size_t k = cat_at(x->c, (size_t)i);
		if (!x->seen[k])   /* (every writer stores the same 1) */
			__atomic_store_n(&x->seen[k], 1, __ATOMIC_RELAXED);
	}
}

static void catkey_code(void *ctx, int64_t a, int64_t b, int part)
{
	catkey_ctx *x = ctx;
	int64_t i;

	(void)part;
	for (i = a; i < b; i++)
		x->out[i] = x->map[cat_at(x->c, (size_t)i)];
}

static gwb_status cat_codes(const gwb_col *c, size_t n, uint64_t *out, size_t *card)
{
	size_t nl = (size_t)c->nlevels, k, code = 0;
	uint8_t *seen = calloc(nl + 1, 1);
	uint32_t *map = malloc((nl + 1) * sizeof(uint32_t));
	uint64_t *rank = level_ranks(c);
	size_t *byrank = malloc((nl + 1) * sizeof(size_t));
	catkey_ctx x = {c, seen, map, out};

	if (!seen || !map || !rank || !byrank) {
		free(seen);
		free(map);
		free(rank);
		free(byrank);
		return oom("group keys", n);
	}
	gwb_parallel_for((int64_t)n, 65536, catkey_seen, &x);
	for (k = 0; k < nl; k++)
		byrank[rank[k]] = k;
	for (k = 0; k < nl; k++)   /* the labels that occur, in label order */
		if (seen[byrank[k]])
			map[byrank[k]] = (uint32_t)code++;
	map[nl] = (uint32_t)code;   /* missing: after them */
	code += seen[nl];
	gwb_parallel_for((int64_t)n, 65536, catkey_code, &x);
	*card = code;
	free(seen);
	free(map);
	free(rank);
	free(byrank);
	return GWB_OK;
}

/* one key's codes numbered 0..*card-1 in the order of its values (missing last), as 64-bit
 * words in v */
static gwb_status key_codes(const gwb_col *c, size_t n, uint64_t *v, size_t *card, bool *hashed)
{
	gwb_status st;

	*hashed = false;
	if (c->levels && !c->text)
		return cat_codes(c, n, v, card);
	if ((st = fill_keys(c, false, NULL, n, v)))
		return st;
	return number_keys(v, n, card, hashed);
}

typedef struct combine_ctx {
	uint64_t *cur;
	const uint64_t *nxt;
	uint64_t c2;
	uint32_t *gid;
} combine_ctx;

static void combine_run(void *ctx, int64_t a, int64_t b, int part)
{
	combine_ctx *x = ctx;
	int64_t i;

	(void)part;
	if (x->gid)
		for (i = a; i < b; i++)
			x->gid[i] = (uint32_t)x->cur[i];
	else
		for (i = a; i < b; i++)   /* lexicographic: the earlier key decides */
			x->cur[i] = x->cur[i] * x->c2 + x->nxt[i];
}

/* the groups' row counts and first rows: per part of the pool, combined after */
typedef struct count_ctx {
	const uint32_t *gid;
	size_t G;
	size_t *cnt, *first;   /* parts x G */
} count_ctx;

static void count_run(void *ctx, int64_t a, int64_t b, int part)
{
	count_ctx *x = ctx;
	size_t *cnt = x->cnt + (size_t)part * x->G, *first = x->first + (size_t)part * x->G;
	int64_t i;

	for (i = a; i < b; i++) {
		uint32_t id = x->gid[i];
		if (!cnt[id]++)
			first[id] = (size_t)i;
	}
}

static gwb_status count_groups(gwb_groups *g)
{
	size_t G = g->ngroups, i;
	int parts = gwb_cpu_threads(), p;
	count_ctx x = {g->gid, G, NULL, NULL};

	if ((size_t)parts * G * 2 * sizeof(size_t) > ((size_t)256 << 20))
		parts = 1;   /* groups by the million: one set of counts */
	x.cnt = calloc((size_t)parts * G + 1, sizeof(size_t));
	x.first = malloc(((size_t)parts * G + 1) * sizeof(size_t));
	if (!x.cnt || !x.first) {
		free(x.cnt);
		free(x.first);
		return oom("group_by", g->rows);
	}
	for (i = 0; i < (size_t)parts * G; i++)
		x.first[i] = SIZE_MAX;
	if (parts == 1)
		count_run(&x, 0, (int64_t)g->rows, 0);
	else
		gwb_parallel_for((int64_t)g->rows, 65536, count_run, &x);
	for (p = 1; p < parts; p++)
		for (i = 0; i < G; i++) {
			x.cnt[i] += x.cnt[(size_t)p * G + i];
			if (x.first[(size_t)p * G + i] < x.first[i])
				x.first[i] = x.first[(size_t)p * G + i];
		}
	g->count = x.cnt;
	g->first = x.first;   /* (only the first G are read) */
	return GWB_OK;
}

/* Groups of category keys whose label combinations are few (DIRECT_MAX places) in one pass
 * over their codes: every row's combination numbered among all the combinations of labels in
 * label order (each key's missing value after its labels), while each part of the pool counts
 * the places and notes their first rows; a second pass renumbers only when a place before the
 * last one used is empty (a label, or a combination, that does not occur). */
#define DIRECT_MAX ((size_t)1 << 24)

typedef struct catgrp_ctx {
	const gwb_col *keys;
	int nk;
	uint32_t *const *map;   /* per key: label (nlevels: missing) -> its place in label order */
	const size_t *K;        /* per key: nlevels + 1 */
	uint32_t *gid;
	size_t P;               /* the places: the product of K */
	size_t *cnt, *first;    /* parts x P */
	const uint32_t *num;    /* the renumbering pass: place -> group */
} catgrp_ctx;

static void catgrp_run(void *ctx, int64_t a, int64_t b, int part)
{
	catgrp_ctx *x = ctx;
	size_t *cnt = x->cnt + (size_t)part * x->P, *first = x->first + (size_t)part * x->P;
	int64_t i;
	int k;

	if (x->num) {
		for (i = a; i < b; i++)
			x->gid[i] = x->num[x->gid[i]];
		return;
	}
	if (x->nk == 1) {
		const uint32_t *map = x->map[0];
		for (i = a; i < b; i++) {
			uint32_t r = map[cat_at(&x->keys[0], (size_t)i)];
			x->gid[i] = r;
			if (!cnt[r]++)
				first[r] = (size_t)i;
		}
		return;
	}
	for (i = a; i < b; i++) {
		size_t r = 0;
		for (k = 0; k < x->nk; k++)
			r = r * x->K[k] + x->map[k][cat_at(&x->keys[k], (size_t)i)];
		x->gid[i] = (uint32_t)r;
		if (!cnt[r]++)
			first[r] = (size_t)i;
	}
}

/* the places of nk category keys (0: too many for cat_groups) */
static size_t cat_places(const gwb_col *keys, int nk, size_t n)
{
	size_t P = 1;
	int k;

	for (k = 0; k < nk; k++) {
		size_t K = (size_t)keys[k].nlevels + 1;
		if (!keys[k].levels || keys[k].text || P > DIRECT_MAX / K)
			return 0;
		P *= K;
	}
	return P <= DIRECT_MAX && (P <= 2 * n || P <= ((size_t)1 << 16)) ? P : 0;
}

static gwb_status cat_groups(gwb_groups *g, const gwb_col *keys, int nk, size_t P)
{
	size_t n = g->rows, q, G;
	int parts = gwb_cpu_threads(), p, k;
	uint32_t *map[16] = {0}, *num = NULL;
	size_t K[16];
	catgrp_ctx x = {keys, nk, map, K, g->gid, P, NULL, NULL, NULL};
	gwb_status st = GWB_OK;
	bool empty = false, gap = false;

	if (nk > 16)
		return gwb_error(GWB_EINVAL, "group_by: at most 16 keys");
	if ((size_t)parts * P * 2 * sizeof(size_t) > ((size_t)256 << 20))
		parts = 1;
	x.cnt = calloc((size_t)parts * P, sizeof(size_t));
	x.first = malloc((size_t)parts * P * sizeof(size_t));
	num = malloc(P * sizeof(uint32_t));
	if (!x.cnt || !x.first || !num)
		goto nomem;
	for (k = 0; k < nk; k++) {
		uint64_t *rank = level_ranks(&keys[k]);
		size_t l;
		K[k] = (size_t)keys[k].nlevels + 1;
		if (!rank || !(map[k] = malloc(K[k] * sizeof(uint32_t)))) {
			free(rank);
			goto nomem;
		}
		for (l = 0; l + 1 < K[k]; l++)
			map[k][l] = (uint32_t)rank[l];
		map[k][K[k] - 1] = (uint32_t)(K[k] - 1);
		free(rank);
	}
	for (q = 0; q < (size_t)parts * P; q++)
		x.first[q] = SIZE_MAX;
	if (parts == 1)
		catgrp_run(&x, 0, (int64_t)n, 0);
	else
		gwb_parallel_for((int64_t)n, 65536, catgrp_run, &x);
	for (p = 1; p < parts; p++)
		for (q = 0; q < P; q++) {
			x.cnt[q] += x.cnt[(size_t)p * P + q];
			if (x.first[(size_t)p * P + q] < x.first[q])
				x.first[q] = x.first[(size_t)p * P + q];
		}
	for (q = 0, G = 0; q < P; q++) {   /* the places that occur, packed in order */
		if (!x.cnt[q]) {
			empty = true;
			continue;
		}
		gap |= empty;
		num[q] = (uint32_t)G;
		x.cnt[G] = x.cnt[q];
		x.first[G] = x.first[q];
		G++;
	}
	if (gap) {   /* a place before the last one used is empty: renumber */
		x.num = num;
		gwb_parallel_for((int64_t)n, 65536, catgrp_run, &x);
	}
	g->ngroups = n ? G : 0;
	g->count = x.cnt;
	g->first = x.first;
	x.cnt = x.first = NULL;
	goto out;
nomem:
	st = oom("group_by", n);
out:
	for (k = 0; k < nk; k++)
		free(map[k]);
	free(num);
	free(x.cnt);
	free(x.first);
	return st;
}

static gwb_status groups_make(const gwb_col *keys, int nk, size_t n, gwb_groups **out)
{
	gwb_groups *g = calloc(1, sizeof(*g));
	uint64_t *cur = NULL, *nxt = NULL;
	size_t card = 1, c2;
	gwb_status st = GWB_OK;
	bool hashed = false, h2;
	combine_ctx cx;
	int k;

	*out = NULL;
	if (!g) {
		st = oom("group_by", n);
		goto fail;
	}
	if (n > UINT32_MAX) {
		st = gwb_error(GWB_EINVAL, "group_by: %zu rows are more than 2^32", n);
		goto fail;
	}
	g->rows = n;
	{
		size_t P = cat_places(keys, nk, n);
		if (P) {   /* category keys of few combinations: numbered directly */
			if (!(g->gid = malloc((n + 1) * sizeof(uint32_t)))) {
				st = oom("group_by", n);
				goto fail;
			}
			if ((st = cat_groups(g, keys, nk, P)))
				goto fail;
			*out = g;
			return GWB_OK;
		}
	}
	cur = malloc((n + 1) * sizeof(uint64_t));
	if (!cur || (nk > 1 && !(nxt = malloc((n + 1) * sizeof(uint64_t))))) {
		st = oom("group_by", n);
		goto fail;
	}
	for (k = 0; k < nk; k++) {
		if ((st = key_codes(&keys[k], n, k ? nxt : cur, k ? &c2 : &card, &h2)))
			goto fail;
		hashed |= h2;
		if (!k)
			continue;
		if (card > 1 && c2 > 1 && card > UINT64_MAX / c2) {
			if ((st = number_keys(cur, n, &card, &h2)))
				goto fail;
			hashed |= h2;
		}
		cx = (combine_ctx){cur, nxt, c2, NULL};
		gwb_parallel_for((int64_t)n, 65536, combine_run, &cx);
		card *= c2 ? c2 : 1;
		if (gwb_intr_pending()) {
			st = intr("group_by");
			goto fail;
		}
	}
	if (nk > 1) {   /* the combinations that occur, numbered in order */
		if ((st = number_keys(cur, n, &card, &h2)))
			goto fail;
		hashed |= h2;
	}
	g->ngroups = n ? card : 0;
	g->hashed = hashed;
	g->gid = malloc((n + 1) * sizeof(uint32_t));
	if (!g->gid) {
		st = oom("group_by", n);
		goto fail;
	}
	cx = (combine_ctx){cur, NULL, 0, g->gid};
	gwb_parallel_for((int64_t)n, 65536, combine_run, &cx);
	if ((st = count_groups(g)))
		goto fail;
	free(cur);
	free(nxt);
	*out = g;
	return GWB_OK;
fail:
	free(cur);
	free(nxt);
	gwb_groups_free(g);
	return st;
}

static const char *const agg_names[] = {"count", "sum", "mean", "min", "max", "std", "var",
					"median", "first", "last", "nunique", "count_all"};

int gwb_agg_find(const char *name)
{
	int i;

	for (i = 0; i <= GWB_AGG_COUNT_ALL; i++)
		if (!strcmp(name, agg_names[i]))
			return i;
	return -1;
}

const char *gwb_agg_name(gwb_agg a)
{
	return a <= GWB_AGG_COUNT_ALL ? agg_names[a] : "?";
}


/* per-chunk accumulation of one aggregate over rows */
typedef struct acc_ctx {
	const gwb_groups *g;
	const gwb_col *c;
	gwb_agg a;
	size_t G;
	int parts;          /* accumulator sets: one per chunk range run by a thread */
	gwb_ksum *ks;           /* parts x G */
	size_t *cnt;        /* parts x G */
	double *mm;         /* parts x G (min / max) */
	const double *mean; /* var / std second pass */
	size_t n;
} acc_ctx;

#define ABLOCK 2048

static void acc_run(void *ctx, int64_t clo, int64_t chi, int part)
{
	acc_ctx *x = ctx;
	size_t G = x->G, lo = x->n * (size_t)clo / CHUNKS, hi = x->n * (size_t)chi / CHUNKS, i, m, j;
	gwb_ksum *ks = x->ks ? x->ks + (size_t)part * G : NULL;
	size_t *cnt = x->cnt ? x->cnt + (size_t)part * G : NULL;
	double *mm = x->mm ? x->mm + (size_t)part * G : NULL, buf[ABLOCK];
	const uint32_t *gid = x->g->gid;

	for (i = lo; i < hi; i += ABLOCK) {
		m = hi - i < ABLOCK ? hi - i : ABLOCK;
		gwb_col_block(x->c, i, m, buf);
		switch (x->a) {
		case GWB_AGG_MIN:
			for (j = 0; j < m; j++)
				if (buf[j] < mm[gid[i + j]])
					mm[gid[i + j]] = buf[j];
			break;
		case GWB_AGG_MAX:
			for (j = 0; j < m; j++)
				if (buf[j] > mm[gid[i + j]])
					mm[gid[i + j]] = buf[j];
			break;
		case GWB_AGG_VAR: case GWB_AGG_STD:
			for (j = 0; j < m; j++)
				if (!isnan(buf[j])) {
					double dv = buf[j] - x->mean[gid[i + j]];
					gwb_ksum_add(&ks[gid[i + j]], dv * dv);
				}
			break;
		default:   /* count, sum, mean */
			for (j = 0; j < m; j++)
				if (!isnan(buf[j])) {
					cnt[gid[i + j]]++;
					if (ks)
						gwb_ksum_add(&ks[gid[i + j]], buf[j]);
				}
		}
	}
}

/* one accumulation pass: the chunks dealt to at most `parts` threads, sets combined after */
static gwb_status accumulate(acc_ctx *x)
{
	size_t G = x->G, tot;

	x->parts = gwb_cpu_threads();
	if (x->parts > CHUNKS)
		x->parts = CHUNKS;
	tot = (size_t)x->parts * (G + 1);
	if (tot * 24 > ((size_t)1 << 30))
		x->parts = 1, tot = G + 1;
	if (x->a == GWB_AGG_MIN || x->a == GWB_AGG_MAX) {
		size_t i;
		x->mm = malloc(tot * sizeof(double));
		if (!x->mm)
			return oom("agg", x->n);
		for (i = 0; i < tot; i++)
			x->mm[i] = x->a == GWB_AGG_MIN ? INFINITY : -INFINITY;
	} else {
		x->ks = x->a == GWB_AGG_COUNT ? NULL : calloc(tot, sizeof(gwb_ksum));
		x->cnt = calloc(tot, sizeof(size_t));
		if ((!x->ks && x->a != GWB_AGG_COUNT) || !x->cnt)
			return oom("agg", x->n);
	}
	if (x->parts == 1)
		acc_run(x, 0, CHUNKS, 0);
	else   /* the pool deals [0, CHUNKS) in at most parts contiguous ranges, part < parts */
		gwb_parallel_for(CHUNKS, CHUNKS / x->parts, acc_run, x);
	return GWB_OK;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* rows by group: order[start[g] .. start[g + 1]) in row order */
static gwb_status group_rows(gwb_groups *g)
{
	size_t i, *pos;

	if (g->order)
		return GWB_OK;
	g->start = malloc((g->ngroups + 2) * sizeof(size_t));
	g->order = malloc((g->rows + 1) * sizeof(size_t));
	pos = malloc((g->ngroups + 1) * sizeof(size_t));
	if (!g->start || !g->order || !pos) {
		free(pos);
		free(g->start);
		free(g->order);
		g->start = g->order = NULL;
		return oom("group rows", g->rows);
	}
	g->start[0] = 0;
	for (i = 0; i < g->ngroups; i++)
		g->start[i + 1] = g->start[i] + g->count[i];
	memcpy(pos, g->start, g->ngroups * sizeof(size_t));
	for (i = 0; i < g->rows; i++)
		g->order[pos[g->gid[i]]++] = i;
	free(pos);
	return GWB_OK;
}

typedef struct seg_ctx {
	gwb_groups *g;
	const gwb_col *c;
	gwb_agg a;
	double *out;
	size_t maxc;
	int failed;
} seg_ctx;

static void seg_run(void *ctx, int64_t lo, int64_t hi, int part)
{
	seg_ctx *x = ctx;
	double *buf = malloc((x->maxc + 1) * sizeof(double)), half = 0.5;
	int64_t gi;

	(void)part;
	if (!buf) {
		x->failed = 1;
		return;
	}
	for (gi = lo; gi < hi; gi++) {
		size_t s = x->g->start[gi], e = x->g->start[gi + 1], k = 0, i, d;
		if (x->a == GWB_AGG_NUNIQUE && x->c->type == GWB_COL_I64) {
			/* int64: distinct by value (2^53 and 2^53 + 1 are two), not as doubles */
			int64_t *iv = (int64_t *)(void *)buf;
			const int64_t *v = x->c->v;
			for (i = s; i < e; i++)
				if (v[x->g->order[i]] != GWB_I64_NA)
					iv[k++] = v[x->g->order[i]];
			qsort(iv, k, sizeof(int64_t), cmp_i64);
			for (i = 0, d = 0; i < k; i++)
				d += !i || iv[i] != iv[i - 1];
			x->out[gi] = (double)d;
			continue;
		}
		for (i = s; i < e; i++) {
			double v = gwb_col_at(x->c, x->g->order[i]);
			if (!isnan(v))
				buf[k++] = v == 0 ? 0.0 : v;
		}
		if (x->a == GWB_AGG_MEDIAN) {
			gwb_quantiles_inplace(buf, k, &half, 1, &x->out[gi]);
			continue;
		}
		qsort(buf, k, sizeof(double), cmp_dbl);
		for (i = 0, d = 0; i < k; i++)
			d += !i || buf[i] != buf[i - 1];
		x->out[gi] = (double)d;
	}
	free(buf);
}

/* Medians: each group's values (missing left out, -0 as 0) moved together into one array,
 * as a radix pass moves keys: blocks of rows count their values per group, then move them to
 * offsets in (group, block) order; each group's median is then selected in place
 * (gwb_quantiles_inplace), the groups dealt to the pool's workers. */
typedef struct med_ctx {
	const gwb_groups *g;
	const gwb_col *c;
	size_t n, G;
	int nb;
	uint32_t *pos;      /* nb x G: counts, then the blocks' next positions */
	size_t *start;      /* G + 1 */
	double *vals;
	double *out;
} med_ctx;

static void med_count(void *ctx, int64_t blo, int64_t bhi, int part)
{
	med_ctx *x = ctx;
	double buf[ABLOCK];

	(void)part;
	for (int64_t b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / (size_t)x->nb, hi = x->n * (size_t)(b + 1) / (size_t)x->nb;
		uint32_t *h = x->pos + (size_t)b * x->G;
		const uint32_t *gid = x->g->gid;
		memset(h, 0, x->G * sizeof(uint32_t));
		for (size_t i = lo; i < hi; i += ABLOCK) {
			size_t m = hi - i < ABLOCK ? hi - i : ABLOCK;
			gwb_col_block(x->c, i, m, buf);
			for (size_t j = 0; j < m; j++)
				h[gid[i + j]] += !isnan(buf[j]);
		}
	}
}

static void med_move(void *ctx, int64_t blo, int64_t bhi, int part)
{
	med_ctx *x = ctx;
	double buf[ABLOCK];

	(void)part;
	for (int64_t b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / (size_t)x->nb, hi = x->n * (size_t)(b + 1) / (size_t)x->nb;
		uint32_t *h = x->pos + (size_t)b * x->G;
		const uint32_t *gid = x->g->gid;
		for (size_t i = lo; i < hi; i += ABLOCK) {
			size_t m = hi - i < ABLOCK ? hi - i : ABLOCK;
			gwb_col_block(x->c, i, m, buf);
			for (size_t j = 0; j < m; j++)
				if (!isnan(buf[j]))
					x->vals[h[gid[i + j]]++] = buf[j] == 0 ? 0.0 : buf[j];
		}
	}
}

static void med_select(void *ctx, size_t gi, int worker)
{
	med_ctx *x = ctx;
	double half = 0.5;

	(void)worker;
	gwb_quantiles_inplace(x->vals + x->start[gi], x->start[gi + 1] - x->start[gi], &half, 1,
			      &x->out[gi]);
}

static gwb_status agg_median(gwb_groups *g, const gwb_col *c, double *out)
{
	size_t G = g->ngroups, n = g->rows, tot = 0, k;
	med_ctx x = {g, c, n, G, 1, NULL, NULL, NULL, out};
	int b;

	if (n > UINT32_MAX)
		return gwb_error(GWB_EINVAL, "median: %zu rows are more than 2^32", n);
	/* blocks: up to 16, while their counts stay within 32 MB and each has rows enough */
	while (x.nb < 16 && (size_t)x.nb * 2 * (G + 1) * sizeof(uint32_t) <= ((size_t)32 << 20) &&
	       n >= (size_t)x.nb * 2 * 4096)
		x.nb *= 2;
	x.pos = malloc((size_t)x.nb * (G + 1) * sizeof(uint32_t));
	x.start = malloc((G + 2) * sizeof(size_t));
	if (!x.pos || !x.start) {
		free(x.pos);
		free(x.start);
		return oom("median", n);
	}
	gwb_parallel_for(x.nb, 1, med_count, &x);
	for (k = 0; k < G; k++) {
		x.start[k] = tot;
		for (b = 0; b < x.nb; b++) {
			uint32_t t = x.pos[(size_t)b * G + k];
			x.pos[(size_t)b * G + k] = (uint32_t)tot;
			tot += t;
		}
	}
	x.start[G] = tot;
	x.vals = malloc((tot + 1) * sizeof(double));
	if (!x.vals) {
		free(x.pos);
		free(x.start);
		return oom("median", n);
	}
	gwb_parallel_for(x.nb, 1, med_move, &x);
	free(x.pos);
	if (gwb_intr_pending()) {
		free(x.vals);
		free(x.start);
		return intr("agg");
	}
	gwb_parallel_items(gwb_cpu_threads(), G, med_select, &x);
	free(x.vals);
	free(x.start);
	return gwb_intr_pending() ? intr("agg") : GWB_OK;
}

gwb_status gwb_groups_agg(gwb_groups *g, gwb_agg a, const gwb_col *c, double *out)
{
	acc_ctx x = {0};
	size_t G = g->ngroups, i;
	int p;
	gwb_status st = GWB_OK;

	if (a == GWB_AGG_COUNT_ALL) {
		for (i = 0; i < G; i++)
			out[i] = (double)g->count[i];
		return GWB_OK;
	}
	if (!c)
		return gwb_error(GWB_EINVAL, "%s needs a column", gwb_agg_name(a));
	if (a == GWB_AGG_FIRST || a == GWB_AGG_LAST) {
		for (i = 0; i < G; i++)
			out[i] = NAN;
		if (a == GWB_AGG_FIRST) {
			for (i = 0; i < g->rows; i++)
				if (isnan(out[g->gid[i]]))
					out[g->gid[i]] = gwb_col_at(c, i);
		} else {
			for (i = g->rows; i-- > 0;)
				if (isnan(out[g->gid[i]]))
					out[g->gid[i]] = gwb_col_at(c, i);
		}
		return GWB_OK;
	}
	if (a == GWB_AGG_MEDIAN)
		return agg_median(g, c, out);
	if (a == GWB_AGG_NUNIQUE) {
		seg_ctx s = {g, c, a, out, 0, 0};
		if ((st = group_rows(g)))
			return st;
		for (i = 0; i < G; i++)
			if (g->count[i] > s.maxc)
				s.maxc = g->count[i];
		gwb_parallel_for((int64_t)G, 64, seg_run, &s);
		if (s.failed)
			return oom("agg", g->rows);
		return gwb_intr_pending() ? intr("agg") : GWB_OK;
	}
	x.g = g;
	x.c = c;
	x.G = G;
	x.n = g->rows;
	x.a = a == GWB_AGG_VAR || a == GWB_AGG_STD ? GWB_AGG_MEAN : a;
	if ((st = accumulate(&x)))
		goto out;
	if (x.mm) {
		for (i = 0; i < G; i++) {
			double v = x.mm[i];
			for (p = 1; p < x.parts; p++) {
				double w = x.mm[(size_t)p * G + i];
				v = a == GWB_AGG_MIN ? (w < v ? w : v) : (w > v ? w : v);
			}
			out[i] = isinf(v) && v == (a == GWB_AGG_MIN ? INFINITY : -INFINITY) ? NAN : v;
		}
		goto out;
	}
	for (i = 0; i < G; i++) {
		gwb_ksum s = {0, 0};
		size_t n = 0;
		for (p = 0; p < x.parts; p++) {
			n += x.cnt[(size_t)p * G + i];
			if (x.ks) {
				gwb_ksum_add(&s, x.ks[(size_t)p * G + i].s);
				gwb_ksum_add(&s, x.ks[(size_t)p * G + i].c);
			}
		}
		out[i] = a == GWB_AGG_COUNT ? (double)n : a == GWB_AGG_SUM ? s.s + s.c :
			 n ? (s.s + s.c) / (double)n : NAN;
	}
	if (a == GWB_AGG_VAR || a == GWB_AGG_STD) {
		acc_ctx y = {0};
		size_t *n = x.cnt;   /* counts per part: summed into part 0's row */
		for (i = 0; i < G; i++)
			for (p = 1; p < x.parts; p++)
				n[i] += n[(size_t)p * G + i];
		y.g = g;
		y.c = c;
		y.G = G;
		y.n = g->rows;
		y.a = GWB_AGG_VAR;
		y.mean = out;
		if ((st = accumulate(&y))) {
			free(y.ks);
			free(y.cnt);
			goto out;
		}
		for (i = 0; i < G; i++) {
			gwb_ksum s = {0, 0};
			double var;
			for (p = 0; p < y.parts; p++) {
				gwb_ksum_add(&s, y.ks[(size_t)p * G + i].s);
				gwb_ksum_add(&s, y.ks[(size_t)p * G + i].c);
			}
			var = n[i] > 1 ? (s.s + s.c) / (double)(n[i] - 1) : NAN;
			out[i] = a == GWB_AGG_STD ? sqrt(var) : var;
		}
		free(y.ks);
		free(y.cnt);
	}
out:
	free(x.ks);
	free(x.cnt);
	free(x.mm);
	if (!st && gwb_intr_pending())
		st = intr("agg");
	return st;
}

bool gwb_agg_exact_i64(gwb_agg a, const gwb_col *c)
{
	return c && c->type == GWB_COL_I64 && !c->levels &&
	       (a == GWB_AGG_SUM || a == GWB_AGG_MIN || a == GWB_AGG_MAX || a == GWB_AGG_FIRST ||
		a == GWB_AGG_LAST);
}

gwb_status gwb_groups_agg_i64(gwb_groups *g, gwb_agg a, const gwb_col *c, int64_t *out,
			      bool *exact)
{
	const int64_t *v = c->v;
	size_t G = g->ngroups, i;
	bool *seen = calloc(G + 1, 1);

	*exact = true;
	if (!seen)
		return oom("agg", g->rows);
	for (i = 0; i < G; i++)
		out[i] = a == GWB_AGG_SUM ? 0 : GWB_I64_NA;
	if (a == GWB_AGG_LAST) {
		for (i = g->rows; i-- > 0;)
			if (v[i] != GWB_I64_NA && !seen[g->gid[i]]) {
				seen[g->gid[i]] = true;
				out[g->gid[i]] = v[i];
			}
		free(seen);
		return GWB_OK;
	}
	for (i = 0; i < g->rows; i++) {
		size_t k = g->gid[i];
		int64_t x = v[i];
		if (x == GWB_I64_NA)
			continue;
		switch (a) {
		case GWB_AGG_SUM:
			if (__builtin_add_overflow(out[k], x, &out[k]) || out[k] == GWB_I64_NA)
				*exact = false;
			break;
		case GWB_AGG_MIN:
			if (!seen[k] || x < out[k])
				out[k] = x;
			break;
		case GWB_AGG_MAX:
			if (!seen[k] || x > out[k])
				out[k] = x;
			break;
		default:   /* first */
			if (!seen[k])
				out[k] = x;
		}
		seen[k] = true;
	}
	free(seen);   /* (a group without a value sums to 0, as in gwb_groups_agg) */
	return gwb_intr_pending() ? intr("agg") : GWB_OK;
}

/* --- join ---------------------------------------------------------------------------------- */

typedef struct join_ctx {
	const gwb_col *lk;
	const uint64_t *lkey;      /* left keys in the right's key space, UINT64_MAX = none */
	const u64map *m;           /* key -> id; NULL: the keys are the ids (category codes) */
	size_t nid;                /* the ids */
	const size_t *start, *rrow;
	bool left;
	size_t *cnt;               /* per chunk */
	size_t *off;               /* per chunk output offset */
	size_t *li, *ri;
	size_t n;
	int fill;
} join_ctx;

static void join_run(void *ctx, int64_t clo, int64_t chi, int part)
{
	join_ctx *x = ctx;
	int64_t ch;

	(void)part;
	for (ch = clo; ch < chi; ch++) {
		size_t lo = x->n * (size_t)ch / CHUNKS, hi = x->n * (size_t)(ch + 1) / CHUNKS, i;
		size_t c = 0, o = x->fill ? x->off[ch] : 0;
		for (i = lo; i < hi; i++) {
			uint64_t k = x->lkey[i];
			size_t h, s = 0, e = 0, j;
			if (!x->m) {
				if (k < x->nid) {
					s = x->start[k];
					e = x->start[k + 1];
				}
			} else if (k != UINT64_MAX) {
				h = map_slot(x->m, k);
				if (x->m->id[h] != UINT32_MAX) {
					s = x->start[x->m->id[h]];
					e = x->start[x->m->id[h] + 1];
				}
			}
			if (!x->fill) {
				c += e > s ? e - s : x->left;
				continue;
			}
			if (e == s && x->left) {
				x->li[o] = i;
				x->ri[o++] = GWB_ROW_NONE;
			}
			for (j = s; j < e; j++) {
				x->li[o] = i;
				x->ri[o++] = x->rrow[j];
			}
		}
		if (!x->fill)
			x->cnt[ch] = c;
	}
}

/* keys of a join side: numbers by bits; categories by the code of the label in the left
 * column's dictionary (labels the left lacks: never match) */
typedef struct jkey_ctx {
	const gwb_col *c;
	const int *map;   /* categories: code -> the left's code (-1: none) */
	bool ints;
	uint64_t *out;
} jkey_ctx;

static void jkey_run(void *ctx, int64_t a, int64_t b, int part)
{
	jkey_ctx *x = ctx;
	const gwb_col *c = x->c;
	int64_t i;

	(void)part;
	if (x->map) {
		for (i = a; i < b; i++) {
			size_t k = cat_at(c, (size_t)i);
			x->out[i] = k == (size_t)c->nlevels || x->map[k] < 0 ? UINT64_MAX :
				    (uint64_t)x->map[k];
		}
	} else if (x->ints) {   /* both sides int64: exactly */
		for (i = a; i < b; i++)
			x->out[i] = gwb_okey_i64(((const int64_t *)c->v)[i]);
	} else {
		for (i = a; i < b; i++)
			x->out[i] = okey_f64(gwb_col_at(c, (size_t)i));
	}
}

static gwb_status join_keys(const gwb_col *c, const gwb_col *ref, bool ints, uint64_t *out)
{
	jkey_ctx jk = {c, NULL, ints, out};

	if (c->levels) {
		int k, *map = malloc(((size_t)c->nlevels + 1) * sizeof(int));
		int *ord = malloc(((size_t)ref->nlevels + 1) * sizeof(int));
		if (!map || !ord) {
			free(map);
			free(ord);
			return oom("join", c->n);
		}
		for (k = 0; k < ref->nlevels; k++)
			ord[k] = k;
		if (c->levels != ref->levels) {
			rank_levels = (const char *const *)ref->levels;
			qsort(ord, (size_t)ref->nlevels, sizeof(int), cmp_level);
		}
		for (k = 0; k < c->nlevels; k++) {
			int lo = 0, hi = ref->nlevels;
			const char *want = c->levels[k] ? c->levels[k] : "";
			map[k] = -1;
			if (c->levels == ref->levels) {
				map[k] = k;
				continue;
			}
			while (lo < hi) {   /* the label in the left dictionary, by bisection */
				int mid = (lo + hi) / 2;
				const char *s = ref->levels[ord[mid]] ? ref->levels[ord[mid]] : "";
				int r = strcmp(s, want);
				if (!r) {
					map[k] = ord[mid];
					break;
				}
				if (r < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
		free(ord);
		jk.map = map;
		gwb_parallel_for((int64_t)c->n, 65536, jkey_run, &jk);
		free(map);
		return GWB_OK;
	}
	gwb_parallel_for((int64_t)c->n, 65536, jkey_run, &jk);
	return GWB_OK;
}

static gwb_status table_join(const gwb_col *lk, const gwb_col *rk, bool left, size_t **li,
			     size_t **ri, size_t *n)
{
	uint64_t *lkey = malloc((lk->n + 1) * sizeof(uint64_t));
	uint64_t *rkey = malloc((rk->n + 1) * sizeof(uint64_t));
	size_t *start = NULL, *rrow = NULL, *pos = NULL, i, tot, nid;
	size_t cnt[CHUNKS], off[CHUNKS];
	uint32_t *rid = NULL;
	u64map m = {0};
	join_ctx x = {0};
	gwb_status st = GWB_OK;
	bool ints = lk->type == GWB_COL_I64 && rk->type == GWB_COL_I64;
	int ch;

	*li = *ri = NULL;
	*n = 0;
	if (!lkey || !rkey || !map_init(&m, rk->n < 1024 ? 1024 : rk->n)) {
		st = oom("join", lk->n);
		goto out;
	}
	if ((st = join_keys(lk, lk, ints, lkey)) || (st = join_keys(rk, lk, ints, rkey)))
		goto out;
	/* the right side's keys numbered in order of appearance, its rows listed by key */
	rid = malloc((rk->n + 1) * sizeof(uint32_t));
	if (!rid) {
		st = oom("join", rk->n);
		goto out;
	}
	if (lk->levels) {   /* category codes of the left's dictionary: the ids themselves */
		nid = (size_t)lk->nlevels;
		for (i = 0; i < rk->n; i++)
			rid[i] = rkey[i] == UINT64_MAX ? UINT32_MAX : (uint32_t)rkey[i];
	} else {
		for (i = 0; i < rk->n; i++) {
			rid[i] = rkey[i] == UINT64_MAX ? UINT32_MAX : map_put(&m, rkey[i]);
			if (rkey[i] != UINT64_MAX && rid[i] == UINT32_MAX) {
				st = oom("join", rk->n);
				goto out;
			}
		}
		nid = m.used;
	}
	start = calloc(nid + 2, sizeof(size_t));
	rrow = malloc((rk->n + 1) * sizeof(size_t));
	pos = malloc((nid + 1) * sizeof(size_t));
	if (!start || !rrow || !pos) {
		st = oom("join", rk->n);
		goto out;
	}
	for (i = 0; i < rk->n; i++)
		if (rid[i] != UINT32_MAX)
			start[rid[i] + 1]++;
	for (i = 0; i < nid; i++)
		start[i + 1] += start[i];
	memcpy(pos, start, nid * sizeof(size_t));
	for (i = 0; i < rk->n; i++)
		if (rid[i] != UINT32_MAX)
			rrow[pos[rid[i]]++] = i;
	x.lk = lk;
	x.lkey = lkey;
	x.m = lk->levels ? NULL : &m;
	x.nid = nid;
	x.start = start;
	x.rrow = rrow;
	x.left = left;
	x.cnt = cnt;
	x.off = off;
	x.n = lk->n;
	gwb_parallel_for(CHUNKS, 1, join_run, &x);
	for (ch = 0, tot = 0; ch < CHUNKS; ch++) {
		off[ch] = tot;
		tot += cnt[ch];
	}
	if (gwb_intr_pending()) {
		st = intr("join");
		goto out;
	}
	x.li = malloc((tot + 1) * sizeof(size_t));
	x.ri = malloc((tot + 1) * sizeof(size_t));
	if (!x.li || !x.ri) {
		free(x.li);
		free(x.ri);
		st = gwb_error(GWB_ENOMEM, "join: out of memory for %zu result rows", tot);
		goto out;
	}
	x.fill = 1;
	gwb_parallel_for(CHUNKS, 1, join_run, &x);
	*li = x.li;
	*ri = x.ri;
	*n = tot;
out:
	free(lkey);
	free(rkey);
	free(rid);
	free(start);
	free(rrow);
	free(pos);
	map_free(&m);
	return st;
}

/* a lookup: every left row's right row through a direct table (category codes) or the map */
typedef struct lookup_ctx {
	const gwb_col *lk;
	const uint64_t *lkey;   /* numbers: the left keys; NULL for categories */
	const size_t *at;       /* categories: the left code (nlevels: missing) -> right row */
	const u64map *m;        /* numbers: key -> right row's index in rows */
	const size_t *rows;
	size_t *ri;
} lookup_ctx;

static void lookup_run(void *ctx, int64_t a, int64_t b, int part)
{
	lookup_ctx *x = ctx;
	int64_t i;

	(void)part;
	if (x->at) {
		for (i = a; i < b; i++)
			x->ri[i] = x->at[cat_at(x->lk, (size_t)i)];
		return;
	}
	for (i = a; i < b; i++) {
		uint64_t k = x->lkey[i];
		size_t h;
		x->ri[i] = GWB_ROW_NONE;
		if (k == UINT64_MAX)
			continue;
		h = map_slot(x->m, k);
		if (x->m->id[h] != UINT32_MAX)
			x->ri[i] = x->rows[x->m->id[h]];
	}
}

static gwb_status table_lookup(const gwb_col *lk, const gwb_col *rk, size_t **ri, bool *unique)
{
	bool ints = lk->type == GWB_COL_I64 && rk->type == GWB_COL_I64;
	uint64_t *rkey = malloc((rk->n + 1) * sizeof(uint64_t)), *lkey = NULL;
	size_t *at = NULL, *rows = NULL, i;
	u64map m = {0};
	lookup_ctx x = {lk, NULL, NULL, NULL, NULL, NULL};
	gwb_status st = GWB_OK;

	*ri = NULL;
	*unique = false;
	if (!rkey) {
		st = oom("join", rk->n);
		goto out;
	}
	if ((st = join_keys(rk, lk, ints, rkey)))
		goto out;
	if (lk->levels) {   /* right keys as the left's codes: a table over them */
		size_t nl = (size_t)lk->nlevels;
		if (!(at = malloc((nl + 1) * sizeof(size_t)))) {
			st = oom("join", rk->n);
			goto out;
		}
		for (i = 0; i <= nl; i++)
			at[i] = GWB_ROW_NONE;
		for (i = 0; i < rk->n; i++) {
			if (rkey[i] == UINT64_MAX)
				continue;
			if (at[rkey[i]] != GWB_ROW_NONE)
				goto out;   /* a repeated key: not a lookup */
			at[rkey[i]] = i;
		}
		x.at = at;
	} else {
		if (!map_init(&m, rk->n < 1024 ? 1024 : rk->n) ||
		    !(rows = malloc((rk->n + 1) * sizeof(size_t))) ||
		    !(lkey = malloc((lk->n + 1) * sizeof(uint64_t)))) {
			st = oom("join", lk->n);
			goto out;
		}
		for (i = 0; i < rk->n; i++) {
			size_t used = m.used;
			uint32_t id;
			if (rkey[i] == UINT64_MAX)
				continue;
			if ((id = map_put(&m, rkey[i])) == UINT32_MAX) {
				st = oom("join", rk->n);
				goto out;
			}
			if (m.used == used)
				goto out;   /* a repeated key: not a lookup */
			rows[id] = i;
		}
		if ((st = join_keys(lk, lk, ints, lkey)))
			goto out;
		x.lkey = lkey;
		x.m = &m;
		x.rows = rows;
	}
	if (!(x.ri = malloc((lk->n + 1) * sizeof(size_t)))) {
		st = gwb_error(GWB_ENOMEM, "join: out of memory for %zu result rows", lk->n);
		goto out;
	}
	gwb_parallel_for((int64_t)lk->n, 65536, lookup_run, &x);
	*ri = x.ri;
	*unique = true;
out:
	free(rkey);
	free(lkey);
	free(at);
	free(rows);
	if (m.key || m.id)
		map_free(&m);
	return st;
}

/* whether some idx[i] is out of range (the first one is found again, serially) */
typedef struct check_ctx {
	const size_t *idx;
	size_t rows;
	int bad;
} check_ctx;

static void check_run(void *ctx, int64_t a, int64_t b, int part)
{
	check_ctx *x = ctx;
	size_t bad = 0;
	int64_t i;

	(void)part;
	for (i = a; i < b; i++)
		bad |= x->idx[i] >= x->rows;
	if (bad)
		__atomic_store_n(&x->bad, 1, __ATOMIC_RELAXED);
}

gwb_status gwb_table_take(const gwb_dataset *d, const size_t *idx, size_t n, gwb_dataset **out)
{
	int nc = d->features + !d->no_target, j;
	gwb_colspec *spec = calloc((size_t)nc + 1, sizeof(*spec));
	gwb_status st;
	size_t i;

	*out = NULL;
	if (!spec)
		return oom("rows", n);
	{
		check_ctx ck = {idx, d->rows, 0};
		gwb_parallel_for((int64_t)n, 65536, check_run, &ck);
		if (ck.bad)
			for (i = 0; i < n; i++)
				if (idx[i] >= d->rows) {
					free(spec);
					return gwb_error(GWB_EINVAL, "row index %zu out of range (rows = %zu)",
							 idx[i] + 1, d->rows);
				}
	}
	for (j = 0; j < nc; j++) {
		gwb_col_of(d, j, &spec[j].src);
		spec[j].name = j < d->features ? d->names[j] : d->target;
		spec[j].idx = idx;
	}
	st = gwb_table_build(n, spec, nc, d->no_target ? -1 : d->features, out);
	free(spec);
	return st;
}

/* --- building a table ---------------------------------------------------------------------- */

#define PREFETCH 32   /* rows ahead a gather asks for the source value of */

typedef struct gather_ctx {
	const gwb_colspec *s;
	float *out;        /* float32 values (X, a regression target) */
	int64_t *out_i;    /* or a 64-bit column's exact values */
	double *out_f;
	int32_t *out_y;    /* or class codes (a classification target): missing ones counted */
	const double *wide_f;   /* x32_from_wide: the column's exact values, already taken */
	size_t missing;    /* out_y: rows whose label is missing (per part: see gather_y) */
	size_t miss[64];
} gather_ctx;

static void gather_run(void *ctx, int64_t lo, int64_t hi, int part)
{
	gather_ctx *x = ctx;
	const gwb_colspec *s = x->s;
	const size_t *idx = s->idx;
	int64_t i;

	if (x->out_y) {   /* class codes: labels' codes, missing ones counted */
		size_t miss = 0;
		for (i = lo; i < hi; i++) {
			size_t r = idx ? idx[i] : (size_t)i;
			double v = r == GWB_ROW_NONE ? NAN : gwb_col_at(&s->src, r);
			miss += isnan(v);
			x->out_y[i] = isnan(v) ? 0 : (int32_t)v;
		}
		x->miss[part] = miss;
		return;
	}
	if ((x->out_i || x->out_f) && !idx) {   /* a 64-bit column's exact values as they are */
		size_t es = x->out_i ? sizeof(int64_t) : sizeof(double);
		memcpy((char *)(x->out_i ? (void *)x->out_i : (void *)x->out_f) + (size_t)lo * es,
		       (const char *)s->src.v + (size_t)lo * es, (size_t)(hi - lo) * es);
		return;
	}
	if (x->out_i || x->out_f) {   /* a 64-bit column's exact values */
		if (x->out_i) {
			const int64_t *v = s->src.v;
			for (i = lo; i < hi; i++) {
				size_t r = idx ? idx[i] : (size_t)i;
				if (idx && i + PREFETCH < hi && idx[i + PREFETCH] != GWB_ROW_NONE)
					__builtin_prefetch(v + idx[i + PREFETCH]);
				x->out_i[i] = r == GWB_ROW_NONE ? GWB_I64_NA : v[r];
			}
		} else {
			const double *v = s->src.v;
			for (i = lo; i < hi; i++) {
				size_t r = idx ? idx[i] : (size_t)i;
				if (idx && i + PREFETCH < hi && idx[i + PREFETCH] != GWB_ROW_NONE)
					__builtin_prefetch(v + idx[i + PREFETCH]);
				x->out_f[i] = r == GWB_ROW_NONE ? NAN : v[r];
			}
		}
		return;
	}
	if (s->src.x32 || (idx && s->src.type == GWB_COL_F32)) {
		/* float32 values as they are: a Dataset's 64-bit column's X, or a float32 column */
		const float *v = s->src.x32 ? s->src.x32 : s->src.v;
		if (!idx) {
			memcpy(x->out + lo, v + lo, (size_t)(hi - lo) * sizeof(float));
			return;
		}
		for (i = lo; i < hi; i++) {
			size_t r = idx[i];
			if (i + PREFETCH < hi && idx[i + PREFETCH] != GWB_ROW_NONE)
				__builtin_prefetch(v + idx[i + PREFETCH]);
			x->out[i] = r == GWB_ROW_NONE ? NAN : v[r];
		}
		return;
	}
	if (!idx) {
		if (s->src.type == GWB_COL_F32) {
			memcpy(x->out + lo, (const float *)s->src.v + lo, (size_t)(hi - lo) * sizeof(float));
			return;
		}
		for (i = lo; i < hi; i++)
			x->out[i] = (float)gwb_col_at(&s->src, (size_t)i);
		return;
	}
	for (i = lo; i < hi; i++)
		x->out[i] = idx[i] == GWB_ROW_NONE ? NAN : (float)gwb_col_at(&s->src, idx[i]);
}

/* X of a float64 column from its exact values w already taken: X holds each value's float32
 * rounding (the decimal's, or the double's: dataset.h), and the two differ only where the
 * double lies exactly halfway between two floats (every such midpoint is a double, so a
 * decimal and its double never fall on opposite sides of one). Those, and values outside
 * float32's normal range, are read from the source's X instead. */
static void x32_from_wide(void *ctx, int64_t lo, int64_t hi, int part)
{
	gather_ctx *x = ctx;
	const gwb_colspec *s = x->s;
	const double *w = x->wide_f;
	int64_t i;

	(void)part;
	for (i = lo; i < hi; i++) {
		double v = w[i], a = fabs(v);
		uint64_t bits;
		memcpy(&bits, &v, 8);
		if ((a >= 0x1p-125 && a <= 0x1p126 && (bits & 0x1fffffffu) != 0x10000000u) || v == 0 ||
		    isnan(v))
			x->out[i] = (float)v;
		else   /* a midpoint, or near float32's limits: the source's own rounding */
			x->out[i] = s->idx[i] == GWB_ROW_NONE ? NAN : s->src.x32[s->idx[i]];
	}
}

/* a 64-bit column of rows rows from spec s (its exact values through s->idx); NULL out of
 * memory. The caller owns it (gwb_num64_free). */
static gwb_num64 *gather_wide(const gwb_colspec *s, size_t rows)
{
	gwb_num64 *c = calloc(1, sizeof(*c));
	gather_ctx g = {s, NULL, NULL, NULL, NULL, NULL, 0, {0}};

	if (!c)
		return NULL;
	c->type = s->src.type == GWB_COL_I64 ? GWB_DT_I64 : GWB_DT_F64;
	if (c->type == GWB_DT_I64)
		c->i = g.out_i = malloc((rows + 1) * sizeof(int64_t));
	else
		c->f = g.out_f = malloc((rows + 1) * sizeof(double));
	if (!c->i && !c->f) {
		free(c);
		return NULL;
	}
	gwb_parallel_for((int64_t)rows, 65536, gather_run, &g);
	return c;
}

static char **copy_levels(char *const *lv, int n)
{
	char **r = calloc((size_t)n + 1, sizeof(char *));
	int k;

	if (!r)
		return NULL;
	for (k = 0; k < n; k++)
		if (!(r[k] = strdup(lv[k] ? lv[k] : ""))) {
			while (k-- > 0)
				free(r[k]);
			free(r);
			return NULL;
		}
	return r;
}

gwb_status gwb_table_build(size_t rows, const gwb_colspec *cols, int n, int target,
			   gwb_dataset **out)
{
	const gwb_colspec *t = target >= 0 ? &cols[target] : NULL;
	bool cls = t && t->src.levels;
	gwb_dataset *d;
	gwb_status st;
	size_t i;
	int j, f;

	*out = NULL;
	if (t && t->src.text)
		return gwb_error(GWB_EINVAL, "the target '%s' holds free text; a target is a category "
				 "or numbers", t->name ? t->name : "");
	if ((st = gwb_dataset_new(rows, n - (t != NULL), cls ? GWB_TASK_CLASSIFICATION :
				  GWB_TASK_REGRESSION, cls ? t->src.nlevels : 0, &d)))
		return st;
	for (j = 0, f = 0; j < n; j++) {
		gather_ctx g = {&cols[j], NULL, NULL, NULL, NULL, NULL, 0, {0}};
		gwb_num64 *wide = NULL;
		if (j == target)
			continue;
		g.out = d->X + (size_t)f * rows;
		if (cols[j].src.x32 && cols[j].src.type == GWB_COL_F64 && cols[j].idx &&
		    !cols[j].src.levels && !cols[j].src.text) {
			/* a Dataset's float64 column taken by rows: its exact values first, then X
			 * from them (x32_from_wide), one random pass instead of two */
			if (!(wide = gather_wide(&cols[j], rows)))
				goto nomem;
			g.wide_f = wide->f;
			gwb_parallel_for((int64_t)rows, 65536, x32_from_wide, &g);
		} else {
			gwb_parallel_for((int64_t)rows, 65536, gather_run, &g);
		}
		if (!(d->names[f] = strdup(cols[j].name ? cols[j].name : "")))
			goto nomem;
		if (cols[j].src.levels) {
			if (!(d->cat_levels[f] = copy_levels(cols[j].src.levels, cols[j].src.nlevels)))
				goto nomem;
			d->cat_count[f] = cols[j].src.nlevels;
		}
		if ((cols[j].src.type == GWB_COL_I64 || cols[j].src.type == GWB_COL_F64) &&
		    !cols[j].src.levels && !cols[j].src.text) {
			/* a 64-bit column stays one: its exact values, X their rounding */
			gwb_num64 *c = wide;
			if (!c && !(c = gather_wide(&cols[j], rows)))
				goto nomem;
			if (cols[j].src.x32 ? gwb_dataset_attach_wide(d, f, c) :
			    gwb_dataset_set_wide(d, f, c)) {
				gwb_num64_free(c);
				goto nomem;
			}
		}
		if (cols[j].src.text) {
			gwb_text *tx = gwb_text_new(rows);
			if (!tx)
				goto nomem;
			for (i = 0; i < rows; i++) {
				size_t r = cols[j].idx ? cols[j].idx[i] : i;
				const char *v = r == GWB_ROW_NONE ? NULL : cols[j].src.text[r];
				if (v && !(tx->v[i] = gwb_arena_strndup(tx->arena, v, strlen(v)))) {
					gwb_text_free(tx);
					goto nomem;
				}
			}
			if (gwb_dataset_set_text(d, f, tx)) {
				gwb_text_free(tx);
				goto nomem;
			}
		}
		f++;
		if (gwb_intr_pending()) {
			gwb_dataset_free(d);
			return intr("table");
		}
	}
	if (!t) {
		d->no_target = true;
		for (i = 0; i < rows; i++)
			d->yr[i] = NAN;
	} else {
		if (!(d->target = strdup(t->name ? t->name : "")))
			goto nomem;
		/* the target as it was always read: its values rounded here (not a 64-bit
		 * column's X) */
		gwb_colspec ts = *t;
		gather_ctx g = {&ts, d->yr, NULL, NULL, cls ? d->y : NULL, NULL, 0, {0}};
		size_t miss = 0;
		ts.src.x32 = NULL;
		gwb_parallel_for((int64_t)rows, 65536, gather_run, &g);
		for (j = 0; j < 64; j++)
			miss += g.miss[j];
		if (miss) {
			for (i = 0; i < rows; i++) {   /* the first row without a label, for the message */
				size_t r = t->idx ? t->idx[i] : i;
				if (r == GWB_ROW_NONE || isnan(gwb_col_at(&t->src, r)))
					break;
			}
			gwb_dataset_free(d);
			return gwb_error(GWB_EINVAL, "the target '%s' is missing in row %zu: a category "
					 "target needs a label in every row (filter those rows out "
					 "first, or choose another target)", t->name, i + 1);
		}
		if (cls) {
			for (j = 0; j < t->src.nlevels; j++)
				if (!(d->class_names[j] = strdup(t->src.levels[j] ? t->src.levels[j] : "")))
					goto nomem;
		}
	}
	*out = d;
	return GWB_OK;
nomem:
	gwb_dataset_free(d);
	return gwb_error(GWB_ENOMEM, "table: out of memory for %zu rows x %d columns", rows, n);
}

/* --- the entry points: text keys seen as categories ------------------------------------------ */

gwb_status gwb_table_order(const gwb_sortkey *keys, int nk, size_t n, size_t **perm)
{
	gwb_sortkey *kv = calloc((size_t)nk + 1, sizeof(*kv));
	textkey *tk = calloc((size_t)nk + 1, sizeof(*tk));
	gwb_status st = GWB_OK;
	int k;

	*perm = NULL;
	if (!kv || !tk) {
		st = oom("sort", n);
		goto out;
	}
	for (k = 0; k < nk; k++) {
		kv[k].desc = keys[k].desc;
		if ((st = key_view(&keys[k].col, &kv[k].col, &tk[k])))
			goto out;
	}
	st = table_order(kv, nk, n, perm);
out:
	for (k = 0; tk && k < nk; k++)
		textkey_free(&tk[k]);
	free(kv);
	free(tk);
	return st;
}

gwb_status gwb_groups_make(const gwb_col *keys, int nk, size_t n, gwb_groups **out)
{
	gwb_col *kv = calloc((size_t)nk + 1, sizeof(*kv));
	textkey *tk = calloc((size_t)nk + 1, sizeof(*tk));
	gwb_status st = GWB_OK;
	int k;

	*out = NULL;
	if (!kv || !tk) {
		st = oom("group_by", n);
		goto out;
	}
	for (k = 0; k < nk; k++)
		if ((st = key_view(&keys[k], &kv[k], &tk[k])))
			goto out;
	st = groups_make(kv, nk, n, out);
out:
	for (k = 0; tk && k < nk; k++)
		textkey_free(&tk[k]);
	free(kv);
	free(tk);
	return st;
}

gwb_status gwb_table_join(const gwb_col *lk, const gwb_col *rk, bool left, size_t **li,
			  size_t **ri, size_t *n)
{
	gwb_col l, r;
	textkey tl, tr;
	gwb_status st;

	*li = *ri = NULL;
	*n = 0;
	if ((st = key_view(lk, &l, &tl)))
		return st;
	if (!(st = key_view(rk, &r, &tr))) {
		st = table_join(&l, &r, left, li, ri, n);
		textkey_free(&tr);
	}
	textkey_free(&tl);
	return st;
}

gwb_status gwb_table_lookup(const gwb_col *lk, const gwb_col *rk, size_t **ri, bool *unique)
{
	gwb_col l, r;
	textkey tl, tr;
	gwb_status st;

	*ri = NULL;
	*unique = false;
	if ((st = key_view(lk, &l, &tl)))
		return st;
	if (!(st = key_view(rk, &r, &tr))) {
		st = table_lookup(&l, &r, ri, unique);
		textkey_free(&tr);
	}
	textkey_free(&tl);
	return st;
}
