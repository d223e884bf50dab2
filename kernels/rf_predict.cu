// rf_predict.cu - forest prediction on the GPU (see rf.h).
// Layout: the rows to predict are coded against the forest's own thresholds (per feature, the
// sorted distinct finite thresholds its nodes use: x <= thr_k exactly when code(x) <= k, NaN
// gets code 255), written row-major so one row's codes are contiguous; a block stages its rows'
// codes in shared memory with 16-byte loads and walks every tree from there, the 32 threads of
// a warp on one tree for 32 rows. Nodes are 8 bytes, {feature | code threshold << 16 |
// nan_left << 24 | leaf << 25, left child or value index}, each tree breadth-first with
// siblings adjacent (right = left + 1). Votes: per-thread sums in registers (up to 16
// outputs), added per row in shared memory, then one store (or one atomic per row and class
// when the trees are split over several blocks); GWB_RF_VOTE_ATOMIC adds every leaf straight
// to global memory instead, for comparison.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "common.cuh"
#include "rf.h"
#include "../src/intr.h"
#include "../src/switches.h"

namespace {

constexpr unsigned LEAF = 1u << 25;
constexpr unsigned NANL = 1u << 24;
constexpr int PCODE_FPT = 16;  // features one thread of k_pcode codes per 128-feature slice

// Code X (column-major, N x F) against per-feature threshold lists into row-major codes
// (N x Fp). Block: 32 rows (x) by 8 feature lanes (y) through a shared tile; each thread loads
// its PCODE_FPT values of a 128-feature slice before searching any, so 16 loads are in flight
// per thread instead of one. Measured on an H200 (200,000 x 256, ncu): 0.344 ms, bound by
// instructions (SM 69%, DRAM 14%), not memory; a branch-free search over +inf-padded lists
// was slower (0.369 ms, more instructions). The write-out's per-byte division by nf is a
// candidate; 16 features of one row per thread, stored as one 16-byte word, would drop the tile.
__global__ void k_pcode(const float *X, size_t N, int F, int Fp, const float *thr,
			const int *toff, uint8_t *codes)
{
	__shared__ uint8_t tile[32][33 * 4];
	size_t r0 = (size_t)blockIdx.x * 32;
	size_t r = r0 + threadIdx.x;
	for (int f0 = 0; f0 < F; f0 += 128) {
		int nf = min(128, F - f0);
		float v[PCODE_FPT];
#pragma unroll
		for (int i = 0; i < PCODE_FPT; i++) {
			int ff = threadIdx.y + 8 * i;
			v[i] = (r < N && ff < nf) ? __ldcs(&X[(size_t)(f0 + ff) * N + r]) : 0.0f;
		}
#pragma unroll
		for (int i = 0; i < PCODE_FPT; i++) {
			int ff = threadIdx.y + 8 * i;
			if (ff >= nf)
				break;
			int f = f0 + ff;
			uint8_t code;
			if (v[i] != v[i]) {
				code = 255;
			} else {
				int lo = __ldg(&toff[f]), hi = __ldg(&toff[f + 1]);  // thresholds < v
				int b = lo;
				while (lo < hi) {
					int mid = (lo + hi) >> 1;
					if (__ldg(&thr[mid]) < v[i])
						lo = mid + 1;
					else
						hi = mid;
				}
				code = (uint8_t)(lo - b);
			}
			tile[threadIdx.x][ff] = code;
		}
		__syncthreads();
		for (int i = threadIdx.y * 32 + threadIdx.x; i < 32 * nf; i += 32 * blockDim.y) {
			int rr = i / nf, ff = i % nf;
			size_t rw = r0 + rr;
			if (rw < N)
				codes[rw * Fp + f0 + ff] = tile[rr][ff];
		}
		__syncthreads();
	}
}

// Walk trees [t0, t1) for S = blockDim.x / P rows per block. Thread i serves row i % S and
// trees t0 + i / S, t0 + i / S + P, ...: the 32 threads of a warp walk the same tree for 32
// rows, so the top levels are one broadcast read and deeper levels (stored breadth-first, 8
// bytes a node, siblings adjacent) touch few cache lines. Nodes are uint2 {feature | code
// threshold << 16 | nan_left << 24 | leaf << 25, left child (right = left + 1) or, for a
// leaf, the value index}. SMEM: the block's rows' codes are staged in shared memory with a
// row stride of Fp + 4 bytes (rows fall in different banks). OM > 0: votes of up to OM
// outputs stay in registers until the end; OM == 0: shared-memory atomics per leaf. ATOMIC:
// every (row, tree) adds its leaf straight to global memory (the plain per-sample path).
template <bool SMEM, bool ATOMIC, int OM>
__global__ void k_predict(const uint2 *__restrict__ nodes, const int *__restrict__ troot, int t0,
			  int t1, const float *__restrict__ value, int O,
			  const uint8_t *__restrict__ codes, size_t N, int Fp, int P,
			  float *votes, bool split_trees)
{
	extern __shared__ __align__(16) unsigned char sm[];
	int S = blockDim.x / P;
	int SW = Fp / 4 + 1;                          // shared row stride in words
	float *sv = (float *)sm;                       // S x O
	uint32_t *sc = (uint32_t *)(sm + ((size_t)S * O * 4 + 15) / 16 * 16);  // S x SW words
	size_t r0 = (size_t)blockIdx.x * S;
	int s = threadIdx.x % S, lane = threadIdx.x / S;
	size_t r = r0 + s;
	if (!ATOMIC)
		for (int i = threadIdx.x; i < S * O; i += blockDim.x)
			sv[i] = 0;
	if (SMEM) {
		size_t nrow = min((size_t)S, N - r0);
		const uint4 *src = (const uint4 *)(codes + r0 * Fp);
		int q = Fp / 16;
		int n16 = (int)nrow * q;
		for (int i = threadIdx.x; i < n16; i += blockDim.x) {
			uint4 v = __ldcs(&src[i]);
			uint32_t *dst = sc + (size_t)(i / q) * SW + (i % q) * 4;
			dst[0] = v.x;
			dst[1] = v.y;
			dst[2] = v.z;
			dst[3] = v.w;
		}
	}
	__syncthreads();
	float acc[OM > 0 ? OM : 1];
#pragma unroll
	for (int k = 0; k < (OM > 0 ? OM : 1); k++)
		acc[k] = 0;
	if (r < N) {
		const uint8_t *row = SMEM ? (const uint8_t *)(sc + (size_t)s * SW) : codes + r * Fp;
		for (int t = t0 + lane; t < t1; t += P) {
			uint2 nd = __ldg(&nodes[troot[t]]);
			while (!(nd.x & LEAF)) {
				int f = nd.x & 0xffff, thr = (nd.x >> 16) & 0xff;
				int code = row[f];
				bool left = code == 255 ? (nd.x & NANL) != 0 : code <= thr;
				nd = __ldg(&nodes[nd.y + (left ? 0 : 1)]);
			}
			const float *v = value + (size_t)nd.y * O;
			if (ATOMIC) {
				for (int k = 0; k < O; k++)
					atomicAdd(&votes[r * O + k], __ldg(&v[k]));
			} else if (OM > 0) {
#pragma unroll
				for (int k = 0; k < (OM > 0 ? OM : 1); k++)
					if (k < O)
						acc[k] += __ldg(&v[k]);
			} else {
				for (int k = 0; k < O; k++)
					atomicAdd(&sv[s * O + k], __ldg(&v[k]));
			}
		}
		if (!ATOMIC && OM > 0) {
#pragma unroll
			for (int k = 0; k < (OM > 0 ? OM : 1); k++)
				if (k < O) {
					if (P == 1)
						sv[s * O + k] = acc[k];
					else
						atomicAdd(&sv[s * O + k], acc[k]);
				}
		}
	}
	if (ATOMIC)
		return;
	__syncthreads();
	for (int i = threadIdx.x; i < S * O; i += blockDim.x) {
		size_t rr = r0 + i / O;
		if (rr >= N)
			continue;
		if (split_trees)
			atomicAdd(&votes[rr * O + i % O], sv[i]);
		else
			votes[rr * O + i % O] = sv[i];
	}
}

typedef void (*PredictKernel)(const uint2 *, const int *, int, int, const float *, int,
			      const uint8_t *, size_t, int, int, float *, bool);

template <bool SMEM, bool ATOMIC>
PredictKernel pick_om(int O)
{
	if (ATOMIC)
		return k_predict<SMEM, true, 0>;
	if (O <= 1)
		return k_predict<SMEM, false, 1>;
	if (O <= 2)
		return k_predict<SMEM, false, 2>;
	if (O <= 4)
		return k_predict<SMEM, false, 4>;
	if (O <= 8)
		return k_predict<SMEM, false, 8>;
	if (O <= 16)
		return k_predict<SMEM, false, 16>;
	return k_predict<SMEM, false, 0>;
}

// votes (N x O sums over trees) -> labels (first argmax), probabilities (sum / T) or values
__global__ void k_finish(const float *votes, size_t N, int O, int T, int32_t *labels,
			 float *proba, float *values)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	const float *v = votes + i * (size_t)O;
	if (values) {
		values[i] = v[0] / (float)T;
		return;
	}
	int best = 0;
	for (int k = 0; k < O; k++) {
		float x = v[k];
		if (proba)
			proba[i * (size_t)O + k] = x / (float)T;
		if (x > v[best])
			best = k;
	}
	if (labels)
		labels[i] = best;
}

