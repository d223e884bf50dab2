# Errors as a Python user expects them: gwb's own API errors print the message and the script's
# file:line, no Lua traceback (unless --traceback or gwb.traceback = true); errors in user code
# keep a traceback of the user's frames only; Ctrl-C in a script is one line; "did you mean"
# for a misspelled module function, method, field, global, option, column and target name.
. tests/lib.sh
iris="$PWD/datasets/iris.csv"
cat > "$T/api.lua" <<LUA
local function f()
  local d = data.load("$iris", {target = "species"})
  return rf.train(d, {n_estimators = 10})
end
f()
LUA
out=$("$GWB" "$T/api.lua" 2>&1) && die "a bad option did not fail"
printf '%s\n' "$out" | grep -qF "api.lua:3: rf.train: unknown option 'n_estimators': did you mean 'trees'?" ||
	die "no file:line, message and suggestion: $out"
printf '%s\n' "$out" | grep -q 'stack traceback' && die "a traceback for gwb's own error: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || die "more than one line: $out"
printf '%s\n' "$out" | grep -q 'gpu_standin\|hybrid_front' && die "internal knobs listed: $out"
out=$("$GWB" --traceback "$T/api.lua" 2>&1)
printf '%s\n' "$out" | grep -q 'stack traceback' || die "--traceback shows no traceback: $out"
out=$("$GWB" -e 'gwb.traceback = true' "$T/api.lua" 2>&1)
printf '%s\n' "$out" | grep -q 'stack traceback' || die "gwb.traceback = true shows no traceback: $out"
# user code: its own traceback, user frames only
cat > "$T/user.lua" <<'LUA'
local function g() error("boom") end
local function f() g() end
f()
LUA
out=$("$GWB" "$T/user.lua" 2>&1)
printf '%s\n' "$out" | grep -q 'user.lua:1: boom' || die "no user error message: $out"
printf '%s\n' "$out" | grep -q 'stack traceback' || die "user code lost its traceback: $out"
printf '%s\n' "$out" | grep -qE "user.lua:2: in (local|function) 'f'" || die "no user frame f: $out"
printf '%s\n' "$out" | grep -q '\[C\]' && die "C frames in a user traceback: $out"
# Ctrl-C in a script: one line, no traceback
cat > "$T/long.lua" <<'LUA'
local s = data.synth{kind = "classification", rows = 50000, features = 16, classes = 2, seed = 1}
print("start")
io.stdout:flush()
rf.train(s, {trees = 100000, depth = 12, backend = "cpu"})
LUA
"$GWB" "$T/long.lua" >"$T/long.out" 2>&1 &
pid=$!
for i in $(seq 400); do grep -q start "$T/long.out" && break; sleep 0.05; done
sleep 0.5
kill -INT $pid
wait $pid
grep -q 'rf.train: interrupted after' "$T/long.out" || die "no interrupt message: $(cat "$T/long.out")"
grep -qE 'stack traceback|\[C\]' "$T/long.out" && die "Ctrl-C in a script printed a traceback: $(cat "$T/long.out")"
[ "$(grep -vc '^start$' "$T/long.out")" -eq 1 ] || die "Ctrl-C printed more than one line: $(cat "$T/long.out")"
# did you mean
want() { # code, expected text
	local o
	o=$("$GWB" -e "$1" 2>&1) && die "'$1' did not fail"
	printf '%s\n' "$o" | grep -qF -- "$2" || die "'$1': want \"$2\", got: $o"
	printf '%s\n' "$o" | grep -q 'stack traceback' && die "'$1': a traceback: $o"
	true
}
want 'data.laod("x.csv")' "did you mean 'data.load'?"
want 'd = data.load("'"$iris"'"); d:haed(3)' "did you mean 'd:head'?"
want 'd = data.load("'"$iris"'"); print(d.rwos + 1)' "did you mean 'd.rows'?"
want 'dta.load("x")' "did you mean 'data'?"
want 'd = data.load("'"$iris"'"); rf.train(d, {max_depth = 3})' "did you mean 'depth'?"
want 'd = data.load("'"$iris"'"); rf.train(d, {random_state = 3})' "did you mean 'seed'?"
want 'd = data.load("'"$iris"'"); rf.train(d, {n_jobs = 3})' "did you mean 'threads'?"
want 'd = data.load("'"$iris"'"); rf.train(d, {min_samples_leaf = 3})' "did you mean 'min_leaf'?"
want 'd = data.load("'"$iris"'"); rf.train(d, {tress = 3})' "did you mean 'trees'?"
want 'd = data.load("'"$iris"'"); d:select{"sepal_lenght"}' "did you mean 'sepal_length'?"
want 'data.load("'"$iris"'", {target = "specie"})' "did you mean 'species'?"
o=$("$GWB" -e 'print(gwb.suggest("n_estimators", {"trees", "depth"}), gwb.suggest("zzz", {"trees"}))')
[ "$o" = "did you mean 'trees'?	nil" ] || die "gwb.suggest: $o"
exit 0
