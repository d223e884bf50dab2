/* buffer.c - buffers that know their device, the CPU and GPU backend tables, and the pinned
 * staging ring for host <-> device copies (see buffer.h for the rules). */
#include "buffer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "intr.h"
#include "mgpu.h"
#include "prof.h"
#include "switches.h"
#include "pool.h"

/* gwb_gpu_trim (gpu.c, below this file) gives the staging ring back through this hook,
 * installed before main runs (a constructor). */
__attribute__((constructor)) static void install_trim_hook(void)
{
	gwb_gpu_set_trim_hook(gwb_gpu_staging_release);
}

const char *gwb_device_name(gwb_device d)
{
	return d == GWB_DEVICE_GPU ? "gpu" : "cpu";
}

gwb_status gwb_device_parse(const char *s, gwb_device *out)
{
	if (!strcmp(s, "cpu") || !strcmp(s, "host")) {
		*out = GWB_DEVICE_CPU;
		return GWB_OK;
	}
	if (!strcmp(s, "gpu") || !strcmp(s, "cuda")) {
		*out = GWB_DEVICE_GPU;
		return GWB_OK;
	}
	return gwb_error(GWB_EINVAL, "device must be \"cpu\" or \"gpu\" (got \"%s\")", s);
}

/* --- the CPU backend ---------------------------------------------------------------------- */

static gwb_status cpu_alloc(void **p, size_t bytes, const char *purpose)
{
	*p = malloc(bytes ? bytes : 1);
	if (!*p)
		return gwb_error(GWB_ENOMEM, "out of host memory for %s: %zu bytes (%.1f MiB)",
				 purpose ? purpose : "a buffer", bytes, bytes / 1048576.0);
	return GWB_OK;
}

static void cpu_free(void *p)
{
	free(p);
}

static gwb_status cpu_copy(void *dst, const void *src, size_t bytes)
{
	if (bytes)
		memcpy(dst, src, bytes);
	return GWB_OK;
}

static gwb_status cpu_zero(void *p, size_t bytes)
{
	memset(p, 0, bytes);
	return GWB_OK;
}

static gwb_status cpu_sync(void)
{
	return GWB_OK;
}

static const gwb_buf_ops cpu_ops = {
	"cpu", GWB_DEVICE_CPU, cpu_alloc, cpu_free, cpu_copy, cpu_copy, cpu_copy, cpu_zero, cpu_sync,
};

/* --- registered host memory (buffer.h): the table, in both builds --------------------------
 * What a registration costs: cudaHostRegister walks and locks every page of the range and maps
 * it for the device (an IOMMU entry per page where there is one), roughly the time of one
 * staged copy of the same bytes (tens of ms per GB; gwb_host_pin_ms() says what it took
 * here). A staged copy costs a host memcpy every time; a registered range is DMA'd straight
 * from/to at the link's pinned rate. So the cost is paid once, at the first crossing, and
 * only for large ranges whose owner keeps them (they are expected to cross again:
 * predictions on the same Dataset, solves of the same Matrix, to("gpu") after to("cpu")). */

#define PIN_SLOTS 64

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pin_slot {
	char *p;          /* start of the tracked range; NULL = free slot */
	size_t bytes;
	bool registered;  /* page-locked now (we must unregister it) */
	bool refused;     /* the driver refused: stays staged, not retried */
} pins[PIN_SLOTS];
static double pin_ms_total;

static bool pin_reg_default(void *p, size_t bytes);
static void pin_unreg_default(void *p);
static bool (*pin_reg)(void *, size_t) = pin_reg_default;
static void (*pin_unreg)(void *) = pin_unreg_default;

void gwb_host_pin_set_hooks(bool (*reg)(void *p, size_t bytes), void (*unreg)(void *p))
{
	pthread_mutex_lock(&pin_lock);
	pin_reg = reg ? reg : pin_reg_default;
	pin_unreg = unreg ? unreg : pin_unreg_default;
	pthread_mutex_unlock(&pin_lock);
}

bool gwb_host_pin_wanted(size_t bytes)
{
	return bytes >= GWB_PIN_MIN_BYTES && gwb_switch_on(GWB_SW_COPY_PINNED);
}

/* The slot whose range holds [p, p + n), or NULL. Under pin_lock. */
static struct pin_slot *pin_find(const void *p, size_t n)
{
	const char *c = p;
	int i;

	if (!c)
		return NULL;
	for (i = 0; i < PIN_SLOTS; i++)
		if (pins[i].p && c >= pins[i].p && n <= pins[i].bytes &&
		    (size_t)(c - pins[i].p) <= pins[i].bytes - n)
			return &pins[i];
	return NULL;
}

