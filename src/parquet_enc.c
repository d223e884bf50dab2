/* parquet_enc.c - Parquet's byte-level encodings (parquet_impl.h), as the format's Encodings.md
 * and Compression.md define them: the page codecs (snappy through libsnappy's C API, gzip
 * through zlib, zstd through libzstd; the others named and refused), the RLE/bit-packed
 * hybrid (levels and dictionary indices, both directions) and DELTA_BINARY_PACKED. Every read
 * is bounded by the end pointer it is given; malformed input returns false or GWB_EPARSE,
 * never reads past it. Uses only status.h, size.h and the three libraries. */
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet_impl.h"
#include "size.h"

const char *pq_codec_name(int codec)
{
	static const char *const n[] = {"uncompressed", "snappy", "gzip", "LZO", "Brotli",
					"LZ4 (Hadoop)", "zstd", "LZ4_RAW"};
	return codec >= 0 && codec < 8 ? n[codec] : "an unknown codec";
}

const char *pq_encoding_name(int enc)
{
	static const char *const n[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE",
					"BIT_PACKED", "DELTA_BINARY_PACKED",
					"DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
					"RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
	return enc >= 0 && enc < 10 ? n[enc] : "an unknown encoding";
}

bool pq_codec_supported(int codec)
{
	return codec == PQ_CODEC_NONE || codec == PQ_CODEC_SNAPPY || codec == PQ_CODEC_GZIP ||
	       codec == PQ_CODEC_ZSTD;
}

gwb_status pq_decompress(int codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn,
			 char *why, size_t wn)
{
	switch (codec) {
	case PQ_CODEC_NONE:
		if (n != dn) {
			snprintf(why, wn, "an uncompressed page of %zu bytes that says %zu", n, dn);
			return GWB_EPARSE;
		}
		if (n)
			memcpy(dst, src, n);
		return GWB_OK;
	case PQ_CODEC_SNAPPY: {
		size_t len = 0, out = dn;
		if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK ||
		    len != dn ||
		    snappy_uncompress((const char *)src, n, (char *)dst, &out) != SNAPPY_OK ||
		    out != dn) {
			snprintf(why, wn, "a snappy page that does not decompress to the %zu bytes "
				 "its header says", dn);
			return GWB_EPARSE;
		}
		return GWB_OK;
	}
	case PQ_CODEC_GZIP: {
		z_stream z;
		int rc;
		size_t total = 0;
		memset(&z, 0, sizeof(z));
		if (inflateInit2(&z, 15 + 32) != Z_OK) {  /* gzip or zlib header */
			snprintf(why, wn, "zlib could not start");
			return GWB_ENOMEM;
		}
		z.next_in = (Bytef *)(uintptr_t)src;
		z.avail_in = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
		z.next_out = dst;
		z.avail_out = dn > UINT32_MAX ? UINT32_MAX : (uInt)dn;
		do {   /* concatenated gzip members, as some writers make */
			rc = inflate(&z, Z_FINISH);
			if (rc == Z_STREAM_END && z.avail_in && z.total_out < dn) {
				total = z.total_out;
				if (inflateReset(&z) != Z_OK)
					break;
				(void)total;
				continue;
			}
			break;
		} while (1);
		total = (size_t)((uint8_t *)z.next_out - dst);
		inflateEnd(&z);
		if (rc != Z_STREAM_END || total != dn) {
			snprintf(why, wn, "a gzip page that does not decompress to the %zu bytes its "
				 "header says (zlib: %s after %zu bytes)", dn,
				 rc == Z_STREAM_END ? "ended" : rc == Z_BUF_ERROR ? "cut short" :
				 "bad data", total);
			return GWB_EPARSE;
		}
		return GWB_OK;
	}
	case PQ_CODEC_ZSTD: {
		size_t r = ZSTD_decompress(dst, dn, src, n);
		if (ZSTD_isError(r) || r != dn) {
			snprintf(why, wn, "a zstd page that does not decompress to the %zu bytes its "
				 "header says (%s)", dn, ZSTD_isError(r) ? ZSTD_getErrorName(r) :
				 "a different size");
			return GWB_EPARSE;
		}
		return GWB_OK;
	}
	default:
		snprintf(why, wn, "the %s codec", pq_codec_name(codec));
		return GWB_EINVAL;
	}
}

