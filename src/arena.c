/* arena.c - strings in large blocks (arena.h). Blocks grow from 64 KiB to 4 MiB; a string
 * longer than a block gets a block of its own. */
#include "arena.h"

#include <stdlib.h>
#include <string.h>

struct block {
	struct block *next;
	size_t size, used;
	char data[];
};

struct gwb_arena {
	struct block *head;   /* the block being filled; the others follow */
	size_t bytes;
};

#define BLOCK_MIN ((size_t)64 << 10)
#define BLOCK_MAX ((size_t)4 << 20)

gwb_arena *gwb_arena_new(void)
{
	return calloc(1, sizeof(gwb_arena));
}

char *gwb_arena_strndup(gwb_arena *a, const char *s, size_t n)
{
	struct block *b = a->head;
	char *p;

	if (!b || b->size - b->used < n + 1) {
		size_t size = b ? b->size * 2 : BLOCK_MIN;
		if (size > BLOCK_MAX)
			size = BLOCK_MAX;
		if (size < n + 1)
			size = n + 1;
		if (n + 1 < n || !(b = malloc(sizeof(*b) + size)))
			return NULL;
		b->size = size;
		b->used = 0;
		/* a string bigger than a block: its own block behind the one being filled */
		if (a->head && size == n + 1 && a->head->size - a->head->used > size / 2) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
		a->bytes += size;
	}
	p = b->data + b->used;
	memcpy(p, s, n);
	p[n] = 0;
	b->used += n + 1;
	return p;
}

void gwb_arena_adopt(gwb_arena *dst, gwb_arena *src)
{
	struct block *b;

	if (!src)
		return;
	if (src->head) {
		/* src's blocks go behind dst's first (dst keeps filling the one it was filling) */
		for (b = src->head; b->next; b = b->next)
			;
		if (dst->head) {
			b->next = dst->head->next;
			dst->head->next = src->head;
		} else {
			dst->head = src->head;
		}
		dst->bytes += src->bytes;
	}
	free(src);
}

size_t gwb_arena_bytes(const gwb_arena *a)
{
	return a ? a->bytes : 0;
}

void gwb_arena_free(gwb_arena *a)
{
	struct block *b, *n;

	if (!a)
		return;
	for (b = a->head; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}
