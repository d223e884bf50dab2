# gwb info: build, device (or why none), host memory, BLAS.
. tests/lib.sh
out=$("$GWB" info) || die "info: $out"
echo "$out" | grep -qE '^gwb [0-9]+\.[0-9]+\.[0-9]+ \(commit ' || die "build line: $out"
echo "$out" | grep -qE '^device +' || die "device line: $out"
echo "$out" | grep -qE '^host +[0-9]+ CPUs, [0-9.]+ [KMGT]iB memory' || die "host line: $out"
echo "$out" | grep -qE '^BLAS +/.*(blas|BLAS)' || die "BLAS line: $out"
js=$("$GWB" info --json) || die "--json"
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a"))
	assert(o.version == gwb.version and o.host_memory_bytes > 0 and o.cpus >= 1 and o.blas)
	assert(type(o.gpu) == "table" and o.gpu.available ~= nil)' || die "--json: $js"
"$GWB" info extra 2>/dev/null; [ $? -eq 2 ] || die "extra argument: want 2"
exit 0
