/* cli.c - one-shot commands: a table of subcommands, each with its options; argv becomes a
 * list of positional arguments and a Lua options table, handed to the command's function in
 * lua/gwb/cli.lua, which makes the Lua API call (rf.train, eig.solve, ...) and prints. Adding
 * a command is one entry in `commands` and one function there. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "repl.h"
#include "suggest.h"

/* Option kinds: what the value after --flag becomes in the options table. */
enum {
	O_INT,   /* an integer */
	O_COUNT, /* an integer >= 0 (a thread count: 0 = all cores; a record count) */
	O_NUM,   /* a number */
	O_STR,   /* a string */
	O_FLAG,  /* no value: true */
	O_LIST,  /* a string; repeated: a list of strings */
	O_NUMSTR /* a number when it reads as one (0.5, 3), else a string ("sqrt") */
};

typedef struct cli_opt {
	const char *flag;  /* without the leading "--" */
	int kind;
	const char *key;   /* the options-table key (the Lua API's name for it) */
	const char *help;  /* "N   what it is" for gwb help COMMAND */
} cli_opt;

typedef struct cli_cmd {
	const char *name;      /* "rf train": one or two words */
	int npos_min, npos_max;
	const char *args;      /* the synopsis after the name */
	const cli_opt *opts;   /* this command's own options */
	const cli_opt *more;   /* shared options (may be NULL) */
	const char *summary;   /* one line */
	const char *help;      /* what it does, what it prints */
	bool raw;              /* pass every argument through as positional (a command that runs
				* a script with its own arguments); opts are then only listed */
} cli_cmd;