bool gwb_host_track(void *p, size_t bytes)
{
	char *c = p;
	struct pin_slot *fr = NULL;
	bool ok = false;
	int i;

	if (!c || bytes < GWB_PIN_MIN_BYTES)
		return false;
	pthread_mutex_lock(&pin_lock);
	if (pin_find(c, bytes)) {
		ok = true;  /* already covered: one range, one registration */
		goto out;
	}
	for (i = 0; i < PIN_SLOTS; i++) {
		if (!pins[i].p) {
			if (!fr)
				fr = &pins[i];
		} else if (c < pins[i].p + pins[i].bytes && pins[i].p < c + bytes) {
			goto out;  /* overlaps a tracked range partly: the driver would refuse it */
		}
	}
	if (fr) {
		fr->p = c;
		fr->bytes = bytes;
		fr->registered = fr->refused = false;
		ok = true;
	}
out:
	pthread_mutex_unlock(&pin_lock);
	return ok;
}

void gwb_host_untrack(void *p)
{
	int i;

	if (!p)
		return;
	pthread_mutex_lock(&pin_lock);
	for (i = 0; i < PIN_SLOTS; i++)
		if (pins[i].p == p) {
			if (pins[i].registered)
				pin_unreg(p);
			memset(&pins[i], 0, sizeof(pins[i]));
			break;
		}
	pthread_mutex_unlock(&pin_lock);
}

bool gwb_host_pin(const void *p, size_t bytes)
{
	struct pin_slot *s;
	bool ok = false;

	pthread_mutex_lock(&pin_lock);
	s = pin_find(p, bytes);
	if (s && !s->registered && !s->refused && gwb_host_pin_wanted(s->bytes)) {
		double t = gwb_now();
		s->registered = pin_reg(s->p, s->bytes);
		s->refused = !s->registered;
		pin_ms_total += (gwb_now() - t) * 1e3;
	}
	ok = s && s->registered;
	pthread_mutex_unlock(&pin_lock);
	return ok;
}

bool gwb_host_is_pinned(const void *p, size_t bytes)
{
	struct pin_slot *s;
	bool ok;

	pthread_mutex_lock(&pin_lock);
	s = pin_find(p, bytes);
	ok = s && s->registered;
	pthread_mutex_unlock(&pin_lock);
	return ok;
}

size_t gwb_host_pinned_bytes(void)
{
	size_t n = 0;
	int i;

	pthread_mutex_lock(&pin_lock);
	for (i = 0; i < PIN_SLOTS; i++)
		if (pins[i].p && pins[i].registered)
			n += pins[i].bytes;
	pthread_mutex_unlock(&pin_lock);
	return n;
}

int gwb_host_tracked(void)
{
	int i, n = 0;

	pthread_mutex_lock(&pin_lock);
	for (i = 0; i < PIN_SLOTS; i++)
		n += pins[i].p != NULL;
	pthread_mutex_unlock(&pin_lock);
	return n;
}

double gwb_host_pin_ms(void)
{
	return pin_ms_total;
}

void gwb_host_unpin_all(void)
{
	int i;

	pthread_mutex_lock(&pin_lock);
	for (i = 0; i < PIN_SLOTS; i++)
		if (pins[i].p && pins[i].registered) {
			pin_unreg(pins[i].p);
			pins[i].registered = false;
		}
	pthread_mutex_unlock(&pin_lock);
}

/* --- the GPU backend and the staging ring ------------------------------------------------- */

static double copy_ms_total;

double gwb_gpu_copy_ms(void)
{
	return copy_ms_total;
}

#ifndef GWB_HAVE_CUDA

gwb_status gwb_gpu_copy_in(void *dev_dst, const void *host_src, size_t bytes)
{
	(void)dev_dst;
	(void)host_src;
	(void)bytes;
	return gwb_gpu_init();
}

gwb_status gwb_gpu_copy_out(void *host_dst, const void *dev_src, size_t bytes)
{
	(void)host_dst;
	(void)dev_src;
	(void)bytes;
	return gwb_gpu_init();
}

gwb_status gwb_gpu_copy_out_to(const void *dev_src, size_t bytes, gwb_gpu_sink_fn sink, void *ctx)
{
	(void)dev_src;
	(void)bytes;
	(void)sink;
	(void)ctx;
	return gwb_gpu_init();
}

size_t gwb_gpu_staging_bytes(void)
{
	return 0;
}

void gwb_gpu_staging_release(void)
{
	gwb_host_unpin_all();
}

