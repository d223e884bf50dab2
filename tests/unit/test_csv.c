/* test_csv.c - unit tests for the data layer: number parsing against glibc's strtof, the CSV
 * reader on small files, the CPU transpose, XXH64, .gwbd corruption, synth determinism. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "csv_impl.h"
#include "dataset.h"
#include "dsio.h"
#include "intr.h"
#include "synth.h"
#include "transpose.h"

#include <zlib.h>
#include <zstd.h>

static char tmpdir[256];

static const char *tmpfile_with(const char *name, const char *text, size_t n)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	fclose(f);
	return path;
}

static uint32_t bits(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	return b;
}

/* Our parser must agree with strtof (correctly rounded in glibc) bit for bit. */
static void check_against_strtof(const char *s)
{
	float ours, ref;
	bool ovf;
	char *end;

	errno = 0;
	ref = strtof(s, &end);
	assert_true(*end == 0);
	if (!gwb_csv_parse_float(s, strlen(s), &ours, &ovf))
		fail_msg("not parsed: %s", s);
	if (bits(ours) != bits(ref))
		fail_msg("%s: ours %a, strtof %a", s, (double)ours, (double)ref);
}

static void test_parse_random_decimals(void **state)
{
	gwb_rand r;
	char s[128];
	int i, k;

	(void)state;
	gwb_rand_seed(&r, 12345, 0);
	for (i = 0; i < 300000; i++) {
		int nd = 1 + (int)gwb_rand_below(&r, 20), dot = (int)gwb_rand_below(&r, (uint64_t)nd + 1);
		size_t n = 0;
		if (gwb_rand_below(&r, 2))
			s[n++] = '-';
		for (k = 0; k < nd; k++) {
			if (k == dot && k)
				s[n++] = '.';
			s[n++] = (char)('0' + gwb_rand_below(&r, 10));
		}
		if (gwb_rand_below(&r, 3) == 0)
			n += (size_t)snprintf(s + n, sizeof(s) - n, "e%d", (int)gwb_rand_below(&r, 90) - 50);
		s[n] = 0;
		check_against_strtof(s);
	}
	/* short decimals as CSV files hold them: the multiply fast path */
	for (i = 0; i < 300000; i++) {
		snprintf(s, sizeof(s), "%.*f", (int)gwb_rand_below(&r, 10),
			 (gwb_rand_uniform(&r) - 0.5) * pow(10, (double)gwb_rand_below(&r, 8)));
		check_against_strtof(s);
	}
}

/* The same strings through the CSV reader (its one-pass fast path for all-numeric rows, and
 * the general path for rows it declines) give strtof's values too. */
static void test_csv_numbers_match_strtof(void **state)
{
	enum { ROWS = 20000, COLS = 3 };
	size_t cap = (size_t)ROWS * COLS * 40 + 64, n = 0, i;
	char *text = malloc(cap), (*strs)[40] = malloc(sizeof(*strs) * ROWS * COLS);
	gwb_dataset *d;
	gwb_rand r;
	int j, k;

	(void)state;
	gwb_rand_seed(&r, 77, 0);
	n += (size_t)snprintf(text, cap, "a,b,c,t\r\n");
	for (i = 0; i < ROWS; i++) {
		for (j = 0; j < COLS; j++) {
			char *s = strs[i * COLS + (size_t)j];
			int nd = 1 + (int)gwb_rand_below(&r, j == 2 ? 22 : 9), m = 0;
			int dot = (int)gwb_rand_below(&r, (uint64_t)nd + 1);
			if (gwb_rand_below(&r, 2))
				s[m++] = '-';
			for (k = 0; k < nd; k++) {
				if (k == dot && k)
					s[m++] = '.';
				s[m++] = (char)('0' + gwb_rand_below(&r, 10));
			}
			if (j == 1 && gwb_rand_below(&r, 2))
				m += snprintf(s + m, 12, "E%+d", (int)gwb_rand_below(&r, 60) - 30);
			s[m] = 0;
			n += (size_t)snprintf(text + n, cap - n, "%s,", s);
		}
		n += (size_t)snprintf(text + n, cap - n, "%d%s", (int)(i % 2), i % 3 ? "\n" : "\r\n");
	}
	assert_int_equal(gwb_csv_load(tmpfile_with("nums.csv", text, n), NULL, &d, NULL), GWB_OK);
	assert_int_equal(d->rows, ROWS);
	for (i = 0; i < ROWS; i++)
		for (j = 0; j < COLS; j++) {
			float want = strtof(strs[i * COLS + (size_t)j], NULL);
			float got = d->X[(size_t)j * ROWS + i];
			if (bits(got) != bits(want))
				fail_msg("row %zu col %d: %s read as %a, strtof %a", i + 1, j + 1,
					 strs[i * COLS + (size_t)j], (double)got, (double)want);
		}
	for (i = 0; i < ROWS; i++)
		assert_int_equal(d->y[i], (int)(i % 2));
	gwb_dataset_free(d);
	free(text);
	free(strs);
}

static void load_same(const char *p, const gwb_dataset *ref, int threads, size_t block)
{
	gwb_csv_opts o;
	gwb_csv_info info;
	gwb_dataset *d;

	gwb_csv_opts_init(&o);
	o.threads = threads;
	o.par_min = 1;
	o.block = block;
	if (gwb_csv_load(p, &o, &d, &info) != GWB_OK)
		fail_msg("threads %d block %zu: %s", threads, block, gwb_errmsg());
	assert_int_equal(d->rows, ref->rows);
	assert_int_equal(d->features, ref->features);
	assert_memory_equal(d->X, ref->X, ref->rows * (size_t)ref->features * sizeof(float));
	if (ref->y)
		assert_memory_equal(d->y, ref->y, ref->rows * sizeof(int32_t));
	else
		assert_memory_equal(d->yr, ref->yr, ref->rows * sizeof(float));
	gwb_dataset_free(d);
}

/* Large all-numeric files are parsed by several threads over byte ranges: the table must be
 * the sequential reader's, row for row, and anything unusual must fall back to it. */
