# gwb svd: singular values of a Matrix Market file.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
M=datasets/matrices/bcsstk04.mtx
out=$("$GWB" svd $M --k 2 --vectors "$T/v.mtx") || die "svd: $out"
echo "$out" | grep -q '^SVD: 2 singular values of a 132 x 132 matrix' || die "summary: $out"
grep -v '^%' "$T/v.mtx" | head -1 | grep -q '^132 2$' || die "vectors shape"
js=$("$GWB" svd $M --k 2 --json) || die "--json"
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a"))
	local s = eig.svd(mat.read("datasets/matrices/bcsstk04.mtx"), {k = 2}).values
	assert(#o.values == 2 and math.abs(o.values[1] - s[1]) <= 1e-9 * s[1], "values")' || die "--json: $js"
"$GWB" svd $M --which largest 2>/dev/null; [ $? -eq 2 ] || die "--which is not an svd option: want 2"
"$GWB" svd $M --method frob 2>/dev/null; [ $? -eq 1 ] || die "bad method: want 1"
exit 0
