// jacobi.cu - our batched symmetric eigensolver: one-sided (Hestenes) Jacobi on the shifted
// matrix G = A + sigma I, one thread block per matrix.
//
// Why one-sided on a shifted matrix: with sigma > ||A||_2, A + sigma I is positive definite,
// so orthogonalizing the columns of G by plane rotations from the right (G <- G J) converges
// to G = V diag(lambda + sigma): the eigenvectors are the normalized columns and the values
// their norms minus sigma. No separate V is accumulated, and each rotation touches two
// columns only (8n flops against 18n for two-sided Jacobi with vectors), reading them once.
//
// Parallel ordering: the round-robin ("chess tournament") schedule pairs the m columns into
// m/2 disjoint pairs per round, m - 1 rounds per sweep; a group of L lanes owns one pair,
// holds both columns in registers, reduces their dot product with shuffles, rotates, writes
// back. One barrier per round.
//
// Two variants, one kernel:
//  - "smem": G (n x n) resident in shared memory for the whole solve (n up to ~238 in f32,
//    ~168 in f64 with an H200's 227 KB per block);
//  - "blocked": G in global memory (L2-resident working set), columns in blocks of w; a
//    tournament over blocks pairs two blocks at a time, their 2w columns are loaded into
//    shared memory, rotated against each other (all pairs in the first block round, the w^2
//    cross pairs afterwards), and stored back. This is where 128 to 256 no longer fit.
//
// Accuracy (residuals computed in f64 from the returned values and vectors): the backward
// error is what the rotations leave behind, so (1) every rotation is orthogonal to working
// precision (f32: c and s from f64 and rounded once; see rot_params), (2) the threshold is
// min(8, 64 / sqrt(n)) eps relative to the column norms, and (3) the matrix is scaled by a
// power of two so that nothing overflows or underflows. On an H200: f32 residuals 4e-6 to
// 6e-6 and f64 8e-15 to 1.6e-14 for 64 to 256 (bench/results/eig-dense-2026-11-30b.txt).
//
// Mixed precision (compute = 2): the f32 kernel solves A32; the f64 refinement orthogonalizes
// the f32 vectors by two Newton-Schulz steps (cuBLAS batched DGEMM), forms G = (A + sigma I) V
// in f64, and the f64 kernel finishes from that nearly orthogonal start in a few sweeps.
#include <cublas_v2.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/intr.h"
#include "../src/switches.h"
#include "common.cuh"
#include "handles.h"
#include "eig.h"