static void test_csv_parallel(void **state)
{
	static const char *const texts[] = {
		/* CRLF, blank lines, no newline at the end */
		"a,b,y\r\n1,2,0.5\r\n\r\n3,4,1.5\r\n5,6,2.5\n\n7,8,3.5\r\n9,10,4.5",
		/* a quote after the first block: the sequential reader takes over */
		"a,b,y\n1,2,1\n3,4,2\n5,6,3\n7,8,4\n9,10,5\n11,12,6\n13,14,7\n15,\"16\",8\n",
		/* a lone CR ends lines */
		"a,b,y\r1,2,1\r3,4,2\r5,6,3\r7,8,4\r",
		/* missing values (empty fields) later on */
		"a,b,y\n1,2,1\n3,4,2\n5,6,3\n7,8,4\n9,10,5\n11,12,6\n13,,7\n15,16,8\n",
	};
	gwb_csv_opts o;
	gwb_dataset *ref;
	size_t t, n;
	int th;

	(void)state;
	for (t = 0; t < sizeof(texts) / sizeof(*texts); t++) {
		const char *p = tmpfile_with("par.csv", texts[t], strlen(texts[t]));
		gwb_csv_opts_init(&o);
		o.threads = 1;
		assert_int_equal(gwb_csv_load(p, &o, &ref, NULL), GWB_OK);
		for (th = 2; th <= 9; th++) {
			load_same(p, ref, th, 0);
			load_same(p, ref, th, 24);
		}
		gwb_dataset_free(ref);
	}
	/* a bigger file with many rows per range, and an error deep inside */
	{
		size_t cap = 4u << 20, i;
		char *text = malloc(cap);
		const char *p;
		gwb_csv_info info;
		n = (size_t)snprintf(text, cap, "x,y,z,t\n");
		for (i = 0; n < cap - 100; i++)
			n += (size_t)snprintf(text + n, cap - n, "%zu.5,-%zu,%zue-3,%zu%s", i, i * 7,
					      i % 1000, i % 3, i % 5 ? "\n" : "\r\n");
		p = tmpfile_with("par.csv", text, n);
		gwb_csv_opts_init(&o);
		o.threads = 1;
		assert_int_equal(gwb_csv_load(p, &o, &ref, NULL), GWB_OK);
		for (th = 2; th <= 8; th += 3)
			load_same(p, ref, th, 0);
		o.threads = 4;
		o.par_min = 1;
		gwb_dataset_free(ref);
		assert_int_equal(gwb_csv_load(p, &o, &ref, &info), GWB_OK);
		assert_int_equal(info.threads, 4);
		gwb_dataset_free(ref);
		/* text in a numeric column near the end: the sequential reader reports it */
		memcpy(text + n - 60, "oops", 4);
		p = tmpfile_with("par.csv", text, n);
		o.threads = 1;
		assert_int_equal(gwb_csv_load(p, &o, &ref, NULL), GWB_EPARSE);
		{
			char want[512];
			snprintf(want, sizeof(want), "%s", gwb_errmsg());
			o.threads = 6;
			assert_int_equal(gwb_csv_load(p, &o, &ref, NULL), GWB_EPARSE);
			assert_string_equal(gwb_errmsg(), want);
		}
		free(text);
	}
}

/* Two loads of one file must give the same dataset bit for bit: values, codes, names, levels
 * and what the reader reports about the file. */
static void assert_same(const gwb_dataset *a, const gwb_csv_info *ia, const gwb_dataset *b,
			const gwb_csv_info *ib, const char *what)
{
	int j, k;

	if (a->rows != b->rows || a->features != b->features || a->task != b->task ||
	    a->classes != b->classes)
		fail_msg("%s: shape %zu x %d task %d classes %d, want %zu x %d task %d classes %d",
			 what, b->rows, b->features, b->task, b->classes, a->rows, a->features,
			 a->task, a->classes);
	if (memcmp(a->X, b->X, a->rows * (size_t)a->features * sizeof(float)))
		fail_msg("%s: X differs", what);
	if (a->y && memcmp(a->y, b->y, a->rows * sizeof(int32_t)))
		fail_msg("%s: y differs", what);
	if (a->yr && memcmp(a->yr, b->yr, a->rows * sizeof(float)))
		fail_msg("%s: yr differs", what);
	for (k = 0; k < a->classes; k++)
		assert_string_equal(a->class_names[k], b->class_names[k]);
	assert_string_equal(a->target, b->target);
	for (j = 0; j < a->features; j++) {
		assert_string_equal(a->names[j], b->names[j]);
		assert_int_equal(a->cat_levels[j] != NULL, b->cat_levels[j] != NULL);
		if (!a->cat_levels[j])
			continue;
		assert_int_equal(a->cat_count[j], b->cat_count[j]);
		for (k = 0; k < a->cat_count[j]; k++)
			assert_string_equal(a->cat_levels[j][k], b->cat_levels[j][k]);
	}
	/* the 64-bit columns (issue 30): the same type and the same bits in every reader */
	for (j = 0; j < a->features; j++) {
		gwb_numtype ta = gwb_dataset_dtype(a, j), tb = gwb_dataset_dtype(b, j);
		const void *va, *vb;
		if (ta != tb)
			fail_msg("%s: column %d is of type %d, want %d", what, j + 1, (int)tb, (int)ta);
		if (ta == GWB_DT_F32)
			continue;
		va = ta == GWB_DT_I64 ? (const void *)a->wide[j]->i : (const void *)a->wide[j]->f;
		vb = ta == GWB_DT_I64 ? (const void *)b->wide[j]->i : (const void *)b->wide[j]->f;
		if (memcmp(va, vb, a->rows * 8))
			fail_msg("%s: the 64-bit values of column %d differ", what, j + 1);
	}
	if (ia->lines != ib->lines || ia->missing != ib->missing || ia->crlf != ib->crlf ||
	    ia->header != ib->header || ia->sep != ib->sep)
		fail_msg("%s: lines %zu missing %zu crlf %d, want %zu %zu %d", what, ib->lines,
			 ib->missing, ib->crlf, ia->lines, ia->missing, ia->crlf);
}

/* Load p the reference way (one thread, every record through the general tokenizer), then
 * sequentially with the fast paths and in parallel at several thread counts: all the same.
 * Returns the threads the last parallel load used (1 when it fell back). */
