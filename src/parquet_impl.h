/* parquet_impl.h - what the Parquet files share among themselves (parquet_thrift.c: the
 * footer and page headers in Thrift's compact protocol; parquet_enc.c: codecs, RLE/bit-packed
 * levels, plain, delta and byte-stream-split values; parquet_read.c and parquet_write.c).
 * Names follow Apache Parquet's parquet.thrift. Nothing here is for callers outside them:
 * they use parquet.h. Every struct here is owned by whoever filled it and freed with the
 * matching pq_*_free. */
#ifndef GWB_PARQUET_IMPL_H
#define GWB_PARQUET_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* parquet.thrift enums (the numbers are the format's) */
enum { PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_INT96 = 3, PQ_FLOAT = 4, PQ_DOUBLE = 5,
       PQ_BYTE_ARRAY = 6, PQ_FIXED = 7 };
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
enum { PQ_ENC_PLAIN = 0, PQ_ENC_PLAIN_DICT = 2, PQ_ENC_RLE = 3, PQ_ENC_BIT_PACKED = 4,
       PQ_ENC_DELTA_BINARY = 5, PQ_ENC_DELTA_LENGTH = 6, PQ_ENC_DELTA_BYTE_ARRAY = 7,
       PQ_ENC_RLE_DICT = 8, PQ_ENC_BYTE_STREAM_SPLIT = 9 };
enum { PQ_CODEC_NONE = 0, PQ_CODEC_SNAPPY = 1, PQ_CODEC_GZIP = 2, PQ_CODEC_LZO = 3,
       PQ_CODEC_BROTLI = 4, PQ_CODEC_LZ4 = 5, PQ_CODEC_ZSTD = 6, PQ_CODEC_LZ4_RAW = 7 };
enum { PQ_PAGE_DATA = 0, PQ_PAGE_INDEX = 1, PQ_PAGE_DICT = 2, PQ_PAGE_DATA_V2 = 3 };
/* ConvertedType values gwb looks at */
enum { PQ_CT_UTF8 = 0, PQ_CT_MAP = 1, PQ_CT_MAP_KV = 2, PQ_CT_LIST = 3, PQ_CT_ENUM = 4,
       PQ_CT_DECIMAL = 5, PQ_CT_JSON = 19 };
/* LogicalType union members (field ids) gwb looks at */
enum { PQ_LT_STRING = 1, PQ_LT_MAP = 2, PQ_LT_LIST = 3, PQ_LT_ENUM = 4, PQ_LT_DECIMAL = 5,
       PQ_LT_JSON = 12, PQ_LT_UUID = 14, PQ_LT_FLOAT16 = 15 };

typedef struct pq_schema_el {
	int type;           /* physical type, -1 for a group */
	int type_length;
	int rep;            /* PQ_REQUIRED / OPTIONAL / REPEATED; -1 when absent (the root) */
	char *name;
	int num_children;
	int converted;      /* ConvertedType, -1 when absent */
	int scale;          /* DECIMAL scale (converted or logical) */
	int logical;        /* LogicalType member, 0 when absent */
} pq_schema_el;

typedef struct pq_colmeta {
	int type;
	int codec;
	int64_t num_values;
	int64_t total_compressed;
	int64_t total_uncompressed; /* the chunk's bytes decompressed (its decoding work) */
	int64_t data_page_offset;
	int64_t dict_page_offset;   /* -1 when absent */
	bool external;              /* file_path set: the chunk lives in another file */
	bool has_meta;              /* meta_data was present */
} pq_colmeta;

typedef struct pq_rowgroup {
	int64_t num_rows;
	int ncols;
	pq_colmeta *cols;
} pq_rowgroup;

typedef struct pq_meta {
	int nschema;
	pq_schema_el *schema;
	int64_t num_rows;
	int nrg;
	pq_rowgroup *rg;
	int nkv;
	char **keys, **vals;      /* key-value metadata (vals[i] may be NULL) */
	char *created_by;         /* or NULL */
} pq_meta;

typedef struct pq_page {
	int type;
	int32_t uncompressed, compressed;
	int32_t num_values;
	int encoding;
	int def_enc, rep_enc;       /* v1 level encodings */
	int32_t num_nulls, num_rows;  /* v2 */
	int32_t def_len, rep_len;   /* v2: level bytes (never compressed) */
	bool is_compressed;         /* v2 (default true) */
	bool has_v1, has_v2, has_dict;
} pq_page;

/* --- parquet_thrift.c ----------------------------------------------------------------------- */

