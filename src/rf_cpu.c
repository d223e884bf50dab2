/* rf_cpu.c - the CPU forest trainer: level-wise histogram growth on quantized codes, with the
 * larger sibling's histogram obtained by subtraction when that is cheaper, parallel over trees
 * (pthreads) or, when there are fewer trees than threads, over the nodes and features of a
 * level. The choices it makes (bootstrap, feature draw, split order, ties, node order) are the
 * contract written in forest.h; results do not depend on the thread count.
 * Two performance choices change no result (tests check it byte for byte) and can be turned
 * off for such checks: sibling subtraction (switch rf.subtract, GWB_RF_SUBTRACT=0) and the
 * row-major copies of each tree's rows (switch rf.rowmajor, GWB_RF_ROWMAJOR=0). */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "forest.h"
#include "intr.h"
#include "pool.h"
#include "switches.h"

/* ---- one tree's nodes, grown into arrays that double as needed ----------------------------- */

typedef struct tree_out {
	size_t n, cap;
	int outputs;
	int32_t *feature, *left, *right, *count;
	uint8_t *tbin, *nanl;
	float *thr, *imp, *value;
	double *weight;
} tree_out;

static void tree_out_free(tree_out *o)
{
	free(o->feature);
	free(o->left);
	free(o->right);
	free(o->count);
	free(o->tbin);
	free(o->nanl);
	free(o->thr);
	free(o->imp);
	free(o->value);
	free(o->weight);
	memset(o, 0, sizeof(*o));
}

/* Resize *p to n elements of size sz; false (and *p untouched) when memory runs out. */
static bool resize(void *pp, size_t n, size_t sz)
{
	void **p = pp, *q = realloc(*p, n * sz);

	if (!q)
		return false;
	*p = q;
	return true;
}

static bool tree_out_reserve(tree_out *o, size_t need)
{
	size_t c;

	if (need <= o->cap)
		return true;
	c = o->cap ? o->cap : 64;
	while (c < need)
		c *= 2;
	if (!resize(&o->feature, c, sizeof(int32_t)) || !resize(&o->left, c, sizeof(int32_t)) ||
	    !resize(&o->right, c, sizeof(int32_t)) || !resize(&o->count, c, sizeof(int32_t)) ||
	    !resize(&o->tbin, c, 1) || !resize(&o->nanl, c, 1) ||
	    !resize(&o->thr, c, sizeof(float)) || !resize(&o->imp, c, sizeof(float)) ||
	    !resize(&o->weight, c, sizeof(double)) ||
	    !resize(&o->value, c * (size_t)o->outputs, sizeof(float)))
		return false;
	o->cap = c;
	return true;
}

/* ---- shared state of one training run ------------------------------------------------------- */

enum { HIST_SAMPLED = 0, HIST_BUILD, HIST_SUB };

/* A row's target in the packed arrays: class code or centred regression value. */
typedef union ylab {
	int32_t l;
	float v;
} ylab;

/* Per worker buffers. The rows of the tree a worker grows (tree-parallel mode), or of the tree
 * all workers grow together (worker 0's, node-parallel mode), live here too. */
typedef struct scratch {
	uint32_t *ra, *rb;       /* in-bag rows, partitioned by node (two buffers, ping-pong) */
	float *w;                /* rows: training weight of each row for this tree (0 = OOB) */
	double *fh;              /* one feature's histogram: maxcodes x C */
	int *perm;               /* features: the lazy shuffle */
	double *cum;             /* 3 x C: running left sums, left and right sides */
	/* row-major mode: the in-bag rows' codes (F bytes each), weights and targets, partitioned
	 * with the rows (two buffers each, ping-pong) */
	uint8_t *ca, *cb;
	float *pwa, *pwb;
	ylab *pya, *pyb;
} scratch;

typedef struct run {
	const gwb_rf_job *job;
	const gwb_quant *q;
	int F, K, C, Ct;         /* features, classes (0 = regression), hist channels, totals */
	int T;                   /* codes of all features = q->offset[F] */
	int maxcodes;            /* max over features of nbins + 1 */
	size_t rows;
	const int32_t *y;        /* classification labels */
	float *yc;               /* regression: centred targets */
	tree_out *out;           /* per tree */
	scratch *ws;             /* per worker */
	int workers;
	bool subtract;           /* sibling subtraction allowed (switch rf.subtract) */
	bool rm;                 /* row-major mode: each tree keeps its rows' codes, weights and
				  * targets packed in node order, so histograms read memory in
				  * sequence instead of gathering (switch rf.rowmajor) */
	atomic_int done, failed; /* trees finished; a worker failed (status) */
	unsigned char *dropped;  /* hybrid: trees the other side took while this one grew them */
	unsigned char *complete; /* trees grown to the end (params.keep: Ctrl-C keeps a prefix) */
	char errmsg[256];
	atomic_flag errlock;
} run;

/* A node of the frontier (the open nodes of one level of one tree). */
typedef struct fnode {
	int32_t id;
	size_t b, e;             /* its rows: cur[b..e) */
	int mode;                /* HIST_* */
	int32_t sib;             /* HIST_SUB: frontier index of the sibling built in full */
	double *hist;            /* full histogram (T x C) or NULL; owned */
	double *pre;             /* node-parallel mode: histograms of the first npre drawn
				  * features (maxcodes x C each), built in parallel; owned */
	int npre;
	double *tot;             /* Ct totals */
	double imp;
	bool terminal;
	/* the chosen split */
	int feat, tbin, nanl;
	double gain;
	size_t nl;               /* rows going left (from the histogram's exact counts) */
	bool split;
	int32_t lid;             /* children ids lid, lid+1; fl: left child's next-frontier index */
	size_t fl;
} fnode;

