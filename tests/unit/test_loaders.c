/* test_loaders.c - hostile input to every reader: the binary loaders (.gwbd, .gwbf, .gwbs,
 * .gwbm) given a valid file whose sizes were raised (checksums fixed up, so the sizes are what
 * stops them) must refuse it naming the field and the limit, before allocating for it; the
 * Matrix Market reader must bound the declared order by the file; the CSV reader must rename
 * repeated header names and read a 1,000,000-column header in time linear in its size.
 * "Before allocating" and "linear" are checked in a child process under an address-space
 * limit (when not built with ASan, whose shadow memory needs the address space) and a CPU-time
 * limit far above what the linear code needs (the quadratic one needed hours). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csv.h"
#include "dataset.h"
#include "dense.h"
#include "dsio.h"
#include "forest.h"
#include "mm.h"
#include "sparse.h"
#include "../fuzz/fixup.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#ifndef HAVE_ASAN
#define HAVE_ASAN 0
#endif

static char dir[256];

static void tpath(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)len + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static void spill(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

static void put32(unsigned char *b, size_t at, uint32_t v) { memcpy(b + at, &v, 4); }
static void put64(unsigned char *b, size_t at, uint64_t v) { memcpy(b + at, &v, 8); }

/* Run fn(arg) in a child under the limits (address space: what the process maps now plus
 * extra_mb; CPU seconds); the child exits with fn's status. Returns that status, or 1000 +
 * the signal that killed the child (SIGXCPU past the CPU limit). */
static int in_child(gwb_status (*fn)(const char *), const char *arg, long extra_mb, int cpu_s,
		    char *msg, size_t msgn)
{
	int pfd[2], ws;
	pid_t pid;
	ssize_t k;

	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl;
		gwb_status st;
		close(pfd[0]);
		if (!HAVE_ASAN && extra_mb) {
			long pages = 0;
			FILE *f = fopen("/proc/self/statm", "r");
			if (f && fscanf(f, "%ld", &pages) == 1) {
				rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) +
							     (rlim_t)extra_mb * 1048576;
				setrlimit(RLIMIT_AS, &rl);
			}
			if (f)
				fclose(f);
		}
		rl.rlim_cur = rl.rlim_max = (rlim_t)cpu_s;
		setrlimit(RLIMIT_CPU, &rl);
		st = fn(arg);
		if (write(pfd[1], gwb_errmsg(), strlen(gwb_errmsg())) < 0)
			_exit(99);
		_exit((int)st);
	}
	close(pfd[1]);
	k = read(pfd[0], msg, msgn - 1);
	msg[k > 0 ? k : 0] = 0;
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 1000 + WTERMSIG(ws);
}

/* A loader that must refuse its file with `want_st`, its message holding every string in
 * want (NULL-terminated), within 64 MiB of address space more than the process holds. */
static void refused(gwb_status (*fn)(const char *), const char *path, int want_st, ...)
{
	char msg[1024];
	int st = in_child(fn, path, 64, 60, msg, sizeof(msg));
	va_list ap;
	const char *w;

	if (st != want_st)
		fail_msg("%s: status %d (want %d): %s", path, st, want_st, msg);
	va_start(ap, want_st);
	while ((w = va_arg(ap, const char *)))
		if (!strstr(msg, w))
			fail_msg("%s: the message lacks \"%s\": %s", path, w, msg);
	va_end(ap);
}

/* --- .gwbd ---------------------------------------------------------------------------------- */

static gwb_status load_gwbd(const char *path)
{
	gwb_dataset *d = NULL;
	gwb_status st = gwb_dsio_load(path, &d);
	gwb_dataset_free(d);
	return st;
}

static gwb_dataset *small_dataset(void)
{
	gwb_dataset *d;
	size_t i;

	assert_int_equal(gwb_dataset_new(16, 2, GWB_TASK_CLASSIFICATION, 2, &d), GWB_OK);
	for (i = 0; i < 16; i++) {
		d->X[i] = (float)i;
		d->X[16 + i] = (float)(i % 3);
		d->y[i] = i >= 8;
	}
	d->names[0] = strdup("a");
	d->names[1] = strdup("b");
	d->target = strdup("y");
	d->class_names[0] = strdup("no");
	d->class_names[1] = strdup("yes");
	return d;
}

