// verbs.cu - the table verbs on the device (see verbs.h): the expression's postfix program run
// by one thread a row, CUB's flagged select for filter, gathers, the stable order of several
// keys as LSD passes of CUB's radix sort over an index (each key reduced to the bits its range
// needs: 32-bit keys where they fit), and groups either through a direct table over the keys'
// combined range (marks, a scan, atomics for first rows and counts) or by sorting and marking
// where a key changes. Aggregates: per-block shared-memory accumulators merged with atomics
// when the groups are few, global atomics when they are many; exact min/max on order-preserving
// keys; medians by one radix sort of (group, value) keys and a pick per group. Everything runs
// on the default stream; the only waits are the small copies of counts and ranges back.
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <math_constants.h>

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "common.cuh"
#include "verbs.h"
#include "../src/intr.h"

namespace {

constexpr int BLOCK = 256;
constexpr uint64_t KMAX = ~0ull;
constexpr int SMEM_GROUPS = 2048;   // groups kept per block in shared memory (else global)
constexpr int MAX_PROGRAM = 256;    // expression instructions staged in shared memory

enum { C_F32 = 0, C_I32 = 1, C_F64 = 2, C_U8 = 3, C_I64 = 4 };
enum { A_COUNT = 0, A_SUM, A_MEAN, A_MIN, A_MAX, A_STD, A_VAR, A_MEDIAN, A_FIRST, A_LAST,
       A_NUNIQUE, A_COUNT_ALL };

struct DBuf {
	void *p = nullptr;
	~DBuf() { gwb_gpu_free(p); }
	DBuf() = default;
	DBuf(const DBuf &) = delete;
	DBuf &operator=(const DBuf &) = delete;
	template <typename T> T *as() const { return (T *)p; }
};

gwb_status alloc(DBuf &b, size_t bytes, const char *purpose = "verbs.work")
{
	return gwb_gpu_malloc(&b.p, bytes ? bytes : 8, purpose);
}

unsigned blocks_for(size_t n)
{
	size_t b = (n + BLOCK - 1) / BLOCK;
	return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

// a CUB device-wide call: ask its temporary storage, take it from the pool, run it
template <typename F> gwb_status cub_run(F f)
{
	size_t bytes = 0;
	gwb_status rc;
	if ((rc = CUDA_CHECK(f(nullptr, bytes))))
		return rc;
	DBuf t;
	if ((rc = alloc(t, bytes, "verbs.cub")))
		return rc;
	return CUDA_CHECK(f(t.p, bytes));
}

int bits_of(uint64_t x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

// --- values and keys (verbs.c's rules) ---------------------------------------------------------

__device__ __forceinline__ double col_at(const gwb_dcol &c, size_t i)
{
	switch (c.type) {
	case C_F32: return ((const float *)c.v)[i];
	case C_I32: {
		int32_t k = ((const int32_t *)c.v)[i];
		return k < 0 ? CUDART_NAN : (double)k;
	}
	case C_F64: return ((const double *)c.v)[i];
	case C_I64: {
		int64_t k = ((const int64_t *)c.v)[i];
		return k == INT64_MIN ? CUDART_NAN : (double)k;
	}
	default: return ((const uint8_t *)c.v)[i];
	}
}

__device__ __forceinline__ uint64_t okey_f64(double x)
{
	if (isnan(x))
		return KMAX;
	if (x == 0)
		x = 0.0;
	uint64_t b = (uint64_t)__double_as_longlong(x);
	return (b >> 63) ? ~b : b | (1ull << 63);
}

__device__ __forceinline__ uint64_t okey_f32(float x)
{
	if (isnan(x))
		return KMAX;
	if (x == 0)
		x = 0.0f;
	uint32_t b = __float_as_uint(x);
	return (b >> 31) ? (uint64_t)(uint32_t)~b : (uint64_t)(b | (1u << 31));
}

__device__ __forceinline__ uint64_t okey_i64(int64_t x)
{
	return x == INT64_MIN ? KMAX : ((uint64_t)x ^ (1ull << 63)) - 1;
}

// the order-preserving key of a value of c (no ranks, ascending): min/max and medians
__device__ __forceinline__ uint64_t vkey_at(const gwb_dcol &c, size_t r)
{
	if (c.type == C_F32)
		return okey_f32(((const float *)c.v)[r]);
	if (c.type == C_I64)
		return okey_i64(((const int64_t *)c.v)[r]);
	return okey_f64(col_at(c, r));
}

__device__ __forceinline__ uint64_t key_at(const gwb_vkey &k, size_t r)
{
	uint64_t v;
	if (k.rank) {
		double x = col_at(k.col, r);
		v = isnan(x) || x < 0 || x >= k.nlevels ? KMAX : k.rank[(size_t)x];
	} else {
		v = vkey_at(k.col, r);
	}
	if (k.desc && v != KMAX)
		v = KMAX - 1 - v;
	return v;
}

// the value a key decodes to (c's type decides the encoding)
__device__ __forceinline__ double vkey_value(int type, uint64_t k)
{
	if (type == C_F32) {
		uint32_t k32 = (uint32_t)k;
		uint32_t b = (k32 >> 31) ? (k32 & 0x7fffffffu) : ~k32;
		return (double)__uint_as_float(b);
	}
	if (type == C_I64)
		return (double)(int64_t)((k + 1) ^ (1ull << 63));
	uint64_t b = (k >> 63) ? (k & ~(1ull << 63)) : ~k;
	return __longlong_as_double((long long)b);
}

struct Keys {
	gwb_vkey k[GWB_VG_MAXKEYS];
	int n;
};

// --- expression masks --------------------------------------------------------------------------

__global__ void k_expr(const gwb_expr_ins *code, int n, const gwb_dcol *cols, size_t rows,
		       uint8_t *mask)
{
	__shared__ gwb_expr_ins prog[MAX_PROGRAM];
	for (int p = threadIdx.x; p < n; p += blockDim.x)
		prog[p] = code[p];
	__syncthreads();
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
	     i += (size_t)gridDim.x * blockDim.x) {
		double st[GWB_VG_MAXDEPTH];
		int sp = 0;
		for (int pc = 0; pc < n; pc++) {
			const gwb_expr_ins &in = prog[pc];
			switch (in.op) {
			case GWB_XOP_COL: st[sp++] = col_at(cols[in.col], i); break;
			case GWB_XOP_NUM: st[sp++] = in.num; break;
			case GWB_XOP_ADD: st[sp - 2] = __dadd_rn(st[sp - 2], st[sp - 1]); sp--; break;
			case GWB_XOP_SUB: st[sp - 2] = __dsub_rn(st[sp - 2], st[sp - 1]); sp--; break;
			case GWB_XOP_MUL: st[sp - 2] = __dmul_rn(st[sp - 2], st[sp - 1]); sp--; break;
			case GWB_XOP_DIV: st[sp - 2] = __ddiv_rn(st[sp - 2], st[sp - 1]); sp--; break;
			case GWB_XOP_LT: st[sp - 2] = st[sp - 2] < st[sp - 1]; sp--; break;
			case GWB_XOP_LE: st[sp - 2] = st[sp - 2] <= st[sp - 1]; sp--; break;
			case GWB_XOP_GT: st[sp - 2] = st[sp - 2] > st[sp - 1]; sp--; break;
			case GWB_XOP_GE: st[sp - 2] = st[sp - 2] >= st[sp - 1]; sp--; break;
			case GWB_XOP_EQ: st[sp - 2] = st[sp - 2] == st[sp - 1]; sp--; break;
			case GWB_XOP_NE: st[sp - 2] = !(st[sp - 2] == st[sp - 1]); sp--; break;
			case GWB_XOP_AND: st[sp - 2] = st[sp - 2] != 0 && st[sp - 1] != 0; sp--; break;
			case GWB_XOP_OR: st[sp - 2] = st[sp - 2] != 0 || st[sp - 1] != 0; sp--; break;
			case GWB_XOP_NEG: st[sp - 1] = -st[sp - 1]; break;
			case GWB_XOP_NOT: st[sp - 1] = st[sp - 1] == 0; break;
			case GWB_XOP_CMPI: {
				int64_t w = ((const int64_t *)cols[in.col].v)[i], c = in.ival;
				int cop = (int)in.num;
				st[sp++] = w == INT64_MIN ? cop == GWB_XOP_NE :
					   cop == GWB_XOP_LT ? w < c : cop == GWB_XOP_LE ? w <= c :
					   cop == GWB_XOP_GT ? w > c : cop == GWB_XOP_GE ? w >= c :
					   cop == GWB_XOP_EQ ? w == c : w != c;
				break;
			}
			default: st[sp - 1] = isnan(st[sp - 1]) != 0;
			}
		}
		mask[i] = st[0] != 0;
	}
}

template <typename T>
__global__ void k_gather(const T *src, const uint32_t *idx, size_t k, T *dst)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < k;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[idx[i]];
}

// --- ranges of keys ----------------------------------------------------------------------------

// out[0] min of the keys that are not missing (KMAX when none), out[1] their max, out[2] the
// missing ones, out[3] the others. Keys from an array (arr) or from a key's column.
__device__ __forceinline__ void range_block(uint64_t lo, uint64_t hi, unsigned long long nm,
					    unsigned long long nn, unsigned long long *out)
{
	typedef cub::BlockReduce<unsigned long long, BLOCK> BR;
	__shared__ typename BR::TempStorage t;
	unsigned long long a = BR(t).Reduce((unsigned long long)lo, cuda::minimum<>{});
	__syncthreads();
	unsigned long long b = BR(t).Reduce((unsigned long long)hi, cuda::maximum<>{});
	__syncthreads();
	unsigned long long c = BR(t).Sum(nm);
	__syncthreads();
	unsigned long long d = BR(t).Sum(nn);
	if (threadIdx.x == 0) {
		atomicMin(&out[0], a);
		atomicMax(&out[1], b);
		atomicAdd(&out[2], c);
		atomicAdd(&out[3], d);
	}
}

__global__ void k_range_arr(const uint64_t *arr, size_t n, unsigned long long *out)
{
	uint64_t lo = KMAX, hi = 0;
	unsigned long long nm = 0, nn = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint64_t v = arr[i];
		if (v == KMAX) {
			nm++;
			continue;
		}
		nn++;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	range_block(lo, hi, nm, nn, out);
}

__global__ void k_range_key(gwb_vkey key, size_t n, unsigned long long *out)
{
	uint64_t lo = KMAX, hi = 0;
	unsigned long long nm = 0, nn = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint64_t v = key_at(key, i);
		if (v == KMAX) {
			nm++;
			continue;
		}
		nn++;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	range_block(lo, hi, nm, nn, out);
}

struct Range {
	uint64_t lo, hi;        // of the keys that are not missing (lo > hi: none)
	size_t missing, present;
	uint64_t lo_all() const { return present ? lo : KMAX; }
	uint64_t hi_all() const { return missing ? KMAX : hi; }
};

__global__ void k_range_init(unsigned long long *out)
{
	out[0] = KMAX;
	out[1] = 0;
	out[2] = 0;
	out[3] = 0;
}

gwb_status range_of(const uint64_t *arr, const gwb_vkey *key, size_t n, Range *r)
{
	DBuf o;
	unsigned long long h[4];
	gwb_status rc;
	unsigned g = blocks_for(n) < 1024 ? blocks_for(n) : 1024;
	if ((rc = alloc(o, 4 * sizeof(unsigned long long))) ||
	    (rc = gwb_launch("verbs_range_init", k_range_init, dim3(1), dim3(1), 0, 0, 0.0,
			     o.as<unsigned long long>())))
		return rc;
	if (arr)
		rc = gwb_launch("verbs_range", k_range_arr, dim3(g), dim3(BLOCK), 0, 0, n * 8.0, arr, n,
				o.as<unsigned long long>());
	else
		rc = gwb_launch("verbs_range_key", k_range_key, dim3(g), dim3(BLOCK), 0, 0, n * 8.0,
				*key, n, o.as<unsigned long long>());
	if (rc || (rc = CUDA_CHECK(cudaMemcpy(h, o.p, sizeof(h), cudaMemcpyDeviceToHost))))
		return rc;
	r->lo = h[0];
	r->hi = h[1];
	r->missing = h[2];
	r->present = h[3];
	return GWB_OK;
}

// --- sort --------------------------------------------------------------------------------------

__global__ void k_iota(uint32_t *p, size_t n)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (uint32_t)i;
}

