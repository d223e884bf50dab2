# Ctrl-C during rf.train with keep = true returns the trees finished so far, marked partial
# (print(f), f.partial), a forest that predicts and can be grown on; without keep the call
# raises "interrupted after ..." and leaves nothing. The signal is sent once the script says it
# is about to train; the forest asked for would take minutes, so the signal lands inside.
. tests/lib.sh
cat > "$T/s.lua" <<'LUA'
local keep = arg[1] == "keep"
local d = data.synth { rows = 20000, features = 16, informative = 8, classes = 2, seed = 1 }
io.stdout:write("training\n"); io.stdout:flush()
local ok, f = pcall(rf.train, d, { trees = 100000, depth = 12, backend = "cpu", threads = 2,
  keep = keep, progress = false })
if not ok then print("error: " .. tostring(f)) print("after") return end
print(f)
print("partial", f.partial, f.trees, f.trees_asked)
print("score", f:score(d) > 0.5)
local n = f.trees
f:grow(2, d, { progress = false })
print("grown", f.trees == n + 2, f.partial)
print("after")
LUA
for mode in keep nokeep; do
	interrupt_run "$mode" training 3 1200 "$GWB" "$T/s.lua" "$mode"
done
grep -q 'partial   [0-9]* of 100000 trees: interrupted' "$T/out.keep" || die "keep: print(f) does not say partial: $(cat "$T/out.keep")"
grep -qE '^partial	true	[0-9]+	100000$' "$T/out.keep" || die "keep: f.partial: $(cat "$T/out.keep")"
grep -q '^score	true$' "$T/out.keep" || die "keep: the partial forest does not predict: $(cat "$T/out.keep")"
grep -q '^grown	true	false$' "$T/out.keep" || die "keep: f:grow after a partial fit: $(cat "$T/out.keep")"
grep -q 'error: .*interrupted after .* no forest was made (keep = true keeps' "$T/out.nokeep" ||
	die "nokeep: $(cat "$T/out.nokeep")"
exit 0
