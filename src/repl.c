/* repl.c - the REPL: lua.c's semantics over readline's callback interface, with completion,
 * persistent history, pretty printing and Ctrl-C that never kills the prompt. */
#define _GNU_SOURCE
#include "repl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/select.h>
#include <unistd.h>

#include <lauxlib.h>
#include <readline/history.h>
#include <readline/readline.h>

#include "fileio.h"
#include "intr.h"
#include "lapi_error.h"
#include "mpi.h"
#include "panel.h"

#define PROMPT1 "gwb> "
#define PROMPT2 "  >> "
#define HISTORY_MAX 1000

static lua_State *volatile running_L;  /* non-NULL while Lua code runs */

/* --- Ctrl-C --------------------------------------------------------------------------------- */

static void lstop(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	/* A C operation that already stopped for this Ctrl-C cleared the flag and raised its own
	 * message ("interrupted after 3 of 100 trees ..."); keep that one. */
	if (!gwb_intr_pending())
		return;
	gwb_lua_note_interrupt();  /* one line, no traceback */
	luaL_error(L, "interrupted");
}

static void on_sigint(int sig)
{
	lua_State *L = running_L;
	(void)sig;
	gwb_intr_raise();
	if (L)
		lua_sethook(L, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

void gwb_repl_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;  /* no SA_RESTART: select() at the prompt must see EINTR */
	sigaction(SIGINT, &sa, NULL);
}

static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	/* {usage = "..."}: a one-shot command's usage error (cli.c), passed through as it is */
	if (lua_type(L, 1) == LUA_TTABLE && lua_getfield(L, 1, "usage") == LUA_TSTRING) {
		lua_settop(L, 1);
		return 1;
	}
	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	/* gwb's own errors: the message (and the script's file:line); user code's: its trimmed
	 * traceback; everything with gwb.traceback = true (lapi_error.c) */
	gwb_lua_errmsg(L, msg);
	return 1;
}

int gwb_repl_docall(lua_State *L, int nargs, int nres)
{
	int status, base = lua_gettop(L) - nargs;

	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	gwb_intr_clear();
	gwb_lua_forget_miss(L);
	running_L = L;
	status = lua_pcall(L, nargs, nres, base);
	running_L = NULL;
	lua_sethook(L, NULL, 0, 0);
	lua_remove(L, base);
	/* A panel that its operation left up (an error, Ctrl-C) closes with the command, before
	 * the error is reported. */
	gwb_panel_command_end();
	return status;
}

void gwb_repl_report(lua_State *L, const char *progname)
{
	const char *msg = lua_tostring(L, -1);

	if (progname)
		fprintf(stderr, "%s: ", progname);
	fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
	fflush(stderr);
	lua_pop(L, 1);
}

/* --- reading lines ---------------------------------------------------------------------------- */

static char *got_line;
static int got_any, got_eof;

static void on_line(char *line)
{
	got_any = 1;
	if (!line)
		got_eof = 1;
	got_line = line;
	rl_callback_handler_remove();
}

enum { READ_OK, READ_EOF, READ_CANCEL };

static void noop_prep(int meta)
{
	(void)meta;
}

static void noop_deprep(void)
{
}

/* Completion lists while a persistent panel is up: printed to stdout, which the panel shows
 * in its output area (readline's own listing would write cursor movements there). */
static void panel_show_matches(char **matches, int n, int maxlen)
{
	int i, per = maxlen + 2 > 0 ? 78 / (maxlen + 2) : 1;

	if (per < 1)
		per = 1;
	for (i = 1; i <= n; i++)
		printf("%-*s%s", maxlen + 2, matches[i], i % per == 0 || i == n ? "\n" : "");
	fflush(stdout);
	rl_forced_update_display();
}

/* Readline draws into the panel's bottom line while panel.on() keeps it up, and on the
 * terminal otherwise. */
