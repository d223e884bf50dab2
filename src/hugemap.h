/* hugemap.h - anonymous memory on 2 MiB boundaries with transparent huge pages asked for: for
 * buffers written once from start to end (the CSV reader's row chunks, a decompressed image),
 * where one 2 MiB fault costs far less than 512 small ones. Only a hint: without THP they
 * are ordinary pages. The caller owns a mapping and releases it with gwb_hugemap_free. */
#ifndef GWB_HUGEMAP_H
#define GWB_HUGEMAP_H

#include <stddef.h>

/* n bytes (rounded up to whole pages), zeroed, aligned to 2 MiB; NULL when out of memory. */
void *gwb_hugemap_new(size_t n);

/* Release a mapping of n bytes from gwb_hugemap_new (the same n). NULL is allowed. */
void gwb_hugemap_free(void *p, size_t n);

#endif
