/* prof.c - telemetry records. */
#define _POSIX_C_SOURCE 200809L
#include "prof.h"
#include "gpu.h"
#include "mgpu.h"
#include "status.h"
#include "intr.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef GWB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAX_KERNELS 256
#define MAX_PENDING 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gwb_kernel_stat kstats[MAX_KERNELS];
static int nk;
static gwb_xfer_stat xstat;

/* A launch or transfer whose time is still in its events: k >= 0 is a kernel record, k < 0 a
 * transfer in direction -1 - k. */
struct pending { int k, dev; void *ev0, *ev1; };  /* dev: where the events live */

/* Recycled events: creating two events per launch costs more than the launch itself. An event
 * belongs to the device it was made on: the pool holds device 0's (gpus = 1, as before);
 * other devices' events (gpus > 1, mgpu.h) are made per record and destroyed when resolved. */
#ifdef GWB_HAVE_CUDA
#define POOL_MAX 8192
static void *pool[POOL_MAX];
static int npool;

static void recycle_locked(void *ev, int dev)
{
	if (npool < POOL_MAX && dev == 0)
		pool[npool++] = ev;
	else
		cudaEventDestroy((cudaEvent_t)ev);
}
#endif
static struct pending pend[MAX_PENDING];
static int npend;

static int find_kernel(const char *name)
{
	int i;

	for (i = 0; i < nk; i++)
		if (kstats[i].name == name || !strcmp(kstats[i].name, name))
			return i;
	if (nk == MAX_KERNELS)
		return MAX_KERNELS - 1;
	memset(&kstats[nk], 0, sizeof(kstats[nk]));
	kstats[nk].name = name;  /* names are string literals from the launch sites */
	return nk++;
}

#ifdef GWB_HAVE_CUDA
static void add_time_locked(int k, float ms)
{
	if (k < 0) {
		xstat.ms[-1 - k] += ms;
		return;
	}
	kstats[k].total_ms += ms;
	if (ms > kstats[k].max_ms)
		kstats[k].max_ms = ms;
}
#endif

static void resolve_locked(void)
{
#ifdef GWB_HAVE_CUDA
	int i;

	for (i = 0; i < npend; i++) {
		float ms = 0;
		cudaEvent_t a = (cudaEvent_t)pend[i].ev0, b = (cudaEvent_t)pend[i].ev1;
		if (cudaEventSynchronize(b) == cudaSuccess &&
		    cudaEventElapsedTime(&ms, a, b) == cudaSuccess)
			add_time_locked(pend[i].k, ms);
		cudaGetLastError();
		recycle_locked(a, pend[i].dev);
		recycle_locked(b, pend[i].dev);
	}
#endif
	npend = 0;
}

void gwb_prof_kernel(const char *name, const int grid[3], const int block[3], size_t dyn_smem,
		     size_t static_smem, int regs, double occupancy, double bytes, double ms,
		     void *ev_start, void *ev_stop)
{
	gwb_kernel_stat *k;
	int i;

	pthread_mutex_lock(&lock);
	i = find_kernel(name);
	k = &kstats[i];
	k->launches++;
	k->bytes += bytes;
	memcpy(k->grid, grid, sizeof(k->grid));
	memcpy(k->block, block, sizeof(k->block));
	k->dyn_smem = dyn_smem;
	k->static_smem = static_smem;
	k->regs = regs;
	k->occupancy = occupancy;
	if (ms >= 0) {
		k->total_ms += ms;
		if (ms > k->max_ms)
			k->max_ms = ms;
	} else if (ev_start && ev_stop) {
		if (npend == MAX_PENDING)
			resolve_locked();
		pend[npend].k = i;
		pend[npend].dev = gwb_gpu_current();
		pend[npend].ev0 = ev_start;
		pend[npend].ev1 = ev_stop;
		npend++;
	}
	pthread_mutex_unlock(&lock);
}

void gwb_prof_measured(const char *name, long launches, double dram_bytes, double ns,
		       double dram_peak_bps)
{
	int i;

	if (!name || launches <= 0)
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nk; i++)
		if (!strcmp(kstats[i].name, name)) {
			kstats[i].measured_launches += launches;
			kstats[i].measured_bytes += dram_bytes > 0 ? dram_bytes : 0;
			kstats[i].measured_ns += ns > 0 ? ns : 0;
			if (dram_peak_bps > 0)
				kstats[i].dram_peak_bps = dram_peak_bps;
			break;
		}
	pthread_mutex_unlock(&lock);
}

const char *gwb_prof_verdict(double mem_frac, double compute_frac, double occupancy)
{
	if (mem_frac < 0 && compute_frac < 0)
		return "unknown";
	if (mem_frac >= 0.6 && mem_frac >= compute_frac)
		return "memory-bound";
	if (compute_frac >= 0.6)
		return "compute-bound";
	if (occupancy >= 0 && occupancy < 0.25)
		return "occupancy-bound";
	return "latency-bound";
}

