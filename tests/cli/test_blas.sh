# gwb --version names the BLAS/LAPACK and its threads; on the netlib reference implementation
# (Debian's libblas3/liblapack3, put first with LD_LIBRARY_PATH) gwb still runs, and says once,
# in --version and in the first dense result's note, that it is the reference and how to
# install OpenBLAS.
. tests/lib.sh
v=$("$GWB" --version) || die "--version failed"
echo "$v" | grep -qE '^BLAS/LAPACK .+, [0-9]+ threads? \(' || die "--version lacks the BLAS line: $v"
echo "$v" | grep -q 'from /' || die "--version lacks the BLAS file: $v"
if echo "$v" | grep -q '^BLAS/LAPACK OpenBLAS'; then
	out=$(OPENBLAS_NUM_THREADS=1 "$GWB" --version | grep '^BLAS/LAPACK')
	echo "$out" | grep -q '1 thread (OPENBLAS_NUM_THREADS)' || die "OPENBLAS_NUM_THREADS not reported: $out"
	echo "$v" | grep -q 'install OpenBLAS' && die "install note on OpenBLAS: $v"
fi

lib=/usr/lib/x86_64-linux-gnu
[ -f $lib/blas/libblas.so.3 ] && [ -f $lib/lapack/liblapack.so.3 ] ||
	skip "no netlib reference BLAS/LAPACK in $lib/blas, $lib/lapack (scripts/install-deps installs libblas3 liblapack3)"
ref=$T/refblas
mkdir -p "$ref"
# Whatever gwb was linked against (libopenblas.so.0, or libblas.so.3 + liblapack.so.3) resolves
# to the reference libraries in this folder.
ln -s $lib/lapack/liblapack.so.3 "$ref/libopenblas.so.0"
ln -s $lib/lapack/liblapack.so.3 "$ref/liblapack.so.3"
ln -s $lib/blas/libblas.so.3 "$ref/libblas.so.3"
v=$(LD_LIBRARY_PATH=$ref "$GWB" --version) || die "gwb does not start on the reference BLAS"
echo "$v" | grep -q '^BLAS/LAPACK reference (netlib), 1 thread' || die "reference not detected: $v"
echo "$v" | grep -q 'note: .*reference implementation.*install OpenBLAS: apt-get install libopenblas0-pthread' ||
	die "--version lacks the install note: $v"
[ "$(echo "$v" | grep -c 'install OpenBLAS')" = 1 ] || die "note said more than once: $v"
out=$(LD_LIBRARY_PATH=$ref "$GWB" -e '
local A = mat.randn(60, 60, { sym = true, seed = 1 })
local e1 = eig.solve(A, { backend = "cpu" })
local e2 = eig.solve(A, { backend = "cpu" })
local b = gwb.blas()
print("first " .. e1.note)
print("second " .. e2.note)
print(("res %s %s %s %d %s"):format(e1.max_residual <= 1e-12, b.name, b.reference, b.threads, b.note ~= nil))') ||
	die "eig.solve on the reference BLAS: $out"
echo "$out" | grep -q '^first .*reference implementation.*install OpenBLAS' || die "first note: $out"
echo "$out" | grep '^second' | grep -q 'OpenBLAS' && die "the note repeated on the second result: $out"
echo "$out" | grep -q '^res true reference true 1 true$' || die "result or gwb.blas(): $out"
exit 0
