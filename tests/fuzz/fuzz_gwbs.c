/* fuzz_gwbs.c - libFuzzer target for the sparse matrix loader (.gwbs): a saved CSR matrix
 * changed by the input (patch.h), its checksum fixed, must load or fail with an error; one
 * that loads must survive the symmetry check and a product. */
#include "patch.h"

#include "fixup.h"
#include "sparse.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *tpl;
static size_t tn;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	gwb_csr *A = NULL;
	char path[512];
	int fd = patch_scratch(path, sizeof(path), "gwbs");
	(void)argc;
	(void)argv;

	if (fd < 0 || gwb_csr_laplacian1d(7, &A) || gwb_csr_save(A, path))
		abort();
	close(fd);
	gwb_csr_free(A);
	tpl = patch_slurp(path, &tn);
	unlink(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n;
	unsigned char *b = patch_apply(tpl, tn, data, size, &n);
	gwb_csr *A = NULL;
	char path[64];
	int fd;

	if (!b)
		return 0;
	fix_tail_fnv(b, n);
	fd = patch_file(b, n, path, sizeof(path));
	free(b);
	if (fd < 0)
		return 0;
	if (gwb_csr_load(path, &A) == GWB_OK) {
		(void)gwb_csr_is_symmetric(A, NULL);
		if (A->cols <= (1 << 20)) {
			double *x = calloc((size_t)A->cols + 1, sizeof(double));
			double *y = calloc((size_t)A->rows + 1, sizeof(double));
			if (x && y)
				gwb_csr_spmv(A, x, y);
			free(x);
			free(y);
		}
		gwb_csr_free(A);
	}
	close(fd);
	return 0;
}