static void test_gwbd_sizes(void **state)
{
	char p[300], q[300];
	gwb_dataset *d = small_dataset();
	unsigned char *b;
	size_t n;
	(void)state;

	tpath(p, sizeof(p), "ok.gwbd");
	assert_int_equal(gwb_dsio_save(d, p), GWB_OK);
	gwb_dataset_free(d);
	b = slurp(p, &n);
	tpath(q, sizeof(q), "bad.gwbd");
	/* 2^24 features, no rows: the old check let it through to 335 MB of names */
	put64(b, 16, 0);
	put32(b, 24, 1u << 24);
	fix_gwbd(b, n);
	spill(q, b, n);
	refused(load_gwbd, q, GWB_ECORRUPT, "features = 16777216", "at most", NULL);
	/* too many classes for the payload */
	free(b);
	b = slurp(p, &n);
	put32(b, 32, 65536);
	fix_gwbd(b, n);
	spill(q, b, n);
	refused(load_gwbd, q, GWB_ECORRUPT, "classes = 65536", "at most", NULL);
	/* rows */
	free(b);
	b = slurp(p, &n);
	put64(b, 16, (uint64_t)1 << 40);
	fix_gwbd(b, n);
	spill(q, b, n);
	refused(load_gwbd, q, GWB_ECORRUPT, "rows = 1099511627776", "at most", NULL);
	free(b);
}

/* --- .gwbf ---------------------------------------------------------------------------------- */

static gwb_status load_gwbf(const char *path)
{
	gwb_forest *f = NULL;
	gwb_status st = gwb_forest_load(path, &f);
	gwb_forest_free(f);
	return st;
}

static void test_gwbf_sizes(void **state)
{
	static const struct {
		size_t at;
		int wide;
		uint64_t v;
		const char *want;
	} cases[] = {
		{26, 0, 1u << 24, "features = 16777216"},   /* 970 bytes reached 528 MB */
		{42, 0, 1u << 24, "trees = 16777217"},
		{54, 1, (uint64_t)1 << 30, "nodes = 1073741824"},
	};
	char p[300], q[300];
	gwb_dataset *d = small_dataset();
	gwb_forest *f = NULL;
	gwb_rf_params prm;
	unsigned char *b;
	size_t n, i;
	(void)state;

	gwb_rf_params_init(&prm);
	prm.trees = 2;
	prm.threads = 1;
	prm.progress = false;
	prm.backend = GWB_BACKEND_CPU;
	assert_int_equal(gwb_rf_train(d, &prm, &f), GWB_OK);
	tpath(p, sizeof(p), "ok.gwbf");
	assert_int_equal(gwb_forest_save(f, p), GWB_OK);
	gwb_forest_free(f);
	gwb_dataset_free(d);
	tpath(q, sizeof(q), "bad.gwbf");
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		b = slurp(p, &n);
		if (cases[i].wide)
			put64(b, cases[i].at, cases[i].v);
		else
			put32(b, cases[i].at, (uint32_t)cases[i].v);
		fix_gwbf(b, n, 0);
		spill(q, b, n);
		refused(load_gwbf, q, GWB_ECORRUPT, cases[i].want, "hold at most", NULL);
		free(b);
	}
	/* classes (and outputs with them) */
	b = slurp(p, &n);
	put32(b, 30, 1u << 24);
	put32(b, 34, 1u << 24);
	fix_gwbf(b, n, 0);
	spill(q, b, n);
	refused(load_gwbf, q, GWB_ECORRUPT, "classes = 16777216", "hold at most", NULL);
	free(b);
}

/* --- .gwbs ---------------------------------------------------------------------------------- */

static gwb_status load_gwbs(const char *path)
{
	gwb_csr *A = NULL;
	gwb_status st = gwb_csr_load(path, &A);
	gwb_csr_free(A);
	return st;
}

static void test_gwbs_sizes(void **state)
{
	char p[300], q[300];
	gwb_csr *A = NULL;
	unsigned char *b;
	size_t n;
	(void)state;

	assert_int_equal(gwb_csr_laplacian1d(8, &A), GWB_OK);
	tpath(p, sizeof(p), "ok.gwbs");
	assert_int_equal(gwb_csr_save(A, p), GWB_OK);
	gwb_csr_free(A);
	tpath(q, sizeof(q), "bad.gwbs");
	b = slurp(p, &n);
	put64(b, 16, (uint64_t)1 << 40);   /* cols: no bytes in the file, 8 TB in a product */
	fix_tail_fnv(b, n);
	spill(q, b, n);
	refused(load_gwbs, q, GWB_ECORRUPT, "cols = 1099511627776", "at most 1048576", NULL);
	free(b);
	b = slurp(p, &n);
	put64(b, 8, (uint64_t)1 << 28);    /* rows */
	fix_tail_fnv(b, n);
	spill(q, b, n);
	refused(load_gwbs, q, GWB_ECORRUPT, "rows = 268435456", NULL);
	free(b);
}

