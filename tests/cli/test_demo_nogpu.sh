# Without a GPU the demo says so in one line with one reason, says how to build without the
# kernels (a CUDA build), and runs to the end on the CPU.
. tests/lib.sh
"$GWB" -e 'os.exit(gpu.available() and 0 or 1)' && skip "a GPU is present: the no-GPU line does not apply"
export GWB_RUNS="$T/runs.jsonl"
out=$("$GWB" scripts/demo.lua 2>&1) || die "demo failed: $out"
[ "$(printf '%s\n' "$out" | grep -c '^no GPU: ')" -eq 1 ] || die "want one 'no GPU:' line: $out"
why=$("$GWB" -e 'print(select(2, gpu.available()))')
printf '%s\n' "$out" | grep -qxF "no GPU: $why" || die "the line is not the reason '$why'"
if "$GWB" -e 'os.exit(gwb.cuda_build and 0 or 1)'; then
	printf '%s\n' "$out" | grep -q 'make demo CUDA=0' || die "no CUDA=0 hint in a CUDA build"
fi
grep -q 'make demo CUDA=0' README.md || die "README lacks the CUDA=0 hint"
printf '%s\n' "$out" | grep -q 'run log' || die "demo did not reach its end: $out"
exit 0
