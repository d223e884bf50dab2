# Help at the prompt as a Python user types it: bare `help` and `?` give the overview (not
# "function: 0x..."), help(d) before d exists says d is nil, help(nil) says the value is nil,
# a misspelled ?name gets "did you mean", and a save prints nothing.
. tests/lib.sh
printf '#!/bin/sh\ncat > "%s/paged.$$"\necho PAGER-RAN\n' "$T" >"$T/pager" && chmod +x "$T/pager"
export PAGER="$T/pager"
repl_start --no-panel
type_line 'help'
wait_for 'PAGER-RAN' || die "bare help did not show the overview: $(screen)"
screen | grep -q 'function: 0x' && die "bare help printed a function: $(screen)"
send C-l
type_line '?'
wait_for_re 'PAGER-RAN' || die "? alone did not show the overview: $(screen)"
grep -l '^class Dataset$' "$T"/paged.* >/dev/null || die "the overview is not help()'s listing"
send C-l
type_line 'help(d)'
wait_for 'd is nil' || die "help(d) before d exists: $(screen)"
type_line 'help(nil)'
wait_for 'the value is nil' || die "help(nil): $(screen)"
type_line '?rf.trian'
wait_for "did you mean 'rf.train'?" || die "?rf.trian: $(screen)"
send C-l
# type the next line only when the prompt is back (no type-ahead echoed into the output)
idle() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(screen | grep -v '^ *$' | tail -1)" = "gwb>" ] && return 0
		sleep 0.05
	done
	die "the prompt did not come back: $(screen)"
}
type_line 'd = data.load("datasets/iris.csv", {target = "species"}); f = rf.train(d, {trees = 3, backend = "cpu"})'
idle
send C-l
idle
type_line "f:save('$T/m.gwbf')"
idle
type_line "f:export_json('$T/m.json')"
idle
type_line "d:save('$T/d.gwbd')"
idle
type_line 'print("after" .. "saves")'
wait_for 'aftersaves' || die "REPL stuck: $(screen)"
# each save's line is followed directly by the next prompt: nothing printed
for cmd in 'f:save' 'f:export_json' 'd:save'; do
	screen | grep -A1 -F "gwb> $cmd(" | tail -1 | grep -q '^gwb> ' || die "$cmd printed something: $(screen)"
done
[ -s "$T/m.gwbf" ] && [ -s "$T/m.json" ] && [ -s "$T/d.gwbd" ] || die "the saves wrote nothing"
exit 0
