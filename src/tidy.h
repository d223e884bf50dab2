/* tidy.h - how a float prediction reads as a Lua number: probabilities rounded to 7 decimals,
 * values to 7 significant digits (the float's precision, so 0.65f reads 0.65 and not
 * 0.64999997615814). One rule for the host (lapi_rf.c: Predictions, f:predict tables) and the
 * device (kernels/metrics.cu judges predictions where they lie), so a metric computed on the
 * GPU sees the very doubles the CPU would read. Header-only; compiled by cc and nvcc. */
#ifndef GWB_TIDY_H
#define GWB_TIDY_H

#include <math.h>
#include <stdbool.h>

#ifdef __CUDACC__
#define GWB_HD __host__ __device__
#else
#define GWB_HD
#endif

/* A class probability as Lua reads it: the nearest multiple of 1e-7 (v * 1e7 is exact in
 * double: 24 bits times 5^7 < 2^53). */
static inline GWB_HD double gwb_tidy_proba(float v)
{
	return nearbyint((double)v * 1e7) / 1e7;
}

/* 10^k, 0 <= k <= 22, exactly (every power up to 10^22 is a double). */
static inline GWB_HD double gwb_tidy_p10(int k)
{
	double p = 1;
	while (k-- > 0)
		p *= 10;
	return p;
}

/* v to 7 significant digits, the double that strtod(snprintf("%.7g", v)) gives, by arithmetic
 * that is exact for 1e-5 <= |v| < 1e16 (v * 10^k with k <= 12 has at most 24 + 28 bits; for
 * |v| >= 1e7, v / 10^m with m <= 9 cannot round onto a tie). Returns false outside that range
 * (and for infinities and NaN): the caller formats those (lapi_rf.c) or leaves them to the
 * host (kernels/metrics.cu). 0 keeps its sign. */
static inline GWB_HD bool gwb_tidy_value_fast(float v, double *out)
{
	double x = (double)v, a = fabs(x), r;
	int e;

	if (x == 0) {
		*out = x;
		return true;
	}
	if (!(a >= 1e-5 && a < 1e16))
		return false;
	e = (int)floor(log10(a));  /* then fixed so that 10^e <= a < 10^(e + 1), exactly */
	if (e >= 0) {
		if (a < gwb_tidy_p10(e))
			e--;
		else if (a >= gwb_tidy_p10(e + 1))
			e++;
	} else {
		double s = a * gwb_tidy_p10(-e);  /* exact: -e <= 6 */
		if (s < 1)
			e--;
		else if (s >= 10)
			e++;
	}
	if (e - 6 <= 0) {
		double s = gwb_tidy_p10(6 - e);
		r = nearbyint(x * s) / s;
	} else {
		double s = gwb_tidy_p10(e - 6);
		r = nearbyint(x / s) * s;
	}
	*out = r;
	return true;
}

#endif
