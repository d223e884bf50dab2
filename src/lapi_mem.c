/* lapi_mem.c - memory the collector sees. Lua's collector counts only its own allocations:
 * a loop that drops a 128 MB Matrix per iteration looks to it like a loop of 16-byte boxes,
 * so it would let gigabytes of dead C memory pile up. Every boxed object (lapi.c's newbox and
 * pushbox, through which every Dataset, Matrix, SparseMatrix, Eigen result and Forest is made)
 * is therefore measured by its type's size function and its bytes added to a per-state
 * external total; when the total has grown since the last collection by more than the larger
 * of 64 MiB and what was live after it (Lua's own 200% pause, applied to C memory), the next
 * userdata creation runs a full collection, as LuaJIT's and CPython's extension types report
 * external memory to theirs. Releasing a box (__gc or close) subtracts what it added. */
#include "lapi.h"

#include <string.h>

#define EXT_KEY "gwb.extmem"       /* registry: the per-state counter (a full userdata) */
#define EXT_MIN ((size_t)64 << 20) /* never collect for less growth than this */
#define MAX_TYPES 16
#define MAX_PENDING 32

/* The box layout lapi.c uses: the object pointer first (what modules see), then its bytes. */
typedef struct gwb_box {
	void *p;
	size_t bytes;   /* what this box added to the external total */
} gwb_box;

typedef struct extmem {
	size_t total;    /* bytes of the live (not yet released) boxes, as measured */
	size_t at_gc;    /* total after the last collection this ran */
	size_t collections;
	int npending;    /* boxes made empty whose object was not stored yet (newbox) */
	gwb_box *pending[MAX_PENDING];
	const char *pending_mt[MAX_PENDING];
} extmem;

static struct {
	const char *mt;
	gwb_bytes_fn fn;
} types[MAX_TYPES];
static int ntypes;

void gwb_lua_boxbytes(const char *mt, gwb_bytes_fn fn)
{
	int i;

	for (i = 0; i < ntypes; i++)
		if (!strcmp(types[i].mt, mt)) {
			types[i].fn = fn;
			return;
		}
	if (ntypes < MAX_TYPES) {
		types[ntypes].mt = mt;
		types[ntypes++].fn = fn;
	}
}

static gwb_bytes_fn bytes_fn(const char *mt)
{
	int i;

	for (i = 0; i < ntypes; i++)
		if (!strcmp(types[i].mt, mt))
			return types[i].fn;
	return NULL;
}

static extmem *state(lua_State *L)
{
	extmem *m;

	if (lua_getfield(L, LUA_REGISTRYINDEX, EXT_KEY) == LUA_TUSERDATA) {
		m = lua_touserdata(L, -1);
		lua_pop(L, 1);
		return m;
	}
	lua_pop(L, 1);
	m = lua_newuserdatauv(L, sizeof(*m), 0);
	memset(m, 0, sizeof(*m));
	lua_setfield(L, LUA_REGISTRYINDEX, EXT_KEY);
	return m;
}

/* Measure a box whose object is there now; false when it is still empty. */
static bool settle(extmem *m, gwb_box *b, const char *mt)
{
	gwb_bytes_fn fn;

	if (!b->p)
		return false;
	fn = bytes_fn(mt);
	b->bytes = fn ? fn(b->p) : 0;
	m->total += b->bytes;
	return true;
}

static void settle_pending(extmem *m)
{
	int i, k = 0;

	for (i = 0; i < m->npending; i++)
		if (!settle(m, m->pending[i], m->pending_mt[i])) {
			m->pending[k] = m->pending[i];
			m->pending_mt[k++] = m->pending_mt[i];
		}
	m->npending = k;
}

static void unpend(extmem *m, const gwb_box *b)
{
	int i;

	for (i = 0; i < m->npending; i++)
		if (m->pending[i] == b) {
			m->pending[i] = m->pending[--m->npending];
			m->pending_mt[i] = m->pending_mt[m->npending];
			return;
		}
}

void gwb_lua_mem_track(lua_State *L, void *box, const char *mt)
{
	extmem *m = state(L);
	gwb_box *b = box;

	unpend(m, b);
	if (settle(m, b, mt))
		return;
	if (m->npending == MAX_PENDING) {   /* (many empty boxes at once: drop the oldest) */
		memmove(m->pending, m->pending + 1, sizeof(m->pending[0]) * (MAX_PENDING - 1));
		memmove(m->pending_mt, m->pending_mt + 1, sizeof(m->pending_mt[0]) *
			(MAX_PENDING - 1));
		m->npending--;
	}
	m->pending[m->npending] = b;
	m->pending_mt[m->npending++] = mt;
}

void gwb_lua_mem_release(lua_State *L, void *box)
{
	extmem *m = state(L);
	gwb_box *b = box;

	unpend(m, b);
	m->total -= b->bytes <= m->total ? b->bytes : m->total;
	b->bytes = 0;
	/* what was live after the last collection is at most what is live now: a collection
	 * that was not ours (collectgarbage(), Lua's own cycle, a close) lowers it too, or the
	 * next threshold would stay as high as the dead objects' total */
	if (m->at_gc > m->total)
		m->at_gc = m->total;
}

void gwb_lua_mem_pressure(lua_State *L)
{
	extmem *m = state(L);
	size_t room;

	settle_pending(m);
	room = m->at_gc > EXT_MIN ? m->at_gc : EXT_MIN;
	if (m->total <= m->at_gc || m->total - m->at_gc <= room)
		return;
	/* collectgarbage("stop") is the user's to keep. Inside a finalizer (a __gc that makes a
	 * userdata) Lua 5.4 answers every lua_gc option with -1 and collects nothing: neither
	 * that answer nor a refused collection may count as one, or at_gc would rise to the dead
	 * objects' total and the next real collection wait twice as long (seen: 16 dropped
	 * 32 MiB matrices live at once) */
	if (lua_gc(L, LUA_GCISRUNNING) != 1)
		return;
	if (lua_gc(L, LUA_GCCOLLECT) != 0)
		return;
	m->collections++;
	m->at_gc = m->total;
}

size_t gwb_lua_mem_external(lua_State *L, size_t *collections)
{
	extmem *m = state(L);

	settle_pending(m);
	if (collections)
		*collections = m->collections;
	return m->total;
}