__global__ void k_fill_keys(gwb_vkey key, const uint32_t *perm, size_t n, uint64_t *out)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = key_at(key, perm ? perm[i] : i);
}

__global__ void k_sub32(const uint64_t *in, uint64_t lo, size_t n, uint32_t *out)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = (uint32_t)(in[i] - lo);
}

__global__ void k_sub64(uint64_t *v, uint64_t lo, size_t n)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		v[i] -= lo;
}

// Stable sort of (keys a[0..n), rows *cur) by the keys' bits above lo: a and b (n u64 each)
// are scratch; *cur / *alt swap when the rows end in the other buffer.
gwb_status sort_pass(uint64_t *a, uint64_t *b, size_t n, uint32_t **cur, uint32_t **alt)
{
	Range r;
	gwb_status rc;
	if ((rc = range_of(a, nullptr, n, &r)))
		return rc;
	uint64_t lo = r.lo_all(), hi = r.hi_all();
	if (lo >= hi)
		return GWB_OK;   // one value: the order stays
	int bits = bits_of(hi - lo), items = (int)n;
	cub::DoubleBuffer<uint32_t> vals(*cur, *alt);
	if (bits <= 32) {
		uint32_t *k0 = (uint32_t *)b, *k1 = (uint32_t *)a;
		if ((rc = gwb_launch("verbs_key32", k_sub32, dim3(blocks_for(n)), dim3(BLOCK), 0, 0,
				     n * 12.0, (const uint64_t *)a, lo, n, k0)))
			return rc;
		cub::DoubleBuffer<uint32_t> keys(k0, k1);
		rc = cub_run([&](void *t, size_t &tb) {
			return cub::DeviceRadixSort::SortPairs(t, tb, keys, vals, items, 0, bits);
		});
	} else {
		if ((rc = gwb_launch("verbs_key64", k_sub64, dim3(blocks_for(n)), dim3(BLOCK), 0, 0,
				     n * 16.0, a, lo, n)))
			return rc;
		cub::DoubleBuffer<uint64_t> keys(a, b);
		rc = cub_run([&](void *t, size_t &tb) {
			return cub::DeviceRadixSort::SortPairs(t, tb, keys, vals, items, 0, bits);
		});
	}
	if (rc)
		return rc;
	*cur = vals.Current();
	*alt = vals.Alternate();
	return GWB_OK;
}

