/* lapi_gpu.c - the `gpu` Lua module: availability, device properties, memory, kernel records,
 * occupancy (with the limiting resource), bandwidth, and per-call kernel profiles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "gpu.h"
#include "intr.h"
#include "lapi.h"
#include "prof.h"
#include "kernel_res.h"

static int l_available(lua_State *L)
{
	bool ok = gwb_gpu_available();

	lua_pushboolean(L, ok);
	if (ok)
		return 1;
	lua_pushstring(L, gwb_gpu_unavailable_reason());
	return 2;
}


static int l_info(lua_State *L)
{
	gwb_gpu_info g;
	int drv, rt;

	lua_newtable(L);
	if (gwb_gpu_get_info(&g)) {
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "available");
		SETS("reason", gwb_gpu_unavailable_reason());
		gwb_gpu_versions(&drv, &rt);
		if (rt)
			SETI("runtime_version", rt);
		return 1;
	}
	lua_pushboolean(L, 1);
	lua_setfield(L, -2, "available");
	SETS("name", g.name);
	SETI("device", g.device);
	SETI("count", g.count);
	lua_pushfstring(L, "%d.%d", g.cc_major, g.cc_minor);
	lua_setfield(L, -2, "compute_capability");
	SETI("sms", g.sms);
	SETI("memory_bytes", g.mem_total);
	SETI("l2_bytes", g.l2_bytes);
	SETI("smem_per_block", g.smem_per_block);
	SETI("smem_per_block_optin", g.smem_per_block_optin);
	SETI("smem_per_sm", g.smem_per_sm);
	SETI("regs_per_sm", g.regs_per_sm);
	SETI("max_threads_per_sm", g.max_threads_per_sm);
	SETI("max_threads_per_block", g.max_threads_per_block);
	SETI("warp_size", g.warp_size);
	SETI("clock_mhz", g.clock_khz / 1000);
	SETI("mem_clock_mhz", g.mem_clock_khz / 1000);
	SETI("mem_bus_bits", g.mem_bus_bits);
	lua_pushfstring(L, "%d.%d", g.driver_version / 1000, (g.driver_version % 1000) / 10);
	lua_setfield(L, -2, "driver");
	lua_pushfstring(L, "%d.%d", g.runtime_version / 1000, (g.runtime_version % 1000) / 10);
	lua_setfield(L, -2, "runtime");
	return 1;
}

static void ledger_cb(const char *purpose, size_t bytes, int count, void *ctx)
{
	lua_State *L = ctx;

	lua_createtable(L, 0, 2);
	SETI("bytes", bytes);
	SETI("count", count);
	lua_setfield(L, -2, purpose);
}

static int l_mem(lua_State *L)
{
	size_t fr, tot;
	int n;

	gwb_lua_check(L, gwb_gpu_mem(&fr, &tot));
	lua_newtable(L);
	SETI("free", fr);
	SETI("total", tot);
	SETI("used", tot - fr);
	SETI("ours", gwb_gpu_ledger_total(&n));
	SETI("allocations", n);
	lua_newtable(L);
	gwb_gpu_ledger_each(ledger_cb, L);
	lua_setfield(L, -2, "by_purpose");
	{
		gwb_gpu_pool_info pi;
		gwb_gpu_pool_stats(&pi);
		SETI("pool", pi.cached_bytes);
		SETI("pool_blocks", pi.cached_blocks);
		SETI("reserved", pi.reserved_bytes);
		SETI("pool_hits", pi.hits);
		SETI("pool_misses", pi.misses);
		SETI("staging", gwb_gpu_staging_bytes());
		SETI("registered", gwb_host_pinned_bytes());  /* page-locked host memory (buffer.h) */
	}
	return 1;
}

static int l_trim(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)gwb_gpu_trim());
	return 1;
}

static void kernel_cb(const gwb_kernel_stat *k, void *ctx)
{
	lua_State *L = ctx;

	lua_createtable(L, 0, 12);
	SETS("name", k->name);
	SETI("launches", k->launches);
	lua_pushnumber(L, k->total_ms);
	lua_setfield(L, -2, "total_ms");
	lua_pushnumber(L, k->launches ? k->total_ms / k->launches : 0);
	lua_setfield(L, -2, "mean_ms");
	lua_pushnumber(L, k->total_ms > 0 ? k->bytes / (k->total_ms * 1e6) : 0);
	lua_setfield(L, -2, "gbps");
	lua_pushfstring(L, "%dx%dx%d", k->block[0], k->block[1], k->block[2]);
	lua_setfield(L, -2, "block");
	lua_pushfstring(L, "%dx%dx%d", k->grid[0], k->grid[1], k->grid[2]);
	lua_setfield(L, -2, "grid");
	SETI("regs", k->regs);
	SETI("smem", k->dyn_smem + k->static_smem);
	lua_pushnumber(L, k->occupancy);
	lua_setfield(L, -2, "occupancy");
	/* declared (what the launch sites say they move) beside measured (CUPTI, gpu.profile) */
	lua_pushnumber(L, k->bytes);
	lua_setfield(L, -2, "declared_bytes");
	if (k->measured_launches > 0) {
		double per = k->measured_bytes / (double)k->measured_launches;
		double decl = k->launches ? k->bytes / (double)k->launches : 0;
		double gbps = k->measured_ns > 0 ? k->measured_bytes / k->measured_ns : 0;
		SETI("measured_launches", k->measured_launches);
		lua_pushnumber(L, per);
		lua_setfield(L, -2, "measured_bytes");   /* per launch */
		lua_pushnumber(L, decl);
		lua_setfield(L, -2, "declared_bytes_per_launch");
		lua_pushnumber(L, gbps);
		lua_setfield(L, -2, "measured_gbps");
		if (decl > 0) {
			lua_pushnumber(L, per / decl);
			lua_setfield(L, -2, "measured_over_declared");
		}
		if (k->dram_peak_bps > 0) {
			lua_pushnumber(L, gbps * 1e9 / k->dram_peak_bps);
			lua_setfield(L, -2, "measured_peak_fraction");
		}
	}
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

static int l_kernels(lua_State *L)
{
	lua_newtable(L);
	gwb_prof_each_kernel(kernel_cb, L);
	return 1;
}

static int l_reset(lua_State *L)
{
	(void)L;
	gwb_prof_reset();
	return 0;
}


/* --- occupancy ------------------------------------------------------------------------------ */

/* What limits resident blocks per SM: the figures of one device. */
struct occ_dev {
	char name[256];
	int regs_per_sm, max_threads_per_sm, max_blocks_per_sm, warp_size, max_threads_per_block;
	int reg_unit;            /* registers are allocated per warp in units of this many */
	int max_regs_per_thread;
	size_t smem_per_sm, smem_per_block_max, smem_reserved;
	bool reference;          /* no GPU: figures of a reference sm_90 part */
};

static void occ_reference(struct occ_dev *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "reference sm_90 (H100/H200 limits; no GPU here)");
	d->regs_per_sm = 65536;
	d->max_threads_per_sm = 2048;
	d->max_blocks_per_sm = 32;
	d->warp_size = 32;
	d->max_threads_per_block = 1024;
	d->reg_unit = 256;
	d->max_regs_per_thread = 255;
	d->smem_per_sm = 233472;
	d->smem_per_block_max = 232448;
	d->smem_reserved = 1024;
	d->reference = true;
}

static void occ_device(struct occ_dev *d)
{
	gwb_gpu_info g;

	if (gwb_gpu_get_info(&g) != GWB_OK) {
		occ_reference(d);
		return;
	}
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", g.name);
	d->regs_per_sm = g.regs_per_sm;
	d->max_threads_per_sm = g.max_threads_per_sm;
	d->warp_size = g.warp_size > 0 ? g.warp_size : 32;
	d->max_threads_per_block = g.max_threads_per_block;
	d->reg_unit = 256;
	d->max_regs_per_thread = 255;
	d->smem_per_sm = g.smem_per_sm;
	d->smem_per_block_max = g.smem_per_block_optin;
	d->max_blocks_per_sm = 32;
	d->smem_reserved = 1024;
#ifdef GWB_HAVE_CUDA
	{
		int v;
		if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxBlocksPerMultiprocessor, g.device) ==
		    cudaSuccess)
			d->max_blocks_per_sm = v;
		if (cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock, g.device) ==
		    cudaSuccess)
			d->smem_reserved = (size_t)v;
		cudaGetLastError();
	}
