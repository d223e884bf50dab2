#!/usr/bin/env python3
"""eig_sparse_peers.py - the peers of scripts/bench/eig_sparse.lua, on the very matrices gwb
solved (read from the .gwbs files gwb wrote: header, CSR arrays, checksum):
cupyx.scipy.sparse.linalg.eigsh (thick-restart Lanczos on the GPU) and scipy's ARPACK eigsh
(CPU), k eigenpairs at each end, tol=0 (machine precision, as close as they get to our 1e-10
residual target). Each run has a wall-clock limit (SIGALRM; both eigsh loops are Python-level,
so the alarm stops them between iterations): a run that hits it is reported as status=limit
with the seconds it was given. Times are wall clock including the device synchronization, the
matrix already resident (cupy) or in memory (scipy). Residuals: max ||A x - l x|| / ||A||_2
with ||A||_2 from the extreme values found (or a power iteration).

Arguments: k, then case=path,which,limit_cupy,limit_scipy[,tol[,limit_primme]] ... (which:
smallest, largest, or svd for the k largest singular triplets by svds; tol: eigsh's tol, 0 =
machine precision; limit_primme > 0 also runs PRIMME's eigsh with tol, 1e-10 when 0). Prints one line per run:
case=... which=... peer=... s=... residual=... status=ok|limit|unavailable|error."""
import signal
import sys
import time

try:
    import numpy as np
except Exception as e:  # noqa: BLE001
    print(f"info=unavailable reason=numpy_not_importable_({type(e).__name__}):_peer_not_available", flush=True)
    sys.exit(0)


def say(**kw):
    print(" ".join(f"{k}={v}" for k, v in kw.items()), flush=True)


def load_gwbs(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:4] != b"GWBS":
        raise ValueError(f"{path}: not a .gwbs file")
    rows, cols, nnz = np.frombuffer(raw, dtype="<i8", count=3, offset=8)
    bits = int(np.frombuffer(raw, dtype="<u4", count=1, offset=32)[0])
    it = "<i4" if bits == 32 else "<i8"
    ib = bits // 8
    off = 136
    rp = np.frombuffer(raw, dtype=it, count=int(rows) + 1, offset=off)
    off += (int(rows) + 1) * ib
    ci = np.frombuffer(raw, dtype=it, count=int(nnz), offset=off)
    off += int(nnz) * ib
    val = np.frombuffer(raw, dtype="<f8", count=int(nnz), offset=off)
    return int(rows), int(cols), rp, ci, val


class Limit(Exception):
    pass


def _alarm(signum, frame):
    raise Limit()


signal.signal(signal.SIGALRM, _alarm)


def limited(fn, seconds):
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main():
    k = int(sys.argv[1])
    cases = []
    for a in sys.argv[2:]:
        name, rest = a.split("=", 1)
        parts = rest.split(",")
        path, which, lc, ls = parts[:4]
        # optional: the tolerance (0 = machine precision) and PRIMME's limit (0 = skip)
        tol = float(parts[4]) if len(parts) > 4 else 0.0
        lp = float(parts[5]) if len(parts) > 5 else 0.0
        cases.append((name, path, which, float(lc), float(ls), tol, lp))
    try:
        import scipy
        import scipy.sparse as sp
        import scipy.sparse.linalg as spla
    except Exception as e:  # noqa: BLE001
        sp = None
        sp_why = f"scipy not importable ({type(e).__name__})"
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as cspla
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        cp = None
        cp_why = f"cupy not importable or no GPU ({type(e).__name__})"
    say(info="versions", numpy=np.__version__, scipy=(scipy.__version__ if sp else "none"),
        cupy=(cp.__version__ if cp else "none"))
    loaded = {}
    for name, path, which, lim_cupy, lim_scipy, tol, lim_primme in cases:
        if path not in loaded:
            rows, cols, rp, ci, val = load_gwbs(path)
            loaded.clear()
            loaded[path] = sp.csr_matrix((val, ci, rp), shape=(rows, cols)) if sp else None
        A = loaded[path]
        if which == "svd":
            svd_peers(name, A, k, lim_cupy, lim_scipy, sp, spla if sp is not None else None, cp,
                      csp if cp is not None else None, cspla if cp is not None else None,
                      None if sp is not None else sp_why, None if cp is not None else cp_why)
            continue
        w = "SA" if which == "smallest" else "LA"
        # cupyx
        if cp is None:
            say(case=name, which=which, peer="cupyx", status="unavailable", reason=cp_why.replace(" ", "_"))
        elif lim_cupy <= 0:
            say(case=name, which=which, peer="cupyx", status="skipped")
        else:
            try:
                Ag = csp.csr_matrix(A)
                cp.cuda.Device().synchronize()
                # a small warm-up compiles the kernels cupyx uses
                cspla.eigsh(csp.csr_matrix(sp.identity(64, format="csr") * 2.0), k=2, which=w)
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()

                def run():
                    r = cspla.eigsh(Ag, k=k, which=w, tol=0)
                    cp.cuda.Device().synchronize()
                    return r
                vals, vecs = limited(run, lim_cupy)
                t = time.perf_counter() - t0
                R = Ag @ vecs - vecs * vals[None, :]
                res = cp.linalg.norm(R, axis=0) / cp.linalg.norm(vecs, axis=0)
                normA = float(abs(power_norm(Ag, cp)))
                say(case=name, which=which, peer="cupyx", s=f"{t:.3f}",
                    residual=f"{float(res.max()) / normA:.1e}", status="ok")
            except Limit:
                say(case=name, which=which, peer="cupyx", s=f">{lim_cupy:g}", status="limit")
            except Exception as e:  # noqa: BLE001
                say(case=name, which=which, peer="cupyx", status="error", reason=type(e).__name__)
            finally:
                if cp is not None:
                    cp.get_default_memory_pool().free_all_blocks()
        # scipy ARPACK
        if sp is None:
            say(case=name, which=which, peer="scipy", status="unavailable", reason=sp_why.replace(" ", "_"))
        elif lim_scipy <= 0:
            say(case=name, which=which, peer="scipy", status="skipped")
        else:
            host_peer(name, which, "scipy", A, lim_scipy,
                      lambda: spla.eigsh(A, k=k, which=w, tol=tol))
        # PRIMME (residual <= tol ||A||, gwb's criterion), when asked for and installed
        if lim_primme > 0:
            try:
                import primme
            except Exception as e:  # noqa: BLE001
                say(case=name, which=which, peer="primme", status="unavailable",
                    reason=f"primme_not_importable_({type(e).__name__})")
                continue
            host_peer(name, which, "primme", A, lim_primme,
                      lambda: primme.eigsh(A, k=k, which=w, tol=tol or 1e-10))


