/* synth.c - random numbers and synthetic datasets (data.synth).
 *
 * The parameters of a dataset (cluster centroids and covariances, redundant mixing, regression
 * coefficients, the row and feature permutations) are drawn serially from stream 0 of the
 * seed. Row i then draws from its own stream 1 + i, so workers may take rows in any order and
 * the table is the same for any number of threads. Rows are built in blocks, row-major in a
 * worker's buffer, and transposed into the column-major dataset. */
#define _GNU_SOURCE
#include "synth.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "size.h"
#include "pool.h"
#include "transpose.h"


/* --- options ------------------------------------------------------------------------------ */

void gwb_synth_opts_init(gwb_synth_opts *o, gwb_synth_kind kind)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->rows = 100;
	o->features = kind == GWB_SYNTH_CLASSIFICATION ? 20 : kind == GWB_SYNTH_FRIEDMAN1 ? 10 : 100;
	o->informative = kind == GWB_SYNTH_CLASSIFICATION ? 2 : 10;
	o->redundant = kind == GWB_SYNTH_CLASSIFICATION ? 2 : 0;
	o->classes = 2;
	o->clusters_per_class = 2;
	o->class_sep = 1.0;
	o->flip_y = kind == GWB_SYNTH_CLASSIFICATION ? 0.01 : 0.0;
	o->scale = 1.0;
	o->shuffle = 1;
	o->seed = 1;
}

/* --- generation ---------------------------------------------------------------------------- */

#define BLOCK_ROWS 2048

struct plan {
	const gwb_synth_opts *o;
	gwb_dataset *d;
	int F, ni, nr, nrep, nc;      /* features, informative, redundant, repeated, clusters */
	double *centroid;             /* nc x ni */
	double *A;                    /* nc x ni x ni: per-cluster covariance factor */
	double *B;                    /* ni x nr: redundant mixing */
	int *rep_src;                 /* nrep: source column (0..ni+nr-1) of each repeated one */
	int *fpos;                    /* F: output column of generated column j */
	size_t *cluster_start;        /* nc + 1: slot ranges of each cluster */
	size_t *perm;                 /* rows: slot of row i (NULL = identity) */
	double *coef;                 /* regression: F coefficients */
	float *wbuf[256];             /* per pool worker: a block of rows, row-major */
	double *wx[256];              /* per pool worker: one row's generated values */
	atomic_int stop;              /* 1 interrupted, 2 out of memory */
	gwb_status st;
};

