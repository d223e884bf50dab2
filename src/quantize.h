/* quantize.h - per-feature quantile binning of a Dataset for histogram training: each feature
 * gets up to bins-1 value bins (edges from the sorted values, or from a sample of rows for large
 * data) plus one bin for missing values (NaN), and every value becomes a uint8 code stored
 * column-major like the Dataset. The caller owns a gwb_quant and frees it with gwb_quant_free().
 *
 * Codes of feature j (nb = nbins[j], E = edges + j * (bins - 1)):
 *   value v (not NaN) -> code(v) = number of edges E[0..nb-1) strictly below v, in 0..nb-1;
 *                        so code(v) <= t exactly when v <= E[t] (t < nb-1);
 *   NaN               -> code nb (GWB_QUANT_NAN_CODE), always, whether or not training saw NaN.
 * nb <= bins - 1, so every code is <= bins - 1 <= 255 and a feature has at most `bins` codes.
 * Edges are strictly increasing. When a feature has at most bins-1 distinct values the edges are
 * the midpoints between consecutive distinct values (exact, as an unbinned tree would split);
 * otherwise they sit at the bins-1 quantiles of the (sampled) values, duplicates removed. */
#ifndef GWB_QUANTIZE_H
#define GWB_QUANTIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GWB_QUANT_MAX_BINS 256
/* Rows looked at to place edges when a dataset is larger than this (a sample, chosen by the
 * counter RNG of forest.h with stream GWB_RNG_STREAM_QUANT, deterministic for a seed). */
#define GWB_QUANT_DEFAULT_SAMPLE 200000

typedef struct gwb_quant {
	size_t rows;
	int features;
	int bins;          /* requested codes per feature, NaN bin included: 2..256 */
	uint8_t *codes;    /* rows x features, column-major: codes[(size_t)j * rows + i] */
	int *nbins;        /* per feature: value bins nb (1..bins-1); NaN's code is nb */
	uint8_t *has_nan;  /* per feature: 1 when the quantized data held a NaN */
	float *edges;      /* features x (bins-1): E[t] = edges[j*(bins-1) + t], t < nbins[j]-1 */
	int *offset;       /* features+1 prefix sums of (nbins[j] + 1): where feature j's codes
			    * start in a compact histogram of offset[features] entries */
} gwb_quant;

/* The NaN code of feature j. */
#define GWB_QUANT_NAN_CODE(q, j) ((q)->nbins[(j)])

/* Place edges from d (a sample of `sample` rows when d has more; 0 = the default) and code all
 * of d's rows, using up to `threads` threads (0 = all cores). bins must be 2..256. */
gwb_status gwb_quant_build(const gwb_dataset *d, int bins, size_t sample, uint64_t seed,
			   int threads, gwb_quant **out);

/* Code a feature value with edges E of nb value bins (NaN -> nb): the number of edges below v,
 * by a branchless binary search (the loop runs log2(nb) times whatever v is). */
static inline uint8_t gwb_quant_code(const float *E, int nb, float v)
{
	const float *b = E;
	int n = nb - 1;

	if (v != v)
		return (uint8_t)nb;
	if (n <= 0)
		return 0;
	while (n > 1) {
		int half = n >> 1;
		b = b[half] < v ? b + half : b;
		n -= half;
	}
	return (uint8_t)((b - E) + (*b < v));
}

/* The float threshold that matches "code <= t goes left" for feature j: E[t], or +infinity
 * when t is the last value bin (the split that separates only the NaN bin). */
float gwb_quant_threshold(const gwb_quant *q, int j, int t);

void gwb_quant_free(gwb_quant *q);

#ifdef __cplusplus
}
#endif
#endif
