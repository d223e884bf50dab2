/* dsio.c - .gwbd save and load (format in dsio.h), with XXH64 checksums.
 *
 * Layout, all little-endian:
 *   header (64 bytes): magic "\x89GWBD\r\n\x1a", u32 version, u32 header size (64), u64 rows,
 *     u32 features, u32 task, u32 classes, u32 flags (0), u64 payload bytes,
 *     u64 XXH64(payload), u64 XXH64(the 56 bytes before it)
 *   payload: string target; features x string name; classes x string class name;
 *     features x u32 level count, then the levels (strings) of each categorical column;
 *     rows x features float32 (column-major); rows int32 labels or rows float32 targets;
 *     version 2 and 3: u32 text columns, then each one's u32 feature index, rows x u32 (the
 *     string's length + 1; 0 = missing) and the strings' bytes one after another;
 *     version 3: u32 64-bit columns, then each one's u32 feature index, u32 type (1 int64,
 *     INT64_MIN missing; 2 float64, NaN missing) and rows x 8 bytes (X holds their float32).
 *   A table is written in the oldest version that holds it (1: no text and no 64-bit
 *   columns; 2: text but no 64-bit columns), which older gwb reads too.
 *   string: u32 length, then the bytes (no terminator).
 * The magic's \x89 and \r\n\x1a catch 7-bit and text-mode transfers, as PNG's do. */
#define _GNU_SOURCE
#include "dsio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "intr.h"

static const unsigned char magic[8] = {0x89, 'G', 'W', 'B', 'D', '\r', '\n', 0x1a};

#define HDR 64
#define IO_BLOCK ((size_t)4 << 20)

/* --- header fields (little-endian, as the format says; x86 and ARM Linux are) ------------- */

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* --- writing ------------------------------------------------------------------------------ */

/* Into a file (a) or, for gwb_dsio_save_mem, into memory (mem, grown as needed). */
struct wr {
	gwb_afile *a;
	unsigned char *mem;
	size_t mem_n, mem_cap;
	gwb_xxh64_state h;
	uint64_t bytes;
	gwb_status st;
};

static void put(struct wr *w, const void *p, size_t n)
{
	if (w->st)
		return;
	gwb_xxh64_update(&w->h, p, n);
	w->bytes += n;
	if (w->a) {
		w->st = gwb_afile_write(w->a, p, n);   /* (stops on Ctrl-C) */
		return;
	}
	if (w->mem_n + n > w->mem_cap) {
		size_t c = w->mem_cap ? w->mem_cap : 4096;
		unsigned char *q;
		while (c < w->mem_n + n)
			c *= 2;
		if (!(q = realloc(w->mem, c))) {
			w->st = gwb_error(GWB_ENOMEM, "out of host memory for a %zu-byte Dataset "
					  "image", w->mem_n + n);
			return;
		}
		w->mem = q;
		w->mem_cap = c;
	}
	memcpy(w->mem + w->mem_n, p, n);
	w->mem_n += n;
}

static void put_u32(struct wr *w, uint32_t v)
{
	put(w, &v, 4);
}

static void put_str(struct wr *w, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;

	put_u32(w, n);
	put(w, s ? s : "", n);
}

static void le_put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void le_put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Text columns among d's features (a table with none is written as version 1). */
static int text_columns(const gwb_dataset *d)
{
	int j, k = 0;

	for (j = 0; d->text && j < d->features; j++)
		k += d->text[j] != NULL;
	return k;
}

/* The version d is written in: the oldest that holds it. */
static uint32_t version_of(const gwb_dataset *d)
{
	return gwb_dataset_has_wide(d) ? 3 : text_columns(d) ? 2 : 1;
}

