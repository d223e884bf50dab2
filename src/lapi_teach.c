/* lapi_teach.c - the measurements behind the `teach` lessons (lua/gwb/teach.lua writes the
 * lessons): the transpose three ways on the GPU (kernels/transpose.h) beside the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "intr.h"
#include "lapi.h"
#include "transpose.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/transpose.h"
#endif

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

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
	static const char *const known[] = {"reps", "gpu", NULL};
	lua_Integer rows = luaL_checkinteger(L, 1), cols = luaL_checkinteger(L, 2);
	int reps = (int)gwb_opt_int(L, 3, "teach.transpose", "reps", 5);
	bool want_gpu = gwb_opt_bool(L, 3, "teach.transpose", "gpu", true);
	size_t n, i, bytes;
	struct buffers *b;
	double t[16];
	int r, variant;
	static const char *cpu_names[3] = {"naive", "blocked", "threads"};

	gwb_opt_check_keys(L, 3, "teach.transpose", known);
	if (rows < 1 || cols < 1 || rows > (1 << 16) || cols > (1 << 16))
		return luaL_error(L, "teach.transpose: rows and cols must be 1..65536 (got %d x %d)",
				  (int)rows, (int)cols);
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
		qsort(t, (size_t)reps, sizeof(double), cmp_d);
		lua_createtable(L, 0, 4);
		set_num(L, "ms", t[reps / 2] * 1e3);
		set_num(L, "gbps", 2.0 * bytes / (t[reps / 2] * 1e9));
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

static const gwb_reg funcs[] = {
	{"measure_transpose", l_measure_transpose,
	 "teach.measure_transpose(rows, cols [, {reps = 5, gpu = true}]) -> table\n"
	 "The numbers behind teach.transpose(): a rows x cols float32 table transposed on the CPU\n"
	 "(naive double loop, 32x32 cache blocks on one thread, blocks over every core) and, with\n"
	 "a GPU, by the naive, tiled and padded kernels; each with median ms, GB/s (bytes read +\n"
	 "written / time) and whether the result matched. gpu.copy_gbps is a device-to-device\n"
	 "copy of the same size: the ceiling for a transpose. Without a GPU: gpu_reason.\n"
	 "Example: m = teach.measure_transpose(2048, 2048); print(m.cpu.blocked.gbps)"},
	{NULL, NULL, NULL},
};

int gwb_open_teach(lua_State *L)
{
	gwb_lua_newlib(L, "teach", funcs);
	lua_pop(L, 1);
	return 0;
}