/* One tree being grown. */
typedef struct tctx {
	run *R;
	int tree;
	scratch *ws;             /* tree-parallel: this worker's (1 entry); node mode: all */
	int nworkers;            /* 1 in tree-parallel mode */
	uint32_t *cur, *next;
	float *w;
	uint8_t *rc, *rcn;       /* row-major mode: packed codes, weights, targets (cur order) */
	float *pw, *pwn;
	ylab *py, *pyn;
	double root_w;
	fnode *fr;
	size_t nfr;
	double *tot_next;
	size_t *blist;           /* nodes whose full histogram is built this level */
	size_t *plist;           /* nodes whose first draws are prebuilt (node-parallel mode) */
} tctx;

static void exec(int nworkers, size_t n, void (*fn)(void *, size_t, int), void *ctx)
{
	size_t i;

	if (nworkers <= 1 || n <= 1) {
		for (i = 0; i < n; i++)
			fn(ctx, i, 0);
		return;
	}
	gwb_parallel_items(nworkers, n, fn, ctx);
}

static scratch *ws_of(tctx *tc, int tid)
{
	return tc->nworkers <= 1 ? tc->ws : &tc->ws[tid];
}

/* Hybrid back side: the other side took this tree (or the fit stopped). Checked between nodes
 * and features, so a dropped tree stops within one feature's histogram; the tree is then
 * marked dropped, whatever its arrays hold. */
static bool tree_dropped(const tctx *tc)
{
	const gwb_rf_job *job = tc->R->job;

	if (!job->trees || !job->trees->taken(job->trees->ctx, tc->tree))
		return false;
	tc->R->dropped[tc->tree] = 1;
	return true;
}

/* ---- impurity ------------------------------------------------------------------------------- */

/* Classification totals t: t[0] = rows, t[1+k] = class weights. Regression: t[0] rows, t[1] W,
 * t[2] S = sum w*y, t[3] = sum w*y^2 (totals only; histograms keep the first three). */
static double cls_weight(const double *t, int K)
{
	double W = 0;
	int k;

	for (k = 0; k < K; k++)
		W += t[1 + k];
	return W;
}

static double cls_impurity(const double *t, int K, double W, gwb_rf_criterion crit)
{
	double s = 0;
	int k;

	if (W <= 0)
		return 0;
	if (crit == GWB_CRIT_ENTROPY) {
		for (k = 0; k < K; k++) {
			double p = t[1 + k] / W;
			if (p > 0)
				s -= p * log2(p);
		}
		return s;
	}
	for (k = 0; k < K; k++) {
		double p = t[1 + k] / W;
		s += p * p;
	}
	return 1 - s;
}

static double reg_impurity(const double *t)
{
	double W = t[1], m, v;

	if (W <= 0)
		return 0;
	m = t[2] / W;
	v = t[3] / W - m * m;
	return v > 0 ? v : 0;
}

static double node_weight(const run *R, const double *t)
{
	return R->K ? cls_weight(t, R->K) : t[1];
}

static double node_impurity(const run *R, const double *t)
{
	return R->K ? cls_impurity(t, R->K, cls_weight(t, R->K), R->job->criterion) :
		      reg_impurity(t);
}

static bool node_terminal(const run *R, int depth, const double *t, double imp)
{
	const gwb_rf_params *p = R->job->p;
	bool pure = R->K ? imp <= GWB_RF_PURE_EPS :
			   imp <= GWB_RF_PURE_EPS * (1 + (t[1] > 0 ? t[3] / t[1] : 0));

	return depth >= p->depth || t[0] < p->min_split || t[0] < 2.0 * p->min_leaf || pure ||
	       !(node_weight(R, t) > 0);
}

/* ---- histograms ----------------------------------------------------------------------------- */

/* One feature's histogram of the rows cur[b..e) into h ((nbins+1) x C, zeroed here). Both
 * layouts visit the rows in the same order with the same values, so they give the same sums. */
static void build_feature(const run *R, const tctx *tc, size_t b, size_t e, int j, double *h)
{
	int C = R->C, nc = R->q->nbins[j] + 1;
	size_t i;

	memset(h, 0, (size_t)nc * (size_t)C * sizeof(double));
	if (R->rm) {
		const uint8_t *rc = tc->rc + j;
		const float *pw = tc->pw;
		const ylab *py = tc->py;
		size_t F = (size_t)R->F;
		if (R->K) {
			for (i = b; i < e; i++) {
				double *hb = h + (size_t)rc[i * F] * (size_t)C;
				hb[0] += 1;
				hb[1 + py[i].l] += pw[i];
			}
		} else {
			for (i = b; i < e; i++) {
				double *hb = h + (size_t)rc[i * F] * 3;
				double wr = pw[i];
				hb[0] += 1;
				hb[1] += wr;
				hb[2] += wr * py[i].v;
			}
		}
		return;
	}
	{
		const uint8_t *cj = R->q->codes + (size_t)j * R->rows;
		const uint32_t *rows = tc->cur;
		const float *w = tc->w;
		if (R->K) {
			const int32_t *y = R->y;
			for (i = b; i < e; i++) {
				uint32_t r = rows[i];
				double *hb = h + (size_t)cj[r] * (size_t)C;
				hb[0] += 1;
				hb[1 + y[r]] += w[r];
			}
		} else {
			const float *yc = R->yc;
			for (i = b; i < e; i++) {
				uint32_t r = rows[i];
				double *hb = h + (size_t)cj[r] * 3;
				double wr = w[r];
				hb[0] += 1;
				hb[1] += wr;
				hb[2] += wr * yc[r];
			}
		}
	}
}

/* ---- split search --------------------------------------------------------------------------- */

