// rf_train.cu - the GPU random forest trainer (see rf.h for the shape, forest.h for the
// contract it follows). One batch of trees advances one level per step; per level:
//   k_nchunk + scan  chunks of R rows per node (all nodes)        -> readback: chunk count
//   k_stats          per-node sums (weight, class weights or S, S2) by chunk
//   k_decide + scan  node records (count, weight, impurity, value), leaf or open; chunks and
//                    global-histogram slots of the open nodes     -> readback: chunks, slots
//   k_hist           histogram + best split (block per chunk; last block of a node searches)
//   k_pcount + scans left counts per chunk, rows kept per node    -> readback: next nodes/rows
//   k_pscatter       stable partition of the rows into the children's segments
//   k_emit, k_tadv   records of this level's splits; the next level's node list
// At the end of a batch the records are reordered tree by tree on the device and copied back.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "common.cuh"
#include "rf.h"
#include "../src/intr.h"
#include "../src/switches.h"

namespace {

constexpr int PERM_MAX = 16384;  // features the per-block draw keeps in shared memory (uint16)

// ---- the counter RNG of forest.h, on the device (bit for bit) --------------------------------

__constant__ uint32_t c_poisson[GWB_RF_POISSON_K];

__device__ __forceinline__ uint64_t d_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

__device__ __forceinline__ uint64_t d_hash(uint64_t seed, uint32_t stream, uint64_t a, uint64_t b)
{
	uint64_t h = d_mix(seed + 0x9e3779b97f4a7c15ULL * ((uint64_t)stream + 1));
	h = d_mix(h ^ (a + 0x632be59bd9b4e019ULL));
	h = d_mix(h ^ (b + 0x8cb92ba72f3d8dd7ULL));
	return h;
}

__device__ __forceinline__ int d_boot(uint64_t seed, int bootstrap, uint64_t t, uint64_t r)
{
	if (!bootstrap)
		return 1;
	uint32_t u = (uint32_t)(d_hash(seed, GWB_RNG_STREAM_BOOT, t, r) >> 32);
	int c = 0;
#pragma unroll
	for (int k = 0; k < GWB_RF_POISSON_K; k++)
		c += u >= c_poisson[k];
	return c;
}

// ---- what every kernel reads ------------------------------------------------------------------

struct Data {
	const uint8_t *codes;  // F x N column-major
	size_t N;
	int F;
	const int *nb;         // value bins per feature; NaN code = nb[f]
	const int32_t *y;      // classification labels, or NULL
	const float *yr;       // regression targets, or NULL
	const float *sw;       // sample weights, or NULL
	const double *cw;      // class weights, or NULL (integer mode)
	double ycenter;
};

struct Cfg {
	int B;          // codes per feature histogram (bins)
	int C;          // classes (0 = regression)
	int CH;         // channels per histogram cell: 1 + C, or 3 (count, w, w*y)
	int ACC;        // per-node sums: C class weights, or 3 (W, S, S2)
	int mtry;
	int R;          // rows per chunk
	int G;          // features per shared-memory histogram group
	int ngroups0;   // ceil(mtry / G)
	int crit;       // GWB_CRIT_GINI / ENTROPY / MSE
	int min_leaf, min_split, depth;
	double min_dec;
	uint64_t seed;
	int tree0;      // global index of the batch's tree 0
	int bootstrap;
	int outputs;
	size_t hist_smem;  // bytes of one group's histogram
	size_t slot_elems; // elements of one global slot (mtry * B * CH)
	int sub;           // sibling subtraction on (every node draws all F features)
	int sub_min;       // rows the larger sibling needs to be derived rather than built
	int gatom;         // switch rf.smem_hist off: multi-chunk nodes add rows straight into
			   // their global histogram (global atomics, no shared staging)
};

// Per-level node arrays (struct of arrays), Q entries.
struct Level {
	int *tree, *id, *begin, *n;
	double *acc;       // Q x ACC
	double *imp, *W, *S;
	int *feat;         // split feature or -1
	uint8_t *thr, *nanl;
	unsigned long long *pk;   // chunk | slot << 32, scanned in place (Q + 1)
	int *nchk;                // chunks of all nodes, scanned in place (Q + 1)
	int *split, *srows, *nl;  // Q + 1 each (scanned in place: split -> rank, srows -> base)
	// sibling subtraction (cfg.sub): mode 0 build, 1 build and keep in a level slot, 2 derive
	// as parent - sibling; hslot: keeps a level slot (flag, scanned in place -> slot id);
	// pslot: the parent's slot in the previous level's buffer, or -1
	int *mode, *hslot, *pslot;
};

struct Rec {
	int *tree, *id, *feat, *left, *right, *count;
	uint8_t *thr, *nanl;
	double *weight;
	float *imp, *value;
};

// The training weight of a row, in float as rf_cpu.c computes it.
__device__ __forceinline__ float row_weight(const Data &d, int row, int c, int y)
{
	float w = (float)c;
	if (d.sw)
		w *= d.sw[row];
	if (d.cw && y >= 0)
		w *= (float)d.cw[y];
	return w;
}

// The centred regression target, in float as rf_cpu.c keeps it.
__device__ __forceinline__ double row_y(const Data &d, int row)
{
	return (double)(float)((double)d.yr[row] - d.ycenter);
}

// Index of the node whose chunk range holds chunk c: the last q with start[q] <= c.
__device__ __forceinline__ int find_node(const unsigned long long *pk, int Q, int c)
{
	int lo = 0, hi = Q - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) >> 1;
		if ((int)(pk[mid] & 0xffffffffULL) <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

__device__ __forceinline__ int find_node_i(const int *start, int Q, int c)
{
	int lo = 0, hi = Q - 1;
	while (lo < hi) {
		int mid = (lo + hi + 1) >> 1;
		if (start[mid] <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

// First node of tree t in a level's list (sorted by tree).
__device__ __forceinline__ int first_of_tree(const int *tree, int Q, int t)
{
	int lo = 0, hi = Q;
	while (lo < hi) {
		int mid = (lo + hi) >> 1;
		if (tree[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

// ---- bootstrap: the in-bag rows of every tree, compacted -----------------------------------

__global__ void k_boot_count(Cfg cfg, size_t N, int tiles, int tile_rows, int *cnt)
{
	int t = blockIdx.x / tiles, tile = blockIdx.x % tiles;
	size_t r0 = (size_t)tile * tile_rows, r1 = min(N, r0 + tile_rows);
	int n = 0;
	for (size_t r = r0 + threadIdx.x; r < r1; r += blockDim.x)
		n += d_boot(cfg.seed, cfg.bootstrap, (uint64_t)(cfg.tree0 + t), r) > 0;
	typedef cub::BlockReduce<int, 256> BR;
	__shared__ typename BR::TempStorage tmp;
	int s = BR(tmp).Sum(n);
	if (threadIdx.x == 0)
		cnt[blockIdx.x] = s;
}

__global__ void k_boot_write(Cfg cfg, size_t N, int tiles, int tile_rows, const int *off,
			     int *idx, uint8_t *cnt)
{
	int t = blockIdx.x / tiles, tile = blockIdx.x % tiles;
	size_t r0 = (size_t)tile * tile_rows, r1 = min(N, r0 + tile_rows);
	int base = off[blockIdx.x];
	typedef cub::BlockScan<int, 256> BS;
	__shared__ typename BS::TempStorage tmp;
	for (size_t s = r0; s < r1; s += blockDim.x) {
		size_t r = s + threadIdx.x;
		int c = r < r1 ? d_boot(cfg.seed, cfg.bootstrap, (uint64_t)(cfg.tree0 + t), r) : 0;
		int f = c > 0, rank, total;
		BS(tmp).ExclusiveSum(f, rank, total);
		if (f) {
			idx[base + rank] = (int)r;
			cnt[base + rank] = (uint8_t)c;
		}
		base += total;
		__syncthreads();
	}
}

__global__ void k_roots(int T, int tiles, const int *off, Level L, int *tree_next)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= T)
		return;
	int b = off[t * tiles], e = off[(t + 1) * tiles];
	L.tree[t] = t;
	L.id[t] = 0;
	L.begin[t] = b;
	L.n[t] = e - b;
	L.pslot[t] = -1;
	tree_next[t] = 1;
}

// ---- per-level node statistics ---------------------------------------------------------------

__global__ void k_nchunk(int Q, int R, Level L)
{
	int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q < Q)
		L.nchk[q] = (L.n[q] + R - 1) / R;
	if (q == Q)
		L.nchk[q] = 0;
}

template <int BLOCK>
__global__ void k_stats(Data d, Cfg cfg, int Q, Level L, const int *idx, const uint8_t *cnt)
{
	extern __shared__ __align__(16) unsigned char sm_raw[];
	double *sacc = (double *)sm_raw;  // ACC entries (classification)
	int c = blockIdx.x;
	int q = find_node_i(L.nchk, Q, c);
	int cc = c - L.nchk[q];
	int begin = L.begin[q], n = L.n[q];
	int r0 = cc * cfg.R, r1 = min(n, r0 + cfg.R);
	if (cfg.C) {
		for (int k = threadIdx.x; k < cfg.C; k += blockDim.x)
			sacc[k] = 0;
		__syncthreads();
		for (int i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
			int row = idx[begin + i], y = d.y[row];
			atomicAdd(&sacc[y], row_weight(d, row, cnt[begin + i], y));
		}
		__syncthreads();
		for (int k = threadIdx.x; k < cfg.C; k += blockDim.x)
			if (sacc[k] != 0)
				atomicAdd(&L.acc[(size_t)q * cfg.ACC + k], sacc[k]);
	} else {
		double w = 0, s = 0, s2 = 0;
		for (int i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
			int row = idx[begin + i];
			double wi = row_weight(d, row, cnt[begin + i], -1);
			double yi = row_y(d, row);
			w = __dadd_rn(w, wi);
			s = __dadd_rn(s, __dmul_rn(wi, yi));
			s2 = __dadd_rn(s2, __dmul_rn(__dmul_rn(wi, yi), yi));
		}
		typedef cub::BlockReduce<double, BLOCK> BR;
		__shared__ typename BR::TempStorage tmp;
		double a = BR(tmp).Sum(w);
		__syncthreads();
		double b = BR(tmp).Sum(s);
		__syncthreads();
		double e = BR(tmp).Sum(s2);
		if (threadIdx.x == 0) {
			atomicAdd(&L.acc[(size_t)q * 3 + 0], a);
			atomicAdd(&L.acc[(size_t)q * 3 + 1], b);
			atomicAdd(&L.acc[(size_t)q * 3 + 2], e);
		}
	}
}

// Arithmetic below mirrors rf_cpu.c operation by operation, with explicit rounding (no FMA
// contraction), so integer-weight forests come out bit-identical to the CPU's.
__device__ double cls_imp(const Cfg &cfg, const double *w, double W)
{
	double s = 0;
	if (W <= 0)
		return 0;
	if (cfg.crit == GWB_CRIT_ENTROPY) {
		for (int k = 0; k < cfg.C; k++) {
			double p = __ddiv_rn(w[k], W);
			if (p > 0)
				s = __dsub_rn(s, __dmul_rn(p, log2(p)));
		}
		return s;
	}
	for (int k = 0; k < cfg.C; k++) {
		double p = __ddiv_rn(w[k], W);
		s = __dadd_rn(s, __dmul_rn(p, p));
	}
	return __dsub_rn(1.0, s);
}

__device__ double node_impurity(const Cfg &cfg, const double *a, double *Wout, double *Sout)
{
	if (!cfg.C) {
		double W = a[0], S = a[1], S2 = a[2];
		*Wout = W;
		*Sout = S;
		if (W <= 0)
			return 0;
		double m = __ddiv_rn(S, W), v = __dsub_rn(__ddiv_rn(S2, W), __dmul_rn(m, m));
		return v > 0 ? v : 0;
	}
	double W = 0;
	for (int k = 0; k < cfg.C; k++)
		W = __dadd_rn(W, a[k]);
	*Wout = W;
	*Sout = 0;
	return cls_imp(cfg, a, W);
}

// k_decide's rule for a node that will look for a split.
__device__ bool node_open(const Cfg &cfg, const Level &L, int q, int level)
{
	const double *a = L.acc + (size_t)q * cfg.ACC;
	double W, S, imp = node_impurity(cfg, a, &W, &S);
	int n = L.n[q];
	bool pure = cfg.C ? imp <= GWB_RF_PURE_EPS
			  : imp <= GWB_RF_PURE_EPS * (1 + (a[0] > 0 ? a[2] / a[0] : 0));
	return n > 0 && level < cfg.depth && n >= cfg.min_split && n >= 2 * cfg.min_leaf &&
	       !pure && W > 0;
}

// Sibling subtraction plan (cfg.sub), before k_decide. Of two open siblings whose parent kept
// its histogram, the larger (the right one on a tie) is derived as parent - smaller when it
// has at least sub_min rows, and the smaller then keeps its histogram; a node whose children
// may be derived (not on the last split level, at least 2 sub_min rows) keeps its own, unless
// `parents` is 0 (the level's kept histograms would not fit: only those the derived need).
__global__ void k_plan(Cfg cfg, int Q, int level, Level L, int parents)
{
	int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q == Q)
		L.hslot[q] = 0;
	if (q >= Q)
		return;
	int mode = 0, keep = 0;
	if (node_open(cfg, L, q, level)) {
		int n = L.n[q];
		int sb = q ^ 1;
		if (level > 0 && L.pslot[q] >= 0 && sb < Q && node_open(cfg, L, sb, level)) {
			int ns = L.n[sb];
			bool larger = n > ns || (n == ns && (q & 1));
			if (max(n, ns) >= cfg.sub_min) {
				if (larger)
					mode = 2;
				else
					keep = 1;
			}
		}
		if (parents && level + 1 < cfg.depth && n >= 2 * cfg.sub_min)
			keep = 1;
	}
	if (keep && mode == 0)
		mode = 1;
	L.mode[q] = mode;
	L.hslot[q] = keep;
}

__global__ void k_decide(Data d, Cfg cfg, int Q, int level, Level L, Rec rec, int rbase,
			 double *root_w)
{
	int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q == Q)
		L.pk[q] = 0;
	if (q >= Q)
		return;
	const double *a = L.acc + (size_t)q * cfg.ACC;
	double W, S, imp = node_impurity(cfg, a, &W, &S);
	int n = L.n[q], p = rbase + q, t = L.tree[q];
	rec.tree[p] = t;
	rec.id[p] = L.id[q];
	rec.count[p] = n;
	rec.weight[p] = W;
	rec.imp[p] = (float)imp;
	if (cfg.C) {
		for (int k = 0; k < cfg.C; k++)
			rec.value[(size_t)p * cfg.C + k] = W > 0 ? (float)(a[k] / W) : 0.0f;
	} else {
		rec.value[p] = (float)((W > 0 ? S / W : 0.0) + d.ycenter);
	}
	// leaf defaults; k_emit overwrites the split nodes
	rec.feat[p] = -1;
	rec.left[p] = rec.right[p] = -1;
	rec.thr[p] = 0;
	rec.nanl[p] = 0;
	L.imp[q] = imp;
	L.W[q] = W;
	L.S[q] = S;
	L.feat[q] = -1;
	L.thr[q] = 0;
	L.nanl[q] = 0;
	if (level == 0)
		root_w[t] = W;
	bool pure = cfg.C ? imp <= GWB_RF_PURE_EPS
			  : imp <= GWB_RF_PURE_EPS * (1 + (a[0] > 0 ? a[2] / a[0] : 0));
	bool open = n > 0 && level < cfg.depth && n >= cfg.min_split && n >= 2 * cfg.min_leaf &&
		    !pure && W > 0;
	unsigned long long ch = open ? (unsigned long long)((n + cfg.R - 1) / cfg.R) : 0ULL;
	int mode = cfg.sub ? L.mode[q] : 0;  // kept and derived histograms use the level slots
	unsigned long long slot = open && mode == 0 && (ch > 1 || cfg.ngroups0 > 1) ? 1ULL : 0ULL;
	L.pk[q] = ch | (slot << 32);
}

// ---- histograms and the split search ---------------------------------------------------------

struct Best {
	double gain;
	int key;   // jpos << 9 | t << 1 | side, smaller = earlier in forest.h's order
	int nanl;  // where NaN goes for the best split
};

__device__ __forceinline__ bool better(double g, int k, double bg, int bk)
{
	return g > bg || (g == bg && k < bk);
}

// Draw positions [from, to) of the node's lazy Fisher-Yates shuffle (thread 0 only).
__device__ void draw(uint16_t *perm, int F, uint64_t seed, uint64_t tree, uint64_t node, int from,
		     int to)
{
	for (int i = from; i < to; i++) {
		uint64_t h = d_hash(seed, GWB_RNG_STREAM_FEAT, (tree << 32) | node, (uint64_t)i);
		int j = i + (int)(h % (uint64_t)(F - i));
		uint16_t a = perm[i];
		perm[i] = perm[j];
		perm[j] = a;
	}
}

// Add rows [r0, r1) of a node segment to a shared histogram of nf features (draw positions
// jpos0..jpos0+nf-1 of perm). The histogram must be zero.
template <typename T>
__device__ void add_rows(const Data &d, const Cfg &cfg, T *h, const uint16_t *perm, int jpos0,
			 int nf, const int *idx, const uint8_t *cnt, int begin, int r0, int r1)
{
	for (int i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
		int row = idx[begin + i];
		int c = cnt[begin + i];
		if (cfg.C) {
			int y = d.y[row];
			T w = (T)row_weight(d, row, c, y);
			for (int j = 0; j < nf; j++) {
				int f = perm[jpos0 + j];
				int code = d.codes[(size_t)f * d.N + row];
				T *cell = h + ((size_t)j * cfg.B + code) * cfg.CH;
				atomicAdd(cell, (T)1);
				atomicAdd(cell + 1 + y, w);
			}
		} else {
			double wd = row_weight(d, row, c, -1);
			T w = (T)wd, wy = (T)__dmul_rn(wd, row_y(d, row));
			for (int j = 0; j < nf; j++) {
				int f = perm[jpos0 + j];
				int code = d.codes[(size_t)f * d.N + row];
				T *cell = h + ((size_t)j * cfg.B + code) * cfg.CH;
				atomicAdd(cell, (T)1);
				atomicAdd(cell + 1, w);
				atomicAdd(cell + 2, wy);
			}
		}
	}
}

// add_rows into a node's global histogram gs (slot layout: feature-major, B codes, CH
// channels) with global atomics: the ablation of the shared-memory histograms (cfg.gatom).
// keep: a kept slot is indexed by feature, otherwise by draw position.
template <typename T>
__device__ void add_rows_global(const Data &d, const Cfg &cfg, T *gs, const uint16_t *perm,
				int jpos0, int nf, bool keep, const int *idx, const uint8_t *cnt,
				int begin, int r0, int r1)
{
	for (int i = r0 + threadIdx.x; i < r1; i += blockDim.x) {
		int row = idx[begin + i];
		int c = cnt[begin + i];
		int y = cfg.C ? d.y[row] : -1;
		double wd = row_weight(d, row, c, y);
		T w = (T)wd, wy = cfg.C ? (T)0 : (T)__dmul_rn(wd, row_y(d, row));
		for (int j = 0; j < nf; j++) {
			int f = perm[jpos0 + j];
			int code = d.codes[(size_t)f * d.N + row];
			size_t fi = keep ? (size_t)f : (size_t)(jpos0 + j);
			T *cell = gs + (fi * cfg.B + code) * cfg.CH;
			atomicAdd(cell, (T)1);
			if (cfg.C) {
				atomicAdd(cell + 1 + y, w);
			} else {
				atomicAdd(cell + 1, w);
				atomicAdd(cell + 2, wy);
			}
		}
	}
}

// Gain of one candidate from left sums L (CH channels) and right sums R, or -inf when invalid.
template <typename T>
__device__ __forceinline__ double cand_gain(const Cfg &cfg, const double *Lc, const double *Rc,
					    double impP, double WP, double SP)
{
	if (Lc[0] < cfg.min_leaf || Rc[0] < cfg.min_leaf)
		return -INFINITY;
	if (!cfg.C) {
		double WL = Lc[1], WR = Rc[1];
		if (!(WL > 0) || !(WR > 0))
			return -INFINITY;
		return __ddiv_rn(__dsub_rn(__dadd_rn(__ddiv_rn(__dmul_rn(Lc[2], Lc[2]), WL),
						     __ddiv_rn(__dmul_rn(Rc[2], Rc[2]), WR)),
					   __ddiv_rn(__dmul_rn(SP, SP), WP)),
				 WP);
	}
	double WL = 0, WR = 0;
	for (int k = 0; k < cfg.C; k++) {
		WL = __dadd_rn(WL, Lc[1 + k]);
		WR = __dadd_rn(WR, Rc[1 + k]);
	}
	if (!(WL > 0) || !(WR > 0))
		return -INFINITY;
	double iL = cls_imp(cfg, Lc + 1, WL), iR = cls_imp(cfg, Rc + 1, WR);
	return __dsub_rn(__dsub_rn(impP, __dmul_rn(__ddiv_rn(WL, WP), iL)),
			 __dmul_rn(__ddiv_rn(WR, WP), iR));
}

// nan_left for a split of a feature without NaN in the node: the heavier side (left on ties);
// with NaN: the side the candidate put it on.
template <typename T>
__device__ void finish_split(const Cfg &cfg, const T *hj_prefix, int nb, int t, int side,
			     const double *Ptot, int *nanl)
{
	const T *P = hj_prefix + (size_t)t * cfg.CH, *Nn = hj_prefix + (size_t)nb * cfg.CH;
	if (Nn[0] > (T)0) {
		*nanl = side == 0;
		return;
	}
	double WL = 0, WT = 0;
	if (cfg.C) {
		for (int k = 0; k < cfg.C; k++) {
			WL += (double)P[1 + k];
			WT += Ptot[1 + k];
		}
	} else {
		WL = (double)P[1];
		WT = Ptot[1];
	}
	*nanl = WL >= WT - WL;
}

struct SearchShared {
	double gain[32];
	int key[32];
	int nonconst;
};

// Search features jpos0..jpos0+nf-1 whose histograms are in h (shared memory, modified: prefix
// sums). Updates *best (thread 0's copy is authoritative) and adds the non-constant count to
// ss->nonconst. All threads must call it.
template <typename T>
__device__ void search(const Data &d, const Cfg &cfg, T *h, const uint16_t *perm, int jpos0,
		       int nf, const double *Ptot, double impP, double WP, double SP,
		       SearchShared *ss, Best *best)
{
	const int B = cfg.B, CH = cfg.CH;
	// non-constant features: rows in at least two codes
	for (int j = threadIdx.x; j < nf; j += blockDim.x) {
		int f = perm[jpos0 + j], nb = d.nb[f], used = 0;
		const T *hj = h + (size_t)j * B * CH;
		for (int k = 0; k <= nb; k++)
			used += hj[(size_t)k * CH] > (T)0;
		if (used >= 2)
			atomicAdd(&ss->nonconst, 1);
	}
	__syncthreads();  // counted before the prefix sums below change the cells
	// prefix sums over the value codes 0..nb-1, per channel (the NaN cell stays as it is)
	for (int jc = threadIdx.x; jc < nf * CH; jc += blockDim.x) {
		int j = jc / CH, ch = jc % CH, f = perm[jpos0 + j], nb = d.nb[f];
		T *p = h + (size_t)j * B * CH + ch;
		T acc = 0;
		for (int k = 0; k < nb; k++) {
			acc += p[(size_t)k * CH];
			p[(size_t)k * CH] = acc;
		}
	}
	__syncthreads();
	double bg = -INFINITY;
	int bk = 0x7fffffff;
	double Lc[1 + 64], Rc[1 + 64];  // CH <= 65 (classes <= 64 in shared mode)
	for (int i = threadIdx.x; i < nf * B * 2; i += blockDim.x) {
		int j = i / (2 * B), t = (i / 2) % B, side = i & 1;
		int f = perm[jpos0 + j], nb = d.nb[f];
		if (t >= nb)
			continue;
		const T *hj = h + (size_t)j * B * CH;
		const T *P = hj + (size_t)t * CH, *Nn = hj + (size_t)nb * CH;
		bool hasnan = Nn[0] > (T)0;
		if (!hasnan && side == 1)
			continue;
		if (hasnan && t == nb - 1 && side == 0)
			continue;
		if (!hasnan && t == nb - 1)
			continue;
		for (int ch = 0; ch < CH; ch++) {
			double l = (double)P[ch] + (hasnan && side == 0 ? (double)Nn[ch] : 0.0);
			Lc[ch] = l;
			Rc[ch] = Ptot[ch] - l;
		}
		double g = cand_gain<T>(cfg, Lc, Rc, impP, WP, SP);
		int key = ((jpos0 + j) << 9) | (t << 1) | side;
		if (g > -INFINITY && better(g, key, bg, bk)) {
			bg = g;
			bk = key;
		}
	}
	// block reduction: warps, then warp 0
	for (int o = 16; o > 0; o >>= 1) {
		double og = __shfl_down_sync(0xffffffffu, bg, o);
		int ok = __shfl_down_sync(0xffffffffu, bk, o);
		if (better(og, ok, bg, bk)) {
			bg = og;
			bk = ok;
		}
	}
	int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = (blockDim.x + 31) >> 5;
	if (lane == 0) {
		ss->gain[warp] = bg;
		ss->key[warp] = bk;
	}
	__syncthreads();
	if (warp == 0) {
		bg = lane < nw ? ss->gain[lane] : -INFINITY;
		bk = lane < nw ? ss->key[lane] : 0x7fffffff;
		for (int o = 16; o > 0; o >>= 1) {
			double og = __shfl_down_sync(0xffffffffu, bg, o);
			int ok = __shfl_down_sync(0xffffffffu, bk, o);
			if (better(og, ok, bg, bk)) {
				bg = og;
				bk = ok;
			}
		}
		if (lane == 0 && bg > -INFINITY && better(bg, bk, best->gain, best->key)) {
			int j = (bk >> 9) - jpos0, t = (bk >> 1) & 255, side = bk & 1;
			int f = perm[jpos0 + j];
			best->gain = bg;
			best->key = bk;
			finish_split<T>(cfg, h + (size_t)j * B * CH, d.nb[f], t, side, Ptot, &best->nanl);
		}
	}
	__syncthreads();
}

template <typename T>
__device__ void zero_smem(T *h, size_t n)
{
	for (size_t i = threadIdx.x; i < n; i += blockDim.x)
		h[i] = (T)0;
}

struct HistArgs {
	Data d;
	Cfg cfg;
	int Q;
	Level L;
	const int *idx;
	const uint8_t *cnt;
	const double *root_w;
	void *ghist;          // slots x slot_elems of T, zero between uses
	unsigned *tickets;    // per slot, zero between uses
	void *hs_cur;         // cfg.sub: this level's kept histograms (slot x F x B x CH), zeroed
	const void *hs_prev;  // cfg.sub: the previous level's
	unsigned *tickets2;   // cfg.sub: per kept slot, zeroed
	unsigned long long *nderived;  // cfg.sub: derived histograms, counted
};

// The node's split from the block's best (all threads call it): min_impurity_decrease, then
// the record in L.
template <typename T>
__device__ void finish_node(const HistArgs &a, int q, const uint16_t *perm, const Best &best)
{
	__syncthreads();
	if (best.gain == -INFINITY)
		return;
	double WP = a.L.W[q];
	double Wroot = a.root_w[a.L.tree[q]];
	if (__dmul_rn(__ddiv_rn(WP, Wroot), best.gain) < a.cfg.min_dec - 1e-12)
		return;
	if (threadIdx.x == 0) {
		int jpos = best.key >> 9;
		a.L.feat[q] = perm[jpos];
		a.L.thr[q] = (uint8_t)((best.key >> 1) & 255);
		a.L.nanl[q] = (uint8_t)best.nanl;
	}
}

// The node's draw in perm (F entries), its totals in s_P, best reset (all threads call it).
__device__ void node_setup(const HistArgs &a, int q, uint16_t *perm, double *s_P,
			   SearchShared &ss, Best &best)
{
	const Cfg &cfg = a.cfg;
	int F = a.d.F;
	uint64_t tree = (uint64_t)(cfg.tree0 + a.L.tree[q]), node = (uint64_t)a.L.id[q];
	for (int i = threadIdx.x; i < F; i += blockDim.x)
		perm[i] = (uint16_t)i;
	for (int ch = threadIdx.x; ch < cfg.CH; ch += blockDim.x)
		s_P[ch] = ch == 0 ? (double)a.L.n[q] : a.L.acc[(size_t)q * cfg.ACC + ch - 1];
	__syncthreads();
	if (threadIdx.x == 0) {
		draw(perm, F, cfg.seed, tree, node, 0, cfg.mtry);
		best.gain = -INFINITY;
		best.key = 0x7fffffff;
		best.nanl = 0;
		ss.nonconst = 0;
	}
}

template <typename T>
__global__ void k_hist(HistArgs a)
{
	extern __shared__ __align__(16) unsigned char sm_raw[];
	const Data &d = a.d;
	const Cfg &cfg = a.cfg;
	T *h = (T *)sm_raw;
	uint16_t *perm = (uint16_t *)(sm_raw + cfg.hist_smem);
	__shared__ SearchShared ss;
	__shared__ Best best;
	__shared__ int s_last;
	__shared__ double s_P[66];  // node totals as histogram channels: rows, then sums

	int c = blockIdx.x, grp = blockIdx.y;
	int q = find_node(a.L.pk, a.Q, c);
	int mode = cfg.sub ? a.L.mode[q] : 0;
	if (mode == 2)
		return;  // derived from its parent and sibling by k_derive
	unsigned long long pk0 = a.L.pk[q], pk1 = a.L.pk[q + 1];
	int cs = (int)(pk0 & 0xffffffffULL), nch = (int)(pk1 & 0xffffffffULL) - cs;
	int slot = (int)(pk0 >> 32), has_slot = (int)(pk1 >> 32) - slot;
	int begin = a.L.begin[q], n = a.L.n[q];
	int cc = c - cs;
	uint64_t tree = (uint64_t)(cfg.tree0 + a.L.tree[q]), node = (uint64_t)a.L.id[q];
	int F = d.F;
	const size_t cells = (size_t)cfg.B * cfg.CH;  // one feature's histogram

	node_setup(a, q, perm, s_P, ss, best);
	int j0 = grp * cfg.G, nf = min(cfg.G, cfg.mtry - j0);
	int r0 = cc * cfg.R, r1 = min(n, r0 + cfg.R);
	bool direct = cfg.gatom && (has_slot || mode == 1);  // block-uniform
	if (!direct) {
		zero_smem(h, (size_t)nf * cells);
		__syncthreads();
		add_rows<T>(d, cfg, h, perm, j0, nf, a.idx, a.cnt, begin, r0, r1);
	}
	__syncthreads();

	double impP = a.L.imp[q], WP = a.L.W[q], SP = a.L.S[q];
	if (has_slot || mode == 1) {
		// add this block's part into the node's global histogram; the last block searches.
		// A kept histogram (mode 1) lives in a level slot indexed by feature (a sibling or
		// child draws the same features in another order) and stays for the next level.
		bool keep = mode == 1;
		int ks = keep ? a.L.hslot[q] : 0;
		T *gs = keep ? (T *)a.hs_cur + (size_t)ks * cfg.slot_elems
			     : (T *)a.ghist + (size_t)slot * cfg.slot_elems;
		if (direct)
			add_rows_global<T>(d, cfg, gs, perm, j0, nf, keep, a.idx, a.cnt, begin, r0, r1);
		else
			for (size_t i = threadIdx.x; i < (size_t)nf * cells; i += blockDim.x) {
				size_t j = i / cells;
				size_t at = (keep ? (size_t)perm[j0 + j] : j0 + j) * cells + i % cells;
				if (h[i] != (T)0)
					atomicAdd(&gs[at], h[i]);
			}
		__threadfence();
		__syncthreads();
		unsigned *ticket = keep ? &a.tickets2[ks] : &a.tickets[slot];
		if (threadIdx.x == 0) {
			unsigned tk = atomicAdd(ticket, 1u);
			s_last = tk == (unsigned)(nch * cfg.ngroups0) - 1;
		}
		__syncthreads();
		if (!s_last)
			return;
		__threadfence();
		for (int gi = 0; gi < cfg.ngroups0; gi++) {
			int gj0 = gi * cfg.G, gnf = min(cfg.G, cfg.mtry - gj0);
			size_t ne = (size_t)gnf * cells;
			for (size_t i = threadIdx.x; i < ne; i += blockDim.x) {
				size_t j = i / cells;
				size_t at = (keep ? (size_t)perm[gj0 + j] : gj0 + j) * cells + i % cells;
				h[i] = __ldcg(gs + at);
				if (!keep)
					gs[at] = (T)0;  // the slot is zero again for the next level
			}
			__syncthreads();
			search<T>(d, cfg, h, perm, gj0, gnf, s_P, impP, WP, SP, &ss, &best);
		}
		if (threadIdx.x == 0)
			*ticket = 0;
	} else {
		search<T>(d, cfg, h, perm, 0, nf, s_P, impP, WP, SP, &ss, &best);
	}

	// forest.h: keep examining features in draw order until mtry non-constant ones were seen
	int examined = cfg.mtry;
	for (;;) {
		__syncthreads();
		int nc = ss.nonconst;
		if (nc >= cfg.mtry || examined >= F)
			break;
		int m = min(min(cfg.mtry - nc, cfg.G), F - examined);
		if (threadIdx.x == 0)
			draw(perm, F, cfg.seed, tree, node, examined, examined + m);
		zero_smem(h, (size_t)m * cells);
		__syncthreads();
		add_rows<T>(d, cfg, h, perm, examined, m, a.idx, a.cnt, begin, 0, n);
		__syncthreads();
		search<T>(d, cfg, h, perm, examined, m, s_P, impP, WP, SP, &ss, &best);
		examined += m;
	}
	finish_node<T>(a, q, perm, best);
}

// Sibling subtraction (cfg.sub, every node draws all F features): one block per node of the
// level; a node planned as derived (mode 2) gets its histogram as its parent's kept histogram
// minus its sibling's (built by k_hist before), keeps it when it has a slot, and searches it
// in its own draw order, exactly as k_hist would have.
template <typename T>
__global__ void k_derive(HistArgs a)
{
	extern __shared__ __align__(16) unsigned char sm_raw[];
	const Data &d = a.d;
	const Cfg &cfg = a.cfg;
	T *h = (T *)sm_raw;
	uint16_t *perm = (uint16_t *)(sm_raw + cfg.hist_smem);
	__shared__ SearchShared ss;
	__shared__ Best best;
	__shared__ double s_P[66];

	int q = blockIdx.x;
	if (a.L.mode[q] != 2)
		return;
	const size_t cells = (size_t)cfg.B * cfg.CH;
	int sb = q ^ 1;
	const T *par = (const T *)a.hs_prev + (size_t)a.L.pslot[q] * cfg.slot_elems;
	const T *sib = (const T *)a.hs_cur + (size_t)a.L.hslot[sb] * cfg.slot_elems;
	T *own = a.L.hslot[q + 1] > a.L.hslot[q]
		? (T *)a.hs_cur + (size_t)a.L.hslot[q] * cfg.slot_elems : nullptr;
	node_setup(a, q, perm, s_P, ss, best);
	if (threadIdx.x == 0)
		atomicAdd(a.nderived, 1ULL);
	double impP = a.L.imp[q], WP = a.L.W[q], SP = a.L.S[q];
	for (int gi = 0; gi < cfg.ngroups0; gi++) {
		__syncthreads();
		int gj0 = gi * cfg.G, gnf = min(cfg.G, cfg.mtry - gj0);
		size_t ne = (size_t)gnf * cells;
		for (size_t i = threadIdx.x; i < ne; i += blockDim.x) {
			size_t at = (size_t)perm[gj0 + i / cells] * cells + i % cells;
			T v = __ldcg(par + at) - __ldcg(sib + at);
			h[i] = v;
			if (own)
				own[at] = v;
		}
		__syncthreads();
		search<T>(d, cfg, h, perm, gj0, gnf, s_P, impP, WP, SP, &ss, &best);
	}
	finish_node<T>(a, q, perm, best);
}

// ---- partition -------------------------------------------------------------------------------

__device__ __forceinline__ int goes_left(const Data &d, int f, int thr, int nanl, int row)
{
	int code = d.codes[(size_t)f * d.N + row];
	return code == d.nb[f] ? nanl : code <= thr;
}

template <int BLOCK>
__global__ void k_pcount(Data d, Cfg cfg, int Q, Level L, const int *idx, int *chunk_left)
{
	int c = blockIdx.x;
	int q = find_node(L.pk, Q, c);
	int cs = (int)(L.pk[q] & 0xffffffffULL), cc = c - cs;
	int f = L.feat[q], n = L.n[q], begin = L.begin[q];
	int cntl = 0;
	if (f >= 0) {
		int thr = L.thr[q], nanl = L.nanl[q];
		int r0 = cc * cfg.R, r1 = min(n, r0 + cfg.R);
		for (int i = r0 + threadIdx.x; i < r1; i += blockDim.x)
			cntl += goes_left(d, f, thr, nanl, idx[begin + i]);
	}
	typedef cub::BlockReduce<int, BLOCK> BR;
	__shared__ typename BR::TempStorage tmp;
	int s = BR(tmp).Sum(cntl);
	if (threadIdx.x == 0)
		chunk_left[c] = s;
}

// split flag and rows kept per node, left counts from the scanned chunk counts
__global__ void k_sizes(int Q, int total_chunks, Level L, const int *chunk_left_ex)
{
	int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q == Q) {
		L.split[q] = 0;
		L.srows[q] = 0;
	}
	if (q >= Q)
		return;
	int s = L.feat[q] >= 0;
	L.split[q] = s;
	L.srows[q] = s ? L.n[q] : 0;
	if (s) {
		int c0 = (int)(L.pk[q] & 0xffffffffULL), c1 = (int)(L.pk[q + 1] & 0xffffffffULL);
		(void)total_chunks;
		L.nl[q] = chunk_left_ex[c1] - chunk_left_ex[c0];
	} else {
		L.nl[q] = 0;
	}
}

template <int BLOCK>
__global__ void k_pscatter(Data d, Cfg cfg, int Q, Level L, const int *idx, const uint8_t *cnt,
			   const int *chunk_left_ex, int *idx2, uint8_t *cnt2)
{
	int c = blockIdx.x;
	int q = find_node(L.pk, Q, c);
	int f = L.feat[q];
	if (f < 0)
		return;
	int cs = (int)(L.pk[q] & 0xffffffffULL), cc = c - cs;
	int n = L.n[q], begin = L.begin[q], thr = L.thr[q], nanl = L.nanl[q];
	int base = L.srows[q], nl = L.nl[q];
	int lbefore = chunk_left_ex[c] - chunk_left_ex[cs];
	int r0 = cc * cfg.R, r1 = min(n, r0 + cfg.R);
	typedef cub::BlockScan<int, BLOCK> BS;
	__shared__ typename BS::TempStorage tmp;
	for (int s = r0; s < r1; s += BLOCK) {
		int i = s + threadIdx.x;
		int row = 0, fl = 0;
		if (i < r1) {
			row = idx[begin + i];
			fl = goes_left(d, f, thr, nanl, row);
		}
		int rank, tot;
		BS(tmp).ExclusiveSum(fl, rank, tot);
		if (i < r1) {
			int Li = lbefore + rank;
			int dst = fl ? base + Li : base + nl + (i - Li);
			idx2[dst] = row;
			cnt2[dst] = cnt[begin + i];
		}
		lbefore += tot;
		__syncthreads();
	}
}

// ---- records and the next level's nodes ------------------------------------------------------

__global__ void k_emit(int Q, Level L, Level N, Rec rec, int rbase, const int *tree_next, int sub)
{
	int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q >= Q)
		return;
	if (L.feat[q] < 0)
		return;
	int t = L.tree[q];
	int qf = first_of_tree(L.tree, Q, t);
	int rank = L.split[q] - L.split[qf];
	int lid = tree_next[t] + 2 * rank;
	int p = rbase + q;
	rec.feat[p] = L.feat[q];
	rec.thr[p] = L.thr[q];
	rec.nanl[p] = L.nanl[q];
	rec.left[p] = lid;
	rec.right[p] = lid + 1;
	int i = 2 * L.split[q], nl = L.nl[q], b = L.srows[q];
	N.tree[i] = N.tree[i + 1] = t;
	N.id[i] = lid;
	N.id[i + 1] = lid + 1;
	N.begin[i] = b;
	N.n[i] = nl;
	N.begin[i + 1] = b + nl;
	N.n[i + 1] = L.n[q] - nl;
	N.pslot[i] = N.pslot[i + 1] = sub && L.hslot[q + 1] > L.hslot[q] ? L.hslot[q] : -1;
}

// After k_emit: each tree's node counter moves past this level's children. The flags were
// scanned in place, so split[q + 1] - split[qf] counts the splits of tree t.
__global__ void k_tadv(int Q, Level L, int *tree_next)
{
	int q = blockIdx.x * blockDim.x + threadIdx.x;
	if (q >= Q)
		return;
	int t = L.tree[q];
	if (q + 1 < Q && L.tree[q + 1] == t)
		return;
	int qf = first_of_tree(L.tree, Q, t);
	tree_next[t] += 2 * (L.split[q + 1] - L.split[qf]);
}

// Records in level order -> tree-major order (tree offsets toff, node id within the tree).
__global__ void k_reorder(int nrec, int outputs, Rec a, Rec b, const int *toff)
{
	int p = blockIdx.x * blockDim.x + threadIdx.x;
	if (p >= nrec)
		return;
	int dst = toff[a.tree[p]] + a.id[p];
	b.feat[dst] = a.feat[p];
	b.thr[dst] = a.thr[p];
	b.nanl[dst] = a.nanl[p];
	b.left[dst] = a.left[p];
	b.right[dst] = a.right[p];
	b.count[dst] = a.count[p];
	b.weight[dst] = a.weight[p];
	b.imp[dst] = a.imp[p];
	for (int k = 0; k < outputs; k++)
		b.value[(size_t)dst * outputs + k] = a.value[(size_t)p * outputs + k];
}

// ---- judging a fold where it grew (rf.search, forest.h's gwb_rf_judge) ----------------------

// Thread per test row: the batch's trees [0, T_) (forest trees tree0 .. tree0 + T_ - 1) in
// order, each walked once from its root by the row's codes (the OOB kernel's rule) to the
// deepest cut; the node at depth cuts[e] (or the leaf reached above it) adds its values to the
// row's running double sums of cut e (run, rows x nd x O), which after forest tree counts[c] - 1
// are copied to out (nc x nd x rows x O). Sums in tree order, in double: forest.c's
// predict_sums of the forest cut at that depth, bit for bit.
__global__ void k_judge(const uint8_t *__restrict__ codes, size_t N, const int *__restrict__ nb,
			int T_, int tree0, Rec r, const int *__restrict__ toff, int O,
			const int *__restrict__ cuts, int nd, const int *__restrict__ counts, int nc,
			double *run, double *out)
{
	size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= N)
		return;
	double *rs = run + row * (size_t)nd * O;
	for (int t = 0; t < T_; t++) {
		int base = __ldg(&toff[t]), g = base, f, dd = 0, e = 0;
		for (;;) {
			f = __ldg(&r.feat[g]);
			const float *v = r.value + (size_t)g * O;
			for (; e < nd && (f < 0 || __ldg(&cuts[e]) == dd); e++)
				for (int k = 0; k < O; k++)
					rs[e * O + k] += (double)__ldg(&v[k]);
			if (e >= nd)
				break;
			int code = __ldg(&codes[(size_t)f * N + row]);
			bool left = code == __ldg(&nb[f]) ? __ldg(&r.nanl[g]) != 0
							  : code <= (int)__ldg(&r.thr[g]);
			g = base + (left ? __ldg(&r.left[g]) : __ldg(&r.right[g]));
			dd++;
		}
		for (int c = 0; c < nc; c++)
			if (__ldg(&counts[c]) == tree0 + t + 1)
				for (int i = 0; i < nd * O; i++)
					out[(((size_t)c * nd + i / O) * N + row) * O + i % O] = rs[i];
	}
}

// ---- out of bag: on the device, from the codes, bootstrap counts regenerated ------------------

// Thread per training row: for the batch's trees in order, the trees where the row's in-bag
// count c(t, r) is 0 (d_boot, the same stream as the growth: no mask is stored) walk the row's
// codes (code <= thr left, the NaN code nb[f] by nan_left, exactly the float rule) and add the
// leaf's values in double to the row's sums: the same sums in the same order as forest.c's
// predict_sums, so the OOB result is the CPU's bit for bit. OM > 0: sums in registers.
template <int OM>
__global__ void k_oob(Data d, Cfg cfg, int T_, Rec r, const int *toff, int O, double *acc,
		      int *nt)
{
	size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= d.N)
		return;
	double a[OM > 0 ? OM : 1];
	double *ga = acc + row * (size_t)O;
#pragma unroll
	for (int k = 0; k < (OM > 0 ? OM : 1); k++)
		a[k] = (OM > 0 && k < O) ? ga[k] : 0.0;
	int n = nt[row];
	for (int t = 0; t < T_; t++) {
		if (d_boot(cfg.seed, cfg.bootstrap, (uint64_t)(cfg.tree0 + t), row))
			continue;
		int base = __ldg(&toff[t]), g = base, f;
		while ((f = __ldg(&r.feat[g])) >= 0) {
			int code = __ldg(&d.codes[(size_t)f * d.N + row]);
			bool left = code == __ldg(&d.nb[f]) ? __ldg(&r.nanl[g]) != 0
							    : code <= (int)__ldg(&r.thr[g]);
			g = base + (left ? __ldg(&r.left[g]) : __ldg(&r.right[g]));
		}
		const float *v = r.value + (size_t)g * O;
		if (OM > 0) {
#pragma unroll
			for (int k = 0; k < (OM > 0 ? OM : 1); k++)
				if (k < O)
					a[k] += (double)__ldg(&v[k]);
		} else {
			for (int k = 0; k < O; k++)
				ga[k] += (double)__ldg(&v[k]);
		}
		n++;
	}
	nt[row] = n;
	if (OM > 0)
#pragma unroll
		for (int k = 0; k < (OM > 0 ? OM : 1); k++)
			if (k < O)
				ga[k] = a[k];
}