/* --- .gwbm ---------------------------------------------------------------------------------- */

static gwb_status load_gwbm(const char *path)
{
	gwb_matrix *A = NULL;
	gwb_status st = gwb_matrix_load(path, &A);
	gwb_matrix_free(A);
	return st;
}

static void test_gwbm_sizes(void **state)
{
	char p[300], q[300];
	gwb_matrix *A = NULL;
	unsigned char *b, c[56];
	size_t n;
	(void)state;

	assert_int_equal(gwb_matrix_new(3, 3, GWB_F64, GWB_COL_MAJOR, &A), GWB_OK);
	tpath(p, sizeof(p), "ok.gwbm");
	assert_int_equal(gwb_matrix_save(A, p), GWB_OK);
	gwb_matrix_free(A);
	tpath(q, sizeof(q), "bad.gwbm");
	b = slurp(p, &n);
	assert_int_equal(n, 48 + 72 + 8);
	/* 2^32 x 2^32 with no data: rows * cols wrapped to 0 in the old check */
	memcpy(c, b, 48);
	put64(c, 24, (uint64_t)1 << 32);
	put64(c, 32, (uint64_t)1 << 32);
	fix_tail_fnv(c, sizeof(c));
	spill(q, c, sizeof(c));
	refused(load_gwbm, q, GWB_ECORRUPT, "rows = 4294967296", "at most 0", NULL);
	put64(b, 40, 1000);   /* count */
	fix_tail_fnv(b, n);
	spill(q, b, n);
	refused(load_gwbm, q, GWB_ECORRUPT, "count = 1000", "at most 1", NULL);
	free(b);
}

/* --- Matrix Market -------------------------------------------------------------------------- */

static gwb_status load_mm(const char *path)
{
	gwb_csr *A = NULL;
	gwb_matrix *D = NULL;
	gwb_status st = gwb_mm_read(path, &A, &D);
	gwb_csr_free(A);
	gwb_matrix_free(D);
	return st;
}

static void test_mm_declared_order(void **state)
{
	static const char big[] = "%%MatrixMarket matrix coordinate real general\n"
				  "268435456 268435456 1\n1 1 1\n";
	static const char nnz[] = "%%MatrixMarket matrix coordinate real general\n"
				  "4 4 8\n1 1 1\n2 2 1\n3 3 1\n4 4 1\n";
	char p[300];
	(void)state;

	tpath(p, sizeof(p), "big.mtx");
	spill(p, big, strlen(big));
	/* touched 4 GB before */
	refused(load_mm, p, GWB_EPARSE, "268435456 rows", "74-byte file",
		"at most 16777216", NULL);
	/* an nnz the file cannot hold: refused with the count it does hold */
	tpath(p, sizeof(p), "nnz.mtx");
	spill(p, nnz, strlen(nnz));
	refused(load_mm, p, GWB_EPARSE, "after 4 of the 8 entries", NULL);
}

/* --- CSV header ----------------------------------------------------------------------------- */

static gwb_status load_csv(const char *path)
{
	gwb_dataset *d = NULL;
	gwb_csv_opts o;
	gwb_status st;

	gwb_csv_opts_init(&o);
	o.progress = false;
	st = gwb_csv_load(path, &o, &d, NULL);
	gwb_dataset_free(d);
	return st;
}

static void write_wide(const char *path, int n, int same)
{
	FILE *f = fopen(path, "w");
	int j, r;

	assert_non_null(f);
	for (j = 0; j < n; j++)
		same ? fprintf(f, "x,") : fprintf(f, "c%d,", j);
	fprintf(f, "y\n");
	for (r = 0; r < 2; r++) {
		for (j = 0; j < n; j++)
			fputs(r ? "2," : "1,", f);
		fprintf(f, "%d\n", r);
	}
	fclose(f);
}

