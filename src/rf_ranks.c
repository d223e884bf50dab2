/* rf_ranks.c - a forest grown by the ranks of an MPI job (params.ranks, mpirun): the trees
 * are dealt to the ranks in contiguous ranges in index order (gwb_deal, as rf_multi.c deals
 * them to devices, the rank as the slot), each rank grows its range with the trainer the
 * dispatcher chose for it (tree t's RNG index is t wherever it grows, job.tree_first), and
 * every rank gathers every range and puts them together in order: the same forest, byte for
 * byte, as one process grows for the same seed. OOB is left to gwb_forest_finish on the
 * merged forest (the same sums in the same order on every rank). Before anything grows, the
 * ranks compare their Datasets (rows, features, task, XXH64 of the values): a rank that
 * loaded other data is named, instead of a forest of mixed trees. */
#define _GNU_SOURCE
#include "forest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "mpi.h"

/* What each rank says about its data. */
typedef struct ds_id {
	uint64_t rows, sum;
	int32_t features, task, classes, pad;
	char host[64];
} ds_id;

gwb_status gwb_rf_ranks_check_data(const gwb_dataset *d, const char *fn)
{
	ds_id me, *all = NULL;
	int r, size = gwb_mpi_size();
	gwb_status st;

	if (size < 2)
		return GWB_OK;
	memset(&me, 0, sizeof(me));
	me.rows = d->rows;
	/* the checksum is cached in the Dataset (which never changes once made) */
	me.sum = gwb_dataset_checksum((gwb_dataset *)d);
	me.features = d->features;
	me.task = (int32_t)d->task;
	me.classes = d->classes;
	snprintf(me.host, sizeof(me.host), "%s", gwb_mpi_host());
	if ((st = gwb_mpi_gather(&me, sizeof(me), 0, true, (void **)&all, NULL)))
		return st;
	for (r = 1; r < size; r++) {
		const ds_id *a = &all[0], *b = &all[r];
		if (a->rows == b->rows && a->sum == b->sum && a->features == b->features &&
		    a->task == b->task && a->classes == b->classes)
			continue;
		st = gwb_error(GWB_EINVAL, "%s: the ranks hold different data: rank %d (%s) has "
			       "%llu rows x %d features (checksum %016llx), rank 0 (%s) %llu x %d "
			       "(%016llx); load the same Dataset on every rank (or ranks = "
			       "\"self\" to train on this rank's data alone)", fn, r, b->host,
			       (unsigned long long)b->rows, b->features, (unsigned long long)b->sum,
			       a->host, (unsigned long long)a->rows, a->features,
			       (unsigned long long)a->sum);
		break;
	}
	free(all);
	return st;
}

/* ---- a rank's trees as bytes: u64 trees, u64 nodes, then the arrays widest first (so each
 * stays aligned in the gathered buffer: every part is padded to 8 bytes) ------------------- */

static size_t part_bytes(size_t trees, size_t nodes, size_t O)
{
	size_t n = 16 + (trees + 1) * 8 + nodes * (8 + 4 * 4 + 4 * 2 + 4 * O + 2);
	return (n + 7) & ~(size_t)7;
}

static void pack_part(const gwb_forest *g, unsigned char *p)
{
	uint64_t T = g ? (uint64_t)g->trees : 0, N = g ? g->nodes : 0;
	size_t O = g ? (size_t)g->outputs : 0;

	memcpy(p, &T, 8);
	memcpy(p + 8, &N, 8);
	p += 16;
	if (!g) {
		memset(p, 0, 8);  /* tree_offset[0] */
		return;
	}
#define PUT(a, n) (memcpy(p, (a), (n)), p += (n))
	PUT(g->tree_offset, (T + 1) * 8);
	PUT(g->weight, N * 8);
	PUT(g->feature, N * 4);
	PUT(g->left, N * 4);
	PUT(g->right, N * 4);
	PUT(g->count, N * 4);
	PUT(g->threshold, N * 4);
	PUT(g->impurity, N * 4);
	PUT(g->value, N * O * 4);
	PUT(g->threshold_bin, N);
	PUT(g->nan_left, N);
#undef PUT
}

