/* fuzz_gwbm.c - libFuzzer target for the dense matrix loader (.gwbm): a saved batch changed by
 * the input (patch.h), its checksum fixed, must load or fail with an error; one that loads
 * must survive the symmetry check of each matrix and a read of every element. */
#include "patch.h"

#include "dense.h"
#include "fixup.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *tpl;
static size_t tn;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	gwb_matrix *A = NULL;
	char path[512];
	int fd = patch_scratch(path, sizeof(path), "gwbm");
	(void)argc;
	(void)argv;

	if (fd < 0 || gwb_matrix_batch(2, 3, GWB_SPEC_RANDN, GWB_F32, 1, &A) ||
	    gwb_matrix_save(A, path))
		abort();
	close(fd);
	gwb_matrix_free(A);
	tpl = patch_slurp(path, &tn);
	unlink(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n, b, i, j;
	unsigned char *buf = patch_apply(tpl, tn, data, size, &n);
	gwb_matrix *A = NULL;
	char path[64];
	int fd;

	if (!buf)
		return 0;
	fix_tail_fnv(buf, n);
	fd = patch_file(buf, n, path, sizeof(path));
	free(buf);
	if (fd < 0)
		return 0;
	if (gwb_matrix_load(path, &A) == GWB_OK) {
		volatile double s = 0;
		for (b = 0; b < A->count; b++) {
			double rel;
			size_t at[2];
			if (A->rows == A->cols)
				(void)gwb_matrix_is_symmetric(A, b, 1e-9, &rel, at);
			for (i = 0; i < A->rows; i++)
				for (j = 0; j < A->cols; j++)
					s += gwb_matrix_get(A, b, i, j);
		}
		(void)s;
		gwb_matrix_free(A);
	}
	close(fd);
	return 0;
}
