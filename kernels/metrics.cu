// metrics.cu - the metrics of a prediction kept on the device (see metrics.h): the confusion
// counts by shared-memory atomics, ROC AUC and average precision by a CUB radix sort of the
// scores (descending) and a scan of the positive / negative counts, one point per distinct
// score kept by a select, and the probability losses and regression errors by block
// reductions. Every value is read through tidy.h, as Lua reads a Predictions object, so the
// device sees the CPU's doubles; metrics.c holds the checks, messages and final formulas.
// Everything runs on the default stream; per-block sums come back and are added on the host in
// block order.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cub/cub.cuh>

#include "common.cuh"
#include "metrics.h"
#include "../src/tidy.h"

namespace {

constexpr int BLOCK = 256;
constexpr int MAX_BLOCKS = 1024;   // per-block partial sums: at most this many come back
constexpr unsigned long long NONE = ~0ull;

struct DBuf {
	void *p = nullptr;
	~DBuf() { gwb_gpu_free(p); }
	DBuf() = default;
	DBuf(const DBuf &) = delete;
	DBuf &operator=(const DBuf &) = delete;
	template <typename T> T *as() const { return (T *)p; }
};

gwb_status alloc(DBuf &b, size_t bytes)
{
	return gwb_gpu_malloc(&b.p, bytes ? bytes : 1, "metrics");
}

unsigned blocks_for(size_t n)
{
	size_t b = (n + BLOCK - 1) / BLOCK;
	return (unsigned)(b < 1 ? 1 : b > MAX_BLOCKS ? MAX_BLOCKS : b);
}

struct MaxOp {
	__device__ double operator()(double a, double b) const { return a > b ? a : b; }
};

// ---- confusion counts -----------------------------------------------------------------------

// cm[t * kp + p] += 1 for every row; counts first in shared memory when smem (kt * kp cells
// fit), else straight into global memory. bad: the lowest row with a code out of range.
__global__ void k_confusion(const int32_t *truth, const int32_t *pred, size_t n, int kt, int kp,
			    bool smem, unsigned long long *cm, unsigned long long *bad)
{
	extern __shared__ unsigned s_cm[];
	int cells = kt * kp;

	if (smem) {
		for (int c = threadIdx.x; c < cells; c += blockDim.x)
			s_cm[c] = 0;
		__syncthreads();
	}
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		int t = truth[i], p = pred[i];
		if (t < 0 || t >= kt || p < 0 || p >= kp) {
			atomicMin(bad, (unsigned long long)i);
			continue;
		}
		if (smem)
			atomicAdd(&s_cm[t * kp + p], 1u);
		else
			atomicAdd(&cm[(size_t)t * kp + p], 1ull);
	}
	if (smem) {
		__syncthreads();
		for (int c = threadIdx.x; c < cells; c += blockDim.x)
			if (s_cm[c])
				atomicAdd(&cm[c], (unsigned long long)s_cm[c]);
	}
}

// ---- ranking: one binary curve --------------------------------------------------------------

// Keys and classes of the rows: key = the score (column col, as Lua reads it), flag 2 for a
// positive (truth a), 1 for a negative (every other row, or truth b when b >= 0), 0 for a row
// left out (one-vs-one: neither a nor b). nan: the lowest row whose score is NaN.
__global__ void k_auc_prep(const float *proba, int cols, int col, const int32_t *y, size_t n,
			   int a, int b, double *key, uint8_t *flag, unsigned long long *nan)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float v = proba[i * (size_t)cols + col];
		int t = y[i];
		if (isnan(v))
			atomicMin(nan, (unsigned long long)i);
		key[i] = gwb_tidy_proba(v);
		flag[i] = t == a ? 2 : (b < 0 || t == b) ? 1 : 0;
	}
}

// After the sort: cnt[i] = positives << 32 | negatives of row i (scanned next), last[i] = 1 where
// row i ends a run of equal scores (the rows of a tie make one point).
__global__ void k_auc_mark(const double *key, const uint8_t *flag, size_t n,
			   unsigned long long *cnt, uint8_t *last)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint8_t f = flag[i];
		cnt[i] = f == 2 ? 1ull << 32 : f == 1 ? 1ull : 0ull;
		last[i] = i + 1 == n || key[i + 1] != key[i];
	}
}

