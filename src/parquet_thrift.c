/* parquet_thrift.c - Parquet's metadata in Thrift's compact protocol (parquet_impl.h): the
 * footer (FileMetaData with its SchemaElements, RowGroups, ColumnChunks, ColumnMetaData and
 * key-value pairs) and PageHeaders read from bytes, every length and count checked against
 * the bytes left before it is used; and the writer's side (field headers, varints, lists)
 * over a growable buffer. Fields gwb does not need are skipped, however they are nested (to a
 * fixed depth). Uses only status.h and size.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet_impl.h"
#include "size.h"

/* --- reading -------------------------------------------------------------------------------- */

typedef struct cur {
	const uint8_t *p, *end, *start;
	bool bad;
	char *why;
	size_t wn;
} cur;

static void fail(cur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad)
		return;
	c->bad = true;
	va_start(ap, fmt);
	vsnprintf(c->why, c->wn, fmt, ap);
	va_end(ap);
	c->p = c->end;
}

static uint8_t rd_byte(cur *c)
{
	if (c->p >= c->end) {
		fail(c, "metadata ends early (byte %zu of it)", (size_t)(c->p - c->start));
		return 0;
	}
	return *c->p++;
}

static uint64_t rd_varint(cur *c)
{
	uint64_t v = 0;
	int s;

	for (s = 0; s < 70; s += 7) {
		uint8_t b = rd_byte(c);
		if (c->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
		if (s == 63) {
			break;
		}
	}
	fail(c, "a varint longer than 10 bytes at byte %zu of the metadata",
	     (size_t)(c->p - c->start));
	return 0;
}

static int64_t rd_zigzag(cur *c)
{
	uint64_t v = rd_varint(c);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int32_t rd_i32(cur *c)
{
	int64_t v = rd_zigzag(c);

	if (v < INT32_MIN || v > INT32_MAX)
		fail(c, "an i32 out of range (%lld) at byte %zu of the metadata", (long long)v,
		     (size_t)(c->p - c->start));
	return (int32_t)v;
}

/* a binary's bytes (pointer into the input) and length */
static const uint8_t *rd_bin(cur *c, size_t *n)
{
	uint64_t len = rd_varint(c);
	const uint8_t *s = c->p;

	if (c->bad)
		return NULL;
	if (len > (uint64_t)(c->end - c->p)) {
		fail(c, "a string of %llu bytes where %zu are left", (unsigned long long)len,
		     (size_t)(c->end - c->p));
		return NULL;
	}
	c->p += len;
	*n = (size_t)len;
	return s;
}

static char *rd_str(cur *c)
{
	size_t n = 0;
	const uint8_t *s = rd_bin(c, &n);
	char *r;

	if (!s)
		return NULL;
	if (!(r = malloc(n + 1))) {
		fail(c, "out of memory");
		return NULL;
	}
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

/* a list header: element type and count (each element takes at least one byte, except bools
 * in some writers, so the count is bounded by the bytes left) */
static size_t rd_list(cur *c, int *etype)
{
	uint8_t h = rd_byte(c);
	uint64_t n = h >> 4;

	if (n == 15)
		n = rd_varint(c);
	*etype = h & 15;
	if (c->bad)
		return 0;
	if (n > (uint64_t)(c->end - c->p)) {
		fail(c, "a list of %llu items where %zu bytes are left", (unsigned long long)n,
		     (size_t)(c->end - c->p));
		return 0;
	}
	return (size_t)n;
}

static void skip(cur *c, int type, int depth);

static void skip_struct(cur *c, int depth)
{
	for (;;) {
		uint8_t h = rd_byte(c);
		if (c->bad || !h)
			return;
		if (!(h >> 4))
			rd_varint(c);
		skip(c, h & 15, depth + 1);
	}
}

static void skip(cur *c, int type, int depth)
{
	size_t n = 0, i;
	int et, kt = 0, vt = 0;

	if (depth > 32) {
		fail(c, "metadata nested deeper than 32 levels");
		return;
	}
	switch (type) {
	case PQ_T_TRUE:
	case PQ_T_FALSE:
		return;
	case PQ_T_BYTE:
		rd_byte(c);
		return;
	case PQ_T_I16:
	case PQ_T_I32:
	case PQ_T_I64:
		rd_varint(c);
		return;
	case PQ_T_DOUBLE:
		if (c->end - c->p < 8)
			fail(c, "a double cut short");
		else
			c->p += 8;
		return;
	case PQ_T_BIN:
		rd_bin(c, &n);
		return;
	case PQ_T_LIST:
	case PQ_T_SET:
		n = rd_list(c, &et);
		for (i = 0; i < n && !c->bad; i++)
			skip(c, et == PQ_T_TRUE || et == PQ_T_FALSE ? PQ_T_BYTE : et, depth + 1);
		return;
	case PQ_T_MAP:
		n = (size_t)rd_varint(c);
		if (n) {
			uint8_t kv = rd_byte(c);
			kt = kv >> 4;
			vt = kv & 15;
		}
		if (n > (size_t)(c->end - c->p)) {
			fail(c, "a map of %zu entries where %zu bytes are left", n,
			     (size_t)(c->end - c->p));
			return;
		}
		for (i = 0; i < n && !c->bad; i++) {
			skip(c, kt, depth + 1);
			skip(c, vt, depth + 1);
		}
		return;
	case PQ_T_STRUCT:
		skip_struct(c, depth);
		return;
	default:
		fail(c, "unknown Thrift type %d at byte %zu of the metadata", type,
		     (size_t)(c->p - c->start));
	}
}

/* Next field of a struct: its id (0 = the end) and type; *last carries the previous id. */
static int rd_field(cur *c, int *last, int *type)
{
	uint8_t h = rd_byte(c);
	int d;

	if (c->bad || !h)
		return 0;
	*type = h & 15;
	d = h >> 4;
	if (d)
		*last += d;
	else
		*last = (int)rd_i32(c);
	if (c->bad)
		return 0;
	if (*last <= 0) {   /* (0 would read as the end) */
		fail(c, "a field id %d at byte %zu of the metadata", *last,
		     (size_t)(c->p - c->start));
		return 0;
	}
	return *last;
}

/* read an integer field of any integer type as int64 */
static int64_t rd_int(cur *c, int type)
{
	if (type == PQ_T_I32 || type == PQ_T_I16 || type == PQ_T_I64)
		return rd_zigzag(c);
	if (type == PQ_T_BYTE)
		return (int8_t)rd_byte(c);
	fail(c, "an integer field of Thrift type %d", type);
	return 0;
}

static bool rd_bool(cur *c, int type)
{
	if (type == PQ_T_TRUE || type == PQ_T_FALSE)
		return type == PQ_T_TRUE;
	fail(c, "a boolean field of Thrift type %d", type);
	return false;
}

static int rd_enum(cur *c, int type)
{
	int64_t v = rd_int(c, type);

	if (v < INT32_MIN || v > INT32_MAX)
		fail(c, "an enum value %lld", (long long)v);
	return (int)v;
}

static void rd_logical(cur *c, pq_schema_el *e)
{
	int last = 0, t, id;

	while ((id = rd_field(c, &last, &t))) {
		if (!e->logical)
			e->logical = id;
		if (id == PQ_LT_DECIMAL && t == PQ_T_STRUCT) {
			int l2 = 0, t2, id2;
			while ((id2 = rd_field(c, &l2, &t2))) {
				if (id2 == 1)
					e->scale = (int)rd_int(c, t2);
				else
					skip(c, t2, 1);
			}
		} else {
			skip(c, t, 1);
		}
	}
}

static void rd_schema_el(cur *c, pq_schema_el *e)
{
	int last = 0, t, id;

	e->type = -1;
	e->rep = -1;
	e->converted = -1;
	while ((id = rd_field(c, &last, &t))) {
		switch (id) {
		case 1: e->type = rd_enum(c, t); break;
		case 2: e->type_length = rd_enum(c, t); break;
		case 3: e->rep = rd_enum(c, t); break;
		case 4:
			if (t != PQ_T_BIN) {
				fail(c, "a schema name of Thrift type %d", t);
				break;
			}
			free(e->name);
			e->name = rd_str(c);
			break;
		case 5: e->num_children = rd_enum(c, t); break;
		case 6: e->converted = rd_enum(c, t); break;
		case 7: e->scale = rd_enum(c, t); break;
		case 10:
			if (t == PQ_T_STRUCT)
				rd_logical(c, e);
			else
				skip(c, t, 1);
			break;
		default: skip(c, t, 1);
		}
	}
}

static void rd_colmeta(cur *c, pq_colmeta *m)
{
	int last = 0, t, id;

	m->has_meta = true;
	while ((id = rd_field(c, &last, &t))) {
		switch (id) {
		case 1: m->type = rd_enum(c, t); break;
		case 4: m->codec = rd_enum(c, t); break;
		case 5: m->num_values = rd_int(c, t); break;
		case 6: m->total_uncompressed = rd_int(c, t); break;
		case 7: m->total_compressed = rd_int(c, t); break;
		case 9: m->data_page_offset = rd_int(c, t); break;
		case 11: m->dict_page_offset = rd_int(c, t); break;
		default: skip(c, t, 2);
		}
	}
}

static void rd_chunk(cur *c, pq_colmeta *m)
{
	int last = 0, t, id;

	m->dict_page_offset = -1;
	while ((id = rd_field(c, &last, &t))) {
		if (id == 1 && t == PQ_T_BIN) {
			size_t n;
			rd_bin(c, &n);
			m->external = true;
		} else if (id == 3 && t == PQ_T_STRUCT) {
			rd_colmeta(c, m);
		} else {
			skip(c, t, 2);
		}
	}
}

static void rd_rowgroup(cur *c, pq_rowgroup *g)
{
	int last = 0, t, id, et;
	size_t n, i;

	while ((id = rd_field(c, &last, &t))) {
		if (id == 1 && t == PQ_T_LIST) {
			n = rd_list(c, &et);
			if (c->bad)
				return;
			if (et != PQ_T_STRUCT || g->cols) {
				fail(c, "a row group's column list of Thrift type %d", et);
				return;
			}
			if (n > 1u << 20 || !(g->cols = calloc(n ? n : 1, sizeof(*g->cols)))) {
				fail(c, "a row group of %zu columns", n);
				return;
			}
			g->ncols = (int)n;
			for (i = 0; i < n && !c->bad; i++)
				rd_chunk(c, &g->cols[i]);
		} else if (id == 3) {
			g->num_rows = rd_int(c, t);
		} else {
			skip(c, t, 1);
		}
	}
}

gwb_status pq_meta_parse(const uint8_t *p, size_t n, pq_meta *m, char *why, size_t wn)
{
	cur c = {p, p + n, p, false, why, wn};
	int last = 0, t, id, et;
	size_t k, i;

	memset(m, 0, sizeof(*m));
	m->num_rows = -1;
	while ((id = rd_field(&c, &last, &t))) {
		switch (id) {
		case 2:   /* schema */
			if (t != PQ_T_LIST) {
				fail(&c, "a schema of Thrift type %d", t);
				break;
			}
			k = rd_list(&c, &et);
			if (c.bad)
				break;
			if (et != PQ_T_STRUCT || m->schema || k > (1u << 20)) {
				fail(&c, "a schema list of %zu items of Thrift type %d", k, et);
				break;
			}
			if (!(m->schema = calloc(k ? k : 1, sizeof(*m->schema)))) {
				fail(&c, "out of memory for %zu schema elements", k);
				break;
			}
			m->nschema = (int)k;
			for (i = 0; i < k && !c.bad; i++)
				rd_schema_el(&c, &m->schema[i]);
			break;
		case 3:
			m->num_rows = rd_int(&c, t);
			break;
		case 4:   /* row groups */
			if (t != PQ_T_LIST) {
				fail(&c, "row groups of Thrift type %d", t);
				break;
			}
			k = rd_list(&c, &et);
			if (c.bad)
				break;
			if (et != PQ_T_STRUCT || m->rg || k > (1u << 24)) {
				fail(&c, "a row group list of %zu items of Thrift type %d", k, et);
				break;
			}
			if (!(m->rg = calloc(k ? k : 1, sizeof(*m->rg)))) {
				fail(&c, "out of memory for %zu row groups", k);
				break;
			}
			m->nrg = (int)k;
			for (i = 0; i < k && !c.bad; i++)
				rd_rowgroup(&c, &m->rg[i]);
			break;
		case 5:   /* key_value_metadata */
			if (t != PQ_T_LIST) {
				skip(&c, t, 1);
				break;
			}
			k = rd_list(&c, &et);
			if (c.bad)
				break;
			if (et != PQ_T_STRUCT || m->keys) {
				fail(&c, "key-value metadata of Thrift type %d", et);
				break;
			}
			m->keys = calloc(k ? k : 1, sizeof(char *));
			m->vals = calloc(k ? k : 1, sizeof(char *));
			if (!m->keys || !m->vals) {
				fail(&c, "out of memory for %zu key-value pairs", k);
				break;
			}
			m->nkv = (int)k;
			for (i = 0; i < k && !c.bad; i++) {
				int l2 = 0, t2, id2;
				while ((id2 = rd_field(&c, &l2, &t2))) {
					if ((id2 == 1 || id2 == 2) && t2 == PQ_T_BIN) {
						char **dst = id2 == 1 ? &m->keys[i] : &m->vals[i];
						free(*dst);
						*dst = rd_str(&c);
					} else {
						skip(&c, t2, 2);
					}
				}
			}
			break;
		case 6:
			if (t == PQ_T_BIN) {
				free(m->created_by);
				m->created_by = rd_str(&c);
			} else {
				skip(&c, t, 1);
			}
			break;
		default:
			skip(&c, t, 1);
		}
	}
	if (c.bad) {
		pq_meta_free(m);
		return GWB_EPARSE;
	}
	if (!m->schema || m->num_rows < 0) {
		snprintf(why, wn, "the metadata has no %s", !m->schema ? "schema" : "row count");
		pq_meta_free(m);
		return GWB_EPARSE;
	}
	for (i = 0; i < (size_t)m->nschema; i++)
		if (!m->schema[i].name) {
			snprintf(why, wn, "schema element %zu has no name", i);
			pq_meta_free(m);
			return GWB_EPARSE;
		}
	return GWB_OK;
}

void pq_meta_free(pq_meta *m)
{
	int i;

	for (i = 0; i < m->nschema; i++)
		free(m->schema[i].name);
	free(m->schema);
	for (i = 0; i < m->nrg; i++)
		free(m->rg[i].cols);
	free(m->rg);
	for (i = 0; i < m->nkv; i++) {
		free(m->keys[i]);
		free(m->vals[i]);
	}
	free(m->keys);
	free(m->vals);
	free(m->created_by);
	memset(m, 0, sizeof(*m));
}

gwb_status pq_page_parse(const uint8_t *p, size_t n, pq_page *h, size_t *used, char *why,
			 size_t wn)
{
	cur c = {p, p + n, p, false, why, wn};
	int last = 0, t, id;

	memset(h, 0, sizeof(*h));
	h->type = -1;
	h->is_compressed = true;
	while ((id = rd_field(&c, &last, &t))) {
		int l2 = 0, t2, id2;
		switch (id) {
		case 1: h->type = rd_enum(&c, t); break;
		case 2: h->uncompressed = (int32_t)rd_enum(&c, t); break;
		case 3: h->compressed = (int32_t)rd_enum(&c, t); break;
		case 5:   /* DataPageHeader */
			if (t != PQ_T_STRUCT) {
				skip(&c, t, 1);
				break;
			}
			h->has_v1 = true;
			while ((id2 = rd_field(&c, &l2, &t2))) {
				switch (id2) {
				case 1: h->num_values = rd_enum(&c, t2); break;
				case 2: h->encoding = rd_enum(&c, t2); break;
				case 3: h->def_enc = rd_enum(&c, t2); break;
				case 4: h->rep_enc = rd_enum(&c, t2); break;
				default: skip(&c, t2, 2);
				}
			}
			break;
		case 7:   /* DictionaryPageHeader */
			if (t != PQ_T_STRUCT) {
				skip(&c, t, 1);
				break;
			}
			h->has_dict = true;
			while ((id2 = rd_field(&c, &l2, &t2))) {
				switch (id2) {
				case 1: h->num_values = rd_enum(&c, t2); break;
				case 2: h->encoding = rd_enum(&c, t2); break;
				default: skip(&c, t2, 2);
				}
			}
			break;
		case 8:   /* DataPageHeaderV2 */
			if (t != PQ_T_STRUCT) {
				skip(&c, t, 1);
				break;
			}
			h->has_v2 = true;
			while ((id2 = rd_field(&c, &l2, &t2))) {
				switch (id2) {
				case 1: h->num_values = rd_enum(&c, t2); break;
				case 2: h->num_nulls = rd_enum(&c, t2); break;
				case 3: h->num_rows = rd_enum(&c, t2); break;
				case 4: h->encoding = rd_enum(&c, t2); break;
				case 5: h->def_len = rd_enum(&c, t2); break;
				case 6: h->rep_len = rd_enum(&c, t2); break;
				case 7: h->is_compressed = rd_bool(&c, t2); break;
				default: skip(&c, t2, 2);
				}
			}
			break;
		default:
			skip(&c, t, 1);
		}
	}
	if (c.bad)
		return GWB_EPARSE;
	*used = (size_t)(c.p - p);
	return GWB_OK;
}

/* --- writing -------------------------------------------------------------------------------- */

void pq_put(pq_buf *b, const void *p, size_t n)
{
	if (b->oom || !n)
		return;
	if (n > b->cap - b->n) {
		size_t need, cap = b->cap ? b->cap : 4096;
		uint8_t *q;
		if (gwb_add_size(b->n, n, &need)) {
			b->oom = true;
			return;
		}
		while (cap < need)
			if (gwb_mul_size(cap, 2, &cap)) {
				b->oom = true;
				return;
			}
		if (!(q = realloc(b->p, cap))) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

void pq_put_byte(pq_buf *b, uint8_t v)
{
	pq_put(b, &v, 1);
}

void pq_put_varint(pq_buf *b, uint64_t v)
{
	uint8_t t[10];
	int n = 0;

	do {
		t[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	pq_put(b, t, (size_t)n);
}

static void put_zigzag(pq_buf *b, int64_t v)
{
	pq_put_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void pq_tw_field(pq_buf *b, int *last, int id, int type)
{
	if (id > *last && id - *last <= 15) {
		pq_put_byte(b, (uint8_t)((id - *last) << 4 | type));
	} else {
		pq_put_byte(b, (uint8_t)type);
		put_zigzag(b, id);
	}
	*last = id;
}

void pq_tw_i32(pq_buf *b, int *last, int id, int32_t v)
{
	pq_tw_field(b, last, id, PQ_T_I32);
	put_zigzag(b, v);
}

void pq_tw_i64(pq_buf *b, int *last, int id, int64_t v)
{
	pq_tw_field(b, last, id, PQ_T_I64);
	put_zigzag(b, v);
}

void pq_tw_bin(pq_buf *b, int *last, int id, const void *s, size_t n)
{
	pq_tw_field(b, last, id, PQ_T_BIN);
	pq_tw_elem_bin(b, s, n);
}

void pq_tw_bool(pq_buf *b, int *last, int id, bool v)
{
	pq_tw_field(b, last, id, v ? PQ_T_TRUE : PQ_T_FALSE);
}

void pq_tw_list(pq_buf *b, int *last, int id, int elem_type, size_t n)
{
	pq_tw_field(b, last, id, PQ_T_LIST);
	if (n < 15) {
		pq_put_byte(b, (uint8_t)(n << 4 | (size_t)elem_type));
	} else {
		pq_put_byte(b, (uint8_t)(0xf0 | elem_type));
		pq_put_varint(b, n);
	}
}

void pq_tw_struct(pq_buf *b, int *last, int id)
{
	pq_tw_field(b, last, id, PQ_T_STRUCT);
}

void pq_tw_stop(pq_buf *b)
{
	pq_put_byte(b, 0);
}

void pq_tw_elem_bin(pq_buf *b, const void *s, size_t n)
{
	pq_put_varint(b, n);
	pq_put(b, s, n);
}

void pq_tw_elem_i32(pq_buf *b, int32_t v)
{
	put_zigzag(b, v);
}
