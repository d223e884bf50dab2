/* lapi_plot.c - plot._render: a plot's drawing model, a Lua table that lua/gwb/plot.lua builds
 * (title, axes, items in data coordinates, legend), read into a gwb_plot (plot.h) and saved as
 * SVG or PNG through the atomic save. The gwb_plot lives in a userdata while it is read, so a
 * bad field raises (naming it) without leaking. Uses lapi.c and plot.c. */
#include "lapi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

#define MODEL_MT "gwb.PlotModel"

typedef struct { gwb_plot *p; } model_box;

static int model_release(lua_State *L)
{
	model_box *b = gwb_lua_toudata(L, 1, MODEL_MT);

	if (b && b->p) {
		gwb_plot_free(b->p);
		b->p = NULL;
	}
	return 0;
}

static void nomem(lua_State *L, gwb_status st)
{
	if (st)
		luaL_error(L, "%s", gwb_errmsg());
}

/* the number at t[k] (t at idx), or def when it is nil; where names the field in errors */
static double opt_num(lua_State *L, int idx, const char *k, double def, const char *where)
{
	double v = def;
	int ty = lua_getfield(L, idx, k);

	if (ty == LUA_TNUMBER)
		v = lua_tonumber(L, -1);
	else if (ty != LUA_TNIL)
		luaL_error(L, "plot model: %s%s is a %s, not a number", where, k, lua_typename(L, ty));
	lua_pop(L, 1);
	return v;
}

static uint32_t color_of(lua_State *L, int idx, const char *what)
{
	lua_Integer c;

	if (!lua_isinteger(L, idx))
		luaL_error(L, "plot model: %s must be a colour 0xRRGGBB (an integer), got %s", what,
			   luaL_typename(L, idx));
	c = lua_tointeger(L, idx);
	if (c < 0 || c > 0xFFFFFF)
		luaL_error(L, "plot model: %s = %I is not a colour 0xRRGGBB", what, c);
	return (uint32_t)c;
}

/* an owned copy of the string at t[k] (nil: left as is) */
static void opt_str(lua_State *L, int idx, const char *k, char **dst)
{
	int ty = lua_getfield(L, idx, k);

	if (ty == LUA_TSTRING || ty == LUA_TNUMBER)
		nomem(L, gwb_plot_setstr(dst, lua_tostring(L, -1)));
	else if (ty != LUA_TNIL)
		luaL_error(L, "plot model: %s is a %s, not a string", k, lua_typename(L, ty));
	lua_pop(L, 1);
}

static bool opt_bool(lua_State *L, int idx, const char *k)
{
	bool v;

	lua_getfield(L, idx, k);
	v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

/* the list at the top of the stack into n numbers */
static void read_nums(lua_State *L, double *dst, size_t n, const char *where)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int ty = lua_rawgeti(L, -1, (lua_Integer)i + 1);

		if (ty == LUA_TNUMBER)
			dst[i] = lua_tonumber(L, -1);
		else if (ty == LUA_TNIL)
			dst[i] = NAN;
		else
			luaL_error(L, "plot model: %s[%I] is a %s, not a number", where,
				   (lua_Integer)i + 1, lua_typename(L, ty));
		lua_pop(L, 1);
	}
}

static void read_axis(lua_State *L, int idx, gwb_plot_axis *a, const char *n)
{
	char k[16];
	size_t i, cnt;

	snprintf(k, sizeof(k), "%slabel", n);
	opt_str(L, idx, k, &a->label);
	snprintf(k, sizeof(k), "%slog", n);
	a->log = opt_bool(L, idx, k);
	snprintf(k, sizeof(k), "%sflip", n);
	a->flip = opt_bool(L, idx, k);
	snprintf(k, sizeof(k), "%slim", n);
	if (lua_getfield(L, idx, k) == LUA_TTABLE) {
		double lim[2];

		read_nums(L, lim, 2, k);
		a->lo = lim[0];
		a->hi = lim[1];
	}
	lua_pop(L, 1);
	snprintf(k, sizeof(k), "%sticks", n);
	if (lua_getfield(L, idx, k) == LUA_TTABLE) {
		cnt = (size_t)lua_rawlen(L, -1);
		nomem(L, gwb_plot_ticks(a, cnt));
		read_nums(L, a->ticks, cnt, k);
		lua_pop(L, 1);
		snprintf(k, sizeof(k), "%stick_labels", n);
		if (lua_getfield(L, idx, k) == LUA_TTABLE)
			for (i = 0; i < cnt; i++) {
				lua_rawgeti(L, -1, (lua_Integer)i + 1);
				if (lua_isstring(L, -1))
					nomem(L, gwb_plot_setstr(&a->tick_labels[i], lua_tostring(L, -1)));
				lua_pop(L, 1);
			}
	}
	lua_pop(L, 1);
}

