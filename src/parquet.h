/* parquet.h - Apache Parquet files read into a Dataset and written from one, in our own C
 * against the format's specification (parquet.thrift, Encodings.md, Compression.md): flat
 * schemas of INT32/INT64/FLOAT/DOUBLE/BOOLEAN and BYTE_ARRAY strings (categories, as the CSV
 * reader makes them), nulls as missing values, data pages v1 and v2, dictionary, plain,
 * RLE, delta and byte-stream-split encodings, uncompressed/snappy/gzip/zstd pages, row groups
 * (and their column chunks) read in parallel. The caller owns the Dataset returned
 * (gwb_dataset_free). */
#ifndef GWB_PARQUET_H
#define GWB_PARQUET_H

#include <stdbool.h>
#include <stddef.h>

#include "dataset.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_parquet_opts {
	const char *target;           /* target column by name; NULL = target_index (or the
	                               * target gwb saved in the file's metadata) */
	int target_index;             /* 1-based among the columns read; negative from the end;
	                               * 0 = the saved target, else the last */
	bool no_target;               /* target = false: every column is a feature */
	int task;                     /* -1 infer (as the CSV reader), else a gwb_task */
	const char *const *columns;   /* read only these columns (names), in this order; NULL =
	                               * every column */
	int n_columns;
	int threads;                  /* row groups decoded at once; 0 = one per CPU */
	bool f32;                     /* dtype = "f32": every number float32 only; else INT32 and
	                               * INT64 are int64, DOUBLE (and decimals) float64 */
} gwb_parquet_opts;

typedef struct gwb_parquet_info {
	size_t bytes;        /* file size */
	int row_groups;
	int columns;         /* columns in the file (top-level fields) */
	int read;            /* columns read */
	int threads;
	double seconds;
	char created_by[96]; /* the writer named in the footer, or "" */
} gwb_parquet_info;

void gwb_parquet_opts_init(gwb_parquet_opts *o);

/* True when the file at path starts and ends with the Parquet magic "PAR1" (or starts with
 * it and a binary byte: a truncated file, which the loader then names so). */
bool gwb_parquet_is_parquet(const char *path);

/* Read the Parquet file at path into a new dataset (*out). On error nothing is allocated and
 * the message names the file, the column, the row group and byte offset where they apply, and
 * what to do (an unsupported column: load the others with columns = {...}). info may be NULL.
 * GWB_EINTR when interrupted. */
gwb_status gwb_parquet_load(const char *path, const gwb_parquet_opts *o, gwb_dataset **out,
			    gwb_parquet_info *info);

typedef struct gwb_parquet_wopts {
	const char *compression;   /* "snappy" (NULL: the default), "zstd", "gzip", "none" */
	size_t row_group;          /* rows per row group; 0 = 1048576 */
} gwb_parquet_wopts;

/* Write d to path (atomically, fileio.c): features then the target, FLOAT columns for
 * numbers, dictionary-encoded UTF8 strings for categories (and a text target), optional
 * columns with definition levels where values are missing, the target and task in the
 * key-value metadata. o may be NULL. GWB_EINVAL for an unknown compression. */
gwb_status gwb_parquet_save(const gwb_dataset *d, const char *path, const gwb_parquet_wopts *o);

#ifdef __cplusplus
}
#endif
#endif