namespace {

template <typename T> struct num;
template <> struct num<float> {
	static __device__ __host__ double eps() { return FLT_EPSILON; }
};
template <> struct num<double> {
	static __device__ __host__ double eps() { return DBL_EPSILON; }
};

// Pair k of round r in the round-robin schedule over m (even) players.
__device__ __forceinline__ void rr_pair(int r, int k, int m, int &p, int &q)
{
	if (k == 0) {
		p = m - 1;
		q = r;
	} else {
		// (r + k) mod (m - 1) and (r - k) mod (m - 1) without integer division: r < m - 1
		// and 0 < k < m / 2, so one correction each.
		p = r + k;
		if (p >= m - 1)
			p -= m - 1;
		q = r - k;
		if (q < 0)
			q += m - 1;
	}
}

template <typename T, int L>
__device__ __forceinline__ T group_sum(T v)
{
#pragma unroll
	for (int o = L / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o, L);
	return v;
}

// Block-wide sum of one double per thread (red: blockDim.x/32 doubles of shared memory).
__device__ double block_sum(double v, double *red)
{
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	__syncthreads();
	if (lane == 0)
		red[wid] = v;
	__syncthreads();
	double s = 0;
	for (int i = 0; i < nw; i++)
		s += red[i];
	return s;
}

// The rotation that orthogonalizes two columns with squared norms a, b and dot product g:
// tan(theta) t = sign(d) 2g / (|d| + sqrt(d^2 + 4 g^2)), d = b - a (the smaller root: |t| <=
// 1), then c = 1 / sqrt(1 + t^2), s = c t. The columns are scaled so that their norms are
// O(1) (see `scale` in jacobi_os), so nothing here overflows.
//
// Accuracy: t itself may be a little off (that only slows convergence by a rounding-level
// amount), but the rotation applied must be orthogonal to the working precision: every
// rotation whose c^2 + s^2 misses 1 perturbs G by that amount, and over ~n sweeps x rounds
// such errors become the backward error. In f32, c and s are therefore computed in f64 from
// the f32 t and rounded once (a CPU emulation of the kernel on 64 x 64 GOE matrices: residual
// 1.3e-5 with c, s from f32 formulas, 2.0e-6 this way).
template <typename T> struct rot_params;
template <> struct rot_params<float> {
	static __device__ __forceinline__ bool get(double a, double b, float g, float tol2,
						   float &c, float &s, double &tg)
	{
		float af = (float)a, bf = (float)b;
		if (!(g * g > tol2 * af * bf))
			return false;
		float d = (float)(b - a), h = 2.0f * g;
		float w = fmaf(d, d, h * h);
		float r = w * rsqrtf(w);  // sqrt(d^2 + 4 g^2), w > 0 here
		float t = __fdividef(h, fabsf(d) + r);
		if (d < 0)
			t = -t;
		double td = (double)t, cd = rsqrt(fma(td, td, 1.0));
		c = (float)cd;
		s = (float)(cd * td);
		tg = td * (double)g;
		return true;
	}
};
template <> struct rot_params<double> {
	static __device__ __forceinline__ bool get(double a, double b, double g, double tol2,
						   double &c, double &s, double &tg)
	{
		if (!(g * g > tol2 * a * b))
			return false;
		double d = b - a, h = 2.0 * g;
		double t = h / (fabs(d) + sqrt(fma(d, d, h * h)));
		if (d < 0)
			t = -t;
		c = rsqrt(fma(t, t, 1.0));
		s = c * t;
		tg = t * g;
		return true;
	}
};

// Rotate the pair of slots (sp, sq) of the shared block S (column stride n) whose columns
// are gp, gq (squared norms in nrm[]). Every lane of the warp calls this (the shuffles need
// the whole warp); `active` is false for groups without a pair this round. Returns 1 when
// this group applied a rotation.
template <typename T, int L, int R>
__device__ __forceinline__ int rotate_pair(T *S, int n, int sp, int sq, double *nrm, int gp,
					   int gq, int lg, T tol2, bool active)
{
	T x[R], y[R];
	T g = 0;
	// Groups of one warp start their element walk at different offsets, so that their L-wide
	// accesses land in different shared-memory banks (columns are n apart, n often a
	// multiple of 32).
	const int gg = (int)((threadIdx.x & 31) / L);
	T *Sp = S + (size_t)sp * n, *Sq = S + (size_t)sq * n;
#pragma unroll
	for (int i = 0; i < R; i++) {
		int r = lg + ((i + gg) % R) * L;
		x[i] = y[i] = 0;
		if (active && r < n) {
			x[i] = Sp[r];
			y[i] = Sq[r];
			g = fma(x[i], y[i], g);
		}
	}
	g = group_sum<T, L>(g);
	double a = 0, b = 0;
	if (active) {
		a = nrm[gp];
		b = nrm[gq];
	}
	__syncwarp();
	T c, s;
	double tg;
	if (!active || !rot_params<T>::get(a, b, g, tol2, c, s, tg))
		return 0;
#pragma unroll
	for (int i = 0; i < R; i++) {
		int r = lg + ((i + gg) % R) * L;
		if (r < n) {
			Sp[r] = fma(c, x[i], -s * y[i]);
			Sq[r] = fma(s, x[i], c * y[i]);
		}
	}
	if (lg == 0) {
		nrm[gp] = a - tg;
		nrm[gq] = b + tg;
	}
	return 1;
}

// Squared norms of columns [0, cols) of S (stride ld, length n) into nrm[c].
template <typename T>
__device__ void column_norms(const T *S, int ld, int n, int cols, double *nrm)
{
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
	for (int c = wid; c < cols; c += nw) {
		double s = 0;
		for (int r = lane; r < n; r += 32) {
			double v = (double)S[(size_t)c * ld + r];
			s += v * v;
		}
#pragma unroll
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_xor_sync(0xffffffffu, s, o);
		if (lane == 0)
			nrm[c] = s;
	}
}

// Block-wide max of one double per thread (same shared scratch as block_sum).
__device__ double block_max(double v, double *red)
{
	int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
	__syncthreads();
	if (lane == 0)
		red[wid] = v;
	__syncthreads();
	double s = 0;
	for (int i = 0; i < nw; i++)
		s = fmax(s, red[i]);
	return s;
}

// The shift: sigma = min(1.5 rho, ||A||_F) with rho from 12 power iterations (a lower bound
// on ||A||_2 that is within a factor (1/n)^(1/24) of it for a generic start), so sigma >
// ||A||_2 and A + sigma I is positive definite. A is column-major with stride lda (symmetric).
// Everything is computed on A scaled by a power of two that brings max |a_ij| to [1, 2), so
// that the sums of squares neither overflow nor underflow for f64 entries near 1e+-160 and
// beyond.
template <typename T>
__device__ double compute_shift(const T *A, int n, int power, double *x, double *y, double *red)
{
	int tid = threadIdx.x;
	double amax = 0;
	for (int i = tid; i < n * n; i += blockDim.x)
		amax = fmax(amax, fabs((double)A[i]));
	amax = block_max(amax, red);
	if (!(amax > 0) || isinf(amax))
		return 1.0;
	const int e = ilogb(amax);
	const double p2 = ldexp(1.0, e < -1000 ? 1000 : -e);  // subnormal input: stay finite
	double fro = 0;
	for (int i = tid; i < n * n; i += blockDim.x) {
		double v = (double)A[i] * p2;
		fro += v * v;
	}
	fro = sqrt(block_sum(fro, red));
	for (int r = tid; r < n; r += blockDim.x) {
		unsigned h = (unsigned)r * 2654435761u + 12345u;
		h ^= h >> 13;
		h *= 0x5bd1e995u;
		x[r] = 0.5 + (double)(h & 0xffff) / 65536.0;
	}
	__syncthreads();
	double rho = 0;
	for (int it = 0; power && it < 12; it++) {  // power 0 (switch jacobi.shift off): ||A||_F
		double nx = 0, ny = 0;
		for (int r = tid; r < n; r += blockDim.x) {
			double s = 0;
			for (int c = 0; c < n; c++)
				s += (double)A[(size_t)c * n + r] * p2 * x[c];
			y[r] = s;
			ny += s * s;
			nx += x[r] * x[r];
		}
		ny = block_sum(ny, red);
		nx = block_sum(nx, red);
		rho = sqrt(ny / nx);
		double inv = ny > 0 ? 1.0 / sqrt(ny) : 0.0;
		for (int r = tid; r < n; r += blockDim.x)
			x[r] = y[r] * inv;
		__syncthreads();
		if (!(ny > 0))
			break;
	}
	double s = 1.5 * rho;
	if (!(s > 0) || s > fro)
		s = fro;
	return s * (1.0 + 1e-6) / p2;
}

struct jparams {
	int n;           // order
	int m;           // columns incl. padding: even; a multiple of 2w when blocked
	int w;           // block width (blocked) or m / 2 (smem)
	int blocked;
	int given;       // 1: G already in g (refinement), sigma in shift[]
	int power;       // 1: sigma from the power iteration, 0: ||A||_F (switch jacobi.shift)
	int max_sweeps;
	double tol;
};

// One block per matrix. a: the input matrices (count x n x n, symmetric); g: workspace and
// output (count x n x n, column-major; normalized eigenvectors on return); vals: count x n;
// shift: count (written unless given); sweeps: count (negative when not converged).
template <typename T, int L, int R>
__global__ void __launch_bounds__(512) jacobi_os(const T *__restrict__ a, T *__restrict__ g,
						 double *__restrict__ vals, double *__restrict__ shift,
						 int *__restrict__ sweeps, jparams P)
{
	extern __shared__ __align__(16) unsigned char smem_raw[];
	const int n = P.n, m = P.m, w = P.w, tid = threadIdx.x;
	const int lane = tid & 31, wid = tid >> 5, nw = blockDim.x >> 5;
	const int groups = nw * (32 / L), lg = lane % L;
	const size_t nn = (size_t)n * n;
	const T *A = a + blockIdx.x * nn;
	T *G = g + blockIdx.x * nn;

	// Shared memory: S (2w columns of length n, or n columns when resident), norms (m),
	// x, y (n each, power iteration), red (32), slot->column map (2w), flags.
	const int scols = P.blocked ? 2 * w : n;
	T *S = (T *)smem_raw;
	double *nrm = (double *)(smem_raw + (((size_t)scols * n * sizeof(T) + 15) & ~(size_t)15));
	double *x = nrm + m, *y = x + n, *red = y + n;
	int *gidx = (int *)(red + 32);
	int *flag = gidx + 2 * w;

	// The kernel works on scale * G with scale a power of two near 1 / sigma: exact, and it
	// keeps every column norm, dot product and rotation parameter O(1) whatever the input's
	// magnitude (the f32 rotation parameters are computed in f32). The shift is rounded to T
	// before use, so that values = norm / scale - sigma subtracts exactly the shift applied.
	double sigma, scale;
	if (P.given) {
		sigma = shift[blockIdx.x];
		int e = ilogb(sigma > 0 ? sigma : 1.0);
		scale = ldexp(1.0, e < -1000 ? 1000 : e > 1000 ? -1000 : -e);
		T *dst = P.blocked ? G : S;
		for (size_t i = tid; i < nn; i += blockDim.x)
			dst[i] = G[i] * (T)scale;
	} else {
		sigma = compute_shift<T>(A, n, P.power, x, y, red);
		int e = ilogb(sigma);
		const int lim = sizeof(T) == 4 ? 120 : 1000;  // scale and scaled shift stay finite
		e = e < -lim ? -lim : e > lim ? lim : e;
		scale = ldexp(1.0, -e);
		sigma = (double)(T)(sigma * scale) / scale;
		if (tid == 0)
			shift[blockIdx.x] = sigma;
		T *dst = P.blocked ? G : S;
		const T ts = (T)scale, tsig = (T)(sigma * scale);
		for (size_t i = tid; i < nn; i += blockDim.x) {
			size_t c = i / n, r = i % n;
			dst[i] = A[i] * ts + (r == c ? tsig : (T)0);
		}
	}
	for (int c = tid; c < m; c += blockDim.x)
		nrm[c] = 0;
	__syncthreads();

	const T tol = (T)(P.tol * P.tol);  // rotate when g^2 > tol^2 a b
	int sweep = 0, converged = 0;
	for (sweep = 0; sweep < P.max_sweeps && !converged; sweep++) {
		if (tid == 0)
			flag[0] = 0;
		int rot = 0;
		if (!P.blocked) {
			column_norms<T>(S, n, n, n, nrm);
			__syncthreads();
			for (int r = 0; r < m - 1; r++) {
				for (int k0 = wid * (32 / L); k0 < m / 2; k0 += groups) {
					int k = k0 + lane / L, p = 0, q = 0;
					if (k < m / 2)
						rr_pair(r, k, m, p, q);
					bool act = k < m / 2 && p < n && q < n;
					rot += rotate_pair<T, L, R>(S, n, p, q, nrm, p, q, lg, tol, act);
				}
				__syncthreads();
			}
		} else {
			const int nb = m / w;
			// Exact norms from global at the start of each sweep.
			column_norms<T>(G, n, n, n, nrm);
			__syncthreads();
			for (int br = 0; br < nb - 1; br++)
				for (int kb = 0; kb < nb / 2; kb++) {
					int I, J;
					rr_pair(br, kb, nb, I, J);
					// Load the 2w columns of blocks I and J.
					for (int s = tid; s < 2 * w; s += blockDim.x)
						gidx[s] = (s < w ? I * w + s : J * w + (s - w));
					for (size_t i = tid; i < (size_t)2 * w * n; i += blockDim.x) {
						int s = (int)(i / n), r = (int)(i % n);
						int c = s < w ? I * w + s : J * w + (s - w);
						S[i] = c < n ? G[(size_t)c * n + r] : (T)0;
					}
					__syncthreads();
					if (br == 0) {
						// All pairs of the 2w columns (covers the pairs inside blocks).
						for (int r = 0; r < 2 * w - 1; r++) {
							for (int k0 = wid * (32 / L); k0 < w; k0 += groups) {
								int k = k0 + lane / L, p = 0, q = 1;
								if (k < w)
									rr_pair(r, k, 2 * w, p, q);
								int cp = gidx[p], cq = gidx[q];
								bool act = k < w && cp < n && cq < n;
								rot += rotate_pair<T, L, R>(S, n, p, q, nrm, cp, cq, lg, tol, act);
							}
							__syncthreads();
						}
					} else {
						// The w^2 cross pairs, w disjoint pairs per round.
						for (int r = 0; r < w; r++) {
							for (int k0 = wid * (32 / L); k0 < w; k0 += groups) {
								int k = k0 + lane / L, p = 0, q = w;
								if (k < w) {
									p = k;
									q = w + (k + r) % w;
								}
								int cp = gidx[p], cq = gidx[q];
								bool act = k < w && cp < n && cq < n;
								rot += rotate_pair<T, L, R>(S, n, p, q, nrm, cp, cq, lg, tol, act);
							}
							__syncthreads();
						}
					}
					for (size_t i = tid; i < (size_t)2 * w * n; i += blockDim.x) {
						int s = (int)(i / n), r = (int)(i % n);
						int c = s < w ? I * w + s : J * w + (s - w);
						if (c < n)
							G[(size_t)c * n + r] = S[i];
					}
					__syncthreads();
				}
		}
		if (rot && lg == 0)
			atomicAdd(&flag[0], rot);
		__syncthreads();
		converged = flag[0] == 0;
		__syncthreads();
	}

	// Epilogue: exact norms, values = norm - sigma, vectors = normalized columns.
	T *src = P.blocked ? G : S;
	for (int c = wid; c < n; c += nw) {
		double s = 0;
		for (int r = lane; r < n; r += 32) {
			double v = (double)src[(size_t)c * n + r];
			s += v * v;
		}
#pragma unroll
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_xor_sync(0xffffffffu, s, o);
		double nu = sqrt(s), inv = nu > 0 ? 1.0 / nu : 0.0;
		if (lane == 0)
			vals[blockIdx.x * (size_t)n + c] = nu / scale - sigma;
		for (int r = lane; r < n; r += 32)
			G[(size_t)c * n + r] = (T)((double)src[(size_t)c * n + r] * inv);
	}
	if (tid == 0)
		sweeps[blockIdx.x] = converged ? sweep : -sweep;
}

// f64 -> f32 conversion and G += sigma_b V for the refinement.
__global__ void jacobi_to_f32(const double *__restrict__ in, float *__restrict__ out, size_t len)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = (float)in[i];
}

