/* lapi_metrics.c - the `metrics` Lua module: each function takes the truth and a prediction as
 * Lua arrays, Predictions objects (f:predict on the GPU) or Datasets (their target column),
 * maps class labels to codes (the sorted union of the labels, numbers numerically, as
 * scikit-learn's unique_labels), says which predicted labels the truth never has, and calls
 * metrics.c. The report printing, curve drawing and f:evaluate are lua/gwb/metrics.lua's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "lapi.h"
#include "metrics.h"
#ifdef GWB_HAVE_CUDA
#include "lapi_rf.h"
#include "switches.h"
#include "../kernels/metrics.h"
#include "../kernels/rf.h"
#endif

#define DATASET_MT "gwb.Dataset"

#ifdef GWB_HAVE_CUDA
/* The kept GPU prediction at idx when the metric runs on the device: a Predictions object
 * (lapi_rf.h) holding `what`, with the switch metrics.gpu on; else NULL (the host reads it). */
static gwb_lua_pred *dev_pred(lua_State *L, int idx, gwb_rf_out what)
{
	gwb_lua_pred *b = gwb_lua_testudata(L, idx, GWB_PRED_MT);

	if (!b || !b->p || b->p->what != what || !gwb_switch_on(GWB_SW_METRICS_GPU))
		return NULL;
	return b;
}
#endif

/* ---- reading the arguments ---------------------------------------------------------------- */

/* The Dataset at idx, or NULL when the value is something else. */
static gwb_dataset *as_dataset(lua_State *L, int idx)
{
	if (!gwb_lua_testudata(L, idx, DATASET_MT))
		return NULL;
	return gwb_lua_checkdataset(L, idx);
}

static size_t length_of(lua_State *L, int idx, const char *fn, const char *what)
{
	gwb_dataset *d = as_dataset(L, idx);
	int t = lua_type(L, idx);

	if (d)
		return d->rows;
	if (t != LUA_TTABLE && t != LUA_TUSERDATA)
		luaL_error(L, "%s: the %s must be an array, a Predictions object or a Dataset "
			   "(got %s)", fn, what, luaL_typename(L, idx));
	return (size_t)luaL_len(L, idx);
}

static void same_length(lua_State *L, size_t a, size_t b, const char *fn, const char *what)
{
	if (a != b)
		luaL_error(L, "%s: the truth has %I rows and the %s %I: they must be the same rows, "
			   "in the same order", fn, (lua_Integer)a, what, (lua_Integer)b);
	if (!a)
		luaL_error(L, "%s: no rows", fn);
}

/* Replace the value on top of the stack by its label key: a string (numbers as their shortest
 * exact form, so 1, 1.0 and "1" are one label). what[i] names it in errors. */
static void to_key(lua_State *L, const char *fn, const char *what, lua_Integer i)
{
	char b[40];
	int t = lua_type(L, -1);

	if (t == LUA_TSTRING)
		return;
	if (t == LUA_TNUMBER) {
		if (lua_isinteger(L, -1)) {
			snprintf(b, sizeof(b), "%lld", (long long)lua_tointeger(L, -1));
		} else {
			double v = lua_tonumber(L, -1);
			if (v == floor(v) && fabs(v) < 9e15)
				snprintf(b, sizeof(b), "%.0f", v);
			else
				snprintf(b, sizeof(b), "%.17g", v);
		}
		lua_pop(L, 1);
		lua_pushstring(L, b);
		return;
	}
	if (t == LUA_TBOOLEAN) {
		int v = lua_toboolean(L, -1);
		lua_pop(L, 1);
		lua_pushstring(L, v ? "true" : "false");
		return;
	}
	luaL_error(L, "%s: %s[%I] is %s, expected a class label (a string or a number)", fn, what,
		   i, luaL_typename(L, -1));
}

/* Push the label key of element i (1-based) of the array (or Dataset d) at idx. */
static void push_key(lua_State *L, int idx, gwb_dataset *d, lua_Integer i, const char *fn,
		     const char *what)
{
	if (d) {
		if (d->task != GWB_TASK_CLASSIFICATION)
			luaL_error(L, "%s: the %s Dataset has a regression target (%s): this metric "
				   "needs class labels", fn, what, d->target ? d->target : "y");
		int32_t c = d->y[i - 1];
		if (d->class_names && d->class_names[c])
			lua_pushstring(L, d->class_names[c]);
		else
			lua_pushfstring(L, "%d", c + 1);
		return;
	}
	lua_geti(L, idx, i);
	to_key(L, fn, what, i);
}

/* The label set: a table key -> true at set, from the n elements of the array at idx. */
static void collect(lua_State *L, int idx, size_t n, int set, const char *fn, const char *what)
{
	gwb_dataset *d = as_dataset(L, idx);
	size_t i;

	if (d && d->task == GWB_TASK_CLASSIFICATION) {
		for (int k = 0; k < d->classes; k++) {  /* only the classes that occur */
			bool seen = false;
			for (i = 0; i < n && !seen; i++)
				seen = d->y[i] == k;
			if (!seen)
				continue;
			if (d->class_names && d->class_names[k])
				lua_pushstring(L, d->class_names[k]);
			else
				lua_pushfstring(L, "%d", k + 1);
			lua_pushboolean(L, 1);
			lua_rawset(L, set);
		}
		return;
	}
	for (i = 1; i <= n; i++) {
		push_key(L, idx, d, (lua_Integer)i, fn, what);
		lua_pushboolean(L, 1);
		lua_rawset(L, set);
	}
}

static bool all_numeric;

static int key_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	if (all_numeric) {
		double u = strtod(x, NULL), v = strtod(y, NULL);
		if (u != v)
			return u < v ? -1 : 1;
	}
	return strcmp(x, y);
}

static bool numeric(const char *s)
{
	char *end;

	if (!*s)
		return false;
	(void)strtod(s, &end);
	return !*end;
}

/* Sort the keys of the set table at `set` into a list at the top (labels, as numbers when all
 * are numeric) and a map key -> code (0-based) below it. Returns the count. */
