/* lapi_transpose.c - d:transpose: the first step of the pipeline timed, the features laid out
 * row-major (as a CSV holds them) transposed into the Dataset's column-major layout on the CPU
 * (transpose.c) or by the GPU kernels (kernels/transpose.cu), checked bit for bit against the
 * Dataset, returned as a table and run-logged (data.transpose). It uses the Dataset userdata
 * (lapi_data.h) and the option readers (lapi.h); its buffers are its own and freed before it
 * returns. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "dataset.h"
#include "intr.h"
#include "lapi.h"
#include "lapi_data.h"
#include "switches.h"
#include "transpose.h"
#ifdef GWB_HAVE_CUDA
#include "../kernels/transpose.h"
#endif

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct tres {
	const char *backend, *kernel;
	int tile, pad, reps;
	double kernel_ms, kernel_min_ms, h2d_ms, d2h_ms, gbps, copy_gbps, prep_ms, register_ms;
	bool registered;  /* both copies ran from/to registered host memory (buffer.h) */
	size_t mismatches;
	bool has_copy;
};

/* The work of d:transpose, free of Lua errors so that every buffer is released. */
static gwb_status do_transpose(const gwb_dataset *d, gwb_backend be, int kernel, int tile,
			       int cpu_block, int reps, int threads, struct tres *r)
{
	size_t rows = d->rows, F = (size_t)d->features, n = rows * F, i;
	float *A = NULL, *out = NULL;
	double ts[64], t0;
	gwb_status st = GWB_OK;
	int k;

	if (!(A = malloc(n * sizeof(float) + 1)) || !(out = malloc(n * sizeof(float) + 1))) {
		st = gwb_error(GWB_ENOMEM, "transpose: out of host memory for 2 x %zu bytes",
			       n * sizeof(float));
		goto out;
	}
	/* the row-major input: what a CSV or an array of records holds */
	t0 = gwb_now();
	gwb_transpose_f32(d->X, F, rows, rows, A, F, 32, threads);
	r->prep_ms = (gwb_now() - t0) * 1e3;
	if (be == GWB_BACKEND_CPU) {
		r->backend = "cpu";
		r->kernel = kernel == 0 ? "naive" : "blocked";
		for (k = 0; k < reps; k++) {
			if (gwb_intr_pending()) {
				st = gwb_error(GWB_EINTR, "transpose: interrupted");
				goto out;
			}
			memset(out, 0xff, n * sizeof(float));   /* a stale result cannot pass */
			t0 = gwb_now();
			if (kernel == 0)
				gwb_transpose_f32_naive(A, rows, F, out);
			else
				gwb_transpose_f32(A, rows, F, F, out, rows, cpu_block, threads);
			ts[k] = (gwb_now() - t0) * 1e3;
		}
		qsort(ts, (size_t)reps, sizeof(double), cmp_dbl);
		r->kernel_ms = reps % 2 ? ts[reps / 2] : 0.5 * (ts[reps / 2 - 1] + ts[reps / 2]);
		r->kernel_min_ms = ts[0];
		r->gbps = r->kernel_ms > 0 ? 2.0 * (double)n * 4 / (r->kernel_ms * 1e6) : 0;
	} else {
#ifdef GWB_HAVE_CUDA
		gwb_transpose_timing t;
		memset(out, 0xff, n * sizeof(float));
		/* large tables: both arrays page-locked for the copies (untracked at out:) */
		gwb_host_track(A, n * sizeof(float));
		gwb_host_track(out, n * sizeof(float));
		st = gwb_gpu_transpose_host(A, out, rows, F, (gwb_transpose_kernel)kernel, tile, reps,
					    &t);
		if (st)
			goto out;
		r->backend = "gpu";
		r->kernel = gwb_transpose_kernel_name((gwb_transpose_kernel)kernel);
		r->kernel_ms = t.kernel_ms;
		r->kernel_min_ms = t.kernel_min_ms;
		r->h2d_ms = t.h2d_ms;
		r->d2h_ms = t.d2h_ms;
		r->register_ms = t.register_ms;
		r->registered = t.h2d_registered && t.d2h_registered;
		r->gbps = t.gbps;
		r->copy_gbps = t.copy_gbps;
		r->has_copy = true;
#else
		(void)tile;
		st = gwb_error(GWB_ENODEV, "transpose: this gwb was built without CUDA");
		goto out;
#endif
	}
	/* verify against the Dataset's own column-major table, bit for bit (NaNs included) */
	if (memcmp(out, d->X, n * sizeof(float)))
		for (i = 0; i < n; i++)
			r->mismatches += memcmp(out + i, d->X + i, sizeof(float)) != 0;
out:
	gwb_host_untrack(A);  /* unregistered before they are freed (buffer.h) */
	gwb_host_untrack(out);
	free(A);
	free(out);
	return st;
}

