/* dataset.h - the Dataset: a table of float32 features stored column-major (SoA), a target
 * (int32 class codes or float32 values), names and dictionaries. Built by csv.c, data.synth,
 * subsets and binary load; read by quantize, forests and PCA. The caller owns a dataset and
 * frees it with gwb_dataset_free(). */
#ifndef GWB_DATASET_H
#define GWB_DATASET_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buffer.h"
#include "mgpu.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_task { GWB_TASK_CLASSIFICATION = 0, GWB_TASK_REGRESSION = 1 } gwb_task;

/* A free-text column (kind "text"): strings that are not a category because nearly every row
 * holds its own (comments, titles, addresses). v[i] is row i's string, NULL when missing; the
 * bytes live in arena. Polars and pandas keep such a column as strings too: coding it as a
 * category of a million levels was most of a load's time (issue 28). */
typedef struct gwb_text {
	char **v;
	gwb_arena *arena;
} gwb_text;

/* The exact numbers of a column read as 64-bit (issue 30): int64 for integers (ids, counts,
 * epoch seconds), float64 for other numbers. X keeps the float32 rounding of the same values
 * (NaN where missing) for models and the GPU; everything that shows, compares, groups, sums or
 * saves a value reads these. A missing int64 is GWB_I64_NA (INT64_MIN, R's NA_integer_ rule:
 * a file holding that very value reads the column as float64); a missing float64 is NaN. */
typedef enum gwb_numtype { GWB_DT_F32 = 0, GWB_DT_I64 = 1, GWB_DT_F64 = 2 } gwb_numtype;
#define GWB_I64_NA INT64_MIN
typedef struct gwb_num64 {
	gwb_numtype type;   /* GWB_DT_I64 or GWB_DT_F64 */
	int64_t *i;       /* GWB_DT_I64: one value a row; else NULL */
	double *f;        /* GWB_DT_F64: one value a row; else NULL */
	size_t map;       /* 0: i or f is malloc'd; else the bytes of the gwb_hugemap mapping that
			   * holds it (the parallel CSV reader's columns, whose pages it moved) */
} gwb_num64;

typedef struct gwb_dataset {
	size_t rows;
	int features;
	gwb_task task;
	float *X;             /* rows x features, column-major: X[(size_t)j * rows + i]; NaN = missing */
	int32_t *y;           /* classification: class code 0..classes-1 per row; else NULL */
	float *yr;            /* regression: target per row; else NULL */
	int classes;          /* classification: number of classes; 0 for regression */
	char **class_names;   /* classes names ("setosa", or "0", "1" for numeric labels) */
	char **names;         /* features feature names */
	char *target;         /* the target column's name */
	/* Categorical (string) feature columns: codes are stored in X as 0,1,2,... floats.
	 * cat_levels[j] is NULL for numeric columns, else cat_count[j] level names. */
	char ***cat_levels;
	int *cat_count;
	/* Free-text feature columns: text[j] is NULL for the others (text itself NULL when there
	 * are none). X holds 0 in a text column where a row has a string and NaN where it is
	 * missing, so missing values read as in any column;
	 * forests and other models refuse a text column by name (gwb_dataset_text_check). */
	gwb_text **text;
	/* 64-bit feature columns: wide[j] NULL for float32, category and text columns (wide
	 * itself NULL when there are none); X holds their float32 rounding */
	gwb_num64 **wide;
	/* GPU residency (d:to("gpu")): a buffer (buffer.h) over X, resident on the device and used
	 * in place by GPU operations; NULL when the dataset lives on the host only. X stays valid:
	 * a dataset never changes after it is made, so the host copy is the cache every host read
	 * uses (the buffer borrows X: it never frees it). */
	gwb_buf *xbuf;
	/* Copies of X on other devices (d:to("gpu", {gpus = ...}), mgpu.h), by device ordinal
	 * (entry 0 unused: device 0's copy is xbuf). Each device's thread reads its own. */
	gwb_buf *xrep[GWB_GPU_MAX];
	/* The rest of the table beside xbuf on device 0, for the verbs that run there (issue 30,
	 * verbs_gpu.h): wbuf[j] the exact values of 64-bit column j (NULL for the others; wbuf
	 * NULL when there are none), ybuf the target (y or yr). Made by gwb_dataset_to_gpu, given
	 * back with xbuf; device-only (no host copy of their own: wide and y/yr are it). */
	gwb_buf **wbuf;
	gwb_buf *ybuf;
	/* the device ranks of category column j's labels (j = features: the target's classes),
	 * made by the first GPU verb that keys on it; given back with xbuf (rbuf NULL until then) */
	gwb_buf **rbuf;
	/* A table without a target (data.load{target = false}, a group-by's result): task
	 * regression, target NULL, yr all NaN; training refuses it (d:target(col) sets one). */
	bool no_target;
	uint64_t sum;  /* gwb_dataset_checksum's cache (a dataset never changes once made) */
	bool sum_ok;
} gwb_dataset;

