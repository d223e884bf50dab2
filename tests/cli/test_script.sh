# Script mode: arg table as lua.c sets it; exit 1 with a traceback on error; -e; stdin.
. tests/lib.sh
cat > "$T/s.lua" <<'LUA'
print(arg[0], arg[1], arg[2], #arg, ...)
LUA
out=$("$GWB" "$T/s.lua" a b) || die "script failed"
[ "$out" = "$T/s.lua	a	b	2	a	b" ] || die "arg table wrong: $out"
cat > "$T/bad.lua" <<'LUA'
local function inner() error("broken on purpose") end
inner()
LUA
"$GWB" "$T/bad.lua" >"$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || die "error exit status $rc, want 1"
grep -q 'broken on purpose' "$T/err" || die "no message: $(cat "$T/err")"
grep -q 'stack traceback' "$T/err" || die "no traceback: $(cat "$T/err")"
grep -q 'inner' "$T/err" || die "traceback lacks the function"
out=$("$GWB" -e 'x = 20' -e 'print(x + 1)') || die "-e failed"
[ "$out" = 21 ] || die "-e chunks: $out"
out=$(echo 'print("from stdin", 7)' | "$GWB" -) || die "- failed"
[ "$out" = "from stdin	7" ] || die "stdin script: $out"
out=$(echo 'print(2 + 3)' | "$GWB") || die "piped stdin failed"
[ "$out" = 5 ] || die "piped stdin: $out"
"$GWB" "$T/missing.lua" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || die "missing script exit $rc"
grep -q 'cannot open' "$T/err" || die "missing script message: $(cat "$T/err")"
"$GWB" -e 'error("x")' 2>/dev/null; [ $? -eq 1 ] || die "-e error exit status"
exit 0
