/* lapi_mgpu.c - several GPUs at the Lua boundary: gwb.gpus() and the `gpus` option reader that
 * rf.train, eig.batched, eig.solve (sparse) and d:to("gpu") share (mgpu.h). */
#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#include "lapi.h"
#include "mgpu.h"
#include "gpu.h"

int gwb_lua_gpus(lua_State *L)
{
	gwb_gpu_dev dv;
	int n = 0, i, j;

	lua_newtable(L);
	if (gwb_gpu_count(&n)) {
		lua_pushstring(L, gwb_gpu_unavailable_reason());
		return 2;
	}
	for (i = 0; i < n; i++) {
		gwb_lua_check(L, gwb_gpu_dev_get(i, &dv));
		lua_createtable(L, 0, 8);
		SETI("index", dv.index);
		SETS("name", dv.name);
		SETI("memory_total", dv.mem_total);
		SETI("memory_free", dv.mem_free);
		SETI("sms", dv.sms);
		SETS("pci_bus_id", dv.pci);
		/* peer[j + 1]: this device can read and write device j's memory directly */
		lua_createtable(L, n, 0);
		for (j = 0; j < n; j++) {
			lua_pushboolean(L, gwb_gpu_can_peer(i, j));
			lua_rawseti(L, -2, j + 1);
		}
		lua_setfield(L, -2, "peer");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

void gwb_opt_gpus(lua_State *L, int idx, const char *fn, gwb_backend be, bool standin,
		  gwb_gpu_set *out)
{
	long ids[GWB_GPU_MAX + 1], count = 1;
	int nids = 0, t;
	bool list = false;
	gwb_status rc;

	gwb_gpu_set_default(out);
	if (lua_isnoneornil(L, idx))
		goto standin_only;
	idx = lua_absindex(L, idx);
	t = lua_getfield(L, idx, "gpus");
	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		goto standin_only;
	}
	if (t == LUA_TNUMBER && (lua_Number)(lua_Integer)lua_tonumber(L, -1) == lua_tonumber(L, -1)) {
		count = (long)lua_tonumber(L, -1);
	} else if (t == LUA_TTABLE) {
		lua_Integer i, len = (lua_Integer)lua_rawlen(L, -1);
		list = true;
		for (i = 1; i <= len; i++) {
			lua_rawgeti(L, -1, i);
			if (!lua_isinteger(L, -1))
				luaL_error(L, "%s: gpus[%d] must be a device id (an integer from 0; "
					   "gwb.gpus() lists them), got %s", fn, (int)i,
					   luaL_typename(L, -1));
			if (nids <= GWB_GPU_MAX)
				ids[nids++] = (long)lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
		if (len > GWB_GPU_MAX)
			nids = (int)(len > 1000000 ? 1000000 : len);  /* the check names the limit */
	} else {
		luaL_error(L, "%s: gpus must be a device count (gpus = 2) or a list of device ids "
			   "(gpus = {0, 1}), got %s", fn, t == LUA_TNUMBER ? "a fraction" :
			   luaL_typename(L, -1));
	}
	lua_pop(L, 1);
	if (standin) {
		/* tests: CPU stand-ins, as many as asked for (up to the per-device tables' size) */
		rc = gwb_gpu_set_check(fn, count, list ? ids : NULL, nids, GWB_GPU_MAX, NULL, out);
		out->cpu = true;
		gwb_lua_check(L, rc);
		return;
	}
	if (be == GWB_BACKEND_CPU && (list ? !(nids == 1 && ids[0] == 0) : count != 1))
		luaL_error(L, "%s: gpus applies to GPU backends, and backend = \"cpu\" here; drop "
			   "gpus or use backend = \"gpu\"", fn);
	gwb_lua_check(L, gwb_gpu_set_resolve(fn, count, list ? ids : NULL, nids, out));
	return;
standin_only:
	out->cpu = standin;
}
