/* rng.c - the random numbers (rng.h): splitmix64's sequence and xoshiro256** streams. */
#include "rng.h"

#include <math.h>

/* --- splitmix64 --------------------------------------------------------------------------- */

uint64_t gwb_rng_next(uint64_t *s)
{
	return gwb_rng_mix(*s += 0x9E3779B97F4A7C15ull);
}

double gwb_rng_uniform(uint64_t *s)
{
	return (double)(gwb_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

double gwb_rng_normal(uint64_t *s)
{
	/* Box-Muller; u1 in (0, 1]. */
	double u1 = 1.0 - gwb_rng_uniform(s), u2 = gwb_rng_uniform(s);

	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* --- xoshiro256** ------------------------------------------------------------------------- */

void gwb_rand_seed(gwb_rand *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull;
	int i;

	/* mix the stream in through its own splitmix step so nearby streams are unrelated */
	x ^= gwb_rng_next(&(uint64_t){stream ^ 0x6a09e667f3bcc909ull});
	for (i = 0; i < 4; i++)
		r->s[i] = gwb_rng_next(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t gwb_rand_u64(gwb_rand *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double gwb_rand_uniform(gwb_rand *r)
{
	return (double)(gwb_rand_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t gwb_rand_below(gwb_rand *r, uint64_t n)
{
	/* Lemire's multiply-shift with rejection of the biased low zone */
	unsigned __int128 m = (unsigned __int128)gwb_rand_u64(r) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t thresh = -n % n;
		while (lo < thresh) {
			m = (unsigned __int128)gwb_rand_u64(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double gwb_rand_normal(gwb_rand *r)
{
	double u, v, s;

	do {
		u = 2.0 * gwb_rand_uniform(r) - 1.0;
		v = 2.0 * gwb_rand_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	/* one of the pair: the stream of a row stays simple to reason about */
	return u * sqrt(-2.0 * log(s) / s);
}

void gwb_rand_shuffle(gwb_rand *r, size_t *idx, size_t n)
{
	size_t i;

	for (i = n; i > 1; i--) {
		size_t j = (size_t)gwb_rand_below(r, i);
		size_t t = idx[i - 1];
		idx[i - 1] = idx[j];
		idx[j] = t;
	}
}
