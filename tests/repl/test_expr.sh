# A bare expression prints its value; several results are tab-separated; `=expr` works;
# a trailing ';' suppresses printing; tables are pretty-printed.
. tests/lib.sh
repl_start
type_line '40 + 2'
wait_for '42' || die "bare expression not printed: $(screen)"
type_line '1, "two", nil'
wait_for_re '^1 +"two" +nil$' || die "multiple results: $(screen)"
type_line '=6*7*10'
wait_for '420' || die "=expr: $(screen)"
type_line 'silent_value = 123456; silent_value;'
type_line 'print("after")'
wait_for 'after' || die "no output after ;"
screen | grep -q '^123456' && die "trailing ; did not suppress: $(screen)"
type_line '{b = 2, a = {1, 2}}'
wait_for '{a = {1, 2}, b = 2}' || die "table not pretty-printed: $(screen)"
exit 0
