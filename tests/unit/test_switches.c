/* test_switches.c - unit tests for the switch registry (switches.c): names, defaults, the
 * environment mapping, the levels and their order, nested per-call levels, read counts; and
 * the telemetry's measured bytes and roofline verdict (prof.c). */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof.h"
#include "status.h"
#include "switches.h"

static void test_registry(void **state)
{
	(void)state;
	for (int i = 0; i < GWB_SW_COUNT; i++) {
		const gwb_switch_info *s = gwb_switch_get(i);
		assert_non_null(s);
		assert_int_equal(gwb_switch_find(s->name), i);
		assert_true(strlen(s->desc) > 10 && !strchr(s->desc, '\n'));
		assert_true(s->backends & (GWB_SW_CPU | GWB_SW_GPU));
		assert_true(s->def);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(gwb_switch_get(j)->name, s->name);
	}
	assert_null(gwb_switch_get(GWB_SW_COUNT));
	assert_null(gwb_switch_get(-1));
	assert_int_equal(gwb_switch_find("nope"), -1);
	assert_int_equal(gwb_switch_find(NULL), -1);
	assert_int_equal(gwb_switch_find("rf.subtract"), GWB_SW_RF_SUBTRACT);
	assert_int_equal(gwb_switch_find("transpose.pad"), GWB_SW_TRANSPOSE_PAD);
	assert_int_equal(gwb_switch_unknown("f", "rf.subtrac"), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "f: unknown switch \"rf.subtrac\""));
	assert_non_null(strstr(gwb_errmsg(), "copy.pinned"));
}

static void test_env_mapping(void **state)
{
	const char *src;
	(void)state;
	unsetenv("GWB_RF_SUBTRACT");
	assert_true(gwb_switch_peek(GWB_SW_RF_SUBTRACT, &src));
	assert_string_equal(src, "default");
	setenv("GWB_RF_SUBTRACT", "0", 1);
	assert_false(gwb_switch_peek(GWB_SW_RF_SUBTRACT, &src));
	assert_string_equal(src, "env");
	setenv("GWB_RF_SUBTRACT", "garbage", 1);   /* not a setting: ignored */
	assert_true(gwb_switch_peek(GWB_SW_RF_SUBTRACT, &src));
	assert_string_equal(src, "default");
	unsetenv("GWB_RF_SUBTRACT");
	setenv("GWB_RF_PREDICT_VOTE", "atomic", 1);
	assert_false(gwb_switch_on(GWB_SW_RF_PREDICT_VOTE));
	setenv("GWB_RF_PREDICT_VOTE", "block", 1);
	assert_true(gwb_switch_on(GWB_SW_RF_PREDICT_VOTE));
	unsetenv("GWB_RF_PREDICT_VOTE");
	setenv("GWB_EIG_COLMAJOR", "1", 1);
	assert_false(gwb_switch_on(GWB_SW_EIG_ROWMAJOR));
	setenv("GWB_EIG_COLMAJOR", "0", 1);
	assert_true(gwb_switch_on(GWB_SW_EIG_ROWMAJOR));
	unsetenv("GWB_EIG_COLMAJOR");
	setenv("GWB_JACOBI_BLOCK", "16", 1);
	assert_false(gwb_switch_on(GWB_SW_JACOBI_SMEM));
	unsetenv("GWB_JACOBI_BLOCK");
	setenv("GWB_RF_ROWMAJOR", "0", 1);
	assert_false(gwb_switch_on(GWB_SW_RF_ROWMAJOR));
	unsetenv("GWB_RF_ROWMAJOR");
	assert_true(gwb_switch_on(GWB_SW_RF_ROWMAJOR));
}

