/* zio.c - gzip and zstd streams (zio.h): the magic-byte sniffer, a decompressing reader over a
 * file descriptor (ISA-L's igzip inflate with gzip framing, member after member; libzstd's
 * decompression stream, frame after frame), run on a thread of its own a few blocks ahead of
 * the reader when pipelined, the same decoder filling a decompressed image in memory that
 * several threads read at offsets as it grows, and a compressing writer (zlib's deflate,
 * libzstd) into an atomic file.
 * It uses ISA-L, zlib, libzstd, fileio.c (gwb_afile_write), intr.c (Ctrl-C while waiting),
 * hugemap.c (the image's chunks on huge pages) and status.c; nothing of gwb above them. */
#define _GNU_SOURCE
#include "zio.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "hugemap.h"
#include "intr.h"

#define IN_BLOCK ((size_t)256 << 10)   /* compressed bytes read at a time */
#define OUT_BLOCK ((size_t)256 << 10)  /* compressed bytes written at a time */
#define ZLIB_CHUNK ((size_t)1 << 30)   /* zlib counts in uInt */
#define PIPE_BLOCK ((size_t)1 << 20)   /* uncompressed bytes per block of the pipeline */
#define PIPE_BLOCKS 4                  /* blocks decoded ahead of the reader */
#define IMG_CHUNK ((size_t)4 << 20)    /* an image's memory comes in chunks of this size */
#define IMG_STEP ((size_t)1 << 20)     /* bytes decoded between two publications */
#define IMG_MAX_CHUNKS ((size_t)1 << 18)  /* 1 TiB of decompressed data */

gwb_zkind gwb_z_sniff(const void *p, size_t n)
{
	const unsigned char *b = p;

	if (n >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8)
		return GWB_Z_GZIP;
	if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
		return GWB_Z_ZSTD;
	return GWB_Z_NONE;
}

gwb_zkind gwb_z_sniff_path(const char *path)
{
	unsigned char b[4];
	ssize_t n;
	int fd;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return GWB_Z_NONE;
	n = pread(fd, b, sizeof(b), 0);
	close(fd);
	return n > 0 ? gwb_z_sniff(b, (size_t)n) : GWB_Z_NONE;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n > k && !strcasecmp(s + n - k, suf);
}

gwb_zkind gwb_z_by_name(const char *path)
{
	if (ends_with(path, ".gz") || ends_with(path, ".gzip"))
		return GWB_Z_GZIP;
	if (ends_with(path, ".zst") || ends_with(path, ".zstd"))
		return GWB_Z_ZSTD;
	return GWB_Z_NONE;
}

const char *gwb_z_name(gwb_zkind k)
{
	return k == GWB_Z_GZIP ? "gzip" : k == GWB_Z_ZSTD ? "zstd" : "none";
}

/* --- reading ------------------------------------------------------------------------------- */

struct gwb_zreader {
	gwb_zkind kind;
	int fd;
	char *path;
	unsigned char *in;   /* compressed bytes in[ipos..ilen) not yet decoded */
	size_t icap, ipos, ilen;
	uint64_t in_base;    /* file offset of in[0] */
	uint64_t out_total;  /* uncompressed bytes produced */
	bool in_eof;         /* fd has no more bytes */
	bool done;           /* the stream ended cleanly */
	/* gzip: ISA-L's inflate, the gzip header and the CRC-32/ISIZE trailer checked */
	struct inflate_state *is;
	bool member_end;     /* between gzip members: another one, zero padding or the end */
	bool zero_pad;       /* zero bytes followed the last member */
	/* zstd */
	ZSTD_DStream *ds;
	size_t zret;         /* the last ZSTD_decompressStream result: 0 at a frame's end */
	/* the pipeline (pipelined): the decoder thread owns everything above while it runs;
	 * the reader takes filled blocks from blk[head..head+count) under mu */
	bool piped;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct zblk {
		unsigned char *p;
		size_t n, pos;   /* bytes decoded into p, and taken by the reader */
		uint64_t in_at;  /* compressed bytes consumed when it was filled */
		uint64_t out_at; /* uncompressed bytes produced by then */
	} blk[PIPE_BLOCKS];
	int head, count;
	bool fin;            /* the decoder is done: the end, or err */
	bool stop;           /* the reader is going away */
	gwb_status err;
	char *errmsg;        /* the decoder thread's message for err */
	uint64_t in_seen, out_seen;  /* progress as of the last block taken */
};



