/* main.c - the gwb front end: options, the Lua state, script / -e / REPL modes. */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "backend.h"
#include "blas.h"
#include "cli.h"
#include "gpu.h"
#include "intr.h"
#include "lapi.h"
#include "mpi.h"
#include "panel.h"
#include "progress_log.h"
#include "embed.h"
#include "repl.h"

static const char *progname = "gwb";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gwb [options] [script [args...]]\n"
		"       gwb [options] ablate [--switches a,b] [--runs N] [--tol X] script [args...]\n"
		"GPU workbench: datasets, random forests and eigenvalues from a Lua 5.4 prompt.\n\n"
		"  -e CODE          run CODE (may be repeated)\n"
		"  -i               enter the REPL after running a script or -e\n"
		"  -                run a script read from standard input\n"
		"  --backend B      default backend for every operation: auto, cpu or gpu\n"
		"  --no-panel       never show the live panel\n"
		"  --traceback      show the Lua stack traceback of every error (gwb.traceback = true)\n"
		"  -q, --quiet      no progress lines (off a terminal, a long call writes one to\n"
		"                   stderr every few seconds)\n"
		"  -v, --version    print version, commit, CUDA runtime and driver\n"
		"  -h, --help       this text\n"
		"  --               stop handling options\n\n"
		"With no script and no -e, gwb starts the REPL on a terminal and runs standard\n"
		"input otherwise. In the REPL, help() lists everything; help(rf.train) explains one.\n\n"
		"Commands (gwb COMMAND ...; gwb help COMMAND describes one):\n");
	gwb_cli_list(f);
	fprintf(f, "\nSee man gwb.\n");
}

/* Which BLAS/LAPACK loaded, its files and threads; on the reference implementation, how to
 * install OpenBLAS. */
static void print_blas(void)
{
	gwb_blas_info bi;
	const char *note = gwb_blas_reference_note();

	gwb_blas_get_info(&bi);
	if (!strncmp(bi.version, bi.name, strlen(bi.name)))
		printf("BLAS/LAPACK %s", bi.version);
	else
		printf("BLAS/LAPACK %s%s%s", bi.name, bi.version[0] ? ": " : "", bi.version);
	printf(", %d thread%s (%s)\n", bi.threads, bi.threads == 1 ? "" : "s",
	       !strcmp(bi.threads_from, "gwb") ? "gwb's default: the CPUs it may use" :
	       !strcmp(bi.threads_from, "fixed") ? "the library's own; gwb cannot change it" :
	       bi.threads_from);
	if (!strcmp(bi.blas_path, bi.lapack_path))
		printf("  from %s\n", bi.blas_path[0] ? bi.blas_path : "?");
	else
		printf("  BLAS from %s, LAPACK from %s\n", bi.blas_path[0] ? bi.blas_path : "?",
		       bi.lapack_path[0] ? bi.lapack_path : "?");
	if (note)
		printf("  note: %s\n", note);
}

static void print_version(void)
{
	int drv = 0, rt = 0;

	printf("gwb %s (commit %s, %s)\n", GWB_VERSION, gwb_commit, LUA_RELEASE);
#ifdef GWB_HAVE_CUDA
	gwb_gpu_versions(&drv, &rt);
	printf("CUDA runtime %d.%d", rt / 1000, (rt % 1000) / 10);
	if (drv)
		printf(", driver supports CUDA %d.%d\n", drv / 1000, (drv % 1000) / 10);
	else
		printf(", no NVIDIA driver\n");
#else
	(void)drv;
	(void)rt;
	printf("CPU-only build (no CUDA)\n");
#endif
	print_blas();
}

/* Directory of the running executable (for finding lua/ beside build/ or share/gwb/lua). */
static void exe_dir(char *buf, size_t n)
{
	ssize_t r = readlink("/proc/self/exe", buf, n - 1);
	char *slash;

	if (r <= 0) {
		snprintf(buf, n, ".");
		return;
	}
	buf[r] = '\0';
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
}

static void set_package_path(lua_State *L)
{
	char dir[PATH_MAX], path[4 * PATH_MAX + 256];
	const char *env = getenv("GWB_LUA_PATH");

	/* GWB_LUA_PATH first, then an installed tree (PREFIX/bin/../share/gwb/lua), then the
	 * checkout the binary was built in (build/gwb, build/<variant>/gwb), then Lua's own. */
	exe_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path),
		 "%s%s%s/../share/gwb/lua/?.lua;%s/../share/gwb/lua/?/init.lua;"
		 "%s/lua/?.lua;%s/lua/?/init.lua;",
		 env ? env : "", env ? ";" : "", dir, dir, GWB_SRCDIR, GWB_SRCDIR);
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");
	lua_pushfstring(L, "%s%s", path, lua_tostring(L, -1));
	lua_setfield(L, -3, "path");
	lua_pop(L, 2);
}

