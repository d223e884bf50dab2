/* buffer.h - where an object's data lives: one buffer type and one backend table for every
 * object that can sit on the CPU or the GPU (Matrix, batches, results' vectors, CSR arrays,
 * Dataset columns), in the manner of ggml-backend (ggml-backend-impl.h).
 *
 * The backend table (gwb_buf_ops) is a struct of function pointers: allocate/free memory of
 * that device, copy in from host memory, copy out to host memory, copy within the device,
 * zero, synchronize. gwb_buf_ops_get(GWB_DEVICE_CPU) is malloc/memcpy; GWB_DEVICE_GPU is the
 * caching device pool (gwb_gpu_malloc, gpu.c) and pinned staging (below). Code that moves
 * bytes calls buf->ops->... once, instead of `#ifdef GWB_HAVE_CUDA` + `if (gpu)` pairs; a CPU
 * build (make CUDA=0) has only the CPU table and gwb_buf_ops_get(GPU) says why there is none.
 *
 * A buffer (gwb_buf) owns `bytes` bytes of one array and knows its device: the side where it
 * is resident, which operations of that backend use in place. A GPU-resident buffer may also
 * hold a host copy, made lazily by the first host read (gwb_buf_host) and cached; the validity
 * flags say which copies are current. Rules:
 *   - read on the host:   gwb_buf_host(b, &p)         (copies device -> host once, caches)
 *   - wrote on the host:  gwb_buf_host_wrote(b, off, n)  (the device copy is updated too)
 *   - read on the GPU:    gwb_buf_dev(b, &p, &tmp) ... gwb_buf_dev_done(b, p, tmp)
 *                         (in place when resident; otherwise a pooled temporary copy)
 *   - wrote on the GPU:   gwb_buf_dev_wrote(b)         (the host copy is stale)
 *   - move:               gwb_buf_to(b, GWB_DEVICE_GPU | GWB_DEVICE_CPU)  (all or nothing)
 * The caller owns a buffer and frees it with gwb_buf_free(), which gives device memory back
 * to the pool (never a cudaFree on the hot path; gpu.trim() releases the pool).
 *
 * Transfers: gwb_gpu_copy_in/out move host <-> device through a ring of pinned chunks (4 x 64
 * MiB) on a non-blocking copy stream, unless the host range is registered (below); the host fills (drains) chunk i+1 with several threads while the
 * DMA of chunk i runs, and the legacy default stream (where kernels and library calls run)
 * waits on the last chunk's event, so a kernel queued next overlaps nothing it needs and the
 * host never waits for an upload. Every copy is recorded in prof.c (pinned = true). Ctrl-C
 * between chunks stops the copy (GWB_EINTR) with nothing half-moved: the destination is not
 * marked valid. Not thread safe per buffer; the staging ring is shared under a lock.
 *
 * Registered host memory: large (>= GWB_PIN_MIN_BYTES), long-lived host memory that crosses
 * to the device more than once (a Dataset's X, a Matrix's data, a buffer's host memory) is
 * page-locked once with cudaHostRegister, on its first crossing, and from then on copied
 * straight from/to with cudaMemcpyAsync on the copy stream (no host memcpy, pinned rates).
 * Its owner declares it with gwb_host_track() (cheap: a table entry, no CUDA call) and must
 * call gwb_host_untrack() before freeing or reallocating it (that unregisters it). The owners
 * today: gwb_dataset_new/free (X), alloc_matrix/gwb_matrix_free (data), gwb_buf_free (host
 * memory a buffer owns); gwb_buf_to(GPU) and gwb_buf_dev track a buffer's host memory, so
 * whoever lends a buffer host memory (gwb_buf_wrap with own = false) untracks it before
 * freeing it. The host copy of a device result (gwb_buf_host) is not tracked: it crosses
 * once and is cached, so a registration would cost more than it saves. The registration is keyed by the host range, not by a buffer, because GPU
 * operations also copy d->X / A->data through gwb_copy without a buffer, and a Dataset's
 * device buffer comes and goes with to("gpu") / to("cpu") while X stays. Memory that is
 * small, not tracked, or whose registration the driver refused goes through the staging ring
 * (a refused range is not retried). gwb_gpu_staging_release (gpu.trim(), shutdown)
 * unregisters everything; the ranges stay tracked and register again on their next crossing. */
