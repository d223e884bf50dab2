# gwb bench bandwidth / transpose: measured numbers with a GPU, a clear reason without.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
if "$GWB" -e 'os.exit(gpu.available() and 0 or 1)'; then
	out=$("$GWB" bench bandwidth --bytes 16777216 --reps 2) || die "bandwidth: $out"
	echo "$out" | grep -qE 'host -> device, pinned +[0-9.]+ GB/s' || die "bandwidth lines: $out"
	echo "$out" | grep -q 'DRAM peak' || die "no peak: $out"
else
	"$GWB" bench bandwidth --bytes 1048576 --reps 1 >"$T/out" 2>"$T/err"; [ $? -eq 1 ] || die "no GPU: want 1"
	grep -q 'no GPU: ' "$T/err" || die "no reason: $(cat "$T/err")"
	grep -qE 'host memcpy [0-9.]+ GB/s' "$T/out" || die "no host figure: $(cat "$T/out")"
fi
js=$("$GWB" bench bandwidth --bytes 1048576 --reps 1 --json 2>/dev/null)
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a")); assert(o.host_memcpy_gbps > 0)' ||
	die "bandwidth --json: $js"
out=$("$GWB" bench transpose --rows 256 --reps 1) || die "transpose: $out"
echo "$out" | grep -qi 'transpose' || die "transpose output: $out"
echo "$out" | grep -qE '[0-9.]+ GB/s' || die "transpose numbers: $out"
"$GWB" bench 2>/dev/null; [ $? -eq 2 ] || die "bench alone: want 2"
"$GWB" bench bandwidth --bytes 2>/dev/null; [ $? -eq 2 ] || die "--bytes without value: want 2"
exit 0
