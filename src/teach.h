/* teach.h - the CPU measurements behind the `teach` lessons: the same ideas as the GPU lesson
 * kernels (kernels/teach.h), shown on the CPU's caches and cores, so every lesson runs on a
 * machine without a GPU. Each returns GWB_ENOMEM (with bytes) when it cannot allocate and
 * GWB_EINTR when interrupted (checked between timed runs); times are medians of reps. */
#ifndef GWB_TEACH_H
#define GWB_TEACH_H

#include <stddef.h>

#include "status.h"

/* Working-set sweep on one thread: sizes[i] bytes read (float sums) until `touched` bytes
 * were read; gbps[i]. */
gwb_status gwb_teach_cpu_sweep(const size_t *sizes, int n, double touched, int reps,
			       double *gbps);
/* Cache sizes from sysfs (bytes; 0 when unknown): L1d, L2, L3 of cpu0. */
void gwb_teach_cpu_caches(size_t *l1, size_t *l2, size_t *l3);
/* Strided reads over a `bytes` buffer: every stride-th float; gbps = useful bytes / time. */
gwb_status gwb_teach_cpu_stride(size_t bytes, const int *strides, int n, int reps, double *gbps);
/* The sum of one feature of rows x features float32 row-major (AoS) and column-major (SoA). */
gwb_status gwb_teach_cpu_soa(size_t rows, int features, int reps, double *aos_ms,
			     double *soa_ms);
/* Cache-set conflicts, the CPU's bank conflicts: walking down a column of a rows x pitch
 * float matrix; ns per element for each pitch (a power of two maps every element of the
 * column to the same few cache sets; a padded pitch spreads them). */
gwb_status gwb_teach_cpu_sets(size_t rows, const int *pitches, int n, int reps, double *ns);
/* Votes of `rows` rows into classes[i] classes over `threads` threads: one shared array of
 * atomic counters against per-thread counts merged at the end (ms). */
gwb_status gwb_teach_cpu_vote(size_t rows, const int *classes, int n, int threads, int reps,
			      double *shared_ms, double *private_ms);
/* Histograms of rows x features uint8 codes (two classes) into bins[i] bins over `threads`
 * threads: shared atomic counters against private histograms merged at the end (ms). */
gwb_status gwb_teach_cpu_hist(size_t rows, int features, const int *bins, int n, int threads,
			      int reps, double *shared_ms, double *private_ms);
/* Branches: a loop whose branch goes the unexpected way for a random fraction frac[i] of the
 * elements (the CPU's version of divergence: misprediction); ns per element. */
gwb_status gwb_teach_cpu_branch(size_t elems, const double *frac, int n, int reps, double *ns);
/* Start-up overhead: `count` small tasks of `elems` elements, each on a thread started for it
 * (the CPU's kernel launch), against one thread doing all of them; ms of each. */
gwb_status gwb_teach_cpu_launch(int count, int elems, int reps, double *many_ms, double *one_ms);

#endif