static int order_labels(lua_State *L, int set)
{
	int K = 0, k;
	const char **keys;

	lua_pushnil(L);
	while (lua_next(L, set)) {
		lua_pop(L, 1);
		K++;
	}
	keys = lua_newuserdatauv(L, sizeof(char *) * ((size_t)K + 1), 0);  /* the strings stay
									       keys of set */
	k = 0;
	all_numeric = true;
	lua_pushnil(L);
	while (lua_next(L, set)) {
		lua_pop(L, 1);
		keys[k] = lua_tostring(L, -1);
		all_numeric = all_numeric && numeric(keys[k]);
		k++;
	}
	qsort(keys, (size_t)K, sizeof(char *), key_cmp);
	lua_createtable(L, 0, K);  /* map */
	lua_createtable(L, K, 0);  /* list */
	for (k = 0; k < K; k++) {
		lua_pushstring(L, keys[k]);
		lua_pushinteger(L, k);
		lua_rawset(L, -4);
		if (all_numeric) {
			lua_pushstring(L, keys[k]);
			lua_stringtonumber(L, keys[k]);
			lua_remove(L, -2);
		} else {
			lua_pushstring(L, keys[k]);
		}
		lua_rawseti(L, -2, k + 1);
	}
	lua_remove(L, -3);  /* the keys array */
	return K;
}

/* codes[i] = map[key of element i], -1 when the key is not in map. */
static void to_codes(lua_State *L, int idx, size_t n, int map, int32_t *codes, const char *fn,
		     const char *what)
{
	gwb_dataset *d = as_dataset(L, idx);
	size_t i;

	if (d && d->task == GWB_TASK_CLASSIFICATION) {  /* one look-up per class */
		int32_t *m = lua_newuserdatauv(L, sizeof(int32_t) * ((size_t)d->classes + 1), 0);
		for (int k = 0; k < d->classes; k++) {
			if (d->class_names && d->class_names[k])
				lua_pushstring(L, d->class_names[k]);
			else
				lua_pushfstring(L, "%d", k + 1);
			m[k] = lua_rawget(L, map) == LUA_TNUMBER ? (int32_t)lua_tointeger(L, -1) : -1;
			lua_pop(L, 1);
		}
		for (i = 0; i < n; i++)
			codes[i] = m[d->y[i]];
		lua_pop(L, 1);
		return;
	}
	for (i = 0; i < n; i++) {
		push_key(L, idx, d, (lua_Integer)i + 1, fn, what);
		codes[i] = lua_rawget(L, map) == LUA_TNUMBER ? (int32_t)lua_tointeger(L, -1) : -1;
		lua_pop(L, 1);
	}
}

/* Class labels of truth (1) and prediction (2): the union's codes. Pushes the labels list
 * (index returned in *labels) and returns K; truth and pred codes in *yt, *yp (userdata on the
 * stack). *note: a message when the prediction holds labels the truth never has (pushed too,
 * at *note_idx, else 0). */
typedef struct cls {
	size_t n;
	int K;
	int32_t *yt, *yp;   /* codes (NULL when the device counted: cm holds everything) */
	int64_t *cm;        /* the confusion counts the device made (K x K), or NULL */
	int labels;  /* stack index of the labels list */
	int map;     /* stack index of key -> code */
	int note;    /* stack index of the note string, or 0 */
} cls;

static void push_label(lua_State *L, int labels, int code)
{
	lua_rawgeti(L, labels, code + 1);
}

static void push_note(lua_State *L, cls *c, const size_t *extra, size_t total);
#ifdef GWB_HAVE_CUDA
static bool read_classes_gpu(lua_State *L, const char *fn, cls *c);
#endif

static void read_classes(lua_State *L, const char *fn, cls *c)
{
	int tset, pset, set;
	size_t n;

	c->cm = NULL;
#ifdef GWB_HAVE_CUDA
	if (read_classes_gpu(L, fn, c))
		return;
#endif
	n = length_of(L, 1, fn, "truth");
	same_length(L, n, length_of(L, 2, fn, "prediction"), fn, "prediction");
	c->n = n;
	lua_newtable(L);
	tset = lua_gettop(L);
	collect(L, 1, n, tset, fn, "truth");
	lua_newtable(L);
	pset = lua_gettop(L);
	collect(L, 2, n, pset, fn, "prediction");
	lua_newtable(L);
	set = lua_gettop(L);
	for (int s = tset; s <= pset; s++) {
		lua_pushnil(L);
		while (lua_next(L, s)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, set);
		}
	}
	c->K = order_labels(L, set);
	c->labels = lua_gettop(L);
	c->map = c->labels - 1;
	c->yt = lua_newuserdatauv(L, sizeof(int32_t) * (n + 1), 0);
	c->yp = lua_newuserdatauv(L, sizeof(int32_t) * (n + 1), 0);
	to_codes(L, 1, n, c->map, c->yt, fn, "truth");
	to_codes(L, 2, n, c->map, c->yp, fn, "prediction");
	{
		size_t *extra = lua_newuserdatauv(L, sizeof(size_t) * ((size_t)c->K + 1), 0), total = 0;
		uint8_t *in_truth = lua_newuserdatauv(L, (size_t)c->K + 1, 0);
		memset(extra, 0, sizeof(size_t) * (size_t)c->K);
		memset(in_truth, 0, (size_t)c->K);
		for (size_t i = 0; i < n; i++)
			in_truth[c->yt[i]] = 1;
		for (size_t i = 0; i < n; i++)
			if (!in_truth[c->yp[i]]) {
				extra[c->yp[i]]++;
				total++;
			}
		push_note(L, c, extra, total);
	}
}

/* c->note: the message on predicted labels the truth never has (extra[k] rows of label k,
 * total in all; extra stays on the stack, under the note), or 0 when there are none. */
static void push_note(lua_State *L, cls *c, const size_t *extra, size_t total)
{
	int k;

	c->note = 0;
	{
		luaL_Buffer b;
		int shown = 0;
		if (total) {
			luaL_buffinit(L, &b);
			lua_pushfstring(L, "%I prediction%s %s label%s the truth never has: ",
					(lua_Integer)total, total == 1 ? "" : "s",
					total == 1 ? "is a" : "are", total == 1 ? "" : "s");
			luaL_addvalue(&b);
			for (k = 0; k < c->K; k++)
				if (extra[k]) {
					push_label(L, c->labels, k);
					lua_pushfstring(L, "%s%s (%I)", shown++ ? ", " : "",
							luaL_tolstring(L, -1, NULL), (lua_Integer)extra[k]);
					lua_remove(L, -2);
					lua_remove(L, -2);
					luaL_addvalue(&b);
				}
			luaL_pushresult(&b);
			c->note = lua_gettop(L);
		}
	}
}

