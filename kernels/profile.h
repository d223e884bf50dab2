/* profile.h - achieved occupancy per kernel launch through the CUPTI range profiler (the
 * engine behind gpu.profile). CUPTI is not linked: kernels/profile.cu dlopen()s libcupti.so at
 * the first session (GWB_CUPTI=/path/libcupti.so.13 first, then the runtime's own folder, the
 * CUDA toolkit folders, LD_LIBRARY_PATH and the pip wheels' nvidia/cu13/lib), so gwb runs and
 * builds without it. A session enables the range profiler on the current context in auto-range
 * mode with kernel replay: every kernel launched between begin and end becomes one range,
 * replayed as often as the metrics need, and is measured for
 *   sm__warps_active.avg.pct_of_peak_sustained_active   achieved occupancy
 *   gpu__time_duration.sum                              duration of the measured pass
 *   sm__throughput.avg.pct_of_peak_sustained_elapsed    SM throughput
 * and, where the chip takes them (they are dropped group by group otherwise), what the
 * roofline needs: DRAM bytes read and written (dram__bytes_read.sum, dram__bytes_write.sum)
 * and throughput (dram__throughput.avg.pct_of_peak_sustained_elapsed), L2 bytes and
 * throughput (lts__t_bytes.sum, lts__throughput.avg.pct_of_peak_sustained_elapsed), FP32 and
 * FP64 instructions (sm__sass_thread_inst_executed_op_{fadd,fmul,ffma,dadd,dmul,dfma}_pred_on
 * .sum), the peaks they are held against (..._op_ffma/dfma_pred_on.sum.peak_sustained,
 * sm__cycles_elapsed.avg.per_second, dram__bytes.sum.peak_sustained,
 * dram__cycles_elapsed.avg.per_second) and tensor instructions
 * (sm__inst_executed_pipe_tensor.sum).
 * Ranges are named after the launches seen by a CUPTI callback (in launch order) and mapped to
 * gwb's kernel names (the launch registry in prof.c) through cudaFuncGetName; library kernels
 * (cuBLAS, cuSPARSE) keep their demangled function name.
 * Plain C (extern "C"), present only in CUDA builds; host code calls it inside
 * #ifdef GWB_HAVE_CUDA. Not thread safe: one session at a time (a second begin fails). */
#ifndef GWB_KERNELS_PROFILE_H
#define GWB_KERNELS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "../src/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gwb_profile_range {
	const char *name;     /* gwb's kernel name ("transpose_padded"), else the short demangled
			       * function name of a library kernel, else CUPTI's range name */
	const char *symbol;   /* the mangled function name ("" when the launch was not seen) */
	bool ours;            /* name is one of gwb's registered kernels */
	double achieved_pct;  /* sm__warps_active.avg.pct_of_peak_sustained_active (0..100) */
	double duration_ns;   /* gpu__time_duration.sum of the measured pass */
	double sm_pct;        /* sm__throughput.avg.pct_of_peak_sustained_elapsed (0..100) */
	/* The roofline's measurements; each is -1 where the chip did not take the metric. */
	double dram_read_bytes, dram_write_bytes;
	double dram_pct;      /* dram__throughput.avg.pct_of_peak_sustained_elapsed (0..100) */
	double l2_bytes;      /* lts__t_bytes.sum */
	double l2_pct;        /* lts__throughput.avg.pct_of_peak_sustained_elapsed (0..100) */
	double flop_sp, flop_dp;  /* fadd + fmul + 2 ffma, dadd + dmul + 2 dfma (thread ops) */
	double peak_flops_sp, peak_flops_dp;  /* FLOP/s: 2 x fma peak per cycle x SM clock */
	double peak_dram_bps; /* bytes/s: dram__bytes.sum.peak_sustained x DRAM clock */
	double tensor_inst;   /* sm__inst_executed_pipe_tensor.sum */
} gwb_profile_range;

typedef void (*gwb_profile_range_fn)(const gwb_profile_range *r, void *ctx);

typedef struct gwb_profile_session gwb_profile_session;

/* The live decode: while a session runs, gwb_gpu_profile_tick() (called by gwb_launch after
 * each of gwb's launches) decodes what was measured since the last decode, at most every
 * GWB_PROFILE_LIVE_S seconds and only on the thread that began the session: it stops the range
 * profiler, decodes and evaluates that batch, hands each range to the session's fn (so the
 * panel shows measured GB/s while gpu.profile runs), initializes the counter data image afresh
 * and starts again. Launches of library kernels between two of ours are decoded with them. */
#define GWB_PROFILE_LIVE_S 0.5  /* each decode costs a stop, a re-configuration and a start */

/* Start measuring every kernel launched from now on the current device (creating the CUDA
 * context if needed), up to max_ranges launches per decoded batch (1..100000; later launches
 * of a batch are not measured). fn(range, ctx) gets every measured launch, in launch order,
 * as its batch is decoded: during the run (gwb_gpu_profile_tick) and at the end.
 * GWB_OK and *out, or a status with the reason in gwb_errmsg(): GWB_ENODEV when libcupti is
 * missing or older than CUDA 13.0's (cuptiGetVersion below 130000; an older one found first
 * is passed over), profiling is not permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the
 * driver's NVreg_RestrictProfilingToAdminUsers=1), the device or environment is not supported
 * (virtualized, confidential compute, another profiler or sanitizer attached) or the build
 * had no CUPTI headers; GWB_EINVAL for a bad max_ranges or a session already running. */
gwb_status gwb_gpu_profile_begin(int max_ranges, gwb_profile_range_fn fn, void *ctx,
				 gwb_profile_session **out);

/* Stop the session, decode the last batch and call fn for each of its launches. *dropped (may
 * be NULL) gets the launches that were not measured (over max_ranges or dropped by CUPTI). A
 * live decode that failed during the run is reported here. The session is freed whatever the
 * outcome; on failure the reason is in gwb_errmsg(). */
gwb_status gwb_gpu_profile_end(gwb_profile_session *s, long *dropped);

/* Decode the running session's batch when one is due (see GWB_PROFILE_LIVE_S); nothing when
 * no session runs (one load and a branch), on another thread, or too soon. */
void gwb_gpu_profile_tick(void);

/* Stop and free a session without decoding (the measured code failed). NULL is fine. */
void gwb_gpu_profile_abort(gwb_profile_session *s);

/* The libcupti that was loaded ("" before the first session or when none was found or the
 * one found could not be used). */
const char *gwb_gpu_profile_library(void);

#ifdef __cplusplus
}
#endif
#endif