__global__ void jacobi_to_f64(const float *__restrict__ in, double *__restrict__ out, size_t len)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = (double)in[i];
}

__global__ void jacobi_add_shift(double *__restrict__ G, const double *__restrict__ V,
				 const double *__restrict__ shift, size_t nn, size_t len)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < len;
	     i += (size_t)gridDim.x * blockDim.x)
		G[i] += shift[i / nn] * V[i];
}

// The kernel instance for a given n (L lanes per pair, R elements per lane, n <= L * R; R is
// the smallest instantiated one that covers n). L defaults to the smallest group (4, 8, 16 or
// 32 lanes) that keeps R <= 16 (lanes_for: n <= 64 runs jacobi_os<L4,R16>); GWB_JACOBI_LANES
// (4, 8, 16, 32) or GWB_JACOBI_TUNE overrides it for tuning (benchmarks), when n <= L * R
// still holds (lanes_ok).
template <typename T> struct kernel_pick {
	void (*fn)(const T *, T *, double *, double *, int *, jparams);
	int L;
	const char *name;
};

// Per-shape settings from GWB_JACOBI_TUNE="64f32=8x8;128f64=16x16" (bucket n <= 64, 128,
// 256, 512; lanes x warps), as the benchmark's tuning pass found them.
static void tuned(int n, size_t es, int *lanes, int *warps)
{
	const char *e = getenv("GWB_JACOBI_TUNE");
	int bucket = n <= 64 ? 64 : n <= 128 ? 128 : n <= 256 ? 256 : 512;
	char key[16];
	const char *hit;

	*lanes = *warps = 0;
	if (!e)
		return;
	snprintf(key, sizeof(key), "%d%s=", bucket, es == 4 ? "f32" : "f64");
	hit = strstr(e, key);
	if (hit && sscanf(hit + strlen(key), "%dx%d", lanes, warps) != 2)
		*lanes = *warps = 0;
}