/* The payload (after a zeroed header the caller rewrote at the end). */
static void put_payload(struct wr *w, const gwb_dataset *d)
{
	int j, k;

	gwb_xxh64_init(&w->h, 0);
	w->bytes = 0;
	put_str(w, d->target);
	for (j = 0; j < d->features; j++)
		put_str(w, d->names ? d->names[j] : NULL);
	for (k = 0; k < d->classes; k++)
		put_str(w, d->class_names ? d->class_names[k] : NULL);
	for (j = 0; j < d->features; j++)
		put_u32(w, d->cat_levels && d->cat_levels[j] ? (uint32_t)d->cat_count[j] : 0);
	for (j = 0; j < d->features; j++)
		if (d->cat_levels && d->cat_levels[j])
			for (k = 0; k < d->cat_count[j]; k++)
				put_str(w, d->cat_levels[j][k]);
	put(w, d->X, d->rows * (size_t)d->features * sizeof(float));
	if (d->task == GWB_TASK_CLASSIFICATION)
		put(w, d->y, d->rows * sizeof(int32_t));
	else
		put(w, d->yr, d->rows * sizeof(float));
	if ((k = text_columns(d)) > 0 || version_of(d) >= 3) {   /* versions 2, 3: text */
		uint32_t *len = malloc((d->rows + 1) * sizeof(*len));
		size_t i;
		if (!len) {
			if (!w->st)
				w->st = gwb_error(GWB_ENOMEM, "save: out of memory for %zu text lengths",
						  d->rows);
			return;
		}
		put_u32(w, (uint32_t)k);
		for (j = 0; j < d->features && !w->st; j++) {
			char *const *v = gwb_dataset_is_text(d, j) ? d->text[j]->v : NULL;
			if (!v)
				continue;
			put_u32(w, (uint32_t)j);
			for (i = 0; i < d->rows; i++) {
				size_t n = v[i] ? strlen(v[i]) : 0;
				if (n >= UINT32_MAX - 1) {
					w->st = gwb_error(GWB_EINVAL, "save: row %zu of text column \"%s\" "
							  "holds %zu bytes, more than .gwbd stores", i + 1,
							  d->names[j] ? d->names[j] : "?", n);
					break;
				}
				len[i] = v[i] ? (uint32_t)n + 1 : 0;
			}
			put(w, len, d->rows * sizeof(*len));
			for (i = 0; i < d->rows && !w->st; i++)
				if (v[i])
					put(w, v[i], len[i] - 1);
		}
		free(len);
	}
	if (version_of(d) >= 3) {   /* version 3: the 64-bit columns */
		for (j = 0, k = 0; j < d->features; j++)
			k += gwb_dataset_dtype(d, j) != GWB_DT_F32;
		put_u32(w, (uint32_t)k);
		for (j = 0; j < d->features && !w->st; j++) {
			const gwb_num64 *c = d->wide[j];
			if (!c)
				continue;
			put_u32(w, (uint32_t)j);
			put_u32(w, (uint32_t)c->type);
			put(w, c->type == GWB_DT_I64 ? (const void *)c->i : (const void *)c->f,
			    d->rows * 8);
		}
	}
}

static void make_header(unsigned char *hdr, const gwb_dataset *d, struct wr *w)
{
	memcpy(hdr, magic, 8);
	le_put32(hdr + 8, version_of(d));
	le_put32(hdr + 12, HDR);
	le_put64(hdr + 16, d->rows);
	le_put32(hdr + 24, (uint32_t)d->features);
	le_put32(hdr + 28, (uint32_t)d->task);
	le_put32(hdr + 32, (uint32_t)d->classes);
	le_put32(hdr + 36, 0);
	le_put64(hdr + 40, w->bytes);
	le_put64(hdr + 48, gwb_xxh64_final(&w->h));
	le_put64(hdr + 56, gwb_xxh64(hdr, 56, 0));
}

gwb_status gwb_dsio_save_mem(const gwb_dataset *d, void **out, size_t *n)
{
	struct wr w;
	static const unsigned char zero[HDR];

	*out = NULL;
	*n = 0;
	memset(&w, 0, sizeof(w));
	put(&w, zero, HDR);
	put_payload(&w, d);
	if (w.st) {
		free(w.mem);
		return w.st;
	}
	make_header(w.mem, d, &w);
	*out = w.mem;
	*n = w.mem_n;
	return GWB_OK;
}

