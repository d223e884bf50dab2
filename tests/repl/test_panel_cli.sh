# A one-shot command on a terminal: the panel's hint line names no Lua ("panel.on() keeps this
# up" is for the prompt); it says Ctrl-C stops and --no-panel turns it off. Ctrl-C stops the
# command.
. tests/lib.sh
command -v tmux >/dev/null || skip "tmux is not installed (scripts/install-deps installs it)"
"$GWB" -e 'data.synth{kind = "classification", rows = 20000, features = 16, classes = 2, seed = 1}:save("'"$T"'/s.gwbd")' ||
	die "could not write the data"
tm new-session -d -s "$SESSION" -x 100 -y 30 \
	"env HOME='$HOME' GWB_NORC=1 GWB_RUNS='$T/runs.jsonl' TERM=xterm '$GWB' rf train '$T/s.gwbd' --trees 100000 --depth 12 --backend cpu; echo EXIT=\$?; sleep 30" ||
	die "tmux could not start"
wait_for 'Ctrl-C stops' 20 || die "the panel did not appear during gwb rf train: $(screen)"
hint=$(screen | grep 'Ctrl-C stops')
printf '%s\n' "$hint" | grep -q 'panel\.on()' && die "a Lua hint in a command's panel: $hint"
printf '%s\n' "$hint" | grep -q -- '--no-panel turns it off' || die "no --no-panel hint: $hint"
send C-c
wait_for 'EXIT=1' 10 || die "gwb rf train did not stop on Ctrl-C: $(screen)"
screen | grep -q 'interrupted' || die "no interrupt message: $(screen)"
exit 0