// The area from the m points (cumulative counts pt[g], in decreasing score order): ROC adds
// dF (T_prev + T) exactly into *roc (twice the trapezoids, in counts); average precision adds
// dT T / (T + F) per block into part[blockIdx.x].
__global__ void k_auc_area(const unsigned long long *pt, size_t m, unsigned long long *roc,
			   double *part)
{
	typedef cub::BlockReduce<double, BLOCK> BR;
	__shared__ typename BR::TempStorage tmp;
	unsigned long long r = 0;
	double s = 0;

	for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < m;
	     g += (size_t)gridDim.x * blockDim.x) {
		unsigned long long c = pt[g], p = g ? pt[g - 1] : 0ull;
		unsigned long long T = c >> 32, F = c & 0xffffffffull;
		unsigned long long T0 = p >> 32, F0 = p & 0xffffffffull;
		r += (F - F0) * (T0 + T);
		if (T + F)
			s += (double)(T - T0) * ((double)T / (double)(T + F));
	}
	atomicAdd(roc, r);
	double tot = BR(tmp).Sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = tot;
}

// ---- probability losses and regression errors ----------------------------------------------

// Per row: log-loss -log(clip(p of the true class)) or Brier sum_k ([y = k] - p_k)^2, summed
// per block into part[blockIdx.x]; bad: the lowest index i * K + k whose p is not in 0..1.
__global__ void k_loss(const float *proba, int K, const int32_t *y, size_t n, bool brier,
		       double *part, unsigned long long *bad)
{
	typedef cub::BlockReduce<double, BLOCK> BR;
	__shared__ typename BR::TempStorage tmp;
	const double eps = 2.220446049250313e-16;  // DBL_EPSILON, as metrics.c clips
	double s = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		int t = y[i];
		double r = 0;
		for (int k = 0; k < K; k++) {
			double p = gwb_tidy_proba(proba[i * (size_t)K + k]);
			if (!(p >= 0 && p <= 1))
				atomicMin(bad, (unsigned long long)(i * (size_t)K + k));
			if (brier) {
				double e = (double)(t == k) - p;
				r += e * e;
			} else if (k == t) {
				p = p < eps ? eps : p > 1 - eps ? 1 - eps : p;
				r = -log(p);
			}
		}
		s += r;
	}
	double tot = BR(tmp).Sum(s);
	if (threadIdx.x == 0)
		part[blockIdx.x] = tot;
}

// Per block: sum e^2, sum |e|, sum |e| / max(|y|, eps), max |e| of e = y - p into
// part[4 * blockIdx.x ...]; nan: the lowest row whose prediction is NaN; far: predictions the
// device cannot read as Lua does (tidy.h's fast range), counted.
__global__ void k_regression(const float *pred, const double *y, size_t n, double *part,
			     unsigned long long *nan, unsigned long long *far)
{
	typedef cub::BlockReduce<double, BLOCK> BR;
	__shared__ typename BR::TempStorage tmp;
	const double eps = 2.220446049250313e-16;
	double ss = 0, sa = 0, sm = 0, mx = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float v = pred[i];
		double p;
		if (isnan(v)) {
			atomicMin(nan, (unsigned long long)i);
			continue;
		}
		if (!gwb_tidy_value_fast(v, &p)) {
			atomicAdd(far, 1ull);
			continue;
		}
		double e = y[i] - p, a = fabs(e), ay = fabs(y[i]);
		ss += e * e;
		sa += a;
		sm += a / (ay > eps ? ay : eps);
		if (a > mx)
			mx = a;
	}
	double v[4] = {ss, sa, sm, mx};
	for (int j = 0; j < 4; j++) {
		double tot = j == 3 ? BR(tmp).Reduce(v[j], MaxOp()) : BR(tmp).Sum(v[j]);
		if (threadIdx.x == 0)
			part[4 * (size_t)blockIdx.x + j] = tot;
		__syncthreads();  // tmp is reused by the next reduction
	}
}

