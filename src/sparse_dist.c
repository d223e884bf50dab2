/* sparse_dist.c - a sparse matrix's rows dealt to MPI ranks (sparse_dist.h): the partition,
 * each rank's local block (D: the columns of its own x slice, renumbered from 0; O: the rows
 * that read other ranks' entries, their columns renumbered into the halo buffer, ghosts in
 * ascending global order and so grouped by owner), the lists of what to send to whom (the
 * ranks' ghost lists swapped once by an all-gather) and the product: pack and post the halo
 * (mpi.c's exchange), D x on the pool's threads while it moves, then O g added to the rows
 * that need it. Uses sparse.c, pool.c and mpi.c. */
#define _GNU_SOURCE
#include "sparse_dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "pool.h"

struct gwb_csr_dist {
	int rank, size;
	int64_t nrows, nin;     /* this rank's rows; its slice of x */
	gwb_csr *D;             /* nrows x nin */
	gwb_csr *O;             /* nb x nghost: the rows with halo entries only */
	int64_t *orow;          /* O's row r is local row orow[r] */
	int64_t nghost;
	int nrecv, nsend;       /* neighbours this rank receives from, sends to */
	int *rfrom, *sto;
	int64_t *roff, *soff;   /* ghost / send ranges per neighbour (nrecv+1, nsend+1) */
	int64_t *sidx;          /* local x indices to send, neighbour by neighbour */
	double *sbuf, *rbuf, *gbuf;  /* packed sends, received halo, halo column-major */
	int capb;               /* columns the buffers hold */
	double **sp, **rp;      /* per-neighbour pointers for the exchange */
	size_t *sc, *rc;
	gwb_mpi_xchg *x;
	const char *fn;
};

gwb_status gwb_csr_ranks_check(gwb_csr *A, const char *fn)
{
	struct who {
		int64_t rows, cols, nnz;
		uint64_t sum;
		char host[64];
	} me, *all = NULL;
	int size = gwb_mpi_size();
	gwb_status st;

	if (size < 2)
		return GWB_OK;
	memset(&me, 0, sizeof(me));
	me.rows = A->rows;
	me.cols = A->cols;
	me.nnz = A->nnz;
	me.sum = gwb_csr_checksum(A);
	snprintf(me.host, sizeof(me.host), "%s", gwb_mpi_host());
	if ((st = gwb_mpi_gather(&me, sizeof(me), 0, true, (void **)&all, NULL)))
		return st;
	for (int r = 1; r < size; r++)
		if (all[r].rows != all[0].rows || all[r].cols != all[0].cols ||
		    all[r].nnz != all[0].nnz || all[r].sum != all[0].sum) {
			st = gwb_error(GWB_EINVAL, "%s: the ranks hold different matrices: rank %d (%s) "
				       "has %lldx%lld with %lld nonzeros (checksum %016llx), rank 0 "
				       "(%s) %lldx%lld with %lld (%016llx); make the same matrix on "
				       "every rank (or ranks = \"self\")", fn, r, all[r].host,
				       (long long)all[r].rows, (long long)all[r].cols,
				       (long long)all[r].nnz, (unsigned long long)all[r].sum,
				       all[0].host, (long long)all[0].rows, (long long)all[0].cols,
				       (long long)all[0].nnz, (unsigned long long)all[0].sum);
			break;
		}
	free(all);
	return st;
}

static int64_t row_weight(const gwb_csr *A, int64_t i)
{
	return gwb_csr_rp(A, i) + i;
}

void gwb_csr_dist_partition(const gwb_csr *A, int size, int64_t *starts)
{
	int64_t n = A->rows, total = row_weight(A, n);
	starts[0] = 0;
	for (int r = 1; r < size; r++) {
		/* first row whose weight before it reaches r / size of the total */
		int64_t goal = (int64_t)((double)total * r / size), lo = starts[r - 1], hi = n;
		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;
			if (row_weight(A, mid) < goal)
				lo = mid + 1;
			else
				hi = mid;
		}
		starts[r] = lo;
	}
	starts[size] = n;
}

void gwb_csr_dist_free(gwb_csr_dist *D)
{
	if (!D)
		return;
	gwb_csr_free(D->D);
	gwb_csr_free(D->O);
	free(D->orow);
	free(D->rfrom);
	free(D->sto);
	free(D->roff);
	free(D->soff);
	free(D->sidx);
	free(D->sbuf);
	free(D->rbuf);
	free(D->gbuf);
	free(D->sp);
	free(D->rp);
	free(D->sc);
	free(D->rc);
	gwb_mpi_xchg_free(D->x);
	free(D);
}

static inline void put_rp(gwb_csr *A, int64_t i, int64_t v)
{
	if (A->wide)
		A->rp64[i] = v;
	else
		A->rp32[i] = (int32_t)v;
}

