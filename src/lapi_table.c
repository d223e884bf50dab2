/* lapi_table.c - aligned result tables ("gwb.Table"): a Lua table whose metatable lists its
 * columns prints as an aligned text table (display widths of UTF-8 text, numbers right
 * aligned, at most 200 rows and 118 columns of text shown: the first and last columns of a
 * wider one); and the Dataset methods that return such tables: d:head, d:tail, d:describe,
 * d:class_counts. The tables are plain Lua values that the caller owns; nothing here keeps a
 * reference. */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "column.h"
#include "dataset.h"
#include "fmt.h"
#include "lapi.h"
#include "lapi_data.h"

#define TABLE_MT_NAME "gwb.Table"

/* --- aligned tables ------------------------------------------------------------------------ */

/* Give the table on top of the stack a metatable that prints it as an aligned table with the
 * columns listed in the array at index cols (absolute); rows are the table's array part, or
 * the array at index rows (absolute) when rows != 0. */
static void set_table_meta_exact(lua_State *L, int cols, int rows, int exact)
{
	lua_createtable(L, 0, 5);
	if (exact) {
		lua_pushvalue(L, exact);
		lua_setfield(L, -2, "__exact");
	}
	lua_pushvalue(L, cols);
	lua_setfield(L, -2, "__columns");
	if (rows) {
		lua_pushvalue(L, rows);
		lua_setfield(L, -2, "__rows");
	}
	lua_pushstring(L, TABLE_MT_NAME);
	lua_setfield(L, -2, "__name");
	lua_getfield(L, LUA_REGISTRYINDEX, "gwb.Table.tostring");
	lua_setfield(L, -2, "__tostring");
	lua_setmetatable(L, -2);
}

static void set_table_meta(lua_State *L, int cols, int rows)
{
	set_table_meta_exact(L, cols, rows, 0);
}

/* Display width of one code point: wcwidth() where the locale knows it, else a table of the
 * zero-width (combining, joiners, variation selectors) and double-width (CJK, Hangul,
 * fullwidth forms, emoji) ranges, so UTF-8 text aligns in any locale. */
static int cp_width(uint32_t cp)
{
	static const uint32_t zero[][2] = {
		{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
		{0x064B, 0x065F}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E},
		{0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2028, 0x202E},
		{0x2060, 0x2064}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
		{0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
	};
	static const uint32_t wide[][2] = {
		{0x1100, 0x115F}, {0x231A, 0x231B}, {0x2329, 0x232A}, {0x23E9, 0x23EC},
		{0x25FD, 0x25FE}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x26AA, 0x26AB},
		{0x2705, 0x2705}, {0x2728, 0x2728}, {0x274C, 0x274C}, {0x2E80, 0x303E},
		{0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},
		{0xA960, 0xA97F}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE10, 0xFE19},
		{0xFE30, 0xFE6F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
		{0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
	};
	size_t k;

	if (cp < 0x7F)
		return 1;
	if (MB_CUR_MAX > 1) {
		int w = wcwidth((wchar_t)cp);
		if (w >= 0)
			return w;
	}
	for (k = 0; k < sizeof(zero) / sizeof(zero[0]); k++)
		if (cp >= zero[k][0] && cp <= zero[k][1])
			return 0;
	for (k = 0; k < sizeof(wide) / sizeof(wide[0]); k++)
		if (cp >= wide[k][0] && cp <= wide[k][1])
			return 2;
	return 1;
}

/* The code point at s (n bytes left); returns its length in bytes, and *cp = U+FFFD for a
 * byte that does not start a well-formed sequence (which then counts as one column). */
static size_t u8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len, k;
	uint32_t c = s[0];

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
	if (len == 3 && c > 0xEF)
		len = 0;
	if (!len || len > n)
		goto bad;
	c &= 0x3F >> (len - 1);
	for (k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80)
			goto bad;
		c = (c << 6) | (s[k] & 0x3F);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		goto bad;
	*cp = c;
	return len;
bad:
	*cp = 0xFFFD;
	return 1;
}

#define MAX_CELL_COLS 48    /* a longer cell is cut to this many columns, ending in "..." */

static int ch_width(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7F ? 1 : cp_width(cp);   /* controls print as a space */
}

