# _ holds the last printed result; floats print as Lua prints them; "1+1;" is quiet; exit and
# quit leave with a hint.
. tests/lib.sh
repl_start
type_line '6 * 7'
wait_for_re '^42$' || die "6 * 7: $(screen)"
type_line '_ + 1'
wait_for_re '^43$' || die "_ after 42: $(screen)"
type_line '3.0'
wait_for_re '^3\.0$' || die "3.0 printed as: $(screen)"
type_line '{x = 1.5, y = 2.0}'
wait_for '{x = 1.5, y = 2.0}' || die "floats in a table: $(screen)"
type_line '1+1; '  # (a trailing space: tmux reads a final ';' as its own separator)
type_line 'print("mark")'
wait_for 'mark' || die "no output after 1+1;"
screen | grep -q 'syntax error' && die "1+1; was an error: $(screen)"
screen | grep -qE '^2$' && die "1+1; printed: $(screen)"
# a result that draws as it is made is not printed a second time
type_line 'dd = data.load("datasets/iris.csv", {target = "species"});'
send C-l
type_line 'dd:describe()'
wait_for 'petal_width' || die "describe drew nothing: $(screen)"
sleep 0.3
[ "$(count_on_screen 'sepal_length')" -eq 1 ] || die "describe printed twice: $(screen)"
type_line 'exit'
wait_for 'Ctrl-D' || die "exit gave no hint: $(screen)"
sleep 0.3
screen | tail -3 | grep -q 'gwb>' && die "still at a prompt after exit: $(screen)"
repl_stop
repl_start
type_line 'quit'
wait_for 'Ctrl-D' || die "quit: $(screen)"
exit 0