// the stable order by keys[0..nk) into perm (LSD: the last key first)
gwb_status order(const gwb_vkey *keys, int nk, size_t n, uint32_t *perm)
{
	DBuf ka, kb, p2;
	gwb_status rc;
	if ((rc = alloc(ka, n * 8)) || (rc = alloc(kb, n * 8)) || (rc = alloc(p2, n * 4)) ||
	    (rc = gwb_launch("verbs_iota", k_iota, dim3(blocks_for(n)), dim3(BLOCK), 0, 0, n * 4.0,
			     perm, n)))
		return rc;
	uint32_t *cur = perm, *alt = p2.as<uint32_t>();
	for (int k = nk - 1; k >= 0; k--) {
		if ((rc = gwb_launch("verbs_sort_keys", k_fill_keys, dim3(blocks_for(n)), dim3(BLOCK),
				     0, 0, n * 16.0, keys[k], (const uint32_t *)cur, n,
				     ka.as<uint64_t>())) ||
		    (rc = sort_pass(ka.as<uint64_t>(), kb.as<uint64_t>(), n, &cur, &alt)))
			return rc;
		if (gwb_intr_pending())
			return gwb_error(GWB_EINTR, "sort: interrupted");
	}
	if (cur != perm)
		rc = CUDA_CHECK(cudaMemcpyAsync(perm, cur, n * 4, cudaMemcpyDeviceToDevice, 0));
	return rc;
}

// --- groups ------------------------------------------------------------------------------------

struct Digits {
	uint64_t lo[GWB_VG_MAXKEYS], span[GWB_VG_MAXKEYS], range[GWB_VG_MAXKEYS];
};

// the code of a row in the direct table: the keys' digits in mixed radix, the first key the
// most significant; a missing key is the digit after the key's span (last)
__global__ void k_codes(Keys ks, Digits dg, size_t n, uint32_t *code, uint32_t *mark)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint64_t c = 0;
		for (int k = 0; k < ks.n; k++) {
			uint64_t v = key_at(ks.k[k], i);
			c = c * dg.range[k] + (v == KMAX ? dg.span[k] : v - dg.lo[k]);
		}
		code[i] = (uint32_t)c;
		if (!mark[c])   // (a read first: few groups would see millions of stores)
			mark[c] = 1;
	}
}

// group ids, first rows and counts; few groups: per-block shared-memory counters merged once
template <bool SMEM>
__global__ void k_gid_direct(const uint32_t *code, const uint32_t *rank, size_t n, int G,
			     uint32_t *gid, uint32_t *first, uint32_t *count)
{
	extern __shared__ uint32_t sg[];
	uint32_t *sf = sg, *sc = sg + (SMEM ? G : 0);
	if (SMEM) {
		for (int g = threadIdx.x; g < G; g += blockDim.x) {
			sf[g] = 0xffffffffu;
			sc[g] = 0;
		}
		__syncthreads();
	}
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t g = rank[code[i]] - 1;
		gid[i] = g;
		atomicMin(SMEM ? &sf[g] : &first[g], (uint32_t)i);
		atomicAdd(SMEM ? &sc[g] : &count[g], 1u);
	}
	if (SMEM) {
		__syncthreads();
		for (int g = threadIdx.x; g < G; g += blockDim.x)
			if (sc[g]) {
				atomicMin(&first[g], sf[g]);
				atomicAdd(&count[g], sc[g]);
			}
	}
}

__global__ void k_bounds(Keys ks, const uint32_t *perm, size_t n, uint32_t *flag)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t f = i == 0;
		for (int k = 0; k < ks.n && !f; k++)
			f = key_at(ks.k[k], perm[i]) != key_at(ks.k[k], perm[i - 1]);
		flag[i] = f;
	}
}

__global__ void k_gid_sorted(const uint32_t *perm, const uint32_t *flag, const uint32_t *scan,
			     size_t n, uint32_t *gid, uint32_t *first, uint32_t *start)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t g = scan[i] - 1;
		gid[perm[i]] = g;
		if (flag[i]) {
			first[g] = perm[i];   // stable: the group's smallest row
			start[g] = (uint32_t)i;
		}
	}
}