static int check_all_readers(const char *p, const char *const *cat, int ncat)
{
	gwb_csv_opts o;
	gwb_csv_info iref, info;
	gwb_dataset *ref, *d;
	char ref_err[600] = "";
	gwb_status want;
	int th, used = 0;
	static const int ths[] = {1, 2, 3, 4, 7, 16};
	size_t k;

	gwb_csv_opts_init(&o);
	o.categorical = cat;
	o.n_categorical = ncat;
	o.progress = false;
	o.slow = true;
	want = gwb_csv_load(p, &o, &ref, &iref);
	if (want)
		snprintf(ref_err, sizeof(ref_err), "%s", gwb_errmsg());
	o.slow = false;
	o.par_min = 1;
	for (k = 0; k < sizeof(ths) / sizeof(*ths); k++) {
		char what[64];
		gwb_status st;
		th = ths[k];
		o.threads = th;
		snprintf(what, sizeof(what), "%d threads", th);
		st = gwb_csv_load(p, &o, &d, &info);
		if (st != want)
			fail_msg("%s: %s: status %d, want %d (%s)", p, what, st, want,
				 st ? gwb_errmsg() : ref_err);
		if (st) {
			if (strcmp(gwb_errmsg(), ref_err))
				fail_msg("%s: error \"%s\", want \"%s\"", what, gwb_errmsg(), ref_err);
			continue;
		}
		assert_same(ref, &iref, d, &info, what);
		used = info.threads;
		gwb_dataset_free(d);
	}
	if (!want)
		gwb_dataset_free(ref);
	return want ? -1 : used;
}

/* A file of the kind the parallel reader was made for: a text column (some values quoted,
 * with separators, "" escapes or newlines inside), numbers with empty and NA cells, CRLF on
 * some lines, blank lines; the target text or numbers. */
static size_t mixed_text(char *t, size_t cap, int rows, uint64_t seed, bool text_target,
			 bool quoted_newlines)
{
	static const char *const words[] = {"Springfield", "Portland", "Salem", "Dover",
					    "Oxford", "Madison", "Clinton", "Bristol"};
	gwb_rand r;
	size_t n = 0;
	int i, j;

	gwb_rand_seed(&r, seed, 0);
	n += (size_t)snprintf(t + n, cap - n, "id,city,x1,x2,\"x,3\",note,label\n");
	for (i = 0; i < rows && n + 200 < cap; i++) {
		int w = (int)gwb_rand_below(&r, 8), v = (int)gwb_rand_below(&r, 40);
		int form = (int)gwb_rand_below(&r, 10);
		n += (size_t)snprintf(t + n, cap - n, "%d,", i);
		if (form == 0)
			n += (size_t)snprintf(t + n, cap - n, "\"%s, %d\",", words[w], v);
		else if (form == 1)
			n += (size_t)snprintf(t + n, cap - n, "\"%s \"\"%d\"\"\",", words[w], v);
		else if (form == 2 && quoted_newlines)
			n += (size_t)snprintf(t + n, cap - n, "\"%s\n%d\",", words[w], v);
		else if (form == 3)
			n += (size_t)snprintf(t + n, cap - n, "NA,");
		else if (form == 4)
			n += (size_t)snprintf(t + n, cap - n, " %s %d ,", words[w], v);
		else
			n += (size_t)snprintf(t + n, cap - n, "%s %d,", words[w], v);
		for (j = 0; j < 3; j++) {
			int u = (int)gwb_rand_below(&r, 40);
			if (u == 0)
				n += (size_t)snprintf(t + n, cap - n, ",");
			else if (u == 1)
				n += (size_t)snprintf(t + n, cap - n, "NA,");
			else if (u == 2)
				n += (size_t)snprintf(t + n, cap - n, "\"%d.5\",", u);
			else if (u == 3)
				n += (size_t)snprintf(t + n, cap - n, " %d ,", u);
			else if (u == 4)
				n += (size_t)snprintf(t + n, cap - n, "1.000000059604644775390625,");
			else
				n += (size_t)snprintf(t + n, cap - n, "%s%d.%03d,",
						      gwb_rand_below(&r, 2) ? "-" : "",
						      (int)gwb_rand_below(&r, 1000),
						      (int)gwb_rand_below(&r, 1000));
		}
		n += (size_t)snprintf(t + n, cap - n, "%s,", gwb_rand_below(&r, 30) ? "" : "\"\"");
		if (text_target)
			n += (size_t)snprintf(t + n, cap - n, "%s", gwb_rand_below(&r, 3) ? "yes" : "no");
		else
			n += (size_t)snprintf(t + n, cap - n, "%d", (int)gwb_rand_below(&r, 3));
		j = (int)gwb_rand_below(&r, 50);
		n += (size_t)snprintf(t + n, cap - n, "%s", j == 0 ? "\r\n" : j == 1 ? "\n\n" : "\n");
	}
	return n;
}

/* The first record start at or after t + off (after a newline outside quotes). */
static char *record_after(char *t, size_t off)
{
	bool inq = false;
	size_t i;

	for (i = 0; t[i]; i++) {
		if (t[i] == '"')
			inq = !inq;
		else if (t[i] == '\n' && !inq && i + 1 >= off)
			return t + i + 1;
	}
	return t + i;
}

/* Insert s at t + at (t holds *n bytes and room for more). */
static void insert_at(char *t, size_t *n, char *at, const char *s)
{
	memmove(at + strlen(s), at, *n - (size_t)(at - t) + 1);
	memcpy(at, s, strlen(s));
	*n += strlen(s);
}

/* The default crossover (PAR_MIN_BYTES, no par_min): a mixed file just above it is read by
 * the parallel reader, one just below by the sequential one, both the same as the reference. */
static void test_csv_crossover(void **state)
{
	size_t cap = PAR_MIN_BYTES + (64u << 10), n;
	char *t = malloc(cap + 1), *cut;
	gwb_csv_opts o;
	gwb_csv_info iref, info;
	gwb_dataset *ref, *d;
	const char *p;
	int above;

	(void)state;
	assert_non_null(t);
	n = mixed_text(t, cap, 1 << 30, 17, false, true);
	assert_true(n > PAR_MIN_BYTES);
	for (above = 1; above >= 0; above--) {
		if (!above) {   /* the last records that take it to PAR_MIN_BYTES or more go */
			cut = record_after(t, PAR_MIN_BYTES - 4096);
			n = (size_t)(cut - t);
			assert_true(n < PAR_MIN_BYTES);
		}
		p = tmpfile_with("crossover.csv", t, n);
		gwb_csv_opts_init(&o);
		o.progress = false;
		o.slow = true;
		assert_int_equal(gwb_csv_load(p, &o, &ref, &iref), GWB_OK);
		o.slow = false;
		o.threads = 2;
		assert_int_equal(gwb_csv_load(p, &o, &d, &info), GWB_OK);
		assert_int_equal(info.threads, above ? 2 : 1);
		assert_same(ref, &iref, d, &info, above ? "above the crossover" : "below it");
		gwb_dataset_free(d);
		gwb_dataset_free(ref);
	}
	free(t);
}

/* A column of mostly distinct text (free text): the parallel workers append its levels
 * without lookups once most lookups added one, and the merge folds the repeats (within a range
 * after the switch, and across ranges) into one code each: the same as the sequential reader. */
