/* pool.h - the thread pool: every parallel loop of gwb runs on its persistent workers
 * (gwb_cpu_threads() - 1 of them, started on first use; the caller runs one part itself).
 * Two shapes over the same workers: ranges split evenly (gwb_parallel_for: SpMV, vector
 * passes, copies) and items handed out as workers finish (gwb_parallel_items: trees, features,
 * row blocks of uneven cost). Both return after every part has finished; nothing is allocated
 * that outlives the call. BLAS runs on one thread inside both (gwb_blas_serial_begin/end). */
#ifndef GWB_POOL_H
#define GWB_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Run fn(ctx, lo, hi, part) over [0, n) split into equal ranges across the CPU threads (one
 * call when n is small, below `grain` per thread); part numbers the ranges from 0. */
typedef void (*gwb_par_fn)(void *ctx, int64_t lo, int64_t hi, int part);
void gwb_parallel_for(int64_t n, int64_t grain, gwb_par_fn fn, void *ctx);

/* Run fn(ctx, i, worker) for every i in [0, n) on up to `threads` workers (at most 256, never
 * more than n; the caller is worker 0), each taking the next item when it finishes one.
 * worker < threads, so per-worker scratch can be indexed by it. A worker that cannot be
 * started is done without: the others (at least the caller) take every item. */
typedef void (*gwb_item_fn)(void *ctx, size_t i, int worker);
void gwb_parallel_items(int threads, size_t n, gwb_item_fn fn, void *ctx);

/* Threads gwb_parallel_for uses (online CPUs, at most 64; GWB_THREADS overrides). */
int gwb_cpu_threads(void);

#ifdef __cplusplus
}
#endif
#endif