static void rl_setup_display(int in_panel)
{
	static FILE *devnull;

	if (in_panel) {
		if (!devnull)
			devnull = fopen("/dev/null", "w");
		rl_redisplay_function = gwb_panel_rl_redisplay;
		rl_prep_term_function = noop_prep;
		rl_deprep_term_function = noop_deprep;
		rl_completion_display_matches_hook = panel_show_matches;
		rl_catch_sigwinch = 0;
		rl_outstream = devnull ? devnull : stdout;
	} else {
		rl_redisplay_function = rl_redisplay;
		rl_prep_term_function = rl_prep_terminal;
		rl_deprep_term_function = rl_deprep_terminal;
		rl_completion_display_matches_hook = NULL;
		rl_catch_sigwinch = 1;
		rl_outstream = stdout;
	}
}

/* Read one line with readline's callback interface, so Ctrl-C at the prompt discards the line
 * (and any pending continuation) instead of killing the program. *out is malloc'd. */
static int read_tty_line(const char *prompt, char **out)
{
	int fd = fileno(rl_instream ? rl_instream : stdin);
	int in_panel = gwb_panel_persistent();

	got_any = got_eof = 0;
	got_line = NULL;
	rl_setup_display(in_panel);
	rl_callback_handler_install(prompt, on_line);
	for (;;) {
		fd_set fds;
		int r;

		FD_ZERO(&fds);
		FD_SET(fd, &fds);
		r = select(fd + 1, &fds, NULL, NULL, NULL);
		if (r < 0 && errno == EINTR) {
			if (gwb_intr_pending()) {
				gwb_intr_clear();
				rl_free_line_state();
				rl_callback_sigcleanup();
				rl_callback_handler_remove();
				fputs("^C\n", stdout);
				fflush(stdout);
				return READ_CANCEL;
			}
			continue;
		}
		if (r < 0) {
			rl_callback_handler_remove();
			return READ_EOF;
		}
		rl_callback_read_char();
		if (got_any) {
			if (got_eof)
				return READ_EOF;
			*out = got_line;
			if (in_panel) {
				/* the panel's output area shows the command above its output */
				printf("%s%s\n", prompt, got_line);
				fflush(stdout);
			}
			return READ_OK;
		}
	}
}

static int read_plain_line(const char *prompt, char **out)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	fputs(prompt, stdout);
	fflush(stdout);
	n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return READ_EOF;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	*out = line;
	return READ_OK;
}

/* --- completion ----------------------------------------------------------------------------- */

static lua_State *comp_L;

static int is_ident(const char *s)
{
	if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return 0;
	for (s++; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

static int gettable_protected(lua_State *L)
{
	lua_gettable(L, 1);
	return 1;
}

/* Push the value named by the dotted path expr[0..len) (e.g. "gpu" or "d.names"), or nil.
 * Field reads may run __index, so they run protected: completion never raises. */
static void push_path(lua_State *L, const char *expr, size_t len)
{
	size_t i = 0;

	lua_pushglobaltable(L);
	while (i < len) {
		size_t j = i;
		while (j < len && expr[j] != '.' && expr[j] != ':')
			j++;
		if (!lua_istable(L, -1) && !lua_isuserdata(L, -1)) {
			lua_pop(L, 1);
			lua_pushnil(L);
			return;
		}
		lua_pushcfunction(L, gettable_protected);
		lua_insert(L, -2);
		lua_pushlstring(L, expr + i, j - i);
		if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
			lua_pop(L, 1);
			lua_pushnil(L);
			return;
		}
		i = j + 1;
	}
}

/* Add the string keys of the table at idx that start with `part` to the candidate table at
 * cand (a set). */
static void add_keys(lua_State *L, int idx, int cand, const char *part, size_t plen)
{
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pop(L, 1);
		if (lua_type(L, -1) == LUA_TSTRING) {
			const char *k = lua_tostring(L, -1);
			if (!strncmp(k, part, plen) && is_ident(k) && strncmp(k, "__", 2)) {
				lua_pushvalue(L, -1);
				lua_pushboolean(L, 1);
				lua_rawset(L, cand);
			}
		}
	}
}

