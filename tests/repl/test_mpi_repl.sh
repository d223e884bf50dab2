#!/usr/bin/env bash
# `mpirun -np 2 gwb` through tmux: one prompt (rank 0's), each line run on both ranks (a sum
# over the ranks answers 3), output from rank 0 only, rank 1's error shown with its rank and
# host, and leaving ends the job. (timeout --foreground: in a process group of its own mpirun
# could not read the terminal.)
. tests/lib.sh
. tests/mpi/lib.sh
command -v tmux >/dev/null || skip "tmux is not installed (scripts/install-deps installs it)"
host=$("$GWB" -e 'io.write(gwb.mpi.host)')
tm new-session -d -s "$SESSION" -x 120 -y 30 \
	"env HOME='$HOME' GWB_HISTORY='$GWB_HISTORY' GWB_NORC=1 TERM=xterm OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader timeout --foreground 120 mpirun --oversubscribe -np 2 '$GWB'; echo MPIRUN-EXIT=\$?; sleep 30" ||
	die "tmux could not start"
wait_for 'gwb>' 30 || die "no prompt: $(screen)"
grep -qF 'a REPL on 2 MPI ranks' <<<"$(screen)" || die "no banner naming the ranks: $(screen)"
type_line 'x = gwb.mpi.allreduce(gwb.mpi.rank + 1, "sum")'
type_line 'print("sum=" .. x)'
wait_for 'sum=3' 20 || die "the line did not run on both ranks: $(screen)"
type_line 'print("from rank " .. gwb.mpi.rank)'
wait_for 'from rank 0' 20 || die "no output from rank 0: $(screen)"
sleep 0.5
[ "$(count_on_screen 'from rank 1')" -eq 0 ] || die "rank 1's output reached the screen: $(screen)"
type_line 'if gwb.mpi.rank == 1 then error("only one") end'
wait_for "gwb: rank 1 ($host): stdin:1: only one" 20 || die "rank 1's error not shown with its rank: $(screen)"
type_line 'print("still " .. gwb.mpi.allreduce(1, "sum"))'
wait_for 'still 2' 20 || die "the ranks did not go on after the error: $(screen)"
type_line 'exit'
wait_for 'MPIRUN-EXIT=0' 30 || die "leaving did not end the job with 0: $(screen)"
echo ok
