/* lapi_mpi.c - the `gwb.mpi` Lua module: this rank, the job's size and host, and the
 * collectives on Lua values (mpi.c underneath). Values cross as bytes: nil, booleans,
 * integers, floats, strings and tables of them (nested, to a depth of 64), Datasets (the
 * .gwbd image, dsio.c's gwb_dsio_save_mem / load_mem, so every check of a file load applies)
 * and Matrices (shape, dtype, layout and the elements). Alone (no mpirun, or MPI=0) it is a
 * job of one rank: bcast returns its value, gather a list of one, allreduce the value. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "dense.h"
#include "dsio.h"
#include "lapi.h"
#include "mgpu.h"
#include "mpi.h"

#define MAX_DEPTH 64

/* --- values to bytes and back ---------------------------------------------------------------- */

typedef struct sbuf {
	unsigned char *p;
	size_t n, cap;
} sbuf;

/* Room for n more bytes at b->p + b->n. */
static void sb_reserve(lua_State *L, sbuf *b, size_t n)
{
	if (b->n + n > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		unsigned char *q;
		while (c < b->n + n)
			c *= 2;
		if (!(q = realloc(b->p, c))) {
			free(b->p);
			b->p = NULL;
			luaL_error(L, "gwb.mpi: out of host memory packing a value");
		}
		b->p = q;
		b->cap = c;
	}
}

static void sb_put(lua_State *L, sbuf *b, const void *v, size_t n)
{
	sb_reserve(L, b, n);
	if (n)
		memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void sb_u64(lua_State *L, sbuf *b, uint64_t v) { sb_put(L, b, &v, 8); }
static void sb_tag(lua_State *L, sbuf *b, char t) { sb_put(L, b, &t, 1); }

/* The packing buffer lives in a userdata whose __gc frees it, so an error while packing
 * (luaL_error) leaks nothing. */
static int sbuf_gc(lua_State *L)
{
	sbuf *b = lua_touserdata(L, 1);
	free(b->p);
	b->p = NULL;
	return 0;
}

static sbuf *sbuf_new(lua_State *L)
{
	sbuf *b = lua_newuserdatauv(L, sizeof(sbuf), 0);
	memset(b, 0, sizeof(*b));
	if (luaL_newmetatable(L, "gwb.mpi.sbuf")) {
		lua_pushcfunction(L, sbuf_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return b;
}

static void pack(lua_State *L, sbuf *b, int idx, int depth, const char *fn)
{
	idx = lua_absindex(L, idx);
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
		sb_tag(L, b, 'n');
		return;
	case LUA_TBOOLEAN:
		sb_tag(L, b, lua_toboolean(L, idx) ? 'T' : 'F');
		return;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx)) {
			int64_t v = lua_tointeger(L, idx);
			sb_tag(L, b, 'i');
			sb_put(L, b, &v, 8);
		} else {
			double v = lua_tonumber(L, idx);
			sb_tag(L, b, 'f');
			sb_put(L, b, &v, 8);
		}
		return;
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(L, idx, &n);
		sb_tag(L, b, 's');
		sb_u64(L, b, n);
		sb_put(L, b, s, n);
		return;
	}
	case LUA_TTABLE:
		if (depth >= MAX_DEPTH)
			luaL_error(L, "%s: the table nests deeper than %d levels (a table that "
				   "contains itself?); send a flatter one", fn, MAX_DEPTH);
		sb_tag(L, b, 't');
		lua_pushnil(L);
		while (lua_next(L, idx)) {
			pack(L, b, -2, depth + 1, fn);
			pack(L, b, -1, depth + 1, fn);
			lua_pop(L, 1);
		}
		sb_tag(L, b, 'e');
		return;
	case LUA_TUSERDATA:
		if (gwb_lua_testudata(L, idx, "gwb.Dataset")) {
			gwb_dataset *d = gwb_lua_checkdataset(L, idx);
			void *img;
			size_t n;
			gwb_lua_check(L, gwb_dsio_save_mem(d, &img, &n));
			sb_tag(L, b, 'D');
			sb_u64(L, b, n);
			sb_put(L, b, img, n);  /* (raises only on ENOMEM, img then leaks once) */
			free(img);
			return;
		}
		if (gwb_lua_testudata(L, idx, "gwb.Matrix")) {
			gwb_matrix *A = gwb_lua_checkmatrix(L, idx);
			uint64_t h[6] = {A->rows, A->cols, A->count, A->batched, A->dtype, A->layout};
			sb_tag(L, b, 'M');
			sb_put(L, b, h, sizeof(h));
			sb_put(L, b, A->data, gwb_matrix_bytes(A));
			return;
		}
		break;
	default:
		break;
	}
	luaL_error(L, "%s: cannot send a %s value (nil, booleans, numbers, strings, tables of "
		   "them, Datasets and Matrices can be sent)", fn, luaL_typename(L, idx));
}

