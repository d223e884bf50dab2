/* lapack.c - LAPACK and BLAS loaded on first use (see lapack.h). */
#define _GNU_SOURCE
#include "lapack.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *lib, *blas;
static gwb_lapack_load_hook on_load;   /* blas.c's thread policy */

void gwb_lapack_set_load_hook(gwb_lapack_load_hook fn)
{
	on_load = fn;
}

/* A symbol of the loaded libraries, without the pthread_once (for the load hook). */
static void *raw_sym(const char *name)
{
	void *s = lib ? dlsym(lib, name) : NULL;

	if (!s && blas)
		s = dlsym(blas, name);
	return s;
}

/* OpenBLAS's idle workers spin (sched_yield) for 2^28 TSC cycles, about 0.1 s, after each
 * call. gwb's own parallel sections (SpMV, vector operations, forests) run between BLAS calls
 * on the same cores, and a spinning worker takes its core from them: thick-restart Lanczos on
 * 2 cores spent a third of its SpMV time yielding to it. 2^16 cycles (~25 us) still covers
 * the gap between the back-to-back calls inside one LAPACK routine. A value the user set
 * wins; the variable is read once, when the library loads. */
static void idle_policy(void)
{
	if (!getenv("OPENBLAS_THREAD_TIMEOUT"))
		setenv("OPENBLAS_THREAD_TIMEOUT", "16", 0);
}

static void load(void)
{
	idle_policy();
	/* OpenBLAS first: libopenblas.so.0 holds BLAS and LAPACK in one (when it has LAPACK
	 * inside); else liblapack.so.3 (any implementation), which brings its BLAS
	 * (libopenblas.so.0 or libblas.so.3) as a dependency. */
	lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
	if (lib && !dlsym(lib, "dsyevd_")) {
		dlclose(lib);
		lib = NULL;
	}
	if (!lib)
		lib = dlopen("liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "gwb: cannot load LAPACK (%s); the eigensolvers need it: install "
			"libopenblas0-pthread or liblapack3 (scripts/install-deps)\n", dlerror());
		return;
	}
	if (!dlsym(lib, "dgemm_"))
		blas = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
	if (on_load)
		on_load(raw_sym);   /* which library, and the thread policy (blas.h) */
}

void *gwb_lapack_sym(const char *name)
{
	void *s = NULL;

	pthread_once(&once, load);
	if (lib)
		s = dlsym(lib, name);
	if (!s && blas)
		s = dlsym(blas, name);
	return s;
}

/* The library's routine `name` into *fn (cached); false when it is not there (the message was
 * printed when loading failed; a missing routine is named once here). */
static int resolve(void **fn, const char *name)
{
	void *s = __atomic_load_n(fn, __ATOMIC_ACQUIRE);

	if (!s) {
		s = gwb_lapack_sym(name);
		if (!s) {
			if (lib)
				fprintf(stderr, "gwb: the LAPACK library has no %s\n", name);
			return 0;
		}
		__atomic_store_n(fn, s, __ATOMIC_RELEASE);
	}
	return 1;
}

