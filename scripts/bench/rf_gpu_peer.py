#!/usr/bin/env python3
"""rf_gpu_peer.py - scikit-learn's RandomForestClassifier on the same .gwbd train/test files
that scripts/bench/rf_gpu.lua trains on (same rows, same split), for the side-by-side table.

usage: rf_gpu_peer.py TRAIN.gwbd TEST.gwbd TREES DEPTH BUDGET_S
Fits TREES trees of max_depth DEPTH with max_features="sqrt", n_jobs=-1. When BUDGET_S > 0 the
forest is grown 10 trees at a time (warm_start) and stops once BUDGET_S seconds are spent;
the fit time for TREES trees is then extrapolated (fit time is linear in trees) and reported
as such. Prints one line: PEER key=value ... (or PEER unavailable reason=...)."""
import os
import struct
import sys
import time


def read_gwbd(path):
    import numpy as np
    with open(path, "rb") as fh:
        buf = fh.read()
    if buf[:8] != b"\x89GWBD\r\n\x1a":
        raise ValueError(path + ": not a .gwbd file")
    rows, features, task, classes = struct.unpack_from("<QIII", buf, 16)
    off = 64

    def string(o):
        (n,) = struct.unpack_from("<I", buf, o)
        return o + 4 + n

    off = string(off)                      # target name
    for _ in range(features):              # feature names
        off = string(off)
    for _ in range(classes):               # class names
        off = string(off)
    levels = struct.unpack_from("<%dI" % features, buf, off)
    off += 4 * features
    for n in levels:
        for _ in range(n):
            off = string(off)
    X = np.frombuffer(buf, dtype="<f4", count=rows * features, offset=off)
    X = X.reshape(features, rows).T        # column-major on disk
    off += 4 * rows * features
    y = np.frombuffer(buf, dtype="<i4" if task == 0 else "<f4", count=rows, offset=off)
    return X, y


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    try:
        import numpy as np
        import sklearn
        from sklearn.ensemble import RandomForestClassifier
    except Exception as e:  # noqa: BLE001
        print("PEER unavailable reason=%s" % str(e).replace(" ", "_"))
        return 0
    train, test, trees, depth, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
        int(sys.argv[4]), float(sys.argv[5])
    Xtr, ytr = read_gwbd(train)
    Xte, yte = read_gwbd(test)
    Xtr = np.ascontiguousarray(Xtr)
    Xte = np.ascontiguousarray(Xte)
    step = 10 if budget > 0 else trees
    clf = RandomForestClassifier(n_estimators=0, max_depth=depth, max_features="sqrt",
                                 n_jobs=-1, random_state=1, warm_start=True)
    fit_s, grown = 0.0, 0
    while grown < trees:
        grown = min(trees, grown + step)
        clf.set_params(n_estimators=grown)
        t0 = time.perf_counter()
        clf.fit(Xtr, ytr)
        fit_s += time.perf_counter() - t0
        if budget > 0 and fit_s >= budget:
            break
    acc = float((clf.predict(Xte) == yte).mean())
    t0 = time.perf_counter()
    clf.predict(Xte)
    pred_s = time.perf_counter() - t0
    est = fit_s * trees / grown
    print("PEER sklearn=%s cores=%d trees_fitted=%d fit_s=%.3f fit_s_for_%d=%.3f "
          "extrapolated=%d accuracy=%.4f predict_s=%.4f"
          % (sklearn.__version__, os.cpu_count() or 0, grown, fit_s, trees, est,
             1 if grown < trees else 0, acc, pred_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