gwb_status gwb_dsio_save(const gwb_dataset *d, const char *path)
{
	struct wr w;
	gwb_afile a;
	unsigned char hdr[HDR];
	gwb_status st;

	memset(&w, 0, sizeof(w));
	if ((st = gwb_afile_open(&a, path, "save")))
		return st;
	w.a = &a;
	/* the header is rewritten at the end, once sizes and checksums are known */
	memset(hdr, 0, sizeof(hdr));
	if ((st = gwb_afile_write(&a, hdr, HDR)))
		goto fail;
	put_payload(&w, d);
	if ((st = w.st))
		goto fail;
	make_header(hdr, d, &w);
	if (pwrite(a.fd, hdr, HDR, 0) != HDR) {
		st = gwb_error(GWB_EIO, "save: writing %s failed: %s; it was left as it was", path,
			       strerror(errno));
		goto fail;
	}
	return gwb_afile_commit(&a);
fail:
	gwb_afile_abort(&a);
	return st;
}

/* --- reading ------------------------------------------------------------------------------ */

struct rdr {
	int fd;
	const unsigned char *mem;  /* gwb_dsio_load_mem: the image (fd unused), read from at */
	size_t at;
	const char *path;
	gwb_xxh64_state h;
	uint64_t left;   /* payload bytes not yet read */
	uint64_t total;
};

static gwb_status get(struct rdr *r, void *p, size_t n, const char *what)
{
	char *c = p;

	if (n > r->left)
		return gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %s needs %zu bytes but only %llu "
				 "remain of the %llu-byte payload", r->path, what, n,
				 (unsigned long long)r->left, (unsigned long long)r->total);
	if (r->mem) {
		memcpy(c, r->mem + r->at, n);
		gwb_xxh64_update(&r->h, c, n);
		r->at += n;
		r->left -= n;
		return GWB_OK;
	}
	while (n) {
		size_t want = n > IO_BLOCK ? IO_BLOCK : n;
		ssize_t k = read(r->fd, c, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return gwb_error(GWB_EIO, "%s: read failed: %s", r->path, strerror(errno));
		if (k == 0)
			return gwb_error(GWB_ECORRUPT, "%s: truncated .gwbd: the file ended inside %s",
					 r->path, what);
		gwb_xxh64_update(&r->h, c, (size_t)k);
		c += k;
		n -= (size_t)k;
		r->left -= (uint64_t)k;
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "%s: loading interrupted", r->path);
	}
	return GWB_OK;
}

static gwb_status get_str(struct rdr *r, char **out, const char *what)
{
	uint32_t n;
	gwb_status st;

	if ((st = get(r, &n, 4, what)))
		return st;
	if (n > r->left)
		return gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %s claims %u bytes, more than the "
				 "%llu left", r->path, what, n, (unsigned long long)r->left);
	if (!(*out = malloc((size_t)n + 1)))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
	(*out)[n] = 0;
	if ((st = get(r, *out, n, what)))
		return st;
	if (memchr(*out, 0, n))
		return gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %s holds a NUL byte", r->path,
				 what);
	return GWB_OK;
}

