/* nearest.h - the nearest name: for an error about a name that is not known ("unknown option
 * 'dpeth'"), the known name it most likely meant, by edit distance. */
#ifndef GWB_NEAREST_H
#define GWB_NEAREST_H

#include <stddef.h>

/* The entry of names (n of them; NULL-terminated when n is 0) closest to s by Levenshtein
 * distance (ties: the first), or NULL when none is within max(2, strlen(s) / 3) edits. The
 * result points into names. */
const char *gwb_nearest_name(const char *s, const char *const *names, size_t n);

#endif