/* Copy s into out (sz bytes, >= 4 * MAX_CELL_COLS + 1) as one table cell: control characters
 * become spaces, a stray byte '?', and text wider than MAX_CELL_COLS display columns is cut at
 * a character boundary and ends in "..."; returns the cell's display width. */
static int cell_copy(const char *s, size_t len, char *out, size_t sz)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, o = 0;
	uint32_t cp;
	int w = 0, limit = MAX_CELL_COLS;

	for (i = 0; i < len && w <= MAX_CELL_COLS; ) {
		i += u8_next(p + i, len - i, &cp);
		w += ch_width(cp);
	}
	if (w > MAX_CELL_COLS)
		limit = MAX_CELL_COLS - 3;
	w = 0;
	for (i = 0; i < len; ) {
		size_t n = u8_next(p + i, len - i, &cp);
		int cw = ch_width(cp);
		if (w + cw > limit || o + n + 4 > sz)
			break;
		if (cp < 0x20 || cp == 0x7F)
			out[o++] = ' ';
		else if (cp == 0xFFFD && n == 1)
			out[o++] = '?';   /* keep the output valid UTF-8 */
		else {
			memcpy(out + o, p + i, n);
			o += n;
		}
		w += cw;
		i += n;
	}
	if (i < len) {
		memcpy(out + o, "...", 3);
		o += 3;
		w += 3;
	}
	out[o] = 0;
	return w;
}

/* The text of the value at v as a cell; *right = 1 for numbers (right-aligned). Returns its
 * display width. Never calls metamethods. */
static int cell_text(lua_State *L, int v, char *buf, size_t sz, int *right, bool exact)
{
	char t[64];
	const char *s = t;
	size_t len;

	*right = 0;
	switch (lua_type(L, v)) {
	case LUA_TNUMBER:
		*right = 1;
		if (lua_isinteger(L, v))
			snprintf(t, sizeof(t), "%lld", (long long)lua_tointeger(L, v));
		else if (isnan(lua_tonumber(L, v)))
			snprintf(t, sizeof(t), "NA");
		else if (exact)   /* a float64 column's: every digit it holds */
			gwb_fmt_f64(t, sizeof(t), lua_tonumber(L, v));
		else
			snprintf(t, sizeof(t), "%.6g", lua_tonumber(L, v));
		break;
	case LUA_TSTRING:
		s = lua_tolstring(L, v, &len);
		return cell_copy(s, len, buf, sz);
	case LUA_TBOOLEAN:
		snprintf(t, sizeof(t), "%s", lua_toboolean(L, v) ? "true" : "false");
		break;
	case LUA_TNIL:
		t[0] = 0;
		break;
	default:
		snprintf(t, sizeof(t), "%s", luaL_typename(L, v));
	}
	return cell_copy(s, strlen(s), buf, sz);
}

/* The output of gwb_lua_table_tostring, grown in userdata at a fixed stack slot: values may be pushed
 * and popped freely while it is built (a luaL_Buffer must stay on top), and an error frees it
 * with the stack. */
typedef struct strbuf {
	lua_State *L;
	int idx;      /* the stack slot of the current userdata */
	char *p;
	size_t n, cap;
} strbuf;

static void sb_init(lua_State *L, strbuf *b)
{
	b->L = L;
	b->n = 0;
	b->cap = 4096;
	b->p = lua_newuserdatauv(L, b->cap, 0);
	b->idx = lua_gettop(L);
}