static void test_csv_parallel_free_text(void **state)
{
	size_t cap = 4u << 20, n = 0;
	char *t = malloc(cap);
	const char *p;
	int i, used;

	(void)state;
	assert_non_null(t);
	n += (size_t)snprintf(t + n, cap - n, "text,x,y\n");
	for (i = 0; i < 120000; i++) {
		if (i % 7 == 0)          /* a few levels over and over */
			n += (size_t)snprintf(t + n, cap - n, "rep %d,", i % 50);
		else if (i % 1000 == 999) /* a level seen earlier, maybe in another range */
			n += (size_t)snprintf(t + n, cap - n, "\"u, %d\",", (i * 37) % (i - 1) + 1);
		else if (i % 97 == 0)
			n += (size_t)snprintf(t + n, cap - n, ",");
		else
			n += (size_t)snprintf(t + n, cap - n, "\"u, %d\",", i);
		n += (size_t)snprintf(t + n, cap - n, "%d.5,%d\n", i % 1000, i % 3);
	}
	p = tmpfile_with("freetext.csv", t, n);
	used = check_all_readers(p, NULL, 0);
	assert_int_equal(used, 16);
	free(t);
}

/* Files with text columns, quotes and missing values are parsed by several threads too: the
 * dataset (values, level codes and their order, missing counts, lines) is the sequential
 * reader's, and a bad row stops the load with the same file:line:column. */
static void test_csv_parallel_mixed(void **state)
{
	static const char *const note[] = {"note"};
	static const char *const files[] = {"iris.csv", "diabetes.csv", "digits.csv"};
	size_t cap = 3u << 20, n, k;
	char *t = malloc(cap), path[600];
	const char *p;
	int tt, nl;

	(void)state;
	for (tt = 0; tt < 2; tt++)
		for (nl = 0; nl < 2; nl++) {
			n = mixed_text(t, cap, 30000, 5 + (uint64_t)(2 * tt + nl), tt, nl);
			p = tmpfile_with("mixed.csv", t, n);
			/* no stray quote: the parallel reader must not fall back */
			assert_int_equal(check_all_readers(p, note, 1), 16);
		}
	/* levels that all read as numbers sort by value ("-1.5" < "2" < "10", "1" before "1.0"),
	 * merged from the ranges in that order; levels in every range and in one only */
	{
		static const char *const num[] = {"x1", "id"};
		n = mixed_text(t, cap, 30000, 9, true, false);
		for (k = 0; k < 3; k++) {
			static const char *const extra[] = {"-7,a,1,1.0,2,,yes\n",
							    "-8,b,10,-1.5,2,,no\n",
							    "-9,c,1.0,1,2,,yes\n"};
			insert_at(t, &n, record_after(t, n * (k + 1) / 4), extra[k]);
		}
		p = tmpfile_with("mixed.csv", t, n);
		assert_int_equal(check_all_readers(p, num, 2), 16);
	}
	/* small files: ranges of a few bytes, empty ranges, records longer than a range */
	{
		static const char *const small[] = {
			"c,x,t\n\"a,b\",1,y\nq,,n\r\n\"l\nm\",NA,y\n\n\"a,b\",2,n",
			"c,x,t\n\"a\"\"b\",1,y\nq,2,n\nq,3,y\n",
			"c,x\r\"a\r\nb\",1\rq,2\r",
			"c,x,t\nz,1,\"y\"\nz,\"\",n\n",
		};
		for (k = 0; k < sizeof(small) / sizeof(*small); k++) {
			p = tmpfile_with("mixed.csv", small[k], strlen(small[k]));
			if (check_all_readers(p, NULL, 0) < 1)
				fail_msg("small file %zu: %s", k, gwb_errmsg());
		}
	}
	/* a quote inside an unquoted field hides record starts from the quote count: the ranges
	 * do not meet, and the sequential reader's table comes back all the same */
	n = mixed_text(t, cap, 20000, 11, false, true);
	insert_at(t, &n, record_after(t, n / 2), "999999,ab\"c,1,2,3,,0\n");
	p = tmpfile_with("mixed.csv", t, n);
	assert_int_equal(check_all_readers(p, NULL, 0), 1);
	/* integers of every width and sign beside decimals and exponents (the fast paths' integer
	 * shape against the tokenizer's strtof-backed parser) */
	{
		static const char *const ints[] = {"-0", "+7", "0000007", "1234567", "-9999999",
						   "12345678", "7e2", "0", "-12", "16777217", "3.",
						   "123456789012", "-1000000000006", "999999999999999",
						   "000000001234567", "1234567890123.5", "16777217000"};
		const size_t ni = sizeof(ints) / sizeof(*ints);
		n = (size_t)snprintf(t, cap, "a,b,c,y\n");
		for (k = 0; k < 400; k++)
			n += (size_t)snprintf(t + n, cap - n, "%s,%s,%zu.25,%s\n", ints[k % ni],
					      ints[(k * 7 + 3) % ni], k, ints[(k * 5 + 1) % ni]);
		p = tmpfile_with("ints.csv", t, n);
		if (check_all_readers(p, NULL, 0) < 1)
			fail_msg("integers: %s", gwb_errmsg());
		n = (size_t)snprintf(t, cap, "s,a,y\n");   /* the mixed path too */
		for (k = 0; k < 400; k++)
			n += (size_t)snprintf(t + n, cap - n, "w%zu,%s,%s\n", k % 5, ints[k % ni],
					      ints[(k * 3 + 2) % ni]);
		p = tmpfile_with("ints.csv", t, n);
		if (check_all_readers(p, NULL, 0) < 1)
			fail_msg("integers, mixed: %s", gwb_errmsg());
	}
	/* bad rows deep in the file: the error of the sequential reader */
	{
		static const char *const bad[] = {"1,2,3\n", "1,\"open\n", "x,1,2,3,4,5,6,7\n",
						  "1,a,1.5,oops,1,,0\n", "1,\"a\"b,1,2,3,,0\n"};
		for (k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
			n = mixed_text(t, cap, 20000, 3, false, true);
			insert_at(t, &n, record_after(t, n * (k + 1) / 7), bad[k]);
			p = tmpfile_with("mixed.csv", t, n);
			assert_int_equal(check_all_readers(p, NULL, 0), -1);
			if (!strstr(gwb_errmsg(), "mixed.csv:"))
				fail_msg("%s", gwb_errmsg());
		}
	}
	/* the bundled files */
	for (k = 0; k < sizeof(files) / sizeof(*files); k++) {
		snprintf(path, sizeof(path), "%s/datasets/%s", GWB_SRCDIR, files[k]);
		assert_true(check_all_readers(path, NULL, 0) > 1);
	}
	free(t);
}

