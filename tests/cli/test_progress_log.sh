# Progress without a terminal: with stderr going to a file or pipe, a long call writes a line
# every few seconds (percent, rate, ETA) and one when it ends; short calls write nothing;
# --quiet turns it off; a run that counts nothing says how long it has run.
# (GWB_PROGRESS_INTERVAL shortens the interval for the test.)
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
code='d = data.synth{kind = "classification", rows = 40000, features = 16, seed = 1}
f = rf.train(d, {trees = 60, depth = 10, backend = "cpu", threads = 1}); print("trees " .. f.trees)'
GWB_PROGRESS_INTERVAL=0.2 "$GWB" -e "$code" >"$T/out" 2>"$T/err" || die "gwb failed: $(cat "$T/err")"
[ "$(cat "$T/out")" = "trees 60" ] || die "stdout changed: $(cat "$T/out")"
grep -qE '^rf\.train: [0-9]+% \([0-9]+ of 60\) after [0-9.]+ (ms|s), [0-9.e+]+/s, eta [0-9.]+ (ms|s)$' "$T/err" ||
	die "no progress line with percent, rate and ETA: $(cat "$T/err")"
grep -qE '^rf\.train: done, 60 in [0-9.]+ (ms|s)$' "$T/err" || die "no closing line: $(cat "$T/err")"
LC_ALL=C grep -q "$(printf '\r')\|$(printf '\033')" "$T/err" && die "terminal codes in a log: $(cat -v "$T/err")"
GWB_PROGRESS_INTERVAL=0.2 "$GWB" --quiet -e "$code" >"$T/out" 2>"$T/err" || die "gwb --quiet failed"
[ -s "$T/err" ] && die "--quiet still wrote progress: $(cat "$T/err")"
# a run with nothing to count (a LAPACK call waited on, n = 1296: tenths of a second here, where
# n = 576 ended before the first line on a fast run): how long it has run, not "0 after
# 1.2 s, seconds 1.2"
GWB_PROGRESS_INTERVAL=0.01 "$GWB" -e 'eig.solve(mat.laplacian2d(36), {k = 3})' >/dev/null 2>"$T/err" ||
	die "eig.solve failed: $(cat "$T/err")"
grep -qE '^eig\.solve [a-z]+: running for [0-9.]+ (ms|s)$' "$T/err" || die "no running line: $(cat "$T/err")"
grep -qE '^eig\.solve [a-z]+: done in [0-9.]+ (ms|s)$' "$T/err" || die "no closing line: $(cat "$T/err")"
grep -qE ': 0 after|, seconds |done, 0 in' "$T/err" && die "a count of nothing: $(cat "$T/err")"
# a short call, default interval: nothing
GWB_PROGRESS_INTERVAL= "$GWB" -e 'f = rf.train(data.load("datasets/iris.csv"), {trees = 3})' 2>"$T/err" >/dev/null
[ -s "$T/err" ] && die "a short call wrote progress: $(cat "$T/err")"
exit 0
