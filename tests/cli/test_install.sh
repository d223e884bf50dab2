# make install PREFIX=... installs the binary, the Lua files and the man page, and the installed
# binary finds its own Lua files.
. tests/lib.sh
command -v make >/dev/null || skip "make is not installed"
# make install relinks the binary under test without the sanitizer flags: make test covers it
[ -n "${GWB_SANITIZE:-}" ] && skip "under make sanitize (make install would relink the ASan binary); make test runs it"
make -s install PREFIX="$T/inst" CUDA="${GWB_CUDA:-1}" BUILD="$(dirname "${GWB#$PWD/}")" >"$T/log" 2>&1 ||
	die "make install failed: $(cat "$T/log")"
[ -x "$T/inst/bin/gwb" ] || die "no binary"
[ -f "$T/inst/share/man/man1/gwb.1" ] || die "no man page"
[ -f "$T/inst/share/gwb/lua/gwb/init.lua" ] || die "no Lua files"
where=$("$T/inst/bin/gwb" -e 'print(package.searchpath("gwb.help", package.path))') || die "installed gwb failed"
where=$(realpath "$where")
case "$where" in "$(realpath "$T/inst")/share/gwb/lua/"*) ;; *) die "installed gwb uses $where" ;; esac
"$T/inst/bin/gwb" -e 'help()' | grep -q 'gpu.info' || die "help() from the installed binary"
exit 0