static inline void put_ci(gwb_csr *A, int64_t p, int64_t v)
{
	if (A->wide)
		A->ci64[p] = v;
	else
		A->ci32[p] = (int32_t)v;
}

/* rank owning global index c of a vector dealt by starts (size + 1 entries) */
static int owner(const int64_t *starts, int size, int64_t c)
{
	int lo = 0, hi = size - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (starts[mid] <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

gwb_status gwb_csr_dist_new(const gwb_csr *A, const int64_t *rows, const int64_t *cols,
			    const char *fn, gwb_csr_dist **out)
{
	gwb_csr_dist *D;
	gwb_status st = GWB_OK;
	int size = gwb_mpi_size(), rank = gwb_mpi_rank();
	int64_t rlo = rows[rank], rhi = rows[rank + 1], clo = cols[rank], chi = cols[rank + 1];
	int64_t nd = 0, no = 0, nb = 0, *mark = NULL, *ghost = NULL, *all = NULL;
	size_t *lens = NULL;

	*out = NULL;
	if (!(D = calloc(1, sizeof(*D))))
		return gwb_error(GWB_ENOMEM, "%s: out of memory", fn);
	D->rank = rank;
	D->size = size;
	D->fn = fn;
	D->nrows = rhi - rlo;
	D->nin = chi - clo;
	/* count the two parts and mark the ghost columns */
	if (!(mark = calloc((size_t)A->cols + 1, sizeof(int64_t)))) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory for the halo plan", fn);
		goto out;
	}
	for (int64_t i = rlo; i < rhi; i++) {
		bool halo = false;
		for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++) {
			int64_t c = gwb_csr_ci(A, p);
			if (c >= clo && c < chi) {
				nd++;
			} else {
				no++;
				mark[c] = 1;
				halo = true;
			}
		}
		nb += halo;
	}
	for (int64_t c = 0; c < A->cols; c++)
		if (mark[c])
			D->nghost++;
	if (!(ghost = malloc((size_t)(D->nghost + 1) * sizeof(int64_t)))) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory for the halo plan", fn);
		goto out;
	}
	for (int64_t c = 0, g = 0; c < A->cols; c++)
		if (mark[c]) {
			ghost[g] = c;
			mark[c] = g++;   /* now the ghost's index */
		}
	if ((st = gwb_csr_alloc(D->nrows, D->nin, nd, false, &D->D)) ||
	    (st = gwb_csr_alloc(nb, D->nghost, no, false, &D->O)))
		goto out;
	if (!(D->orow = malloc((size_t)(nb + 1) * sizeof(int64_t)))) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory for the halo plan", fn);
		goto out;
	}
	{
		int64_t pd = 0, po = 0, r = 0;
		for (int64_t i = rlo; i < rhi; i++) {
			bool halo = false;
			put_rp(D->D, i - rlo, pd);
			for (int64_t p = gwb_csr_rp(A, i); p < gwb_csr_rp(A, i + 1); p++) {
				int64_t c = gwb_csr_ci(A, p);
				if (c >= clo && c < chi) {
					put_ci(D->D, pd, c - clo);
					D->D->val[pd++] = A->val[p];
				} else {
					if (!halo) {
						put_rp(D->O, r, po);
						D->orow[r] = i - rlo;
						halo = true;
					}
					put_ci(D->O, po, mark[c]);  /* ascending: ghosts are sorted */
					D->O->val[po++] = A->val[p];
				}
			}
			if (halo)
				put_rp(D->O, ++r, po);
		}
		put_rp(D->D, D->nrows, pd);
		if (!nb)
			put_rp(D->O, 0, 0);
	}
	/* receives: the ghosts grouped by owner (ascending order groups them) */
	D->rfrom = malloc((size_t)size * sizeof(int));
	D->sto = malloc((size_t)size * sizeof(int));
	D->roff = malloc((size_t)(size + 1) * sizeof(int64_t));
	D->soff = malloc((size_t)(size + 1) * sizeof(int64_t));
	D->sp = calloc((size_t)size, sizeof(double *));
	D->rp = calloc((size_t)size, sizeof(double *));
	D->sc = calloc((size_t)size, sizeof(size_t));
	D->rc = calloc((size_t)size, sizeof(size_t));
	lens = calloc((size_t)size, sizeof(size_t));
	if (!D->rfrom || !D->sto || !D->roff || !D->soff || !D->sp || !D->rp || !D->sc || !D->rc ||
	    !lens) {
		st = gwb_error(GWB_ENOMEM, "%s: out of memory for the halo plan", fn);
		goto out;
	}
	D->roff[0] = 0;
	for (int64_t g = 0; g < D->nghost;) {
		int q = owner(cols, size, ghost[g]);
		int64_t e = g;
		while (e < D->nghost && ghost[e] < cols[q + 1])
			e++;
		D->rfrom[D->nrecv] = q;
		D->roff[++D->nrecv] = e;
		g = e;
	}
	/* sends: every rank's ghost list to every rank; the part in my slice is what I send */
	if ((st = gwb_mpi_gather(ghost, (size_t)D->nghost * sizeof(int64_t), 0, true,
				 (void **)&all, lens)))
		goto out;
	{
		int64_t at = 0, total = 0;
		for (int q = 0; q < size; q++)
			total += (int64_t)(lens[q] / sizeof(int64_t));
		if (!(D->sidx = malloc((size_t)(total + 1) * sizeof(int64_t)))) {
			st = gwb_error(GWB_ENOMEM, "%s: out of memory for the halo plan", fn);
			goto out;
		}
		D->soff[0] = 0;
		int64_t ns = 0;
		for (int q = 0; q < size; q++) {
			int64_t len = (int64_t)(lens[q] / sizeof(int64_t)), *gq = all + at;
			at += len;
			if (q == rank)
				continue;
			int64_t cnt = 0;
			for (int64_t t = 0; t < len; t++)
				if (gq[t] >= clo && gq[t] < chi)
					D->sidx[ns + cnt++] = gq[t] - clo;
			if (cnt) {
				D->sto[D->nsend] = q;
				ns += cnt;
				D->soff[++D->nsend] = ns;
			}
		}
	}
	st = gwb_mpi_xchg_new(size, &D->x);
