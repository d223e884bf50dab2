/* csv.h - streaming RFC 4180 reader that builds a Dataset: delimiter and header sniffing,
 * quoting, CRLF, UTF-8 BOM, missing values, correctly rounded float32 numbers (and the exact
 * int64 or float64 value of each numeric column beside them, dataset.h), categorical
 * (string) columns with dictionaries, and errors that name file:line:column. The file is read
 * in blocks (never slurped); rows are kept row-major in blocks that are transposed into the
 * column-major Dataset and released one by one, so the peak stays near the final size. A large
 * file is parsed by several threads over byte ranges (text columns, quotes and missing values
 * included), with the same result bit for bit and the same level codes. */
#ifndef GWB_CSV_H
#define GWB_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "dataset.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_csv_opts {
	char sep;                     /* ',', '\t', ';', ...; 0 = sniff (comma, tab, semicolon, |) */
	int header;                   /* 1 yes, 0 no (names col1, col2, ...), -1 sniff */
	const char *const *missing;   /* strings read as missing (besides the empty field);
	                               * NULL = "NA", "NaN", "nan", "N/A", "?" */
	int n_missing;
	const char *target;           /* target column by name; NULL = use target_index */
	int target_index;             /* 1-based; negative counts from the end; 0 = last */
	int task;                     /* -1 infer, else a gwb_task */
	const char *const *categorical; /* columns to read as categorical even when numeric */
	int n_categorical;
	const char *const *text;      /* columns to read as free text (gwb_text) whatever the
	                               * sample says; the others are text when the sampled values
	                               * mostly differ (gwb_text_looks_free) */
	int n_text;
	bool progress;                /* report progress for large files (gwb_progress_*) */
	size_t block;                 /* bytes per read, 0 = 1 MiB (tests use tiny blocks to put
	                               * record boundaries everywhere) */
	int threads;                  /* parse threads for large files, 0 = one per CPU */
	size_t par_min;               /* files at least this large are parsed in parallel when they
	                               * can be, 0 = PAR_MIN_BYTES (4 MiB) */
	bool slow;                    /* tests: one thread, every record through the general
	                               * tokenizer (the reference the fast paths must match) */
	/* Number types (issue 30). By default a numeric feature whose every value is an integer
	 * literal that int64 holds is int64, any other numeric feature float64 (dataset.h's
	 * wide; X holds the float32 of each, as before). f32: every numeric feature float32 only
	 * (dtype = "f32"); dtype_names[k] gets dtype_types[k] (a gwb_numtype; dtypes = {...}). */
	bool f32;
	const char *const *dtype_names;
	const int *dtype_types;
	int n_dtypes;
} gwb_csv_opts;

/* What the reader found, for messages and the REPL summary. */
typedef struct gwb_csv_info {
	char sep;
	bool header;
	bool bom;
	bool crlf;
	size_t bytes;       /* file size (uncompressed bytes for a compressed file, bytes read
			       for a stream of unknown size) */
	const char *compression;  /* "gzip" or "zstd" (static), NULL for plain text */
	size_t compressed_bytes;  /* the compressed bytes read */
	size_t lines;       /* physical lines read */
	size_t missing;     /* missing feature values */
	int threads;        /* threads that parsed the rows (1 = the sequential reader) */
	double seconds;
} gwb_csv_info;

/* What data.load reads, for messages that refuse a file ("binary data ..."). */
#define GWB_LOAD_FORMATS "data.load reads CSV text (plain, gzip or zstd compressed), .gwbd, " \
	".npy and Parquet (.parquet) files"

void gwb_csv_opts_init(gwb_csv_opts *o);

/* Read the CSV at path into a new dataset (*out, owned by the caller, freed with
 * gwb_dataset_free()). info may be NULL. On error nothing is allocated and the message names
 * path:line:column, what was found and what to do. GWB_EINTR when interrupted. */
gwb_status gwb_csv_load(const char *path, const gwb_csv_opts *o, gwb_dataset **out,
			gwb_csv_info *info);

/* Write d as CSV (header line, features, target last) to path. decimals < 0 writes every
 * value exactly (%.9g: reading it back gives the same float32; an int64 column's digits, a
 * float64 column's shortest round-trip decimal); decimals >= 0 writes fixed point with that
 * many decimals (faster, lossy; int64 columns still exact). Missing values are empty fields; text is
 * quoted when it holds the separator, a quote, a newline or edge blanks. Rows are formatted
 * by `threads` pthreads (0 = one per CPU) and written in order. */
gwb_status gwb_csv_write(const gwb_dataset *d, const char *path, char sep, int decimals,
			 int threads);

/* Parse the whole of s[0..n) as a number with the reader's rules (leading/trailing blanks
 * ignored) into the correctly rounded float32. False when it is not a number; *overflow is set
 * when it is a number outside the float32 range. Exposed for tests. */
bool gwb_csv_parse_float(const char *s, size_t n, float *out, bool *overflow);

#ifdef __cplusplus
}
#endif
#endif
