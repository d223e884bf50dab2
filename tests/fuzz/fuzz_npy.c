/* fuzz_npy.c - libFuzzer target for the .npy reader: any bytes must give an array or an error,
 * never a crash, a leak or undefined behaviour; an array that reads as a Dataset or a Matrix
 * must write (atomically, to a file under the build folder) and read back with the same bytes.
 * make fuzz FUZZ_TARGETS=npy builds and runs it (tests/fuzz/run_npy.sh seeds hand-made
 * arrays first). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npy.h"
#include "patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char out[512];   /* the round trip's file (one per process, removed at exit) */

static void drop_out(void)
{
	if (out[0])
		unlink(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
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
		int ofd = out[0] ? -1 : patch_scratch(out, sizeof(out), "npy");   /* build/ only */
		if (ofd >= 0) {
			close(ofd);
			atexit(drop_out);
		}
		if (gwb_npy_save_matrix(A, out) == GWB_OK && gwb_npy_load_matrix(out, &B) == GWB_OK &&
		    (B->rows != A->rows || B->cols != A->cols || B->layout != A->layout ||
		     memcmp(A->data, B->data, gwb_matrix_bytes(A))))
			abort();
	}
	(void)gwb_npy_load_dataset(path, NULL, 0, NULL, -1, &d);
	gwb_dataset_free(d);
	gwb_matrix_free(A);
	gwb_matrix_free(B);
	close(fd);
	return 0;
}
