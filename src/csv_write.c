/* csv_write.c - d:write_csv: a Dataset as CSV (header line, features, target last), rows
 * formatted in blocks by several threads and written in order through src/fileio.c's atomic
 * file (the target appears complete or not at all); %.9g (exact for float32) or fixed
 * decimals, text quoted when it must be; a name ending in .gz or .zst is compressed on the
 * way (zio.c). The caller keeps the Dataset. */
#define _GNU_SOURCE
#include "csv_impl.h"
#include "fmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "intr.h"
#include "zio.h"

/* --- writing -------------------------------------------------------------------------------- */

/* The formatted bytes go to the file, or through the compressor when there is one. */
static gwb_status wput(gwb_afile *a, gwb_zwriter *z, const void *p, size_t n)
{
	return z ? gwb_zwriter_write(z, p, n) : gwb_afile_write(a, p, n);
}

#define WBLOCK_ROWS 2048

struct wjob {
	const gwb_dataset *d;
	char sep;
	int decimals;
	size_t r0, r1;
	char *buf;
	size_t len, cap;
	int oom;
};

static int wreserve(struct wjob *w, size_t more)
{
	if (w->len + more <= w->cap)
		return 0;
	size_t cap = (w->cap ? w->cap * 2 : 1 << 16);
	while (cap < w->len + more)
		cap *= 2;
	char *nb = realloc(w->buf, cap);
	if (!nb) {
		w->oom = 1;
		return -1;
	}
	w->buf = nb;
	w->cap = cap;
	return 0;
}

static void wtext(struct wjob *w, const char *s)
{
	size_t n = strlen(s), i;
	bool q = n && (s[0] == ' ' || s[n - 1] == ' ' || s[0] == '\t' || s[n - 1] == '\t');

	for (i = 0; i < n && !q; i++)
		q = s[i] == w->sep || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!n) {
		/* an empty string would read back as missing: write it quoted */
		q = true;
	}
	if (wreserve(w, 2 * n + 3))
		return;
	if (!q) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
		return;
	}
	w->buf[w->len++] = '"';
	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			w->buf[w->len++] = '"';
		w->buf[w->len++] = s[i];
	}
	w->buf[w->len++] = '"';
}

static const double wpow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

static void wnum(struct wjob *w, float v)
{
	char *o;
	double a;

	if (isnan(v) || wreserve(w, 48))
		return;
	o = w->buf + w->len;
	a = fabs((double)v);
	if (w->decimals >= 0 && w->decimals <= 9 && a * wpow10[w->decimals] < 9e15) {
		uint64_t x = (uint64_t)llround(a * wpow10[w->decimals]);
		uint64_t ip = x / (uint64_t)wpow10[w->decimals], fp = x % (uint64_t)wpow10[w->decimals];
		char t[24];
		int k = 0, i;
		if (v < 0 && x)
			*o++ = '-';
		do {
			t[k++] = (char)('0' + ip % 10);
			ip /= 10;
		} while (ip);
		while (k)
			*o++ = t[--k];
		if (w->decimals) {
			*o++ = '.';
			for (i = w->decimals - 1; i >= 0; i--) {
				o[i] = (char)('0' + fp % 10);
				fp /= 10;
			}
			o += w->decimals;
		}
		w->len = (size_t)(o - w->buf);
		return;
	}
	/* the shortest of %.6g .. %.9g that reads back as the same float (9 always does) */
	{
		int prec, k = 0;
		for (prec = 6; prec <= 9; prec++) {
			float b;
			bool ovf;
			k = snprintf(o, 48, "%.*g", prec, (double)v);
			if (prec == 9 || (gwb_csv_parse_float(o, (size_t)k, &b, &ovf) && b == v))
				break;
		}
		w->len += (size_t)k;
	}
}