__global__ void k_count_sorted(const uint32_t *start, size_t G, size_t n, uint32_t *count)
{
	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < G;
	     g += (size_t)gridDim.x * blockDim.x)
		count[g] = (uint32_t)((g + 1 < G ? start[g + 1] : n) - start[g]);
}

gwb_status groups_direct(const Keys &ks, const Digits &dg, uint64_t R, size_t n, gwb_vgroups *g)
{
	DBuf code, mark, rank;
	gwb_status rc;
	uint32_t G = 0;
	if ((rc = alloc(code, n * 4)) || (rc = alloc(mark, R * 4)) || (rc = alloc(rank, R * 4)) ||
	    (rc = CUDA_CHECK(cudaMemsetAsync(mark.p, 0, R * 4, 0))) ||
	    (rc = gwb_launch("verbs_group_codes", k_codes, dim3(blocks_for(n)), dim3(BLOCK), 0, 0,
			     n * (8.0 * ks.n + 8), ks, dg, n, code.as<uint32_t>(),
			     mark.as<uint32_t>())))
		return rc;
	uint32_t *mk = mark.as<uint32_t>(), *rk = rank.as<uint32_t>();
	int items = (int)R;
	if ((rc = cub_run([&](void *t, size_t &tb) {
		    return cub::DeviceScan::InclusiveSum(t, tb, mk, rk, items);
	    })) ||
	    (rc = CUDA_CHECK(cudaMemcpy(&G, rk + R - 1, 4, cudaMemcpyDeviceToHost))))
		return rc;
	g->ngroups = G;
	if ((rc = gwb_gpu_malloc((void **)&g->first, (G ? G : 1) * 4, "verbs.groups")) ||
	    (rc = gwb_gpu_malloc((void **)&g->count, (G ? G : 1) * 4, "verbs.groups")) ||
	    (rc = CUDA_CHECK(cudaMemsetAsync(g->first, 0xff, (size_t)G * 4, 0))) ||
	    (rc = CUDA_CHECK(cudaMemsetAsync(g->count, 0, (size_t)G * 4, 0))))
		return rc;
	if (G <= SMEM_GROUPS)
		return gwb_launch("verbs_group_ids_smem", k_gid_direct<true>,
				  dim3(blocks_for(n) < 1056 ? blocks_for(n) : 1056), dim3(BLOCK),
				  (size_t)G * 8, 0, n * 12.0, (const uint32_t *)code.as<uint32_t>(),
				  (const uint32_t *)rk, n, (int)G, g->gid, g->first, g->count);
	return gwb_launch("verbs_group_ids", k_gid_direct<false>, dim3(blocks_for(n)), dim3(BLOCK),
			  0, 0, n * 12.0, (const uint32_t *)code.as<uint32_t>(),
			  (const uint32_t *)rk, n, (int)G, g->gid, g->first, g->count);
}

gwb_status groups_sorted(const gwb_vkey *keys, const Keys &ks, size_t n, gwb_vgroups *g)
{
	DBuf perm, flag, scan, start;
	gwb_status rc;
	uint32_t G = 0;
	if ((rc = alloc(perm, n * 4)) || (rc = alloc(flag, n * 4)) || (rc = alloc(scan, n * 4)) ||
	    (rc = order(keys, ks.n, n, perm.as<uint32_t>())) ||
	    (rc = gwb_launch("verbs_group_bounds", k_bounds, dim3(blocks_for(n)), dim3(BLOCK), 0, 0,
			     n * (16.0 * ks.n + 8), ks, (const uint32_t *)perm.as<uint32_t>(), n,
			     flag.as<uint32_t>())))
		return rc;
	uint32_t *fl = flag.as<uint32_t>(), *sc = scan.as<uint32_t>();
	int items = (int)n;
	if ((rc = cub_run([&](void *t, size_t &tb) {
		    return cub::DeviceScan::InclusiveSum(t, tb, fl, sc, items);
	    })) ||
	    (rc = CUDA_CHECK(cudaMemcpy(&G, sc + n - 1, 4, cudaMemcpyDeviceToHost))))
		return rc;
	g->ngroups = G;
	if ((rc = gwb_gpu_malloc((void **)&g->first, (G ? G : 1) * 4, "verbs.groups")) ||
	    (rc = gwb_gpu_malloc((void **)&g->count, (G ? G : 1) * 4, "verbs.groups")) ||
	    (rc = alloc(start, (size_t)G * 4)) ||
	    (rc = gwb_launch("verbs_group_ids_sorted", k_gid_sorted, dim3(blocks_for(n)),
			     dim3(BLOCK), 0, 0, n * 16.0, (const uint32_t *)perm.as<uint32_t>(),
			     (const uint32_t *)fl, (const uint32_t *)sc, n, g->gid, g->first,
			     start.as<uint32_t>())))
		return rc;
	return gwb_launch("verbs_group_counts", k_count_sorted, dim3(blocks_for(G)), dim3(BLOCK), 0,
			  0, G * 8.0, (const uint32_t *)start.as<uint32_t>(), (size_t)G, n, g->count);
}

// --- aggregates --------------------------------------------------------------------------------

// count and sum of the values that are not missing (dev: sum of squared deviations from mean)
template <bool SMEM>
__global__ void k_sum(const uint32_t *gid, gwb_dcol c, size_t n, int G, const double *mean,
		      double *sum, unsigned *cnt)
{
	extern __shared__ double sm[];
	double *ss = sm;
	unsigned *sc = (unsigned *)(sm + (SMEM ? G : 0));
	if (SMEM) {
		for (int g = threadIdx.x; g < G; g += blockDim.x) {
			ss[g] = 0;
			sc[g] = 0;
		}
		__syncthreads();
	}
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		double x = col_at(c, i);
		if (isnan(x))
			continue;
		uint32_t g = gid[i];
		if (mean) {
			double dv = __dsub_rn(x, mean[g]);
			x = __dmul_rn(dv, dv);
		}
		if (SMEM) {
			atomicAdd(&ss[g], x);
			atomicAdd(&sc[g], 1u);
		} else {
			atomicAdd(&sum[g], x);
			atomicAdd(&cnt[g], 1u);
		}
	}
	if (SMEM) {
		__syncthreads();
		for (int g = threadIdx.x; g < G; g += blockDim.x)
			if (sc[g]) {
				atomicAdd(&sum[g], ss[g]);
				atomicAdd(&cnt[g], sc[g]);
			}
	}
}

