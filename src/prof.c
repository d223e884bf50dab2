/* prof.c - telemetry records. */
#define _POSIX_C_SOURCE 200809L
#include "prof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef GWB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAX_KERNELS 256
#define MAX_PENDING 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gwb_kernel_stat kstats[MAX_KERNELS];
static int nk;
static gwb_xfer_stat xstat;

struct pending { int k; void *ev0, *ev1; };
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

static void resolve_locked(void)
{
#ifdef GWB_HAVE_CUDA
	int i;

	for (i = 0; i < npend; i++) {
		float ms = 0;
		cudaEvent_t a = (cudaEvent_t)pend[i].ev0, b = (cudaEvent_t)pend[i].ev1;
		if (cudaEventSynchronize(b) == cudaSuccess &&
		    cudaEventElapsedTime(&ms, a, b) == cudaSuccess) {
			kstats[pend[i].k].total_ms += ms;
			if (ms > kstats[pend[i].k].max_ms)
				kstats[pend[i].k].max_ms = ms;
		}
		cudaGetLastError();
		cudaEventDestroy(a);
		cudaEventDestroy(b);
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
		pend[npend].ev0 = ev_start;
		pend[npend].ev1 = ev_stop;
		npend++;
	}
	pthread_mutex_unlock(&lock);
}

void gwb_prof_transfer(gwb_xfer_dir dir, double bytes, bool pinned, double ms)
{
	pthread_mutex_lock(&lock);
	xstat.count[dir]++;
	xstat.bytes[dir] += bytes;
	xstat.ms[dir] += ms;
	if (pinned)
		xstat.pinned_bytes[dir] += bytes;
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

void gwb_prof_transfers(gwb_xfer_stat *out)
{
	pthread_mutex_lock(&lock);
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

void gwb_prof_reset(void)
{
	pthread_mutex_lock(&lock);
	resolve_locked();
	nk = 0;
	memset(&xstat, 0, sizeof(xstat));
	pthread_mutex_unlock(&lock);
}
