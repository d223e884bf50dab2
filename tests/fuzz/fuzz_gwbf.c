/* fuzz_gwbf.c - libFuzzer target for the forest loader (.gwbf): a saved forest changed by the
 * input (patch.h), its length and checksum fixed, must load or fail with an error; a forest
 * that loads must predict every row of a small table without reading out of bounds. */
#include "patch.h"

#include "dataset.h"
#include "fixup.h"
#include "forest.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *tpl;
static size_t tn;
static gwb_dataset *rows;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	gwb_forest *f = NULL;
	gwb_rf_params p;
	char path[512];
	int fd = patch_scratch(path, sizeof(path), "gwbf");
	size_t i;
	(void)argc;
	(void)argv;

	if (fd < 0 || gwb_dataset_new(12, 3, GWB_TASK_CLASSIFICATION, 3, &rows))
		abort();
	close(fd);
	for (i = 0; i < 12; i++) {
		rows->X[i] = (float)i;
		rows->X[12 + i] = (float)(i % 4);
		rows->X[24 + i] = i == 5 ? 0.0f / 0.0f : (float)(i * i % 7);
		rows->y[i] = (int32_t)(i % 3);
	}
	gwb_rf_params_init(&p);
	p.trees = 3;
	p.threads = 1;
	p.progress = false;
	p.backend = GWB_BACKEND_CPU;
	if (gwb_rf_train(rows, &p, &f) || gwb_forest_save(f, path))
		abort();
	gwb_forest_free(f);
	tpl = patch_slurp(path, &tn);
	unlink(path);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n;
	unsigned char *b = patch_apply(tpl, tn, data, size, &n);
	gwb_forest *f = NULL;
	char path[64];
	int fd;

	if (!b)
		return 0;
	fix_gwbf(b, n, data[0] != 0 && size > 0 ? (data[size - 1] & 1) : 0);
	fd = patch_file(b, n, path, sizeof(path));
	free(b);
	if (fd < 0)
		return 0;
	if (gwb_forest_load(path, &f) == GWB_OK) {
		if (gwb_forest_check_data(f, rows) == GWB_OK) {
			int32_t *lab = calloc(rows->rows, sizeof(int32_t));
			float *val = calloc(rows->rows, sizeof(float));
			float *pr = calloc(rows->rows * (size_t)f->outputs + 1, sizeof(float));
			if (lab && val && pr) {
				(void)gwb_forest_predict(f, rows, 1, lab, val);
				if (f->task == GWB_TASK_CLASSIFICATION)
					(void)gwb_forest_predict_proba(f, rows, 1, pr);
			}
			free(lab);
			free(val);
			free(pr);
		}
		gwb_forest_free(f);
	}
	close(fd);
	return 0;
}
