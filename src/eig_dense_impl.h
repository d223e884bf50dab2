/* eig_dense_impl.h - what the pieces of the dense eigensolvers share (eig.h is the public
 * contract): eig_dense.c holds the drivers for one matrix and the SVD (options, where a call
 * runs, the CPU solve on an interruptible worker), eig_batched.c the batches (the pool, the
 * devices of o->gpus), eig_lapack.c the CPU solvers, eig_dense_check.c the checks and the
 * result's notes, eig_dense_gpu.c the GPU paths (the one file that tests GWB_HAVE_CUDA).
 * Internal: nothing outside these files includes it. Arrays passed in stay the caller's. */
#ifndef GWB_EIG_DENSE_IMPL_H
#define GWB_EIG_DENSE_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "dense.h"
#include "eig.h"

/* --- eig_lapack.c: the CPU solvers (host arrays, column-major; a is destroyed) ------------- */

/* C = alpha op(A) op(B) + beta C through BLAS dgemm_. */
int eigd_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double *a, int lda,
	       const double *b, int ldb, double beta, double *c, int ldc);
/* Every pair through LAPACK dsyevd (ssyevd); vectors overwrite a. uplo: the triangle read. */
gwb_status eigd_dsyevd(int n, double *a, double *w, bool vectors, char uplo);
gwb_status eigd_ssyevd(int n, float *a, float *w, bool vectors);
/* Pairs il..iu (1-based) through dsyevr; w and z receive iu-il+1 of them. */
gwb_status eigd_dsyevr(int n, double *a, int il, int iu, double *w, double *z, bool vectors);
/* Pairs 1..k and n-k+1..n (2k, smallest end first) from one tridiagonal reduction. */
gwb_status eigd_both_ends(int n, double *a, int k, double *w, double *z, bool vectors);
/* The cyclic Jacobi reference (gwb_eig_jacobi_ref) with a sweep history: hist (may be NULL)
 * receives one entry per sweep and drives the progress line. */
gwb_status eigd_jacobi(size_t n, double *a, double *w, double *V, double tol, int max_sweeps,
		       int *sweeps, gwb_eigen *hist);
/* All pairs of one f64 matrix with method m (jacobi, mixed, else dsyevd); V may be NULL. */
gwb_status eigd_all_pairs(gwb_dense_method m, int n, double *a, const gwb_matrix *A, size_t b,
			  double tol, int max_sweeps, double *w, double *V, int *iters,
			  gwb_eigen *hist);
/* The SVD of an m x n matrix through dgesdd: s, and U, VT ("S" columns) when vectors. */
gwb_status eigd_dgesdd(int m, int n, double *a, double *s, double *U, double *VT, bool vectors);

/* --- eig_dense_check.c: checks and the result's text ---------------------------------------- */

/* The default relative asymmetry allowed for A's dtype. */
double eigd_sym_tol(const gwb_matrix *A);
/* GWB_EINVAL, saying where and what to do, unless matrix b of A is square and symmetric. */
gwb_status eigd_check_symmetric(const gwb_matrix *A, size_t b, double tol, const char *fn);
/* Residuals of matrix b's pairs (into e->residuals) against matrix ab of A, and their
 * orthogonality in *orth (NaN without vectors); thread safe for distinct b. */
gwb_status eigd_check(gwb_eigen *e, size_t b, const gwb_matrix *A, size_t ab, double *orth);
/* Fold one matrix's orthogonality into the result's worst. */
void eigd_fold_orth(gwb_eigen *e, double o);
/* The residuals and orthogonality of an SVD result against a (m x n column-major f64). */
gwb_status eigd_svd_check(gwb_eigen *e, const double *a);
/* Copy s into dst (size bytes, truncated, terminated). */
void eigd_set_str(char *dst, size_t size, const char *s);
/* Append a sentence to e->note ("; " between sentences). */
void eigd_note(gwb_eigen *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* On the reference BLAS, the first CPU result says so (once per process) and how to install
 * OpenBLAS. */
void eigd_note_blas(gwb_eigen *e);

/* --- eig_dense.c ------------------------------------------------------------------------------ */

/* Where a dense operation runs: the chooser's answer, except that "auto" follows a
 * GPU-resident input to the GPU, and an explicit "cpu" on one copies it back (and says so). */
gwb_status eigd_choose(const gwb_matrix *A, gwb_backend req, double bytes, double min_bytes,
		       gwb_backend *be, char *why, size_t why_size);

/* --- eig_dense_gpu.c: the GPU paths ---------------------------------------------------------
 * A table, as buffer.h's gwb_buf_ops, so that the drivers never test GWB_HAVE_CUDA. Each path
 * uses its input where it is (a GPU-resident matrix in place, else one staged upload), checks
 * symmetry, residuals and orthogonality on the device and keeps the vectors there
 * (e->dvectors). */
typedef struct eigd_gpu_ops {
	/* One matrix: every pair (all), else k pairs at o->which; tol: the symmetry allowed. */
	gwb_status (*solve)(const gwb_matrix *A, const gwb_dense_opts *o, gwb_eigen *e,
			    gwb_dense_method m, bool all, size_t k, double tol, const char *fn);
	/* Every pair of every matrix of B (method auto: our Jacobi kernel or cuSOLVER's). */
	gwb_status (*batched)(const gwb_matrix *B, const gwb_dense_opts *o, gwb_eigen *e,
			      gwb_dense_method m, double tol, const char *fn);
	/* The SVD of a (m x n column-major f64, host): the e->k largest triplets into e, through
	 * the caller's s (min(m, n)), U (m x min) and V (n x min, when vectors). */
	gwb_status (*svd)(const double *a, int m, int n, bool vectors, double *s, double *U,
			  double *V, gwb_eigen *e);
	/* The device vectors of a batch's parts (part[slot], matrices dealt by gwb_deal over
	 * count, es bytes an entry) copied in order into one array on the calling thread's
	 * device, which e adopts. */
	gwb_status (*gather)(gwb_eigen *e, gwb_eigen *const *part, const gwb_gpu_set *s,
			     size_t count, size_t es);
} eigd_gpu_ops;

/* The GPU table into *out; GWB_ENODEV ("<fn>: this gwb was built without CUDA") in a build
 * without it. */
gwb_status eigd_gpu_get(const char *fn, const eigd_gpu_ops **out);

#endif
