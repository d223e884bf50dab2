/* fmt.h - how gwb writes sizes, times and counts for people, in one place: the printed
 * summaries (Dataset, SparseMatrix, Eigen, Forest), the panel and the Lua side (gwb.fmt_bytes,
 * gwb.fmt_time, gwb.plural) all use these. Each writes into the caller's buffer and returns it. */
#ifndef GWB_FMT_H
#define GWB_FMT_H

#include <stddef.h>

/* Bytes in the largest unit that keeps the number >= 1 (B, KiB, MiB, GiB, TiB, PiB):
 * "512 B", "1.5 KiB", "12.3 MiB", "256 MiB" (3 significant digits, at most one decimal). */
char *gwb_fmt_bytes(char *buf, size_t n, double bytes);

/* A duration given in milliseconds: "0.042 ms", "3.14 ms", "250.1 ms", "2.50 s" (one second and
 * more), "12.3 s" (ten seconds and more), "2 min 5 s" (two minutes and more). */
char *gwb_fmt_ms(char *buf, size_t n, double ms);

/* "1 iteration", "3 iterations": count and the noun, singular for exactly one (nouns that add
 * "es" or change pass their plural: gwb_fmt_count(b, n, k, "matrix", "matrices")). */
/* The shortest "%.*g" (15 to 17 digits) of v that reads back as the same double: how a
 * float64 value is shown and written (CSV) so that it round-trips. */
char *gwb_fmt_f64(char *buf, size_t n, double v);
char *gwb_fmt_count(char *buf, size_t n, long long count, const char *one, const char *many);

/* The length (1 to 4) of the valid UTF-8 sequence that starts s (n bytes available), or 0
 * when the byte at s starts none: strict, as JSON needs it (no overlong forms, no surrogates,
 * nothing past U+10FFFF). JSON writers write such a byte as \u00XX, its Latin-1 reading. */
size_t gwb_utf8_seq(const unsigned char *s, size_t n);

#endif
