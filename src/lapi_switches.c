/* lapi_switches.c - the optimisation switches at the Lua boundary: gwb.switches (list, set
 * globally), opts.switches on the calls that take it (a wrapper installed around each, so the
 * switches are restored however the call ends), and the C half of gwb.ablate
 * (lua/gwb/ablate.lua): the ablation level, read counts, kernel time, result comparison. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dataset.h"
#include "dense.h"
#include "eig.h"
#include "forest.h"
#include "intr.h"
#include "lapi.h"
#include "prof.h"
#include "switches.h"

static const char *backends_name(unsigned b)
{
	return b == (GWB_SW_CPU | GWB_SW_GPU) ? "cpu+gpu" : b == GWB_SW_GPU ? "gpu" : "cpu";
}

/* A layer from the table at idx: {["rf.subtract"] = false, ...}; values booleans (or, when
 * allow_default, the string "default" for -1). Raises naming fn and the bad entry. */
static void read_layer(lua_State *L, int idx, const char *fn, bool allow_default,
		       gwb_switch_layer *out)
{
	idx = lua_absindex(L, idx);
	gwb_switch_layer_clear(out);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		int id = gwb_switch_find(name);
		if (!name)
			luaL_error(L, "%s: switch names are strings such as \"rf.subtract\" (got a %s "
				   "key)", fn, luaL_typename(L, -2));
		if (id < 0)
			gwb_lua_fail(L, gwb_switch_unknown(fn, name));
		if (lua_type(L, -1) == LUA_TBOOLEAN)
			out->v[id] = (int8_t)lua_toboolean(L, -1);
		else if (allow_default && lua_type(L, -1) == LUA_TSTRING &&
			 !strcmp(lua_tostring(L, -1), "default"))
			out->v[id] = -1;
		else
			luaL_error(L, "%s: switch \"%s\" takes true or false%s (got %s)", fn, name,
				   allow_default ? " or \"default\"" : "", luaL_typename(L, -1));
		lua_pop(L, 1);
	}
}

/* --- gwb.switches ----------------------------------------------------------------------- */

static void push_row(lua_State *L, int id)
{
	const gwb_switch_info *s = gwb_switch_get(id);
	const char *src;
	bool on = gwb_switch_peek((gwb_switch_id)id, &src);

	lua_createtable(L, 0, 10);
	lua_pushstring(L, s->name);
	lua_setfield(L, -2, "name");
	lua_pushboolean(L, on);
	lua_setfield(L, -2, "on");
	lua_pushboolean(L, s->def);
	lua_setfield(L, -2, "default");
	lua_pushstring(L, src);
	lua_setfield(L, -2, "source");
	lua_pushstring(L, backends_name(s->backends));
	lua_setfield(L, -2, "backends");
	lua_pushstring(L, s->desc);
	lua_setfield(L, -2, "description");
	lua_pushstring(L, s->on_path);
	lua_setfield(L, -2, "on_path");
	lua_pushstring(L, s->off_path);
	lua_setfield(L, -2, "off_path");
	lua_pushstring(L, s->env);
	lua_setfield(L, -2, "env");
	lua_pushstring(L, s->env_doc);
	lua_setfield(L, -2, "env_doc");
}

static int list_tostring(lua_State *L)
{
	luaL_Buffer b;
	char line[512];
	lua_Integer n = luaL_len(L, 1);

	luaL_buffinit(L, &b);
	snprintf(line, sizeof(line), "%-16s %-4s %-7s %-8s %s\n", "switch", "on", "backend",
		 "set by", "what it selects");
	luaL_addstring(&b, line);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_geti(L, 1, i);
		lua_getfield(L, -1, "name");
		lua_getfield(L, -2, "on");
		lua_getfield(L, -3, "backends");
		lua_getfield(L, -4, "source");
		lua_getfield(L, -5, "description");
		snprintf(line, sizeof(line), "%-16s %-4s %-7s %-8s %s\n", lua_tostring(L, -5),
			 lua_toboolean(L, -4) ? "on" : "off", lua_tostring(L, -3),
			 lua_tostring(L, -2), lua_tostring(L, -1));
		lua_pop(L, 6);
		if (i == n)
			line[strlen(line) - 1] = 0;  /* print adds the last newline */
		luaL_addstring(&b, line);
	}
	luaL_pushresult(&b);
	return 1;
}

