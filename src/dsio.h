/* dsio.h - the binary dataset file (.gwbd): a 64-byte header (magic, format version, shape,
 * payload size, XXH64 checksums of header and payload) followed by the names, dictionaries,
 * the column-major float32 features and the target. Loading refuses a truncated, padded or
 * corrupt file with a message that says which. */
#ifndef GWB_DSIO_H
#define GWB_DSIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "hash.h"     /* its checksums (XXH64) */
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GWB_DSIO_VERSION 3   /* the newest this gwb reads and writes (2: text columns, 3:
			      * int64 and float64 columns) */

/* Write d to path (through path.tmp and a rename, so a failed save leaves no half file). */
gwb_status gwb_dsio_save(const gwb_dataset *d, const char *path);

/* Read a dataset written by gwb_dsio_save; the caller owns *out. GWB_ECORRUPT for a truncated
 * or damaged file, GWB_EPARSE for a file that is not .gwbd or has a newer version. */
gwb_status gwb_dsio_load(const char *path, gwb_dataset **out);

/* The same bytes in memory, for moving a Dataset between MPI ranks (lapi_mpi.c): save_mem
 * gives a malloc'd image of the file gwb_dsio_save writes (the caller frees it); load_mem
 * reads one with every check of gwb_dsio_load (name stands for the path in messages). */
gwb_status gwb_dsio_save_mem(const gwb_dataset *d, void **out, size_t *n);
gwb_status gwb_dsio_load_mem(const void *buf, size_t n, const char *name, gwb_dataset **out);

/* True when the file starts with the .gwbd magic. */
bool gwb_dsio_is_gwbd(const char *path);


#ifdef __cplusplus
}
#endif
#endif
