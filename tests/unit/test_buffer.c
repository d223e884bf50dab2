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
#include "gpu.h"
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