// The per-row OOB result: classification the first argmax (-1 without an OOB tree),
// regression the double mean (NaN without one), as gwb_forest_oob_cpu computes them.
__global__ void k_oob_final(size_t N, int O, int classify, const double *acc, const int *nt,
			    int32_t *lab, double *val)
{
	size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (row >= N)
		return;
	const double *a = acc + row * (size_t)O;
	int n = nt[row];
	if (classify) {
		int best = 0;
		for (int k = 1; k < O; k++)
			if (a[k] > a[best])
				best = k;
		lab[row] = n ? best : -1;
	} else {
		val[row] = n ? a[0] / n : __longlong_as_double(0x7ff8000000000000LL);
	}
}

typedef void (*OobKernel)(Data, Cfg, int, Rec, const int *, int, double *, int *);

static OobKernel pick_oob(int O)
{
	if (O <= 1)
		return k_oob<1>;
	if (O <= 2)
		return k_oob<2>;
	if (O <= 4)
		return k_oob<4>;
	if (O <= 8)
		return k_oob<8>;
	return k_oob<0>;
}

// ---- quantization on the device --------------------------------------------------------------

__global__ void k_quantize(const float *X, size_t N, int F, const float *edges, int stride,
			   const int *nb, uint8_t *codes, int *has_nan)
{
	int f = blockIdx.y;
	extern __shared__ float sE[];
	int n = nb[f];
	for (int i = threadIdx.x; i < n - 1; i += blockDim.x)
		sE[i] = edges[(size_t)f * stride + i];
	__syncthreads();
	int nan = 0;
	for (size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x; r < N;
	     r += (size_t)gridDim.x * blockDim.x) {
		float v = X[(size_t)f * N + r];
		int code;
		if (v != v) {
			code = n;
			nan = 1;
		} else {
			int lo = 0, hi = n - 1;
			while (lo < hi) {
				int mid = (lo + hi) >> 1;
				if (sE[mid] < v)
					lo = mid + 1;
				else
					hi = mid;
			}
			code = lo;
		}
		codes[(size_t)f * N + r] = (uint8_t)code;
	}
	if (__syncthreads_or(nan) && threadIdx.x == 0)
		has_nan[f] = 1;
}

