/* lapi_gpu.c - the `gpu` Lua module: availability, device properties, memory, kernel records. */
#include <string.h>

#include "gpu.h"
#include "lapi.h"
#include "prof.h"

static int l_available(lua_State *L)
{
	bool ok = gwb_gpu_available();

	lua_pushboolean(L, ok);
	if (ok)
		return 1;
	lua_pushstring(L, gwb_gpu_unavailable_reason());
	return 2;
}

#define SETI(k, v) (lua_pushinteger(L, (lua_Integer)(v)), lua_setfield(L, -2, k))
#define SETS(k, v) (lua_pushstring(L, (v)), lua_setfield(L, -2, k))

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
	 "cudaMemGetInfo (free, total, used) plus the bytes gwb itself holds (ours), by purpose."},
	{"kernels", l_kernels,
	 "gpu.kernels() -> array\n"
	 "Every kernel launched since gpu.reset(), by total time: launches, total_ms, mean_ms,\n"
	 "grid, block, regs, smem, theoretical occupancy, gbps (bytes the launch moves / time)."},
	{"reset", l_reset, "gpu.reset()\nForget the kernel and transfer records."},
	{NULL, NULL, NULL},
};

int gwb_open_gpu(lua_State *L)
{
	gwb_lua_newlib(L, "gpu", funcs);
	lua_pop(L, 1);
	return 0;
}