static void test_parse_midpoints(void **state)
{
	gwb_rand r;
	char s[128];
	int i;

	(void)state;
	gwb_rand_seed(&r, 7, 0);
	/* exact midpoints between neighbouring floats, and a hair either side */
	for (i = 0; i < 20000; i++) {
		float f = (float)ldexp(1.0 + gwb_rand_uniform(&r), (int)gwb_rand_below(&r, 200) - 100);
		double m = ((double)f + (double)nextafterf(f, INFINITY)) / 2;
		snprintf(s, sizeof(s), "%.60g", m);
		check_against_strtof(s);
		snprintf(s, sizeof(s), "%.60g1", m);   /* just above (a digit beyond the exact value) */
		if (strchr(s, '.'))
			check_against_strtof(s);
		snprintf(s, sizeof(s), "%.17g", m);
		check_against_strtof(s);
	}
	/* integer midpoints above 2^24 have few digits and take the fast path's guard */
	for (i = 0; i < 20000; i++) {
		int e = 24 + (int)gwb_rand_below(&r, 36);
		double base = ldexp(1.0, e) + ldexp((double)gwb_rand_below(&r, 1u << 23), e - 23);
		double mid = base + ldexp(1.0, e - 24);
		snprintf(s, sizeof(s), "%.0f", mid);
		check_against_strtof(s);
	}
	check_against_strtof("16777217");
	check_against_strtof("7.038531e-26");   /* the double-rounding trap */
	check_against_strtof("1.00000005960464477539062500000001");
	check_against_strtof("0.000000000000000000000000000000000000000000001");
	check_against_strtof("3.4028235e38");
}

static void test_parse_forms(void **state)
{
	float v;
	bool ovf;

	(void)state;
	assert_true(gwb_csv_parse_float(" 1.5 ", 5, &v, &ovf) && v == 1.5f);
	assert_true(gwb_csv_parse_float("+.5", 3, &v, &ovf) && v == 0.5f);
	assert_true(gwb_csv_parse_float("5.", 2, &v, &ovf) && v == 5.0f);
	assert_true(gwb_csv_parse_float("-0", 2, &v, &ovf) && v == 0 && signbit(v));
	assert_true(gwb_csv_parse_float("1E+3", 4, &v, &ovf) && v == 1000.0f);
	assert_true(gwb_csv_parse_float("inf", 3, &v, &ovf) && isinf(v));
	assert_true(gwb_csv_parse_float("1e39", 4, &v, &ovf) && ovf);
	assert_false(gwb_csv_parse_float("1e", 2, &v, &ovf));
	assert_false(gwb_csv_parse_float("-", 1, &v, &ovf));
	assert_false(gwb_csv_parse_float(".", 1, &v, &ovf));
	assert_false(gwb_csv_parse_float("1.2.3", 5, &v, &ovf));
	assert_false(gwb_csv_parse_float("0x10", 4, &v, &ovf));
	assert_false(gwb_csv_parse_float("12abc", 5, &v, &ovf));
	assert_false(gwb_csv_parse_float("", 0, &v, &ovf));
	assert_false(gwb_csv_parse_float("1,5", 3, &v, &ovf));
}

static void test_csv_small(void **state)
{
	const char *text = "\xef\xbb\xbf" "a;\"b;c\";y\r\n1,5;NA;x\r\n2;\"3\";\"y \"\"z\"\"\"\r\n";
	gwb_csv_opts o;
	gwb_csv_info info;
	gwb_dataset *d;
	const char *p = tmpfile_with("s.csv", text, strlen(text));

	(void)state;
	gwb_csv_opts_init(&o);
	o.categorical = (const char *const[]){"a"};
	o.n_categorical = 1;
	assert_int_equal(gwb_csv_load(p, &o, &d, &info), GWB_OK);
	assert_int_equal(info.sep, ';');
	assert_true(info.bom && info.crlf && info.header);
	assert_int_equal(d->rows, 2);
	assert_int_equal(d->features, 2);
	assert_string_equal(d->names[1], "b;c");
	assert_int_equal(d->cat_count[0], 2);
	assert_string_equal(d->cat_levels[0][0], "1,5");
	assert_true(isnan(d->X[2]));
	assert_true(d->X[3] == 3.0f);
	assert_int_equal(d->classes, 2);
	assert_string_equal(d->class_names[1], "y \"z\"");
	gwb_dataset_free(d);
}

/* Tiny read blocks put a block boundary inside every token: the table must not change. */
static void test_csv_block_boundaries(void **state)
{
	const char *text = "\xef\xbb\xbf" "x,\"note, with \"\"quotes\"\"\",y\r\n"
			   "1.5,\"two\nlines\",a\r\n"
			   "-2.25e1,plain,b\r\n"
			   "\r\n"
			   "3,\"\",a\n"
			   "NA,last,b";
	const char *p = tmpfile_with("blk.csv", text, strlen(text));
	gwb_csv_opts o;
	gwb_dataset *ref, *d;
	size_t b;

	(void)state;
	gwb_csv_opts_init(&o);
	assert_int_equal(gwb_csv_load(p, &o, &ref, NULL), GWB_OK);
	assert_int_equal(ref->rows, 4);
	assert_string_equal(ref->names[1], "note, with \"quotes\"");
	for (b = 1; b <= 80; b++) {
		o.block = b;
		if (gwb_csv_load(p, &o, &d, NULL) != GWB_OK)
			fail_msg("block %zu: %s", b, gwb_errmsg());
		assert_int_equal(d->rows, ref->rows);
		assert_memory_equal(d->X, ref->X, ref->rows * 2 * sizeof(float));
		assert_memory_equal(d->y, ref->y, ref->rows * sizeof(int32_t));
		assert_int_equal(d->cat_count[1], ref->cat_count[1]);
		gwb_dataset_free(d);
	}
	gwb_dataset_free(ref);
	/* errors name the same place whatever the block */
	text = "a,b,t\n1,2,x\n3,4,\"y\nz\"\n5,6,x\n7,8,y\n9,oops,x\n";
	p = tmpfile_with("blkerr.csv", text, strlen(text));
	for (b = 1; b <= 40; b++) {
		o.block = b;
		assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_EPARSE);
		if (!strstr(gwb_errmsg(), "blkerr.csv:7:3: text \"oops\""))
			fail_msg("block %zu: %s", b, gwb_errmsg());
	}
}

