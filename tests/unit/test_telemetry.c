/* test_telemetry.c - unit tests for nested progress runs, phases, process stats, the kernel
 * registry and the non-blocking kernel visit. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intr.h"
#include "prof.h"

struct ev { int event, depth; char label[32], parent[32]; };
static struct ev evs[64];
static int nev;

static void rec(const gwb_progress *p, void *ctx)
{
	(void)ctx;
	if (p->event == GWB_PROGRESS_UPDATE || nev == 64)
		return;
	evs[nev].event = p->event;
	evs[nev].depth = p->depth;
	snprintf(evs[nev].label, sizeof(evs[nev].label), "%s", p->label);
	snprintf(evs[nev].parent, sizeof(evs[nev].parent), "%s", p->parent_label ? p->parent_label : "");
	nev++;
}

static void test_nested_runs(void **state)
{
	gwb_progress now;
	char label[64];
	(void)state;
	nev = 0;
	gwb_progress_set_sink(rec, NULL);
	gwb_progress_begin("cv", 3);
	gwb_progress_update(1, NULL, 0);
	gwb_progress_begin("train", 10);
	assert_true(gwb_progress_get(&now, label, sizeof(label)));
	assert_string_equal(label, "train");
	assert_int_equal(now.depth, 1);
	gwb_progress_end();
	assert_true(gwb_progress_get(&now, label, sizeof(label)));
	assert_string_equal(label, "cv");
	gwb_progress_end();
	assert_false(gwb_progress_get(&now, label, sizeof(label)));
	gwb_progress_end();  /* an unmatched end is harmless */
	gwb_progress_set_sink(NULL, NULL);
	assert_int_equal(nev, 4);
	assert_int_equal(evs[0].event, GWB_PROGRESS_BEGIN);
	assert_int_equal(evs[0].depth, 0);
	assert_int_equal(evs[1].event, GWB_PROGRESS_BEGIN);
	assert_int_equal(evs[1].depth, 1);
	assert_string_equal(evs[1].parent, "cv");
	assert_int_equal(evs[2].event, GWB_PROGRESS_END);
	assert_string_equal(evs[2].label, "train");
	assert_int_equal(evs[3].event, GWB_PROGRESS_END);
	assert_int_equal(evs[3].depth, 0);
}

static void test_deep_nesting_is_bounded(void **state)
{
	gwb_progress now;
	char label[64];
	int i;
	(void)state;
	for (i = 0; i < 10; i++)
		gwb_progress_begin("deep", 1);
	assert_true(gwb_progress_get(&now, label, sizeof(label)));
	for (i = 0; i < 10; i++)
		gwb_progress_end();
	assert_false(gwb_progress_get(&now, label, sizeof(label)));
}

struct phase_seen { double ms; long count; int found; };
static void phase_cb(const char *name, double ms, long count, void *ctx)
{
	struct phase_seen *p = ctx;
	if (!strcmp(name, "quantize")) {
		p->ms = ms;
		p->count = count;
		p->found++;
	}
}

static void test_phases_accumulate(void **state)
{
	struct phase_seen p = {0, 0, 0};
	(void)state;
	gwb_prof_reset();
	gwb_prof_phase("quantize", 10);
	gwb_prof_phase("grow", 5);
	gwb_prof_phase("quantize", 2.5);
	gwb_progress_begin("quantize", 1);  /* a progress run is a phase too */
	gwb_progress_end();
	gwb_prof_each_phase(phase_cb, &p);
	assert_int_equal(p.found, 1);
	assert_int_equal(p.count, 3);
	assert_true(p.ms >= 12.5 && p.ms < 1000);
	gwb_prof_reset();
	p.found = 0;
	gwb_prof_each_phase(phase_cb, &p);
	assert_int_equal(p.found, 0);
}

static void test_process_stats(void **state)
{
	gwb_proc_stat s;
	volatile double x = 0;
	char *big;
	(void)state;
	gwb_prof_proc(&s);
	assert_true(s.rss_bytes > 0);
	assert_true(s.rss_peak_bytes >= s.rss_bytes);
	assert_true(s.threads >= 1);
	big = malloc(64 << 20);
	assert_non_null(big);
	memset(big, 1, 64 << 20);
	for (int i = 0; i < 2000000; i++)
		x += i;
	{
		gwb_proc_stat t;
		gwb_prof_proc(&t);
		assert_true(t.rss_bytes >= s.rss_bytes + (32u << 20));
		assert_true(t.cpu_s >= s.cpu_s);
	}
	free(big);
}

static void kern(void) {}
static void other(void) {}

static void test_kernel_registry(void **state)
{
	(void)state;
	gwb_prof_register_kernel("unit_kern", (const void *)kern);
	gwb_prof_register_kernel("unit_kern", (const void *)kern);  /* once only */
	gwb_prof_register_kernel("unit_other", (const void *)other);
	assert_ptr_equal(gwb_prof_kernel_fn("unit_kern"), (const void *)kern);
	assert_ptr_equal(gwb_prof_kernel_fn("unit_other"), (const void *)other);
	assert_null(gwb_prof_kernel_fn("unit_missing"));
	gwb_prof_reset();  /* the registry outlives a reset */
	assert_ptr_equal(gwb_prof_kernel_fn("unit_kern"), (const void *)kern);
}

static int seen;
static void kcb(const gwb_kernel_stat *k, void *ctx)
{
	(void)ctx;
	if (!strcmp(k->name, "nowait"))
		seen = (int)k->launches;
}

static void test_nowait_visit_and_switch(void **state)
{
	int g[3] = {1, 1, 1}, b[3] = {128, 1, 1}, pending = -1;
	(void)state;
	gwb_prof_reset();
	gwb_prof_kernel("nowait", g, b, 0, 0, 16, 1.0, 1e6, 0.25, NULL, NULL);
	gwb_prof_kernel("nowait", g, b, 0, 0, 16, 1.0, 1e6, 0.25, NULL, NULL);
	seen = 0;
	gwb_prof_each_kernel_nowait(kcb, NULL, &pending);
	assert_int_equal(seen, 2);
	assert_int_equal(pending, 0);
	assert_true(gwb_prof_enabled());
	gwb_prof_set_enabled(false);
	assert_false(gwb_prof_enabled());
	gwb_prof_set_enabled(true);
	gwb_prof_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_runs),
		cmocka_unit_test(test_deep_nesting_is_bounded),
		cmocka_unit_test(test_phases_accumulate),
		cmocka_unit_test(test_process_stats),
		cmocka_unit_test(test_kernel_registry),
		cmocka_unit_test(test_nowait_visit_and_switch),
	};
	return cmocka_run_group_tests_name("telemetry", tests, NULL, NULL);
}
