/* synth.h - synthetic datasets (data.synth), drawn from rng.h's xoshiro256** streams.
 * Generation is deterministic for a seed and independent of the thread count: every row draws
 * from its own stream (seed, row), so any split of the rows over threads gives the same table. */
#ifndef GWB_SYNTH_H
#define GWB_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "rng.h"      /* its random streams (gwb_rand) */
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gwb_synth_kind {
	GWB_SYNTH_CLASSIFICATION = 0, /* scikit-learn's make_classification, in spirit */
	GWB_SYNTH_REGRESSION,         /* linear: y = X w + bias + noise (make_regression) */
	GWB_SYNTH_FRIEDMAN1,          /* y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise */
} gwb_synth_kind;

typedef struct gwb_synth_opts {
	gwb_synth_kind kind;
	size_t rows;
	int features;
	int informative;          /* classification, regression: features that carry the signal */
	int redundant;            /* classification: random linear combinations of informative */
	int repeated;             /* classification: copies of informative/redundant features */
	int classes;              /* classification */
	int clusters_per_class;   /* classification */
	double class_sep;         /* classification: hypercube side is 2 * class_sep */
	double flip_y;            /* classification: fraction of labels replaced at random */
	const double *weights;    /* classification: class proportions (classes entries) or NULL */
	double noise;             /* regression, friedman1: std of the Gaussian noise on y */
	double bias;              /* regression */
	double shift, scale;      /* classification: X = (X + shift) * scale */
	int shuffle;              /* permute rows (all) and feature order (classification) */
	uint64_t seed;
	int threads;              /* 0 = one per online CPU */
} gwb_synth_opts;

/* Defaults of make_classification: 20 features, 2 informative, 2 redundant, 2 classes, 2
 * clusters per class, class_sep 1, flip_y 0.01, shuffle, seed 1, noise 0. */
void gwb_synth_opts_init(gwb_synth_opts *o, gwb_synth_kind kind);

/* Generate a dataset; the caller owns *out. GWB_EINVAL names the parameter that is wrong;
 * GWB_EINTR when interrupted. */
gwb_status gwb_synth(const gwb_synth_opts *o, gwb_dataset **out);

#ifdef __cplusplus
}
#endif
#endif