// an int64 column's sum kept exact: the wrapped 64-bit sum, and the sum of magnitudes that
// says whether any partial sum could have left int64
__global__ void k_sum_i64(const uint32_t *gid, const int64_t *v, size_t n,
			  unsigned long long *wsum, double *mag)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		int64_t x = v[i];
		if (x == INT64_MIN)
			continue;
		atomicAdd(&wsum[gid[i]], (unsigned long long)x);
		atomicAdd(&mag[gid[i]], fabs((double)x));
	}
}

// min (is_max 0) or max (1) as order-preserving keys (max stored + 1, so 0 is "none"); the
// first row holding a zero, for the sign of a zero result
template <bool SMEM>
__global__ void k_minmax(const uint32_t *gid, gwb_dcol c, size_t n, int G, int is_max,
			 unsigned long long *best, uint32_t *zrow)
{
	extern __shared__ unsigned long long sb[];
	if (SMEM) {
		for (int g = threadIdx.x; g < G; g += blockDim.x)
			sb[g] = is_max ? 0 : KMAX;
		__syncthreads();
	}
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint64_t k = vkey_at(c, i);
		if (k == KMAX)
			continue;
		uint32_t g = gid[i];
		unsigned long long *b = SMEM ? &sb[g] : &best[g];
		if (is_max)
			atomicMax(b, (unsigned long long)(k + 1));
		else
			atomicMin(b, (unsigned long long)k);
		if (c.type != C_I64 && col_at(c, i) == 0)
			atomicMin(&zrow[g], (uint32_t)i);
	}
	if (SMEM) {
		__syncthreads();
		for (int g = threadIdx.x; g < G; g += blockDim.x)
			if (is_max ? sb[g] != 0 : sb[g] != KMAX) {
				if (is_max)
					atomicMax(&best[g], sb[g]);
				else
					atomicMin(&best[g], sb[g]);
			}
	}
}

__global__ void k_minmax_fin(const unsigned long long *best, const uint32_t *zrow, gwb_dcol c,
			     size_t G, int is_max, int i64, double *out)
{
	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < G;
	     g += (size_t)gridDim.x * blockDim.x) {
		unsigned long long b = best[g];
		bool none = is_max ? b == 0 : b == KMAX;
		uint64_t k = is_max ? b - 1 : b;
		if (i64) {
			int64_t v = none ? INT64_MIN : (int64_t)((k + 1) ^ (1ull << 63));
			out[g] = __longlong_as_double((long long)v);
			continue;
		}
		double v = none ? CUDART_NAN : vkey_value(c.type, k);
		if (!none && v == 0 && zrow[g] != 0xffffffffu)
			v = col_at(c, zrow[g]);   // -0 or 0 as the group's first zero
		out[g] = v;
	}
}

// first (is_last 0) or last (1) row with a value, stored + 1 (0: none)
__global__ void k_firstlast(const uint32_t *gid, gwb_dcol c, size_t n, int is_last,
			    uint32_t *row)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		if (isnan(col_at(c, i)))
			continue;
		if (is_last)
			atomicMax(&row[gid[i]], (uint32_t)i + 1);
		else
			atomicMin(&row[gid[i]], (uint32_t)i + 1);
	}
}

__global__ void k_firstlast_fin(const uint32_t *row, gwb_dcol c, size_t G, int i64, double *out)
{
	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < G;
	     g += (size_t)gridDim.x * blockDim.x) {
		uint32_t r = row[g];
		bool none = r == 0 || r == 0xffffffffu;
		if (i64)
			out[g] = __longlong_as_double(
				none ? (long long)INT64_MIN : (long long)((const int64_t *)c.v)[r - 1]);
		else
			out[g] = none ? CUDART_NAN : col_at(c, r - 1);
	}
}

__global__ void k_sum_fin(const double *sum, const unsigned *cnt, const unsigned *cnt2,
			  size_t G, int agg, double *out)
{
	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < G;
	     g += (size_t)gridDim.x * blockDim.x) {
		double n = cnt[g];
		switch (agg) {
		case A_COUNT: out[g] = n; break;
		case A_SUM: out[g] = sum[g]; break;
		case A_MEAN: out[g] = n > 0 ? sum[g] / n : CUDART_NAN; break;
		default: {   // var, std: sum holds the squared deviations, cnt2 the counts
			double m = cnt2[g];
			double var = m > 1 ? sum[g] / (m - 1) : CUDART_NAN;
			out[g] = agg == A_STD ? sqrt(var) : var;
		}
		}
	}
}

__global__ void k_present(gwb_dcol c, size_t n, uint8_t *flag)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		flag[i] = !isnan(col_at(c, i));
}

__global__ void k_median_keys(const uint32_t *rows, const uint32_t *gid, gwb_dcol c, size_t m,
			      uint64_t lo, int vbits, uint64_t *key)
{
	for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
	     j += (size_t)gridDim.x * blockDim.x) {
		uint32_t r = rows[j];
		uint64_t v = vkey_at(c, r) - lo;
		key[j] = vbits < 64 ? ((uint64_t)gid[r] << vbits) | v : v;
	}
}

__global__ void k_gid_of(const uint32_t *rows, const uint32_t *gid, size_t m, uint32_t *out)
{
	for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < m;
	     j += (size_t)gridDim.x * blockDim.x)
		out[j] = gid[rows[j]];
}

// column.c's gwb_quantiles_inplace at q = 0.5 over the group's sorted values
__global__ void k_median(const uint32_t *sorted, const unsigned *off, const unsigned *cnt,
			 gwb_dcol c, size_t G, double *out)
{
	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < G;
	     g += (size_t)gridDim.x * blockDim.x) {
		size_t n = cnt[g], k;
		if (!n) {
			out[g] = CUDART_NAN;
			continue;
		}
		double pos = __dmul_rn(0.5, (double)(n - 1)), frac, a, b;
		k = (size_t)floor(pos);
		if (k >= n - 1)
			k = n - 1;
		frac = __dsub_rn(pos, (double)k);
		a = col_at(c, sorted[off[g] + k]);
		a = a == 0 ? 0.0 : a;
		b = a;
		if (k + 1 < n) {
			b = col_at(c, sorted[off[g] + k + 1]);
			b = b == 0 ? 0.0 : b;
		}
		out[g] = frac > 0 ? __dadd_rn(a, __dmul_rn(__dsub_rn(b, a), frac)) : a;
	}
}

