/* lapi_teach.c - the measurements behind the `teach` lessons (lua/gwb/teach.lua writes the
 * lessons): the transpose three ways on the GPU (kernels/transpose.h) beside the CPU, and
 * teach.measure(lesson, opts) for the other lessons: the CPU side in src/teach.c, the GPU
 * side in kernels/teach.cu. Options are range-checked here; GPU sizes are scaled down to the
 * free device memory (the result's `scaled` says so). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "intr.h"
#include "lapi.h"
#include "teach.h"
#include "transpose.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/teach.h"
#include "../kernels/transpose.h"
#endif

static void set_num(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

/* The row-major rows x cols table transposed, compared with the reference (exact copy). */
static bool same(const float *a, const float *b, size_t n)
{
	return memcmp(a, b, n * sizeof(float)) == 0;
}

#define BUFFERS_T "gwb.teach.buffers"   /* the tag of the scratch userdata */
struct buffers { float *src, *ref, *out; };

static int buffers_gc(lua_State *L)
{
	struct buffers *b = gwb_lua_toudata(L, 1, BUFFERS_T);

	if (!b)
		return 0;
	free(b->src);
	free(b->ref);
	free(b->out);
	b->src = b->ref = b->out = NULL;
	return 0;
}

/* teach.measure_transpose(rows, cols [, {reps = 5, gpu = true}]) -> table */
static int l_measure_transpose(lua_State *L)
{
	static const char *const known[] = {"reps", "gpu", "work", NULL};
	lua_Integer rows = luaL_checkinteger(L, 1), cols = luaL_checkinteger(L, 2);
	int reps = gwb_opt_i32(L, 3, "teach.transpose", "reps", 5);
	bool want_gpu = gwb_opt_bool(L, 3, "teach.transpose", "gpu", true);
	size_t n, i, bytes;
	struct buffers *b;
	double t[16];
	int r, variant;
	static const char *cpu_names[3] = {"naive", "blocked", "threads"};

	gwb_opt_check_keys(L, 3, "teach.transpose", known);
	if (rows < 1 || cols < 1 || rows > (1 << 16) || cols > (1 << 16))
		return luaL_error(L, "teach.transpose: rows and cols must be 1..65536 (got %I x %I)",
				  rows, cols);
	if (reps < 1 || reps > 16)
		return luaL_error(L, "teach.transpose: reps must be 1..16 (got %d)", reps);
	n = (size_t)rows * (size_t)cols;
	bytes = n * sizeof(float);
	b = gwb_lua_newudata(L, sizeof(*b), 0, BUFFERS_T);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, buffers_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	b->src = malloc(bytes);
	b->ref = malloc(bytes);
	b->out = malloc(bytes);
	if (!b->src || !b->ref || !b->out)
		return luaL_error(L, "teach.transpose: out of host memory for 3 x %d MB",
				  (int)(bytes >> 20));
	for (i = 0; i < n; i++)
		b->src[i] = (float)(i % 9973) * 0.5f - 7.0f;
	gwb_transpose_f32_naive(b->src, (size_t)rows, (size_t)cols, b->ref);

	lua_createtable(L, 0, 8);
	lua_pushinteger(L, rows);
	lua_setfield(L, -2, "rows");
	lua_pushinteger(L, cols);
	lua_setfield(L, -2, "cols");
	lua_pushinteger(L, (lua_Integer)bytes);
	lua_setfield(L, -2, "bytes");
	lua_pushinteger(L, reps);
	lua_setfield(L, -2, "reps");

	gwb_progress_begin("teach.transpose", 3 + (want_gpu ? 3 : 0));
	/* CPU: the double loop, cache blocks of 32, and blocks over every core */
	lua_createtable(L, 0, 3);
	for (variant = 0; variant < 3; variant++) {
		for (r = 0; r < reps; r++) {
			double t0;
			if (gwb_intr_pending()) {
				gwb_progress_end();
				return luaL_error(L, "teach.transpose: interrupted");
			}
			t0 = gwb_now();
			if (variant == 0)
				gwb_transpose_f32_naive(b->src, (size_t)rows, (size_t)cols, b->out);
			else
				gwb_transpose_f32(b->src, (size_t)rows, (size_t)cols, (size_t)cols, b->out,
						  (size_t)rows, 32, variant == 1 ? 1 : 0);
			t[r] = gwb_now() - t0;
		}
		double med = gwb_median(t, reps);
		lua_createtable(L, 0, 4);
		set_num(L, "ms", med * 1e3);
		set_num(L, "gbps", 2.0 * bytes / (med * 1e9));
		lua_pushboolean(L, same(b->out, b->ref, n));
		lua_setfield(L, -2, "correct");
		if (variant == 2) {
			lua_pushinteger(L, gwb_cpu_count());
			lua_setfield(L, -2, "threads");
		}
		lua_setfield(L, -2, cpu_names[variant]);
		gwb_progress_update(variant + 1, NULL, 0);
	}
	lua_setfield(L, -2, "cpu");

	if (!want_gpu) {
		lua_pushstring(L, "not asked for (gpu = false)");
		lua_setfield(L, -2, "gpu_reason");
	} else if (!gwb_gpu_available()) {
		lua_pushstring(L, gwb_gpu_unavailable_reason());
		lua_setfield(L, -2, "gpu_reason");
	} else {
#ifdef GWB_HAVE_CUDA
		gwb_gpu_info g;
		double copy_gbps = 0;
		gwb_status st = GWB_OK;
		lua_createtable(L, 0, 6);
		if (gwb_gpu_get_info(&g) == GWB_OK) {
			lua_pushstring(L, g.name);
			lua_setfield(L, -2, "device");
		}
		for (variant = 0; variant < 3 && !st; variant++) {
			gwb_transpose_timing tm;
			memset(b->out, 0, bytes);
			st = gwb_gpu_transpose_host(b->src, b->out, (size_t)rows, (size_t)cols,
						    (gwb_transpose_kernel)variant, 32, reps, &tm);
			if (st)
				break;
			lua_createtable(L, 0, 6);
			set_num(L, "ms", tm.kernel_ms);
			set_num(L, "min_ms", tm.kernel_min_ms);
			set_num(L, "gbps", tm.gbps);
			set_num(L, "h2d_ms", tm.h2d_ms);
			set_num(L, "d2h_ms", tm.d2h_ms);
			lua_pushboolean(L, same(b->out, b->ref, n));
			lua_setfield(L, -2, "correct");
			lua_setfield(L, -2, gwb_transpose_kernel_name((gwb_transpose_kernel)variant));
			copy_gbps = tm.copy_gbps;
			gwb_progress_update(4 + variant, NULL, 0);
		}
		if (st) {
			gwb_progress_end();
			return gwb_lua_fail(L, st);
		}
		set_num(L, "copy_gbps", copy_gbps);
		lua_setfield(L, -2, "gpu");
#endif
	}
	gwb_progress_end();
	return 1;
}

