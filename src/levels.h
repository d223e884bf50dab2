/* levels.h - a Dataset's categorical levels matched onto a model's by label. A model trained on
 * text columns learned codes that are positions in the training data's dictionary (levels in
 * their order of first appearance); data read from another file codes the same labels in its
 * own order, holds a subset of them, or levels the model never saw. Scoring recodes it first:
 * each label to the model's code for it, a level the model never saw to missing (counted), a
 * text column where the model had numbers (or the reverse) refused with the column's name and
 * an example value. The caller owns the dataset returned and frees it with gwb_dataset_free(). */
#ifndef GWB_LEVELS_H
#define GWB_LEVELS_H

#include <stdbool.h>
#include <stddef.h>

#include "dataset.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What matching did. */
typedef struct gwb_levels_report {
	size_t unseen;        /* values whose level the model never saw: scored as missing */
	int unseen_levels;    /* distinct such levels, over all columns */
	int unseen_columns;   /* columns holding one */
	int column;           /* the first such column (0-based, the model's order), or -1 */
	char example[128];    /* the first such level, as given (truncated to fit) */
	bool recoded;         /* some column's codes were changed */
} gwb_levels_report;

/* Match d's columns (already in the model's feature order: d->features == features) onto the
 * model's levels: levels[j] NULL = a numeric feature, else count[j] labels, the code c meaning
 * levels[j][c]. *out = a recoded copy of d (the model's level lists as its dictionaries), or
 * NULL when d's codes already mean what the model's do (use d). fn names the call in errors.
 * strict: a level the model never saw is an error (GWB_EINVAL naming column, row and level)
 * instead of a missing value. GWB_EINVAL also for a text column where the model has numbers
 * or the reverse (the column, an example value, what the model expects). */
gwb_status gwb_levels_match(const gwb_dataset *d, char **const *levels, const int *count,
			    int features, bool strict, const char *fn, gwb_dataset **out,
			    gwb_levels_report *rep);

#ifdef __cplusplus
}
#endif
#endif
