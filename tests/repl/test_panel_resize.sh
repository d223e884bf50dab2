# Resizing the terminal while the panel is up (to 60x20 and back, and to a tiny 30x8) does not
# crash it; it redraws at the new size and the REPL is usable afterwards.
. tests/lib.sh
repl_start
tm resize-window -t "$SESSION" -x 80 -y 24
type_line 'gwb.bench(function() local s = 0; for i = 1, 300 do s = s + i end end, {seconds = 3.5, label = "resizing", log = false}); print("done" .. "-resize")'
wait_for 'Ctrl-C stops' 3 || die "the panel did not appear: $(screen)"
tm resize-window -t "$SESSION" -x 60 -y 20
sleep 0.4
wait_for_re '^resizing ' 2 || die "no panel at 60x20: $(screen)"
w=$(screen | LC_ALL=C.UTF-8 bash -c 'm=0; while IFS= read -r l; do [ ${#l} -gt $m ] && m=${#l}; done; echo $m')
[ "$w" -le 60 ] || die "lines wider than 60 columns at 60x20: $(screen)"
tm resize-window -t "$SESSION" -x 30 -y 8
sleep 0.3
tm resize-window -t "$SESSION" -x 80 -y 24
sleep 0.3
wait_for_re '^resizing +.*eta' 2 || die "panel not redrawn at 80x24: $(screen)"
wait_for 'done-resize' 6 || die "the command did not finish after resizing: $(screen)"
type_line 'print("alive" .. 6 * 7)'
wait_for 'alive42' || die "REPL dead after resizing: $(screen)"
exit 0
