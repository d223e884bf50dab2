/* test_buffer.c - unit tests for buffers and the backend tables (buffer.h), the device pool
 * and the pinned staging ring (gpu.c, buffer.c). GPU cases skip without a GPU. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "dataset.h"
#include "dense.h"
#include "gpu.h"
#include "intr.h"
#include "switches.h"
#include "status.h"

static void test_device_names(void **state)
{
	gwb_device d;
	(void)state;
	assert_int_equal(gwb_device_parse("gpu", &d), GWB_OK);
	assert_int_equal(d, GWB_DEVICE_GPU);
	assert_int_equal(gwb_device_parse("cpu", &d), GWB_OK);
	assert_int_equal(d, GWB_DEVICE_CPU);
	assert_int_equal(gwb_device_parse("tpu", &d), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "\"cpu\" or \"gpu\""));
	assert_string_equal(gwb_device_name(GWB_DEVICE_GPU), "gpu");
}

static void test_cpu_table(void **state)
{
	const gwb_buf_ops *o = gwb_buf_ops_get(GWB_DEVICE_CPU);
	char src[64], dst[64];
	void *p;
	(void)state;
	assert_non_null(o);
	assert_string_equal(o->name, "cpu");
	assert_int_equal(o->alloc(&p, 64, "unit"), GWB_OK);
	memset(src, 7, sizeof(src));
	assert_int_equal(o->copy_in(p, src, 64), GWB_OK);
	assert_int_equal(o->copy_out(dst, p, 64), GWB_OK);
	assert_memory_equal(src, dst, 64);
	assert_int_equal(o->zero(p, 64), GWB_OK);
	assert_int_equal(((char *)p)[63], 0);
	o->free(p);
}

static void test_buf_cpu(void **state)
{
	gwb_buf *b;
	double *h;
	void *p;
	(void)state;
	assert_int_equal(gwb_buf_new(GWB_DEVICE_CPU, 10 * sizeof(double), "unit.buf", true, &b),
			 GWB_OK);
	assert_int_equal(b->device, GWB_DEVICE_CPU);
	assert_true(b->host_valid);
	assert_int_equal(gwb_buf_host(b, &p), GWB_OK);
	h = p;
	assert_true(h[9] == 0.0);
	h[3] = 2.5;
	assert_int_equal(gwb_buf_host_wrote(b, 3 * sizeof(double), sizeof(double)), GWB_OK);
	assert_int_equal(gwb_buf_to(b, GWB_DEVICE_CPU), GWB_OK);
	gwb_buf_free(b);
}

static void test_gpu_absent(void **state)
{
	gwb_buf *b;
	void *p = malloc(16);
	(void)state;
	if (gwb_gpu_available())
		skip();
	assert_null(gwb_buf_ops_get(GWB_DEVICE_GPU));
	assert_int_equal(gwb_buf_wrap(p, 16, true, "unit.wrap", &b), GWB_OK);
	assert_int_equal(gwb_buf_to(b, GWB_DEVICE_GPU), GWB_ENODEV);
	assert_non_null(strstr(gwb_errmsg(), "cannot move unit.wrap to the GPU"));
	/* nothing half-moved */
	assert_int_equal(b->device, GWB_DEVICE_CPU);
	assert_true(b->host_valid);
	assert_null(b->dev);
	assert_int_equal(gwb_gpu_trim(), 0);
	gwb_buf_free(b);
}

