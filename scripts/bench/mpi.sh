#!/usr/bin/env bash
# scripts/bench/mpi.sh - scripts/bench/mpi.lua at np = 1, then each of MPI_NPS (default 2),
# under mpirun (as root too: Open MPI's run-as-root settings), each np's efficiency against
# np = 1's times. GWB_MPI_SCALE scales the problem (mpi.lua says how). Threads per rank:
# GWB_THREADS (default: the cores divided by the ranks, so np ranks share the machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
GWB=${GWB:-build/gwb}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
cores=$(nproc)
echo "# $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo ?) $cores cores scale ${GWB_MPI_SCALE:-1}"
out=$(GWB_THREADS=${GWB_THREADS:-$cores} mpirun --oversubscribe -np 1 "$GWB" --no-panel -q scripts/bench/mpi.lua)
echo "$out"
t1_train=$(sed -n 's/^mpi case=rf.train.* wall_s=\([0-9.]*\).*/\1/p' <<<"$out")
t1_cv=$(sed -n 's/^mpi case=rf.cv.* wall_s=\([0-9.]*\).*/\1/p' <<<"$out")
for np in ${MPI_NPS:-2}; do
	th=$(( cores / np )); [ "$th" -ge 1 ] || th=1
	GWB_THREADS=${GWB_THREADS:-$th} GWB_MPI_T1_TRAIN=$t1_train GWB_MPI_T1_CV=$t1_cv \
		mpirun --oversubscribe -np "$np" -x GWB_THREADS -x GWB_MPI_T1_TRAIN -x GWB_MPI_T1_CV \
		-x GWB_MPI_SCALE "$GWB" --no-panel -q scripts/bench/mpi.lua | grep -v '^mpi data='
done