#ifdef GWB_HAVE_CUDA
/* Push the label key of the forest's class k as the Predictions object at pred reads it: its
 * name, or its number k + 1 (always the number when it was made with codes = true). */
static void push_pred_key(lua_State *L, int pred, const gwb_lua_pred *b, int k, const char *fn)
{
	bool named = false;

	if (!b->codes) {
		if (lua_getiuservalue(L, pred, 1) == LUA_TTABLE) {
			named = lua_rawgeti(L, -1, k + 1) != LUA_TNIL;
			if (named)
				lua_remove(L, -2);  /* the name stays */
			else
				lua_pop(L, 2);
		} else {
			lua_pop(L, 1);
		}
	}
	if (!named)
		lua_pushinteger(L, k + 1);
	to_key(L, fn, "prediction", k + 1);
}

/* read_classes for a Predictions object of labels at 2 (metrics.gpu on): the truth's labels and
 * codes on the host, the counts of (truth code, forest class) on the device, then the union of
 * the truth's labels and the classes predicted, and the counts moved to its codes. Pushes what
 * read_classes pushes (map, labels, the note); c->cm holds the counts. False: not such a case. */
static bool read_classes_gpu(lua_State *L, const char *fn, cls *c)
{
	gwb_lua_pred *b = dev_pred(L, 2, GWB_RF_OUT_LABELS);
	int tset, set, kt, kp, K, tlist, k, t;
	int64_t *ctf, *cm;
	int32_t *yt, *tmap, *fmap;
	size_t n, *extra, total = 0;

	if (!b || b->p->classes < 1)
		return false;
	kp = b->p->classes;
	n = length_of(L, 1, fn, "truth");
	same_length(L, n, b->p->rows, fn, "prediction");
	c->n = n;
	lua_newtable(L);
	tset = lua_gettop(L);
	collect(L, 1, n, tset, fn, "truth");
	kt = order_labels(L, tset);  /* map_t, list_t on top */
	tlist = lua_gettop(L);
	yt = lua_newuserdatauv(L, sizeof(int32_t) * (n + 1), 0);
	to_codes(L, 1, n, tlist - 1, yt, fn, "truth");
	ctf = lua_newuserdatauv(L, sizeof(int64_t) * ((size_t)kt * (size_t)kp + 1), 0);
	gwb_lua_check(L, gwb_metrics_confusion_gpu(yt, (const int32_t *)b->p->dev, n, kt, kp, ctf));
	/* the union: the truth's labels and the classes predicted at least once */
	lua_newtable(L);
	set = lua_gettop(L);
	lua_pushnil(L);  /* the truth's keys as collected ("01" stays "01"; its label reads 1) */
	while (lua_next(L, tset)) {
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		lua_pushboolean(L, 1);
		lua_rawset(L, set);
	}
	for (k = 0; k < kp; k++) {
		int64_t col = 0;
		for (t = 0; t < kt; t++)
			col += ctf[(size_t)t * (size_t)kp + (size_t)k];
		if (!col)
			continue;
		push_pred_key(L, 2, b, k, fn);
		lua_pushboolean(L, 1);
		lua_rawset(L, set);
	}
	K = order_labels(L, set);
	c->K = K;
	c->labels = lua_gettop(L);
	c->map = c->labels - 1;
	c->yt = c->yp = NULL;
	tmap = lua_newuserdatauv(L, sizeof(int32_t) * ((size_t)kt + (size_t)kp + 1), 0);
	fmap = tmap + kt;
	for (t = 0; t < kt; t++)
		tmap[t] = -1;
	lua_pushnil(L);  /* the truth's map: key -> truth code */
	while (lua_next(L, tlist - 1)) {
		t = (int)lua_tointeger(L, -1);
		lua_pop(L, 1);
		lua_pushvalue(L, -1);
		tmap[t] = lua_rawget(L, c->map) == LUA_TNUMBER ? (int32_t)lua_tointeger(L, -1) : -1;
		lua_pop(L, 1);
	}
	for (k = 0; k < kp; k++) {
		push_pred_key(L, 2, b, k, fn);
		fmap[k] = lua_rawget(L, c->map) == LUA_TNUMBER ? (int32_t)lua_tointeger(L, -1) : -1;
		lua_pop(L, 1);
	}
	cm = c->cm = lua_newuserdatauv(L, sizeof(int64_t) * ((size_t)K * (size_t)K + 1), 0);
	memset(cm, 0, sizeof(int64_t) * (size_t)K * (size_t)K);
	for (t = 0; t < kt; t++)
		for (k = 0; k < kp; k++) {
			int64_t v = ctf[(size_t)t * (size_t)kp + (size_t)k];
			if (!v)
				continue;
			if (tmap[t] < 0 || fmap[k] < 0)  /* every key is in the union: a bug */
				luaL_error(L, "%s: internal error: label %d of the truth or class %d of the "
					   "forest has no code (please report)", fn, t + 1, k + 1);
			cm[(size_t)tmap[t] * (size_t)K + (size_t)fmap[k]] += v;
		}
	/* the note: predicted labels no truth row has (their rows are their column sums) */
	extra = lua_newuserdatauv(L, sizeof(size_t) * ((size_t)K + 1), 0);
	for (k = 0; k < K; k++) {
		int64_t row = 0, col = 0;
		for (t = 0; t < K; t++) {
			row += cm[(size_t)k * (size_t)K + (size_t)t];
			col += cm[(size_t)t * (size_t)K + (size_t)k];
		}
		extra[k] = row ? 0 : (size_t)col;
		total += extra[k];
	}
	push_note(L, c, extra, total);
	return true;
}
#endif

/* Return the value on top, with the note as a second result when there is one. */
static int ret_note(lua_State *L, const cls *c)
{
	if (!c->note)
		return 1;
	lua_pushvalue(L, c->note);
	return 2;
}

