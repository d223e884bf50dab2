/* mm.c - Matrix Market reader and writer (coordinate -> CSR, array -> dense). */
#define _GNU_SOURCE
#include "mm.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "dense.h"
#include "fileio.h"
#include "intr.h"

long long gwb_mm_max_order = (long long)1 << 40;
#define GWB_MM_ORDER_PER_BYTE 8
#define GWB_MM_ORDER_FLOOR (1 << 24)


static bool blank(const char *s, const char *e);

/* Lines that hold data (neither blank nor a % comment) from p on: what a coordinate file
 * holds at most, counted before anything is allocated for its entries. */
static long long data_lines(const char *p, const char *end)
{
	long long n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		if (*p != '%' && !blank(p, le))
			n++;
		p = nl ? nl + 1 : end;
	}
	return n;
}

enum mm_field { F_REAL, F_INTEGER, F_PATTERN };
enum mm_sym { S_GENERAL, S_SYMMETRIC, S_SKEW };

struct cursor {
	const char *p, *end;
	const char *name;
	long line;            /* 1-based number of the line p is on */
};

/* Next line into [*ls, *le); false at end of input. */
static bool next_line(struct cursor *c, const char **ls, const char **le)
{
	if (c->p >= c->end)
		return false;
	*ls = c->p;
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	*le = nl ? nl : c->end;
	c->p = nl ? nl + 1 : c->end;
	c->line++;
	if (*le > *ls && (*le)[-1] == '\r')
		(*le)--;
	return true;
}

