# A for loop typed over three lines continues on the second prompt and runs.
. tests/lib.sh
repl_start
type_line 'for i = 1, 3 do'
wait_for '  >>' || die "no continuation prompt: $(screen)"
type_line '  print("line" .. i * 11)'
type_line 'end'
wait_for 'line33' || die "loop did not run: $(screen)"
screen | grep -q 'line11' || die "first iteration missing"
screen | grep -q 'line22' || die "second iteration missing"
exit 0
