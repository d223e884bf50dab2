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

static _Thread_local int cur_dev;   /* the calling thread's device */
static void (*trim_hook)(void);     /* buffer.c's staging release */

int gwb_gpu_current(void)
{
	return cur_dev;
}

void gwb_gpu_set_current(int dev)
{
	cur_dev = dev;
}

void gwb_gpu_set_trim_hook(void (*fn)(void))
{
	trim_hook = fn;
}

#ifndef GWB_HAVE_CUDA

static void do_init(void)
{
	snprintf(init_reason, sizeof(init_reason),
		 "this gwb was built without CUDA: CPU backends only; "
		 "on a machine with an NVIDIA GPU, make CUDA=1 builds the GPU backends");
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

size_t gwb_gpu_trim(void)
{
	return 0;
}

void gwb_gpu_pool_stats(gwb_gpu_pool_info *out)
{
	memset(out, 0, sizeof(*out));
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
	gwb_gpu_trim();  /* the pool's cached blocks and the staging ring */
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
struct pool_block;
struct ledger_entry {
	void *ptr;
	size_t bytes;                /* as requested (the block may be larger) */
	struct pool_block *block;    /* the pool block behind ptr */
	int dev;                     /* the device it lives on (its pool) */
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

/* --- the caching pool ----------------------------------------------------------------------
 * Freed blocks are kept (with the event recorded on the legacy default stream when they were
 * freed) and handed out again to a request they fit closely; cudaMalloc runs only when no
 * cached block fits, and cudaFree only in gwb_gpu_trim() or when cudaMalloc fails. A reused
 * block's new work is ordered after its free event on the device, so work still reading it
 * on any blocking stream is never overwritten (copies on gwb's non-blocking copy stream are
 * ordered with the default stream by events; see buffer.c). */
struct pool_block {
	void *ptr;
	size_t size;         /* rounded size of the cudaMalloc */
	cudaEvent_t freed;   /* recorded on stream 0 at free (NULL: never used) */
	struct pool_block *next;
};
/* One pool per device (mgpu.h), indexed by the calling thread's device: gpus = 1 uses
 * pools[0] alone. A block goes back to the pool of the device it was allocated on. */
static struct dev_pool {
	struct pool_block *free_list;
	size_t cached_bytes, reserved_bytes;
	int cached_blocks;
	long hits, misses;
} pools[GWB_GPU_MAX];
#define pool_free_list (pools[gwb_gpu_current()].free_list)
#define pool_cached_bytes (pools[gwb_gpu_current()].cached_bytes)
#define pool_reserved_bytes (pools[gwb_gpu_current()].reserved_bytes)
#define pool_cached_blocks (pools[gwb_gpu_current()].cached_blocks)
#define pool_hits (pools[gwb_gpu_current()].hits)
#define pool_misses (pools[gwb_gpu_current()].misses)

/* Allocation granularity: 512 B below 1 MiB, 2 MiB (the driver's page) above. */
static size_t pool_round(size_t bytes)
{
	if (bytes == 0)
		bytes = 1;
	if (bytes < (1u << 20))
		return (bytes + 511) & ~(size_t)511;
	return (bytes + (2u << 20) - 1) & ~(((size_t)2 << 20) - 1);
}

/* The smallest cached block of at least `size` and at most 2x it (1/8 + 2 MiB over it for
 * large blocks); removed from the list. When the work queued before its free may still be
 * running, the default stream waits for it on the device (no host wait): every later use of
 * the block is ordered after it (gwb's copy stream first waits on the default stream). Under
 * ledger_lock. */
static struct pool_block *pool_take(size_t size)
{
	struct pool_block **pp, **best = NULL, *b;
	size_t lim = size < (1u << 20) ? 2 * size : size + size / 8 + ((size_t)2 << 20);

	for (pp = &pool_free_list; *pp; pp = &(*pp)->next) {
		b = *pp;
		if (b->size < size || b->size > lim || (best && b->size >= (*best)->size))
			continue;
		best = pp;
	}
	if (!best)
		return NULL;
	b = *best;
	*best = b->next;
	pool_cached_bytes -= b->size;
	pool_cached_blocks--;
	if (b->freed && cudaEventQuery(b->freed) != cudaSuccess &&
	    cudaStreamWaitEvent(0, b->freed, 0) != cudaSuccess)
		cudaEventSynchronize(b->freed);
	cudaGetLastError();
	return b;
}

/* Give every cached block back to the driver (waits for their free events). Under
 * ledger_lock. Returns the bytes released. */
static size_t pool_release_all(void)
{
	size_t rel = 0;

	while (pool_free_list) {
		struct pool_block *b = pool_free_list;
		pool_free_list = b->next;
		if (b->freed) {
			cudaEventSynchronize(b->freed);
			cudaEventDestroy(b->freed);
		}
		cudaFree(b->ptr);
		rel += b->size;
		pool_reserved_bytes -= b->size;
		free(b);
	}
	cudaGetLastError();
	pool_cached_bytes = 0;
	pool_cached_blocks = 0;
	return rel;
}

/* pool_release_all on every device whose pool holds blocks, that device made current for
 * the calls (and the caller's restored). Under ledger_lock. */
static size_t pool_release_each(void)
{
	int prev = gwb_gpu_current(), d;
	size_t rel = 0;

	for (d = 0; d < GWB_GPU_MAX; d++) {
		if (!pools[d].free_list)
			continue;
		if (d != prev && cudaSetDevice(d) != cudaSuccess) {
			cudaGetLastError();
			continue;
		}
		gwb_gpu_set_current(d);
		rel += pool_release_all();
		gwb_gpu_set_current(prev);
		if (d != prev)
			cudaSetDevice(prev);
	}
	cudaGetLastError();
	return rel;
}

size_t gwb_gpu_trim(void)
{
	size_t rel;

	if (!gwb_gpu_available())
		return 0;
	if (trim_hook)
		trim_hook();
	pthread_mutex_lock(&ledger_lock);
	rel = pool_release_each();
	pthread_mutex_unlock(&ledger_lock);
	return rel;
}

void gwb_gpu_pool_stats(gwb_gpu_pool_info *out)
{
	int d;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&ledger_lock);
	for (d = 0; d < GWB_GPU_MAX; d++) {  /* every device's pool (gpus = 1: device 0's) */
		out->cached_bytes += pools[d].cached_bytes;
		out->cached_blocks += pools[d].cached_blocks;
		out->reserved_bytes += pools[d].reserved_bytes;
		out->hits += pools[d].hits;
		out->misses += pools[d].misses;
	}
	pthread_mutex_unlock(&ledger_lock);
}

/* One line naming what gwb holds, by purpose, for out-of-memory messages. */
struct holds_ctx { char *buf; size_t n, len; };
static void holds_cb(const char *purpose, size_t bytes, int count, void *ctx)
{
	struct holds_ctx *h = ctx;
	char b[32];

	human(b, sizeof(b), bytes);
	if (h->len + 1 < h->n) {
		int w = snprintf(h->buf + h->len, h->n - h->len, "%s%s %s (%d)", h->len ? ", " : "",
				 purpose, b, count);
		if (w > 0)
			h->len += (size_t)w;
	}
}

gwb_status gwb_gpu_malloc(void **ptr, size_t bytes, const char *purpose)
{
	struct ledger_entry *e;
	struct pool_block *b;
	size_t size = pool_round(bytes);
	cudaError_t err;
	gwb_status rc;

	*ptr = NULL;
	if ((rc = gwb_gpu_init()))
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e)
		return gwb_error(GWB_ENOMEM, "out of host memory for the device ledger");
	pthread_mutex_lock(&ledger_lock);
	b = pool_take(size);
	if (b)
		pool_hits++;
	else
		pool_misses++;
	pthread_mutex_unlock(&ledger_lock);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b) {
			free(e);
			return gwb_error(GWB_ENOMEM, "out of host memory for the device pool");
		}
		b->size = size;
		err = cudaMalloc(&b->ptr, size);
		if (err == cudaErrorMemoryAllocation) {
			/* give the cache back and try once more */
			cudaGetLastError();
			pthread_mutex_lock(&ledger_lock);
			pool_release_all();
			pthread_mutex_unlock(&ledger_lock);
			err = cudaMalloc(&b->ptr, size);
		}
		if (err != cudaSuccess) {
			size_t fr = 0, tot = 0;
			char need[32], have[32], holds[320] = "";
			struct holds_ctx h = {holds, sizeof(holds), 0};
			cudaGetLastError();
			cudaMemGetInfo(&fr, &tot);
			human(need, sizeof(need), bytes);
			human(have, sizeof(have), fr);
			free(e);
			free(b);
			gwb_gpu_ledger_each(holds_cb, &h);
			return gwb_error(GWB_ENOMEM,
					 "GPU out of memory for %s: needed %s (%zu bytes), %s free of "
					 "%.1f GiB; gwb holds %s; free objects you no longer need "
					 "(x:close(), or x:to(\"cpu\")) and call gpu.trim(), use a "
					 "smaller problem or backend=\"cpu\"",
					 purpose, need, bytes, have, tot / (double)(1ull << 30),
					 holds[0] ? holds : "nothing");
		}
		pthread_mutex_lock(&ledger_lock);
		pool_reserved_bytes += size;
		pthread_mutex_unlock(&ledger_lock);
	}
	*ptr = b->ptr;
	e->ptr = *ptr;
	e->bytes = bytes;
	e->block = b;
	e->dev = gwb_gpu_current();
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
	struct pool_block *b;
	int dev, prev = gwb_gpu_current();

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
	if (!e) {
		pthread_mutex_unlock(&ledger_lock);
		cudaFree(ptr);  /* not ours: the driver's */
		cudaGetLastError();
		return;
	}
	b = e->block;
	dev = e->dev;
	free(e);
	/* freed from another device's thread: record on the block's own device, into its pool */
	if (dev != prev) {
		cudaSetDevice(dev);
		gwb_gpu_set_current(dev);
	}
	if (!b->freed && cudaEventCreateWithFlags(&b->freed, cudaEventDisableTiming) != cudaSuccess)
		b->freed = NULL;
	if (b->freed && cudaEventRecord(b->freed, 0) != cudaSuccess) {
		/* cannot order the reuse: wait for the device instead */
		cudaGetLastError();
		cudaDeviceSynchronize();
	}
	cudaGetLastError();
	b->next = pool_free_list;
	pool_free_list = b;
	pool_cached_bytes += b->size;
	pool_cached_blocks++;
	if (dev != prev) {
		gwb_gpu_set_current(prev);
		cudaSetDevice(prev);
		cudaGetLastError();
	}
	pthread_mutex_unlock(&ledger_lock);
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
