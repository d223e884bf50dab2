/* csv_par.c - the CSV reader's work on several threads: a large file parsed in byte ranges
 * by all CPUs (csv_parallel_load, below: each range read with csv_parse.c's steps into its
 * own chunks and dictionaries, merged in range order, the result the same bit for bit as the
 * sequential reader's), and the row-major chunks transposed into the Dataset's columns on the
 * threads the rows were read with (csv_store_chunks). What it hands back (chunks, targets,
 * part maps) belongs to the reader's struct rd and is freed with it. */
#define _GNU_SOURCE
#include "csv_impl.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hugemap.h"
#include "intr.h"
#include "pool.h"
#include "transpose.h"
#include "zio.h"

struct run_jobs {
	char *jobs;
	size_t size;
	void *(*fn)(void *);
};

static void run_job(void *ctx, size_t i, int worker)
{
	struct run_jobs *c = ctx;

	(void)worker;
	c->fn(c->jobs + i * c->size);
}

/* fn on each of n job structs (size bytes apart), on `threads` workers of the pool (pool.h),
 * each taking the next job when it is done with one; returns when all are done. */
static void run_on(void *jobs, size_t size, int n, int threads, void *(*fn)(void *))
{
	struct run_jobs c = {jobs, size, fn};

	gwb_parallel_items(threads, n > 0 ? (size_t)n : 0, run_job, &c);
}

void csv_run_jobs(void *jobs, size_t size, int n, void *(*fn)(void *))
{
	run_on(jobs, size, n, n, fn);
}

/* Transpose chunks [c0, c1) into X (rows r->rows apart) from row row0, releasing each at once;
 * *stop set (by any group) ends them all between chunks. */
struct store_job {
	struct rd *r;
	float *X;
	size_t c0, c1, row0, stored;
	atomic_int *stop;
};

static void *store_group(void *arg)
{
	struct store_job *j = arg;
	struct rd *r = j->r;
	size_t F = (size_t)r->ncol - 1, row = j->row0;

	for (size_t i = j->c0; i < j->c1; i++) {
		/* a chunk is 4 MiB: far less than 100 ms apart */
		if (atomic_load(j->stop) || gwb_intr_pending()) {
			atomic_store(j->stop, 1);
			break;
		}
		gwb_transpose_f32(r->chunk[i], r->chunk_n[i], F, F, j->X + row, r->rows, 32, 1);
		gwb_hugemap_free(r->chunk[i], r->chunk_rows * F * sizeof(float));
		r->chunk[i] = NULL;
		row += r->chunk_n[i];
		j->stored += r->chunk_n[i];
	}
	return NULL;
}

/* The row-major chunks into the column-major X, on the threads the rows were read with (in
 * contiguous groups of chunks: the transposes and the first touch of X's new pages run side by
 * side); *stored: the rows stored. */
gwb_status csv_store_chunks(struct rd *r, float *X, size_t *stored)
{
	struct store_job jobs[64];
	atomic_int stop;
	size_t per, c = 0, row = 0;
	int n = r->info.threads > 1 ? r->info.threads : 1, k;

	if (n > 64)
		n = 64;
	if ((size_t)n > r->nchunk)
		n = r->nchunk ? (int)r->nchunk : 1;
	atomic_init(&stop, 0);
	per = (r->nchunk + (size_t)n - 1) / (size_t)n;
	for (k = 0; k < n; k++) {
		size_t c1 = c + per < r->nchunk ? c + per : r->nchunk;
		jobs[k] = (struct store_job){r, X, c, c1, row, 0, &stop};
		for (; c < c1; c++)
			row += r->chunk_n[c];
	}
	csv_run_jobs(jobs, sizeof(jobs[0]), n, store_group);
	*stored = 0;
	for (k = 0; k < n; k++)
		*stored += jobs[k].stored;
	if (atomic_load(&stop))
		return gwb_error(GWB_EINTR, "%s: loading interrupted (%zu of %zu rows stored)",
				 r->path, *stored, r->rows);
	return GWB_OK;
}

/* --- the parallel reader ------------------------------------------------------------------
 * A large file is cut into byte ranges, four per thread (at least PAR_RANGE_MIN bytes each),
 * which the threads take in turn as they finish one (prun). A record belongs to the range its
 * first byte lies in. A worker finds the first record start of its range, the byte after the
 * first newline outside quotes at or after the range's first byte less one (whether that byte
 * lies inside quotes comes from the parity of the quotes before it, counted over all ranges in
 * a first pass; when no quoted field of the first block holds a line break the pass is
 * skipped and the first line break taken, quotes ignored, which the check below proves or
 * refutes: assuming "outside" and tracking quotes instead ran to the end of the file from a
 * start inside a quoted field, in every range of a file with quoted text). It then reads
 * records with the sequential reader's own steps (csv_fast_row, csv_mixed_row, tokenize
 * and csv_convert_row) until one starts past its range, with pread into its own buffer, into its
 * own chunks, dictionaries and missing counts. Then the ranges are checked: each must end
 * exactly where the next one started, which makes every start a true record start (by
 * induction from the first range, which starts on the first data row); it fails only where
 * quotes are used in a way their parity cannot see (a quote inside an unquoted field), and then
 * the quotes are counted (if they were not) or the sequential reader reads the file. The
 * dictionaries are merged in range order, each worker's levels in its own first-seen order,
 * which is the first-seen order of the whole file: the codes do not depend on the thread count.
 * A parse error stops every worker and the sequential reader reads the file again, so that the
 * error it reports is the first one, with its line and column. */