typedef struct best {
	double gain, nl;
	int feat, tbin, nanl;
	bool found;
} best;

/* Evaluate every candidate of feature j whose histogram is h ((nbins+1) x C) in the order of
 * forest.h. Returns false when the feature is constant in the node (one code holds all rows). */
static bool eval_feature(const run *R, const fnode *nd, int j, const double *h, double *buf,
			 best *bs)
{
	const gwb_rf_job *job = R->job;
	int nb = R->q->nbins[j], C = R->C, K = R->K, t, c, side, used = 0;
	const double *hn = h + (size_t)nb * (size_t)C, *P = nd->tot;
	double *cum = buf, *left = buf + C, *right = buf + 2 * C;
	double WP = node_weight(R, P), impP = nd->imp;
	double min_leaf = job->p->min_leaf;
	bool has_nan = hn[0] > 0;

	for (t = 0; t <= nb; t++)
		used += h[(size_t)t * (size_t)C] > 0;
	if (used < 2)
		return false;
	memset(cum, 0, (size_t)C * sizeof(double));
	for (t = 0; t < nb; t++) {
		const double *ht = h + (size_t)t * (size_t)C;
		for (c = 0; c < C; c++)
			cum[c] += ht[c];
		/* side 0: NaN goes left; side 1: NaN goes right, tried only when the node has NaN.
		 * The last value bin splits only as "values left, NaN right". */
		for (side = 0; side < 2; side++) {
			double WL, WR, gain;
			if (side == 1 && !has_nan)
				break;
			if (side == 0 && t == nb - 1)
				continue;
			for (c = 0; c < C; c++) {
				left[c] = cum[c] + (side == 0 ? hn[c] : 0);
				right[c] = P[c] - left[c];
			}
			if (left[0] < min_leaf || right[0] < min_leaf)
				continue;
			if (K) {
				double iL, iR;
				WL = cls_weight(left, K);
				WR = cls_weight(right, K);
				if (!(WL > 0) || !(WR > 0))
					continue;
				iL = cls_impurity(left, K, WL, job->criterion);
				iR = cls_impurity(right, K, WR, job->criterion);
				gain = impP - WL / WP * iL - WR / WP * iR;
			} else {
				double SP = P[2];
				WL = left[1];
				WR = right[1];
				if (!(WL > 0) || !(WR > 0))
					continue;
				gain = (left[2] * left[2] / WL + right[2] * right[2] / WR -
					SP * SP / WP) / WP;
			}
			if (!bs->found || gain > bs->gain) {
				bs->found = true;
				bs->gain = gain;
				bs->feat = j;
				bs->tbin = t;
				bs->nanl = has_nan ? side == 0 : WL >= WR;
				bs->nl = left[0];
			}
		}
	}
	return true;
}

/* Step k of node n's lazy Fisher-Yates draw (forest.h): swaps perm[k] with a later entry and
 * returns the k-th feature examined. */
static int draw_feature(uint64_t seed, uint64_t key, int F, int *perm, int k)
{
	uint64_t h = gwb_rng_hash(seed, GWB_RNG_STREAM_FEAT, key, (uint64_t)k);
	int jj = k + (int)(h % (uint64_t)(F - k)), j = perm[jj];

	perm[jj] = perm[k];
	perm[k] = j;
	return j;
}

/* Phase C: node i's split, features in the draw order of forest.h, histograms from the node's
 * full histogram or built one feature at a time. */
static void find_split(void *ctx, size_t i, int tid)
{
	tctx *tc = ctx;
	run *R = tc->R;
	fnode *nd = &tc->fr[i];
	scratch *s = ws_of(tc, tid);
	const gwb_rf_job *job = R->job;
	int F = R->F, k, examined = 0;
	uint64_t seed = job->p->seed, key = ((uint64_t)(tc->tree + job->tree_first) << 32) |
					    (uint64_t)(uint32_t)nd->id;
	best bs = {0};

	nd->split = false;
	if (nd->terminal || tree_dropped(tc))
		return;
	for (k = 0; k < F; k++)
		s->perm[k] = k;
	for (k = 0; k < F && examined < job->mtry; k++) {
		int j = draw_feature(seed, key, F, s->perm, k);
		const double *hist;
		if (!nd->hist && k >= nd->npre && tree_dropped(tc))
			return;
		if (nd->hist) {
			hist = nd->hist + (size_t)R->q->offset[j] * (size_t)R->C;
		} else if (k < nd->npre) {
			hist = nd->pre + (size_t)k * (size_t)R->maxcodes * (size_t)R->C;
		} else {
			build_feature(R, tc, nd->b, nd->e, j, s->fh);
			hist = s->fh;
		}
		if (eval_feature(R, nd, j, hist, s->cum, &bs))
			examined++;
	}
	if (!bs.found)
		return;
	if (node_weight(R, nd->tot) / tc->root_w * bs.gain < job->p->min_impurity_decrease - 1e-12)
		return;
	nd->split = true;
	nd->feat = bs.feat;
	nd->tbin = bs.tbin;
	nd->nanl = bs.nanl;
	nd->gain = bs.gain;
	nd->nl = (size_t)bs.nl;
}

/* Phase C0 (node-parallel mode, few nodes): the histograms of a node's first draws, one
 * (node, draw) item at a time, so that a level of one or two nodes still uses every worker. */
static void prebuild_item(void *ctx, size_t it, int tid)
{
	tctx *tc = ctx;
	run *R = tc->R;
	fnode *nd = &tc->fr[tc->plist[it / (size_t)R->job->mtry]];
	int k = (int)(it % (size_t)R->job->mtry), F = R->F, i, j = 0;
	scratch *s = ws_of(tc, tid);
	uint64_t key = ((uint64_t)(tc->tree + R->job->tree_first) << 32) | (uint64_t)(uint32_t)nd->id;

	for (i = 0; i < F; i++)
		s->perm[i] = i;
	for (i = 0; i <= k; i++)
		j = draw_feature(R->job->p->seed, key, F, s->perm, i);
	build_feature(R, tc, nd->b, nd->e, j,
		      nd->pre + (size_t)k * (size_t)R->maxcodes * (size_t)R->C);
}

