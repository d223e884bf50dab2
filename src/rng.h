/* rng.h - the random numbers of gwb, in one place: splitmix64 (its finalizer gwb_rng_mix and
 * its sequence gwb_rng_next), the counter-based hash of (seed, stream, a, b) that forests,
 * quantize, importances and rf.cv draw from (the GPU trainer repeats it bit for bit,
 * kernels/rf_train.cu), and xoshiro256** streams (gwb_rand: data.synth, shuffles, splits).
 * Everything is deterministic for a seed and nothing allocates; a state belongs to its caller. */
#ifndef GWB_RNG_H
#define GWB_RNG_H

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

uint64_t gwb_rng_next(uint64_t *state);
double gwb_rng_uniform(uint64_t *state);   /* [0, 1) */
double gwb_rng_normal(uint64_t *state);    /* N(0, 1) */

/* ---- xoshiro256** seeded through splitmix64 from (seed, stream) ----------------------------- */

typedef struct gwb_rand {
	uint64_t s[4];
} gwb_rand;

void gwb_rand_seed(gwb_rand *r, uint64_t seed, uint64_t stream);
uint64_t gwb_rand_u64(gwb_rand *r);
/* Uniform in [0, 1) with 53 random bits. */
double gwb_rand_uniform(gwb_rand *r);
/* Uniform integer in [0, n) without modulo bias (n >= 1). */
uint64_t gwb_rand_below(gwb_rand *r, uint64_t n);
/* Standard normal (Marsaglia's polar method). */
double gwb_rand_normal(gwb_rand *r);
/* Fisher-Yates shuffle of idx[0..n). */
void gwb_rand_shuffle(gwb_rand *r, size_t *idx, size_t n);

#ifdef __cplusplus
}
#endif
#endif