/* A staged round trip of a size that spans several ring chunks and ends mid-chunk. */
static void test_gpu_round_trip(void **state)
{
	size_t n = ((size_t)100 << 20) / 8 + 12345, i;
	double *x = malloc(n * 8), *y;
	gwb_buf *b;
	void *p;
	int cnt0, cnt1;
	(void)state;
	if (!gwb_gpu_available()) {
		free(x);
		skip();
	}
	for (i = 0; i < n; i++)
		x[i] = (double)i * 0.5 - 3.0;
	gwb_gpu_ledger_total(&cnt0);
	assert_int_equal(gwb_buf_wrap(x, n * 8, true, "unit.rt", &b), GWB_OK);
	assert_int_equal(gwb_buf_to(b, GWB_DEVICE_GPU), GWB_OK);
	assert_int_equal(b->device, GWB_DEVICE_GPU);
	assert_true(b->dev_valid && b->host_valid);
	gwb_gpu_ledger_total(&cnt1);
	assert_int_equal(cnt1, cnt0 + 1);
	/* pretend a kernel wrote it: the host copy is re-read from the device */
	memset(x, 0, n * 8);
	gwb_buf_dev_wrote(b);
	assert_int_equal(gwb_buf_host(b, &p), GWB_OK);
	y = p;
	for (i = 0; i < n; i += 4099)
		assert_true(y[i] == (double)i * 0.5 - 3.0);
	assert_true(y[n - 1] == (double)(n - 1) * 0.5 - 3.0);
	/* a host write reaches the device copy */
	y[7] = 42.0;
	assert_int_equal(gwb_buf_host_wrote(b, 7 * 8, 8), GWB_OK);
	y[7] = 0.0;
	gwb_buf_dev_wrote(b);
	assert_int_equal(gwb_buf_to(b, GWB_DEVICE_CPU), GWB_OK);
	assert_null(b->dev);
	assert_int_equal(gwb_buf_host(b, &p), GWB_OK);
	assert_true(((double *)p)[7] == 42.0);
	gwb_buf_free(b);
	gwb_gpu_ledger_total(&cnt1);
	assert_int_equal(cnt1, cnt0);
}

/* A GPU-born buffer given caller-owned host memory for its host copy keeps it borrowed (the
 * Matrix case: gwb_matrix_host hands A->data in, gwb_matrix_free frees it). */
static void test_gpu_borrowed_host_copy(void **state)
{
	gwb_buf *b;
	double *h = malloc(1000 * sizeof(double));
	void *p;
	(void)state;
	if (!gwb_gpu_available()) {
		free(h);
		skip();
	}
	assert_int_equal(gwb_buf_new(GWB_DEVICE_GPU, 1000 * sizeof(double), "unit.born", true, &b),
			 GWB_OK);
	assert_false(b->host_valid);
	b->host = h;
	b->host_borrowed = true;
	assert_int_equal(gwb_buf_host(b, &p), GWB_OK);
	assert_ptr_equal(p, h);
	assert_true(b->host_borrowed);
	assert_true(h[999] == 0.0);
	gwb_buf_free(b);
	free(h);  /* still ours: a double free here would abort */
}

/* The chunked sink sees every byte once, in order of offset within each chunk. */
static void sink_copy(void *ctx, size_t off, const void *chunk, size_t len)
{
	memcpy((char *)ctx + off, chunk, len);
}

static void test_gpu_copy_out_to(void **state)
{
	size_t n = ((size_t)70 << 20) + 333, i;
	unsigned char *x = malloc(n), *y = malloc(n);
	void *d;
	(void)state;
	if (!gwb_gpu_available()) {
		free(x);
		free(y);
		skip();
	}
	for (i = 0; i < n; i++)
		x[i] = (unsigned char)(i * 7 + (i >> 20));
	assert_int_equal(gwb_gpu_malloc(&d, n, "unit.sink"), GWB_OK);
	assert_int_equal(gwb_gpu_copy_in(d, x, n), GWB_OK);
	memset(y, 0, n);
	assert_int_equal(gwb_gpu_copy_out_to(d, n, sink_copy, y), GWB_OK);
	assert_memory_equal(x, y, n);
	memset(y, 0, 1000);
	assert_int_equal(gwb_gpu_copy_out_to(d, 1000, sink_copy, y), GWB_OK);  /* direct path */
	assert_memory_equal(x, y, 1000);
	gwb_gpu_free(d);
	free(x);
	free(y);
}

static void test_gpu_pool_reuse(void **state)
{
	gwb_gpu_pool_info a, b;
	void *p, *q;
	(void)state;
	if (!gwb_gpu_available())
		skip();
	assert_int_equal(gwb_gpu_malloc(&p, 3 << 20, "unit.pool"), GWB_OK);
	gwb_gpu_free(p);
	gwb_gpu_pool_stats(&a);
	assert_true(a.cached_bytes >= (3u << 20));
	assert_int_equal(gwb_gpu_malloc(&q, 3 << 20, "unit.pool"), GWB_OK);
	gwb_gpu_pool_stats(&b);
	assert_int_equal(b.hits, a.hits + 1);  /* served from the cache, not cudaMalloc */
	gwb_gpu_free(q);
	assert_true(gwb_gpu_trim() >= (3u << 20));
	gwb_gpu_pool_stats(&b);
	assert_int_equal(b.cached_bytes, 0);
	assert_int_equal(gwb_gpu_staging_bytes(), 0);
	/* out of memory names holdings and the way out */
	assert_int_equal(gwb_gpu_malloc(&p, (size_t)1 << 50, "unit.huge"), GWB_ENOMEM);
	assert_non_null(strstr(gwb_errmsg(), "gwb holds"));
	assert_non_null(strstr(gwb_errmsg(), "gpu.trim()"));
}


