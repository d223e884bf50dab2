/* nearest.c - the nearest known name to an unknown one (nearest.h): Levenshtein distance over
 * bytes with one row of the table, case-insensitive, for "did you mean" in error messages. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "nearest.h"

static size_t distance(const char *a, const char *b, size_t *row)
{
	size_t la = strlen(a), lb = strlen(b), i, j;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], c = tolower((unsigned char)a[i - 1]) !=
						tolower((unsigned char)b[j - 1]);
			size_t v = diag + c;
			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	return row[lb];
}

const char *gwb_nearest_name(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, limit = strlen(s) / 3, k;

	if (limit < 2)
		limit = 2;
	for (k = 0; n ? k < n : names[k] != NULL; k++) {
		size_t lb = strlen(names[k]), d;
		size_t *row = malloc((lb + 1) * sizeof(size_t));
		if (!row)
			return NULL;
		d = distance(s, names[k], row);
		free(row);
		if (d < bd) {
			bd = d;
			best = names[k];
		}
	}
	return bd <= limit ? best : NULL;
}