void gwb_prof_transfer(gwb_xfer_dir dir, double bytes, bool pinned, double ms)
{
	gwb_prof_transfer_events(dir, bytes, pinned, ms < 0 ? 0 : ms, NULL, NULL);
}

void gwb_prof_transfer_events(gwb_xfer_dir dir, double bytes, bool pinned, double ms,
			      void *ev_start, void *ev_stop)
{
	pthread_mutex_lock(&lock);
	xstat.count[dir]++;
	xstat.bytes[dir] += bytes;
	if (pinned)
		xstat.pinned_bytes[dir] += bytes;
	if (ms >= 0) {
		xstat.ms[dir] += ms;
	} else if (ev_start && ev_stop) {
		if (npend == MAX_PENDING)
			resolve_locked();
		pend[npend].k = -1 - (int)dir;
		pend[npend].dev = gwb_gpu_current();
		pend[npend].ev0 = ev_start;
		pend[npend].ev1 = ev_stop;
		npend++;
	}
	pthread_mutex_unlock(&lock);
}

void gwb_prof_flush(void)
{
	pthread_mutex_lock(&lock);
	resolve_locked();
	pthread_mutex_unlock(&lock);
}

static int by_time_desc(const void *a, const void *b)
{
	const gwb_kernel_stat *x = a, *y = b;

	return (x->total_ms < y->total_ms) - (x->total_ms > y->total_ms);
}

void gwb_prof_each_kernel(gwb_kernel_stat_fn fn, void *ctx)
{
	gwb_kernel_stat copy[MAX_KERNELS];
	int n, i;

	pthread_mutex_lock(&lock);
	resolve_locked();
	n = nk;
	memcpy(copy, kstats, sizeof(copy[0]) * (size_t)n);
	pthread_mutex_unlock(&lock);
	qsort(copy, (size_t)n, sizeof(copy[0]), by_time_desc);
	for (i = 0; i < n; i++)
		fn(&copy[i], ctx);
}

static void poll_locked(void);

void gwb_prof_transfers(gwb_xfer_stat *out)
{
	pthread_mutex_lock(&lock);
	poll_locked();  /* never waits: the panel's thread calls this */
	*out = xstat;
	pthread_mutex_unlock(&lock);
}

void gwb_prof_totals(double *kernel_ms, double *transfer_ms)
{
	int i;

	pthread_mutex_lock(&lock);
	resolve_locked();
	*kernel_ms = 0;
	for (i = 0; i < nk; i++)
		*kernel_ms += kstats[i].total_ms;
	*transfer_ms = xstat.ms[0] + xstat.ms[1] + xstat.ms[2];
	pthread_mutex_unlock(&lock);
}

/* --- non-blocking resolution ------------------------------------------------------------ */

static void poll_locked(void)
{
#ifdef GWB_HAVE_CUDA
	int i, keep = 0;

	for (i = 0; i < npend; i++) {
		cudaEvent_t a = (cudaEvent_t)pend[i].ev0, b = (cudaEvent_t)pend[i].ev1;
		cudaError_t q = cudaEventQuery(b);
		float ms = 0;
		if (q == cudaErrorNotReady) {
			pend[keep++] = pend[i];
			continue;
		}
		if (q == cudaSuccess && cudaEventElapsedTime(&ms, a, b) == cudaSuccess)
			add_time_locked(pend[i].k, ms);
		recycle_locked(a, pend[i].dev);
		recycle_locked(b, pend[i].dev);
	}
	cudaGetLastError();
	npend = keep;
#endif
}

void gwb_prof_poll(void)
{
	pthread_mutex_lock(&lock);
	poll_locked();
	pthread_mutex_unlock(&lock);
}

void gwb_prof_each_kernel_nowait(gwb_kernel_stat_fn fn, void *ctx, int *pending)
{
	static gwb_kernel_stat copy[MAX_KERNELS];  /* one display thread calls this */
	static pthread_mutex_t copy_lock = PTHREAD_MUTEX_INITIALIZER;
	int n, i;

	pthread_mutex_lock(&copy_lock);
	pthread_mutex_lock(&lock);
	poll_locked();
	n = nk;
	if (pending)
		*pending = npend;
	memcpy(copy, kstats, sizeof(copy[0]) * (size_t)n);
	pthread_mutex_unlock(&lock);
	qsort(copy, (size_t)n, sizeof(copy[0]), by_time_desc);
	for (i = 0; i < n; i++)
		fn(&copy[i], ctx);
	pthread_mutex_unlock(&copy_lock);
}

