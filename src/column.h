/* column.h - one column of a table seen as a typed view (float32 features, int32 class codes,
 * float64 or bool values a computation made), and what is computed over one: summaries with
 * compensated sums, exact quantiles, masks, element-wise arithmetic, distinct values. A view
 * borrows its values (the caller keeps them alive); results are the caller's to free(). */
#ifndef GWB_COLUMN_H
#define GWB_COLUMN_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "nearest.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_col_type {
	GWB_COL_F32 = 0,  /* float, NaN = missing (features, a regression target; category codes) */
	GWB_COL_I32,      /* int32 class codes of a classification target; < 0 = missing */
	GWB_COL_F64,      /* double, NaN = missing (arithmetic results) */
	GWB_COL_U8,       /* bool: 0 or 1 (masks) */
	GWB_COL_I64,      /* int64, GWB_I64_NA = missing (a 64-bit integer column, dataset.h) */
} gwb_col_type;

typedef struct gwb_col {
	size_t n;
	gwb_col_type type;
	const void *v;
	char *const *levels;  /* a category column's labels (code k is levels[k]); NULL: numbers */
	int nlevels;
	/* a text column's strings (row i's, NULL when missing); v then holds 0 where there is a
	 * string and NaN where not, so missing values read as everywhere else, and what needs
	 * numbers or labels refuses the column (gwb_col_is_text) */
	char *const *text;
	/* a 64-bit column of a Dataset (GWB_COL_I64 / GWB_COL_F64 over wide[j]): X's float32
	 * values of it, which a new table copies rather than rounding the exact ones again;
	 * NULL otherwise */
	const float *x32;
} gwb_col;

static inline bool gwb_col_is_text(const gwb_col *c)
{
	return c->text != NULL;
}

static inline double gwb_col_at(const gwb_col *c, size_t i)
{
	switch (c->type) {
	case GWB_COL_F32: return ((const float *)c->v)[i];
	case GWB_COL_I32: {
		int32_t k = ((const int32_t *)c->v)[i];
		return k < 0 ? NAN : (double)k;
	}
	case GWB_COL_F64: return ((const double *)c->v)[i];
	case GWB_COL_I64: {
		int64_t k = ((const int64_t *)c->v)[i];
		return k == GWB_I64_NA ? NAN : (double)k;
	}
	default: return ((const uint8_t *)c->v)[i];
	}
}

/* Whether value x (a double, not NaN) is an integer that int64 holds; *out then is it. */
static inline bool gwb_f64_to_i64(double x, int64_t *out)
{
	/* -2^63 <= x < 2^63, and integral */
	if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0) || x != floor(x))
		return false;
	*out = (int64_t)x;
	return true;
}

/* The order-preserving key of an int64 (GWB_I64_NA: UINT64_MAX, after every value): the
 * values map to 0 .. UINT64_MAX - 1 (the sort and group keys of verbs.c). */
static inline uint64_t gwb_okey_i64(int64_t x)
{
	return x == GWB_I64_NA ? UINT64_MAX : ((uint64_t)x ^ (1ull << 63)) - 1;
}

/* Neumaier's compensated sum: s + c is the sum of what was added (every sum of a column or a
 * group goes through it). */
typedef struct gwb_ksum {
	double s, c;
} gwb_ksum;

static inline void gwb_ksum_add(gwb_ksum *k, double x)
{
	double t = k->s + x;

	if (!isfinite(t)) {   /* past the range (or inf/nan added): the sum is t, and the error
			       * term (inf - inf = nan) must not turn an overflow into nan */
		k->s = t;
		k->c = 0;
		return;
	}
	if (fabs(k->s) >= fabs(x))
		k->c += (k->s - t) + x;
	else
		k->c += (x - t) + k->s;
	k->s = t;
}

/* A 64-bit mix of a key's bits (the finalizer of MurmurHash3) for hash tables of values. */
static inline uint64_t gwb_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* The shortest decimal that reads back as f (5.1f -> 5.1, not 5.0999999046), as a double:
 * how a float32 value is shown and handed to Lua. */