struct pworker {
	/* buf, len, pos, eof, cols (own dictionaries), chunks, tv. Aligned to a cache line with
	 * the array (aligned_alloc): a worker writes pos and len every record, and its
	 * neighbour reads its own fields every record, so a shared line ping-pongs */
	_Alignas(64) struct rd r;
	size_t a, b;            /* file range: records starting in [a, b) */
	size_t qa, qb;          /* the first pass counts the quotes in [qa, qb) */
	size_t quotes;
	size_t start, end;      /* the first record start it found, the one it stopped at */
	bool inq;               /* byte a - 1 lies inside quotes */
	bool parity;            /* inq is known (the quotes were counted) */
	bool all_numeric;       /* try csv_fast_row first */
	int fd;
	gwb_status st;
	int declined;           /* a parse error: the sequential reader reads the file */
	bool first;             /* the range that starts at the first data row */
	char msg[400];          /* the worker thread's error message (messages are per thread) */
	atomic_int *stop;
	atomic_size_t *done;    /* bytes parsed by all workers (progress) */
	bool progress;
};

/* pread more after buf[keep..len), moving it to the front (or growing the buffer). A NUL
 * byte is a parse error (the sequential reader reports it). */
static gwb_status prefill(struct rd *r, int fd, size_t keep, size_t limit)
{
	ssize_t got;

	if (keep) {
		memmove(r->buf, r->buf + keep, r->len - keep);
		r->len -= keep;
		r->off += keep;
		r->pos -= keep;
	} else if (r->len == r->cap) {
		char *nb = realloc(r->buf, r->cap * 2 + 1);
		if (!nb)
			return gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		r->buf = nb;
		r->cap *= 2;
	}
	while (r->len < r->cap && !r->eof) {
		size_t want = r->cap - r->len;
		if (r->off + r->len >= limit) {
			r->eof = true;
			break;
		}
		if (want > limit - (r->off + r->len))
			want = limit - (r->off + r->len);
		if (r->zi) {   /* a compressed file's image: waits for the bytes to be decoded */
			size_t zgot;
			gwb_status st = gwb_zimage_pread(r->zi, r->buf + r->len, want, r->off + r->len,
							 &zgot);
			if (st) {
				r->zfail = true;
				return st;
			}
			got = (ssize_t)zgot;
		} else {
			got = pread(fd, r->buf + r->len, want, (off_t)(r->off + r->len));
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return gwb_error(GWB_EIO, "%s: read failed: %s", r->path, strerror(errno));
		if (got == 0) {
			r->eof = true;
			break;
		}
		if (memchr(r->buf + r->len, 0, (size_t)got))
			return gwb_error(GWB_EPARSE, "%s: a NUL byte", r->path);
		r->len += (size_t)got;
	}
	r->buf[r->len] = 0;
	return GWB_OK;
}

/* Stop every worker after an error in this one, keeping its message for the caller. */
static void *pfail(struct pworker *w, gwb_status st)
{
	w->st = st;
	snprintf(w->msg, sizeof(w->msg), "%s", gwb_errmsg());
	atomic_store(w->stop, 1);
	return NULL;
}

/* A parse error declines (the sequential reader finds it again); anything else fails, and so
 * does a damaged compressed stream (its message has the offsets already). */
static void *pdecline(struct pworker *w, gwb_status st)
{
	if (st != GWB_EPARSE || w->r.zfail)
		return pfail(w, st);
	w->declined = 1;
	atomic_store(w->stop, 1);
	return NULL;
}

static size_t count_quotes(const char *p, size_t n)
{
	size_t k = 0, i = 0;
#ifdef __SSE2__
	const __m128i vq = _mm_set1_epi8('"');

	/* per-byte counters (a match is -1), summed every 255 blocks before they wrap */
	while (i + 16 <= n) {
		__m128i acc = _mm_setzero_si128();
		size_t stop = i + 16 * 255 < n ? i + 16 * 255 : n;
		for (; i + 16 <= stop; i += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(x, vq));
		}
		acc = _mm_sad_epu8(acc, _mm_setzero_si128());
		k += (size_t)_mm_cvtsi128_si32(acc) + (size_t)_mm_cvtsi128_si32(_mm_srli_si128(acc, 8));
	}
#endif
	for (; i < n; i++)
		k += p[i] == '"';
	return k;
}

/* The quotes in the file's bytes [at, hi), read into the worker's buffer, added to *q; true
 * when it failed (w->st set) or was stopped. */
