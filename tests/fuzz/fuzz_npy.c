/* fuzz_npy.c - libFuzzer target for the .npy reader: any bytes must give an array or an error,
 * never a crash, a leak or undefined behaviour; an array that reads as a Dataset or a Matrix
 * must write and read back with the same bytes. Build and run with tests/fuzz/run_npy.sh. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What dataset.c and dsio.c need from intr.c (a thread count, the Ctrl-C flag), without
 * linking it and the profiler behind it. */
#include "intr.h"
int gwb_cpu_count(void)
{
	return 1;
}
bool gwb_intr_pending(void)
{
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], out[64];
	gwb_matrix *A = NULL, *B = NULL;
	gwb_dataset *d = NULL;
	int fd = memfd_create("fuzz-npy", 0);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (gwb_npy_load_matrix(path, &A) == GWB_OK && gwb_matrix_bytes(A) < (64u << 20)) {
		snprintf(out, sizeof(out), "/tmp/fuzz-npy-%d.npy", (int)getpid());
		if (gwb_npy_save_matrix(A, out) == GWB_OK && gwb_npy_load_matrix(out, &B) == GWB_OK &&
		    (B->rows != A->rows || B->cols != A->cols || B->layout != A->layout ||
		     memcmp(A->data, B->data, gwb_matrix_bytes(A))))
			abort();
		remove(out);
	}
	(void)gwb_npy_load_dataset(path, 0, -1, &d);
	gwb_dataset_free(d);
	gwb_matrix_free(A);
	gwb_matrix_free(B);
	close(fd);
	return 0;
}