/* Candidates for the value on top: its own keys (tables) and its __index chain. */
static void collect(lua_State *L, int cand, const char *part, size_t plen)
{
	int depth;

	for (depth = 0; depth < 8; depth++) {
		if (lua_istable(L, -1))
			add_keys(L, -1, cand, part, plen);
		if (!lua_getmetatable(L, -1))
			break;
		lua_getfield(L, -1, "__methods");
		if (lua_istable(L, -1))
			add_keys(L, -1, cand, part, plen);
		lua_pop(L, 1);
		/* fields that a __index function answers (d.rows): named in __fields (help.lua) */
		lua_getfield(L, -1, "__fields");
		if (lua_istable(L, -1))
			add_keys(L, -1, cand, part, plen);
		lua_pop(L, 1);
		lua_getfield(L, -1, "__index");
		lua_remove(L, -2);  /* the metatable */
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		lua_remove(L, -2);  /* continue with __index */
	}
	lua_pop(L, 1);
}

/* Lua's word breaks, except inside a string, where a file name's '/' and '.' are part of the
 * word (readline would otherwise drop a leading '/'). */
#define LUA_WORD_BREAKS " \t\n\"\\'`@$><=;|&{(,[+-*/%^~#}"

static char *word_breaks(void)
{
	char q = 0;
	int i;

	for (i = 0; i < rl_point && rl_line_buffer[i]; i++) {
		char c = rl_line_buffer[i];
		if (q && c == '\\')
			i++;
		else if (q && c == q)
			q = 0;
		else if (!q && (c == '"' || c == '\''))
			q = c;
	}
	return (char *)(q ? " \t\n\"'" : LUA_WORD_BREAKS);
}

static char **complete(const char *text, int start, int end)
{
	lua_State *L = comp_L;
	const char *sep = NULL, *p;
	char **matches = NULL;
	size_t n = 0, prefix_len, plen;
	int top, cand;

	(void)start;
	(void)end;
	rl_attempted_completion_over = 1;  /* never fall back to file names */
	/* readline resets this before every completion: no space after a name (a table wants a
	 * '.', a function a '(') */
	rl_completion_append_character = '\0';
	if (rl_completion_quote_character) {
		/* inside a string: file names (data.load("datasets/ir<Tab>) */
		rl_filename_completion_desired = 1;
		return rl_completion_matches(text, rl_filename_completion_function);
	}
	if (!L)
		return NULL;
	for (p = text; *p; p++)
		if (*p == '.' || *p == ':')
			sep = p;
	top = lua_gettop(L);
	lua_newtable(L);
	cand = lua_gettop(L);
	if (sep) {
		prefix_len = (size_t)(sep - text) + 1;
		push_path(L, text, (size_t)(sep - text));
	} else {
		prefix_len = 0;
		lua_pushglobaltable(L);
	}
	plen = strlen(text + prefix_len);
	collect(L, cand, text + prefix_len, plen);
	if (!sep) {
		static const char *const kw[] = {"and", "break", "do", "else", "elseif", "end",
			"false", "for", "function", "goto", "if", "in", "local", "nil", "not", "or",
			"repeat", "return", "then", "true", "until", "while", NULL};
		int i;
		for (i = 0; kw[i]; i++) {
			if (!strncmp(kw[i], text, plen)) {
				lua_pushboolean(L, 1);
				lua_setfield(L, cand, kw[i]);
			}
		}
	}
	/* count and copy */
	lua_pushnil(L);
	while (lua_next(L, cand)) {
		lua_pop(L, 1);
		n++;
	}
	if (n) {
		size_t i = 1;
		matches = calloc(n + 2, sizeof(char *));
		lua_pushnil(L);
		while (matches && lua_next(L, cand)) {
			const char *k = lua_tostring(L, -2);
			size_t kl = strlen(k);
			char *m = malloc(prefix_len + kl + 1);
			lua_pop(L, 1);
			if (!m)
				continue;
			memcpy(m, text, prefix_len);
			memcpy(m + prefix_len, k, kl + 1);
			matches[i++] = m;
		}
		if (matches) {
			/* matches[0]: the longest common prefix of all candidates */
			size_t lcp = strlen(matches[1]), j;
			for (j = 2; j < i; j++) {
				size_t q = 0;
				while (q < lcp && matches[j][q] == matches[1][q])
					q++;
				lcp = q;
			}
			matches[0] = strndup(matches[1], lcp);
		}
	}
	lua_settop(L, top);
	return matches;
}