/* Set t.counts (rows by true label), t.rows and t.note on the table on top. */
static void set_counts(lua_State *L, const cls *c, const int64_t *cm)
{
	lua_createtable(L, c->K, 0);
	for (int t = 0; t < c->K; t++) {
		lua_createtable(L, c->K, 0);
		for (int p = 0; p < c->K; p++) {
			lua_pushinteger(L, cm[(size_t)t * (size_t)c->K + (size_t)p]);
			lua_rawseti(L, -2, p + 1);
		}
		lua_rawseti(L, -2, t + 1);
	}
	lua_setfield(L, -2, "counts");
	SETI("rows", c->n);
	if (c->note) {
		lua_pushvalue(L, c->note);
		lua_setfield(L, -2, "note");
	}
}

static int64_t *confusion_of(lua_State *L, cls *c, const char *fn)
{
	int64_t *cm;

	(void)fn;
	if (c->cm)
		return c->cm;  /* counted on the device */
	cm = lua_newuserdatauv(L, sizeof(int64_t) * ((size_t)c->K * (size_t)c->K + 1), 0);
	gwb_lua_check(L, gwb_metrics_confusion(c->yt, c->yp, c->n, c->K, cm));
	return cm;
}

static gwb_avg read_avg(lua_State *L, int opts, const char *fn, const char *def, bool none_ok)
{
	const char *s = gwb_opt_str(L, opts, fn, "average", def);

	if (!strcmp(s, "macro"))
		return GWB_AVG_MACRO;
	if (!strcmp(s, "weighted"))
		return GWB_AVG_WEIGHTED;
	if (!strcmp(s, "micro") && none_ok)
		return GWB_AVG_MICRO;
	if ((!strcmp(s, "none") || !strcmp(s, "class")) && none_ok)
		return GWB_AVG_NONE;
	return (gwb_avg)luaL_error(L, "%s: average = \"%s\" is not one of %s", fn, s,
				   none_ok ? "\"macro\", \"weighted\", \"micro\", \"none\" (per class)"
					   : "\"macro\", \"weighted\"");
}

/* ---- class metrics ---------------------------------------------------------------------- */

static int l_confusion(lua_State *L)
{
	static const char *const keys[] = {NULL};
	cls c;
	int64_t *cm;

	lua_settop(L, 3);
	gwb_opt_check_keys(L, 3, "metrics.confusion", keys);
	read_classes(L, "metrics.confusion", &c);
	cm = confusion_of(L, &c, "metrics.confusion");
	lua_createtable(L, 0, 5);
	lua_pushvalue(L, c.labels);
	lua_setfield(L, -2, "labels");
	set_counts(L, &c, cm);
	if (luaL_getmetafield(L, -1, "__name") == LUA_TNIL) {  /* lua/gwb/metrics.lua draws it */
		if (lua_getfield(L, LUA_REGISTRYINDEX, "gwb.Confusion") == LUA_TTABLE)
			lua_setmetatable(L, -2);
		else
			lua_pop(L, 1);
	}
	return 1;
}

static int l_accuracy(lua_State *L)
{
	cls c;

	lua_settop(L, 2);
	read_classes(L, "metrics.accuracy", &c);
	lua_pushnumber(L, gwb_metrics_accuracy(confusion_of(L, &c, "metrics.accuracy"), c.K));
	return ret_note(L, &c);
}

static int l_balanced_accuracy(lua_State *L)
{
	cls c;

	lua_settop(L, 2);
	read_classes(L, "metrics.balanced_accuracy", &c);
	lua_pushnumber(L, gwb_metrics_balanced_accuracy(confusion_of(L, &c, "balanced_accuracy"),
							c.K));
	return ret_note(L, &c);
}

/* precision (0), recall (1), f1 (2) */
static int prf(lua_State *L, int which, const char *fn)
{
	static const char *const keys[] = {"average", NULL};
	cls c;
	int64_t *cm;
	gwb_avg avg;

	lua_settop(L, 3);
	gwb_opt_check_keys(L, 3, fn, keys);
	avg = read_avg(L, 3, fn, "macro", true);
	read_classes(L, fn, &c);
	cm = confusion_of(L, &c, fn);
	if (avg == GWB_AVG_NONE) {
		double *v = lua_newuserdatauv(L, sizeof(double) * 3 * ((size_t)c.K + 1), 0);
		gwb_metrics_prf(cm, c.K, v, v + c.K, v + 2 * c.K, NULL);
		lua_createtable(L, 0, c.K);
		for (int k = 0; k < c.K; k++) {
			push_label(L, c.labels, k);
			lua_pushnumber(L, v[which * c.K + k]);
			lua_rawset(L, -3);
		}
	} else {
		double out[3];
		gwb_metrics_prf_avg(cm, c.K, avg, out);
		lua_pushnumber(L, out[which]);
	}
	return ret_note(L, &c);
}

static int l_precision(lua_State *L) { return prf(L, 0, "metrics.precision"); }
static int l_recall(lua_State *L) { return prf(L, 1, "metrics.recall"); }
static int l_f1(lua_State *L) { return prf(L, 2, "metrics.f1"); }

/* metrics._report(truth, pred): everything f:evaluate shows from labels, in one pass: labels,
 * confusion, per-class precision / recall / f1 / support, the averages. */
static int l_report(lua_State *L)
{
	cls c;
	int64_t *cm;
	double *v, a[3];
	int64_t *sup;
	static const char *const names[3] = {"precision", "recall", "f1"};
	static const char *const avgs[3] = {"macro", "weighted", "micro"};

	lua_settop(L, 2);
	read_classes(L, "evaluate", &c);
	cm = confusion_of(L, &c, "evaluate");
	v = lua_newuserdatauv(L, sizeof(double) * 3 * ((size_t)c.K + 1), 0);
	sup = lua_newuserdatauv(L, sizeof(int64_t) * ((size_t)c.K + 1), 0);
	gwb_metrics_prf(cm, c.K, v, v + c.K, v + 2 * c.K, sup);
	lua_createtable(L, 0, 12);
	lua_pushvalue(L, c.labels);
	lua_setfield(L, -2, "labels");
	SETN("accuracy", gwb_metrics_accuracy(cm, c.K));
	SETN("balanced_accuracy", gwb_metrics_balanced_accuracy(cm, c.K));
	for (int w = 0; w < 3; w++) {
		lua_createtable(L, 0, c.K);
		for (int k = 0; k < c.K; k++) {
			push_label(L, c.labels, k);
			lua_pushnumber(L, v[w * c.K + k]);
			lua_rawset(L, -3);
		}
		lua_setfield(L, -2, names[w]);
	}
	lua_createtable(L, 0, c.K);
	for (int k = 0; k < c.K; k++) {
		push_label(L, c.labels, k);
		lua_pushinteger(L, sup[k]);
		lua_rawset(L, -3);
	}
	lua_setfield(L, -2, "support");
	for (int g = 0; g < 3; g++) {
		char key[32];
		gwb_metrics_prf_avg(cm, c.K, (gwb_avg)g, a);
		for (int w = 0; w < 3; w++) {
			snprintf(key, sizeof(key), "%s_%s", names[w], avgs[g]);
			SETN(key, a[w]);
		}
	}
	set_counts(L, &c, cm);
	return 1;
}