static bool pcount_span(struct pworker *w, size_t at, size_t hi, size_t *q)
{
	struct rd *r = &w->r;

	while (at < hi) {
		if (atomic_load(w->stop))
			return true;
		size_t want = hi - at < r->cap ? hi - at : r->cap;
		ssize_t got;
		if (r->zi) {
			size_t zgot;
			gwb_status st = gwb_zimage_pread(r->zi, r->buf, want, at, &zgot);
			if (st) {
				pfail(w, st);
				return true;
			}
			got = (ssize_t)zgot;
		} else {
			got = pread(w->fd, r->buf, want, (off_t)at);
		}
		if (got < 0 && errno == EINTR) {
			if (gwb_intr_pending()) {
				pfail(w, gwb_error(GWB_EINTR, "%s: loading interrupted", r->path));
				return true;
			}
			continue;
		}
		if (got < 0) {
			pfail(w, gwb_error(GWB_EIO, "%s: read failed: %s", r->path, strerror(errno)));
			return true;
		}
		if (got == 0)
			break;
		*q += count_quotes(r->buf, (size_t)got);
		at += (size_t)got;
	}
	return false;
}

/* A line break inside quotes in p[0..n), or p ends inside quotes. */
bool csv_quoted_break(const char *p, size_t n)
{
	const char *q = memchr(p, '"', n), *end = p + n;

	while (q) {
		const char *z = memchr(q + 1, '"', (size_t)(end - q - 1));
		if (!z || memchr(q + 1, '\n', (size_t)(z - q - 1)) || memchr(q + 1, '\r', (size_t)(z - q - 1)))
			return true;
		q = z + 1 < end ? memchr(z + 1, '"', (size_t)(end - z - 1)) : NULL;
	}
	return false;
}

/* The first pass: the quotes in the range's [qa, qb). */
static void *pcount(void *arg)
{
	struct pworker *w = arg;
	size_t q = 0;

	if (!pcount_span(w, w->qa, w->qb, &q))
		w->quotes = q;
	return NULL;
}

static void *pwork(void *arg)
{
	struct pworker *w = arg;
	struct rd *r = &w->r;
	size_t next, last_report = 0;
	gwb_status st;
	int t;

	r->len = r->pos = 0;
	r->eof = false;
	r->line = 0;       /* lines read (the sum over the ranges is the file's) */
	if (w->first) {
		r->off = w->a;
	} else {
		bool inq = w->inq;
		r->off = w->a - 1;
		for (;;) {
			char c;
			if (r->pos == r->len) {
				if (r->eof)
					break;
				if ((st = prefill(r, w->fd, r->len, r->size)))
					return pdecline(w, st);
				continue;
			}
			if (!w->parity) {
				/* quotes unknown: the first line break is the guess, and the check
				 * that the ranges meet proves it (tracking quotes from an assumed
				 * "outside" would run to the end of the file from inside a quote) */
				const char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
				r->pos = nl ? (size_t)(nl - r->buf) + 1 : r->len;
				if (nl)
					break;
				continue;
			}
			c = r->buf[r->pos++];
			if (c == '"')
				inq = !inq;
			else if (c == '\n' && !inq)
				break;
		}
	}
	w->start = r->off + r->pos;
	for (;;) {
		float *row;
		if (atomic_load(w->stop))
			return NULL;
		if (r->off + r->pos >= w->b)
			break;   /* this record is the next range's */
		if (r->pos == r->len) {
			if (r->eof)
				break;
			if ((st = prefill(r, w->fd, r->pos, r->size)))
				return pdecline(w, st);
			if (gwb_intr_pending())
				return pfail(w, gwb_error(GWB_EINTR, "%s: loading interrupted", r->path));
			continue;
		}
		if ((st = csv_reserve_row(r, &row)))
			return pfail(w, st);
		if ((w->all_numeric && csv_fast_row(r, r->pos, &next, row, &r->tv[r->rows])) ||
		    csv_mixed_row(r, r->pos, &next, row, &r->tv[r->rows], &r->nmiss)) {
			r->cur_rows++;
			r->rows++;
			r->line++;
			r->pos = next;
		} else {
			t = csv_tokenize(r, r->pos, &next, r->line, &st);
			if (t == TOK_ERR)
				return pdecline(w, st);
			if (t == TOK_EOF)
				break;
			if (t == TOK_MORE) {
				if ((st = prefill(r, w->fd, r->pos, r->size)))
					return pdecline(w, st);
				if (gwb_intr_pending())
					return pfail(w, gwb_error(GWB_EINTR, "%s: loading interrupted",
								  r->path));
				continue;
			}
			if (!(r->nf == 1 && !r->f[0].n && !r->f[0].q) &&
			    (st = csv_convert_row(r, r->pos, r->line)))
				return pdecline(w, st);
			r->line += 1 + r->nl;
			r->pos = next;
		}
		if (w->progress && r->off + r->pos - last_report > ((size_t)8 << 20)) {
			size_t d = r->off + r->pos - last_report;
			last_report = r->off + r->pos;
			gwb_progress_update((double)atomic_fetch_add(w->done, d) + (double)d, NULL, 0);
		}
	}
	w->end = r->off + r->pos;
	return NULL;
}

