/* zio.h - compressed streams: gzip (ISA-L's igzip reads, zlib writes) and zstd (libzstd), told
 * apart by their magic bytes whatever a file's name says. A gwb_zreader decompresses a file
 * descriptor block by block for the CSV reader's refill (memory stays a block: pipes, stdin);
 * a gwb_zimage decodes a regular file into memory on a thread of its own while the parallel
 * CSV reader's threads read it at offsets. Multi-member gzip and concatenated zstd frames
 * read as one stream. A gwb_zwriter compresses into an atomic file (fileio.h) for
 * d:write_csv("x.csv.gz" | ".zst"). The caller owns all three and frees them. */
#ifndef GWB_ZIO_H
#define GWB_ZIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fileio.h"
#include "status.h"

typedef enum gwb_zkind { GWB_Z_NONE = 0, GWB_Z_GZIP, GWB_Z_ZSTD } gwb_zkind;

/* The compression of a stream that starts with p[0..n): gzip (1f 8b 08), zstd (28 b5 2f fd),
 * else GWB_Z_NONE (plain data, or too few bytes to tell). */
gwb_zkind gwb_z_sniff(const void *p, size_t n);

/* gwb_z_sniff on the first bytes of the file at path (GWB_Z_NONE when it cannot be read:
 * the loader that opens it reports that). */
gwb_zkind gwb_z_sniff_path(const char *path);

/* The compression a path's name asks for when writing: ".gz"/".gzip" gzip, ".zst"/".zstd"
 * zstd (any case), else GWB_Z_NONE. */
gwb_zkind gwb_z_by_name(const char *path);

/* "gzip", "zstd" or "none". */
const char *gwb_z_name(gwb_zkind k);

/* --- reading ------------------------------------------------------------------------------- */

typedef struct gwb_zreader gwb_zreader;

/* Decompress fd (which the caller keeps open and closes after gwb_zreader_free) as kind. The
 * stream's first bytes, already read by the caller to sniff it, are head[0..nhead) (copied);
 * reading continues from fd's current position. path names the file in messages. pipelined:
 * a thread of the reader's own decodes up to 4 blocks of 1 MiB ahead, so decompressing and
 * parsing overlap (a producer, not a parallel loop: no pool worker waits on it); the calls
 * below stay on one caller thread either way. */
gwb_status gwb_zreader_new(gwb_zreader **z, int fd, gwb_zkind kind, const char *path,
			   const void *head, size_t nhead, bool pipelined);

/* Up to n decompressed bytes into p; *got = 0 only at the end of the stream. A truncated or
 * corrupt stream, or trailing bytes that are no further member/frame: GWB_EPARSE with the
 * compressed and uncompressed byte offsets and what to do; GWB_EIO for a failed read. */
gwb_status gwb_zreader_read(gwb_zreader *z, void *p, size_t n, size_t *got);

/* Compressed bytes consumed so far (progress), and uncompressed bytes produced, as of what
 * the caller has read (exact once gwb_zreader_read gave *got = 0). */
uint64_t gwb_zreader_in(gwb_zreader *z);
uint64_t gwb_zreader_out(gwb_zreader *z);

/* Release the decoder, its buffers and its thread (fd stays open). NULL is allowed. */
void gwb_zreader_free(gwb_zreader *z);

/* --- the decompressed image ---------------------------------------------------------------
 * For the parallel CSV reader: a thread of the image's own decodes the whole stream into
 * memory (chunks of 4 MiB, kept until the image is freed) while any number of threads read it
 * at offsets, as they would pread a file, each waiting only for the bytes it asks for. */

typedef struct gwb_zimage gwb_zimage;

/* The expected decompressed size of a compressed regular file of zsize bytes whose first
 * bytes are head[0..nhead): gzip's ISIZE trailer (the last member's length), zstd's first
 * frame content size, else (or when smaller than zsize) 3 x zsize. A hint for cutting the
 * work: the stream may hold more or less. */
uint64_t gwb_z_size_hint(int fd, gwb_zkind kind, const void *head, size_t nhead, uint64_t zsize);

/* Whether an image of about bytes fits: at most half the memory the kernel reports available
 * (MemAvailable; else the machine's memory). A stream too large for one is read through a
 * gwb_zreader, a block at a time. */
bool gwb_zimage_fits(uint64_t bytes);

/* Start decoding fd as kind into an image (head, fd and path as for gwb_zreader_new; fd stays
 * the caller's and must stay open until gwb_zimage_free). */
gwb_status gwb_zimage_new(gwb_zimage **im, int fd, gwb_zkind kind, const char *path,
			  const void *head, size_t nhead);

/* As pread: up to n decompressed bytes from offset off into p, waiting until they are decoded;
 * *got < n only at the end of the stream (0 at or after it). A truncated or corrupt stream:
 * the bytes before the damage, then the decoder's error (gwb_zreader_read's messages) to every
 * read past it; GWB_EINTR when Ctrl-C comes while waiting. Any thread. */
gwb_status gwb_zimage_pread(gwb_zimage *im, void *p, size_t n, uint64_t off, size_t *got);

/* True once the whole stream decoded without error; *in and *out: the compressed bytes
 * consumed and the decompressed bytes produced so far. */
bool gwb_zimage_done(gwb_zimage *im, uint64_t *in, uint64_t *out);

/* Stop the decoder and release the image. NULL is allowed. */
void gwb_zimage_free(gwb_zimage *im);

/* --- writing ------------------------------------------------------------------------------- */

typedef struct gwb_zwriter gwb_zwriter;

/* A compressor (kind gzip or zstd, the library's default level) writing through a's fd with
 * gwb_afile_write; a stays the caller's to commit or abort after gwb_zwriter_finish. */
gwb_status gwb_zwriter_new(gwb_zwriter **w, gwb_afile *a, gwb_zkind kind);

/* Compress n bytes at p (output goes to the file as the compressor's buffer fills). */
gwb_status gwb_zwriter_write(gwb_zwriter *w, const void *p, size_t n);

/* End the stream (the gzip trailer, the zstd epilogue) and write what is left. */
gwb_status gwb_zwriter_finish(gwb_zwriter *w);

/* Release the compressor. NULL is allowed. */
void gwb_zwriter_free(gwb_zwriter *w);

#endif