// ---- host side -------------------------------------------------------------------------------

gwb_status up(void *dev, const void *host, size_t bytes)
{
	return gwb_copy(dev, host, bytes, GWB_H2D, false);
}

gwb_status down(void *host, const void *dev, size_t bytes)
{
	return gwb_copy(host, dev, bytes, GWB_D2H, false);
}

gwb_status set_none(DBuf &b)
{
	return CUDA_CHECK(cudaMemsetAsync(b.p, 0xff, sizeof(unsigned long long), 0));
}

gwb_status need_rows(size_t n, const char *what)
{
	if (!n)
		return gwb_error(GWB_EINVAL, "metrics.%s: no rows", what);
	if (n >= (1ull << 31))
		return gwb_error(GWB_EINVAL, "metrics.%s: %zu rows: the GPU metrics count in 32 "
				 "bits (under 2^31 rows); read the predictions to the host "
				 "(p:totable()) for more", what, n);
	return GWB_OK;
}

// The device arrays of one ranking call, sized once for n rows and every class.
struct Rank {
	size_t n = 0;
	DBuf y, key, key2, flag, flag2, cnt, pts, nsel, tmp, roc, part, nan;
	size_t tmp_bytes = 0;

	gwb_status init(const int32_t *host_y, size_t rows)
	{
		gwb_status rc;
		size_t b1 = 0, b2 = 0, b3 = 0;
		n = rows;
		if ((rc = CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
			     nullptr, b1, (const double *)nullptr, (double *)nullptr,
			     (const uint8_t *)nullptr, (uint8_t *)nullptr, (int)n))) ||
		    (rc = CUDA_CHECK(cub::DeviceScan::InclusiveSum(
			     nullptr, b2, (unsigned long long *)nullptr,
			     (unsigned long long *)nullptr, (int)n))) ||
		    (rc = CUDA_CHECK(cub::DeviceSelect::Flagged(
			     nullptr, b3, (const unsigned long long *)nullptr,
			     (const uint8_t *)nullptr, (unsigned long long *)nullptr,
			     (int *)nullptr, (int)n))))
			return rc;
		tmp_bytes = b1 > b2 ? b1 : b2;
		tmp_bytes = tmp_bytes > b3 ? tmp_bytes : b3;
		if ((rc = alloc(y, n * 4)) || (rc = alloc(key, n * 8)) || (rc = alloc(key2, n * 8)) ||
		    (rc = alloc(flag, n)) || (rc = alloc(flag2, n)) || (rc = alloc(cnt, n * 8)) ||
		    (rc = alloc(pts, n * 8)) || (rc = alloc(nsel, 4)) || (rc = alloc(tmp, tmp_bytes)) ||
		    (rc = alloc(roc, 8)) || (rc = alloc(part, MAX_BLOCKS * 8)) || (rc = alloc(nan, 8)))
			return rc;
		return up(y.p, host_y, n * 4);
	}

	// The area of the rows of class a against b (b < 0: every other row), scored by column
	// col: ROC AUC, or average precision when ap.
	gwb_status area(const float *proba, int cols, int col, int a, int b, bool ap, double *out)
	{
		const char *what = ap ? "pr_auc" : "roc_auc";
		unsigned g = blocks_for(n);
		unsigned long long first_nan, last;
		int m = 0;
		size_t bytes = tmp_bytes;
		gwb_status rc;

		if ((rc = set_none(nan)) ||
		    (rc = gwb_launch("metrics_auc_prep", k_auc_prep, dim3(g), dim3(BLOCK), 0, 0,
				     (double)n * (4.0 + 4 + 8 + 1), proba, cols, col,
				     y.as<const int32_t>(), n, a, b, key.as<double>(),
				     flag.as<uint8_t>(), nan.as<unsigned long long>())) ||
		    (rc = CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
			     tmp.p, bytes, key.as<const double>(), key2.as<double>(),
			     flag.as<const uint8_t>(), flag2.as<uint8_t>(), (int)n))) ||
		    (rc = gwb_launch("metrics_auc_mark", k_auc_mark, dim3(g), dim3(BLOCK), 0, 0,
				     (double)n * (8.0 + 1 + 8 + 1), key2.as<const double>(),
				     flag2.as<const uint8_t>(), n, cnt.as<unsigned long long>(),
				     flag.as<uint8_t>())))
			return rc;
		bytes = tmp_bytes;
		if ((rc = CUDA_CHECK(cub::DeviceScan::InclusiveSum(tmp.p, bytes,
								   cnt.as<unsigned long long>(),
								   cnt.as<unsigned long long>(),
								   (int)n))))
			return rc;
		bytes = tmp_bytes;
		if ((rc = CUDA_CHECK(cub::DeviceSelect::Flagged(tmp.p, bytes,
								cnt.as<const unsigned long long>(),
								flag.as<const uint8_t>(),
								pts.as<unsigned long long>(),
								nsel.as<int>(), (int)n))) ||
		    (rc = down(&first_nan, nan.p, 8)) || (rc = down(&m, nsel.p, 4)))
			return rc;
		if (first_nan != NONE)
			return gwb_error(GWB_EINVAL, "metrics: row %llu: the score is NaN",
					 first_nan + 1);
		if (m < 1)
			return gwb_error(GWB_EINVAL, "metrics.%s: no rows", what);
		if ((rc = down(&last, pts.as<unsigned long long>() + (m - 1), 8)))
			return rc;
		double P = (double)(last >> 32), N = (double)(last & 0xffffffffull);
		if (!ap && (rc = gwb_metrics_need_two(P, N, what)))
			return rc;
		unsigned ga = blocks_for((size_t)m);
		unsigned long long r2 = 0;
		double part_h[MAX_BLOCKS], s = 0;
		if ((rc = CUDA_CHECK(cudaMemsetAsync(roc.p, 0, 8, 0))) ||
		    (rc = gwb_launch("metrics_auc_area", k_auc_area, dim3(ga), dim3(BLOCK), 0, 0,
				     (double)m * 16.0, pts.as<const unsigned long long>(),
				     (size_t)m, roc.as<unsigned long long>(), part.as<double>())) ||
		    (rc = down(&r2, roc.p, 8)) || (rc = down(part_h, part.p, ga * 8)))
			return rc;
		if (!ap) {
			*out = (double)r2 / (2.0 * P * N);
			return GWB_OK;
		}
		for (unsigned i = 0; i < ga; i++)
			s += part_h[i];
		s = P > 0 ? s / P : 0;
		*out = s > 0 ? s : 0.0;
		return GWB_OK;
	}
};

}  // namespace