/* Version 3's 64-bit columns into d (format at the top). */
static gwb_status get_wide(struct rdr *r, gwb_dataset *d)
{
	uint32_t n, col, type, k;
	gwb_num64 *w;
	gwb_status st;
	char what[64];

	if ((st = get(r, &n, 4, "the 64-bit column count")))
		return st;
	if (n > (uint32_t)d->features)
		return gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %u 64-bit columns among %d "
				 "features", r->path, n, d->features);
	for (k = 0; k < n; k++) {
		if ((st = get(r, &col, 4, "a 64-bit column's index")) ||
		    (st = get(r, &type, 4, "a 64-bit column's type")))
			return st;
		if (col >= (uint32_t)d->features || gwb_dataset_dtype(d, (int)col) != GWB_DT_F32 ||
		    gwb_dataset_is_text(d, (int)col) || d->cat_levels[col] ||
		    (type != GWB_DT_I64 && type != GWB_DT_F64))
			return gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: 64-bit column %u of type %u "
					 "(features %d)", r->path, col + 1, type, d->features);
		if (!(w = calloc(1, sizeof(*w))))
			return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		w->type = (gwb_numtype)type;
		if (type == GWB_DT_I64)
			w->i = malloc((d->rows + 1) * 8);
		else
			w->f = malloc((d->rows + 1) * 8);
		if (!w->i && !w->f) {
			gwb_num64_free(w);
			return gwb_error(GWB_ENOMEM, "%s: out of memory for 64-bit column %u", r->path,
					 col + 1);
		}
		snprintf(what, sizeof(what), "the 64-bit values of feature %u", col + 1);
		if ((st = get(r, w->i ? (void *)w->i : (void *)w->f, d->rows * 8, what)) ||
		    (st = gwb_dataset_attach_wide(d, (int)col, w))) {
			gwb_num64_free(w);
			return st;
		}
	}
	return GWB_OK;
}

/* Version 2's text columns into d (format at the top). */
static gwb_status get_text(struct rdr *r, gwb_dataset *d)
{
	uint32_t n, col, *len = NULL;
	gwb_text *t = NULL;
	char *buf = NULL;
	gwb_status st;
	size_t i;
	char what[64];

	if ((st = get(r, &n, 4, "the text column count")))
		return st;
	if (n > (uint32_t)d->features)
		return gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %u text columns among %d features",
				 r->path, n, d->features);
	if (!(len = malloc((d->rows + 1) * sizeof(*len))))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
	for (; n > 0; n--) {
		uint64_t total = 0;
		char *p;
		if ((st = get(r, &col, 4, "a text column's index")))
			goto out;
		if (col >= (uint32_t)d->features || gwb_dataset_is_text(d, (int)col) ||
		    d->cat_levels[col]) {
			st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: text column index %u (features "
				       "%d)", r->path, col + 1, d->features);
			goto out;
		}
		snprintf(what, sizeof(what), "the text lengths of feature %u", col + 1);
		if (d->rows > r->left / 4) {
			st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %s do not fit the payload",
				       r->path, what);
			goto out;
		}
		if ((st = get(r, len, d->rows * sizeof(*len), what)))
			goto out;
		for (i = 0; i < d->rows; i++)
			total += len[i] ? len[i] - 1 : 0;
		if (total > r->left) {
			st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: text column %u claims %llu bytes, "
				       "more than the %llu left", r->path, col + 1,
				       (unsigned long long)total, (unsigned long long)r->left);
			goto out;
		}
		if (!(t = gwb_text_new(d->rows)) || !(buf = malloc((size_t)total + 1))) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			goto out;
		}
		snprintf(what, sizeof(what), "the text of feature %u", col + 1);
		if ((st = get(r, buf, (size_t)total, what)))
			goto out;
		if (memchr(buf, 0, (size_t)total)) {
			st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %s holds a NUL byte", r->path,
				       what);
			goto out;
		}
		for (i = 0, p = buf; i < d->rows; i++) {
			if (!len[i])
				continue;
			if (!(t->v[i] = gwb_arena_strndup(t->arena, p, len[i] - 1))) {
				st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
				goto out;
			}
			p += len[i] - 1;
		}
		free(buf);
		buf = NULL;
		if ((st = gwb_dataset_set_text(d, (int)col, t)))
			goto out;
		t = NULL;
	}
out:
	gwb_text_free(t);
	free(buf);
	free(len);
	return st;
}

bool gwb_dsio_is_gwbd(const char *path)
{
	unsigned char b[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, b, 8);
	close(fd);
	/* a file cut inside the magic still counts, so that loading says "truncated" */
	return n >= 4 && !memcmp(b, magic, (size_t)n);
}

static gwb_status load_from(struct rdr *r, uint64_t size, gwb_dataset **out);