static void sb_add(strbuf *b, const char *s, size_t n)
{
	if (n > b->cap - b->n) {
		size_t cap = b->cap * 2;
		char *p;
		while (cap - b->n < n)
			cap *= 2;
		p = lua_newuserdatauv(b->L, cap, 0);
		memcpy(p, b->p, b->n);
		lua_replace(b->L, b->idx);
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void sb_chars(strbuf *b, char c, int n)
{
	char t[64];

	memset(t, c, sizeof(t));
	for (; n > 0; n -= (int)sizeof(t))
		sb_add(b, t, n < (int)sizeof(t) ? (size_t)n : sizeof(t));
}

static void sb_str(strbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* One cell: text of display width tw in a column of width w, right-aligned or not; the last
 * column of a line gets no trailing padding. */
static void sb_cell(strbuf *b, const char *text, int tw, int w, int right, int first, int last)
{
	if (!first)
		sb_add(b, "  ", 2);
	if (right)
		sb_chars(b, ' ', w - tw);
	sb_str(b, text);
	if (!right && !last)
		sb_chars(b, ' ', w - tw);
}

/* Push row r's value for the column named by the value at index key (nil when the row is not
 * a table). */
static void push_row_cell(lua_State *L, int rows_idx, lua_Integer r, int key)
{
	if (lua_rawgeti(L, rows_idx, r) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_pushnil(L);
		return;
	}
	lua_pushvalue(L, key);
	lua_rawget(L, -2);
	lua_remove(L, -2);
}

/* Whether the column named at key is in the set at exact (float64: shown in full). */
static bool col_exact(lua_State *L, int exact, int key)
{
	bool b;

	lua_pushvalue(L, key);
	b = lua_rawget(L, exact) != LUA_TNIL;
	lua_pop(L, 1);
	return b;
}

#define MAX_SHOW_ROWS 200
#define MAX_WIDTH 118

int gwb_lua_table_tostring(lua_State *L)
{
	lua_Integer ncol, nrow, shown, c, r, k, nsel = 0, gap = -1;
	int cols, rows_idx, exact, width = 0, tw, right, gw;
	int *w;
	lua_Integer *sel;
	bool ex;
	char cell[4 * MAX_CELL_COLS + 8], t[64];
	strbuf B;

	if (!lua_getmetatable(L, 1))
		return luaL_error(L, "not a gwb table");
	if (lua_getfield(L, -1, "__columns") != LUA_TTABLE)
		return luaL_error(L, "not a gwb table (its metatable has no __columns list)");
	cols = lua_gettop(L);
	if (lua_getfield(L, -2, "__rows") != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_pushvalue(L, 1);
	}
	rows_idx = lua_gettop(L);
	if (lua_getfield(L, -2, "__exact") != LUA_TTABLE) {   /* float64 columns, by name */
		lua_pop(L, 1);
		lua_newtable(L);
	}
	exact = lua_gettop(L);
	ncol = (lua_Integer)lua_rawlen(L, cols);
	nrow = (lua_Integer)lua_rawlen(L, rows_idx);
	shown = nrow < MAX_SHOW_ROWS ? nrow : MAX_SHOW_ROWS;
	/* w[c]: width, w[ncol + c]: right-aligned; sel: the columns shown, in order */
	w = lua_newuserdatauv(L, sizeof(int) * (size_t)(ncol + 1) * 2, 0);
	sel = lua_newuserdatauv(L, sizeof(lua_Integer) * (size_t)(ncol + 1), 0);
	for (c = 0; c < ncol; c++) {
		lua_rawgeti(L, cols, c + 1);
		w[c] = cell_text(L, -1, cell, sizeof(cell), &right, false);
		w[ncol + c] = 0;
		ex = col_exact(L, exact, lua_gettop(L));
		for (r = 0; r < shown; r++) {
			push_row_cell(L, rows_idx, r + 1, lua_gettop(L));
			tw = cell_text(L, -1, cell, sizeof(cell), &right, ex);
			if (tw > w[c])
				w[c] = tw;
			w[ncol + c] |= right;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		width += w[c] + 2;
	}
	if (width <= MAX_WIDTH + 2 || ncol < 2) {
		for (c = 0; c < ncol; c++)
			sel[nsel++] = c;
	} else {
		/* too wide: the first columns that fit, "..." and the last ones (a head's last
		 * column is the target, so it is always seen) */
		lua_Integer front = 0, back = ncol - 1;
		int used = w[ncol - 1] + 2 + 24;   /* the last column and the "... (N more)" mark */
		while (front < back && used + w[front] + 2 <= MAX_WIDTH)
			used += w[front++] + 2;
		if (!front)
			front = 1;
		while (back - 1 >= front && used + w[back - 1] + 2 <= MAX_WIDTH)
			used += w[--back] + 2;
		for (c = 0; c < front; c++)
			sel[nsel++] = c;
		gap = nsel;
		for (c = back; c < ncol; c++)
			sel[nsel++] = c;
	}
	/* the hidden columns: a column of "..." headed "... (N more columns)" */
	snprintf(t, sizeof(t), "... (%lld more columns)", (long long)(ncol - nsel));
	gw = (int)strlen(t);
	sb_init(L, &B);
	for (k = 0; k < nsel; k++) {
		c = sel[k];
		if (k == gap)
			sb_cell(&B, t, gw, gw, 0, 0, 0);
		lua_rawgeti(L, cols, c + 1);
		tw = cell_text(L, -1, cell, sizeof(cell), &right, false);
		lua_pop(L, 1);
		sb_cell(&B, cell, tw, w[c], w[ncol + c], k == 0, k == nsel - 1);
	}
	sb_add(&B, "\n", 1);
	for (k = 0; k < nsel; k++) {
		if (k == gap) {
			sb_add(&B, "  ", 2);
			sb_chars(&B, '-', gw);
		}
		if (k)
			sb_add(&B, "  ", 2);
		sb_chars(&B, '-', w[sel[k]]);
	}
	for (r = 0; r < shown; r++) {
		sb_add(&B, "\n", 1);
		for (k = 0; k < nsel; k++) {
			c = sel[k];
			if (k == gap)
				sb_cell(&B, "...", 3, gw, 0, 0, 0);
			lua_rawgeti(L, cols, c + 1);
			ex = col_exact(L, exact, lua_gettop(L));
			push_row_cell(L, rows_idx, r + 1, lua_gettop(L));
			tw = cell_text(L, -1, cell, sizeof(cell), &right, ex);
			lua_pop(L, 2);
			sb_cell(&B, cell, tw, w[c], w[ncol + c], k == 0, k == nsel - 1);
		}
		while (B.n && B.p[B.n - 1] == ' ')   /* empty cells at the end leave no blanks */
			B.n--;
	}
	if (shown < nrow) {
		snprintf(t, sizeof(t), "\n... (%lld more rows)", (long long)(nrow - shown));
		sb_str(&B, t);
	}
	lua_pushlstring(L, B.p, B.n);
	return 1;
}

/* --- methods ------------------------------------------------------------------------------- */

/* Push the value of feature j in row i as the user reads it: the level name for categorical
 * columns, NaN for missing, else the number. */
static void push_cell(lua_State *L, const gwb_dataset *d, int j, size_t i)
{
	float v = d->X[(size_t)j * d->rows + i];

	if (d->wide && d->wide[j]) {   /* the exact value: an integer, or the float64 */
		const gwb_num64 *w = d->wide[j];
		if (w->type == GWB_DT_I64 && w->i[i] != GWB_I64_NA)
			lua_pushinteger(L, (lua_Integer)w->i[i]);
		else
			lua_pushnumber(L, gwb_dataset_at(d, j, i));
		return;
	}
	if (gwb_dataset_is_text(d, j)) {
		if (d->text[j]->v[i])
			lua_pushstring(L, d->text[j]->v[i]);
		else
			lua_pushnumber(L, NAN);
		return;
	}
	if (!isnan(v) && d->cat_levels[j] && v >= 0 && (int)v < d->cat_count[j])
		lua_pushstring(L, d->cat_levels[j][(int)v]);
	else
		lua_pushnumber(L, v);
}

static void push_target(lua_State *L, const gwb_dataset *d, size_t i)
{
	if (d->task == GWB_TASK_CLASSIFICATION)
		lua_pushstring(L, d->class_names[d->y[i]] ? d->class_names[d->y[i]] : "?");
	else
		lua_pushnumber(L, d->yr[i]);
}

/* head (tail = false) or tail: the first or last n rows, the target last */
static int head_or_tail(lua_State *L, bool tail)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	lua_Integer n = luaL_optinteger(L, 2, 5);
	size_t i, rows, from;
	int j, top;

	if (n < 0)
		return luaL_argerror(L, 2, "the number of rows must be >= 0");
	rows = (size_t)n < d->rows ? (size_t)n : d->rows;
	from = tail ? d->rows - rows : 0;
	lua_settop(L, 2);
	/* columns: features then the target */
	lua_createtable(L, d->features + 1, 0);
	for (j = 0; j < d->features; j++) {
		lua_pushstring(L, d->names[j] ? d->names[j] : "?");
		lua_rawseti(L, -2, j + 1);
	}
	if (!d->no_target) {
		lua_pushstring(L, d->target ? d->target : "target");
		lua_rawseti(L, -2, d->features + 1);
	}
	top = lua_gettop(L);
	lua_newtable(L);   /* the float64 columns, shown in full */
	for (j = 0; j < d->features; j++)
		if (gwb_dataset_dtype(d, j) == GWB_DT_F64) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, d->names[j] ? d->names[j] : "?");
		}
	lua_createtable(L, (int)rows, 0);
	for (i = from; i < from + rows; i++) {
		lua_createtable(L, 0, d->features + 1);
		for (j = 0; j < d->features; j++) {
			push_cell(L, d, j, i);
			lua_setfield(L, -2, d->names[j] ? d->names[j] : "?");
		}
		if (!d->no_target) {
			push_target(L, d, i);
			lua_setfield(L, -2, d->target ? d->target : "target");
		}
		lua_rawseti(L, -2, (lua_Integer)(i - from) + 1);
	}
	set_table_meta_exact(L, top, 0, top + 1);
	return 1;
}

int gwb_lua_ds_head(lua_State *L)
{
	return head_or_tail(L, false);
}

int gwb_lua_ds_tail(lua_State *L)
{
	return head_or_tail(L, true);
}

void gwb_lua_setnum(lua_State *L, const char *k, double v)
{
	if (isnan(v))
		return;
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

void gwb_lua_setint(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

/* describe's quartiles (numbers) or most frequent label and its count (categories) for
 * column j (features, then the target), into the row table on top */
static void describe_more(lua_State *L, const gwb_dataset *d, int j)
{
	static const double q[3] = {0.25, 0.5, 0.75};
	double out[3], *v;
	size_t *cnt, k, i, best = 0;
	gwb_col c;

	if (gwb_dataset_is_text(d, j) || gwb_col_of(d, j, &c))
		return;
	if (!c.levels) {
		if (gwb_col_quantiles(&c, q, 3, out) == GWB_OK) {
			gwb_lua_setnum(L, "25%", out[0]);
			gwb_lua_setnum(L, "median", out[1]);
			gwb_lua_setnum(L, "75%", out[2]);
		}
		return;
	}
	if (gwb_col_distinct(&c, &v, &cnt, &k))
		return;
	for (i = 1; i < k; i++)
		if (cnt[i] > cnt[best])
			best = i;
	if (k)
		lua_pushfstring(L, "%s (%I)", c.levels[(size_t)v[best]] ? c.levels[(size_t)v[best]] :
				"", (lua_Integer)cnt[best]);
	free(v);
	free(cnt);
	if (k)
		lua_setfield(L, -2, "top");
}

int gwb_lua_ds_describe(lua_State *L)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);
	static const char *const cols[] = {"column", "type", "dtype", "min", "25%", "median", "75%",
					   "max", "mean", "std", "missing", "distinct", "top"};
	gwb_colstats *s, ts;
	int j, top, c, ncols = 12;   /* "top" only where there are categories */

	for (j = 0; j < d->features; j++)
		if (d->cat_levels[j])
			ncols = 13;
	if (!d->no_target && d->task == GWB_TASK_CLASSIFICATION)
		ncols = 13;
	s = lua_newuserdatauv(L, sizeof(*s) * ((size_t)d->features + 1), 0);
	gwb_lua_check(L, gwb_dataset_describe(d, s, 0));
	lua_createtable(L, ncols, 0);
	for (c = 0; c < ncols; c++) {
		lua_pushstring(L, cols[c]);
		lua_rawseti(L, -2, c + 1);
	}
	top = lua_gettop(L);
	lua_createtable(L, d->features + 1, d->features + 1);
	for (j = 0; j <= d->features - d->no_target; j++) {
		const char *name;
		lua_createtable(L, 0, 12);
		describe_more(L, d, j);
		if (j < d->features) {
			name = d->names[j] ? d->names[j] : "?";
			if (gwb_dataset_is_text(d, j)) {
				lua_pushstring(L, "text");
				lua_setfield(L, -2, "type");
			} else if (d->cat_levels[j]) {
				lua_pushfstring(L, "categorical");
				lua_setfield(L, -2, "type");
			} else {
				lua_pushstring(L, "numeric");
				lua_setfield(L, -2, "type");
				gwb_lua_setnum(L, "min", s[j].min);
				gwb_lua_setnum(L, "max", s[j].max);
				gwb_lua_setnum(L, "mean", s[j].mean);
				if (gwb_dataset_dtype(d, j) == GWB_DT_I64 && s[j].missing < d->rows) {
					/* an int64 column's exact min and max */
					gwb_col cv;
					gwb_colsum cs;
					gwb_col_of(d, j, &cv);
					if (gwb_col_summary(&cv, &cs) == GWB_OK && cs.count) {
						gwb_lua_setint(L, "min", cs.imin);
						gwb_lua_setint(L, "max", cs.imax);
					}
				}
				gwb_lua_setnum(L, "std", s[j].std);
			}
			gwb_lua_setint(L, "missing", (lua_Integer)s[j].missing);
			gwb_lua_setint(L, "distinct", (lua_Integer)s[j].distinct);
			lua_pushstring(L, gwb_dataset_dtype_name(d, j));
			lua_setfield(L, -2, "dtype");
		} else {
			name = d->target ? d->target : "target";
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, "is_target");
			if (d->task == GWB_TASK_CLASSIFICATION) {
				lua_pushstring(L, "target: class");
				lua_setfield(L, -2, "type");
				gwb_lua_setint(L, "missing", 0);
				gwb_lua_setint(L, "distinct", d->classes);
			} else {
				gwb_colstats_of(d->yr, d->rows, &ts);
				lua_pushstring(L, "target: numeric");
				lua_setfield(L, -2, "type");
				gwb_lua_setnum(L, "min", ts.min);
				gwb_lua_setnum(L, "max", ts.max);
				gwb_lua_setnum(L, "mean", ts.mean);
				gwb_lua_setnum(L, "std", ts.std);
				gwb_lua_setint(L, "missing", (lua_Integer)ts.missing);
				gwb_lua_setint(L, "distinct", (lua_Integer)ts.distinct);
			}
		}
		lua_pushstring(L, name);
		lua_setfield(L, -2, "column");
		lua_pushvalue(L, -1);
		lua_setfield(L, -3, name);          /* by name */
		lua_rawseti(L, -2, j + 1);          /* in order */
	}
	set_table_meta(L, top, 0);
	return 1;
}