/* No GPU to page-lock for: every range stays on the (absent) staged path. */
static bool pin_reg_default(void *p, size_t bytes)
{
	(void)p;
	(void)bytes;
	return false;
}

static void pin_unreg_default(void *p)
{
	(void)p;
}

const gwb_buf_ops *gwb_buf_ops_get(gwb_device d)
{
	if (d == GWB_DEVICE_CPU)
		return &cpu_ops;
	gwb_gpu_init();  /* sets the message: built without CUDA */
	return NULL;
}

#else /* GWB_HAVE_CUDA */

/* The ring: 4 chunks of 64 MiB (up to 256 MiB pinned, each allocated when a staged copy first
 * needs it, all given back by gpu.trim()). Larger chunks than the 32 MiB of before halve the per-chunk fixed
 * costs (thread start-up of the parallel fill, event waits), and four in flight keep the DMA
 * busy while the host fills the next one. */
#define STAGE_CHUNKS 4
#define STAGE_CHUNK ((size_t)64 << 20)
#define STAGE_DIRECT ((size_t)256 << 10)
/* Registered copies go in pieces of this size, two in flight, Ctrl-C checked between. */
#define PIN_CHUNK ((size_t)64 << 20)

/* One ring, copy stream and lock per device (mgpu.h), indexed by the calling thread's device:
 * gpus = 1 uses entry 0 alone. */
static pthread_mutex_t stage_locks[GWB_GPU_MAX] = {[0 ... GWB_GPU_MAX - 1] = PTHREAD_MUTEX_INITIALIZER};
#define stage_lock (stage_locks[gwb_gpu_current()])
static struct {
	void *chunk[STAGE_CHUNKS];       /* pinned host memory */
	cudaEvent_t done[STAGE_CHUNKS];  /* the last copy through chunk i finished */
	cudaEvent_t order;               /* default stream -> copy stream ordering */
	cudaEvent_t win[2];              /* registered copies: pieces in flight */
	cudaStream_t stream;             /* non-blocking copy stream */
	bool stream_ready;               /* stream, order and win exist */
	bool ready;                      /* the chunks exist */
	size_t bytes;
} stage_dev[GWB_GPU_MAX];
#define stage (stage_dev[gwb_gpu_current()])

/* The copy stream and its events (registered copies need no chunks). Under stage_lock. */
static gwb_status stream_init(void)
{
	gwb_status rc;

	if (stage.stream_ready)
		return GWB_OK;
	if ((rc = gwb_gpu_init()))
		return rc;
	if ((rc = CUDA_CHECK(cudaStreamCreateWithFlags(&stage.stream, cudaStreamNonBlocking))))
		return rc;
	if ((rc = CUDA_CHECK(cudaEventCreateWithFlags(&stage.order, cudaEventDisableTiming))))
		goto out_stream;
	if ((rc = CUDA_CHECK(cudaEventCreateWithFlags(&stage.win[0], cudaEventDisableTiming))))
		goto out_order;
	if ((rc = CUDA_CHECK(cudaEventCreateWithFlags(&stage.win[1], cudaEventDisableTiming))))
		goto out_win0;
	stage.stream_ready = true;
	return GWB_OK;
out_win0:
	cudaEventDestroy(stage.win[0]);
out_order:
	cudaEventDestroy(stage.order);
out_stream:
	cudaStreamDestroy(stage.stream);
	cudaGetLastError();
	return rc;
}

/* The ring exists once its stream does; its chunks are pinned one by one as copies first need
 * them (chunk_ready), so that a copy of one or two chunks pins 64 or 128 MiB, not all 256, and
 * the pinning of chunk i + 1 runs while chunk i's DMA is in flight: the first large copy of a
 * session paid ~90 ms pinning the whole ring before its first byte moved. Under stage_lock. */
static gwb_status stage_init(void)
{
	gwb_status rc;

	if (stage.ready)
		return GWB_OK;
	if ((rc = stream_init()))
		return rc;
	stage.bytes = 0;
	stage.ready = true;
	return GWB_OK;
}

static gwb_status chunk_ready(int i)
{
	gwb_status rc;

	if (stage.chunk[i])
		return GWB_OK;
	cudaError_t e = cudaHostAlloc(&stage.chunk[i], STAGE_CHUNK, cudaHostAllocDefault);
	if (e != cudaSuccess) {
		stage.chunk[i] = NULL;
		cudaGetLastError();
		return gwb_error(GWB_ENOMEM, "host <-> GPU copy: cannot page-lock %zu MiB of host "
				 "memory for staging chunk %d (%zu MiB pinned so far): %s; free host "
				 "memory, or gwb.switches{[\"copy.pinned\"] = false} for pageable copies",
				 STAGE_CHUNK >> 20, i, stage.bytes >> 20, cudaGetErrorString(e));
	}
	if ((rc = CUDA_CHECK(cudaEventCreateWithFlags(&stage.done[i], cudaEventDisableTiming)))) {
		cudaFreeHost(stage.chunk[i]);
		stage.chunk[i] = NULL;
		return rc;
	}
	/* recorded once so the first wait returns */
	cudaEventRecord(stage.done[i], stage.stream);
	stage.bytes += STAGE_CHUNK;
	return GWB_OK;
}

