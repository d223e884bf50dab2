#!/usr/bin/env python3
"""rf_sklearn.py - the scikit-learn peer for scripts/bench/rf_cpu.lua.

Makes the benchmark data (make_classification: 100,000 x 32, 16 informative, 2 classes), writes
it as CSV for gwb to load, trains RandomForestClassifier(100 trees, max_depth=10, n_jobs=THREADS)
on the first 80,000 rows and scores the rest. Prints one line of key=value pairs.
Usage: rf_sklearn.py CSV_PATH [THREADS] [--no-fit]"""
import resource
import sys
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

ROWS, FEATURES, TRAIN = 100_000, 32, 80_000


def main():
    path = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 2
    X, y = make_classification(n_samples=ROWS, n_features=FEATURES, n_informative=16,
                               n_redundant=8, n_classes=2, random_state=1)
    X = X.astype(np.float32)
    header = ",".join([f"f{i}" for i in range(FEATURES)] + ["y"])
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.9g", header=header,
               comments="")
    if "--no-fit" in sys.argv:
        return
    m = RandomForestClassifier(n_estimators=100, max_depth=10, n_jobs=threads, random_state=0)
    t0 = time.perf_counter()
    m.fit(X[:TRAIN], y[:TRAIN])
    fit_s = time.perf_counter() - t0
    acc = m.score(X[TRAIN:], y[TRAIN:])
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    import sklearn
    print(f"sklearn={sklearn.__version__} fit_s={fit_s:.3f} acc={acc:.4f} peak_mb={peak_mb:.0f} "
          f"threads={threads}")


if __name__ == "__main__":
    main()