typedef struct rbuf {
	const unsigned char *p;
	size_t n, at;
	const char *fn;
} rbuf;

static const void *rb_get(lua_State *L, rbuf *r, size_t n)
{
	const void *q;

	if (n > r->n - r->at)
		luaL_error(L, "%s: the value received is cut short (%zu bytes, %zu needed at %zu)",
			   r->fn, r->n, n, r->at);
	q = r->p + r->at;
	r->at += n;
	return q;
}

static uint64_t rb_u64(lua_State *L, rbuf *r)
{
	uint64_t v;
	memcpy(&v, rb_get(L, r, 8), 8);
	return v;
}

static void push_matrix(lua_State *L, rbuf *r)
{
	uint64_t h[6];
	gwb_matrix *A;
	size_t bytes;

	memcpy(h, rb_get(L, r, sizeof(h)), sizeof(h));
	if (h[4] > GWB_F64 || h[5] > GWB_COL_MAJOR)
		luaL_error(L, "%s: a Matrix received with an unknown dtype or layout", r->fn);
	if (h[3])
		gwb_lua_check(L, gwb_matrix_new_batch((size_t)h[2], (size_t)h[0], (gwb_dtype)h[4],
						      &A));
	else
		gwb_lua_check(L, gwb_matrix_new((size_t)h[0], (size_t)h[1], (gwb_dtype)h[4],
						(gwb_layout)h[5], &A));
	bytes = gwb_matrix_bytes(A);
	if (bytes > r->n - r->at) {
		gwb_matrix_free(A);
		luaL_error(L, "%s: a Matrix received is cut short", r->fn);
	}
	memcpy(A->data, r->p + r->at, bytes);
	r->at += bytes;
	gwb_lua_push_matrix(L, A);
}

static void unpack(lua_State *L, rbuf *r, int depth)
{
	char t = *(const char *)rb_get(L, r, 1);
	uint64_t n;

	luaL_checkstack(L, 4, "gwb.mpi: a value too deep");
	switch (t) {
	case 'n': lua_pushnil(L); return;
	case 'T': lua_pushboolean(L, 1); return;
	case 'F': lua_pushboolean(L, 0); return;
	case 'i': {
		int64_t v;
		memcpy(&v, rb_get(L, r, 8), 8);
		lua_pushinteger(L, (lua_Integer)v);
		return;
	}
	case 'f': {
		double v;
		memcpy(&v, rb_get(L, r, 8), 8);
		lua_pushnumber(L, v);
		return;
	}
	case 's':
		n = rb_u64(L, r);
		lua_pushlstring(L, rb_get(L, r, (size_t)n), (size_t)n);
		return;
	case 't':
		if (depth >= MAX_DEPTH)
			luaL_error(L, "%s: a value received nests too deep", r->fn);
		lua_newtable(L);
		while (r->at < r->n && r->p[r->at] != 'e') {
			unpack(L, r, depth + 1);
			unpack(L, r, depth + 1);
			lua_rawset(L, -3);
		}
		rb_get(L, r, 1);  /* 'e' */
		return;
	case 'D': {
		gwb_dataset *d;
		n = rb_u64(L, r);
		gwb_lua_check(L, gwb_dsio_load_mem(rb_get(L, r, (size_t)n), (size_t)n,
						   "the Dataset received", &d));
		gwb_lua_pushdataset(L, d);
		return;
	}
	case 'M':
		push_matrix(L, r);
		return;
	default:
		luaL_error(L, "%s: a value received has an unknown tag %d", r->fn, t);
	}
}

/* --- the module -------------------------------------------------------------------------------- */

static int opt_root(lua_State *L, int idx, const char *fn)
{
	lua_Integer r = luaL_optinteger(L, idx, 0);

	if (r < 0 || r >= gwb_mpi_size())
		return luaL_error(L, "%s: root %d is not a rank (0 to %d)", fn, (int)r,
				  gwb_mpi_size() - 1);
	return (int)r;
}

static int l_barrier(lua_State *L)
{
	gwb_lua_check(L, gwb_mpi_barrier());
	return 0;
}