size_t gwb_gpu_staging_bytes(void)
{
	size_t n = 0;
	int d;

	for (d = 0; d < GWB_GPU_MAX; d++)
		n += stage_dev[d].ready ? stage_dev[d].bytes : 0;
	return n;
}

static void staging_release_one(void);

void gwb_gpu_staging_release(void)
{
	int prev = gwb_gpu_current(), d;

	for (d = 0; d < GWB_GPU_MAX; d++) {  /* each device's ring, that device current */
		if (!stage_dev[d].stream_ready)
			continue;
		if (d != prev)
			cudaSetDevice(d);
		gwb_gpu_set_current(d);
		staging_release_one();
		gwb_gpu_set_current(prev);
		if (d != prev)
			cudaSetDevice(prev);
	}
	cudaGetLastError();
	/* no copy runs now (the streams are gone): the registrations go too */
	gwb_host_unpin_all();
}

static void staging_release_one(void)
{
	int i;

	pthread_mutex_lock(&stage_lock);
	if (stage.stream_ready) {
		cudaStreamSynchronize(stage.stream);
		for (i = 0; i < STAGE_CHUNKS; i++)
			if (stage.chunk[i]) {
				cudaFreeHost(stage.chunk[i]);
				cudaEventDestroy(stage.done[i]);
			}
		cudaEventDestroy(stage.win[0]);
		cudaEventDestroy(stage.win[1]);
		cudaEventDestroy(stage.order);
		cudaStreamDestroy(stage.stream);
		cudaGetLastError();
		memset(&stage, 0, sizeof(stage));
	}
	pthread_mutex_unlock(&stage_lock);
}

static bool pin_reg_default(void *p, size_t bytes)
{
	/* cudaHostRegisterDefault: page-locked, usable by every copy; a refusal (too much
	 * locked memory, a range the driver cannot map) leaves the range on the staged path */
	if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
		cudaGetLastError();
		return false;
	}
	return true;
}

static void pin_unreg_default(void *p)
{
	if (cudaHostUnregister(p) != cudaSuccess)
		cudaGetLastError();
}

/* memcpy over the CPU threads (pageable <-> pinned runs at one core's bandwidth otherwise). */
struct pcopy { char *dst; const char *src; };
static void pcopy_part(void *ctx, int64_t lo, int64_t hi, int part)
{
	struct pcopy *c = ctx;
	(void)part;
	memcpy(c->dst + lo, c->src + lo, (size_t)(hi - lo));
}

static void par_memcpy(void *dst, const void *src, size_t n)
{
	struct pcopy c = {dst, src};
	/* 1 MiB grain: a 64 MiB chunk is spread over every thread (up to 64), where the 4 MiB
	 * grain of before used 8 of them for a 32 MiB chunk */
	gwb_parallel_for((int64_t)n, (int64_t)1 << 20, pcopy_part, &c);
}

/* Timing of one staged copy: pooled events around it on the copy stream. */
static void xfer_begin(void **e0, void **e1)
{
	*e0 = *e1 = NULL;
	if (gwb_prof_enabled() && gwb_prof_events(e0, e1) == GWB_OK)
		cudaEventRecord((cudaEvent_t)*e0, stage.stream);
}

static void xfer_end(void *e0, void *e1, gwb_xfer_dir dir, size_t bytes, bool ok)
{
	if (!e0)
		return;
	if (!ok) {
		cudaEventDestroy((cudaEvent_t)e0);
		cudaEventDestroy((cudaEvent_t)e1);
		cudaGetLastError();
		return;
	}
	cudaEventRecord((cudaEvent_t)e1, stage.stream);
	gwb_prof_transfer_events(dir, (double)bytes, true, -1.0, e0, e1);
}

static gwb_status direct_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind k)
{
	double t = gwb_now();
	gwb_status rc = CUDA_CHECK(cudaMemcpy(dst, src, bytes, k));

	t = (gwb_now() - t) * 1e3;
	copy_ms_total += t;
	if (!rc)
		gwb_prof_transfer(k == cudaMemcpyHostToDevice ? GWB_H2D : GWB_D2H, (double)bytes,
				  false, t);
	return rc;
}

