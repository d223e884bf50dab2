/* hash.c - XXH64 (hash.h) from Debian's libxxhash-dev header, compiled in (XXH_INLINE_ALL:
 * nothing to link, so the lent GPU machine's build needs only the header, which
 * scripts/fetch-device-deps unpacks). The values are the reference XXH64's, the same that
 * gwb's own implementation computed before (tests/lua/test_hash.lua loads files it saved). */
#include "hash.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

_Static_assert(sizeof(gwb_xxh64_state) >= sizeof(XXH64_state_t),
	       "gwb_xxh64_state must hold an XXH64_state_t");
_Static_assert(_Alignof(gwb_xxh64_state) >= _Alignof(XXH64_state_t),
	       "gwb_xxh64_state must be aligned as an XXH64_state_t");

void gwb_xxh64_init(gwb_xxh64_state *h, uint64_t seed)
{
	memset(h, 0, sizeof(*h));
	XXH64_reset((XXH64_state_t *)(void *)h->opaque, seed);
}

void gwb_xxh64_update(gwb_xxh64_state *h, const void *data, size_t n)
{
	if (n)
		XXH64_update((XXH64_state_t *)(void *)h->opaque, data, n);
}

uint64_t gwb_xxh64_final(const gwb_xxh64_state *h)
{
	return XXH64_digest((const XXH64_state_t *)(const void *)h->opaque);
}

uint64_t gwb_xxh64(const void *data, size_t n, uint64_t seed)
{
	return XXH64(data, n, seed);
}
