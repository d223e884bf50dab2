/* test_history.c - the REPL's history file shared by concurrent REPLs: two processes append
 * at the size cap at the same time and no line is lost (each one's surviving lines are the
 * newest, without gaps, and the file holds the cap, plus at most the tenth it may run over). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "repl.h"

#define CAP 200
#define PER 1500
#define PROCS 3

static char dir[256], path[512];

static void appender(int id)
{
	char line[64];
	int i;

	for (i = 1; i <= PER; i++) {
		snprintf(line, sizeof(line), "p%d = %d", id, i);
		if (gwb_history_append(path, line, CAP))
			_exit(2);
	}
	_exit(0);
}

static void test_concurrent_appends_at_the_cap(void **state)
{
	pid_t pid[PROCS];
	int k, ws, n = 0, last[PROCS], first[PROCS], count[PROCS];
	char line[128];
	FILE *f;

	(void)state;
	for (k = 0; k < PROCS; k++) {
		pid[k] = fork();
		assert_true(pid[k] >= 0);
		if (pid[k] == 0)
			appender(k);
	}
	for (k = 0; k < PROCS; k++) {
		assert_int_equal(waitpid(pid[k], &ws, 0), pid[k]);
		assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
		last[k] = 0;
		first[k] = 0;
		count[k] = 0;
	}
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int id, v;
		if (sscanf(line, "p%d = %d", &id, &v) != 2 || id < 0 || id >= PROCS)
			fail_msg("line %d is damaged: %s", n + 1, line);
		/* each process's lines come in its own order, one after another */
		if (last[id] && v != last[id] + 1)
			fail_msg("p%d: line %d follows %d: lines were lost", id, v, last[id]);
		if (!first[id])
			first[id] = v;
		last[id] = v;
		count[id]++;
		n++;
	}
	fclose(f);
	assert_in_range(n, CAP, CAP + CAP / 10);
	for (k = 0; k < PROCS; k++)
		if (count[k] && last[k] != PER)
			fail_msg("p%d: its newest line %d is missing (kept up to %d)", k, PER, last[k]);
}

static void test_cap_and_multiline_entries(void **state)
{
	char p2[600], line[64];
	FILE *f;
	int i, n = 0;
	struct stat st;

	(void)state;
	snprintf(p2, sizeof(p2), "%s/h2", dir);
	for (i = 1; i <= 30; i++) {
		snprintf(line, sizeof(line), "for i = 1, %d do\n  x = i\nend", i);
		assert_int_equal(gwb_history_append(p2, line, 10), 0);
	}
	f = fopen(p2, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	assert_in_range(n, 10, 11);
	assert_int_equal(stat(p2, &st), 0);
	assert_int_equal(st.st_mode & 077, 0);   /* private: only the user reads it */
	/* a history file in a folder that does not exist: an error, not a crash */
	snprintf(p2, sizeof(p2), "%s/none/h", dir);
	assert_int_equal(gwb_history_append(p2, "x", 10), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_appends_at_the_cap),
		cmocka_unit_test(test_cap_and_multiline_entries),
	};
	const char *t = getenv("TMPDIR");
	int rc;

	snprintf(dir, sizeof(dir), "%s/gwb-history-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/history", dir);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (!rc) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			rc = 1;
	}
	return rc;
}
