/* patch.h - the input of a binary-loader fuzz target, as a valid file changed. A target
 * starts from a template (a small object it saved) and reads its input as edits to it, so
 * that mutations keep most of the structure and reach the checks behind the header:
 *   first byte 0: the rest is the whole file (any bytes);
 *   else: records of 4 bytes (u16 offset into the template, u8 operation, u8 value):
 *     op % 4 == 0: set the byte; 1: add the value; 2: set the u32 at the offset to a size
 *     from a table of edge values (0, 1, 2^31, 2^32 - 1, ...) picked by the value;
 *     3: truncate the file at the offset (value odd) or append value bytes of 0xff.
 * The caller then fixes the checksums (fixup.h), writes it to a memfd and loads it. Files a
 * target saves go under the build folder only (patch_scratch). */
#ifndef GWB_FUZZ_PATCH_H
#define GWB_FUZZ_PATCH_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint32_t edge32[] = {0, 1, 2, 3, 7, 255, 256, 65535, 65536, 1u << 20, 1u << 24,
				  (1u << 24) + 1, 1u << 30, 1u << 31, 0xfffffffeu, 0xffffffffu};

/* The file for this input, malloc'd (*n bytes); NULL when out of memory. */
static inline unsigned char *patch_apply(const unsigned char *tpl, size_t tn,
					 const uint8_t *in, size_t size, size_t *n)
{
	unsigned char *b;
	size_t len = tn, cap = tn + 4096, i;

	if (size && in[0] == 0) {
		b = malloc(size);
		if (b && size > 1)
			memcpy(b, in + 1, size - 1);
		*n = size ? size - 1 : 0;
		return b;
	}
	if (!(b = malloc(cap)))
		return NULL;
	memcpy(b, tpl, tn);
	for (i = size ? 1 : 0; i + 4 <= size; i += 4) {
		size_t at = ((size_t)in[i] | (size_t)in[i + 1] << 8);
		uint8_t op = in[i + 2] & 3, v = in[i + 3];
		if (!len)
			break;
		at %= len;
		if (op == 0)
			b[at] = v;
		else if (op == 1)
			b[at] = (unsigned char)(b[at] + v);
		else if (op == 2 && at + 4 <= len)
			memcpy(b + at, &edge32[v % (sizeof(edge32) / sizeof(*edge32))], 4);
		else if (op == 3 && (v & 1))
			len = at;
		else if (op == 3 && len + v <= cap) {
			memset(b + len, 0xff, v);
			len += v;
		}
	}
	*n = len;
	return b;
}

/* A memfd holding b[0..n) and its /proc path; -1 on failure. */
static inline int patch_file(const unsigned char *b, size_t n, char *path, size_t pn)
{
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		return -1;
	if (write(fd, b, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	snprintf(path, pn, "/proc/self/fd/%d", fd);
	return fd;
}

/* A new empty file for a target's own saves, under the build folder ($FUZZ_DIR, which the
 * Makefile exports, else build/fuzz; nothing outside it): path gets its name; returns its
 * descriptor, -1 on failure. */
static inline int patch_scratch(char *path, size_t pn, const char *tag)
{
	const char *dir = getenv("FUZZ_DIR");

	if (!dir || !*dir)
		dir = "build/fuzz";
	mkdir(dir, 0777);
	if ((size_t)snprintf(path, pn, "%s/scratch-%s-XXXXXX", dir, tag) >= pn)
		return -1;
	return mkstemp(path);
}

/* The bytes of a file (the template, saved by the target at start); exits on failure. */
static inline unsigned char *patch_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		abort();
	b = malloc((size_t)len + 1);
	if (!b || fread(b, 1, (size_t)len, f) != (size_t)len)
		abort();
	fclose(f);
	*n = (size_t)len;
	return b;
}

#endif