/* A forest whose arrays point into a gathered part (read-only: for gwb_forest_copy_nodes). */
static void view_part(unsigned char *p, int outputs, gwb_forest *v, uint64_t *T, uint64_t *N)
{
	memcpy(T, p, 8);
	memcpy(N, p + 8, 8);
	p += 16;
	memset(v, 0, sizeof(*v));
	v->outputs = outputs;
	v->trees = (int)*T;
	v->nodes = (size_t)*N;
#define GET(a, type, n) (v->a = (type *)(void *)p, p += (n))
	GET(tree_offset, int64_t, (*T + 1) * 8);
	GET(weight, double, *N * 8);
	GET(feature, int32_t, *N * 4);
	GET(left, int32_t, *N * 4);
	GET(right, int32_t, *N * 4);
	GET(count, int32_t, *N * 4);
	GET(threshold, float, *N * 4);
	GET(impurity, float, *N * 4);
	GET(value, float, *N * (size_t)outputs * 4);
	GET(threshold_bin, uint8_t, *N);
	GET(nan_left, uint8_t, *N);
#undef GET
}

gwb_status gwb_rf_train_ranks(const gwb_rf_job *job, gwb_forest *f, gwb_rf_trainer train,
			      void *ctx)
{
	int size = gwb_mpi_size(), rank = gwb_mpi_rank(), r, t, t0 = 0;
	gwb_rf_params p = *job->p;
	gwb_rf_job sub = *job;
	gwb_forest *part = NULL;
	unsigned char *mine = NULL, *all = NULL;
	size_t lo, hi, n, *lens = NULL, at = 0, off = 0;
	double t1 = gwb_now();
	gwb_status st = GWB_OK, gst;
	bool failed = false;

	gwb_deal((size_t)job->p->trees, size, rank, &lo, &hi);
	p.trees = (int)(hi - lo);
	p.oob = false;                      /* computed once, over the whole forest */
	p.progress = job->p->progress && rank == 0;  /* rank 0 reports (its share) */
	p.keep = false;                     /* a partial range would leave holes */
	sub.p = &p;
	sub.tree_first = job->tree_first + (int)lo;
	if (hi > lo) {
		st = gwb_forest_new(job->d, &p, job->mtry, job->class_weight, &part);
		if (!st)
			st = train(ctx, &sub, part);
		if (st) {  /* still at the gather, so no rank waits for this one */
			gwb_forest_free(part);
			part = NULL;
			failed = true;
		}
	}
	n = part_bytes(part ? (size_t)part->trees : 0, part ? part->nodes : 0,
		       (size_t)f->outputs);
	if (!(mine = calloc(1, n)) || !(lens = calloc((size_t)size, sizeof(*lens)))) {
		st = gwb_error(GWB_ENOMEM, "rf.train: out of host memory for the trees to send");
		goto out;  /* (the others then wait in the gather: the front end aborts) */
	}
	pack_part(part, mine);
	if (failed)
		memset(mine, 0xff, 8);  /* trees = UINT64_MAX: this rank failed */
	if ((gst = gwb_mpi_gather(mine, n, 0, true, (void **)&all, lens))) {
		st = failed ? st : gst;
		goto out;
	}
	if (failed)
		goto out;  /* its own message */
	for (r = 0; r < size; r++) {
		uint64_t T;
		memcpy(&T, all + off, 8);
		if (T == UINT64_MAX) {
			st = gwb_error(GWB_EINVAL, "rf.train: rank %d failed while growing its "
				       "trees (its message is on its error output); no forest", r);
			goto out;
		}
		memcpy(&T, all + off + 8, 8);
		at += (size_t)T;
		off += lens[r];
	}
	if ((st = gwb_forest_alloc_nodes(f, at)))
		goto out;
	f->tree_offset[0] = 0;
	at = 0;
	off = 0;
	for (r = 0; r < size; r++) {
		gwb_forest v;
		uint64_t T, N;
		view_part(all + off, f->outputs, &v, &T, &N);
		for (t = 1; t <= (int)T; t++)
			f->tree_offset[t0 + t] = (int64_t)at + v.tree_offset[t];
		gwb_forest_copy_nodes(f, at, &v, 0, (size_t)N);
		at += (size_t)N;
		t0 += (int)T;
		off += lens[r];
	}
	if (t0 != f->trees) {
		st = gwb_error(GWB_EINVAL, "rf.train: the ranks grew %d trees of %d (ranks given "
			       "different parameters?)", t0, f->trees);
		goto out;
	}
	if (part) {
		f->timing.quantize_ms = part->timing.quantize_ms;
		f->timing.kernel_ms = part->timing.kernel_ms;
		f->timing.transfer_ms = part->timing.transfer_ms;
	}
	f->timing.grow_ms = (gwb_now() - t1) * 1e3 - f->timing.quantize_ms;
out:
	free(all);
	free(lens);
	free(mine);
	gwb_forest_free(part);
	return st;
}
