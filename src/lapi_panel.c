/* lapi_panel.c - the `panel` Lua module (panel.on/off/status) and two helpers that drive it:
 * gwb.bench(fn, opts), a timing loop with progress, and gwb.telemetry([on]). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intr.h"
#include "lapi.h"
#include "panel.h"
#include "prof.h"

static int l_on(lua_State *L)
{
	gwb_lua_check(L, gwb_panel_on());
	return 0;
}

static int l_off(lua_State *L)
{
	(void)L;
	gwb_panel_off();
	return 0;
}

static int l_status(lua_State *L)
{
	gwb_panel_stats st;
	char sum[1024];

	gwb_panel_summary(sum, sizeof(sum));  /* takes a fresh snapshot */
	gwb_panel_get_stats(&st);
	lua_createtable(L, 0, 10);
	lua_pushboolean(L, gwb_panel_allowed());
	lua_setfield(L, -2, "allowed");
	lua_pushboolean(L, gwb_panel_is_up());
	lua_setfield(L, -2, "up");
	lua_pushboolean(L, gwb_panel_persistent());
	lua_setfield(L, -2, "persistent");
	lua_pushinteger(L, st.opened);
	lua_setfield(L, -2, "opened");
	lua_pushinteger(L, st.frames);
	lua_setfield(L, -2, "frames");
	lua_pushinteger(L, st.captured_bytes);
	lua_setfield(L, -2, "captured_bytes");
	if (st.rows) {
		lua_pushfstring(L, "%dx%d", st.cols, st.rows);
		lua_setfield(L, -2, "size");
	}
	if (st.reason[0]) {
		lua_pushstring(L, st.reason);
		lua_setfield(L, -2, "reason");
	}
	lua_pushstring(L, sum);
	lua_setfield(L, -2, "summary");
	lua_pushboolean(L, gwb_prof_enabled());
	lua_setfield(L, -2, "telemetry");
	if (st.gpu) {
		int i;
		lua_createtable(L, 0, 4);
		lua_pushinteger(L, (lua_Integer)st.mem_free);
		lua_setfield(L, -2, "free");
		lua_pushinteger(L, (lua_Integer)st.mem_total);
		lua_setfield(L, -2, "total");
		lua_pushinteger(L, (lua_Integer)st.ours);
		lua_setfield(L, -2, "ours");
		lua_createtable(L, st.nk, 0);
		for (i = 0; i < st.nk; i++) {
			lua_createtable(L, 0, 3);
			lua_pushstring(L, st.k[i].name);
			lua_setfield(L, -2, "name");
			lua_pushinteger(L, st.k[i].block);
			lua_setfield(L, -2, "block");
			lua_pushnumber(L, st.k[i].occupancy);
			lua_setfield(L, -2, "occupancy");
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "kernels");
		lua_setfield(L, -2, "gpu");
	}
	return 1;
}

static const gwb_reg panel_funcs[] = {
	{"on", l_on,
	 "panel.on()\n"
	 "Keep the live panel up between commands, with the prompt below it. The panel shows the\n"
	 "device (name, SMs, clocks), a memory bar (ours by purpose / others / free), progress\n"
	 "with ETA, the top kernels (launches, mean us, block, registers, shared memory,\n"
	 "occupancy, GB/s), transfers, CPU threads/RSS/phase times and a memory sparkline.\n"
	 "Output of your commands scrolls in its lower part and is written back to the terminal\n"
	 "by panel.off(). Without panel.on(), the panel appears by itself when an operation runs\n"
	 "longer than about 0.3 s. Fails with the reason under --no-panel, NO_COLOR or when\n"
	 "output is not a terminal.\n"
	 "Example: panel.on(); f = rf.train(d, {trees = 500}); panel.off()"},
	{"off", l_off,
	 "panel.off()\n"
	 "Close the panel (kept up by panel.on()); what was printed while it was up is written\n"
	 "to the terminal, followed by a one-line summary. Safe when the panel is not up."},
	{"status", l_status,
	 "panel.status() -> table\n"
	 "allowed (and the reason when not), up, persistent, how many times it opened, frames\n"
	 "drawn, size, bytes of output captured, telemetry on/off, `summary`: the text the\n"
	 "panel leaves in the scrollback (progress, phases, CPU, GPU memory, top kernel), and,\n"
	 "once gwb has used the GPU, `gpu`: the memory (free, total, ours) and kernel rows (name,\n"
	 "block, occupancy) exactly as the panel reads them.\n"
	 "Example: print(panel.status().summary)"},
	{NULL, NULL, NULL},
};

