# tests/mpi/lib.sh - what the MPI tests share (sourced after tests/lib.sh): skip with the
# reason when mpirun or gwb's MPI support is missing; run gwb on N ranks under a timeout, as
# root too (CI), oversubscribed (2 cores, up to 4 ranks).
command -v mpirun >/dev/null 2>&1 || skip "mpirun is not installed (scripts/install-deps installs openmpi-bin)"
[ "$("$GWB" -e 'io.write(tostring(gwb.mpi.built))')" = true ] ||
	skip "gwb was built without MPI (install libopenmpi-dev and rebuild: make MPI=1)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no network interfaces to probe on a CI machine: the ranks share one host
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
# mpi N SECONDS ARGS...: gwb on N ranks, killed after SECONDS
mpi() { local n=$1 s=$2; shift 2; timeout -k 5 "$s" mpirun --oversubscribe -np "$n" "$GWB" "$@"; }
