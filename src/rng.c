/* rng.c - the random numbers of rng.h that are not inline there: seeding a xoshiro256**
 * stream and the Fisher-Yates shuffle. */
#include "rng.h"

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
