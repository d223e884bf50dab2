# C-c while eig.solve iterates on a sparse matrix: the solve stops ("interrupted"), the
# progress line (iteration, largest residual) was shown, nothing is assigned, and the REPL
# goes on solving.
. tests/lib.sh
repl_start --no-panel
type_line 'A = mat.laplacian2d(400)'
type_line 'e = eig.solve(A, {k = 20, method = "lobpcg", backend = "cpu", maxiter = 100000})'
wait_for_re 'eig\.solve +[0-9]+ +[0-9.]+s +residual [0-9.e+-]+' 40 ||
	die "no progress line with iteration and residual: $(screen)"
send C-c
wait_for 'interrupted' 15 || die "no interrupt message: $(screen)"
type_line 'print("e is " .. tostring(e))'
wait_for 'e is nil' || die "a partial result was assigned: $(screen)"
type_line 'print("again " .. tostring(eig.solve(mat.laplacian1d(50, {sparse = true}), {k = 2}).converged))'
wait_for 'again true' || die "REPL cannot solve after C-c: $(screen)"
exit 0
