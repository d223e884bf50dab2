/* rf_grow.h - warm start: more trees for a trained forest. Tree t of a forest depends only on
 * the data, the parameters and (seed, t) (forest.h's RNG), so n more trees grown with RNG
 * indices T .. T+n-1 and appended give the forest that training T + n trees at once gives,
 * node for node. The caller owns the result and frees it with gwb_forest_free(). */
#ifndef GWB_RF_GROW_H
#define GWB_RF_GROW_H

#include "dataset.h"
#include "forest.h"
#include "status.h"

/* f's T trees followed by n new ones grown on d (f's training data: the same rows, features
 * and target, else the trees differ; rows and features are checked) with f's parameters;
 * backend and threads (0 = f's) may differ from f's. OOB, importances and the summary are
 * those of the whole forest. On error (GWB_EINTR on Ctrl-C) *out is NULL and f unchanged. */
gwb_status gwb_rf_grow(const gwb_forest *f, const gwb_dataset *d, int n, gwb_backend backend,
		       int threads, bool progress, gwb_forest **out);

#endif