/* Phase A: full histograms, one (node, feature) item at a time. */
static void build_full_item(void *ctx, size_t it, int tid)
{
	tctx *tc = ctx;
	run *R = tc->R;
	fnode *nd = &tc->fr[tc->blist[it / (size_t)R->F]];
	int j = (int)(it % (size_t)R->F);
	(void)tid;

	build_feature(R, tc, nd->b, nd->e, j,
		      nd->hist + (size_t)R->q->offset[j] * (size_t)R->C);
}

/* Phase B: the larger sibling = parent - smaller, in the parent's buffer it took over. */
static void subtract_item(void *ctx, size_t i, int tid)
{
	tctx *tc = ctx;
	fnode *nd = &tc->fr[i];
	const double *sh;
	size_t n, k;
	(void)tid;

	if (nd->mode != HIST_SUB)
		return;
	sh = tc->fr[nd->sib].hist;
	n = (size_t)tc->R->T * (size_t)tc->R->C;
	if (tc->R->K) {
		/* rows and class weights: never negative (weights may carry rounding) */
		for (k = 0; k < n; k++) {
			double v = nd->hist[k] - sh[k];
			nd->hist[k] = v > 0 ? v : 0;
		}
	} else {
		/* rows and weights clamped at 0; sums of w*y keep their sign */
		for (k = 0; k < n; k += 3) {
			double c = nd->hist[k] - sh[k], w = nd->hist[k + 1] - sh[k + 1];
			nd->hist[k] = c > 0 ? c : 0;
			nd->hist[k + 1] = w > 0 ? w : 0;
			nd->hist[k + 2] -= sh[k + 2];
		}
	}
}

static void fail_run(run *R, gwb_status st);

/* ---- partition ------------------------------------------------------------------------------ */

/* Phase D: rows of split node i into next[], left then right (stable), and the children's
 * exact totals. */
static void partition_item(void *ctx, size_t i, int tid)
{
	tctx *tc = ctx;
	run *R = tc->R;
	fnode *nd = &tc->fr[i];
	const uint8_t *cj;
	const uint32_t *cur = tc->cur;
	uint32_t *next = tc->next;
	const float *w = tc->w;
	size_t k, lb, rb;
	double *tl, *tr;
	int K = R->K, Ct = R->Ct, nanc;
	uint8_t t, nanl;
	(void)tid;

	if (!nd->split)
		return;
	cj = R->q->codes + (size_t)nd->feat * R->rows;
	nanc = R->q->nbins[nd->feat];
	t = (uint8_t)nd->tbin;
	nanl = (uint8_t)nd->nanl;
	tl = tc->tot_next + nd->fl * (size_t)Ct;
	tr = tl + Ct;
	memset(tl, 0, 2 * (size_t)Ct * sizeof(double));
	lb = nd->b;
	rb = nd->b + nd->nl;
	if (R->rm) {
		size_t F = (size_t)R->F;
		const uint8_t *rc = tc->rc;
		for (k = nd->b; k < nd->e; k++) {
			uint8_t c = rc[k * F + (size_t)nd->feat];
			bool go_left = c == nanc ? nanl : c <= t;
			double wr = tc->pw[k], *tt = go_left ? tl : tr;
			size_t at = go_left ? lb++ : rb++;
			if (at >= nd->e)
				break;   /* cannot happen: the histogram's counts are exact */
			next[at] = cur[k];
			memcpy(tc->rcn + at * F, rc + k * F, F);
			tc->pwn[at] = tc->pw[k];
			tc->pyn[at] = tc->py[k];
			tt[0] += 1;
			if (K) {
				tt[1 + tc->py[k].l] += wr;
			} else {
				double y = tc->py[k].v;
				tt[1] += wr;
				tt[2] += wr * y;
				tt[3] += wr * y * y;
			}
		}
		goto check;
	}
	for (k = nd->b; k < nd->e; k++) {
		uint32_t r = cur[k];
		uint8_t c = cj[r];
		bool go_left = c == nanc ? nanl : c <= t;
		double wr = w[r], *tt = go_left ? tl : tr;
		size_t at = go_left ? lb++ : rb++;
		if (at >= nd->e)
			break;   /* cannot happen: the histogram's counts are exact; caught below */
		next[at] = r;
		tt[0] += 1;
		if (K) {
			tt[1 + R->y[r]] += wr;
		} else {
			double y = R->yc[r];
			tt[1] += wr;
			tt[2] += wr * y;
			tt[3] += wr * y * y;
		}
	}
check:
	if (lb != nd->b + nd->nl || rb != nd->e) {
		gwb_error(GWB_EINVAL, "rf.train: internal error: tree %d node %d partition does not "
			  "match its histogram (%zu left, expected %zu)", tc->tree + 1, nd->id,
			  lb - nd->b, nd->nl);
		fail_run(R, GWB_EINVAL);
		nd->split = false;
	}
}

/* ---- one tree ------------------------------------------------------------------------------- */

