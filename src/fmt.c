/* fmt.c - sizes, times and counts for people (fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
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