#endif
}

struct occ_result {
	int warps_per_block, max_warps;
	int lim_warps, lim_regs, lim_smem, lim_blocks;
	int active_blocks;
	const char *limited_by;
	double occupancy;
};

/* The occupancy calculator: resident blocks per SM for a kernel using regs registers per
 * thread and smem bytes of shared memory per block (static + dynamic), at threads per block. */
static void occ_compute(const struct occ_dev *d, int threads, int regs, size_t smem,
			struct occ_result *r)
{
	int ws = d->warp_size;

	memset(r, 0, sizeof(*r));
	r->warps_per_block = (threads + ws - 1) / ws;
	r->max_warps = d->max_threads_per_sm / ws;
	r->lim_warps = r->max_warps / r->warps_per_block;
	r->lim_blocks = d->max_blocks_per_sm;
	if (regs > 0) {
		int per_warp = (regs * ws + d->reg_unit - 1) / d->reg_unit * d->reg_unit;
		r->lim_regs = d->regs_per_sm / per_warp / r->warps_per_block;
	} else {
		r->lim_regs = r->lim_blocks;
	}
	r->lim_smem = (int)(d->smem_per_sm / (smem + d->smem_reserved));
	/* the first of the tied limits is reported: warps, registers, shared memory, blocks */
	r->active_blocks = r->lim_warps;
	r->limited_by = "warps";
	if (r->lim_regs < r->active_blocks) {
		r->active_blocks = r->lim_regs;
		r->limited_by = "registers";
	}
	if (r->lim_smem < r->active_blocks) {
		r->active_blocks = r->lim_smem;
		r->limited_by = "shared memory";
	}
	if (r->lim_blocks < r->active_blocks) {
		r->active_blocks = r->lim_blocks;
		r->limited_by = "blocks";
	}
	r->occupancy = (double)r->active_blocks * r->warps_per_block / r->max_warps;
}

struct find_kernel { const char *name; size_t dyn_smem; bool found; };

static void find_kernel_cb(const gwb_kernel_stat *k, void *ctx)
{
	struct find_kernel *f = ctx;

	if (!f->found && !strcmp(k->name, f->name)) {
		f->found = true;
		f->dyn_smem = k->dyn_smem;
	}
}

static void push_name(const char *name, void *ctx)
{
	lua_State *L = ctx;

	lua_pushstring(L, name);
	lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

/* gwb's kernels by their launch names, and what each does: so gpu.occupancy("rf_hist", 256)
 * can say what it asked about when there is no GPU to ask (the registry itself is filled by
 * the plugin as it loads, kernels/rf_train.cu and kernels/transpose.cu). */
static const char *const kernel_about[][2] = {
	{"rf_hist", "the GPU trainer's histogram kernel (rows of a node into per-feature bins, "
		    "with the split search)"},
	{"rf_derive", "the GPU trainer's sibling subtraction (parent - smaller child)"},
	{"rf_stats", "the GPU trainer's per-node statistics"},
	{"rf_decide", "the GPU trainer's split decision"},
	{"rf_pcount", "the GPU trainer's partition count"},
	{"rf_pscatter", "the GPU trainer's partition scatter"},
	{"rf_quantize", "the GPU quantizer (features to bin codes)"},
	{"rf_predict", "GPU prediction (a warp walks one tree for 32 rows)"},
	{"transpose_naive", "teach.transpose's naive kernel (one thread per element)"},
	{"transpose_tiled", "teach.transpose's 32 x 32 shared-memory tile"},
	{"transpose_padded", "teach.transpose's padded 32 x 33 tile"},
	{NULL, NULL},
};

static int l_occupancy(lua_State *L)
{
	static const char *const known[] = {"smem", NULL};
	struct occ_dev d;
	struct occ_result r;
	const char *name = "kernel";
	int regs = 0, threads, runtime_blocks = -1;
	size_t static_smem = 0, dyn = 0;
	bool have_dyn = false;
	const gwb_kernel_res *kr = NULL;  /* no GPU: the build's table answers for the kernel */

	if (lua_isnoneornil(L, 1)) {
		/* the kernels gwb knows about: those registered, else (no GPU) the build's table */
		lua_newtable(L);
		gwb_prof_each_registered(push_name, L);
		if (lua_rawlen(L, -1) == 0 && !gwb_gpu_available()) {
			const gwb_kernel_res *k;
			int i;
			for (i = 0; (k = gwb_kernel_res_at(i)); i++)
				push_name(k->name, L);
		}
		return 1;
	}
	{
		lua_Integer t = luaL_checkinteger(L, 2);
		if (t < 1 || t > 1 << 20)
			return luaL_error(L, "gpu.occupancy: threads per block must be in 1..%d "
					  "(got %I)", 1 << 20, t);
		threads = (int)t;
	}
	gwb_opt_check_keys(L, 3, "gpu.occupancy", known);
	if (!lua_isnoneornil(L, 3)) {
		lua_getfield(L, 3, "smem");
		if (!lua_isnil(L, -1)) {
			dyn = (size_t)gwb_opt_int_in(L, 3, "gpu.occupancy", "smem", 0, 0,
						     GWB_OPT_INT_MAX);
			have_dyn = true;
		}
		lua_pop(L, 1);
	}
	if (lua_type(L, 1) == LUA_TTABLE) {
		/* a hypothetical kernel: {regs = 40, smem = 4096, name = "mine"} */
		regs = gwb_opt_i32(L, 1, "gpu.occupancy", "regs", 32);
		static_smem = (size_t)gwb_opt_int_in(L, 1, "gpu.occupancy", "smem", 0, 0,
						     GWB_OPT_INT_MAX);
		name = gwb_opt_str(L, 1, "gpu.occupancy", "name", "kernel");
		if (gwb_gpu_available())
			occ_device(&d);
		else
			occ_reference(&d);
	} else {
		const void *fn;
		name = luaL_checkstring(L, 1);
		fn = gwb_prof_kernel_fn(name);
		if (!fn && gwb_gpu_available())
			fn = gwb_prof_kernel_fn(name);  /* the plugin registered its kernels as it loaded */
		if (!fn && !gwb_gpu_available())
			kr = gwb_kernel_res_find(name);
		if (!fn && !kr && !gwb_gpu_available()) {
			const char *about = NULL;
			int i;
			for (i = 0; kernel_about[i][0]; i++)
				if (!strcmp(kernel_about[i][0], name))
					about = kernel_about[i][1];
			if (about)  /* one of ours, not in the build's table: what to ask instead */
				return luaL_error(L, "gpu.occupancy: no GPU (%s). '%s' is %s; a "
					  "kernel's registers and shared memory come from its compiled "
					  "code, which only a GPU reports. Ask about a kernel of a given "
					  "shape instead, with reference sm_90 limits: gpu.occupancy({regs "
					  "= 32, smem = 0}, %d); teach.occupancy() explains the limits",
					  gwb_gpu_unavailable_reason(), name, about, threads);
		}
		if (!fn && !kr) {
			luaL_Buffer b;
			lua_newtable(L);
			gwb_prof_each_registered(push_name, L);
			luaL_buffinit(L, &b);
			for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -2); i++) {
				lua_rawgeti(L, -2, i);
				if (i > 1)
					luaL_addstring(&b, ", ");
				luaL_addvalue(&b);
			}
			luaL_pushresult(&b);
			return luaL_error(L, "gpu.occupancy: no kernel named '%s' has been launched in this "
					  "session (known: %s). Run the operation once, or describe the "
					  "kernel: gpu.occupancy({regs = 32, smem = 0}, %d)", name,
					  lua_rawlen(L, -1) ? lua_tostring(L, -1) : "none yet", threads);
		}
		if (kr) {
			/* what the sm_90 build compiled it to; the launch's dynamic shared memory
			 * is opts.smem (0 unless given) */
			occ_reference(&d);
			regs = kr->regs;
			static_smem = (size_t)kr->smem;
		} else {
			occ_device(&d);
		}
		if (!kr) {
			struct find_kernel f = {name, 0, false};
			gwb_prof_each_kernel(find_kernel_cb, &f);
			if (!have_dyn && f.found)
				dyn = f.dyn_smem;  /* the dynamic shared memory of its last launch */
		}
#ifdef GWB_HAVE_CUDA
		{
			struct cudaFuncAttributes a;
			int nb = 0;
			if (cudaFuncGetAttributes(&a, fn) == cudaSuccess) {
				regs = a.numRegs;
				static_smem = a.sharedSizeBytes;
				if (threads > a.maxThreadsPerBlock) {
					cudaGetLastError();
					return luaL_error(L, "gpu.occupancy: %s can run at most %d threads per "
							  "block (its registers allow no more), not %d", name,
							  a.maxThreadsPerBlock, threads);
				}
			}
			if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, threads, dyn) ==
			    cudaSuccess)
				runtime_blocks = nb;
			cudaGetLastError();
		}