static gwb_status fill(gwb_zreader *z)
{
	ssize_t got;

	z->in_base += z->ilen;
	z->ipos = z->ilen = 0;
	do
		got = read(z->fd, z->in, z->icap);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return gwb_error(GWB_EIO, "%s: read failed after %llu compressed bytes: %s", z->path,
				 (unsigned long long)z->in_base, strerror(errno));
	if (got == 0)
		z->in_eof = true;
	z->ilen = (size_t)got;
	return GWB_OK;
}

static uint64_t at_in(const gwb_zreader *z)
{
	return z->in_base + z->ipos;
}

static gwb_status truncated(const gwb_zreader *z)
{
	const char *tool = z->kind == GWB_Z_GZIP ? "gzip" : "zstd";

	return gwb_error(GWB_EPARSE, "%s: truncated %s stream: the compressed data ends at byte "
			 "%llu (uncompressed byte %llu) inside a %s; the file is incomplete (an "
			 "interrupted download or copy?): fetch it again (`%s -t %s` checks it)",
			 z->path, tool, (unsigned long long)at_in(z),
			 (unsigned long long)z->out_total,
			 z->kind == GWB_Z_GZIP ? "member" : "frame", tool, z->path);
}

static gwb_status corrupt(const gwb_zreader *z, const char *why)
{
	const char *tool = z->kind == GWB_Z_GZIP ? "gzip" : "zstd";

	return gwb_error(GWB_EPARSE, "%s: corrupt %s data at compressed byte %llu (uncompressed "
			 "byte %llu): %s; the file is damaged: fetch it again (`%s -t %s` checks it)",
			 z->path, tool, (unsigned long long)at_in(z),
			 (unsigned long long)z->out_total, why, tool, z->path);
}

static void *pipe_main(void *arg);

gwb_status gwb_zreader_new(gwb_zreader **out, int fd, gwb_zkind kind, const char *path,
			   const void *head, size_t nhead, bool pipelined)
{
	gwb_zreader *z;

	*out = NULL;
	if (kind != GWB_Z_GZIP && kind != GWB_Z_ZSTD)
		return gwb_error(GWB_EINVAL, "%s: not a gzip or zstd stream", path);
	z = calloc(1, sizeof(*z));
	if (!z)
		return gwb_error(GWB_ENOMEM, "%s: out of memory for the decompressor", path);
	z->kind = kind;
	z->fd = fd;
	z->icap = nhead > IN_BLOCK ? nhead : IN_BLOCK;
	z->path = strdup(path);
	z->in = malloc(z->icap);
	if (!z->path || !z->in)
		goto nomem;
	memcpy(z->in, head, nhead);
	z->ilen = nhead;
	if (kind == GWB_Z_GZIP) {
		if (!(z->is = malloc(sizeof(*z->is))))
			goto nomem;
		isal_inflate_init(z->is);
		z->is->crc_flag = ISAL_GZIP;
	} else {
		z->ds = ZSTD_createDStream();
		if (!z->ds || ZSTD_isError(ZSTD_initDStream(z->ds)))
			goto nomem;
	}
	if (pipelined) {
		int i;
		for (i = 0; i < PIPE_BLOCKS; i++)
			if (!(z->blk[i].p = malloc(PIPE_BLOCK)))
				goto nomem;
		if (pthread_mutex_init(&z->mu, NULL))
			goto nomem;
		if (pthread_cond_init(&z->cv, NULL)) {
			pthread_mutex_destroy(&z->mu);
			goto nomem;
		}
		if (pthread_create(&z->th, NULL, pipe_main, z)) {
			/* no thread to be had: decode on the caller's thread */
			pthread_cond_destroy(&z->cv);
			pthread_mutex_destroy(&z->mu);
		} else {
			z->piped = true;
		}
	}
	*out = z;
	return GWB_OK;
nomem:
	gwb_zreader_free(z);
	return gwb_error(GWB_ENOMEM, "%s: out of memory for the %s decompressor", path,
			 gwb_z_name(kind));
}