gwb_status gwb_prof_events(void **ev_start, void **ev_stop)
{
#ifdef GWB_HAVE_CUDA
	cudaEvent_t a = NULL, b = NULL;
	cudaError_t err = cudaSuccess;

	pthread_mutex_lock(&lock);
	if (npool >= 2 && gwb_gpu_current() == 0) {
		*ev_start = pool[--npool];
		*ev_stop = pool[--npool];
		pthread_mutex_unlock(&lock);
		return GWB_OK;
	}
	pthread_mutex_unlock(&lock);
	err = cudaEventCreate(&a);
	if (err == cudaSuccess)
		err = cudaEventCreate(&b);
	if (err != cudaSuccess) {
		if (a)
			cudaEventDestroy(a);
		return gwb_cuda_check(err, "cudaEventCreate", __FILE__, __LINE__);
	}
	*ev_start = a;
	*ev_stop = b;
	return GWB_OK;
#else
	*ev_start = *ev_stop = NULL;
	return gwb_error(GWB_ENODEV, "CPU-only build: no CUDA events");
#endif
}

/* --- the switch ----------------------------------------------------------------------------- */

static int enabled = -1;  /* -1: not read from the environment yet */

bool gwb_prof_enabled(void)
{
	if (enabled < 0) {
		const char *e = getenv("GWB_TELEMETRY");
		enabled = !(e && (!strcmp(e, "0") || !strcmp(e, "off")));
	}
	return enabled != 0;
}

void gwb_prof_set_enabled(bool on)
{
	enabled = on;
}

/* --- phases ---------------------------------------------------------------------------------- */

#define MAX_PHASES 64
static struct { char name[48]; double ms; long count; } phases[MAX_PHASES];
static int nphases;

/* Every finished progress run is a phase: intr.c reports them through this hook, installed
 * before main runs (a constructor), so no run comes before it. */
__attribute__((constructor)) static void install_phase_hook(void)
{
	gwb_progress_set_phase_hook(gwb_prof_phase);
}

void gwb_prof_phase(const char *name, double ms)
{
	int i;

	if (!name || !*name)
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nphases; i++)
		if (!strncmp(phases[i].name, name, sizeof(phases[i].name) - 1))
			break;
	if (i == nphases) {
		if (nphases == MAX_PHASES)
			i = MAX_PHASES - 1;  /* fold the overflow into the last slot */
		else {
			nphases++;
			snprintf(phases[i].name, sizeof(phases[i].name), "%s", name);
			phases[i].ms = 0;
			phases[i].count = 0;
		}
	}
	phases[i].ms += ms;
	phases[i].count++;
	pthread_mutex_unlock(&lock);
}

void gwb_prof_each_phase(gwb_phase_fn fn, void *ctx)
{
	struct { char name[48]; double ms; long count; } copy[MAX_PHASES];
	int n, i;

	pthread_mutex_lock(&lock);
	n = nphases;
	memcpy(copy, phases, sizeof(copy[0]) * (size_t)n);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < n; i++)
		fn(copy[i].name, copy[i].ms, copy[i].count, ctx);
}

/* --- the process ------------------------------------------------------------------------------ */

void gwb_prof_proc(gwb_proc_stat *out)
{
	struct rusage ru;
	char line[256];
	FILE *f;

	memset(out, 0, sizeof(*out));
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		out->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
			     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
		out->rss_peak_bytes = (size_t)ru.ru_maxrss * 1024;
	}
	f = fopen("/proc/self/status", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long v;
		if (sscanf(line, "VmRSS: %lu kB", &v) == 1)
			out->rss_bytes = (size_t)v * 1024;
		else if (sscanf(line, "VmHWM: %lu kB", &v) == 1)
			out->rss_peak_bytes = (size_t)v * 1024;
		else if (sscanf(line, "Threads: %lu", &v) == 1)
			out->threads = (int)v;
	}
	fclose(f);
}

/* --- the kernel registry ---------------------------------------------------------------------- */

#define MAX_REG 256
static struct { const char *name; const void *fn; } reg[MAX_REG];
static int nreg;

void gwb_prof_register_kernel(const char *name, const void *fn)
{
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nreg; i++)
		if (reg[i].fn == fn || !strcmp(reg[i].name, name))
			break;
	if (i == nreg && nreg < MAX_REG) {
		reg[nreg].name = name;  /* string literals from launch sites */
		reg[nreg].fn = fn;
		nreg++;
	}
	pthread_mutex_unlock(&lock);
}

const void *gwb_prof_kernel_fn(const char *name)
{
	const void *fn = NULL;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nreg; i++)
		if (!strcmp(reg[i].name, name)) {
			fn = reg[i].fn;
			break;
		}
	pthread_mutex_unlock(&lock);
	return fn;
}

void gwb_prof_each_registered(gwb_name_fn fn, void *ctx)
{
	const char *names[MAX_REG];
	int n, i;

	pthread_mutex_lock(&lock);
	n = nreg;
	for (i = 0; i < n; i++)
		names[i] = reg[i].name;
	pthread_mutex_unlock(&lock);
	for (i = 0; i < n; i++)
		fn(names[i], ctx);
}

void gwb_prof_reset(void)
{
	pthread_mutex_lock(&lock);
	resolve_locked();
	nk = 0;
	nphases = 0;
	memset(&xstat, 0, sizeof(xstat));
	pthread_mutex_unlock(&lock);
}
