#!/usr/bin/env bash
# scripts/bench/mpi.sh - scripts/bench/mpi.lua at np = 1, then each of MPI_NPS (default 2),
# under mpirun (as root too: Open MPI's run-as-root settings), each np's efficiency against
# np = 1's times; for the sparse cases, SLEPc's Krylov-Schur on the same matrices at the same
# np right after gwb (scripts/bench/mpi_sparse_peers.py; a clear "slepc=missing" line and
# nothing else when python3-slepc4py is absent: scripts/install-deps bench installs it).
# GWB_MPI_CASES picks cases ("rf,sparse"), GWB_MPI_SCALE / GWB_MPI_SPARSE_SCALE scale them
# (mpi.lua says how). Threads per rank: GWB_THREADS (default: the cores divided by the ranks,
# so np ranks share the machine); SLEPc's ranks run one thread each (PETSc is MPI-only).
# The 16-core device machine, everything in one command:
#   MPI_NPS="2 4 8" scripts/bench/mpi.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
GWB=${GWB:-build/gwb}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export GWB_MPI_CASES=${GWB_MPI_CASES:-rf,sparse} GWB_MPI_SCALE=${GWB_MPI_SCALE:-1} GWB_MPI_SPARSE_SCALE=${GWB_MPI_SPARSE_SCALE:-1}
cores=$(nproc)
save=$(mktemp -d "${TMPDIR:-/tmp}/gwb-mpi-bench.XXXXXX")
trap 'rm -rf "$save"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo ?) $cores cores cases $GWB_MPI_CASES scale ${GWB_MPI_SCALE:-1} sparse_scale ${GWB_MPI_SPARSE_SCALE:-1} load $(cut -d' ' -f1-3 /proc/loadavg)"
export GWB_MPI_SPARSE_ONLY=${GWB_MPI_SPARSE_ONLY:-.}
out=$(GWB_THREADS=${GWB_THREADS:-$cores} GWB_MPI_SAVE=$save mpirun --oversubscribe -np 1 \
	-x GWB_THREADS -x GWB_MPI_SAVE -x GWB_MPI_CASES -x GWB_MPI_SCALE -x GWB_MPI_SPARSE_SCALE \
	-x GWB_MPI_SPARSE_ONLY \
	"$GWB" --no-panel -q scripts/bench/mpi.lua)
echo "$out"
t1() { sed -n "s/^mpi case=$1.* np=1 wall_s=\([0-9.]*\).*/\1/p" <<<"$out" | head -1; }
export GWB_MPI_T1_TRAIN=$(t1 'rf\.train') GWB_MPI_T1_CV=$(t1 'rf\.cv') \
	GWB_MPI_T1_LAP=$(t1 'eig\.lap3d') GWB_MPI_T1_RAND=$(t1 'eig\.randsym[^ ]*largest') \
	GWB_MPI_T1_RANDNC=$(t1 'eig\.randsym[^ ]*nocheck')

# SLEPc on every saved matrix at np ranks, with gwb's tolerance: ||r|| <= tol ||A||_2 (gwb's
# estimate of ||A||_2 from its np = 1 line, given to SLEPc as an absolute tolerance)
peers() {
	local np=$1 f case which norm
	for f in "$save"/*.gwbs; do
		[ -e "$f" ] || continue
		case=$(basename "$f" .gwbs)
		which=${case##*_}
		norm=$(sed -n "s/^mpi case=$case .*normA=\([0-9.e+-]*\).*/\1/p" <<<"$out" | head -1)
		OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpirun --oversubscribe -np "$np" \
			-x OMP_NUM_THREADS -x OPENBLAS_NUM_THREADS \
			/usr/bin/python3 scripts/bench/mpi_sparse_peers.py "$f" "$case" 10 "$which" 1e-10 \
			"${norm:-0}" || echo "peer case=$case np=$np slepc=failed (exit $?)"
	done
}
peers 1
for np in ${MPI_NPS:-2}; do
	th=$(( cores / np )); [ "$th" -ge 1 ] || th=1
	echo "# np=$np load $(cut -d' ' -f1-3 /proc/loadavg)"
	GWB_THREADS=${GWB_THREADS:-$th} mpirun --oversubscribe -np "$np" -x GWB_THREADS \
		-x GWB_MPI_T1_TRAIN -x GWB_MPI_T1_CV -x GWB_MPI_T1_LAP -x GWB_MPI_T1_RAND -x GWB_MPI_T1_RANDNC \
		-x GWB_MPI_CASES -x GWB_MPI_SCALE -x GWB_MPI_SPARSE_SCALE -x GWB_MPI_SPARSE_ONLY \
		"$GWB" --no-panel -q scripts/bench/mpi.lua | grep -v '^mpi data='
	peers "$np"
done
