# gwb rf cv: k folds, the same scores as rf.cv.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
out=$("$GWB" rf cv datasets/iris.csv --target species --folds 4 --trees 10 --tag cvrun) || die "cv: $out"
echo "$out" | grep -qE '^4-fold accuracy 0\.[0-9]+ \+- 0\.[0-9]+' || die "summary: $out"
[ "$(echo "$out" | sed -n 's/^  folds *//p' | wc -w)" -eq 4 ] || die "fold scores: $out"
want=$("$GWB" -e 'print(rf.cv(data.load("datasets/iris.csv", {target = "species"}), {folds = 4, trees = 10}).summary)')
echo "$out" | grep -qF "$want" || die "differs from rf.cv ($want): $out"
"$GWB" -e 'assert(#runs{tag = "cvrun", kind = "rf.cv"} == 1)' || die "tagged cv record"
js=$("$GWB" rf cv datasets/iris.csv --target species --folds 3 --trees 5 --json) || die "--json"
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a")); assert(#o.folds == 3 and o.metric == "accuracy")' ||
	die "--json: $js"
"$GWB" rf cv datasets/iris.csv --target species --folds x 2>/dev/null; [ $? -eq 2 ] || die "bad folds: want 2"
"$GWB" rf cv datasets/iris.csv --target species --folds 1 2>/dev/null; [ $? -eq 1 ] || die "1 fold: want 1"
exit 0