/* What an ISA-L inflate error means. */
static const char *isal_why(int ret)
{
	switch (ret) {
	case ISAL_INCORRECT_CHECKSUM:
		return "the CRC-32 or length in a gzip trailer does not match the data";
	case ISAL_INVALID_WRAPPER:
		return "an invalid gzip header";
	case ISAL_UNSUPPORTED_METHOD:
		return "a gzip member compressed with a method other than deflate";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_INVALID_SYMBOL:
		return "invalid code in the deflate data";
	case ISAL_NEED_DICT:
		return "a preset dictionary is needed";
	default:
		return "invalid deflate block";
	}
}

/* gzip: inflate member after member; between members only another member's magic or zero
 * padding (as gzip itself accepts) may follow. */
static gwb_status read_gzip(gwb_zreader *z, unsigned char *p, size_t n, size_t *got)
{
	size_t done = 0;
	gwb_status st;

	while (done < n && !z->done) {
		size_t in0, out0;
		uint32_t avail;
		int ret;

		if (z->ipos == z->ilen && !z->in_eof && (st = fill(z)))
			return st;
		if (z->member_end) {
			if (z->ipos == z->ilen) {
				z->done = true;  /* in_eof: fill found nothing more */
				break;
			}
			if (z->in[z->ipos] == 0) {
				while (z->ipos < z->ilen && z->in[z->ipos] == 0)
					z->ipos++;
				z->zero_pad = true;
				continue;
			}
			if (z->zero_pad || z->in[z->ipos] != 0x1f)
				return corrupt(z, "bytes after the end of the gzip data that start no "
					       "further gzip member");
			isal_inflate_reset(z->is);
			z->is->crc_flag = ISAL_GZIP;
			z->member_end = false;
		}
		in0 = z->ilen - z->ipos;
		out0 = n - done;
		avail = (uint32_t)(out0 < ZLIB_CHUNK ? out0 : ZLIB_CHUNK);
		z->is->next_in = z->in + z->ipos;
		z->is->avail_in = (uint32_t)in0;   /* at most icap */
		z->is->next_out = p + done;
		z->is->avail_out = avail;
		ret = isal_inflate(z->is);
		z->ipos += in0 - z->is->avail_in;
		done += avail - z->is->avail_out;
		z->out_total += avail - z->is->avail_out;
		if (ret < 0 || ret == ISAL_NEED_DICT)
			return corrupt(z, isal_why(ret));
		if (z->is->block_state == ISAL_BLOCK_FINISH) {
			/* the trailer checked: bytes the decoder read ahead belong to what follows */
			z->member_end = true;
			continue;
		}
		/* no progress with room to write means it wants input, and there is none */
		if (in0 == z->is->avail_in && avail == z->is->avail_out && z->in_eof &&
		    z->ipos == z->ilen)
			return truncated(z);
	}
	*got = done;
	return GWB_OK;
}

