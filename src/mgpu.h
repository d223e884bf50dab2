/* mgpu.h - several GPUs of one host: the devices there are, the set an operation runs on (the
 * `gpus` option), one host thread per device, and dealing work to devices in index order.
 * Per-device state (the device pool in gpu.c, the staging ring in buffer.c, cuBLAS/cuSOLVER/
 * cuSPARSE handles, profiling event pools) is an array indexed by device; each host thread has
 * a current device (gwb_gpu_current, thread-local, 0 by default), so gpus = 1 touches index 0
 * only, as before. Nothing here allocates device memory; the caller owns what it passes. */
#ifndef GWB_MGPU_H
#define GWB_MGPU_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu.h"        /* the current device (gwb_gpu_current) */
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One device as gwb.gpus() lists it. */
typedef struct gwb_gpu_dev {
	int index;           /* CUDA ordinal */
	char name[256];
	size_t mem_total;    /* bytes */
	size_t mem_free;     /* bytes free now (cudaMemGetInfo on that device) */
	int sms;
	char pci[32];        /* PCI bus id, "0000:19:00.0" */
} gwb_gpu_dev;

/* Devices visible to this process (0 with GWB_ENODEV and the reason of gwb_gpu_available()
 * when there is no usable GPU or this is a CPU build). */
gwb_status gwb_gpu_count(int *n);
/* Properties of device `dev` (0 <= dev < count). Makes that device's context on first use. */
gwb_status gwb_gpu_dev_get(int dev, gwb_gpu_dev *out);
/* cudaDeviceCanAccessPeer(a, b) (false for a == b, out of range, or no GPU). */
bool gwb_gpu_can_peer(int a, int b);

/* Make `dev` the calling thread's device: cudaSetDevice (creating its context on first use)
 * and the thread-local index (gwb_gpu_set_current, gpu.h). GWB_EINVAL for an ordinal out of
 * range. */
gwb_status gwb_gpu_use(int dev);

/* The devices an operation runs on: n ordinals, in the order work is dealt to them. `cpu`:
 * the devices are CPU stand-ins (tests of dealing and gathering without a GPU): the runner
 * makes no CUDA call and the operation runs its CPU code per "device". */
typedef struct gwb_gpu_set {
	int n;
	int ids[GWB_GPU_MAX];
	bool cpu;
} gwb_gpu_set;

/* The default set: device 0 alone. */
void gwb_gpu_set_default(gwb_gpu_set *s);
/* Check a request against the devices there are and fill *out. The request is a count
 * (`count` > 0 and ids NULL: devices 0 .. count-1) or a list (`ids` of `nids` ordinals, count
 * ignored). `avail` devices exist, named names[0 .. avail-1] (NULL: unnamed). GWB_EINVAL, with
 * a message that starts "<fn>: gpus", names what was wrong, what there is (count and names)
 * and what to do, for a count < 1, more than avail, an empty list, an id out of range or
 * repeated. Pure (no CUDA call): tests pass a made-up device list. */
gwb_status gwb_gpu_set_check(const char *fn, long count, const long *ids, int nids, int avail,
			     const char *const *names, gwb_gpu_set *out);
/* The same against this machine's devices (gwb_gpu_count, gwb_gpu_dev_get); without a GPU a
 * request other than 1 / {0} is GWB_ENODEV saying that gpus applies to GPU backends, with the
 * reason. */
gwb_status gwb_gpu_set_resolve(const char *fn, long count, const long *ids, int nids,
			       gwb_gpu_set *out);
/* The set as text for messages and results: "0", "0,1", "cpu:0,1". */
void gwb_gpu_set_str(const gwb_gpu_set *s, char *buf, size_t n);

/* Dealing: items [0, total) over n devices in contiguous, balanced ranges kept in index order:
 * slot k (0-based) gets [*lo, *hi), the first total % n slots one more item. */
void gwb_deal(size_t total, int n, int slot, size_t *lo, size_t *hi);

/* Run fn(ctx, slot, dev) once per device of s: one host thread per device, each made current
 * there (gwb_gpu_use; for a CPU set only the thread-local index) before fn runs. A set of one
 * runs fn on the calling thread (its device made current for the call and restored after),
 * so gpus = 1 costs no thread. Waits for all; the first failing slot's status is returned
 * with its message (in the calling thread's buffer). fn must be thread safe across slots. */
typedef gwb_status (*gwb_gpu_work_fn)(void *ctx, int slot, int dev);
gwb_status gwb_gpu_run(const gwb_gpu_set *s, gwb_gpu_work_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