static void set_node(run *R, tree_out *o, int32_t id, const double *t, double imp)
{
	float *v = o->value + (size_t)id * (size_t)o->outputs;
	int k;

	o->feature[id] = -1;
	o->left[id] = o->right[id] = -1;
	o->tbin[id] = 0;
	o->nanl[id] = 0;
	o->thr[id] = 0;
	o->count[id] = (int32_t)t[0];
	o->imp[id] = (float)imp;
	o->weight[id] = node_weight(R, t);
	if (R->K) {
		double W = o->weight[id];
		/* W = 0 only for the root of a tree that drew no row: it knows nothing */
		for (k = 0; k < R->K; k++)
			v[k] = W > 0 ? (float)(t[1 + k] / W) : 1.0f / (float)R->K;
	} else {
		v[0] = (float)((t[1] > 0 ? t[2] / t[1] : 0) + R->job->y_center);
	}
}

/* Frontier arrays with room for n nodes (new entries zeroed). */
typedef struct level_bufs {
	fnode *fr, *nf;
	double *tot, *tot_next;
	size_t cap;
} level_bufs;

static bool level_reserve(level_bufs *lb, size_t n, int Ct)
{
	size_t c = lb->cap ? lb->cap : 16, i;
	void *a, *b, *d, *e;

	if (n <= lb->cap)
		return true;
	while (c < n)
		c *= 2;
	a = realloc(lb->fr, c * sizeof(fnode));
	if (a)
		lb->fr = a;
	b = realloc(lb->nf, c * sizeof(fnode));
	if (b)
		lb->nf = b;
	d = realloc(lb->tot, c * (size_t)Ct * sizeof(double));
	if (d) {
		/* fr[i].tot points into tot: re-point after a move */
		for (i = 0; a && i < lb->cap; i++)
			if (lb->fr[i].tot)
				lb->fr[i].tot = (double *)d + i * (size_t)Ct;
		lb->tot = d;
	}
	e = realloc(lb->tot_next, c * (size_t)Ct * sizeof(double));
	if (e)
		lb->tot_next = e;
	if (!a || !b || !d || !e)
		return false;
	memset(lb->fr + lb->cap, 0, (c - lb->cap) * sizeof(fnode));
	memset(lb->nf + lb->cap, 0, (c - lb->cap) * sizeof(fnode));
	lb->cap = c;
	return true;
}