// The device's properties, read once (cudaGetDeviceProperties costs more than a small
// prediction's kernels).
gwb_status device_info(gwb_gpu_info *out)
{
	static gwb_gpu_info info;
	static bool have;
	gwb_status rc;

	if (!have) {
		if ((rc = gwb_gpu_get_info(&info)))
			return rc;
		have = true;
	}
	*out = info;
	return GWB_OK;
}

// host <-> device copies of rows and results
gwb_status copy_in(void *dev, const void *host, size_t n)
{
	return gwb_copy(dev, host, n, GWB_H2D, false);
}

gwb_status copy_out(void *host, const void *dev, size_t n)
{
	return gwb_copy(host, dev, n, GWB_D2H, false);
}

struct DBuf {
	void *p = nullptr;
	~DBuf() { gwb_gpu_free(p); }
	DBuf() = default;
	DBuf(const DBuf &) = delete;
	DBuf &operator=(const DBuf &) = delete;
};

// The forest on the device, made once per forest by the first GPU prediction and kept in
// f->gpu_model until the forest is freed (a forest never changes after training).
struct Model {
	DBuf thr, toff, nodes, root, val;
	int F = 0, Fp = 0, O = 0, T = 0;
	size_t nodes_n = 0;
};

gwb_status build_model(const gwb_forest *f, Model *m)
{
	int F = f->features, O = f->outputs, T = f->trees;
	size_t nodes = f->nodes;
	gwb_status rc;

	// per-feature sorted distinct finite thresholds
	std::vector<std::vector<float>> th((size_t)F);
	for (size_t g = 0; g < nodes; g++)
		if (f->feature[g] >= 0 && isfinite(f->threshold[g]))
			th[(size_t)f->feature[g]].push_back(f->threshold[g]);
	std::vector<int> toff((size_t)F + 1, 0);
	std::vector<float> thr;
	for (int j = 0; j < F; j++) {
		auto &v = th[(size_t)j];
		std::sort(v.begin(), v.end());
		v.erase(std::unique(v.begin(), v.end()), v.end());
		if (v.size() > 254)
			return gwb_error(GWB_EINVAL, "rf predict: feature %d uses %zu distinct "
					 "thresholds; the GPU path codes rows in 8 bits (at most 254): "
					 "use the CPU", j + 1, v.size());
		toff[(size_t)j] = (int)thr.size();
		thr.insert(thr.end(), v.begin(), v.end());
	}
	toff[(size_t)F] = (int)thr.size();
	if (nodes > (size_t)INT32_MAX)
		return gwb_error(GWB_EINVAL, "rf predict: more than 2^31 nodes; use the CPU");
	// Each tree breadth-first from its root with siblings adjacent (the forest's own order
	// need not pair them): a level's nodes are contiguous, so the rows of a warp at one level
	// read few cache lines.
	std::vector<uint2> nd(nodes);
	std::vector<int> troot((size_t)T);
	std::vector<int64_t> queue;
	queue.reserve(1024);
	for (int t = 0; t < T; t++) {
		int64_t b = f->tree_offset[t], e = f->tree_offset[t + 1];
		troot[(size_t)t] = (int)b;
		if (e <= b)
			return gwb_error(GWB_EINVAL, "rf predict: tree %d has no nodes", t + 1);
		queue.clear();
		queue.push_back(b);
		int64_t next = b + 1;  // next free position of this tree's range
		for (size_t qi = 0; qi < queue.size(); qi++) {
			int64_t g = queue[qi], pos = b + (int64_t)qi;
			uint2 n;
			int j = f->feature[g];
			if (j < 0) {
				n.x = LEAF;
				n.y = (unsigned)g;
			} else {
				auto &v = th[(size_t)j];
				int k = isfinite(f->threshold[g])
					? (int)(std::lower_bound(v.begin(), v.end(), f->threshold[g]) - v.begin())
					: 254;
				int64_t lc = b + f->left[g], rc2 = b + f->right[g];
				if (next + 2 > e || lc < b || lc >= e || rc2 < b || rc2 >= e)
					return gwb_error(GWB_EINVAL, "rf predict: tree %d is malformed at "
							 "node %lld: the forest is corrupt: retrain "
							 "it, or load an intact copy", t + 1,
							 (long long)(g - b));
				n.x = (unsigned)j | ((unsigned)k << 16) | (f->nan_left[g] ? NANL : 0u);
				n.y = (unsigned)next;
				queue.push_back(lc);
				queue.push_back(rc2);
				next += 2;
			}
			nd[(size_t)pos] = n;
		}
		if ((int64_t)queue.size() != e - b)
			return gwb_error(GWB_EINVAL, "rf predict: tree %d has %lld nodes of which %zu "
					 "are reachable: the forest is corrupt: retrain it, or load an "
					 "intact copy", t + 1, (long long)(e - b), queue.size());
	}
	if ((rc = gwb_gpu_malloc(&m->thr.p, thr.size() * 4 + 4, "rf.model")) ||
	    (rc = gwb_gpu_malloc(&m->toff.p, toff.size() * 4, "rf.model")) ||
	    (rc = gwb_gpu_malloc(&m->nodes.p, nodes * sizeof(uint2), "rf.model")) ||
	    (rc = gwb_gpu_malloc(&m->root.p, (size_t)T * 4, "rf.model")) ||
	    (rc = gwb_gpu_malloc(&m->val.p, nodes * (size_t)O * 4, "rf.model")))
		return rc;
	if ((thr.size() && (rc = gwb_copy(m->thr.p, thr.data(), thr.size() * 4, GWB_H2D, false))) ||
	    (rc = gwb_copy(m->toff.p, toff.data(), toff.size() * 4, GWB_H2D, false)) ||
	    (rc = gwb_copy(m->nodes.p, nd.data(), nodes * sizeof(uint2), GWB_H2D, false)) ||
	    (rc = gwb_copy(m->root.p, troot.data(), (size_t)T * 4, GWB_H2D, false)) ||
	    (rc = gwb_copy(m->val.p, f->value, nodes * (size_t)O * 4, GWB_H2D, false)))
		return rc;
	m->F = F;
	m->Fp = (F + 15) / 16 * 16;
	m->O = O;
	m->T = T;
	m->nodes_n = nodes;
	return GWB_OK;
}

