/* gpu.h - the device: lazy initialisation, properties, and the ledger of our allocations.
 * Every device allocation goes through gwb_gpu_malloc() with a purpose tag, so the panel can
 * show who holds what and tests can see leaks. In a CPU-only build (make CUDA=0) everything
 * here compiles and reports GWB_ENODEV with the reason. */
#ifndef GWB_GPU_H
#define GWB_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef GWB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Devices gwb handles in one process (the per-device arrays' size). */
#define GWB_GPU_MAX 16

typedef struct gwb_gpu_info {
	char name[256];
	int device;               /* CUDA ordinal */
	int count;                /* devices visible */
	int cc_major, cc_minor;   /* compute capability */
	int sms;                  /* multiprocessors */
	size_t mem_total;         /* bytes of device memory */
	size_t l2_bytes;
	size_t smem_per_block;    /* default limit */
	size_t smem_per_block_optin;
	size_t smem_per_sm;
	int regs_per_sm;
	int max_threads_per_sm;
	int max_threads_per_block;
	int warp_size;
	int clock_khz;            /* SM clock, 0 when the runtime does not report it */
	int mem_clock_khz;
	int mem_bus_bits;
	int driver_version;       /* e.g. 13000 */
	int runtime_version;
} gwb_gpu_info;

/* Initialise CUDA once (later calls return the cached outcome). GWB_ENODEV with the reason in
 * gwb_errmsg() when there is no usable GPU. Cheap after the first call. */
gwb_status gwb_gpu_init(void);

/* True when a GPU is usable; initialises on first call. */
bool gwb_gpu_available(void);

/* Why there is no GPU ("" when there is one). Initialises on first call. */
const char *gwb_gpu_unavailable_reason(void);

/* Properties of the current device. GWB_ENODEV when none. */
gwb_status gwb_gpu_get_info(gwb_gpu_info *out);

/* Versions without creating a context: runtime the binary was built against and the
 * installed driver (0 when unknown). Safe in CPU-only builds (both 0). */
void gwb_gpu_versions(int *driver, int *runtime);

/* At exit, after every object that holds device memory is freed: give back what the GPU
 * libraries hold (cuBLAS/cuSOLVER handles). Does nothing when the GPU was never used. */
void gwb_gpu_shutdown(void);

/* cudaMemGetInfo. GWB_ENODEV when no GPU. */
gwb_status gwb_gpu_mem(size_t *free_b, size_t *total_b);

/* Device allocation with a purpose tag ("rf.codes", "eig.work", ...), from the caching pool:
 * a freed block is kept and reused by a later request it fits (cudaMalloc only when none
 * does), so these are cheap on hot paths. On failure (after giving the cache back and
 * retrying) the message says how many bytes were needed, how many are free, what gwb holds
 * by purpose, and to free objects or call gpu.trim(). */
gwb_status gwb_gpu_malloc(void **ptr, size_t bytes, const char *purpose);
/* Free a pointer from gwb_gpu_malloc (NULL is fine): back to the pool, reusable once the work
 * queued before the free (on blocking streams) has finished. Never synchronizes. */
void gwb_gpu_free(void *ptr);

/* The pool: bytes cached (freed, kept for reuse), bytes reserved from the driver (live +
 * cached), and reuse counts since start. */
typedef struct gwb_gpu_pool_info {
	size_t cached_bytes;
	int cached_blocks;
	size_t reserved_bytes;
	long hits, misses;    /* requests served from the cache / by cudaMalloc */
} gwb_gpu_pool_info;
void gwb_gpu_pool_stats(gwb_gpu_pool_info *out);
/* Give the pool's cached blocks (and, through the trim hook, the pinned staging ring of
 * buffer.c) back; returns the device bytes released. 0 without a GPU. gpu.trim() in Lua. */
size_t gwb_gpu_trim(void);
/* Called by gwb_gpu_trim (so also at shutdown) before the pool's blocks go back: buffer.c
 * installs its staging ring's release here before main runs. */
void gwb_gpu_set_trim_hook(void (*fn)(void));

/* The calling thread's device (thread-local; 0 until gwb_gpu_use, mgpu.h, says otherwise).
 * Every per-device table is indexed by it. */
int gwb_gpu_current(void);
/* Set only the thread-local index (a CPU stand-in "device": no CUDA call). */
void gwb_gpu_set_current(int dev);

/* The ledger: bytes we hold per purpose. Calls fn once per live purpose. */
typedef void (*gwb_gpu_ledger_fn)(const char *purpose, size_t bytes, int count, void *ctx);
void gwb_gpu_ledger_each(gwb_gpu_ledger_fn fn, void *ctx);
/* Total bytes and number of live allocations we hold. */
size_t gwb_gpu_ledger_total(int *count);

#ifdef GWB_HAVE_CUDA
/* Turn a CUDA runtime result into a status, folding in cudaGetLastError(); logs the call site
 * into the message buffer. Use through CUDA_CHECK. */
gwb_status gwb_cuda_check(cudaError_t err, const char *expr, const char *file, int line);
#define CUDA_CHECK(expr) gwb_cuda_check((expr), #expr, __FILE__, __LINE__)
#endif

#ifdef __cplusplus
}
#endif
#endif