#ifndef GWB_BUFFER_H
#define GWB_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_device { GWB_DEVICE_CPU = 0, GWB_DEVICE_GPU = 1 } gwb_device;

/* "cpu" / "gpu"; parse also accepts "cuda". GWB_EINVAL (with the accepted names) otherwise. */
const char *gwb_device_name(gwb_device d);
gwb_status gwb_device_parse(const char *s, gwb_device *out);

/* The backend table of one device. Pointers are device pointers of that device (host
 * pointers for the CPU). Every function returns a status (GWB_ENOMEM names bytes, free and
 * holdings; GWB_EINTR on Ctrl-C during a long copy). */
typedef struct gwb_buf_ops {
	const char *name;      /* "cpu" | "gpu" */
	gwb_device device;
	gwb_status (*alloc)(void **p, size_t bytes, const char *purpose);
	void (*free)(void *p);
	gwb_status (*copy_in)(void *dst, const void *host_src, size_t bytes);   /* host -> dev */
	gwb_status (*copy_out)(void *host_dst, const void *src, size_t bytes);  /* dev -> host */
	gwb_status (*copy)(void *dst, const void *src, size_t bytes);           /* dev -> dev */
	gwb_status (*zero)(void *p, size_t bytes);
	gwb_status (*sync)(void);  /* wait for queued work of this device */
} gwb_buf_ops;

/* The table of a device: the CPU's always; the GPU's when one is usable, else NULL with
 * GWB_ENODEV and the reason (CPU build, no driver, ...) in gwb_errmsg(). */
const gwb_buf_ops *gwb_buf_ops_get(gwb_device d);

typedef struct gwb_buf {
	gwb_device device;        /* where it is resident */
	const gwb_buf_ops *ops;   /* backend of `device` */
	size_t bytes;
	void *host;               /* host memory (NULL until needed for a GPU buffer) */
	void *dev;                /* device memory (NULL unless GPU-resident) */
	bool host_valid;          /* host holds the current contents */
	bool dev_valid;           /* dev holds the current contents */
	bool host_borrowed;       /* host memory belongs to the caller: not freed here */
	char purpose[48];         /* ledger tag for device memory ("mat.data", ...) */
} gwb_buf;

/* A buffer of `bytes` on device d (contents undefined; zeroed when zero). The caller owns it
 * and frees it with gwb_buf_free(). */
gwb_status gwb_buf_new(gwb_device d, size_t bytes, const char *purpose, bool zero,
		       gwb_buf **out);
/* A CPU-resident buffer over existing host memory; `own`: gwb_buf_free frees it with free()
 * (untracking it first). Not own: the memory may get tracked for registration when the
 * buffer crosses to the device, so its owner calls gwb_host_untrack() before freeing it. */
gwb_status gwb_buf_wrap(void *host, size_t bytes, bool own, const char *purpose, gwb_buf **out);
/* Free the buffer, its device memory (to the pool) and its host memory unless borrowed. */
void gwb_buf_free(gwb_buf *b);

/* Make d the resident device: to the GPU allocates and copies (a host copy stays cached and
 * valid); to the CPU copies back when the host copy is stale and gives the device memory
 * back. On any failure the buffer is exactly as before. */
gwb_status gwb_buf_to(gwb_buf *b, gwb_device d);

/* Host pointer with current contents (a GPU buffer copies back on the first read after a
 * device write, then caches). */
gwb_status gwb_buf_host(gwb_buf *b, void **p);
/* The host wrote bytes [off, off + n): keeps a resident device copy consistent (copies the
 * range up). Call after gwb_buf_host(). */
gwb_status gwb_buf_host_wrote(gwb_buf *b, size_t off, size_t n);

/* Device pointer with current contents for a GPU operation: the resident copy in place
 * (*tmp = false), or for a CPU-resident buffer a pooled temporary copy (*tmp = true) that
 * gwb_buf_dev_done() gives back. GWB_ENODEV without a GPU. */
gwb_status gwb_buf_dev(gwb_buf *b, void **p, bool *tmp);
void gwb_buf_dev_done(gwb_buf *b, void *p, bool tmp);
/* A GPU operation wrote the resident device copy: the host copy is stale. */
void gwb_buf_dev_wrote(gwb_buf *b);