gwb_status get_model(const gwb_forest *f, Model **out)
{
	gwb_status rc;
	// a view of the first trees (rf_eval.h) reads its forest's model: the nodes of its trees
	// are a prefix of it, and a row's codes against the forest's thresholds serve any of them
	if (f->view_of && !f->gpu_model) {
		if ((rc = get_model(f->view_of, out)))
			return rc;
		if ((*out)->T < f->trees)
			return gwb_error(GWB_EINVAL, "rf predict: a view of %d trees of a forest of %d",
					 f->trees, (*out)->T);
		return GWB_OK;
	}
	if (f->gpu_model) {
		*out = (Model *)f->gpu_model;
		return GWB_OK;
	}
	Model *m = new (std::nothrow) Model();
	if (!m)
		return gwb_error(GWB_ENOMEM, "rf predict: out of host memory");
	if ((rc = build_model(f, m))) {
		delete m;
		return rc;
	}
	// the cache is not part of the model's value: const forests may fill it
	((gwb_forest *)f)->gpu_model = m;
	*out = m;
	return GWB_OK;
}

// Traverse: the sums of the trees' leaf values per row into votes (N x O floats, device),
// from the rows' features dX (device, column-major).
// T: the model's first T trees (a view's).
gwb_status predict_votes(Model *m, int T, const float *dX, size_t N, int block,
			 gwb_rf_vote vote, const gwb_gpu_info &info, DBuf &dcodes, float *votes)
{
	gwb_status rc;
	int F = m->F, Fp = m->Fp, O = m->O;
	size_t cb = N * (size_t)Fp + 16;

	if ((rc = gwb_gpu_malloc(&dcodes.p, cb, "rf.predict")))
		return rc;
	if ((rc = CUDA_CHECK(cudaMemsetAsync(votes, 0, N * (size_t)O * 4, 0))) ||
	    (Fp != F && (rc = CUDA_CHECK(cudaMemsetAsync(dcodes.p, 0, cb, 0)))))
		return rc;
	if ((rc = gwb_launch("rf_pcode", k_pcode, dim3((unsigned)((N + 31) / 32)), dim3(32, 8), 0, 0,
			     (double)N * F * 5, dX, N, F, Fp, (const float *)m->thr.p,
			     (const int *)m->toff.p, (uint8_t *)dcodes.p)))
		return rc;

	// threads per row: enough rows per block to fill it, trees split among a row's threads;
	// a warp's 32 threads serve 32 rows of one tree, so S = block / P is a multiple of 32
	int P = T >= 64 ? 4 : (T >= 16 ? 2 : 1);
	while (P > 1 && block % (32 * P))
		P /= 2;
	int S = block / P;
	size_t smem_votes = ((size_t)S * O * 4 + 15) / 16 * 16;
	size_t smem = smem_votes + (size_t)S * (Fp + 4);
	size_t limit = info.smem_per_block_optin ? info.smem_per_block_optin : info.smem_per_block;
	bool use_smem = smem <= limit / 2;
	bool atomic = vote == GWB_RF_VOTE_ATOMIC;
	if (!use_smem)
		smem = smem_votes;
	if (atomic)
		smem = use_smem ? smem : 0;
	// trees split over several blocks only when there are too few row blocks to fill the GPU
	unsigned rb = (unsigned)((N + S - 1) / S);
	int groups = 1;
	while (groups < T && (size_t)rb * groups < (size_t)info.sms * 4)
		groups *= 2;
	if (groups > T)
		groups = T;
	bool split = groups > 1;
	double bytes = (double)N * Fp + (double)N * T * 8.0 * log2((double)m->nodes_n / m->T + 2) +
		       (double)N * O * 4;
	PredictKernel kern = use_smem ? (atomic ? pick_om<true, true>(O) : pick_om<true, false>(O))
				      : (atomic ? pick_om<false, true>(O) : pick_om<false, false>(O));
	if (smem > 48 * 1024 &&
	    (rc = CUDA_CHECK(cudaFuncSetAttribute((const void *)kern,
						  cudaFuncAttributeMaxDynamicSharedMemorySize,
						  (int)smem))))
		return rc;
	for (int gi = 0; gi < groups; gi++) {
		int ta = (int)((int64_t)T * gi / groups), tb = (int)((int64_t)T * (gi + 1) / groups);
		if ((rc = gwb_launch(atomic ? "rf_predict_atomic" : "rf_predict", kern, dim3(rb),
				     dim3(block), smem, 0, bytes / groups, (const uint2 *)m->nodes.p,
				     (const int *)m->root.p, ta, tb, (const float *)m->val.p, O,
				     (const uint8_t *)dcodes.p, N, Fp, P, votes, split)))
			return rc;
	}
	return GWB_OK;
}