static gwb_status grow_tree(run *R, int tree, scratch *ws, int nworkers)
{
	const gwb_rf_job *job = R->job;
	const gwb_rf_params *p = job->p;
	tree_out *o = &R->out[tree];
	size_t i, n = 0, nfr, histsz = (size_t)R->T * (size_t)R->C;
	int Ct = R->Ct, depth;
	level_bufs lb = {0};
	bool full_mode = R->subtract && 2.5 * job->mtry >= R->F;
	gwb_status st = GWB_OK;
	tctx tc = {.R = R, .tree = tree, .ws = ws, .nworkers = nworkers};

	tc.cur = ws[0].ra;
	tc.next = ws[0].rb;
	tc.w = ws[0].w;
	tc.rc = ws[0].ca;
	tc.rcn = ws[0].cb;
	tc.pw = ws[0].pwa;
	tc.pwn = ws[0].pwb;
	tc.py = ws[0].pya;
	tc.pyn = ws[0].pyb;
	o->outputs = R->K ? R->K : 1;
	/* Bootstrap weights and the in-bag rows, ascending. */
	for (i = 0; i < R->rows; i++) {
		int c = gwb_rf_boot_count(p->seed, p->bootstrap, (uint64_t)(tree + job->tree_first), i);
		float w = 0;
		if (c) {
			w = (float)c;
			if (p->sample_weight)
				w *= p->sample_weight[i];
			if (R->K)
				w *= (float)job->class_weight[R->y[i]];
			tc.cur[n++] = (uint32_t)i;
		}
		tc.w[i] = w;
	}
	if (!level_reserve(&lb, 16, Ct) || !tree_out_reserve(o, 1) ||
	    !(tc.blist = malloc(16 * sizeof(size_t))) || !(tc.plist = malloc(16 * sizeof(size_t))))
		goto oom;
	/* The root. */
	memset(lb.tot, 0, (size_t)Ct * sizeof(double));
	for (i = 0; i < n; i++) {
		uint32_t r = tc.cur[i];
		double w = tc.w[r], *t = lb.tot;
		t[0] += 1;
		if (R->K) {
			t[1 + R->y[r]] += w;
		} else {
			t[1] += w;
			t[2] += w * R->yc[r];
			t[3] += w * R->yc[r] * R->yc[r];
		}
	}
	tc.root_w = node_weight(R, lb.tot);
	if (R->rm) {
		/* pack the in-bag rows: codes row-major, weights, targets */
		size_t F = (size_t)R->F;
		int j;
		for (j = 0; j < R->F; j++) {
			const uint8_t *cj = R->q->codes + (size_t)j * R->rows;
			if (tree_dropped(&tc))
				goto out_free;
			for (i = 0; i < n; i++)
				tc.rc[i * F + (size_t)j] = cj[tc.cur[i]];
		}
		for (i = 0; i < n; i++) {
			uint32_t r = tc.cur[i];
			tc.pw[i] = tc.w[r];
			if (R->K)
				tc.py[i].l = R->y[r];
			else
				tc.py[i].v = R->yc[r];
		}
	}
	o->n = 1;
	nfr = 1;
	lb.fr[0].id = 0;
	lb.fr[0].b = 0;
	lb.fr[0].e = n;
	lb.fr[0].tot = lb.tot;
	lb.fr[0].imp = node_impurity(R, lb.tot);
	set_node(R, o, 0, lb.tot, lb.fr[0].imp);
	lb.fr[0].terminal = n == 0 || node_terminal(R, 0, lb.tot, lb.fr[0].imp);
	lb.fr[0].mode = full_mode && !lb.fr[0].terminal ? HIST_BUILD : HIST_SAMPLED;

	for (depth = 0; nfr > 0; depth++) {
		size_t nsplit = 0, nnext = 0, nb = 0;
		fnode *fr;
		if (gwb_intr_pending()) {
			st = GWB_EINTR;
			goto out_free;
		}
		if (nworkers > 1 && p->progress)   /* one tree at a time: report its levels */
			gwb_progress_update(tree + (double)depth / (p->depth + 1), NULL, 0);
		if (atomic_load(&R->failed)) {
			st = (gwb_status)atomic_load(&R->failed);
			goto out_free;
		}
		if (job->trees && job->trees->taken(job->trees->ctx, tree)) {
			R->dropped[tree] = 1;  /* hybrid: the GPU took this tree */
			goto out_free;
		}
		fr = lb.fr;
		tc.fr = fr;
		tc.nfr = nfr;
		/* A: full histograms to build, as (node, feature) items. */
		for (i = 0; i < nfr; i++)
			if (fr[i].mode == HIST_BUILD) {
				if (!(fr[i].hist = malloc(histsz * sizeof(double))))
					goto oom;
				tc.blist[nb++] = i;
			}
		exec(nworkers, nb * (size_t)R->F, build_full_item, &tc);
		/* C0: few sampled nodes and several workers: prebuild their first draws. */
		if (nworkers > 1) {
			size_t np = 0;
			for (i = 0; i < nfr; i++)
				np += fr[i].mode == HIST_SAMPLED && !fr[i].terminal;
			if (np > 0 && np < 2 * (size_t)nworkers) {
				size_t each = (size_t)job->mtry * (size_t)R->maxcodes * (size_t)R->C;
				np = 0;
				for (i = 0; i < nfr; i++) {
					if (fr[i].mode != HIST_SAMPLED || fr[i].terminal)
						continue;
					if (!(fr[i].pre = malloc(each * sizeof(double))))
						goto oom;
					fr[i].npre = job->mtry;
					tc.plist[np++] = i;
				}
				exec(nworkers, np * (size_t)job->mtry, prebuild_item, &tc);
			}
		}
		/* B: subtraction; C: splits. */
		exec(nworkers, nfr, subtract_item, &tc);
		exec(nworkers, nfr, find_split, &tc);
		if (tree_dropped(&tc))
			goto out_free;  /* (find_split may have stopped short) */
		for (i = 0; i < nfr; i++) {
			free(fr[i].pre);
			fr[i].pre = NULL;
			fr[i].npre = 0;
		}
		/* Children ids in breadth-first order. */
		for (i = 0; i < nfr; i++)
			nsplit += fr[i].split;
		if (!level_reserve(&lb, 2 * nsplit, Ct) || !tree_out_reserve(o, o->n + 2 * nsplit))
			goto oom;
		fr = tc.fr = lb.fr;
		tc.tot_next = lb.tot_next;
		for (i = 0; i < nfr; i++) {
			fnode *nd = &fr[i];
			int32_t id = nd->id;
			if (!nd->split)
				continue;
			nd->lid = (int32_t)o->n;
			nd->fl = nnext;
			o->feature[id] = nd->feat;
			o->tbin[id] = (uint8_t)nd->tbin;
			o->thr[id] = gwb_quant_threshold(R->q, nd->feat, nd->tbin);
			o->nanl[id] = (uint8_t)nd->nanl;
			o->left[id] = (int32_t)o->n;
			o->right[id] = (int32_t)o->n + 1;
			o->n += 2;
			nnext += 2;
		}
		/* D: partition rows and sum the children's totals. */
		exec(nworkers, nfr, partition_item, &tc);
		if (atomic_load(&R->failed)) {
			st = (gwb_status)atomic_load(&R->failed);
			goto out_free;
		}
		/* The next frontier, and how each pair gets its histograms. */
		for (i = 0; i < nfr; i++) {
			fnode *nd = &fr[i], *L, *Rn;
			size_t nL, nR;
			int side;
			if (!nd->split) {
				free(nd->hist);
				nd->hist = NULL;
				continue;
			}
			for (side = 0; side < 2; side++) {
				fnode *c = &lb.nf[nd->fl + (size_t)side];
				double *t = lb.tot_next + (nd->fl + (size_t)side) * (size_t)Ct;
				memset(c, 0, sizeof(*c));
				c->id = nd->lid + side;
				c->tot = t;
				c->imp = node_impurity(R, t);
				set_node(R, o, c->id, t, c->imp);
				c->terminal = node_terminal(R, depth + 1, t, c->imp);
				c->mode = HIST_SAMPLED;
			}
			L = &lb.nf[nd->fl];
			Rn = L + 1;
			nL = (size_t)L->tot[0];
			nR = (size_t)Rn->tot[0];
			L->b = nd->b;
			L->e = Rn->b = nd->b + nL;
			Rn->e = nd->e;
			if (nd->hist && !L->terminal && !Rn->terminal) {
				size_t nsmall = nL < nR ? nL : nR;
				double sub = (double)nsmall * R->F + (double)histsz,
				       dir = (double)(nL + nR) * job->mtry;
				if (sub < dir) {
					fnode *sm = nL <= nR ? L : Rn, *bg = nL <= nR ? Rn : L;
					sm->mode = HIST_BUILD;
					bg->mode = HIST_SUB;
					bg->hist = nd->hist;   /* taken over */
					bg->sib = (int32_t)(sm - lb.nf);
					nd->hist = NULL;
				}
			}
			free(nd->hist);
			nd->hist = NULL;
		}
		/* Swap levels. */
		{
			fnode *tf = lb.fr;
			double *tt = lb.tot;
			uint32_t *tu = tc.cur;
			uint8_t *tcb = tc.rc;
			float *tpw = tc.pw;
			ylab *tpy = tc.py;
			tc.rc = tc.rcn;
			tc.rcn = tcb;
			tc.pw = tc.pwn;
			tc.pwn = tpw;
			tc.py = tc.pyn;
			tc.pyn = tpy;
			lb.fr = lb.nf;
			lb.nf = tf;
			lb.tot = lb.tot_next;
			lb.tot_next = tt;
			tc.cur = tc.next;
			tc.next = tu;
			nfr = nnext;
			if (nnext) {
				size_t *bl = realloc(tc.blist, nnext * sizeof(size_t)), *pl;
				if (!bl)
					goto oom;
				tc.blist = bl;
				if (!(pl = realloc(tc.plist, nnext * sizeof(size_t))))
					goto oom;
				tc.plist = pl;
			}
		}
	}
	goto out_free;
oom:
	st = gwb_error(GWB_ENOMEM, "rf.train: out of memory growing tree %d", tree + 1);
out_free:
	for (i = 0; i < lb.cap; i++) {
		free(lb.fr[i].hist);
		free(lb.nf[i].hist);
		free(lb.fr[i].pre);
		free(lb.nf[i].pre);
	}
	free(lb.fr);
	free(lb.nf);
	free(lb.tot);
	free(lb.tot_next);
	free(tc.blist);
	free(tc.plist);
	return st;
}