/* --- registered host memory: the decision and the bookkeeping (no GPU needed) ------------- */

/* Fake page-locking calls: count them and remember the last range. */
static int fake_regs, fake_unregs;
static bool fake_refuse;
static void *fake_last;
static size_t fake_last_bytes;

static bool fake_reg(void *p, size_t bytes)
{
	fake_regs++;
	fake_last = p;
	fake_last_bytes = bytes;
	return !fake_refuse;
}

static void fake_unreg(void *p)
{
	fake_unregs++;
	fake_last = p;
}

static void fake_reset(void)
{
	fake_regs = fake_unregs = 0;
	fake_refuse = false;
	fake_last = NULL;
	fake_last_bytes = 0;
	gwb_host_pin_set_hooks(fake_reg, fake_unreg);
}

static void test_pin_decision(void **state)
{
	int id = gwb_switch_find("copy.pinned");
	(void)state;
	assert_false(gwb_host_pin_wanted(0));
	assert_false(gwb_host_pin_wanted(GWB_PIN_MIN_BYTES - 1));
	assert_true(gwb_host_pin_wanted(GWB_PIN_MIN_BYTES));
	assert_true(gwb_host_pin_wanted((size_t)8 << 30));
	/* the ablation switch copy.pinned off: nothing is registered */
	assert_true(id >= 0);
	gwb_switch_set_global(id, 0);
	assert_false(gwb_host_pin_wanted((size_t)1 << 30));
	gwb_switch_set_global(id, -1);
	assert_true(gwb_host_pin_wanted((size_t)1 << 30));
}

/* Ranges are never dereferenced by the bookkeeping: fake addresses will do. */
#define FAKE(a) ((char *)(uintptr_t)(a))

static void test_pin_bookkeeping(void **state)
{
	char *P = FAKE(0x7f0000000000ull), *Q = FAKE(0x7f1000000000ull);
	size_t big = (size_t)128 << 20, mib = (size_t)1 << 20;
	int t0 = gwb_host_tracked();
	size_t b0 = gwb_host_pinned_bytes();
	(void)state;
	fake_reset();
	/* small ranges stay on the staged path */
	assert_false(gwb_host_track(P, GWB_PIN_MIN_BYTES - 1));
	assert_false(gwb_host_pin(P, mib));
	assert_int_equal(gwb_host_tracked(), t0);
	/* tracking costs no registration; the first crossing registers the whole range once */
	assert_true(gwb_host_track(P, big));
	assert_int_equal(gwb_host_tracked(), t0 + 1);
	assert_int_equal(fake_regs, 0);
	assert_false(gwb_host_is_pinned(P, mib));
	assert_true(gwb_host_pin(P + 4096, mib));
	assert_int_equal(fake_regs, 1);
	assert_ptr_equal(fake_last, P);
	assert_int_equal(fake_last_bytes, big);
	assert_true(gwb_host_is_pinned(P, big));
	assert_int_equal(gwb_host_pinned_bytes(), b0 + big);
	assert_true(gwb_host_pin(P, big));
	assert_true(gwb_host_pin(P + big - mib, mib));
	assert_int_equal(fake_regs, 1);  /* never registered twice */
	/* a range inside is covered by the same entry; a partial overlap is refused */
	assert_true(gwb_host_track(P + mib, (size_t)64 << 20));
	assert_int_equal(gwb_host_tracked(), t0 + 1);
	assert_false(gwb_host_track(P + big - mib, (size_t)64 << 20));
	assert_int_equal(gwb_host_tracked(), t0 + 1);
	/* a copy that runs past the end, or of untracked memory, is staged */
	assert_false(gwb_host_pin(P + big - mib, 2 * mib));
	assert_false(gwb_host_pin(Q, mib));
	assert_int_equal(fake_regs, 1);
	/* trim / shutdown: unregistered, still tracked, registered again on the next crossing */
	gwb_gpu_staging_release();
	assert_int_equal(fake_unregs, 1);
	assert_false(gwb_host_is_pinned(P, mib));
	assert_int_equal(gwb_host_pinned_bytes(), b0);
	assert_int_equal(gwb_host_tracked(), t0 + 1);
	assert_true(gwb_host_pin(P, mib));
	assert_int_equal(fake_regs, 2);
	/* the owner frees it: unregistered once, forgotten */
	gwb_host_untrack(P);
	assert_int_equal(fake_unregs, 2);
	assert_ptr_equal(fake_last, P);
	assert_int_equal(gwb_host_tracked(), t0);
	gwb_host_untrack(P);
	gwb_host_untrack(NULL);
	assert_int_equal(fake_unregs, 2);
	assert_false(gwb_host_pin(P, mib));
	assert_int_equal(fake_regs, 2);
	/* a refused registration falls back to staging and is not retried */
	fake_refuse = true;
	assert_true(gwb_host_track(Q, big));
	assert_false(gwb_host_pin(Q, mib));
	assert_int_equal(fake_regs, 3);
	fake_refuse = false;
	assert_false(gwb_host_pin(Q, mib));
	assert_int_equal(fake_regs, 3);
	gwb_host_untrack(Q);
	assert_int_equal(fake_unregs, 2);  /* nothing to unregister */
	/* copy.pinned off: tracked but not registered */
	assert_true(gwb_host_track(Q, big));
	gwb_switch_set_global(gwb_switch_find("copy.pinned"), 0);
	assert_false(gwb_host_pin(Q, mib));
	gwb_switch_set_global(gwb_switch_find("copy.pinned"), -1);
	assert_int_equal(fake_regs, 3);
	gwb_host_untrack(Q);
	assert_int_equal(gwb_host_tracked(), t0);
	gwb_host_pin_set_hooks(NULL, NULL);
}

