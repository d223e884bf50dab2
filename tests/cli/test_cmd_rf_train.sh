# gwb rf train: summary with OOB and the time split, --save, --tag, --json, usage errors (exit 2),
# a failed computation (exit 1), --backend both (parity line, or a clear "GPU unavailable").
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
out=$("$GWB" rf train datasets/iris.csv --target species --trees 10 --depth 4 --seed 3 \
	--save "$T/m.gwbf" --tag first --tag iris) || die "rf train failed: $out"
echo "$out" | grep -q 'Forest: 10 trees, classification on 4 features' || die "summary: $out"
echo "$out" | grep -qE 'oob +accuracy 0\.[0-9]+' || die "no OOB: $out"
echo "$out" | grep -qE 'time +(total )?.* = kernels? .* \+ transfers? .* \+ host ' || die "no time split: $out"
[ -s "$T/m.gwbf" ] || die "--save wrote nothing"
# the same call from Lua gives the same forest (the command is a layer over rf.train)
lua_oob=$("$GWB" -e 'd = data.load("datasets/iris.csv", {target = "species"})
	print(string.format("%.4f", rf.train(d, {trees = 10, depth = 4, seed = 3}).oob))')
echo "$out" | grep -q "accuracy $lua_oob" || die "OOB differs from rf.train's ($lua_oob): $out"
# the run record carries the tags and the dataset
"$GWB" -e 'local r = runs{tag = "iris"}
	assert(#r == 1, "runs{tag} found " .. #r)
	assert(r[1].tag[1] == "first" and r[1].tag[2] == "iris")
	assert(r[1].data.path == "datasets/iris.csv" and r[1].data.rows == 150)
	assert(#r[1].data.checksum == 16)' || die "run record"
# --json: one JSON object
js=$("$GWB" rf train datasets/iris.csv --target species --trees 5 --max-features 0.5 --json) || die "--json"
[ "$(printf '%s\n' "$js" | wc -l)" -eq 1 ] || die "--json printed more than one line: $js"
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a"))
	assert(o.trees == 5 and o.oob > 0.5 and o.data.rows == 150, "json fields")
	assert(o.params.max_features == 0.5, "max_features passed as a fraction")
	assert(o.timing.total_ms >= o.timing.host_ms)' || die "--json content: $js"
# usage errors: exit 2 with the usage line
# no --target: the last column, as data.load does
out=$("$GWB" rf train datasets/iris.csv --trees 3 2>"$T/err") || die "no --target: $(cat "$T/err")"
printf '%s\n' "$out" | grep -q 'species' || die "no --target did not predict the last column: $out"
"$GWB" rf train datasets/iris.csv --target species --trees many 2>"$T/err"; [ $? -eq 2 ] || die "bad int"
grep -q -- "--trees needs an integer (got 'many')" "$T/err" || die "bad int message"
"$GWB" rf train datasets/iris.csv --target species --frob 2>"$T/err"; [ $? -eq 2 ] || die "unknown option"
grep -q "unknown option '--frob'" "$T/err" || die "unknown option message"
"$GWB" rf train 2>/dev/null; [ $? -eq 2 ] || die "no file: want 2"
# the computation fails: exit 1, the API's message without a traceback
"$GWB" rf train datasets/iris.csv --target nope 2>"$T/err"; [ $? -eq 1 ] || die "bad target: want 1"
grep -q 'unknown target "nope"' "$T/err" || die "bad target message: $(cat "$T/err")"
grep -q 'traceback' "$T/err" && die "traceback shown: $(cat "$T/err")"
"$GWB" rf train datasets/iris.csv --target species --criterion frob 2>"$T/err"; [ $? -eq 1 ] || die "bad criterion"
# --backend both
if "$GWB" -e 'os.exit(gpu.available() and 0 or 1)'; then
	out=$("$GWB" rf train datasets/iris.csv --target species --trees 5 --backend both) || die "both: $out"
	echo "$out" | grep -qE '^parity +OOB accuracy cpu .* gpu .*difference.*same trees: (yes|no) \([0-9]+ of 5\).*the speed of cpu' ||
		die "no parity line: $out"
else
	"$GWB" rf train datasets/iris.csv --target species --trees 5 --backend both >"$T/out" 2>"$T/err"
	[ $? -eq 1 ] || die "both without a GPU: want exit 1"
	grep -q 'the GPU is unavailable' "$T/err" || die "both without GPU message: $(cat "$T/err")"
	grep -q 'Forest: 5 trees' "$T/out" || die "both without GPU: no CPU summary"
fi
exit 0