extern "C" gwb_status gwb_metrics_confusion_gpu(const int32_t *truth, const int32_t *dpred,
						size_t n, int kt, int kp, int64_t *cm)
{
	DBuf dy, dcm, dbad;
	size_t cells = (size_t)kt * (size_t)kp;
	unsigned long long bad = NONE;
	gwb_status rc;
	int dev = 0, smem_max = 0;

	if ((rc = need_rows(n, "confusion")))
		return rc;
	if (kt < 1 || kp < 1)
		return gwb_error(GWB_EINVAL, "metrics: %d truth and %d predicted classes", kt, kp);
	cudaGetDevice(&dev);
	if ((rc = CUDA_CHECK(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlock,
						    dev))))
		return rc;
	bool smem = cells * 4 <= (size_t)smem_max;
	unsigned long long *h = (unsigned long long *)malloc(cells * 8);
	if (!h)
		return gwb_error(GWB_ENOMEM, "metrics: out of host memory for a %d x %d confusion "
				 "matrix", kt, kp);
	if ((rc = alloc(dy, n * 4)) || (rc = alloc(dcm, cells * 8)) || (rc = alloc(dbad, 8)) ||
	    (rc = up(dy.p, truth, n * 4)) ||
	    (rc = CUDA_CHECK(cudaMemsetAsync(dcm.p, 0, cells * 8, 0))) || (rc = set_none(dbad)) ||
	    (rc = gwb_launch("metrics_confusion", k_confusion, dim3(blocks_for(n)), dim3(BLOCK),
			     smem ? cells * 4 : 0, 0, (double)n * 8.0, dy.as<const int32_t>(),
			     dpred, n, kt, kp, smem, dcm.as<unsigned long long>(),
			     dbad.as<unsigned long long>())) ||
	    (rc = down(&bad, dbad.p, 8)) || (rc = down(h, dcm.p, cells * 8)))
		goto out_free_h;
	if (bad != NONE) {
		rc = gwb_error(GWB_EINVAL, "metrics: row %llu: a class code is not in 0..%d (truth) "
			       "or 0..%d (prediction)", bad + 1, kt - 1, kp - 1);
		goto out_free_h;
	}
	for (size_t c = 0; c < cells; c++)
		cm[c] = (int64_t)h[c];
