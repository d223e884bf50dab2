/* hash.h - XXH64, the one hash of gwb's checksums (.gwbd headers and payloads, the identity of
 * a Dataset, a Matrix or a SparseMatrix in run records): Debian's xxhash.h compiled in
 * (nothing to link), so the values are the reference ones and files saved by any version of
 * gwb keep loading. Nothing here allocates. */
#ifndef GWB_HASH_H
#define GWB_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An incremental hash (init, update any number of times, final), on the caller's stack. */
typedef struct gwb_xxh64_state {
	uint64_t opaque[12];   /* xxhash's XXH64_state_t (hash.c checks that it fits) */
} gwb_xxh64_state;

void gwb_xxh64_init(gwb_xxh64_state *h, uint64_t seed);
void gwb_xxh64_update(gwb_xxh64_state *h, const void *data, size_t n);
uint64_t gwb_xxh64_final(const gwb_xxh64_state *h);
/* The hash of one buffer. */
uint64_t gwb_xxh64(const void *data, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
