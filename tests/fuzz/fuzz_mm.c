/* fuzz_mm.c - libFuzzer target for the Matrix Market reader and the .gwbs loader: any bytes
 * must give a matrix or an error, never a crash, a leak or undefined behaviour; a matrix that
 * reads must survive the symmetry check, a product and a write/read round trip with the same
 * values. Build and run with tests/fuzz/run_mm.sh. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dense.h"
#include "mm.h"
#include "sparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(gwb_csr *A)
{
	char path[64];
	gwb_csr *B = NULL;
	int fd;

	(void)gwb_csr_is_symmetric(A, NULL);
	(void)gwb_csr_has_nonfinite(A, NULL);
	if (A->cols < 100000 && A->rows < 100000) {
		double *x = calloc((size_t)A->cols + 1, sizeof(double));
		double *y = calloc((size_t)A->rows + 1, sizeof(double));
		if (x && y) {
			for (int64_t i = 0; i < A->cols; i++)
				x[i] = 1.0;
			gwb_csr_spmv(A, x, y);
		}
		free(x);
		free(y);
	}
	fd = memfd_create("fuzz-out", 0);
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (A->nnz < 100000 && gwb_csr_save(A, path) == GWB_OK && gwb_csr_load(path, &B) == GWB_OK) {
		if (B->nnz != A->nnz || memcmp(B->val, A->val, (size_t)A->nnz * sizeof(double)))
			abort();  /* a round trip must give the same matrix */
		gwb_csr_free(B);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gwb_csr *A = NULL;
	gwb_matrix *D = NULL;
	char path[64];
	int fd;

	gwb_mm_max_order = 1 << 20;  /* offsets of larger orders cost memory, not bugs */
	if (gwb_mm_read_mem((const char *)data, size, "fuzz.mtx", &A, &D) == GWB_OK) {
		if (A)
			exercise(A);
	}
	gwb_csr_free(A);
	gwb_matrix_free(D);
	/* the same bytes as a .gwbs file */
	fd = memfd_create("fuzz-in", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		A = NULL;
		if (gwb_csr_load(path, &A) == GWB_OK)
			exercise(A);
		gwb_csr_free(A);
	}
	close(fd);
	return 0;
}