static void test_levels(void **state)
{
	gwb_switch_layer over, saved, inner, saved2, abl;
	const char *src;
	(void)state;
	setenv("GWB_RF_SUBTRACT", "0", 1);
	gwb_switch_set_global(GWB_SW_RF_SUBTRACT, 1);  /* global beats the environment */
	assert_true(gwb_switch_peek(GWB_SW_RF_SUBTRACT, &src));
	assert_string_equal(src, "global");
	gwb_switch_layer_clear(&over);
	over.v[GWB_SW_RF_SUBTRACT] = 0;                 /* the call beats global */
	gwb_switch_call_push(&over, &saved);
	assert_false(gwb_switch_peek(GWB_SW_RF_SUBTRACT, &src));
	assert_string_equal(src, "call");
	gwb_switch_layer_clear(&inner);                 /* a nested call keeps the outer one's */
	inner.v[GWB_SW_CSV_FAST] = 0;
	gwb_switch_call_push(&inner, &saved2);
	assert_false(gwb_switch_on(GWB_SW_RF_SUBTRACT));
	assert_false(gwb_switch_on(GWB_SW_CSV_FAST));
	gwb_switch_layer_clear(&abl);                   /* an ablation beats everything */
	abl.v[GWB_SW_RF_SUBTRACT] = 1;
	gwb_switch_ablate(&abl);
	assert_true(gwb_switch_peek(GWB_SW_RF_SUBTRACT, &src));
	assert_string_equal(src, "ablate");
	assert_false(gwb_switch_on(GWB_SW_CSV_FAST));  /* unset in the ablation: the call's */
	gwb_switch_ablate(NULL);
	gwb_switch_call_pop(&saved2);
	assert_true(gwb_switch_on(GWB_SW_CSV_FAST));
	assert_false(gwb_switch_on(GWB_SW_RF_SUBTRACT));
	gwb_switch_call_pop(&saved);
	assert_true(gwb_switch_on(GWB_SW_RF_SUBTRACT));
	gwb_switch_set_global(GWB_SW_RF_SUBTRACT, -1);
	assert_int_equal(gwb_switch_global(GWB_SW_RF_SUBTRACT), -1);
	assert_false(gwb_switch_on(GWB_SW_RF_SUBTRACT));  /* the environment again */
	unsetenv("GWB_RF_SUBTRACT");
	assert_true(gwb_switch_on(GWB_SW_RF_SUBTRACT));
}

static void test_reads(void **state)
{
	(void)state;
	gwb_switch_reads_reset();
	assert_int_equal(gwb_switch_reads(GWB_SW_SPMV_OURS), 0);
	gwb_switch_on(GWB_SW_SPMV_OURS);
	gwb_switch_on(GWB_SW_SPMV_OURS);
	gwb_switch_peek(GWB_SW_SPMV_OURS, NULL);  /* peeking is not a read */
	assert_int_equal(gwb_switch_reads(GWB_SW_SPMV_OURS), 2);
	assert_int_equal(gwb_switch_reads(GWB_SW_EIG_MIXED), 0);
	gwb_switch_reads_reset();
	assert_int_equal(gwb_switch_reads(GWB_SW_SPMV_OURS), 0);
}

static gwb_kernel_stat got;
static void kcb(const gwb_kernel_stat *k, void *ctx)
{
	(void)ctx;
	if (!strcmp(k->name, "unit_copy"))
		got = *k;
}

static void test_measured_and_verdict(void **state)
{
	int g[3] = {1, 1, 1}, b[3] = {256, 1, 1};
	(void)state;
	gwb_prof_reset();
	gwb_prof_kernel("unit_copy", g, b, 0, 0, 16, 1.0, 2e6, 0.5, NULL, NULL);
	gwb_prof_kernel("unit_copy", g, b, 0, 0, 16, 1.0, 2e6, 0.5, NULL, NULL);
	gwb_prof_measured("unit_copy", 2, 4.1e6, 2000, 4.8e12);
	gwb_prof_measured("not_a_kernel_of_ours", 1, 1e6, 10, 1e12);  /* ignored */
	memset(&got, 0, sizeof(got));
	gwb_prof_each_kernel(kcb, NULL);
	assert_int_equal(got.launches, 2);
	assert_int_equal(got.measured_launches, 2);
	assert_true(got.measured_bytes == 4.1e6 && got.bytes == 4e6);
	assert_true(got.measured_ns == 2000 && got.dram_peak_bps == 4.8e12);
	gwb_prof_reset();

	assert_string_equal(gwb_prof_verdict(0.9, 0.1, 0.8), "memory-bound");
	assert_string_equal(gwb_prof_verdict(0.7, 0.8, 0.8), "compute-bound");
	assert_string_equal(gwb_prof_verdict(0.1, 0.65, 0.5), "compute-bound");
	assert_string_equal(gwb_prof_verdict(0.2, 0.1, 0.1), "occupancy-bound");
	assert_string_equal(gwb_prof_verdict(0.2, 0.1, 0.6), "latency-bound");
	assert_string_equal(gwb_prof_verdict(-1, -1, 0.6), "unknown");
	assert_string_equal(gwb_prof_verdict(0.3, -1, -1), "latency-bound");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_env_mapping),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_reads),
		cmocka_unit_test(test_measured_and_verdict),
	};
	return cmocka_run_group_tests_name("switches", tests, NULL, NULL);
}