static int l_bcast(lua_State *L)
{
	int root = opt_root(L, 2, "gwb.mpi.bcast");
	void *p = NULL;
	size_t n = 0;
	rbuf r = {0};
	sbuf *b;

	lua_settop(L, 2);
	b = sbuf_new(L);
	if (gwb_mpi_rank() == root) {
		pack(L, b, 1, 0, "gwb.mpi.bcast");
		p = b->p;
		n = b->n;
	}
	gwb_lua_check(L, gwb_mpi_bcast_bytes(&p, &n, root));
	if (gwb_mpi_rank() != root) {
		b->p = p;  /* freed with the userdata, whatever unpack raises */
		b->n = b->cap = n;
	}
	r.p = b->p;
	r.n = b->n;
	r.fn = "gwb.mpi.bcast";
	unpack(L, &r, 0);
	return 1;
}

static int l_gather(lua_State *L)
{
	int all = lua_type(L, 2) == LUA_TSTRING && !strcmp(lua_tostring(L, 2), "all");
	int root = all ? 0 : opt_root(L, 2, "gwb.mpi.gather");
	int size = gwb_mpi_size(), i;
	size_t *lens, at = 0;
	void *out = NULL;
	sbuf *b, *o;
	rbuf r = {0};
	gwb_status st;

	lua_settop(L, 2);
	b = sbuf_new(L);
	pack(L, b, 1, 0, "gwb.mpi.gather");
	lens = lua_newuserdatauv(L, (size_t)size * sizeof(size_t), 0);
	o = sbuf_new(L);
	st = gwb_mpi_gather(b->p, b->n, root, all, &out, lens);
	o->p = out;
	gwb_lua_check(L, st);
	if (!all && gwb_mpi_rank() != root)
		return 0;
	lua_createtable(L, size, 0);
	r.fn = "gwb.mpi.gather";
	for (i = 0; i < size; i++) {
		r.p = o->p + at;
		r.n = lens[i];
		r.at = 0;
		unpack(L, &r, 0);
		lua_rawseti(L, -2, i + 1);
		at += lens[i];
	}
	return 1;
}

