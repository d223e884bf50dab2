#!/usr/bin/env python3
"""search_peers.py - scikit-learn's GridSearchCV for scripts/bench/search.lua, on the same rows
(the .npy gwb wrote: features, then the class as the last column) and the same 3 x 3 x 2 grid
(n_estimators, max_depth, max_features), 5-fold StratifiedKFold, scoring f1_macro, n_jobs = all
cores. BUDGET_S is the time this script may take, the estimate included: each depth x
max_features is fitted once on one fold with as many trees as cores (one parallel round), and
the full search's time estimated from those fits (scaled by the rounds of each setting's trees,
ceil(trees / cores), and by the folds; each fit's fixed cost, ~0.2 s of joblib start and the
prediction, is scaled too, so small data overestimates: 393 s for the quick 20,000 x 16 grid
on 2 cores where a 30-tree fit measured 5.7 s against 7.8 s scaled from 2 trees); the full
search runs only when the time spent so far plus that estimate fits in BUDGET_S, else the
estimate is printed, marked extrapolated=1.
Usage: search_peers.py NPY TREES DEPTHS MAX_FEATURES [BUDGET_S]
  e.g. search_peers.py x.npy 100,200,300 8,12,0 sqrt,0.3 600
Prints one line of key=value pairs."""
import itertools
import math
import os
import sys
import time

import numpy as np
import sklearn
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold


def mf(v):
    return v if v in ("sqrt", "log2") else float(v)


def main():
    a = np.load(sys.argv[1])
    X, y = a[:, :-1], a[:, -1].astype(np.int64)
    trees = [int(v) for v in sys.argv[2].split(",")]
    depths = [int(v) or None for v in sys.argv[3].split(",")]
    mfs = [mf(v) for v in sys.argv[4].split(",")]
    budget = float(sys.argv[5]) if len(sys.argv) > 5 else 600
    cores = os.cpu_count()
    grid = {"n_estimators": trees, "max_depth": depths, "max_features": mfs}
    cv = StratifiedKFold(5)
    # the estimate: one fold of each depth x max_features, one round of trees (one per core);
    # a forest of n trees on n_jobs = cores takes ceil(n / cores) such rounds
    t_begin = time.perf_counter()
    small = cores
    tr, te = next(cv.split(X, y))
    est = 0.0
    for d, m in itertools.product(depths, mfs):
        t0 = time.perf_counter()
        RandomForestClassifier(n_estimators=small, max_depth=d, max_features=m, n_jobs=-1,
                               random_state=0).fit(X[tr], y[tr]).predict(X[te])
        t = time.perf_counter() - t0
        est += sum(5 * t * math.ceil(n / cores) for n in trees)
    phase = time.perf_counter() - t_begin
    if phase + est <= budget:
        g = GridSearchCV(RandomForestClassifier(random_state=0, n_jobs=-1), grid, cv=cv,
                         scoring="f1_macro", n_jobs=1, refit=False)
        t0 = time.perf_counter()
        g.fit(X, y)
        wall = time.perf_counter() - t0
        print(f"sklearn={sklearn.__version__} wall_s={wall:.3f} extrapolated=0 cores={cores} "
              f"best={g.best_score_:.4f} estimate_s={est:.1f} estimate_phase_s={phase:.1f}")
    else:
        print(f"sklearn={sklearn.__version__} wall_s={est:.3f} extrapolated=1 cores={cores} "
              f"estimate_s={est:.1f} estimate_phase_s={phase:.1f}")


if __name__ == "__main__":
    main()