static void test_csv_wide_header(void **state)
{
	char p[300], msg[512];
	int st;
	(void)state;

	/* quadratic before: 4,000 identical names took 3 minutes, 200,000 distinct ones more
	 * than a minute; 60 CPU seconds are a bound, not a timing */
	tpath(p, sizeof(p), "wide.csv");
	write_wide(p, 1000000, 0);
	st = in_child(load_csv, p, 0, 60, msg, sizeof(msg));
	if (st != GWB_OK)
		fail_msg("1,000,000 columns: status %d: %s", st, msg);
	tpath(p, sizeof(p), "same.csv");
	write_wide(p, 200000, 1);
	st = in_child(load_csv, p, 0, 60, msg, sizeof(msg));
	if (st != GWB_OK)
		fail_msg("200,000 repeated names: status %d: %s", st, msg);
}

static void test_csv_repeated_names(void **state)
{
	static const char text[] = "x,x,x.2,x,,b,b,y\n1,2,3,4,5,6,7,0\n2,3,4,5,6,7,8,1\n";
	static const char *const want[] = {"x", "x.2", "x.2.2", "x.3", "col5", "b", "b.2"};
	char p[300];
	gwb_dataset *d = NULL;
	gwb_csv_opts o;
	int j;
	(void)state;

	tpath(p, sizeof(p), "names.csv");
	spill(p, text, strlen(text));
	gwb_csv_opts_init(&o);
	o.progress = false;
	assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_OK);
	assert_int_equal(d->features, 7);
	for (j = 0; j < 7; j++)
		assert_string_equal(d->names[j], want[j]);
	gwb_dataset_free(d);
	/* target and categorical columns are found by name */
	{
		static const char *const cat[] = {"b.2"};
		o.target = "x.2.2";
		o.categorical = cat;
		o.n_categorical = 1;
		assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_OK);
		assert_string_equal(d->target, "x.2.2");
		assert_int_equal(d->cat_count[5], 2);
		gwb_dataset_free(d);
		o.target = "nope";
		assert_int_equal(gwb_csv_load(p, &o, &d, NULL), GWB_EINVAL);
		assert_non_null(strstr(gwb_errmsg(), "unknown target \"nope\""));
	}
}

/* --- column lookup by name ------------------------------------------------------------------ */

static gwb_status find_many_wide(const char *unused)
{
	enum { F = 200000 };
	gwb_dataset *d;
	const char **q = malloc(F * sizeof(*q));
	int *out = malloc(F * sizeof(*out)), j;
	char b[32];
	gwb_status st;
	(void)unused;

	if (!q || !out || gwb_dataset_new(1, F, GWB_TASK_REGRESSION, 0, &d))
		return GWB_ENOMEM;
	for (j = 0; j < F; j++) {
		snprintf(b, sizeof(b), "f%d", j == F - 1 ? 7 : j);   /* the last repeats "f7" */
		d->names[j] = strdup(b);
	}
	for (j = 0; j < F; j++) {
		snprintf(b, sizeof(b), "f%d", F - 1 - j);
		q[j] = strdup(b);
	}
	q[1] = NULL;
	out[1] = 12345;
	st = gwb_dataset_find_many(d, q, F, out);
	/* reversed: query j is feature F-1-j; "f199999" is nobody, "f7" is the first one */
	if (!st && (out[0] != -1 || out[1] != 12345 || out[2] != F - 3 || out[F - 8] != 7))
		st = gwb_error(GWB_EINVAL, "wrong answers: %d %d %d %d", out[0], out[1], out[2],
			       out[F - 8]);
	gwb_dataset_free(d);
	return st;
}

static void test_find_many(void **state)
{
	char msg[256];
	int st;
	(void)state;

	/* one name at a time is 200,000 x 200,000 comparisons: past the CPU limit */
	st = in_child(find_many_wide, NULL, 0, 60, msg, sizeof(msg));
	if (st != GWB_OK)
		fail_msg("find_many: status %d: %s", st, msg);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/loadersXXXXXX", getenv("GWB_TEST_TMP") ? getenv("GWB_TEST_TMP")
										: "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gwbd_sizes),
		cmocka_unit_test(test_gwbf_sizes),
		cmocka_unit_test(test_gwbs_sizes),
		cmocka_unit_test(test_gwbm_sizes),
		cmocka_unit_test(test_mm_declared_order),
		cmocka_unit_test(test_csv_wide_header),
		cmocka_unit_test(test_csv_repeated_names),
		cmocka_unit_test(test_find_many),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
