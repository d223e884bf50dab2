# gwb runs: the run log, filtered by tag, kind and last N; --json.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
"$GWB" rf train datasets/iris.csv --target species --trees 3 --tag alpha >/dev/null || die "train 1"
"$GWB" rf train datasets/diabetes.csv --target target --trees 3 --tag beta >/dev/null 2>&1 ||
	"$GWB" -e 'rf.train(data.synth{rows = 50, seed = 1}, {trees = 3, tag = "beta"})' >/dev/null || die "train 2"
"$GWB" eig datasets/matrices/bcsstk04.mtx --k 1 --tag alpha >/dev/null || die "eig"
out=$("$GWB" runs) || die "runs"
[ "$(echo "$out" | grep -c 'rf.train')" -eq 2 ] || die "two rf.train rows: $out"
out=$("$GWB" runs --tag alpha) || die "runs --tag"
echo "$out" | grep -q 'eig.solve' || die "--tag alpha lacks eig.solve: $out"
echo "$out" | grep -q '\[beta\]' && die "--tag alpha shows beta: $out"
[ "$("$GWB" runs --tag alpha --kind rf | grep -c 'rf.train')" -eq 1 ] || die "--tag + --kind"
"$GWB" runs --last 1 | grep -q 'eig.solve' || die "--last 1"
js=$("$GWB" runs --tag beta --json) || die "--json"
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a"))
	assert(o.count == 1 and o.runs[1].tag[1] == "beta" and o.runs[1].data.checksum)' || die "--json: $js"
"$GWB" runs --last x 2>/dev/null; [ $? -eq 2 ] || die "bad --last: want 2"
exit 0