static bool blank(const char *s, const char *e)
{
	for (; s < e; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

/* Split a line into at most max tokens (copies into buf). Returns the count (max+1 if more). */
static int tokens(const char *s, const char *e, char *buf, size_t bufsz, char **tok, int max)
{
	size_t len = (size_t)(e - s);
	int n = 0;
	if (len >= bufsz)
		len = bufsz - 1;
	memcpy(buf, s, len);
	buf[len] = 0;
	char *q = buf;
	while (*q) {
		while (*q && isspace((unsigned char)*q))
			q++;
		if (!*q)
			break;
		if (n == max)
			return max + 1;
		tok[n++] = q;
		while (*q && !isspace((unsigned char)*q))
			q++;
		if (*q)
			*q++ = 0;
	}
	return n;
}

static gwb_status perr(const struct cursor *c, const char *fmt, const char *a, const char *b)
{
	char msg[256];
	snprintf(msg, sizeof(msg), fmt, a ? a : "", b ? b : "");
	return gwb_error(GWB_EPARSE, "%s:%ld: %s", c->name, c->line, msg);
}

static bool parse_i64(const char *s, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && end != s && *end == 0;
}

static bool parse_f64(const char *s, double *v)
{
	char *end;
	*v = strtod(s, &end);
	return end != s && *end == 0;
}

gwb_status gwb_mm_read_mem(const char *buf, size_t len, const char *name, gwb_csr **csr,
			   struct gwb_matrix **dense)
{
	struct cursor c = {buf, buf + len, name, 0};
	const char *ls, *le;
	char lb[512], *tok[8];
	int nt;
	enum mm_field field;
	enum mm_sym sym;
	bool array;
	long long rows, cols, nnz = 0;
	gwb_status st;

	*csr = NULL;
	if (dense)
		*dense = NULL;
	if (!next_line(&c, &ls, &le))
		return gwb_error(GWB_EPARSE, "%s: empty file; a Matrix Market file starts with "
				 "\"%%%%MatrixMarket matrix coordinate real general\"", name);
	nt = tokens(ls, le, lb, sizeof(lb), tok, 5);
	if (nt < 1 || strcasecmp(tok[0], "%%MatrixMarket") != 0)
		return perr(&c, "not a Matrix Market file: the first line must start with "
			    "%%%%MatrixMarket%s%s", NULL, NULL);
	if (nt != 5)
		return perr(&c, "the banner needs 5 words: %%%%MatrixMarket matrix <coordinate|array> "
			    "<real|integer|pattern> <general|symmetric|skew-symmetric>%s%s", NULL, NULL);
	if (strcasecmp(tok[1], "matrix") != 0)
		return perr(&c, "object '%s' is not supported (only 'matrix')%s", tok[1], NULL);
	if (!strcasecmp(tok[2], "coordinate"))
		array = false;
	else if (!strcasecmp(tok[2], "array"))
		array = true;
	else
		return perr(&c, "format '%s' is not supported (coordinate or array)%s", tok[2], NULL);
	if (!strcasecmp(tok[3], "real") || !strcasecmp(tok[3], "double"))
		field = F_REAL;
	else if (!strcasecmp(tok[3], "integer"))
		field = F_INTEGER;
	else if (!strcasecmp(tok[3], "pattern") && !array)
		field = F_PATTERN;
	else
		return perr(&c, "field '%s' is not supported (real, integer, or pattern for "
			    "coordinate files; complex matrices are not supported)%s", tok[3], NULL);
	if (!strcasecmp(tok[4], "general"))
		sym = S_GENERAL;
	else if (!strcasecmp(tok[4], "symmetric"))
		sym = S_SYMMETRIC;
	else if (!strcasecmp(tok[4], "skew-symmetric") && !array)
		sym = S_SKEW;
	else
		return perr(&c, "symmetry '%s' is not supported (general, symmetric%s)", tok[4],
			    array ? "" : ", skew-symmetric");
	/* comments, then the size line */
	for (;;) {
		if (!next_line(&c, &ls, &le))
			return gwb_error(GWB_EPARSE, "%s:%ld: the file ends before the size line "
					 "(rows cols%s)", name, c.line, array ? "" : " entries");
		if (le > ls && *ls == '%')
			continue;
		if (blank(ls, le))
			continue;
		break;
	}
	nt = tokens(ls, le, lb, sizeof(lb), tok, 3);
	if (nt != (array ? 2 : 3) || !parse_i64(tok[0], &rows) || !parse_i64(tok[1], &cols) ||
	    (!array && !parse_i64(tok[2], &nnz)))
		return perr(&c, "bad size line: expected %s%s", array ? "two integers: rows cols" :
			    "three integers: rows cols entries", NULL);
	if (rows < 0 || cols < 0 || nnz < 0)
		return perr(&c, "sizes must not be negative%s%s", NULL, NULL);
	if (rows > gwb_mm_max_order || cols > gwb_mm_max_order) {
		char a[32];
		snprintf(a, sizeof(a), "%lld", gwb_mm_max_order);
		return perr(&c, "sizes beyond %s rows or columns are not supported%s", a, NULL);
	}
	/* A CSR matrix holds rows + 1 offsets whatever its entries: a legal file may declare a
	 * large order with few entries (2,000,000 x 2,000,000 with two), so orders up to
	 * GWB_MM_ORDER_FLOOR are read whatever the file's length (the offsets then cost at most
	 * 128 MiB); beyond it, GWB_MM_ORDER_PER_BYTE per byte of the file (a file whose every row
	 * has an entry spends at least 4 bytes a row), so that a few bytes cannot claim gigabytes. */
	if (!array) {
		long long lim = (long long)len > (GWB_MM_ORDER_FLOOR / GWB_MM_ORDER_PER_BYTE)
					? (long long)len * GWB_MM_ORDER_PER_BYTE : GWB_MM_ORDER_FLOOR;
		if (rows > lim || cols > lim) {
			char a[160];
			snprintf(a, sizeof(a), "%lld %s, more than a %zu-byte file can hold (at most "
				 "%lld: %d per byte of the file, and never less than %d)",
				 rows > lim ? rows : cols, rows > lim ? "rows" : "columns", len, lim,
				 GWB_MM_ORDER_PER_BYTE, GWB_MM_ORDER_FLOOR);
			return perr(&c, "the size line declares %s; the file is truncated or its size "
				    "line is wrong%s", a, NULL);
		}
	}
	/* every entry (or array value) takes at least 2 bytes of the file: refuse a size line
	 * that promises more than the rest of the file can hold, before allocating for it */
	{
		long long left = (long long)(c.end - c.p) + 1;
		long long promised;
		if (!array)
			promised = nnz;
		else if (sym == S_SYMMETRIC)
			promised = rows <= 3000000000LL ? rows * (rows + 1) / 2 : LLONG_MAX;
		else
			promised = rows && cols > LLONG_MAX / rows ? LLONG_MAX : rows * cols;
		if (promised > (left + 1) / 2) {
			char a[64];
			snprintf(a, sizeof(a), "%lld", promised);
			return perr(&c, "the size line promises %s values, more than the rest of the file "
				    "can hold (truncated file or a wrong size line)%s", a, NULL);
		}
	}
	if (sym != S_GENERAL && rows != cols) {
		char a[64];
		snprintf(a, sizeof(a), "%lldx%lld", rows, cols);
		return perr(&c, "a symmetric matrix must be square (the size line says %s)%s", a, NULL);
	}

	if (array) {
		gwb_matrix *D = NULL;
		long long want = sym == S_SYMMETRIC ? rows * (rows + 1) / 2 : rows * cols, got = 0;
		long long i = 0, j = 0;
		if (!dense)
			return gwb_error(GWB_EINVAL, "%s: an array (dense) Matrix Market file; this reader "
					 "takes coordinate (sparse) files only", name);
		if (rows == 0 || cols == 0)
			return perr(&c, "an array matrix needs rows and cols >= 1%s%s", NULL, NULL);
		if ((st = gwb_matrix_new((size_t)rows, (size_t)cols, GWB_F64, GWB_COL_MAJOR, &D)))
			return st;
		double *a = D->data;
		while (next_line(&c, &ls, &le)) {
			double v;
			if ((c.line & 65535) == 0 && gwb_intr_pending()) {
				gwb_matrix_free(D);
				return gwb_error(GWB_EINTR, "%s:%ld: reading interrupted", name, c.line);
			}
			if ((le > ls && *ls == '%') || blank(ls, le))
				continue;
			nt = tokens(ls, le, lb, sizeof(lb), tok, 1);
			if (nt != 1 || !parse_f64(tok[0], &v)) {
				gwb_matrix_free(D);
				return perr(&c, "expected one number per line in an array file%s%s", NULL, NULL);
			}
			if (got == want) {
				gwb_matrix_free(D);
				return perr(&c, "more values than the size line allows%s%s", NULL, NULL);
			}
			a[i + j * rows] = v;
			if (sym == S_SYMMETRIC)
				a[j + i * rows] = v;
			got++;
			if (++i == rows) {
				j++;
				i = sym == S_SYMMETRIC ? j : 0;
			}
		}
		if (got != want) {
			gwb_matrix_free(D);
			return gwb_error(GWB_EPARSE, "%s:%ld: the file ends after %lld of %lld values "
					 "(truncated?)", name, c.line, got, want);
		}
		*dense = D;
		return GWB_OK;
	}

	/* room for the entries the file holds, not for those the size line claims */
	long long cap = data_lines(c.p, c.end);
	if (cap > nnz)
		cap = nnz;
	int64_t *I = malloc((size_t)(cap ? cap : 1) * sizeof(int64_t));
	int64_t *J = malloc((size_t)(cap ? cap : 1) * sizeof(int64_t));
	double *V = malloc((size_t)(cap ? cap : 1) * sizeof(double));
	long long e = 0;
	if (!I || !J || !V) {
		st = gwb_error(GWB_ENOMEM, "%s: cannot allocate %lld bytes for %lld entries", name,
			       cap * 24, cap);
		goto out_free;
	}
	int need = field == F_PATTERN ? 2 : 3;
	while (next_line(&c, &ls, &le)) {
		long long i, j;
		double v = 1.0;
		if ((c.line & 65535) == 0 && gwb_intr_pending()) {
			st = gwb_error(GWB_EINTR, "%s:%ld: reading interrupted", name, c.line);
			goto out_free;
		}
		if ((le > ls && *ls == '%') || blank(ls, le))
			continue;
		nt = tokens(ls, le, lb, sizeof(lb), tok, need);
		if (nt != need) {
			st = perr(&c, "expected %s%s", field == F_PATTERN ? "2 values (row col)" :
				  "3 values (row col value)", nt > need ? ", found more" : ", found fewer");
			goto out_free;
		}
		if (!parse_i64(tok[0], &i) || !parse_i64(tok[1], &j)) {
			st = perr(&c, "row and column must be integers (got '%s' '%s')", tok[0], tok[1]);
			goto out_free;
		}
		if (i < 1 || i > rows || j < 1 || j > cols) {
			char a[96];
			snprintf(a, sizeof(a), "(%lld, %lld)", i, j);
			char b[96];
			snprintf(b, sizeof(b), "1..%lld x 1..%lld", rows, cols);
			st = perr(&c, "entry %s is outside the matrix %s", a, b);
			goto out_free;
		}
		if (field != F_PATTERN) {
			long long iv;
			if (field == F_INTEGER ? !parse_i64(tok[2], &iv) : !parse_f64(tok[2], &v)) {
				st = perr(&c, "value '%s' is not a%s number", tok[2],
					  field == F_INTEGER ? "n integer" : " real");
				goto out_free;
			}
			if (field == F_INTEGER)
				v = (double)iv;
		}
		if (sym == S_SKEW && i == j) {
			st = perr(&c, "a skew-symmetric file cannot store a diagonal entry%s%s", NULL, NULL);
			goto out_free;
		}
		if (e == nnz || e == cap) {   /* (cap counts every data line: e == cap is e == nnz) */
			char a[32];
			snprintf(a, sizeof(a), "%lld", nnz);
			st = perr(&c, "more entries than the %s the size line announces%s", a, NULL);
			goto out_free;
		}
		I[e] = i - 1;
		J[e] = j - 1;
		V[e++] = v;
	}
	if (e != nnz) {
		st = gwb_error(GWB_EPARSE, "%s:%ld: the file ends after %lld of the %lld entries the "
			       "size line announces (truncated?)", name, c.line, e, nnz);
		goto out_free;
	}
	if (sym == S_SKEW) {
		/* store both triangles explicitly: (i,j,v) and (j,i,-v) */
		int64_t *I2 = realloc(I, (size_t)(2 * nnz + 1) * sizeof(int64_t));
		if (I2)
			I = I2;
		int64_t *J2 = realloc(J, (size_t)(2 * nnz + 1) * sizeof(int64_t));
		if (J2)
			J = J2;
		double *V2 = realloc(V, (size_t)(2 * nnz + 1) * sizeof(double));
		if (V2)
			V = V2;
		if (!I2 || !J2 || !V2) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory", name);
			goto out_free;
		}
		for (long long t = 0; t < nnz; t++) {
			I[nnz + t] = J[t];
			J[nnz + t] = I[t];
			V[nnz + t] = -V[t];
		}
		st = gwb_csr_from_coo(rows, cols, 2 * nnz, I, J, V, false, csr);
	} else
		st = gwb_csr_from_coo(rows, cols, nnz, I, J, V, sym == S_SYMMETRIC, csr);
	if (!st) {
		const char *base = strrchr(name, '/');
		snprintf((*csr)->name, sizeof((*csr)->name), "%s", base ? base + 1 : name);
		if (sym == S_SYMMETRIC)
			(*csr)->sym = 1;
	}
out_free:
	free(I);
	free(J);
	free(V);
	return st;
}

gwb_status gwb_mm_read(const char *path, gwb_csr **csr, struct gwb_matrix **dense)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	char *buf;
	long len;
	gwb_status st;

	*csr = NULL;
	if (dense)
		*dense = NULL;
	if (!f)
		return gwb_error(GWB_EIO, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		return gwb_error(GWB_EIO, "%s: is a directory, not a Matrix Market file", path);
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return gwb_error(GWB_EIO, "%s: cannot read (not a regular file?)", path);
	}
	buf = malloc((size_t)len + 1);
	if (!buf) {
		fclose(f);
		return gwb_error(GWB_ENOMEM, "%s: cannot allocate %ld bytes to read it", path, len);
	}
	if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return gwb_error(GWB_EIO, "%s: read error", path);
	}
	fclose(f);
	st = gwb_mm_read_mem(buf, (size_t)len, path, csr, dense);
	free(buf);
	return st;
}

