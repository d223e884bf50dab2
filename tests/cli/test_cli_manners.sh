# The CLI as a newcomer meets it: --json on every command (errors as JSON on stderr), `gwb rf`
# lists rf's commands, a misspelled command gets "did you mean", --target defaults to the last
# column, `gwb runs --kind` matches a prefix and says when a filter matched nothing, `gwb help`
# lists every command (ablate too), no Lua hints in CLI output.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
isjson() { python3 -c 'import json,sys; json.loads(sys.stdin.read())' 2>/dev/null || { command -v python3 >/dev/null || return 0; return 1; }; }
"$GWB" rf train datasets/iris.csv --trees 5 --save "$T/m.gwbf" >/dev/null 2>"$T/err" ||
	die "rf train without --target: $(cat "$T/err")"
# --json on every command
out=$("$GWB" rf predict "$T/m.gwbf" datasets/iris.csv --json 2>"$T/err") || die "rf predict --json: $(cat "$T/err")"
printf '%s' "$out" | grep -q '"predictions":\[' || die "rf predict --json: $out"
printf '%s' "$out" | isjson || die "rf predict --json is not JSON: $out"
out=$("$GWB" rf cv datasets/iris.csv --trees 3 --folds 3 --json) || die "rf cv --json"
printf '%s' "$out" | grep -q '"command":"rf cv"' || die "rf cv --json: $out"
out=$("$GWB" help --json) || die "help --json"
printf '%s' "$out" | grep -q '"command":"ablate"' || die "help --json lacks ablate: $out"
out=$("$GWB" help rf train --json) || die "help rf train --json"
printf '%s' "$out" | grep -q '"usage":"gwb rf train' || die "help rf train --json: $out"
for c in "info" "runs" "bench transpose --rows 64 --reps 1"; do
	# shellcheck disable=SC2086
	out=$("$GWB" $c --json 2>/dev/null)
	printf '%s' "$out" | head -c 1 | grep -q '{' || die "gwb $c --json: $out"
done
printf 'return 6 * 7\n' > "$T/a.lua"
out=$("$GWB" ablate --json --runs 1 "$T/a.lua" 2>"$T/err") || die "ablate --json: $(cat "$T/err")"
printf '%s' "$out" | grep -q '^{.*"command":"ablate"' || die "ablate --json: $out"
printf '%s' "$out" | isjson || die "ablate --json is not JSON: $out"
# errors as JSON on stderr under --json
"$GWB" rf train datasets/iris.csv --trees many --json >/dev/null 2>"$T/err"; [ $? -eq 2 ] || die "usage error: want 2"
grep -q '^{"command":"rf train","error":"--trees needs an integer' "$T/err" || die "usage error not JSON: $(cat "$T/err")"
isjson < "$T/err" || die "usage error is not JSON: $(cat "$T/err")"
"$GWB" rf predict "$T/nope.gwbf" datasets/iris.csv --json >/dev/null 2>"$T/err"; [ $? -eq 1 ] || die "failure: want 1"
grep -q '^{"command":"rf predict","error":".*nope.gwbf' "$T/err" || die "failure not JSON: $(cat "$T/err")"
"$GWB" rf trian x --json >/dev/null 2>"$T/err"; [ $? -eq 2 ] || die "unknown --json: want 2"
grep -q '^{"error":"unknown command' "$T/err" || die "unknown command not JSON: $(cat "$T/err")"
# groups and typos
out=$("$GWB" rf 2>&1); [ $? -eq 2 ] || die "gwb rf: want 2"
for c in "rf train" "rf predict" "rf cv"; do printf '%s\n' "$out" | grep -q "gwb $c" || die "gwb rf lacks $c: $out"; done
printf '%s\n' "$out" | grep -q "unknown command 'rf'" && die "gwb rf: unknown command: $out"
printf '%s\n' "$out" | grep -q 'gwb eig' && die "gwb rf lists other groups: $out"
out=$("$GWB" rf trian x 2>&1); printf '%s\n' "$out" | grep -q "did you mean 'rf train'?" || die "rf trian: $out"
out=$("$GWB" rnus 2>&1); [ $? -eq 2 ] || die "gwb rnus: want 2"
printf '%s\n' "$out" | grep -q "did you mean 'runs'?" || die "gwb rnus: $out"
# runs: prefix, and a filter that matches nothing is not "no runs recorded"
out=$("$GWB" runs --kind rf.tr) || die "runs --kind rf.tr"
printf '%s\n' "$out" | grep -q 'rf.train' || die "runs --kind rf.tr matched nothing: $out"
out=$("$GWB" runs --kind eig)
printf '%s\n' "$out" | grep -q 'no runs recorded' && die "a filter that matched nothing said no runs recorded: $out"
printf '%s\n' "$out" | grep -q 'no run matches kind eig' || die "runs --kind eig: $out"
out=$(GWB_RUNS="$T/none.jsonl" "$GWB" runs); printf '%s\n' "$out" | grep -q 'no runs recorded' || die "empty log: $out"
# gwb help lists every command
out=$("$GWB" help)
for c in "rf train" "rf predict" "rf cv" eig svd "bench bandwidth" "bench transpose" info runs ablate help; do
	printf '%s\n' "$out" | grep -q "gwb $c " || die "gwb help lacks $c"
done
"$GWB" help ablate | grep -q 'usage: gwb ablate' || die "gwb help ablate"
# no Lua hints in CLI output
out=$("$GWB" runs 2>&1)
printf '%s\n' "$out" | grep -qE 'r\[i\]|panel\.on\(\)' && die "a Lua hint in gwb runs: $out"
out=$("$GWB" rf cv datasets/iris.csv --trees 3 --folds 3 2>&1)
printf '%s\n' "$out" | grep -q 'kernel 0.000 ms + transfer 0.000 ms + host 0.000 ms' && die "rf cv's time does not add up: $out"
exit 0