static void push_list(lua_State *L)
{
	lua_createtable(L, GWB_SW_COUNT, 0);
	for (int i = 0; i < GWB_SW_COUNT; i++) {
		push_row(L, i);
		lua_seti(L, -2, i + 1);
	}
	if (luaL_newmetatable(L, "gwb.SwitchList")) {
		lua_pushcfunction(L, list_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_setmetatable(L, -2);
}

static int l_switches(lua_State *L)
{
	if (lua_isnoneornil(L, 1)) {
		push_list(L);
		return 1;
	}
	if (lua_type(L, 1) == LUA_TSTRING) {
		const char *what = lua_tostring(L, 1);
		int id = gwb_switch_find(what);
		if (!strcmp(what, "reset")) {
			for (int i = 0; i < GWB_SW_COUNT; i++)
				gwb_switch_set_global(i, -1);
			push_list(L);
			return 1;
		}
		if (id < 0)
			return gwb_lua_fail(L, gwb_switch_unknown("gwb.switches", what));
		lua_pushboolean(L, gwb_switch_peek((gwb_switch_id)id, NULL));
		return 1;
	}
	luaL_argexpected(L, lua_istable(L, 1), 1, "a table {[\"name\"] = true | false | "
			 "\"default\"}, a switch name or \"reset\"");
	gwb_switch_layer l;
	read_layer(L, 1, "gwb.switches", true, &l);
	/* the previous global values of what changes: pass it back to restore */
	lua_newtable(L);
	lua_pushnil(L);
	while (lua_next(L, 1)) {
		int id = gwb_switch_find(lua_tostring(L, -2));
		int old = gwb_switch_global(id);
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		if (old < 0)
			lua_pushstring(L, "default");
		else
			lua_pushboolean(L, old);
		lua_settable(L, -4);
	}
	lua_pushnil(L);
	while (lua_next(L, 1)) {
		int id = gwb_switch_find(lua_tostring(L, -2));
		gwb_switch_set_global(id, l.v[id]);
		lua_pop(L, 1);
	}
	return 1;
}

/* --- opts.switches: a wrapper around each function that takes it ------------------------ */

#define SCOPE_MT "gwb.SwitchScope"

static int scope_close(lua_State *L)
{
	/* the tagged lookup (lapi.c): another type's userdata given this metatable by hand is
	 * left alone (it may be shorter than a layer: a 16-byte box against 17 switches) */
	gwb_switch_layer *saved = gwb_lua_toudata(L, 1, SCOPE_MT);

	if (saved)
		gwb_switch_call_pop(saved);
	return 0;
}

/* upvalues: the wrapped function, the options' argument index, the function's name */
static int with_switches(lua_State *L)
{
	int oi = (int)lua_tointeger(L, lua_upvalueindex(2));
	const char *fn = lua_tostring(L, lua_upvalueindex(3));
	int n = lua_gettop(L), base;

	if (n < oi || !lua_istable(L, oi) || lua_getfield(L, oi, "switches") == LUA_TNIL) {
		if (n >= oi && lua_istable(L, oi))
			lua_pop(L, 1);
		lua_pushvalue(L, lua_upvalueindex(1));
		lua_insert(L, 1);
		lua_call(L, n, LUA_MULTRET);
		return lua_gettop(L);
	}
	if (!lua_istable(L, -1))
		return luaL_error(L, "%s: opts.switches must be a table such as "
				  "{[\"rf.subtract\"] = false} (got %s)", fn, luaL_typename(L, -1));
	gwb_switch_layer over;
	read_layer(L, -1, fn, false, &over);
	lua_pop(L, 1);
	/* the options without `switches` (a shallow copy: the caller's table is not changed) */
	lua_newtable(L);
	lua_pushnil(L);
	while (lua_next(L, oi)) {
		if (lua_type(L, -2) == LUA_TSTRING && !strcmp(lua_tostring(L, -2), "switches")) {
			lua_pop(L, 1);
			continue;
		}
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_settable(L, -4);
	}
	lua_replace(L, oi);
	/* the guard: closed (switches restored) when this function returns or raises */
	gwb_switch_layer *saved = gwb_lua_newudata(L, sizeof(*saved), 0, SCOPE_MT);
	gwb_switch_call_push(&over, saved);
	lua_toclose(L, -1);
	base = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	for (int i = 1; i <= n; i++)
		lua_pushvalue(L, i);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L) - base;
}

/* Replace t[key] (t at idx) by the wrapper, with the same help entry. */
static void wrap(lua_State *L, int idx, const char *key, int opts_arg, const char *name,
		 const char *shown)
{
	idx = lua_absindex(L, idx);
	if (lua_getfield(L, idx, key) != LUA_TFUNCTION) {
		lua_pop(L, 1);
		return;
	}
	lua_pushinteger(L, opts_arg);
	lua_pushstring(L, shown);
	lua_pushcclosure(L, with_switches, 3);
	/* help[wrapper] = help[original] (lapi.c keys entries by value and by name) */
	if (lua_getfield(L, LUA_REGISTRYINDEX, "gwb.help") == LUA_TTABLE) {
		lua_getfield(L, -1, name);
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "text");
			lua_pushstring(L, "\nAlso opts.switches = {[\"name\"] = false, ...}: optimisation "
				       "switches for this call only (gwb.switches lists them).");
			lua_concat(L, 2);
			lua_setfield(L, -2, "text");
			lua_pushvalue(L, -3);
			lua_insert(L, -2);
			lua_settable(L, -3);
		} else {
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	lua_setfield(L, idx, key);
}

static const struct {
	const char *global, *key;   /* a module table, or a class metatable ("gwb.Dataset") */
	int opts_arg;
	const char *name;           /* as help() knows it */
	const char *shown;          /* in error messages */
} wrapped[] = {
	{"rf", "train", 2, "rf.train", "rf.train"},
	{"rf", "cv", 2, "rf.cv", "rf.cv"},
	{"eig", "solve", 2, "eig.solve", "eig.solve"},
	{"eig", "batched", 2, "eig.batched", "eig.batched"},
	{"eig", "svd", 2, "eig.svd", "eig.svd"},
	{"data", "load", 2, "data.load", "data.load"},
	{"gwb.Dataset", "transpose", 2, "gwb.Dataset:transpose", "d:transpose"},
	{"gwb.Forest", "predict", 3, "gwb.Forest:predict", "f:predict"},
	{"gwb.Forest", "predict_proba", 3, "gwb.Forest:predict_proba", "f:predict_proba"},
	{"gwb.Forest", "score", 3, "gwb.Forest:score", "f:score"},
};

static void install_wrappers(lua_State *L)
{
	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++) {
		if (!strncmp(wrapped[i].global, "gwb.", 4)) {
			if (luaL_getmetatable(L, wrapped[i].global) == LUA_TTABLE) {
				if (lua_getfield(L, -1, "__methods") != LUA_TTABLE) {
					lua_pop(L, 1);
					lua_getfield(L, -1, "__index");
				}
				if (lua_istable(L, -1))
					wrap(L, -1, wrapped[i].key, wrapped[i].opts_arg, wrapped[i].name,
					     wrapped[i].shown);
				lua_pop(L, 1);
			}
		} else if (lua_getglobal(L, wrapped[i].global) == LUA_TTABLE) {
			wrap(L, -1, wrapped[i].key, wrapped[i].opts_arg, wrapped[i].name,
			     wrapped[i].shown);
		}
		lua_pop(L, 1);
	}
}

