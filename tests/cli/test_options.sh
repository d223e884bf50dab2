# Options: --help, --version, --backend, bad options exit 2.
. tests/lib.sh
"$GWB" --help | grep -q 'usage: gwb' || die "--help"
"$GWB" --version | grep -qE '^gwb [0-9]+\.[0-9]+\.[0-9]+ \(commit' || die "--version: $("$GWB" --version)"
"$GWB" --version | grep -qE 'CUDA runtime|CPU-only build' || die "--version lacks CUDA line"
"$GWB" --frobnicate 2>"$T/err"; rc=$?
[ $rc -eq 2 ] || die "bad option exit $rc, want 2"
grep -q "unknown option '--frobnicate'" "$T/err" || die "bad option message"
"$GWB" -e 2>/dev/null; [ $? -eq 2 ] || die "-e without argument"
"$GWB" --backend tpu -e '' 2>"$T/err"; [ $? -eq 2 ] || die "bad backend exit"
out=$("$GWB" --backend cpu -e 'print(gwb.backend())') || die "--backend cpu"
[ "$out" = cpu ] || die "--backend not applied: $out"
out=$("$GWB" --no-panel -e 'print(gwb.panel_allowed)') || die "--no-panel"
[ "$out" = false ] || die "--no-panel not applied: $out"
# ~/.gwbrc.lua runs at start unless GWB_NORC is set
echo 'rc_loaded = 99' > "$HOME/.gwbrc.lua"
out=$(env -u GWB_NORC HOME="$HOME" "$GWB" -e 'print(rc_loaded)')
[ "$out" = 99 ] || die "~/.gwbrc.lua not run: $out"
# -i after -e enters the REPL (stdin not a tty: plain prompt)
out=$(echo 'print("in repl")' | "$GWB" -e 'x=1' -i)
echo "$out" | grep -q 'in repl' || die "-i: $out"
exit 0