/* ---- the trainer ---------------------------------------------------------------------------- */

static void fail_run(run *R, gwb_status st)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&R->failed, &expected, (int)st))
		snprintf(R->errmsg, sizeof(R->errmsg), "%s", gwb_errmsg());
}

static void tree_item(void *ctx, size_t t, int tid)
{
	run *R = ctx;
	gwb_status st;
	int done;

	if (atomic_load(&R->failed))
		return;
	st = grow_tree(R, (int)t, &R->ws[tid], 1);
	if (st) {
		fail_run(R, st);
		return;
	}
	R->complete[t] = 1;
	done = atomic_fetch_add(&R->done, 1) + 1;
	if (R->job->p->progress)
		gwb_progress_update(done, NULL, 0);
}

/* A tree source (job->trees, the hybrid's CPU sides): a worker takes trees from it until none
 * is left; a tree another side takes meanwhile is dropped. */
static void source_item(void *ctx, size_t i, int tid)
{
	run *R = ctx;
	const gwb_rf_tree_source *src = R->job->trees;
	gwb_status st;
	int t;

	(void)i;
	for (;;) {
		if (atomic_load(&R->failed))
			return;
		if ((t = src->next(src->ctx)) < 0)
			return;
		st = grow_tree(R, t, &R->ws[tid], 1);
		if (st) {
			fail_run(R, st);
			src->stop(src->ctx);
			return;
		}
		if (R->dropped[t]) {
			tree_out_free(&R->out[t]);
			memset(&R->out[t], 0, sizeof(R->out[t]));
		}
		src->done(src->ctx, t, R->dropped[t] != 0);
	}
}

static void scratch_free(scratch *s)
{
	free(s->ra);
	free(s->rb);
	free(s->w);
	free(s->ca);
	free(s->cb);
	free(s->pwa);
	free(s->pwb);
	free(s->pya);
	free(s->pyb);
	free(s->fh);
	free(s->perm);
	free(s->cum);
}