/* --- gwb.ablate's C half (gwb._ablate) -------------------------------------------------- */

/* _ablate.set(layer | nil): the ablation level */
static int a_set(lua_State *L)
{
	gwb_switch_layer l;

	if (lua_isnoneornil(L, 1)) {
		gwb_switch_ablate(NULL);
		return 0;
	}
	luaL_checktype(L, 1, LUA_TTABLE);
	read_layer(L, 1, "gwb.ablate", false, &l);
	gwb_switch_ablate(&l);
	return 0;
}

/* _ablate.reads([reset]) -> {name = count} */
static int a_reads(lua_State *L)
{
	lua_newtable(L);
	for (int i = 0; i < GWB_SW_COUNT; i++) {
		lua_pushinteger(L, (lua_Integer)gwb_switch_reads(i));
		lua_setfield(L, -2, gwb_switch_get(i)->name);
	}
	if (lua_toboolean(L, 1))
		gwb_switch_reads_reset();
	return 1;
}

/* _ablate.kernel_ms() -> kernel ms recorded so far (waits for pending launches) */
static int a_kernel_ms(lua_State *L)
{
	double k = 0, t = 0;
	gwb_prof_flush();
	gwb_prof_totals(&k, &t);
	lua_pushnumber(L, k);
	lua_pushnumber(L, t);
	return 2;
}

