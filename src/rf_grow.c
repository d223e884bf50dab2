/* rf_grow.c - f:grow(n): n more trees after a forest's T, grown by the ordinary dispatcher
 * with RNG indices from T on (params.tree_first), then the two node arrays put together and
 * the whole forest's summary (OOB, importances) computed as a fresh fit does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rf_grow.h"

gwb_status gwb_rf_grow(const gwb_forest *f, const gwb_dataset *d, int n, gwb_backend backend,
		       int threads, bool progress, gwb_forest **out)
{
	gwb_rf_params p = f->params;
	gwb_forest *g = NULL, *h = NULL;
	size_t at;
	gwb_status st;
	int t;

	*out = NULL;
	if (n < 1)
		return gwb_error(GWB_EINVAL, "grow: n must be >= 1 (got %d)", n);
	if (n > INT32_MAX - f->trees)
		return gwb_error(GWB_EINVAL, "grow: %d + %d trees is too many", f->trees, n);
	if (d->rows != f->train_rows || d->features != f->features || d->task != f->task ||
	    (f->task == GWB_TASK_CLASSIFICATION && d->classes != f->classes))
		return gwb_error(GWB_EINVAL, "grow: d must be the forest's training data (%zu rows, "
				 "%d features%s); got %zu rows, %d features: more trees on other "
				 "data would not be the forest trained on it", f->train_rows,
				 f->features, f->task == GWB_TASK_CLASSIFICATION ? ", its classes" :
				 "", d->rows, d->features);
	p.trees = n;
	p.tree_first = f->trees;
	p.oob = false;            /* computed once over the whole forest below */
	p.progress = progress;
	p.hybrid = false;
	if (f->task == GWB_TASK_CLASSIFICATION) {
		p.class_weight = f->class_weight;  /* the weights as resolved (balanced: the same) */
		p.class_weight_balanced = false;
	}
	if (backend != GWB_BACKEND_AUTO)
		p.backend = backend;
	if (threads > 0)
		p.threads = threads;
	if ((st = gwb_rf_train(d, &p, &g)))
		return st;
	p = f->params;
	p.trees = f->trees + n;
	p.tree_first = 0;
	if ((st = gwb_forest_new(d, &p, f->mtry, f->class_weight, &h)) ||
	    (st = gwb_forest_alloc_nodes(h, f->nodes + g->nodes)))
		goto out_free;
	h->params.threads = g->params.threads;
	h->params.backend = f->params.backend;
	h->params.oob = f->params.oob;
	for (t = 0; t <= f->trees; t++)
		h->tree_offset[t] = f->tree_offset[t];
	at = f->nodes;
	for (t = 1; t <= g->trees; t++)
		h->tree_offset[f->trees + t] = (int64_t)at + g->tree_offset[t];
	gwb_forest_copy_nodes(h, 0, f, 0, f->nodes);
	gwb_forest_copy_nodes(h, at, g, 0, g->nodes);
	h->backend = g->backend;
	memcpy(h->backend_why, g->backend_why, sizeof(h->backend_why));
	h->timing = g->timing;
	if ((st = gwb_forest_finish(h, d, g->params.threads)))
		goto out_free;
	*out = h;
	h = NULL;
out_free:
	gwb_forest_free(g);
	gwb_forest_free(h);
	return st;
}
