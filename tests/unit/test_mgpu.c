/* test_mgpu.c - unit tests for the device-parallel layer (mgpu.c) that need no GPU: the gpus
 * option's checks against a made-up device list, dealing in index order, the runner over CPU
 * stand-ins (one host thread per "device", the thread-local current device, the first failing
 * slot's message coming back to the caller). */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgpu.h"
#include "status.h"

static const char *const two[] = {"NVIDIA H200", "NVIDIA H200"};

static void test_set_check(void **state)
{
	gwb_gpu_set s;
	long ids[4];

	(void)state;
	assert_int_equal(gwb_gpu_set_check("f", 2, NULL, 0, 2, two, &s), GWB_OK);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ids[0], 0);
	assert_int_equal(s.ids[1], 1);
	assert_false(s.cpu);
	ids[0] = 1;
	ids[1] = 0;
	assert_int_equal(gwb_gpu_set_check("f", 0, ids, 2, 2, two, &s), GWB_OK);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ids[0], 1);  /* dealt in the order listed */
	assert_int_equal(s.ids[1], 0);

	assert_int_equal(gwb_gpu_set_check("rf.train", 3, NULL, 0, 2, two, &s), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "rf.train: gpus = 3, but this machine has only 2 "
				 "devices (0 NVIDIA H200, 1 NVIDIA H200); use gpus = 2 or fewer"));
	assert_int_equal(s.n, 1);  /* failed: the default set */
	assert_int_equal(gwb_gpu_set_check("f", 0, NULL, 0, 2, two, &s), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "f: gpus must be a device count >= 1"));
	assert_int_equal(gwb_gpu_set_check("f", -1, NULL, 0, 2, two, &s), GWB_EINVAL);
	assert_int_equal(gwb_gpu_set_check("f", 0, ids, 0, 2, two, &s), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "lists no device"));
	ids[0] = 0;
	ids[1] = 2;
	assert_int_equal(gwb_gpu_set_check("f", 0, ids, 2, 2, two, &s), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "gpus[2] = 2 is not a device here: this machine has "
				 "2 devices (0 NVIDIA H200, 1 NVIDIA H200), ids 0 to 1"));
	ids[1] = -1;
	assert_int_equal(gwb_gpu_set_check("f", 0, ids, 2, 2, two, &s), GWB_EINVAL);
	ids[1] = 0;
	assert_int_equal(gwb_gpu_set_check("f", 0, ids, 2, 2, two, &s), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "gpus lists device 0 twice (entries 1 and 2)"));
	assert_int_equal(gwb_gpu_set_check("f", 1, NULL, 0, 0, NULL, &s), GWB_EINVAL);
	assert_non_null(strstr(gwb_errmsg(), "f: gpus = 1, but this machine has no devices"));
}

static void test_deal(void **state)
{
	(void)state;
	for (size_t total = 0; total < 40; total++)
		for (int n = 1; n <= 9; n++) {
			size_t next = 0, lo, hi, big = 0, small = (size_t)-1;
			for (int k = 0; k < n; k++) {
				gwb_deal(total, n, k, &lo, &hi);
				assert_int_equal(lo, next);  /* contiguous, in index order */
				assert_true(hi >= lo);
				if (hi - lo > big)
					big = hi - lo;
				if (hi - lo < small)
					small = hi - lo;
				next = hi;
			}
			assert_int_equal(next, total);  /* every item once */
			assert_true(big - small <= 1);  /* balanced */
		}
}

typedef struct run_ctx {
	int seen_dev[GWB_GPU_MAX];
	int current[GWB_GPU_MAX];
	pthread_t thread[GWB_GPU_MAX];
	int fail_slot;
	size_t items;
	int *out;  /* items entries: the slot that did each */
} run_ctx;

static gwb_status work(void *arg, int slot, int dev)
{
	run_ctx *c = arg;

	c->seen_dev[slot] = dev + 1;
	c->current[slot] = gwb_gpu_current();
	c->thread[slot] = pthread_self();
	if (slot == c->fail_slot)
		return gwb_error(GWB_EINVAL, "slot %d failed on device %d", slot, dev);
	return GWB_OK;
}

static gwb_status deal_work(void *arg, int slot, int dev)
{
	run_ctx *c = arg;
	size_t lo, hi, i;

	(void)dev;
	gwb_deal(c->items, 3, slot, &lo, &hi);
	for (i = lo; i < hi; i++)
		c->out[i] = slot;
	return GWB_OK;
}

static void test_runner(void **state)
{
	gwb_gpu_set s;
	run_ctx c;
	int out[100];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.fail_slot = -1;
	s.n = 3;
	s.cpu = true;
	s.ids[0] = 2;
	s.ids[1] = 0;
	s.ids[2] = 5;
	assert_int_equal(gwb_gpu_run(&s, work, &c), GWB_OK);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(c.seen_dev[k], s.ids[k] + 1);
		assert_int_equal(c.current[k], s.ids[k]);  /* the thread's current device */
		assert_false(pthread_equal(c.thread[k], pthread_self()));  /* its own thread */
	}
	assert_int_equal(gwb_gpu_current(), 0);  /* the caller's is untouched */

	/* one device: on the calling thread, its device current for the call, restored after */
	memset(&c, 0, sizeof(c));
	c.fail_slot = -1;
	s.n = 1;
	s.ids[0] = 4;
	assert_int_equal(gwb_gpu_run(&s, work, &c), GWB_OK);
	assert_true(pthread_equal(c.thread[0], pthread_self()));
	assert_int_equal(c.current[0], 4);
	assert_int_equal(gwb_gpu_current(), 0);

	/* a failing slot's message reaches the caller */
	memset(&c, 0, sizeof(c));
	c.fail_slot = 1;
	s.n = 3;
	s.ids[0] = 0;
	s.ids[1] = 1;
	s.ids[2] = 2;
	gwb_error_clear();
	assert_int_equal(gwb_gpu_run(&s, work, &c), GWB_EINVAL);
	assert_string_equal(gwb_errmsg(), "slot 1 failed on device 1");

	/* dealing by slot covers every item once, in order */
	memset(&c, 0, sizeof(c));
	c.items = 100;
	c.out = out;
	memset(out, -1, sizeof(out));
	assert_int_equal(gwb_gpu_run(&s, deal_work, &c), GWB_OK);
	for (int i = 1; i < 100; i++)
		assert_true(out[i] >= out[i - 1] && out[i] >= 0);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[99], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_check),
		cmocka_unit_test(test_deal),
		cmocka_unit_test(test_runner),
	};
	return cmocka_run_group_tests_name("mgpu", tests, NULL, NULL);
}
