/* lapi_files.c - the file primitives the Lua half of gwb writes through (fileio.h): whole
 * appended lines for the run log (gwb._append_line, one write() under an flock), atomic saves
 * of text (gwb._save_text) and run-log attachments (gwb._attach: a record too long for one
 * line, saved whole in <log>.d/ under a unique name). Lua's io library has no flock, no
 * O_EXCL temporaries and no rename-over, so the files of lua/gwb never write with it. */
#define _GNU_SOURCE
#include "lapi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"

/* gwb._append_line(path, line) -> true | nil, message */
static int l_append_line(lua_State *L)
{
	size_t n;
	const char *path = luaL_checkstring(L, 1), *line = luaL_checklstring(L, 2, &n);

	if (gwb_file_append_line(path, line, n)) {
		lua_pushnil(L);
		lua_pushstring(L, gwb_errmsg());
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* gwb._save_text(path, text [, what]) -> true (raises with the save's message) */
static int l_save_text(lua_State *L)
{
	size_t n;
	const char *path = luaL_checkstring(L, 1), *text = luaL_checklstring(L, 2, &n);
	const char *what = luaL_optstring(L, 3, "save");

	if (gwb_file_save(path, text, n, what))
		return luaL_error(L, "%s", gwb_errmsg());
	lua_pushboolean(L, 1);
	return 1;
}

/* gwb._attach(logpath, text) -> name relative to the log's folder | nil, message */
static int l_attach(lua_State *L)
{
	static unsigned long seq;
	size_t n;
	const char *log = luaL_checkstring(L, 1), *text = luaL_checklstring(L, 2, &n);
	const char *slash = strrchr(log, '/'), *base = slash ? slash + 1 : log;
	struct timespec ts;
	luaL_Buffer dir, rel;

	lua_settop(L, 2);   /* the folder, the relative name and the full path go at 3, 4, 5 */
	if (!*log) {
		lua_pushnil(L);
		lua_pushliteral(L, "the run log path is empty");
		return 2;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	luaL_buffinit(L, &dir);
	luaL_addstring(&dir, log);
	luaL_addstring(&dir, ".d");
	luaL_pushresult(&dir);                                   /* 3: <log>.d */
	if (mkdir(lua_tostring(L, 3), 0777) && errno != EEXIST) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot make the folder %s for a long run record: %s",
				lua_tostring(L, 3), strerror(errno));
		return 2;
	}
	luaL_buffinit(L, &rel);
	luaL_addstring(&rel, base);
	lua_pushfstring(L, ".d/%I-%I-%I.json", (lua_Integer)ts.tv_sec,
			(lua_Integer)getpid(), (lua_Integer)++seq);
	luaL_addvalue(&rel);
	luaL_pushresult(&rel);                                   /* 4: runs.jsonl.d/... */
	lua_pushfstring(L, "%s/%s", lua_tostring(L, 3), strchr(lua_tostring(L, 4), '/') + 1);
	if (gwb_file_save(lua_tostring(L, 5), text, n, "gwb.log_run")) {
		lua_pushnil(L);
		lua_pushstring(L, gwb_errmsg());
		return 2;
	}
	lua_pushvalue(L, 4);
	return 1;
}

static const struct {
	const char *name;
	lua_CFunction fn;
	const char *help;
} funcs[] = {
	{"_append_line", l_append_line, "gwb._append_line(path, line) -> true | nil, message\n"
	 "Append one line (ending in a newline, at most gwb._append_max = PIPE_BUF bytes) with one\n"
	 "write() under an flock: concurrent writers never interleave; a failed write (full disk,\n"
	 "file-size limit) leaves only whole lines. The run log writes through it."},
	{"_save_text", l_save_text, "gwb._save_text(path, text [, what]) -> true\n"
	 "Save text atomically, as every gwb save (temporary + fsync + rename; a pipe, device or\n"
	 "/dev/stdout written in place); raises with the reason. rf predict --out uses it."},
	{"_attach", l_attach, "gwb._attach(logpath, text) -> name | nil, message\n"
	 "Save a run record too long for one line of the run log whole in <log>.d/ under a new\n"
	 "name, returned relative to the log's folder (the line that names it is written after)."},
	{NULL, NULL, NULL},
};

int gwb_open_files(lua_State *L)
{
	int i;
	char full[64];

	if (lua_getglobal(L, "gwb") != LUA_TTABLE)
		return luaL_error(L, "gwb_open_files: the gwb table is missing (open core first)");
	for (i = 0; funcs[i].name; i++) {
		lua_pushcfunction(L, funcs[i].fn);
		snprintf(full, sizeof(full), "gwb.%s", funcs[i].name);
		gwb_lua_sethelp(L, -1, full, funcs[i].help);
		lua_setfield(L, -2, funcs[i].name);
	}
	lua_pushinteger(L, GWB_APPEND_MAX);
	lua_setfield(L, -2, "_append_max");
	lua_pop(L, 1);
	return 0;
}