gwb_status gwb_rf_train_cpu(const gwb_rf_job *job, gwb_forest *f)
{
	run R;
	const gwb_quant *q = job->q;
	const gwb_dataset *d = job->d;
	double t0 = gwb_now();
	size_t i, total = 0;
	int t, j, nt, maxcodes = 0, threads = job->threads > 0 ? job->threads : gwb_cpu_count();
	bool tree_parallel;

	if (threads > 256)   /* gwb_parallel_items' limit; each worker holds rows x 12 bytes */
		threads = 256;
	tree_parallel = job->p->trees >= threads || job->trees;
	gwb_status st = GWB_OK;

	memset(&R, 0, sizeof(R));
	if (d->rows >= UINT32_MAX)
		return gwb_error(GWB_EINVAL, "rf.train: the CPU trainer takes up to %u rows (got %zu)",
				 UINT32_MAX - 1, d->rows);
	R.job = job;
	R.q = q;
	R.F = d->features;
	R.K = d->task == GWB_TASK_CLASSIFICATION ? d->classes : 0;
	R.C = R.K ? 1 + R.K : 3;
	R.Ct = R.K ? 1 + R.K : 4;
	R.T = q->offset[R.F];
	R.rows = d->rows;
	R.y = d->y;
	R.workers = tree_parallel ? (threads < job->p->trees ? threads : job->p->trees) : threads;
	if (job->trees)
		R.workers = threads;
	atomic_init(&R.done, 0);
	atomic_init(&R.failed, 0);
	for (j = 0; j < R.F; j++)
		if (q->nbins[j] + 1 > maxcodes)
			maxcodes = q->nbins[j] + 1;
	R.maxcodes = maxcodes;
	{
		double bytes = (double)d->rows * (R.F + 8) * 2 * (tree_parallel ? R.workers : 1);
		R.subtract = gwb_switch_on(GWB_SW_RF_SUBTRACT);
		/* Row-major copies cost F bytes per row and level to move; they pay while F is small
		 * next to the gathers they save, and while they fit in memory. */
		R.rm = R.F <= 256 && bytes <= 2e9 && gwb_switch_on(GWB_SW_RF_ROWMAJOR);
	}
	R.out = calloc((size_t)job->p->trees, sizeof(tree_out));
	R.ws = calloc((size_t)R.workers, sizeof(scratch));
	R.dropped = calloc((size_t)job->p->trees, 1);
	R.complete = calloc((size_t)job->p->trees, 1);
	if (!R.out || !R.ws || !R.dropped || !R.complete)
		goto oom;
	if (!R.K) {
		if (!(R.yc = malloc((d->rows + 1) * sizeof(float))))
			goto oom;
		for (i = 0; i < d->rows; i++)
			R.yc[i] = (float)(d->yr[i] - job->y_center);
	}
	for (t = 0; t < R.workers; t++) {
		scratch *s = &R.ws[t];
		bool rows = tree_parallel || t == 0;
		s->fh = malloc((size_t)maxcodes * (size_t)R.C * sizeof(double));
		s->perm = malloc((size_t)R.F * sizeof(int));
		s->cum = malloc(3 * (size_t)R.C * sizeof(double));
		if (rows) {
			s->ra = malloc((d->rows + 1) * sizeof(uint32_t));
			s->rb = malloc((d->rows + 1) * sizeof(uint32_t));
			s->w = malloc((d->rows + 1) * sizeof(float));
		}
		if (!s->fh || !s->perm || !s->cum || (rows && (!s->ra || !s->rb || !s->w)))
			goto oom;
		if (rows && R.rm) {
			s->ca = malloc((d->rows + 1) * (size_t)R.F);
			s->cb = malloc((d->rows + 1) * (size_t)R.F);
			s->pwa = malloc((d->rows + 1) * sizeof(float));
			s->pwb = malloc((d->rows + 1) * sizeof(float));
			s->pya = malloc((d->rows + 1) * sizeof(ylab));
			s->pyb = malloc((d->rows + 1) * sizeof(ylab));
			if (!s->ca || !s->cb || !s->pwa || !s->pwb || !s->pya || !s->pyb)
				goto oom;
		}
	}
	if (job->p->progress)
		gwb_progress_begin("rf.train", job->p->trees);
	if (job->trees) {
		gwb_parallel_items(R.workers, (size_t)R.workers, source_item, &R);
	} else if (tree_parallel) {
		gwb_parallel_items(R.workers, (size_t)job->p->trees, tree_item, &R);
	} else {
		for (t = 0; t < job->p->trees && !atomic_load(&R.failed); t++) {
			st = grow_tree(&R, t, R.ws, R.workers);
			if (st)
				fail_run(&R, st);
			else
				R.complete[t] = 1;
			if (!st && job->p->progress)
				gwb_progress_update(t + 1, NULL, 0);
		}
	}
	if (job->p->progress)
		gwb_progress_end();
	st = (gwb_status)atomic_load(&R.failed);
	nt = job->p->trees;
	if (st == GWB_EINTR && job->p->keep && !job->sched) {
		/* keep = true: the longest run of finished trees 0..k-1 (the forest of k trees) */
		for (nt = 0; nt < job->p->trees && R.complete[nt]; nt++)
			;
		if (nt > 0) {
			gwb_intr_clear();  /* handled: the caller gets the trees grown so far */
			st = GWB_OK;
			f->trees = nt;
		}
	}
	if (st == GWB_EINTR) {
		st = gwb_error(GWB_EINTR, "rf.train: interrupted after %d of %d trees; no forest was "
			       "made%s", atomic_load(&R.done), job->p->trees,
			       job->p->keep ? " (keep = true: no tree had finished)" :
			       " (keep = true keeps the trees finished so far)");
		goto out_free;
	} else if (st) {
		st = gwb_error(st, "%s", R.errmsg);
		goto out_free;
	}
	/* Concatenate the trees in order (hybrid: only this side's; the others have no nodes
	 * here, and the hybrid trainer puts both sides together). */
	if (job->trees) {
		for (t = 0; t < job->p->trees; t++)
			if (R.out[t].n && !job->trees->kept(job->trees->ctx, t)) {
				tree_out_free(&R.out[t]);
				memset(&R.out[t], 0, sizeof(R.out[t]));
			}
	}
	for (t = 0; t < nt; t++)
		total += R.out[t].n;
	if ((st = gwb_forest_alloc_nodes(f, total)))
		goto out_free;
	f->tree_offset[0] = 0;
	for (t = 0, total = 0; t < nt; t++) {
		tree_out *o = &R.out[t];
		size_t n = o->n, K = (size_t)f->outputs;
		if (!n) {   /* hybrid: another side's tree (no arrays here) */
			f->tree_offset[t + 1] = (int64_t)total;
			continue;
		}
		memcpy(f->feature + total, o->feature, n * sizeof(int32_t));
		memcpy(f->left + total, o->left, n * sizeof(int32_t));
		memcpy(f->right + total, o->right, n * sizeof(int32_t));
		memcpy(f->count + total, o->count, n * sizeof(int32_t));
		memcpy(f->threshold_bin + total, o->tbin, n);
		memcpy(f->nan_left + total, o->nanl, n);
		memcpy(f->threshold + total, o->thr, n * sizeof(float));
		memcpy(f->impurity + total, o->imp, n * sizeof(float));
		memcpy(f->weight + total, o->weight, n * sizeof(double));
		memcpy(f->value + total * K, o->value, n * K * sizeof(float));
		total += n;
		f->tree_offset[t + 1] = (int64_t)total;
	}
	f->timing.grow_ms = (gwb_now() - t0) * 1e3;
	goto out_free;
oom:
	st = gwb_error(GWB_ENOMEM, "rf.train: out of memory for the trainer's buffers (%zu rows)",
		       d->rows);
out_free:
	if (R.out)
		for (t = 0; t < job->p->trees; t++)
			tree_out_free(&R.out[t]);
	if (R.ws)
		for (t = 0; t < R.workers; t++)
			scratch_free(&R.ws[t]);
	free(R.out);
	free(R.ws);
	free(R.yc);
	free(R.dropped);
	free(R.complete);
	return st;
}