def host_peer(name, which, peer, A, lim, solve):
    """One host peer's eigsh: the wall time of the call on the host matrix A (under the
    limit), the residual of what it returns, one line."""
    try:
        t0 = time.perf_counter()
        vals, vecs = limited(solve, lim)
        t = time.perf_counter() - t0
        R = A @ vecs - vecs * vals[None, :]
        res = np.linalg.norm(R, axis=0) / np.linalg.norm(vecs, axis=0)
        normA = float(abs(power_norm(A, np)))
        say(case=name, which=which, peer=peer, s=f"{t:.3f}",
            residual=f"{res.max() / normA:.1e}", status="ok")
    except Limit:
        say(case=name, which=which, peer=peer, s=f">{lim:g}", status="limit")
    except Exception as e:  # noqa: BLE001
        say(case=name, which=which, peer=peer, status="error", reason=type(e).__name__)


def svd_peers(name, A, k, lim_cupy, lim_scipy, sp, spla, cp, csp, cspla, sp_why, cp_why):
    """The k largest singular triplets by scipy's and cupyx's svds; residual
    max(||Av - su||, ||A^T u - sv||) / s_max, as gwb reports it."""
    def resid(M, u, s, vt, xp):
        v = vt.T
        r1 = xp.linalg.norm(M @ v - u * s[None, :], axis=0)
        r2 = xp.linalg.norm(M.T @ u - v * s[None, :], axis=0)
        return float(xp.maximum(r1, r2).max()) / float(s.max())
    runs = [("cupyx", lim_cupy, cp_why), ("scipy", lim_scipy, sp_why)]
    for peer, lim, why in runs:
        if why is not None:
            say(case=name, which="svd", peer=peer, status="unavailable", reason=why.replace(" ", "_"))
            continue
        if lim <= 0:
            say(case=name, which="svd", peer=peer, status="skipped")
            continue
        try:
            if peer == "cupyx":
                M = csp.csr_matrix(A)
                cspla.svds(csp.csr_matrix(sp.identity(64, format="csr") * 2.0), k=2)  # warm-up
                cp.cuda.Device().synchronize()
                t0 = time.perf_counter()

                def run():
                    r = cspla.svds(M, k=k)
                    cp.cuda.Device().synchronize()
                    return r
                u, s, vt = limited(run, lim)
                t = time.perf_counter() - t0
                res = resid(M, u, s, vt, cp)
            else:
                M = A
                t0 = time.perf_counter()
                u, s, vt = limited(lambda: spla.svds(M, k=k, tol=0), lim)
                t = time.perf_counter() - t0
                res = resid(M, u, s, vt, np)
            say(case=name, which="svd", peer=peer, s=f"{t:.3f}", residual=f"{res:.1e}", status="ok")
        except Limit:
            say(case=name, which="svd", peer=peer, s=f">{lim:g}", status="limit")
        except Exception as e:  # noqa: BLE001
            say(case=name, which="svd", peer=peer, status="error", reason=type(e).__name__)
        finally:
            if peer == "cupyx" and cp is not None:
                cp.get_default_memory_pool().free_all_blocks()


def power_norm(A, xp, steps=60):
    """||A||_2 of a symmetric A from power iteration (a lower bound, tight after 60 steps)."""
    x = xp.ones(A.shape[0]) / np.sqrt(A.shape[0])
    lam = 0.0
    for _ in range(steps):
        y = A @ x
        lam = float(xp.linalg.norm(y))
        if lam == 0:
            return 1.0
        x = y / lam
    return lam


if __name__ == "__main__":
    main()
