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
#include <fcntl.h>
#include <sys/mman.h>
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
#include "npy.h"
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
	assert_int_equal(gwb_afile_open(&a, at("adir/"), "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "names a folder"));
	/* a folder that does not exist */
	assert_int_equal(gwb_file_save(at("nowhere/x.txt"), "x", 1, "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "nowhere"));
	assert_int_equal(gwb_file_save("", "x", 1, "save"), GWB_EINVAL);
	assert_int_equal(temps(), 0);
}

/* Read everything from fd into buf (NUL-terminated). */
static void read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t k;

	while (n + 1 < cap && (k = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = 0;
}

/* Devices, FIFOs, pipes and /proc magic links (/proc/self/fd/N, /dev/stdout, a memfd) are
 * written in place: no temporary, no rename, nothing created beside them. */
static void test_non_regular_in_place(void **state)
{
	char path[64], buf[256];
	int fds[2], mfd, keep;
	pid_t pid;
	int ws;
	struct stat st;

	(void)state;
	/* a character device */
	assert_int_equal(gwb_file_save("/dev/null", "gone", 4, "write_csv"), GWB_OK);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* a FIFO with a reader */
	assert_int_equal(mkfifo(at("fifo"), 0644), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(at("fifo"), O_RDONLY);
		read_all(fd, buf, sizeof(buf));
		_exit(strcmp(buf, "through the fifo") ? 1 : 0);
	}
	assert_int_equal(gwb_file_save(at("fifo"), "through the fifo", 16, "save"), GWB_OK);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	assert_int_equal(lstat(at("fifo"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	/* a pipe through /proc/self/fd/N */
	assert_int_equal(pipe(fds), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[1]);
	assert_int_equal(gwb_file_save(path, "piped", 5, "write_csv"), GWB_OK);
	close(fds[1]);
	read_all(fds[0], buf, sizeof(buf));
	close(fds[0]);
	assert_string_equal(buf, "piped");
	/* /dev/stdout when stdout is a pipe */
	assert_int_equal(pipe(fds), 0);
	keep = dup(1);
	assert_int_equal(dup2(fds[1], 1), 1);
	close(fds[1]);
	assert_int_equal(gwb_file_save("/dev/stdout", "to stdout", 9, "write_csv"), GWB_OK);
	assert_int_equal(dup2(keep, 1), 1);
	close(keep);
	read_all(fds[0], buf, sizeof(buf));
	close(fds[0]);
	assert_string_equal(buf, "to stdout");
	/* a memfd (a regular file with no name to rename onto): truncated and rewritten */
	mfd = memfd_create("gwb-test", 0);
	assert_true(mfd >= 0);
	assert_int_equal(write(mfd, "old old old", 11), 11);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	assert_int_equal(gwb_file_save(path, "memfd", 5, "save"), GWB_OK);
	assert_int_equal(lseek(mfd, 0, SEEK_SET), 0);
	read_all(mfd, buf, sizeof(buf));
	close(mfd);
	assert_string_equal(buf, "memfd");
	/* a regular file through /proc/self/fd/N: in place (the descriptor keeps its file) */
	put_text(at("viafd.txt"), "old");
	mfd = open(at("viafd.txt"), O_RDONLY);
	assert_true(mfd >= 0);
	assert_int_equal(fstat(mfd, &st), 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	assert_int_equal(gwb_file_save(path, "via fd", 6, "save"), GWB_OK);
	read_all(mfd, buf, sizeof(buf));
	close(mfd);
	assert_string_equal(buf, "via fd");
	{
		struct stat now;
		assert_int_equal(stat(at("viafd.txt"), &now), 0);
		assert_true(now.st_ino == st.st_ino);   /* the same file, not a new one */
	}
	/* nothing was created in / or anywhere else by a "(deleted)" name */
	assert_int_equal(access("/memfd:gwb-test (deleted)", F_OK), -1);
	assert_int_equal(temps(), 0);
}

/* Savers of one path in several processes at once never fail, and the file is always one
 * whole version (the last rename wins): .npy saves (which once used a fixed <path>.tmp). */
static void test_concurrent_savers(void **state)
{
	enum { PROCS = 6, SAVES = 60, ROWS = 50, COLS = 40 };
	pid_t pids[PROCS];
	int p, ws, failed = 0;
	gwb_npy a;
	size_t i;

	(void)state;
	for (p = 0; p < PROCS; p++) {
		pids[p] = fork();
		assert_true(pids[p] >= 0);
		if (pids[p] == 0) {
			static double body[ROWS * COLS];
			int k, bad = 0;
			for (i = 0; i < ROWS * COLS; i++)
				body[i] = p + 1;
			for (k = 0; k < SAVES; k++)
				bad += gwb_npy_write(at("shared.npy"), body, ROWS, COLS, GWB_F64,
						     false) != GWB_OK;
			_exit(bad > 255 ? 255 : bad);
		}
	}
	for (p = 0; p < PROCS; p++) {
		assert_int_equal(waitpid(pids[p], &ws, 0), pids[p]);
		assert_true(WIFEXITED(ws));
		failed += WEXITSTATUS(ws);
	}
	assert_int_equal(failed, 0);
	assert_int_equal(gwb_npy_read(at("shared.npy"), &a), GWB_OK);
	assert_int_equal(a.rows, ROWS);
	assert_int_equal(a.cols, COLS);
	for (i = 1; i < ROWS * COLS; i++)
		assert_true(((double *)a.data)[i] == ((double *)a.data)[0]);
	free(a.data);
	assert_int_equal(temps(), 0);
}

/* .npy saves go through the atomic save: a symlink at the target is written through (the
 * link stays), a planted <path>.tmp link is never written through, a device is written in
 * place rather than replaced, Ctrl-C keeps the old file. */
static void test_npy_save_safe(void **state)
{
	const double v[6] = {1, 2, 3, 4, 5, 6};
	struct stat st;
	gwb_npy a;

	(void)state;
	put_text(at("npy-real.npy"), "old");
	assert_int_equal(symlink("npy-real.npy", at("npy-link.npy")), 0);
	assert_int_equal(gwb_npy_write(at("npy-link.npy"), v, 2, 3, GWB_F64, false), GWB_OK);
	assert_int_equal(lstat(at("npy-link.npy"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(gwb_npy_read(at("npy-real.npy"), &a), GWB_OK);
	assert_true(a.rows == 2 && a.cols == 3 && ((double *)a.data)[5] == 6);
	free(a.data);
	/* a planted <path>.tmp link to a file of ours */
	put_text(at("precious.txt"), "precious");
	assert_int_equal(symlink(at("precious.txt"), at("out.npy.tmp")), 0);
	assert_int_equal(gwb_npy_write(at("out.npy"), v, 3, 2, GWB_F64, false), GWB_OK);
	assert_string_equal(get_text(at("precious.txt")), "precious");
	unlink(at("out.npy.tmp"));
	/* a device at the target: written in place, not replaced */
	assert_int_equal(gwb_npy_write("/dev/null", v, 2, 3, GWB_F64, false), GWB_OK);
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* interrupted: the old file stays */
	gwb_intr_raise();
	assert_int_equal(gwb_npy_write(at("npy-real.npy"), v, 1, 6, GWB_F64, false), GWB_EINTR);
	gwb_intr_clear();
	assert_int_equal(gwb_npy_read(at("npy-real.npy"), &a), GWB_OK);
	assert_true(a.rows == 2 && a.cols == 3);
	free(a.data);
	assert_int_equal(temps(), 0);
}

/* With fs.protected_symlinks = 1 the kernel refuses to follow a link in a sticky
 * world-writable folder that neither we nor the folder's owner own; a save must not get
 * around that by reading the link itself. Needs root (to make a link owned by another user). */
static void test_protected_symlinks(void **state)
{
	char sticky[600], link[700], victim[600];
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "r");
	int on = 0;

	(void)state;
	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	if (geteuid() != 0 || on != 1) {
		fprintf(stderr, "SKIP test_protected_symlinks: needs root and "
			"fs.protected_symlinks = 1 (root: %s, protected_symlinks: %d)\n",
			geteuid() == 0 ? "yes" : "no", on);
		skip();
	}
	snprintf(sticky, sizeof(sticky), "%s", at("sticky"));
	assert_int_equal(mkdir(sticky, 0777), 0);
	assert_int_equal(chmod(sticky, 01777), 0);
	snprintf(victim, sizeof(victim), "%s", at("victim.txt"));
	put_text(victim, "precious");
	snprintf(link, sizeof(link), "%s/out.txt", sticky);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);   /* planted by "nobody" */
	assert_int_equal(gwb_file_save(link, "overwritten", 11, "save"), GWB_EIO);
	assert_non_null(strstr(gwb_errmsg(), "protected_symlinks"));
	assert_string_equal(get_text(victim), "precious");
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
		cmocka_unit_test(test_non_regular_in_place),
		cmocka_unit_test(test_concurrent_savers),
		cmocka_unit_test(test_npy_save_safe),
		cmocka_unit_test(test_protected_symlinks),
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