gwb_status gwb_dsio_load(const char *path, gwb_dataset **out)
{
	struct rdr r;
	struct stat sb;
	gwb_status st;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.path = path;
	r.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r.fd < 0)
		return gwb_error(GWB_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(r.fd, &sb))
		st = gwb_error(GWB_EIO, "%s: cannot stat: %s", path, strerror(errno));
	else
		st = load_from(&r, (uint64_t)sb.st_size, out);
	close(r.fd);
	return st;
}

gwb_status gwb_dsio_load_mem(const void *buf, size_t n, const char *name, gwb_dataset **out)
{
	struct rdr r;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	r.fd = -1;
	r.mem = buf;
	r.path = name;
	return load_from(&r, n, out);
}

/* The header and payload from r (a file of `size` bytes, or an image of that many). */
static gwb_status load_from(struct rdr *rp, uint64_t size, gwb_dataset **out)
{
	struct rdr r = *rp;
	const char *path = r.path;
	unsigned char hdr[HDR];
	gwb_dataset *d = NULL;
	uint64_t rows, payload, sum;
	uint32_t version, hsize, features, task, classes, *cnt = NULL;
	ssize_t got;
	gwb_status st;
	int j, k;
	char what[96];

	if (r.mem) {
		got = size < HDR ? (ssize_t)size : HDR;
		memcpy(hdr, r.mem, (size_t)got);
		r.at = (size_t)got;
	} else {
		got = read(r.fd, hdr, HDR);
	}
	if (got >= 0 && got < 8 && (uint64_t)got == size &&
	    !memcmp(hdr, magic, (size_t)got) && got > 0) {
		st = gwb_error(GWB_ECORRUPT, "%s: truncated .gwbd: %zd bytes, the header alone is %d",
			       path, got, HDR);
		goto fail;
	}
	if (got < 8 || memcmp(hdr, magic, 8)) {
		st = gwb_error(GWB_EPARSE, "%s: not a .gwbd file (no GWBD magic)", path);
		goto fail;
	}
	if (got < HDR) {
		st = gwb_error(GWB_ECORRUPT, "%s: truncated .gwbd: %zd bytes, the header alone is %d",
			       path, got, HDR);
		goto fail;
	}
	if (gwb_xxh64(hdr, 56, 0) != rd64(hdr + 56)) {
		st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: the header checksum does not match",
			       path);
		goto fail;
	}
	version = rd32(hdr + 8);
	hsize = rd32(hdr + 12);
	rows = rd64(hdr + 16);
	features = rd32(hdr + 24);
	task = rd32(hdr + 28);
	classes = rd32(hdr + 32);
	payload = rd64(hdr + 40);
	sum = rd64(hdr + 48);
	if (version < 1 || version > GWB_DSIO_VERSION || hsize != HDR) {
		st = gwb_error(GWB_EPARSE, "%s: .gwbd format version %u; this gwb reads versions 1 to %d "
			       "(save it again with this gwb, or use a newer gwb)", path, version,
			       GWB_DSIO_VERSION);
		goto fail;
	}
	if ((uint64_t)size < HDR + payload) {
		st = gwb_error(GWB_ECORRUPT, "%s: truncated .gwbd: %lld bytes where the header "
			       "promises %llu", path, (long long)size,
			       (unsigned long long)(HDR + payload));
		goto fail;
	}
	if ((uint64_t)size > HDR + payload) {
		st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %llu bytes of trailing data after "
			       "the payload", path, (unsigned long long)(size - HDR - payload));
		goto fail;
	}
	/* (any class count the payload can hold: the size checks below; a save writes all) */
	if (task > 1 || (task == 0 && (classes < 1 || classes > INT32_MAX)) ||
	    (task == 1 && classes)) {
		st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: impossible shape (task %u, classes "
			       "%u; classification has 1 to %d classes, regression none)", path,
			       task, classes, INT32_MAX);
		goto fail;
	}
	/* Each size against the payload before anything is allocated for it: a feature takes
	 * at least 8 bytes (its name's length, its level count), a class 4, a row 4 per feature
	 * and 4 for its label, after the target name's 4. */
	{
		uint64_t least = 4 + 8 * (uint64_t)features;
		const char *field = NULL;
		uint64_t val = 0, lim = 0;
		if (features > (1u << 24) || least > payload) {
			field = "features", val = features;
			lim = payload < 4 ? 0 : (payload - 4) / 8;
			lim = lim < (1u << 24) ? lim : (1u << 24);
		} else if ((least += 4 * (uint64_t)classes) > payload) {
			field = "classes", val = classes;
			lim = (payload - (least - 4 * (uint64_t)classes)) / 4;
		} else if (rows > (payload - least) / 4 / ((uint64_t)features + 1)) {
			field = "rows", val = rows;
			lim = (payload - least) / 4 / ((uint64_t)features + 1);
		}
		if (field) {
			st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: the header's %s = %llu does "
				       "not fit the %llu-byte payload (at most %llu)", path, field,
				       (unsigned long long)val, (unsigned long long)payload,
				       (unsigned long long)lim);
			goto fail;
		}
	}
	r.left = r.total = payload;
	gwb_xxh64_init(&r.h, 0);
	if ((st = gwb_dataset_new((size_t)rows, (int)features, (gwb_task)task, (int)classes, &d)))
		goto fail;
	if ((st = get_str(&r, &d->target, "the target name")))
		goto fail;
	for (j = 0; j < (int)features; j++) {
		snprintf(what, sizeof(what), "the name of feature %d", j + 1);
		if ((st = get_str(&r, &d->names[j], what)))
			goto fail;
	}
	for (k = 0; k < (int)classes; k++) {
		snprintf(what, sizeof(what), "the name of class %d", k + 1);
		if ((st = get_str(&r, &d->class_names[k], what)))
			goto fail;
	}
	if (!(cnt = calloc((size_t)features + 1, sizeof(*cnt)))) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	if ((st = get(&r, cnt, (size_t)features * 4, "the level counts")))
		goto fail;
	for (j = 0; j < (int)features; j++) {
		if (!cnt[j])
			continue;
		if (cnt[j] > r.left / 4) {
			st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: column %d claims %u levels",
				       path, j + 1, cnt[j]);
			goto fail;
		}
		if (!(d->cat_levels[j] = calloc(cnt[j], sizeof(char *)))) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory", path);
			goto fail;
		}
		d->cat_count[j] = (int)cnt[j];
		for (k = 0; k < (int)cnt[j]; k++) {
			snprintf(what, sizeof(what), "level %d of feature %d", k + 1, j + 1);
			if ((st = get_str(&r, &d->cat_levels[j][k], what)))
				goto fail;
		}
	}
	if ((st = get(&r, d->X, (size_t)rows * features * sizeof(float), "the features")))
		goto fail;
	if (task == GWB_TASK_CLASSIFICATION)
		st = get(&r, d->y, (size_t)rows * sizeof(int32_t), "the labels");
	else
		st = get(&r, d->yr, (size_t)rows * sizeof(float), "the targets");
	if (st)
		goto fail;
	if (version >= 2 && (st = get_text(&r, d)))
		goto fail;
	if (version >= 3 && (st = get_wide(&r, d)))
		goto fail;
	if (r.left) {
		st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %llu unexplained payload bytes",
			       path, (unsigned long long)r.left);
		goto fail;
	}
	if (gwb_xxh64_final(&r.h) != sum) {
		st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: the payload checksum does not match "
			       "(stored %016llx, computed %016llx); the file was damaged after it "
			       "was saved", path, (unsigned long long)sum,
			       (unsigned long long)gwb_xxh64_final(&r.h));
		goto fail;
	}
	if ((st = gwb_dataset_check(d))) {
		char m[256];
		snprintf(m, sizeof(m), "%s", gwb_errmsg());
		st = gwb_error(GWB_ECORRUPT, "%s: corrupt .gwbd: %s", path, m);
		goto fail;
	}
	free(cnt);
	*out = d;
	return GWB_OK;
fail:
	free(cnt);
	gwb_dataset_free(d);
	return st;
}
