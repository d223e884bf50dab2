/* blas.c - which BLAS/LAPACK is loaded (found at run time) and the one thread policy for it:
 * the default count from gwb_cpu_count() (or the library's own environment variable when the
 * user set one), one thread inside gwb's parallel sections, a call's `threads` option for
 * that call. */
#define _GNU_SOURCE
#include "blas.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "lapack.h"

/* Each implementation's own thread and version entry points (C ABI), looked up with dlsym so
 * that nothing here needs them to exist. */
static struct {
	const char *name;
	int (*get)(void);
	void (*set)(int);
	long (*get_l)(void);          /* BLIS: dim_t */
	void (*set_l)(long);
	const char *env;              /* the variable the library honours first */
	char version[160];
	char blas_path[256], lapack_path[256];
	int def;                      /* default thread count */
	const char *from;
	bool reference;
} lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int serial_depth;          /* nested parallel sections active */
static int serial_saved;          /* the count to restore when the outermost one ends */
static bool first_note_taken;

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
}

static void *(*lookup)(const char *);   /* into the loaded library (lapack.c) */
static bool loaded;                     /* the library loaded and was detected */

static void *sym(const char *s)
{
	return lookup ? lookup(s) : NULL;
}

#define LOOKUP(dst, s) do { void *p_ = sym(s); memcpy(&(dst), &p_, sizeof(p_)); } while (0)

static void file_of(const char *symbol, char *out, size_t n)
{
	void *p = sym(symbol);
	Dl_info di;
	char real[PATH_MAX];

	out[0] = 0;
	if (!p || !dladdr(p, &di) || !di.dli_fname)
		return;
	copy_str(out, n, realpath(di.dli_fname, real) ? real : di.dli_fname);
}

static bool has(const char *s, const char *part)
{
	return s && strstr(s, part) != NULL;
}

const char *gwb_blas_classify(const char *config, const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	if (config && !strncmp(config, "OpenBLAS", 8))
		return "OpenBLAS";
	if (has(config, "Math Kernel Library") || has(config, "oneMKL") ||
	    (config && !strncmp(config, "MKL", 3)))
		return "MKL";
	if (config && !strncmp(config, "BLIS", 4))
		return "BLIS";
	if (config && !strncmp(config, "FlexiBLAS", 9))
		return "FlexiBLAS";
	if (has(path, "openblas"))
		return "OpenBLAS";
	if (has(path, "mkl"))
		return "MKL";
	if (has(path, "blis"))
		return "BLIS";
	if (has(path, "atlas"))
		return "ATLAS";
	/* Debian's netlib package installs blas/libblas.so.3; other distributions libblas.so.3
	 * or librefblas; an optimized library names itself (and answers a config call). */
	if (base && (!strncmp(base, "libblas.so", 10) || !strncmp(base, "librefblas", 10) ||
		     !strncmp(base, "libblas64.so", 12)))
		return "reference";
	return "unknown";
}

static int get_now(void)
{
	if (lib.get)
		return lib.get();
	if (lib.get_l)
		return (int)lib.get_l();
	return 1;
}

static void set_now(int n)
{
	if (lib.set)
		lib.set(n);
	else if (lib.set_l)
		lib.set_l(n);
}

static bool settable(void)
{
	return lib.set || lib.set_l;
}

static void detect(void)
{
	const char *(*cfg)(void) = NULL, *(*blis_ver)(void) = NULL;
	void (*mkl_ver)(char *, int) = NULL;
	int (*flex_backend)(char *, size_t) = NULL;
	static const char *const envs[][3] = {
		{"OpenBLAS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS"},
		{"MKL", "MKL_NUM_THREADS", NULL},
		{"BLIS", "BLIS_NUM_THREADS", NULL},
		{"FlexiBLAS", "FLEXIBLAS_NUM_THREADS", NULL},
	};
	size_t i;

	file_of("dgemm_", lib.blas_path, sizeof(lib.blas_path));
	file_of("dsyevd_", lib.lapack_path, sizeof(lib.lapack_path));
	LOOKUP(cfg, "openblas_get_config");
	LOOKUP(mkl_ver, "MKL_Get_Version_String");
	LOOKUP(blis_ver, "bli_info_get_version_str");
	LOOKUP(flex_backend, "flexiblas_current_backend");
	if (cfg) {
		copy_str(lib.version, sizeof(lib.version), cfg());
		LOOKUP(lib.get, "openblas_get_num_threads");
		LOOKUP(lib.set, "openblas_set_num_threads");
	} else if (mkl_ver) {
		mkl_ver(lib.version, (int)sizeof(lib.version));
		LOOKUP(lib.get, "MKL_Get_Max_Threads");
		LOOKUP(lib.set, "MKL_Set_Num_Threads");
	} else if (blis_ver) {
		snprintf(lib.version, sizeof(lib.version), "BLIS %s", blis_ver());
		LOOKUP(lib.get_l, "bli_thread_get_num_threads");
		LOOKUP(lib.set_l, "bli_thread_set_num_threads");
	} else if (flex_backend) {
		char b[96] = "";
		flex_backend(b, sizeof(b));
		snprintf(lib.version, sizeof(lib.version), "FlexiBLAS (backend %s)", b);
		LOOKUP(lib.get, "flexiblas_get_num_threads");
		LOOKUP(lib.set, "flexiblas_set_num_threads");
	}
	lib.name = gwb_blas_classify(lib.version, lib.blas_path);
	lib.reference = !strcmp(lib.name, "reference");
	if (lib.reference)
		copy_str(lib.version, sizeof(lib.version), "reference (netlib)");
	if (!settable()) {
		lib.def = get_now();
		lib.from = "fixed";
		return;
	}
	/* A thread count the user gave the library itself wins; OMP_NUM_THREADS too, which
	 * these libraries all read. */
	for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		int j;
		if (strcmp(envs[i][0], lib.name))
			continue;
		for (j = 1; j < 3; j++)
			if (envs[i][j] && getenv(envs[i][j]) && atoi(getenv(envs[i][j])) > 0)
				lib.from = envs[i][j];
	}
	if (!lib.from && getenv("OMP_NUM_THREADS") && atoi(getenv("OMP_NUM_THREADS")) > 0)
		lib.from = "OMP_NUM_THREADS";
	if (lib.from) {
		lib.def = get_now();
		return;
	}
	set_now(gwb_cpu_count());
	lib.def = get_now();   /* the library may cap it (OpenBLAS: its build's MAX_THREADS) */
	lib.from = "gwb";
}