struct Timer {
	double t0, k0, x0;
	Timer()
	{
		t0 = gwb_now();
		gwb_prof_flush();
		gwb_prof_totals(&k0, &x0);
	}
	void done(gwb_rf_predict_stats *st)
	{
		double k1, x1;
		gwb_prof_flush();
		gwb_prof_totals(&k1, &x1);
		if (st) {
			st->kernel_ms = k1 - k0;
			st->transfer_ms = x1 - x0;
			st->total_ms = (gwb_now() - t0) * 1e3;
		}
	}
};

// Everything a prediction needs up to the votes, and the finishing kernel into device outputs.
gwb_status predict_dev(const gwb_forest *f, const gwb_dataset *d, int block, gwb_rf_vote vote,
		       int32_t *dlab, float *dproba, float *dval)
{
	gwb_status rc;
	gwb_gpu_info info;
	Model *m;

	if ((rc = gwb_forest_check_data(f, d)))
		return rc;
	if ((rc = device_info(&info)))
		return rc;
	if (block <= 0)
		block = 256;
	if (block < 32 || block > 1024 || block % 32)
		return gwb_error(GWB_EINVAL, "rf predict: block must be a multiple of 32 between 32 "
				 "and 1024 (got %d)", block);
	if (f->features > 65535)
		return gwb_error(GWB_EINVAL, "rf predict: the GPU path handles up to 65535 features");
	if ((rc = get_model(f, &m)))
		return rc;
	size_t N = d->rows, xb = N * (size_t)m->F * 4;
	DBuf dX, dcodes, dvotes;
	const float *X = gwb_dataset_gpu_X(d);  // GPU-resident dataset: in place
	if (!X) {
		if ((rc = gwb_gpu_malloc(&dX.p, xb, "rf.predict")) ||
		    (rc = copy_in(dX.p, d->X, xb)))
			return rc;
		X = (const float *)dX.p;
	}
	if ((rc = gwb_gpu_malloc(&dvotes.p, N * (size_t)m->O * 4, "rf.predict")) ||
	    (rc = predict_votes(m, f->trees, X, N, block, vote, info, dcodes, (float *)dvotes.p)))
		return rc;
	if ((rc = gwb_launch("rf_predict_finish", k_finish, dim3((unsigned)((N + 255) / 256)),
			     dim3(256), 0, 0, (double)N * m->O * 8, (const float *)dvotes.p, N, m->O,
			     f->trees, dlab, dproba, dval)))
		return rc;
	// the temporaries go back to the pool once the kernels that read them are done
	return CUDA_CHECK(cudaStreamSynchronize(0));
}

}  // namespace

