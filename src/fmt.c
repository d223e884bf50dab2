/* fmt.c - sizes, times and counts for people (fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *gwb_fmt_bytes(char *buf, size_t n, double b)
{
	static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int i = 0;

	if (!(b == b)) {
		snprintf(buf, n, "?");
		return buf;
	}
	while (fabs(b) >= 1024 && i < 5) {
		b /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%.0f B", b);
	else if (fabs(b) < 100 && b != floor(b))
		snprintf(buf, n, "%.1f %s", b, u[i]);
	else
		snprintf(buf, n, "%.0f %s", b, u[i]);
	return buf;
}

char *gwb_fmt_ms(char *buf, size_t n, double ms)
{
	double s = ms / 1e3;

	if (!(ms == ms))
		snprintf(buf, n, "?");
	else if (ms < 0.1)
		snprintf(buf, n, "%.3f ms", ms);
	else if (ms < 10)
		snprintf(buf, n, "%.2f ms", ms);
	else if (ms < 1000)
		snprintf(buf, n, "%.1f ms", ms);
	else if (s < 10)
		snprintf(buf, n, "%.2f s", s);
	else if (s < 120)
		snprintf(buf, n, "%.1f s", s);
	else
		snprintf(buf, n, "%d min %d s", (int)(s / 60), (int)fmod(s, 60));
	return buf;
}

char *gwb_fmt_count(char *buf, size_t n, long long count, const char *one, const char *many)
{
	if (count == 1)
		snprintf(buf, n, "1 %s", one);
	else if (many)
		snprintf(buf, n, "%lld %s", count, many);
	else
		snprintf(buf, n, "%lld %ss", count, one);
	return buf;
}

size_t gwb_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp, min;
	size_t k, i;

	if (c < 0x80)
		return n ? 1 : 0;
	if (c >= 0xc2 && c <= 0xdf) {
		k = 2;
		cp = c & 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		k = 3;
		cp = c & 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		k = 4;
		cp = c & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < k)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

char *gwb_fmt_f64(char *buf, size_t n, double v)
{
	int p;

	for (p = 15; p < 17; p++) {
		snprintf(buf, n, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, n, "%.17g", v);
	return buf;
}