double gwb_f32_decimal(float f);
/* Digits (1..9) of that shortest decimal, for printf's %.*g. */
int gwb_f32_digits(float f);

/* Values [lo, lo + n) of c as doubles (NaN = missing) into out. */
void gwb_col_block(const gwb_col *c, size_t lo, size_t n, double *out);

/* Column j of d: 0..features-1 a feature, features the target. GWB_EINVAL outside. A 64-bit
 * feature (dataset.h's wide) is seen as GWB_COL_I64 or GWB_COL_F64 over its exact values. */
gwb_status gwb_col_of(const gwb_dataset *d, int j, gwb_col *out);

/* The summary of the values that are not missing: sums compensated (Neumaier) per thread and
 * combined, variance from the deviations about the mean (two passes), sample std (n - 1). */
typedef struct gwb_colsum {
	size_t count, missing;
	double sum, mean, min, max, var, std;
	/* an int64 column's exact min, max and (isum_ok: when it fits int64) sum */
	bool i64, isum_ok;
	int64_t imin, imax, isum;
} gwb_colsum;
gwb_status gwb_col_summary(const gwb_col *c, gwb_colsum *out);

/* Exact quantiles q[0..nq) (each in [0, 1]) of the values that are not missing, linear
 * between order statistics (numpy's and pandas' default); NaN when every value is missing. */
gwb_status gwb_col_quantiles(const gwb_col *c, const double *q, int nq, double *out);
/* The same over n doubles, which it reorders (no NaN among them). */
void gwb_quantiles_inplace(double *x, size_t n, const double *q, int nq, double *out);

/* Masks: out[i] = 1 where the comparison holds (NaN: false, except for GWB_CMP_NE). An int64
 * column compares exactly with a constant that is an integer (the _i64 forms take one that
 * a double cannot hold, a Lua integer above 2^53); with any other constant, as doubles. */
typedef enum gwb_cmp { GWB_CMP_LT, GWB_CMP_LE, GWB_CMP_GT, GWB_CMP_GE, GWB_CMP_EQ,
		       GWB_CMP_NE } gwb_cmp;
void gwb_col_compare(const gwb_col *c, gwb_cmp op, double x, uint8_t *out);
void gwb_col_between(const gwb_col *c, double a, double b, uint8_t *out);   /* a <= v <= b */
void gwb_col_isin(const gwb_col *c, const double *set, size_t k, uint8_t *out);
void gwb_col_isnan(const gwb_col *c, uint8_t *out);
void gwb_col_compare_i64(const gwb_col *c, gwb_cmp op, int64_t x, uint8_t *out);
void gwb_col_between_i64(const gwb_col *c, int64_t a, int64_t b, uint8_t *out);
void gwb_col_isin_i64(const gwb_col *c, const int64_t *set, size_t k, uint8_t *out);
/* A text column's isin: out[i] = 1 where text[i] (NULL: missing, never in) is one of set[0..k)
 * (a hash set of the strings when there are more than a few). GWB_ENOMEM with nothing set. */
gwb_status gwb_text_isin(char *const *text, size_t n, const char *const *set, size_t k,
			 uint8_t *out);

/* Element-wise arithmetic into out[0..n): a op b, with either side a column (NULL: the scalar
 * instead). op is one of + - * / (and 'n' for negation of a). */
void gwb_col_arith(const gwb_col *a, double sa, const gwb_col *b, double sb, int op, double *out);

/* The distinct values that are not missing, with their counts, in order of first appearance
 * (numbers by bit pattern, -0 as 0; categories by code). *vals and *counts are the caller's
 * (free()); *k the number of distinct values. For a GWB_COL_I64 column *vals holds int64_t
 * values (exact; read it as (int64_t *)*vals). */
gwb_status gwb_col_distinct(const gwb_col *c, double **vals, size_t **counts, size_t *k);

/* Rows where the mask is set, in order: *idx (the caller's, free()) and *k. */
gwb_status gwb_mask_rows(const uint8_t *mask, size_t n, size_t **idx, size_t *k);

#ifdef __cplusplus
}
#endif
#endif
