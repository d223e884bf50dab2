/* rng.h - the random numbers of gwb, in one place: splitmix64 (its finalizer gwb_rng_mix and
 * its sequence gwb_rng_next), the counter-based hash of (seed, stream, a, b) that forests,
 * quantize, importances and rf.cv draw from (the GPU trainer repeats it bit for bit,
 * kernels/rf_train.cu), and xoshiro256** streams (gwb_rand: data.synth, shuffles, splits).
 * Everything is deterministic for a seed and nothing allocates; a state belongs to its caller. */
#ifndef GWB_RNG_H
#define GWB_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the counter-based streams (forest.h documents how training uses them) -------------- */

enum {
	GWB_RNG_STREAM_BOOT = 1,   /* (tree, row): bootstrap counts */
	GWB_RNG_STREAM_FEAT = 2,   /* ((tree << 32) | node, i): per-node feature draw */
	GWB_RNG_STREAM_QUANT = 3,  /* (0, row): the row sample for quantile edges */
	GWB_RNG_STREAM_PERM = 4,   /* (feature << 32 | repeat, i): permutation importance */
	GWB_RNG_STREAM_CV = 5,     /* (0, i): fold shuffles in rf.cv */
};

/* splitmix64's finalizer. */
static inline uint64_t gwb_rng_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* A 64-bit hash of (seed, stream, a, b): the only source of randomness in training. */
static inline uint64_t gwb_rng_hash(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b)
{
	uint64_t h = gwb_rng_mix(seed + 0x9e3779b97f4a7c15ULL * ((uint64_t)stream + 1));

	h = gwb_rng_mix(h ^ (a + 0x632be59bd9b4e019ULL));
	h = gwb_rng_mix(h ^ (b + 0x8cb92ba72f3d8dd7ULL));
	return h;
}

/* ---- splitmix64: one 64-bit state (test matrices, seeding) ---------------------------------- */
/* The draws are inline here, not in rng.c: they run once per generated value in the hot loops
 * of data.synth, mat.randn and the shuffles, where a call into another object file cost 12 %
 * of data.synth's instructions (callgrind, 300,000 x 32, against the copy synth.c had). */

static inline uint64_t gwb_rng_next(uint64_t *state)
{
	return gwb_rng_mix(*state += 0x9E3779B97F4A7C15ull);
}

/* [0, 1) */
static inline double gwb_rng_uniform(uint64_t *state)
{
	return (double)(gwb_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* N(0, 1): Box-Muller; u1 in (0, 1]. */
static inline double gwb_rng_normal(uint64_t *state)
{
	double u1 = 1.0 - gwb_rng_uniform(state), u2 = gwb_rng_uniform(state);

	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- xoshiro256** seeded through splitmix64 from (seed, stream) ----------------------------- */

typedef struct gwb_rand {
	uint64_t s[4];
} gwb_rand;

void gwb_rand_seed(gwb_rand *r, uint64_t seed, uint64_t stream);

static inline uint64_t gwb_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t gwb_rand_u64(gwb_rand *r)
{
	uint64_t *s = r->s;
	uint64_t out = gwb_rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = gwb_rng_rotl(s[3], 45);
	return out;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double gwb_rand_uniform(gwb_rand *r)
{
	return (double)(gwb_rand_u64(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n) without modulo bias (n >= 1): Lemire's multiply-shift with
 * rejection of the biased low zone. */
static inline uint64_t gwb_rand_below(gwb_rand *r, uint64_t n)
{
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

/* Standard normal (Marsaglia's polar method; one of the pair, so that the stream of a row
 * stays simple to reason about). */
static inline double gwb_rand_normal(gwb_rand *r)
{
	double u, v, q;

	do {
		u = 2.0 * gwb_rand_uniform(r) - 1.0;
		v = 2.0 * gwb_rand_uniform(r) - 1.0;
		q = u * u + v * v;
	} while (q >= 1.0 || q == 0.0);
	return u * sqrt(-2.0 * log(q) / q);
}

/* Fisher-Yates shuffle of idx[0..n). */
void gwb_rand_shuffle(gwb_rand *r, size_t *idx, size_t n);

#ifdef __cplusplus
}
#endif
#endif