/* Forward to the library's routine of the same name, or fail with info = -1000. */
#define FORWARD(name, type, info, ...)                                                        \
	do {                                                                                   \
		static void *fn_;                                                               \
		type f_;                                                                        \
		if (!resolve(&fn_, #name)) {                                                    \
			*(info) = -1000;                                                        \
			break;                                                                  \
		}                                                                               \
		memcpy(&f_, &fn_, sizeof(f_));                                                  \
		f_(__VA_ARGS__);                                                                \
	} while (0)

typedef void (*syevd_t)(const char *, const char *, const int *, double *, const int *,
			double *, double *, const int *, int *, const int *, int *, size_t, size_t);
typedef void (*ssyevd_t)(const char *, const char *, const int *, float *, const int *, float *,
			 float *, const int *, int *, const int *, int *, size_t, size_t);
typedef void (*syevr_t)(const char *, const char *, const char *, const int *, double *,
			const int *, const double *, const double *, const int *, const int *,
			const double *, int *, double *, double *, const int *, int *, double *,
			const int *, int *, const int *, int *, size_t, size_t, size_t);
typedef void (*gesdd_t)(const char *, const int *, const int *, double *, const int *, double *,
			double *, const int *, double *, const int *, double *, const int *, int *,
			int *, size_t);
typedef void (*gemm_t)(const char *, const char *, const int *, const int *, const int *,
		       const double *, const double *, const int *, const double *, const int *,
		       const double *, double *, const int *, size_t, size_t);
typedef void (*syev_t)(const char *, const char *, const int *, double *, const int *, double *,
		       double *, const int *, int *, size_t, size_t);
typedef void (*geqrf_t)(const int *, const int *, double *, const int *, double *, double *,
			const int *, int *);
typedef void (*orgqr_t)(const int *, const int *, const int *, double *, const int *,
			const double *, double *, const int *, int *);
typedef void (*gesvd_t)(const char *, const char *, const int *, const int *, double *,
			const int *, double *, double *, const int *, double *, const int *,
			double *, const int *, int *, size_t, size_t);

HIDDEN void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
		    double *w, double *work, const int *lwork, int *iwork, const int *liwork,
		    int *info, size_t l1, size_t l2)
{
	FORWARD(dsyevd_, syevd_t, info, jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info,
		l1, l2);
}

HIDDEN void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda,
		    float *w, float *work, const int *lwork, int *iwork, const int *liwork,
		    int *info, size_t l1, size_t l2)
{
	FORWARD(ssyevd_, ssyevd_t, info, jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork,
		info, l1, l2);
}

HIDDEN void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n,
		    double *a, const int *lda, const double *vl, const double *vu, const int *il,
		    const int *iu, const double *abstol, int *m, double *w, double *z,
		    const int *ldz, int *isuppz, double *work, const int *lwork, int *iwork,
		    const int *liwork, int *info, size_t l1, size_t l2, size_t l3)
{
	FORWARD(dsyevr_, syevr_t, info, jobz, range, uplo, n, a, lda, vl, vu, il, iu, abstol, m,
		w, z, ldz, isuppz, work, lwork, iwork, liwork, info, l1, l2, l3);
}

HIDDEN void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda,
		    double *s, double *u, const int *ldu, double *vt, const int *ldvt,
		    double *work, const int *lwork, int *iwork, int *info, size_t l1)
{
	FORWARD(dgesdd_, gesdd_t, info, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork,
		iwork, info, l1);
}

HIDDEN void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
		   const double *alpha, const double *a, const int *lda, const double *b,
		   const int *ldb, const double *beta, double *c, const int *ldc, size_t l1,
		   size_t l2)
{
	static void *fn;
	gemm_t f;

	if (!resolve(&fn, "dgemm_")) {
		int i, j;
		for (j = 0; j < *n; j++)
			for (i = 0; i < *m; i++)
				c[(size_t)j * (size_t)*ldc + (size_t)i] = NAN;
		return;
	}
	memcpy(&f, &fn, sizeof(f));
	f(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, l1, l2);
}

typedef void (*gemv_t)(const char *, const int *, const int *, const double *, const double *,
		       const int *, const double *, const int *, const double *, double *, const int *,
		       size_t);

HIDDEN void dgemv_(const char *ta, const int *m, const int *n, const double *alpha,
		   const double *a, const int *lda, const double *x, const int *incx,
		   const double *beta, double *y, const int *incy, size_t l1)
{
	static void *fn;
	gemv_t f;

	if (!resolve(&fn, "dgemv_")) {
		int i, len = (*ta == 'N' || *ta == 'n') ? *m : *n;
		for (i = 0; i < len; i++)
			y[(size_t)i * (size_t)*incy] = NAN;
		return;
	}
	memcpy(&f, &fn, sizeof(f));
	f(ta, m, n, alpha, a, lda, x, incx, beta, y, incy, l1);
}