/* an int64 value exactly (GWB_I64_NA: an empty field) */
static void wint64(struct wjob *w, int64_t v)
{
	char t[24], *o;
	uint64_t u;
	int k = 0;

	if (v == GWB_I64_NA || wreserve(w, 24))
		return;
	o = w->buf + w->len;
	u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	if (v < 0)
		*o++ = '-';
	do {
		t[k++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (k)
		*o++ = t[--k];
	w->len = (size_t)(o - w->buf);
}

/* a float64 value: fixed decimals when asked, else the shortest that reads back the same */
static void wf64(struct wjob *w, double v)
{
	if (isnan(v) || wreserve(w, 48))
		return;
	if (w->decimals >= 0 && fabs(v) < 1e15) {   /* (at most 16 + 1 + 9 characters) */
		w->len += (size_t)snprintf(w->buf + w->len, 48, "%.*f", w->decimals, v);
		return;
	}
	gwb_fmt_f64(w->buf + w->len, 48, v);
	w->len += strlen(w->buf + w->len);
}

static void *wformat(void *arg)
{
	struct wjob *w = arg;
	const gwb_dataset *d = w->d;
	size_t i;
	int j;

	w->len = 0;
	for (i = w->r0; i < w->r1 && !w->oom; i++) {
		for (j = 0; j < d->features; j++) {
			float v = d->X[(size_t)j * d->rows + i];
			if (d->wide && d->wide[j]) {   /* 64-bit: every digit (issue 30) */
				if (d->wide[j]->type == GWB_DT_I64)
					wint64(w, d->wide[j]->i[i]);
				else
					wf64(w, d->wide[j]->f[i]);
			} else if (gwb_dataset_is_text(d, j) && d->text[j]->v[i])
				wtext(w, d->text[j]->v[i]);
			else if (d->cat_levels[j] && !isnan(v) && v >= 0 && (int)v < d->cat_count[j])
				wtext(w, d->cat_levels[j][(int)v]);
			else
				wnum(w, v);
			if (!wreserve(w, 1))
				w->buf[w->len++] = w->sep;
		}
		if (d->task == GWB_TASK_CLASSIFICATION)
			wtext(w, d->class_names[d->y[i]] ? d->class_names[d->y[i]] : "");
		else
			wnum(w, d->yr[i]);
		if (!wreserve(w, 1))
			w->buf[w->len++] = '\n';
	}
	return NULL;
}


gwb_status gwb_csv_write(const gwb_dataset *d, const char *path, char sep, int decimals,
			 int threads)
{
	struct wjob jobs[64];
	gwb_status st = GWB_OK;
	size_t r0;
	gwb_afile a;
	gwb_zwriter *z = NULL;
	int k, j, nt;

	if (!sep)
		sep = ',';
	if (sep == '"' || sep == '\n' || sep == '\r')
		return gwb_error(GWB_EINVAL, "write_csv: the separator cannot be a quote or a newline");
	if (decimals > 9)
		return gwb_error(GWB_EINVAL, "write_csv: decimals must be <= 9 (got %d)", decimals);
	nt = threads > 0 ? threads : gwb_cpu_count();
	if (nt > 64)
		nt = 64;
	if ((st = gwb_afile_open(&a, path, "write_csv")))
		return st;
	memset(jobs, 0, sizeof(jobs));
	if (gwb_z_by_name(path) != GWB_Z_NONE &&
	    (st = gwb_zwriter_new(&z, &a, gwb_z_by_name(path))))
		goto out;
	for (k = 0; k < nt; k++) {
		jobs[k].d = d;
		jobs[k].sep = sep;
		jobs[k].decimals = decimals;
	}
	/* the header */
	for (j = 0; j <= d->features; j++) {
		wtext(&jobs[0], j < d->features ? (d->names[j] ? d->names[j] : "") :
			       (d->target ? d->target : "target"));
		if (!wreserve(&jobs[0], 1))
			jobs[0].buf[jobs[0].len++] = j < d->features ? sep : '\n';
	}
	if (jobs[0].oom || (st = wput(&a, z, jobs[0].buf, jobs[0].len)))
		goto out;
	gwb_progress_begin("write", (double)d->rows);
	for (r0 = 0; r0 < d->rows;) {
		int n = 0;
		for (k = 0; k < nt && r0 < d->rows; k++, n++) {
			jobs[k].r0 = r0;
			jobs[k].r1 = r0 + WBLOCK_ROWS < d->rows ? r0 + WBLOCK_ROWS : d->rows;
			r0 = jobs[k].r1;
		}
		csv_run_jobs(jobs, sizeof(jobs[0]), n, wformat);
		for (k = 0; k < n; k++) {
			if (jobs[k].oom) {
				st = gwb_error(GWB_ENOMEM, "write_csv: out of memory");
				goto out_end;
			}
			if ((st = wput(&a, z, jobs[k].buf, jobs[k].len)))
				goto out_end;
		}
		gwb_progress_update((double)r0, NULL, 0);
		if (gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "write_csv: interrupted after %zu rows; %s was "
				       "left as it was", r0, path);
			goto out_end;
		}
	}
	if (z)
		st = gwb_zwriter_finish(z);
out_end:
	gwb_progress_end();
out:
	gwb_zwriter_free(z);
	if (!st && jobs[0].oom)
		st = gwb_error(GWB_ENOMEM, "write_csv: out of memory");
	for (k = 0; k < nt; k++)
		free(jobs[k].buf);
	if (st) {
		gwb_afile_abort(&a);
		return st;
	}
	return gwb_afile_commit(&a);
}