/* zstd: one decompression stream runs frame after frame (skippable frames included). */
static gwb_status read_zstd(gwb_zreader *z, unsigned char *p, size_t n, size_t *got)
{
	ZSTD_outBuffer ob = {p, n, 0};
	gwb_status st;

	while (ob.pos < n && !z->done) {
		ZSTD_inBuffer ib;
		size_t in0, out0, r;

		if (z->ipos == z->ilen && !z->in_eof && (st = fill(z)))
			return st;
		if (z->ipos == z->ilen && z->in_eof && z->zret == 0) {
			z->done = true;  /* every frame finished and flushed */
			break;
		}
		ib.src = z->in;
		ib.size = z->ilen;
		ib.pos = z->ipos;
		in0 = ib.pos;
		out0 = ob.pos;
		r = ZSTD_decompressStream(z->ds, &ob, &ib);
		z->ipos = ib.pos;
		z->out_total += ob.pos - out0;
		if (ZSTD_isError(r) &&
		    ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
			return gwb_error(GWB_EPARSE, "%s: the zstd frame at compressed byte %llu needs "
					 "a decoding window over the 128 MiB gwb allows (written with "
					 "zstd --long?): recompress it without --long, or decompress it "
					 "first (zstd -d --long=31)", z->path,
					 (unsigned long long)at_in(z));
		if (ZSTD_isError(r))
			return corrupt(z, ZSTD_getErrorName(r));
		z->zret = r;
		if (ib.pos == in0 && ob.pos == out0 && z->in_eof && z->ipos == z->ilen && r != 0)
			return truncated(z);
	}
	*got = ob.pos;
	return GWB_OK;
}

static gwb_status decode(gwb_zreader *z, void *p, size_t n, size_t *got)
{
	*got = 0;
	if (!n)
		return GWB_OK;
	return z->kind == GWB_Z_GZIP ? read_gzip(z, p, n, got) : read_zstd(z, p, n, got);
}

/* The decoder thread: fill free blocks until the end, an error, or the reader leaves. */
static void *pipe_main(void *arg)
{
	gwb_zreader *z = arg;

	for (;;) {
		struct zblk *b;
		gwb_status st;
		size_t got;

		pthread_mutex_lock(&z->mu);
		while (z->count == PIPE_BLOCKS && !z->stop)
			pthread_cond_wait(&z->cv, &z->mu);
		if (z->stop) {
			pthread_mutex_unlock(&z->mu);
			return NULL;
		}
		b = &z->blk[(z->head + z->count) % PIPE_BLOCKS];
		pthread_mutex_unlock(&z->mu);
		/* the block is free and only this thread touches the decoder */
		st = decode(z, b->p, PIPE_BLOCK, &got);
		pthread_mutex_lock(&z->mu);
		if (st) {
			z->err = st;
			z->errmsg = strdup(gwb_errmsg());
			z->fin = true;
		} else if (!got) {
			z->fin = true;
		} else {
			b->n = got;
			b->pos = 0;
			b->in_at = at_in(z);
			b->out_at = z->out_total;
			z->count++;
		}
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->mu);
		if (st || !got)
			return NULL;
	}
}

/* The reader's side of the pipeline: bytes from the oldest filled block. */
static gwb_status pipe_read(gwb_zreader *z, unsigned char *p, size_t n, size_t *got)
{
	gwb_status st = GWB_OK;
	size_t done = 0;

	pthread_mutex_lock(&z->mu);
	while (done < n) {
		struct zblk *b;
		size_t k;
		while (!z->count && !z->fin)
			pthread_cond_wait(&z->cv, &z->mu);
		if (!z->count) {
			/* the end, or the decoder's error once every good byte was taken (the
			 * decoder thread is done with its state: its counters can be read) */
			z->in_seen = at_in(z);
			z->out_seen = z->out_total;
			if (z->err && !done)
				st = gwb_error(z->err, "%s", z->errmsg ? z->errmsg : "decoder failed");
			break;
		}
		b = &z->blk[z->head];
		k = b->n - b->pos < n - done ? b->n - b->pos : n - done;
		memcpy(p + done, b->p + b->pos, k);
		b->pos += k;
		done += k;
		if (b->pos == b->n) {
			z->in_seen = b->in_at;
			z->out_seen = b->out_at;
			z->head = (z->head + 1) % PIPE_BLOCKS;
			z->count--;
			pthread_cond_broadcast(&z->cv);
		}
	}
	pthread_mutex_unlock(&z->mu);
	*got = done;
	return st;
}

gwb_status gwb_zreader_read(gwb_zreader *z, void *p, size_t n, size_t *got)
{
	if (z->piped) {
		*got = 0;
		return n ? pipe_read(z, p, n, got) : GWB_OK;
	}
	return decode(z, p, n, got);
}

uint64_t gwb_zreader_in(gwb_zreader *z)
{
	uint64_t v;

	if (!z->piped)
		return at_in(z);
	pthread_mutex_lock(&z->mu);
	v = z->in_seen;
	pthread_mutex_unlock(&z->mu);
	return v;
}

uint64_t gwb_zreader_out(gwb_zreader *z)
{
	uint64_t v;

	if (!z->piped)
		return z->out_total;
	pthread_mutex_lock(&z->mu);
	v = z->out_seen;
	pthread_mutex_unlock(&z->mu);
	return v;
}