static void test_csv_errors(void **state)
{
	gwb_dataset *d = (gwb_dataset *)1;
	const char *p;

	(void)state;
	p = tmpfile_with("r.csv", "a,b,c\n1,2,3\n4,5,6\n7,8\n", 22);
	assert_int_equal(gwb_csv_load(p, NULL, &d, NULL), GWB_EPARSE);
	assert_null(d);
	assert_non_null(strstr(gwb_errmsg(), "r.csv:4:4: ragged row"));
	p = tmpfile_with("e.csv", "", 0);
	assert_int_equal(gwb_csv_load(p, NULL, &d, NULL), GWB_EPARSE);
	assert_non_null(strstr(gwb_errmsg(), "empty file"));
	assert_int_equal(gwb_csv_load("/nonexistent/x.csv", NULL, &d, NULL), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "/nonexistent/x.csv: cannot open"));
}

static void test_transpose_shapes(void **state)
{
	size_t shapes[][2] = {{1, 1}, {1, 77}, {77, 1}, {33, 31}, {64, 64}, {65, 129}, {1000, 3},
			      {3, 1000}, {517, 259}};
	gwb_rand r;
	size_t s, i;

	(void)state;
	gwb_rand_seed(&r, 3, 0);
	for (s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
		size_t rows = shapes[s][0], cols = shapes[s][1], lds = cols + (s % 3), ldd = rows + (s % 2);
		float *src = malloc(rows * lds * sizeof(float)), *a = calloc(cols * ldd, sizeof(float)),
		      *b = calloc(rows * cols, sizeof(float));
		int blocks[] = {0, 4, 16, 32, 64}, k;
		for (i = 0; i < rows * lds; i++)
			src[i] = (float)gwb_rand_normal(&r);
		for (k = 0; k < 5; k++) {
			size_t ii, jj;
			memset(a, 0, cols * ldd * sizeof(float));
			assert_int_equal(gwb_transpose_f32(src, rows, cols, lds, a, ldd, blocks[k],
							   1 + k % 3), GWB_OK);
			for (ii = 0; ii < rows; ii++)
				for (jj = 0; jj < cols; jj++)
					if (a[jj * ldd + ii] != src[ii * lds + jj])
						fail_msg("%zux%zu block %d: (%zu,%zu)", rows, cols, blocks[k], ii,
							 jj);
		}
		if (lds == cols) {
			gwb_transpose_f32_naive(src, rows, cols, b);
			for (i = 0; i < rows * cols; i++)
				assert_true(b[i] == src[(i % rows) * cols + i / rows]);
		}
		free(src);
		free(a);
		free(b);
	}
	assert_int_equal(gwb_transpose_f32(NULL, 5, 5, 4, NULL, 5, 0, 1), GWB_EINVAL);
}

static void test_xxh64(void **state)
{
	static const char abc[] = "abc";
	char big[1000];
	gwb_xxh64_state h;
	size_t i, cut;

	(void)state;
	/* reference values of XXH64 (seed 0) */
	assert_true(gwb_xxh64("", 0, 0) == 0xEF46DB3751D8E999ull);
	assert_true(gwb_xxh64(abc, 3, 0) == 0x44BC2CF5AD770999ull);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + 3);
	for (cut = 0; cut < sizeof(big); cut += 37) {
		gwb_xxh64_init(&h, 0);
		gwb_xxh64_update(&h, big, cut);
		gwb_xxh64_update(&h, big + cut, sizeof(big) - cut);
		assert_true(gwb_xxh64_final(&h) == gwb_xxh64(big, sizeof(big), 0));
	}
}

/* Every single-byte change of a saved file is refused. */
static void test_gwbd_every_byte(void **state)
{
	const char *text = "c,x,t\nred,1.5,a\nblue,NA,b\nred,-2,a\n";
	const char *csv = tmpfile_with("g.csv", text, strlen(text));
	char path[512], *raw;
	gwb_dataset *d, *e;
	long n, i;
	FILE *f;

	(void)state;
	assert_int_equal(gwb_csv_load(csv, NULL, &d, NULL), GWB_OK);
	snprintf(path, sizeof(path), "%s/g.gwbd", tmpdir);
	assert_int_equal(gwb_dsio_save(d, path), GWB_OK);
	assert_int_equal(gwb_dsio_load(path, &e), GWB_OK);
	assert_int_equal(e->rows, 3);
	assert_memory_equal(e->X, d->X, 6 * sizeof(float));
	assert_string_equal(e->cat_levels[0][1], "red");
	gwb_dataset_free(e);
	f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	raw = malloc((size_t)n);
	assert_int_equal(fread(raw, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	for (i = 0; i < n; i++) {
		raw[i] ^= 0x20;
		if (gwb_dsio_load(tmpfile_with("flip.gwbd", raw, (size_t)n), &e) == GWB_OK)
			fail_msg("a flip at byte %ld of %ld was accepted", i, n);
		raw[i] ^= 0x20;
	}
	for (i = 0; i < n; i++)
		if (gwb_dsio_load(tmpfile_with("cut.gwbd", raw, (size_t)i), &e) == GWB_OK)
			fail_msg("a file cut to %ld bytes was accepted", i);
	/* a well-formed header of a newer format version is refused by its version */
	{
		uint32_t v = GWB_DSIO_VERSION + 1;
		uint64_t h;
		memcpy(raw + 8, &v, 4);
		h = gwb_xxh64(raw, 56, 0);
		memcpy(raw + 56, &h, 8);
		assert_int_equal(gwb_dsio_load(tmpfile_with("flip.gwbd", raw, (size_t)n), &e),
				 GWB_EPARSE);
		{
			char want[96];
			snprintf(want, sizeof(want), "format version %d; this gwb reads versions 1 to %d",
				 GWB_DSIO_VERSION + 1, GWB_DSIO_VERSION);
			assert_non_null(strstr(gwb_errmsg(), want));
		}
		/* (the table has a float64 column: the file was version 3, with its 64-bit
		 * section, which every flip and cut above reached too) */
		assert_int_equal(GWB_DSIO_VERSION, 3);
	}
	free(raw);
	gwb_dataset_free(d);
}

/* 64-bit columns across byte ranges (issue 30): int64 cells turned to doubles in the range
 * that meets a fraction and, at the merge, in the others, ranges without a row among them (a
 * 20 kB record spans many at par_min 1): every reader the same, the types as the values say. */
static void test_csv_wide_ranges(void **state)
{
	size_t cap = 1u << 20, n = 0;
	char *t = malloc(cap);
	gwb_csv_opts o;
	gwb_dataset *d;
	const char *p;
	int i;

	(void)state;
	assert_non_null(t);
	n += (size_t)snprintf(t + n, cap - n, "a,b,c,y\n");
	for (i = 0; i < 3000; i++) {
		if (i == 1500) {
			n += (size_t)snprintf(t + n, cap - n, "%d,0.", i);
			memset(t + n, '0', 20000);
			n += 20000;
			n += (size_t)snprintf(t + n, cap - n, "1,%d,0\n", i);
			continue;
		}
		n += (size_t)snprintf(t + n, cap - n, "%d,%d,%lld,%d\n", i, i * 3,
				      9007199254740993LL + i, i % 2);
	}
	p = tmpfile_with("par.csv", t, n);   /* (a name the cleanup list has) */
	assert_true(check_all_readers(p, NULL, 0) > 1);
	gwb_csv_opts_init(&o);
	o.progress = false;
	assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_OK);
	assert_int_equal(gwb_dataset_dtype(d, 0), GWB_DT_I64);
	assert_int_equal(gwb_dataset_dtype(d, 1), GWB_DT_F64);
	assert_int_equal(gwb_dataset_dtype(d, 2), GWB_DT_I64);
	assert_true(d->wide[1]->f[2999] == 8997.0);
	assert_true(d->wide[2]->i[2999] == 9007199254740993LL + 2999);
	assert_true(d->wide[2]->i[1500] == 1500);
	gwb_dataset_free(d);
	free(t);
}

static void test_synth_threads(void **state)
{
	gwb_synth_opts o;
	gwb_dataset *a, *b;
	int t;

	(void)state;
	gwb_synth_opts_init(&o, GWB_SYNTH_CLASSIFICATION);
	o.rows = 10007;
	o.features = 9;
	o.informative = 4;
	o.redundant = 2;
	o.repeated = 1;
	o.classes = 3;
	o.seed = 99;
	o.threads = 1;
	assert_int_equal(gwb_synth(&o, &a), GWB_OK);
	for (t = 2; t <= 5; t++) {
		o.threads = t;
		assert_int_equal(gwb_synth(&o, &b), GWB_OK);
		assert_memory_equal(a->X, b->X, a->rows * (size_t)a->features * sizeof(float));
		assert_memory_equal(a->y, b->y, a->rows * sizeof(int32_t));
		gwb_dataset_free(b);
	}
	gwb_dataset_free(a);
	o.informative = 1;
	o.classes = 3;
	assert_int_equal(gwb_synth(&o, &a), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "2^informative"));
}

