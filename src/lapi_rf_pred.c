/* lapi_rf_pred.c - how a forest's predictions read in Lua: values shown to float precision
 * (gwb_lua_rf_tidy), and on a CUDA build the Predictions userdata "gwb.Predictions" that
 * f:predict / f:predict_proba return when the work ran on the GPU (kernels/rf_predict.cu): the
 * result stays on the device until its first read copies it back once. lapi_forest.c (the
 * Forest's methods) calls it; it uses only lapi.h and the GPU prediction's header. A
 * Predictions userdata owns its gwb_rf_gpu_pred (freed by __gc, __close and p:close()). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "fmt.h"
#include "forest.h"
#include "lapi.h"
#include "lapi_rf.h"
#include "tidy.h"

#define PRED_MT GWB_PRED_MT

/* Predictions are float sums; show them to float precision (7 digits), so 0.65 prints as 0.65
 * and not 0.64999997615814 (tidy.h: the rule the GPU metrics share). */
lua_Number gwb_lua_rf_tidy(float x)
{
	char b[32];
	double r;

	if (gwb_tidy_value_fast(x, &r))
		return r;
	snprintf(b, sizeof(b), "%.7g", (double)x);
	return strtod(b, NULL);
}

#ifdef GWB_HAVE_CUDA
/* ---- Predictions: a GPU prediction kept on the device until read ------------------------------
 * f:predict / f:predict_proba on the GPU return one instead of a table. It reads as the table
 * would (p[i], #p, ipairs, pairs, table.concat); the first read copies the whole result back
 * once and caches it; p:totable() gives a plain table. Uservalue 1: f.labels. */

typedef gwb_lua_pred pbox;  /* lapi_rf.h: the metrics module reads it too */

static int pred_release(lua_State *L)
{
	pbox *b = gwb_lua_toudata(L, 1, PRED_MT);   /* (another type's value: nothing to free) */

	if (!b)
		return 0;
	gwb_rf_gpu_pred_free(b->p);
	b->p = NULL;
	return 0;
}

static pbox *checkpred(lua_State *L, int idx)
{
	pbox *b = gwb_lua_checkudata(L, idx, PRED_MT, PRED_MT);
	if (!b->p)
		luaL_error(L, "Predictions: closed");
	return b;
}

/* Push row i (0-based) of the prediction. */
static void pred_push(lua_State *L, int self, pbox *b, size_t i)
{
	gwb_rf_gpu_pred *p = b->p;
	const void *h;
	int k;

	gwb_lua_check(L, gwb_rf_gpu_pred_host(p, &h));
	if (p->what == GWB_RF_OUT_LABELS) {
		int32_t c = ((const int32_t *)h)[i];
		if (b->codes) {
			lua_pushinteger(L, c + 1);
			return;
		}
		lua_getiuservalue(L, self, 1);
		if (lua_rawgeti(L, -1, c + 1) == LUA_TNIL) {
			lua_pop(L, 1);
			lua_pushinteger(L, c + 1);
		}
		lua_remove(L, -2);
	} else if (p->what == GWB_RF_OUT_PROBA) {
		const float *v = (const float *)h + i * (size_t)p->per_row;
		lua_createtable(L, p->per_row, 0);
		for (k = 0; k < p->per_row; k++) {
			lua_pushnumber(L, gwb_tidy_proba(v[k]));
			lua_rawseti(L, -2, k + 1);
		}
	} else {
		lua_pushnumber(L, gwb_lua_rf_tidy(((const float *)h)[i]));
	}
}

static void push_pred_timing(lua_State *L, const gwb_rf_gpu_pred *p)
{
	lua_createtable(L, 0, 5);
	SETN("total_ms", p->stats.total_ms);
	SETN("kernel_ms", p->stats.kernel_ms);
	SETN("transfer_ms", p->stats.transfer_ms);
	SETN("host_ms", fmax(0, p->stats.total_ms - p->stats.kernel_ms - p->stats.transfer_ms));
	SETN("read_ms", p->read_ms);
}

static int pred_index(lua_State *L)
{
	pbox *b;
	int isint = 0;
	lua_Integer i;

	if (gwb_lua_index_close(L))
		return 1;
	b = checkpred(L, 1);
	i = lua_type(L, 2) == LUA_TNUMBER ? lua_tointegerx(L, 2, &isint) : 0;

	if (isint) {  /* p[2.0] reads as p[2], as a table's would */
		if (i < 1 || (size_t)i > b->p->rows)
			lua_pushnil(L);
		else
			pred_push(L, 1, b, (size_t)i - 1);
		return 1;
	}
	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *k = lua_tostring(L, 2);
		if (!strcmp(k, "rows")) {
			lua_pushinteger(L, (lua_Integer)b->p->rows);
			return 1;
		}
		if (!strcmp(k, "device")) {
			lua_pushstring(L, "gpu");
			return 1;
		}
		if (!strcmp(k, "timing")) {
			push_pred_timing(L, b->p);
			return 1;
		}
		if (!strcmp(k, "note")) {
			if (b->note)
				lua_pushstring(L, b->note);
			else
				lua_pushnil(L);
			return 1;
		}
	}
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__methods");
	lua_pushvalue(L, 2);
	lua_gettable(L, -2);  /* not raw: a miss is remembered for "did you mean" */
	return 1;
}