#endif
	}
	if (threads < 1 || threads > d.max_threads_per_block)
		return luaL_error(L, "gpu.occupancy: block must be 1..%d threads, got %d",
				  d.max_threads_per_block, threads);
	if (regs < 0 || regs > d.max_regs_per_thread)
		return luaL_error(L, "gpu.occupancy: regs must be 0..%d, got %d", d.max_regs_per_thread,
				  regs);
	if (static_smem + dyn > d.smem_per_block_max)
		return luaL_error(L, "gpu.occupancy: %I bytes of shared memory per block is more than "
				  "the %I the device allows", (lua_Integer)(static_smem + dyn),
				  (lua_Integer)d.smem_per_block_max);
	occ_compute(&d, threads, regs, static_smem + dyn, &r);
	if (r.active_blocks == 0 && runtime_blocks <= 0)
		return luaL_error(L, "gpu.occupancy: %s cannot run %d threads per block: its %s do not "
				  "fit one block on an SM (%d registers/thread x %d threads, %I bytes of "
				  "shared memory)", name, threads,
				  r.lim_regs == 0 ? "registers" : r.lim_smem == 0 ? "shared memory" :
				  "resources", regs, threads, (lua_Integer)(static_smem + dyn));

	lua_createtable(L, 0, 16);
	SETS("kernel", name);
	SETI("block", threads);
	SETI("regs", regs);
	SETI("smem", static_smem + dyn);
	SETI("active_blocks", runtime_blocks >= 0 ? runtime_blocks : r.active_blocks);
	SETI("active_warps", (runtime_blocks >= 0 ? runtime_blocks : r.active_blocks) *
				     r.warps_per_block);
	SETI("max_warps", r.max_warps);
	lua_pushnumber(L, runtime_blocks >= 0 ? (double)runtime_blocks * r.warps_per_block / r.max_warps
					      : r.occupancy);
	lua_setfield(L, -2, "occupancy");
	SETS("limited_by", r.limited_by);
	lua_createtable(L, 0, 4);
	SETI("warps", r.lim_warps);
	SETI("registers", r.lim_regs);
	SETI("shared_memory", r.lim_smem);
	SETI("blocks", r.lim_blocks);
	lua_setfield(L, -2, "limits");
	SETI("calculated_blocks", r.active_blocks);
	if (runtime_blocks >= 0)
		SETI("runtime_blocks", runtime_blocks);
	SETS("device", d.name);
	lua_pushboolean(L, d.reference);
	lua_setfield(L, -2, "reference");
	if (runtime_blocks >= 0 && runtime_blocks != r.active_blocks)
		SETS("note", "the runtime's answer differs from the calculator's (it knows the "
			     "shared-memory carveout and allocation granularity); occupancy uses the "
			     "runtime's");
	if (kr) {
		lua_pushfstring(L, "build table (%s, nvcc %s: src/kernel_res.c)", gwb_kernel_res_arch,
				gwb_kernel_res_nvcc);
		lua_setfield(L, -2, "source");
		lua_pushfstring(L, "no GPU here (%s): registers and static shared memory are what the "
				"%s build of kernels/%s compiled %s to, the limits a reference %s "
				"part's; the dynamic shared memory of a real launch%s and the runtime's "
				"own answer need a GPU", gwb_gpu_unavailable_reason(),
				gwb_kernel_res_arch, kr->file, kr->function, gwb_kernel_res_arch,
				have_dyn ? " (given here as opts.smem)" : " (opts.smem gives it)");
		lua_setfield(L, -2, "note");
	} else {
		SETS("source", runtime_blocks >= 0 ? "the device" : lua_type(L, 1) == LUA_TTABLE ?
			       "the description given" : "the device");
	}
	return 1;
}

/* --- bandwidth ------------------------------------------------------------------------------ */

/* Host memcpy GB/s (bytes copied / time), the median of reps. */
static double host_memcpy_gbps(size_t bytes, int reps)
{
	char *a = malloc(bytes), *b = malloc(bytes);
	double t[16], gbps = 0;
	int i;

	if (a && b) {
		memset(a, 1, bytes);
		memset(b, 2, bytes);
		memcpy(b, a, bytes);
		for (i = 0; i < reps && i < 16; i++) {
			double t0 = gwb_now();
			memcpy(i % 2 ? a : b, i % 2 ? b : a, bytes);
			t[i] = gwb_now() - t0;
		}
		gbps = bytes / (gwb_median(t, i) * 1e9);
	}
	free(a);
	free(b);
	return gbps;
}

#ifdef GWB_HAVE_CUDA
/* Median ms of reps copies, each timed with events. Records each copy as a transfer. */
static gwb_status time_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
			    gwb_xfer_dir dir, bool pinned, int reps, double *ms_out)
{
	cudaEvent_t e0, e1;
	double t[32];
	gwb_status rc;
	int i;

	if ((rc = CUDA_CHECK(cudaEventCreate(&e0))))
		return rc;
	if ((rc = CUDA_CHECK(cudaEventCreate(&e1)))) {
		cudaEventDestroy(e0);
		return rc;
	}
	rc = CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));  /* warm-up */
	for (i = 0; !rc && i < reps && i < 32; i++) {
		float ms = 0;
		if (gwb_intr_pending()) {
			rc = gwb_error(GWB_EINTR, "gpu.bandwidth: interrupted");
			break;
		}
		cudaEventRecord(e0, 0);
		rc = CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
		cudaEventRecord(e1, 0);
		if (!rc)
			rc = CUDA_CHECK(cudaEventSynchronize(e1));
		if (!rc)
			rc = CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
		t[i] = ms;
		if (!rc)
			gwb_prof_transfer(dir, (double)bytes, pinned, ms);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	if (!rc)
		*ms_out = gwb_median(t, i);
	return rc;
}
#endif

static int l_bandwidth(lua_State *L)
{
	static const char *const known[] = {"bytes", "reps", "log", "tag", NULL};
	lua_Integer bytes = gwb_opt_int(L, 1, "gpu.bandwidth", "bytes", 256 << 20);
	int reps = gwb_opt_i32(L, 1, "gpu.bandwidth", "reps", 5);
	bool log = gwb_opt_bool(L, 1, "gpu.bandwidth", "log", true);
	double host;

	gwb_opt_check_keys(L, 1, "gpu.bandwidth", known);
	gwb_opt_tag(L, 1, "gpu.bandwidth");  /* checked before the copies */
	lua_pop(L, 1);
	if (bytes < 4096 || reps < 1 || reps > 32)
		return luaL_error(L, "gpu.bandwidth: bytes must be >= 4096 and reps 1..32 (got %d, %d)",
				  (int)bytes, reps);
	host = host_memcpy_gbps((size_t)(bytes < (64 << 20) ? bytes : (64 << 20)), reps);
	if (!gwb_gpu_available()) {
		lua_createtable(L, 0, 3);
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "available");
		SETS("reason", gwb_gpu_unavailable_reason());
		lua_pushnumber(L, host);
		lua_setfield(L, -2, "host_memcpy_gbps");
		return 1;
	}
