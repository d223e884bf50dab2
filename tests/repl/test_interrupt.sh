# `while true do end` is stopped by C-c, and the prompt comes back alive. C-c at the prompt
# discards the line and never kills the REPL.
. tests/lib.sh
repl_start
type_line 'while true do end'
sleep 0.5
send C-c
wait_for 'interrupted' || die "no 'interrupted' message: $(screen)"
type_line 'print("alive" .. 6 * 7)'
wait_for 'alive42' || die "REPL not alive after C-c: $(screen)"
send -l 'half typed line'
send C-c
wait_for '^C' || die "C-c at prompt not shown: $(screen)"
type_line 'for i = 1, 2 do'
send C-c
type_line 'print("still" .. 99)'
wait_for 'still99' || die "REPL not alive after C-c at prompt: $(screen)"
exit 0
