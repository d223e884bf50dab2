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
				* a script with its own arguments); opts must then be no_opts */
} cli_cmd;

static const cli_opt train_opts[] = {
	{"target", O_STR, "target", "NAME     the column to predict (required for CSV; a .gwbd carries its own)"},
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

static const cli_opt no_opts[] = {
	{NULL, 0, NULL, NULL},
};

static const cli_cmd commands[] = {
	{"rf train", 1, 1, "FILE.csv --target NAME | FILE.gwbd [options]", rf_train_opts, train_opts,
	 "train a random forest, print its summary",
	 "Load FILE (CSV or .gwbd), train a forest on it (rf.train) and print the summary:\n"
	 "OOB score, trees, and the time split into kernel, transfer and host. --backend both\n"
	 "trains on the CPU and on the GPU and prints the parity line: the OOB accuracy (or R2)\n"
	 "difference, whether the trees are the same, and the speed ratio; without a GPU it says\n"
	 "so and exits 1 after the CPU run.", false},
	{"rf predict", 2, 2, "MODEL FILE.csv [--out preds.csv] [--proba]", rf_predict_opts, NULL,
	 "predict with a saved forest",
	 "Load the forest MODEL (written by --save or f:save) and predict every row of FILE:\n"
	 "CSV with a column 'prediction' (and, with --proba, one column per class). When FILE\n"
	 "has the forest's target column, the score (accuracy or R2) goes to stderr. Text\n"
	 "columns are matched to the forest's levels by label; values of levels it never saw\n"
	 "are scored as missing and a note on stderr counts them (--strict: an error).", false},
	{"rf cv", 1, 1, "FILE.csv --target NAME | FILE.gwbd --folds K [options]", rf_cv_opts,
	 train_opts,
	 "k-fold cross-validation of a forest",
	 "rf.cv on FILE: train on k-1 folds, score on the last, for each fold; prints each\n"
	 "fold's score and the mean and standard deviation. Takes rf train's options.", false},
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
	{"help", 0, 2, "[COMMAND]", no_opts, NULL,
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

static int usage_error(const cli_cmd *c, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "gwb %s: ", c->name);
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\nusage: gwb %s %s (gwb help %s lists the options)\n", c->name, c->args,
		c->name);
	return 2;
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

int gwb_cli_run(lua_State *L, int argc, char **argv)
{
	const cli_cmd *c;
	int words, i, npos = 0, rc, st;
	bool opts_done = false;

	c = find(argc, argv, &words);
	if (!c) {
		fprintf(stderr, "gwb: unknown command '%s%s%s'; the commands are:\n", argv[0],
			argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
		gwb_cli_list(stderr);
		return 2;
	}
	if (!strcmp(c->name, "help")) {
		const cli_cmd *h;
		int w;
		if (argc == 1) {
			printf("usage: gwb COMMAND [options] (gwb help COMMAND describes one)\n");
			gwb_cli_list(stdout);
			return 0;
		}
		h = find(argc - 1, argv + 1, &w);
		if (!h && argc == 2 && is_group(argv[1])) {
			/* gwb help rf: the rf commands */
			const cli_cmd *c2;
			size_t n = strlen(argv[1]);
			for (c2 = commands; c2->name; c2++)
				if (!strncmp(c2->name, argv[1], n) && c2->name[n] == ' ')
					printf("  gwb %-18s %s\n", c2->name, c2->summary);
			return 0;
		}
		if (!h || w != argc - 1) {
			fprintf(stderr, "gwb help: no command '%s%s%s'; the commands are:\n", argv[1],
				argc > 2 ? " " : "", argc > 2 ? argv[2] : "");
			gwb_cli_list(stderr);
			return 2;
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
		/* {usage = "..."}: a usage error found by the Lua side (a missing --target) */
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
			int n;
			if (!msg)
				msg = "(error object is not a string)";
			tb = strstr(msg, "\nstack traceback:");
			n = tb ? (int)(tb - msg) : (int)strlen(msg);
			fprintf(stderr, "gwb %s: %.*s\n", c->name, n, msg);
		}
		lua_settop(L, 0);
		return 1;
	}
	rc = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
	lua_settop(L, 0);
	return rc;
}