#ifndef GWB_HAVE_CUDA
	(void)log;
	return luaL_error(L, "gpu.bandwidth: CPU-only build");
#else
	{
		gwb_gpu_info g;
		size_t fr = 0, tot = 0, n = (size_t)bytes;
		void *d0 = NULL, *d1 = NULL, *pinned = NULL;
		char *pageable = NULL;
		double ms[5] = {0}, peak;
		gwb_status rc;
		int step = 0;
		static const char *keys[5] = {"h2d_pageable_gbps", "h2d_pinned_gbps",
			"d2h_pageable_gbps", "d2h_pinned_gbps", "d2d_gbps"};

		gwb_lua_check(L, gwb_gpu_get_info(&g));
		gwb_lua_check(L, gwb_gpu_mem(&fr, &tot));
		if (2 * n + (64u << 20) > fr)
			n = fr > (64u << 20) ? (fr - (64u << 20)) / 2 : 0;
		n &= ~(size_t)4095;
		if (n < 4096)
			return luaL_error(L, "gpu.bandwidth: not enough free device memory (%I bytes free)",
					  (lua_Integer)fr);
		rc = gwb_gpu_malloc(&d0, n, "gpu.bandwidth");
		if (!rc)
			rc = gwb_gpu_malloc(&d1, n, "gpu.bandwidth");
		if (!rc && !(pageable = malloc(n)))
			rc = gwb_error(GWB_ENOMEM, "gpu.bandwidth: cannot allocate %zu bytes of host memory", n);
		if (!rc)
			rc = CUDA_CHECK(cudaMallocHost(&pinned, n));
		if (!rc) {
			memset(pageable, 1, n);
			memset(pinned, 1, n);
			rc = CUDA_CHECK(cudaMemset(d0, 0, n));
		}
		gwb_progress_begin("bandwidth", 5);
		if (!rc)
			rc = time_copy(d0, pageable, n, cudaMemcpyHostToDevice, GWB_H2D, false, reps, &ms[0]);
		gwb_progress_update(++step, NULL, 0);
		if (!rc)
			rc = time_copy(d0, pinned, n, cudaMemcpyHostToDevice, GWB_H2D, true, reps, &ms[1]);
		gwb_progress_update(++step, NULL, 0);
		if (!rc)
			rc = time_copy(pageable, d0, n, cudaMemcpyDeviceToHost, GWB_D2H, false, reps, &ms[2]);
		gwb_progress_update(++step, NULL, 0);
		if (!rc)
			rc = time_copy(pinned, d0, n, cudaMemcpyDeviceToHost, GWB_D2H, true, reps, &ms[3]);
		gwb_progress_update(++step, NULL, 0);
		if (!rc)
			rc = time_copy(d1, d0, n, cudaMemcpyDeviceToDevice, GWB_D2D, false, reps, &ms[4]);
		gwb_progress_end();
		if (pinned)
			cudaFreeHost(pinned);
		free(pageable);
		gwb_gpu_free(d0);
		gwb_gpu_free(d1);
		gwb_lua_check(L, rc);

		peak = 2.0 * g.mem_clock_khz * 1e3 * (g.mem_bus_bits / 8.0) / 1e9;
		lua_createtable(L, 0, 12);
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "available");
		SETS("device", g.name);
		SETI("bytes", n);
		SETI("reps", reps);
		for (step = 0; step < 5; step++) {
			/* device-to-device moves every byte twice (read + write) */
			double moved = step == 4 ? 2.0 * n : (double)n;
			lua_pushnumber(L, ms[step] > 0 ? moved / (ms[step] * 1e6) : 0);
			lua_setfield(L, -2, keys[step]);
		}
		lua_pushnumber(L, peak);
		lua_setfield(L, -2, "dram_peak_gbps");
		lua_pushnumber(L, peak > 0 && ms[4] > 0 ? 2.0 * n / (ms[4] * 1e6) / peak : 0);
		lua_setfield(L, -2, "d2d_fraction_of_peak");
		lua_pushnumber(L, host);
		lua_setfield(L, -2, "host_memcpy_gbps");
		SETS("note", "GB/s = 1e9 bytes/s, median of reps; d2d counts bytes read + written; "
			     "dram_peak = 2 x memory clock x bus width");
		if (log) {
			int res = lua_gettop(L);
			lua_createtable(L, 0, 4);
			SETS("kind", "gpu.bandwidth");
			gwb_opt_tag(L, 1, "gpu.bandwidth");
			lua_setfield(L, -2, "tag");
			SETS("backend", "gpu");
			lua_createtable(L, 0, 2);
			SETI("bytes", n);
			SETI("reps", reps);
			lua_setfield(L, -2, "params");
			lua_createtable(L, 0, 6);
			for (step = 0; step < 5; step++) {
				lua_getfield(L, res, keys[step]);
				lua_setfield(L, -2, keys[step]);
			}
			lua_setfield(L, -2, "metrics");
			gwb_lua_log_run(L, -1);
			lua_pop(L, 1);
		}
		return 1;
	}
#endif
}

/* --- profile ------------------------------------------------------------------------------- */

/* gpu.profile(fn): run fn and report its kernels: the launch records of the telemetry (how many,
 * event times, theoretical occupancy) and, through the CUPTI range profiler
 * (kernels/profile.cu), the achieved occupancy of every launch, side by side. */

#define PROFILE_NCU_HINT \
	"Measure it outside gwb with: ncu --clock-control none --metrics " \
	"sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum," \
	"sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum," \
	"dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed," \
	"lts__throughput.avg.pct_of_peak_sustained_elapsed," \
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum," \
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum,sm__inst_executed_pipe_tensor.sum " \
	"build/gwb script.lua (or: ncu --set roofline build/gwb script.lua)"
#define PROFILE_MT "gwb.profile"

struct kbefore { char name[64]; long launches; double ms, bytes; };
struct kcollect { struct kbefore *v; int n, cap; };

static void collect_cb(const gwb_kernel_stat *k, void *ctx)
{
	struct kcollect *c = ctx;

	if (c->n < c->cap) {
		snprintf(c->v[c->n].name, sizeof(c->v[0].name), "%s", k->name);
		c->v[c->n].launches = k->launches;
		c->v[c->n].ms = k->total_ms;
		c->v[c->n].bytes = k->bytes;
		c->n++;
	}
}

/* One row of the result: a kernel name with its telemetry and its CUPTI measurements. */
struct prow {
	char name[72];
	bool ours;            /* a gwb kernel (telemetry knows it) */
	long launches;        /* telemetry launches during fn (or measured ones for library kernels) */
	double total_ms;      /* telemetry event time */
	char block[32];
	int regs;
	double theoretical;   /* 0..1, -1 when unknown */
	long profiled;        /* launches measured by CUPTI */
	double occ_w, occ_sum, occ_min, occ_max;  /* achieved (0..100) sums: duration weighted and plain */
	double dur_ns, sm_w;
	bool has_dur, has_sm;
	double declared_bytes;     /* telemetry: bytes the launch sites declared during fn */
	/* CUPTI's roofline measurements, summed over the measured launches (has_*: present) */
	double dram_rd, dram_wr, dram_pct_w, l2_bytes, l2_pct_w, flop_sp, flop_dp, tensor;
	double peak_sp, peak_dp, peak_dram;  /* the device's peaks (FLOP/s, bytes/s) */
	bool has_dram, has_dram_pct, has_l2, has_l2_pct, has_flop, has_peaks, has_tensor;
	bool has_dram_peak;        /* peak_dram known: CUPTI's, else the device's clock x width */
};

struct prows { struct prow *v; int n, cap; bool oom; };

static struct prow *prow_find(struct prows *r, const char *name, bool add)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].name, name))
			return &r->v[i];
	if (!add)
		return NULL;
	if (r->n == r->cap) {
		int cap = r->cap ? 2 * r->cap : 32;
		struct prow *nv = realloc(r->v, (size_t)cap * sizeof(*nv));
		if (!nv) {
			r->oom = true;
			return NULL;
		}
		r->v = nv;
		r->cap = cap;
	}
	memset(&r->v[r->n], 0, sizeof(r->v[0]));
	snprintf(r->v[r->n].name, sizeof(r->v[0].name), "%s", name);
	r->v[r->n].theoretical = -1;
	r->v[r->n].occ_min = 1e300;
	return &r->v[r->n++];
}

