/* lapi_init.c - the one list of Lua modules gwb opens, and gwb_lua_openlibs (as Lua's
 * linit.c): the only file that knows every binding; nothing calls into it but the front end.
 * A new module: write src/lapi_<name>.c with gwb_open_<name>, declare it in lapi.h, add it
 * here. */
#include "lapi.h"

/* The one list of modules that gwb opens, in order. */
static const lua_CFunction openers[] = {
	gwb_open_core,
	gwb_open_files,
	gwb_open_mpi,
	gwb_open_gpu,
	gwb_open_data,
	gwb_open_table,
	gwb_open_rf,
	gwb_open_search,
	gwb_open_panel,
	gwb_open_teach,
	gwb_open_mat,
	gwb_open_eig,
	gwb_open_sparse,
	gwb_open_metrics,
	gwb_open_plot,
	gwb_open_switches,
	NULL,
};

void gwb_lua_openlibs(lua_State *L)
{
	int i;

	for (i = 0; openers[i]; i++) {
		lua_pushcfunction(L, openers[i]);
		lua_call(L, 0, 0);
	}
}
