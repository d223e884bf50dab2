/* npy.h - NumPy .npy files (format versions 1.0, 2.0, 3.0) of 2-D float arrays, as numpy
 * writes them: little-endian float32 ('<f4') or float64 ('<f8'), C or Fortran order. Anything
 * else (other dtypes, big-endian, 1-D or 3-D, object arrays, truncated data) is refused with a
 * message that says what the file holds and how to convert it. Read into a Dataset (data.load)
 * or a Matrix (mat.read); written from either (d:save, A:save). The caller owns what it gets. */
#ifndef GWB_NPY_H
#define GWB_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "dataset.h"
#include "dense.h"
#include "status.h"

/* A 2-D array as read: rows x cols elements of dtype, in C (row-major) or Fortran
 * (column-major) order. data is malloc'd; free it with free(). */
typedef struct gwb_npy {
	size_t rows, cols;
	gwb_dtype dtype;
	bool fortran;
	void *data;
	int major, minor;   /* the file's format version */
} gwb_npy;

/* True when the file starts with the .npy magic ("\x93NUMPY"). */
bool gwb_npy_is_npy(const char *path);

/* Read path into *a (GWB_EIO, GWB_EPARSE or GWB_EINVAL with a message naming the file). */
gwb_status gwb_npy_read(const char *path, gwb_npy *a);

/* Write rows x cols elements of dtype (C order unless fortran) as a version 1.0 file (2.0 when
 * the header needs it), saved atomically through fileio.h (a non-regular target in place). */
gwb_status gwb_npy_write(const char *path, const void *data, size_t rows, size_t cols,
			 gwb_dtype dtype, bool fortran);

/* A Dataset from a .npy file: column `target` (1-based; negative counts from the end; 0 = the
 * sidecar's target, else the last), or the column named target_name (a name the sidecar
 * gives, or "colN"; NULL: use target), is the target, the others the features. task: -1
 * takes the sidecar's, else infers it as data.new does (few distinct integers ->
 * classification, classes named by their values), else a gwb_task. meta: the sidecar's path
 * (<file>.npy.json, as gwb_npy_save_dataset writes it; NULL or a missing file: none): its
 * column names, target, classes and levels of categorical features apply; without one the
 * columns are col1, col2, ... A sidecar that does not fit the array is an error naming it. */
gwb_status gwb_npy_load_dataset(const char *path, const char *meta, int target,
				const char *target_name, int task, gwb_dataset **out);

/* The features and then the target as a rows x (features + 1) float32 array (C order). A
 * classification target is written as its class names' numbers when they all are numbers,
 * else as the class codes 0, 1, ... Beside it, path + ".json" (not for /dev/ or /proc/
 * targets): the names, target, task, classes with the number each is saved as, and the
 * levels of categorical features, which gwb_npy_load_dataset reads back. */
gwb_status gwb_npy_save_dataset(const gwb_dataset *d, const char *path);

/* A Matrix from a .npy file: its dtype, row-major for C order, column-major for Fortran. */
gwb_status gwb_npy_load_matrix(const char *path, gwb_matrix **out);

/* One matrix (not a batch) in its dtype and layout. */
gwb_status gwb_npy_save_matrix(const gwb_matrix *A, const char *path);

/* path ends in ".npy" (any case). */
bool gwb_npy_path(const char *path);

#endif