static int l_allreduce(lua_State *L)
{
	const char *ops = luaL_optstring(L, 2, "sum");
	gwb_mpi_op op;
	double *x;
	size_t n, i;
	int scalar = lua_type(L, 1) == LUA_TNUMBER;

	if (gwb_mpi_op_parse(ops, &op))
		return luaL_error(L, "gwb.mpi.allreduce: %s", gwb_errmsg());
	if (!scalar && !lua_istable(L, 1))
		return luaL_error(L, "gwb.mpi.allreduce: x must be a number or an array of numbers "
				  "(got %s)", luaL_typename(L, 1));
	n = scalar ? 1 : lua_rawlen(L, 1);
	/* every rank must give the same length, or the reduction would mix elements */
	{
		double lens[2] = {(double)n, -(double)n};
		gwb_lua_check(L, gwb_mpi_allreduce(lens, 1, GWB_MPI_MAX));
		gwb_lua_check(L, gwb_mpi_allreduce(lens + 1, 1, GWB_MPI_MAX));
		if (lens[0] != -lens[1])
			return luaL_error(L, "gwb.mpi.allreduce: the ranks gave arrays of different "
					  "lengths (%.0f to %.0f); every rank must give as many "
					  "numbers", -lens[1], lens[0]);
	}
	x = lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0);
	for (i = 0; i < n; i++) {
		if (!scalar)
			lua_rawgeti(L, 1, (lua_Integer)i + 1);
		if (lua_type(L, scalar ? 1 : -1) != LUA_TNUMBER)
			return luaL_error(L, "gwb.mpi.allreduce: element %d is a %s, not a number",
					  (int)i + 1, luaL_typename(L, scalar ? 1 : -1));
		x[i] = lua_tonumber(L, scalar ? 1 : -1);
		if (!scalar)
			lua_pop(L, 1);
	}
	gwb_lua_check(L, gwb_mpi_allreduce(x, n, op));
	if (scalar) {
		lua_pushnumber(L, x[0]);
		return 1;
	}
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushnumber(L, x[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* Rows (a Dataset, a single Matrix) or matrices (a batch) dealt to the ranks in contiguous,
 * balanced ranges (gwb_deal, as devices get trees), packed one piece per rank on the root. */
static void pack_pieces(lua_State *L, int idx, sbuf *b, size_t *lens)
{
	int size = gwb_mpi_size(), r;
	size_t lo, hi, i, j, before;

	if (gwb_lua_testudata(L, idx, "gwb.Dataset")) {
		gwb_dataset *d = gwb_lua_checkdataset(L, idx), *part;
		size_t *rows = NULL;
		for (r = 0; r < size; r++) {
			void *img;
			size_t n;
			gwb_status st;
			gwb_deal(d->rows, size, r, &lo, &hi);
			if (!(rows = malloc((hi - lo + 1) * sizeof(size_t))))
				luaL_error(L, "gwb.mpi.scatter: out of host memory");
			for (i = lo; i < hi; i++)
				rows[i - lo] = i;
			st = gwb_dataset_take(d, rows, hi - lo, &part);
			free(rows);
			gwb_lua_check(L, st);
			st = gwb_dsio_save_mem(part, &img, &n);
			gwb_dataset_free(part);
			gwb_lua_check(L, st);
			before = b->n;
			sb_tag(L, b, 'D');
			sb_u64(L, b, n);
			sb_put(L, b, img, n);
			free(img);
			lens[r] = b->n - before;
		}
		return;
	}
	if (gwb_lua_testudata(L, idx, "gwb.Matrix")) {
		gwb_matrix *A = gwb_lua_checkmatrix(L, idx);
		size_t es = gwb_dtype_size(A->dtype);
		for (r = 0; r < size; r++) {
			uint64_t h[6] = {A->rows, A->cols, A->count, A->batched, A->dtype, A->layout};
			before = b->n;
			sb_tag(L, b, 'M');
			if (A->batched) {  /* matrices dealt */
				gwb_deal(A->count, size, r, &lo, &hi);
				h[2] = hi - lo;
				sb_put(L, b, h, sizeof(h));
				sb_put(L, b, (const char *)A->data + lo * A->rows * A->cols * es,
				       (hi - lo) * A->rows * A->cols * es);
			} else {  /* rows dealt, layout kept */
				gwb_matrix tmp = *A;
				gwb_deal(A->rows, size, r, &lo, &hi);
				h[0] = hi - lo;
				if (!h[0])
					luaL_error(L, "gwb.mpi.scatter: %zu rows cannot be dealt to %d "
						   "ranks (each needs a row at least)", A->rows, size);
				sb_put(L, b, h, sizeof(h));
				tmp.rows = hi - lo;
				/* element by element, into the piece's own layout */
				sb_reserve(L, b, (hi - lo) * A->cols * es);
				for (i = lo; i < hi; i++)
					for (j = 0; j < A->cols; j++)
						memcpy(b->p + b->n +
						       gwb_matrix_index(&tmp, 0, i - lo, j) * es,
						       (const char *)A->data +
						       gwb_matrix_index(A, 0, i, j) * es, es);
				b->n += (hi - lo) * A->cols * es;
			}
			lens[r] = b->n - before;
		}
		return;
	}
	luaL_error(L, "gwb.mpi.scatter: a Dataset (rows dealt) or a Matrix (rows, or the "
		   "matrices of a batch, dealt) expected on the root, got %s",
		   luaL_typename(L, idx));
}

static int l_scatter(lua_State *L)
{
	int root = opt_root(L, 2, "gwb.mpi.scatter");
	size_t *lens, n = 0;
	void *piece = NULL;
	sbuf *b, *o;
	rbuf r = {0};
	gwb_status st;

	lua_settop(L, 2);
	b = sbuf_new(L);
	lens = lua_newuserdatauv(L, (size_t)gwb_mpi_size() * sizeof(size_t), 0);
	/* the root says first whether it can deal what it has, so a bad value fails every rank
	 * (an error on the root alone would leave the others waiting) */
	{
		double ok = 1;
		if (gwb_mpi_rank() == root)
			ok = gwb_lua_testudata(L, 1, "gwb.Dataset") ||
			     gwb_lua_testudata(L, 1, "gwb.Matrix");
		gwb_lua_check(L, gwb_mpi_allreduce(&ok, 1, GWB_MPI_MIN));
		if (!ok)
			return luaL_error(L, "gwb.mpi.scatter: the root (rank %d) gave a %s; it "
					  "deals a Dataset (rows) or a Matrix (rows, or the matrices "
					  "of a batch)", root, gwb_mpi_rank() == root ?
					  luaL_typename(L, 1) : "value that is neither");
	}
	if (gwb_mpi_rank() == root)
		pack_pieces(L, 1, b, lens);
	o = sbuf_new(L);
	st = gwb_mpi_scatter(b->p, lens, root, &piece, &n);
	o->p = piece;
	gwb_lua_check(L, st);
	r.p = piece;
	r.n = n;
	r.fn = "gwb.mpi.scatter";
	unpack(L, &r, 0);
	return 1;
}

static int l_bytes(lua_State *L)
{
	uint64_t s, r;

	gwb_mpi_traffic(&s, &r);
	lua_createtable(L, 0, 2);
	SETN("sent", (double)s);
	SETN("received", (double)r);
	return 1;
}

static const gwb_reg funcs[] = {
	{"barrier", l_barrier,
	 "gwb.mpi.barrier()\n"
	 "Wait until every rank has reached this call. Alone (no mpirun): returns at once."},
	{"bcast", l_bcast,
	 "gwb.mpi.bcast(v [, root]) -> v\n"
	 "Root's v (root 0 by default) on every rank: nil, booleans, numbers, strings, tables of\n"
	 "them (nested), a Dataset or a Matrix (copied whole). The other ranks' v is ignored.\n"
	 "  d = gwb.mpi.bcast(gwb.mpi.rank == 0 and data.load(\"big.csv\") or nil)"},
	{"gather", l_gather,
	 "gwb.mpi.gather(v [, root]) -> {v of rank 0, v of rank 1, ...} on root, nil elsewhere\n"
	 "Every rank's value, in rank order (the same kinds of values as bcast). root = \"all\":\n"
	 "the list on every rank.\n"
	 "  hosts = gwb.mpi.gather(gwb.mpi.host, \"all\")"},
	{"allreduce", l_allreduce,
	 "gwb.mpi.allreduce(x [, op]) -> the reduced value on every rank\n"
	 "x: a number or an array of numbers (the same length on every rank); op: \"sum\"\n"
	 "(default), \"min\", \"max\" or \"prod\", element by element, in doubles.\n"
	 "  total = gwb.mpi.allreduce(#my_rows, \"sum\")"},
	{"scatter", l_scatter,
	 "gwb.mpi.scatter(x [, root]) -> this rank's part\n"
	 "Root's Dataset or Matrix dealt to the ranks in contiguous, balanced ranges in order:\n"
	 "the rows of a Dataset or of a Matrix, the matrices of a batch (rank r gets the r-th\n"
	 "range; the first ranks one more when it does not divide).\n"
	 "  part = gwb.mpi.scatter(gwb.mpi.rank == 0 and d or nil)"},
	{"bytes", l_bytes,
	 "gwb.mpi.bytes() -> {sent = n, received = n}\n"
	 "Bytes this rank has sent and received through gwb's collectives (gwb.mpi's and those\n"
	 "inside distributed rf.train, rf.cv, rf.search and eig.batched) since it started."},
	{NULL, NULL, NULL},
};

int gwb_open_mpi(lua_State *L)
{
	lua_getglobal(L, "gwb");
	if (!lua_istable(L, -1))
		return luaL_error(L, "gwb.mpi: the gwb module must be opened first");
	lua_newtable(L);
	{
		int i;
		for (i = 0; funcs[i].name; i++) {
			char name[64];
			lua_pushcfunction(L, funcs[i].fn);
			snprintf(name, sizeof(name), "gwb.mpi.%s", funcs[i].name);
			gwb_lua_sethelp(L, -1, name, funcs[i].help);
			lua_setfield(L, -2, funcs[i].name);
		}
	}
	lua_pushinteger(L, gwb_mpi_rank());
	lua_setfield(L, -2, "rank");
	lua_pushinteger(L, gwb_mpi_size());
	lua_setfield(L, -2, "size");
	lua_pushstring(L, gwb_mpi_host());
	lua_setfield(L, -2, "host");
	lua_pushboolean(L, gwb_mpi_built());
	lua_setfield(L, -2, "built");
	gwb_lua_sethelp(L, -1, "gwb.mpi",
			"gwb.mpi: ranks of one job (mpirun -np N gwb x.lua)\n"
			"rank (0-based), size (ranks in the job), host (this rank's), built (MPI\n"
			"compiled in); barrier, bcast, gather, allreduce, scatter, bytes.\n"
			"Without mpirun gwb is one rank of a job of one: size = 1, and every\n"
			"collective returns its own value.\n"
			"  if gwb.mpi.rank == 0 then print(gwb.mpi.size .. \" ranks\") end");
	lua_setfield(L, -2, "mpi");
	lua_pop(L, 1);
	return 0;
}
