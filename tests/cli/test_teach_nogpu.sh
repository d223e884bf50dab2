# teach.* and gpu.occupancy without a GPU: the kernels' registers and shared memory come from
# the table the CUDA build recorded (src/kernel_res.c), the answer says so and what needs a GPU;
# every lesson runs with no arguments; the README's gpu.occupancy("rf_hist", 256) works.
. tests/lib.sh
"$GWB" -e 'os.exit(gpu.available() and 0 or 1)' && skip "a GPU is present: occupancy comes from the device"
want=$(sed -n 's/^\t{"rf_hist", "[^"]*", "[^"]*", \([0-9]*\), \([0-9]*\),.*/\1 \2/p' src/kernel_res.c)
[ -n "$want" ] || die "src/kernel_res.c has no rf_hist"
out=$("$GWB" -e 'local o = gpu.occupancy("rf_hist", 256)
print(o.regs .. " " .. o.smem); print(o.limited_by); print(o.source); print(o.note)') || die "gpu.occupancy: $out"
[ "$(printf '%s\n' "$out" | sed -n 1p)" = "$want" ] || die "regs/smem $(printf '%s\n' "$out" | sed -n 1p), table says $want"
printf '%s\n' "$out" | sed -n 2p | grep -qE '^(registers|shared memory|warps|blocks)$' || die "limited_by: $out"
printf '%s\n' "$out" | grep -q 'build table (sm_90' || die "no source: $out"
printf '%s\n' "$out" | grep -q 'need a GPU' || die "the note does not say what needs a GPU: $out"
grep -q 'gpu.occupancy("rf_hist", 256).limited_by -- "registers"' README.md &&
	{ [ "$(printf '%s\n' "$out" | sed -n 2p)" = registers ] || die "the README's example says registers: $out"; }
"$GWB" -e 'local n = gpu.occupancy(); local ok = false
for _, k in ipairs(n) do ok = ok or k == "rf_hist" end; os.exit(ok and 0 or 1)' || die "gpu.occupancy() lists no rf_hist"
out=$("$GWB" -e 'teach.occupancy("rf_hist")') || die "teach.occupancy(rf_hist): $out"
printf '%s\n' "$out" | tr '\n' ' ' | grep -q 'The live parts need a GPU' || die "teach.occupancy: $out"
# every lesson, no arguments
out=$("$GWB" -e 'gwb.autodraw = false
local bad = {}
for _, l in ipairs(teach().lessons) do
  local ok, e = pcall(teach[l[1]])
  if not ok then bad[#bad + 1] = l[1] .. ": " .. tostring(e) end
end
print(#bad == 0 and "all ran" or table.concat(bad, "\n"))' 2>"$T/err")
[ "$out" = "all ran" ] || die "lessons that fail with no arguments: $out $(cat "$T/err")"
exit 0
