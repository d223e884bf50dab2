/* hugemap.h - anonymous memory on 2 MiB boundaries with transparent huge pages asked for: for
 * buffers written once from start to end (the CSV reader's row chunks, a decompressed image),
 * where one 2 MiB fault costs far less than 512 small ones. Only a hint: without THP they
 * are ordinary pages. The caller owns a mapping and releases it with gwb_hugemap_free. */
#ifndef GWB_HUGEMAP_H
#define GWB_HUGEMAP_H

#include <stdbool.h>
#include <stddef.h>

/* n bytes (rounded up to whole pages), zeroed, aligned to 2 MiB; NULL when out of memory. */
void *gwb_hugemap_new(size_t n);

/* The same, but the pages are not reserved (MAP_NORESERVE): room for an upper bound of which
 * only what is written costs memory. */
void *gwb_hugemap_reserve(size_t n);

/* The page size (what gwb_hugemap_move moves). */
size_t gwb_hugemap_page(void);

/* Move the whole pages of src[0..n) (n rounded up to pages; src page-aligned, part of a
 * mapping from here) to dst (page-aligned), replacing what was mapped there, without copying
 * a byte: src's pages are gone afterwards. false (nothing moved) when the kernel refused. */
bool gwb_hugemap_move(void *src, size_t n, void *dst);

/* A mapping of old bytes grown or shrunk to n, its contents kept (pages moved, not copied);
 * NULL (p still valid) when out of memory. The result is released with n. */
void *gwb_hugemap_resize(void *p, size_t old, size_t n);

/* Release a mapping of n bytes from gwb_hugemap_new (the same n). NULL is allowed. */
void gwb_hugemap_free(void *p, size_t n);

#endif
