/* arena.h - strings allocated in large blocks and released all at once: the storage of a
 * free-text column (dataset.h's gwb_text) and of the CSV reader's text while it parses. A
 * million short strings cost a few blocks instead of a million malloc'd pieces, whose frees
 * alone took 0.3-0.5 s (issue 28). Not thread-safe: one arena a thread, moved together by
 * gwb_arena_adopt. */
#ifndef GWB_ARENA_H
#define GWB_ARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_arena gwb_arena;

/* An empty arena (NULL when out of memory). */
gwb_arena *gwb_arena_new(void);
/* A NUL-terminated copy of s[0..n) that lives as long as the arena; NULL when out of memory. */
char *gwb_arena_strndup(gwb_arena *a, const char *s, size_t n);
/* Moves every block of src into dst (their strings stay where they are) and frees src. */
void gwb_arena_adopt(gwb_arena *dst, gwb_arena *src);
/* Bytes the arena holds (its blocks' sizes). */
size_t gwb_arena_bytes(const gwb_arena *a);
/* Releases the arena and every string in it (NULL is fine). */
void gwb_arena_free(gwb_arena *a);

#ifdef __cplusplus
}
#endif
#endif