/* A copy from/to registered host memory (gwb_host_pin): DMA straight between it and the
 * device on the copy stream, PIN_CHUNK pieces with two in flight so Ctrl-C is seen between
 * them. It returns when the copy is complete (the host memory may be reused, or holds the
 * data), as the staged path does. */
static gwb_status registered_copy(void *dst, const void *src, size_t bytes,
				  enum cudaMemcpyKind k)
{
	bool in = k == cudaMemcpyHostToDevice;
	gwb_status rc, s2;
	size_t off, c;
	void *e0, *e1;
	double t0;

	pthread_mutex_lock(&stage_lock);
	if ((rc = stream_init()))
		goto out_unlock;
	t0 = gwb_now();
	/* work already queued on the default stream may still read dst (in) or write src (out) */
	cudaEventRecord(stage.order, 0);
	cudaStreamWaitEvent(stage.stream, stage.order, 0);
	xfer_begin(&e0, &e1);
	/* copy.streamed off (ablation): one piece in flight at a time, as on the staged path */
	size_t inflight = gwb_switch_on(GWB_SW_COPY_STREAMED) ? 2 : 1;
	for (off = 0, c = 0; off < bytes; off += PIN_CHUNK, c++) {
		size_t len = bytes - off < PIN_CHUNK ? bytes - off : PIN_CHUNK;
		if (c >= inflight && (rc = CUDA_CHECK(cudaEventSynchronize(stage.win[(c - inflight) % 2]))))
			break;
		if (gwb_intr_pending()) {
			rc = in ? gwb_error(GWB_EINTR, "interrupted during a host-to-device copy (%zu "
					    "of %zu bytes sent); nothing was moved", off, bytes)
				: gwb_error(GWB_EINTR, "interrupted during a device-to-host copy (%zu of "
					    "%zu bytes received)", off, bytes);
			break;
		}
		if ((rc = CUDA_CHECK(cudaMemcpyAsync((char *)dst + off, (const char *)src + off, len,
						     k, stage.stream))))
			break;
		cudaEventRecord(stage.win[c % 2], stage.stream);
	}
	xfer_end(e0, e1, in ? GWB_H2D : GWB_D2H, bytes, rc == GWB_OK);
	/* complete before returning: the caller may write the host memory (in), read it (out),
	 * or free dst after a failure */
	s2 = CUDA_CHECK(cudaStreamSynchronize(stage.stream));
	if (!rc)
		rc = s2;
	if (rc)
		cudaGetLastError();
	copy_ms_total += (gwb_now() - t0) * 1e3;
out_unlock:
	pthread_mutex_unlock(&stage_lock);
	return rc;
}

gwb_status gwb_gpu_copy_in(void *dev_dst, const void *host_src, size_t bytes)
{
	const char *src = host_src;
	char *dst = dev_dst;
	void *e0, *e1;
	gwb_status rc = GWB_OK;
	size_t off;
	double t0;
	int i = 0;

	bool streamed;

	if (bytes < STAGE_DIRECT)
		return bytes ? direct_copy(dev_dst, host_src, bytes, cudaMemcpyHostToDevice) : GWB_OK;
	/* the switches (switches.h): copy.pinned off, one pageable cudaMemcpy; copy.streamed
	 * off, each chunk waited for before the next is filled (no overlap) */
	if (!gwb_switch_on(GWB_SW_COPY_PINNED))
		return direct_copy(dev_dst, host_src, bytes, cudaMemcpyHostToDevice);
	if (gwb_host_pin(host_src, bytes))  /* registered (or registered now): no staging */
		return registered_copy(dev_dst, host_src, bytes, cudaMemcpyHostToDevice);
	streamed = gwb_switch_on(GWB_SW_COPY_STREAMED);
	pthread_mutex_lock(&stage_lock);
	if ((rc = stage_init()))
		goto out_unlock;
	t0 = gwb_now();
	/* work already queued on the default stream may still read dst */
	cudaEventRecord(stage.order, 0);
	cudaStreamWaitEvent(stage.stream, stage.order, 0);
	xfer_begin(&e0, &e1);
	for (off = 0; off < bytes; off += STAGE_CHUNK, i = (i + 1) % STAGE_CHUNKS) {
		size_t len = bytes - off < STAGE_CHUNK ? bytes - off : STAGE_CHUNK;
		if (gwb_intr_pending()) {
			rc = gwb_error(GWB_EINTR, "interrupted during a host-to-device copy (%zu of %zu "
				       "bytes sent); nothing was moved", off, bytes);
			break;
		}
		if ((rc = chunk_ready(i)) || (rc = CUDA_CHECK(cudaEventSynchronize(stage.done[i]))))
			break;
		par_memcpy(stage.chunk[i], src + off, len);
		if ((rc = CUDA_CHECK(cudaMemcpyAsync(dst + off, stage.chunk[i], len,
						     cudaMemcpyHostToDevice, stage.stream))))
			break;
		cudaEventRecord(stage.done[i], stage.stream);
		if (!streamed && (rc = CUDA_CHECK(cudaEventSynchronize(stage.done[i]))))
			break;
	}
	xfer_end(e0, e1, GWB_H2D, bytes, rc == GWB_OK);
	if (rc) {
		/* the caller frees dst: let no chunk land in it afterwards */
		cudaStreamSynchronize(stage.stream);
		cudaGetLastError();
	} else {
		/* kernels queued next on the default stream wait for the data, the host does not */
		cudaEventRecord(stage.order, stage.stream);
		rc = CUDA_CHECK(cudaStreamWaitEvent(0, stage.order, 0));
	}
	copy_ms_total += (gwb_now() - t0) * 1e3;
out_unlock:
	pthread_mutex_unlock(&stage_lock);
	return rc;
}

