# Help at the prompt: ?name and name? are help(name); help(module) lists its functions one line
# each; help(obj) lists a class's methods and fields; help() groups methods under their class.
. tests/lib.sh
repl_start
type_line '?rf.train'
wait_for 'rf.train(d [, opts]) -> Forest' || die "?rf.train: $(screen)"
wait_for 'Train a random forest on Dataset d' || die "?rf.train text: $(screen)"
type_line 'clear_marker = 1'
send C-l
type_line 'eig.svd?'
wait_for 'eig.svd(A [, opts]) -> Eigen (SVD)' || die "eig.svd?: $(screen)"
send C-l
type_line 'help(rf)'
wait_for 'rf: help(rf.x) explains one' || die "help(rf): $(screen)"
# one line each: every function of rf is listed on its own line
for f in rf.cv rf.load rf.train; do
	screen | grep -qE "^  $f\(" || die "help(rf) lacks $f: $(screen)"
done
screen | grep -q 'no help for' && die "help(rf) said no help: $(screen)"
send C-l
type_line 'd = data.load("datasets/iris.csv", {target = "species"});'
send C-l
type_line '?d:head'
wait_for 'd:head([n])' || die "?d:head: $(screen)"
repl_stop
# help() longer than the screen goes through $PAGER (here a script that keeps what it got)
printf '#!/bin/sh\ncat > "%s/paged"\necho PAGER-RAN\n' "$T" >"$T/pager" && chmod +x "$T/pager"
export PAGER="$T/pager"
repl_start
type_line 'help()'
wait_for 'PAGER-RAN' || die "help() did not page: $(screen)"
grep -q '^class Dataset$' "$T/paged" || die "the pager got no help text"
type_line '?rf.load'
wait_for 'rf.load(path) -> Forest' || die "short help: $(screen)"
[ "$(grep -c . "$T/paged")" -gt 40 ] || die "paged text too short"
# help(d): the Dataset's methods and fields (longer than the screen: paged too)
send C-l
type_line 'd = data.load("datasets/iris.csv", {target = "species"}); rm_marker = 1'
type_line 'help(d)'
wait_for 'PAGER-RAN' || die "help(d) did not page: $(screen)"
grep -q 'Dataset: a table of features' "$T/paged" || die "help(d): $(cat "$T/paged")"
grep -q 'fields (d.name)' "$T/paged" || die "help(d) lists no fields: $(cat "$T/paged")"
grep -qE '^  d\.rows +number of rows' "$T/paged" || die "help(d) lacks d.rows: $(cat "$T/paged")"
grep -qE '^  d:filter' "$T/paged" || die "help(d) lacks d:filter: $(cat "$T/paged")"
unset PAGER
repl_stop
# help() groups methods under their class, not under "gwb"; wraps to the width (no pager: not
# longer than... it is, so check the text itself, as a script)
out=$(COLUMNS=60 "$GWB" -e 'help()')
echo "$out" | grep -q '^class Dataset$' || die "no 'class Dataset' group"
echo "$out" | grep -qE '^  d:head|^  gwb\.Dataset:head' || die "Dataset:head not under its class"
long=$(printf '%s\n' "$out" | awk 'length($0) > 80' | head -3)
[ -z "$long" ] || die "help() lines wider than the terminal: $long"
exit 0