/* The table is bounded: past its size a range is simply not tracked (staged), and freeing
 * entries makes room again. */
static void test_pin_table_full(void **state)
{
	size_t big = (size_t)64 << 20;
	char *base = FAKE(0x600000000000ull);
	int n = 0, i;
	(void)state;
	fake_reset();
	while (n < 10000 && gwb_host_track(base + (size_t)n * big, big))
		n++;
	assert_true(n >= 1 && n < 10000);
	assert_false(gwb_host_pin(base + (size_t)n * big, big));
	gwb_host_untrack(base);
	assert_true(gwb_host_track(base + (size_t)n * big, big));
	for (i = 1; i <= n; i++)
		gwb_host_untrack(base + (size_t)i * big);
	assert_int_equal(fake_regs, 0);
	assert_int_equal(fake_unregs, 0);
	gwb_host_pin_set_hooks(NULL, NULL);
}

/* Every owner unregisters before freeing: a Dataset's X, a Matrix's data, a buffer's own host
 * memory. Small objects are never tracked. (calloc'd and never written: no pages touched.) */
static void test_pin_free_paths(void **state)
{
	int t0 = gwb_host_tracked();
	gwb_dataset *d, *s;
	gwb_matrix *A, *B;
	gwb_buf *b;
	void *p;
	(void)state;
	fake_reset();
	assert_int_equal(gwb_dataset_new((size_t)1 << 22, 4, GWB_TASK_REGRESSION, 0, &d), GWB_OK);
	assert_int_equal(gwb_host_tracked(), t0 + 1);
	assert_true(gwb_host_pin(d->X, (size_t)4 << 22));
	assert_int_equal(fake_regs, 1);
	assert_int_equal(gwb_dataset_new(1000, 4, GWB_TASK_REGRESSION, 0, &s), GWB_OK);
	assert_int_equal(gwb_host_tracked(), t0 + 1);  /* 16 KB: not tracked */
	gwb_dataset_free(s);
	p = d->X;
	gwb_dataset_free(d);
	assert_int_equal(fake_unregs, 1);
	assert_ptr_equal(fake_last, p);
	assert_int_equal(gwb_host_tracked(), t0);

	assert_int_equal(gwb_matrix_new(4096, 2048, GWB_F64, GWB_ROW_MAJOR, &A), GWB_OK);
	assert_int_equal(gwb_matrix_new(10, 10, GWB_F64, GWB_ROW_MAJOR, &B), GWB_OK);
	assert_int_equal(gwb_host_tracked(), t0 + 1);
	assert_true(gwb_host_pin(A->data, (size_t)64 << 20));
	assert_int_equal(fake_regs, 2);
	p = A->data;
	gwb_matrix_free(A);
	gwb_matrix_free(B);
	assert_int_equal(fake_unregs, 2);
	assert_ptr_equal(fake_last, p);
	assert_int_equal(gwb_host_tracked(), t0);

	/* a buffer that owns its host memory untracks it in gwb_buf_free */
	assert_int_equal(gwb_buf_new(GWB_DEVICE_CPU, (size_t)64 << 20, "unit.pin", false, &b),
			 GWB_OK);
	assert_true(gwb_host_track(b->host, b->bytes));
	assert_true(gwb_host_pin(b->host, b->bytes));
	p = b->host;
	gwb_buf_free(b);
	assert_int_equal(fake_unregs, 3);
	assert_ptr_equal(fake_last, p);
	assert_int_equal(gwb_host_tracked(), t0);
	gwb_host_pin_set_hooks(NULL, NULL);
}