/* The staged device-to-host loop: each chunk lands in pinned memory and is handed to sink
 * (on the host, with the CPU threads) while the next chunks' DMA runs. */
static gwb_status staged_out(const void *dev_src, size_t bytes, gwb_gpu_sink_fn sink, void *ctx)
{
	const char *src = dev_src;
	size_t nchunks = (bytes + STAGE_CHUNK - 1) / STAGE_CHUNK, c, issued = 0;
	/* the switch copy.streamed off: one chunk in flight at a time (no overlap) */
	size_t window = gwb_switch_on(GWB_SW_COPY_STREAMED) ? STAGE_CHUNKS : 1;
	void *e0, *e1;
	gwb_status rc = GWB_OK;
	double t0;

	pthread_mutex_lock(&stage_lock);
	if ((rc = stage_init()))
		goto out_unlock;
	t0 = gwb_now();
	/* the data is produced by work queued on the default stream */
	cudaEventRecord(stage.order, 0);
	cudaStreamWaitEvent(stage.stream, stage.order, 0);
	xfer_begin(&e0, &e1);
	for (c = 0; c < nchunks && !rc; c++) {
		int i = (int)(c % STAGE_CHUNKS);
		size_t off = c * STAGE_CHUNK, len = bytes - off < STAGE_CHUNK ? bytes - off : STAGE_CHUNK;
		/* keep the ring full: chunks c .. c + STAGE_CHUNKS - 1 in flight */
		while (issued < nchunks && issued < c + window && !rc) {
			int j = (int)(issued % STAGE_CHUNKS);
			size_t o2 = issued * STAGE_CHUNK;
			size_t l2 = bytes - o2 < STAGE_CHUNK ? bytes - o2 : STAGE_CHUNK;
			rc = chunk_ready(j);
			if (!rc)
				rc = CUDA_CHECK(cudaMemcpyAsync(stage.chunk[j], src + o2, l2,
								cudaMemcpyDeviceToHost, stage.stream));
			if (!rc)
				rc = CUDA_CHECK(cudaEventRecord(stage.done[j], stage.stream));
			issued++;
		}
		if (rc)
			break;
		if ((rc = CUDA_CHECK(cudaEventSynchronize(stage.done[i]))))
			break;
		if (gwb_intr_pending()) {
			rc = gwb_error(GWB_EINTR, "interrupted during a device-to-host copy (%zu of %zu "
				       "bytes received)", off, bytes);
			break;
		}
		sink(ctx, off, stage.chunk[i], len);
	}
	xfer_end(e0, e1, GWB_D2H, bytes, rc == GWB_OK);
	if (rc) {
		cudaStreamSynchronize(stage.stream);
		cudaGetLastError();
	}
	copy_ms_total += (gwb_now() - t0) * 1e3;
out_unlock:
	pthread_mutex_unlock(&stage_lock);
	return rc;
}

static void memcpy_sink(void *ctx, size_t off, const void *chunk, size_t len)
{
	par_memcpy((char *)ctx + off, chunk, len);
}