static void test_dataset_take_select(void **state)
{
	gwb_dataset *d, *t, *s, *u = NULL;
	size_t idx[] = {2, 0, 2};
	int cols[] = {1};
	int j;

	(void)state;
	assert_int_equal(gwb_dataset_new(3, 2, GWB_TASK_REGRESSION, 0, &d), GWB_OK);
	for (j = 0; j < 6; j++)
		d->X[j] = (float)j;
	d->yr[0] = 10, d->yr[1] = 11, d->yr[2] = 12;
	d->names[0] = strdup("p");
	d->names[1] = strdup("q");
	assert_int_equal(gwb_dataset_take(d, idx, 3, &t), GWB_OK);
	assert_true(t->X[0] == 2 && t->X[1] == 0 && t->X[3] == 5 && t->yr[0] == 12);
	assert_string_equal(t->names[1], "q");
	assert_int_equal(gwb_dataset_select(d, cols, 1, &s), GWB_OK);
	assert_true(s->features == 1 && s->X[0] == 3 && s->yr[2] == 12);
	assert_int_equal(gwb_dataset_find(d, "q"), 1);
	idx[0] = 3;
	assert_int_equal(gwb_dataset_take(d, idx, 1, &u), GWB_EINVAL);
	assert_null(u);
	gwb_dataset_free(t);
	gwb_dataset_free(s);
	gwb_dataset_free(d);
}

static int reports, finished;

static void count_sink(const gwb_progress *p, void *ctx)
{
	(void)ctx;
	reports++;
	finished += p->finished;
}

/* A file over the progress threshold reports progress; a pending interrupt stops the load
 * with GWB_EINTR and frees what it held (the sanitizer builds check the second part). */
static void test_csv_progress_and_interrupt(void **state)
{
	size_t n = 0, cap = 20u << 20;
	char *text = malloc(cap);
	const char *p;
	gwb_dataset *d;
	int i = 0;

	(void)state;
	n += (size_t)snprintf(text, cap, "a,b,c,y\n");
	while (n < cap - 64) {
		n += (size_t)snprintf(text + n, cap - n, "%d.25,%d,-%d.5e-3,%d\n", i, i * 3, i, i % 2);
		i++;
	}
	p = tmpfile_with("big.csv", text, n);
	free(text);
	gwb_progress_set_sink(count_sink, NULL);
	assert_int_equal(gwb_csv_load(p, NULL, &d, NULL), GWB_OK);
	assert_int_equal(d->rows, (size_t)i);
	assert_true(d->X[(size_t)2 * d->rows + 7] == -7.5e-3f);
	gwb_dataset_free(d);
	assert_true(reports >= 2);
	assert_int_equal(finished, 1);
	gwb_intr_raise();
	assert_int_equal(gwb_csv_load(p, NULL, &d, NULL), GWB_EINTR);
	assert_null(d);
	assert_non_null(strstr(gwb_errmsg(), "interrupted"));
	{
		gwb_csv_opts o;
		gwb_csv_opts_init(&o);
		o.threads = 4;
		o.par_min = 1;
		assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_EINTR);
		assert_null(d);
		assert_non_null(strstr(gwb_errmsg(), "interrupted"));
		gwb_intr_clear();
		reports = finished = 0;
		assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_OK);
		assert_int_equal(d->rows, (size_t)i);
		assert_true(d->X[(size_t)2 * d->rows + 7] == -7.5e-3f);
		gwb_dataset_free(d);
		assert_int_equal(finished, 1);
	}
	gwb_intr_clear();
	gwb_progress_set_sink(NULL, NULL);
}

/* p[0..n) as one gzip member appended at out + *m (room for it: the caller's). */
static void gz_member(const char *p, size_t n, unsigned char *out, size_t *m, size_t cap)
{
	z_stream zs;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)p;
	zs.avail_in = (uInt)n;
	zs.next_out = out + *m;
	zs.avail_out = (uInt)(cap - *m);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*m = cap - zs.avail_out;
	deflateEnd(&zs);
}