// Lanes per pair: fewer lanes mean more elements per lane (R, registers) and fewer lanes
// computing the same rotation parameters; the kernel instances below cover L * R >= n with
// R <= 16. Defaults from the tuning pass on an H200 (bench/results/eig-dense-2026-11-30b.txt).
static bool lanes_ok(int L, int n)
{
	return (L == 4 && n <= 64) || (L == 8 && n <= 128) || (L == 16 && n <= 256) || L == 32;
}

static int lanes_for(int n, size_t es)
{
	const char *e = getenv("GWB_JACOBI_LANES");
	int L = n <= 64 ? 4 : n <= 128 ? 8 : n <= 256 ? 16 : 32, tl, tw, want = e ? atoi(e) : 0;

	tuned(n, es, &tl, &tw);
	if (tl)
		want = tl;
	if (lanes_ok(want, n))
		L = want;
	return L;
}

template <typename T> static kernel_pick<T> pick_kernel(int n, int L)
{
	if (L == 4)
		return {jacobi_os<T, 4, 16>, 4, "jacobi_os<L4,R16>"};
	if (L == 8)
		return n <= 64 ? kernel_pick<T>{jacobi_os<T, 8, 8>, 8, "jacobi_os<L8,R8>"}
			       : kernel_pick<T>{jacobi_os<T, 8, 16>, 8, "jacobi_os<L8,R16>"};
	if (L == 16)
		return n <= 64 ? kernel_pick<T>{jacobi_os<T, 16, 4>, 16, "jacobi_os<L16,R4>"}
		       : n <= 128 ? kernel_pick<T>{jacobi_os<T, 16, 8>, 16, "jacobi_os<L16,R8>"}
				  : kernel_pick<T>{jacobi_os<T, 16, 16>, 16, "jacobi_os<L16,R16>"};
	if (n <= 64)
		return {jacobi_os<T, 32, 2>, 32, "jacobi_os<L32,R2>"};
	if (n <= 128)
		return {jacobi_os<T, 32, 4>, 32, "jacobi_os<L32,R4>"};
	if (n <= 256)
		return {jacobi_os<T, 32, 8>, 32, "jacobi_os<L32,R8>"};
	return {jacobi_os<T, 32, 16>, 32, "jacobi_os<L32,R16>"};
}