/* Run fn on the n ranges' workers over `threads` threads (this one too), each taking the next
 * range when it is done with one: a thread that runs slower (a busy core, a VM's vCPU that
 * the host slows) takes fewer ranges instead of holding up the end. */
static void prun(struct pworker *w, int n, int threads, void *(*fn)(void *))
{
	run_on(w, sizeof(*w), n, threads, fn);
}

/* The merge of one categorical column's levels: each range's levels sorted on the threads
 * (lsort_range), then cut into parts by splitter levels, the parts merged on the threads
 * (lmerge_part) and laid end to end (merge_levels). */
struct lsort {
	struct dict *d;
	struct lvl *l;
	bool numeric;    /* in: compare values; out of lnumeric: every level is a number */
	bool failed;     /* out of memory */
};

static void *lnumeric(void *arg)
{
	struct lsort *s = arg;

	s->numeric = s->d->n == 0 || csv_levels_numeric(s->d);
	return NULL;
}

static void *lsort_range(void *arg)
{
	struct lsort *s = arg;

	if (!s->d->n)
		return NULL;
	if (!(s->l = csv_levels_make(s->d, s->numeric)) ||
	    !csv_levels_sort(s->l, (size_t)s->d->n, s->numeric))
		s->failed = true;
	return NULL;
}

/* One part of the merge: levels [lo[x], hi[x]) of each range x, every level of the part's
 * value span (a level equal to a splitter is in the part that starts there, in every range:
 * duplicates never straddle two parts). Out: its distinct levels in order (borrowed from the
 * ranges), and map[x][code] = the index among them (the part's offset is added later). */
struct lpart {
	const struct lsort *s;
	int n;                /* ranges */
	bool numeric;
	size_t *lo, *hi;      /* per range */
	int32_t **map;        /* per range: local code -> final code */
	char **str;           /* out: the part's distinct levels */
	size_t nstr, off;     /* how many; where they start in the column's */
	bool dups;            /* a level was in more than one range */
	bool failed;
};

/* Range x's next level comes before range y's (ties: the lower range first). */
static inline bool heap_less(const struct lsort *s, const size_t *at, int x, int y, bool numeric)
{
	int c = csv_level_cmp(&s[x].l[at[x]], &s[y].l[at[y]], numeric);

	return c < 0 || (c == 0 && x < y);
}

static void sift(int *heap, int nh, int k, const struct lsort *s, const size_t *at, bool numeric)
{
	for (;;) {
		int c = 2 * k + 1, t;
		if (c >= nh)
			break;
		if (c + 1 < nh && heap_less(s, at, heap[c + 1], heap[c], numeric))
			c++;
		if (!heap_less(s, at, heap[c], heap[k], numeric))
			break;
		t = heap[c], heap[c] = heap[k], heap[k] = t;
		k = c;
	}
}

/* A binary heap of the ranges by their next level; equal levels come out one after the
 * other and take one code. */
static void *lmerge_part(void *arg)
{
	struct lpart *p = arg;
	const struct lsort *s = p->s;
	const struct lvl *prev = NULL;
	size_t total = 0, *at = malloc((size_t)p->n * sizeof(*at));
	int *heap = malloc((size_t)p->n * sizeof(*heap)), nh = 0, x;

	for (x = 0; x < p->n; x++)
		total += p->hi[x] - p->lo[x];
	if (!at || !heap || !(p->str = malloc((total + 1) * sizeof(*p->str)))) {
		p->failed = true;
		goto out;
	}
	for (x = 0; x < p->n; x++) {
		at[x] = p->lo[x];
		if (p->hi[x] > p->lo[x])
			heap[nh++] = x;
	}
	for (x = nh / 2 - 1; x >= 0; x--)
		sift(heap, nh, x, s, at, p->numeric);
	while (nh) {
		const struct lvl *l;
		x = heap[0];
		l = &s[x].l[at[x]];
		if (!prev || csv_level_cmp(prev, l, p->numeric))
			p->str[p->nstr++] = (char *)l->s;
		else
			p->dups = true;
		prev = l;
		p->map[x][l->code] = (int32_t)(p->nstr - 1);
		if (++at[x] == p->hi[x])
			heap[0] = heap[--nh];
		sift(heap, nh, 0, s, at, p->numeric);
	}
out:
	free(at);
	free(heap);
	return NULL;
}

/* Add the part's offset to the codes it gave (each range's levels of the part). */
static void *lshift_part(void *arg)
{
	struct lpart *p = arg;
	size_t k;
	int x;

	if (p->off)
		for (x = 0; x < p->n; x++)
			for (k = p->lo[x]; k < p->hi[x]; k++)
				p->map[x][p->s[x].l[k].code] += (int32_t)p->off;
	return NULL;
}

