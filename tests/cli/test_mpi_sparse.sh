#!/usr/bin/env bash
# Sparse eig.solve and eig.svd with the rows dealt to 1 to 4 MPI ranks (mpirun --oversubscribe):
# values within 1e-10 of one process, vectors the same up to sign (tests/mpi/sparse.lua), and
# ranks holding different matrices stopped at the start with a message naming the rank.
. tests/lib.sh
. tests/mpi/lib.sh
out=$T/out
mkdir -p "$out"
host=$("$GWB" -e 'io.write(gwb.mpi.host)')
"$GWB" tests/mpi/sparse.lua "$out" ref >/dev/null || die "one process failed"
for n in 1 2 3 4; do
	GWB_THREADS=1 mpi "$n" 240 tests/mpi/sparse.lua "$out" check >"$T/log.$n" 2>&1 ||
		die "np $n: exit $?: $(tail -20 "$T/log.$n")"
	[ "$(grep -c ' done$' "$T/log.$n")" -eq "$n" ] || die "np $n: not every rank finished: $(cat "$T/log.$n")"
done
# rank 2 of 3 builds another matrix: every solve names it, for eig.solve and eig.svd alike
for call in 'eig.solve(A, {k = 3})' 'eig.svd(A, {k = 3})'; do
	start=$(date +%s)
	out2=$(mpi 3 60 -e "local A = mat.randsym(3000, {density = 2e-3, seed = gwb.mpi.rank == 2 and 9 or 1})
$call" 2>&1); rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || die "$call, mismatched matrix: exit $rc: $out2"
	[ $(( $(date +%s) - start )) -le 30 ] || die "$call, mismatched matrix: over 30 s to stop"
	grep -qE "the ranks hold different matrices: rank 2 \($host\) has 3000x3000" <<<"$out2" ||
		die "$call, mismatched matrix: no message naming rank 2: $out2"
done
out2=$("$GWB" -e 'eig.solve(mat.laplacian3d(10), {ranks = "some"})' 2>&1) && die "ranks = \"some\" was accepted"
grep -q 'ranks must be "all"' <<<"$out2" || die "bad ranks message: $out2"
echo ok