extern "C" void gwb_rf_gpu_model_free(gwb_forest *f)
{
	delete (Model *)f->gpu_model;
	f->gpu_model = nullptr;
}

extern "C" gwb_status gwb_rf_predict_gpu(const gwb_forest *f, const gwb_dataset *d, int block,
					 gwb_rf_vote vote, float *proba, int32_t *labels,
					 float *values, gwb_rf_predict_stats *stats)
{
	Timer tm;
	gwb_status rc;
	size_t N = d ? d->rows : 0;
	int O = f->outputs;
	bool cls = f->task == GWB_TASK_CLASSIFICATION;
	DBuf dl, dp, dv;

	if ((rc = gwb_forest_check_data(f, d)))
		return rc;
	if ((cls && labels && (rc = gwb_gpu_malloc(&dl.p, N * 4, "rf.predict"))) ||
	    (cls && proba && (rc = gwb_gpu_malloc(&dp.p, N * (size_t)O * 4, "rf.predict"))) ||
	    (!cls && values && (rc = gwb_gpu_malloc(&dv.p, N * 4, "rf.predict"))))
		return rc;
	if ((rc = predict_dev(f, d, block, vote, (int32_t *)dl.p, (float *)dp.p, (float *)dv.p)))
		return rc;
	if ((dl.p && (rc = copy_out(labels, dl.p, N * 4))) ||
	    (dp.p && (rc = copy_out(proba, dp.p, N * (size_t)O * 4))) ||
	    (dv.p && (rc = copy_out(values, dv.p, N * 4))))
		return rc;
	tm.done(stats);
	return GWB_OK;
}

