/* gpu.c - lazy CUDA initialisation, device properties and the allocation ledger. */
#define _GNU_SOURCE
#include "gpu.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static gwb_status init_status = GWB_ENODEV;
static char init_reason[512];

#ifndef GWB_HAVE_CUDA

static void do_init(void)
{
	snprintf(init_reason, sizeof(init_reason),
		 "this gwb was built without CUDA (make CUDA=0): CPU backends only; "
		 "rebuild with nvcc on PATH to use a GPU");
	init_status = GWB_ENODEV;
}

void gwb_gpu_versions(int *driver, int *runtime)
{
	*driver = 0;
	*runtime = 0;
}

void gwb_gpu_shutdown(void)
{
}

gwb_status gwb_gpu_get_info(gwb_gpu_info *out)
{
	memset(out, 0, sizeof(*out));
	return gwb_gpu_init();
}

gwb_status gwb_gpu_mem(size_t *free_b, size_t *total_b)
{
	*free_b = *total_b = 0;
	return gwb_gpu_init();
}

gwb_status gwb_gpu_malloc(void **ptr, size_t bytes, const char *purpose)
{
	(void)bytes;
	(void)purpose;
	*ptr = NULL;
	return gwb_gpu_init();
}

void gwb_gpu_free(void *ptr)
{
	(void)ptr;
}

void gwb_gpu_ledger_each(gwb_gpu_ledger_fn fn, void *ctx)
{
	(void)fn;
	(void)ctx;
}

size_t gwb_gpu_ledger_total(int *count)
{
	if (count)
		*count = 0;
	return 0;
}

#else /* GWB_HAVE_CUDA */

gwb_status gwb_cuda_check(cudaError_t err, const char *expr, const char *file, int line)
{
	cudaError_t last = cudaGetLastError();

	if (err == cudaSuccess)
		err = last;
	if (err == cudaSuccess)
		return GWB_OK;
	gwb_error(err == cudaErrorMemoryAllocation ? GWB_ENOMEM : GWB_ECUDA,
		  "CUDA: %s (%s) at %s:%d: %s", cudaGetErrorString(err), cudaGetErrorName(err),
		  file, line, expr);
	return err == cudaErrorMemoryAllocation ? GWB_ENOMEM : GWB_ECUDA;
}

/* --- the GPU plugin ----------------------------------------------------------------------
 * The kernels and the CUDA libraries live in libgwbcuda.so, loaded here on first GPU use
 * (see scripts/gen-trampolines for why and how calls reach it). */
extern void *gwb_tramp_table[];
extern const char *gwb_tramp_names[];
static void *plugin;
static char plugin_err[512];

static int try_plugin(const char *path)
{
	if (access(path, R_OK) != 0)
		return 0;
	plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!plugin)
		snprintf(plugin_err, sizeof(plugin_err), "%s", dlerror());
	return plugin != NULL;
}