static size_t smem_bytes(int n, int m, int w, bool blocked, size_t es)
{
	size_t scols = blocked ? 2 * (size_t)w : (size_t)n;
	size_t s = ((scols * n * es + 15) & ~(size_t)15);
	return s + ((size_t)m + 2 * n + 32) * sizeof(double) + (2 * (size_t)w + 4) * sizeof(int);
}

struct jplan {
	jparams P;
	size_t smem;
	int threads;
	int L;
};

// Choose smem-resident or blocked, the block width and the thread count from the device's
// shared-memory limit.
static gwb_status plan(int n, size_t es, jplan *out)
{
	gwb_gpu_info info;
	gwb_status rc = gwb_gpu_get_info(&info);
	if (rc)
		return rc;
	size_t limit = info.smem_per_block_optin ? info.smem_per_block_optin : info.smem_per_block;
	memset(out, 0, sizeof(*out));
	jparams &P = out->P;
	P.n = n;
	P.m = n + (n & 1);
	P.w = P.m / 2;
	P.blocked = 0;
	P.power = gwb_switch_on(GWB_SW_JACOBI_SHIFT);
	out->smem = smem_bytes(n, P.m, P.w, false, es);
	const char *eb = getenv("GWB_JACOBI_BLOCK");  // force the blocked variant (tests)
	int force_w = eb ? atoi(eb) : 0;
	if (force_w >= 1 && 2 * force_w <= n) {
		int nb = (n + force_w - 1) / force_w;
		nb += nb & 1;
		P.w = force_w;
		P.m = nb * force_w;
		P.blocked = 1;
		out->smem = smem_bytes(n, P.m, force_w, true, es);
	} else if ((!gwb_switch_on(GWB_SW_JACOBI_SMEM) && n >= 2) || out->smem > limit) {
		// Blocked: the widest power-of-two w whose 2w columns fit (also where the switch
		// jacobi.smem is off, to measure what the resident variant buys).
		int w = 1, nb = 2;
		while (w * 2 <= n / 2)
			w *= 2;
		for (; w >= 1; w /= 2) {
			nb = (n + w - 1) / w;
			nb += nb & 1;
			if (smem_bytes(n, nb * w, w, true, es) <= limit)
				break;
		}
		if (w < 1)
			w = 1;
		P.w = w;
		P.m = nb * w;
		P.blocked = 1;
		out->smem = smem_bytes(n, P.m, w, true, es);
		if (out->smem > limit)
			return gwb_error(GWB_EINVAL, "eig.batched: order %d does not fit the Jacobi kernel's "
					 "shared memory (%zu bytes available); use method = \"cusolver\"",
					 n, limit);
	}
	// Defaults from the tuning pass on an H200 (bench/results/eig-dense-2026-11-30b.txt, best
	// of 3 kernel ms): n <= 64: 4 lanes per pair, 4 warps (4000 matrices: f32 3.88 ms against
	// 3.85 with 2 warps and 5.34 with 8; f64 6.28 against 6.80 / 8.37; 8 lanes: 4.38 / 7.41);
	// n <= 128: 8 lanes, 8 warps in f32 (8.07 ms against 9.19 with 16, 9.30 with 16 lanes)
	// and 16 in f64 (15.9 against 18.4); n <= 256 (blocked): 16 lanes, 16 warps (f32 25.8 ms
	// against 33.0 with 32 lanes; f64 55.1 against 63.9).
	int L = lanes_for(n, es), tl, tw;
	int warps = n <= 64 ? 4 : n <= 128 && es == 4 ? 8 : 16;
	const char *ew = getenv("GWB_JACOBI_WARPS");
	if (ew && atoi(ew) >= 1 && atoi(ew) <= 16)
		warps = atoi(ew);
	tuned(n, es, &tl, &tw);
	if (tw >= 1 && tw <= 16)
		warps = tw;
	out->threads = warps * 32;
	out->L = L;
	return GWB_OK;
}