// Edges as quantize.c places them: rows of the sample whose hash is below cut.
__global__ void k_qflags(size_t N, uint64_t seed, uint64_t cut, uint8_t *flags)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < N;
	     i += (size_t)gridDim.x * blockDim.x)
		flags[i] = d_hash(seed, GWB_RNG_STREAM_QUANT, 0, i) < cut;
}

// Order-preserving keys of the sampled values of every feature (NaN last).
__global__ void k_qkeys(const float *X, size_t N, const int *sidx, int n, uint32_t *keys)
{
	int f = blockIdx.y;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		float v = X[(size_t)f * N + (sidx ? (size_t)sidx[i] : (size_t)i)];
		uint32_t u = __float_as_uint(v);
		keys[(size_t)f * n + i] = v != v ? 0xffffffffu
						 : ((u & 0x80000000u) ? ~u : (u | 0x80000000u));
	}
}

__device__ __forceinline__ float key_value(uint32_t k)
{
	return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

__device__ __forceinline__ float qmid(float a, float b)
{
	float m = (float)__dmul_rn(__dadd_rn((double)a, (double)b), 0.5);
	if (!(m < b) || m < a)
		m = a;
	return m;
}

// One block per feature: quantize.c's quant_feature on sorted keys (n per feature).
template <int BLOCK>
__global__ void k_qedges(const uint32_t *keys, int n, int maxnb, float *edges, int *nbins)
{
	int f = blockIdx.x;
	const uint32_t *k = keys + (size_t)f * n;
	float *E = edges + (size_t)f * maxnb;
	typedef cub::BlockReduce<int, BLOCK> BR;
	typedef cub::BlockScan<int, BLOCK> BS;
	__shared__ union {
		typename BR::TempStorage r;
		typename BS::TempStorage s;
	} tmp;
	__shared__ int s_n, s_distinct;
	if (threadIdx.x == 0) {
		int lo = 0, hi = n;  // first NaN key
		while (lo < hi) {
			int mid = (lo + hi) >> 1;
			if (k[mid] < 0xffffffffu)
				lo = mid + 1;
			else
				hi = mid;
		}
		s_n = lo;
	}
	__syncthreads();
	int nv = s_n, cnt = 0;
	for (int i = 1 + threadIdx.x; i < nv; i += BLOCK)
		cnt += key_value(k[i]) != key_value(k[i - 1]);
	int tot = BR(tmp.r).Sum(cnt);
	if (threadIdx.x == 0)
		s_distinct = nv ? 1 + tot : 0;
	__syncthreads();
	int distinct = s_distinct;
	if (nv == 0) {
		if (threadIdx.x == 0)
			nbins[f] = 1;
		return;
	}
	if (distinct <= maxnb) {
		int base = 0;
		for (int s0 = 1; s0 < nv; s0 += BLOCK) {
			int i = s0 + threadIdx.x, fl = 0;
			float a = 0, b = 0;
			if (i < nv) {
				a = key_value(k[i - 1]);
				b = key_value(k[i]);
				fl = a != b;
			}
			int rank, total;
			__syncthreads();
			BS(tmp.s).ExclusiveSum(fl, rank, total);
			if (fl)
				E[base + rank] = qmid(a, b);
			base += total;
		}
		if (threadIdx.x == 0)
			nbins[f] = base + 1;
		return;
	}
	if (threadIdx.x == 0) {
		int ne = 0;
		float last = key_value(k[nv - 1]);
		for (int q = 1; q < maxnb; q++) {
			size_t at = (size_t)__ddiv_rn(__dmul_rn((double)q, (double)nv), (double)maxnb);
			if (at == 0 || at >= (size_t)nv)
				continue;
			float a = key_value(k[at - 1]), b = key_value(k[at]);
			float e = a < b ? qmid(a, b) : b;
			if (e >= last)
				continue;
			if (ne == 0 || e > E[ne - 1])
				E[ne++] = e;
		}
		nbins[f] = ne + 1;
	}
}

// ---- host side -------------------------------------------------------------------------------

// host -> device copies of the training data
gwb_status upload(void *dev, const void *host, size_t bytes)
{
	return gwb_copy(dev, host, bytes, GWB_H2D, false);
}

struct Buf {
	void *p = nullptr;
	size_t cap = 0;
	const char *tag = "rf";
};

gwb_status buf_need(Buf &b, size_t bytes)
{
	if (bytes <= b.cap && b.p)
		return GWB_OK;
	gwb_gpu_free(b.p);
	b.p = nullptr;
	b.cap = 0;
	size_t want = bytes + bytes / 4 + 256;
	gwb_status rc = gwb_gpu_malloc(&b.p, want, b.tag);
	if (!rc)
		b.cap = want;
	return rc;
}

// Grow keeping the first `keep` bytes.
gwb_status buf_grow(Buf &b, size_t bytes, size_t keep)
{
	if (bytes <= b.cap && b.p)
		return GWB_OK;
	void *np = nullptr;
	size_t want = bytes * 2 + 256;
	gwb_status rc = gwb_gpu_malloc(&np, want, b.tag);
	if (rc)
		return rc;
	if (keep && b.p && (rc = CUDA_CHECK(cudaMemcpy(np, b.p, keep, cudaMemcpyDeviceToDevice)))) {
		gwb_gpu_free(np);
		return rc;
	}
	gwb_gpu_free(b.p);
	b.p = np;
	b.cap = want;
	return GWB_OK;
}

void buf_free(Buf &b)
{
	gwb_gpu_free(b.p);
	b.p = nullptr;
	b.cap = 0;
}

template <typename T> T *P(Buf &b) { return (T *)b.p; }

// Level buffers: one Buf per array.
struct LevelBufs {
	Buf tree, id, begin, n, acc, imp, W, S, feat, thr, nanl, pk, nchk, split, srows, nl, mode,
		hslot, pslot;
	LevelBufs()
	{
		Buf *all[] = {&tree, &id, &begin, &n, &acc, &imp, &W, &S, &feat, &thr, &nanl, &pk,
			      &nchk, &split, &srows, &nl, &mode, &hslot, &pslot};
		for (Buf *b : all)
			b->tag = "rf.nodes";
	}
	gwb_status need(int Q, int ACC)
	{
		size_t q1 = (size_t)Q + 1;
		gwb_status rc;
		if ((rc = buf_need(tree, q1 * 4)) || (rc = buf_need(id, q1 * 4)) ||
		    (rc = buf_need(begin, q1 * 4)) || (rc = buf_need(n, q1 * 4)) ||
		    (rc = buf_need(acc, q1 * ACC * 8)) || (rc = buf_need(imp, q1 * 8)) ||
		    (rc = buf_need(W, q1 * 8)) || (rc = buf_need(S, q1 * 8)) ||
		    (rc = buf_need(feat, q1 * 4)) || (rc = buf_need(thr, q1)) ||
		    (rc = buf_need(nanl, q1)) || (rc = buf_need(pk, q1 * 8)) ||
		    (rc = buf_need(nchk, q1 * 4)) || (rc = buf_need(split, q1 * 4)) ||
		    (rc = buf_need(srows, q1 * 4)) || (rc = buf_need(nl, q1 * 4)) ||
		    (rc = buf_need(mode, q1 * 4)) || (rc = buf_need(hslot, q1 * 4)) ||
		    (rc = buf_need(pslot, q1 * 4)))
			return rc;
		return GWB_OK;
	}
	Level view()
	{
		Level L;
		L.tree = P<int>(tree);
		L.id = P<int>(id);
		L.begin = P<int>(begin);
		L.n = P<int>(n);
		L.acc = P<double>(acc);
		L.imp = P<double>(imp);
		L.W = P<double>(W);
		L.S = P<double>(S);
		L.feat = P<int>(feat);
		L.thr = P<uint8_t>(thr);
		L.nanl = P<uint8_t>(nanl);
		L.pk = P<unsigned long long>(pk);
		L.nchk = P<int>(nchk);
		L.split = P<int>(split);
		L.srows = P<int>(srows);
		L.nl = P<int>(nl);
		L.mode = P<int>(mode);
		L.hslot = P<int>(hslot);
		L.pslot = P<int>(pslot);
		return L;
	}
	void release()
	{
		Buf *all[] = {&tree, &id, &begin, &n, &acc, &imp, &W, &S, &feat, &thr, &nanl, &pk,
			      &nchk, &split, &srows, &nl, &mode, &hslot, &pslot};
		for (Buf *b : all)
			buf_free(*b);
	}
};

struct RecBufs {
	Buf tree, id, feat, left, right, count, thr, nanl, weight, imp, value;
	RecBufs()
	{
		Buf *all[] = {&tree, &id, &feat, &left, &right, &count, &thr, &nanl, &weight, &imp,
			      &value};
		for (Buf *b : all)
			b->tag = "rf.records";
	}
	// grow to hold n records, keeping the first `keep`
	gwb_status grow(size_t n, size_t keep, int O)
	{
		gwb_status rc;
		if ((rc = buf_grow(tree, n * 4, keep * 4)) || (rc = buf_grow(id, n * 4, keep * 4)) ||
		    (rc = buf_grow(feat, n * 4, keep * 4)) || (rc = buf_grow(left, n * 4, keep * 4)) ||
		    (rc = buf_grow(right, n * 4, keep * 4)) ||
		    (rc = buf_grow(count, n * 4, keep * 4)) || (rc = buf_grow(thr, n, keep)) ||
		    (rc = buf_grow(nanl, n, keep)) || (rc = buf_grow(weight, n * 8, keep * 8)) ||
		    (rc = buf_grow(imp, n * 4, keep * 4)) ||
		    (rc = buf_grow(value, n * 4 * O, keep * 4 * O)))
			return rc;
		return GWB_OK;
	}
	Rec view()
	{
		Rec r;
		r.tree = P<int>(tree);
		r.id = P<int>(id);
		r.feat = P<int>(feat);
		r.left = P<int>(left);
		r.right = P<int>(right);
		r.count = P<int>(count);
		r.thr = P<uint8_t>(thr);
		r.nanl = P<uint8_t>(nanl);
		r.weight = P<double>(weight);
		r.imp = P<float>(imp);
		r.value = P<float>(value);
		return r;
	}
	void release()
	{
		Buf *all[] = {&tree, &id, &feat, &left, &right, &count, &thr, &nanl, &weight, &imp,
			      &value};
		for (Buf *b : all)
			buf_free(*b);
	}
};

// One batch's trees on the host, tree-major, before they go into the forest.
struct HostBatch {
	int trees = 0;
	size_t nodes = 0;
	int64_t *toff = nullptr;  // trees + 1
	int32_t *feat = nullptr, *left = nullptr, *right = nullptr, *count = nullptr;
	uint8_t *thr = nullptr, *nanl = nullptr;
	double *weight = nullptr;
	float *imp = nullptr, *value = nullptr;
	void release()
	{
		free(toff);
		free(feat);
		free(left);
		free(right);
		free(count);
		free(thr);
		free(nanl);
		free(weight);
		free(imp);
		free(value);
		*this = HostBatch();
	}
};

struct Trainer {
	const gwb_rf_job *job;
	gwb_forest *f;
	Data d{};
	Cfg cfg{};
	int block = 256;
	bool intmode = false;
	size_t smem_limit = 48 * 1024;
	// resident data
	Buf codes, y, yr, sw, cw, nb;
	// per batch
	Buf idx[2], cnt[2], tiles, tree_next, root_w, ghist, tickets, chunk_left, scan_tmp, toff;
	Buf hs[2], tickets2, nderived;  // sibling subtraction: kept histograms of two levels
	Buf oob_acc, oob_nt;  // OOB: per-row sums (N x outputs, double) and out-of-bag trees
	Buf jcodes, jrun, jout, jcuts, jcounts;  // judging (job->judge): the test rows' codes, sums
	bool oob = false;
	double oob_ms = 0;
	size_t sub_budget = 0;  // bytes the kept histograms of one level may take (0 = free / 4)
	size_t sub_kept = 0, sub_derived = 0, sub_fallbacks = 0;  // counts, for the run log
	LevelBufs lv[2];
	RecBufs rec, rec2;
	HostBatch *batches = nullptr;
	int nbatches = 0;
	void *ghist_zeroed = nullptr, *tickets_zeroed = nullptr;
	size_t ghist_zeroed_cap = 0, tickets_zeroed_cap = 0;

	Trainer()
	{
		codes.tag = "rf.codes";
		y.tag = yr.tag = sw.tag = cw.tag = nb.tag = "rf.data";
		idx[0].tag = idx[1].tag = cnt[0].tag = cnt[1].tag = "rf.rows";
		tiles.tag = tree_next.tag = root_w.tag = toff.tag = "rf.trees";
		ghist.tag = tickets.tag = hs[0].tag = hs[1].tag = tickets2.tag = nderived.tag = "rf.hist";
		chunk_left.tag = "rf.chunks";
		scan_tmp.tag = "rf.scan";
	}

	void release_batch()
	{
		ghist_zeroed = tickets_zeroed = nullptr;
		ghist_zeroed_cap = tickets_zeroed_cap = 0;
		Buf *all[] = {&idx[0], &idx[1], &cnt[0], &cnt[1], &tiles, &tree_next, &root_w,
			      &ghist, &tickets, &chunk_left, &scan_tmp, &toff, &hs[0], &hs[1],
			      &tickets2, &nderived};
		for (Buf *b : all)
			buf_free(*b);
		lv[0].release();
		lv[1].release();
		rec.release();
		rec2.release();
	}
	void release()
	{
		release_batch();
		gwb_quant_free(own_q);
		own_q = nullptr;
		Buf *all[] = {&codes, &y, &yr, &sw, &cw, &nb, &oob_acc, &oob_nt, &jcodes, &jrun,
			      &jout, &jcuts, &jcounts};
		for (Buf *b : all)
			buf_free(*b);
		for (int i = 0; i < nbatches; i++)
			batches[i].release();
		free(batches);
		batches = nullptr;
		nbatches = 0;
	}

	template <typename TT>
	gwb_status scan(TT *data, int n)
	{
		size_t bytes = 0;
		gwb_status rc;
		if ((rc = CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, data, data, n))))
			return rc;
		if ((rc = buf_need(scan_tmp, bytes)))
			return rc;
		return CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_tmp.p, bytes, data, data, n));
	}

	template <typename TT>
	gwb_status readback(TT *host, const TT *dev, size_t n)
	{
		return gwb_copy(host, dev, n * sizeof(TT), GWB_D2H, false);
	}

	template <typename T> gwb_status run_batch(int tree0, int T_, HostBatch &hb);
	gwb_status quantize(gwb_quant **out);
	gwb_status train();
	gwb_status oob_finish();
	gwb_status judge_begin(const gwb_quant *qz);
	gwb_status judge_finish();
	gwb_status oob_back(const gwb_forest *fb, int front);
	gwb_quant *own_q = nullptr;
	const gwb_forest *back_fb = nullptr;  // hybrid: the CPU side's trees [back_front, trees)
	int back_front = 0;
};