out:
	free(mark);
	free(ghost);
	free(all);
	free(lens);
	if (st) {
		gwb_csr_dist_free(D);
		return st;
	}
	*out = D;
	return GWB_OK;
}

void gwb_csr_dist_volume(const gwb_csr_dist *D, int64_t *send, int64_t *recv, int *neighbours,
			 int64_t *nnz)
{
	*send = D->soff[D->nsend] * (int64_t)sizeof(double);
	*recv = D->nghost * (int64_t)sizeof(double);
	*neighbours = D->nsend > D->nrecv ? D->nsend : D->nrecv;
	*nnz = D->D->nnz + D->O->nnz;
}

/* ---- the halo product */

static gwb_status grow(gwb_csr_dist *D, int b)
{
	if (b <= D->capb)
		return GWB_OK;
	int64_t ns = D->soff[D->nsend];
	free(D->sbuf);
	free(D->rbuf);
	free(D->gbuf);
	D->sbuf = malloc(((size_t)ns * b + 1) * sizeof(double));
	D->rbuf = malloc(((size_t)D->nghost * b + 1) * sizeof(double));
	D->gbuf = malloc(((size_t)D->nghost * b + 1) * sizeof(double));
	D->capb = b;
	if (!D->sbuf || !D->rbuf || !D->gbuf) {
		D->capb = 0;
		return gwb_error(GWB_ENOMEM, "%s: out of memory for the halo buffers (%d columns)",
				 D->fn, b);
	}
	return GWB_OK;
}

struct pack_ctx {
	const gwb_csr_dist *D;
	const double *X;
	int b;
};

/* sbuf, neighbour q's part: its cnt entries for column 0, then column 1, ... */
static void pack_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct pack_ctx *c = p;
	const gwb_csr_dist *D = c->D;
	(void)part;
	for (int q = 0; q < D->nsend; q++) {
		int64_t a = D->soff[q], e = D->soff[q + 1], cnt = e - a;
		int64_t s = a > lo ? a : lo, t = e < hi ? e : hi;
		for (int k = 0; k < c->b; k++) {
			const double *x = c->X + (size_t)k * D->nin;
			double *o = D->sbuf + (size_t)a * c->b + (size_t)k * cnt - a;
			for (int64_t i = s; i < t; i++)
				o[i] = x[D->sidx[i]];
		}
	}
}

struct halo_ctx {
	const gwb_csr_dist *D;
	double alpha;
	const double *G, *x;   /* the halo (nghost x b); x for the dot (NULL: none) */
	double *Y;
	int b;
	double dot[128];
};

/* Y(orow[r], k) += alpha (O G)(r, k): two accumulators a row (two multiply-add chains), the
 * index width chosen once, not per entry */