static gwb_dataset *need_classes(lua_State *L, const char *fn)
{
	gwb_dataset *d = gwb_lua_checkdataset(L, 1);

	if (d->task != GWB_TASK_CLASSIFICATION)
		luaL_error(L, "%s: the dataset is a regression (target \"%s\"); it has no classes",
			   fn, d->target ? d->target : "?");
	return d;
}

int gwb_lua_ds_class_counts(lua_State *L)
{
	gwb_dataset *d = need_classes(L, "class_counts");
	size_t *cnt;
	int k, cols, rows;

	cnt = lua_newuserdatauv(L, sizeof(*cnt) * ((size_t)d->classes + 1), 0);
	gwb_lua_count_classes(d, cnt);
	lua_createtable(L, 3, 0);
	lua_pushstring(L, "class");
	lua_rawseti(L, -2, 1);
	lua_pushstring(L, "count");
	lua_rawseti(L, -2, 2);
	lua_pushstring(L, "share");
	lua_rawseti(L, -2, 3);
	cols = lua_gettop(L);
	lua_createtable(L, d->classes, 0);
	rows = lua_gettop(L);
	lua_createtable(L, 0, d->classes);   /* the result: name -> count */
	for (k = 0; k < d->classes; k++) {
		const char *name = d->class_names[k] ? d->class_names[k] : "?";
		lua_pushinteger(L, (lua_Integer)cnt[k]);
		lua_setfield(L, -2, name);
		lua_createtable(L, 0, 3);
		lua_pushstring(L, name);
		lua_setfield(L, -2, "class");
		gwb_lua_setint(L, "count", (lua_Integer)cnt[k]);
		gwb_lua_setnum(L, "share", d->rows ? (double)cnt[k] / (double)d->rows : 0);
		lua_rawseti(L, rows, k + 1);
	}
	set_table_meta(L, cols, rows);
	return 1;
}