/* ---- scores ----------------------------------------------------------------------------------- */

/* The scores at idx (2): one number per row (*K = 1) or rows of K numbers (tables or
 * Predictions' rows). The doubles in a userdata pushed on the stack. */
static double *read_scores(lua_State *L, int idx, size_t n, int *Kout, const char *fn)
{
	gwb_dataset *d = as_dataset(L, idx);
	int t, K = 1;
	double *s;
	size_t i;

	if (d)
		luaL_error(L, "%s: the scores are a Dataset; give f:predict_proba(d) (probability "
			   "rows) or one score per row", fn);
	t = lua_geti(L, idx, 1);
	if (t == LUA_TTABLE || t == LUA_TUSERDATA)
		K = (int)luaL_len(L, -1);
	else if (t != LUA_TNUMBER)
		luaL_error(L, "%s: score[1] is %s: give one number per row or probability rows", fn,
			   luaL_typename(L, -1));
	lua_pop(L, 1);
	if (K < 1)
		luaL_error(L, "%s: score[1] is an empty row", fn);
	s = lua_newuserdatauv(L, sizeof(double) * (n * (size_t)K + 1), 0);
	for (i = 0; i < n; i++) {
		t = lua_geti(L, idx, (lua_Integer)i + 1);
		if (K == 1 && t == LUA_TNUMBER) {
			s[i] = lua_tonumber(L, -1);
		} else if (K > 1 || t == LUA_TTABLE || t == LUA_TUSERDATA) {
			if ((t != LUA_TTABLE && t != LUA_TUSERDATA) || luaL_len(L, -1) != K)
				luaL_error(L, "%s: score[%I] is not a row of %d numbers like score[1]",
					   fn, (lua_Integer)i + 1, K);
			for (int k = 0; k < K; k++) {
				int isnum;
				lua_geti(L, -1, k + 1);
				s[i * (size_t)K + (size_t)k] = lua_tonumberx(L, -1, &isnum);
				if (!isnum)
					luaL_error(L, "%s: score[%I][%d] is %s, expected a number", fn,
						   (lua_Integer)i + 1, k + 1, luaL_typename(L, -1));
				lua_pop(L, 1);
			}
		} else {
			luaL_error(L, "%s: score[%I] is %s, expected a number", fn, (lua_Integer)i + 1,
				   luaL_typename(L, -1));
		}
		lua_pop(L, 1);
	}
	*Kout = K;
	return s;
}

/* The truth's labels against the score columns: opts.labels (one per column) or the sorted
 * labels of the truth. Truth codes in c->yt; c->labels the column labels. */
typedef struct scored {
	cls c;
	double *s;  /* the scores on the host (NULL when dev is set) */
	const float *dev;  /* probability rows left on the device (a Predictions object), or NULL */
	int cols;   /* score columns (1: one score per row) */
	int pos;    /* binary: the positive class's code */
} scored;

/* may_dev: a Predictions object of probability rows at 2 stays on the device (r->dev) when the
 * switch metrics.gpu is on; else the scores are read to the host. */
static void read_scored(lua_State *L, const char *fn, int opts, bool need_two, scored *r,
			bool may_dev)
{
	cls *c = &r->c;
	size_t n = length_of(L, 1, fn, "truth"), i;

	memset(r, 0, sizeof(*r));
	same_length(L, n, length_of(L, 2, fn, "scores"), fn, "scores");
	c->n = n;
#ifdef GWB_HAVE_CUDA
	gwb_lua_pred *b = may_dev ? dev_pred(L, 2, GWB_RF_OUT_PROBA) : NULL;
	if (b && b->p->per_row >= 2) {
		r->dev = (const float *)b->p->dev;
		r->cols = b->p->per_row;
	} else
#endif
	{
		(void)may_dev;
		r->s = read_scores(L, 2, n, &r->cols, fn);
	}
	if (lua_istable(L, opts) && lua_getfield(L, opts, "labels") != LUA_TNIL) {
		int lab = lua_gettop(L), m;
		if (!lua_istable(L, lab))
			luaL_error(L, "%s: labels must be a list of class labels, one per score "
				   "column (got %s)", fn, luaL_typename(L, lab));
		m = (int)luaL_len(L, lab);
		if (m < 1)
			luaL_error(L, "%s: labels is empty", fn);
		lua_createtable(L, 0, m);  /* map: key -> column */
		for (int k = 1; k <= m; k++) {
			lua_rawgeti(L, lab, k);
			to_key(L, fn, "labels", k);
			lua_pushvalue(L, -1);
			if (lua_rawget(L, -3) != LUA_TNIL)
				luaL_error(L, "%s: labels[%d] (%s) repeats a label", fn, k,
					   lua_tostring(L, -2));
			lua_pop(L, 1);
			lua_pushinteger(L, k - 1);
			lua_rawset(L, -3);
		}
		lua_pushvalue(L, lab);
		c->K = m;
	} else {
		int set;
		if (lua_istable(L, opts))
			lua_pop(L, 1);
		lua_newtable(L);
		set = lua_gettop(L);
		collect(L, 1, n, set, fn, "truth");
		c->K = order_labels(L, set);
	}
	c->labels = lua_gettop(L);
	c->map = c->labels - 1;
	c->yt = lua_newuserdatauv(L, sizeof(int32_t) * (n + 1), 0);
	to_codes(L, 1, n, c->map, c->yt, fn, "truth");
	for (i = 0; i < n; i++)
		if (c->yt[i] < 0) {
			push_key(L, 1, as_dataset(L, 1), (lua_Integer)i + 1, fn, "truth");
			luaL_error(L, "%s: truth[%I] is \"%s\", which is not one of the labels of the "
				   "score columns", fn, (lua_Integer)i + 1, lua_tostring(L, -1));
		}
	if (r->cols > 1 && r->cols != c->K)
		luaL_error(L, "%s: the score rows have %d columns but there are %d classes (%s); "
			   "give labels = {...}, one per column", fn, r->cols, c->K,
			   c->map == c->labels - 1 && lua_istable(L, opts) ? "in labels or the truth"
									   : "in the truth");
	r->pos = c->K - 1;
	if (lua_istable(L, opts)) {
		if (lua_getfield(L, opts, "pos") != LUA_TNIL) {
			to_key(L, fn, "pos", 1);
			if (lua_rawget(L, c->map) != LUA_TNUMBER)
				luaL_error(L, "%s: pos is not one of the labels", fn);
			r->pos = (int)lua_tointeger(L, -1);
		}
		lua_pop(L, 1);
	}
	if (need_two && c->K == 1) {
		push_label(L, c->labels, 0);
		luaL_error(L, "%s: only one class is present in the truth (%s): the score is not "
			   "defined in that case", fn, luaL_tolstring(L, -1, NULL));
	}
	if (r->cols == 1 && c->K > 2)
		luaL_error(L, "%s: one score per row, but the truth has %d classes: give probability "
			   "rows (f:predict_proba(d))", fn, c->K);
}