gwb_rf_sub_stats g_sub_stats;  // the last gwb_rf_train_gpu call's (rf.h)

static unsigned grid1(size_t n, int b) { return (unsigned)((n + b - 1) / b); }

// The integer 1..hi in environment variable `name`; 0 when unset, or (with a warning on
// stderr) when it is not such an integer: it is then ignored.
static long long env_count(const char *name, long long hi)
{
	const char *s = getenv(name);
	if (!s)
		return 0;
	char *end = nullptr;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > hi) {
		fprintf(stderr, "gwb: warning: %s=\"%s\" ignored: it must be an integer from 1 to "
			"%lld\n", name, s, hi);
		return 0;
	}
	return v;
}

template <typename T>
gwb_status Trainer::run_batch(int tree0, int T_, HostBatch &hb)
{
	gwb_status rc;
	size_t N = d.N;
	cfg.tree0 = tree0;
	int tile_rows = 4096, tiles_n = (int)((N + tile_rows - 1) / tile_rows);
	size_t ntiles = (size_t)T_ * tiles_n;

	// bootstrap -> rows of every tree
	if ((rc = buf_need(tiles, (ntiles + 1) * 4)) || (rc = buf_need(tree_next, (size_t)T_ * 4)) ||
	    (rc = buf_need(root_w, (size_t)T_ * 8)))
		return rc;
	// bytes: one count per tile written (the bootstrap draw is a hash, nothing is read)
	if ((rc = gwb_launch("rf_boot_count", k_boot_count, dim3((unsigned)ntiles), dim3(256), 0, 0,
			     (double)ntiles * 4, cfg, N, tiles_n, tile_rows, P<int>(tiles))))
		return rc;
	if ((rc = CUDA_CHECK(cudaMemset(P<int>(tiles) + ntiles, 0, 4))) ||
	    (rc = scan(P<int>(tiles), (int)ntiles + 1)))
		return rc;
	int M = 0;
	if ((rc = readback(&M, P<int>(tiles) + ntiles, 1)))
		return rc;
	if ((rc = buf_need(idx[0], (size_t)M * 4 + 4)) || (rc = buf_need(cnt[0], (size_t)M + 4)) ||
	    (rc = buf_need(idx[1], (size_t)M * 4 + 4)) || (rc = buf_need(cnt[1], (size_t)M + 4)))
		return rc;
	if ((rc = gwb_launch("rf_boot_write", k_boot_write, dim3((unsigned)ntiles), dim3(256), 0, 0,
			     (double)M * 5, cfg, N, tiles_n, tile_rows, (const int *)P<int>(tiles),
			     P<int>(idx[0]), P<uint8_t>(cnt[0]))))
		return rc;
	int cur = 0;
	int Q = T_;
	if ((rc = lv[cur].need(Q, cfg.ACC)))
		return rc;
	// bytes: two offsets read, six ints written per tree
	if ((rc = gwb_launch("rf_roots", k_roots, dim3(grid1(T_, 128)), dim3(128), 0, 0,
			     (double)T_ * 32, T_,
			     tiles_n, (const int *)P<int>(tiles), lv[cur].view(), P<int>(tree_next))))
		return rc;

	size_t nrec = 0;
	int prev_kept = 0;  // histograms the previous level kept (cfg.sub)
	if (cfg.sub && ((rc = buf_need(nderived, 8)) ||
			(rc = CUDA_CHECK(cudaMemsetAsync(nderived.p, 0, 8)))))
		return rc;
	HistArgs ha;
	ha.d = d;
	ha.cfg = cfg;
	for (int level = 0; level <= cfg.depth && Q > 0; level++) {
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "rf.train: interrupted");
		Level L = lv[cur].view();
		if ((rc = rec.grow(nrec + Q, nrec, cfg.outputs)))
			return rc;
		Rec R = rec.view();
		// node statistics
		if ((rc = gwb_launch("rf_nchunk", k_nchunk, dim3(grid1(Q + 1, 256)), dim3(256), 0, 0,
				     (double)(Q + 1) * 8, Q, cfg.R, L)) ||
		    (rc = scan(L.nchk, Q + 1)))
			return rc;
		int call = 0;
		if ((rc = readback(&call, L.nchk + Q, 1)))
			return rc;
		if ((rc = CUDA_CHECK(cudaMemsetAsync(L.acc, 0, (size_t)Q * cfg.ACC * 8))))
			return rc;
		if (call > 0 &&
		    (rc = gwb_launch("rf_stats", k_stats<256>, dim3(call), dim3(256),
				     (size_t)(cfg.C ? cfg.C : 1) * 8, 0, (double)M * 9, d, cfg, Q, L,
				     (const int *)P<int>(idx[cur]), (const uint8_t *)P<uint8_t>(cnt[cur]))))
			return rc;
		int kept = 0;
		if (cfg.sub) {
			// which histograms are derived and which are kept, then whether the kept ones
			// fit, in two steps: parents = 1 keeps the parents of the next level too; if
			// that is over the budget, parents = 0 keeps only the smaller siblings that this
			// level's derived ones read (this level still derives, the next derives none);
			// if even that is over, kept = -1: this level builds every histogram.
			const size_t slot_b = cfg.slot_elems * sizeof(T);
			Buf &hb_cur = hs[level & 1];
			size_t allowed = sub_budget, free_b = 0, total_b = 0;
			for (int parents = 1; parents >= 0; parents--) {
				// bytes per node: its and its sibling's n, acc (node_open) and pslot
				// read; mode and hslot written
				if ((rc = gwb_launch("rf_plan", k_plan, dim3(grid1(Q + 1, 256)), dim3(256), 0,
						     0, (double)(Q + 1) * (16.0 + 16.0 * cfg.ACC), cfg, Q,
						     level, L, parents)) ||
				    (rc = scan(L.hslot, Q + 1)) || (rc = readback(&kept, L.hslot + Q, 1)))
					return rc;
				if (kept && !allowed) {
					if ((rc = gwb_gpu_mem(&free_b, &total_b)))
						return rc;
					allowed = (free_b + hb_cur.cap) / 4;
				}
				if ((size_t)kept * slot_b <= allowed)
					break;
				if (parents)
					sub_fallbacks++;  // the next level derives none
				else
					kept = -1;
			}
			if (kept < 0) {
				// not even the smaller siblings fit: this level builds every histogram
				if ((rc = CUDA_CHECK(cudaMemsetAsync(L.mode, 0, (size_t)Q * 4))) ||
				    (rc = CUDA_CHECK(cudaMemsetAsync(L.hslot, 0, ((size_t)Q + 1) * 4))))
					return rc;
				kept = 0;
			}
			size_t need = (size_t)kept * slot_b;
			if (kept &&
			    ((rc = buf_need(hb_cur, need)) ||
			     (rc = CUDA_CHECK(cudaMemsetAsync(hb_cur.p, 0, need))) ||
			     (rc = buf_need(tickets2, (size_t)kept * 4)) ||
			     (rc = CUDA_CHECK(cudaMemsetAsync(tickets2.p, 0, (size_t)kept * 4)))))
				return rc;
			sub_kept += (size_t)kept;
		}
		// bytes per node: acc and four ints read; the record (ids, count, weight,
		// impurity, outputs, split fields) and the level's imp, W, S, split, pk written
		if ((rc = gwb_launch("rf_decide", k_decide, dim3(grid1(Q + 1, 256)), dim3(256), 0, 0,
				     (double)(Q + 1) * (8.0 * cfg.ACC + 96 + 4.0 * cfg.outputs), d,
				     cfg, Q, level, L, R, (int)nrec, P<double>(root_w))))
			return rc;
		if ((rc = scan(L.pk, Q + 1)))
			return rc;
		unsigned long long tot = 0;
		if ((rc = readback(&tot, L.pk + Q, 1)))
			return rc;
		int chunks = (int)(tot & 0xffffffffULL), slots = (int)(tot >> 32);
		int Qn = 0, Mn = 0;
		if (chunks > 0) {
			if ((rc = buf_need(ghist, (size_t)(slots ? slots : 1) * cfg.slot_elems * sizeof(T))) ||
			    (rc = buf_need(tickets, (size_t)(slots ? slots : 1) * 4)) ||
			    (rc = buf_need(chunk_left, ((size_t)chunks + 1) * 4)))
				return rc;
			// A fresh slot buffer is zeroed once; the last block of each node leaves its slot
			// and ticket zero again. Compare capacities too: a regrown buffer can come back
			// at the address just freed, with its new tail uninitialised.
			if (ghist.p != ghist_zeroed || ghist.cap != ghist_zeroed_cap) {
				if ((rc = CUDA_CHECK(cudaMemsetAsync(ghist.p, 0, ghist.cap))))
					return rc;
				ghist_zeroed = ghist.p;
				ghist_zeroed_cap = ghist.cap;
			}
			if (tickets.p != tickets_zeroed || tickets.cap != tickets_zeroed_cap) {
				if ((rc = CUDA_CHECK(cudaMemsetAsync(tickets.p, 0, tickets.cap))))
					return rc;
				tickets_zeroed = tickets.p;
				tickets_zeroed_cap = tickets.cap;
			}
			ha.Q = Q;
			ha.L = L;
			ha.idx = P<int>(idx[cur]);
			ha.cnt = P<uint8_t>(cnt[cur]);
			ha.root_w = P<double>(root_w);
			ha.ghist = ghist.p;
			ha.tickets = P<unsigned>(tickets);
			ha.hs_cur = hs[level & 1].p;
			ha.hs_prev = hs[(level & 1) ^ 1].p;
			ha.tickets2 = P<unsigned>(tickets2);
			ha.nderived = P<unsigned long long>(nderived);
			size_t smem = cfg.hist_smem + (size_t)d.F * 2;
			if ((rc = gwb_launch("rf_hist", k_hist<T>, dim3(chunks, cfg.ngroups0), dim3(block),
					     smem, 0, (double)M * (5.0 + 4 + cfg.mtry), ha)))
				return rc;
			// derived histograms: after every sibling they subtract is complete
			if (cfg.sub && prev_kept > 0 &&
			    (rc = gwb_launch("rf_derive", k_derive<T>, dim3(Q), dim3(block), smem, 0,
					     (double)prev_kept * 3.0 * cfg.slot_elems * sizeof(T), ha)))
				return rc;
			if ((rc = gwb_launch("rf_pcount", k_pcount<256>, dim3(chunks), dim3(256), 0, 0,
					     (double)M * 6, d, cfg, Q, L, (const int *)P<int>(idx[cur]),
					     P<int>(chunk_left))))
				return rc;
			if ((rc = CUDA_CHECK(cudaMemsetAsync(P<int>(chunk_left) + chunks, 0, 4))) ||
			    (rc = scan(P<int>(chunk_left), chunks + 1)))
				return rc;
			// bytes per node: feat, n, two pk and two chunk counts read; split, srows, nl
			if ((rc = gwb_launch("rf_sizes", k_sizes, dim3(grid1(Q + 1, 256)), dim3(256), 0, 0,
					     (double)(Q + 1) * 44, Q, chunks, L,
					     (const int *)P<int>(chunk_left))) ||
			    (rc = scan(L.split, Q + 1)) || (rc = scan(L.srows, Q + 1)))
				return rc;
			int sp = 0;
			if ((rc = readback(&sp, L.split + Q, 1)) || (rc = readback(&Mn, L.srows + Q, 1)))
				return rc;
			Qn = 2 * sp;
		}
		if (Qn > 0) {
			int nx = cur ^ 1;
			if ((rc = lv[nx].need(Qn, cfg.ACC)))
				return rc;
			L = lv[cur].view();  // the other level's buffers may not alias ours
			if ((rc = gwb_launch("rf_pscatter", k_pscatter<256>, dim3(chunks), dim3(256), 0, 0,
					     (double)M * 10, d, cfg, Q, L, (const int *)P<int>(idx[cur]),
					     (const uint8_t *)P<uint8_t>(cnt[cur]),
					     (const int *)P<int>(chunk_left), P<int>(idx[nx]),
					     P<uint8_t>(cnt[nx]))))
				return rc;
			// bytes per node: k_emit reads ~10 ints of L and writes a record's split fields
			// (14 bytes) and two children (2 x 20 bytes); k_tadv reads two flags per node
			if ((rc = gwb_launch("rf_emit", k_emit, dim3(grid1(Q, 256)), dim3(256), 0, 0,
					     (double)Q * 96, Q, L, lv[nx].view(), R, (int)nrec,
					     (const int *)P<int>(tree_next), cfg.sub)) ||
			    (rc = gwb_launch("rf_tadv", k_tadv, dim3(grid1(Q, 256)), dim3(256), 0, 0,
					     (double)Q * 12, Q, L, P<int>(tree_next))))
				return rc;
			cur = nx;
		}
		nrec += Q;
		Q = Qn;
		M = Mn;
		prev_kept = kept;
		if (job->p->progress)
			gwb_progress_update((double)tree0 + (double)T_ * (level + 1) / (cfg.depth + 1),
					    NULL, 0);
	}

	if (cfg.sub) {
		unsigned long long nd = 0;
		if ((rc = readback(&nd, P<unsigned long long>(nderived), 1)))
			return rc;
		sub_derived += (size_t)nd;
	}
	// tree-major records, one copy back per array
	if ((rc = rec2.grow(nrec, 0, cfg.outputs)) || (rc = buf_need(toff, ((size_t)T_ + 1) * 4)))
		return rc;
	if ((rc = CUDA_CHECK(cudaMemcpy(P<int>(toff), P<int>(tree_next), (size_t)T_ * 4,
					cudaMemcpyDeviceToDevice))) ||
	    (rc = CUDA_CHECK(cudaMemset(P<int>(toff) + T_, 0, 4))) || (rc = scan(P<int>(toff), T_ + 1)))
		return rc;
	if (nrec > 0 &&
	    (rc = gwb_launch("rf_reorder", k_reorder, dim3(grid1(nrec, 256)), dim3(256), 0, 0,
			     (double)nrec * 2 * (38 + 4.0 * cfg.outputs), (int)nrec, cfg.outputs,
			     rec.view(), rec2.view(), (const int *)P<int>(toff))))
		return rc;
	hb.trees = T_;
	if (job->judge) {
		// the fold's rows walk this batch's trees here; nothing comes back until the end
		const gwb_rf_judge *j = job->judge;
		size_t NT = j->test->rows;
		return gwb_launch("rf_judge", k_judge, dim3(grid1(NT, 128)), dim3(128), 0, 0,
				  (double)NT * T_ * (8.0 * 12 + 8.0 * j->nd * cfg.outputs * 2),
				  (const uint8_t *)P<uint8_t>(jcodes), NT, (const int *)P<int>(nb), T_,
				  tree0 - job->tree_first, rec2.view(), (const int *)P<int>(toff),
				  cfg.outputs, (const int *)P<int>(jcuts), j->nd,
				  (const int *)P<int>(jcounts), j->nc, P<double>(jrun), P<double>(jout));
	}
	hb.nodes = nrec;
	int *toff_h = (int *)malloc(((size_t)T_ + 1) * sizeof(int));
	hb.toff = (int64_t *)malloc(((size_t)T_ + 1) * sizeof(int64_t));
	hb.feat = (int32_t *)malloc(nrec * 4 + 4);
	hb.left = (int32_t *)malloc(nrec * 4 + 4);
	hb.right = (int32_t *)malloc(nrec * 4 + 4);
	hb.count = (int32_t *)malloc(nrec * 4 + 4);
	hb.thr = (uint8_t *)malloc(nrec + 1);
	hb.nanl = (uint8_t *)malloc(nrec + 1);
	hb.weight = (double *)malloc(nrec * 8 + 8);
	hb.imp = (float *)malloc(nrec * 4 + 4);
	hb.value = (float *)malloc(nrec * 4 * (size_t)cfg.outputs + 4);
	if (!toff_h || !hb.toff || !hb.feat || !hb.left || !hb.right || !hb.count || !hb.thr ||
	    !hb.nanl || !hb.weight || !hb.imp || !hb.value) {
		free(toff_h);
		return gwb_error(GWB_ENOMEM, "rf.train: out of host memory for %zu nodes", nrec);
	}
	Rec b = rec2.view();
	if ((rc = readback(toff_h, P<int>(toff), (size_t)T_ + 1)) ||
	    (rc = readback(hb.feat, b.feat, nrec)) || (rc = readback(hb.left, b.left, nrec)) ||
	    (rc = readback(hb.right, b.right, nrec)) || (rc = readback(hb.count, b.count, nrec)) ||
	    (rc = readback(hb.thr, b.thr, nrec)) || (rc = readback(hb.nanl, b.nanl, nrec)) ||
	    (rc = readback(hb.weight, b.weight, nrec)) || (rc = readback(hb.imp, b.imp, nrec)) ||
	    (rc = readback(hb.value, b.value, nrec * (size_t)cfg.outputs))) {
		free(toff_h);
		return rc;
	}
	for (int t = 0; t <= T_; t++)
		hb.toff[t] = toff_h[t];
	free(toff_h);
	if (oob) {
		// this batch's trees into the rows' OOB sums, while the records are on the device
		// (last: a batch that fails before here is grown again, and must not count twice)
		double t0 = gwb_now();
		if ((rc = gwb_launch("rf_oob", pick_oob(cfg.outputs), dim3(grid1(N, 128)), dim3(128),
				     0, 0, (double)N * (0.37 * T_ * 8 + 8.0 * cfg.outputs * 2), d, cfg,
				     T_, rec2.view(), (const int *)P<int>(toff), cfg.outputs,
				     P<double>(oob_acc), P<int>(oob_nt))) ||
		    (rc = CUDA_CHECK(cudaStreamSynchronize(0))))
			return rc;
		oob_ms += (gwb_now() - t0) * 1e3;
	}
	return GWB_OK;
}

