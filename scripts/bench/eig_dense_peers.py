#!/usr/bin/env python3
"""eig_dense_peers.py - the peers of scripts/bench/eig_dense.lua, measured in the same run:
cuSOLVER's batched Jacobi through cupy (cupyx.cusolver.syevj on a batch: syevjBatched),
cupy.linalg.eigh and torch.linalg.eigh on batches of symmetric matrices, and cupy/torch eigh
on one dense n = 8192 f64 matrix. GWB_EIG_BENCH_PEERS (comma-separated: cupy_syevj, cupy_eigh,
torch_eigh; "none" for none; default all) picks which peers run, to save device time when
their numbers are already recorded. Inputs are GOE matrices generated on the device; timings
are device time (CUDA events) with the input already resident, best of up to 3 runs after a
warm-up. Residuals are max ||A v - l v|| / (max|l| ||v||) in f64.

Prints one line per measurement: case=<name> peer=<name> ms=<t> residual=<r>, or
case=... peer=... status=unavailable reason=... . Arguments: case names (default all)."""
import sys
import time

CASES = {
    "b64f32": ("batch", 4000, 64, "float32"),
    "b128f32": ("batch", 1000, 128, "float32"),
    "b256f32": ("batch", 250, 256, "float32"),
    "b64f64": ("batch", 4000, 64, "float64"),
    "b128f64": ("batch", 1000, 128, "float64"),
    "b256f64": ("batch", 250, 256, "float64"),
    "d8192f64": ("dense", 1, 8192, "float64"),
}


import os

_peers = os.environ.get("GWB_EIG_BENCH_PEERS")
WANT = None if not _peers else set(p.strip() for p in _peers.split(",") if p.strip())


def want(peer):
    return WANT is None or peer in WANT


def say(**kw):
    print(" ".join(f"{k}={v}" for k, v in kw.items()), flush=True)


try:
    import cupy as cp
    try:
        import cupyx.cusolver as cpsolver
    except Exception:  # noqa: BLE001
        cpsolver = None
except Exception as e:  # noqa: BLE001
    cp, cpsolver, cp_why = None, None, f"cupy not importable ({type(e).__name__})"
else:
    cp_why = None

try:
    import torch
    if not torch.cuda.is_available():
        torch, torch_why = None, "torch has no CUDA device"
    else:
        torch_why = None
except Exception as e:  # noqa: BLE001
    torch, torch_why = None, f"torch not importable ({type(e).__name__})"


def goe(count, n, dtype, seed=1):
    rs = cp.random.RandomState(seed)
    g = rs.standard_normal((count, n, n), dtype=cp.float64)
    a = (g + g.transpose(0, 2, 1)) / 2 ** 0.5
    return a.astype(dtype)


def residual(a, w, v):
    """max over pairs of ||A v - l v|| / (max|l| ||v||), in f64 on the device."""
    a = a.astype(cp.float64)
    w = w.astype(cp.float64)
    v = v.astype(cp.float64)
    if a.ndim == 2:
        a, w, v = a[None], w[None], v[None]
    r = a @ v - v * w[:, None, :]
    num = cp.linalg.norm(r, axis=1)
    den = cp.abs(w).max(axis=1, keepdims=True) * cp.linalg.norm(v, axis=1)
    return float((num / den).max())


def timed(fn, sync, budget_s=2.0, runs=3):
    """Best device time (ms) of up to `runs` calls, after one warm-up call."""
    out = fn()
    sync()
    best = None
    t_start = time.time()
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        sync()
        ms = (time.perf_counter() - t0) * 1e3
        best = ms if best is None else min(best, ms)
        if time.time() - t_start > budget_s:
            break
    return best, out


def cp_sync():
    cp.cuda.Device().synchronize()


def run_case(name):
    kind, count, n, dt = CASES[name]
    if cp is None:
        for p in ("cupy_syevj", "cupy_eigh", "torch_eigh"):
            say(case=name, peer=p, status="unavailable", reason=cp_why.replace(" ", "_"))
        return
    if not any(want(p) for p in ("cupy_syevj", "cupy_eigh", "torch_eigh")):
        return
    a = goe(count, n, dt) if kind == "batch" else goe(1, n, dt)[0]
    # cuSOLVER batched Jacobi (syevjBatched) through cupyx
    if kind == "batch" and want("cupy_syevj"):
        if cpsolver is not None and hasattr(cpsolver, "syevj"):
            try:
                ms, (w, v) = timed(lambda: cpsolver.syevj(a, with_eigen_vector=True), cp_sync)
                say(case=name, peer="cupy_syevj", ms=f"{ms:.3f}", residual=f"{residual(a, w, v):.3g}")
            except Exception as e:  # noqa: BLE001
                say(case=name, peer="cupy_syevj", status="failed", reason=type(e).__name__)
        else:
            say(case=name, peer="cupy_syevj", status="unavailable", reason="no_cupyx.cusolver.syevj")
    try:
        if want("cupy_eigh"):
            ms, (w, v) = timed(lambda: cp.linalg.eigh(a), cp_sync)
            say(case=name, peer="cupy_eigh", ms=f"{ms:.3f}", residual=f"{residual(a, w, v):.3g}")
    except Exception as e:  # noqa: BLE001
        say(case=name, peer="cupy_eigh", status="failed", reason=type(e).__name__)
    if not want("torch_eigh"):
        pass
    elif torch is None:
        say(case=name, peer="torch_eigh", status="unavailable", reason=torch_why.replace(" ", "_"))
    else:
        run_torch(name, a)
    del a
    cp.get_default_memory_pool().free_all_blocks()


