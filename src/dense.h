/* dense.h - the dense Matrix: one f32/f64 matrix (row- or column-major) or a batch of
 * equally sized square matrices stored one after another. Built by generators, from Lua
 * tables, from a Dataset (covariance/correlation), by binary load or by Matrix Market read
 * (mm.c); read by the dense eigensolvers (eig_dense.c, kernels/jacobi.cu, eig_cusolver.cu).
 * The caller owns a matrix and frees it with gwb_matrix_free(). */
#ifndef GWB_DENSE_H
#define GWB_DENSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "dataset.h"
#include "rng.h"      /* the generators' random numbers (gwb_rng_next) */
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_dtype { GWB_F32 = 0, GWB_F64 = 1 } gwb_dtype;
typedef enum gwb_layout { GWB_ROW_MAJOR = 0, GWB_COL_MAJOR = 1 } gwb_layout;

/* Largest order the dense generators (laplacian1d/2d) build: a dense n x n f64 matrix of
 * this order is 512 MiB. */
#define GWB_DENSE_MAX_GEN 8192

typedef struct gwb_matrix {
	size_t rows, cols;   /* of one matrix (each matrix of a batch) */
	size_t count;        /* matrices stored: 1 for a single matrix */
	bool batched;        /* created as a batch (even when count == 1) */
	gwb_dtype dtype;
	gwb_layout layout;   /* batches are always row-major (their matrices are symmetric) */
	void *data;          /* count * rows * cols elements of dtype, contiguous, matrix after
			      * matrix; element (i, j) of matrix b is at gwb_matrix_index().
			      * The host copy: current unless buf says otherwise (NULL for a
			      * matrix born on the GPU until its first host read) */
	gwb_buf *buf;        /* NULL: host only. Else where data is resident (buffer.h): a
			      * GPU-resident matrix is used in place by GPU operations; host
			      * reads go through gwb_matrix_host() (copies once, caches) */
	uint64_t sum;        /* gwb_matrix_checksum's cache, valid while sum_ok; every write */
	bool sum_ok;         /* (gwb_matrix_set, gwb_matrix_host_wrote) clears sum_ok */
} gwb_matrix;

/* Bytes per element of a dtype (4 or 8) and its name ("f32"/"f64"). */
size_t gwb_dtype_size(gwb_dtype t);
const char *gwb_dtype_name(gwb_dtype t);
/* "f32"/"float32"/"single" and "f64"/"float64"/"double" -> dtype; GWB_EINVAL otherwise. */
gwb_status gwb_dtype_parse(const char *s, gwb_dtype *out);

/* A zeroed rows x cols matrix. GWB_EINVAL for a zero dimension, GWB_ENOMEM (with bytes). */
gwb_status gwb_matrix_new(size_t rows, size_t cols, gwb_dtype dtype, gwb_layout layout,
			  gwb_matrix **out);
/* A zeroed batch of `count` n x n matrices (row-major). */
gwb_status gwb_matrix_new_batch(size_t count, size_t n, gwb_dtype dtype, gwb_matrix **out);
/* Free a matrix and its data, host and device (NULL is fine). */
void gwb_matrix_free(gwb_matrix *A);

/* Residency (buffer.h). gwb_matrix_to moves the matrix (all or nothing: on failure it stays
 * where it was; without a GPU the error says why). */
gwb_device gwb_matrix_device(const gwb_matrix *A);
gwb_status gwb_matrix_to(gwb_matrix *A, gwb_device d);
/* Make A->data current on the host (copies from the device once after a device write). Every
 * host reader of a matrix that may be resident calls this first (the Lua layer does). */
gwb_status gwb_matrix_host(const gwb_matrix *A);
/* The host changed elements [off, off + n) (in elements): a device copy follows. */
gwb_status gwb_matrix_host_wrote(gwb_matrix *A, size_t off, size_t n);
/* Device pointer to the data for a GPU operation: the resident copy in place (*tmp false) or a
 * pooled temporary upload (*tmp true) that gwb_matrix_dev_done() gives back. */
gwb_status gwb_matrix_dev(const gwb_matrix *A, const void **p, bool *tmp);
void gwb_matrix_dev_done(const gwb_matrix *A, const void *p, bool tmp);
/* A GPU-resident matrix (or batch when batched) adopting device memory from gwb_gpu_malloc
 * holding count * rows * cols elements; the matrix owns it. */
gwb_status gwb_matrix_adopt_dev(size_t count, size_t rows, size_t cols, bool batched,
				gwb_dtype dtype, gwb_layout layout, void *dev, gwb_matrix **out);

/* XXH64 of the data (the run log's identity of a matrix), computed once and cached until the
 * next write, so a logged call does not re-read its whole input. False (nothing computed)
 * when the host copy is not current: the run log never copies a GPU-resident result to the
 * host just to name it. */
bool gwb_matrix_checksum(gwb_matrix *A, uint64_t *out);

/* Elements of one matrix, and of all of them; bytes of the data. */
static inline size_t gwb_matrix_elems(const gwb_matrix *A) { return A->rows * A->cols; }
size_t gwb_matrix_bytes(const gwb_matrix *A);
/* Offset (in elements) of element (i, j) of matrix b, 0-based. */
static inline size_t gwb_matrix_index(const gwb_matrix *A, size_t b, size_t i, size_t j)
{
	return b * A->rows * A->cols +
	       (A->layout == GWB_ROW_MAJOR ? i * A->cols + j : j * A->rows + i);
}
/* Element (i, j) of matrix b as a double; set one element (rounded for f32). No bounds check:
 * callers check against rows/cols/count. */