// Quantize job->d on the device: the row sample of quantize.c (same hash, same cap), keys
// sorted per feature by a segmented radix sort, edges by quantize.c's rule, then the codes.
// The host gets the edges (for thresholds); the codes stay in `codes`.
gwb_status Trainer::quantize(gwb_quant **out)
{
	const gwb_dataset *ds = job->d;
	const gwb_rf_params *p = job->p;
	size_t N = ds->rows, sample = p->quantile_sample ? p->quantile_sample
							: (size_t)GWB_QUANT_DEFAULT_SAMPLE;
	int F = ds->features, bins = p->bins, maxnb = bins - 1;
	gwb_status rc;
	gwb_quant *q = (gwb_quant *)calloc(1, sizeof(gwb_quant));
	Buf X, flags, sidx, nsel, keys, keys2, edges, nbd, hn, tmp, offs;
	X.tag = flags.tag = sidx.tag = nsel.tag = keys.tag = keys2.tag = edges.tag = nbd.tag =
		hn.tag = tmp.tag = offs.tag = "rf.quantize";
	int n = (int)N;
	const float *Xd = nullptr;

	*out = nullptr;
	if (!q)
		return gwb_error(GWB_ENOMEM, "rf.train: out of host memory");
	q->rows = N;
	q->features = F;
	q->bins = bins;
	q->nbins = (int *)calloc((size_t)F, sizeof(int));
	q->has_nan = (uint8_t *)calloc((size_t)F, 1);
	q->edges = (float *)calloc((size_t)F * maxnb + 1, sizeof(float));
	q->offset = (int *)calloc((size_t)F + 1, sizeof(int));
	std::vector<int> hn_h((size_t)F), offs_h((size_t)F + 1);
	if (!q->nbins || !q->has_nan || !q->edges || !q->offset) {
		rc = gwb_error(GWB_ENOMEM, "rf.train: out of host memory");
		goto out;
	}
	// a GPU-resident dataset (d:to("gpu")) is read in place; else the features are copied up
	Xd = gwb_dataset_gpu_X(ds);
	if (!Xd) {
		if ((rc = buf_need(X, N * (size_t)F * 4)) || (rc = upload(X.p, ds->X, N * (size_t)F * 4)))
			goto out;
		Xd = (const float *)X.p;
	}
	if (N > sample) {
		uint64_t cut = (uint64_t)((double)sample / (double)N * 18446744073709551615.0);
		size_t bytes = 0;
		if ((rc = buf_need(flags, N)) || (rc = buf_need(sidx, N * 4)) ||
		    (rc = buf_need(nsel, 8)))
			goto out;
		if ((rc = gwb_launch("rf_qsample", k_qflags, dim3(1024), dim3(256), 0, 0, (double)N,
				     N, p->seed, cut, P<uint8_t>(flags))))
			goto out;
		thrust::counting_iterator<int> it(0);
		if ((rc = CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, it, P<uint8_t>(flags),
							       P<int>(sidx), P<int>(nsel), (int)N))) ||
		    (rc = buf_need(tmp, bytes)) ||
		    (rc = CUDA_CHECK(cub::DeviceSelect::Flagged(tmp.p, bytes, it, P<uint8_t>(flags),
							       P<int>(sidx), P<int>(nsel), (int)N))))
			goto out;
		int got = 0;
		if ((rc = gwb_copy(&got, nsel.p, 4, GWB_D2H, false)))
			goto out;
		size_t capn = sample + sample / 8 + 64;  // quantize.c stops there
		n = (int)std::min<size_t>((size_t)got, capn);
	}
	if ((rc = buf_need(keys, (size_t)F * n * 4 + 4)) || (rc = buf_need(keys2, (size_t)F * n * 4 + 4)) ||
	    (rc = buf_need(edges, (size_t)F * maxnb * 4 + 4)) || (rc = buf_need(nbd, (size_t)F * 4)) ||
	    (rc = buf_need(hn, (size_t)F * 4)) || (rc = buf_need(offs, ((size_t)F + 1) * 4)))
		goto out;
	if (n > 0) {
		if ((rc = gwb_launch("rf_qkeys", k_qkeys,
				     dim3((unsigned)std::min(((size_t)n + 255) / 256, (size_t)64), F),
				     dim3(256), 0, 0, (double)F * n * 8, Xd, N,
				     N > sample ? (const int *)P<int>(sidx) : (const int *)nullptr, n,
				     P<uint32_t>(keys))))
			goto out;
		for (int j = 0; j <= F; j++)
			offs_h[(size_t)j] = j * n;
		if ((rc = gwb_copy(offs.p, offs_h.data(), ((size_t)F + 1) * 4, GWB_H2D, false)))
			goto out;
		size_t bytes = 0;
		const int *o = P<int>(offs);
		cudaEvent_t e0 = nullptr, e1 = nullptr;
		if ((rc = CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(
			     nullptr, bytes, P<uint32_t>(keys), P<uint32_t>(keys2), F * n, F, o, o + 1))) ||
		    (rc = buf_need(tmp, bytes)) || (rc = CUDA_CHECK(cudaEventCreate(&e0))) ||
		    (rc = CUDA_CHECK(cudaEventCreate(&e1))))
			goto out;
		cudaEventRecord(e0, 0);
		rc = CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortKeys(
			tmp.p, bytes, P<uint32_t>(keys), P<uint32_t>(keys2), F * n, F, o, o + 1));
		cudaEventRecord(e1, 0);
		{
			// the sort's time, recorded like a gwb_launch (the record owns the events)
			const int g[3] = {F, 1, 1}, bl[3] = {0, 0, 0};
			gwb_prof_kernel("rf_qsort (cub)", g, bl, 0, 0, 0, 0, (double)F * n * 4 * 8, -1.0,
					(void *)e0, (void *)e1);
		}
		if (rc)
			goto out;
	}
	if ((rc = gwb_launch("rf_qedges", k_qedges<256>, dim3(F), dim3(256), 0, 0,
			     (double)F * n * 4, (const uint32_t *)P<uint32_t>(keys2), n, maxnb,
			     P<float>(edges), P<int>(nbd))) ||
	    (rc = CUDA_CHECK(cudaMemset(hn.p, 0, (size_t)F * 4))) || (rc = buf_need(codes, N * (size_t)F)))
		goto out;
	if ((rc = gwb_launch("rf_quantize", k_quantize,
			     dim3((unsigned)std::min<size_t>((N + 255) / 256, 256), F), dim3(256),
			     (size_t)maxnb * 4, 0, (double)N * F * 5, Xd, N, F,
			     (const float *)P<float>(edges), maxnb, (const int *)P<int>(nbd),
			     P<uint8_t>(codes), P<int>(hn))))
		goto out;
	if ((rc = gwb_copy(q->nbins, nbd.p, (size_t)F * 4, GWB_D2H, false)) ||
	    (rc = gwb_copy(q->edges, edges.p, (size_t)F * maxnb * 4, GWB_D2H, false)) ||
	    (rc = gwb_copy(hn_h.data(), hn.p, (size_t)F * 4, GWB_D2H, false)))
		goto out;
	for (int j = 0; j < F; j++) {
		q->has_nan[j] = (uint8_t)(hn_h[(size_t)j] != 0);
		q->offset[j + 1] = q->offset[j] + q->nbins[j] + 1;
	}
	*out = q;
	q = nullptr;