template <typename T>
static gwb_status run_kernel(const jplan &pl, const T *dA, T *dG, double *dvals, double *dshift,
			     int *dsweeps, size_t count, double tol, int max_sweeps, int given,
			     char *variant, size_t vsize)
{
	kernel_pick<T> k = pick_kernel<T>(pl.P.n, pl.L);
	jparams P = pl.P;
	// Default threshold: rotate while |g| > tol * ||g_p|| ||g_q|| with tol = min(8, 64 /
	// sqrt(n)) eps. The pairs left just under it contribute ~ sqrt(n) tol ||G|| to each
	// residual, so the old 8 sqrt(n) eps (f64) and 2 sqrt(n) eps (f32) gave f32 residuals of
	// 1.6e-5 to 7.3e-5 on an H200 (bench/results/eig-dense-2026-11-30.txt) and 1.4e-13 in f64
	// at n = 256; this one costs about a fifth of a sweep more on average (CPU emulation).
	P.tol = tol > 0 ? tol : fmin(8.0, 64.0 / sqrt((double)P.n)) * num<T>::eps();
	P.max_sweeps = max_sweeps > 0 ? max_sweeps : 30;
	P.given = given;
	gwb_status rc;
	if ((rc = CUDA_CHECK(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
						  (int)pl.smem))))
		return rc;
	if (variant)
		snprintf(variant, vsize, "gwb-jacobi-%s %s n=%d w=%d L=%d threads=%d",
			 P.blocked ? "blocked" : "smem", sizeof(T) == 4 ? "f32" : "f64", P.n, P.w,
			 pl.L, pl.threads);
	double bytes = (double)count * P.n * P.n * sizeof(T) * 2;
	return gwb_launch(k.name, k.fn, dim3((unsigned)count), dim3(pl.threads), pl.smem, 0, bytes,
			  dA, dG, dvals, dshift, dsweeps, P);
}

// gwb_copy (recorded in the telemetry) plus the wall time added to *ms.
static gwb_status tcopy(void *dst, const void *src, size_t bytes, gwb_xfer_dir dir, double *ms)
{
	double t = gwb_now();
	gwb_status rc = gwb_copy(dst, src, bytes, dir, false);
	*ms += (gwb_now() - t) * 1e3;
	return rc;
}

static unsigned grid_for(size_t len)
{
	size_t b = (len + 255) / 256;
	return (unsigned)(b > 65535 ? 65535 : b ? b : 1);
}

static cublasHandle_t cublas_handle(gwb_status *rc)
{
	return gwb_cublas(rc);
}

static gwb_status cublas_check(cublasStatus_t s, const char *what)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return GWB_OK;
	return gwb_error(GWB_ECUDA, "cuBLAS %s failed (status %d)", what, (int)s);
}

} // namespace