/* --- teach.measure ------------------------------------------------------------------------ */

/* An integer option in lo..hi (the error names the lesson, the option and the range). */
static lua_Integer opt_range(lua_State *L, const char *fn, const char *key, lua_Integer def,
			     lua_Integer lo, lua_Integer hi)
{
	lua_Integer v = gwb_opt_int(L, 2, fn, key, def);

	if (v < lo || v > hi)
		luaL_error(L, "%s: %s must be %I..%I (got %I)", fn, key, lo, hi, v);
	return v;
}

static void push_nums(lua_State *L, const char *key, const double *v, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushnumber(L, v[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, key);
}

static void push_ints(lua_State *L, const char *key, const int *v, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, v[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, key);
}

static void push_sizes(lua_State *L, const char *key, const size_t *v, int n)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)v[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, key);
}

/* Raise for a failed measurement (ends the progress run first). */
static void check(lua_State *L, gwb_status st)
{
	if (st) {
		gwb_progress_end();
		gwb_lua_fail(L, st);
	}
}

/* Powers of two from lo to hi (at most 32). */
static int pow2_sizes(size_t lo, size_t hi, size_t *out)
{
	int n = 0;

	for (size_t s = lo; s <= hi && n < 32; s *= 2)
		out[n++] = s;
	return n;
}

