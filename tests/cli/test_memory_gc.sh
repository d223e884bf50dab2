# Memory the collector sees: each gwb object's C bytes count toward a per-state total that
# runs the collector, so a loop that drops a 128 MiB Matrix (or a 200 MB SparseMatrix) per
# iteration stays at about one object; under a 1.5 GB address-space limit 40 iterations
# succeed (without the count, Lua sees 16-byte boxes and the dead matrices pile up).
. tests/lib.sh
grep -qa __asan_init "$GWB" && skip "ASan reserves terabytes of address space: ulimit -v cannot apply"
cat > "$T/loop.lua" <<'LUA'
for i = 1, 40 do
  local A = mat.zeros(4096, 4096)           -- 128 MiB of f64
  A[1][1] = i
end
for i = 1, 10 do
  local S = mat.laplacian1d(5000000, { sparse = true })   -- ~200 MB of CSR
end
local live, collections = gwb.external_bytes()
assert(live < 300e6, "still counted as live: " .. live)
print("ok", collections)
LUA
(ulimit -v 1500000; "$GWB" "$T/loop.lua") >"$T/out" 2>"$T/err" || die "the loop ran out of memory: $(tail -3 "$T/err")"
grep -q '^ok' "$T/out" || die "no ok: $(cat "$T/out" "$T/err")"
exit 0