// The sweeps (and for compute == 2 the f32 solve, Newton-Schulz and f64 finish) on device
// input dA; vectors end in dG, values in dvals. The mixed path's buffers come back through
// the references for the caller to free.
static gwb_status solve_on_device(const void *dA, int compute, size_t count, int n, size_t len,
				  double tol, int max_sweeps, const jplan &pl32, const jplan &pl64,
				  void *dG, double *dvals, double *dshift, int *dsweeps, void *&dA32,
				  void *&dG32, void *&dT, void *&dV2, gwb_gpu_eig_stats *st)
{
	size_t nn = (size_t)n * n;
	gwb_status rc = GWB_OK;

	if (compute == 0) {
		rc = run_kernel<float>(pl32, (const float *)dA, (float *)dG, dvals, dshift, dsweeps,
				       count, tol, max_sweeps, 0, st->variant, sizeof(st->variant));
	} else if (compute == 1) {
		rc = run_kernel<double>(pl64, (const double *)dA, (double *)dG, dvals, dshift, dsweeps,
					count, tol, max_sweeps, 0, st->variant, sizeof(st->variant));
	} else {
		// Mixed: f32 solve, Newton-Schulz orthogonalization and G = (A + sigma I) V in f64,
		// then f64 sweeps from there.
		cublasHandle_t h = cublas_handle(&rc);
		const double one = 1.0, zero = 0.0, mhalf = -0.5, onehalf = 1.5;
		long long sn = (long long)nn;
		char v32[64];
		if (!h)
			return rc;
		if ((rc = gwb_gpu_malloc(&dA32, len * 4, "eig.batched.A32")) ||
		    (rc = gwb_gpu_malloc(&dG32, len * 4, "eig.batched.work32")) ||
		    (rc = gwb_gpu_malloc(&dT, len * 8, "eig.batched.ns")) ||
		    (rc = gwb_gpu_malloc(&dV2, len * 8, "eig.batched.ns2")))
			return rc;
		if ((rc = gwb_launch("jacobi_to_f32", jacobi_to_f32, dim3(grid_for(len)), dim3(256), 0, 0,
				     len * 12.0, (const double *)dA, (float *)dA32, len)))
			return rc;
		if ((rc = run_kernel<float>(pl32, (const float *)dA32, (float *)dG32, dvals, dshift,
					    dsweeps, count, 0, max_sweeps, 0, v32, sizeof(v32))))
			return rc;
		if ((rc = gwb_launch("jacobi_to_f64", jacobi_to_f64, dim3(grid_for(len)), dim3(256), 0, 0,
				     len * 12.0, (const float *)dG32, (double *)dV2, len)))
			return rc;
		double *V = (double *)dV2, *Tm = (double *)dT, *W = (double *)dG;
		for (int it = 0; it < 2 && !rc; it++) {
			// Tm = V^T V; W = 1.5 V - 0.5 V Tm; V <- W.
			rc = cublas_check(cublasDgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n,
								    &one, V, n, sn, V, n, sn, &zero,
								    Tm, n, sn, (int)count), "DGEMM");
			if (!rc)
				rc = CUDA_CHECK(cudaMemcpyAsync(W, V, len * 8, cudaMemcpyDeviceToDevice, 0));
			if (!rc)
				rc = cublas_check(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n,
									    n, &mhalf, V, n, sn, Tm, n, sn,
									    &onehalf, W, n, sn, (int)count),
						  "DGEMM");
			double *tmp = V;
			V = W;
			W = tmp;
		}
		if (rc)
			return rc;
		// G = A V + sigma V into W (the buffer not holding V); then make sure G is in dG.
		if ((rc = cublas_check(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
								 &one, (const double *)dA, n, sn, V, n,
								 sn, &zero, W, n, sn, (int)count),
				       "DGEMM")))
			return rc;
		if ((rc = gwb_launch("jacobi_add_shift", jacobi_add_shift, dim3(grid_for(len)),
				     dim3(256), 0, 0, len * 24.0, W, (const double *)V,
				     (const double *)dshift, nn, len)))
			return rc;
		if (W != (double *)dG &&
		    (rc = CUDA_CHECK(cudaMemcpyAsync(dG, W, len * 8, cudaMemcpyDeviceToDevice, 0))))
			return rc;
		if ((rc = run_kernel<double>(pl64, (const double *)dA, (double *)dG, dvals, dshift,
					     dsweeps, count, tol, max_sweeps, 1, st->variant,
					     sizeof(st->variant))))
			return rc;
		snprintf(st->variant, sizeof(st->variant), "gwb-jacobi-mixed %s n=%d",
			 pl64.P.blocked ? "blocked" : "smem", n);
	}
	return rc;
}