static gwb_status load_plugin(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *slash;
	const char *env = getenv("GWB_CUDA_PLUGIN");
	ssize_t r;
	int i;

	if (plugin)
		return GWB_OK;
	plugin_err[0] = '\0';
	r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[r > 0 ? r : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	if (!(env && try_plugin(env))) {
		snprintf(path, sizeof(path), "%s/libgwbcuda.so", exe);
		if (!try_plugin(path)) {
			snprintf(path, sizeof(path), "%s/../lib/gwb/libgwbcuda.so", exe);
			if (!try_plugin(path))
				try_plugin(GWB_PLUGIN_PATH);
		}
	}
	if (!plugin)
		return gwb_error(GWB_ENODEV, "the GPU part of gwb (libgwbcuda.so) could not be loaded: %s",
				 plugin_err[0] ? plugin_err : "not found beside the binary, in ../lib/gwb "
				 "or at " GWB_PLUGIN_PATH "; set GWB_CUDA_PLUGIN or reinstall");
	for (i = 0; gwb_tramp_names[i]; i++) {
		void *f = dlsym(plugin, gwb_tramp_names[i]);
		if (!f)
			return gwb_error(GWB_ENODEV, "libgwbcuda.so lacks %s: rebuild gwb (make)",
					 gwb_tramp_names[i]);
		gwb_tramp_table[i] = f;
	}
	/* Scripts may leave through os.exit() without returning from main: release the library
	 * handles at exit too (before the CUDA runtime's own exit handler, registered earlier). */
	atexit(gwb_gpu_shutdown);
	return GWB_OK;
}

/* Called by a trampoline when GPU code is reached before gwb_gpu_init() (a caller that did
 * not check for a GPU): load now; if that is impossible there is no function to return. */
void *gwb_tramp_resolve(int i);
void *gwb_tramp_resolve(int i)
{
	static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
	gwb_status rc;

	pthread_mutex_lock(&lk);
	rc = load_plugin();
	pthread_mutex_unlock(&lk);
	if (rc) {
		fprintf(stderr, "gwb: internal error: GPU function %s called without a GPU: %s\n",
			gwb_tramp_names[i], gwb_errmsg());
		abort();
	}
	return gwb_tramp_table[i];
}

static void do_init(void)
{
	int n = 0;
	cudaError_t err = cudaGetDeviceCount(&n);

	if (err != cudaSuccess) {
		int drv = 0;
		cudaDriverGetVersion(&drv);
		/* one reason, in words: the runtime's own text here ("CUDA driver version is
		 * insufficient") reads as "upgrade the driver" when there is none */
		if (err == cudaErrorInsufficientDriver && drv == 0)
			snprintf(init_reason, sizeof(init_reason),
				 "no NVIDIA driver found (no GPU on this machine?); CPU backends only");
		else
			snprintf(init_reason, sizeof(init_reason),
				 "CUDA unavailable: %s (%s); CPU backends only",
				 cudaGetErrorString(err), cudaGetErrorName(err));
		cudaGetLastError();
		init_status = GWB_ENODEV;
		return;
	}
	if (n == 0) {
		snprintf(init_reason, sizeof(init_reason), "no CUDA device present; CPU backends only");
		init_status = GWB_ENODEV;
		return;
	}
	err = cudaSetDevice(0);
	if (err == cudaSuccess)
		err = cudaFree(NULL);  /* create the context now, once */
	if (err != cudaSuccess) {
		snprintf(init_reason, sizeof(init_reason), "could not create a CUDA context: %s",
			 cudaGetErrorString(err));
		cudaGetLastError();
		init_status = GWB_ENODEV;
		return;
	}
	if (load_plugin()) {
		snprintf(init_reason, sizeof(init_reason), "%s", gwb_errmsg());
		init_status = GWB_ENODEV;
		return;
	}
	init_reason[0] = '\0';
	init_status = GWB_OK;
}

void gwb_gpu_shutdown(void)
{
	void (*release)(void);

	if (!plugin)
		return;  /* never loaded: nothing to give back, and no reason to load it now */
	*(void **)&release = dlsym(plugin, "gwb_gpu_handles_release");
	if (release)
		release();
}

void gwb_gpu_versions(int *driver, int *runtime)
{
	*driver = 0;
	*runtime = 0;
	cudaDriverGetVersion(driver);
	cudaRuntimeGetVersion(runtime);
}

gwb_status gwb_gpu_get_info(gwb_gpu_info *out)
{
	struct cudaDeviceProp p;
	gwb_status rc;
	int v;

	memset(out, 0, sizeof(*out));
	if ((rc = gwb_gpu_init()))
		return rc;
	if ((rc = CUDA_CHECK(cudaGetDevice(&out->device))))
		return rc;
	if ((rc = CUDA_CHECK(cudaGetDeviceProperties(&p, out->device))))
		return rc;
	cudaGetDeviceCount(&out->count);
	snprintf(out->name, sizeof(out->name), "%s", p.name);
	out->cc_major = p.major;
	out->cc_minor = p.minor;
	out->sms = p.multiProcessorCount;
	out->mem_total = p.totalGlobalMem;
	out->l2_bytes = (size_t)p.l2CacheSize;
	out->smem_per_block = p.sharedMemPerBlock;
	out->smem_per_block_optin = p.sharedMemPerBlockOptin;
	out->smem_per_sm = p.sharedMemPerMultiprocessor;
	out->regs_per_sm = p.regsPerMultiprocessor;
	out->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
	out->max_threads_per_block = p.maxThreadsPerBlock;
	out->warp_size = p.warpSize;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, out->device) == cudaSuccess)
		out->clock_khz = v;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, out->device) == cudaSuccess)
		out->mem_clock_khz = v;
	out->mem_bus_bits = p.memoryBusWidth;
	cudaGetLastError();
	gwb_gpu_versions(&out->driver_version, &out->runtime_version);
	return GWB_OK;
}

