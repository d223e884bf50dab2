# The Lua files of lua/gwb are compiled into the binary (src/embed.h): gwb starts from that
# bytecode, with line information, loads no LAPACK until it is needed, and GWB_LUA_PATH
# still puts files first.
. tests/lib.sh
out=$("$GWB" -e 'print(package.preload["gwb.help"] ~= nil, package.preload["gwb"] ~= nil)') ||
	die "gwb -e failed"
[ "$out" = "true	true" ] || die "the embedded modules are not preloaded: $out"
src=$("$GWB" -e 'print(debug.getinfo(help).source)')
[ "$src" = "@lua/gwb/help.lua" ] || die "an embedded function's source is '$src', want @lua/gwb/help.lua"
# no Lua file is opened at start, and no LAPACK is loaded for print(1)
if command -v strace >/dev/null; then
	# (LeakSanitizer cannot run under ptrace: an ASan build, make sanitize, skips its leak check)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -e trace=openat -o "$T/trace" "$GWB" -e 'print(1)' >/dev/null 2>&1 || die "gwb under strace"
	! grep -v ENOENT "$T/trace" | grep -q 'lua/gwb/.*\.lua"' || die "opened Lua files: $(grep lua/gwb "$T/trace")"
	! grep -v ENOENT "$T/trace" | grep -q 'liblapack' || die "LAPACK loaded at start"
fi
# ...but it is there when an eigensolver runs
v=$("$GWB" -e 'local e = eig.solve(mat.from({{2, 1}, {1, 2}})); print(string.format("%.6f %.6f", e:values()[1], e:values()[2]))') ||
	die "eig.solve failed"
case "$v" in "1.000000 3.000000"|"3.000000 1.000000") ;; *) die "eig.solve gave $v" ;; esac
# GWB_LUA_PATH: files win over the compiled-in copies
mkdir -p "$T/lua/gwb"
cp lua/gwb/*.lua "$T/lua/gwb/"
{ echo 'GWB_FROM_FILE = true'; cat lua/gwb/help.lua; } > "$T/lua/gwb/help.lua"
out=$(GWB_LUA_PATH="$T/lua/?.lua;$T/lua/?/init.lua" "$GWB" -e 'print(GWB_FROM_FILE)')
[ "$out" = "true" ] || die "GWB_LUA_PATH did not win: $out"
out=$("$GWB" -e 'print(GWB_FROM_FILE)')
[ "$out" = "nil" ] || die "without GWB_LUA_PATH the compiled-in copy must win: $out"
exit 0
