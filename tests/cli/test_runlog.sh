# The run log under stress: 8 concurrent writers of records over 4 KB leave every line whole
# and parseable (each record is one write() of at most PIPE_BUF under an flock; a longer one
# goes to an attachment its line names); a write that fails (file-size limit, full disk)
# leaves only whole lines and warns once; --json output is valid UTF-8 whatever bytes the
# names hold.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
cat > "$T/writer.lua" <<'LUA'
local w = tonumber(arg[1])
for i = 1, 30 do
  gwb.log_run { kind = "stress", params = { writer = w, i = i, pad = string.rep(string.char(97 + w), 4500 + 37 * i) } }
  gwb.log_run { kind = "small", params = { writer = w, i = i, pad = string.rep("s", 200 + 90 * i) } }
end
LUA
for w in 1 2 3 4 5 6 7 8; do "$GWB" "$T/writer.lua" "$w" & done
wait
cat > "$T/check.lua" <<'LUA'
local R = require "gwb.runs"
local n, want, broken, long = 0, tonumber(arg[1]), 0, 0
for line in io.lines(os.getenv("GWB_RUNS")) do
  n = n + 1
  local ok, r = pcall(R.decode, line)
  if not (ok and type(r) == "table") then broken = broken + 1 end
  if #line >= 4096 then long = long + 1 end   -- PIPE_BUF
end
assert(broken == 0, broken .. " of " .. n .. " lines are broken")
assert(long == 0, long .. " of " .. n .. " lines are longer than PIPE_BUF")
assert(n == want, n .. " lines, want " .. want)
local seen = {}
for _, r in ipairs(runs()) do
  local p = r.params
  assert(p.fixed or #p.pad == (r.kind == "stress" and 4500 + 37 * p.i or 200 + 90 * p.i), "a record came back cut")
  seen[r.kind .. p.writer .. "/" .. p.i] = true
end
local k = 0
for _ in pairs(seen) do k = k + 1 end
assert(k == want, k .. " distinct records, want " .. want)
LUA
"$GWB" "$T/check.lua" 480 2>"$T/err" || die "concurrent writers: $(cat "$T/err")"

# a file-size limit reached in the middle of a record: cut back, one warning, the next fits
export GWB_RUNS="$T/limited.jsonl"
"$GWB" -e 'for i = 1, 3 do gwb.log_run{kind = "pre", params = {fixed = 1, writer = 0, i = i, pad = string.rep("p", 900)}} end' || die "pre"
size=$(wc -c < "$GWB_RUNS")
[ "$size" -lt 4096 ] || die "the first records are too big for the test: $size"
(ulimit -f 4; "$GWB" -e 'for i = 1, 2 do gwb.log_run{kind = "over", params = {pad = string.rep("o", 2500)}} end
	print("survived")') >"$T/out" 2>"$T/err" || die "gwb failed at the size limit: $(cat "$T/err")"
grep -q survived "$T/out" || die "gwb did not go on past the size limit: $(cat "$T/err")"
[ "$(grep -c 'run log .* could not be written' "$T/err")" -eq 1 ] || die "want one warning: $(cat "$T/err")"
grep -q 'File too large\|No space left' "$T/err" || die "the warning does not say why: $(cat "$T/err")"
[ "$(wc -c < "$GWB_RUNS")" -eq "$size" ] || die "a partial record was left: $(wc -c < "$GWB_RUNS") bytes, had $size"
"$GWB" -e 'gwb.log_run{kind = "after", params = {fixed = 1, writer = 0, i = 1}}' || die "after"
"$GWB" "$T/check.lua" 4 2>"$T/err" || die "after the size limit: $(cat "$T/err")"
# a full disk
GWB_RUNS=/dev/full "$GWB" -e 'gwb.log_run{kind = "x"}; gwb.log_run{kind = "y"}; print("survived")' \
	>"$T/out" 2>"$T/err" || die "gwb failed on /dev/full: $(cat "$T/err")"
grep -q survived "$T/out" || die "gwb stopped on /dev/full"
[ "$(grep -c 'No space left on device' "$T/err")" -eq 1 ] || die "want one warning on /dev/full: $(cat "$T/err")"

# --json with a file name that is not UTF-8
export GWB_RUNS="$T/json.jsonl"
bad=$(printf 'd\377\351.csv')
cp datasets/iris.csv "$T/$bad"
"$GWB" rf train "$T/$bad" --target species --trees 2 --json --tag "$(printf 't\377')" >"$T/json" 2>"$T/err" ||
	die "rf train --json: $(cat "$T/err")"
cat > "$T/json.lua" <<'LUA'
local s = io.open(arg[1]):read("a")
assert(utf8.len(s), "--json output is not valid UTF-8")
local o = require("gwb.runs").decode(s)
assert(o.data.path:find("d\u{ff}\u{e9}.csv", 1, true), o.data.path)
local n = 0
for l in io.lines(os.getenv("GWB_RUNS")) do n = n + 1; assert(utf8.len(l), "run log line not UTF-8") end
assert(n == 1, n .. " run log lines")
LUA
"$GWB" "$T/json.lua" "$T/json" 2>"$T/err" || die "--json: $(cat "$T/err")"
exit 0
