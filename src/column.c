/* column.c - computations over one column view (column.h): summaries with Neumaier-compensated
 * sums taken per thread of the pool and combined, exact quantiles by selection, comparison
 * masks, element-wise arithmetic, distinct values with counts (an open-addressing table keyed
 * by the value's bits), and the rows of a mask. */
#define _GNU_SOURCE
#include "column.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "sparse.h"   /* gwb_parallel_for */

#define PARTS 64       /* gwb_parallel_for runs at most this many parts */
#define GRAIN 65536    /* rows a part takes at least */

void gwb_col_block(const gwb_col *c, size_t lo, size_t n, double *out)
{
	size_t i;

	switch (c->type) {
	case GWB_COL_F32: {
		const float *x = (const float *)c->v + lo;
		for (i = 0; i < n; i++)
			out[i] = x[i];
		break;
	}
	case GWB_COL_I32: {
		const int32_t *x = (const int32_t *)c->v + lo;
		for (i = 0; i < n; i++)
			out[i] = x[i] < 0 ? NAN : (double)x[i];
		break;
	}
	case GWB_COL_F64:
		memcpy(out, (const double *)c->v + lo, n * sizeof(double));
		break;
	case GWB_COL_I64: {
		const int64_t *x = (const int64_t *)c->v + lo;
		for (i = 0; i < n; i++)
			out[i] = x[i] == GWB_I64_NA ? NAN : (double)x[i];
		break;
	}
	default: {
		const uint8_t *x = (const uint8_t *)c->v + lo;
		for (i = 0; i < n; i++)
			out[i] = x[i];
	}
	}
}

int gwb_f32_digits(float f)
{
	char b[32];
	int p;

	if (!isfinite(f))
		return 9;
	for (p = 6; p < 9; p++) {
		snprintf(b, sizeof(b), "%.*g", p, (double)f);
		if ((float)strtod(b, NULL) == f)
			return p;
	}
	return 9;
}

double gwb_f32_decimal(float f)
{
	char b[32];

	if (!isfinite(f))
		return f;
	snprintf(b, sizeof(b), "%.*g", gwb_f32_digits(f), (double)f);
	return strtod(b, NULL);
}

gwb_status gwb_col_of(const gwb_dataset *d, int j, gwb_col *out)
{
	memset(out, 0, sizeof(*out));
	out->n = d->rows;
	if (j >= 0 && j < d->features) {
		out->type = GWB_COL_F32;
		out->v = d->X + (size_t)j * d->rows;
		if (d->wide && d->wide[j]) {
			const gwb_num64 *w = d->wide[j];
			out->type = w->type == GWB_DT_I64 ? GWB_COL_I64 : GWB_COL_F64;
			out->v = w->type == GWB_DT_I64 ? (const void *)w->i : (const void *)w->f;
			out->x32 = d->X + (size_t)j * d->rows;
		}
		if (d->cat_levels && d->cat_levels[j]) {
			out->levels = d->cat_levels[j];
			out->nlevels = d->cat_count[j];
		}
		if (gwb_dataset_is_text(d, j))
			out->text = d->text[j]->v;
		return GWB_OK;
	}
	if (j == d->features && d->task == GWB_TASK_CLASSIFICATION && d->y) {
		out->type = GWB_COL_I32;
		out->v = d->y;
		out->levels = d->class_names;
		out->nlevels = d->classes;
		return GWB_OK;
	}
	if (j == d->features && d->yr) {
		out->type = GWB_COL_F32;
		out->v = d->yr;
		return GWB_OK;
	}
	return gwb_error(GWB_EINVAL, "column %d out of range 1..%d", j + 1, d->features + 1);
}

/* --- summaries ------------------------------------------------------------------------------ */


typedef struct sum_part {
	gwb_ksum sum, dev;
	size_t count;
	double min, max;
	int64_t imin, imax, isum;   /* an int64 column's */
	bool iovf;                  /* isum overflowed */
	char pad[64];
} sum_part;

typedef struct sum_ctx {
	const gwb_col *c;
	double mean;
	int pass;   /* 0: count, sum, min, max; 1: squared deviations from mean */
	sum_part part[PARTS];
} sum_ctx;