void gwb_zreader_free(gwb_zreader *z)
{
	int i;

	if (!z)
		return;
	if (z->piped) {
		pthread_mutex_lock(&z->mu);
		z->stop = true;
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->mu);
		pthread_join(z->th, NULL);
		pthread_cond_destroy(&z->cv);
		pthread_mutex_destroy(&z->mu);
	}
	for (i = 0; i < PIPE_BLOCKS; i++)
		free(z->blk[i].p);
	free(z->errmsg);
	free(z->is);
	ZSTD_freeDStream(z->ds);
	free(z->in);
	free(z->path);
	free(z);
}

/* --- the decompressed image ---------------------------------------------------------------- */

struct gwb_zimage {
	gwb_zreader *z;      /* the decoder (not pipelined): the thread's alone while it runs */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char **chunk;   /* IMG_MAX_CHUNKS slots, filled in order (never moved; on huge
				  * pages: 31k fewer faults for 131 MB, 8 % less CPU a load) */
	uint64_t avail;      /* bytes decoded and published: readable by every thread */
	uint64_t in_seen;    /* compressed bytes consumed by then */
	bool fin;            /* the decoder is done: the end of the stream, or err */
	bool stop;           /* the image is being freed */
	gwb_status err;
	char *errmsg;        /* the decoder thread's message for err */
};

uint64_t gwb_z_size_hint(int fd, gwb_zkind kind, const void *head, size_t nhead, uint64_t zsize)
{
	uint64_t hint = 0;

	if (kind == GWB_Z_GZIP && zsize >= 18) {
		/* ISIZE, the last member's length mod 2^32: the whole file's when it is one member
		 * (taken only when it is no smaller than the compressed file) */
		unsigned char t[4];
		if (pread(fd, t, 4, (off_t)(zsize - 4)) == 4)
			hint = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 |
			       (uint64_t)t[3] << 24;
		if (hint < zsize)
			hint = 0;
	} else if (kind == GWB_Z_ZSTD) {
		/* the first frame's content size, when the writer stored it (zstd(1) does) */
		unsigned long long c = ZSTD_getFrameContentSize(head, nhead);
		if (c != ZSTD_CONTENTSIZE_UNKNOWN && c != ZSTD_CONTENTSIZE_ERROR && c >= zsize)
			hint = c;
	}
	return hint ? hint : zsize * 3;   /* text compresses about three to one */
}

bool gwb_zimage_fits(uint64_t bytes)
{
	unsigned long long kb = 0;
	uint64_t avail = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
				avail = (uint64_t)kb << 10;
				break;
			}
		fclose(f);
	}
	if (!avail) {   /* no /proc: the machine's memory */
		long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		if (pages > 0 && page > 0)
			avail = (uint64_t)pages * (uint64_t)page;
	}
	return avail && bytes <= avail / 2;
}

static void *image_main(void *arg)
{
	gwb_zimage *im = arg;
	size_t k = 0, pos = 0;   /* the chunk being filled, and bytes in it */

	for (;;) {
		gwb_status st = GWB_OK;
		size_t got = 0;
		bool stop;

		pthread_mutex_lock(&im->mu);
		stop = im->stop;
		pthread_mutex_unlock(&im->mu);
		if (stop)
			return NULL;
		if (pos == IMG_CHUNK) {
			k++;
			pos = 0;
		}
		if (k == IMG_MAX_CHUNKS)
			st = gwb_error(GWB_ENOMEM, "%s: more than %llu GiB decompressed; decompress the "
				       "file first", im->z->path,
				       (unsigned long long)(IMG_MAX_CHUNKS * IMG_CHUNK >> 30));
		else if (!im->chunk[k] && !(im->chunk[k] = gwb_hugemap_new(IMG_CHUNK)))
			st = gwb_error(GWB_ENOMEM, "%s: out of memory for the decompressed data (%llu "
				       "MB so far)", im->z->path,
				       (unsigned long long)(im->avail / 1000000));
		if (!st)
			st = decode(im->z, im->chunk[k] + pos,
				    IMG_CHUNK - pos < IMG_STEP ? IMG_CHUNK - pos : IMG_STEP, &got);
		pthread_mutex_lock(&im->mu);
		if (st) {
			im->err = st;
			im->errmsg = strdup(gwb_errmsg());
			im->fin = true;
		} else if (!got) {
			im->fin = true;
		}
		pos += got;
		im->avail += got;
		im->in_seen = at_in(im->z);
		pthread_cond_broadcast(&im->cv);
		pthread_mutex_unlock(&im->mu);
		if (st || !got)
			return NULL;
	}
}