gwb_status gwb_gpu_copy_out(void *host_dst, const void *dev_src, size_t bytes)
{
	if (bytes < STAGE_DIRECT || !gwb_switch_on(GWB_SW_COPY_PINNED))  /* switches.h */
		return bytes ? direct_copy(host_dst, dev_src, bytes, cudaMemcpyDeviceToHost) : GWB_OK;
	if (gwb_host_pin(host_dst, bytes))  /* registered (or registered now): no staging */
		return registered_copy(host_dst, dev_src, bytes, cudaMemcpyDeviceToHost);
	return staged_out(dev_src, bytes, memcpy_sink, host_dst);
}

gwb_status gwb_gpu_copy_out_to(const void *dev_src, size_t bytes, gwb_gpu_sink_fn sink, void *ctx)
{
	gwb_status rc;
	void *tmp;

	if (bytes >= STAGE_DIRECT && gwb_switch_on(GWB_SW_COPY_PINNED))  /* switches.h */
		return staged_out(dev_src, bytes, sink, ctx);
	if (!bytes)
		return GWB_OK;
	if (!(tmp = malloc(bytes)))
		return gwb_error(GWB_ENOMEM, "out of memory");
	rc = direct_copy(tmp, dev_src, bytes, cudaMemcpyDeviceToHost);
	if (!rc)
		sink(ctx, 0, tmp, bytes);
	free(tmp);
	return rc;
}

static gwb_status gpu_copy(void *dst, const void *src, size_t bytes)
{
	gwb_status rc = CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));

	if (!rc)
		gwb_prof_transfer(GWB_D2D, (double)bytes, false, 0.0);
	return rc;
}

static gwb_status gpu_zero(void *p, size_t bytes)
{
	return CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, 0));
}

static gwb_status gpu_sync(void)
{
	return CUDA_CHECK(cudaDeviceSynchronize());
}

static const gwb_buf_ops gpu_ops = {
	"gpu", GWB_DEVICE_GPU, gwb_gpu_malloc, gwb_gpu_free, gwb_gpu_copy_in, gwb_gpu_copy_out,
	gpu_copy, gpu_zero, gpu_sync,
};

const gwb_buf_ops *gwb_buf_ops_get(gwb_device d)
{
	if (d == GWB_DEVICE_CPU)
		return &cpu_ops;
	if (gwb_gpu_init())
		return NULL;
	return &gpu_ops;
}

#endif /* GWB_HAVE_CUDA */

/* --- buffers ------------------------------------------------------------------------------ */

static gwb_buf *buf_shell(gwb_device d, const gwb_buf_ops *ops, size_t bytes,
			  const char *purpose)
{
	gwb_buf *b = calloc(1, sizeof(*b));

	if (!b) {
		gwb_error(GWB_ENOMEM, "out of memory");
		return NULL;
	}
	b->device = d;
	b->ops = ops;
	b->bytes = bytes;
	snprintf(b->purpose, sizeof(b->purpose), "%s", purpose ? purpose : "buffer");
	return b;
}

gwb_status gwb_buf_new(gwb_device d, size_t bytes, const char *purpose, bool zero,
		       gwb_buf **out)
{
	const gwb_buf_ops *ops = gwb_buf_ops_get(d);
	gwb_buf *b;
	gwb_status rc;
	void *p;

	*out = NULL;
	if (!ops)
		return gwb_error(GWB_ENODEV, "%s: no GPU: %s", purpose ? purpose : "buffer",
				 gwb_gpu_unavailable_reason());
	if (!(b = buf_shell(d, ops, bytes, purpose)))
		return GWB_ENOMEM;
	if ((rc = ops->alloc(&p, bytes, b->purpose))) {
		free(b);
		return rc;
	}
	if (zero && (rc = ops->zero(p, bytes))) {
		ops->free(p);
		free(b);
		return rc;
	}
	if (d == GWB_DEVICE_GPU) {
		b->dev = p;
		b->dev_valid = true;
	} else {
		b->host = p;
		b->host_valid = true;
	}
	*out = b;
	return GWB_OK;
}

gwb_status gwb_buf_wrap(void *host, size_t bytes, bool own, const char *purpose, gwb_buf **out)
{
	gwb_buf *b = buf_shell(GWB_DEVICE_CPU, &cpu_ops, bytes, purpose);

	*out = NULL;
	if (!b)
		return GWB_ENOMEM;
	b->host = host;
	b->host_valid = true;
	b->host_borrowed = !own;
	*out = b;
	return GWB_OK;
}

gwb_status gwb_buf_adopt_dev(void *dev, size_t bytes, const char *purpose, gwb_buf **out)
{
	const gwb_buf_ops *ops = gwb_buf_ops_get(GWB_DEVICE_GPU);
	gwb_buf *b;

	*out = NULL;
	if (!ops)
		return GWB_ENODEV;
	if (!(b = buf_shell(GWB_DEVICE_GPU, ops, bytes, purpose)))
		return GWB_ENOMEM;
	b->dev = dev;
	b->dev_valid = true;
	*out = b;
	return GWB_OK;
}