/* A GPU-resident buffer adopting device memory from gwb_gpu_malloc (a result computed on the
 * device): the buffer owns it from now on. */
gwb_status gwb_buf_adopt_dev(void *dev, size_t bytes, const char *purpose, gwb_buf **out);

/* Host <-> device copies through the pinned staging ring (see the header comment); small
 * copies (< 256 KiB) go direct. copy_in returns once the host memory may be reused; the data
 * is ready for work queued afterwards on the default stream. copy_out returns with the data on
 * the host. GWB_ENODEV without a GPU. */
gwb_status gwb_gpu_copy_in(void *dev_dst, const void *host_src, size_t bytes);
gwb_status gwb_gpu_copy_out(void *host_dst, const void *dev_src, size_t bytes);
/* A device-to-host copy that hands each staged chunk (pinned host memory, valid only during
 * the call) to sink(ctx, offset, chunk, len) instead of copying it: conversion (f32 -> f64,
 * say) overlapped with the DMA of the next chunks, with no intermediate host copy. */
typedef void (*gwb_gpu_sink_fn)(void *ctx, size_t off, const void *chunk, size_t len);
gwb_status gwb_gpu_copy_out_to(const void *dev_src, size_t bytes, gwb_gpu_sink_fn sink,
			       void *ctx);
/* Wall milliseconds spent in gwb_gpu_copy_in/out since start (callers take differences to
 * fill a result's transfer_ms). */
double gwb_gpu_copy_ms(void);
/* Pinned host bytes the staging ring holds (0 until the first staged copy). */
size_t gwb_gpu_staging_bytes(void);
/* Give the staging ring and every host registration back (gwb_gpu_trim calls it). */
void gwb_gpu_staging_release(void);

/* --- registered (page-locked) host memory: see the header comment --------------------------- */

/* Host ranges smaller than this cross through the staging ring: registering costs about as
 * much as one staged copy of the same bytes, and small copies are latency-bound anyway. */
#define GWB_PIN_MIN_BYTES ((size_t)64 << 20)
/* The decision (pure; no GPU needed): register a range of `bytes`? True when it is at least
 * GWB_PIN_MIN_BYTES and the switch copy.pinned is on (switches.h). */
bool gwb_host_pin_wanted(size_t bytes);
/* Declare [p, p + bytes) long-lived host memory that may be registered on its first crossing.
 * True when it is tracked now (or lies inside a tracked range); false when it is too small,
 * overlaps a tracked range partly, or the table is full (it then stays on the staged path).
 * The owner calls gwb_host_untrack(p) before freeing or reallocating p. */
bool gwb_host_track(void *p, size_t bytes);
/* Forget the range that starts at p (no-op when none), unregistering it first when it was
 * registered. Call before free(p) / realloc(p). */
void gwb_host_untrack(void *p);
/* Whether [p, p + bytes) may be copied directly: it lies inside a tracked range that is
 * registered now, or that is registered by this call (once per range; the cost is added to
 * gwb_host_pin_ms()). False for untracked, refused or unwanted (gwb_host_pin_wanted) ranges. */
bool gwb_host_pin(const void *p, size_t bytes);
/* Whether [p, p + bytes) lies inside a registered range now (no registration). */
bool gwb_host_is_pinned(const void *p, size_t bytes);
/* Bytes registered now, ranges tracked now, and wall ms spent in registrations so far. */
size_t gwb_host_pinned_bytes(void);
int gwb_host_tracked(void);
double gwb_host_pin_ms(void);
/* Unregister every registered range (they stay tracked). gwb_gpu_staging_release calls it. */
void gwb_host_unpin_all(void);
/* For tests: replace the page-locking calls (cudaHostRegister / cudaHostUnregister in a CUDA
 * build; in a CPU build registration is refused) so the bookkeeping runs without a GPU.
 * reg returns true when the range is page-locked. NULL, NULL restores the real calls. */
void gwb_host_pin_set_hooks(bool (*reg)(void *p, size_t bytes), void (*unreg)(void *p));

#ifdef __cplusplus
}
#endif
#endif