/* --- the loop --------------------------------------------------------------------------------- */

static char history_path[4096];

/* The history file is shared by every REPL of the user: appends and trims hold an exclusive
 * flock on "<path>.lock" (not on the file itself, which a trim replaces by rename), so
 * concurrent REPLs lose no line at the cap; a trim is an atomic save (fileio.h). */
static int history_lock(const char *path)
{
	char lk[4200];
	int fd;

	snprintf(lk, sizeof(lk), "%s.lock", path);
	fd = open(lk, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

/* Keep the last max lines of path once it holds more than max + max / 10 (a rewrite every
 * tenth of the cap, not at every line); called under the lock. */
static int history_trim(const char *path, int max)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, k, lines = 0, start = 0;
	int rc = 0;

	if (!f)
		return -1;
	for (;;) {
		if (n == cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!nb) {
				rc = -1;
				goto out;
			}
			buf = nb;
		}
		k = fread(buf + n, 1, cap - n, f);
		if (!k)
			break;
		n += k;
	}
	for (k = 0; k < n; k++)
		lines += buf[k] == '\n';
	if (lines > (size_t)max + (size_t)max / 10) {
		size_t drop = lines - (size_t)max;
		for (k = 0; k < n && drop; k++)
			if (buf[k] == '\n' && !--drop)
				start = k + 1;
		rc = gwb_file_save(path, buf + start, n - start, "history") ? -1 : 0;
	}
out:
	fclose(f);
	free(buf);
	return rc;
}

int gwb_history_append(const char *path, const char *entry, int max)
{
	size_t len = strlen(entry);
	char *line = malloc(len + 2);
	int lk, fd, rc = -1;

	if (!line)
		return -1;
	memcpy(line, entry, len);
	line[len++] = '\n';
	lk = history_lock(path);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* one write: O_APPEND puts it whole at the end, after any other REPL's */
		rc = write(fd, line, len) == (ssize_t)len ? 0 : -1;
		if (close(fd))
			rc = -1;
		if (!rc && max > 0)
			rc = history_trim(path, max);
	}
	if (lk >= 0)
		close(lk);   /* releases the lock */
	free(line);
	return rc;
}

static void history_setup(void)
{
	const char *h = getenv("GWB_HISTORY"), *home = getenv("HOME");

	if (h && *h)
		snprintf(history_path, sizeof(history_path), "%s", h);
	else if (home && *home)
		snprintf(history_path, sizeof(history_path), "%s/.gwb_history", home);
	else
		return;
	using_history();
	stifle_history(HISTORY_MAX);
	read_history(history_path);
}

static void history_add(const char *chunk)
{
	if (!*chunk)
		return;
	add_history(chunk);
	if (history_path[0])
		gwb_history_append(history_path, chunk, HISTORY_MAX);
}

/* Compile the buffer as `return <buf>` (expression) or as statements. Returns LUA_OK, an error
 * status with the message on the stack, or -1 when the chunk is incomplete (needs more). */