struct kdiff { struct kcollect *before; struct prows *rows; };

static void diff_cb(const gwb_kernel_stat *k, void *ctx)
{
	struct kdiff *d = ctx;
	long launches = k->launches;
	double ms = k->total_ms, bytes = k->bytes;
	struct prow *r;
	int i;

	for (i = 0; i < d->before->n; i++)
		if (!strcmp(d->before->v[i].name, k->name)) {
			launches -= d->before->v[i].launches;
			ms -= d->before->v[i].ms;
			bytes -= d->before->v[i].bytes;
			break;
		}
	if (launches <= 0 || !(r = prow_find(d->rows, k->name, true)))
		return;
	r->ours = true;
	r->launches = launches;
	r->total_ms = ms;
	r->declared_bytes = bytes;
	snprintf(r->block, sizeof(r->block), "%dx%dx%d", k->block[0], k->block[1], k->block[2]);
	r->regs = k->regs;
	if (k->occupancy > 0)  /* 0: a record with no launch configuration (a library call) */
		r->theoretical = k->occupancy;
}

#ifdef GWB_HAVE_CUDA
#include "../kernels/profile.h"

/* The DRAM peak in bytes/s where CUPTI gives none: 2 x memory clock x bus width. */
static double device_dram_peak(void)
{
	static double peak = -1;
	gwb_gpu_info gi;

	if (peak < 0)
		peak = gwb_gpu_get_info(&gi) == GWB_OK && gi.mem_clock_khz > 0 && gi.mem_bus_bits > 0
			       ? 2.0 * gi.mem_clock_khz * 1e3 * (gi.mem_bus_bits / 8.0) : 0;
	return peak;
}

/* One measured launch, as CUPTI's batch is decoded (during the run and at its end): into the
 * scratch rows, and at once into the telemetry's record of the kernel (gpu.kernels(), the
 * panel's measured GB/s column while gpu.profile runs). */
static void range_cb(const gwb_profile_range *g, void *ctx)
{
	struct prows *rows = ctx;
	struct prow *r = prow_find(rows, g->name, true);
	double w;

	if (g->ours && g->dram_read_bytes >= 0 && g->dram_write_bytes >= 0)
		gwb_prof_measured(g->name, 1, g->dram_read_bytes + g->dram_write_bytes,
				  g->duration_ns, g->peak_dram_bps > 0 ? g->peak_dram_bps
								       : device_dram_peak());
	if (!r)
		return;
	if (g->ours)
		r->ours = true;
	r->profiled++;
	w = g->duration_ns > 0 ? g->duration_ns : 0;
	r->occ_w += g->achieved_pct * w;
	r->occ_sum += g->achieved_pct;
	if (g->achieved_pct < r->occ_min)
		r->occ_min = g->achieved_pct;
	if (g->achieved_pct > r->occ_max)
		r->occ_max = g->achieved_pct;
	if (g->duration_ns >= 0) {
		r->dur_ns += g->duration_ns;
		r->has_dur = true;
	}
	if (g->sm_pct >= 0) {
		r->sm_w += g->sm_pct * w;
		r->has_sm = true;
	}
	if (g->dram_read_bytes >= 0 && g->dram_write_bytes >= 0) {
		r->dram_rd += g->dram_read_bytes;
		r->dram_wr += g->dram_write_bytes;
		r->has_dram = true;
	}
	if (g->dram_pct >= 0) {
		r->dram_pct_w += g->dram_pct * w;
		r->has_dram_pct = true;
	}
	if (g->l2_bytes >= 0) {
		r->l2_bytes += g->l2_bytes;
		r->has_l2 = true;
	}
	if (g->l2_pct >= 0) {
		r->l2_pct_w += g->l2_pct * w;
		r->has_l2_pct = true;
	}
	if (g->flop_sp >= 0 && g->flop_dp >= 0) {
		r->flop_sp += g->flop_sp;
		r->flop_dp += g->flop_dp;
		r->has_flop = true;
	}
	if (g->peak_flops_sp > 0 && g->peak_flops_dp > 0) {
		r->peak_sp = g->peak_flops_sp;
		r->peak_dp = g->peak_flops_dp;
		r->has_peaks = true;
	}
	if (g->peak_dram_bps > 0) {
		r->peak_dram = g->peak_dram_bps;
		r->has_dram_peak = true;
	}
	if (g->tensor_inst >= 0) {
		r->tensor += g->tensor_inst;
		r->has_tensor = true;
	}
}

/* Add the CUPTI measurements (rows made by range_cb) to the telemetry rows: called only when
 * the session ended well, so a profile that failed partway shows none of them. Out of memory
 * (here or in range_cb) sets rows->oom. */
static void prows_merge(struct prows *rows, const struct prows *m)
{
	int i;

	if (m->oom) {
		rows->oom = true;
		return;
	}
	for (i = 0; i < m->n; i++) {
		const struct prow *g = &m->v[i];
		struct prow *r = prow_find(rows, g->name, true);

		if (!r)
			return;
		if (g->ours)
			r->ours = true;
		r->profiled = g->profiled;
		r->occ_w = g->occ_w;
		r->occ_sum = g->occ_sum;
		r->occ_min = g->occ_min;
		r->occ_max = g->occ_max;
		r->dur_ns = g->dur_ns;
		r->sm_w = g->sm_w;
		r->has_dur = g->has_dur;
		r->has_sm = g->has_sm;
		r->dram_rd = g->dram_rd;
		r->dram_wr = g->dram_wr;
		r->dram_pct_w = g->dram_pct_w;
		r->l2_bytes = g->l2_bytes;
		r->l2_pct_w = g->l2_pct_w;
		r->flop_sp = g->flop_sp;
		r->flop_dp = g->flop_dp;
		r->tensor = g->tensor;
		r->peak_sp = g->peak_sp;
		r->peak_dp = g->peak_dp;
		r->peak_dram = g->peak_dram;
		r->has_dram = g->has_dram;
		r->has_dram_pct = g->has_dram_pct;
		r->has_l2 = g->has_l2;
		r->has_l2_pct = g->has_l2_pct;
		r->has_flop = g->has_flop;
		r->has_peaks = g->has_peaks;
		r->has_tensor = g->has_tensor;
		r->has_dram_peak = g->has_dram_peak;
		if (!r->has_dram_peak && r->has_dram && device_dram_peak() > 0) {
			/* CUPTI gave no peak: the device's, 2 x memory clock x bus width */
			r->peak_dram = device_dram_peak();
			r->has_dram_peak = true;
		}
		/* (the telemetry's record got each launch from range_cb as it was decoded) */
	}
}
#endif

/* The rows live in a userdata while the result is built, so a raising Lua allocation frees
 * them (__gc); rows: telemetry, measured: range_cb's scratch. */
#define PROWS_MT "gwb.profile.rows"
struct pscratch { struct prows rows, measured; };

static void pscratch_release(struct pscratch *p)
{
	free(p->rows.v);
	free(p->measured.v);
	memset(p, 0, sizeof(*p));
}

static int pscratch_gc(lua_State *L)
{
	struct pscratch *p = gwb_lua_toudata(L, 1, PROWS_MT);

	if (p)
		pscratch_release(p);
	return 0;
}

/* Most measured time first, then most event time. */
static int prow_cmp(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->dur_ns != y->dur_ns)
		return x->dur_ns < y->dur_ns ? 1 : -1;
	if (x->total_ms != y->total_ms)
		return x->total_ms < y->total_ms ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The roofline fields of a measured row (bytes and FLOPs per launch, rates over the measured
 * duration, fractions of the device's peaks) and its verdict (prof.h's rule). */
