# gwb ablate SCRIPT.lua: the script is the measured function, its return value the result;
# the table is printed, disagreement exits 3, bad options exit 2 with the usage line.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
cat >"$T/train.lua" <<'LUA'
local d = data.load("datasets/iris.csv", { target = "species" })
return rf.train(d, { trees = 4, seed = 1, progress = false, backend = "cpu" })
LUA
out=$("$GWB" --no-panel ablate --switches rf.subtract,transpose.pad --runs 1 "$T/train.lua" 2>&1) ||
	die "gwb ablate failed: $out"
echo "$out" | grep -q "rf.subtract off.*agrees: same trees" || die "no agreeing rf.subtract row: $out"
echo "$out" | grep -q "transpose.pad off.*not measured: GPU only" || die "no not-applicable row: $out"
grep -q '"kind":"gwb.ablate"' "$GWB_RUNS" || die "no run-log record"

# a script whose result changes with a switch
cat >"$T/changes.lua" <<'LUA'
local d = data.load("datasets/iris.csv", { target = "species" })
return d:transpose { reps = 1 }.kernel, ...
LUA
out=$("$GWB" --no-panel ablate --switches=transpose.tile --runs=1 "$T/changes.lua" extra 2>&1)
rc=$?
[ "$rc" -eq 3 ] || die "a disagreeing result exits 3 (got $rc): $out"
echo "$out" | grep -q "DIFFERS" || die "no DIFFERS row: $out"
echo "$out" | grep -q "some results disagree" || die "no closing message: $out"

# bad input
out=$("$GWB" ablate --runs "$T/train.lua" 2>&1); rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "usage: gwb ablate" || die "--runs without a number: $rc $out"
out=$("$GWB" ablate --bogus "$T/train.lua" 2>&1); rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "unknown option '--bogus'" || die "unknown option: $rc $out"
out=$("$GWB" ablate 2>&1); rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "no script given" || die "no script: $rc $out"
out=$("$GWB" ablate --switches nope "$T/train.lua" 2>&1); rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -q 'unknown switch "nope"; known switches: rf.subtract' ||
	die "unknown switch: $rc $out"
out=$("$GWB" ablate "$T/missing.lua" 2>&1); rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -q "missing.lua" || die "missing script: $rc $out"
exit 0
