#!/usr/bin/env bash
# gwb on 1 to 4 MPI ranks (mpirun --oversubscribe): rf.train's forest (classification and
# regression) saved byte for byte as one process saves it, the same OOB, predictions and rf.cv
# folds, rf.search's settings and refit, eig.batched within 1e-10, and the gwb.mpi primitives
# (tests/mpi/forest.lua).
. tests/lib.sh
. tests/mpi/lib.sh
out=$T/out
mkdir -p "$out"
"$GWB" tests/mpi/forest.lua "$out" >/dev/null || die "one process failed"
for n in 1 2 3 4; do
	mpi "$n" 120 tests/mpi/forest.lua "$out" >"$T/log.$n" 2>&1 ||
		die "np $n: exit $?: $(tail -20 "$T/log.$n")"
	[ "$(grep -c ' done$' "$T/log.$n")" -eq "$n" ] || die "np $n: not every rank finished: $(cat "$T/log.$n")"
	for ((r = 0; r < n; r++)); do
		for x in gwbf r.gwbf txt eig; do
			cmp -s "$out/1.0.$x" "$out/$n.$r.$x" ||
				die "np $n rank $r: $x differs from one process: $(diff "$out/1.0.$x" "$out/$n.$r.$x" | head -5)"
		done
	done
done
# ranks = "self" on 2 ranks grows every tree on each: the same forest too
"$GWB" -e 'assert(rf.train(data.synth{rows = 300, features = 4, seed = 1}, {trees = 3, ranks = "self", progress = false}))' ||
	die "ranks = \"self\" alone failed"
out2=$("$GWB" -e 'rf.train(data.synth{rows = 30, features = 4, seed = 1}, {trees = 3, ranks = "some"})' 2>&1) && die "ranks = \"some\" was accepted"
grep -q 'ranks must be "all"' <<<"$out2" || die "bad ranks message: $out2"
echo ok