out_free_h:
	free(h);
	return rc;
}

extern "C" gwb_status gwb_metrics_auc_gpu(const int32_t *y, const float *dproba, size_t n,
					  int cols, int K, int pos, bool ovo, gwb_avg avg, bool ap,
					  double *out)
{
	const char *what = ap ? "pr_auc" : "roc_auc";
	size_t *cnt = nullptr;
	double s = 0, w = 0, v;
	gwb_status rc;
	Rank R;

	if ((rc = need_rows(n, what)))
		return rc;
	if (cols != K || K < 2 || pos < 0 || pos >= K)
		return gwb_error(GWB_EINVAL, "metrics.%s: %d score columns for %d classes (positive "
				 "class %d)", what, cols, K, pos + 1);
	if (K == 2) {
		if ((rc = gwb_metrics_check_codes(y, n, K, what)) || (rc = R.init(y, n)))
			return rc;
		return R.area(dproba, cols, pos, pos, -1, ap, out);
	}
	if (!(cnt = (size_t *)malloc(sizeof(size_t) * (size_t)K)))
		return gwb_error(GWB_ENOMEM, "metrics.%s: out of memory", what);
	if ((rc = gwb_metrics_class_rows(y, n, K, cnt, what)) || (rc = R.init(y, n)))
		goto out_free_cnt;
	if (!ovo) {  // the order and weights of metrics.c's multi()
		for (int a = 0; a < K; a++) {
			if ((rc = R.area(dproba, cols, a, a, -1, ap, &v)))
				goto out_free_cnt;
			double wk = avg == GWB_AVG_WEIGHTED ? (double)cnt[a] : 1.0;
			s += wk * v;
			w += wk;
		}
	} else {
		for (int a = 0; a < K; a++)
			for (int b = a + 1; b < K; b++) {
				double va, vb;
				if ((rc = R.area(dproba, cols, a, a, b, false, &va)) ||
				    (rc = R.area(dproba, cols, b, b, a, false, &vb)))
					goto out_free_cnt;
				double wk = avg == GWB_AVG_WEIGHTED ?
					    (double)(cnt[a] + cnt[b]) / (double)n : 1.0;
				s += wk * (va + vb) / 2;
				w += wk;
			}
	}
	*out = s / w;
out_free_cnt:
	free(cnt);
	return rc;
}

extern "C" gwb_status gwb_metrics_proba_loss_gpu(const int32_t *y, const float *dproba, size_t n,
						 int K, bool brier, double *out)
{
	const char *what = brier ? "brier" : "log_loss";
	DBuf dy, dpart, dbad;
	unsigned g = blocks_for(n);
	unsigned long long bad = NONE;
	double part[MAX_BLOCKS], s = 0;
	gwb_status rc;

	if ((rc = need_rows(n, what)) || (rc = gwb_metrics_check_codes(y, n, K, what)))
		return rc;
	if ((rc = alloc(dy, n * 4)) || (rc = alloc(dpart, MAX_BLOCKS * 8)) ||
	    (rc = alloc(dbad, 8)) || (rc = up(dy.p, y, n * 4)) || (rc = set_none(dbad)) ||
	    (rc = gwb_launch(brier ? "metrics_brier" : "metrics_log_loss", k_loss, dim3(g),
			     dim3(BLOCK), 0, 0, (double)n * (4.0 * K + 4), dproba, K,
			     dy.as<const int32_t>(), n, brier, dpart.as<double>(),
			     dbad.as<unsigned long long>())) ||
	    (rc = down(&bad, dbad.p, 8)) || (rc = down(part, dpart.p, g * 8)))
		return rc;
	if (bad != NONE) {  // the first value out of 0..1, read back to be named
		float v;
		if ((rc = down(&v, dproba + bad, 4)))
			return rc;
		return gwb_metrics_bad_proba(what, (size_t)(bad / (unsigned)K), (int)(bad % (unsigned)K),
					     gwb_tidy_proba(v));
	}
	for (unsigned i = 0; i < g; i++)
		s += part[i];
	*out = brier ? gwb_metrics_brier_finish(s, n, K) : s / (double)n;
	return GWB_OK;
}