static void read_item(lua_State *L, gwb_plot *p, int idx, lua_Integer at)
{
	static const char *const kinds[] = {"line", "points", "rects", "texts", NULL};
	static const gwb_plot_kind kv[] = {GWB_PLOT_LINE, GWB_PLOT_POINTS, GWB_PLOT_RECTS,
					   GWB_PLOT_TEXTS};
	char where[48];
	const char *kname;
	gwb_plot_item *it;
	size_t n, m, i;
	int k;

	snprintf(where, sizeof(where), "items[%lld].", (long long)at);
	lua_getfield(L, idx, "kind");
	kname = lua_tostring(L, -1);
	for (k = 0; kinds[k] && (!kname || strcmp(kinds[k], kname)); k++)
		;
	if (!kinds[k])
		luaL_error(L, "plot model: %skind must be line, points, rects or texts (got %s)",
			   where, kname ? kname : luaL_typename(L, -1));
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "x") != LUA_TTABLE)
		luaL_error(L, "plot model: %sx must be a list of numbers", where);
	m = (size_t)lua_rawlen(L, -1);
	lua_pop(L, 1);
	n = kv[k] == GWB_PLOT_RECTS ? m / 2 : m;
	if (!(it = gwb_plot_add(p, kv[k], n)))
		luaL_error(L, "plot model: out of memory for %s of %I elements", where, (lua_Integer)n);
	m = kv[k] == GWB_PLOT_RECTS ? 2 * n : n;
	lua_getfield(L, idx, "x");
	snprintf(where + strlen(where), sizeof(where) - strlen(where), "x");
	read_nums(L, it->x, m, where);
	lua_pop(L, 1);
	where[strlen(where) - 1] = 'y';
	if (lua_getfield(L, idx, "y") != LUA_TTABLE || (size_t)lua_rawlen(L, -1) < m)
		luaL_error(L, "plot model: %s must be a list as long as x (%I)", where, (lua_Integer)m);
	read_nums(L, it->y, m, where);
	lua_pop(L, 1);
	where[strlen(where) - 1] = 0;   /* "items[i]." */
	if (lua_getfield(L, idx, "color") != LUA_TNIL)
		it->color = color_of(L, -1, "color");
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "stroke") != LUA_TNIL)
		it->stroke = color_of(L, -1, "stroke");
	lua_pop(L, 1);
	it->size = opt_num(L, idx, "size", it->size, where);
	if (!(it->size >= 0 && it->size <= 100))
		luaL_error(L, "plot model: %ssize must be 0 to 100", where);
	if (lua_getfield(L, idx, "colors") == LUA_TTABLE) {
		if (!(it->colors = calloc(n ? n : 1, sizeof(uint32_t))))
			luaL_error(L, "plot model: out of memory for %scolors", where);
		for (i = 0; i < n; i++) {
			if (lua_rawgeti(L, -1, (lua_Integer)i + 1) == LUA_TNIL)
				it->colors[i] = it->color;
			else
				it->colors[i] = color_of(L, -1, "colors[i]");
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	if (kv[k] == GWB_PLOT_TEXTS) {
		if (lua_getfield(L, idx, "texts") != LUA_TTABLE)
			luaL_error(L, "plot model: %stexts must be a list of strings", where);
		for (i = 0; i < n; i++) {
			lua_rawgeti(L, -1, (lua_Integer)i + 1);
			if (lua_isstring(L, -1))
				nomem(L, gwb_plot_setstr(&it->texts[i], lua_tostring(L, -1)));
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
}

/* plot._render(model, path [, {width, height}]) -> bytes */
static int l_render(lua_State *L)
{
	static const char *const shapes[] = {"rect", "line", "point", NULL};
	const char *path;
	model_box *b;
	gwb_plot *p;
	lua_Integer i, n, w = 640, h = 480;
	size_t bytes = 0;

	luaL_checktype(L, 1, LUA_TTABLE);
	path = luaL_checkstring(L, 2);
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		if (lua_getfield(L, 3, "width") != LUA_TNIL) {
			if (!lua_isinteger(L, -1))
				return luaL_error(L, "plot save: width must be a whole number of pixels");
			w = lua_tointeger(L, -1);
		}
		if (lua_getfield(L, 3, "height") != LUA_TNIL) {
			if (!lua_isinteger(L, -1))
				return luaL_error(L, "plot save: height must be a whole number of pixels");
			h = lua_tointeger(L, -1);
		}
		lua_pop(L, 2);
	}
	if (w < 16 || h < 16 || w > GWB_PLOT_MAX_SIDE || h > GWB_PLOT_MAX_SIDE)
		return luaL_error(L, "plot save: width and height must be 16 to %d pixels (got %I x %I)",
				  GWB_PLOT_MAX_SIDE, w, h);
	b = gwb_lua_newudata(L, sizeof(*b), 0, MODEL_MT);   /* 4: owns the plot */
	if (!(b->p = gwb_plot_new()))
		return luaL_error(L, "plot save: out of memory");
	p = b->p;
	opt_str(L, 1, "title", &p->title);
	read_axis(L, 1, &p->x, "x");
	read_axis(L, 1, &p->y, "y");
	lua_getfield(L, 1, "grid");
	p->grid = lua_isnil(L, -1) || lua_toboolean(L, -1);
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "items") == LUA_TTABLE) {
		n = (lua_Integer)lua_rawlen(L, -1);
		for (i = 1; i <= n; i++) {
			if (lua_rawgeti(L, -1, i) != LUA_TTABLE)
				return luaL_error(L, "plot model: items[%I] is not a table", i);
			read_item(L, p, lua_gettop(L), i);
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	if (lua_getfield(L, 1, "legend") == LUA_TTABLE) {
		n = (lua_Integer)lua_rawlen(L, -1);
		for (i = 1; i <= n; i++) {
			const char *lab, *sh;
			uint32_t col;
			int k;

			if (lua_rawgeti(L, -1, i) != LUA_TTABLE)
				return luaL_error(L, "plot model: legend[%I] is not a table", i);
			lua_getfield(L, -1, "label");
			lua_getfield(L, -2, "color");
			lua_getfield(L, -3, "shape");
			lab = lua_isstring(L, -3) ? lua_tostring(L, -3) : "";
			col = color_of(L, -2, "legend colour");
			sh = lua_isstring(L, -1) ? lua_tostring(L, -1) : "rect";
			for (k = 0; shapes[k] && strcmp(shapes[k], sh); k++)
				;
			if (!shapes[k])
				return luaL_error(L, "plot model: legend[%I].shape must be rect, line or "
						  "point (got %s)", i, sh);
			nomem(L, gwb_plot_legend_add(p, lab, col, (gwb_plot_shape)k));
			lua_pop(L, 4);
		}
	}
	lua_pop(L, 1);
	gwb_lua_check(L, gwb_plot_save(p, path, (int)w, (int)h, &bytes));
	gwb_plot_free(b->p);
	b->p = NULL;
	lua_pushinteger(L, (lua_Integer)bytes);
	return 1;
}

static const gwb_reg funcs[] = {
	{"_render", l_render,
	 "plot._render(model, path [, {width = 640, height = 480}]) -> bytes\n"
	 "Draw a plot's model (the table p.model of every plot: title, xlabel, ylabel, xlog,\n"
	 "ylog, xlim, ylim, xticks/xtick_labels, yticks/ytick_labels, xflip, yflip, grid, legend\n"
	 "{label, color, shape}, items {kind = line|points|rects|texts, x, y, color, colors, size,\n"
	 "stroke, texts}) and save it as SVG or PNG by the name's extension; p:save calls it."},
	{NULL, NULL, NULL},
};

int gwb_open_plot(lua_State *L)
{
	static const luaL_Reg meta[] = {{"__gc", model_release}, {NULL, NULL}};

	gwb_lua_newclass(L, MODEL_MT, NULL, meta);
	gwb_lua_newlib(L, "plot", funcs);
	lua_pop(L, 1);
	return 0;
}