#define HALO_ROWS(RP, CI)                                                                     \
	for (int k = 0; k < c->b; k++) {                                                      \
		const double *g = c->G + (size_t)k * lg;                                      \
		double *y = c->Y + (size_t)k * ld;                                            \
		for (int64_t r = lo; r < hi; r++) {                                           \
			double s0 = 0, s1 = 0;                                                \
			int64_t q = RP[r], e = RP[r + 1];                                     \
			for (; q + 1 < e; q += 2) {                                           \
				s0 += v[q] * g[CI[q]];                                        \
				s1 += v[q + 1] * g[CI[q + 1]];                                \
			}                                                                     \
			if (q < e)                                                            \
				s0 += v[q] * g[CI[q]];                                        \
			double t = c->alpha * (s0 + s1);                                      \
			y[orow[r]] += t;                                                      \
			if (c->x)                                                             \
				d += c->x[orow[r]] * t;                                       \
		}                                                                             \
	}

static void halo_part(void *p, int64_t lo, int64_t hi, int part)
{
	struct halo_ctx *c = p;
	const gwb_csr *O = c->D->O;
	const int64_t *orow = c->D->orow, ld = c->D->nrows, lg = c->D->nghost;
	const double *v = O->val;
	double d = 0;
	if (O->wide) {
		const int64_t *rp = O->rp64, *ci = O->ci64;
		HALO_ROWS(rp, ci)
	} else {
		const int32_t *rp = O->rp32, *ci = O->ci32;
		HALO_ROWS(rp, ci)
	}
	if (part < 128)
		c->dot[part] = d;
}
#undef HALO_ROWS

/* Y = alpha A X + beta X + gamma Z (beta, gamma: square plans only), *dot as for spmm */
static gwb_status dist_product(gwb_csr_dist *D, double alpha, const double *X, double beta,
			       const double *Z, double gamma, double *Y, int b, double *dot)
{
	gwb_status st;
	int64_t ns = D->soff[D->nsend];

	if ((st = grow(D, b)))
		return st;
	if (ns) {
		struct pack_ctx pc = {D, X, b};
		gwb_parallel_for(ns, 1 << 14, pack_part, &pc);
	}
	for (int q = 0; q < D->nsend; q++) {
		D->sp[q] = D->sbuf + (size_t)D->soff[q] * b;
		D->sc[q] = (size_t)(D->soff[q + 1] - D->soff[q]) * b;
	}
	double *rb = b == 1 ? D->gbuf : D->rbuf;
	for (int q = 0; q < D->nrecv; q++) {
		D->rp[q] = rb + (size_t)D->roff[q] * b;
		D->rc[q] = (size_t)(D->roff[q + 1] - D->roff[q]) * b;
	}
	if ((st = gwb_mpi_xchg_start(D->x, D->nsend, D->sto, D->sp, D->sc, D->nrecv, D->rfrom,
				     D->rp, D->rc)))
		return st;
	/* the own block while the halo moves */
	double dd = 0;
	if (dot)
		dd = gwb_csr_spmv_dot(D->D, alpha, X, Y);
	else if (beta != 0 || gamma != 0)
		gwb_csr_spmm_axpby(D->D, alpha, X, beta, Z, gamma, Y, b);
	else
		gwb_csr_spmm_scaled(D->D, alpha, X, Y, b);
	if ((st = gwb_mpi_xchg_wait(D->x)))
		return st;
	if (b > 1) {  /* neighbour blocks (cnt x b each) to one column-major halo */
		for (int q = 0; q < D->nrecv; q++) {
			int64_t a = D->roff[q], cnt = D->roff[q + 1] - a;
			for (int k = 0; k < b; k++)
				memcpy(D->gbuf + (size_t)k * D->nghost + a,
				       D->rbuf + (size_t)a * b + (size_t)k * cnt,
				       (size_t)cnt * sizeof(double));
		}
	}
	if (D->O->rows) {
		struct halo_ctx hc = {D, alpha, D->gbuf, dot ? X : NULL, Y, b, {0}};
		double per = (double)D->O->nnz * b / (double)D->O->rows + 1;
		int64_t grain = (int64_t)(1e5 / per);
		gwb_parallel_for(D->O->rows, grain < 64 ? 64 : grain, halo_part, &hc);
		for (int t = 0; t < 128; t++)
			dd += hc.dot[t];
	}
	if (dot)
		*dot = dd;
	return GWB_OK;
}

gwb_status gwb_csr_dist_spmm(gwb_csr_dist *D, double alpha, const double *X, double *Y, int b,
			     double *dot)
{
	return dist_product(D, alpha, X, 0, NULL, 0, Y, b, dot);
}

gwb_status gwb_csr_dist_spmm_axpby(gwb_csr_dist *D, double alpha, const double *X, double beta,
				   const double *Z, double gamma, double *Y, int b)
{
	if (D->nrows != D->nin)
		return gwb_error(GWB_EINVAL, "%s: a fused step needs a square plan", D->fn);
	return dist_product(D, alpha, X, beta, Z, gamma, Y, b, NULL);
}