/* The first level of sorted l[0..n) that is not before v. */
static size_t lower_bound(const struct lvl *l, size_t n, const struct lvl *v, bool numeric)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (csv_level_cmp(&l[m], v, numeric) < 0)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Merge the workers' levels of column j into r's dictionary in their final order (the order
 * build() sorts a dictionary into: bytes, or values when every level reads as a number), so
 * that its sort is the identity: each range's levels are sorted on the threads, cut into four
 * parts a thread by splitters taken from the largest range, the parts merged on the threads
 * with the duplicates dropped (the strings moving over rather than being copied) and laid end
 * to end. The map of worker i (local code -> final code) goes to r->part_map[i * ncol + j],
 * NULL where it is the identity. PAR_DECLINED when the column has too many levels (the
 * sequential reader says where), PAR_ERROR when out of memory. */
static int merge_levels(struct rd *r, struct pworker *w, int n, int threads, int j,
			gwb_status *st)
{
	struct lsort *s = calloc((size_t)n, sizeof(*s));
	struct dict *out = &r->cols[j].dict;
	int32_t **map = calloc((size_t)n, sizeof(*map));
	int np = threads * 4 > 64 ? 64 : threads * 4, big = 0, i, k, result = PAR_DONE;
	struct lpart *part = calloc((size_t)np, sizeof(*part));
	size_t *bounds = calloc((size_t)(np + 1) * (size_t)n, sizeof(*bounds)), total = 0;
	bool numeric = true, any = false, dups = false;

	if (!s || !map || !part || !bounds)
		goto nomem;
	for (i = 0; i < n; i++) {
		s[i].d = &w[i].r.cols[j].dict;
		total += (size_t)s[i].d->n;
		if (s[i].d->n > s[big].d->n)
			big = i;
	}
	if (!total)
		goto out;
	run_on(s, sizeof(*s), n, threads, lnumeric);
	for (i = 0; i < n; i++) {
		numeric &= s[i].numeric;
		any |= s[i].d->n > 0;
	}
	numeric &= any;
	for (i = 0; i < n; i++)
		s[i].numeric = numeric;
	run_on(s, sizeof(*s), n, threads, lsort_range);
	for (i = 0; i < n; i++) {
		if (s[i].failed)
			goto nomem;
		if (s[i].d->n && !(map[i] = malloc((size_t)s[i].d->n * sizeof(**map))))
			goto nomem;
	}
	/* bounds[p * n + x]: where part p starts in range x (the splitters: the largest range's
	 * levels at p / np of its length) */
	for (k = 0; k <= np; k++)
		for (i = 0; i < n; i++) {
			size_t m = (size_t)s[i].d->n, b;
			if (k == 0)
				b = 0;
			else if (k == np)
				b = m;
			else
				b = lower_bound(s[i].l, m,
						&s[big].l[(size_t)s[big].d->n * (size_t)k / (size_t)np], numeric);
			bounds[(size_t)k * (size_t)n + (size_t)i] = b;
		}
	for (k = 0; k < np; k++)
		part[k] = (struct lpart){.s = s, .n = n, .numeric = numeric,
					 .lo = bounds + (size_t)k * (size_t)n,
					 .hi = bounds + (size_t)(k + 1) * (size_t)n, .map = map};
	run_on(part, sizeof(*part), np, threads, lmerge_part);
	total = 0;
	for (k = 0; k < np; k++) {
		if (part[k].failed)
			goto nomem;
		part[k].off = total;
		total += part[k].nstr;
		dups |= part[k].dups;
	}
	if (total > (size_t)MAX_LEVELS) {
		result = PAR_DECLINED;
		goto out;
	}
	if (!(out->str = malloc((total + 1) * sizeof(*out->str))))
		goto nomem;
	out->cap = (int)total;
	for (k = 0; k < np; k++) {
		if (part[k].nstr)
			memcpy(out->str + part[k].off, part[k].str, part[k].nstr * sizeof(*out->str));
	}
	run_on(part, sizeof(*part), np, threads, lshift_part);
	/* the strings are out's now (the duplicates go), the maps r's (but the identity) */
	out->n = (int)total;
	out->sorted = true;
	for (i = 0; i < n; i++) {
		struct dict *d = s[i].d;
		bool ident = true;
		if (!map[i])
			continue;
		for (k = 0; k < d->n; k++) {
			ident &= map[i][k] == k;
			if (dups && out->str[map[i][k]] != d->str[k])
				free(d->str[k]);
		}
		d->n = 0;
		if (ident)
			continue;
		r->part_map[(size_t)i * (size_t)r->ncol + (size_t)j] = map[i];
		map[i] = NULL;
	}
	goto out;
nomem:
	*st = gwb_error(GWB_ENOMEM, "%s: out of memory for the levels of column \"%s\"", r->path,
			r->names[j]);
	result = PAR_ERROR;
out:
	if (s)
		for (i = 0; i < n; i++)
			free(s[i].l);
	if (map)
		for (i = 0; i < n; i++)
			free(map[i]);
	if (part)
		for (k = 0; k < np; k++)
			free(part[k].str);
	free(s);
	free(map);
	free(part);
	free(bounds);
	return result;
}