static int cluster_of(const struct plan *p, size_t slot)
{
	int lo = 0, hi = p->nc;   /* cluster_start[lo] <= slot < cluster_start[hi] */

	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (p->cluster_start[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* n standard normals, both values of each polar pair used. */
static void fill_normal(gwb_rand *r, double *dst, int n)
{
	int k;

	for (k = 0; k + 1 < n; k += 2) {
		double u, v, s, f;
		do {
			u = 2.0 * gwb_rand_uniform(r) - 1.0;
			v = 2.0 * gwb_rand_uniform(r) - 1.0;
			s = u * u + v * v;
		} while (s >= 1.0 || s == 0.0);
		f = sqrt(-2.0 * log(s) / s);
		dst[k] = u * f;
		dst[k + 1] = v * f;
	}
	if (k < n)
		dst[k] = gwb_rand_normal(r);
}

/* One row into out[0..F) (already in output column order); x is scratch for F doubles. */
static void gen_row(const struct plan *p, size_t i, float *out, int32_t *y, float *yr, double *x)
{
	const gwb_synth_opts *o = p->o;
	gwb_rand r;
	int j, k;

	gwb_rand_seed(&r, o->seed, 1 + (uint64_t)i);
	if (o->kind == GWB_SYNTH_CLASSIFICATION) {
		size_t slot = p->perm ? p->perm[i] : i;
		int c = cluster_of(p, slot);
		const double *A = p->A + (size_t)c * p->ni * p->ni, *mu = p->centroid + (size_t)c * p->ni;
		double zz[256];
		int label = c % o->classes;
		fill_normal(&r, zz, p->ni);
		for (j = 0; j < p->ni; j++) {
			double s = mu[j];
			for (k = 0; k < p->ni; k++)
				s += zz[k] * A[(size_t)k * p->ni + j];
			x[j] = s;
		}
		for (j = 0; j < p->nr; j++) {
			double s = 0;
			for (k = 0; k < p->ni; k++)
				s += x[k] * p->B[(size_t)k * p->nr + j];
			x[p->ni + j] = s;
		}
		for (j = 0; j < p->nrep; j++)
			x[p->ni + p->nr + j] = x[p->rep_src[j]];
		j = p->ni + p->nr + p->nrep;
		fill_normal(&r, x + j, p->F - j);
		if (o->flip_y > 0 && gwb_rand_uniform(&r) < o->flip_y)
			label = (int)gwb_rand_below(&r, (uint64_t)o->classes);
		*y = label;
		for (j = 0; j < p->F; j++)
			out[p->fpos[j]] = (float)((x[j] + o->shift) * o->scale);
	} else if (o->kind == GWB_SYNTH_REGRESSION) {
		double t = o->bias;
		fill_normal(&r, x, p->F);
		for (j = 0; j < p->F; j++)
			t += x[j] * p->coef[j];
		if (o->noise > 0)
			t += o->noise * gwb_rand_normal(&r);
		*yr = (float)t;
		for (j = 0; j < p->F; j++)
			out[p->fpos[j]] = (float)x[j];
	} else {
		double t;
		for (j = 0; j < p->F; j++)
			x[j] = gwb_rand_uniform(&r);
		t = 10 * sin(M_PI * x[0] * x[1]) + 20 * (x[2] - 0.5) * (x[2] - 0.5) + 10 * x[3] +
		    5 * x[4];
		if (o->noise > 0)
			t += o->noise * gwb_rand_normal(&r);
		*yr = (float)t;
		for (j = 0; j < p->F; j++)
			out[j] = (float)x[j];
	}
}

/* One block of rows on pool worker w (gwb_parallel_items): generated row-major into the
 * worker's buffer (allocated on its first block), transposed into the columns. */
static void gen_block(void *arg, size_t b, int w)
{
	struct plan *p = arg;
	size_t rows = p->d->rows, r0, n, i;
	float *buf;
	double *x;

	if (atomic_load(&p->stop))
		return;
	if (gwb_intr_pending()) {
		atomic_store(&p->stop, 1);
		return;
	}
	if (!p->wbuf[w]) {
		p->wbuf[w] = malloc((size_t)BLOCK_ROWS * (size_t)p->F * sizeof(float));
		p->wx[w] = malloc((size_t)p->F * sizeof(double));
		if (!p->wbuf[w] || !p->wx[w]) {
			atomic_store(&p->stop, 2);
			return;
		}
	}
	buf = p->wbuf[w];
	x = p->wx[w];
	r0 = b * BLOCK_ROWS;
	n = rows - r0 < BLOCK_ROWS ? rows - r0 : BLOCK_ROWS;
	for (i = 0; i < n; i++)
		gen_row(p, r0 + i, buf + i * (size_t)p->F, p->d->y ? p->d->y + r0 + i : NULL,
			p->d->yr ? p->d->yr + r0 + i : NULL, x);
	gwb_transpose_f32(buf, n, (size_t)p->F, (size_t)p->F, p->d->X + r0, rows, 32, 1);
	gwb_progress_update((double)(r0 + n), NULL, 0);
}

static gwb_status check(const gwb_synth_opts *o)
{
	size_t bytes;

	if (o->rows < 1)
		return gwb_error(GWB_EINVAL, "data.synth: rows must be >= 1");
	if (o->features < 1 || o->features > 1000000)
		return gwb_error(GWB_EINVAL, "data.synth: features must be in 1..1000000 (got %d)",
				 o->features);
	/* the table (and the row shuffle's index) before anything is sized from rows */
	if (gwb_mul3_size(o->rows, (size_t)o->features + 2, sizeof(size_t), &bytes))
		return gwb_error(GWB_ENOMEM, "data.synth: rows = %zu x features = %d does not fit "
				 "in memory (the table alone is more than 2^64 bytes)", o->rows,
				 o->features);
	if (o->kind == GWB_SYNTH_FRIEDMAN1 && o->features < 5)
		return gwb_error(GWB_EINVAL, "data.synth: friedman1 needs features >= 5 (got %d)",
				 o->features);
	if (o->noise < 0)
		return gwb_error(GWB_EINVAL, "data.synth: noise must be >= 0 (got %g)", o->noise);
	if (o->kind == GWB_SYNTH_REGRESSION &&
	    (o->informative < 0 || o->informative > o->features))
		return gwb_error(GWB_EINVAL, "data.synth: informative must be in 0..features (%d), "
				 "got %d", o->features, o->informative);
	if (o->kind != GWB_SYNTH_CLASSIFICATION)
		return GWB_OK;
	if (o->informative < 1 || o->informative > 256)
		return gwb_error(GWB_EINVAL, "data.synth: informative must be in 1..256 (got %d)",
				 o->informative);
	if (o->redundant < 0 || o->repeated < 0 ||
	    o->informative + o->redundant + o->repeated > o->features)
		return gwb_error(GWB_EINVAL, "data.synth: informative (%d) + redundant (%d) + "
				 "repeated (%d) must be <= features (%d)", o->informative,
				 o->redundant, o->repeated, o->features);
	if (o->classes < 2 || o->classes > 65536)
		return gwb_error(GWB_EINVAL, "data.synth: classes must be in 2..65536 (got %d)",
				 o->classes);
	if (o->clusters_per_class < 1)
		return gwb_error(GWB_EINVAL, "data.synth: clusters_per_class must be >= 1 (got %d)",
				 o->clusters_per_class);
	if (o->informative < 30 &&
	    (double)o->classes * o->clusters_per_class > ldexp(1.0, o->informative))
		return gwb_error(GWB_EINVAL, "data.synth: classes (%d) x clusters_per_class (%d) "
				 "must be <= 2^informative (%.0f); raise informative",
				 o->classes, o->clusters_per_class, ldexp(1.0, o->informative));
	if (o->flip_y < 0 || o->flip_y > 1)
		return gwb_error(GWB_EINVAL, "data.synth: flip_y must be in [0, 1] (got %g)",
				 o->flip_y);
	if (o->class_sep < 0)
		return gwb_error(GWB_EINVAL, "data.synth: class_sep must be >= 0 (got %g)",
				 o->class_sep);
	if (o->weights) {
		int k;
		for (k = 0; k < o->classes; k++)
			if (!(o->weights[k] > 0))
				return gwb_error(GWB_EINVAL, "data.synth: weights[%d] must be > 0 "
						 "(got %g)", k + 1, o->weights[k]);
	}
	return GWB_OK;
}

static void plan_free(struct plan *p)
{
	free(p->centroid);
	free(p->A);
	free(p->B);
	free(p->rep_src);
	free(p->fpos);
	free(p->cluster_start);
	free(p->perm);
	free(p->coef);
	for (int w = 0; w < 256; w++) {
		free(p->wbuf[w]);
		free(p->wx[w]);
	}
}

/* Everything drawn from stream 0, serially. */
static gwb_status make_plan(struct plan *p)
{
	const gwb_synth_opts *o = p->o;
	gwb_rand r;
	size_t *fp, i, sz;
	int j, k;

	gwb_rand_seed(&r, o->seed, 0);
	p->F = o->features;
	p->fpos = malloc((size_t)p->F * sizeof(int));
	fp = malloc((size_t)p->F * sizeof(size_t));
	if (!p->fpos || !fp)
		goto oom;
	for (j = 0; j < p->F; j++)
		fp[j] = (size_t)j;
	if (o->shuffle && o->kind != GWB_SYNTH_FRIEDMAN1)
		gwb_rand_shuffle(&r, fp, (size_t)p->F);
	for (j = 0; j < p->F; j++)
		p->fpos[j] = (int)fp[j];
	free(fp);
	if (o->kind == GWB_SYNTH_REGRESSION) {
		if (!(p->coef = calloc((size_t)p->F, sizeof(double))))
			goto oom;
		for (j = 0; j < o->informative; j++)
			p->coef[j] = 100.0 * gwb_rand_uniform(&r);
		return GWB_OK;
	}
	if (o->kind == GWB_SYNTH_FRIEDMAN1)
		return GWB_OK;
	p->ni = o->informative;
	p->nr = o->redundant;
	p->nrep = o->repeated;
	p->nc = o->classes * o->clusters_per_class;
	if (gwb_mul3_size((size_t)p->nc, (size_t)p->ni, sizeof(double), &sz) ||
	    !(p->centroid = malloc(sz)) ||
	    gwb_mul3_size((size_t)p->nc * p->ni, (size_t)p->ni, sizeof(double), &sz) ||
	    !(p->A = malloc(sz)))
		goto oom;
	p->B = malloc(((size_t)p->ni * p->nr + 1) * sizeof(double));
	p->rep_src = malloc(((size_t)p->nrep + 1) * sizeof(int));
	p->cluster_start = malloc(((size_t)p->nc + 1) * sizeof(size_t));
	if (!p->centroid || !p->A || !p->B || !p->rep_src || !p->cluster_start)
		goto oom;
	/* Centroids: distinct random vertices of the hypercube of side 2 class_sep. */
	for (k = 0; k < p->nc; k++) {
		int again;
		do {
			double *c = p->centroid + (size_t)k * p->ni;
			int m;
			for (j = 0; j < p->ni; j++)
				c[j] = (gwb_rand_u64(&r) >> 63) ? o->class_sep : -o->class_sep;
			again = 0;
			for (m = 0; m < k && !again; m++)
				again = !memcmp(c, p->centroid + (size_t)m * p->ni,
						(size_t)p->ni * sizeof(double));
		} while (again && p->ni < 30);
	}
	for (i = 0; i < (size_t)p->nc * p->ni * p->ni; i++)
		p->A[i] = 2.0 * gwb_rand_uniform(&r) - 1.0;
	for (i = 0; i < (size_t)p->ni * p->nr; i++)
		p->B[i] = 2.0 * gwb_rand_uniform(&r) - 1.0;
	for (j = 0; j < p->nrep; j++)
		p->rep_src[j] = (int)gwb_rand_below(&r, (uint64_t)(p->ni + p->nr));
	/* Rows per cluster: the class share (weights) split evenly over its clusters; what
	 * rounding leaves goes round-robin, as make_classification does. */
	{
		double wsum = 0;
		size_t used = 0, *cnt = calloc((size_t)p->nc, sizeof(size_t));
		if (!cnt)
			goto oom;
		for (k = 0; k < o->classes; k++)
			wsum += o->weights ? o->weights[k] : 1.0;
		for (k = 0; k < p->nc; k++) {
			double w = (o->weights ? o->weights[k % o->classes] : 1.0) / wsum;
			cnt[k] = (size_t)((double)o->rows * w / o->clusters_per_class);
			used += cnt[k];
		}
		for (i = 0; used < o->rows; i++, used++)
			cnt[i % (size_t)p->nc]++;
		p->cluster_start[0] = 0;
		for (k = 0; k < p->nc; k++)
			p->cluster_start[k + 1] = p->cluster_start[k] + cnt[k];
		free(cnt);
	}
	if (o->shuffle) {
		if (gwb_mul_size(o->rows, sizeof(size_t), &sz) || !(p->perm = malloc(sz)))
			return gwb_error(GWB_ENOMEM, "data.synth: out of memory for the row shuffle "
					 "of %zu rows (%zu bytes; shuffle = false needs none)", o->rows,
					 sz);
		for (i = 0; i < o->rows; i++) {
			p->perm[i] = i;
			if ((i & 0xfffff) == 0 && gwb_intr_pending())
				return gwb_error(GWB_EINTR, "data.synth: interrupted while shuffling");
		}
		/* gwb_rand_shuffle's steps, with Ctrl-C checked between blocks of 2^20 rows */
		for (i = o->rows; i > 1; i--) {
			size_t s = (size_t)gwb_rand_below(&r, i), t = p->perm[i - 1];
			p->perm[i - 1] = p->perm[s];
			p->perm[s] = t;
			if ((i & 0xfffff) == 0 && gwb_intr_pending())
				return gwb_error(GWB_EINTR, "data.synth: interrupted while shuffling");
		}
	}
	return GWB_OK;
oom:
	return gwb_error(GWB_ENOMEM, "data.synth: out of memory for the parameters");
}

static gwb_status set_names(struct plan *p)
{
	const gwb_synth_opts *o = p->o;
	gwb_dataset *d = p->d;
	int j, k;
	char b[32];

	for (j = 0; j < p->F; j++) {
		if (o->kind == GWB_SYNTH_FRIEDMAN1)
			snprintf(b, sizeof(b), "x%d", j + 1);
		else if (o->kind == GWB_SYNTH_REGRESSION)
			snprintf(b, sizeof(b), j < o->informative ? "inf%d" : "noise%d",
				 j < o->informative ? j + 1 : j - o->informative + 1);
		else if (j < p->ni)
			snprintf(b, sizeof(b), "inf%d", j + 1);
		else if (j < p->ni + p->nr)
			snprintf(b, sizeof(b), "red%d", j - p->ni + 1);
		else if (j < p->ni + p->nr + p->nrep)
			snprintf(b, sizeof(b), "rep%d", j - p->ni - p->nr + 1);
		else
			snprintf(b, sizeof(b), "noise%d", j - p->ni - p->nr - p->nrep + 1);
		if (!(d->names[o->kind == GWB_SYNTH_FRIEDMAN1 ? j : p->fpos[j]] = strdup(b)))
			goto oom;
	}
	if (!(d->target = strdup("y")))
		goto oom;
	for (k = 0; k < d->classes; k++) {
		snprintf(b, sizeof(b), "%d", k);
		if (!(d->class_names[k] = strdup(b)))
			goto oom;
	}
	return GWB_OK;
oom:
	return gwb_error(GWB_ENOMEM, "data.synth: out of memory for names");
}

gwb_status gwb_synth(const gwb_synth_opts *o, gwb_dataset **out)
{
	struct plan p;
	int nt;
	gwb_status st;

	*out = NULL;
	if ((st = check(o)))
		return st;
	memset(&p, 0, sizeof(p));
	p.o = o;
	if ((st = make_plan(&p)))
		goto out;
	st = gwb_dataset_new(o->rows, o->features,
			     o->kind == GWB_SYNTH_CLASSIFICATION ? GWB_TASK_CLASSIFICATION
								 : GWB_TASK_REGRESSION,
			     o->kind == GWB_SYNTH_CLASSIFICATION ? o->classes : 0, &p.d);
	if (st)
		goto out;
	if ((st = set_names(&p)))
		goto out;
	nt = o->threads > 0 ? o->threads : gwb_cpu_count();
	if ((size_t)nt > (o->rows + BLOCK_ROWS - 1) / BLOCK_ROWS)
		nt = (int)((o->rows + BLOCK_ROWS - 1) / BLOCK_ROWS);
	if (nt > 256)
		nt = 256;
	if (nt < 1)
		nt = 1;
	atomic_init(&p.stop, 0);
	gwb_progress_begin("synth", (double)o->rows);
	gwb_parallel_items(nt, (o->rows + BLOCK_ROWS - 1) / BLOCK_ROWS, gen_block, &p);
	gwb_progress_end();
	if (atomic_load(&p.stop) == 1)
		st = gwb_error(GWB_EINTR, "data.synth: interrupted");
	else if (atomic_load(&p.stop) == 2)
		st = gwb_error(GWB_ENOMEM, "data.synth: out of memory for a row block");
out:
	plan_free(&p);
	if (st) {
		gwb_dataset_free(p.d);
		return st;
	}
	*out = p.d;
	return GWB_OK;
}
