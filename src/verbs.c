/* verbs.c - the table verbs' core (verbs.h). Every key becomes an order-preserving unsigned
 * integer (numbers by their bits with the sign folded, categories by the rank of their label,
 * missing values as the largest key), so one machinery serves them all: sort packs the keys'
 * varying bits into 64-bit words and LSD-radix-sorts (key, row) pairs word by word, the last
 * word first (stable, so earlier keys decide); group-by combines the keys' codes into one
 * number per row and numbers the distinct ones in order, directly when their range is small
 * and through a hash table otherwise; a join numbers the right side's keys the same way. The
 * row loops run on the thread pool (gwb_parallel_for) in fixed chunks, so results never depend
 * on the thread count. */
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

/* --- sort ---------------------------------------------------------------------------------- */

#define RBITS 11
#define RSIZE (1u << RBITS)

/* Stable LSD radix sort of (key, row) pairs by the key's bits [0, bits): one pass per 11-bit
 * digit that is not the same in every key, between the arrays and a second pair in turn. */
static gwb_status radix_pairs(uint64_t *key, uint32_t *row, size_t n, int bits)
{
	int passes = (bits + RBITS - 1) / RBITS, p;
	size_t *hist, i;
	uint64_t *k2 = malloc((n + 1) * sizeof(uint64_t)), *ka = key, *kb = k2, *kt;
	uint32_t *r2 = malloc((n + 1) * sizeof(uint32_t)), *ra = row, *rb = r2, *rt;
	gwb_status st = GWB_OK;

	hist = calloc((size_t)(passes + 1) * RSIZE, sizeof(size_t));
	if (!k2 || !r2 || !hist) {
		st = oom("sort", n);
		goto out;
	}
	for (i = 0; i < n; i++)
		for (p = 0; p < passes; p++)
			hist[(size_t)p * RSIZE + ((key[i] >> (p * RBITS)) & (RSIZE - 1))]++;
	for (p = 0; p < passes; p++) {
		size_t *h = hist + (size_t)p * RSIZE, sum = 0, t;
		unsigned b;
		int sh = p * RBITS;
		for (b = 0; b < RSIZE; b++)
			if (h[b] == n)
				break;
		if (b < RSIZE)   /* every key has the same digit here */
			continue;
		for (b = 0; b < RSIZE; b++) {
			t = h[b];
			h[b] = sum;
			sum += t;
		}
		for (i = 0; i < n; i++) {
			size_t d = h[(ka[i] >> sh) & (RSIZE - 1)]++;
			kb[d] = ka[i];
			rb[d] = ra[i];
		}
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

gwb_status gwb_table_order(const gwb_sortkey *keys, int nk, size_t n, size_t **perm)
{
	uint64_t *kv = NULL, *word = NULL, *mins = NULL;
	uint32_t *row = NULL;
	int *bits = NULL, k, last;
	size_t i, *res;
	gwb_status st = GWB_OK;

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
		uint64_t *v = kv + (size_t)k * n, lo = UINT64_MAX, hi = 0;
		if ((st = fill_keys(&keys[k].col, keys[k].desc, NULL, n, v)))
			goto out;
		for (i = 0; i < n; i++) {
			if (v[i] < lo)
				lo = v[i];
			if (v[i] > hi)
				hi = v[i];
		}
		mins[k] = n ? lo : 0;
		bits[k] = n ? bits_of(hi - lo) : 0;
	}
	for (i = 0; i < n; i++)
		row[i] = (uint32_t)i;
	/* words of packed keys, sorted from the last word to the first */
	for (last = nk - 1; last >= 0;) {
		int first = last, used = bits[last];
		while (first > 0 && used + bits[first - 1] <= 64)
			used += bits[--first];
		for (i = 0; i < n; i++) {
			uint64_t w = 0;
			for (k = first; k <= last; k++) {
				uint64_t v = kv[(size_t)k * n + row[i]] - mins[k];
				w = bits[k] ? (bits[k] == 64 ? v : (w << bits[k]) | v) : w;
			}
			word[i] = w;
		}
		if (used && (st = radix_pairs(word, row, n, used)))
			goto out;
		last = first - 1;
	}
	res = malloc((n + 1) * sizeof(size_t));
	if (!res) {
		st = oom("sort", n);
		goto out;
	}
	for (i = 0; i < n; i++)
		res[i] = row[i];
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
	const uint32_t *dense;  /* direct table: v - lo -> rank */
	uint64_t lo;
} rank_ctx;

static void rank_run(void *ctx, int64_t a, int64_t b, int part)
{
	rank_ctx *x = ctx;
	int64_t i;

	(void)part;
	if (x->dense)
		for (i = a; i < b; i++)
			x->v[i] = x->dense[x->v[i] - x->lo];
	else
		for (i = a; i < b; i++)
			x->v[i] = x->rank[x->m->id[map_slot(x->m, x->v[i])]];
}

/* Replace v[0..n) by the rank of each value among the distinct ones (ascending): *card of
 * them. Direct table when the range is small, else a hash table. *hashed says which. */
static gwb_status number_keys(uint64_t *v, size_t n, size_t *card, bool *hashed)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i, k;
	bool missing = false;
	rank_ctx rc = {0};

	*card = 0;
	*hashed = false;
	if (!n)
		return GWB_OK;
	for (i = 0; i < n; i++) {
		if (v[i] == UINT64_MAX) {
			missing = true;
			continue;
		}
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
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
		for (i = 0; i < n; i++)
			dense[v[i] == UINT64_MAX ? range : v[i] - lo] = 1;
		for (i = 0, k = 0; i <= range; i++)
			if (dense[i])
				dense[i] = (uint32_t)k++;
		if (missing)   /* rank_run reads v - lo: the missing key's slot sits at range */
			for (i = 0; i < n; i++)
				if (v[i] == UINT64_MAX)
					v[i] = lo + range;
		rc.dense = dense;
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

gwb_status gwb_groups_make(const gwb_col *keys, int nk, size_t n, gwb_groups **out)
{
	gwb_groups *g = calloc(1, sizeof(*g));
	uint64_t *cur = malloc((n + 1) * sizeof(uint64_t)), *nxt = malloc((n + 1) * sizeof(uint64_t));
	size_t card = 1, c2, i;
	gwb_status st = GWB_OK;
	bool hashed = false, h2;
	int k;

	*out = NULL;
	if (!g || !cur || !nxt) {
		st = oom("group_by", n);
		goto fail;
	}
	if (n > UINT32_MAX) {
		st = gwb_error(GWB_EINVAL, "group_by: %zu rows are more than 2^32", n);
		goto fail;
	}
	for (k = 0; k < nk; k++) {
		if ((st = fill_keys(&keys[k], false, NULL, n, k ? nxt : cur)))
			goto fail;
		if ((st = number_keys(k ? nxt : cur, n, k ? &c2 : &card, &h2)))
			goto fail;
		hashed |= h2;
		if (!k)
			continue;
		if (card > 1 && c2 > 1 && card > UINT64_MAX / c2) {
			if ((st = number_keys(cur, n, &card, &h2)))
				goto fail;
			hashed |= h2;
		}
		for (i = 0; i < n; i++)   /* lexicographic: the earlier key decides */
			cur[i] = cur[i] * c2 + nxt[i];
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
	g->rows = n;
	g->ngroups = card;
	g->hashed = hashed;
	g->gid = malloc((n + 1) * sizeof(uint32_t));
	g->first = malloc((card + 1) * sizeof(size_t));
	g->count = calloc(card + 1, sizeof(size_t));
	if (!g->gid || !g->first || !g->count) {
		st = oom("group_by", n);
		goto fail;
	}
	for (i = 0; i < card; i++)
		g->first[i] = SIZE_MAX;
	for (i = 0; i < n; i++) {
		uint32_t id = (uint32_t)cur[i];
		g->gid[i] = id;
		if (!g->count[id]++)
			g->first[id] = i;
	}
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
	if (a == GWB_AGG_MEDIAN || a == GWB_AGG_NUNIQUE) {
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
	const u64map *m;
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
			if (k != UINT64_MAX) {
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
static gwb_status join_keys(const gwb_col *c, const gwb_col *ref, bool ints, uint64_t *out)
{
	size_t i;

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
		rank_levels = (const char *const *)ref->levels;
		qsort(ord, (size_t)ref->nlevels, sizeof(int), cmp_level);
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
		for (i = 0; i < c->n; i++) {
			double x = gwb_col_at(c, i);
			out[i] = isnan(x) || x < 0 || x >= c->nlevels || map[(size_t)x] < 0 ?
				 UINT64_MAX : (uint64_t)map[(size_t)x];
		}
		free(map);
		return GWB_OK;
	}
	if (ints) {   /* both sides int64: exactly */
		for (i = 0; i < c->n; i++)
			out[i] = gwb_okey_i64(((const int64_t *)c->v)[i]);
		return GWB_OK;
	}
	for (i = 0; i < c->n; i++)
		out[i] = okey_f64(gwb_col_at(c, i));
	return GWB_OK;
}

gwb_status gwb_table_join(const gwb_col *lk, const gwb_col *rk, bool left, size_t **li,
			  size_t **ri, size_t *n)
{
	uint64_t *lkey = malloc((lk->n + 1) * sizeof(uint64_t));
	uint64_t *rkey = malloc((rk->n + 1) * sizeof(uint64_t));
	size_t *start = NULL, *rrow = NULL, *pos = NULL, i, tot;
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
	for (i = 0; i < rk->n; i++) {
		rid[i] = rkey[i] == UINT64_MAX ? UINT32_MAX : map_put(&m, rkey[i]);
		if (rkey[i] != UINT64_MAX && rid[i] == UINT32_MAX) {
			st = oom("join", rk->n);
			goto out;
		}
	}
	start = calloc(m.used + 2, sizeof(size_t));
	rrow = malloc((rk->n + 1) * sizeof(size_t));
	pos = malloc((m.used + 1) * sizeof(size_t));
	if (!start || !rrow || !pos) {
		st = oom("join", rk->n);
		goto out;
	}
	for (i = 0; i < rk->n; i++)
		if (rid[i] != UINT32_MAX)
			start[rid[i] + 1]++;
	for (i = 0; i < m.used; i++)
		start[i + 1] += start[i];
	memcpy(pos, start, m.used * sizeof(size_t));
	for (i = 0; i < rk->n; i++)
		if (rid[i] != UINT32_MAX)
			rrow[pos[rid[i]]++] = i;
	x.lk = lk;
	x.lkey = lkey;
	x.m = &m;
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

gwb_status gwb_table_take(const gwb_dataset *d, const size_t *idx, size_t n, gwb_dataset **out)
{
	int nc = d->features + !d->no_target, j;
	gwb_colspec *spec = calloc((size_t)nc + 1, sizeof(*spec));
	gwb_status st;
	size_t i;

	*out = NULL;
	if (!spec)
		return oom("rows", n);
	for (i = 0; i < n; i++)
		if (idx[i] >= d->rows) {
			free(spec);
			return gwb_error(GWB_EINVAL, "row index %zu out of range (rows = %zu)", idx[i] + 1,
					 d->rows);
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

typedef struct gather_ctx {
	const gwb_colspec *s;
	float *out;
} gather_ctx;

static void gather_run(void *ctx, int64_t lo, int64_t hi, int part)
{
	gather_ctx *x = ctx;
	const gwb_colspec *s = x->s;
	int64_t i;

	(void)part;
	if (s->src.x32) {   /* a Dataset's 64-bit column: its float32 X as it is */
		for (i = lo; i < hi; i++) {
			size_t r = s->idx ? s->idx[i] : (size_t)i;
			x->out[i] = r == GWB_ROW_NONE ? NAN : s->src.x32[r];
		}
		return;
	}
	if (!s->idx) {
		if (s->src.type == GWB_COL_F32) {
			memcpy(x->out + lo, (const float *)s->src.v + lo, (size_t)(hi - lo) * sizeof(float));
			return;
		}
		for (i = lo; i < hi; i++)
			x->out[i] = (float)gwb_col_at(&s->src, (size_t)i);
		return;
	}
	if (s->src.type == GWB_COL_F32) {
		const float *v = s->src.v;
		for (i = lo; i < hi; i++)
			x->out[i] = s->idx[i] == GWB_ROW_NONE ? NAN : v[s->idx[i]];
		return;
	}
	for (i = lo; i < hi; i++)
		x->out[i] = s->idx[i] == GWB_ROW_NONE ? NAN : (float)gwb_col_at(&s->src, s->idx[i]);
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
		gather_ctx g = {&cols[j], NULL};
		if (j == target)
			continue;
		g.out = d->X + (size_t)f * rows;
		gwb_parallel_for((int64_t)rows, 65536, gather_run, &g);
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
			gwb_num64 w = {cols[j].src.type == GWB_COL_I64 ? GWB_DT_I64 : GWB_DT_F64,
				       (int64_t *)cols[j].src.v, (double *)cols[j].src.v, 0};
			gwb_num64 *c;
			if (w.type == GWB_DT_I64)
				w.f = NULL;
			else
				w.i = NULL;
			if (!(c = gwb_num64_take(&w, cols[j].idx, rows)))
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
		for (i = 0; i < rows; i++) {
			size_t r = t->idx ? t->idx[i] : i;
			double v = r == GWB_ROW_NONE ? NAN : gwb_col_at(&t->src, r);
			if (cls) {
				if (isnan(v)) {
					gwb_dataset_free(d);
					return gwb_error(GWB_EINVAL, "the target '%s' is missing in row "
							 "%zu: a category target needs a label in every "
							 "row (filter those rows out first, or choose "
							 "another target)", t->name, i + 1);
				}
				d->y[i] = (int32_t)v;
			} else {
				d->yr[i] = (float)v;
			}
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