/* Open path for an atomic write (fileio.h) with a 1 MiB buffer; *f is the stream. */
static gwb_status write_open(gwb_afile *a, FILE **f, const char *path)
{
	gwb_status st = gwb_afile_open(a, path, "mat.write");

	if (!st) {
		*f = a->fp;
		setvbuf(*f, NULL, _IOFBF, 1 << 20);
	}
	return st;
}

/* Every row or column: stop on Ctrl-C or a write error (commit reports which). */
static bool write_stop(FILE *f)
{
	return gwb_intr_pending() || ferror(f);
}

gwb_status gwb_mm_write_csr(gwb_csr *A, const char *path, const char *comment)
{
	bool sym = A->rows == A->cols && (A->sym == 1 || (A->sym == -1 && gwb_csr_is_symmetric(A, NULL)));
	long long cnt = 0;
	gwb_afile a;
	FILE *f;
	gwb_status st = write_open(&a, &f, path);
	if (st)
		return st;
	for (int64_t i = 0; i < A->rows; i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++)
			if (!sym || gwb_csr_ci(A, p) <= i)
				cnt++;
	fprintf(f, "%%%%MatrixMarket matrix coordinate real %s\n", sym ? "symmetric" : "general");
	if (comment && *comment)
		fprintf(f, "%% %s\n", comment);
	fprintf(f, "%lld %lld %lld\n", (long long)A->rows, (long long)A->cols, cnt);
	/* column by column of the lower triangle = row by row of the upper one; for symmetric
	 * matrices row-wise order of the lower triangle is just as valid */
	for (int64_t i = 0; i < A->rows && !write_stop(f); i++)
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++) {
			int64_t j = gwb_csr_ci(A, p);
			if (sym && j > i)
				continue;
			fprintf(f, "%lld %lld %.17g\n", (long long)i + 1, (long long)j + 1, A->val[p]);
		}
	return gwb_afile_commit(&a);
}

gwb_status gwb_mm_write_dense(const struct gwb_matrix *A, const char *path, const char *comment)
{
	gwb_afile a;
	FILE *f;
	gwb_status st = write_open(&a, &f, path);
	if (st)
		return st;
	fprintf(f, "%%%%MatrixMarket matrix array real general\n");
	if (comment && *comment)
		fprintf(f, "%% %s\n", comment);
	fprintf(f, "%zu %zu\n", A->rows, A->cols);
	for (size_t j = 0; j < A->cols && !write_stop(f); j++)
		for (size_t i = 0; i < A->rows; i++)
			fprintf(f, "%.17g\n", gwb_matrix_get(A, 0, i, j));
	return gwb_afile_commit(&a);
}
