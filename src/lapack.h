/* lapack.h - LAPACK and BLAS (libopenblas.so.0 first, else liblapack.so.3: any build) loaded on first
 * use instead of at link time: linked, they cost every start of gwb several milliseconds
 * (OpenBLAS starts its threads and probes the CPU in its constructor), and most runs never
 * call them. The Fortran-ABI routines gwb uses are defined in lapack.c under their own names
 * (hidden, so the library never binds to them) and forward to the library. When it cannot be
 * loaded, the first call says why on stderr and every call fails: info = -1000 for LAPACK,
 * NaN in C for dgemm_. */
#ifndef GWB_LAPACK_H
#define GWB_LAPACK_H

#include <stddef.h>

/* A symbol of the loaded library (e.g. "openblas_set_num_threads"), loading it if needed;
 * NULL when the library or the symbol is not there. */
void *gwb_lapack_sym(const char *name);

/* Called once, right after the library has loaded, with a lookup into it that takes no lock
 * (blas.c installs gwb_blas_loaded here before main runs: its thread policy). */
typedef void (*gwb_lapack_load_hook)(void *(*sym)(const char *name));
void gwb_lapack_set_load_hook(gwb_lapack_load_hook fn);

/* Fortran ABI (gfortran: hidden string lengths appended as size_t). */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
	     double *w, double *work, const int *lwork, int *iwork, const int *liwork, int *info,
	     size_t, size_t);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda,
	     float *w, float *work, const int *lwork, int *iwork, const int *liwork, int *info,
	     size_t, size_t);
void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a,
	     const int *lda, const double *vl, const double *vu, const int *il, const int *iu,
	     const double *abstol, int *m, double *w, double *z, const int *ldz, int *isuppz,
	     double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t,
	     size_t, size_t);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s,
	     double *u, const int *ldu, double *vt, const int *ldvt, double *work,
	     const int *lwork, int *iwork, int *info, size_t);
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
	    const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
	    const double *beta, double *c, const int *ldc, size_t, size_t);
void dgemv_(const char *ta, const int *m, const int *n, const double *alpha, const double *a,
	    const int *lda, const double *x, const int *incx, const double *beta, double *y,
	    const int *incy, size_t);
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
	    const double *a, const int *lda, const double *beta, double *c, const int *ldc, size_t,
	    size_t);
void dsytrd_(const char *uplo, const int *n, double *a, const int *lda, double *d, double *e,
	     double *tau, double *work, const int *lwork, int *info, size_t);
void dstemr_(const char *jobz, const char *range, const int *n, double *d, double *e,
	     const double *vl, const double *vu, const int *il, const int *iu, int *m, double *w,
	     double *z, const int *ldz, const int *nzc, int *isuppz, int *tryrac, double *work,
	     const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);
void dormtr_(const char *side, const char *uplo, const char *trans, const int *m, const int *n,
	     const double *a, const int *lda, const double *tau, double *c, const int *ldc,
	     double *work, const int *lwork, int *info, size_t, size_t, size_t);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
	    double *w, double *work, const int *lwork, int *info, size_t, size_t);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
	     const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
	     const double *tau, double *work, const int *lwork, int *info);
void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
	     const int *lda, double *s, double *u, const int *ldu, double *vt, const int *ldvt,
	     double *work, const int *lwork, int *info, size_t, size_t);

#endif