#define BLOCK 2048

static void sum_run(void *vctx, int64_t lo, int64_t hi, int part)
{
	sum_ctx *x = vctx;
	sum_part *p = &x->part[part];
	double buf[BLOCK];
	int64_t i, k, m;

	if (!x->pass && x->c->type == GWB_COL_I64) {
		const int64_t *iv = x->c->v;
		for (i = lo; i < hi; i++) {
			int64_t v = iv[i];
			if (v == GWB_I64_NA)
				continue;
			if (v < p->imin)
				p->imin = v;
			if (v > p->imax)
				p->imax = v;
			p->iovf |= __builtin_add_overflow(p->isum, v, &p->isum);
		}
	}
	for (i = lo; i < hi; i += BLOCK) {
		m = hi - i < BLOCK ? hi - i : BLOCK;
		gwb_col_block(x->c, (size_t)i, (size_t)m, buf);
		for (k = 0; k < m; k++) {
			double v = buf[k];
			if (isnan(v))
				continue;
			if (x->pass) {
				gwb_ksum_add(&p->dev, (v - x->mean) * (v - x->mean));
				continue;
			}
			gwb_ksum_add(&p->sum, v);
			p->count++;
			if (v < p->min)
				p->min = v;
			if (v > p->max)
				p->max = v;
		}
	}
}

gwb_status gwb_col_summary(const gwb_col *c, gwb_colsum *out)
{
	sum_ctx *x = calloc(1, sizeof(*x));
	gwb_ksum s = {0, 0}, dv = {0, 0};
	int i;

	memset(out, 0, sizeof(*out));
	if (!x)
		return gwb_error(GWB_ENOMEM, "column summary: out of memory");
	x->c = c;
	for (i = 0; i < PARTS; i++) {
		x->part[i].min = INFINITY;
		x->part[i].max = -INFINITY;
		x->part[i].imin = INT64_MAX;
		x->part[i].imax = INT64_MIN;
	}
	gwb_parallel_for((int64_t)c->n, GRAIN, sum_run, x);
	out->min = INFINITY;
	out->max = -INFINITY;
	for (i = 0; i < PARTS; i++) {
		gwb_ksum_add(&s, x->part[i].sum.s);
		gwb_ksum_add(&s, x->part[i].sum.c);
		out->count += x->part[i].count;
		if (x->part[i].min < out->min)
			out->min = x->part[i].min;
		if (x->part[i].max > out->max)
			out->max = x->part[i].max;
	}
	out->missing = c->n - out->count;
	out->sum = s.s + s.c;
	if (c->type == GWB_COL_I64) {
		bool ovf = false;
		out->i64 = true;
		out->imin = INT64_MAX;
		out->imax = INT64_MIN;
		for (i = 0; i < PARTS; i++) {
			ovf |= x->part[i].iovf;
			ovf |= __builtin_add_overflow(out->isum, x->part[i].isum, &out->isum);
			if (x->part[i].imin < out->imin)
				out->imin = x->part[i].imin;
			if (x->part[i].imax > out->imax)
				out->imax = x->part[i].imax;
		}
		out->isum_ok = !ovf;
		if (out->isum_ok)
			out->sum = (double)out->isum;
	}
	if (!out->count) {
		out->min = out->max = out->mean = out->var = out->std = NAN;
		free(x);
		return GWB_OK;
	}
	out->mean = out->sum / (double)out->count;
	x->mean = out->mean;
	x->pass = 1;
	gwb_parallel_for((int64_t)c->n, GRAIN, sum_run, x);
	for (i = 0; i < PARTS; i++) {
		gwb_ksum_add(&dv, x->part[i].dev.s);
		gwb_ksum_add(&dv, x->part[i].dev.c);
	}
	out->var = out->count > 1 ? (dv.s + dv.c) / (double)(out->count - 1) : NAN;
	out->std = sqrt(out->var);
	free(x);
	return GWB_OK;
}

/* --- quantiles ----------------------------------------------------------------------------- */

/* Put the k-th smallest of x[0..n) at x[k], smaller ones before it, larger after (Hoare's
 * selection with a median-of-three pivot). */
