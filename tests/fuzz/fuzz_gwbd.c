/* fuzz_gwbd.c - libFuzzer target for the .gwbd loader: a saved dataset changed by the input
 * (patch.h), its checksums fixed, must load or fail with an error; one that loads must pass
 * gwb_dataset_check and save again. */
#include "patch.h"

#include "dataset.h"
#include "dsio.h"
#include "fixup.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *tpl;
static size_t tn;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	gwb_dataset *d;
	char path[512];
	int fd = patch_scratch(path, sizeof(path), "gwbd");
	size_t i;
	(void)argc;
	(void)argv;

	if (fd < 0 || gwb_dataset_new(6, 2, GWB_TASK_CLASSIFICATION, 2, &d))
		abort();
	close(fd);
	for (i = 0; i < 6; i++) {
		d->X[i] = (float)i;
		d->X[6 + i] = (float)(i % 2);
		d->y[i] = (int32_t)(i % 2);
	}
	d->names[0] = strdup("a");
	d->names[1] = strdup("colour");
	d->target = strdup("y");
	d->class_names[0] = strdup("no");
	d->class_names[1] = strdup("yes");
	d->cat_levels[1] = calloc(2, sizeof(char *));
	d->cat_levels[1][0] = strdup("red");
	d->cat_levels[1][1] = strdup("blue");
	d->cat_count[1] = 2;
	if (gwb_dsio_save(d, path))
		abort();
	gwb_dataset_free(d);
	tpl = patch_slurp(path, &tn);
	unlink(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n;
	unsigned char *b = patch_apply(tpl, tn, data, size, &n);
	gwb_dataset *d = NULL;
	char path[64];
	int fd;

	if (!b)
		return 0;
	fix_gwbd(b, n);
	fd = patch_file(b, n, path, sizeof(path));
	free(b);
	if (fd < 0)
		return 0;
	if (gwb_dsio_load(path, &d) == GWB_OK) {
		if (gwb_dataset_check(d) != GWB_OK)
			abort();
		gwb_dataset_free(d);
	}
	close(fd);
	return 0;
}