gwb_status gwb_gpu_mem(size_t *free_b, size_t *total_b)
{
	gwb_status rc;

	*free_b = *total_b = 0;
	if ((rc = gwb_gpu_init()))
		return rc;
	return CUDA_CHECK(cudaMemGetInfo(free_b, total_b));
}

/* The ledger: a small list of live allocations. Allocation counts are modest (tens to a few
 * thousand), so a linked list under one lock is enough. */
struct ledger_entry {
	void *ptr;
	size_t bytes;
	char purpose[48];
	struct ledger_entry *next;
};
static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ledger_entry *ledger;

static void human(char *buf, size_t n, size_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, n, "%.2f GiB", bytes / (double)(1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, n, "%.1f MiB", bytes / (double)(1ull << 20));
	else
		snprintf(buf, n, "%zu bytes", bytes);
}

gwb_status gwb_gpu_malloc(void **ptr, size_t bytes, const char *purpose)
{
	struct ledger_entry *e;
	cudaError_t err;
	gwb_status rc;

	*ptr = NULL;
	if ((rc = gwb_gpu_init()))
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e)
		return gwb_error(GWB_ENOMEM, "out of host memory for the device ledger");
	err = cudaMalloc(ptr, bytes ? bytes : 1);
	if (err != cudaSuccess) {
		size_t fr = 0, tot = 0;
		char need[32], have[32];
		cudaGetLastError();
		cudaMemGetInfo(&fr, &tot);
		human(need, sizeof(need), bytes);
		human(have, sizeof(have), fr);
		free(e);
		*ptr = NULL;
		return gwb_error(GWB_ENOMEM,
				 "GPU out of memory for %s: needed %s (%zu bytes), %s free of %.1f GiB; "
				 "use a smaller problem or backend=\"cpu\"",
				 purpose, need, bytes, have, tot / (double)(1ull << 30));
	}
	e->ptr = *ptr;
	e->bytes = bytes;
	snprintf(e->purpose, sizeof(e->purpose), "%s", purpose ? purpose : "?");
	pthread_mutex_lock(&ledger_lock);
	e->next = ledger;
	ledger = e;
	pthread_mutex_unlock(&ledger_lock);
	return GWB_OK;
}

void gwb_gpu_free(void *ptr)
{
	struct ledger_entry **pp, *e = NULL;

	if (!ptr)
		return;
	pthread_mutex_lock(&ledger_lock);
	for (pp = &ledger; *pp; pp = &(*pp)->next) {
		if ((*pp)->ptr == ptr) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&ledger_lock);
	free(e);
	cudaFree(ptr);
}

void gwb_gpu_ledger_each(gwb_gpu_ledger_fn fn, void *ctx)
{
	/* Aggregate by purpose; purposes are few. */
	struct agg { char purpose[48]; size_t bytes; int count; } a[64];
	int na = 0, i;
	struct ledger_entry *e;

	pthread_mutex_lock(&ledger_lock);
	for (e = ledger; e; e = e->next) {
		for (i = 0; i < na && strcmp(a[i].purpose, e->purpose); i++)
			;
		if (i == na) {
			if (na == 64)
				i = 63;  /* fold the rest into the last slot */
			else {
				na++;
				memcpy(a[i].purpose, e->purpose, sizeof(a[i].purpose));
				a[i].bytes = 0;
				a[i].count = 0;
			}
		}
		a[i].bytes += e->bytes;
		a[i].count++;
	}
	pthread_mutex_unlock(&ledger_lock);
	for (i = 0; i < na; i++)
		fn(a[i].purpose, a[i].bytes, a[i].count, ctx);
}

size_t gwb_gpu_ledger_total(int *count)
{
	struct ledger_entry *e;
	size_t total = 0;
	int n = 0;

	pthread_mutex_lock(&ledger_lock);
	for (e = ledger; e; e = e->next) {
		total += e->bytes;
		n++;
	}
	pthread_mutex_unlock(&ledger_lock);
	if (count)
		*count = n;
	return total;
}

#endif /* GWB_HAVE_CUDA */

gwb_status gwb_gpu_init(void)
{
	pthread_once(&init_once, do_init);
	if (init_status != GWB_OK)
		return gwb_error(init_status, "%s", init_reason);
	return GWB_OK;
}

bool gwb_gpu_available(void)
{
	pthread_once(&init_once, do_init);
	return init_status == GWB_OK;
}

const char *gwb_gpu_unavailable_reason(void)
{
	pthread_once(&init_once, do_init);
	return init_reason;
}