/* Binary: pos[i] and the positive class's score (column pos, or the only one). */
static void binary_of(lua_State *L, scored *r, uint8_t **pos, double **score)
{
	size_t n = r->c.n, i;

	*pos = lua_newuserdatauv(L, n + 1, 0);
	*score = lua_newuserdatauv(L, sizeof(double) * (n + 1), 0);
	for (i = 0; i < n; i++) {
		(*pos)[i] = r->c.yt[i] == r->pos;
		(*score)[i] = r->cols == 1 ? r->s[i] : r->s[i * (size_t)r->cols + (size_t)r->pos];
	}
}

static const char *const score_keys[] = {"labels", "pos", "average", "multi_class", NULL};

static int auc(lua_State *L, bool ap, const char *fn)
{
	scored r;
	double v;
	bool ovo;
	gwb_avg avg;
	const char *mc;

	lua_settop(L, 3);
	gwb_opt_check_keys(L, 3, fn, score_keys);
	avg = read_avg(L, 3, fn, "macro", false);
	mc = gwb_opt_str(L, 3, fn, "multi_class", "ovr");
	if (strcmp(mc, "ovr") && strcmp(mc, "ovo"))
		return luaL_error(L, "%s: multi_class = \"%s\" is not \"ovr\" (one-vs-rest) or "
				  "\"ovo\" (one-vs-one)", fn, mc);
	ovo = !strcmp(mc, "ovo");
	if (ovo && ap)
		return luaL_error(L, "%s: multi_class = \"ovo\" is for roc_auc; average precision "
				  "is one-vs-rest", fn);
	read_scored(L, fn, 3, true, &r, true);
#ifdef GWB_HAVE_CUDA
	if (r.dev) {  /* read_scored checked: cols == K */
		gwb_lua_check(L, gwb_metrics_auc_gpu(r.c.yt, r.dev, r.c.n, r.cols, r.c.K, r.pos, ovo,
						     avg, ap, &v));
		lua_pushnumber(L, v);
		return 1;
	}
#endif
	if (r.c.K == 2) {
		uint8_t *pos;
		double *score;
		binary_of(L, &r, &pos, &score);
		gwb_lua_check(L, ap ? gwb_metrics_average_precision(pos, score, r.c.n, &v) :
				      gwb_metrics_roc_auc_binary(pos, score, r.c.n, &v));
	} else {
		gwb_lua_check(L, ap ? gwb_metrics_pr_auc_multi(r.c.yt, r.s, r.c.n, r.c.K, avg, &v) :
				      gwb_metrics_roc_auc_multi(r.c.yt, r.s, r.c.n, r.c.K, ovo, avg,
								&v));
	}
	lua_pushnumber(L, v);
	return 1;
}

static int l_roc_auc(lua_State *L) { return auc(L, false, "metrics.roc_auc"); }
static int l_pr_auc(lua_State *L) { return auc(L, true, "metrics.pr_auc"); }

/* Probability rows for every class: a one-score binary truth becomes (1 - p, p). */
static const double *full_proba(lua_State *L, scored *r)
{
	double *p;
	size_t i;

	if (r->cols > 1)
		return r->s;
	if (r->c.K != 2)
		luaL_error(L, "metrics: one probability per row needs a truth of two classes");
	p = lua_newuserdatauv(L, sizeof(double) * (2 * r->c.n + 1), 0);
	for (i = 0; i < r->c.n; i++) {
		p[2 * i + (size_t)r->pos] = r->s[i];
		p[2 * i + 1 - (size_t)r->pos] = 1 - r->s[i];
	}
	return p;
}

/* log-loss (brier false) or Brier score of probability rows. */
static int proba_loss(lua_State *L, bool brier, const char *fn)
{
	static const char *const keys[] = {"labels", "pos", NULL};
	scored r;
	double v;

	lua_settop(L, 3);
	gwb_opt_check_keys(L, 3, fn, keys);
	read_scored(L, fn, 3, true, &r, true);
#ifdef GWB_HAVE_CUDA
	if (r.dev)
		gwb_lua_check(L, gwb_metrics_proba_loss_gpu(r.c.yt, r.dev, r.c.n, r.c.K, brier, &v));
	else
#endif
		gwb_lua_check(L, (brier ? gwb_metrics_brier : gwb_metrics_log_loss)(
					 r.c.yt, full_proba(L, &r), r.c.n, r.c.K, &v));
	lua_pushnumber(L, v);
	return 1;
}

static int l_log_loss(lua_State *L) { return proba_loss(L, false, "metrics.log_loss"); }
static int l_brier(lua_State *L) { return proba_loss(L, true, "metrics.brier"); }

