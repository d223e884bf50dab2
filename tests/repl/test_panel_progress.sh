# The live panel during a long CPU operation (gwb.bench drives progress): it appears after
# ~0.3 s at 80x24, shows the progress bar with ETA, phase times and the CPU line; output printed
# while it is up shows in its output area and lands in the scrollback after it closes, in
# order, followed by the summary.
. tests/lib.sh
repl_start
tm resize-window -t "$SESSION" -x 80 -y 24
# work() prints once while the panel is up during the "train" run
type_line 'n = 0; function work() n = n + 1; if mark and not said and n % 500 == 0 and panel.status().up then said = true; print("printed-while-up " .. 2000) end; local s = 0; for i = 1, 300 do s = s + i end end'
type_line 'print("before" .. "-run"); gwb.bench(work, {seconds = 0.5, label = "warmup", log = false}); mark = true; gwb.bench(work, {seconds = 3, label = "train"}); print("after" .. "-run")'
wait_for 'Ctrl-C stops' 3 || die "the panel did not appear: $(screen)"
wait_for_re '^train +.*eta' 3 || die "no progress bar with ETA: $(screen)"
wait_for_re '^phases +train [0-9.]+ (ms|s) \(running\)' 2 || die "no phase times: $(screen)"
screen | grep -E '^phases ' | grep -q 'warmup' && die "the phases row shows the earlier warmup run: $(screen)"
screen | grep -qE '^cpu +[0-9.]+ of [0-9]+ cores busy.*threads.*RSS' || die "no CPU line: $(screen)"
wait_for 'printed-while-up 2000' 2 || die "output not shown in the panel: $(screen)"
screen | grep -q 'before-run' && die "the panel did not take the screen: $(screen)"
# fits 80x24: nothing drawn past the bottom line, every line at most 80 columns
[ "$(screen | wc -l)" -le 24 ] || die "more than 24 lines"
wait_for 'after-run' 6 || die "the command did not finish: $(screen)"
out=$(screen)
printf '%s\n' "$out" | grep -q 'Ctrl-C stops' && die "the panel is still up: $out"
# scrollback order: before-run, printed-while-up, the summary, after-run
order=$(printf '%s\n' "$out" | grep -E '^before-run$|^printed-while-up|^gwb: train done|^after-run$' | sed 's/^gwb: train done.*/gwb: train done/' | tr '\n' '|')
case "$order" in
'before-run|printed-while-up 2000|gwb: train done|after-run|') ;;
*) die "output lost or out of order ($order): $out" ;;
esac
printf '%s\n' "$out" | grep -qE '^gwb: train done in [0-9.]+ s .*cores.*threads.*RSS' || die "no summary: $out"
type_line 'print("alive" .. 6 * 7)'
wait_for 'alive42' || die "prompt not usable after the panel: $(screen)"
exit 0