/* A zeroed dataset with X (and y or yr) allocated for rows x features, names NULL-filled.
 * GWB_ENOMEM with bytes in the message when allocation fails. */
gwb_status gwb_dataset_new(size_t rows, int features, gwb_task task, int classes,
			   gwb_dataset **out);

/* Free everything a dataset owns (NULL is fine). */
void gwb_dataset_free(gwb_dataset *d);

/* A new dataset holding rows idx[0..n) of d (indices may repeat), with copies of names and
 * dictionaries. */
gwb_status gwb_dataset_take(const gwb_dataset *d, const size_t *idx, size_t n, gwb_dataset **out);

/* A new dataset holding feature columns cols[0..n) of d (0-based, may repeat) and all rows,
 * with the same target. */
gwb_status gwb_dataset_select(const gwb_dataset *d, const int *cols, int n, gwb_dataset **out);

/* A copy of the n strings v[0..n) (NULL entries kept) in an array of n + 1 (the last NULL);
 * NULL when out of memory. The caller frees it with gwb_strv_free(copy, n) (NULL is fine). */
char **gwb_strv_copy(char *const *v, int n);
void gwb_strv_free(char **v, int n);

/* Text columns. gwb_text_new: an empty column of rows entries (all missing) with its arena;
 * gwb_text_free (NULL is fine). gwb_dataset_set_text: makes feature j of d a text column that
 * owns t (X's column: 0 where a row has a string, NaN where not); GWB_ENOMEM when d's text array cannot be made. */
gwb_text *gwb_text_new(size_t rows);
void gwb_text_free(gwb_text *t);
gwb_status gwb_dataset_set_text(gwb_dataset *d, int j, gwb_text *t);
/* The distinct strings among v[0..rows) (NULL ones, missing, not counted), in order of first
 * appearance: *k of them; first (optional) their first rows, counts (optional) their counts
 * (the caller's, free()). */
gwb_status gwb_text_distinct(char *const *v, size_t rows, size_t **first, size_t **counts,
			     size_t *k);
/* The same, and ids[i] (when not NULL: rows entries) the number of row i's string among them
 * (0-based), -1 where it is missing: a text column coded as a category would be. */
gwb_status gwb_text_codes(char *const *v, size_t rows, int32_t *ids, size_t **first,
			  size_t **counts, size_t *k);
/* Feature j is a text column. */
static inline bool gwb_dataset_is_text(const gwb_dataset *d, int j)
{
	return d->text && j >= 0 && j < d->features && d->text[j];
}
/* GWB_EINVAL naming the first text column among d's features (what: the call, "rf.train"),
 * with what to do, when a model would read one; GWB_OK when there is none. */
gwb_status gwb_dataset_text_check(const gwb_dataset *d, const char *what);
/* Whether n sampled strings of which distinct differ look like free text rather than a
 * category (the rule both the CSV and the Parquet readers apply to their sample). */
static inline bool gwb_text_looks_free(size_t n, size_t distinct)
{
	return n >= 64 && distinct * 2 > n;
}

/* 64-bit columns. gwb_num64_new: rows values of type t (GWB_DT_I64 or GWB_DT_F64), all
 * missing; NULL out of memory; gwb_num64_free (NULL is fine). gwb_dataset_set_wide: makes
 * feature j of d a 64-bit column that owns w and writes X's column as its float32 rounding
 * (NaN where missing); GWB_ENOMEM when d's array cannot be made. */
gwb_num64 *gwb_num64_new(gwb_numtype t, size_t rows);
void gwb_num64_free(gwb_num64 *w);
gwb_status gwb_dataset_set_wide(gwb_dataset *d, int j, gwb_num64 *w);
/* The same without writing X (a reader that made X's float32 values itself, correctly rounded
 * from the text). */