gwb_status gwb_zimage_new(gwb_zimage **out, int fd, gwb_zkind kind, const char *path,
			  const void *head, size_t nhead)
{
	gwb_zimage *im;
	gwb_status st;

	*out = NULL;
	if (!(im = calloc(1, sizeof(*im))) ||
	    !(im->chunk = calloc(IMG_MAX_CHUNKS, sizeof(*im->chunk)))) {
		free(im);
		return gwb_error(GWB_ENOMEM, "%s: out of memory for the decompressor", path);
	}
	if ((st = gwb_zreader_new(&im->z, fd, kind, path, head, nhead, false))) {
		free(im->chunk);
		free(im);
		return st;
	}
	if (pthread_mutex_init(&im->mu, NULL))
		goto nothread;
	if (pthread_cond_init(&im->cv, NULL)) {
		pthread_mutex_destroy(&im->mu);
		goto nothread;
	}
	if (pthread_create(&im->th, NULL, image_main, im)) {
		pthread_cond_destroy(&im->cv);
		pthread_mutex_destroy(&im->mu);
		goto nothread;
	}
	*out = im;
	return GWB_OK;
nothread:
	gwb_zreader_free(im->z);
	free(im->chunk);
	free(im);
	return gwb_error(GWB_ENOMEM, "%s: no thread for the %s decoder", path, gwb_z_name(kind));
}

gwb_status gwb_zimage_pread(gwb_zimage *im, void *p, size_t n, uint64_t off, size_t *got)
{
	unsigned char *dst = p;
	uint64_t avail, want = off + n;
	size_t done = 0;

	*got = 0;
	if (!n)
		return GWB_OK;
	pthread_mutex_lock(&im->mu);
	while (im->avail < want && !im->fin) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;   /* Ctrl-C is looked at every 50 ms */
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&im->cv, &im->mu, &ts);
		if (gwb_intr_pending() && im->avail < want && !im->fin) {
			pthread_mutex_unlock(&im->mu);
			return gwb_error(GWB_EINTR, "%s: loading interrupted", im->z->path);
		}
	}
	avail = im->avail;
	if (avail < want && im->err) {
		gwb_status st = im->err;
		pthread_mutex_unlock(&im->mu);
		/* every good byte before the error is read first, as the stream reader does */
		if (off >= avail)
			return gwb_error(st, "%s", im->errmsg ? im->errmsg : "decoder failed");
		want = avail;
	} else {
		pthread_mutex_unlock(&im->mu);
	}
	if (want > avail)
		want = avail;
	/* the chunks below avail are written and never move: copied without the lock */
	while (off + done < want) {
		uint64_t at = off + done;
		size_t k = (size_t)(at / IMG_CHUNK), o = (size_t)(at % IMG_CHUNK);
		size_t m = IMG_CHUNK - o;
		if (m > want - at)
			m = (size_t)(want - at);
		memcpy(dst + done, im->chunk[k] + o, m);
		done += m;
	}
	*got = done;
	return GWB_OK;
}

bool gwb_zimage_done(gwb_zimage *im, uint64_t *in, uint64_t *out)
{
	bool fin;

	pthread_mutex_lock(&im->mu);
	fin = im->fin && !im->err;
	*in = im->in_seen;
	*out = im->avail;
	pthread_mutex_unlock(&im->mu);
	return fin;
}

void gwb_zimage_free(gwb_zimage *im)
{
	size_t k;

	if (!im)
		return;
	pthread_mutex_lock(&im->mu);
	im->stop = true;
	pthread_mutex_unlock(&im->mu);
	pthread_join(im->th, NULL);
	pthread_cond_destroy(&im->cv);
	pthread_mutex_destroy(&im->mu);
	for (k = 0; k < IMG_MAX_CHUNKS && im->chunk[k]; k++)
		gwb_hugemap_free(im->chunk[k], IMG_CHUNK);
	free(im->chunk);
	free(im->errmsg);
	gwb_zreader_free(im->z);
	free(im);
}