static void push_roofline(lua_State *L, const struct prow *r, double occupancy)
{
	double n = (double)r->profiled, sec = r->dur_ns * 1e-9;
	double mem = -1, comp = -1;

	if (r->has_dram) {
		lua_pushnumber(L, r->dram_rd / n);
		lua_setfield(L, -2, "dram_read_bytes");
		lua_pushnumber(L, r->dram_wr / n);
		lua_setfield(L, -2, "dram_write_bytes");
		if (sec > 0) {
			double gbps = (r->dram_rd + r->dram_wr) / sec * 1e-9;
			lua_pushnumber(L, gbps);
			lua_setfield(L, -2, "dram_gbps");
			if (r->has_dram_peak) {
				mem = gbps * 1e9 / r->peak_dram;
				lua_pushnumber(L, mem);
				lua_setfield(L, -2, "dram_peak_fraction");
			}
		}
	}
	if (r->has_dram_pct && r->dur_ns > 0) {
		double f = r->dram_pct_w / r->dur_ns / 100.0;
		lua_pushnumber(L, f);
		lua_setfield(L, -2, "dram_throughput");
		mem = mem > f ? mem : f;
	}
	if (r->has_l2 && sec > 0) {
		lua_pushnumber(L, r->l2_bytes / sec * 1e-9);
		lua_setfield(L, -2, "l2_gbps");
	}
	if (r->has_l2_pct && r->dur_ns > 0) {
		double f = r->l2_pct_w / r->dur_ns / 100.0;
		lua_pushnumber(L, f);
		lua_setfield(L, -2, "l2_throughput");
		mem = mem > f ? mem : f;
	}
	if (r->has_flop && sec > 0) {
		lua_pushnumber(L, r->flop_sp / sec * 1e-9);
		lua_setfield(L, -2, "gflops_sp");
		lua_pushnumber(L, r->flop_dp / sec * 1e-9);
		lua_setfield(L, -2, "gflops_dp");
		if (r->has_peaks) {
			double fs = r->flop_sp / sec / r->peak_sp, fd = r->flop_dp / sec / r->peak_dp;
			comp = fs > fd ? fs : fd;
			lua_pushnumber(L, fs);
			lua_setfield(L, -2, "fp32_peak_fraction");
			lua_pushnumber(L, fd);
			lua_setfield(L, -2, "fp64_peak_fraction");
			lua_pushnumber(L, comp);
			lua_setfield(L, -2, "flop_peak_fraction");
		}
		if (r->dram_rd + r->dram_wr > 0) {
			lua_pushnumber(L, (r->flop_sp + r->flop_dp) / (r->dram_rd + r->dram_wr));
			lua_setfield(L, -2, "flop_per_byte");
		}
	}
	if (r->has_dram_peak) {
		lua_pushnumber(L, r->peak_dram * 1e-9);
		lua_setfield(L, -2, "peak_dram_gbps");
	}
	if (r->has_peaks) {
		lua_pushnumber(L, r->peak_sp * 1e-9);
		lua_setfield(L, -2, "peak_gflops_sp");
		lua_pushnumber(L, r->peak_dp * 1e-9);
		lua_setfield(L, -2, "peak_gflops_dp");
	}
	if (r->has_tensor) {
		lua_pushnumber(L, r->tensor / n);
		lua_setfield(L, -2, "tensor_inst");
		if (sec > 0) {
			lua_pushnumber(L, r->tensor / sec);
			lua_setfield(L, -2, "tensor_inst_per_s");
		}
	}
	if (r->has_sm && r->dur_ns > 0) {
		double f = r->sm_w / r->dur_ns / 100.0;
		comp = comp > f ? comp : f;
	}
	if (mem >= 0 || comp >= 0)
		SETS("verdict", gwb_prof_verdict(mem, comp, occupancy));
}

static void push_row(lua_State *L, const struct prow *r)
{
	lua_createtable(L, 0, 16);
	SETS("name", r->name);
	lua_pushboolean(L, r->ours);
	lua_setfield(L, -2, "gwb");
	SETI("launches", r->launches > 0 ? r->launches : r->profiled);
	SETI("profiled", r->profiled);
	if (r->launches > 0) {  /* telemetry saw it (not when only CUPTI did: telemetry off) */
		lua_pushnumber(L, r->total_ms);
		lua_setfield(L, -2, "total_ms");
		lua_pushnumber(L, r->total_ms / r->launches * 1e3);
		lua_setfield(L, -2, "mean_us");
		SETS("block", r->block);
		SETI("regs", r->regs);
	}
	if (r->theoretical >= 0) {
		lua_pushnumber(L, r->theoretical);
		lua_setfield(L, -2, "theoretical_occupancy");
	}
	if (r->profiled > 0) {
		double occ = r->dur_ns > 0 ? r->occ_w / r->dur_ns : r->occ_sum / (double)r->profiled;
		lua_pushnumber(L, occ / 100.0);
		lua_setfield(L, -2, "achieved_occupancy");
		lua_pushnumber(L, r->occ_min / 100.0);
		lua_setfield(L, -2, "achieved_min");
		lua_pushnumber(L, r->occ_max / 100.0);
		lua_setfield(L, -2, "achieved_max");
		if (r->has_dur) {
			lua_pushnumber(L, r->dur_ns / (double)r->profiled * 1e-3);
			lua_setfield(L, -2, "duration_us");
		}
		if (r->has_sm && r->dur_ns > 0) {
			lua_pushnumber(L, r->sm_w / r->dur_ns / 100.0);
			lua_setfield(L, -2, "sm_throughput");
		}
		push_roofline(L, r, occ / 100.0);
	}
	if (r->launches > 0 && r->declared_bytes > 0) {
		lua_pushnumber(L, r->declared_bytes / (double)r->launches);
		lua_setfield(L, -2, "declared_bytes");  /* per launch, what the launch site says */
	}
}

/* Field of the table at idx as a number (NAN when absent). */
static double fieldnum(lua_State *L, int idx, const char *k)
{
	double v;

	lua_getfield(L, idx, k);
	v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : NAN;
	lua_pop(L, 1);
	return v;
}

static void fmt_pct(char *s, size_t n, double v, int width)
{
	if (isnan(v))
		snprintf(s, n, "%*s", width, "-");
	else
		snprintf(s, n, "%*.1f%%", width - 1, v * 100.0);
}

