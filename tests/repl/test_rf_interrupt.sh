# C-c while rf.train grows trees: training stops ("interrupted"), the variable stays unassigned,
# the progress line (trees done, ETA) was shown, and the REPL goes on (training again).
. tests/lib.sh
repl_start --no-panel
type_line 'd = data.synth{kind = "classification", rows = 200000, features = 16, classes = 2, seed = 1}'
type_line 'f = rf.train(d, {trees = 100000, depth = 12, backend = "cpu"})'
wait_for_re 'rf\.train +\[[#.]+\] [0-9]+/100000 .*eta [0-9]' 20 ||
	die "no progress line with trees done and ETA: $(screen)"
send C-c
wait_for 'rf.train: interrupted after' 10 || die "no interrupt message from rf.train: $(screen)"
type_line 'print("f is " .. tostring(f))'
wait_for 'f is nil' || die "a partial forest was assigned: $(screen)"
type_line 'g = rf.train(d:take{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {trees = 3, backend = "cpu"}); print("trees " .. g.trees)'
wait_for 'trees 3' || die "REPL cannot train after C-c: $(screen)"
exit 0