static const cli_opt train_opts[] = {
	{"target", O_STR, "target", "NAME     the column to predict (default: the last, as data.load; a .gwbd carries its own)"},
	{"trees", O_INT, "trees", "N        trees (100)"},
	{"depth", O_INT, "depth", "D        maximum depth (32)"},
	{"bins", O_INT, "bins", "B        histogram bins per feature, 2..256 (64)"},
	{"max-features", O_NUMSTR, "max_features",
	 "F        features drawn per split: auto, sqrt, log2, all, a fraction or a count"},
	{"min-leaf", O_INT, "min_leaf", "N        rows a leaf keeps at least (1)"},
	{"criterion", O_STR, "criterion", "C        gini, entropy or mse"},
	{"block", O_INT, "block", "B        GPU threads per block (0: the trainer's choice)"},
	{"seed", O_INT, "seed", "S        random seed (1): the same seed gives the same forest"},
	{"threads", O_COUNT, "threads", "N        CPU threads, 0 = all cores (all cores)"},
	{"backend", O_STR, "backend", "B        cpu, gpu, auto, hybrid (GPU and CPU together) or both (each, compared)"},
	{"tag", O_LIST, "tag", "TAG      tag the run-log record (repeat for several)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt rf_train_opts[] = {
	{"save", O_STR, "save", "MODEL    write the forest to MODEL (read with rf.load)"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt rf_cv_opts[] = {
	{"folds", O_INT, "folds", "K        folds (5)"},
	{"shuffle", O_FLAG, "shuffle", "         shuffle rows before cutting folds"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt rf_predict_opts[] = {
	{"out", O_STR, "out", "FILE     write the predictions there (CSV) instead of stdout"},
	{"proba", O_FLAG, "proba", "         add one probability column per class"},
	{"strict", O_FLAG, "strict", "         an unseen level is an error (default: missing, noted)"},
	{"threads", O_COUNT, "threads", "N        CPU threads, 0 = all cores (all cores)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of CSV"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt eig_opts[] = {
	{"k", O_INT, "k", "K        pairs at each end asked for (6 sparse, all dense)"},
	{"which", O_STR, "which", "W        smallest, largest or both"},
	{"method", O_STR, "method", "M        the solver (help(eig.solve) lists them)"},
	{"backend", O_STR, "backend", "B        cpu, gpu or auto"},
	{"tol", O_NUM, "tol", "T        residual tolerance"},
	{"seed", O_INT, "seed", "S        random seed"},
	{"vectors", O_STR, "vectors", "OUT.mtx  write the eigenvectors (n x k, Matrix Market array)"},
	{"tag", O_LIST, "tag", "TAG      tag the run-log record (repeat for several)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt svd_opts[] = {
	{"k", O_INT, "k", "K        largest singular triplets (6 sparse, all dense)"},
	{"method", O_STR, "method", "M        the solver (help(eig.svd) lists them)"},
	{"backend", O_STR, "backend", "B        cpu, gpu or auto"},
	{"tol", O_NUM, "tol", "T        residual tolerance"},
	{"seed", O_INT, "seed", "S        random seed"},
	{"vectors", O_STR, "vectors", "OUT.mtx  write the right singular vectors"},
	{"tag", O_LIST, "tag", "TAG      tag the run-log record (repeat for several)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt bw_opts[] = {
	{"bytes", O_INT, "bytes", "N        bytes per copy (256 MiB)"},
	{"reps", O_INT, "reps", "N        repetitions, the median is kept (5)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt tr_opts[] = {
	{"rows", O_INT, "rows", "N        rows of the table (4096)"},
	{"cols", O_INT, "cols", "N        columns (as rows)"},
	{"reps", O_INT, "reps", "N        repetitions (5)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt json_only[] = {
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

static const cli_opt runs_opts[] = {
	{"tag", O_STR, "tag", "TAG      only records with this tag"},
	{"kind", O_STR, "kind", "KIND     only this kind (a prefix: rf, rf.train, eig.solve)"},
	{"last", O_COUNT, "last", "N        only the N newest (N >= 0)"},
	{"json", O_FLAG, "json", "         print one JSON object instead of text"},
	{NULL, 0, NULL, NULL},
};

/* gwb ablate parses its own words (lua/gwb/ablate.lua); listed here for help. */
static const cli_opt ablate_opts[] = {
	{"switches", O_STR, "switches", "A,B      the switches to turn off one at a time (all)"},
	{"runs", O_INT, "runs", "N        runs of each setting, the median kept"},
	{"tol", O_NUM, "tol", "X        relative tolerance of the result check"},
	{"json", O_FLAG, "json", "         print one JSON object instead of the table"},
	{NULL, 0, NULL, NULL},
};

static const cli_cmd commands[] = {
	{"rf train", 1, 1, "FILE [--target NAME] [options]", rf_train_opts, train_opts,
	 "train a random forest, print its summary",
	 "Load FILE (CSV, plain or gzip/zstd compressed, .gwbd or .npy; - reads stdin; the\n"
	 "target is --target, else the last column, as data.load), train a forest on it\n"
	 "(rf.train) and print the summary (cat x.csv.gz | gwb rf train - --target y):\n"
	 "OOB score, trees, and the time split into kernel, transfer and host. --backend both\n"
	 "trains on the CPU and on the GPU and prints the parity line: the OOB accuracy (or R2)\n"
	 "difference, whether the trees are the same, and the speed ratio; without a GPU it says\n"
	 "so and exits 1 after the CPU run.", false},
	{"rf predict", 2, 2, "MODEL FILE.csv [--out preds.csv] [--proba] [--json]", rf_predict_opts, NULL,
	 "predict with a saved forest",
	 "Load the forest MODEL (written by --save or f:save) and predict every row of FILE\n"
	 "(CSV, plain or gzip/zstd compressed; - reads stdin):\n"
	 "CSV with a column 'prediction' (and, with --proba, one column per class). When FILE\n"
	 "has the forest's target column, the score (accuracy or R2) goes to stderr. Text\n"
	 "columns are matched to the forest's levels by label; values of levels it never saw\n"
	 "are scored as missing and a note on stderr counts them (--strict: an error).", false},
	{"rf cv", 1, 1, "FILE [--target NAME] [--folds K] [options]", rf_cv_opts, train_opts,
	 "k-fold cross-validation of a forest",
	 "rf.cv on FILE (as rf train reads it; - is stdin): train on k-1 folds, score on the\n"
	 "last, for each fold; prints each fold's score and the mean and standard deviation.\n"
	 "Takes rf train's options.", false},
	{"eig", 1, 1, "FILE.mtx|FILE.gwbs [options]", eig_opts, NULL,
	 "eigenpairs of a symmetric matrix",
	 "Read a matrix (Matrix Market, or a file written by A:save) and solve (eig.solve):\n"
	 "prints the eigenvalues, residuals, orthogonality and time. --vectors writes the\n"
	 "eigenvectors as a dense Matrix Market file.", false},
	{"svd", 1, 1, "FILE.mtx|FILE.gwbs [options]", svd_opts, NULL,
	 "singular values of a matrix",
	 "Read a matrix and compute its largest singular triplets (eig.svd); prints the\n"
	 "singular values, residuals and time. --vectors writes the right singular vectors.", false},
	{"bench bandwidth", 0, 0, "[--bytes N --reps N --json]", bw_opts, NULL,
	 "host<->device and device copy bandwidth",
	 "gpu.bandwidth(): host to device and back from pageable and pinned memory, and\n"
	 "device to device, in GB/s, against the DRAM peak. Without a GPU it prints why and\n"
	 "the host memcpy rate, and exits 1.", false},
	{"bench transpose", 0, 0, "[--rows N --cols N --reps N --json]", tr_opts, NULL,
	 "transpose on the CPU and the GPU kernels",
	 "teach.transpose(): a table transposed by the CPU loops and, with a GPU, by the naive,\n"
	 "tiled and padded kernels; time and GB/s of each.", false},
	{"info", 0, 0, "[--json]", json_only, NULL,
	 "device, memory, BLAS, build",
	 "The GPU (or why there is none), its memory, host memory and CPUs, the BLAS and LAPACK\n"
	 "libraries in use, and how this gwb was built.", false},
	{"runs", 0, 0, "[--tag TAG] [--kind KIND] [--last N] [--json]", runs_opts, NULL,
	 "the run log as a table",
	 "runs(): every recorded run (rf.train, eig.solve, gwb.bench, ...), oldest first,\n"
	 "filtered by tag, kind (a prefix) and the N newest. The log is $GWB_RUNS, else\n"
	 "~/.local/share/gwb/runs.jsonl.", false},
	{"ablate", 1, 1, "[--switches a,b] [--runs N] [--tol X] [--json] SCRIPT.lua [args...]",
	 ablate_opts, NULL,
	 "what each optimisation switch buys, on a script",
	 "gwb.ablate on SCRIPT (its return value is the result): run it with every switch on,\n"
	 "then with each one off in turn, check that the results agree and print a table:\n"
	 "switch, wall time, kernel time, slowdown, result check. Exit 3 when a result\n"
	 "disagrees.", true},
	{"help", 0, 2, "[COMMAND] [--json]", json_only, NULL,
	 "describe a command",
	 "gwb help lists the commands; gwb help COMMAND describes one and its options.", false},
	{NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, false},
};

/* The command named by argv[0] (and argv[1]), and how many words its name took. */
static const cli_cmd *find(int argc, char **argv, int *words)
{
	const cli_cmd *c;

	for (c = commands; c->name; c++) {
		const char *sp = strchr(c->name, ' ');
		size_t n0 = sp ? (size_t)(sp - c->name) : strlen(c->name);
		if (strncmp(argv[0], c->name, n0) || argv[0][n0])
			continue;
		if (!sp) {
			*words = 1;
			return c;
		}
		if (argc > 1 && !strcmp(argv[1], sp + 1)) {
			*words = 2;
			return c;
		}
	}
	*words = 0;
	return NULL;
}

/* argv[0] is the first word of some command ("rf", "bench"), whatever follows. */
static bool is_group(const char *w)
{
	const cli_cmd *c;

	for (c = commands; c->name; c++) {
		const char *sp = strchr(c->name, ' ');
		if (sp && !strncmp(w, c->name, (size_t)(sp - c->name)) && !w[sp - c->name])
			return true;
	}
	return false;
}

int gwb_cli_match(int argc, char **argv)
{
	int words;

	if (argc < 1)
		return 0;
	if (find(argc, argv, &words))
		return words;
	return is_group(argv[0]) ? 1 : 0;
}

void gwb_cli_list(FILE *f)
{
	const cli_cmd *c;

	for (c = commands; c->name; c++)
		fprintf(f, "  gwb %-18s %s\n", c->name, c->summary);
}

static void print_opts(FILE *f, const cli_opt *o)
{
	for (; o && o->flag; o++)
		fprintf(f, "  --%-13s %s\n", o->flag, o->help);
}

static void cmd_help(FILE *f, const cli_cmd *c)
{
	fprintf(f, "usage: gwb %s %s\n%s\n", c->name, c->args, c->help);
	if ((c->opts && c->opts->flag) || c->more) {
		fprintf(f, "\nOptions:\n");
		print_opts(f, c->opts);
		print_opts(f, c->more);
	}
	fprintf(f, "\nExit status: 0 done, 1 the computation failed, 2 usage. See man gwb.\n");
}

static const cli_opt *find_opt(const cli_cmd *c, const char *flag, size_t n)
{
	const cli_opt *o;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (o = pass ? c->more : c->opts; o && o->flag; o++)
			if (strlen(o->flag) == n && !strncmp(o->flag, flag, n))
				return o;
	return NULL;
}

/* The state of the command being run, for its error messages: --json makes them one JSON object
 * on stderr ({"command", "error", "status"}) instead of text. */
static lua_State *cli_L;
static bool cli_json;

/* Write v (the value on top of the stack, popped) as JSON and a newline to f, through the run
 * log's encoder (lua/gwb/runs.lua: one JSON writer in gwb). */
static void write_json(FILE *f)
{
	lua_State *L = cli_L;
	int top = lua_gettop(L) - 1;

	lua_getglobal(L, "require");
	lua_pushstring(L, "gwb.runs");
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_getfield(L, -1, "encode") == LUA_TFUNCTION) {
		lua_pushvalue(L, top + 1);
		if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
			fprintf(f, "%s\n", lua_tostring(L, -1));
	}
	lua_settop(L, top);
}

/* Report an error of command name (NULL: no command matched) and return the exit status st:
 * "gwb <name>: <msg>" and the lines of more (may be NULL) as text, or one JSON object. */
static int fail(const char *name, int st, const char *msg, const char *more)
{
	if (cli_json && cli_L) {
		lua_createtable(cli_L, 0, 4);
		if (name) {
			lua_pushstring(cli_L, name);
			lua_setfield(cli_L, -2, "command");
		}
		lua_pushstring(cli_L, msg);
		lua_setfield(cli_L, -2, "error");
		if (more) {
			lua_pushstring(cli_L, more);
			lua_setfield(cli_L, -2, "help");
		}
		lua_pushinteger(cli_L, st);
		lua_setfield(cli_L, -2, "status");
		write_json(stderr);
	} else {
		fprintf(stderr, "gwb%s%s: %s\n%s", name ? " " : "", name ? name : "", msg,
			more ? more : "");
	}
	return st;
}

static int usage_error(const cli_cmd *c, const char *fmt, const char *a, const char *b)
{
	char msg[1024], more[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	snprintf(more, sizeof(more), "usage: gwb %s %s (gwb help %s lists the options)\n", c->name,
		 c->args, c->name);
	return fail(c->name, 2, msg, more);
}

/* Store the value of option o (text v) into the options table on top of the stack. Returns 0
 * or 2 (usage). */
static int set_opt(lua_State *L, const cli_cmd *c, const cli_opt *o, const char *v)
{
	char *end;

	switch (o->kind) {
	case O_INT:
	case O_COUNT: {
		long long x;
		errno = 0;
		x = strtoll(v, &end, 10);
		if (!*v || *end || errno)
			return usage_error(c, "--%s needs an integer (got '%s')", o->flag, v);
		if (o->kind == O_COUNT && x < 0)
			return usage_error(c, "--%s must be 0 or more (got '%s')", o->flag, v);
		lua_pushinteger(L, (lua_Integer)x);
		break;
	}
	case O_NUM: {
		double x = strtod(v, &end);
		if (!*v || *end || isnan(x))
			return usage_error(c, "--%s needs a number (got '%s')", o->flag, v);
		lua_pushnumber(L, x);
		break;
	}
	case O_NUMSTR: {
		double x = strtod(v, &end);
		if (*v && !*end && x == floor(x) && fabs(x) < 1e15)
			lua_pushinteger(L, (lua_Integer)x);
		else if (*v && !*end)
			lua_pushnumber(L, x);
		else
			lua_pushstring(L, v);
		break;
	}
	case O_LIST:
		/* a second --tag turns the string into a list */
		if (lua_getfield(L, -1, o->key) == LUA_TSTRING) {
			lua_createtable(L, 2, 0);
			lua_insert(L, -2);
			lua_rawseti(L, -2, 1);
		}
		if (lua_istable(L, -1)) {
			lua_pushstring(L, v);
			lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
		} else {
			lua_pop(L, 1);
			lua_pushstring(L, v);
		}
		break;
	default:
		lua_pushstring(L, v);
	}
	lua_setfield(L, -2, o->key);
	return 0;
}

/* Runs under gwb_repl_docall: 1 = the command's name, 2 = positional list, 3 = options.
 * Returns the exit status the Lua function gave (or 0). */
static int call_lua(lua_State *L)
{
	lua_getglobal(L, "require");
	lua_pushstring(L, "gwb.cli");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "run");
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 2);
	lua_pushvalue(L, 3);
	lua_call(L, 3, 1);
	return 1;
}

/* --json among a command's words (before "--"), so that even a usage error is JSON. */
static bool wants_json(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

/* The commands of group g ("rf"), one line each. */
static void list_group(FILE *f, const char *g)
{
	const cli_cmd *c;
	size_t n = strlen(g);

	for (c = commands; c->name; c++)
		if (!strncmp(c->name, g, n) && c->name[n] == ' ')
			fprintf(f, "  gwb %-18s %s\n", c->name, c->summary);
}

/* Push {command, usage, summary [, help]} for c (for the JSON listings). */
static void push_cmd(const cli_cmd *c, bool with_help)
{
	lua_createtable(cli_L, 0, 4);
	lua_pushstring(cli_L, c->name);
	lua_setfield(cli_L, -2, "command");
	lua_pushfstring(cli_L, "gwb %s %s", c->name, c->args);
	lua_setfield(cli_L, -2, "usage");
	lua_pushstring(cli_L, c->summary);
	lua_setfield(cli_L, -2, "summary");
	if (with_help) {
		lua_pushstring(cli_L, c->help);
		lua_setfield(cli_L, -2, "help");
	}
}

/* The commands (of group g, or all when g is NULL) as JSON on stdout. */
static void list_json(const char *g)
{
	const cli_cmd *c;
	size_t n = g ? strlen(g) : 0;
	int k = 0;

	lua_createtable(cli_L, 0, 1);
	lua_newtable(cli_L);
	for (c = commands; c->name; c++) {
		if (g && (strncmp(c->name, g, n) || c->name[n] != ' '))
			continue;
		push_cmd(c, false);
		lua_rawseti(cli_L, -2, ++k);
	}
	lua_setfield(cli_L, -2, "commands");
	write_json(stdout);
}

/* argv names no command: a group alone ("gwb rf") lists the group's commands; anything else
 * gets the nearest command names and the list. Returns 2 (usage). */
static int unknown_command(int argc, char **argv)
{
	const char *names[64];
	char word[128], near[256], msg[512], more[2048] = "";
	const cli_cmd *c;
	size_t n = 0;
	FILE *mf;
	bool group = argc >= 1 && is_group(argv[0]);

	snprintf(word, sizeof(word), "%s%s%s", argc ? argv[0] : "", argc > 1 && group ? " " : "",
		 argc > 1 && group ? argv[1] : "");
	for (c = commands; c->name && n < 64; c++)
		names[n++] = c->name;
	mf = fmemopen(more, sizeof(more), "w");
	if (group && argc == 1) {
		snprintf(msg, sizeof(msg), "which %s command? they are:", argv[0]);
		if (mf)
			list_group(mf, argv[0]);
	} else {
		gwb_suggest(word, names, n, NULL, near, sizeof(near));
		snprintf(msg, sizeof(msg), "unknown command '%s'%s%s%s %s %s commands are:", word,
			 near[0] ? "; did you mean " : ";", near, near[0] ? "?" : "",
			 near[0] ? "The" : "the", group ? argv[0] : "gwb");
		if (mf) {
			if (group)
				list_group(mf, argv[0]);
			else
				gwb_cli_list(mf);
		}
	}
	if (mf)
		fclose(mf);
	return fail(NULL, 2, msg, more);
}

int gwb_cli_run(lua_State *L, int argc, char **argv)
{
	const cli_cmd *c;
	int words, i, npos = 0, rc, st;
	bool opts_done = false;

	cli_L = L;
	cli_json = wants_json(argc, argv);
	c = find(argc, argv, &words);
	if (!c)
		return unknown_command(argc, argv);
	if (!strcmp(c->name, "help")) {
		const cli_cmd *h;
		int w, nw = argc;
		if (nw > 1 && !strcmp(argv[nw - 1], "--json"))
			nw--;
		if (nw == 1) {
			if (cli_json) {
				list_json(NULL);
				return 0;
			}
			printf("usage: gwb COMMAND [options] (gwb help COMMAND describes one)\n");
			gwb_cli_list(stdout);
			return 0;
		}
		h = find(nw - 1, argv + 1, &w);
		if (!h && nw == 2 && is_group(argv[1])) {
			/* gwb help rf: the rf commands */
			if (cli_json)
				list_json(argv[1]);
			else
				list_group(stdout, argv[1]);
			return 0;
		}
		if (!h || w != nw - 1)
			return unknown_command(nw - 1, argv + 1);
		if (cli_json) {
			push_cmd(h, true);
			write_json(stdout);
			return 0;
		}
		cmd_help(stdout, h);
		return 0;
	}
	lua_settop(L, 0);
	lua_pushcfunction(L, call_lua);
	lua_pushstring(L, c->name);
	lua_newtable(L);  /* 3: positional arguments */
	lua_newtable(L);  /* 4: options */
	for (i = words; i < argc; i++) {
		const char *a = argv[i];
		if (c->raw) {
			lua_pushstring(L, a);
			lua_rawseti(L, 3, ++npos);
			continue;
		}
		if (!opts_done && !strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (!opts_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			cmd_help(stdout, c);
			lua_settop(L, 0);
			return 0;
		}
		if (!opts_done && a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t n = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			const cli_opt *o = find_opt(c, a + 2, n);
			const char *v = eq ? eq + 1 : NULL;
			if (!o) {
				lua_settop(L, 0);
				return usage_error(c, "unknown option '%s'%s", a, "");
			}
			if (o->kind == O_FLAG) {
				if (v) {
					lua_settop(L, 0);
					return usage_error(c, "--%s takes no value%s", o->flag, "");
				}
				lua_pushboolean(L, 1);
				lua_setfield(L, -2, o->key);
				continue;
			}
			if (!v) {
				if (i + 1 >= argc) {
					lua_settop(L, 0);
					return usage_error(c, "--%s needs a value%s", o->flag, "");
				}
				v = argv[++i];
			}
			if ((rc = set_opt(L, c, o, v))) {
				lua_settop(L, 0);
				return rc;
			}
			continue;
		}
		if (!opts_done && a[0] == '-' && a[1]) {
			lua_settop(L, 0);
			return usage_error(c, "unknown option '%s'%s", a, "");
		}
		if (npos >= c->npos_max) {
			lua_settop(L, 0);
			return usage_error(c, "unexpected argument '%s'%s", a, "");
		}
		lua_pushstring(L, a);
		lua_rawseti(L, 3, ++npos);
	}
	if (npos < c->npos_min) {
		lua_settop(L, 0);
		return usage_error(c, "missing %s%s", npos ? "an argument" : "the input file", "");
	}
	st = gwb_repl_docall(L, 3, 1);
	if (st != LUA_OK) {
		/* {usage = "..."}: a usage error found by the Lua side */
		if (lua_istable(L, -1) && lua_getfield(L, -1, "usage") == LUA_TSTRING) {
			rc = usage_error(c, "%s%s", lua_tostring(L, -1), "");
			lua_settop(L, 0);
			return rc;
		}
		if (lua_istable(L, -1))
			lua_pop(L, 1);
		{
			/* the message as the REPL shows it, less the traceback (a one-shot
			 * command's user did not write the Lua that ran) */
			const char *msg = lua_tostring(L, -1), *tb;
			if (!msg)
				msg = "(error object is not a string)";
			tb = strstr(msg, "\nstack traceback:");
			lua_pushlstring(L, msg, tb ? (size_t)(tb - msg) : strlen(msg));
			fail(c->name, 1, lua_tostring(L, -1), NULL);
		}
		lua_settop(L, 0);
		return 1;
	}
	rc = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
	lua_settop(L, 0);
	return rc;
}