/* --- writing ------------------------------------------------------------------------------- */

struct gwb_zwriter {
	gwb_zkind kind;
	gwb_afile *a;
	unsigned char *out;
	z_stream zs;
	bool zs_live;
	ZSTD_CStream *cs;
};

gwb_status gwb_zwriter_new(gwb_zwriter **out, gwb_afile *a, gwb_zkind kind)
{
	gwb_zwriter *w;

	*out = NULL;
	if (kind != GWB_Z_GZIP && kind != GWB_Z_ZSTD)
		return gwb_error(GWB_EINVAL, "%s: no compression asked for", a->target);
	w = calloc(1, sizeof(*w));
	if (!w || !(w->out = malloc(OUT_BLOCK)))
		goto nomem;
	w->kind = kind;
	w->a = a;
	if (kind == GWB_Z_GZIP) {
		if (deflateInit2(&w->zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			goto nomem;
		w->zs_live = true;
	} else {
		w->cs = ZSTD_createCStream();
		if (!w->cs || ZSTD_isError(ZSTD_CCtx_setParameter(w->cs, ZSTD_c_compressionLevel,
								    ZSTD_CLEVEL_DEFAULT)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->cs, ZSTD_c_checksumFlag, 1)))
			goto nomem;
	}
	*out = w;
	return GWB_OK;
nomem:
	gwb_zwriter_free(w);
	return gwb_error(GWB_ENOMEM, "%s: out of memory for the %s compressor", a->target,
			 gwb_z_name(kind));
}

/* Run the compressor over p[0..n) with flush (Z_NO_FLUSH / Z_FINISH, ZSTD_e_continue /
 * ZSTD_e_end), writing every full output block. */
static gwb_status pump(gwb_zwriter *w, const unsigned char *p, size_t n, bool end)
{
	gwb_status st;

	if (w->kind == GWB_Z_GZIP) {
		do {
			size_t take = n < ZLIB_CHUNK ? n : ZLIB_CHUNK;
			bool last = take == n;
			int ret;
			w->zs.next_in = (Bytef *)p;
			w->zs.avail_in = (uInt)take;
			do {
				w->zs.next_out = w->out;
				w->zs.avail_out = (uInt)OUT_BLOCK;
				ret = deflate(&w->zs, end && last ? Z_FINISH : Z_NO_FLUSH);
				if (ret == Z_STREAM_ERROR)
					return gwb_error(GWB_EIO, "%s: the gzip compressor failed",
							 w->a->target);
				if ((st = gwb_afile_write(w->a, w->out, OUT_BLOCK - w->zs.avail_out)))
					return st;
			} while (w->zs.avail_out == 0 || (end && last && ret != Z_STREAM_END));
			p += take;
			n -= take;
		} while (n);
		return GWB_OK;
	}
	{
		ZSTD_inBuffer ib = {p, n, 0};
		size_t r;
		do {
			ZSTD_outBuffer ob = {w->out, OUT_BLOCK, 0};
			r = ZSTD_compressStream2(w->cs, &ob, &ib, end ? ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(r))
				return gwb_error(GWB_EIO, "%s: the zstd compressor failed: %s",
						 w->a->target, ZSTD_getErrorName(r));
			if ((st = gwb_afile_write(w->a, w->out, ob.pos)))
				return st;
		} while (ib.pos < ib.size || (end && r != 0));
	}
	return GWB_OK;
}

gwb_status gwb_zwriter_write(gwb_zwriter *w, const void *p, size_t n)
{
	return n ? pump(w, p, n, false) : GWB_OK;
}

gwb_status gwb_zwriter_finish(gwb_zwriter *w)
{
	return pump(w, (const unsigned char *)"", 0, true);
}

void gwb_zwriter_free(gwb_zwriter *w)
{
	if (!w)
		return;
	if (w->zs_live)
		deflateEnd(&w->zs);
	ZSTD_freeCStream(w->cs);
	free(w->out);
	free(w);
}