/* --- gwb.bench -------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define BENCH_T "gwb.bench.times"   /* the tag of bench's scratch userdata */
struct bench {
	double *t;
	size_t n, cap;
};

static int bench_gc(lua_State *L)
{
	struct bench *b = gwb_lua_toudata(L, 1, BENCH_T);

	if (!b)
		return 0;
	free(b->t);
	b->t = NULL;
	return 0;
}

static int l_bench(lua_State *L)
{
	static const char *const known[] = {"seconds", "runs", "warmup", "label", "log", "tag",
					    NULL};
	double seconds, t0, tlast = 0, sum = 0, mn = INFINITY, mx = 0;
	lua_Integer runs, warmup, i;
	const char *label;
	bool log, interrupted = false;
	struct bench *b;
	int st = LUA_OK;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	gwb_opt_check_keys(L, 2, "gwb.bench", known);
	gwb_opt_tag(L, 2, "gwb.bench");  /* checked before the runs */
	lua_pop(L, 1);
	seconds = gwb_opt_num(L, 2, "gwb.bench", "seconds", 1.0);
	runs = gwb_opt_int(L, 2, "gwb.bench", "runs", 0);
	warmup = gwb_opt_int(L, 2, "gwb.bench", "warmup", 1);
	label = gwb_opt_str(L, 2, "gwb.bench", "label", "bench");
	log = gwb_opt_bool(L, 2, "gwb.bench", "log", true);
	if (!(seconds > 0) && runs <= 0)
		return luaL_error(L, "gwb.bench: give seconds > 0 or runs > 0 (got seconds = %f)",
				  seconds);
	if (runs < 0 || warmup < 0)
		return luaL_error(L, "gwb.bench: runs and warmup must be >= 0");
	/* the times live in a userdata so that an error cannot leak them */
	b = gwb_lua_newudata(L, sizeof(*b), 0, BENCH_T);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, bench_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	int ud = lua_gettop(L);

	for (i = 0; i < warmup; i++) {
		lua_pushvalue(L, 1);
		lua_call(L, 0, 0);
	}
	gwb_progress_begin(label, runs > 0 ? (double)runs : seconds);
	t0 = gwb_now();
	for (;;) {
		double a, e, now;
		if (gwb_intr_pending()) {
			interrupted = true;
			break;
		}
		lua_pushvalue(L, 1);
		a = gwb_now();
		st = lua_pcall(L, 0, 0, 0);
		now = gwb_now();
		if (st != LUA_OK)
			break;
		e = now - a;
		if (b->n == b->cap) {
			size_t nc = b->cap ? b->cap * 2 : 1024;
			double *nt;
			if (nc > (1u << 24))
				nc = b->cap;  /* keep the first 16M samples; totals still count */
			nt = nc > b->cap ? realloc(b->t, nc * sizeof(*nt)) : NULL;
			if (nt) {
				b->t = nt;
				b->cap = nc;
			}
		}
		if (b->n < b->cap)
			b->t[b->n] = e;
		b->n++;
		sum += e;
		if (e < mn)
			mn = e;
		if (e > mx)
			mx = e;
		if (now - tlast > 0.05) {
			tlast = now;
			gwb_progress_update(runs > 0 ? (double)b->n : now - t0, "calls/s",
					    b->n / (now - t0));
		}
		if (runs > 0 ? (lua_Integer)b->n >= runs : now - t0 >= seconds)
			break;
	}
	gwb_progress_end();
	if (st != LUA_OK)
		return lua_error(L);
	if (interrupted)
		return luaL_error(L, "gwb.bench: interrupted after %d calls", (int)b->n);

	{
		size_t n = b->n < b->cap ? b->n : b->cap;
		double total = gwb_now() - t0, mean = b->n ? sum / (double)b->n : 0, var = 0, med = 0;
		size_t k;
		for (k = 0; k < n; k++)
			var += (b->t[k] - mean) * (b->t[k] - mean);
		var = n > 1 ? var / (double)(n - 1) : 0;
		if (n) {
			qsort(b->t, n, sizeof(double), cmp_double);
			med = n % 2 ? b->t[n / 2] : 0.5 * (b->t[n / 2 - 1] + b->t[n / 2]);
		}
		lua_createtable(L, 0, 9);
		lua_pushstring(L, label);
		lua_setfield(L, -2, "label");
		lua_pushinteger(L, (lua_Integer)b->n);
		lua_setfield(L, -2, "calls");
		lua_pushnumber(L, total);
		lua_setfield(L, -2, "total_s");
		lua_pushnumber(L, mean * 1e3);
		lua_setfield(L, -2, "mean_ms");
		lua_pushnumber(L, med * 1e3);
		lua_setfield(L, -2, "median_ms");
		lua_pushnumber(L, b->n ? mn * 1e3 : 0);
		lua_setfield(L, -2, "min_ms");
		lua_pushnumber(L, mx * 1e3);
		lua_setfield(L, -2, "max_ms");
		lua_pushnumber(L, sqrt(var) * 1e3);
		lua_setfield(L, -2, "stddev_ms");
	}
	if (log) {
		int res = lua_gettop(L);
		lua_createtable(L, 0, 5);
		lua_pushstring(L, "bench");
		lua_setfield(L, -2, "kind");
		gwb_opt_tag(L, 2, "gwb.bench");
		lua_setfield(L, -2, "tag");
		lua_pushstring(L, "cpu");
		lua_setfield(L, -2, "backend");
		lua_createtable(L, 0, 3);
		lua_pushstring(L, label);
		lua_setfield(L, -2, "label");
		lua_pushnumber(L, seconds);
		lua_setfield(L, -2, "seconds");
		lua_pushinteger(L, runs);
		lua_setfield(L, -2, "runs");
		lua_setfield(L, -2, "params");
		lua_createtable(L, 0, 4);
		lua_getfield(L, res, "total_s");
		lua_pushnumber(L, lua_tonumber(L, -1) * 1e3);
		lua_setfield(L, -3, "total_ms");
		lua_pop(L, 1);
		lua_getfield(L, res, "median_ms");
		lua_setfield(L, -2, "median_ms");
		lua_getfield(L, res, "mean_ms");
		lua_setfield(L, -2, "mean_ms");
		lua_getfield(L, res, "min_ms");
		lua_setfield(L, -2, "min_ms");
		lua_setfield(L, -2, "timing");
		lua_createtable(L, 0, 1);
		lua_getfield(L, res, "calls");
		lua_setfield(L, -2, "calls");
		lua_setfield(L, -2, "metrics");
		gwb_lua_log_run(L, -1);
		lua_pop(L, 1);
	}
	lua_remove(L, ud);
	return 1;
}

