/* test_core.c - unit tests for status, backend choice, interrupt/progress and telemetry. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "gpu.h"
#include "intr.h"
#include "prof.h"
#include "status.h"

static void test_status_messages(void **state)
{
	(void)state;
	gwb_error_clear();
	assert_string_equal(gwb_errmsg(), "");
	assert_int_equal(gwb_error(GWB_EINVAL, "trees must be >= 1 (got %d)", 0), GWB_EINVAL);
	assert_string_equal(gwb_errmsg(), "trees must be >= 1 (got 0)");
	assert_string_equal(gwb_status_str(GWB_ENOMEM), "out of memory");
	assert_string_equal(gwb_status_str((gwb_status)999), "unknown status");
	for (int s = 0; s < GWB_STATUS_COUNT; s++)
		assert_non_null(gwb_status_str((gwb_status)s));
}

static void test_backend_parse(void **state)
{
	gwb_backend b;
	(void)state;
	assert_int_equal(gwb_backend_parse("gpu", &b), GWB_OK);
	assert_int_equal(b, GWB_BACKEND_GPU);
	assert_int_equal(gwb_backend_parse("GPU", &b), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "\"GPU\""));
	assert_int_equal(gwb_backend_parse(NULL, &b), GWB_EINVAL);
	assert_string_equal(gwb_backend_name(GWB_BACKEND_CPU), "cpu");
}

static void test_backend_choose(void **state)
{
	gwb_backend b;
	char why[256];
	(void)state;
	gwb_backend_default = GWB_BACKEND_AUTO;
	/* small work stays on the CPU whatever the machine */
	assert_int_equal(gwb_backend_choose(GWB_BACKEND_AUTO, 1e3, 0, &b, why, sizeof(why)), GWB_OK);
	assert_int_equal(b, GWB_BACKEND_CPU);
	assert_non_null(strstr(why, "below"));
	assert_int_equal(gwb_backend_choose(GWB_BACKEND_CPU, 1e12, 0, &b, why, sizeof(why)), GWB_OK);
	assert_int_equal(b, GWB_BACKEND_CPU);
	/* large work goes to the GPU only when there is one */
	assert_int_equal(gwb_backend_choose(GWB_BACKEND_AUTO, 1e12, 0, &b, why, sizeof(why)), GWB_OK);
	assert_int_equal(b, gwb_gpu_available() ? GWB_BACKEND_GPU : GWB_BACKEND_CPU);
	if (!gwb_gpu_available()) {
		assert_int_equal(gwb_backend_choose(GWB_BACKEND_GPU, 1, 0, &b, NULL, 0), GWB_ENODEV);
		assert_non_null(strstr(gwb_errmsg(), "backend=\"gpu\""));
		/* the --backend default applies to "auto" requests */
		gwb_backend_default = GWB_BACKEND_GPU;
		assert_int_equal(gwb_backend_choose(GWB_BACKEND_AUTO, 1, 0, &b, NULL, 0), GWB_ENODEV);
		gwb_backend_default = GWB_BACKEND_AUTO;
	}
}

static int sink_calls, sink_finished;
static double sink_last_done;
static void sink(const gwb_progress *p, void *ctx)
{
	(void)ctx;
	assert_string_equal(p->label, "unit");
	if (p->event == GWB_PROGRESS_BEGIN)
		return;  /* the start of a run is not a progress report */
	if (p->event == GWB_PROGRESS_END && !p->finished)
		return;  /* the end of a run that was never shown */
	sink_calls++;
	sink_last_done = p->done;
	if (p->finished)
		sink_finished++;
	assert_string_equal(p->label, "unit");
}

static void test_progress_rate_limited(void **state)
{
	(void)state;
	sink_calls = sink_finished = 0;
	gwb_progress_set_sink(sink, NULL);
	gwb_progress_begin("unit", 100);
	for (int i = 0; i < 100; i++)
		gwb_progress_update(i, "metric", 1.0 / (i + 1));
	/* a fast loop is reported at most once per 100 ms */
	assert_true(sink_calls <= 1);
	usleep(120000);
	gwb_progress_update(50, NULL, 0);
	assert_true(sink_calls >= 1);
	assert_true(sink_last_done == 50);
	gwb_progress_end();
	assert_int_equal(sink_finished, 1);
	assert_true(sink_last_done == 100);
	gwb_progress_set_sink(NULL, NULL);
}