gwb_status pq_compress(int codec, const uint8_t *src, size_t n, pq_buf *b)
{
	size_t cap;

	if (codec == PQ_CODEC_NONE) {
		pq_put(b, src, n);
		return b->oom ? GWB_ENOMEM : GWB_OK;
	}
	cap = codec == PQ_CODEC_SNAPPY ? snappy_max_compressed_length(n)
	      : codec == PQ_CODEC_ZSTD ? ZSTD_compressBound(n) : compressBound((uLong)n) + 32;
	pq_put(b, NULL, 0);
	if (b->oom || gwb_add_size(cap, 0, &cap))
		return GWB_ENOMEM;
	{   /* make room, then compress in place at the end */
		size_t at = b->n, need;
		if (gwb_add_size(at, cap, &need))
			return GWB_ENOMEM;
		if (need > b->cap) {
			uint8_t *q = realloc(b->p, need);
			if (!q) {
				b->oom = true;
				return GWB_ENOMEM;
			}
			b->p = q;
			b->cap = need;
		}
		if (codec == PQ_CODEC_SNAPPY) {
			size_t out = cap;
			if (snappy_compress((const char *)src, n, (char *)b->p + at, &out) != SNAPPY_OK)
				return gwb_error(GWB_EIO, "snappy could not compress a page of %zu bytes", n);
			b->n += out;
		} else if (codec == PQ_CODEC_ZSTD) {
			size_t r = ZSTD_compress(b->p + at, cap, src, n, 3);
			if (ZSTD_isError(r))
				return gwb_error(GWB_EIO, "zstd could not compress a page of %zu bytes: %s",
						 n, ZSTD_getErrorName(r));
			b->n += r;
		} else {   /* gzip: a gzip member (header and CRC), as Parquet readers expect */
			z_stream z;
			int rc;
			memset(&z, 0, sizeof(z));
			if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
				return gwb_error(GWB_ENOMEM, "zlib could not start");
			z.next_in = (Bytef *)(uintptr_t)src;
			z.avail_in = (uInt)n;
			z.next_out = b->p + at;
			z.avail_out = (uInt)cap;
			rc = deflate(&z, Z_FINISH);
			b->n += z.total_out;
			deflateEnd(&z);
			if (rc != Z_STREAM_END)
				return gwb_error(GWB_EIO, "zlib could not compress a page of %zu bytes", n);
		}
	}
	return GWB_OK;
}

/* --- RLE / bit-packed hybrid ---------------------------------------------------------------- */

int pq_bit_width(uint32_t v)
{
	int w = 0;

	while (v) {
		w++;
		v >>= 1;
	}
	return w;
}

void pq_rle_init(pq_rle *r, const uint8_t *p, const uint8_t *end, int bw)
{
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->end = end;
	r->bw = bw;
}

static bool rd_uvarint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	int s;

	for (s = 0; s < 64 && p < end; s += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80)) {
			*pp = p;
			*v = x;
			return true;
		}
	}
	return false;
}

