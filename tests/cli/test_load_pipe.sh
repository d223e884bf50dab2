# data.load from a pipe, a FIFO or /dev/stdin gives the Dataset the file gives (issue 26: the
# format sniffers consumed the first ~4 KB of a pipe, so the header was lost and a partial line
# became a row; a pipe shorter than that loaded as an empty file), for CSV, .gwbd and .npy; a
# FIFO no process writes to is left with Ctrl-C (open() ignored SIGINT).
. tests/lib.sh
python3 - "$T/big.csv" <<'PY' || die "python3 could not write the CSV"
import sys
with open(sys.argv[1], "w") as f:
    f.write("a,b,color,label\n")
    for i in range(5000):
        f.write(f"{i},{i * 2 + 0.5},{'rgb'[i % 3]},{'x' if i % 2 else 'y'}\n")
PY
cat > "$T/sum.lua" <<'LUA'
-- one line that says what was loaded: rows, features, first and last values, sums, levels
local d = data.load(arg[1], arg[2] and { target = arg[2] } or nil)
local s = {}
for j = 1, d.features do
  local v, lv = d:column(j)
  local t = 0
  for i = 1, d.rows do t = t + (v[i] == v[i] and v[i] or 0) end
  s[#s + 1] = string.format("%.6g/%s/%s", t, tostring(v[1]), lv and table.concat(lv, "|") or "-")
end
print(d.rows, d.features, d.classes, d.labels[1], d.labels[d.rows], table.concat(s, " "))
LUA
"$GWB" "$T/sum.lua" datasets/iris.csv species >"$T/want.small" || die "iris from the file"
"$GWB" "$T/sum.lua" "$T/big.csv" >"$T/want.big" || die "big.csv from the file"
grep -q "^5000	3	" "$T/want.big" || die "big.csv: $(cat "$T/want.big")"
# /dev/stdin from a pipe: shorter and longer than the 4 KB the sniffers used to take
cat datasets/iris.csv | "$GWB" "$T/sum.lua" /dev/stdin species >"$T/got" 2>&1 || die "iris through a pipe: $(cat "$T/got")"
cmp -s "$T/want.small" "$T/got" || die "iris through a pipe: $(cat "$T/got") (want $(cat "$T/want.small"))"
cat "$T/big.csv" | "$GWB" "$T/sum.lua" /dev/stdin >"$T/got" 2>&1 || die "big.csv through a pipe: $(cat "$T/got")"
cmp -s "$T/want.big" "$T/got" || die "big.csv through a pipe: $(cat "$T/got") (want $(cat "$T/want.big"))"
# a FIFO with a writer that comes later
mkfifo "$T/fifo" || die "mkfifo"
( sleep 0.3; cat "$T/big.csv" >"$T/fifo" ) &
"$GWB" "$T/sum.lua" "$T/fifo" >"$T/got" 2>&1 || die "big.csv through a FIFO: $(cat "$T/got")"
wait
cmp -s "$T/want.big" "$T/got" || die "big.csv through a FIFO: $(cat "$T/got")"
# "-" is stdin (data.load and the command line), and process substitution is a pipe too
cat datasets/iris.csv | "$GWB" "$T/sum.lua" - species >"$T/got" 2>&1 || die "iris through -: $(cat "$T/got")"
cmp -s "$T/want.small" "$T/got" || die "iris through -: $(cat "$T/got") (want $(cat "$T/want.small"))"
cat "$T/big.csv" | "$GWB" "$T/sum.lua" - >"$T/got" 2>&1 || die "big.csv through -: $(cat "$T/got")"
cmp -s "$T/want.big" "$T/got" || die "big.csv through -: $(cat "$T/got") (want $(cat "$T/want.big"))"
"$GWB" "$T/sum.lua" - <"$T/big.csv" >"$T/got" 2>&1 || die "big.csv as < -: $(cat "$T/got")"
cmp -s "$T/want.big" "$T/got" || die "big.csv as < -: $(cat "$T/got")"
"$GWB" "$T/sum.lua" <(cat "$T/big.csv") >"$T/got" 2>&1 || die "big.csv through <(...): $(cat "$T/got")"
cmp -s "$T/want.big" "$T/got" || die "big.csv through <(...): $(cat "$T/got")"
cat datasets/iris.csv | "$GWB" rf train - --target species --trees 5 >"$T/got" 2>&1 ||
	die "gwb rf train - : $(cat "$T/got")"
grep -q "classes *setosa, versicolor, virginica" "$T/got" || die "gwb rf train -: $(cat "$T/got")"
printf 'a,b\n1,x\n' | "$GWB" -e "data.load('-', {target = 'zz'})" 2>"$T/err"
grep -q '^gwb: stdin: unknown target' "$T/err" || die "an error about - names stdin: $(cat "$T/err")"
# gzip and zstd (issue 28): from the file, through -, a FIFO and <(...); several gzip members
# and zstd frames (the header in the first only) read as one file
command -v gzip >/dev/null && command -v zstd >/dev/null || skip "gzip or zstd (the tools) missing: scripts/install-deps"
gzip -c "$T/big.csv" >"$T/big.csv.gz"
zstd -qc "$T/big.csv" >"$T/big.csv.zst"
head -2000 "$T/big.csv" | gzip -c >"$T/multi.gz"; tail -n +2001 "$T/big.csv" | gzip -c >>"$T/multi.gz"
head -2000 "$T/big.csv" | zstd -qc >"$T/multi.zst"; tail -n +2001 "$T/big.csv" | zstd -qc >>"$T/multi.zst"
for z in big.csv.gz big.csv.zst multi.gz multi.zst; do
	"$GWB" "$T/sum.lua" "$T/$z" >"$T/got" 2>&1 || die "$z: $(cat "$T/got")"
	cmp -s "$T/want.big" "$T/got" || die "$z: $(cat "$T/got") (want $(cat "$T/want.big"))"
	cat "$T/$z" | "$GWB" "$T/sum.lua" - >"$T/got" 2>&1 || die "$z through -: $(cat "$T/got")"
	cmp -s "$T/want.big" "$T/got" || die "$z through -: $(cat "$T/got")"
	"$GWB" "$T/sum.lua" <(cat "$T/$z") >"$T/got" 2>&1 || die "$z through <(...): $(cat "$T/got")"
	cmp -s "$T/want.big" "$T/got" || die "$z through <(...): $(cat "$T/got")"
done
rm -f "$T/fifo"; mkfifo "$T/fifo" || die "mkfifo"
( sleep 0.2; cat "$T/multi.zst" >"$T/fifo" ) &
"$GWB" "$T/sum.lua" "$T/fifo" >"$T/got" 2>&1 || die "multi.zst through a FIFO: $(cat "$T/got")"
wait
cmp -s "$T/want.big" "$T/got" || die "multi.zst through a FIFO: $(cat "$T/got")"
gzip -c datasets/iris.csv | "$GWB" rf train - --target species --trees 5 >"$T/got" 2>&1 ||
	die "gwb rf train - (gzip): $(cat "$T/got")"
grep -q "classes *setosa, versicolor, virginica" "$T/got" || die "gwb rf train - (gzip): $(cat "$T/got")"
# rf predict reads FILE's header itself: - and compressed files give the plain file's output
"$GWB" rf train datasets/iris.csv --target species --trees 5 --save "$T/m.gwbf" >/dev/null || die "rf train --save"
"$GWB" rf predict "$T/m.gwbf" datasets/iris.csv >"$T/want.pred" 2>&1 || die "rf predict: $(cat "$T/want.pred")"
gzip -c datasets/iris.csv >"$T/iris.csv.gz"
"$GWB" rf predict "$T/m.gwbf" "$T/iris.csv.gz" >"$T/got" 2>&1 || die "rf predict x.gz: $(cat "$T/got")"
cmp -s <(sed 's/ of .*iris.csv.gz/ of F/' "$T/got") <(sed 's/ of datasets\/iris.csv/ of F/' "$T/want.pred") ||
	die "rf predict x.gz: $(diff "$T/got" "$T/want.pred" | head -5)"
zstd -qc datasets/iris.csv | "$GWB" rf predict "$T/m.gwbf" - >"$T/got" 2>&1 || die "rf predict -: $(cat "$T/got")"
cmp -s <(sed 's/ of -/ of F/' "$T/got") <(sed 's/ of datasets\/iris.csv/ of F/' "$T/want.pred") ||
	die "rf predict - (zstd): $(diff "$T/got" "$T/want.pred" | head -5)"
cut -d, -f1-4 datasets/iris.csv | "$GWB" rf predict "$T/m.gwbf" - >"$T/got" 2>&1 || die "rf predict - (no target): $(cat "$T/got")"
cmp -s "$T/got" <(grep -v '^accuracy' "$T/want.pred") || die "rf predict - (no target): $(diff "$T/got" "$T/want.pred" | head -5)"
head -c 3000 "$T/big.csv.gz" | "$GWB" -e "data.load('-')" 2>"$T/err" && die "a truncated gzip pipe loaded"
grep -q '^gwb: stdin: truncated gzip stream: the compressed data ends at byte 3000 ' "$T/err" ||
	die "a truncated gzip pipe: $(cat "$T/err")"
# the binary formats' sniffers read from the pipe too
"$GWB" -e "data.load('datasets/iris.csv', {target = 'species'}):save('$T/iris.gwbd')
data.load('$T/big.csv'):save('$T/big.npy')" || die "saving .gwbd and .npy"
"$GWB" "$T/sum.lua" "$T/iris.gwbd" >"$T/want" || die "iris.gwbd from the file"
cat "$T/iris.gwbd" | "$GWB" "$T/sum.lua" /dev/stdin >"$T/got" 2>&1 || die ".gwbd through a pipe: $(cat "$T/got")"
cmp -s "$T/want" "$T/got" || die ".gwbd through a pipe: $(cat "$T/got") (want $(cat "$T/want"))"
# (a pipe has no sidecar big.npy.json: compare with the file without its sidecar)
rm -f "$T/big.npy.json"
"$GWB" "$T/sum.lua" "$T/big.npy" >"$T/want" || die "big.npy from the file"
cat "$T/big.npy" | "$GWB" "$T/sum.lua" /dev/stdin >"$T/got" 2>&1 || die ".npy through a pipe: $(cat "$T/got")"
cmp -s "$T/want" "$T/got" || die ".npy through a pipe: $(cat "$T/got") (want $(cat "$T/want"))"
# errors name the path as given, not the copy
printf 'a,b\n1,x\n' | "$GWB" -e "data.load('/dev/stdin', {target = 'zz'})" 2>"$T/err"
grep -q '/dev/stdin: unknown target' "$T/err" || die "the error names /dev/stdin: $(cat "$T/err")"
grep -q '/proc/self/fd' "$T/err" && die "the error names the copy: $(cat "$T/err")"
: | "$GWB" -e "data.load('/dev/stdin')" 2>"$T/err" && die "an empty pipe loaded"
grep -q '/dev/stdin: empty file' "$T/err" || die "an empty pipe: $(cat "$T/err")"
# a FIFO no process writes to: Ctrl-C ends the wait and the script goes on
mkfifo "$T/lonely" || die "mkfifo"
cat > "$T/wait.lua" <<LUA
io.stdout:write("calling\n"); io.stdout:flush()
local ok, err = pcall(data.load, "$T/lonely")
print(ok and "loaded" or ("error: " .. tostring(err)))
print("after")
LUA
# (timeout passes the SIGINT on, and ends a gwb that ignores it)
interrupt_run fifo calling 0.5 200 timeout 30 "$GWB" "$T/wait.lua"
grep -q "error: .*interrupted while waiting for input on $T/lonely" "$T/out.fifo" || die "FIFO: $(cat "$T/out.fifo")"
exit 0