/* Float arrays equal bit for bit (NaNs alike); *first gets the first index that differs. */
static bool same_f32(const float *a, const float *b, size_t n, size_t *first)
{
	if (!memcmp(a, b, n * sizeof(float)))
		return true;
	for (size_t i = 0; i < n; i++)
		if (memcmp(a + i, b + i, sizeof(float))) {
			*first = i;
			return false;
		}
	return true;
}

static bool close_rel(double a, double b, double tol)
{
	if (a == b || (isnan(a) && isnan(b)))
		return true;
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

static int cmp_forest(lua_State *L, const gwb_forest *a, const gwb_forest *b, double tol)
{
	int differ = 0, first = -1;
	if (a->trees != b->trees || a->features != b->features || a->outputs != b->outputs) {
		lua_pushboolean(L, 0);
		lua_pushfstring(L, "different forests: %d vs %d trees", a->trees, b->trees);
		return 2;
	}
	for (int t = 0; t < a->trees; t++) {
		int64_t o = a->tree_offset[t], n = a->tree_offset[t + 1] - o;
		bool same = n == b->tree_offset[t + 1] - b->tree_offset[t] &&
			    o == b->tree_offset[t];
		for (int64_t g = o; same && g < o + n; g++) {
			same = a->feature[g] == b->feature[g] &&
			       a->threshold_bin[g] == b->threshold_bin[g] &&
			       a->nan_left[g] == b->nan_left[g] && a->left[g] == b->left[g] &&
			       a->right[g] == b->right[g] && a->count[g] == b->count[g] &&
			       close_rel(a->weight[g], b->weight[g], tol);
			for (int k = 0; same && k < a->outputs; k++)
				same = close_rel(a->value[g * a->outputs + k],
						 b->value[g * a->outputs + k], tol);
		}
		if (!same) {
			differ++;
			if (first < 0)
				first = t;
		}
	}
	lua_pushboolean(L, differ == 0);
	if (differ)
		lua_pushfstring(L, "%d of %d trees differ (first: tree %d)", differ, a->trees,
				first + 1);
	else
		lua_pushfstring(L, "same trees (%d)", a->trees);
	return 2;
}

static int cmp_eigen(lua_State *L, const gwb_eigen *a, const gwb_eigen *b, double tol)
{
	double worst = 0, allowed = 0;
	if (a->n != b->n || a->k != b->k || a->count != b->count) {
		lua_pushboolean(L, 0);
		lua_pushfstring(L, "different shapes: %d x %d pairs vs %d x %d", (int)a->count,
				(int)a->k, (int)b->count, (int)b->k);
		return 2;
	}
	for (size_t m = 0; m < a->count; m++) {
		double scale = 0, ra = 0, rb = 0;
		for (size_t i = 0; i < a->k; i++) {
			size_t at = m * a->k + i;
			scale = fmax(scale, fmax(fabs(a->values[at]), fabs(b->values[at])));
			if (a->residuals && !isnan(a->residuals[at]))
				ra = fmax(ra, a->residuals[at]);
			if (b->residuals && !isnan(b->residuals[at]))
				rb = fmax(rb, b->residuals[at]);
		}
		/* |lambda - lambda*| <= residual ||A|| (residuals are relative to ||A||), plus
		 * rounding of the precision the solvers worked in */
		bool f32 = !strcmp(a->dtype, "f32") || !strcmp(b->dtype, "f32");
		double lim = tol > 0 ? tol * scale
				     : (2 * (ra + rb) + (f32 ? 1e-5 : 1e-12)) * (scale > 0 ? scale : 1);
		for (size_t i = 0; i < a->k; i++) {
			size_t at = m * a->k + i;
			double d = fabs(a->values[at] - b->values[at]);
			if (isnan(d) || d > lim) {
				lua_pushboolean(L, 0);
				lua_pushfstring(L, "value %d%s differs by %f (allowed %f)", (int)i + 1,
						a->count > 1 ? " of a matrix" : "", d, lim);
				return 2;
			}
			if (d / (lim > 0 ? lim : 1) > worst / (allowed > 0 ? allowed : 1)) {
				worst = d;
				allowed = lim;
			}
		}
	}
	lua_pushboolean(L, 1);
	{
		char msg[96];
		snprintf(msg, sizeof(msg), "values agree (max diff %.2g, allowed %.2g)", worst,
			 allowed);
		lua_pushstring(L, msg);
	}
	return 2;
}

static int cmp_dataset(lua_State *L, const gwb_dataset *a, const gwb_dataset *b)
{
	size_t first = 0;
	if (a->rows != b->rows || a->features != b->features || a->task != b->task) {
		lua_pushboolean(L, 0);
		lua_pushfstring(L, "different shapes: %d x %d vs %d x %d", (int)a->rows, a->features,
				(int)b->rows, b->features);
		return 2;
	}
	if (!same_f32(a->X, b->X, a->rows * (size_t)a->features, &first)) {
		lua_pushboolean(L, 0);
		lua_pushfstring(L, "feature values differ (first: row %d, column %d)",
				(int)(first % a->rows) + 1, (int)(first / a->rows) + 1);
		return 2;
	}
	if ((a->y && memcmp(a->y, b->y, a->rows * sizeof(int32_t))) ||
	    (a->yr && !same_f32(a->yr, b->yr, a->rows, &first))) {
		lua_pushboolean(L, 0);
		lua_pushstring(L, "targets differ");
		return 2;
	}
	lua_pushboolean(L, 1);
	lua_pushfstring(L, "same data (%d x %d)", (int)a->rows, a->features);
	return 2;
}

static int cmp_matrix(lua_State *L, const gwb_matrix *a, const gwb_matrix *b, double tol)
{
	size_t n = a->rows * a->cols * a->count;
	if (a->rows != b->rows || a->cols != b->cols || a->count != b->count ||
	    a->dtype != b->dtype || a->layout != b->layout) {
		lua_pushboolean(L, 0);
		lua_pushstring(L, "different shapes, types or layouts");
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		double x = a->dtype == GWB_F32 ? ((float *)a->data)[i] : ((double *)a->data)[i];
		double y = b->dtype == GWB_F32 ? ((float *)b->data)[i] : ((double *)b->data)[i];
		if (!close_rel(x, y, tol)) {
			lua_pushboolean(L, 0);
			lua_pushfstring(L, "element %d differs", (int)i + 1);
			return 2;
		}
	}
	lua_pushboolean(L, 1);
	lua_pushstring(L, "same matrix");
	return 2;
}

/* _ablate.compare(a, b [, tol]) -> ok, detail | nil (not one of gwb's objects) */
static int a_compare(lua_State *L)
{
	double tol = luaL_optnumber(L, 3, 0);
	const char *types[] = {"gwb.Forest", "gwb.Eigen", "gwb.Dataset", "gwb.Matrix"};
	int which = -1;

	for (int i = 0; i < 4; i++)
		if (luaL_testudata(L, 1, types[i]))
			which = i;
	if (which < 0)
		return 0;
	if (!luaL_testudata(L, 2, types[which])) {
		lua_pushboolean(L, 0);
		lua_pushfstring(L, "a %s against a %s", types[which], luaL_typename(L, 2));
		return 2;
	}
	void *a = gwb_lua_checkbox(L, 1, types[which], types[which], "result");
	void *b = gwb_lua_checkbox(L, 2, types[which], types[which], "result");
	switch (which) {
	case 0:
		return cmp_forest(L, a, b, tol > 0 ? tol : 1e-6);
	case 1:
		return cmp_eigen(L, a, b, tol);
	case 2:
		return cmp_dataset(L, a, b);
	default:
		return cmp_matrix(L, a, b, tol);
	}
}

/* _ablate.info(name) -> backends, applies-to-cpu, applies-to-gpu (nil for an unknown name) */
static int a_info(lua_State *L)
{
	int id = gwb_switch_find(luaL_checkstring(L, 1));
	if (id < 0)
		return gwb_lua_fail(L, gwb_switch_unknown(luaL_optstring(L, 2, "gwb.ablate"),
							  lua_tostring(L, 1)));
	const gwb_switch_info *s = gwb_switch_get(id);
	lua_pushstring(L, backends_name(s->backends));
	lua_pushboolean(L, (s->backends & GWB_SW_CPU) != 0);
	lua_pushboolean(L, (s->backends & GWB_SW_GPU) != 0);
	return 3;
}

/* _ablate.now() -> seconds (the monotonic clock every timing uses) */
static int a_now(lua_State *L)
{
	lua_pushnumber(L, gwb_now());
	return 1;
}

static const luaL_Reg ablate_funcs[] = {
	{"set", a_set}, {"reads", a_reads}, {"kernel_ms", a_kernel_ms}, {"now", a_now},
	{"compare", a_compare}, {"info", a_info}, {NULL, NULL},
};

int gwb_open_switches(lua_State *L)
{
	if (luaL_newmetatable(L, SCOPE_MT)) {
		lua_pushcfunction(L, scope_close);
		lua_setfield(L, -2, "__close");
	}
	lua_pop(L, 1);
	if (lua_getglobal(L, "gwb") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setglobal(L, "gwb");
	}
	lua_pushcfunction(L, l_switches);
	gwb_lua_sethelp(L, -1, "gwb.switches",
		"gwb.switches([settings | name | \"reset\"]) -> list | previous | on\n"
		"The optimisation switches: every named code path that can be turned off to\n"
		"measure what it buys (one registry, src/switches.c). gwb.switches() lists them\n"
		"(name, on, default, backends, source, description, on_path, off_path, env).\n"
		"gwb.switches{[\"rf.subtract\"] = false} sets them for the session (true, false, or\n"
		"\"default\" to unset) and returns the previous settings, to pass back to restore;\n"
		"gwb.switches(\"rf.subtract\") -> the value in effect; gwb.switches(\"reset\") unsets\n"
		"all. One call: opts.switches = {...} on rf.train, rf.cv, eig.solve, eig.batched,\n"
		"eig.svd, data.load, d:transpose, f:predict, f:predict_proba, f:score. Strongest\n"
		"first: gwb.ablate's run, the call's opts.switches, gwb.switches{...}, the old\n"
		"environment variables (GWB_RF_SUBTRACT=0, GWB_RF_ROWMAJOR=0,\n"
		"GWB_RF_PREDICT_VOTE=atomic, GWB_EIG_COLMAJOR=1, GWB_JACOBI_BLOCK=w), the default.\n"
		"Example: print(gwb.switches()); f = rf.train(d, {switches = {[\"rf.subtract\"] = false}})");
	lua_setfield(L, -2, "switches");
	luaL_newlib(L, ablate_funcs);
	lua_setfield(L, -2, "_ablate");
	lua_pop(L, 1);
	install_wrappers(L);
	return 0;
}