/* On the GPU: a tracked range is registered by its first copy and round-trips exactly, whole
 * and in odd pieces; untracking releases it. */
static void test_gpu_registered_copy(void **state)
{
	size_t n = ((size_t)80 << 20) + 4093, i, off = ((size_t)1 << 20) + 3, len = ((size_t)2 << 20) + 5;
	unsigned char *x = malloc(n), *y = malloc(n);
	size_t b0 = gwb_host_pinned_bytes();
	double ms0 = gwb_host_pin_ms();
	void *d;
	(void)state;
	if (!gwb_gpu_available()) {
		free(x);
		free(y);
		skip();
	}
	for (i = 0; i < n; i++)
		x[i] = (unsigned char)(i * 13 + (i >> 16));
	memset(y, 0, n);
	assert_true(gwb_host_track(x, n));
	assert_true(gwb_host_track(y, n));
	assert_int_equal(gwb_gpu_malloc(&d, n, "unit.pin"), GWB_OK);
	assert_int_equal(gwb_gpu_copy_in(d, x, n), GWB_OK);
	assert_true(gwb_host_is_pinned(x, n));  /* registered by that copy */
	assert_true(gwb_host_pin_ms() >= ms0);
	assert_int_equal(gwb_gpu_copy_out(y, d, n), GWB_OK);
	assert_true(gwb_host_is_pinned(y, n));
	assert_int_equal(gwb_host_pinned_bytes(), b0 + 2 * n);
	assert_memory_equal(x, y, n);
	/* a piece at an odd offset, into the same registered ranges */
	memset(y, 0, n);
	assert_int_equal(gwb_gpu_copy_in((char *)d + off, x + off + 1, len), GWB_OK);
	assert_int_equal(gwb_gpu_copy_out(y + off, (char *)d + off, len), GWB_OK);
	assert_memory_equal(x + off + 1, y + off, len);
	assert_true(y[off - 1] == 0 && y[off + len] == 0);
	/* Ctrl-C before the first piece: an error, nothing claimed */
	gwb_intr_raise();
	assert_int_equal(gwb_gpu_copy_in(d, x, n), GWB_EINTR);
	assert_non_null(strstr(gwb_errmsg(), "interrupted"));
	gwb_intr_clear();
	gwb_gpu_free(d);
	gwb_host_untrack(x);
	gwb_host_untrack(y);
	assert_int_equal(gwb_host_pinned_bytes(), b0);
	free(x);
	free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_names),
		cmocka_unit_test(test_cpu_table),
		cmocka_unit_test(test_buf_cpu),
		cmocka_unit_test(test_gpu_absent),
		cmocka_unit_test(test_gpu_round_trip),
		cmocka_unit_test(test_gpu_borrowed_host_copy),
		cmocka_unit_test(test_gpu_copy_out_to),
		cmocka_unit_test(test_gpu_pool_reuse),
		cmocka_unit_test(test_pin_decision),
		cmocka_unit_test(test_pin_bookkeeping),
		cmocka_unit_test(test_pin_table_full),
		cmocka_unit_test(test_pin_free_paths),
		cmocka_unit_test(test_gpu_registered_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
