/* hugemap.c - 2 MiB-aligned anonymous mappings with MADV_HUGEPAGE (hugemap.h). Uses only the
 * C library and the kernel: nothing of gwb. */
#define _GNU_SOURCE
#include "hugemap.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)

static size_t whole_pages(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

static void *map_aligned(size_t n, int flags)
{
	size_t len;
	uintptr_t a;
	char *m;

	n = whole_pages(n ? n : 1);
	len = n + HUGE_PAGE;
	if (len < n)
		return NULL;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* trim the mapping to its 2 MiB-aligned part */
	a = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (a > (uintptr_t)m)
		munmap(m, a - (uintptr_t)m);
	if ((uintptr_t)m + len > a + n)
		munmap((void *)(a + n), (uintptr_t)m + len - (a + n));
#ifdef MADV_HUGEPAGE
	if (n >= HUGE_PAGE)
		madvise((void *)a, n & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
	return (void *)a;
}

void *gwb_hugemap_new(size_t n)
{
	return map_aligned(n, 0);
}

void *gwb_hugemap_reserve(size_t n)
{
	return map_aligned(n, MAP_NORESERVE);
}

size_t gwb_hugemap_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

bool gwb_hugemap_move(void *src, size_t n, void *dst)
{
	n = whole_pages(n ? n : 1);
	return mremap(src, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, dst) != MAP_FAILED;
}

void *gwb_hugemap_resize(void *p, size_t old, size_t n)
{
	void *q;

	old = whole_pages(old ? old : 1);
	n = whole_pages(n ? n : 1);
	if (n == old)
		return p;
	q = mremap(p, old, n, MREMAP_MAYMOVE);
	return q == MAP_FAILED ? NULL : q;
}

void gwb_hugemap_free(void *p, size_t n)
{
	if (p)
		munmap(p, whole_pages(n ? n : 1));
}