/* Parse the footer (FileMetaData) from p[0..n). GWB_EPARSE with a short reason in why (the
 * caller adds the file and offset) on malformed input. */
gwb_status pq_meta_parse(const uint8_t *p, size_t n, pq_meta *m, char *why, size_t wn);
void pq_meta_free(pq_meta *m);
/* Parse a PageHeader at p (at most n bytes); *used = its size. */
gwb_status pq_page_parse(const uint8_t *p, size_t n, pq_page *h, size_t *used, char *why,
			 size_t wn);

/* A growable byte buffer (writer side); oom is sticky and every put is then a no-op. */
typedef struct pq_buf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
} pq_buf;
void pq_put(pq_buf *b, const void *p, size_t n);
void pq_put_byte(pq_buf *b, uint8_t v);
void pq_put_varint(pq_buf *b, uint64_t v);
/* Thrift compact writer over a pq_buf: fields of the struct being written carry the last
 * field id in *last (one int per open struct). */
void pq_tw_field(pq_buf *b, int *last, int id, int type);
void pq_tw_i32(pq_buf *b, int *last, int id, int32_t v);
void pq_tw_i64(pq_buf *b, int *last, int id, int64_t v);
void pq_tw_bin(pq_buf *b, int *last, int id, const void *s, size_t n);
void pq_tw_bool(pq_buf *b, int *last, int id, bool v);
void pq_tw_list(pq_buf *b, int *last, int id, int elem_type, size_t n);
void pq_tw_struct(pq_buf *b, int *last, int id);  /* then the struct's fields, then pq_tw_stop */
void pq_tw_stop(pq_buf *b);
void pq_tw_elem_bin(pq_buf *b, const void *s, size_t n);  /* a list element */
void pq_tw_elem_i32(pq_buf *b, int32_t v);
/* compact-protocol type codes */
enum { PQ_T_TRUE = 1, PQ_T_FALSE = 2, PQ_T_BYTE = 3, PQ_T_I16 = 4, PQ_T_I32 = 5, PQ_T_I64 = 6,
       PQ_T_DOUBLE = 7, PQ_T_BIN = 8, PQ_T_LIST = 9, PQ_T_SET = 10, PQ_T_MAP = 11,
       PQ_T_STRUCT = 12 };

/* --- parquet_enc.c -------------------------------------------------------------------------- */

/* The codec's name ("snappy", "LZ4", ...) for messages. */
const char *pq_codec_name(int codec);
const char *pq_encoding_name(int enc);
bool pq_codec_supported(int codec);
/* Decompress src[0..n) into dst[0..dn) exactly (the page says dn). GWB_EPARSE with why. */
gwb_status pq_decompress(int codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn,
			 char *why, size_t wn);
/* Append src[0..n) compressed with codec to b. */
gwb_status pq_compress(int codec, const uint8_t *src, size_t n, pq_buf *b);

/* RLE / bit-packed hybrid decoder over p[0..end) with values of bw bits (0..32). */
typedef struct pq_rle {
	const uint8_t *p, *end;
	int bw;
	uint32_t run;        /* values left in the current run */
	bool packed;         /* the current run is bit-packed */
	uint32_t value;      /* an RLE run's value */
	const uint8_t *bits; /* a bit-packed run's data */
	uint64_t bitpos;     /* bits consumed in it */
} pq_rle;
void pq_rle_init(pq_rle *r, const uint8_t *p, const uint8_t *end, int bw);
/* Whether the next n values are all one value (one RLE run covers them): then *value is it and
 * they are consumed; else false and r is as it was. */
bool pq_rle_const(pq_rle *r, size_t n, uint32_t *value);
/* Decode n values into out; false when the data ends first or is malformed. */
bool pq_rle_get(pq_rle *r, uint32_t *out, size_t n);
/* Append n values of bw bits, RLE/bit-packed hybrid (no length prefix). */
void pq_rle_put(pq_buf *b, const uint32_t *v, size_t n, int bw);

/* DELTA_BINARY_PACKED: decode exactly n values from p[0..end) (n = the page's count, which
 * the header's total must equal); *used = bytes read. */
bool pq_delta_get(const uint8_t *p, const uint8_t *end, int64_t *out, size_t n, size_t *used);
/* The header's total value count (DELTA_LENGTH / DELTA_BYTE_ARRAY need it first). */
bool pq_delta_count(const uint8_t *p, const uint8_t *end, uint64_t *count);

/* Bits needed for values up to v. */
int pq_bit_width(uint32_t v);

#endif
