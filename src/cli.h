/* cli.h - one-shot commands (`gwb rf train FILE --target y`, `gwb eig A.mtx`, `gwb info`):
 * their options are parsed here, in C, into a Lua options table, and each command runs as the
 * same Lua API call a script would make (lua/gwb/cli.lua), in the caller's state.
 * Owns nothing: the caller owns the lua_State. */
#ifndef GWB_CLI_H
#define GWB_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <lua.h>

/* How many words of argv[0..argc) name a command (1 for "info", 2 for "rf train"), 0 when
 * argv[0] is not a command word (then it is a script). */
int gwb_cli_match(int argc, char **argv);

/* Run the command argv[0..argc) (gwb_cli_match(argc, argv) > 0). Returns the exit status:
 * 0 done, 1 the computation failed, 2 usage (unknown option, missing argument). Messages go
 * to stderr prefixed "gwb: <command>: ". */
int gwb_cli_run(lua_State *L, int argc, char **argv);

/* The list of commands, one line each, for `gwb --help` and `gwb help`. */
void gwb_cli_list(FILE *f);

#endif