extern "C" gwb_status gwb_gpu_jacobi_batched(const void *A, const void *dA_in, int dtype,
					     size_t count, int n, int compute, double tol,
					     int max_sweeps, double *values, double *vectors,
					     void **dvec, gwb_gpu_eig_stats *st)
{
	gwb_status rc;
	size_t nn = (size_t)n * n, len = count * nn;
	size_t es_in = dtype ? 8 : 4;
	void *dA = nullptr, *dG = nullptr, *dA32 = nullptr, *dG32 = nullptr, *dT = nullptr,
	     *dV2 = nullptr;
	double *dvals = nullptr, *dshift = nullptr;
	int *dsweeps = nullptr, *hsweeps = nullptr;
	float *hv = nullptr;
	cudaEvent_t e0 = nullptr, e1 = nullptr;
	jplan pl32, pl64;

	memset(st, 0, sizeof(*st));
	if (n < 1 || count < 1)
		return gwb_error(GWB_EINVAL, "eig.batched: empty batch");
	if (n > 512)
		return gwb_error(GWB_EINVAL, "eig.batched: the Jacobi kernel handles orders up to 512 "
				 "(got %d); use method = \"cusolver\" or eig.solve per matrix", n);
	if (compute == 2 && dtype != 1)
		return gwb_error(GWB_EINVAL, "mixed precision needs f64 input");
	if ((rc = gwb_gpu_init()))
		return rc;
	if (compute != 1 && (rc = plan(n, 4, &pl32)))
		return rc;
	if (compute != 0 && (rc = plan(n, 8, &pl64)))
		return rc;
	hsweeps = (int *)malloc(count * sizeof(int));
	if (!hsweeps)
		return gwb_error(GWB_ENOMEM, "out of memory");
	if (dvec)
		*dvec = nullptr;
	if (!dA_in && (rc = gwb_gpu_malloc(&dA, len * es_in, "eig.batched.A")))
		goto out;
	if ((rc = gwb_gpu_malloc(&dG, len * (compute == 0 ? 4 : 8), "eig.batched.work")))
		goto out;
	if ((rc = gwb_gpu_malloc((void **)&dvals, count * n * sizeof(double), "eig.batched.values")))
		goto out;
	if ((rc = gwb_gpu_malloc((void **)&dshift, count * sizeof(double), "eig.batched.shift")))
		goto out;
	if ((rc = gwb_gpu_malloc((void **)&dsweeps, count * sizeof(int), "eig.batched.sweeps")))
		goto out;
	if (!dA_in && (rc = tcopy(dA, A, len * es_in, GWB_H2D, &st->transfer_ms)))
		goto out;
	if ((rc = CUDA_CHECK(cudaEventCreate(&e0))) || (rc = CUDA_CHECK(cudaEventCreate(&e1))))
		goto out;
	cudaEventRecord(e0, 0);
	if ((rc = solve_on_device(dA_in ? dA_in : dA, compute, count, n, len, tol, max_sweeps, pl32,
				  pl64, dG, dvals, dshift, dsweeps, dA32, dG32, dT, dV2, st)))
		goto out;
	// ascending per matrix, vectors with them, before anything leaves the device
	if ((rc = gwb_gpu_eig_sort(dvals, (vectors || dvec) ? dG : nullptr, compute != 0, count, n)))
		goto out;
	cudaEventRecord(e1, 0);
	if ((rc = CUDA_CHECK(cudaEventSynchronize(e1))))
		goto out;
	{
		float ms = 0;
		cudaEventElapsedTime(&ms, e0, e1);
		st->kernel_ms = ms;
	}
	if ((rc = tcopy(values, dvals, count * n * sizeof(double), GWB_D2H, &st->transfer_ms)))
		goto out;
	if ((rc = tcopy(hsweeps, dsweeps, count * sizeof(int), GWB_D2H, &st->transfer_ms)))
		goto out;
	if (dvec) {
		*dvec = dG;  // the caller's now
		dG = nullptr;
	} else if (vectors) {
		if (compute != 0) {
			rc = tcopy(vectors, dG, len * 8, GWB_D2H, &st->transfer_ms);
		} else {
			hv = (float *)malloc(len * 4);
			if (!hv) {
				rc = gwb_error(GWB_ENOMEM, "out of memory: %zu bytes for the vectors", len * 4);
				goto out;
			}
			rc = tcopy(hv, dG, len * 4, GWB_D2H, &st->transfer_ms);
			for (size_t i = 0; !rc && i < len; i++)
				vectors[i] = hv[i];
		}
		if (rc)
			goto out;
	}
	for (size_t b = 0; b < count; b++) {
		int s = hsweeps[b] < 0 ? -hsweeps[b] : hsweeps[b];
		if (s > st->sweeps)
			st->sweeps = s;
		if (hsweeps[b] < 0)
			st->unconverged++;
	}
out:
	if (e0)
		cudaEventDestroy(e0);
	if (e1)
		cudaEventDestroy(e1);
	gwb_gpu_free(dA);
	gwb_gpu_free(dG);
	gwb_gpu_free(dA32);
	gwb_gpu_free(dG32);
	gwb_gpu_free(dT);
	gwb_gpu_free(dV2);
	gwb_gpu_free(dvals);
	gwb_gpu_free(dshift);
	gwb_gpu_free(dsweeps);
	free(hsweeps);
	free(hv);
	return rc;
}