out:
	gwb_quant_free(q);
	Buf *all[] = {&X, &flags, &sidx, &nsel, &keys, &keys2, &edges, &nbd, &hn, &tmp, &offs};
	for (Buf *b : all)
		buf_free(*b);
	return rc;
}

gwb_status Trainer::train()
{
	const gwb_rf_params *p = job->p;
	const gwb_dataset *ds = job->d;
	const gwb_quant *qz = job->q;
	gwb_status rc;
	gwb_gpu_info info;

	if ((rc = gwb_gpu_get_info(&info)))
		return rc;
	smem_limit = info.smem_per_block_optin ? info.smem_per_block_optin : info.smem_per_block;
	size_t N = ds->rows;
	int F = ds->features;
	if (F > PERM_MAX)
		return gwb_error(GWB_EINVAL, "rf.train: the GPU trainer handles up to %d features "
				 "(got %d); use backend=\"cpu\"", PERM_MAX, F);
	if (N > (size_t)INT32_MAX / 2)
		return gwb_error(GWB_EINVAL, "rf.train: the GPU trainer handles up to %d rows (got "
				 "%zu); use backend=\"cpu\"", INT32_MAX / 2, N);
	bool reg = ds->task == GWB_TASK_REGRESSION;
	cfg.B = p->bins;
	cfg.C = reg ? 0 : ds->classes;
	cfg.CH = reg ? 3 : 1 + ds->classes;
	cfg.ACC = reg ? 3 : ds->classes;
	cfg.mtry = job->mtry;
	cfg.crit = job->criterion;
	cfg.min_leaf = p->min_leaf;
	cfg.min_split = p->min_split;
	cfg.depth = p->depth;
	cfg.min_dec = p->min_impurity_decrease;
	cfg.seed = p->seed;
	cfg.bootstrap = p->bootstrap;
	cfg.outputs = f->outputs;
	cfg.R = 4096;
	if (!reg && cfg.C > 64)
		return gwb_error(GWB_EINVAL, "rf.train: the GPU trainer handles up to 64 classes (got "
				 "%d); use backend=\"cpu\"", cfg.C);
	block = p->block > 0 ? p->block : 128;  // fastest of 128/256/512 on an H200 (bench)
	if (block < 64 || block > 1024 || block % 32)
		return gwb_error(GWB_EINVAL, "rf.train: block must be a multiple of 32 between 64 "
				 "and 1024 (got %d)", block);
	intmode = !reg && !p->sample_weight;
	if (intmode && job->class_weight)
		for (int k = 0; k < ds->classes; k++)
			if (job->class_weight[k] != 1.0)
				intmode = false;
	size_t esize = reg ? sizeof(double) : (intmode ? sizeof(unsigned) : sizeof(float));
	size_t per_feat = (size_t)cfg.B * cfg.CH * esize;
	size_t budget = smem_limit - (size_t)F * 2 - 1024;
	if (per_feat > budget)
		return gwb_error(GWB_EINVAL, "rf.train: one feature's histogram (%d bins x %d "
				 "channels = %zu bytes) does not fit in the GPU's %zu bytes of shared "
				 "memory; use fewer bins or backend=\"cpu\"", cfg.B, cfg.CH, per_feat,
				 smem_limit);
	// Prefer a small histogram (more blocks per SM) when the whole draw fits in 48 KB.
	size_t want = (size_t)cfg.mtry * per_feat;
	cfg.G = (int)(want <= budget ? cfg.mtry : budget / per_feat);
	if (cfg.G < 1)
		cfg.G = 1;
	cfg.ngroups0 = (cfg.mtry + cfg.G - 1) / cfg.G;
	cfg.hist_smem = ((size_t)cfg.G * per_feat + 15) / 16 * 16;
	cfg.slot_elems = (size_t)cfg.mtry * cfg.B * cfg.CH;
	size_t smem = cfg.hist_smem + (size_t)F * 2;
	// Sibling subtraction where it is exact in what it covers: every node draws all F
	// features (max_features = all), so a parent's histogram holds its children's features.
	// A derived histogram costs reading two kept ones (and writing one): worth it from about
	// 3 x (bins x channels x element) / 32 rows (a built row reads a 32-byte sector per
	// feature).
	cfg.sub = p->subtract && cfg.mtry == F && gwb_switch_on(GWB_SW_RF_SUBTRACT);
	cfg.gatom = !gwb_switch_on(GWB_SW_RF_SMEM_HIST);
	cfg.sub_min = (int)(3 * per_feat / 32) + 1;
	long long ev;
	if ((ev = env_count("GWB_RF_GPU_SUB_MIN", 1LL << 28)) > 0)
		cfg.sub_min = (int)ev;  // tests: derive small nodes too
	if ((ev = env_count("GWB_RF_GPU_SUB_BUDGET", 1LL << 50)) > 0)
		sub_budget = (size_t)ev;  // tests: force fallbacks
	void (*kh)(HistArgs) = reg ? (void (*)(HistArgs))k_hist<double>
				   : (intmode ? (void (*)(HistArgs))k_hist<unsigned>
					      : (void (*)(HistArgs))k_hist<float>);
	void (*kd)(HistArgs) = reg ? (void (*)(HistArgs))k_derive<double>
				   : (intmode ? (void (*)(HistArgs))k_derive<unsigned>
					      : (void (*)(HistArgs))k_derive<float>);
	if ((rc = CUDA_CHECK(cudaFuncSetAttribute((const void *)kh,
						  cudaFuncAttributeMaxDynamicSharedMemorySize,
						  (int)smem))) ||
	    (rc = CUDA_CHECK(cudaFuncSetAttribute((const void *)kd,
						  cudaFuncAttributeMaxDynamicSharedMemorySize,
						  (int)smem))))
		return rc;
	if ((rc = CUDA_CHECK(cudaMemcpyToSymbol(c_poisson, gwb_rf_poisson_u32,
						sizeof(gwb_rf_poisson_u32)))))
		return rc;

	// resident data: codes (quantized here when the dispatcher did not), labels, weights
	double tq = gwb_now();
	if (!qz) {
		if ((rc = quantize(&own_q)))
			return rc;
		qz = own_q;
		f->timing.quantize_ms = (gwb_now() - tq) * 1e3;
	}
	{
		std::vector<int> nb_h(qz->nbins, qz->nbins + F);
		if ((rc = buf_need(nb, (size_t)F * 4)) ||
		    (rc = gwb_copy(nb.p, nb_h.data(), (size_t)F * 4, GWB_H2D, false)))
			return rc;
	}
	if (qz->codes &&
	    ((rc = buf_need(codes, N * (size_t)F)) ||
	     (rc = upload(codes.p, qz->codes, N * (size_t)F))))
		return rc;
	if (reg) {
		if ((rc = buf_need(yr, N * 4)) || (rc = upload(yr.p, ds->yr, N * 4)))
			return rc;
	} else {
		if ((rc = buf_need(y, N * 4)) || (rc = upload(y.p, ds->y, N * 4)))
			return rc;
		if (!intmode && job->class_weight &&
		    ((rc = buf_need(cw, (size_t)ds->classes * 8)) ||
		     (rc = gwb_copy(cw.p, job->class_weight, (size_t)ds->classes * 8, GWB_H2D, false))))
			return rc;
	}
	if (p->sample_weight &&
	    ((rc = buf_need(sw, N * 4)) || (rc = upload(sw.p, p->sample_weight, N * 4))))
		return rc;
	d.codes = P<uint8_t>(codes);
	d.N = N;
	d.F = F;
	d.nb = P<int>(nb);
	d.y = reg ? nullptr : P<int32_t>(y);
	d.yr = reg ? P<float>(yr) : nullptr;
	d.sw = p->sample_weight ? P<float>(sw) : nullptr;
	d.cw = (!reg && !intmode && job->class_weight) ? P<double>(cw) : nullptr;
	d.ycenter = reg ? job->y_center : 0;

	if (job->judge && (rc = judge_begin(qz)))
		return rc;
	// OOB on the device (the sums stay here until the last batch; rf.h)
	oob = p->bootstrap && p->oob;
	if (oob &&
	    ((rc = buf_need(oob_acc, N * (size_t)cfg.outputs * 8)) ||
	     (rc = buf_need(oob_nt, N * 4)) ||
	     (rc = CUDA_CHECK(cudaMemset(oob_acc.p, 0, N * (size_t)cfg.outputs * 8))) ||
	     (rc = CUDA_CHECK(cudaMemset(oob_nt.p, 0, N * 4)))))
		return rc;

	// batches that fit: rows (ids + counts, two levels), records (two copies), histogram slots
	size_t free_b = 0, total_b = 0;
	if ((rc = gwb_gpu_mem(&free_b, &total_b)))
		return rc;
	double nin = p->bootstrap ? 0.64 * (double)N + 64 : (double)N;
	double maxnodes = std::min(std::ldexp(1.0, std::min(p->depth + 1, 40)),
				   2.0 * nin / std::max(1, p->min_leaf) + 1);
	double per_tree = 10.0 * N + maxnodes * 2 * (48.0 + 4.0 * cfg.outputs) +
			  maxnodes * 0.5 * (100.0 + 8.0 * cfg.ACC) +
			  (nin / cfg.R + 1) * (double)cfg.slot_elems * esize + 64;
	double usable = 0.85 * (double)free_b;
	int Tb = (int)std::min<double>((double)p->trees, usable / per_tree);
	int tcap = (int)std::max<double>(1.0, std::floor((double)(1 << 30) / (double)N));
	if (Tb > tcap)
		Tb = tcap;
	const char *cap_env = getenv("GWB_RF_GPU_BATCH");  // tests: force several batches
	if (cap_env && atoi(cap_env) > 0 && Tb > atoi(cap_env))
		Tb = atoi(cap_env);
	if (Tb < 1) {
		char need[32], have[32];
		snprintf(need, sizeof(need), "%.1f MiB", per_tree / 1048576.0);
		snprintf(have, sizeof(have), "%.1f MiB", free_b / 1048576.0);
		return gwb_error(GWB_ENOMEM, "rf.train: one tree needs about %s (%.0f bytes) of GPU "
				 "memory but only %s (%zu bytes) is free; use fewer rows, a smaller "
				 "depth, or backend=\"cpu\"", need, per_tree, have, free_b);
	}
	batches = (HostBatch *)calloc((size_t)p->trees, sizeof(HostBatch));
	if (!batches)
		return gwb_error(GWB_ENOMEM, "rf.train: out of host memory");
	// Without a queue the trees are [0, trees); with one (hybrid, forest.h's gwb_rf_sched)
	// this side grows the consecutive ranges it claims from the front, and stops when the
	// queue has none left (the trees it grew are then [0, front)).
	int done = 0, end = 0;
	for (;;) {
		if (done >= end) {
			int first = 0, n = 0;
			if (job->sched)
				n = gwb_rf_sched_front(job->sched, Tb, &first);
			else if (end < p->trees)
				first = end, n = p->trees - end;
			if (n <= 0)
				break;
			done = first;
			end = first + n;
		}
		int T_ = std::min(Tb, end - done);
		HostBatch hb;
		if (reg)
			rc = run_batch<double>(job->tree_first + done, T_, hb);
		else if (intmode)
			rc = run_batch<unsigned>(job->tree_first + done, T_, hb);
		else
			rc = run_batch<float>(job->tree_first + done, T_, hb);
		release_batch();
		if (rc == GWB_ENOMEM && T_ > 1) {
			// a level grew past the estimate: this batch again with half the trees
			hb.release();
			Tb = std::max(1, T_ / 2);
			gwb_error_clear();
			continue;
		}
		if (rc) {
			hb.release();
			if (rc == GWB_ENOMEM && cfg.sub &&
			    !strncmp(gwb_errmsg(), "GPU out of memory", 17)) {
				// the kept parent histograms are not in the batch estimate above
				char msg[1024];
				snprintf(msg, sizeof(msg), "%s", gwb_errmsg());
				rc = gwb_error(GWB_ENOMEM, "rf.train: %s; or subtract = false: sibling "
					       "subtraction keeps parent histograms on the device, "
					       "training without it needs less GPU memory", msg);
			}
			return rc;
		}
		batches[nbatches++] = hb;
		if (job->sched)
			gwb_rf_sched_front_grown(job->sched, done, T_);
		done += T_;
	}
	if (job->sched) {
		// hybrid: the CPU side's trees [front, trees) go into this side's forest (one copy, as
		// the batches' are made) and into the same OOB sums, after this side's (trees in index
		// order, as the GPU backend sums them)
		if ((rc = gwb_rf_sched_back_result(job->sched, &back_fb, &back_front)))
			return rc;
		if (oob && back_fb && back_front < p->trees && (rc = oob_back(back_fb, back_front)))
			return rc;
	}
	if (oob && (rc = oob_finish()))
		return rc;
	if (job->judge && (rc = judge_finish()))
		return rc;
	g_sub_stats.active = cfg.sub != 0;
	g_sub_stats.min_rows = cfg.sub_min;
	g_sub_stats.kept = sub_kept;
	g_sub_stats.derived = sub_derived;
	g_sub_stats.fallbacks = sub_fallbacks;
	return GWB_OK;
}

