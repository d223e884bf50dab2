/* fuzz_parquet.c - libFuzzer target for the Parquet reader: a small file gwb saved (numbers,
 * a category with missing values, a text target, three row groups, snappy pages) changed by
 * the input (patch.h; or, first byte 0, any bytes: the seeds are the fixtures of
 * tests/fixtures/parquet, written by pyarrow, polars and DuckDB), must load or fail with an
 * error; one that loads must pass gwb_dataset_check. */
#include "patch.h"

#include <math.h>

#include "dataset.h"
#include "parquet.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *tpl;
static size_t tn;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const lv[] = {"red", "green", "blue"};
	gwb_parquet_wopts wo = {"snappy", 3};
	gwb_dataset *d;
	char path[512];
	int fd = patch_scratch(path, sizeof(path), "parquet");
	size_t i;
	(void)argc;
	(void)argv;

	if (fd < 0 || gwb_dataset_new(8, 2, GWB_TASK_CLASSIFICATION, 2, &d))
		abort();
	close(fd);
	for (i = 0; i < 8; i++) {
		d->X[i] = (float)i * 0.5f;
		d->X[8 + i] = i % 4 == 3 ? NAN : (float)(i % 3);
		d->y[i] = (int32_t)(i % 2);
	}
	d->names[0] = strdup("a");
	d->names[1] = strdup("colour");
	d->target = strdup("y");
	d->class_names[0] = strdup("no");
	d->class_names[1] = strdup("yes");
	d->cat_levels[1] = calloc(3, sizeof(char *));
	for (i = 0; i < 3; i++)
		d->cat_levels[1][i] = strdup(lv[i]);
	d->cat_count[1] = 3;
	if (gwb_parquet_save(d, path, &wo))
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
	gwb_parquet_opts o;
	gwb_dataset *d = NULL;
	char path[64];
	int fd;

	if (!b)
		return 0;
	fd = patch_file(b, n, path, sizeof(path));
	free(b);
	if (fd < 0)
		return 0;
	gwb_parquet_opts_init(&o);
	o.threads = 1;
	o.no_target = size & 1;   /* (both ways: every column a feature, or the target's rules) */
	if (gwb_parquet_load(path, &o, &d, NULL) == GWB_OK) {
		if (gwb_dataset_check(d) != GWB_OK)
			abort();
		gwb_dataset_free(d);
	}
	close(fd);
	return 0;
}