void gwb_buf_free(gwb_buf *b)
{
	if (!b)
		return;
	if (b->dev)
		b->ops->free(b->dev);
	if (b->host && !b->host_borrowed) {
		gwb_host_untrack(b->host);  /* unregistered before it is freed */
		free(b->host);
	}
	free(b);
}

gwb_status gwb_buf_host(gwb_buf *b, void **p)
{
	gwb_status rc;

	*p = NULL;
	if (!b->host_valid) {
		if (!b->host) {
			if (!(b->host = malloc(b->bytes ? b->bytes : 1)))
				return gwb_error(GWB_ENOMEM, "out of host memory for a copy of %s (%zu "
						 "bytes)", b->purpose, b->bytes);
			b->host_borrowed = false;  /* ours; a caller's host memory stays the caller's */
		}
		/* not tracked here: the host copy of a device result crosses once (then it is
		 * cached), so registering it would cost more than the staged copy it saves */
		if ((rc = b->ops->copy_out(b->host, b->dev, b->bytes)))
			return rc;
		b->host_valid = true;
	}
	*p = b->host;
	return GWB_OK;
}

gwb_status gwb_buf_host_wrote(gwb_buf *b, size_t off, size_t n)
{
	gwb_status rc;

	b->host_valid = true;
	if (!b->dev)
		return GWB_OK;
	if (off + n > b->bytes)
		n = off < b->bytes ? b->bytes - off : 0;
	if ((rc = b->ops->copy_in((char *)b->dev + off, (const char *)b->host + off, n))) {
		b->dev_valid = false;  /* stale until the next whole upload */
		return rc;
	}
	return GWB_OK;
}

gwb_status gwb_buf_dev(gwb_buf *b, void **p, bool *tmp)
{
	const gwb_buf_ops *g;
	gwb_status rc;
	void *d;

	*p = NULL;
	*tmp = false;
	if (b->dev && b->dev_valid) {
		*p = b->dev;
		return GWB_OK;
	}
	if (!(g = gwb_buf_ops_get(GWB_DEVICE_GPU)))
		return GWB_ENODEV;
	gwb_host_track(b->host, b->bytes);  /* large: registered on this crossing */
	if (b->dev) {  /* resident but stale: refresh in place */
		if ((rc = g->copy_in(b->dev, b->host, b->bytes)))
			return rc;
		b->dev_valid = true;
		*p = b->dev;
		return GWB_OK;
	}
	if ((rc = g->alloc(&d, b->bytes, b->purpose)))
		return rc;
	if ((rc = g->copy_in(d, b->host, b->bytes))) {
		g->free(d);
		return rc;
	}
	*p = d;
	*tmp = true;
	return GWB_OK;
}

void gwb_buf_dev_done(gwb_buf *b, void *p, bool tmp)
{
	const gwb_buf_ops *g;

	(void)b;
	if (tmp && p && (g = gwb_buf_ops_get(GWB_DEVICE_GPU)))
		g->free(p);
}

void gwb_buf_dev_wrote(gwb_buf *b)
{
	b->dev_valid = true;
	b->host_valid = false;
}

gwb_status gwb_buf_to(gwb_buf *b, gwb_device d)
{
	const gwb_buf_ops *g;
	gwb_status rc;
	void *p;

	if (d == b->device)
		return GWB_OK;
	if (d == GWB_DEVICE_GPU) {
		if (!(g = gwb_buf_ops_get(GWB_DEVICE_GPU)))
			return gwb_error(GWB_ENODEV, "cannot move %s to the GPU: %s", b->purpose,
					 gwb_gpu_unavailable_reason());
		if ((rc = g->alloc(&p, b->bytes, b->purpose)))
			return rc;
		gwb_host_track(b->host, b->bytes);  /* large: registered on this crossing */
		if ((rc = g->copy_in(p, b->host, b->bytes))) {
			g->free(p);
			return rc;
		}
		b->dev = p;
		b->dev_valid = true;
		b->device = GWB_DEVICE_GPU;
		b->ops = g;
		return GWB_OK;
	}
	/* to the CPU */
	if ((rc = gwb_buf_host(b, &p)))
		return rc;
	b->ops->free(b->dev);
	b->dev = NULL;
	b->dev_valid = false;
	b->device = GWB_DEVICE_CPU;
	b->ops = &cpu_ops;
	return GWB_OK;
}