/* lua.c's createargtable: arg[0] = script, arg[1..] = its arguments, negatives = options. */
static void create_arg_table(lua_State *L, char **argv, int argc, int script)
{
	int i, narg = argc - (script + 1);

	if (script == argc)
		script = 0;
	lua_createtable(L, narg, script + 1);
	for (i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

/* The REPL's first line: version, the device (or "CPU only" and why), where to start. */
static void print_banner(void)
{
	gwb_gpu_info gi;
	const char *dot = " \xc2\xb7 ";

	printf("gwb %s (%s)%s", GWB_VERSION, gwb_commit, dot);
	if (gwb_gpu_available() && gwb_gpu_get_info(&gi) == GWB_OK)
		printf("GPU %s", gi.name);
	else
#ifdef GWB_HAVE_CUDA
		printf("CPU only (no usable NVIDIA GPU: gpu.available() says why)");
#else
		printf("CPU only (built without CUDA)");
#endif
	printf("%shelp() to start, Ctrl-D to leave\n", dot);
	fflush(stdout);
}

/* A script's or -e chunk's error. Under mpirun with several ranks the other ranks may be
 * waiting for this one in a collective: print "gwb: rank R (host): message" and end the whole
 * job (MPI_Abort), so none of them hangs. Alone, as always: "gwb: message". */
static void report(lua_State *L)
{
	if (gwb_mpi_size() > 1) {
		const char *msg = lua_tostring(L, -1);
		gwb_mpi_abort(1, msg ? msg : "(error object is not a string)");
	}
	gwb_repl_report(L, progname);
}

static int run_chunk(lua_State *L, int status)
{
	if (status == LUA_OK)
		status = gwb_repl_docall(L, 0, 0);
	if (status != LUA_OK)
		report(L);
	return status;
}

static int run_script(lua_State *L, const char *fname, char **argv, int nargs)
{
	int status, i;

	if (fname && !strcmp(fname, "-"))
		fname = NULL;  /* stdin */
	status = luaL_loadfile(L, fname);
	if (status == LUA_OK) {
		/* room for the arguments (lua.c's pushargs): past LUA_MINSTACK they overran the
		 * stack (the 46 test files of tests/run did) */
		luaL_checkstack(L, nargs + 3, "too many arguments to the script");
		for (i = 0; i < nargs; i++)
			lua_pushstring(L, argv[i]);
		status = gwb_repl_docall(L, nargs, 0);
	}
	if (status != LUA_OK)
		report(L);
	return status;
}

static void run_rc(lua_State *L)
{
	const char *home = getenv("HOME");
	char path[PATH_MAX];

	if (getenv("GWB_NORC") || !home)
		return;
	snprintf(path, sizeof(path), "%s/.gwbrc.lua", home);
	if (access(path, R_OK) != 0)
		return;
	run_chunk(L, luaL_loadfile(L, path));
}

int main(int argc, char **argv)
{
	int i, script = 0, interactive = 0, has_e = 0, stdin_script = 0, no_panel = 0, command = 0;
	int traceback = 0, nranks = 0, follower;
	lua_State *L;
	int status = LUA_OK;

	/* Under mpirun: one rank of the job (mpi.c; MPI starts only when a launcher started us,
	 * so a plain gwb never touches MPI). Ranks other than 0 draw no panel and write no
	 * progress lines: rank 0 speaks for the job. */
	if (gwb_mpi_start(&argc, &argv)) {
		fprintf(stderr, "gwb: %s\n", gwb_errmsg());
		return 2;
	}
	atexit(gwb_mpi_stop);  /* every return below, and exit() from Lua (os.exit) */
	if (!gwb_mpi_built() && gwb_mpi_launched(&nranks) && nranks == 1)
		fprintf(stderr, "gwb: note: started by mpirun, but built without MPI support: "
				"running as one process (make MPI=1 builds it in)\n");
	follower = gwb_mpi_rank() > 0;
	if (follower) {
		no_panel = 1;
		gwb_progress_log_set_quiet(true);
	}

	/* First pass: options (they stop at the script name, "-" or "--"). */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			script = i;
			break;
		}
		if (!strcmp(a, "-")) {
			script = i;
			stdin_script = 1;
			break;
		}
		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				script = i + 1;
			break;
		}
		if (!strcmp(a, "-e")) {
			if (++i >= argc) {
				fprintf(stderr, "gwb: '-e' needs an argument\n");
				usage(stderr);
				return 2;
			}
			has_e = 1;
		} else if (!strncmp(a, "-e", 2)) {
			has_e = 1;
		} else if (!strcmp(a, "-i")) {
			interactive = 1;
		} else if (!strcmp(a, "--backend")) {
			gwb_backend b;
			if (++i >= argc || gwb_backend_parse(argv[i], &b)) {
				fprintf(stderr, "gwb: --backend needs auto, cpu or gpu\n");
				return 2;
			}
			gwb_backend_default = b;
		} else if (!strncmp(a, "--backend=", 10)) {
			gwb_backend b;
			if (gwb_backend_parse(a + 10, &b)) {
				fprintf(stderr, "gwb: --backend needs auto, cpu or gpu (got '%s')\n",
					a + 10);
				return 2;
			}
			gwb_backend_default = b;
		} else if (!strcmp(a, "--no-panel")) {
			no_panel = 1;
		} else if (!strcmp(a, "--traceback")) {
			traceback = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			gwb_progress_log_set_quiet(true);
		} else if (!strcmp(a, "-v") || !strcmp(a, "--version")) {
			print_version();
			return 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "gwb: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}

	/* A one-shot command (gwb rf train ...) where a script name would be; "--" before it
	 * makes it a script name again. */
	if (script && !stdin_script && strcmp(argv[script - 1], "--") &&
	    gwb_cli_match(argc - script, argv + script))
		command = script;
	/* a word that is neither a command nor a file ("gwb rnus"): the command list, with the
	 * nearest names, not "cannot open rnus" */
	if (script && !command && !stdin_script && strcmp(argv[script - 1], "--") &&
	    !strpbrk(argv[script], "/.") && access(argv[script], F_OK) != 0)
		command = script;
	if (command)
		gwb_panel_set_cli();

	L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "gwb: cannot create the Lua state: out of memory\n");
		return 1;
	}
	gwb_repl_signals();
	/* a write past a file-size limit (ulimit -f) fails with EFBIG, reported like a full
	 * disk, instead of killing gwb */
	signal(SIGXFSZ, SIG_IGN);
	/* The live panel (or, when it may not appear, the stderr progress bar). */
	{
		const char *nc = getenv("NO_COLOR");  /* no-color.org: set and not empty */
		gwb_panel_setup(!no_panel && !(nc && *nc) && isatty(STDOUT_FILENO));
	}
	/* no collection while the libraries load: all of it stays live (a faster start) */
	lua_gc(L, LUA_GCSTOP);
	luaL_openlibs(L);
	set_package_path(L);
	gwb_embed_preload(L);
	gwb_lua_openlibs(L);
	lua_getglobal(L, "gwb");
	lua_pushboolean(L, gwb_panel_allowed());
	lua_setfield(L, -2, "panel_allowed");
	if (traceback) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "traceback");
	}
	lua_pop(L, 1);
	create_arg_table(L, argv, argc, command ? 0 : script);
	/* The Lua side of gwb: help(), the pretty printer, the files in lua/gwb. */
	lua_getglobal(L, "require");
	lua_pushstring(L, "gwb");
	if (gwb_repl_docall(L, 1, 0) != LUA_OK) {
		gwb_repl_report(L, progname);
		fprintf(stderr, "gwb: the Lua library (lua/gwb) was not found or failed; "
				"set GWB_LUA_PATH or reinstall\n");
		lua_close(L);
		return 1;
	}
	lua_gc(L, LUA_GCRESTART);
	run_rc(L);

	/* Second pass: -e chunks, in order. */
	for (i = 1; i < argc && (script == 0 || i < script); i++) {
		const char *code = NULL;
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-e"))
			code = argv[++i];
		else if (!strncmp(argv[i], "-e", 2))
			code = argv[i] + 2;
		else if (!strcmp(argv[i], "--backend"))
			i++;
		if (code && (status = run_chunk(L, luaL_loadbuffer(L, code, strlen(code), "=(command line)"))))
			goto out;
	}
	if (script && !stdin_script && !strcmp(argv[script], "ablate")) {
		/* gwb ablate [--switches a,b] [--runs N] SCRIPT.lua [args]: lua/gwb/ablate.lua */
		int rc = 1;
		lua_getglobal(L, "gwb");
		lua_getfield(L, -1, "ablate_main");
		lua_remove(L, -2);
		for (i = script + 1; i < argc; i++)
			lua_pushstring(L, argv[i]);
		if (gwb_repl_docall(L, argc - script - 1, 1) == LUA_OK)
			rc = (int)lua_tointeger(L, -1);
		else
			gwb_repl_report(L, progname);
		gwb_panel_shutdown();
		lua_close(L);
		return rc;
	}
	if (command) {
		int rc = gwb_cli_run(L, argc - command, argv + command);
		gwb_panel_shutdown();
		lua_close(L);
		return rc;
	}
	if (script) {
		status = run_script(L, stdin_script ? "-" : argv[script], argv + script + 1,
				    argc - script - 1);
		if (status != LUA_OK)
			goto out;
	}
	if (gwb_mpi_size() > 1 && (interactive || (!script && !has_e))) {
		/* mpirun -np N gwb: one REPL on rank 0 (stdin reaches rank 0 only) whose chunks
		 * every rank runs; the others' output is dropped, their errors shown by rank 0 */
		if (follower) {
			if (!freopen("/dev/null", "w", stdout))
				fprintf(stderr, "gwb: rank %d: cannot silence its output\n",
					gwb_mpi_rank());
			gwb_repl_follow(L);
		} else {
			printf("gwb %s: a REPL on %d MPI ranks; each line runs on every rank, "
			       "output from rank 0\n", GWB_VERSION, gwb_mpi_size());
			gwb_repl_run(L);
		}
	} else if (interactive || (!script && !has_e && isatty(STDIN_FILENO))) {
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			print_banner();
		gwb_repl_run(L);
	}
	else if (!script && !has_e)
		status = run_script(L, "-", NULL, 0);
out:
	gwb_panel_shutdown();  /* before the Lua state goes: restore the terminal, replay output */
	lua_close(L);
	return status == LUA_OK ? 0 : 1;
}