void csv_part_free(struct rd *r)
{
	size_t i;

	if (r->part_map)
		for (i = 0; i < (size_t)r->npart * (size_t)r->ncol; i++)
			free(r->part_map[i]);
	free(r->part_map);
	free(r->part_rows);
	if (r->part_text)
		for (i = 0; i < (size_t)r->npart * (size_t)r->ncol; i++)
			csv_dict_free(&r->part_text[i]);
	free(r->part_text);
	r->part_text = NULL;
	r->part_map = NULL;
	r->part_rows = NULL;
	r->npart = 0;
}

/* Try the parallel reader from file offset `start` (the first data row); parity: count the
 * quotes first. PAR_DONE (rows in r), PAR_DECLINED or PAR_MISMATCH (r untouched), PAR_ERROR
 * (st set). */
/* The ranges' 64-bit columns into r's, one column an item: the first range's grown in place
 * (realloc), the others copied after it. */
struct wcat {
	struct rd *r;
	struct pworker *w;
	int n;
	size_t total;
	atomic_int oom;
};

static void wcat_column(void *arg, size_t k, int worker)
{
	struct wcat *c = arg;
	size_t at;
	uint64_t *v;
	int i;

	(void)worker;
	for (i = 0; i < c->n && !c->w[i].r.rows; i++)
		;
	if (i == c->n || !c->w[i].r.wcol || !c->w[i].r.wcol[k])
		return;
	if (!(v = realloc(c->w[i].r.wcol[k], (c->total + 1) * sizeof(uint64_t)))) {
		atomic_store(&c->oom, 1);
		return;
	}
	c->w[i].r.wcol[k] = NULL;
	c->r->wcol[k] = v;
	for (at = c->w[i].r.rows, i++; i < c->n; i++) {
		if (c->w[i].r.rows)
			memcpy(v + at, c->w[i].r.wcol[k], c->w[i].r.rows * sizeof(uint64_t));
		at += c->w[i].r.rows;
		if (c->w[i].r.wcol) {   /* (a range without rows has none) */
			free(c->w[i].r.wcol[k]);   /* (the peak: one column's parts twice) */
			c->w[i].r.wcol[k] = NULL;
		}
	}
}

/* The same, the ranges' columns being mappings (wmap): their pages moved into one mapping of
 * csv_wide_bytes(total + 1) bytes (gwb_hugemap_move), range after range, each laid from the
 * first page boundary at or after its place and then moved down the rest of a page onto it
 * (memmove: the bytes stay in pages already written, no new page is touched); the previous
 * range is in place by then, and its pages past the boundary are taken over. Where the kernel
 * refuses a move, the range is copied. */
static void wjoin_column(void *arg, size_t k, int worker)
{
	struct wcat *c = arg;
	size_t page = gwb_hugemap_page(), D = 0, bytes = csv_wide_bytes(c->total + 1);
	char *v;
	int i;

	(void)worker;
	for (i = 0; i < c->n && (!c->w[i].r.wcol || !c->w[i].r.wcol[k]); i++)
		;
	if (i == c->n)
		return;   /* (not a 64-bit column) */
	if (!(v = gwb_hugemap_reserve(bytes))) {
		atomic_store(&c->oom, 1);
		return;
	}
	for (i = 0; i < c->n; i++) {
		struct rd *q = &c->w[i].r;
		size_t n = q->rows * sizeof(uint64_t), A = (D + page - 1) / page * page, whole;
		char *src = q->wcol ? (char *)q->wcol[k] : NULL;
		if (!src)
			continue;   /* (a range without rows has none) */
		whole = (n + page - 1) / page * page;
		if (n && gwb_hugemap_move(src, whole, v + A)) {
			if (A > D)
				memmove(v + D, v + A, n);
			if (whole < csv_wide_bytes(q->wcap))
				gwb_hugemap_free(src + whole, csv_wide_bytes(q->wcap) - whole);
		} else {
			if (n)
				memcpy(v + D, src, n);
			gwb_hugemap_free(src, csv_wide_bytes(q->wcap));
		}
		q->wcol[k] = NULL;
		D += n;
	}
	c->r->wcol[k] = (uint64_t *)(void *)v;
}