static void test_interrupt_flag(void **state)
{
	(void)state;
	gwb_intr_clear();
	assert_false(gwb_intr_pending());
	gwb_intr_raise();
	assert_true(gwb_intr_pending());
	gwb_intr_clear();
	assert_false(gwb_intr_pending());
}

struct kagg { int n; double total; long launches; double bytes; };
static void kcb(const gwb_kernel_stat *k, void *ctx)
{
	struct kagg *a = ctx;
	if (a->n == 0) {
		/* first is the kernel with the largest total time */
		assert_string_equal(k->name, "slow");
	}
	a->n++;
	a->total += k->total_ms;
	a->launches += k->launches;
	a->bytes += k->bytes;
}

static void test_prof_aggregates(void **state)
{
	int g[3] = {10, 1, 1}, b[3] = {256, 1, 1};
	struct kagg a = {0};
	gwb_xfer_stat x;
	double km, tm;
	(void)state;
	gwb_prof_reset();
	gwb_prof_kernel("fast", g, b, 0, 0, 32, 1.0, 1e6, 0.5, NULL, NULL);
	gwb_prof_kernel("fast", g, b, 0, 0, 32, 1.0, 1e6, 0.5, NULL, NULL);
	gwb_prof_kernel("slow", g, b, 4096, 0, 64, 0.5, 2e6, 3.0, NULL, NULL);
	gwb_prof_transfer(GWB_H2D, 1e6, true, 0.2);
	gwb_prof_transfer(GWB_D2H, 5e5, false, 0.1);
	gwb_prof_transfer_events(GWB_D2D, 2e6, false, 0.25, NULL, NULL);
	gwb_prof_each_kernel(kcb, &a);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.launches, 3);
	assert_true(a.total == 4.0);
	assert_true(a.bytes == 4e6);
	gwb_prof_transfers(&x);
	assert_int_equal(x.count[GWB_H2D], 1);
	assert_true(x.pinned_bytes[GWB_H2D] == 1e6 && x.pinned_bytes[GWB_D2H] == 0);
	assert_int_equal(x.count[GWB_D2D], 1);
	assert_true(x.bytes[GWB_D2D] == 2e6 && x.ms[GWB_D2D] == 0.25);
	gwb_prof_totals(&km, &tm);
	assert_true(km == 4.0);
	assert_true(tm > 0.549 && tm < 0.551);
	gwb_prof_reset();
	a.n = 0;
	gwb_prof_each_kernel(kcb, &a);
	assert_int_equal(a.n, 0);
}

static void test_gpu_without_device(void **state)
{
	void *p = (void *)1;
	int n;
	(void)state;
	if (gwb_gpu_available())
		skip();
	assert_int_equal(gwb_gpu_malloc(&p, 1024, "unit"), GWB_ENODEV);
	assert_null(p);
	assert_true(strlen(gwb_gpu_unavailable_reason()) > 10);
	assert_int_equal(gwb_gpu_ledger_total(&n), 0);
	assert_int_equal(n, 0);
}

static void test_gpu_ledger_with_device(void **state)
{
	void *p, *q;
	int n;
	(void)state;
	if (!gwb_gpu_available())
		skip();
	assert_int_equal(gwb_gpu_malloc(&p, 1 << 20, "unit.a"), GWB_OK);
	assert_int_equal(gwb_gpu_malloc(&q, 1 << 10, "unit.b"), GWB_OK);
	assert_int_equal(gwb_gpu_ledger_total(&n), (1 << 20) + (1 << 10));
	assert_int_equal(n, 2);
	gwb_gpu_free(p);
	gwb_gpu_free(q);
	assert_int_equal(gwb_gpu_ledger_total(&n), 0);
	/* an impossible request says how much was needed and free */
	assert_int_equal(gwb_gpu_malloc(&p, (size_t)1 << 50, "unit.huge"), GWB_ENOMEM);
	assert_non_null(strstr(gwb_errmsg(), "needed"));
	assert_non_null(strstr(gwb_errmsg(), "free"));
	assert_non_null(strstr(gwb_errmsg(), "unit.huge"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_messages),
		cmocka_unit_test(test_backend_parse),
		cmocka_unit_test(test_backend_choose),
		cmocka_unit_test(test_progress_rate_limited),
		cmocka_unit_test(test_interrupt_flag),
		cmocka_unit_test(test_prof_aggregates),
		cmocka_unit_test(test_gpu_without_device),
		cmocka_unit_test(test_gpu_ledger_with_device),
	};
	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
