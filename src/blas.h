/* blas.h - the BLAS/LAPACK gwb runs on, and the one thread policy for it. Which library
 * loaded is found at run time (dlsym of each implementation's own entry points, dladdr of
 * dgemm_/dsyevd_ for the files): any BLAS/LAPACK with the Fortran symbols works; lapack.c
 * loads it on first use. BLAS threads default to gwb's own thread count (gwb_cpu_count())
 * and drop to 1 inside gwb's parallel sections (gwb_blas_serial_begin/end), so the two never oversubscribe
 * the cores. Nothing here allocates; strings returned are static. */
#ifndef GWB_BLAS_H
#define GWB_BLAS_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_blas_info {
	const char *name;       /* "OpenBLAS", "MKL", "BLIS", "FlexiBLAS", "reference" (netlib),
				 * or "unknown" */
	char version[160];      /* the library's own description (openblas_get_config), or "" */
	char blas_path[256];    /* the file dgemm_ comes from (dladdr), or "" */
	char lapack_path[256];  /* the file dsyevd_ comes from, or "" */
	int threads;            /* threads a BLAS call made now would use */
	int default_threads;    /* what gwb sets outside its parallel sections */
	const char *threads_from; /* where default_threads came from: "gwb" (gwb_cpu_count()),
				 * "gwb.blas" (set by the user), or the environment variable the
				 * library honoured (OPENBLAS_NUM_THREADS, ...); "fixed" when the
				 * library cannot change its thread count */
	bool settable;          /* the library's thread count can be set */
	bool reference;         /* the netlib reference implementation (unblocked, 1 thread) */
} gwb_blas_info;

/* Load the library now (lapack.c loads it on first use) and so detect it. Idempotent and
 * thread safe. The thread functions below do not load it: the policy is applied when it
 * loads (gwb_blas_loaded). */
void gwb_blas_init(void);

/* Called once when the library has loaded (lapack.c's load hook, which blas.c installs), with
 * a lookup into it: detect it and apply the thread policy (one thread when a parallel section
 * is running). */
void gwb_blas_loaded(void *(*sym)(const char *name));

/* What is loaded now. */
void gwb_blas_get_info(gwb_blas_info *out);

/* The kind of BLAS from the library's own description (may be NULL or "") and the file
 * dgemm_ came from (may be NULL): "OpenBLAS", "MKL", "BLIS", "FlexiBLAS", "reference" or
 * "unknown". Pure: the detection rule, testable on known strings. */
const char *gwb_blas_classify(const char *config, const char *path);

/* Threads BLAS calls use now (1 when the library cannot say). */
int gwb_blas_threads(void);

/* Set the default BLAS thread count (n >= 1; 0 = gwb_cpu_count() again). GWB_EINVAL for a
 * negative n; a library whose count cannot be set keeps its own (info.settable says). */
gwb_status gwb_blas_set_default_threads(int n);

/* A parallel section of gwb's own: BLAS runs on one thread between begin and end. Nests and
 * may be called from any thread; the outermost end restores the count. */
void gwb_blas_serial_begin(void);
void gwb_blas_serial_end(void);

/* One call's thread count (an operation's `threads` option): n <= 0 leaves it alone. Returns
 * a token for gwb_blas_threads_pop, which restores the count. Inside a parallel section both
 * do nothing (BLAS stays on one thread there). */
int gwb_blas_threads_push(int n);
void gwb_blas_threads_pop(int token);

/* When the loaded BLAS is the reference implementation: a sentence saying so and how to
 * install OpenBLAS; otherwise NULL. */
const char *gwb_blas_reference_note(void);

/* True exactly once per process, and only on the reference implementation: the caller (the
 * first dense result) adds gwb_blas_reference_note() to what it tells the user. */
bool gwb_blas_take_first_note(void);

#ifdef __cplusplus
}
#endif
#endif
