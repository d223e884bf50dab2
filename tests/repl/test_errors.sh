# At the prompt: gwb's own errors are one line (no traceback); a typo gets "did you mean";
# Ctrl-C during a long rf.train prints one line; the REPL goes on.
. tests/lib.sh
repl_start --no-panel
type_line 'd = data.load("datasets/iris.csv", {target = "species"})'
type_line 'rf.train(d, {n_estimators = 10})'
wait_for "did you mean 'trees'?" || die "no suggestion: $(screen)"
screen | grep -q 'stack traceback' && die "a traceback for gwb's own error: $(screen)"
type_line 'data.laod("x.csv")'
wait_for "did you mean 'data.load'?" || die "no suggestion for data.laod: $(screen)"
send C-l
type_line 's = data.synth{kind = "classification", rows = 200000, features = 16, classes = 2, seed = 1}'
type_line 'f = rf.train(s, {trees = 100000, depth = 12, backend = "cpu"})'
wait_for_re 'rf\.train +\[[#.]+\] [0-9]+/100000' 20 || die "no progress: $(screen)"
send C-l
send C-c
wait_for 'rf.train: interrupted after' 10 || die "no interrupt message: $(screen)"
sleep 0.3
screen | grep -qE 'stack traceback|\[C\]' && die "Ctrl-C printed a traceback: $(screen)"
[ "$(screen | grep -c 'interrupted')" -eq 1 ] || die "Ctrl-C printed more than one line: $(screen)"
type_line 'print("alive" .. 6 * 7)'
wait_for 'alive42' || die "REPL not alive: $(screen)"
exit 0