typedef void (*syrk_t)(const char *, const char *, const int *, const int *, const double *,
		       const double *, const int *, const double *, double *, const int *, size_t,
		       size_t);
typedef void (*sytrd_t)(const char *, const int *, double *, const int *, double *, double *,
			double *, double *, const int *, int *, size_t);
typedef void (*stemr_t)(const char *, const char *, const int *, double *, double *,
			const double *, const double *, const int *, const int *, int *, double *,
			double *, const int *, const int *, int *, int *, double *, const int *,
			int *, const int *, int *, size_t, size_t);
typedef void (*ormtr_t)(const char *, const char *, const char *, const int *, const int *,
			const double *, const int *, const double *, double *, const int *,
			double *, const int *, int *, size_t, size_t, size_t);

HIDDEN void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k,
		   const double *alpha, const double *a, const int *lda, const double *beta,
		   double *c, const int *ldc, size_t l1, size_t l2)
{
	static void *fn;
	syrk_t f;

	if (!resolve(&fn, "dsyrk_")) {
		int i, j;
		for (j = 0; j < *n; j++)
			for (i = 0; i < *n; i++)
				c[(size_t)j * (size_t)*ldc + (size_t)i] = NAN;
		return;
	}
	memcpy(&f, &fn, sizeof(f));
	f(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, l1, l2);
}

HIDDEN void dsytrd_(const char *uplo, const int *n, double *a, const int *lda, double *d,
		    double *e, double *tau, double *work, const int *lwork, int *info, size_t l1)
{
	FORWARD(dsytrd_, sytrd_t, info, uplo, n, a, lda, d, e, tau, work, lwork, info, l1);
}

HIDDEN void dstemr_(const char *jobz, const char *range, const int *n, double *d, double *e,
		    const double *vl, const double *vu, const int *il, const int *iu, int *m,
		    double *w, double *z, const int *ldz, const int *nzc, int *isuppz, int *tryrac,
		    double *work, const int *lwork, int *iwork, const int *liwork, int *info,
		    size_t l1, size_t l2)
{
	FORWARD(dstemr_, stemr_t, info, jobz, range, n, d, e, vl, vu, il, iu, m, w, z, ldz, nzc,
		isuppz, tryrac, work, lwork, iwork, liwork, info, l1, l2);
}

HIDDEN void dormtr_(const char *side, const char *uplo, const char *trans, const int *m,
		    const int *n, const double *a, const int *lda, const double *tau, double *c,
		    const int *ldc, double *work, const int *lwork, int *info, size_t l1, size_t l2,
		    size_t l3)
{
	FORWARD(dormtr_, ormtr_t, info, side, uplo, trans, m, n, a, lda, tau, c, ldc, work, lwork,
		info, l1, l2, l3);
}

HIDDEN void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
		   double *w, double *work, const int *lwork, int *info, size_t l1, size_t l2)
{
	FORWARD(dsyev_, syev_t, info, jobz, uplo, n, a, lda, w, work, lwork, info, l1, l2);
}

HIDDEN void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
		    double *work, const int *lwork, int *info)
{
	FORWARD(dgeqrf_, geqrf_t, info, m, n, a, lda, tau, work, lwork, info);
}

HIDDEN void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
		    const double *tau, double *work, const int *lwork, int *info)
{
	FORWARD(dorgqr_, orgqr_t, info, m, n, k, a, lda, tau, work, lwork, info);
}

HIDDEN void dgesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, double *a,
		    const int *lda, double *s, double *u, const int *ldu, double *vt,
		    const int *ldvt, double *work, const int *lwork, int *info, size_t l1,
		    size_t l2)
{
	FORWARD(dgesvd_, gesvd_t, info, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work,
		lwork, info, l1, l2);
}
