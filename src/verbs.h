/* verbs.h - the table verbs' core: a Dataset built from column views and row maps (filter,
 * sort, join, group-by results all are one), the stable multi-key row order of a sort, groups
 * of rows by key columns and their aggregates, and the row pairs of a join. Results are the
 * caller's: datasets freed with gwb_dataset_free(), arrays with free(), groups with
 * gwb_groups_free(). Every long loop polls Ctrl-C and returns GWB_EINTR. */
#ifndef GWB_VERBS_H
#define GWB_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "column.h"
#include "dataset.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One column of a table to build: its name, its values, and which of them row i takes
 * (idx[i]; GWB_ROW_NONE: missing; idx NULL: row i itself). */
#define GWB_ROW_NONE SIZE_MAX
typedef struct gwb_colspec {
	const char *name;
	gwb_col src;
	const size_t *idx;
} gwb_colspec;

/* A new Dataset of rows rows from cols[0..n): cols[target] becomes the target (a category:
 * classification with its labels as classes, which must not be missing; a number: regression),
 * the others the features in order; target < 0: a table with no target (no_target). Category
 * dictionaries are copied. */
gwb_status gwb_table_build(size_t rows, const gwb_colspec *cols, int n, int target,
			   gwb_dataset **out);

/* A new Dataset of rows idx[0..n) of d (indices may repeat), every column gathered on the
 * thread pool: what filter, sort and sample return. */
gwb_status gwb_table_take(const gwb_dataset *d, const size_t *idx, size_t n, gwb_dataset **out);

/* The stable order of rows [0, n) by keys[0..nk) (the first decides, ties go to the next; desc
 * reverses one key; missing values last in either direction; categories by label): *perm is
 * the caller's (free()). LSD radix sort over the keys' order-preserving bits. */
typedef struct gwb_sortkey {
	gwb_col col;
	bool desc;
} gwb_sortkey;
gwb_status gwb_table_order(const gwb_sortkey *keys, int nk, size_t n, size_t **perm);

/* Rows grouped by the values of key columns: gid[i] the group of row i, groups numbered in the
 * sorted order of their keys (missing last), first[g] the first row of group g (the keys'
 * values), count[g] its rows. */
typedef struct gwb_groups {
	size_t rows, ngroups;
	uint32_t *gid;
	size_t *first, *count;
	size_t *start, *order;   /* rows by group (order[start[g] .. start[g+1])), made on demand */
	bool hashed;             /* the keys' combinations were too many for a direct table */
} gwb_groups;
gwb_status gwb_groups_make(const gwb_col *keys, int nk, size_t n, gwb_groups **out);
void gwb_groups_free(gwb_groups *g);

typedef enum gwb_agg { GWB_AGG_COUNT, GWB_AGG_SUM, GWB_AGG_MEAN, GWB_AGG_MIN, GWB_AGG_MAX,
		       GWB_AGG_STD, GWB_AGG_VAR, GWB_AGG_MEDIAN, GWB_AGG_FIRST, GWB_AGG_LAST,
		       GWB_AGG_NUNIQUE, GWB_AGG_COUNT_ALL } gwb_agg;
/* The aggregate's name ("sum") -> id, or -1. */
int gwb_agg_find(const char *name);
const char *gwb_agg_name(gwb_agg a);
/* out[g] for every group: count (values not missing), count_all (rows), sum, mean, min, max,
 * std and var (n - 1), median, first and last (the first/last value that is not missing),
 * nunique (distinct values not missing). Sums compensated; NaN where a group has no value. */
gwb_status gwb_groups_agg(gwb_groups *g, gwb_agg a, const gwb_col *c, double *out);

/* An int64 column's sum, min, max, first and last kept exact (gwb_agg_exact_i64: whether a
 * gets this for c): out[g] as int64 (GWB_I64_NA where a group has no value); *exact false
 * when a sum overflowed int64 (then take gwb_groups_agg's doubles). */
bool gwb_agg_exact_i64(gwb_agg a, const gwb_col *c);
gwb_status gwb_groups_agg_i64(gwb_groups *g, gwb_agg a, const gwb_col *c, int64_t *out,
			      bool *exact);

/* Row pairs of the join of left key lk with right key rk (same kind; categories matched by
 * label): for each left row in order, the right rows with an equal key in their order;
 * left = true keeps a left row without a match once, with GWB_ROW_NONE on the right.
 * *li / *ri are the caller's (free()); *n pairs. Missing keys never match. */
gwb_status gwb_table_join(const gwb_col *lk, const gwb_col *rk, bool left, size_t **li,
			  size_t **ri, size_t *n);

/* A left join's right side when every right key occurs once (a lookup table): ri[i] the right
 * row of left row i (GWB_ROW_NONE: none; the left rows stay as they are, in order, once each).
 * *unique false, and *ri NULL, when some right key repeats (then gwb_table_join). Keys as in
 * gwb_table_join. *ri is the caller's (free()). */
gwb_status gwb_table_lookup(const gwb_col *lk, const gwb_col *rk, size_t **ri, bool *unique);

#ifdef __cplusplus
}
#endif
#endif
