/* prof.h - telemetry: per-kernel launch records, transfers and phase times, in one place that
 * the panel, gpu.kernels() and the run log read. Kernels are recorded through the launch helper
 * in kernels/common.cuh; their CUDA-event times are resolved lazily by gwb_prof_flush(), so a
 * launch never waits for the device. Thread safe. */
#ifndef GWB_PROF_H
#define GWB_PROF_H

#include <stdbool.h>
#include <stddef.h>

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

/* Record one transfer. */
void gwb_prof_transfer(gwb_xfer_dir dir, double bytes, bool pinned, double ms);

/* Resolve pending kernel times (synchronizes on their stop events). */
void gwb_prof_flush(void);

/* Visit the aggregated kernel records (after an implicit flush), largest total time first. */
typedef void (*gwb_kernel_stat_fn)(const gwb_kernel_stat *k, void *ctx);
void gwb_prof_each_kernel(gwb_kernel_stat_fn fn, void *ctx);

void gwb_prof_transfers(gwb_xfer_stat *out);

/* Totals since the last reset: kernel ms, transfer ms. */
void gwb_prof_totals(double *kernel_ms, double *transfer_ms);

/* Forget all records. */
void gwb_prof_reset(void);

#ifdef __cplusplus
}
#endif
#endif
