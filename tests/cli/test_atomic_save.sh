# Saves are atomic: a process killed (-9) at any instant of d:save, d:write_csv, A:save,
# f:save, f:export_json or mat.write leaves the old file or the new one, never a truncated one;
# the next save removes the temporaries the killed process left; directories are refused;
# devices, pipes, FIFOs, /dev/stdout and /proc/self/fd/N are written in place; a symlink
# (.npy included) is written through.
. tests/lib.sh
cat > "$T/save.lua" <<'LUA'
local dir, mode = arg[1], arg[2]
local A = { d = data.synth { rows = 60000, features = 20, seed = 1 },
            m = mat.randn(600, 600, { seed = 1 }), s = mat.laplacian1d(30000, { sparse = true }) }
local B = { d = data.synth { rows = 45000, features = 20, seed = 2 },
            m = mat.randn(500, 500, { seed = 2 }), s = mat.laplacian1d(20000, { sparse = true }) }
A.f = rf.train(A.d, { trees = 3, depth = 4, seed = 1 })
B.f = rf.train(B.d, { trees = 2, depth = 3, seed = 2 })
local function save(x)
  x.d:save(dir .. "/d.gwbd")
  x.d:write_csv(dir .. "/d.csv")
  x.m:save(dir .. "/m.gwbm")
  x.f:save(dir .. "/f.gwbf")
  x.f:export_json(dir .. "/f.json")
  mat.write(x.s, dir .. "/s.mtx")
  x.s:save(dir .. "/s.gwbs")
end
save(B)
if mode == "once" then return end
io.write("ready\n"); io.flush()
while true do save(A); save(B) end
LUA
cat > "$T/check.lua" <<'LUA'
local dir = arg[1]
local function one_of(v, a, b, what)
  if v ~= a and v ~= b then error(what .. ": " .. tostring(v) .. " is neither " .. a .. " nor " .. b) end
end
one_of(data.load(dir .. "/d.gwbd").rows, 60000, 45000, "d.gwbd rows")
one_of(data.load(dir .. "/d.csv").rows, 60000, 45000, "d.csv rows")
one_of(mat.load(dir .. "/m.gwbm").rows, 600, 500, "m.gwbm rows")
one_of(rf.load(dir .. "/f.gwbf").trees, 3, 2, "f.gwbf trees")
local j = io.open(dir .. "/f.json"):read("a")
if not j:match("%]}\n$") then error("f.json is truncated: ..." .. j:sub(-40)) end
one_of(mat.read(dir .. "/s.mtx").rows, 30000, 20000, "s.mtx rows")
one_of(mat.read(dir .. "/s.gwbs").rows, 30000, 20000, "s.gwbs rows")
LUA
D="$T/out"; mkdir -p "$D"
"$GWB" "$T/save.lua" "$D" once || die "the first save failed"
"$GWB" "$T/check.lua" "$D" || die "the first save does not read back"
for delay in 0.05 0.2 0.35 0.5 0.7 0.9; do
	"$GWB" "$T/save.lua" "$D" loop >"$T/ready" 2>"$T/err" &
	pid=$!
	for _ in $(seq 1200); do grep -q ready "$T/ready" 2>/dev/null && break; sleep 0.05; done
	grep -q ready "$T/ready" || die "the saving script did not start: $(cat "$T/err")"
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	"$GWB" "$T/check.lua" "$D" 2>"$T/cerr" ||
		die "after kill -9 at ${delay}s a file is damaged: $(cat "$T/cerr")"
done
# the killed saves' temporaries are swept by the next save of each file
"$GWB" "$T/save.lua" "$D" once || die "the save after the kills failed"
left=$(ls -A "$D" | grep -c 'gwbtmp' || true)
[ "$left" -eq 0 ] || die "temporaries left after the next save: $(ls -A "$D")"
"$GWB" "$T/check.lua" "$D" || die "the final save does not read back"

# a directory is refused; the error names it
mkdir "$T/adir"
"$GWB" -e "data.synth{rows = 10}:save('$T/adir')" 2>"$T/err" && die "saving over a directory worked"
grep -q "is a directory, not a regular file" "$T/err" || die "directory message: $(cat "$T/err")"
# devices, pipes, FIFOs and /proc/self/fd/N are written in place (no temporary, no rename)
"$GWB" -e "data.synth{rows = 10}:write_csv('/dev/null')" 2>"$T/err" || die "write_csv to /dev/null: $(cat "$T/err")"
"$GWB" -e "data.synth{rows = 10}:save('/dev/null')" 2>"$T/err" || die "save to /dev/null: $(cat "$T/err")"
[ -c /dev/null ] || die "/dev/null is no longer a device"
n=$("$GWB" -e "data.synth{rows = 9}:write_csv('/dev/stdout')" 2>"$T/err" | wc -l)
[ "$n" -eq 10 ] || die "write_csv('/dev/stdout') into a pipe gave $n lines: $(cat "$T/err")"
n=$("$GWB" -e "data.synth{rows = 9}:write_csv('/proc/self/fd/1')" 2>"$T/err" | wc -l)
[ "$n" -eq 10 ] || die "write_csv('/proc/self/fd/1') into a pipe gave $n lines: $(cat "$T/err")"
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/fromfifo" &
"$GWB" -e "data.synth{rows = 4}:write_csv('$T/fifo')" 2>"$T/err" || die "write_csv to a FIFO: $(cat "$T/err")"
wait
[ "$(wc -l < "$T/fromfifo")" -eq 5 ] || die "the FIFO's reader got: $(cat "$T/fromfifo")"
[ -p "$T/fifo" ] || die "the FIFO was replaced"
# a symlink is written through: the link stays, its target gets the new content
mkdir "$T/real"
ln -s real/target.csv "$T/link.csv"
"$GWB" -e "data.synth{rows = 7}:write_csv('$T/link.csv')" || die "write through a symlink failed"
[ -L "$T/link.csv" ] || die "the symlink was replaced by a file"
[ "$(wc -l < "$T/real/target.csv")" -eq 8 ] || die "the link's target was not written"
ln -s real/target.npy "$T/link.npy"
"$GWB" -e "data.synth{rows = 7}:save('$T/link.npy'); assert(data.load('$T/real/target.npy').rows == 7)" ||
	die "an .npy save through a symlink failed"
[ -L "$T/link.npy" ] || die "the .npy symlink was replaced by a file"
exit 0