gwb_status gwb_dataset_attach_wide(gwb_dataset *d, int j, gwb_num64 *w);
/* Whether d has any 64-bit column. */
bool gwb_dataset_has_wide(const gwb_dataset *d);
/* Feature j's type: GWB_DT_I64, GWB_DT_F64 or GWB_DT_F32 (category, text and float32 columns). */
static inline gwb_numtype gwb_dataset_dtype(const gwb_dataset *d, int j)
{
	return d->wide && j >= 0 && j < d->features && d->wide[j] ? d->wide[j]->type : GWB_DT_F32;
}
/* The name of a feature's type for people and Lua: "i64", "f64", "f32", "category", "text". */
const char *gwb_dataset_dtype_name(const gwb_dataset *d, int j);
/* Cell (row i, feature j) as a double: exact for float32 and float64 columns and for int64
 * values up to 2^53 (NaN where missing). */
static inline double gwb_dataset_at(const gwb_dataset *d, int j, size_t i)
{
	const gwb_num64 *w = d->wide ? d->wide[j] : NULL;

	if (!w)
		return d->X[(size_t)j * d->rows + i];
	if (w->type == GWB_DT_I64)
		return w->i[i] == GWB_I64_NA ? NAN : (double)w->i[i];
	return w->f[i];
}
/* Copy of w's rows idx[0..n) (idx NULL: the first n; an entry SIZE_MAX: missing); NULL out of
 * memory. */
gwb_num64 *gwb_num64_take(const gwb_num64 *w, const size_t *idx, size_t n);

/* 0-based index of the feature called name, or -1. */
int gwb_dataset_find(const gwb_dataset *d, const char *name);
/* out[k] = gwb_dataset_find(d, names[k]) for k < n (names[k] NULL: out[k] untouched), in time
 * linear in n + features (a hash of the names when both are large). */
gwb_status gwb_dataset_find_many(const gwb_dataset *d, const char *const *names, int n, int *out);

/* Bytes the dataset holds on the host (features, target, names, dictionaries). */
size_t gwb_dataset_bytes(const gwb_dataset *d);

/* Missing values (NaN) in feature column col (0-based). */
size_t gwb_dataset_missing(const gwb_dataset *d, int col);

/* Per-column summary for describe(): over the values that are not missing. For categorical
 * columns min/max are level codes. std is the sample standard deviation (n - 1). */
typedef struct gwb_colstats {
	double min, max, mean, std;
	size_t missing;
	size_t distinct;   /* distinct values (NaN excluded, -0 == 0) */
} gwb_colstats;

/* Fill out[0..features) (threads: 0 = one per CPU for large tables, 1 = serial). */
gwb_status gwb_dataset_describe(const gwb_dataset *d, gwb_colstats *out, int threads);

/* The same summary for n floats with the given stride of 1 (e.g. a regression target). */
gwb_status gwb_colstats_of(const float *x, size_t n, gwb_colstats *out);

/* XXH64 of the content: rows, features, the feature columns and the targets (bit patterns),
 * so equal tables give equal sums whatever file they came from. Computed on the first call
 * and cached (the run log names the dataset of every rf.train without re-reading it). */
uint64_t gwb_dataset_checksum(gwb_dataset *d);
/* Where d's features live: "gpu" uploads X to the device (the host copy stays; nothing changes
 * on failure: GWB_ENOMEM names the bytes needed and free, GWB_ENODEV says why there is no GPU),
 * "cpu" gives the device copy back. */
gwb_status gwb_dataset_to_gpu(gwb_dataset *d);
void gwb_dataset_to_cpu(gwb_dataset *d);
/* A copy of X on each device of s (device 0's is xbuf, as gwb_dataset_to_gpu makes it; the
 * others in xrep). All or nothing: on failure the copies this call made are given back. */
gwb_status gwb_dataset_to_gpus(gwb_dataset *d, const gwb_gpu_set *s);
/* The device copy of X on the calling thread's device (mgpu.h), or NULL when that device
 * holds none (then a GPU operation there copies X up itself). */
static inline const float *gwb_dataset_gpu_X(const gwb_dataset *d)
{
	int dev = gwb_gpu_current();
	const gwb_buf *b = dev > 0 && dev < GWB_GPU_MAX ? d->xrep[dev] : dev == 0 ? d->xbuf : NULL;

	return b && b->device == GWB_DEVICE_GPU ? (const float *)b->dev : NULL;
}
/* Devices holding a copy of X: their ordinals into ids (GWB_GPU_MAX entries); the count. */
int gwb_dataset_gpu_devices(const gwb_dataset *d, int *ids);

/* GWB_OK when labels lie in 0..classes-1 (classification) or targets exist (regression). */
gwb_status gwb_dataset_check(const gwb_dataset *d);

#ifdef __cplusplus
}
#endif
#endif
