/* fixup.h - make the checksums of a (mutated) gwb binary file right again, so that fuzzing and
 * the loader tests reach the structure checks behind them. One function per format, each
 * taking the whole file in memory; lengths stored in the file are left alone unless said.
 * Used by tests/fuzz/fuzz_*.c and tests/unit/test_loaders.c. */
#ifndef GWB_FIXUP_H
#define GWB_FIXUP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dsio.h"

static inline uint64_t fix_fnv1a(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* .gwbd: a 64-byte header, XXH64 of the payload at 48, XXH64 of the first 56 bytes at 56. */
static inline void fix_gwbd(unsigned char *b, size_t n)
{
	uint64_t h;

	if (n < 64)
		return;
	h = gwb_xxh64(b + 64, n - 64, 0);
	memcpy(b + 48, &h, 8);
	h = gwb_xxh64(b, 56, 0);
	memcpy(b + 56, &h, 8);
}

/* .gwbf: magic (10), u32 version, u64 data length, the data, FNV-1a of the data. The length
 * is set to what the file holds when set_len. */
static inline void fix_gwbf(unsigned char *b, size_t n, int set_len)
{
	uint64_t len, h;

	if (n < 30)
		return;
	if (set_len) {
		len = n - 30;
		memcpy(b + 14, &len, 8);
	}
	h = fix_fnv1a(0xcbf29ce484222325ULL, b + 22, n - 30);
	memcpy(b + n - 8, &h, 8);
}

/* .gwbs and .gwbm: FNV-1a of everything before the last 8 bytes, in them. */
static inline void fix_tail_fnv(unsigned char *b, size_t n)
{
	uint64_t h;

	if (n < 8)
		return;
	h = fix_fnv1a(0xcbf29ce484222325ULL, b, n - 8);
	memcpy(b + n - 8, &h, 8);
}

#endif
