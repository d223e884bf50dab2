/* lapi_core.c - the `gwb` core module: help registry access, version, the default backend,
 * gwb.blas, formatting helpers (fmt.c), CPU count, linked libraries, terminal size and
 * gwb.gpus (lapi_mgpu.c). */
#define _GNU_SOURCE
#include "lapi.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "blas.h"
#include "fmt.h"
#include "gpu.h"
#include "intr.h"
#include "lapack.h"
#include "lapi_error.h"

static int core_helpentry(lua_State *L)
{
	gwb_lua_helptable(L);
	lua_pushvalue(L, 1);
	lua_gettable(L, -2);
	return 1;
}

static int core_helpall(lua_State *L)
{
	gwb_lua_helptable(L);
	return 1;
}

static int core_backend(lua_State *L)
{
	if (!lua_isnoneornil(L, 1)) {
		gwb_backend b;
		if (gwb_backend_parse(luaL_checkstring(L, 1), &b))
			return luaL_error(L, "gwb.backend: %s", gwb_errmsg());
		gwb_backend_default = b;
	}
	lua_pushstring(L, gwb_backend_name(gwb_backend_default));
	return 1;
}

/* gwb.blas([{threads = n}]): which BLAS/LAPACK is loaded and its threads (blas.h). */
static int core_blas(lua_State *L)
{
	static const char *const keys[] = {"threads", NULL};
	gwb_blas_info bi;
	const char *note;

	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TTABLE);
		gwb_opt_check_keys(L, 1, "gwb.blas", keys);
		lua_getfield(L, 1, "threads");
		if (!lua_isnil(L, -1) &&
		    gwb_blas_set_default_threads(gwb_opt_threads(L, 1, "gwb.blas")))
			return luaL_error(L, "gwb.blas: %s", gwb_errmsg());
		lua_pop(L, 1);
	}
	gwb_blas_get_info(&bi);
	note = gwb_blas_reference_note();
	lua_createtable(L, 0, 10);
	lua_pushstring(L, bi.name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, bi.version);
	lua_setfield(L, -2, "version");
	lua_pushstring(L, bi.blas_path);
	lua_setfield(L, -2, "blas");
	lua_pushstring(L, bi.lapack_path);
	lua_setfield(L, -2, "lapack");
	lua_pushinteger(L, bi.threads);
	lua_setfield(L, -2, "threads");
	lua_pushinteger(L, bi.default_threads);
	lua_setfield(L, -2, "default_threads");
	lua_pushstring(L, bi.threads_from);
	lua_setfield(L, -2, "threads_from");
	lua_pushboolean(L, bi.settable);
	lua_setfield(L, -2, "settable");
	lua_pushboolean(L, bi.reference);
	lua_setfield(L, -2, "reference");
	if (note) {
		lua_pushstring(L, note);
		lua_setfield(L, -2, "note");
	}
	return 1;
}

static int core_fmt_bytes(lua_State *L)
{
	char b[48];

	lua_pushstring(L, gwb_fmt_bytes(b, sizeof(b), luaL_checknumber(L, 1)));
	return 1;
}

static int core_fmt_time(lua_State *L)
{
	char b[48];

	lua_pushstring(L, gwb_fmt_ms(b, sizeof(b), luaL_checknumber(L, 1)));
	return 1;
}

static int core_plural(lua_State *L)
{
	char b[160];

	lua_pushstring(L, gwb_fmt_count(b, sizeof(b), (long long)luaL_checkinteger(L, 1),
					luaL_checkstring(L, 2), luaL_optstring(L, 3, NULL)));
	return 1;
}

static int core_cpu_count(lua_State *L)
{
	lua_pushinteger(L, gwb_cpu_count());
	return 1;
}

/* gwb.libraries(): the BLAS and LAPACK in use as gwb.blas() knows them (blas.c: the one place
 * that finds them), OpenBLAS's own description, and the CUDA runtime from this process's
 * maps (libcudart: its real path). */
static int core_libraries(lua_State *L)
{
	gwb_blas_info bi;
	FILE *f;
	char line[4096];
	char *(*config)(void);

	gwb_blas_get_info(&bi);  /* loads BLAS/LAPACK when they were not yet (lapack.h) */
	lua_newtable(L);
	if (bi.blas_path[0]) {
		lua_pushstring(L, bi.blas_path);
		lua_setfield(L, -2, "blas");
	}
	if (bi.lapack_path[0]) {
		lua_pushstring(L, bi.lapack_path);
		lua_setfield(L, -2, "lapack");
	}
	*(void **)&config = gwb_lapack_sym("openblas_get_config");  /* "OpenBLAS 0.3.21 ..." */
	if (config) {
		lua_pushstring(L, config());
		lua_setfield(L, -2, "blas_config");
	}
	if (!(f = fopen("/proc/self/maps", "r")))
		return 1;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), *nl, real[4096];
		if (!path)
			continue;
		if ((nl = strchr(path, '\n')))
			*nl = '\0';
		if (strstr(strrchr(path, '/') + 1, "cudart")) {
			lua_pushstring(L, realpath(path, real) ? real : path);
			lua_setfield(L, -2, "cuda_runtime");
			break;
		}
	}
	fclose(f);
	return 1;
}

static int core_term_size(lua_State *L)
{
	struct winsize ws;

	if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	lua_pushinteger(L, ws.ws_col);
	lua_pushinteger(L, ws.ws_row);
	return 2;
}