// Judging (job->judge): the test rows coded on the device against the edges the trees split
// on (k_quantize, the training rows' rule), the cuts and counts, and zeroed running sums.
gwb_status Trainer::judge_begin(const gwb_quant *qz)
{
	const gwb_rf_judge *j = job->judge;
	const gwb_dataset *t = j->test;
	size_t NT = t->rows, F = (size_t)d.F, O = (size_t)cfg.outputs;
	int maxnb = qz->bins - 1;
	Buf X, edges, hn;
	X.tag = edges.tag = hn.tag = jcodes.tag = jrun.tag = jout.tag = jcuts.tag = jcounts.tag =
		"rf.judge";
	gwb_status rc;

	if (t->features != d.F || !NT)
		return gwb_error(GWB_EINVAL, "rf: the rows to judge have %d features (the forest's: "
				 "%d) and %zu rows", t->features, d.F, NT);
	const float *Xd = gwb_dataset_gpu_X(t);
	if (!Xd) {
		if ((rc = buf_need(X, NT * F * 4)) || (rc = upload(X.p, t->X, NT * F * 4)))
			return rc;
		Xd = (const float *)X.p;
	}
	if (!(rc = buf_need(edges, F * (size_t)maxnb * 4 + 4)) && !(rc = buf_need(hn, F * 4)) &&
	    !(rc = buf_need(jcodes, NT * F)) &&
	    !(rc = buf_need(jrun, NT * (size_t)j->nd * O * 8)) &&
	    !(rc = buf_need(jout, (size_t)j->nc * j->nd * NT * O * 8)) &&
	    !(rc = buf_need(jcuts, (size_t)j->nd * 4)) && !(rc = buf_need(jcounts, (size_t)j->nc * 4)) &&
	    !(rc = gwb_copy(edges.p, qz->edges, F * (size_t)maxnb * 4, GWB_H2D, false)) &&
	    !(rc = gwb_copy(jcuts.p, j->cuts, (size_t)j->nd * 4, GWB_H2D, false)) &&
	    !(rc = gwb_copy(jcounts.p, j->counts, (size_t)j->nc * 4, GWB_H2D, false)) &&
	    !(rc = CUDA_CHECK(cudaMemset(jrun.p, 0, NT * (size_t)j->nd * O * 8))) &&
	    !(rc = CUDA_CHECK(cudaMemset(jout.p, 0, (size_t)j->nc * j->nd * NT * O * 8))) &&
	    !(rc = CUDA_CHECK(cudaMemset(hn.p, 0, F * 4))))
		rc = gwb_launch("rf_quantize", k_quantize,
				dim3((unsigned)std::min<size_t>((NT + 255) / 256, 256), (unsigned)F),
				dim3(256), (size_t)maxnb * 4, 0, (double)NT * F * 5, Xd, NT, (int)F,
				(const float *)P<float>(edges), maxnb, (const int *)P<int>(nb),
				P<uint8_t>(jcodes), P<int>(hn));
	if (!rc)
		rc = CUDA_CHECK(cudaStreamSynchronize(0));  // before X, edges and hn are freed
	Buf *all[] = {&X, &edges, &hn};
	for (Buf *b : all)
		buf_free(*b);
	return rc;
}