extern "C" gwb_status gwb_rf_predict_gpu_keep(const gwb_forest *f, const gwb_dataset *d,
					      gwb_rf_out what, gwb_rf_gpu_pred **out)
{
	Timer tm;
	gwb_status rc;
	const char *eb = getenv("GWB_RF_PREDICT_BLOCK");
	gwb_rf_gpu_pred *p;
	DBuf dev;

	*out = nullptr;
	if ((rc = gwb_forest_check_data(f, d)))
		return rc;
	if (what == GWB_RF_OUT_PROBA && f->task != GWB_TASK_CLASSIFICATION)
		return gwb_error(GWB_EINVAL, "rf: predict_proba needs a classification forest");
	if (what == GWB_RF_OUT_AUTO)
		what = f->task == GWB_TASK_CLASSIFICATION ? GWB_RF_OUT_LABELS : GWB_RF_OUT_VALUES;
	int per = what == GWB_RF_OUT_PROBA ? f->outputs : 1;
	size_t bytes = d->rows * (size_t)per * 4;
	if (!(p = (gwb_rf_gpu_pred *)calloc(1, sizeof(*p))))
		return gwb_error(GWB_ENOMEM, "rf predict: out of host memory");
	if ((rc = gwb_gpu_malloc(&dev.p, bytes, "rf.predictions")) ||
	    (rc = predict_dev(f, d, eb ? atoi(eb) : 0,
			      gwb_switch_on(GWB_SW_RF_PREDICT_VOTE) ? GWB_RF_VOTE_BLOCK
								    : GWB_RF_VOTE_ATOMIC,
			      what == GWB_RF_OUT_LABELS ? (int32_t *)dev.p : nullptr,
			      what == GWB_RF_OUT_PROBA ? (float *)dev.p : nullptr,
			      what == GWB_RF_OUT_VALUES ? (float *)dev.p : nullptr))) {
		free(p);
		return rc;
	}
	p->rows = d->rows;
	p->per_row = per;
	p->classes = f->task == GWB_TASK_CLASSIFICATION ? f->classes : 0;
	p->what = what;
	p->bytes = bytes;
	p->dev = dev.p;
	dev.p = nullptr;
	tm.done(&p->stats);
	*out = p;
	return GWB_OK;
}

