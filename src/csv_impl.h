/* csv_impl.h - what the pieces of the CSV reader share (csv.h is the public contract): the
 * reader's state (struct rd), the level dictionaries, the tokenizer's fields and the steps
 * both readers take. csv_parse.c turns records into rows (numbers, tokenizer, dictionaries,
 * the row store), csv.c is the sequential reader and gwb_csv_load, csv_par.c the byte ranges
 * and the threads, csv_write.c the writer. Internal: nothing outside src/csv*.c includes it
 * (but tests/unit/test_csv.c, for the thresholds).
 * Everything a struct rd holds is owned by it and released by csv.c's rd_free. */
#ifndef GWB_CSV_IMPL_H
#define GWB_CSV_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "csv.h"

#define MAX_LEVELS (1 << 24)          /* category codes stay exact in float32 */
/* The parallel reader from 4 MiB (at 2 threads it cost 7-25 % more CPU than the sequential
 * reader on issue 28's mixed files of 1-20 MB, so it wins from a few MB where a second core is
 * free; bench/results/data-2026-12-02.txt), in ranges of 1 MiB and more (more ranges than
 * threads below 64 MiB, so a slow core does not set the time). */
#define PAR_MIN_BYTES ((size_t)4 << 20)
#define PAR_RANGE_MIN ((size_t)1 << 20)
/* The parallel reader keeps the ranges' 64-bit columns in mappings (rd.wmap) while there are
 * at most this many (64-bit columns x ranges: the kernel limits a process's mappings). */
#define WMAP_MAX 4096

/* --- dictionaries: string -> code, in order of first appearance --------------------------- */

struct dslot {
	uint32_t hash;    /* the level's hash: most probes end here, without reading a string */
	int32_t code;     /* code + 1, 0 = empty */
};

struct dict {
	char **str;       /* code -> string (owned; NULL once handed to another dictionary) */
	int n, cap;
	struct dslot *slot;   /* open addressing; NULL once sorted (no more lookups) */
	size_t nslot;
	bool sorted;      /* str is in the final order already (csv_par.c's merge) */
	/* a parallel worker's dictionary (may_append): once most of the first APPEND_PROBE
	 * lookups added a level (free text), levels are appended without a lookup, repeats
	 * included, which the merge of the ranges' levels folds into one code */
	bool may_append, append;
	int looks;
	/* a text column's (dataset.h's gwb_text): every value appended in row order, none looked
	 * up, no limit on their number, the strings in arena (not malloc'd one by one) */
	bool text;
	gwb_arena *arena;
};
#define APPEND_PROBE 4096

/* A level being sorted: its first 24 bytes as three big-endian words (most comparisons end
 * there, without reading the string), the value when every level of the column reads as a
 * number, the string and its code. */
#define LVL_KEY 3
struct lvl {
	uint64_t key[LVL_KEY];
	float v;
	int32_t code;
	const char *s;
};

/* --- the reader ----------------------------------------------------------------------------- */

struct field {
	const char *p;
	size_t n;
	int q;            /* 0 unquoted, 1 quoted, 2 quoted with "" escapes inside */
};

enum { TOK_REC, TOK_MORE, TOK_EOF, TOK_ERR };

struct col {
	int numeric;      /* 1 numeric, 0 categorical (or text) */
	int text;         /* free text (gwb_text): decided from the sniffed sample */
	struct dict dict;
	int feature;      /* index among features; -1 for the target */
	size_t missing;
	/* sniffing */
	int row0_text;
	size_t seen_num, seen_text;   /* numbers and text among the sampled data rows */
	size_t seen_distinct;         /* distinct texts among them */
	/* a numeric feature's 64-bit values (rd.wcol): 1 while every value read so far was an
	 * integer literal int64 holds (the values are int64, GWB_I64_NA missing), 0 once one
	 * was not (doubles, NaN missing: csv_wide_flip turned the earlier ones) */
	int wint;
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
	struct gwb_zreader *z;  /* a gzip/zstd input's decompressor (zio.h), else NULL */
	int zkind;         /* its gwb_zkind */
	size_t zsize;      /* the compressed file's size (0 unknown); size is 0 then */
	/* a compressed regular file for the parallel reader: its decompressed image (zio.h),
	 * read at offsets as a file is; size is then the expected decompressed size (a hint:
	 * the last range reads on to the end), and zfail marks the image's own error (a damaged
	 * stream: reported as it is, not re-read by the sequential reader) */
	struct gwb_zimage *zi;
	bool zfail;
	gwb_csv_info info;

	const char *const *missing;
	int n_missing;
	bool numeric_missing;   /* a missing marker reads as a number ("-999"): check it first */

	int ncol;
	struct col *cols;
	char **names;
	struct dict name_set;   /* the names, code = column (set_names) */
	int target;        /* column index of the target */

