/* repl.h - the interactive prompt and the code runner shared with script mode.
 * Owns nothing: the caller owns the lua_State. */
#ifndef GWB_REPL_H
#define GWB_REPL_H

#include <lua.h>

/* Install the SIGINT handler (flag + Lua hook, as lua.c's laction). */
void gwb_repl_signals(void);

/* Run the function on top of the stack with nargs arguments in protected mode, with a
 * traceback message handler and Ctrl-C wired to stop it. Returns a lua_pcall status;
 * on error the message (with traceback) is on the stack. */
int gwb_repl_docall(lua_State *L, int nargs, int nres);

/* Print the error on the stack to stderr (prefixed with progname) and pop it. */
void gwb_repl_report(lua_State *L, const char *progname);

/* The REPL: read, evaluate, print until Ctrl-D. Uses readline on a tty. Under mpirun with
 * several ranks this is rank 0's: each complete chunk is broadcast to the other ranks (which
 * run gwb_repl_follow) before it runs here, and after it every rank's error, if any, is
 * gathered and printed as "gwb: rank R (host): message". */
void gwb_repl_run(lua_State *L);
/* Ranks other than 0 under mpirun: run the chunks rank 0's REPL broadcasts, in order, and
 * report each one's error to it, until rank 0 leaves. */
void gwb_repl_follow(lua_State *L);

/* Append one history entry (a line, or a chunk of lines) to the history file at path and keep
 * its last max lines (trimmed once it passes max + max / 10; max <= 0: no cap). An exclusive
 * flock on "<path>.lock" is held throughout, so REPLs sharing the file lose nothing; the trim
 * is an atomic save. Returns 0, or -1 on error (errno). */
int gwb_history_append(const char *path, const char *entry, int max);

#endif