extern "C" gwb_status gwb_metrics_regression_gpu(const double *y, const float *dpred, size_t n,
						 gwb_regression_metrics *out, bool *done)
{
	DBuf dy, dpart, dnan, dfar;
	unsigned g = blocks_for(n);
	unsigned long long nan = NONE, far = 0;
	double part[4 * MAX_BLOCKS], mean;
	gwb_regression_sums s = {0, 0, 0, 0, 0};
	size_t ynan = n;
	gwb_status rc;

	*done = false;
	memset(out, 0, sizeof(*out));
	if ((rc = need_rows(n, "regression")))
		return rc;
	for (size_t i = 0; i < n && ynan == n; i++)
		if (isnan(y[i]))
			ynan = i;
	if ((rc = alloc(dy, n * 8)) || (rc = alloc(dpart, 4 * MAX_BLOCKS * 8)) ||
	    (rc = alloc(dnan, 8)) || (rc = alloc(dfar, 8)) || (rc = up(dy.p, y, n * 8)) ||
	    (rc = set_none(dnan)) || (rc = CUDA_CHECK(cudaMemsetAsync(dfar.p, 0, 8, 0))) ||
	    (rc = gwb_launch("metrics_regression", k_regression, dim3(g), dim3(BLOCK), 0, 0,
			     (double)n * 12.0, dpred, dy.as<const double>(), n, dpart.as<double>(),
			     dnan.as<unsigned long long>(), dfar.as<unsigned long long>())) ||
	    (rc = down(&nan, dnan.p, 8)) || (rc = down(&far, dfar.p, 8)) ||
	    (rc = down(part, dpart.p, (size_t)g * 4 * 8)))
		return rc;
	if (ynan < n || nan != NONE)  // the first row with a NaN on either side, as the CPU says
		return gwb_metrics_nan_row(ynan <= nan ? ynan : (size_t)nan, ynan <= nan);
	if (far)
		return GWB_OK;  // *done false: the host reads these values (tidy.h's slow path)
	if ((rc = gwb_metrics_truth_stats(y, n, &mean, &s.sst)))
		return rc;
	for (unsigned i = 0; i < g; i++) {
		s.ss += part[4 * i];
		s.sa += part[4 * i + 1];
		s.sm += part[4 * i + 2];
		s.mx = part[4 * i + 3] > s.mx ? part[4 * i + 3] : s.mx;
	}
	gwb_metrics_regression_finish(&s, n, out);
	*done = true;
	return GWB_OK;
}

// Every metrics kernel under the name its launch records, registered as the plugin loads (as
// rf_train.cu's), so gpu.occupancy("metrics_auc_prep", 256) answers before the first call;
// k_loss runs under two names, one per loss.
static const struct metrics_registry {
	metrics_registry()
	{
		static const struct {
			const char *name;
			const void *fn;
		} k[] = {
			{"metrics_confusion", (const void *)k_confusion},
			{"metrics_auc_prep", (const void *)k_auc_prep},
			{"metrics_auc_mark", (const void *)k_auc_mark},
			{"metrics_auc_area", (const void *)k_auc_area},
			{"metrics_log_loss", (const void *)k_loss},
			{"metrics_brier", (const void *)k_loss},
			{"metrics_regression", (const void *)k_regression},
		};
		for (const auto &e : k)
			gwb_prof_register_kernel(e.name, e.fn);
	}
} metrics_registry_;