static int l_profile_tostring(lua_State *L)
{
	luaL_Buffer b;
	char line[320], name[40], occ[16], theo[16], sm[16], dur_s[24];
	lua_Integer i, n;
	bool achieved;
	int kt;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_getfield(L, 1, "achieved");
	achieved = lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, 1, "kernels");
	kt = lua_gettop(L);
	n = lua_istable(L, kt) ? (lua_Integer)lua_rawlen(L, kt) : 0;
	luaL_buffinit(L, &b);
	snprintf(line, sizeof(line), "gpu.profile: %lld kernel%s in %.1f ms", (long long)n,
		 n == 1 ? "" : "s", fieldnum(L, 1, "wall_ms"));
	luaL_addstring(&b, line);
	if (achieved) {
		double dr = fieldnum(L, 1, "dropped");
		snprintf(line, sizeof(line), ", %.0f launches measured by CUPTI (kernel replay)",
			 fieldnum(L, 1, "profiled"));
		luaL_addstring(&b, line);
		if (dr > 0) {
			snprintf(line, sizeof(line), ", %.0f not measured (raise max_ranges)", dr);
			luaL_addstring(&b, line);
		}
	}
	snprintf(line, sizeof(line), "\n%-32s %8s %8s %9s %11s %11s %6s\n", "kernel", "launches",
		 "measured", "achieved", "theoretical", "duration_us", "SM");
	luaL_addstring(&b, line);
	for (i = 1; i <= n; i++) {
		double launches, measured, dur;
		int row;

		/* read the row, pop it, then touch the buffer (its stack use must stay balanced) */
		lua_rawgeti(L, kt, i);
		row = lua_gettop(L);
		lua_getfield(L, row, "name");
		snprintf(name, sizeof(name), "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
		lua_pop(L, 1);
		launches = fieldnum(L, row, "launches");
		measured = fieldnum(L, row, "profiled");
		fmt_pct(occ, sizeof(occ), fieldnum(L, row, "achieved_occupancy"), 9);
		fmt_pct(theo, sizeof(theo), fieldnum(L, row, "theoretical_occupancy"), 11);
		fmt_pct(sm, sizeof(sm), fieldnum(L, row, "sm_throughput"), 6);
		dur = fieldnum(L, row, "duration_us");
		if (isnan(dur) && !achieved)  /* event times include replays when profiled */
			dur = fieldnum(L, row, "mean_us");
		lua_pop(L, 1);
		if (isnan(dur))
			snprintf(dur_s, sizeof(dur_s), "%11s", "-");
		else
			snprintf(dur_s, sizeof(dur_s), "%11.2f", dur);
		snprintf(line, sizeof(line), "%-32.32s %8.0f %8.0f %s %s %s %s\n", name, launches,
			 measured, occ, theo, dur_s, sm);
		luaL_addstring(&b, line);
	}
	/* the roofline: measured bytes and FLOPs against the peaks, and the verdict */
	if (achieved && n > 0) {
		bool header = false;
		for (i = 1; i <= n; i++) {
			char dram[16], dpk[16], l2[16], fl[24], fpk[16], ratio[16], verdict[24];
			double gb, fs, fd, rd, wr, decl;
			int row;

			lua_rawgeti(L, kt, i);
			row = lua_gettop(L);
			lua_getfield(L, row, "verdict");
			if (!lua_isstring(L, -1)) {
				lua_pop(L, 2);
				continue;
			}
			snprintf(verdict, sizeof(verdict), "%s", lua_tostring(L, -1));
			lua_pop(L, 1);
			lua_getfield(L, row, "name");
			snprintf(name, sizeof(name), "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
			lua_pop(L, 1);
			gb = fieldnum(L, row, "dram_gbps");
			fs = fieldnum(L, row, "gflops_sp");
			fd = fieldnum(L, row, "gflops_dp");
			rd = fieldnum(L, row, "dram_read_bytes");
			wr = fieldnum(L, row, "dram_write_bytes");
			decl = fieldnum(L, row, "declared_bytes");
			fmt_pct(dpk, sizeof(dpk), fieldnum(L, row, "dram_peak_fraction"), 7);
			fmt_pct(l2, sizeof(l2), fieldnum(L, row, "l2_throughput"), 7);
			fmt_pct(fpk, sizeof(fpk), fieldnum(L, row, "flop_peak_fraction"), 7);
			lua_pop(L, 1);
			if (isnan(gb))
				snprintf(dram, sizeof(dram), "%9s", "-");
			else
				snprintf(dram, sizeof(dram), "%9.1f", gb);
			if (isnan(fs) || isnan(fd))
				snprintf(fl, sizeof(fl), "%11s", "-");
			else
				snprintf(fl, sizeof(fl), "%11.1f", fs > fd ? fs : fd);
			if (isnan(rd) || isnan(wr) || isnan(decl) || decl <= 0)
				snprintf(ratio, sizeof(ratio), "%9s", "-");
			else
				snprintf(ratio, sizeof(ratio), "%8.2fx", (rd + wr) / decl);
			if (!header) {
				snprintf(line, sizeof(line), "\nroofline (measured per launch)\n%-32s %9s %7s "
					 "%7s %11s %7s %9s  %s\n", "kernel", "DRAM GB/s", "%peak", "L2",
					 "GFLOP/s", "%peak", "meas/decl", "verdict");
				luaL_addstring(&b, line);
				header = true;
			}
			snprintf(line, sizeof(line), "%-32.32s %s %s %s %s %s %s  %s\n", name, dram, dpk, l2,
				 fl, fpk, ratio, verdict);
			luaL_addstring(&b, line);
		}
		if (header)
			luaL_addstring(&b, "(GFLOP/s: FP32 or FP64, whichever is larger; meas/decl: DRAM "
					   "bytes measured over the bytes the launch declares)\n");
	}
	if (!achieved) {
		luaL_addstring(&b, "achieved occupancy not measured: ");
		lua_getfield(L, 1, "reason");
		if (!lua_isstring(L, -1)) {
			lua_pop(L, 1);
			lua_pushliteral(L, "unknown");
		}
		luaL_addvalue(&b);  /* the one buffer call that takes the stack top */
		luaL_addchar(&b, '\n');
	} else if (n > 0) {
		luaL_addstring(&b, "(duration_us: the measured pass, from CUPTI; launches run serialized "
				   "and replayed while profiled)\n");
	}
	luaL_pushresult(&b);
	return 1;
}

static int l_profile(lua_State *L)
{
	static const char *const known[] = {"max_ranges", "counters", NULL};
	struct kbefore v[256];
	struct kcollect before = {v, 0, 256};
	struct pscratch *ps;
	struct kdiff d = {&before, NULL};
	char reason[2400] = "";
	lua_Integer max_ranges;
	int st, i;
	bool counters;
	long profiled = 0, dropped = 0;
	double t0, wall;
#ifdef GWB_HAVE_CUDA
	gwb_profile_session *sess = NULL;
#endif

	luaL_checktype(L, 1, LUA_TFUNCTION);
	max_ranges = gwb_opt_int(L, 2, "gpu.profile", "max_ranges", 2000);
	counters = gwb_opt_bool(L, 2, "gpu.profile", "counters", true);
	gwb_opt_check_keys(L, 2, "gpu.profile", known);
	if (max_ranges < 1 || max_ranges > 100000)  /* before the cast to int */
		return luaL_error(L, "gpu.profile: max_ranges must be 1..100000 (got %I)",
				  max_ranges);
	lua_settop(L, 2);
	ps = gwb_lua_newudata(L, sizeof(*ps), 0, PROWS_MT);  /* index 3, owns the rows until the end */
	memset(ps, 0, sizeof(*ps));
	if (luaL_newmetatable(L, PROWS_MT)) {
		lua_pushcfunction(L, pscratch_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	d.rows = &ps->rows;
	gwb_prof_each_kernel(collect_cb, &before);
	if (!counters)
		snprintf(reason, sizeof(reason), "counters = false (telemetry only)");
#ifdef GWB_HAVE_CUDA
	else if (!gwb_gpu_available())
		snprintf(reason, sizeof(reason), "no GPU (%s). " PROFILE_NCU_HINT,
			 gwb_gpu_unavailable_reason());
	else if (gwb_gpu_profile_begin((int)max_ranges, range_cb, &ps->measured, &sess))
		snprintf(reason, sizeof(reason), "%s. " PROFILE_NCU_HINT, gwb_errmsg());
#else
	else
		snprintf(reason, sizeof(reason),
			 "this build of gwb has no CUDA (make CUDA=0), so there are no kernels to "
			 "measure with the CUPTI range profiler. " PROFILE_NCU_HINT);
#endif
	t0 = gwb_now();
	lua_pushvalue(L, 1);
	st = lua_pcall(L, 0, 0, 0);
	wall = (gwb_now() - t0) * 1e3;
	if (st != LUA_OK) {
#ifdef GWB_HAVE_CUDA
		gwb_gpu_profile_abort(sess);
#endif
		return lua_error(L);
	}
	gwb_prof_each_kernel(diff_cb, &d);
#ifdef GWB_HAVE_CUDA
	/* CUPTI's rows go to the scratch and join the table only when the session ended well */
	if (sess && gwb_gpu_profile_end(sess, &dropped))
		snprintf(reason, sizeof(reason), "%s. " PROFILE_NCU_HINT, gwb_errmsg());
	else if (sess)
		prows_merge(&ps->rows, &ps->measured);
#endif
	if (ps->rows.oom)
		return luaL_error(L, "gpu.profile: out of host memory for the kernel table");
	for (i = 0; i < ps->rows.n; i++)
		profiled += ps->rows.v[i].profiled;
	if (ps->rows.n > 1)
		qsort(ps->rows.v, (size_t)ps->rows.n, sizeof(ps->rows.v[0]), prow_cmp);

	lua_createtable(L, 0, 8);
	lua_pushnumber(L, wall);
	lua_setfield(L, -2, "wall_ms");
	lua_pushboolean(L, reason[0] == '\0');
	lua_setfield(L, -2, "achieved");
	if (reason[0]) {
		SETS("reason", reason);
	} else {
		SETI("profiled", profiled);
		SETI("dropped", dropped);
#ifdef GWB_HAVE_CUDA
		SETS("library", gwb_gpu_profile_library());
#endif
		lua_createtable(L, 3, 0);
		SETS("occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active");
		SETS("duration", "gpu__time_duration.sum");
		SETS("sm_throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed");
		SETS("dram_bytes", "dram__bytes_read.sum + dram__bytes_write.sum");
		SETS("dram_throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed");
		SETS("l2_throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed");
		SETS("flops", "sm__sass_thread_inst_executed_op_{fadd,fmul,ffma,dadd,dmul,dfma}"
		     "_pred_on.sum (fma counted twice)");
		SETS("peaks", "..._op_ffma/dfma_pred_on.sum.peak_sustained x "
		     "sm__cycles_elapsed.avg.per_second; dram__bytes.sum.peak_sustained x "
		     "dram__cycles_elapsed.avg.per_second");
		SETS("tensor", "sm__inst_executed_pipe_tensor.sum");
		lua_setfield(L, -2, "metrics");
	}
	lua_createtable(L, ps->rows.n, 0);
	for (i = 0; i < ps->rows.n; i++) {
		push_row(L, &ps->rows.v[i]);
		lua_rawseti(L, -2, i + 1);
	}
	pscratch_release(ps);  /* now rather than at the next collection */
	lua_setfield(L, -2, "kernels");
	if (luaL_newmetatable(L, PROFILE_MT)) {
		lua_pushcfunction(L, l_profile_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_setmetatable(L, -2);
	return 1;
}

static const gwb_reg funcs[] = {
	{"available", l_available,
	 "gpu.available() -> ok [, reason]\n"
	 "True when a CUDA GPU is usable; otherwise false and why (CPU-only build, no driver,\n"
	 "no device). Creates the CUDA context on first use.\n"
	 "Example: if not gpu.available() then print(select(2, gpu.available())) end"},
	{"info", l_info,
	 "gpu.info() -> table\n"
	 "Device properties: name, compute_capability, sms, memory_bytes, l2_bytes,\n"
	 "smem_per_block(_optin), smem_per_sm, regs_per_sm, clocks, driver and runtime versions.\n"
	 "Without a GPU: {available = false, reason = ...}."},
	{"mem", l_mem,
	 "gpu.mem() -> table\n"
	 "cudaMemGetInfo (free, total, used) plus the bytes gwb itself holds (ours), by purpose;\n"
	 "pool: bytes freed by gwb and cached for reuse (pool_blocks, pool_hits, pool_misses),\n"
	 "reserved: live + cached, staging: pinned host bytes of the copy ring,\n"
	 "registered: host bytes page-locked for direct copies (Datasets and matrices of 64 MiB\n"
	 "or more, on their first crossing; released when they are freed and by gpu.trim())."},
	{"trim", l_trim,
	 "gpu.trim() -> bytes\n"
	 "Give the device-memory pool's cached blocks and the pinned staging ring back to the\n"
	 "driver and unregister page-locked host memory (it registers again on its next copy);\n"
	 "returns the device bytes released (0 without a GPU).\n"
	 "Example: A:close(); collectgarbage(); print(gpu.trim())"},
	{"kernels", l_kernels,
	 "gpu.kernels() -> array\n"
	 "Every kernel launched since gpu.reset(), by total time: launches, total_ms, mean_ms,\n"
	 "grid, block, regs, smem, theoretical occupancy, gbps (bytes the launch moves / time),\n"
	 "declared_bytes (their sum). Where gpu.profile measured the kernel: measured_launches,\n"
	 "measured_bytes (DRAM bytes read + written per launch, from CUPTI) beside\n"
	 "declared_bytes_per_launch, measured_over_declared, measured_gbps and\n"
	 "measured_peak_fraction (of the DRAM peak); a gap between measured and declared is a\n"
	 "finding (caches, a wrong declaration, or traffic the launch site did not count)."},
	{"reset", l_reset, "gpu.reset()\nForget the kernel and transfer records."},
	{"occupancy", l_occupancy,
	 "gpu.occupancy(kernel, block [, {smem = bytes}]) -> table\n"
	 "Theoretical occupancy of one of gwb's kernels (by name, after it ran once) at `block`\n"
	 "threads per block: resident blocks per SM, active/max warps, occupancy (0..1) and what\n"
	 "limits it (limited_by: \"warps\", \"registers\", \"shared memory\" or \"blocks\") with each\n"
	 "limit in blocks. With a GPU the runtime's answer (cudaOccupancyMax...) is used and the\n"
	 "calculator's kept as calculated_blocks. kernel may also be a table {regs = 40,\n"
	 "smem = 4096} to ask about a kernel of your own (without a GPU: reference sm_90 limits).\n"
	 "gpu.occupancy() lists the kernel names known so far.\n"
	 "Example: gpu.occupancy(\"rf_hist\", 256).limited_by"},
	{"bandwidth", l_bandwidth,
	 "gpu.bandwidth([{bytes = 256 MiB, reps = 5, log = true}]) -> table\n"
	 "Measure copies: host to device and back from pageable and from pinned memory, device to\n"
	 "device (bytes read + written), in GB/s (medians), against the device's DRAM peak\n"
	 "(2 x memory clock x bus width) and the host's memcpy. Writes a run-log record. Without\n"
	 "a GPU: {available = false, reason, host_memcpy_gbps}.\n"
	 "Example: b = gpu.bandwidth(); print(b.h2d_pinned_gbps, b.d2d_fraction_of_peak)"},
	{"profile", l_profile,
	 "gpu.profile(fn [, {max_ranges = 2000, counters = true}]) -> table\n"
	 "Run fn and measure every kernel it launches with the CUPTI range profiler (auto range,\n"
	 "kernel replay: each launch runs alone and is replayed as often as the counters need).\n"
	 "One row per kernel in `kernels`: name, gwb (one of ours, else a library kernel such as\n"
	 "cuBLAS), launches, profiled (launches measured), achieved_occupancy (0..1, mean over the\n"
	 "launches weighted by duration; achieved_min/max), theoretical_occupancy (telemetry),\n"
	 "duration_us (mean, measured pass), sm_throughput (0..1), mean_us/total_ms (CUDA events,\n"
	 "which include the replays), block, regs (these four nil where telemetry did not see the\n"
	 "kernel). Also wall_ms, achieved (true when measured), profiled, dropped (launches past\n"
	 "max_ranges), library (the libcupti used). The roofline, per launch where the chip gives\n"
	 "the counters: dram_read_bytes, dram_write_bytes, dram_gbps, dram_peak_fraction (of the\n"
	 "device's DRAM peak), dram_throughput, l2_gbps, l2_throughput, gflops_sp, gflops_dp,\n"
	 "fp32/fp64/flop_peak_fraction (against the units' peaks), flop_per_byte, tensor_inst,\n"
	 "peak_dram_gbps, peak_gflops_sp/dp, declared_bytes (what the launch site declares), and\n"
	 "verdict: memory-bound, compute-bound (>= 60 % of that peak), occupancy-bound (< 25 %\n"
	 "achieved) or latency-bound. The measured bytes also reach gpu.kernels() and the panel, while fn\n"
	 "runs (decoded every 0.5 s at gwb launches; max_ranges bounds a batch).\n"
	 "libcupti (CUDA 13.0's or newer) is loaded at\n"
	 "the first call (GWB_CUPTI=/path/libcupti.so.13 picks one). Where CUPTI is\n"
	 "missing, profiling is not permitted (NVreg_RestrictProfilingToAdminUsers), another\n"
	 "tool holds the counters, or there is no GPU: achieved is false, `reason` says why and\n"
	 "how to measure with ncu, and the rows keep the telemetry. counters = false skips CUPTI.\n"
	 "print(p) shows the table. Errors raised by fn propagate.\n"
	 "Example: p = gpu.profile(function() teach.transpose{rows = 2048, cols = 2048} end); print(p)"},
	{NULL, NULL, NULL},
};

int gwb_open_gpu(lua_State *L)
{
	gwb_lua_newlib(L, "gpu", funcs);
	lua_pop(L, 1);
	return 0;
}