gwb_status sums(const gwb_vgroups *g, const gwb_dcol &c, const double *mean, double *sum,
		unsigned *cnt)
{
	size_t n = g->rows, G = g->ngroups;
	gwb_status rc;
	if ((rc = CUDA_CHECK(cudaMemsetAsync(sum, 0, G * 8, 0))) ||
	    (rc = CUDA_CHECK(cudaMemsetAsync(cnt, 0, G * 4, 0))))
		return rc;
	if (G <= SMEM_GROUPS)
		return gwb_launch("verbs_agg_sum_smem", k_sum<true>, dim3(blocks_for(n) < 1056 ?
				  blocks_for(n) : 1056), dim3(BLOCK), G * 12, 0, n * 12.0,
				  (const uint32_t *)g->gid, c, n, (int)G, mean, sum, cnt);
	return gwb_launch("verbs_agg_sum", k_sum<false>, dim3(blocks_for(n)), dim3(BLOCK), 0, 0,
			  n * 12.0, (const uint32_t *)g->gid, c, n, (int)G, mean, sum, cnt);
}

gwb_status median(const gwb_vgroups *g, const gwb_dcol &c, double *dout)
{
	size_t n = g->rows, G = g->ngroups, m = 0;
	DBuf sum, cnt, off, flag, rows, rows2, key, key2, num;
	gwb_status rc;
	if ((rc = alloc(sum, G * 8)) || (rc = alloc(cnt, G * 4)) || (rc = alloc(off, G * 4)) ||
	    (rc = alloc(flag, n)) || (rc = alloc(rows, n * 4)) || (rc = alloc(rows2, n * 4)) ||
	    (rc = alloc(num, 8)) ||
	    (rc = sums(g, c, nullptr, sum.as<double>(), cnt.as<unsigned>())) ||
	    (rc = gwb_launch("verbs_present", k_present, dim3(blocks_for(n)), dim3(BLOCK), 0, 0,
			     n * 9.0, c, n, flag.as<uint8_t>())))
		return rc;
	unsigned *cn = cnt.as<unsigned>(), *of = off.as<unsigned>();
	uint8_t *fl = flag.as<uint8_t>();
	uint32_t *rw = rows.as<uint32_t>();
	long long *nsel = num.as<long long>();
	int gi = (int)G, items = (int)n;
	thrust::counting_iterator<uint32_t> it(0);
	if ((rc = cub_run([&](void *t, size_t &tb) {
		    return cub::DeviceScan::ExclusiveSum(t, tb, cn, of, gi);
	    })) ||
	    (rc = cub_run([&](void *t, size_t &tb) {
		    return cub::DeviceSelect::Flagged(t, tb, it, fl, rw, nsel, items);
	    })))
		return rc;
	long long hm = 0;
	if ((rc = CUDA_CHECK(cudaMemcpy(&hm, nsel, 8, cudaMemcpyDeviceToHost))))
		return rc;
	m = (size_t)hm;
	if (m) {
		if ((rc = alloc(key, m * 8)) || (rc = alloc(key2, m * 8)) ||
		    (rc = gwb_launch("verbs_median_vkeys", k_median_keys, dim3(blocks_for(m)),
				     dim3(BLOCK), 0, 0, m * 20.0, (const uint32_t *)rw,
				     (const uint32_t *)g->gid, c, m, (uint64_t)0, 64,
				     key.as<uint64_t>())))
			return rc;
		Range r;
		if ((rc = range_of(key.as<uint64_t>(), nullptr, m, &r)))
			return rc;
		uint64_t lo = r.lo_all();
		int vb = bits_of(r.hi_all() - lo), gb = bits_of(G - 1), mi = (int)m;
		uint32_t *r0 = rw, *r1 = rows2.as<uint32_t>();
		if (vb + gb <= 64) {   // one sort of (group, value) keys
			if ((rc = gwb_launch("verbs_median_keys", k_median_keys, dim3(blocks_for(m)),
					     dim3(BLOCK), 0, 0, m * 20.0, (const uint32_t *)rw,
					     (const uint32_t *)g->gid, c, m, lo, vb,
					     key.as<uint64_t>())))
				return rc;
			cub::DoubleBuffer<uint64_t> keys(key.as<uint64_t>(), key2.as<uint64_t>());
			cub::DoubleBuffer<uint32_t> vals(r0, r1);
			if (vb + gb > 0 && (rc = cub_run([&](void *t, size_t &tb) {
				    return cub::DeviceRadixSort::SortPairs(t, tb, keys, vals, mi, 0,
									   vb + gb);
			    })))
				return rc;
			r0 = vals.Current();
		} else {   // by value, then stably by group
			uint32_t *alt = r1;
			if ((rc = sort_pass(key.as<uint64_t>(), key2.as<uint64_t>(), m, &r0, &alt)))
				return rc;
			uint32_t *g0 = (uint32_t *)key.p, *g1 = (uint32_t *)key2.p;
			if ((rc = gwb_launch("verbs_median_gids", k_gid_of, dim3(blocks_for(m)),
					     dim3(BLOCK), 0, 0, m * 12.0, (const uint32_t *)r0,
					     (const uint32_t *)g->gid, m, g0)))
				return rc;
			cub::DoubleBuffer<uint32_t> keys(g0, g1);
			cub::DoubleBuffer<uint32_t> vals(r0, alt);
			if (gb > 0 && (rc = cub_run([&](void *t, size_t &tb) {
				    return cub::DeviceRadixSort::SortPairs(t, tb, keys, vals, mi, 0, gb);
			    })))
				return rc;
			r0 = vals.Current();
		}
		rw = r0;
	}
	return gwb_launch("verbs_median", k_median, dim3(blocks_for(G)), dim3(BLOCK), 0, 0,
			  G * 24.0, (const uint32_t *)rw, (const unsigned *)of, (const unsigned *)cn,
			  c, G, dout);
}

}  // namespace

