/* mm.h - Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html).
 * Reads the coordinate format (real, integer, pattern; general, symmetric, skew-symmetric)
 * into a CSR matrix, duplicates summed, and the array format (real, integer; general,
 * symmetric) into a dense f64 column-major matrix. Malformed input is GWB_EPARSE with
 * "file:line:" in the message. Writes CSR (symmetric matrices as their lower triangle) and
 * dense matrices. The caller owns what a reader returns. */
#ifndef GWB_MM_H
#define GWB_MM_H

#include <stdbool.h>
#include <stddef.h>

#include "sparse.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gwb_matrix;

/* The largest row or column count the reader accepts (default 2^40). A CSR matrix holds
 * rows+1 offsets whatever its entries, so a few bytes of size line can ask for gigabytes;
 * programs that read untrusted files (the fuzz target) lower this. */
extern long long gwb_mm_max_order;

/* Read a file. A coordinate file sets *csr (and leaves *dense NULL); an array file sets
 * *dense (and leaves *csr NULL). dense may be NULL: an array file is then an error. */
gwb_status gwb_mm_read(const char *path, gwb_csr **csr, struct gwb_matrix **dense);
/* The same from memory; name is used in messages. */
gwb_status gwb_mm_read_mem(const char *buf, size_t len, const char *name, gwb_csr **csr,
			   struct gwb_matrix **dense);

/* Write A: "coordinate real symmetric" (lower triangle) when A is symmetric, otherwise
 * "coordinate real general"; values with 17 significant digits (exact round trip).
 * comment (may be NULL) becomes a % line under the banner. */
gwb_status gwb_mm_write_csr(gwb_csr *A, const char *path, const char *comment);
/* Write a dense matrix (matrix 0 of a batch) as "array real general". */
gwb_status gwb_mm_write_dense(const struct gwb_matrix *A, const char *path, const char *comment);

#ifdef __cplusplus
}
#endif
#endif