static bool rle_next_run(pq_rle *r)
{
	uint64_t h;

	if (!rd_uvarint(&r->p, r->end, &h))
		return false;
	if (h & 1) {   /* bit-packed: (h >> 1) groups of 8 values */
		uint64_t groups = h >> 1, bytes;
		if (!groups || groups > (uint64_t)(r->end - r->p) / 1)   /* quick bound */
			return false;
		bytes = groups * (uint64_t)r->bw;   /* groups * 8 values * bw bits / 8 */
		if (groups > (UINT64_MAX / 8) || bytes > (uint64_t)(r->end - r->p)) {
			/* a last run may be cut short: keep what is there (decoders stop at the
			 * page's count) */
			bytes = (uint64_t)(r->end - r->p);
		}
		if (groups * 8 > UINT32_MAX)
			return false;
		r->packed = true;
		r->run = (uint32_t)(groups * 8);
		r->bits = r->p;
		r->bitpos = 0;
		r->p += bytes;
		/* values wholly inside the bytes kept */
		if (r->bw && bytes * 8 / (uint64_t)r->bw < r->run)
			r->run = (uint32_t)(bytes * 8 / (uint64_t)r->bw);
		return r->run > 0;
	} else {
		int nb = (r->bw + 7) / 8, i;
		uint64_t cnt = h >> 1;
		if (!cnt || cnt > UINT32_MAX || (uint64_t)(r->end - r->p) < (uint64_t)nb)
			return false;
		r->value = 0;
		for (i = 0; i < nb; i++)
			r->value |= (uint32_t)r->p[i] << (8 * i);
		r->p += nb;
		if (r->bw < 32 && (r->value >> r->bw))
			return false;
		r->packed = false;
		r->run = (uint32_t)cnt;
		return true;
	}
}

bool pq_rle_const(pq_rle *r, size_t n, uint32_t *value)
{
	pq_rle was = *r;

	if (r->bw == 0) {
		*value = 0;
		return true;
	}
	if ((!r->run && !rle_next_run(r)) || r->packed || r->run < n) {
		*r = was;
		return false;
	}
	*value = r->value;
	r->run -= (uint32_t)n;
	return true;
}