static int pred_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)checkpred(L, 1)->p->rows);
	return 1;
}

static int pred_next(lua_State *L)
{
	pbox *b = checkpred(L, 1);
	lua_Integer i = luaL_optinteger(L, 2, 0) + 1;
	if (i < 1 || (size_t)i > b->p->rows)
		return 0;
	lua_pushinteger(L, i);
	pred_push(L, 1, b, (size_t)i - 1);
	return 2;
}

static int pred_pairs(lua_State *L)
{
	checkpred(L, 1);
	lua_pushcfunction(L, pred_next);
	lua_pushvalue(L, 1);
	lua_pushinteger(L, 0);
	return 3;
}

static int pred_totable(lua_State *L)
{
	pbox *b = checkpred(L, 1);
	size_t i;

	lua_createtable(L, (int)b->p->rows, 0);
	for (i = 0; i < b->p->rows; i++) {
		pred_push(L, 1, b, i);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int pred_tostring(lua_State *L)
{
	pbox *b = gwb_lua_checkudata(L, 1, PRED_MT, PRED_MT);
	const char *what;

	if (!b->p) {
		lua_pushstring(L, "Predictions (closed)");
		return 1;
	}
	what = b->p->what == GWB_RF_OUT_LABELS ? "class labels" :
	       b->p->what == GWB_RF_OUT_PROBA ? "class probability rows" : "values";
	lua_pushfstring(L, "Predictions: %I %s on the gpu (%s), %f ms", (lua_Integer)b->p->rows,
			what, b->p->host ? "read: cached on the host" : "not read yet",
			b->p->stats.total_ms);
	return 1;
}

static const gwb_reg pred_methods[] = {
	{"totable", pred_totable,
	 "p:totable() -> array\n"
	 "The predictions as a plain Lua table (f:predict on the GPU returns a Predictions\n"
	 "object that reads like one: p[i], #p, ipairs(p); the result stays on the device\n"
	 "until the first read, which copies it back once).\n"
	 "Example: t = f:predict(big):totable()"},
	{"close", pred_release, "p:close()\nFree the predictions now (device memory too)."},
	{NULL, NULL, NULL},
};

/* Predict on the GPU when that is where the work goes; pushes a Predictions object and
 * returns true, else pushes nothing and returns false (the caller uses the CPU). */
bool gwb_lua_rf_predict_gpu(lua_State *L, gwb_forest *f, gwb_dataset *d, gwb_rf_out what, bool codes,
			const char *note)
{
	bool use = false;
	pbox *b;
	gwb_status st;

	if (!gwb_forest_predict_maybe_gpu(f, d))
		return false;
	gwb_lua_check(L, gwb_rf_predict_wants_gpu(f, d, &use));
	if (!use)
		return false;
	b = gwb_lua_newudata(L, sizeof(pbox), 1, PRED_MT);  /* empty first: __gc is always safe */
	b->codes = codes;
	b->note = note;
	if (!gwb_dataset_gpu_X(d)) {  /* host-resident d meets the forest on the GPU: say so */
		char by[32];
		snprintf(b->note_buf, sizeof(b->note_buf), "%s%sd is on the host: %s of features "
			 "copied to the GPU for this call (d:to(\"gpu\") keeps them there)",
			 note ? note : "", note ? "; " : "",
			 gwb_fmt_bytes(by, sizeof(by), (double)d->rows * d->features * sizeof(float)));
		b->note = b->note_buf;
	}
	st = gwb_rf_predict_gpu_keep(f, d, what, &b->p);
	if ((st == GWB_EINVAL || st == GWB_ENOMEM) && !gwb_dataset_gpu_X(d)) {
		gwb_error_clear();  /* a forest or data the GPU path does not take: the CPU does */
		lua_pop(L, 1);
		return false;
	}
	gwb_lua_check(L, st);
	lua_createtable(L, f->classes, 0);  /* nil where a class has no name: its number reads */
	for (int k = 0; k < f->classes; k++)
		if (f->class_names[k]) {
			lua_pushstring(L, f->class_names[k]);
			lua_rawseti(L, -2, k + 1);
		}
	lua_setiuservalue(L, -2, 1);
	return true;
}

void gwb_lua_rf_pred_newclass(lua_State *L)
{
	static const luaL_Reg pmeta[] = {
		{"__gc", pred_release},
		{"__close", pred_release},
		{"__tostring", pred_tostring},
		{"__index", pred_index},
		{"__len", pred_len},
		{"__pairs", pred_pairs},
		{NULL, NULL},
	};

	gwb_lua_newclass(L, PRED_MT, pred_methods, pmeta);
}
#endif