extern "C" {

gwb_status gwb_vg_expr_mask(const gwb_expr_ins *code, int n, const gwb_dcol *cols, int ncols,
			    size_t rows, uint8_t *dmask)
{
	DBuf dc, dp;
	gwb_status rc;
	if (n > MAX_PROGRAM)
		return gwb_error(GWB_EINVAL, "filter: an expression of %d steps is more than the "
				 "device's %d", n, MAX_PROGRAM);
	if ((rc = alloc(dc, sizeof(gwb_dcol) * (size_t)(ncols ? ncols : 1))) ||
	    (rc = alloc(dp, sizeof(gwb_expr_ins) * (size_t)(n ? n : 1))) ||
	    (rc = CUDA_CHECK(cudaMemcpy(dc.p, cols, sizeof(gwb_dcol) * (size_t)ncols,
					cudaMemcpyHostToDevice))) ||
	    (rc = CUDA_CHECK(cudaMemcpy(dp.p, code, sizeof(gwb_expr_ins) * (size_t)n,
					cudaMemcpyHostToDevice))))
		return rc;
	if (!rows)
		return GWB_OK;
	return gwb_launch("verbs_expr_mask", k_expr, dim3(blocks_for(rows) < 2112 ? blocks_for(rows)
				  : 2112), dim3(BLOCK), 0, 0, rows * 9.0,
			  (const gwb_expr_ins *)dp.p, n, (const gwb_dcol *)dc.p, rows, dmask);
}

gwb_status gwb_vg_select(const uint8_t *dmask, size_t rows, uint32_t *didx, size_t *k)
{
	DBuf num;
	gwb_status rc;
	long long h = 0;
	int items = (int)rows;
	*k = 0;
	if (!rows)
		return GWB_OK;
	if ((rc = alloc(num, 8)))
		return rc;
	long long *ns = num.as<long long>();
	thrust::counting_iterator<uint32_t> it(0);
	if ((rc = cub_run([&](void *t, size_t &tb) {
		    return cub::DeviceSelect::Flagged(t, tb, it, dmask, didx, ns, items);
	    })) ||
	    (rc = CUDA_CHECK(cudaMemcpy(&h, ns, 8, cudaMemcpyDeviceToHost))))
		return rc;
	*k = (size_t)h;
	return GWB_OK;
}

gwb_status gwb_vg_gather(const void *src, int elem, const uint32_t *didx, size_t k, void *dst)
{
	if (!k)
		return GWB_OK;
	if (elem == 8)
		return gwb_launch("verbs_gather8", k_gather<uint64_t>, dim3(blocks_for(k)),
				  dim3(BLOCK), 0, 0, k * 20.0, (const uint64_t *)src, didx, k,
				  (uint64_t *)dst);
	return gwb_launch("verbs_gather4", k_gather<uint32_t>, dim3(blocks_for(k)), dim3(BLOCK), 0,
			  0, k * 12.0, (const uint32_t *)src, didx, k, (uint32_t *)dst);
}

gwb_status gwb_vg_order(const gwb_vkey *keys, int nk, size_t rows, uint32_t *dperm)
{
	if (rows > (size_t)INT_MAX)
		return gwb_error(GWB_EINVAL, "sort: %zu rows are more than the device sort's 2^31",
				 rows);
	if (!rows)
		return GWB_OK;
	return order(keys, nk, rows, dperm);
}

void gwb_vg_groups_free(gwb_vgroups *g)
{
	gwb_gpu_free(g->gid);
	gwb_gpu_free(g->first);
	gwb_gpu_free(g->count);
	g->gid = g->first = g->count = nullptr;
}

gwb_status gwb_vg_groups(const gwb_vkey *keys, int nk, size_t rows, int method, gwb_vgroups *g)
{
	Keys ks;
	Digits dg;
	gwb_status rc;
	uint64_t R = 1;
	bool direct = method != 2;

	memset(g, 0, sizeof(*g));
	g->rows = rows;
	if (nk < 1 || nk > GWB_VG_MAXKEYS)
		return gwb_error(GWB_EINVAL, "group_by: %d keys (the device takes 1 to %d)", nk,
				 GWB_VG_MAXKEYS);
	if (rows > (size_t)INT_MAX)
		return gwb_error(GWB_EINVAL, "group_by: %zu rows are more than the device's 2^31",
				 rows);
	if ((rc = gwb_gpu_malloc((void **)&g->gid, (rows ? rows : 1) * 4, "verbs.groups")))
		return rc;
	if (!rows) {
		g->method = 1;
		return GWB_OK;
	}
	ks.n = nk;
	for (int k = 0; k < nk; k++) {
		Range r;
		ks.k[k] = keys[k];
		ks.k[k].desc = 0;
		if (!direct)
			continue;
		if ((rc = range_of(nullptr, &ks.k[k], rows, &r)))
			goto fail;
		dg.lo[k] = r.present ? r.lo : 0;
		dg.span[k] = r.present ? r.hi - r.lo + 1 : 0;
		dg.range[k] = dg.span[k] + (r.missing > 0);
		// the combined range: small enough for a direct table of marks and ranks
		uint64_t lim = rows * 2 > ((uint64_t)1 << 22) ? rows * 2 : ((uint64_t)1 << 22);
		if (lim > ((uint64_t)1 << 28))
			lim = (uint64_t)1 << 28;
		if (dg.span[k] == 0 && r.present)   // the span overflowed: the whole 64 bits
			direct = false;
		else if (dg.range[k] > lim || R > lim / dg.range[k])
			direct = false;
		else
			R *= dg.range[k];
	}
	g->method = direct ? 1 : 2;
	rc = direct ? groups_direct(ks, dg, R, rows, g) : groups_sorted(ks.k, ks, rows, g);
	if (rc)
		goto fail;
	return GWB_OK;
fail:
	gwb_vg_groups_free(g);
	return rc;
}

gwb_status gwb_vg_agg(const gwb_vgroups *g, int agg, const gwb_dcol *cp, bool i64, double *out,
		      bool *exact)
{
	size_t n = g->rows, G = g->ngroups;
	DBuf dout, a, b, cnt2;
	gwb_status rc;
	gwb_dcol c = cp ? *cp : gwb_dcol{C_U8, nullptr};

	*exact = true;
	if (!G)
		return GWB_OK;
	if ((rc = alloc(dout, G * 8)))
		return rc;
	double *o = dout.as<double>();
	switch (agg) {
	case A_COUNT_ALL: {
		uint32_t *h = (uint32_t *)malloc(G * 4 + 4);
		if (!h)
			return gwb_error(GWB_ENOMEM, "agg: out of memory for %zu groups", G);
		rc = CUDA_CHECK(cudaMemcpy(h, g->count, G * 4, cudaMemcpyDeviceToHost));
		for (size_t i = 0; !rc && i < G; i++)
			out[i] = h[i];
		free(h);
		return rc;
	}
	case A_COUNT: case A_MEAN:
	case A_SUM:
		if (agg == A_SUM && i64) {
			if ((rc = alloc(a, G * 8)) || (rc = alloc(b, G * 8)) ||
			    (rc = CUDA_CHECK(cudaMemsetAsync(a.p, 0, G * 8, 0))) ||
			    (rc = CUDA_CHECK(cudaMemsetAsync(b.p, 0, G * 8, 0))) ||
			    (rc = gwb_launch("verbs_agg_sum_i64", k_sum_i64, dim3(blocks_for(n)),
					     dim3(BLOCK), 0, 0, n * 12.0, (const uint32_t *)g->gid,
					     (const int64_t *)c.v, n, a.as<unsigned long long>(),
					     b.as<double>())))
				return rc;
			double *mag = (double *)malloc(G * 8 + 8);
			if (!mag)
				return gwb_error(GWB_ENOMEM, "agg: out of memory for %zu groups", G);
			rc = CUDA_CHECK(cudaMemcpy(mag, b.p, G * 8, cudaMemcpyDeviceToHost));
			for (size_t i = 0; !rc && i < G; i++)
				if (!(mag[i] < 4.6e18))   // below 2^62: no partial sum leaves int64
					*exact = false;
			free(mag);
			if (rc || !*exact)
				return rc;
			return CUDA_CHECK(cudaMemcpy(out, a.p, G * 8, cudaMemcpyDeviceToHost));
		}
		if ((rc = alloc(a, G * 8)) || (rc = alloc(b, G * 4)) ||
		    (rc = sums(g, c, nullptr, a.as<double>(), b.as<unsigned>())) ||
		    (rc = gwb_launch("verbs_agg_fin", k_sum_fin, dim3(blocks_for(G)), dim3(BLOCK), 0,
				     0, G * 20.0, (const double *)a.as<double>(),
				     (const unsigned *)b.as<unsigned>(), (const unsigned *)nullptr, G,
				     agg, o)))
			return rc;
		break;
	case A_VAR: case A_STD:
		if ((rc = alloc(a, G * 8)) || (rc = alloc(b, G * 4)) || (rc = alloc(cnt2, G * 4)) ||
		    (rc = sums(g, c, nullptr, a.as<double>(), b.as<unsigned>())) ||
		    (rc = gwb_launch("verbs_agg_fin", k_sum_fin, dim3(blocks_for(G)), dim3(BLOCK), 0,
				     0, G * 20.0, (const double *)a.as<double>(),
				     (const unsigned *)b.as<unsigned>(), (const unsigned *)nullptr, G,
				     (int)A_MEAN, o)) ||
		    (rc = CUDA_CHECK(cudaMemcpyAsync(cnt2.p, b.p, G * 4, cudaMemcpyDeviceToDevice,
						     0))) ||
		    (rc = sums(g, c, o, a.as<double>(), b.as<unsigned>())) ||
		    (rc = gwb_launch("verbs_agg_fin", k_sum_fin, dim3(blocks_for(G)), dim3(BLOCK), 0,
				     0, G * 20.0, (const double *)a.as<double>(),
				     (const unsigned *)b.as<unsigned>(),
				     (const unsigned *)cnt2.as<unsigned>(), G, agg, o)))
			return rc;
		break;
	case A_MIN: case A_MAX: {
		int is_max = agg == A_MAX;
		if ((rc = alloc(a, G * 8)) || (rc = alloc(b, G * 4)) ||
		    (rc = CUDA_CHECK(cudaMemsetAsync(a.p, is_max ? 0 : 0xff, G * 8, 0))) ||
		    (rc = CUDA_CHECK(cudaMemsetAsync(b.p, 0xff, G * 4, 0))))
			return rc;
		if (G <= SMEM_GROUPS)
			rc = gwb_launch("verbs_agg_minmax_smem", k_minmax<true>,
					dim3(blocks_for(n) < 1056 ? blocks_for(n) : 1056), dim3(BLOCK),
					G * 8, 0, n * 12.0, (const uint32_t *)g->gid, c, n, (int)G,
					is_max, a.as<unsigned long long>(), b.as<uint32_t>());
		else
			rc = gwb_launch("verbs_agg_minmax", k_minmax<false>, dim3(blocks_for(n)),
					dim3(BLOCK), 0, 0, n * 12.0, (const uint32_t *)g->gid, c, n,
					(int)G, is_max, a.as<unsigned long long>(), b.as<uint32_t>());
		if (rc || (rc = gwb_launch("verbs_agg_minmax_fin", k_minmax_fin, dim3(blocks_for(G)),
					   dim3(BLOCK), 0, 0, G * 20.0,
					   (const unsigned long long *)a.as<unsigned long long>(),
					   (const uint32_t *)b.as<uint32_t>(), c, G, is_max, (int)i64,
					   o)))
			return rc;
		break;
	}
	case A_FIRST: case A_LAST: {
		int is_last = agg == A_LAST;
		if ((rc = alloc(a, G * 4)) ||
		    (rc = CUDA_CHECK(cudaMemsetAsync(a.p, is_last ? 0 : 0xff, G * 4, 0))) ||
		    (rc = gwb_launch("verbs_agg_firstlast", k_firstlast, dim3(blocks_for(n)),
				     dim3(BLOCK), 0, 0, n * 12.0, (const uint32_t *)g->gid, c, n,
				     is_last, a.as<uint32_t>())) ||
		    (rc = gwb_launch("verbs_agg_firstlast_fin", k_firstlast_fin, dim3(blocks_for(G)),
				     dim3(BLOCK), 0, 0, G * 16.0, (const uint32_t *)a.as<uint32_t>(), c,
				     G, (int)i64, o)))
			return rc;
		break;
	}
	case A_MEDIAN:
		if ((rc = median(g, c, o)))
			return rc;
		break;
	default:
		return gwb_error(GWB_EINVAL, "agg: aggregate %d is not computed on the device", agg);
	}
	return CUDA_CHECK(cudaMemcpy(out, o, G * 8, cudaMemcpyDeviceToHost));
}

}  // extern "C"