void gwb_blas_loaded(void *(*fn)(const char *name))
{
	pthread_mutex_lock(&lock);
	lookup = fn;
	detect();
	loaded = true;
	if (serial_depth && settable()) {
		serial_saved = lib.def;   /* loaded inside a parallel section: one thread */
		set_now(1);
	}
	pthread_mutex_unlock(&lock);
}

/* lapack.c loads the library on first use and reports it through this hook, installed before
 * main runs (a constructor), so that no load can come before it. */
__attribute__((constructor)) static void install_load_hook(void)
{
	gwb_lapack_set_load_hook(gwb_blas_loaded);
}

static void no_library(void)
{
	if (!lib.name) {
		lib.name = "none";
		lib.from = "fixed";
		lib.def = 1;
	}
}

void gwb_blas_init(void)
{
	(void)gwb_lapack_sym("dgemm_");   /* loads it (and calls gwb_blas_loaded) once */
	pthread_once(&once, no_library);
}

void gwb_blas_get_info(gwb_blas_info *out)
{
	gwb_blas_init();
	memset(out, 0, sizeof(*out));
	out->name = lib.name;
	copy_str(out->version, sizeof(out->version), lib.version);
	copy_str(out->blas_path, sizeof(out->blas_path), lib.blas_path);
	copy_str(out->lapack_path, sizeof(out->lapack_path), lib.lapack_path);
	pthread_mutex_lock(&lock);
	out->threads = get_now();
	out->default_threads = lib.def;
	out->threads_from = lib.from;
	pthread_mutex_unlock(&lock);
	out->settable = settable();
	out->reference = lib.reference;
}

int gwb_blas_threads(void)
{
	int n;

	gwb_blas_init();
	pthread_mutex_lock(&lock);
	n = get_now();
	pthread_mutex_unlock(&lock);
	return n;
}

gwb_status gwb_blas_set_default_threads(int n)
{
	gwb_blas_init();
	if (n < 0)
		return gwb_error(GWB_EINVAL, "BLAS threads must be >= 0 (0 = all CPUs, %d here; got %d)",
				 gwb_cpu_count(), n);
	if (!settable())
		return GWB_OK;
	pthread_mutex_lock(&lock);
	set_now(n ? n : gwb_cpu_count());
	lib.def = get_now();
	lib.from = n ? "gwb.blas" : "gwb";
	if (serial_depth) {
		/* inside a parallel section: applies when it ends */
		serial_saved = lib.def;
		set_now(1);
	}
	pthread_mutex_unlock(&lock);
	return GWB_OK;
}

void gwb_blas_serial_begin(void)
{
	pthread_mutex_lock(&lock);
	if (serial_depth++ == 0 && loaded && settable()) {
		serial_saved = get_now();
		if (serial_saved != 1)
			set_now(1);
	}
	pthread_mutex_unlock(&lock);
}

void gwb_blas_serial_end(void)
{
	pthread_mutex_lock(&lock);
	if (serial_depth > 0 && --serial_depth == 0 && loaded && settable() && serial_saved != 1)
		set_now(serial_saved);
	pthread_mutex_unlock(&lock);
}

int gwb_blas_threads_push(int n)
{
	int old = -1;

	gwb_blas_init();
	if (n <= 0 || !settable())
		return -1;
	pthread_mutex_lock(&lock);
	if (!serial_depth) {
		old = get_now();
		if (old != n)
			set_now(n);
	}
	pthread_mutex_unlock(&lock);
	return old;
}

void gwb_blas_threads_pop(int token)
{
	if (token < 1)
		return;
	pthread_mutex_lock(&lock);
	if (!serial_depth && get_now() != token)
		set_now(token);
	pthread_mutex_unlock(&lock);
}

const char *gwb_blas_reference_note(void)
{
	gwb_blas_init();
	if (!lib.reference)
		return NULL;
	return "BLAS/LAPACK is the netlib reference implementation (unblocked, one thread: dense "
	       "solves run 10-40x slower); install OpenBLAS: apt-get install libopenblas0-pthread "
	       "(Debian, Ubuntu) or dnf install openblas (Fedora)";
}

bool gwb_blas_take_first_note(void)
{
	bool take;

	gwb_blas_init();
	if (!lib.reference)
		return false;
	pthread_mutex_lock(&lock);
	take = !first_note_taken;
	first_note_taken = true;
	pthread_mutex_unlock(&lock);
	return take;
}
