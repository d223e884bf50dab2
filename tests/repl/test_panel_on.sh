# panel.on() keeps the panel up between commands with the prompt below it; commands and their
# output scroll in its output area; panel.off() writes them back to the terminal.
. tests/lib.sh
repl_start
tm resize-window -t "$SESSION" -x 80 -y 24
type_line 'panel.on()'
wait_for 'output' 3 || die "panel.on() shows no panel: $(screen)"
type_line 'print("on-" .. 40 + 2)'
wait_for 'on-42' || die "output not shown in the panel: $(screen)"
screen | tail -1 | grep -q '^gwb> *$' || die "the prompt is not at the bottom: $(screen)"
send -l 'panel.st'
send Tab
wait_for 'gwb> panel.status' || die "completion does not work in the panel: $(screen)"
send C-u
type_line 'x = panel.status(); print("up=" .. tostring(x.up) .. " persistent=" .. tostring(x.persistent))'
wait_for 'up=true persistent=true' || die "panel.status inside: $(screen)"
type_line 'panel.off()'
wait_for_re '^gwb: idle' 3 || die "no summary after panel.off(): $(screen)"
out=$(screen)
printf '%s\n' "$out" | grep -q '^on-42' || die "output not written back after panel.off(): $out"
type_line 'print(panel.status().up)'
wait_for_re '^false$' || die "panel still up after off: $(screen)"
exit 0