static int compile_chunk(lua_State *L, const char *buf)
{
	const char *src = buf;
	int st;

	if (buf[0] == '=')  /* lua 5.1 style "=expr" */
		src = buf + 1;
	{
		/* "1+1;" is the expression 1+1, printed quietly (the caller sees the ';') */
		size_t n = strlen(src);
		while (n && strchr(" \t\n;", src[n - 1]))
			n--;
		lua_pushfstring(L, "return %s;", lua_pushlstring(L, src, n));
		lua_remove(L, -2);
	}
	st = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=stdin");
	lua_remove(L, -2);
	if (st == LUA_OK)
		return LUA_OK;
	lua_pop(L, 1);
	st = luaL_loadbuffer(L, buf, strlen(buf), "=stdin");
	if (st == LUA_ERRSYNTAX) {
		size_t lmsg;
		const char *msg = lua_tolstring(L, -1, &lmsg);
		static const char eof[] = "<eof>";
		if (lmsg >= sizeof(eof) - 1 && !strcmp(msg + lmsg - (sizeof(eof) - 1), eof)) {
			lua_pop(L, 1);
			return -1;
		}
	}
	return st;
}

static void print_results(lua_State *L, int n)
{
	int base = lua_gettop(L) - n;

	if (n <= 0)
		return;
	/* _ holds the last printed result (the first, when a line gives several) */
	lua_pushvalue(L, base + 1);
	lua_setglobal(L, "_");
	lua_getglobal(L, "gwb");
	if (lua_istable(L, -1) && lua_getfield(L, -1, "print_results") == LUA_TFUNCTION) {
		lua_remove(L, -2);
		lua_insert(L, base + 1);
		if (gwb_repl_docall(L, n, 0) != LUA_OK)
			gwb_repl_report(L, "gwb");
		return;
	}
	lua_settop(L, base + n);
	lua_getglobal(L, "print");
	lua_insert(L, base + 1);
	if (gwb_repl_docall(L, n, 0) != LUA_OK)
		gwb_repl_report(L, "gwb");
}

static int timing_enabled(lua_State *L)
{
	int on = 0;

	lua_getglobal(L, "gwb");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "timing");
		on = lua_toboolean(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return on;
}

/* The line without surrounding blanks, in buf (NUL-terminated); its length. */
static size_t trimmed(const char *s, char *buf, size_t cap)
{
	size_t a = strspn(s, " \t\n"), n = strlen(s + a);

	while (n && strchr(" \t\n", s[a + n - 1]))
		n--;
	if (n >= cap)
		return (size_t)-1;
	memcpy(buf, s + a, n);
	buf[n] = '\0';
	return n;
}

/* "?rf.train", "rf.train?", "?" or "help" alone, help(NAME): help at the prompt. Returns the
 * Lua call to run instead
 * (gwb.help_at_prompt "rf.train"), or NULL when the line is not such a request. */