int gwb_lua_ds_transpose(lua_State *L)
{
	static const char *const keys[] = {"backend", "tile", "pad", "kernel", "reps", "threads",
					   "tag", NULL};
	const char *fn = "transpose", *kname;
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	gwb_backend want, be;
	struct tres r;
	char why[160];
	int tile = 32, pad, kernel, reps, threads, tile_given;
	double bytes = 2.0 * (double)d->rows * d->features * sizeof(float);

	lua_settop(L, 2);
	gwb_opt_check_keys(L, 2, fn, keys);
	memset(&r, 0, sizeof(r));
	want = gwb_opt_backend(L, 2, fn);
	tile_given = !lua_isnil(L, 2) && lua_getfield(L, 2, "tile") != LUA_TNIL;
	if (!lua_isnil(L, 2))
		lua_pop(L, 1);
	if (!lua_isnil(L, 2) && lua_getfield(L, 2, "tile") == LUA_TBOOLEAN) {
		tile = lua_toboolean(L, -1) ? 32 : 0;
		lua_pop(L, 1);
	} else {
		if (!lua_isnil(L, 2))
			lua_pop(L, 1);
		tile = gwb_opt_i32(L, 2, fn, "tile", 32);
	}
	pad = gwb_opt_bool(L, 2, fn, "pad", true);
	kernel = tile == 0 ? 0 : pad ? 2 : 1;
	kname = gwb_opt_str(L, 2, fn, "kernel", NULL);
	if (kname) {
		if (!strcmp(kname, "naive"))
			kernel = 0;
		else if (!strcmp(kname, "tiled"))
			kernel = 1;
		else if (!strcmp(kname, "padded"))
			kernel = 2;
		else if (!strcmp(kname, "blocked"))
			kernel = 2;
		else
			return luaL_error(L, "%s: kernel must be \"naive\", \"tiled\" or \"padded\" (got "
					  "\"%s\")", fn, kname);
		if (kernel && tile == 0)
			tile = 32;
	}
	if (kernel && tile != 16 && tile != 32 && tile != 64)
		return luaL_error(L, "%s: tile must be 16, 32 or 64, or 0/false for the naive kernel "
				  "(got %d)", fn, tile);
	reps = gwb_opt_i32(L, 2, fn, "reps", 5);
	if (reps < 1 || reps > 64)
		return luaL_error(L, "%s: reps must be in 1..64 (got %d)", fn, reps);
	threads = gwb_opt_threads(L, 2, fn);
	if (threads < 0)
		return luaL_error(L, "%s: threads must be >= 0 (got %d)", fn, threads);
	gwb_lua_check(L, gwb_backend_choose(want, bytes, 1, &be, why, sizeof(why)));
	/* the optimisation switches (switches.h): off selects the plainer kernel */
	if (kernel && !gwb_switch_on(GWB_SW_TRANSPOSE_TILE))
		kernel = 0;
	if (kernel == 2 && be == GWB_BACKEND_GPU && !gwb_switch_on(GWB_SW_TRANSPOSE_PAD))
		kernel = 1;
	gwb_lua_check(L, do_transpose(d, be, kernel, tile, tile_given ? tile : 0, reps, threads,
				      &r));
	lua_createtable(L, 0, 20);
	lua_pushstring(L, r.backend);
	lua_setfield(L, -2, "backend");
	lua_pushstring(L, r.kernel);
	lua_setfield(L, -2, "kernel");
	if (kernel && r.has_copy) {
		gwb_lua_setint(L, "tile", tile);
		lua_pushboolean(L, kernel == 2);
		lua_setfield(L, -2, "pad");
	} else if (kernel) {
		gwb_lua_setint(L, "block", tile_given ? tile : 64);
	}
	gwb_lua_setint(L, "rows", (lua_Integer)d->rows);
	gwb_lua_setint(L, "cols", d->features);
	gwb_lua_setint(L, "bytes", (lua_Integer)d->rows * d->features * (lua_Integer)sizeof(float));
	gwb_lua_setint(L, "reps", reps);
	gwb_lua_setnum(L, "kernel_ms", r.kernel_ms);
	gwb_lua_setnum(L, "kernel_min_ms", r.kernel_min_ms);
	gwb_lua_setnum(L, "gbps", r.gbps);
	if (r.has_copy) {
		gwb_lua_setnum(L, "h2d_ms", r.h2d_ms);
		gwb_lua_setnum(L, "d2h_ms", r.d2h_ms);
		gwb_lua_setnum(L, "transfer_ms", r.h2d_ms + r.d2h_ms);
		{  /* the copies' rates (bytes / each copy's own time), beside gpu.bandwidth()'s
		    * pinned figures; the page-locking that made them pinned is timed apart */
			double b = (double)d->rows * d->features * sizeof(float);
			gwb_lua_setnum(L, "h2d_gbps", r.h2d_ms > 0 ? b / (r.h2d_ms * 1e6) : 0);
			gwb_lua_setnum(L, "d2h_gbps", r.d2h_ms > 0 ? b / (r.d2h_ms * 1e6) : 0);
		}
		gwb_lua_setnum(L, "register_ms", r.register_ms);
		lua_pushstring(L, r.registered ? "registered" : "staged");
		lua_setfield(L, -2, "copy_path");
		gwb_lua_setnum(L, "copy_gbps", r.copy_gbps);
		gwb_lua_setnum(L, "copy_fraction", r.copy_gbps > 0 ? r.gbps / r.copy_gbps : 0);
	} else {
		gwb_lua_setnum(L, "transfer_ms", 0);
	}
	lua_pushboolean(L, r.mismatches == 0);
	lua_setfield(L, -2, "verified");
	gwb_lua_setint(L, "mismatches", (lua_Integer)r.mismatches);
	lua_pushstring(L, why);
	lua_setfield(L, -2, "why");
	/* the run log */
	lua_createtable(L, 0, 5);
	lua_pushstring(L, "data.transpose");
	lua_setfield(L, -2, "kind");
	gwb_opt_tag(L, 2, "transpose");
	lua_setfield(L, -2, "tag");
	lua_pushstring(L, r.backend);
	lua_setfield(L, -2, "backend");
	lua_createtable(L, 0, 5);
	gwb_lua_setint(L, "rows", (lua_Integer)d->rows);
	gwb_lua_setint(L, "cols", d->features);
	lua_pushstring(L, r.kernel);
	lua_setfield(L, -2, "kernel");
	gwb_lua_setint(L, "tile", tile);
	gwb_lua_setint(L, "reps", reps);
	lua_setfield(L, -2, "params");
	lua_createtable(L, 0, 3);
	gwb_lua_setnum(L, "kernel_ms", r.kernel_ms);
	gwb_lua_setnum(L, "transfer_ms", r.h2d_ms + r.d2h_ms);
	lua_setfield(L, -2, "timing");
	lua_createtable(L, 0, 3);
	gwb_lua_setnum(L, "gbps", r.gbps);
	if (r.has_copy)
		gwb_lua_setnum(L, "copy_gbps", r.copy_gbps);
	lua_pushboolean(L, r.mismatches == 0);
	lua_setfield(L, -2, "verified");
	lua_setfield(L, -2, "metrics");
	gwb_lua_log_run(L, -1);
	lua_pop(L, 1);
	return 1;
}
