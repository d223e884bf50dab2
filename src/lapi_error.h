/* lapi_error.h - how an error reaches a person: the message of gwb's own API without a Lua
 * traceback (with the script's file:line), user code's errors with a traceback trimmed to user
 * frames, one line for Ctrl-C, and "did you mean" for a misspelled module function, method or
 * field (the misses of gwb's module and class lookups are remembered until the error comes). */
#ifndef GWB_LAPI_ERROR_H
#define GWB_LAPI_ERROR_H

#include <lua.h>

/* The message handler's work: push the text to show for the error message msg (the error
 * object's string) raised in L, whose stack is still that of the error. The full traceback
 * when gwb.traceback is true. */
const char *gwb_lua_errmsg(lua_State *L, const char *msg);

/* Remember the misses of lookups in the table at idx (a module's functions: owner is its
 * name, "data"), so an error that follows can name the nearest names. */
void gwb_lua_watch_module(lua_State *L, int idx, const char *owner);

/* The same for a class's method table at idx (the class metatable at mt: its __fields are
 * names too). */
void gwb_lua_watch_methods(lua_State *L, int idx, int mt);

/* The error being raised is an interrupt (Ctrl-C): it is shown as one line. */
void gwb_lua_note_interrupt(void);

/* Forget the remembered miss (the start of each top-level call). */
void gwb_lua_forget_miss(lua_State *L);

/* gwb.suggest(word, names) -> "did you mean 'x'?" or nil: the suggestion rule (suggest.h) for
 * the Lua side (the CLI's and help's name checks). */
int gwb_lua_suggest(lua_State *L);

/* Push the nearest of the names in the array at idx to word, quoted ("'trees'", "'load' or
 * 'lead'"), or "" when none is near. */
const char *gwb_lua_push_suggestion(lua_State *L, const char *word, int idx);
/* The same with each name written after prefix ("data." gives 'data.load'; NULL: none). */
const char *gwb_lua_push_suggestion_as(lua_State *L, const char *word, int idx,
				       const char *prefix);

#endif