double gwb_matrix_get(const gwb_matrix *A, size_t b, size_t i, size_t j);
void gwb_matrix_set(gwb_matrix *A, size_t b, size_t i, size_t j, double v);
/* Pointer to the first element of matrix b. */
void *gwb_matrix_ptr(const gwb_matrix *A, size_t b);

/* A copy of matrix b of A (b = SIZE_MAX: all of A) converted to dtype and layout. */
gwb_status gwb_matrix_convert(const gwb_matrix *A, size_t b, gwb_dtype dtype, gwb_layout layout,
			      gwb_matrix **out);
/* Matrix b of A as a new f64 column-major n x n copy, for LAPACK (caller frees with free()). */
gwb_status gwb_matrix_to_f64_colmajor(const gwb_matrix *A, size_t b, double **out);

/* Generators. Seeds make them deterministic. */
/* rows x cols of N(0,1) entries; sym: (G + G^T)/sqrt(2) (rows must equal cols). */
gwb_status gwb_matrix_randn(size_t rows, size_t cols, bool sym, gwb_dtype dtype, uint64_t seed,
			    gwb_matrix **out);

/* Spectrum of a generated symmetric matrix Q diag(lambda) Q^T (Q Haar-random orthogonal). */
typedef enum gwb_spectrum {
	GWB_SPEC_RANDN = 0,   /* not spectral: a symmetric Gaussian matrix (GOE) */
	GWB_SPEC_GRADED,      /* lambda_i = +-10^(-k i/(n-1)), magnitudes over `k` decades */
	GWB_SPEC_CLUSTERED,   /* a few clusters of values 1e-8 apart */
	GWB_SPEC_REPEATED,    /* a few distinct values, each repeated many times */
	GWB_SPEC_UNIFORM,     /* lambda evenly spaced in [-1, 1] */
} gwb_spectrum;
gwb_status gwb_spectrum_parse(const char *s, gwb_spectrum *out);
const char *gwb_spectrum_name(gwb_spectrum s);
/* Fill lambda[0..n) (ascending) for a spectrum kind; `rng` state advances. */
void gwb_spectrum_values(gwb_spectrum s, size_t n, uint64_t *rng, double *lambda);
/* n x n symmetric Q diag(lambda) Q^T built in f64 and stored as dtype. */
gwb_status gwb_matrix_from_spectrum(size_t n, const double *lambda, gwb_dtype dtype,
				    uint64_t seed, gwb_matrix **out);
/* A batch of `count` symmetric n x n matrices of a spectrum kind (GWB_SPEC_RANDN: GOE). */
gwb_status gwb_matrix_batch(size_t count, size_t n, gwb_spectrum spec, gwb_dtype dtype,
			    uint64_t seed, gwb_matrix **out);
/* The 1-D Laplacian tridiag(-1, 2, -1) of order n, and the 2-D five-point Laplacian of an
 * m x m grid (order m^2), dense. GWB_EINVAL beyond GWB_DENSE_MAX_GEN. */
gwb_status gwb_matrix_laplacian1d(size_t n, gwb_dtype dtype, gwb_matrix **out);
gwb_status gwb_matrix_laplacian2d(size_t m, gwb_dtype dtype, gwb_matrix **out);
/* Covariance (corr = false; divisor rows-1) or correlation matrix of the features of d, f64,
 * features x features. Missing values (NaN) are an error naming the column. Column means
 * (compensated sums) are subtracted first; the products go through BLAS DSYRK in f64 on
 * blocks of 512 rows, the blocks added with compensation (agrees with fully compensated dot
 * products to 1e-13 of sqrt(C_aa C_bb)). Constant columns get correlation 0 off the
 * diagonal and 1 on it. */
gwb_status gwb_matrix_cov(const gwb_dataset *d, bool corr, gwb_matrix **out);

/* Symmetry of matrix b: max |a_ij - a_ji| / max(|A|max, tiny). True when <= tol. rel (may be
 * NULL) receives the relative asymmetry, at (may be NULL) the worst (i, j). */
bool gwb_matrix_is_symmetric(const gwb_matrix *A, size_t b, double tol, double *rel,
			     size_t at[2]);
/* Frobenius norm of matrix b, accumulated with compensation (Kahan-Babuska). */
double gwb_matrix_norm_fro(const gwb_matrix *A, size_t b);

/* Binary save/load: a header (magic "GWBM", version, dtype, layout, shape, count), the data
 * little-endian, and a 64-bit FNV-1a checksum of header and data. Load checks the magic,
 * version, sizes against the file length and the checksum (GWB_ECORRUPT naming the file). */
gwb_status gwb_matrix_save(const gwb_matrix *A, const char *path);
gwb_status gwb_matrix_load(const char *path, gwb_matrix **out);

/* Kahan-Babuska (Neumaier) compensated dot product and sum of squares, f64. */
double gwb_dot_kahan(const double *x, const double *y, size_t n);
double gwb_dot_kahan_strided(const double *x, size_t incx, const double *y, size_t incy,
			     size_t n);


#ifdef __cplusplus
}
#endif
#endif