struct gpu_side {
	bool on;              /* measure on the GPU */
	double divide;        /* sizes divided by this to fit the free memory (1: as asked) */
};

/* Whether to measure on the GPU, with the reason in result.gpu_reason otherwise; `need`
 * bytes are scaled down (halved until they fit in 3/4 of the free device memory) and the
 * result's `scaled` says so. The result table is on top of the stack. */
static struct gpu_side gpu_side(lua_State *L, bool want, double need, const char *fn)
{
	struct gpu_side g = {false, 1};

	if (!want) {
		lua_pushstring(L, "not asked for (gpu = false)");
		lua_setfield(L, -2, "gpu_reason");
		return g;
	}
	if (!gwb_gpu_available()) {
		lua_pushstring(L, gwb_gpu_unavailable_reason());
		lua_setfield(L, -2, "gpu_reason");
		return g;
	}
#ifndef GWB_HAVE_CUDA
	(void)need;
	(void)fn;
	lua_pushstring(L, "CPU-only build (make CUDA=0)");
	lua_setfield(L, -2, "gpu_reason");
	return g;
#else
	{
		size_t fr = 0, tot = 0;
		if (gwb_gpu_mem(&fr, &tot) == GWB_OK) {
			while (need / g.divide > 0.75 * (double)fr && g.divide < 1024)
				g.divide *= 2;
			if (g.divide > 1)
				lua_pushfstring(L, "%s: sizes divided by %d to fit the %d MiB of free device "
						"memory (%d MiB asked for)", fn, (int)g.divide,
						(int)(fr >> 20), (int)(need / 1048576));
			else
				lua_pushnil(L);
			lua_setfield(L, -2, "scaled");
		}
		g.on = true;
		gwb_gpu_info info;
		if (gwb_gpu_get_info(&info) == GWB_OK) {
			lua_pushstring(L, info.name);
			lua_setfield(L, -2, "device");
			lua_pushinteger(L, (lua_Integer)info.l2_bytes);
			lua_setfield(L, -2, "l2_bytes");
			lua_pushinteger(L, info.sms);
			lua_setfield(L, -2, "sms");
		}
		return g;
	}
#endif
}

