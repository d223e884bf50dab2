# During a long CPU training (rf.train on a synthetic dataset) the panel shows the training's
# progress and the phase times of this call only (not data.synth's, which ran before it), the
# row whole (ending in the running phase, not cut at the edge); Ctrl-C stops the training and
# the prompt comes back with the summary in the scrollback.
. tests/lib.sh
repl_start
type_line 'print("rf-" .. type(rf) .. "-" .. type(data and data.synth))'
wait_for 'rf-table-function' 2 || skip "rf.train or data.synth is not in this gwb yet"

type_line 'd = data.synth{kind = "classification", rows = 20000, features = 16, informative = 8, classes = 2, seed = 1}; f = rf.train(d, {trees = 5000, depth = 12, backend = "cpu", seed = 1})'
wait_for 'Ctrl-C stops' 5 || die "the panel did not appear during rf.train: $(screen)"
wait_for_re '^rf\.train +.*/5000 .*eta' 3 || die "no training progress: $(screen)"
screen | grep -qE '^phases +.*rf\.train [0-9.]+ (ms|s) \(running\) *$' || die "no phase times: $(screen)"
screen | grep -E '^phases ' | grep -q 'synth' && die "the phases row shows an earlier call's phase: $(screen)"
send C-c
wait_for 'interrupted' 10 || die "rf.train did not stop on C-c: $(screen)"
wait_for_re '^gwb> *$' 3 || die "no prompt after C-c: $(screen)"
screen | grep -q 'Ctrl-C stops' && die "the panel is still up: $(screen)"
screen | grep -qE '^gwb: rf\.train stopped by Ctrl-C after' || die "no summary: $(screen)"
type_line 'print(f == nil, "ok" .. 1)'
wait_for_re '^true +ok1' || die "REPL not usable after the interrupted training: $(screen)"
exit 0
