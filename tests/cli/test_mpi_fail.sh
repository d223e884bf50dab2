#!/usr/bin/env bash
# A failing rank ends the whole job, fast and loud: a Lua error on rank 1 while rank 0 waits
# in a collective, a rank killed by a signal, and ranks that loaded different data for
# rf.train. Each: mpirun exits non-zero within the timeout (no hang), and the error names the
# rank, its host and the message.
. tests/lib.sh
. tests/mpi/lib.sh
host=$("$GWB" -e 'io.write(gwb.mpi.host)')

# an error on rank 1; rank 0 is in a barrier that rank 1 never reaches
start=$(date +%s)
out=$(mpi 2 60 -e 'if gwb.mpi.rank == 1 then error("rank one gives up") end gwb.mpi.barrier()' 2>&1)
rc=$?
[ $rc -ne 0 ] || die "an erroring rank: mpirun exited 0: $out"
[ $rc -ne 124 ] && [ $rc -ne 137 ] || die "an erroring rank: the job hung until the timeout: $out"
grep -qF "gwb: rank 1 ($host): (command line):1: rank one gives up" <<<"$out" ||
	die "an erroring rank: no message naming rank 1 and its host: $out"
[ $(( $(date +%s) - start )) -le 30 ] || die "an erroring rank: the job took over 30 s to stop"

# a script's error on rank 2 of 3
printf 'local m = gwb.mpi\nif m.rank == 2 then local t = nil; return t.x end\nm.barrier()\n' >"$T/bad.lua"
out=$(mpi 3 60 "$T/bad.lua" 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || die "a script error on rank 2: exit $rc: $out"
grep -qE "gwb: rank 2 \($host\): .*bad.lua:2: .*index" <<<"$out" || die "a script error: no rank 2 message: $out"

# a rank killed by a signal while the others wait in a gather (mpirun then exits 137 itself:
# the time, not the status, tells it from a hang)
start=$(date +%s)
out=$(mpi 2 60 -e 'if gwb.mpi.rank == 1 then os.execute("kill -9 " .. io.open("/proc/self/stat"):read("*n")) end
os.execute("sleep 0.2") gwb.mpi.gather(1)' 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $(( $(date +%s) - start )) -le 30 ] ||
	die "a killed rank: exit $rc after $(( $(date +%s) - start )) s (0 or a hang): $out"
grep -qiE "rank 1|signal 9|Killed" <<<"$out" || die "a killed rank: no message saying which: $out"

# different data on the ranks: rf.train names the rank that differs
out=$(mpi 2 60 -e 'local d = data.synth{rows = 200 + 10 * gwb.mpi.rank, features = 4, seed = 1}
rf.train(d, {trees = 4, progress = false})' 2>&1); rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] || die "different data: exit $rc: $out"
grep -qF "the ranks hold different data: rank 1 ($host) has 210 rows x 4 features" <<<"$out" ||
	die "different data: no message naming rank 1: $out"

# gwb built with MPI, started without mpirun: one rank, no MPI started
[ "$("$GWB" -e 'io.write(gwb.mpi.size, " ", gwb.mpi.rank)')" = "1 0" ] || die "alone: not one rank"
echo ok