static void m_memory(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* used by the GPU side */
	size_t maxb = (size_t)opt_range(L, fn, "max_bytes", 256 << 20, 1 << 16, (lua_Integer)1 << 32);
	double touched = (double)opt_range(L, fn, "touched", 512 << 20, 1 << 20, (lua_Integer)1 << 34);
	size_t gmax = (size_t)opt_range(L, fn, "gpu_max_bytes", 1 << 30, 1 << 22, (lua_Integer)1 << 36);
	size_t sizes[32], l1, l2, l3;
	double gbps[32];
	int n = pow2_sizes(4096, maxb, sizes);

	gwb_progress_begin(fn, n);
	lua_createtable(L, 0, 6);
	lua_createtable(L, 0, 5);
	check(L, gwb_teach_cpu_sweep(sizes, n, touched, reps, gbps));
	push_sizes(L, "sizes", sizes, n);
	push_nums(L, "gbps", gbps, n);
	gwb_teach_cpu_caches(&l1, &l2, &l3);
	lua_pushinteger(L, (lua_Integer)l1);
	lua_setfield(L, -2, "l1_bytes");
	lua_pushinteger(L, (lua_Integer)l2);
	lua_setfield(L, -2, "l2_bytes");
	lua_pushinteger(L, (lua_Integer)l3);
	lua_setfield(L, -2, "l3_bytes");
	lua_setfield(L, -2, "cpu");
	gwb_progress_end();
	struct gpu_side g = gpu_side(L, want_gpu, (double)gmax, fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		size_t gs[32];
		double gb[32], flops = 0, regb = 0, smem = 0;
		int ns = pow2_sizes(4096, 8 << 20, gs);
		gwb_progress_begin(fn, 32);
		lua_createtable(L, 0, 6);
		check(L, gwb_teach_gpu_sweep(gs, ns, 1, 8e9 * work, reps, gb));
		lua_createtable(L, 0, 2);
		push_sizes(L, "sizes", gs, ns);
		push_nums(L, "gbps", gb, ns);
		lua_setfield(L, -2, "sm");
		int nd = pow2_sizes(1 << 20, (size_t)(gmax / g.divide), gs);
		check(L, gwb_teach_gpu_sweep(gs, nd, 0, 16e9 * work, reps, gb));
		lua_createtable(L, 0, 2);
		push_sizes(L, "sizes", gs, nd);
		push_nums(L, "gbps", gb, nd);
		lua_setfield(L, -2, "dev");
		check(L, gwb_teach_gpu_onchip(reps, work, &flops, &regb, &smem));
		set_num(L, "fma_tflops", flops * 1e-12);
		set_num(L, "reg_tbps", regb * 1e-12);
		set_num(L, "smem_gbps", smem);
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
#endif
}

static const int strides6[] = {1, 2, 4, 8, 16, 32};

static void m_coalescing(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* their GPU sizes are options */
	size_t bytes = (size_t)opt_range(L, fn, "bytes", 64 << 20, 1 << 20, (lua_Integer)1 << 32);
	size_t gbytes = (size_t)opt_range(L, fn, "gpu_bytes", 256 << 20, 1 << 20, (lua_Integer)1 << 36);
	size_t rows = (size_t)opt_range(L, fn, "rows", 1 << 20, 1024, 1 << 28);
	size_t grows = (size_t)opt_range(L, fn, "gpu_rows", 4 << 20, 1024, 1 << 30);
	int F = (int)opt_range(L, fn, "features", 32, 2, 256);
	double gbps[6], aos = 0, soa = 0;

	if ((double)rows * F * 4 > 4294967296.0)
		luaL_error(L, "%s: rows x features x 4 bytes must be at most 4 GiB (got %d x %d)", fn,
			   (int)rows, F);

	gwb_progress_begin(fn, 2);
	lua_createtable(L, 0, 6);
	push_ints(L, "strides", strides6, 6);
	lua_createtable(L, 0, 4);
	check(L, gwb_teach_cpu_stride(bytes, strides6, 6, reps, gbps));
	push_nums(L, "gbps", gbps, 6);
	check(L, gwb_teach_cpu_soa(rows, F, reps, &aos, &soa));
	set_num(L, "aos_ms", aos);
	set_num(L, "soa_ms", soa);
	lua_pushinteger(L, (lua_Integer)rows);
	lua_setfield(L, -2, "rows");
	lua_setfield(L, -2, "cpu");
	lua_pushinteger(L, F);
	lua_setfield(L, -2, "features");
	gwb_progress_end();
	double need = (double)gbytes > (double)grows * F * 4 ? (double)gbytes : (double)grows * F * 4;
	struct gpu_side g = gpu_side(L, want_gpu, need, fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		static const char *names[3] = {"float", "float2", "float4"};
		static const int widths[3] = {4, 8, 16};
		gwb_progress_begin(fn, 4);
		lua_createtable(L, 0, 6);
		for (int w = 0; w < 3; w++) {
			check(L, gwb_teach_gpu_stride((size_t)(gbytes / g.divide), widths[w], strides6, 6,
						      reps, gbps));
			push_nums(L, names[w], gbps, 6);
			gwb_progress_update(w + 1, NULL, 0);
		}
		size_t gr = (size_t)(grows / g.divide);
		check(L, gwb_teach_gpu_soa(gr, F, reps, &aos, &soa));
		set_num(L, "aos_ms", aos);
		set_num(L, "soa_ms", soa);
		lua_pushinteger(L, (lua_Integer)gr);
		lua_setfield(L, -2, "rows");
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
#endif
}

static int gcd(int a, int b)
{
	while (b) {
		int t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void m_banks(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* used by the GPU side */
	size_t rows = (size_t)opt_range(L, fn, "rows", 1024, 64, 1 << 16);
	static const int pitches[] = {1024, 1040, 2048, 2064, 4096, 4112};
	double ns[6];

	gwb_progress_begin(fn, 1);
	lua_createtable(L, 0, 6);
	lua_createtable(L, 0, 3);
	check(L, gwb_teach_cpu_sets(rows, pitches, 6, reps, ns));
	push_ints(L, "pitches", pitches, 6);
	push_nums(L, "ns", ns, 6);
	lua_pushinteger(L, (lua_Integer)rows);
	lua_setfield(L, -2, "rows");
	lua_setfield(L, -2, "cpu");
	gwb_progress_end();
	struct gpu_side g = gpu_side(L, want_gpu, 1 << 20, fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		int strides[32], ways[32];
		double ms[32], t32 = 0, t33 = 0;
		for (int i = 0; i < 32; i++) {
			strides[i] = i + 1;
			ways[i] = gcd(i + 1, 32);
		}
		gwb_progress_begin(fn, 1);
		lua_createtable(L, 0, 5);
		check(L, gwb_teach_gpu_banks(strides, 32, reps, work, ms, &t32, &t33));
		push_ints(L, "strides", strides, 32);
		push_ints(L, "ways", ways, 32);
		push_nums(L, "ms", ms, 32);
		set_num(L, "tile_ms", t32);
		set_num(L, "padded_ms", t33);
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
	(void)gcd;
#endif
}

static const int classes8[] = {2, 4, 8, 16, 32, 64, 128, 256};

static void m_atomics(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* their GPU sizes are options */
	size_t rows = (size_t)opt_range(L, fn, "rows", 2 << 20, 1024, 1 << 28);
	size_t grows = (size_t)opt_range(L, fn, "gpu_rows", 16 << 20, 1024, 1 << 30);
	int threads = (int)opt_range(L, fn, "threads", gwb_cpu_count(), 1, 64);
	double a[8], b[8];

	gwb_progress_begin(fn, 8);
	lua_createtable(L, 0, 6);
	push_ints(L, "classes", classes8, 8);
	lua_createtable(L, 0, 4);
	check(L, gwb_teach_cpu_vote(rows, classes8, 8, threads, reps, a, b));
	push_nums(L, "shared_ms", a, 8);
	push_nums(L, "private_ms", b, 8);
	lua_pushinteger(L, threads);
	lua_setfield(L, -2, "threads");
	lua_pushinteger(L, (lua_Integer)rows);
	lua_setfield(L, -2, "rows");
	lua_setfield(L, -2, "cpu");
	gwb_progress_end();
	struct gpu_side g = gpu_side(L, want_gpu, 1 << 20, fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		gwb_progress_begin(fn, 1);
		lua_createtable(L, 0, 3);
		check(L, gwb_teach_gpu_vote(grows, classes8, 8, reps, a, b));
		push_nums(L, "global_ms", a, 8);
		push_nums(L, "block_ms", b, 8);
		lua_pushinteger(L, (lua_Integer)grows);
		lua_setfield(L, -2, "rows");
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
	(void)grows;
#endif
}

static const int bins4[] = {32, 64, 128, 256};

static void m_histogram(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* their GPU sizes are options */
	size_t rows = (size_t)opt_range(L, fn, "rows", 1 << 20, 1024, 1 << 26);
	size_t grows = (size_t)opt_range(L, fn, "gpu_rows", 4 << 20, 1024, 1 << 28);
	int F = (int)opt_range(L, fn, "features", 8, 1, 64);
	int GF = (int)opt_range(L, fn, "gpu_features", 32, 1, 64);
	int threads = (int)opt_range(L, fn, "threads", gwb_cpu_count(), 1, 64);
	double a[4], b[4];

	gwb_progress_begin(fn, 4);
	lua_createtable(L, 0, 6);
	push_ints(L, "bins", bins4, 4);
	lua_createtable(L, 0, 5);
	check(L, gwb_teach_cpu_hist(rows, F, bins4, 4, threads, reps, a, b));
	push_nums(L, "shared_ms", a, 4);
	push_nums(L, "private_ms", b, 4);
	lua_pushinteger(L, threads);
	lua_setfield(L, -2, "threads");
	lua_pushinteger(L, F);
	lua_setfield(L, -2, "features");
	lua_pushinteger(L, (lua_Integer)rows);
	lua_setfield(L, -2, "rows");
	lua_setfield(L, -2, "cpu");
	gwb_progress_end();
	struct gpu_side g = gpu_side(L, want_gpu, (double)grows * (GF + 1), fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		double occ[4], smem[4];
		size_t gr = (size_t)(grows / g.divide);
		gwb_progress_begin(fn, 4);
		lua_createtable(L, 0, 6);
		check(L, gwb_teach_gpu_hist(gr, GF, bins4, 4, reps, a, b, occ, smem));
		push_nums(L, "global_ms", a, 4);
		push_nums(L, "smem_ms", b, 4);
		push_nums(L, "occupancy", occ, 4);
		push_nums(L, "smem_bytes", smem, 4);
		lua_pushinteger(L, GF);
		lua_setfield(L, -2, "features");
		lua_pushinteger(L, (lua_Integer)gr);
		lua_setfield(L, -2, "rows");
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
	(void)GF;
#endif
}

static void m_divergence(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* used by the GPU side */
	static const double cf[] = {0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1};
	static const double gf[] = {0, 0.125, 0.25, 0.5, 0.75, 1};
	size_t elems = (size_t)opt_range(L, fn, "elems", 4 << 20, 1024, 1 << 28);
	double ns[9], ms[6];

	gwb_progress_begin(fn, 1);
	lua_createtable(L, 0, 6);
	lua_createtable(L, 0, 3);
	check(L, gwb_teach_cpu_branch(elems, cf, 9, reps, ns));
	push_nums(L, "fractions", cf, 9);
	push_nums(L, "ns", ns, 9);
	lua_pushinteger(L, (lua_Integer)elems);
	lua_setfield(L, -2, "elems");
	lua_setfield(L, -2, "cpu");
	gwb_progress_end();
	struct gpu_side g = gpu_side(L, want_gpu, 1 << 20, fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		gwb_progress_begin(fn, 1);
		lua_createtable(L, 0, 2);
		check(L, gwb_teach_gpu_divergence(gf, 6, reps, work, ms));
		push_nums(L, "fractions", gf, 6);
		push_nums(L, "ms", ms, 6);
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
	(void)gf;
	(void)ms;
#endif
}

static void m_launch(lua_State *L, const char *fn, int reps, bool want_gpu, double work)
{
	(void)work;  /* their GPU sizes are options */
	int count = (int)opt_range(L, fn, "count", 1000, 2, 100000);
	int ccount = (int)opt_range(L, fn, "cpu_count", 200, 2, 100000);
	int elems = (int)opt_range(L, fn, "elems", 4096, 1, 1 << 20);
	double many = 0, one = 0;

	gwb_progress_begin(fn, 1);
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, elems);
	lua_setfield(L, -2, "elems");
	lua_createtable(L, 0, 3);
	check(L, gwb_teach_cpu_launch(ccount, elems, reps, &many, &one));
	set_num(L, "many_ms", many);
	set_num(L, "one_ms", one);
	lua_pushinteger(L, ccount);
	lua_setfield(L, -2, "count");
	lua_setfield(L, -2, "cpu");
	gwb_progress_end();
	struct gpu_side g = gpu_side(L, want_gpu, (double)count * elems * 4, fn);
#ifdef GWB_HAVE_CUDA
	if (g.on) {
		int gc = (int)(count / g.divide);
		gwb_progress_begin(fn, 1);
		lua_createtable(L, 0, 3);
		check(L, gwb_teach_gpu_launch(gc < 2 ? 2 : gc, elems, reps, &many, &one));
		set_num(L, "many_ms", many);
		set_num(L, "one_ms", one);
		lua_pushinteger(L, gc < 2 ? 2 : gc);
		lua_setfield(L, -2, "count");
		lua_setfield(L, -2, "gpu");
		gwb_progress_end();
	}
#else
	(void)g;
#endif
}

/* teach.measure(lesson [, opts]) -> table */
static int l_measure(lua_State *L)
{
	static const struct {
		const char *name, *fn;
		void (*run)(lua_State *, const char *, int, bool, double);
		const char *const known[10];
	} lessons[] = {
		{"memory", "teach.memory", m_memory,
		 {"reps", "gpu", "work", "max_bytes", "touched", "gpu_max_bytes", NULL}},
		{"coalescing", "teach.coalescing", m_coalescing,
		 {"reps", "gpu", "work", "bytes", "gpu_bytes", "rows", "gpu_rows", "features", NULL}},
		{"banks", "teach.banks", m_banks, {"reps", "gpu", "work", "rows", NULL}},
		{"atomics", "teach.atomics", m_atomics, {"reps", "gpu", "work", "rows", "gpu_rows", "threads", NULL}},
		{"histogram", "teach.histogram", m_histogram,
		 {"reps", "gpu", "work", "rows", "gpu_rows", "features", "gpu_features", "threads", NULL}},
		{"divergence", "teach.divergence", m_divergence, {"reps", "gpu", "work", "elems", NULL}},
		{"launch", "teach.launch", m_launch, {"reps", "gpu", "work", "count", "cpu_count", "elems", NULL}},
	};
	const char *name = luaL_checkstring(L, 1);

	for (size_t i = 0; i < sizeof lessons / sizeof lessons[0]; i++) {
		if (strcmp(name, lessons[i].name) != 0)
			continue;
		const char *fn = lessons[i].fn;
		if (!lua_isnoneornil(L, 2))
			luaL_checktype(L, 2, LUA_TTABLE);
		gwb_opt_check_keys(L, 2, fn, lessons[i].known);
		int reps = (int)opt_range(L, fn, "reps", 3, 1, 32);
		bool want_gpu = gwb_opt_bool(L, 2, fn, "gpu", true);
		double work = gwb_opt_num(L, 2, fn, "work", 1.0);
		if (!(work > 0 && work <= 1))
			return luaL_error(L, "%s: work must be in (0, 1] (got %f)", fn, work);
		lessons[i].run(L, fn, reps, want_gpu, work);
		return 1;
	}
	return luaL_error(L, "teach.measure: no lesson '%s' (memory, coalescing, banks, atomics, "
			  "histogram, divergence, launch)", name);
}

static const gwb_reg funcs[] = {
	{"measure_transpose", l_measure_transpose,
	 "teach.measure_transpose(rows, cols [, {reps = 5, gpu = true}]) -> table\n"
	 "The numbers behind teach.transpose(): a rows x cols float32 table transposed on the CPU\n"
	 "(naive double loop, 32x32 cache blocks on one thread, blocks over every core) and, with\n"
	 "a GPU, by the naive, tiled and padded kernels; each with median ms, GB/s (bytes read +\n"
	 "written / time) and whether the result matched. gpu.copy_gbps is a device-to-device\n"
	 "copy of the same size: the ceiling for a transpose. Without a GPU: gpu_reason.\n"
	 "Example: m = teach.measure_transpose(2048, 2048); print(m.cpu.blocked.gbps)"},
	{"measure", l_measure,
	 "teach.measure(lesson [, opts]) -> table\n"
	 "The numbers behind the lessons teach.memory, coalescing, banks, atomics, histogram,\n"
	 "divergence and launch (each lesson's help lists its options): the CPU measurement\n"
	 "always (field cpu), the GPU one when there is a GPU (field gpu; otherwise gpu_reason).\n"
	 "Times are medians of `reps` runs after a warm-up; work (0..1] scales the GPU kernels'\n"
	 "on-chip loops and bytes read (memory, banks, divergence). GPU sizes too large for the free\n"
	 "device memory are divided down and `scaled` says so. Options out of range raise an\n"
	 "error naming the option and its range.\n"
	 "Example: m = teach.measure(\"banks\", {reps = 3}); print(m.cpu.ns[1])"},
	{NULL, NULL, NULL},
};

int gwb_open_teach(lua_State *L)
{
	gwb_lua_newlib(L, "teach", funcs);
	lua_pop(L, 1);
	return 0;
}
