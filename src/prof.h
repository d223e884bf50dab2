/* prof.h - telemetry: per-kernel launch records, transfers and phase times, in one place that
 * the panel, gpu.kernels() and the run log read. Kernels are recorded through the launch helper
 * in kernels/common.cuh; their CUDA-event times are resolved lazily by gwb_prof_flush(), so a
 * launch never waits for the device. Thread safe. */
#ifndef GWB_PROF_H
#define GWB_PROF_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_xfer_dir { GWB_H2D = 0, GWB_D2H = 1, GWB_D2D = 2 } gwb_xfer_dir;

/* Aggregate over every launch of one kernel name since the last reset. */
typedef struct gwb_kernel_stat {
	const char *name;
	long launches;
	double total_ms;      /* sum of CUDA-event times */
	double max_ms;
	double bytes;         /* bytes the callers said the launches move */
	int grid[3], block[3];/* of the last launch */
	size_t dyn_smem;      /* of the last launch */
	size_t static_smem;
	int regs;
	double occupancy;     /* theoretical, 0..1, of the last launch */
	/* Measured by CUPTI (gpu.profile) for launches of this kernel, 0 when never measured:
	 * launches, DRAM bytes read + written, their duration, and the device's DRAM peak. */
	long measured_launches;
	double measured_bytes;
	double measured_ns;
	double dram_peak_bps;
} gwb_kernel_stat;

typedef struct gwb_xfer_stat {
	long count[3];
	double bytes[3];
	double ms[3];
	double pinned_bytes[3];
} gwb_xfer_stat;

/* Record one kernel launch whose time is already known (ms) or still pending (ms < 0 and
 * ev_start/ev_stop are cudaEvent_t to resolve at flush; the record owns the events). */
void gwb_prof_kernel(const char *name, const int grid[3], const int block[3], size_t dyn_smem,
		     size_t static_smem, int regs, double occupancy, double bytes, double ms,
		     void *ev_start, void *ev_stop);

/* Record one transfer whose time is known. */
void gwb_prof_transfer(gwb_xfer_dir dir, double bytes, bool pinned, double ms);
/* Record one transfer whose time is known (ms >= 0) or still pending (ms < 0: ev_start/ev_stop
 * are cudaEvent_t from gwb_prof_events, resolved later as for kernels; the record owns them). */
void gwb_prof_transfer_events(gwb_xfer_dir dir, double bytes, bool pinned, double ms,
			      void *ev_start, void *ev_stop);

/* Add CUPTI's measurement of launches of kernel `name` (an existing record; others are
 * ignored): launches, DRAM bytes read + written, duration (ns), the DRAM peak (bytes/s, <= 0
 * unknown). gpu.profile calls it; gpu.kernels() and the panel show measured beside declared. */
void gwb_prof_measured(const char *name, long launches, double dram_bytes, double ns,
		       double dram_peak_bps);

/* The roofline verdict of a kernel from fractions of the device's peaks (0..1, < 0 unknown):
 * memory (max of DRAM and L2 throughput), compute (max of FLOP/s against the unit's peak and
 * SM throughput) and achieved occupancy. "memory-bound" or "compute-bound" when that side
 * runs at >= 60 % of its peak (the larger one wins), else "occupancy-bound" below 25 %
 * achieved occupancy (too few warps to hide latency), else "latency-bound" (warps enough,
 * neither unit busy: dependent accesses, synchronization, a short grid); "unknown" without
 * memory and compute figures. A static string. */
const char *gwb_prof_verdict(double mem_frac, double compute_frac, double occupancy);

/* Resolve pending kernel times (synchronizes on their stop events). */
void gwb_prof_flush(void);

/* Visit the aggregated kernel records (after an implicit flush), largest total time first. */
typedef void (*gwb_kernel_stat_fn)(const gwb_kernel_stat *k, void *ctx);
void gwb_prof_each_kernel(gwb_kernel_stat_fn fn, void *ctx);

/* Transfer totals; times of transfers still in flight are not counted yet (never waits). */
void gwb_prof_transfers(gwb_xfer_stat *out);

/* Totals since the last reset: kernel ms, transfer ms. */
void gwb_prof_totals(double *kernel_ms, double *transfer_ms);

/* Forget all records (kernels, transfers, phases; the kernel registry stays). */
void gwb_prof_reset(void);

/* Resolve the kernel times whose stop event has completed, without waiting (for displays that
 * poll: a blocking flush would serialize the launching thread behind the device). */
void gwb_prof_poll(void);

/* Like gwb_prof_each_kernel, but resolves only completed times (never waits for the device).
 * Sets *pending to the number of launches whose time is not known yet (may be NULL). */
void gwb_prof_each_kernel_nowait(gwb_kernel_stat_fn fn, void *ctx, int *pending);

/* A pair of CUDA events for timing one launch (from a pool: records return them when their
 * time is resolved). GWB_OK, or a CUDA status when events cannot be created. */
gwb_status gwb_prof_events(void **ev_start, void **ev_stop);

/* Telemetry switch (default on; GWB_TELEMETRY=0 in the environment turns it off at start).
 * When off, the launch helper launches without events or records. */
bool gwb_prof_enabled(void);
void gwb_prof_set_enabled(bool on);

/* Phase times: a named stretch of work ("quantize", "grow", "lanczos"). Every progress run
 * (gwb_progress_begin .. end) is recorded as a phase under its label; code can add its own.
 * Repeated names accumulate. */
void gwb_prof_phase(const char *name, double ms);
typedef void (*gwb_phase_fn)(const char *name, double total_ms, long count, void *ctx);
/* Visit phases in the order they first ran. */
void gwb_prof_each_phase(gwb_phase_fn fn, void *ctx);

/* The process as the OS sees it: resident memory, threads, CPU seconds used. */
typedef struct gwb_proc_stat {
	size_t rss_bytes;
	size_t rss_peak_bytes;
	int threads;
	double cpu_s;     /* user + system, all threads */
} gwb_proc_stat;
void gwb_prof_proc(gwb_proc_stat *out);

/* The kernel registry: the launch helper records each kernel's host function pointer under
 * its name, so gpu.occupancy("name", block) can ask the runtime about it later. */
void gwb_prof_register_kernel(const char *name, const void *fn);
/* The function pointer registered under name, or NULL. */
const void *gwb_prof_kernel_fn(const char *name);
/* Visit registered kernel names (in registration order). */
typedef void (*gwb_name_fn)(const char *name, void *ctx);
void gwb_prof_each_registered(gwb_name_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
