# gwb eig: eigenvalues of a Matrix Market file, --vectors, --json, errors.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
M=datasets/matrices/bcsstk04.mtx
out=$("$GWB" eig $M --k 3 --which smallest --vectors "$T/v.mtx" --tag e1) || die "eig: $out"
echo "$out" | grep -q 'Eigen: 3 of 132 pairs' || die "summary: $out"
head -1 "$T/v.mtx" | grep -q '%%MatrixMarket matrix array real general' || die "vectors file"
grep -v '^%' "$T/v.mtx" | head -1 | grep -q '^132 3$' || die "vectors shape: $(grep -v '^%' "$T/v.mtx" | head -1)"
js=$("$GWB" eig $M --k 2 --which largest --json) || die "--json"
printf '%s' "$js" | "$GWB" -e 'local o = require("gwb.runs").decode(io.read("a"))
	local e = eig.solve(mat.read("datasets/matrices/bcsstk04.mtx"), {k = 2, which = "largest"})
	assert(#o.values == 2 and math.abs(o.values[2] - e.values[2]) <= 1e-9 * math.abs(e.values[2]), "values")
	assert(o.max_residual < 1e-8)' || die "--json values: $js"
"$GWB" -e 'local r = runs{tag = "e1"}; assert(#r == 1 and r[1].kind == "eig.solve")' || die "tagged record"
# a sparse solver through --method, and a dense Matrix file written by A:save
A="$T/a.gwbm" "$GWB" -e 'mat.laplacian1d(50):save(os.getenv("A"))' 2>/dev/null
[ -s "$T/a.gwbm" ] && { "$GWB" eig "$T/a.gwbm" --k 2 >/dev/null || die "eig of a saved matrix"; }
"$GWB" eig $M --which middle 2>"$T/err"; [ $? -eq 1 ] || die "bad which: want 1"
"$GWB" eig "$T/missing.mtx" 2>"$T/err"; [ $? -eq 1 ] || die "missing file: want 1"
grep -q 'missing.mtx' "$T/err" || die "missing file message"
"$GWB" eig 2>/dev/null; [ $? -eq 2 ] || die "no file: want 2"
"$GWB" eig $M --tol abc 2>/dev/null; [ $? -eq 2 ] || die "bad tol: want 2"
exit 0