def run_torch(name, a):
    try:
        ta = torch.as_tensor(a, device="cuda")
        ms, (tw, tv) = timed(lambda: torch.linalg.eigh(ta), torch.cuda.synchronize, budget_s=1.0)
        w, v = cp.asarray(tw), cp.asarray(tv)
        say(case=name, peer="torch_eigh", ms=f"{ms:.3f}", residual=f"{residual(a, w, v):.3g}")
    except Exception as e:  # noqa: BLE001
        say(case=name, peer="torch_eigh", status="failed", reason=type(e).__name__)


def cpu_case(name):
    """cpu_d<n><f64|f32> (one dense matrix) or cpu_b<count>x<n><f64|f32> (a stacked batch)."""
    import re
    m = re.fullmatch(r"cpu_(?:d(\d+)|b(\d+)x(\d+))(f32|f64)", name)
    if not m:
        return None
    dt = "float32" if m.group(4) == "f32" else "float64"
    if m.group(1):
        return "dense", 1, int(m.group(1)), dt
    return "batch", int(m.group(2)), int(m.group(3)), dt


def cpu_threads():
    return int(os.environ.get("GWB_EIG_BENCH_THREADS", "2"))


def cpu_info():
    """Which BLAS numpy and scipy run on (threadpoolctl), pinned to the same thread count."""
    try:
        import numpy as np
        import scipy
        import scipy.linalg  # noqa: F401  (loads scipy's own BLAS, for threadpool_info)
        from threadpoolctl import threadpool_info
    except Exception as e:  # noqa: BLE001
        say(info="cpu_peers", status="unavailable", reason=f"{type(e).__name__}:{str(e)[:60]}".replace(" ", "_"))
        return
    libs = ",".join(f"{i.get('prefix')}:{i.get('version')}:{i.get('architecture')}" for i in threadpool_info()
                    if i.get("user_api") == "blas")
    say(info="cpu_peers", numpy=np.__version__, scipy=scipy.__version__, threads=cpu_threads(), blas=libs or "?",
        OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "unset"))


def run_cpu_case(name, runs):
    """numpy.linalg.eigh (syevd) and scipy.linalg.eigh (its default driver, evr) on the same
    shapes, both pinned to GWB_EIG_BENCH_THREADS threads (threadpoolctl); wall time, best of
    `runs` after a warm-up; residuals in f64 as for gwb."""
    try:
        import numpy as np
        import scipy.linalg as sla
        from threadpoolctl import threadpool_limits
    except Exception as e:  # noqa: BLE001
        for p in ("numpy_eigh", "scipy_eigh"):
            say(case=name, peer=p, status="unavailable", reason=f"not_importable_({type(e).__name__})")
        return
    kind, count, n, dt = cpu_case(name)
    rs = np.random.default_rng(1)
    g = rs.standard_normal((count, n, n))
    a = ((g + g.transpose(0, 2, 1)) / 2 ** 0.5).astype(dt)
    del g
    if kind == "dense":
        a = a[0]
    peers = [("numpy_eigh", np.linalg.eigh)]
    if kind == "dense":
        peers.append(("scipy_eigh", sla.eigh))
    with threadpool_limits(limits=cpu_threads(), user_api="blas"):
        for peer, fn in peers:
            ms, (w, v) = timed(lambda: fn(a), lambda: None, budget_s=1e9, runs=runs)
            a64, w64, v64 = a.astype(np.float64), w.astype(np.float64), v.astype(np.float64)
            if a64.ndim == 2:
                a64, w64, v64 = a64[None], w64[None], v64[None]
            r = a64 @ v64 - v64 * w64[:, None, :]
            res = (np.linalg.norm(r, axis=1) / (np.abs(w64).max(axis=1, keepdims=True) * np.linalg.norm(v64, axis=1))).max()
            say(case=name, peer=peer, ms=f"{ms:.3f}", residual=f"{res:.3g}")
            del r, a64, w64, v64


def main():
    names = sys.argv[1:] or list(CASES)
    if any(cpu_case(n) for n in names):
        cpu_info()
    runs = int(os.environ.get("GWB_EIG_BENCH_RUNS", "3"))
    for name in names:
        if cpu_case(name):
            run_cpu_case(name, runs)
            continue
        if name not in CASES:
            say(case=name, status="unknown_case")
            continue
        run_case(name)


if __name__ == "__main__":
    main()
