#!/usr/bin/python3
# scripts/bench/mpi_sparse_peers.py - SLEPc's Krylov-Schur on the matrix gwb wrote (A:save, the
# .gwbs layout: a 136-byte header, then row offsets, column indices and values), run by
# scripts/bench/mpi.sh under the same mpirun and ranks as gwb's sparse cases:
#   mpirun -np N /usr/bin/python3 mpi_sparse_peers.py FILE.gwbs CASE K WHICH TOL [NORM2]
# With NORM2 (gwb's estimate of ||A||_2) the stopping test is gwb's, ||A x - l x|| <= TOL NORM2
# (EPS_CONV_ABS); without it SLEPc's EPS_CONV_NORM (relative to ||A||_inf: looser for
# symmetric A, whose ||A||_inf >= ||A||_2).
# Each rank reads its own rows (PETSc's default ownership: rows split evenly) into an MPIAIJ
# matrix; the timed part is EPSSolve alone (a barrier before and after), as gwb's timed part
# is eig.solve on a matrix already in memory. Prints (rank 0):
#   peer case=CASE np=N slepc_s=... its=... nconv=... ncv=... mpd=... spmv=... maxres=...
# SLEPc missing (Debian's python3-slepc4py: `scripts/install-deps bench`) prints one line
#   peer case=CASE slepc=missing (...)
# and exits 0, so the bench goes on without it. Without Debian's petsc-dev, slepc4py imports
# only with PETSC_DIR and SLEPC_DIR set; they default here to the folders under
# /usr/lib/petscdir and /usr/lib/slepcdir.
import glob
import os
import sys
import time


def default_dir(var, pattern):
    if not os.environ.get(var):
        hits = sorted(glob.glob(pattern))
        if hits:
            os.environ[var] = hits[-1]


default_dir("PETSC_DIR", "/usr/lib/petscdir/petsc*/x86_64-linux-gnu-real")
default_dir("SLEPC_DIR", "/usr/lib/slepcdir/slepc*/x86_64-linux-gnu-real")
# SLEPc's slepc4py.pth reads SLEPC_DIR at interpreter start; add the path by hand as well
for var in ("PETSC_DIR", "SLEPC_DIR"):
    d = os.path.join(os.environ.get(var, ""), "lib/python3/dist-packages")
    if os.path.isdir(d) and d not in sys.path:
        sys.path.append(d)

path, case, k, which, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
norm2 = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
try:
    import numpy as np
    import slepc4py
    slepc4py.init([sys.argv[0]])
    from petsc4py import PETSc
    from slepc4py import SLEPc
except Exception as exc:  # noqa: BLE001 - any import failure means "no SLEPc here"
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
        print("peer case=%s slepc=missing (%s: install python3-slepc4py, scripts/install-deps "
              "bench)" % (case, str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
    sys.exit(0)

comm = PETSc.COMM_WORLD
HDR = 136
with open(path, "rb") as f:
    head = f.read(HDR)
assert head[:4] == b"GWBS", "not a .gwbs file: " + path
rows, cols, nnz = np.frombuffer(head, dtype="<i8", count=3, offset=8)
bits = int(np.frombuffer(head, dtype="<u4", count=1, offset=32)[0])
it = np.dtype("<i4" if bits == 32 else "<i8")
raw = np.memmap(path, dtype=np.uint8, mode="r")
rp = np.frombuffer(raw, dtype=it, count=int(rows) + 1, offset=HDR)
ci = np.frombuffer(raw, dtype=it, count=int(nnz), offset=HDR + (int(rows) + 1) * it.itemsize)
va = np.frombuffer(raw, dtype="<f8", count=int(nnz),
                   offset=HDR + (int(rows) + 1 + int(nnz)) * it.itemsize)

n = int(rows)
lo = n * comm.rank // comm.size
hi = n * (comm.rank + 1) // comm.size
a, b = int(rp[lo]), int(rp[hi])
ia = (rp[lo:hi + 1] - a).astype(PETSc.IntType)
ja = ci[a:b].astype(PETSc.IntType)
vv = np.ascontiguousarray(va[a:b])
M = PETSc.Mat().createAIJ(size=((hi - lo, n), (hi - lo, n)), csr=(ia, ja, vv), comm=comm)
M.assemble()

E = SLEPc.EPS().create(comm)
E.setOperators(M)
E.setProblemType(SLEPc.EPS.ProblemType.HEP)
E.setType(SLEPc.EPS.Type.KRYLOVSCHUR)
E.setDimensions(k)
E.setWhichEigenpairs(SLEPc.EPS.Which.SMALLEST_REAL if which == "smallest"
                     else SLEPc.EPS.Which.LARGEST_REAL)
# gwb's criterion: ||A x - l x|| <= tol ||A||_2 per pair
if norm2 > 0:
    E.setTolerances(tol * norm2, 100000)
    E.setConvergenceTest(SLEPc.EPS.Conv.ABS)
else:
    E.setTolerances(tol, 100000)
    E.setConvergenceTest(SLEPc.EPS.Conv.NORM)
E.setFromOptions()


PETSc.Log.begin()   # MatMult's count: the products A x SLEPc made
comm.barrier()
t0 = time.perf_counter()
E.solve()
comm.barrier()
t = time.perf_counter() - t0
nconv = E.getConverged()
x = M.createVecRight()
maxres = 0.0
for i in range(min(nconv, k)):
    E.getEigenpair(i, x)
    maxres = max(maxres, E.computeError(i, SLEPc.EPS.ErrorType.ABSOLUTE))
nrm = M.norm(PETSc.NormType.INFINITY)
ncv, mpd = E.getDimensions()[1:]
try:
    spmv = int(PETSc.Log.Event("MatMult").getPerfInfo()["count"])
except Exception:  # noqa: BLE001 - older petsc4py: no per-event numbers
    spmv = -1
if comm.rank == 0:
    vals = " ".join("%.12g" % E.getEigenvalue(i).real for i in range(min(nconv, k)))
    print("peer case=%s np=%d slepc_s=%.3f its=%d spmv=%d nconv=%d ncv=%d mpd=%d "
          "maxres=%.2e normInf=%.6g lambda1=%s lambda%d=%s" % (
              case, comm.size, t, E.getIterationNumber(), spmv, nconv, ncv, mpd,
              maxres / (norm2 if norm2 > 0 else nrm), nrm, vals.split()[0] if vals else "?", k,
              vals.split()[-1] if vals else "?"))
