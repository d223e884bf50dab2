/* fuzz_csv.c - libFuzzer target for the CSV reader and the .gwbd loader: any bytes, read as a
 * file with options taken from the first byte, must give a dataset or an error, never a
 * crash, a leak or undefined behaviour. Build and run with tests/fuzz/run.sh. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "csv.h"
#include "dataset.h"
#include "dsio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char seps[] = {0, ',', ';', '\t'};
	static const char *const miss[] = {"NA", "-1"};
	gwb_csv_opts o;
	gwb_dataset *d = NULL;
	char path[64];
	uint8_t flags = size ? data[0] : 0;
	int fd = memfd_create("fuzz", 0);

	if (fd < 0)
		return 0;
	if (size) {
		data++;
		size--;
	}
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	gwb_csv_opts_init(&o);
	o.sep = seps[flags & 3];
	o.header = ((flags >> 2) & 3) == 3 ? -1 : (flags >> 2) & 1;
	o.target_index = (flags >> 4) & 1 ? 1 : 0;
	o.task = (flags >> 5) & 1 ? -1 : GWB_TASK_CLASSIFICATION;
	if ((flags >> 6) & 1) {
		o.missing = miss;
		o.n_missing = 2;
	}
	o.progress = false;
	if (flags >> 7)
		o.block = 1 + size % 23;   /* tiny reads: block boundaries inside every token */
	if (size % 3 == 0) {
		o.threads = 1 + (int)(size % 5);   /* the parallel reader on small inputs */
		o.par_min = 1;
	}
	if (gwb_csv_load(path, &o, &d, NULL) == GWB_OK) {
		if (gwb_dataset_check(d) != GWB_OK)
			abort();
		if (o.threads > 1) {
			/* differential: the sequential reader must give the same table */
			gwb_dataset *e = NULL;
			o.threads = 1;
			if (gwb_csv_load(path, &o, &e, NULL) != GWB_OK || e->rows != d->rows ||
			    e->features != d->features ||
			    memcmp(e->X, d->X, d->rows * (size_t)d->features * sizeof(float)) ||
			    (d->y && memcmp(e->y, d->y, d->rows * sizeof(int32_t))) ||
			    (d->yr && memcmp(e->yr, d->yr, d->rows * sizeof(float))))
				abort();
			gwb_dataset_free(e);
		}
		gwb_dataset_free(d);
	}
	if (gwb_dsio_load(path, &d) == GWB_OK)
		gwb_dataset_free(d);
	close(fd);
	return 0;
}