static char *help_request(const char *chunk)
{
	char t[256], *out;
	const char *name;
	size_t n = trimmed(chunk, t, sizeof(t)), i;

	if (n == (size_t)-1 || n == 0)
		return NULL;
	if (!strcmp(t, "help")) {  /* bare `help`, as Python's: the overview */
		name = t + n;  /* "" */
	} else if (n > 6 && !strncmp(t, "help(", 5) && t[n - 1] == ')') {
		/* help(NAME): a name that is nil says so ("d is nil") instead of listing all */
		t[n - 1] = '\0';
		name = t + 5;
		for (i = 0; name[i]; i++)
			if (!(name[i] == '_' || name[i] == '.' || (name[i] >= 'a' && name[i] <= 'z') ||
			      (name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9')))
				return NULL;
		if ((name[0] >= '0' && name[0] <= '9') || !strcmp(name, "nil") ||
		    !strcmp(name, "true") || !strcmp(name, "false"))
			return NULL;
	} else if (t[0] == '?') {
		name = t + 1;
	} else if (t[n - 1] == '?') {
		t[n - 1] = '\0';
		name = t;
	} else {
		return NULL;
	}
	name += strspn(name, " \t");
	for (i = strlen(name); i && strchr(" \t", name[i - 1]); i--)
		;
	((char *)name)[i] = '\0';
	for (i = 0; name[i]; i++)
		if (!(name[i] == '_' || name[i] == '.' || name[i] == ':' ||
		      (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return NULL;
	out = malloc(strlen(name) + 40);
	if (out)
		sprintf(out, "gwb.help_at_prompt(\"%s\")", name);
	return out;
}

/* "exit", "quit" (and "exit()", "quit()") leave the REPL, as in Python, unless the name means
 * something else in this session. */
static int is_leave(lua_State *L, const char *chunk)
{
	char t[16];
	size_t n = trimmed(chunk, t, sizeof(t));
	int bound;

	if (n == (size_t)-1)
		return 0;
	if (n > 2 && !strcmp(t + n - 2, "()"))
		t[n - 2] = '\0';
	if (strcmp(t, "exit") && strcmp(t, "quit"))
		return 0;
	bound = lua_getglobal(L, t) != LUA_TNIL;
	lua_pop(L, 1);
	return !bound;
}

static int ends_with_semicolon(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		n--;
	return n && s[n - 1] == ';';
}

/* --- several ranks (mpirun -np N gwb) ------------------------------------------------------ */

/* What rank 0 broadcasts: 'C' and a chunk to run, or 'Q' alone (leave). */
static int ranks_send(char kind, const char *chunk)
{
	size_t n = 2 + (chunk ? strlen(chunk) : 0);  /* kind, the chunk, its NUL */
	char *msg = malloc(n);
	void *p = msg;
	int rc;

	if (!msg)
		return -1;
	msg[0] = kind;
	memcpy(msg + 1, chunk ? chunk : "", n - 1);
	rc = gwb_mpi_bcast_bytes_idle(&p, &n, 0) == GWB_OK ? 0 : -1;
	free(msg);
	return rc;
}

/* After a chunk, every rank's error ("" when it ran) goes to rank 0, which prints the other
 * ranks' (its own is reported as usual). */
static void ranks_errors(const char *mine)
{
	size_t *lens, n = mine ? strlen(mine) + 1 : 1;
	char *all = NULL;
	int r, size = gwb_mpi_size();
	size_t at = 0;

	lens = calloc((size_t)size, sizeof(*lens));
	if (!lens || gwb_mpi_gather(mine ? mine : "", n, 0, false, (void **)&all, lens)) {
		fprintf(stderr, "gwb: the ranks' errors could not be gathered: %s\n", gwb_errmsg());
		free(lens);
		return;
	}
	for (r = 0; all && r < size; r++) {
		if (r > 0 && lens[r] > 1)
			fprintf(stderr, "gwb: %s\n", all + at);
		at += lens[r];
	}
	fflush(stderr);
	free(all);
	free(lens);
}

void gwb_repl_follow(lua_State *L)
{
	for (;;) {
		void *p = NULL;
		size_t n = 0;
		char *msg, *err = NULL;
		int st, top = lua_gettop(L);

		if (gwb_mpi_bcast_bytes_idle(&p, &n, 0) || !p || n < 1) {
			free(p);
			break;  /* rank 0 is gone: MPI ends the job */
		}
		msg = p;
		if (msg[0] != 'C') {
			free(msg);
			break;
		}
		msg[n - 1] = '\0';  /* rank 0 sent the terminating NUL */
		st = compile_chunk(L, msg + 1);
		if (st == LUA_OK)
			st = gwb_repl_docall(L, 0, LUA_MULTRET);
		if (st != LUA_OK && st != -1) {
			const char *e = lua_tostring(L, -1);
			size_t need = (e ? strlen(e) : 40) + strlen(gwb_mpi_host()) + 40;
			if ((err = malloc(need)))
				snprintf(err, need, "rank %d (%s): %s", gwb_mpi_rank(), gwb_mpi_host(),
					 e ? e : "(error object is not a string)");
		}
		lua_settop(L, top);
		fflush(stdout);
		ranks_errors(err ? err : "");
		free(err);
		free(msg);
	}
}

void gwb_repl_run(lua_State *L)
{
	int ranks = gwb_mpi_size() > 1, sent;
	int tty = isatty(STDIN_FILENO);
	char *chunk = NULL;
	size_t chunk_len = 0;
	int help_line;

	if (tty) {
		rl_readline_name = "gwb";
		rl_catch_signals = 0;
		rl_catch_sigwinch = 1;
		rl_attempted_completion_function = complete;
		rl_completer_word_break_characters = LUA_WORD_BREAKS;
		rl_completion_word_break_hook = word_breaks;
		rl_completer_quote_characters = "\"'";  /* a word inside quotes is a file name */
		rl_completion_append_character = '\0';
		comp_L = L;
		history_setup();
	}
	for (;;) {
		char *line = NULL;
		const char *prompt = chunk ? PROMPT2 : PROMPT1;
		int r;

		/* A Ctrl-C that stopped the last command is spent: without this, the next signal
		 * that interrupts the prompt (SIGWINCH from a resize) would read as a new Ctrl-C. */
		gwb_intr_clear();
		r = tty ? read_tty_line(prompt, &line) : read_plain_line(prompt, &line);
		int st, top;

		if (r == READ_EOF) {
			if (tty)
				fputc('\n', stdout);
			break;
		}
		if (r == READ_CANCEL) {
			free(chunk);
			chunk = NULL;
			chunk_len = 0;
			continue;
		}
		/* append the line to the pending chunk */
		{
			size_t ll = strlen(line);
			char *nc = realloc(chunk, chunk_len + ll + 2);
			if (!nc) {
				free(line);
				fputs("gwb: out of memory reading the line\n", stderr);
				continue;
			}
			if (chunk_len)
				nc[chunk_len++] = '\n';
			memcpy(nc + chunk_len, line, ll + 1);
			chunk = nc;
			chunk_len += ll;
			free(line);
		}
		if (chunk_len == 0 || strspn(chunk, " \t\n") == chunk_len) {
			free(chunk);
			chunk = NULL;
			chunk_len = 0;
			continue;
		}
		if (is_leave(L, chunk)) {
			if (tty)
				history_add(chunk);
			fputs("(leaving gwb; Ctrl-D at the prompt leaves too)\n", stdout);
			break;
		}
		help_line = 0;
		{
			char *h = help_request(chunk);
			if (h) {
				if (tty)
					history_add(chunk);  /* as typed */
				free(chunk);
				chunk = h;
				chunk_len = strlen(h);
				help_line = 1;
			}
		}
		top = lua_gettop(L);
		st = compile_chunk(L, chunk);
		if (st == -1)
			continue;  /* incomplete: read a continuation line */
		if (tty && !help_line)
			history_add(chunk);
		/* several ranks: every rank runs the chunk (help stays here) */
		sent = ranks && st == LUA_OK && !help_line;
		if (sent && ranks_send('C', chunk)) {
			fprintf(stderr, "gwb: the line could not be sent to the other ranks: %s\n",
				gwb_errmsg());
			lua_settop(L, top);
			break;
		}
		if (st == LUA_OK) {
			double t0 = gwb_now();
			int quiet = ends_with_semicolon(chunk);
			st = gwb_repl_docall(L, 0, LUA_MULTRET);
			if (st == LUA_OK) {
				if (!quiet)
					print_results(L, lua_gettop(L) - top);
				if (timing_enabled(L))
					printf("(%.3f ms)\n", (gwb_now() - t0) * 1e3);
			}
		}
		if (st != LUA_OK)
			gwb_repl_report(L, NULL);
		lua_settop(L, top);
		fflush(stdout);
		if (sent)
			ranks_errors("");
		free(chunk);
		chunk = NULL;
		chunk_len = 0;
	}
	free(chunk);
	comp_L = NULL;
	if (ranks)
		ranks_send('Q', NULL);
}