extern "C" gwb_status gwb_rf_gpu_pred_host(gwb_rf_gpu_pred *p, const void **host)
{
	gwb_status rc;
	double k0, x0, k1, x1;

	if (!p->host) {
		void *h = malloc(p->bytes + 4);
		if (!h)
			return gwb_error(GWB_ENOMEM, "rf predict: out of host memory for %zu bytes of "
					 "predictions", p->bytes);
		gwb_prof_flush();
		gwb_prof_totals(&k0, &x0);
		if ((rc = copy_out(h, p->dev, p->bytes))) {
			free(h);
			return rc;
		}
		gwb_prof_flush();
		gwb_prof_totals(&k1, &x1);
		p->read_ms = x1 - x0;
		p->host = h;
	}
	*host = p->host;
	return GWB_OK;
}

extern "C" void gwb_rf_gpu_pred_free(gwb_rf_gpu_pred *p)
{
	if (!p)
		return;
	gwb_gpu_free(p->dev);
	free(p->host);
	free(p);
}

extern "C" gwb_status gwb_rf_predict_wants_gpu(const gwb_forest *f, const gwb_dataset *d,
					       bool *use)
{
	gwb_backend b = GWB_BACKEND_CPU;
	double bytes = (double)d->rows * f->trees * 64.0;

	*use = false;
	if (gwb_dataset_gpu_X(d)) {
		*use = true;  // the rows are on the device already
		return GWB_OK;
	}
	if (bytes < GWB_RF_GPU_PREDICT_MIN_BYTES && gwb_backend_default != GWB_BACKEND_GPU)
		return GWB_OK;  // small: the CPU, without touching the GPU
	if (gwb_backend_choose(GWB_BACKEND_AUTO, bytes, GWB_RF_GPU_PREDICT_MIN_BYTES, &b, NULL, 0)) {
		gwb_error_clear();
		return GWB_OK;  // --backend gpu without a GPU: the CPU answers, as for small work
	}
	*use = b == GWB_BACKEND_GPU;
	return GWB_OK;
}

extern "C" gwb_status gwb_rf_predict_auto(const gwb_forest *f, const gwb_dataset *d, float *proba,
					  int32_t *labels, float *values, bool *done)
{
	const char *eb = getenv("GWB_RF_PREDICT_BLOCK");
	bool use = false;
	gwb_status rc;

	*done = false;
	if ((rc = gwb_rf_predict_wants_gpu(f, d, &use)) || !use)
		return rc;
	rc = gwb_rf_predict_gpu(f, d, eb ? atoi(eb) : 0,
				gwb_switch_on(GWB_SW_RF_PREDICT_VOTE) ? GWB_RF_VOTE_BLOCK
								      : GWB_RF_VOTE_ATOMIC,
				proba, labels, values, NULL);
	if ((rc == GWB_EINVAL || rc == GWB_ENOMEM) && !gwb_dataset_gpu_X(d)) {
		gwb_error_clear();  // a forest or data the GPU path does not take: the CPU does
		return GWB_OK;
	}
	*done = rc == GWB_OK;
	return rc;
}