int csv_parallel_load(struct rd *r, size_t start, int threads, size_t range_min, bool parity,
		      bool progress, gwb_status *st)
{
	struct pworker *w;
	atomic_int stop;
	atomic_size_t done;
	size_t per, total_rows = 0, total_chunks = 0, k;
	int n, i, j, result = PAR_DONE;
	bool all_numeric = true, wmap;
	size_t nwide = 0;

	if (threads > 64)
		threads = 64;
	/* four ranges a thread (of at least range_min bytes, at most 64): the threads take them
	 * as they finish, so that the slowest thread does not set the time */
	size_t nr = (r->size - start) / (range_min ? range_min : 1);
	if (nr > (size_t)threads * 4)
		nr = (size_t)threads * 4;
	if (nr > 64)
		nr = 64;
	if (nr < (size_t)threads)
		nr = (size_t)threads;
	int ranges = (int)nr;
	per = (r->size - start + (size_t)ranges - 1) / (size_t)ranges;
	if ((w = aligned_alloc(64, (size_t)ranges * sizeof(*w))))
		memset(w, 0, (size_t)ranges * sizeof(*w));
	if (!w) {
		*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		return PAR_ERROR;
	}
	for (j = 0; j < r->ncol; j++) {
		all_numeric &= r->cols[j].numeric != 0;
		nwide += j != r->target && r->cols[j].numeric;
	}
	/* the ranges' 64-bit columns in mappings (about the range's rows, grown by moving pages),
	 * joined by moving their pages (wjoin_column), unless there would be too many mappings
	 * for the kernel's limit */
	wmap = r->wide && nwide * (size_t)ranges <= WMAP_MAX;
	atomic_init(&stop, 0);
	atomic_init(&done, start);
	for (n = 0; n < ranges; n++) {
		struct rd *q = &w[n].r;
		w[n].a = start + (size_t)n * per;
		w[n].b = w[n].a + per < r->size ? w[n].a + per : r->size;
		if (w[n].a >= r->size)
			w[n].a = w[n].b = r->size;
		if (r->zi && n == ranges - 1)
			w[n].b = SIZE_MAX;   /* the size was a hint: the last range reads to the end */
		w[n].qa = n ? w[n].a - 1 : w[n].a;
		w[n].qb = w[n].b - 1;
		w[n].fd = r->fd;
		w[n].first = n == 0;
		w[n].parity = parity;
		w[n].all_numeric = all_numeric && !r->numeric_missing;
		w[n].stop = &stop;
		w[n].done = &done;
		w[n].progress = progress;
		q->path = r->path;
		q->sep = r->sep;
		q->ncol = r->ncol;
		q->target = r->target;
		q->names = r->names;
		q->wide = r->wide;   /* 64-bit columns of about the range's rows (csv_wide_reserve) */
		q->wmap = wmap;
		q->west = (w[n].b == SIZE_MAX ? per : w[n].b - w[n].a) + 4096;
		q->info.header = r->info.header;
		q->missing = r->missing;
		q->n_missing = r->n_missing;
		q->numeric_missing = r->numeric_missing;
		q->chunk_rows = r->chunk_rows;
		q->size = r->zi ? SIZE_MAX : r->size;
		q->zi = r->zi;
		q->fd = -1;
		q->cap = ((size_t)1 << 20);
		q->buf = malloc(q->cap + 1);
		q->cols = malloc((size_t)r->ncol * sizeof(*q->cols));
		if (!q->buf || !q->cols) {
			*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			result = PAR_ERROR;
			n++;
			goto out;
		}
		memcpy(q->cols, r->cols, (size_t)r->ncol * sizeof(*q->cols));
		for (j = 0; j < r->ncol; j++) {
			memset(&q->cols[j].dict, 0, sizeof(q->cols[j].dict));
			q->cols[j].dict.may_append = true;   /* merge_levels folds repeats */
			q->cols[j].dict.text = r->cols[j].text;
			q->cols[j].missing = 0;
		}
	}
	if (parity) {
		bool inq = false;
		prun(w, n - 1, threads, pcount);   /* the last range's count is not needed */
		for (i = 0; i < n; i++) {
			w[i].inq = inq;
			inq ^= w[i].quotes & 1;
		}
	}
	for (i = 0; i < n && !w[i].st; i++)
		;
	if (i == n)
		prun(w, n, threads, pwork);
	if (r->zi) {
		/* ranges the size hint put past the end found no record: they start and end there */
		uint64_t zin, zout;
		if (gwb_zimage_done(r->zi, &zin, &zout))
			for (i = 0; i < n; i++) {
				if (w[i].start > zout)
					w[i].start = (size_t)zout;
				if (w[i].end > zout)
					w[i].end = (size_t)zout;
			}
	}
	for (i = 0; i < n; i++) {
		if (w[i].st && result != PAR_ERROR) {
			*st = gwb_error(w[i].st, "%s", w[i].msg);
			result = PAR_ERROR;
		}
		if (w[i].declined && result == PAR_DONE)
			result = PAR_DECLINED;
		if (result == PAR_DONE && i + 1 < n && w[i].end != w[i + 1].start)
			result = PAR_MISMATCH;
		total_rows += w[i].r.rows;
		total_chunks += w[i].r.nchunk;
	}
	if (result != PAR_DONE)
		goto out;
	r->part_map = calloc((size_t)n * (size_t)r->ncol, sizeof(*r->part_map));
	r->part_rows = calloc((size_t)n, sizeof(*r->part_rows));
	if (!r->part_map || !r->part_rows) {
		*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		result = PAR_ERROR;
		goto out;
	}
	r->npart = n;
	for (j = 0; j < r->ncol && result == PAR_DONE; j++) {
		if (r->cols[j].text) {
			/* text is not merged: each range's strings stay in row order for build */
			if (!r->part_text &&
			    !(r->part_text = calloc((size_t)n * (size_t)r->ncol, sizeof(*r->part_text)))) {
				*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
				result = PAR_ERROR;
				break;
			}
			for (i = 0; i < n; i++) {
				r->part_text[(size_t)i * (size_t)r->ncol + (size_t)j] = w[i].r.cols[j].dict;
				memset(&w[i].r.cols[j].dict, 0, sizeof(w[i].r.cols[j].dict));
			}
		} else if (!r->cols[j].numeric) {
			result = merge_levels(r, w, n, threads, j, st);
		}
	}
	if (result != PAR_DONE)
		goto out;
	/* 64-bit cells: a column is int64 when every range's cells are; a range that kept int64
	 * cells where another had to take doubles turns its own (csv_wide_flip) */
	for (j = 0; r->wide && j < r->ncol; j++) {
		int all = 1;
		if (j == r->target || !r->cols[j].numeric)
			continue;
		for (i = 0; i < n; i++)
			all &= w[i].r.cols[j].wint;
		for (i = 0; i < n && !all; i++) {
			struct rd *q = &w[i].r;
			if (q->cols[j].wint)
				csv_wide_flip(q, &q->cols[j], r->cols[j].feature);
		}
		r->cols[j].wint = all;
	}
	/* hand the workers' chunks and targets to r, in range order */
	r->chunk = calloc(total_chunks + 1, sizeof(*r->chunk));
	r->chunk_n = calloc(total_chunks + 1, sizeof(*r->chunk_n));
	r->tv = malloc((total_rows + 1) * sizeof(float));
	if (!r->chunk || !r->chunk_n || !r->tv) {
		*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
		result = PAR_ERROR;
		goto out;
	}
	r->chunk_cap = total_chunks + 1;
	for (i = 0; i < n; i++) {
		struct rd *q = &w[i].r;
		const int32_t *tmap = r->part_map[(size_t)i * (size_t)r->ncol + (size_t)r->target];
		if (q->nchunk)
			q->chunk_n[q->nchunk - 1] = q->cur_rows;
		for (k = 0; k < q->nchunk; k++) {
			r->chunk[r->nchunk] = q->chunk[k];
			r->chunk_n[r->nchunk++] = q->chunk_n[k];
		}
		q->nchunk = 0;
		if (tmap)   /* a categorical target: the merged codes */
			for (k = 0; k < q->rows; k++)
				r->tv[r->rows + k] = (float)tmap[(int32_t)q->tv[k]];
		else if (q->rows)
			memcpy(r->tv + r->rows, q->tv, q->rows * sizeof(float));
		r->part_rows[i] = q->rows;
		r->rows += q->rows;
		r->line += q->line;
		r->crlf |= q->crlf;
		r->nmiss += q->nmiss;
		for (j = 0; j < r->ncol; j++)
			r->cols[j].missing += q->cols[j].missing;
	}
	r->cur_rows = r->nchunk ? r->chunk_n[r->nchunk - 1] : 0;
	r->tv_cap = total_rows + 1;
	if (r->wide && total_rows) {
		/* the ranges' 64-bit columns end to end, a column to a worker */
		struct wcat cat = {r, w, n, total_rows, ATOMIC_VAR_INIT(0)};
		size_t F = (size_t)r->ncol - 1;
		if (!(r->wcol = calloc(F + 1, sizeof(*r->wcol)))) {
			*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			result = PAR_ERROR;
			goto out;
		}
		r->wcap = total_rows + 1;
		r->wmap = wmap;   /* (before: rd_free releases what was joined on an error) */
		gwb_parallel_items(threads, F, wmap ? wjoin_column : wcat_column, &cat);
		if (atomic_load(&cat.oom)) {
			*st = gwb_error(GWB_ENOMEM, "%s: out of memory", r->path);
			result = PAR_ERROR;
			goto out;
		}
	}
out:
	for (i = 0; i < n; i++) {
		struct rd *q = &w[i].r;
		for (k = 0; k < q->nchunk; k++)
			gwb_hugemap_free(q->chunk[k], q->chunk_rows * (size_t)(q->ncol - 1) * sizeof(float));
		free(q->chunk);
		free(q->chunk_n);
		free(q->tv);
		csv_wide_free(q);
		free(q->buf);
		free(q->f);
		free(q->scratch);
		if (q->cols)
			for (j = 0; j < q->ncol; j++)
				csv_dict_free(&q->cols[j].dict);
		free(q->cols);
	}
	free(w);
	if (result != PAR_DONE && result != PAR_ERROR) {
		/* leave r as it was for the sequential reader */
		free(r->chunk);
		free(r->chunk_n);
		free(r->tv);
		r->chunk = NULL;
		r->chunk_n = NULL;
		r->tv = NULL;
		r->nchunk = r->chunk_cap = r->rows = r->cur_rows = r->tv_cap = 0;
		csv_wide_free(r);
		for (j = 0; j < r->ncol; j++) {
			r->cols[j].wint = 1;
			csv_dict_free(&r->cols[j].dict);
			r->cols[j].dict.text = r->cols[j].text;
		}
		csv_part_free(r);
	}
	return result;
}