static int core_external_bytes(lua_State *L)
{
	size_t collections;

	lua_pushinteger(L, (lua_Integer)gwb_lua_mem_external(L, &collections));
	lua_pushinteger(L, (lua_Integer)collections);
	return 2;
}

static const gwb_reg core_funcs[] = {
	{"term_size", core_term_size, "gwb.term_size() -> columns, rows\n"
	 "The terminal's size when standard output is a terminal; nothing otherwise."},
	{"fmt_bytes", core_fmt_bytes, "gwb.fmt_bytes(n) -> string\n"
	 "A size in the largest fitting unit, as gwb prints them: \"512 B\", \"1.5 KiB\", \"256 MiB\"."},
	{"fmt_time", core_fmt_time, "gwb.fmt_time(ms) -> string\n"
	 "A duration given in ms, as gwb prints them: \"3.14 ms\", \"2.50 s\", \"12.3 s\", \"2 min 5 s\"."},
	{"plural", core_plural, "gwb.plural(n, noun [, plural]) -> string\n"
	 "\"1 iteration\", \"3 iterations\" (gwb.plural(2, \"matrix\", \"matrices\"))."},
	{"gpus", gwb_lua_gpus, "gwb.gpus() -> list [, reason]\n"
	 "The GPUs of this host, one table each: index (the CUDA ordinal that gpus = {...} names),\n"
	 "name, memory_total and memory_free (bytes), sms, pci_bus_id, and peer (peer[j + 1]:\n"
	 "this device reaches device j's memory directly, cudaDeviceCanAccessPeer). Without a GPU\n"
	 "(or in a CPU build) an empty list and the reason, as gpu.available() gives it. The\n"
	 "option gpus = n | {ids} of rf.train, eig.batched, eig.solve and d:to(\"gpu\") picks them.\n"
	 "Example: for _, g in ipairs(gwb.gpus()) do print(g.index, g.name, g.pci_bus_id) end"},
	{"external_bytes", core_external_bytes, "gwb.external_bytes() -> bytes, collections\n"
	 "The C memory held by live gwb objects (Datasets, matrices, sparse matrices, eigen\n"
	 "results, forests) as the collector counts it, and how many full collections that count\n"
	 "has run: dropped objects are collected once it has grown past the larger of 64 MiB and\n"
	 "what was live after the last collection, so a loop that drops a large Matrix each time\n"
	 "stays at about one Matrix. (collectgarbage(\"count\") is Lua's own memory only.)"},
	{"cpu_count", core_cpu_count, "gwb.cpu_count() -> n\n"
	 "CPUs this process may use: the default thread count of every parallel operation."},
	{"libraries", core_libraries, "gwb.libraries() -> {blas, lapack, cuda_runtime, blas_config}\n"
	 "The real paths of the BLAS and LAPACK in use (as gwb.blas() gives them; loaded now if\n"
	 "they were not) and of the CUDA runtime when loaded, and OpenBLAS's own description."},
	{"helpentry", core_helpentry, "gwb.helpentry(x) -> {name, text} or nil\n"
	 "The help record for a value or a dotted name (used by help())."},
	{"suggest", gwb_lua_suggest, "gwb.suggest(word, names [, prefix]) -> string or nil\n"
	 "\"did you mean 'x'?\" for a misspelled word: the nearest of names (a list) by edit\n"
	 "distance, and the usual scikit-learn / pandas names (n_estimators -> trees); nil when\n"
	 "none is near. Example: gwb.suggest(\"n_estimators\", {\"trees\", \"depth\"})"},
	{"helpall", core_helpall, "gwb.helpall() -> table\nEvery help record, by value and by name."},
	{"backend", core_backend, "gwb.backend([name]) -> name\n"
	 "Get or set the default backend for every operation: \"auto\", \"cpu\" or \"gpu\"."},
	{"blas", core_blas, "gwb.blas([{threads = n}]) -> table\n"
	 "The BLAS/LAPACK gwb runs on (found at run time): name (\"OpenBLAS\", \"MKL\", \"BLIS\",\n"
	 "\"FlexiBLAS\", \"reference\", \"unknown\"), version (the library's own description), blas and\n"
	 "lapack (the files dgemm_ and dsyevd_ come from), threads (what a BLAS call uses now),\n"
	 "default_threads, threads_from (\"gwb\": all the CPUs gwb may use, as every gwb operation;\n"
	 "\"gwb.blas\"; or OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / ... when set; \"fixed\" when the\n"
	 "library cannot change it), settable, reference, and note (on the reference BLAS: how to\n"
	 "install OpenBLAS). Inside gwb's own parallel work (batched eig, forests, sparse ops) BLAS\n"
	 "runs on one thread, so the two never oversubscribe the cores; an operation's threads\n"
	 "option (eig.solve) sets it for that call. threads = n sets the default (0: all CPUs).\n"
	 "Example: print(gwb.blas().name, gwb.blas().threads); gwb.blas{threads = 1}"},
	{NULL, NULL, NULL},
};

int gwb_open_core(lua_State *L)
{
	gwb_lua_newlib(L, "gwb", core_funcs);
	lua_pushstring(L, GWB_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushstring(L, gwb_commit);
	lua_setfield(L, -2, "commit");
#ifdef GWB_HAVE_CUDA
	lua_pushboolean(L, 1);
#else
	lua_pushboolean(L, 0);
#endif
	lua_setfield(L, -2, "cuda_build");
	lua_pop(L, 1);
	return 0;
}