// Judging: every (count, cut)'s sums back to the caller.
gwb_status Trainer::judge_finish()
{
	gwb_rf_judge *j = job->judge;
	size_t n = (size_t)j->nc * j->nd * j->test->rows * (size_t)cfg.outputs;
	gwb_status rc = gwb_copy(j->sums, jout.p, n * 8, GWB_D2H, false);
	if (!rc)
		j->done = true;
	return rc;
}

// Hybrid: the OOB sums of another side's trees [front, trees) of fb (the CPU workers'; its
// other trees have no nodes), uploaded and walked by the same kernel after this side's trees.
gwb_status Trainer::oob_back(const gwb_forest *fb, int front)
{
	double t0 = gwb_now();
	int T_ = job->p->trees - front, O = cfg.outputs;
	size_t n = fb->nodes, base = (size_t)fb->tree_offset[front];
	Buf feat, left, right, thr, nanl, value, tof;
	feat.tag = left.tag = right.tag = thr.tag = nanl.tag = value.tag = tof.tag = "rf.oob";
	std::vector<int> toff_h((size_t)T_ + 1);
	gwb_status rc;

	if (n - base > (size_t)INT32_MAX)
		return gwb_error(GWB_EINVAL, "rf.train: the CPU side's %zu nodes are too many for the "
				 "GPU's OOB", n - base);
	n -= base;
	for (int t = 0; t <= T_; t++)
		toff_h[(size_t)t] = (int)(fb->tree_offset[front + t] - (int64_t)base);
	if (!(rc = buf_need(feat, n * 4 + 4)) && !(rc = buf_need(left, n * 4 + 4)) &&
	    !(rc = buf_need(right, n * 4 + 4)) && !(rc = buf_need(thr, n + 1)) &&
	    !(rc = buf_need(nanl, n + 1)) && !(rc = buf_need(value, n * 4 * (size_t)O + 4)) &&
	    !(rc = buf_need(tof, ((size_t)T_ + 1) * 4)) &&
	    !(rc = upload(feat.p, fb->feature + base, n * 4)) &&
	    !(rc = upload(left.p, fb->left + base, n * 4)) &&
	    !(rc = upload(right.p, fb->right + base, n * 4)) &&
	    !(rc = upload(thr.p, fb->threshold_bin + base, n)) &&
	    !(rc = upload(nanl.p, fb->nan_left + base, n)) &&
	    !(rc = upload(value.p, fb->value + base * O, n * 4 * (size_t)O)) &&
	    !(rc = upload(tof.p, toff_h.data(), ((size_t)T_ + 1) * 4))) {
		Rec r{};
		r.feat = P<int>(feat);
		r.left = P<int>(left);
		r.right = P<int>(right);
		r.thr = P<uint8_t>(thr);
		r.nanl = P<uint8_t>(nanl);
		r.value = P<float>(value);
		Cfg c = cfg;
		c.tree0 = front;
		rc = gwb_launch("rf_oob", pick_oob(O), dim3(grid1(d.N, 128)), dim3(128), 0, 0,
				(double)d.N * (0.37 * T_ * 8 + 8.0 * O * 2), d, c, T_, r,
				(const int *)P<int>(tof), O, P<double>(oob_acc), P<int>(oob_nt));
		if (!rc)
			rc = CUDA_CHECK(cudaStreamSynchronize(0));
	}
	Buf *all[] = {&feat, &left, &right, &thr, &nanl, &value, &tof};
	for (Buf *b : all)
		buf_free(*b);
	oob_ms += (gwb_now() - t0) * 1e3;
	return rc;
}

// The rows' OOB results from the sums, copied back (4 or 8 bytes a row) and scored on the host
// by gwb_forest_oob_set, the CPU path's own scorer.
gwb_status Trainer::oob_finish()
{
	double t0 = gwb_now();
	const gwb_dataset *ds = job->d;
	size_t N = ds->rows;
	bool cls = ds->task == GWB_TASK_CLASSIFICATION;
	size_t eb = cls ? 4 : 8;
	Buf out;
	out.tag = "rf.oob";
	void *host = malloc(N * eb + 8);
	gwb_status rc;

	if (!host)
		return gwb_error(GWB_ENOMEM, "rf.train: out of host memory for %zu OOB predictions", N);
	if (!(rc = buf_need(out, N * eb)) &&
	    !(rc = gwb_launch("rf_oob_final", k_oob_final, dim3(grid1(N, 256)), dim3(256), 0, 0,
			      (double)N * (8.0 * cfg.outputs + 4 + eb), N, cfg.outputs, (int)cls,
			      (const double *)P<double>(oob_acc), (const int *)P<int>(oob_nt),
			      cls ? P<int32_t>(out) : nullptr, cls ? nullptr : P<double>(out))) &&
	    !(rc = gwb_copy(host, out.p, N * eb, GWB_D2H, false)))
		rc = gwb_forest_oob_set(f, ds, cls ? (const int32_t *)host : nullptr,
					cls ? nullptr : (const double *)host);
	free(host);
	buf_free(out);
	oob_ms += (gwb_now() - t0) * 1e3;
	return rc;
}

}  // namespace

extern "C" void gwb_rf_gpu_sub_stats(gwb_rf_sub_stats *out)
{
	*out = g_sub_stats;
}

extern "C" gwb_status gwb_rf_train_gpu(const gwb_rf_job *job, gwb_forest *f)
{
	double t0 = gwb_now(), k0, x0, k1, x1;
	gwb_status rc;
	Trainer *tr;

	if ((rc = gwb_gpu_init()))
		return rc;
	gwb_prof_flush();
	gwb_prof_totals(&k0, &x0);
	tr = new (std::nothrow) Trainer();
	if (!tr)
		return gwb_error(GWB_ENOMEM, "rf.train: out of host memory");
	tr->job = job;
	tr->f = f;
	g_sub_stats = gwb_rf_sub_stats();
	if (job->p->progress)
		gwb_progress_begin("rf.train gpu", job->p->trees);
	rc = tr->train();
	if (job->p->progress)
		gwb_progress_end();
	if (!rc && !job->judge) {
		size_t total = 0, nb = 0, base = 0;
		const gwb_forest *fb = tr->back_fb;
		int T = job->p->trees, front = tr->back_front;
		for (int i = 0; i < tr->nbatches; i++)
			total += tr->batches[i].nodes;
		if (fb && front < T) {
			base = (size_t)fb->tree_offset[front];
			nb = fb->nodes - base;
		}
		rc = gwb_forest_alloc_nodes(f, total + nb);
		if (!rc) {
			size_t at = 0;
			int t0i = 0;
			const gwb_quant *q = tr->own_q ? tr->own_q : job->q;
			int O = f->outputs;
			f->tree_offset[0] = 0;
			for (int i = 0; i < tr->nbatches; i++) {
				HostBatch &b = tr->batches[i];
				for (int t = 1; t <= b.trees; t++)
					f->tree_offset[t0i + t] = (int64_t)at + b.toff[t];
				memcpy(f->feature + at, b.feat, b.nodes * 4);
				memcpy(f->left + at, b.left, b.nodes * 4);
				memcpy(f->right + at, b.right, b.nodes * 4);
				memcpy(f->count + at, b.count, b.nodes * 4);
				memcpy(f->threshold_bin + at, b.thr, b.nodes);
				memcpy(f->nan_left + at, b.nanl, b.nodes);
				memcpy(f->weight + at, b.weight, b.nodes * 8);
				memcpy(f->impurity + at, b.imp, b.nodes * 4);
				memcpy(f->value + at * O, b.value, b.nodes * 4 * (size_t)O);
				for (size_t g = at; g < at + b.nodes; g++)
					f->threshold[g] = f->feature[g] >= 0
						? gwb_quant_threshold(q, f->feature[g], f->threshold_bin[g])
						: 0.0f;
				at += b.nodes;
				t0i += b.trees;
				b.release();
			}
			if (fb && front < T) {  // hybrid: the CPU side's trees after this side's
				gwb_forest_copy_nodes(f, at, fb, base, nb);
				for (int t = front + 1; t <= T; t++)
					f->tree_offset[t] = (int64_t)at + (fb->tree_offset[t] - (int64_t)base);
			}
		}
	}
	double tr_oob_ms = tr->oob_ms;
	tr->release();
	delete tr;
	gwb_prof_flush();
	gwb_prof_totals(&k1, &x1);
	f->timing.kernel_ms = k1 - k0;
	f->timing.transfer_ms = x1 - x0;
	f->timing.subtract_kept = g_sub_stats.kept;
	f->timing.subtract_derived = g_sub_stats.derived;
	// grow = everything here but the device quantization and OOB (reported apart)
	f->timing.oob_ms = tr_oob_ms;
	f->timing.grow_ms = (gwb_now() - t0) * 1e3 - (job->q ? 0.0 : f->timing.quantize_ms) -
			    tr_oob_ms;
	return rc;
}

// Every trainer kernel under the name its launch records, registered as the plugin loads
// (gwb_gpu_init), so gpu.occupancy("rf_hist", 256) answers before the first training. rf_hist
// and rf_derive are registered as their float-count variant (weighted classification);
// unweighted classification launches the unsigned one and regression the double one, which
// the first launch does not replace (the registry keeps the first function per name).
static const struct rf_train_registry {
	rf_train_registry()
	{
		static const struct {
			const char *name;
			const void *fn;
		} k[] = {
			{"rf_hist", (const void *)k_hist<float>},
			{"rf_derive", (const void *)k_derive<float>},
			{"rf_stats", (const void *)k_stats<256>},
			{"rf_plan", (const void *)k_plan},
			{"rf_decide", (const void *)k_decide},
			{"rf_pcount", (const void *)k_pcount<256>},
			{"rf_sizes", (const void *)k_sizes},
			{"rf_pscatter", (const void *)k_pscatter<256>},
			{"rf_emit", (const void *)k_emit},
			{"rf_tadv", (const void *)k_tadv},
			{"rf_reorder", (const void *)k_reorder},
			{"rf_judge", (const void *)k_judge},
			{"rf_boot_count", (const void *)k_boot_count},
			{"rf_boot_write", (const void *)k_boot_write},
			{"rf_roots", (const void *)k_roots},
			{"rf_nchunk", (const void *)k_nchunk},
			{"rf_quantize", (const void *)k_quantize},
			{"rf_qsample", (const void *)k_qflags},
			{"rf_qkeys", (const void *)k_qkeys},
			{"rf_qedges", (const void *)k_qedges<256>},
		};
		for (const auto &e : k)
			gwb_prof_register_kernel(e.name, e.fn);
	}
} rf_train_registry_;
