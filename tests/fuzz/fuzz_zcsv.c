/* fuzz_zcsv.c - libFuzzer target for compressed CSV (src/zio.c under the CSV reader). The
 * first byte chooses. Bit 0 set: the rest is a file as it is (the seeds are gzip and zstd
 * files, multi-member and multi-frame ones among them, so mutations reach every corner of
 * the decoders: corrupt, truncated, trailing bytes); it must load or fail with a message,
 * never crash, leak or misbehave, streamed (bit 1 clear) or decoded into an image that the
 * byte-range reader reads on 3 threads (bit 1 set). Bit 0 clear: the rest is CSV text,
 * compressed here with gwb's own writer (gzip when bit 1 is set, else zstd); the compressed
 * file must load exactly as the text does (or fail as it does), streamed and through the
 * image, and every shorter prefix of it tried (the cut taken from bits 2-7) must fail both
 * ways: a truncated stream never loads. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv.h"
#include "dataset.h"
#include "fileio.h"
#include "zio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfile(const void *p, size_t n, char *path, size_t cap)
{
	int fd = memfd_create("fuzz-zcsv", 0);

	if (fd < 0)
		return -1;
	if (write(fd, p, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

/* image: a compressed file decoded into memory for the byte-range reader (par_min 1, three
 * threads); else streamed to the sequential reader (small files: par_min stays 4 MiB). */
static gwb_status load(const char *path, gwb_dataset **d, bool image)
{
	gwb_csv_opts o;

	gwb_csv_opts_init(&o);
	o.progress = false;
	o.block = 97;   /* small blocks: refills (and decoder calls) inside every record */
	if (image) {
		o.par_min = 1;
		o.threads = 3;
	}
	*d = NULL;
	return gwb_csv_load(path, &o, d, NULL);
}

static bool same(const gwb_dataset *a, const gwb_dataset *b)
{
	return a->rows == b->rows && a->features == b->features && a->task == b->task &&
	       !memcmp(a->X, b->X, a->rows * (size_t)a->features * sizeof(float)) &&
	       (!a->y || !memcmp(a->y, b->y, a->rows * sizeof(int32_t))) &&
	       (!a->yr || !memcmp(a->yr, b->yr, a->rows * sizeof(float)));
}

/* The text compressed by gwb_zwriter into a new memory file; its size in *n. */
static int compress_to(const uint8_t *p, size_t size, gwb_zkind kind, char *path, size_t cap,
		       size_t *n)
{
	gwb_afile a;
	gwb_zwriter *w = NULL;
	struct stat st;
	int fd = memfile("", 0, path, cap);

	if (fd < 0)
		return -1;
	if (gwb_afile_open(&a, path, "fuzz"))
		goto fail;
	if (gwb_zwriter_new(&w, &a, kind) || gwb_zwriter_write(w, p, size) ||
	    gwb_zwriter_finish(w)) {
		gwb_zwriter_free(w);
		gwb_afile_abort(&a);
		goto fail;
	}
	gwb_zwriter_free(w);
	if (gwb_afile_commit(&a) || fstat(fd, &st))
		goto fail;
	*n = (size_t)st.st_size;
	return fd;
fail:
	close(fd);
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t flags = size ? data[0] : 0;
	gwb_dataset *d = NULL, *e = NULL;
	gwb_status sp, sz;
	char path[64], zpath[64];
	int fd, zfd;
	size_t zn = 0;

	if (size) {
		data++;
		size--;
	}
	if ((fd = memfile(data, size, path, sizeof(path))) < 0)
		return 0;
	if (flags & 1) {
		if (load(path, &d, flags & 2) == GWB_OK) {
			if (gwb_dataset_check(d) != GWB_OK)
				abort();
			gwb_dataset_free(d);
		}
		close(fd);
		return 0;
	}
	zfd = compress_to(data, size, flags & 2 ? GWB_Z_GZIP : GWB_Z_ZSTD, zpath, sizeof(zpath),
			  &zn);
	if (zfd < 0)
		abort();   /* compressing into memory cannot fail */
	sp = load(path, &d, false);
	for (int image = 0; image < 2; image++) {
		sz = load(zpath, &e, image);
		/* a file that starts like a compressed one is read as one: only plain text
		 * compares */
		if (gwb_z_sniff(data, size) == GWB_Z_NONE &&
		    ((sp == GWB_OK) != (sz == GWB_OK) || (sp == GWB_OK && !same(d, e))))
			abort();
		gwb_dataset_free(e);
		e = NULL;
	}
	gwb_dataset_free(d);
	/* a prefix of the stream (cut somewhere past the magic bytes) never loads */
	if (zn > 4) {
		size_t cut = 4 + (size_t)(flags >> 2) * (zn - 4) / 64;
		if (ftruncate(zfd, (off_t)cut) == 0 &&
		    (load(zpath, &e, false) == GWB_OK || load(zpath, &e, true) == GWB_OK))
			abort();
		gwb_dataset_free(e);
	}
	close(zfd);
	close(fd);
	return 0;
}
