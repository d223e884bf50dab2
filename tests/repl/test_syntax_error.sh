# A syntax error prints a message and the REPL goes on; a runtime error too.
. tests/lib.sh
repl_start
type_line 'x = = 1'
wait_for "unexpected symbol" || die "no syntax error message: $(screen)"
type_line 'error("boom-1234")'
wait_for 'boom-1234' || die "runtime error not shown: $(screen)"
type_line 'print("ok" .. 5)'
wait_for 'ok5' || die "REPL did not go on: $(screen)"
exit 0
