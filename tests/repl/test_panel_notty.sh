# No terminal, no panel: runs whose output is not a terminal print no escape codes at all;
# --no-panel and NO_COLOR keep the panel off on a terminal too.
. tests/lib.sh
code='gwb.bench(function() end, {seconds = 0.5, log = false}); print(panel.status().allowed, panel.status().opened)'
out=$("$GWB" -e "$code" 2>&1 </dev/null) || die "gwb failed: $out"
[ "$out" = "false	0" ] || die "unexpected output: $out"
printf '%s' "$out" | LC_ALL=C grep -q "$(printf '\033')" && die "escape codes in non-tty output"
r=$("$GWB" -e 'print(pcall(panel.on))' </dev/null 2>&1)
case "$r" in *"false"*"not a terminal"*) ;; *) die "panel.on() off a terminal: $r" ;; esac
command -v script >/dev/null || skip "script(1) is not installed"
for opt in --no-panel NO_COLOR; do
	if [ "$opt" = NO_COLOR ]; then
		out=$(NO_COLOR=1 TERM=xterm script -qec "'$GWB' -e '$code'" /dev/null </dev/null 2>&1)
	else
		out=$(TERM=xterm script -qec "'$GWB' --no-panel -e '$code'" /dev/null </dev/null 2>&1)
	fi
	printf '%s' "$out" | grep -q 'false.0' || die "$opt: the panel was allowed: $out"
	printf '%s' "$out" | LC_ALL=C grep -q "$(printf '\033')\[?1049h" && die "$opt: the panel took the screen"
done
exit 0