bool pq_rle_get(pq_rle *r, uint32_t *out, size_t n)
{
	size_t i = 0;

	if (r->bw == 0) {   /* every value 0, nothing stored */
		memset(out, 0, n * sizeof(*out));
		return true;
	}
	while (i < n) {
		size_t k;
		if (!r->run && !rle_next_run(r))
			return false;
		k = r->run < n - i ? r->run : n - i;
		if (!r->packed) {
			size_t j;
			for (j = 0; j < k; j++)
				out[i + j] = r->value;
		} else {
			size_t j = 0;
			uint64_t mask = r->bw == 32 ? 0xffffffffu : (1u << r->bw) - 1;
			/* the run's bytes end at r->p: while 8 bytes from a value's first one are
			 * inside them, one unaligned load holds it (bw + 7 <= 39 bits) */
			uint64_t bytes = (uint64_t)(r->p - r->bits), bw = (uint64_t)r->bw;
			if (bw == 1 && !(r->bitpos & 7)) {   /* definition levels: a byte, 8 values */
				for (; j + 8 <= k; j += 8) {
					unsigned b = r->bits[r->bitpos >> 3];
					int t;
					for (t = 0; t < 8; t++)
						out[i + j + t] = (b >> t) & 1;
					r->bitpos += 8;
				}
			}
			for (; j < k && (r->bitpos >> 3) + 8 <= bytes; j++) {
				uint64_t v;
				memcpy(&v, r->bits + (r->bitpos >> 3), 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
				v = __builtin_bswap64(v);
#endif
				out[i + j] = (uint32_t)((v >> (r->bitpos & 7)) & mask);
				r->bitpos += bw;
			}
			for (; j < k; j++) {
				uint64_t bp = r->bitpos, v = 0;
				size_t byte = (size_t)(bp >> 3);
				int sh = (int)(bp & 7), got = 0;
				while (got < r->bw + sh) {
					v |= (uint64_t)r->bits[byte++] << got;
					got += 8;
				}
				out[i + j] = (uint32_t)((v >> sh) & mask);
				r->bitpos += (uint64_t)r->bw;
			}
		}
		r->run -= (uint32_t)k;
		i += k;
	}
	return true;
}

static void put_packed(pq_buf *b, const uint32_t *v, size_t n, int bw)
{
	/* n is a multiple of 8 (the caller pads the last group) */
	uint64_t acc = 0;
	int have = 0;
	size_t i;

	pq_put_varint(b, (uint64_t)(n / 8) << 1 | 1);
	for (i = 0; i < n; i++) {
		acc |= (uint64_t)v[i] << have;
		have += bw;
		while (have >= 8) {
			pq_put_byte(b, (uint8_t)acc);
			acc >>= 8;
			have -= 8;
		}
	}
	if (have)
		pq_put_byte(b, (uint8_t)acc);
}

static void put_rle(pq_buf *b, uint32_t v, size_t n, int bw)
{
	int i;

	pq_put_varint(b, (uint64_t)n << 1);
	for (i = 0; i < (bw + 7) / 8; i++)
		pq_put_byte(b, (uint8_t)(v >> (8 * i)));
}

void pq_rle_put(pq_buf *b, const uint32_t *v, size_t n, int bw)
{
	size_t i = 0, lit = 0;   /* literals pending: v[i - lit .. i) */
	uint32_t pad[8];

	if (bw == 0)
		return;
	while (i < n) {
		size_t r = 1;
		while (i + r < n && v[i + r] == v[i])
			r++;
		if (r >= 8 + (lit % 8 ? 8 - lit % 8 : 0)) {
			size_t take = lit % 8 ? 8 - lit % 8 : 0;
			lit += take;
			i += take;
			r -= take;
			if (lit)
				put_packed(b, v + i - lit, lit, bw);
			lit = 0;
			put_rle(b, v[i], r, bw);
			i += r;
		} else {
			lit += r;
			i += r;
		}
	}
	if (lit) {   /* the last group padded with zeros; readers stop at the count */
		size_t whole = lit / 8 * 8, rest = lit - whole, j;
		if (whole)
			put_packed(b, v + n - lit, whole, bw);
		if (rest) {
			memset(pad, 0, sizeof(pad));
			for (j = 0; j < rest; j++)
				pad[j] = v[n - rest + j];
			put_packed(b, pad, 8, bw);
		}
	}
}

/* --- DELTA_BINARY_PACKED -------------------------------------------------------------------- */

static bool delta_header(const uint8_t **p, const uint8_t *end, uint64_t *block,
			 uint64_t *mini, uint64_t *total, int64_t *first)
{
	uint64_t z;

	if (!rd_uvarint(p, end, block) || !rd_uvarint(p, end, mini) ||
	    !rd_uvarint(p, end, total) || !rd_uvarint(p, end, &z))
		return false;
	*first = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
	/* the format: block size a multiple of 128, miniblock values a multiple of 32 */
	return *block && *mini && *block % 128 == 0 && *block <= (1u << 20) &&
	       *mini <= *block && *block % *mini == 0 && (*block / *mini) % 32 == 0;
}

bool pq_delta_count(const uint8_t *p, const uint8_t *end, uint64_t *count)
{
	uint64_t block, mini;
	int64_t first;

	return delta_header(&p, end, &block, &mini, count, &first);
}

bool pq_delta_get(const uint8_t *p, const uint8_t *end, int64_t *out, size_t n, size_t *used)
{
	const uint8_t *start = p;
	uint64_t block, mini, total, per, got = 0;
	int64_t first;
	uint64_t prev;

	if (!delta_header(&p, end, &block, &mini, &total, &first) || total != n)
		return false;
	per = block / mini;
	prev = (uint64_t)first;
	if (n)
		out[got++] = first;
	while (got < total) {
		uint64_t z;
		uint64_t mind;
		const uint8_t *widths;
		uint64_t m;
		if (!rd_uvarint(&p, end, &z))
			return false;
		mind = (z >> 1) ^ -(z & 1);
		if ((uint64_t)(end - p) < mini)
			return false;
		widths = p;
		p += mini;
		for (m = 0; m < mini && got < total; m++) {
			int bw = widths[m];
			uint64_t bytes = per * (uint64_t)bw / 8, j, bitpos = 0;
			if (bw > 64 || bytes > (uint64_t)(end - p))
				return false;
			for (j = 0; j < per && got < total; j++) {
				uint64_t v = 0;
				int k;
				for (k = 0; k < bw; k++, bitpos++)
					v |= (uint64_t)((p[bitpos >> 3] >> (bitpos & 7)) & 1) << k;
				prev += mind + v;
				if (got < n)
					out[got] = (int64_t)prev;
				got++;
			}
			p += bytes;
		}
	}
	*used = (size_t)(p - start);
	return true;
}