static void select_k(double *x, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		double a = x[lo], b = x[mid], c = x[hi], p, t;
		p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		i = lo;
		j = hi;
		while (i <= j) {
			while (x[i] < p)
				i++;
			while (x[j] > p)
				j--;
			if (i <= j) {
				t = x[i];
				x[i] = x[j];
				x[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

static double min_of(const double *x, size_t n)
{
	double m = x[0];
	size_t i;

	for (i = 1; i < n; i++)
		if (x[i] < m)
			m = x[i];
	return m;
}

void gwb_quantiles_inplace(double *x, size_t n, const double *q, int nq, double *out)
{
	int i;

	for (i = 0; i < nq; i++) {
		double pos, frac, a, b;
		size_t k;
		if (!n) {
			out[i] = NAN;
			continue;
		}
		pos = q[i] * (double)(n - 1);
		k = (size_t)floor(pos);
		if (k >= n - 1)
			k = n - 1;
		frac = pos - (double)k;
		select_k(x, n, k);
		a = x[k];
		/* the next order statistic is the smallest of what lies above k */
		b = k + 1 < n ? min_of(x + k + 1, n - k - 1) : a;
		out[i] = frac > 0 ? a + (b - a) * frac : a;
	}
}

gwb_status gwb_col_quantiles(const gwb_col *c, const double *q, int nq, double *out)
{
	double *x = malloc((c->n + 1) * sizeof(double));
	size_t i, k = 0;

	if (!x)
		return gwb_error(GWB_ENOMEM, "quantile: out of memory for %zu values", c->n);
	gwb_col_block(c, 0, c->n, x);
	for (i = 0; i < c->n; i++)
		if (!isnan(x[i]))
			x[k++] = x[i];
	for (i = 0; i < (size_t)nq; i++)
		if (!(q[i] >= 0 && q[i] <= 1)) {
			free(x);
			return gwb_error(GWB_EINVAL, "quantile: q = %g is outside 0..1", q[i]);
		}
	gwb_quantiles_inplace(x, k, q, nq, out);
	free(x);
	return GWB_OK;
}

/* --- masks and arithmetic ------------------------------------------------------------------ */

/* isin's set when it holds more than ISIN_SCAN values: open addressing on the values' bits
 * (doubles with -0 as 0, NaN left out: it equals nothing; int64 values as they are), made
 * once and only read while the rows are matched */
#define ISIN_SCAN 16

typedef struct vset {
	uint64_t *key;
	uint8_t *used;
	size_t mask;
} vset;

static inline uint64_t dkey(double x)
{
	uint64_t b;

	if (x == 0)
		x = 0.0;
	memcpy(&b, &x, 8);
	return b;
}

static inline bool vset_has(const vset *s, uint64_t key)
{
	size_t h;

	for (h = gwb_mix64(key) & s->mask; s->used[h]; h = (h + 1) & s->mask)
		if (s->key[h] == key)
			return true;
	return false;
}

/* the set of keys[0..k); false (nothing to free) when out of memory */
static bool vset_make(vset *s, const uint64_t *keys, size_t k)
{
	size_t cap = 64, i;

	while (cap < 2 * k)
		cap *= 2;
	s->key = malloc(cap * sizeof(uint64_t));
	s->used = calloc(cap, 1);
	s->mask = cap - 1;
	if (!s->key || !s->used) {
		free(s->key);
		free(s->used);
		return false;
	}
	for (i = 0; i < k; i++) {
		size_t h;
		if (vset_has(s, keys[i]))
			continue;
		for (h = gwb_mix64(keys[i]) & s->mask; s->used[h]; h = (h + 1) & s->mask)
			;
		s->used[h] = 1;
		s->key[h] = keys[i];
	}
	return true;
}

static void vset_free(vset *s)
{
	free(s->key);
	free(s->used);
}

typedef struct mask_ctx {
	const gwb_col *c;
	int op;          /* gwb_cmp, or 10 between, 11 isin, 12 isnan */
	double a, b;
	const double *set;
	size_t k;
	uint8_t *out;
	bool ints;       /* an int64 column against int64 constants: ia, ib, iset */
	int64_t ia, ib;
	const int64_t *iset;
	const vset *hs;  /* isin: the set as a hash set (more than ISIN_SCAN values), or NULL */
} mask_ctx;

/* mask_run for an int64 column and int64 constants: exact (NA: false, but for NE) */
static void mask_run_i64(mask_ctx *x, int64_t lo, int64_t hi)
{
	const int64_t *v = x->c->v;
	uint8_t *o = x->out;
	int64_t i, a = x->ia, b = x->ib;
	size_t s;

	for (i = lo; i < hi; i++) {
		int64_t w = v[i];
		bool na = w == GWB_I64_NA;
		switch (x->op) {
		case GWB_CMP_LT: o[i] = !na && w < a; break;
		case GWB_CMP_LE: o[i] = !na && w <= a; break;
		case GWB_CMP_GT: o[i] = !na && w > a; break;
		case GWB_CMP_GE: o[i] = !na && w >= a; break;
		case GWB_CMP_EQ: o[i] = !na && w == a; break;
		case GWB_CMP_NE: o[i] = na || w != a; break;
		case 10: o[i] = !na && w >= a && w <= b; break;
		case 11:
			o[i] = 0;
			if (x->hs) {
				o[i] = !na && vset_has(x->hs, (uint64_t)w);
				break;
			}
			for (s = 0; s < x->k && !na && !o[i]; s++)
				o[i] = w == x->iset[s];
			break;
		default: o[i] = na;
		}
	}
}

static void mask_run(void *vctx, int64_t lo, int64_t hi, int part)
{
	mask_ctx *x = vctx;
	double buf[BLOCK];
	int64_t i, k, m;
	size_t s;

	(void)part;
	if (x->ints || (x->op == 12 && x->c->type == GWB_COL_I64)) {
		mask_run_i64(x, lo, hi);
		return;
	}
	for (i = lo; i < hi; i += BLOCK) {
		uint8_t *o = x->out + i;
		m = hi - i < BLOCK ? hi - i : BLOCK;
		gwb_col_block(x->c, (size_t)i, (size_t)m, buf);
		switch (x->op) {
		case GWB_CMP_LT: for (k = 0; k < m; k++) o[k] = buf[k] < x->a; break;
		case GWB_CMP_LE: for (k = 0; k < m; k++) o[k] = buf[k] <= x->a; break;
		case GWB_CMP_GT: for (k = 0; k < m; k++) o[k] = buf[k] > x->a; break;
		case GWB_CMP_GE: for (k = 0; k < m; k++) o[k] = buf[k] >= x->a; break;
		case GWB_CMP_EQ: for (k = 0; k < m; k++) o[k] = buf[k] == x->a; break;
		case GWB_CMP_NE: for (k = 0; k < m; k++) o[k] = !(buf[k] == x->a); break;
		case 10: for (k = 0; k < m; k++) o[k] = buf[k] >= x->a && buf[k] <= x->b; break;
		case 11:
			if (x->hs) {
				for (k = 0; k < m; k++)
					o[k] = !isnan(buf[k]) && vset_has(x->hs, dkey(buf[k]));
				break;
			}
			for (k = 0; k < m; k++) {
				o[k] = 0;
				for (s = 0; s < x->k && !o[k]; s++)
					o[k] = buf[k] == x->set[s];
			}
			break;
		default: for (k = 0; k < m; k++) o[k] = isnan(buf[k]) != 0;
		}
	}
}

static void run_mask(mask_ctx *x)
{
	if (x->c->type == GWB_COL_F32) {
		/* a float32 column holds the float nearest to what the file said: compare with the
		 * float nearest to the constant, so d.x:eq(5.1) finds the 5.1s */
		x->a = (float)x->a;
		x->b = (float)x->b;
	}
	gwb_parallel_for((int64_t)x->c->n, GRAIN, mask_run, x);
}

void gwb_col_compare(const gwb_col *c, gwb_cmp op, double v, uint8_t *out)
{
	mask_ctx x = {c, (int)op, v, 0, NULL, 0, out, false, 0, 0, NULL, NULL};
	int64_t iv;

	if (c->type == GWB_COL_I64 && gwb_f64_to_i64(v, &iv) && iv != GWB_I64_NA) {
		gwb_col_compare_i64(c, op, iv, out);
		return;
	}
	run_mask(&x);
}

void gwb_col_compare_i64(const gwb_col *c, gwb_cmp op, int64_t v, uint8_t *out)
{
	mask_ctx x = {c, (int)op, (double)v, 0, NULL, 0, out, c->type == GWB_COL_I64, v, 0, NULL, NULL};

	run_mask(&x);
}

void gwb_col_between(const gwb_col *c, double a, double b, uint8_t *out)
{
	mask_ctx x = {c, 10, a, b, NULL, 0, out, false, 0, 0, NULL, NULL};
	int64_t ia, ib;

	if (c->type == GWB_COL_I64 && gwb_f64_to_i64(a, &ia) && gwb_f64_to_i64(b, &ib)) {
		gwb_col_between_i64(c, ia, ib, out);
		return;
	}
	run_mask(&x);
}

void gwb_col_between_i64(const gwb_col *c, int64_t a, int64_t b, uint8_t *out)
{
	mask_ctx x = {c, 10, (double)a, (double)b, NULL, 0, out, c->type == GWB_COL_I64, a, b, NULL, NULL};

	run_mask(&x);
}

void gwb_col_isin_i64(const gwb_col *c, const int64_t *set, size_t k, uint8_t *out)
{
	mask_ctx x = {c, 11, 0, 0, NULL, k, out, true, 0, 0, set, NULL};
	double *r = NULL;
	size_t i;

	if (c->type != GWB_COL_I64) {
		if (!(r = malloc((k + 1) * sizeof(double)))) {
			memset(out, 0, c->n);
			return;
		}
		for (i = 0; i < k; i++)
			r[i] = (double)set[i];
		gwb_col_isin(c, r, k, out);
		free(r);
		return;
	}
	if (k > ISIN_SCAN) {
		vset hs;
		if (vset_make(&hs, (const uint64_t *)(const void *)set, k)) {
			x.hs = &hs;
			run_mask(&x);
			vset_free(&hs);
			return;
		}
	}
	run_mask(&x);
}

void gwb_col_isin(const gwb_col *c, const double *set, size_t k, uint8_t *out)
{
	mask_ctx x = {c, 11, 0, 0, set, k, out, false, 0, 0, NULL, NULL};
	double *r = NULL;
	size_t i;

	vset hs;
	uint64_t *keys;

	if (c->type == GWB_COL_F32 && (r = malloc((k + 1) * sizeof(double)))) {
		for (i = 0; i < k; i++)
			r[i] = (float)set[i];
		x.set = r;
	}
	if (k > ISIN_SCAN && (keys = malloc(k * sizeof(uint64_t)))) {
		size_t nk = 0;
		for (i = 0; i < k; i++)
			if (!isnan(x.set[i]))
				keys[nk++] = dkey(x.set[i]);
		if (vset_make(&hs, keys, nk))
			x.hs = &hs;
		free(keys);
	}
	run_mask(&x);
	if (x.hs)
		vset_free(&hs);
	free(r);
}

/* text isin through a hash set of the strings (gwb_xxh64) */
typedef struct tset_ctx {
	char *const *text;
	const char *const *set;
	size_t k, mask;
	const size_t *slot;     /* set index + 1; 0 empty */
	const uint64_t *hs;
	uint8_t *out;
} tset_ctx;

static bool tset_find(const tset_ctx *x, const char *s, size_t len, uint64_t h)
{
	size_t at;

	for (at = h & x->mask; x->slot[at]; at = (at + 1) & x->mask)
		if (x->hs[at] == h && !strcmp(x->set[x->slot[at] - 1], s))
			return true;
	(void)len;
	return false;
}

static void tset_run(void *ctx, int64_t lo, int64_t hi, int part)
{
	tset_ctx *x = ctx;
	int64_t i;

	(void)part;
	for (i = lo; i < hi; i++) {
		const char *s = x->text[i];
		size_t len;
		if (!s) {
			x->out[i] = 0;
			continue;
		}
		if (x->k <= ISIN_SCAN) {
			size_t q;
			for (q = 0; q < x->k && strcmp(s, x->set[q]); q++)
				;
			x->out[i] = q < x->k;
			continue;
		}
		len = strlen(s);
		x->out[i] = tset_find(x, s, len, gwb_xxh64(s, len, 0));
	}
}

gwb_status gwb_text_isin(char *const *text, size_t n, const char *const *set, size_t k,
			 uint8_t *out)
{
	size_t cap = 64, i, *slot = NULL;
	uint64_t *hs = NULL;
	tset_ctx x = {text, set, k, 0, NULL, NULL, out};

	if (k > ISIN_SCAN) {
		while (cap < 2 * k)
			cap *= 2;
		slot = calloc(cap, sizeof(size_t));
		hs = malloc(cap * sizeof(uint64_t));
		if (!slot || !hs) {
			free(slot);
			free(hs);
			return gwb_error(GWB_ENOMEM, "isin: out of memory for a set of %zu strings", k);
		}
		x.mask = cap - 1;
		x.slot = slot;
		x.hs = hs;
		for (i = 0; i < k; i++) {
			size_t len = strlen(set[i]), at;
			uint64_t h = gwb_xxh64(set[i], len, 0);
			if (tset_find(&x, set[i], len, h))
				continue;
			for (at = h & x.mask; slot[at]; at = (at + 1) & x.mask)
				;
			slot[at] = i + 1;
			hs[at] = h;
		}
	}
	gwb_parallel_for((int64_t)n, GRAIN, tset_run, &x);
	free(slot);
	free(hs);
	return GWB_OK;
}

void gwb_col_isnan(const gwb_col *c, uint8_t *out)
{
	mask_ctx x = {c, 12, 0, 0, NULL, 0, out, false, 0, 0, NULL, NULL};
	run_mask(&x);
}

typedef struct arith_ctx {
	const gwb_col *a, *b;
	double sa, sb;
	int op;
	double *out;
} arith_ctx;

static void arith_run(void *vctx, int64_t lo, int64_t hi, int part)
{
	arith_ctx *x = vctx;
	double bb[BLOCK];
	int64_t i, k, m;

	(void)part;
	for (i = lo; i < hi; i += BLOCK) {
		double *o = x->out + i;
		m = hi - i < BLOCK ? hi - i : BLOCK;
		if (x->a)
			gwb_col_block(x->a, (size_t)i, (size_t)m, o);
		else
			for (k = 0; k < m; k++)
				o[k] = x->sa;
		if (x->op == 'n') {
			for (k = 0; k < m; k++)
				o[k] = -o[k];
			continue;
		}
		if (x->b)
			gwb_col_block(x->b, (size_t)i, (size_t)m, bb);
		else
			for (k = 0; k < m; k++)
				bb[k] = x->sb;
		switch (x->op) {
		case '+': for (k = 0; k < m; k++) o[k] += bb[k]; break;
		case '-': for (k = 0; k < m; k++) o[k] -= bb[k]; break;
		case '*': for (k = 0; k < m; k++) o[k] *= bb[k]; break;
		default: for (k = 0; k < m; k++) o[k] /= bb[k];
		}
	}
}

void gwb_col_arith(const gwb_col *a, double sa, const gwb_col *b, double sb, int op, double *out)
{
	arith_ctx x = {a, b, sa, sb, op, out};
	size_t n = a ? a->n : b ? b->n : 0;

	gwb_parallel_for((int64_t)n, GRAIN, arith_run, &x);
}

/* --- distinct values ----------------------------------------------------------------------- */

/* gwb_col_distinct of an int64 column: exact values (*vals holds int64_t) */
static gwb_status distinct_i64(const gwb_col *c, double **vals, size_t **counts, size_t *k)
{
	const int64_t *x = c->v;
	size_t cap = 64, used = 0, i, h, q, *slot = NULL, *cnt = NULL;
	int64_t *v = NULL;

	slot = malloc(cap * sizeof(size_t));
	v = malloc(cap / 2 * sizeof(int64_t));
	cnt = malloc(cap / 2 * sizeof(size_t));
	if (!slot || !v || !cnt)
		goto oom;
	memset(slot, 0xff, cap * sizeof(size_t));
	for (i = 0; i < c->n; i++) {
		int64_t w = x[i];
		if (w == GWB_I64_NA)
			continue;
		for (h = gwb_mix64((uint64_t)w) & (cap - 1); slot[h] != SIZE_MAX; h = (h + 1) & (cap - 1))
			if (v[slot[h]] == w)
				break;
		if (slot[h] != SIZE_MAX) {
			cnt[slot[h]]++;
			continue;
		}
		slot[h] = used;
		v[used] = w;
		cnt[used++] = 1;
		if (used * 2 >= cap) {
			size_t ncap = cap * 2, *ns = malloc(ncap * sizeof(size_t)), *nc;
			int64_t *nv = realloc(v, ncap / 2 * sizeof(int64_t));
			if (nv)
				v = nv;
			nc = realloc(cnt, ncap / 2 * sizeof(size_t));
			if (nc)
				cnt = nc;
			if (!ns || !nv || !nc) {
				free(ns);
				goto oom;
			}
			memset(ns, 0xff, ncap * sizeof(size_t));
			for (q = 0; q < used; q++) {
				size_t g;
				for (g = gwb_mix64((uint64_t)v[q]) & (ncap - 1); ns[g] != SIZE_MAX;
				     g = (g + 1) & (ncap - 1))
					;
				ns[g] = q;
			}
			free(slot);
			slot = ns;
			cap = ncap;
		}
	}
	free(slot);
	*vals = (double *)(void *)v;
	*counts = cnt;
	*k = used;
	return GWB_OK;
oom:
	free(slot);
	free(v);
	free(cnt);
	return gwb_error(GWB_ENOMEM, "distinct values: out of memory (%zu rows)", c->n);
}

gwb_status gwb_col_distinct(const gwb_col *c, double **vals, size_t **counts, size_t *k)
{
	size_t cap = 64, used = 0, mask, i, *cnt = NULL, *slot = NULL;
	double *v = NULL, buf[BLOCK];
	size_t lo, m, j;

	*vals = NULL;
	*counts = NULL;
	*k = 0;
	if (c->levels && c->nlevels >= 0) {
		/* categories: count the codes, then list those seen in order of first appearance */
		size_t nl = (size_t)c->nlevels;
		cnt = calloc(nl + 1, sizeof(size_t));
		v = malloc((nl + 1) * sizeof(double));
		slot = malloc((nl + 1) * sizeof(size_t));
		if (!cnt || !v || !slot)
			goto oom;
		/* the seen codes in order of first appearance, listed as they are first met */
		for (lo = 0; lo < c->n; lo += BLOCK) {
			m = c->n - lo < BLOCK ? c->n - lo : BLOCK;
			gwb_col_block(c, lo, m, buf);
			for (j = 0; j < m; j++) {
				double x = buf[j];
				size_t code;
				if (isnan(x) || x < 0 || x >= (double)nl)
					continue;
				code = (size_t)x;
				if (!cnt[code]++)
					slot[used++] = code;
			}
		}
		{
			size_t *oc = malloc((used + 1) * sizeof(size_t));
			if (!oc)
				goto oom;
			for (i = 0; i < used; i++) {
				v[i] = (double)slot[i];
				oc[i] = cnt[slot[i]];
			}
			free(cnt);
			cnt = oc;
		}
		free(slot);
		*vals = v;
		*counts = cnt;
		*k = used;
		return GWB_OK;
	}
	if (c->type == GWB_COL_I64)
		return distinct_i64(c, vals, counts, k);
	/* numbers: open addressing on the bits, the table doubling at half full */
	slot = malloc(cap * sizeof(size_t));
	v = malloc(cap / 2 * sizeof(double));
	cnt = malloc(cap / 2 * sizeof(size_t));
	if (!slot || !v || !cnt)
		goto oom;
	memset(slot, 0xff, cap * sizeof(size_t));
	mask = cap - 1;
	for (lo = 0; lo < c->n; lo += BLOCK) {
		m = c->n - lo < BLOCK ? c->n - lo : BLOCK;
		gwb_col_block(c, lo, m, buf);
		for (j = 0; j < m; j++) {
			double x = buf[j] == 0 ? 0.0 : buf[j];
			uint64_t bits;
			size_t h;
			if (isnan(x))
				continue;
			memcpy(&bits, &x, 8);
			for (h = gwb_mix64(bits) & mask; slot[h] != SIZE_MAX; h = (h + 1) & mask)
				if (v[slot[h]] == x)
					break;
			if (slot[h] != SIZE_MAX) {
				cnt[slot[h]]++;
				continue;
			}
			slot[h] = used;
			v[used] = x;
			cnt[used++] = 1;
			if (used * 2 >= cap) {
				size_t ncap = cap * 2, q, *ns = malloc(ncap * sizeof(size_t));
				double *nv = realloc(v, ncap / 2 * sizeof(double));
				size_t *nc;
				if (nv)
					v = nv;
				nc = realloc(cnt, ncap / 2 * sizeof(size_t));
				if (nc)
					cnt = nc;
				if (!ns || !nv || !nc) {
					free(ns);
					goto oom;
				}
				memset(ns, 0xff, ncap * sizeof(size_t));
				for (q = 0; q < used; q++) {
					uint64_t b2;
					size_t g;
					memcpy(&b2, &v[q], 8);
					for (g = gwb_mix64(b2) & (ncap - 1); ns[g] != SIZE_MAX;
					     g = (g + 1) & (ncap - 1))
						;
					ns[g] = q;
				}
				free(slot);
				slot = ns;
				cap = ncap;
				mask = cap - 1;
			}
		}
	}
	free(slot);
	*vals = v;
	*counts = cnt;
	*k = used;
	return GWB_OK;
oom:
	free(slot);
	free(v);
	free(cnt);
	return gwb_error(GWB_ENOMEM, "distinct values: out of memory (%zu rows)", c->n);
}

#define MASK_BLOCKS 64   /* fixed blocks of gwb_mask_rows: counted, then filled */

typedef struct maskrows_ctx {
	const uint8_t *mask;
	size_t n;
	size_t cnt[MASK_BLOCKS];   /* rows set in each block, then where its rows go */
	size_t *idx;
} maskrows_ctx;

static void maskrows_count(void *ctx, int64_t blo, int64_t bhi, int part)
{
	maskrows_ctx *x = ctx;

	(void)part;
	for (int64_t b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / MASK_BLOCKS, hi = x->n * (size_t)(b + 1) / MASK_BLOCKS, m = 0;
		for (size_t i = lo; i < hi; i++)
			m += x->mask[i] != 0;
		x->cnt[b] = m;
	}
}

static void maskrows_fill(void *ctx, int64_t blo, int64_t bhi, int part)
{
	maskrows_ctx *x = ctx;

	(void)part;
	for (int64_t b = blo; b < bhi; b++) {
		size_t lo = x->n * (size_t)b / MASK_BLOCKS, hi = x->n * (size_t)(b + 1) / MASK_BLOCKS;
		size_t *r = x->idx + x->cnt[b];
		size_t m = 0;
		while (hi > lo && !x->mask[hi - 1])   /* up to the block's last kept row, */
			hi--;
		for (size_t i = lo; i < hi; i++) {   /* branch-free: every row written, kept ones advance */
			r[m] = i;
			m += x->mask[i] != 0;
		}
	}
}

gwb_status gwb_mask_rows(const uint8_t *mask, size_t n, size_t **idx, size_t *k)
{
	maskrows_ctx *x = calloc(1, sizeof(*x));
	size_t m = 0, t;
	int b;

	if (!x)
		return gwb_error(GWB_ENOMEM, "filter: out of memory");
	x->mask = mask;
	x->n = n;
	gwb_parallel_for(MASK_BLOCKS, MASK_BLOCKS / 16, maskrows_count, x);
	for (b = 0; b < MASK_BLOCKS; b++) {
		t = x->cnt[b];
		x->cnt[b] = m;
		m += t;
	}
	x->idx = malloc((m + 1) * sizeof(size_t));
	if (!x->idx) {
		free(x);
		return gwb_error(GWB_ENOMEM, "filter: out of memory for %zu row indices", m);
	}
	gwb_parallel_for(MASK_BLOCKS, MASK_BLOCKS / 16, maskrows_fill, x);
	*idx = x->idx;
	*k = m;
	free(x);
	return GWB_OK;
}