/* A compressed file loads as its text does through both decompressing paths: streamed to the
 * sequential reader (one thread) and as an image read by the byte-range reader as it is
 * decoded (par_min 1, 2 to 7 threads; the size hint exact, too small for a multi-member file,
 * or too large, which leaves ranges past the end); multi-member gzip and multi-frame zstd read
 * whole; a truncated stream and a CRC that does not match fail with the same message on
 * every path. */
static void test_csv_compressed_parallel(void **state)
{
	static const int ths[] = {1, 2, 3, 7};
	size_t cap = 3u << 20, n, m, cut, k;
	char *t = malloc(cap), what[96];
	unsigned char *z = malloc(cap);
	gwb_csv_opts o;
	gwb_csv_info iref, info;
	gwb_dataset *ref, *d;
	const char *p;
	int form, q;

	(void)state;
	assert_non_null(t);
	assert_non_null(z);
	for (q = 0; q < 2; q++) {
		n = mixed_text(t, cap, 12000, 40 + (uint64_t)q, q == 1, q == 1);
		p = tmpfile_with("plain.csv", t, n);
		gwb_csv_opts_init(&o);
		o.progress = false;
		o.slow = true;
		o.threads = 1;
		assert_int_equal(gwb_csv_load(p, &o, &ref, &iref), GWB_OK);
		o.slow = false;
		o.par_min = 1;
		for (form = 0; form < 5; form++) {
			/* 0 one gzip member, 1 three members (the hint: the last one's ISIZE, too
			 * small), 2 one member and as many zero bytes as the text has (gzip's padding:
			 * no ISIZE at the end, the hint 3 x the file, too large), 3 one zstd frame, 4
			 * two zstd frames */
			m = 0;
			cut = form == 1 ? n / 3 : n;
			if (form <= 2) {
				gz_member(t, cut, z, &m, cap);
				if (form == 1) {
					gz_member(t + cut, cut, z, &m, cap);
					gz_member(t + 2 * cut, n - 2 * cut, z, &m, cap);
				}
				if (form == 2) {
					assert_true(m + n <= cap);
					memset(z + m, 0, n);
					m += n;
				}
			} else {
				size_t h = form == 4 ? n / 2 : n, r;
				r = ZSTD_compress(z, cap, t, h, 3);
				assert_false(ZSTD_isError(r));
				m = r;
				if (form == 4) {
					r = ZSTD_compress(z + m, cap - m, t + h, n - h, 3);
					assert_false(ZSTD_isError(r));
					m += r;
				}
			}
			p = tmpfile_with("plain.csv.gz", (const char *)z, m);
			for (k = 0; k < sizeof(ths) / sizeof(*ths); k++) {
				o.threads = ths[k];
				snprintf(what, sizeof(what), "form %d, %d threads", form, ths[k]);
				if (gwb_csv_load(p, &o, &d, &info))
					fail_msg("%s: %s", what, gwb_errmsg());
				assert_same(ref, &iref, d, &info, what);
				assert_int_equal(info.bytes, n);
				if (form != 2)   /* (the padding is read, not decoded) */
					assert_int_equal(info.compressed_bytes, m);
				if (ths[k] > 1 && info.threads != ths[k])
					fail_msg("%s: read by %d threads", what, info.threads);
				gwb_dataset_free(d);
			}
			/* truncated at two thirds: the same message streamed and from the image */
			if (form != 2) {
				char first[600] = "";
				p = tmpfile_with("cut.csv.gz", (const char *)z, m * 2 / 3);
				for (k = 0; k < sizeof(ths) / sizeof(*ths); k++) {
					o.threads = ths[k];
					assert_int_equal(gwb_csv_load(p, &o, &d, &info), GWB_EPARSE);
					assert_null(d);
					assert_non_null(strstr(gwb_errmsg(), "truncated"));
					if (!k)
						snprintf(first, sizeof(first), "%s", gwb_errmsg());
					else if (strcmp(first, gwb_errmsg()))
						fail_msg("form %d, %d threads: \"%s\", one thread \"%s\"", form,
							 ths[k], gwb_errmsg(), first);
				}
			}
			/* a gzip trailer whose CRC-32 does not match */
			if (form <= 1) {
				z[m - 6] ^= 0x5a;
				p = tmpfile_with("crc.csv.gz", (const char *)z, m);
				for (k = 0; k < sizeof(ths) / sizeof(*ths); k++) {
					o.threads = ths[k];
					assert_int_equal(gwb_csv_load(p, &o, &d, &info), GWB_EPARSE);
					assert_null(d);
					if (!strstr(gwb_errmsg(), "CRC-32"))
						fail_msg("form %d, %d threads: %s", form, ths[k], gwb_errmsg());
				}
			}
		}
		gwb_dataset_free(ref);
	}
	free(t);
	free(z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_random_decimals),
		cmocka_unit_test(test_parse_midpoints),
		cmocka_unit_test(test_csv_numbers_match_strtof),
		cmocka_unit_test(test_parse_forms),
		cmocka_unit_test(test_csv_small),
		cmocka_unit_test(test_csv_block_boundaries),
		cmocka_unit_test(test_csv_parallel),
		cmocka_unit_test(test_csv_parallel_mixed),
		cmocka_unit_test(test_csv_errors),
		cmocka_unit_test(test_transpose_shapes),
		cmocka_unit_test(test_xxh64),
		cmocka_unit_test(test_gwbd_every_byte),
		cmocka_unit_test(test_csv_crossover),
		cmocka_unit_test(test_csv_parallel_free_text),
		cmocka_unit_test(test_csv_wide_ranges),
		cmocka_unit_test(test_synth_threads),
		cmocka_unit_test(test_dataset_take_select),
		cmocka_unit_test(test_csv_progress_and_interrupt),
		cmocka_unit_test(test_csv_compressed_parallel),
	};
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "%s/gwb-test-csv.XXXXXX",
		 getenv("GWB_TEST_TMP") ? getenv("GWB_TEST_TMP") : "/tmp");
	if (!mkdtemp(tmpdir))
		return 1;
	static const char *const files[] = {"s.csv", "r.csv", "e.csv", "g.csv", "g.gwbd",
					    "flip.gwbd", "cut.gwbd", "big.csv", "nums.csv", "blk.csv", "blkerr.csv", "par.csv", "mixed.csv",
					    "plain.csv", "plain.csv.gz", "cut.csv.gz", "crc.csv.gz", NULL};
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; files[i]; i++) {
		char p[600];
		snprintf(p, sizeof(p), "%s/%s", tmpdir, files[i]);
		unlink(p);
	}
	rmdir(tmpdir);
	return rc;
}
