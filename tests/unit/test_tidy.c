/* test_tidy.c - tidy.h's arithmetic rounding of float predictions (the rule the GPU metrics
 * use) against the formatting it stands for: strtod(snprintf("%.7g")) for values, 7 decimals
 * for probabilities; every float of a sweep over the fast range, ties and powers of ten. */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tidy.h"

static double by_format(float v)
{
	char b[32];

	snprintf(b, sizeof(b), "%.7g", (double)v);
	return strtod(b, NULL);
}

/* v through the fast rule must give the formatted double, bit for bit (or decline). */
static int check(float v, size_t *declined)
{
	double r, want = by_format(v);

	if (!gwb_tidy_value_fast(v, &r)) {
		double a = fabs((double)v);
		(*declined)++;
		if (a >= 1e-5 && a < 1e16) {  /* only values outside the fast range decline */
			print_error("%.9g declined\n", (double)v);
			return 1;
		}
		return 0;
	}
	if (memcmp(&r, &want, sizeof(r))) {
		print_error("%.9g: fast %.17g, formatted %.17g\n", (double)v, r, want);
		return 1;
	}
	return 0;
}

static void test_values(void **state)
{
	size_t declined = 0, bad = 0, n = 0;
	uint64_t s = 0x9e3779b97f4a7c15u;

	(void)state;
	/* random bit patterns (every exponent, both signs), then random magnitudes 1e-5..1e16 */
	for (int i = 0; i < 4000000; i++) {
		uint32_t u;
		float v;
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		if (i % 2) {
			u = (uint32_t)(s >> 11);
			memcpy(&v, &u, 4);
		} else {
			v = (float)pow(10, -5 + 21 * (double)(s >> 11) / 9007199254740992.0);
		}
		if (isnan(v))
			continue;
		bad += (size_t)check(v, &declined);
		n++;
	}
	/* around each power of ten and each decimal tie of 7 digits, the float neighbours */
	for (int e = -5; e <= 15; e++) {
		for (int m = 1000000; m < 10000000; m += 4999) {
			double t = (m + 0.5) * pow(10, e - 6), p = pow(10, e);
			float v[2] = {(float)t, (float)p};
			for (int k = 0; k < 2; k++) {
				float w = v[k];
				for (int j = 0; j < 3; j++) {
					bad += (size_t)check(w, &declined) + (size_t)check(-w, &declined);
					w = nextafterf(w, INFINITY);
					n += 2;
				}
			}
		}
	}
	/* floats that are exact 7-digit ties: 1234567.5 and friends (half-even) */
	for (float v = 1000000.5f; v < 1000100.0f; v += 1.0f)
		bad += (size_t)check(v, &declined);
	assert_int_equal(bad, 0);
	assert_true(declined < n * 3 / 4);  /* the random magnitudes are all in the fast range */
	double z;
	assert_true(gwb_tidy_value_fast(-0.0f, &z) && z == 0 && signbit(z));
	assert_false(gwb_tidy_value_fast(INFINITY, &z));
	assert_false(gwb_tidy_value_fast(1e-6f, &z));
	assert_false(gwb_tidy_value_fast(2e16f, &z));
	assert_true(gwb_tidy_value_fast(0.65f, &z) && z == 0.65);
}

static void test_proba(void **state)
{
	(void)state;
	assert_true(gwb_tidy_proba(0.65f) == 0.65);
	assert_true(gwb_tidy_proba(1.0f) == 1.0);
	assert_true(gwb_tidy_proba(0.0f) == 0.0);
	assert_true(gwb_tidy_proba(1.0f / 3.0f) == 0.3333333);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_proba),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