static int l_telemetry(lua_State *L)
{
	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TBOOLEAN);
		gwb_prof_set_enabled(lua_toboolean(L, 1));
	}
	lua_pushboolean(L, gwb_prof_enabled());
	return 1;
}

static const gwb_reg gwb_funcs[] = {
	{"bench", l_bench,
	 "gwb.bench(fn [, opts]) -> {calls, total_s, mean_ms, median_ms, min_ms, max_ms, stddev_ms}\n"
	 "Call fn repeatedly and time each call: for opts.seconds (default 1) or opts.runs calls,\n"
	 "after opts.warmup calls (default 1) that are not timed. Shows progress (the live panel\n"
	 "on a terminal), stops cleanly on Ctrl-C, and appends a record to the run log (runs())\n"
	 "unless opts.log = false. opts.label names the run (default \"bench\").\n"
	 "Example: gwb.bench(function() f:predict(test) end, {seconds = 3, label = \"predict\"})"},
	{"telemetry", l_telemetry,
	 "gwb.telemetry([on]) -> on\n"
	 "Get or set kernel telemetry: when off, launches skip the CUDA events and records that\n"
	 "gpu.kernels() and the panel read (to measure its overhead). GWB_TELEMETRY=0 in the\n"
	 "environment starts with it off."},
	{NULL, NULL, NULL},
};

int gwb_open_panel(lua_State *L)
{
	const gwb_reg *r;

	gwb_lua_newlib(L, "panel", panel_funcs);
	lua_pop(L, 1);
	/* gwb.bench and gwb.telemetry join the core `gwb` table */
	if (lua_getglobal(L, "gwb") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setglobal(L, "gwb");
	}
	for (r = gwb_funcs; r->name; r++) {
		char full[64];
		lua_pushcfunction(L, r->fn);
		snprintf(full, sizeof(full), "gwb.%s", r->name);
		gwb_lua_sethelp(L, -1, full, r->help);
		lua_setfield(L, -2, r->name);
	}
	lua_pop(L, 1);
	return 0;
}
