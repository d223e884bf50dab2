/* embed.h - the Lua files of lua/gwb, compiled to bytecode at build time (tools/luac-embed.c)
 * and kept in the binary, so that starting gwb parses no Lua. Which copy wins: the embedded
 * one, unless GWB_LUA_PATH is set (then package.path finds the files, as before) or the
 * source tree's file differs in size or time from the one compiled in (an edit since the last
 * make: the file is loaded). The table and its bytes are static data owned by the binary. */
#ifndef GWB_EMBED_H
#define GWB_EMBED_H

#include <stddef.h>

struct lua_State;

struct gwb_embedded {
	const char *module;          /* "gwb", "gwb.help", ... */
	const char *path;            /* the source, relative to the source tree: lua/gwb/help.lua */
	const unsigned char *code;   /* lua_dump output, with line information */
	size_t size;
	long long src_size, src_mtime;   /* of the source when it was compiled */
};

/* Terminated by an entry with module NULL (generated into the build folder). */
extern const struct gwb_embedded gwb_embedded[];

/* Put a loader for each embedded module that wins (see above) into package.preload. */
void gwb_embed_preload(struct lua_State *L);

#endif