static void push_curve(lua_State *L, const gwb_curve *c, const char *xn, const char *yn,
		       const char *kind)
{
	const double *arr[3] = {c->x, c->y, c->thr};
	const char *names[3] = {xn, yn, "thresholds"};

	lua_createtable(L, 0, 5);
	for (int a = 0; a < 3; a++) {
		lua_createtable(L, (int)c->n, 0);
		for (size_t i = 0; i < c->n; i++) {
			if (a == 2 && isnan(arr[a][i]))
				break;  /* the PR curve's closing point has no threshold */
			lua_pushnumber(L, arr[a][i]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		lua_setfield(L, -2, names[a]);
	}
	SETS("kind", kind);
	if (lua_getfield(L, LUA_REGISTRYINDEX, "gwb.Curve") == LUA_TTABLE)
		lua_setmetatable(L, -2);
	else
		lua_pop(L, 1);
}

static int curve(lua_State *L, bool roc, const char *fn)
{
	static const char *const keys[] = {"labels", "pos", "drop_intermediate", NULL};
	scored r;
	uint8_t *pos;
	double *score, area;
	gwb_curve c;
	gwb_status st;

	lua_settop(L, 3);
	gwb_opt_check_keys(L, 3, fn, keys);
	read_scored(L, fn, 3, roc, &r, false);  /* every point: on the host */
	if (r.c.K > 2 && !(lua_istable(L, 3) && lua_getfield(L, 3, "pos") != LUA_TNIL))
		luaL_error(L, "%s: the truth has %d classes: give pos = <label> for the "
				  "one-vs-rest curve of that class", fn, r.c.K);
	binary_of(L, &r, &pos, &score);
	if (r.c.K > 2) {
		for (size_t i = 0; i < r.c.n; i++)
			score[i] = r.s[i * (size_t)r.cols + (size_t)r.pos];
	}
	st = roc ? gwb_metrics_roc_curve(pos, score, r.c.n,
					 gwb_opt_bool(L, 3, fn, "drop_intermediate", true), &c)
		 : gwb_metrics_pr_curve(pos, score, r.c.n, &c);
	gwb_lua_check(L, st);
	push_curve(L, &c, roc ? "fpr" : "recall", roc ? "tpr" : "precision", roc ? "roc" : "pr");
	gwb_curve_free(&c);
	st = roc ? gwb_metrics_roc_auc_binary(pos, score, r.c.n, &area)
		 : gwb_metrics_average_precision(pos, score, r.c.n, &area);
	gwb_lua_check(L, st);
	SETN(roc ? "auc" : "ap", area);
	push_label(L, r.c.labels, r.pos);
	lua_setfield(L, -2, "pos");
	return 1;
}

static int l_roc_curve(lua_State *L) { return curve(L, true, "metrics.roc_curve"); }
static int l_pr_curve(lua_State *L) { return curve(L, false, "metrics.pr_curve"); }

/* ---- regression ----------------------------------------------------------------------------- */

/* The numbers of the array at idx (n of them) as doubles; class labels are refused. */
static double *read_values(lua_State *L, int idx, size_t n, const char *fn, const char *what)
{
	gwb_dataset *d = as_dataset(L, idx);
	double *v = lua_newuserdatauv(L, sizeof(double) * (n + 1), 0);
	size_t i;

	if (d) {
		if (d->task == GWB_TASK_CLASSIFICATION)
			luaL_error(L, "%s is a regression metric, but the %s Dataset's target (%s) "
				   "holds class labels: use metrics.accuracy, f1, ... for classes",
				   fn, what, d->target ? d->target : "y");
		for (i = 0; i < n; i++)
			v[i] = d->yr[i];
		return v;
	}
	for (i = 0; i < n; i++) {
		int isnum, t = lua_geti(L, idx, (lua_Integer)i + 1);
		v[i] = lua_tonumberx(L, -1, &isnum);
		if (t != LUA_TNUMBER || !isnum)
			luaL_error(L, "%s is a regression metric, but %s[%I] is %s%s%s: it needs "
				   "numbers (class labels take metrics.accuracy, f1, ...)", fn, what,
				   (lua_Integer)i + 1, t == LUA_TSTRING ? "the label \"" : "",
				   t == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1),
				   t == LUA_TSTRING ? "\"" : "");
		lua_pop(L, 1);
	}
	return v;
}

static int regression(lua_State *L, int which, const char *fn)
{
	size_t n;
	double *y, *p;
	gwb_regression_metrics m;

	lua_settop(L, 2);
	n = length_of(L, 1, fn, "truth");
	same_length(L, n, length_of(L, 2, fn, "prediction"), fn, "prediction");
	y = read_values(L, 1, n, fn, "truth");
#ifdef GWB_HAVE_CUDA
	gwb_lua_pred *b = dev_pred(L, 2, GWB_RF_OUT_VALUES);
	bool done = false;
	if (b)
		gwb_lua_check(L, gwb_metrics_regression_gpu(y, (const float *)b->p->dev, n, &m, &done));
	if (!done)
#endif
	{
		p = read_values(L, 2, n, fn, "prediction");
		gwb_lua_check(L, gwb_metrics_regression(y, p, n, &m));
	}
	switch (which) {
	case 0: lua_pushnumber(L, m.rmse); break;
	case 1: lua_pushnumber(L, m.mae); break;
	case 2:
		if (isnan(m.r2))
			return luaL_error(L, "%s: R2 needs at least two rows (one row has no variance "
					  "to explain; scikit-learn calls it not well-defined)", fn);
		lua_pushnumber(L, m.r2);
		break;
	case 3: lua_pushnumber(L, m.mape); break;
	case 4: lua_pushnumber(L, m.max_error); break;
	case 5: lua_pushnumber(L, m.mse); break;
	default:
		lua_createtable(L, 0, 6);
		SETN("rmse", m.rmse);
		SETN("mae", m.mae);
		SETN("r2", m.r2);
		SETN("mape", m.mape);
		SETN("max_error", m.max_error);
		SETN("mse", m.mse);
		SETI("rows", n);
		break;
	}
	return 1;
}

static int l_rmse(lua_State *L) { return regression(L, 0, "metrics.rmse"); }
static int l_mae(lua_State *L) { return regression(L, 1, "metrics.mae"); }
static int l_r2(lua_State *L) { return regression(L, 2, "metrics.r2"); }
static int l_mape(lua_State *L) { return regression(L, 3, "metrics.mape"); }
static int l_max_error(lua_State *L) { return regression(L, 4, "metrics.max_error"); }
static int l_mse(lua_State *L) { return regression(L, 5, "metrics.mse"); }
static int l_regression(lua_State *L) { return regression(L, 6, "metrics.regression"); }

#define TRUTH "truth, pred: arrays, Predictions (f:predict) or Datasets (their target column);\n" \
	"Predictions from the GPU are judged there (switch metrics.gpu), never copied back"
#define SCORES "truth: labels (array, Predictions or Dataset); scores: one number per row (the\n" \
	"positive class's) or probability rows (f:predict_proba(d)); opts.labels: the label of each\n" \
	"column (default: the truth's labels, sorted), opts.pos: the positive label (default the\n" \
	"last). f:predict_proba's Predictions from the GPU are scored there (a device sort)"

static const gwb_reg funcs[] = {
	{"confusion", l_confusion,
	 "metrics.confusion(truth, pred) -> table\n"
	 "The confusion matrix: c.counts[i][j] = rows of true label c.labels[i] predicted as\n"
	 "c.labels[j] (labels: the sorted union of both sides). Prints drawn with counts and row\n"
	 "shares; c:save(\"cm.png\") draws it as a heatmap picture (c:plot() the plot). c.note says\n"
	 "when the prediction holds labels the truth never has.\n"
	 TRUTH ".\nExample: print(metrics.confusion(test, f:predict(test)))"},
	{"accuracy", l_accuracy,
	 "metrics.accuracy(truth, pred) -> number [, note]\nThe share of rows predicted right. A "
	 "note (second result) counts predicted labels the\ntruth never has. " TRUTH "."},
	{"balanced_accuracy", l_balanced_accuracy,
	 "metrics.balanced_accuracy(truth, pred) -> number [, note]\nThe mean recall over the "
	 "classes of the truth (scikit-learn's balanced_accuracy_score)."},
	{"precision", l_precision,
	 "metrics.precision(truth, pred [, {average = \"macro\"}]) -> number or table [, note]\n"
	 "Precision tp / (tp + fp). average: \"macro\" (mean over labels), \"weighted\" (by\n"
	 "support), \"micro\" (from summed counts), \"none\" (a table by label). 0 where 0/0."},
	{"recall", l_recall,
	 "metrics.recall(truth, pred [, {average = \"macro\"}]) -> number or table [, note]\n"
	 "Recall tp / (tp + fn); average as for metrics.precision."},
	{"f1", l_f1,
	 "metrics.f1(truth, pred [, {average = \"macro\"}]) -> number or table [, note]\n"
	 "F1 2 tp / (2 tp + fp + fn); average as for metrics.precision.\n"
	 "Example: metrics.f1(test, f:predict(test), {average = \"none\"})"},
	{"roc_auc", l_roc_auc,
	 "metrics.roc_auc(truth, scores [, opts]) -> number\n"
	 "Area under the ROC curve. " SCORES ".\nMore than two classes: multi_class = \"ovr\" "
	 "(one-vs-rest, average \"macro\" or \"weighted\")\nor \"ovo\" (Hand & Till). A truth of "
	 "one class is an error (the area is not defined).\n"
	 "Example: metrics.roc_auc(test, f:predict_proba(test), {labels = f.labels})"},
	{"pr_auc", l_pr_auc,
	 "metrics.pr_auc(truth, scores [, opts]) -> number\n"
	 "Average precision (scikit-learn's average_precision_score): the precision at each\n"
	 "threshold weighted by the recall gained. " SCORES "; one-vs-rest for more classes."},
	{"log_loss", l_log_loss,
	 "metrics.log_loss(truth, proba [, {labels = ...}]) -> number\n"
	 "The mean of -log(p of the true class), p clipped to [eps, 1 - eps] (eps = 2.2e-16)."},
	{"brier", l_brier,
	 "metrics.brier(truth, proba [, {labels = ...}]) -> number\n"
	 "Brier score: mean squared distance of the probability rows from the one-hot truth\n"
	 "(two classes: the classic mean of (p - y)^2 on the positive class)."},
	{"roc_curve", l_roc_curve,
	 "metrics.roc_curve(truth, scores [, opts]) -> curve\n"
	 "The ROC curve's points: curve.fpr, curve.tpr, curve.thresholds (+inf first), curve.auc;\n"
	 "it prints as a terminal plot; curve:save(\"roc.svg\") draws it as a picture. Collinear\n"
	 "points are left out as scikit-learn's\n"
	 "drop_intermediate (drop_intermediate = false keeps them). More than two classes: pos.\n"
	 "Example: metrics.roc_curve(test, f:predict_proba(test), {labels = f.labels})"},
	{"pr_curve", l_pr_curve,
	 "metrics.pr_curve(truth, scores [, opts]) -> curve\n"
	 "The precision-recall curve (scikit-learn's precision_recall_curve): curve.recall,\n"
	 "curve.precision, curve.thresholds, curve.ap (average precision); it prints as a plot\n"
	 "and curve:save(\"pr.png\") draws it as a picture."},
	{"rmse", l_rmse, "metrics.rmse(truth, pred) -> number\nRoot mean squared error. " TRUTH
	 "; class labels are refused."},
	{"mse", l_mse, "metrics.mse(truth, pred) -> number\nMean squared error."},
	{"mae", l_mae, "metrics.mae(truth, pred) -> number\nMean absolute error."},
	{"r2", l_r2,
	 "metrics.r2(truth, pred) -> number\nCoefficient of determination 1 - SSres / SStot (a "
	 "constant truth: 1 if exact, else 0)."},
	{"mape", l_mape,
	 "metrics.mape(truth, pred) -> number\nMean absolute percentage error as a share: mean of "
	 "|y - p| / max(|y|, eps)."},
	{"max_error", l_max_error, "metrics.max_error(truth, pred) -> number\nThe largest |y - p|."},
	{"regression", l_regression,
	 "metrics.regression(truth, pred) -> table\nrmse, mse, mae, r2, mape and max_error at once."},
	{"_report", l_report,
	 "metrics._report(truth, pred) -> table\nThe label part of f:evaluate's report: labels, "
	 "counts, per-class and averaged precision/recall/f1, support, accuracy."},
	{NULL, NULL, NULL},
};

int gwb_open_metrics(lua_State *L)
{
	gwb_lua_newlib(L, "metrics", funcs);
	lua_pop(L, 1);
	return 0;
}
