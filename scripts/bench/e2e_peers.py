#!/usr/bin/env python3
"""e2e_peers.py - the peers of scripts/bench/e2e.lua, timed the way a user meets them: the wall
time of the call, in two modes, on the very matrices gwb solved (read from the .gwbm files
e2e.lua wrote).

  host:   the input starts in host memory (numpy); timed: cupy.asarray / torch.from_numpy
          .cuda(), the solve, and the copy back of what gwb returns (values, and vectors when
          asked), synchronised.
  device: the input is already on the device; timed: the solve only, synchronised.

Peers: cupy.linalg.eigh / eigvalsh and torch.linalg.eigh / eigvalsh (batched for batches).
Median of 3 after a warm-up (the warm-up itself when it took over GWB_E2E_PEER_SLOW s, 3;
the (case, peer) pairs left once GWB_E2E_PEER_BUDGET s, 600, are spent are skipped). Arguments: NAME=PATH:V ... (V = 1 with vectors, 0 values only).
Prints one line per measurement: case=NAME mode=host|device peer=cupy|torch s=SECONDS, or
case=NAME peer=... status=unavailable reason=...  GWB_E2E_PEERS=cupy,torch picks peers."""
import os
import statistics
import struct
import sys
import time

import numpy as np


def say(**kw):
    print(" ".join(f"{k}={v}" for k, v in kw.items()), flush=True)


def read_gwbm(path):
    """A matrix or batch saved by gwb's A:save (dense.c: 48-byte header, data, checksum)."""
    with open(path, "rb") as f:
        magic, _ver, dtype, layout, batched, _res, rows, cols, count = struct.unpack(
            "<4s5I3Q", f.read(48))
        if magic != b"GWBM":
            raise SystemExit(f"{path}: not a gwb matrix file")
        dt = np.float64 if dtype == 1 else np.float32
        a = np.fromfile(f, dtype=dt, count=rows * cols * count)
    a = a.reshape(count, rows, cols) if batched else a.reshape(rows, cols)
    if layout == 1 and a.ndim == 2:  # column-major: symmetric anyway, but keep it exact
        a = np.ascontiguousarray(a.reshape(cols, rows).T)
    return a


want = set((os.environ.get("GWB_E2E_PEERS") or "cupy,torch").split(","))

try:
    import cupy as cp
    cp_why = None
except Exception as e:  # noqa: BLE001
    cp, cp_why = None, f"cupy_not_importable_({type(e).__name__})"
try:
    import torch
    torch_why = None if torch.cuda.is_available() else "torch_has_no_CUDA_device"
    if torch_why:
        torch = None
except Exception as e:  # noqa: BLE001
    torch, torch_why = None, f"torch_not_importable_({type(e).__name__})"


SLOW = float(os.environ.get("GWB_E2E_PEER_SLOW") or 3.0)      # s: one timed run above this
BUDGET = float(os.environ.get("GWB_E2E_PEER_BUDGET") or 600.0)  # s for all peers
T_START = time.perf_counter()


def median_wall(fn, runs=3):
    t0 = time.perf_counter()
    fn()  # warm-up (library handles, workspace, kernels loaded)
    t_warm = time.perf_counter() - t0
    if t_warm > SLOW:
        return t_warm  # far off the pace: the warm-up call stands for it
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def cupy_case(h, vectors):
    def host():
        a = cp.asarray(h)
        if vectors:
            w, v = cp.linalg.eigh(a)
            cp.asnumpy(w), cp.asnumpy(v)
        else:
            cp.asnumpy(cp.linalg.eigvalsh(a))

    d = cp.asarray(h)
    cp.cuda.Device().synchronize()

    def dev():
        if vectors:
            cp.linalg.eigh(d)
        else:
            cp.linalg.eigvalsh(d)
        cp.cuda.Device().synchronize()

    return median_wall(host), median_wall(dev)


def torch_case(h, vectors):
    def host():
        a = torch.from_numpy(h).cuda()
        if vectors:
            w, v = torch.linalg.eigh(a)
            w.cpu(), v.cpu()
        else:
            torch.linalg.eigvalsh(a).cpu()

    d = torch.from_numpy(h).cuda()
    torch.cuda.synchronize()

    def dev():
        if vectors:
            torch.linalg.eigh(d)
        else:
            torch.linalg.eigvalsh(d)
        torch.cuda.synchronize()

    return median_wall(host), median_wall(dev)


for arg in sys.argv[1:]:
    name, rest = arg.split("=", 1)
    path, v = rest.rsplit(":", 1)
    vectors = v == "1"
    h = read_gwbm(path)
    for peer, mod, why, fn in (("cupy", cp, cp_why, cupy_case), ("torch", torch, torch_why, torch_case)):
        if peer not in want:
            continue
        if mod is None:
            say(case=name, peer=peer, status="unavailable", reason=why)
            continue
        if time.perf_counter() - T_START > BUDGET:
            say(case=name, peer=peer, status="skipped", reason=f"GWB_E2E_PEER_BUDGET={BUDGET:g}s_spent")
            continue
        try:
            th, td = fn(h, vectors)
        except Exception as e:  # noqa: BLE001
            say(case=name, peer=peer, status="failed", reason=type(e).__name__)
            continue
        say(case=name, mode="host", peer=peer, s=f"{th:.6f}")
        say(case=name, mode="device", peer=peer, s=f"{td:.6f}")
        if peer == "cupy":
            cp.get_default_memory_pool().free_all_blocks()
        else:
            torch.cuda.empty_cache()
