/* test_fileio.c - the atomic-save helper (fileio.h) and every saver that uses it: new files,
 * replacement, permissions kept, symlinks written through, directories/devices/FIFOs refused,
 * abort and Ctrl-C leave the old file and no temporary, temporaries of killed saves swept. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csv.h"
#include "dataset.h"
#include "dense.h"
#include "dsio.h"
#include "fileio.h"
#include "forest.h"
#include "intr.h"
#include "mm.h"
#include "sparse.h"
#include "synth.h"

static char dir[256];

static const char *at(const char *name)
{
	static char p[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

static void put_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	fputs(s, f);
	assert_int_equal(fclose(f), 0);
}

static char *get_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Entries of the test folder that are save temporaries. */
static int temps(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strstr(e->d_name, ".gwbtmp-") != NULL;
	closedir(d);
	return n;
}

static void test_new_and_replace(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(gwb_file_save(at("a.txt"), "first", 5, "save"), GWB_OK);
	assert_string_equal(get_text(at("a.txt")), "first");
	assert_int_equal(chmod(at("a.txt"), 0640), 0);
	assert_int_equal(gwb_file_save(at("a.txt"), "second", 6, "save"), GWB_OK);
	assert_string_equal(get_text(at("a.txt")), "second");
	assert_int_equal(stat(at("a.txt"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);   /* the old file's permissions */
	/* a new file: 0666 less the umask, as open() would make it */
	{
		mode_t um = umask(027);
		assert_int_equal(gwb_file_save(at("b.txt"), "x", 1, "save"), GWB_OK);
		umask(um);
		assert_int_equal(stat(at("b.txt"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0640);
	}
	assert_int_equal(temps(), 0);
}

static void test_symlink_written_through(void **state)
{
	struct stat st;

	(void)state;
	assert_int_equal(mkdir(at("sub"), 0755), 0);
	put_text(at("sub/real.txt"), "old");
	assert_int_equal(symlink("sub/real.txt", at("link.txt")), 0);   /* relative */
	assert_int_equal(symlink("link.txt", at("link2.txt")), 0);        /* a chain */
	assert_int_equal(gwb_file_save(at("link2.txt"), "new", 3, "save"), GWB_OK);
	assert_int_equal(lstat(at("link.txt"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(at("link2.txt"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(get_text(at("sub/real.txt")), "new");
	/* a dangling link: its target is created, the link kept */
	assert_int_equal(symlink("sub/made.txt", at("dangling.txt")), 0);
	assert_int_equal(gwb_file_save(at("dangling.txt"), "made", 4, "save"), GWB_OK);
	assert_int_equal(lstat(at("dangling.txt"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_string_equal(get_text(at("sub/made.txt")), "made");
	/* a loop is refused */
	assert_int_equal(symlink("loop2", at("loop1")), 0);
	assert_int_equal(symlink("loop1", at("loop2")), 0);
	assert_int_equal(gwb_file_save(at("loop1"), "x", 1, "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "symbolic links"));
	assert_int_equal(temps(), 0);
}

static void test_non_regular_refused(void **state)
{
	gwb_afile a;

	(void)state;
	assert_int_equal(mkdir(at("adir"), 0755), 0);
	assert_int_equal(gwb_afile_open(&a, at("adir"), "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "is a directory, not a regular file"));
	assert_int_equal(gwb_afile_open(&a, "/dev/null", "write_csv"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "write_csv: /dev/null is a character device"));
	assert_int_equal(mkfifo(at("fifo"), 0644), 0);
	assert_int_equal(gwb_afile_open(&a, at("fifo"), "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "a FIFO"));
	/* a folder that does not exist */
	assert_int_equal(gwb_file_save(at("nowhere/x.txt"), "x", 1, "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "nowhere"));
	assert_int_equal(gwb_file_save("", "x", 1, "save"), GWB_EINVAL);
	assert_int_equal(temps(), 0);
}

static void test_abort_and_interrupt_keep_old(void **state)
{
	gwb_afile a;

	(void)state;
	put_text(at("keep.txt"), "old");
	assert_int_equal(gwb_afile_open(&a, at("keep.txt"), "save"), GWB_OK);
	fputs("partial", a.fp);
	assert_int_equal(temps(), 1);
	gwb_afile_abort(&a);
	assert_string_equal(get_text(at("keep.txt")), "old");
	assert_int_equal(temps(), 0);
	/* Ctrl-C after everything was written: commit refuses */
	assert_int_equal(gwb_afile_open(&a, at("keep.txt"), "save"), GWB_OK);
	fputs("all of it", a.fp);
	gwb_intr_raise();
	assert_int_equal(gwb_afile_commit(&a), GWB_EINTR);
	gwb_intr_clear();
	assert_non_null(strstr(gwb_errmsg(), "interrupted"));
	assert_non_null(strstr(gwb_errmsg(), "was left as it was"));
	assert_string_equal(get_text(at("keep.txt")), "old");
	assert_int_equal(temps(), 0);
	/* Ctrl-C while writing */
	gwb_intr_raise();
	assert_int_equal(gwb_file_save(at("keep.txt"), "new", 3, "save"), GWB_EINTR);
	gwb_intr_clear();
	assert_string_equal(get_text(at("keep.txt")), "old");
	assert_int_equal(temps(), 0);
	/* a new file that is interrupted is not created */
	gwb_intr_raise();
	assert_int_equal(gwb_file_save(at("never.txt"), "new", 3, "save"), GWB_EINTR);
	gwb_intr_clear();
	assert_null(get_text(at("never.txt")));
}

static void test_stale_temporaries_swept(void **state)
{
	char dead[128], live[128];
	pid_t pid = fork();
	int ws;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &ws, 0), pid);   /* pid is gone now */
	snprintf(dead, sizeof(dead), ".s.txt.gwbtmp-%ld-AbCdEf", (long)pid);
	snprintf(live, sizeof(live), ".s.txt.gwbtmp-%ld-AbCdEf", (long)getppid());
	put_text(at(dead), "half a save");
	put_text(at(live), "another process's save in progress");
	assert_int_equal(gwb_file_save(at("s.txt"), "ok", 2, "save"), GWB_OK);
	assert_null(get_text(at(dead)));
	assert_non_null(get_text(at(live)));
	unlink(at(live));
	assert_int_equal(temps(), 0);
}

static gwb_dataset *small_dataset(void)
{
	gwb_synth_opts o;
	gwb_dataset *d = NULL;

	gwb_synth_opts_init(&o, GWB_SYNTH_CLASSIFICATION);
	o.rows = 300000;   /* several write_csv blocks */
	o.features = 4;
	o.threads = 1;
	assert_int_equal(gwb_synth(&o, &d), GWB_OK);
	return d;
}

static int sink_calls;
static void raise_on_progress(const gwb_progress *p, void *ctx)
{
	(void)ctx;
	if (p->event == GWB_PROGRESS_UPDATE && ++sink_calls == 1)
		gwb_intr_raise();
}

/* Every saver, interrupted: the old file stays, no temporary is left, the error says so. */
static void test_savers_interrupted(void **state)
{
	gwb_dataset *d = small_dataset();
	gwb_matrix *M = NULL;
	gwb_csr *S = NULL;
	gwb_forest *f = NULL;
	gwb_rf_params p;
	const char *names[] = {"d.gwbd", "d.csv", "m.gwbm", "m.mtx", "s.mtx", "s.gwbs", "f.gwbf",
			       "f.json"};
	gwb_status st[8];
	int k;

	(void)state;
	assert_int_equal(gwb_matrix_laplacian1d(50, GWB_F64, &M), GWB_OK);
	assert_int_equal(gwb_csr_laplacian1d(50, &S), GWB_OK);
	gwb_rf_params_init(&p);
	p.trees = 2;
	p.depth = 3;
	assert_int_equal(gwb_rf_train(d, &p, &f), GWB_OK);
	for (k = 0; k < 8; k++)
		put_text(at(names[k]), "old");
	gwb_intr_raise();
	st[0] = gwb_dsio_save(d, at(names[0]));
	gwb_intr_raise();
	st[1] = gwb_csv_write(d, at(names[1]), ',', -1, 1);
	gwb_intr_raise();
	st[2] = gwb_matrix_save(M, at(names[2]));
	gwb_intr_raise();
	st[3] = gwb_mm_write_dense(M, at(names[3]), "c");
	gwb_intr_raise();
	st[4] = gwb_mm_write_csr(S, at(names[4]), "c");
	gwb_intr_raise();
	st[5] = gwb_csr_save(S, at(names[5]));
	gwb_intr_raise();
	st[6] = gwb_forest_save(f, at(names[6]));
	gwb_intr_raise();
	st[7] = gwb_forest_export_json(f, at(names[7]));
	gwb_intr_clear();
	for (k = 0; k < 8; k++) {
		if (st[k] != GWB_EINTR)
			fail_msg("%s: status %d, want GWB_EINTR", names[k], (int)st[k]);
		assert_string_equal(get_text(at(names[k])), "old");
	}
	assert_int_equal(temps(), 0);
	/* write_csv interrupted mid-way (after its first block of rows) */
	sink_calls = 0;
	gwb_progress_set_sink(raise_on_progress, NULL);
	assert_int_equal(gwb_csv_write(d, at(names[1]), ',', -1, 1), GWB_EINTR);
	gwb_progress_set_sink(NULL, NULL);
	gwb_intr_clear();
	assert_true(sink_calls >= 1);
	assert_non_null(strstr(gwb_errmsg(), "write_csv: interrupted after"));
	assert_non_null(strstr(gwb_errmsg(), "was left as it was"));
	assert_string_equal(get_text(at(names[1])), "old");
	assert_int_equal(temps(), 0);
	/* and uninterrupted, each replaces the old file */
	assert_int_equal(gwb_dsio_save(d, at(names[0])), GWB_OK);
	assert_int_equal(gwb_csv_write(d, at(names[1]), ',', -1, 1), GWB_OK);
	assert_int_equal(gwb_matrix_save(M, at(names[2])), GWB_OK);
	assert_int_equal(gwb_mm_write_dense(M, at(names[3]), "c"), GWB_OK);
	assert_int_equal(gwb_mm_write_csr(S, at(names[4]), "c"), GWB_OK);
	assert_int_equal(gwb_csr_save(S, at(names[5])), GWB_OK);
	assert_int_equal(gwb_forest_save(f, at(names[6])), GWB_OK);
	assert_int_equal(gwb_forest_export_json(f, at(names[7])), GWB_OK);
	for (k = 0; k < 8; k++)
		assert_string_not_equal(get_text(at(names[k])), "old");
	assert_int_equal(temps(), 0);
	/* a directory in the way: refused by each, nothing written */
	assert_int_equal(mkdir(at("sv"), 0755), 0);
	assert_int_equal(gwb_dsio_save(d, at("sv")), GWB_EIO);
	assert_int_equal(gwb_csv_write(d, at("sv"), ',', -1, 1), GWB_EIO);
	assert_int_equal(gwb_forest_save(f, at("sv")), GWB_EIO);
	assert_int_equal(gwb_matrix_save(M, at("sv")), GWB_EIO);
	assert_int_equal(gwb_csr_save(S, at("sv")), GWB_EIO);
	assert_int_equal(gwb_mm_write_csr(S, at("sv"), NULL), GWB_EIO);
	assert_int_equal(temps(), 0);
	gwb_forest_free(f);
	gwb_csr_free(S);
	gwb_matrix_free(M);
	gwb_dataset_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_and_replace),
		cmocka_unit_test(test_symlink_written_through),
		cmocka_unit_test(test_non_regular_refused),
		cmocka_unit_test(test_abort_and_interrupt_keep_old),
		cmocka_unit_test(test_stale_temporaries_swept),
		cmocka_unit_test(test_savers_interrupted),
	};
	const char *t = getenv("TMPDIR");
	int rc;

	snprintf(dir, sizeof(dir), "%s/gwb-fileio-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (!rc) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			rc = 1;
	}
	return rc;
}