	/* with wide, the numeric features' exact values, column by column as they are read:
	 * wcol[k] (NULL for the other features) holds wcap rows (grown by csv_wide_reserve, the
	 * first time to about west bytes' worth); build hands them to the Dataset */
	bool wide;
	uint64_t **wcol;
	size_t wcap, west;
	/* the wcol arrays are gwb_hugemap mappings of csv_wide_bytes(r) bytes (the parallel
	 * reader's: grown by moving pages, joined by moving them to their final place), not
	 * malloc'd */
	bool wmap;
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
	/* and text column j's strings of range i, in row order: part_text[i * ncol + j] */
	struct dict *part_text;
};

/* csv_parse.c: feature k's (column c's) values of the rows read so far from int64 to double
 * (c->wint becomes 0); room for row r->rows in every 64-bit column (false: out of memory);
 * the columns released; the bytes of a mapped column (wmap) of cap rows. */
void csv_wide_flip(struct rd *r, struct col *c, int k);
bool csv_wide_reserve(struct rd *r, size_t rows);
void csv_wide_free(struct rd *r);
size_t csv_wide_bytes(size_t cap);

/* csv_parse.c: the dictionaries. csv_dict_code: the code of s[0..n), adding it when new; -1 out
 * of memory, -2 too many levels. csv_dict_find: the code of a name, -1 when absent. */
void csv_dict_free(struct dict *d);
int csv_dict_code(struct dict *d, const char *s, size_t n, int32_t *code);
int csv_dict_find(const struct dict *d, const char *s, size_t n);

/* csv_parse.c: the levels in their final order, bytes or (when every level reads as a number)
 * values. csv_dict_sort: sorts d, returns old code -> new code (the caller frees it; NULL out of
 * memory); d finds no codes afterwards. For the parallel reader's merge: csv_levels_numeric
 * (every level reads as a number), csv_levels_make (d's levels, *out owned by the caller, NULL
 * out of memory), csv_levels_sort (false: out of memory), csv_level_cmp (<0, 0, >0). */
int32_t *csv_dict_sort(struct dict *d);
bool csv_levels_numeric(const struct dict *d);
struct lvl *csv_levels_make(const struct dict *d, bool numeric);
bool csv_levels_sort(struct lvl *l, size_t n, bool numeric);

/* Bytes (strcmp's order), or values with the bytes deciding ties ("1" and "1.0"). */
static inline int csv_level_cmp(const struct lvl *a, const struct lvl *b, bool numeric)
{
	int k;

	if (numeric) {
		if (a->v != b->v)
			return a->v < b->v ? -1 : 1;
		return strcmp(a->s, b->s);
	}
	for (k = 0; k < LVL_KEY; k++)
		if (a->key[k] != b->key[k])
			return a->key[k] < b->key[k] ? -1 : 1;
	/* the same first bytes: the same string when it ended there */
	if (!(a->key[LVL_KEY - 1] & 0xff))
		return 0;
	return strcmp(a->s + 8 * LVL_KEY, b->s + 8 * LVL_KEY);
}

/* csv_parse.c: messages (path:line:col of buf offset `at`, counting from the record that
 * starts at `rec` on `line`; a field shown for a message) and the tokenizer. */
gwb_status csv_fail_at(struct rd *r, gwb_status st, size_t rec, size_t line, size_t at,
		       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
const char *csv_show(const char *p, size_t n, char *out, size_t outsz);
int csv_tokenize(struct rd *r, size_t cur, size_t *next, size_t line, gwb_status *err);
bool csv_is_missing(const struct rd *r, const char *p, size_t n);
gwb_status csv_field_text(struct rd *r, const struct field *f, const char **p, size_t *n);

/* csv_parse.c: the row store and the converters that fill it (see there). */
gwb_status csv_reserve_row(struct rd *r, float **row);
bool csv_fast_row(struct rd *r, size_t cur, size_t *next, float *row, float *tval);
bool csv_mixed_row(struct rd *r, size_t cur, size_t *next, float *row, float *tval,
		   size_t *nmiss);
gwb_status csv_convert_row(struct rd *r, size_t rec, size_t line);

/* csv_par.c: fn on n jobs (size bytes apart; this thread runs job 0), the chunks transposed
 * into X, the byte-range reader (PAR_* results) and the part maps it leaves in r. */
enum { PAR_ERROR = -1, PAR_DECLINED = 0, PAR_DONE = 1, PAR_MISMATCH = 2 };

/* fn on each of n job structs (size bytes apart), on n workers of the pool (pool.h). */
void csv_run_jobs(void *jobs, size_t size, int n, void *(*fn)(void *));
gwb_status csv_store_chunks(struct rd *r, float *X, size_t *stored);
bool csv_quoted_break(const char *p, size_t n);
int csv_parallel_load(struct rd *r, size_t start, int threads, size_t range_min, bool parity,
		      bool progress, gwb_status *st);
void csv_part_free(struct rd *r);

#endif
