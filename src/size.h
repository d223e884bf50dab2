/* size.h - overflow-checked size arithmetic, the one helper every byte count built from a
 * caller's or a file's numbers goes through (as SQLite's sqlite3MulInt64 / sqlite3AddInt64):
 * a product or sum that does not fit in size_t is GWB_ENOMEM (it could never be allocated),
 * never a wrapped small number that a malloc then under-allocates. No message is set: the
 * caller says what was being sized, with the numbers as given. */
#ifndef GWB_SIZE_H
#define GWB_SIZE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* *out = a * b, or GWB_ENOMEM (and *out = SIZE_MAX) when it does not fit. */
static inline gwb_status gwb_mul_size(size_t a, size_t b, size_t *out)
{
	if (__builtin_mul_overflow(a, b, out)) {
		*out = SIZE_MAX;
		return GWB_ENOMEM;
	}
	return GWB_OK;
}

/* *out = a + b, or GWB_ENOMEM (and *out = SIZE_MAX) when it does not fit. */
static inline gwb_status gwb_add_size(size_t a, size_t b, size_t *out)
{
	if (__builtin_add_overflow(a, b, out)) {
		*out = SIZE_MAX;
		return GWB_ENOMEM;
	}
	return GWB_OK;
}

/* *out = a * b * c (an array of a x b elements of c bytes), or GWB_ENOMEM. */
static inline gwb_status gwb_mul3_size(size_t a, size_t b, size_t c, size_t *out)
{
	gwb_status st = gwb_mul_size(a, b, out);

	return st ? st : gwb_mul_size(*out, c, out);
}

/* A 64-bit count from a file or an option as a size_t, or GWB_ENOMEM where size_t is smaller. */
static inline gwb_status gwb_u64_size(uint64_t v, size_t *out)
{
	if (v > SIZE_MAX) {
		*out = SIZE_MAX;
		return GWB_ENOMEM;
	}
	*out = (size_t)v;
	return GWB_OK;
}

#endif
