#!/usr/bin/env python3
"""Generate tests/fixtures/metrics/*.lua: cases of (truth, prediction, scores) with the values
scikit-learn's sklearn.metrics gives for them, for tests/lua/test_metrics.lua (which reads the
files and never imports scikit-learn). Cases: predictions of small scikit-learn models on the
bundled datasets (datasets/*.csv, out-of-fold by cross_val_predict) and synthetic ones with
ties, a class the truth never has, a class the prediction never has, a single row.

    python3 scripts/gen-metric-fixtures.py        # rewrites tests/fixtures/metrics/

Each file is a Lua chunk returning a list of cases:
    {name, kind = "class" | "score" | "regression", truth = {...}, pred = {...},
     scores = {...} or {{...}, ...}, labels = {...}, expect = {metric = value, ...},
     errors = {metric, ...}}  -- errors: where scikit-learn says the value is undefined
"""
import math
import os
import sys
import warnings

import numpy as np
from sklearn import metrics as M
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import cross_val_predict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "metrics")

warnings.simplefilter("ignore")


def load(name, target):
    import csv
    with open(os.path.join(ROOT, "datasets", name)) as fp:
        rows = list(csv.reader(fp))
    head, rows = rows[0], rows[1:]
    t = head.index(target)
    X = np.array([[float(v) for j, v in enumerate(r) if j != t] for r in rows])
    y = [r[t] for r in rows]
    return X, y


def lua(v):
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k, lua(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple, np.ndarray)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise TypeError(type(v))


def class_case(name, truth, pred):
    labels = sorted(set(truth) | set(pred), key=lambda s: (float(s), s) if num(truth + pred) else s)
    e = {"accuracy": M.accuracy_score(truth, pred),
         "balanced_accuracy": M.balanced_accuracy_score(truth, pred)}
    for f, fn in (("precision", M.precision_score), ("recall", M.recall_score),
                  ("f1", M.f1_score)):
        for avg in ("macro", "weighted", "micro"):
            e[f + "_" + avg] = fn(truth, pred, average=avg, zero_division=0)
        e[f + "_none"] = list(fn(truth, pred, average=None, labels=labels, zero_division=0))
    e["confusion"] = [list(r) for r in M.confusion_matrix(truth, pred, labels=labels)]
    e["labels"] = labels
    e["extra"] = sum(1 for p in pred if p not in set(truth))
    return {"name": name, "kind": "class", "truth": truth, "pred": pred, "expect": e}


def num(vals):
    try:
        [float(v) for v in vals]
        return True
    except ValueError:
        return False


def score_case(name, truth, scores, labels=None):
    """scores: 1-D (binary, the positive = the larger label) or rows (columns = labels)."""
    e, errors = {}, []
    s = np.asarray(scores, dtype=float)
    present = sorted(set(truth), key=lambda v: (float(v), v) if num(truth) else v)
    cols = labels or present
    if s.ndim == 1 or len(cols) == 2:
        pos = cols[-1]
        b = np.array([t == pos for t in truth])
        sc = s if s.ndim == 1 else s[:, cols.index(pos)]
        if len(set(b)) < 2:
            errors += ["roc_auc", "roc_curve"]
        else:
            e["roc_auc"] = M.roc_auc_score(b, sc)
            fpr, tpr, thr = M.roc_curve(b, sc)
            e["roc_curve"] = {"fpr": fpr, "tpr": tpr, "thresholds": thr}
            fpr, tpr, thr = M.roc_curve(b, sc, drop_intermediate=False)
            e["roc_curve_all"] = {"fpr": fpr, "tpr": tpr, "thresholds": thr}
        if b.any():
            e["pr_auc"] = M.average_precision_score(b, sc)
            p, r, thr = M.precision_recall_curve(b, sc)
            e["pr_curve"] = {"precision": p, "recall": r, "thresholds": thr}
        p2 = np.column_stack([1 - sc, sc]) if s.ndim == 1 else s
        if len(set(truth)) > 1 or labels:
            e["log_loss"] = M.log_loss(b, p2[:, 1], labels=[False, True])
        e["brier"] = M.brier_score_loss(b, p2[:, 1], pos_label=True)
    else:
        if cols == present:
            e["roc_auc_ovr_macro"] = M.roc_auc_score(truth, s, multi_class="ovr", average="macro")
            e["roc_auc_ovr_weighted"] = M.roc_auc_score(truth, s, multi_class="ovr",
                                                        average="weighted")
            e["roc_auc_ovo_macro"] = M.roc_auc_score(truth, s, multi_class="ovo", average="macro")
            e["roc_auc_ovo_weighted"] = M.roc_auc_score(truth, s, multi_class="ovo",
                                                        average="weighted")
            yb = np.array([[t == c for c in cols] for t in truth])
            e["pr_auc_macro"] = M.average_precision_score(yb, s, average="macro")
            e["pr_auc_weighted"] = M.average_precision_score(yb, s, average="weighted")
        else:
            errors += ["roc_auc", "pr_auc"]
        e["log_loss"] = M.log_loss(truth, s, labels=cols)
        e["brier"] = M.brier_score_loss(truth, s, labels=cols)
    c = {"name": name, "kind": "score", "truth": truth, "scores": s, "expect": e, "errors": errors}
    if labels:
        c["labels"] = labels
    return c


def reg_case(name, truth, pred):
    e, errors = {}, []
    if len(truth) < 2:
        errors.append("r2")
    else:
        e["r2"] = M.r2_score(truth, pred)
    e["mse"] = M.mean_squared_error(truth, pred)
    e["rmse"] = M.root_mean_squared_error(truth, pred)
    e["mae"] = M.mean_absolute_error(truth, pred)
    e["mape"] = M.mean_absolute_percentage_error(truth, pred)
    e["max_error"] = M.max_error(truth, pred)
    return {"name": name, "kind": "regression", "truth": list(map(float, truth)),
            "pred": list(map(float, pred)), "expect": e, "errors": errors}


def write(fname, cases, note):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, fname), "w") as fp:
        fp.write("-- %s\n-- Generated by scripts/gen-metric-fixtures.py (scikit-learn %s); "
                 "do not edit.\nreturn {\n" % (note, __import__("sklearn").__version__))
        for c in cases:
            fp.write(lua(c) + ",\n")
        fp.write("}\n")


def main():
    cases = []
    # bundled datasets: out-of-fold predictions of small forests (probabilities with ties)
    X, y = load("iris.csv", "species")
    rf = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0)
    proba = cross_val_predict(rf, X, y, cv=5, method="predict_proba")
    labels = sorted(set(y))
    pred = [labels[i] for i in proba.argmax(axis=1)]
    cases.append(class_case("iris", y, pred))
    cases.append(score_case("iris proba", y, proba))
    cases.append(score_case("iris virginica vs rest", ["yes" if v == "virginica" else "no"
                                                       for v in y], proba[:, 2]))
    write("iris.lua", cases, "iris.csv: forest predictions (5-fold, out of fold)")

    X, y = load("digits.csv", "digit")
    X, y = X[:700], y[:700]  # keeps the file small
    rf = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0)
    proba = cross_val_predict(rf, X, y, cv=3, method="predict_proba")
    labels = sorted(set(y), key=float)
    pred = [labels[i] for i in proba.argmax(axis=1)]
    yi = [int(v) for v in y]
    write("digits.lua", [class_case("digits", yi, [int(v) for v in pred]),
                         score_case("digits proba", yi, proba)],
          "digits.csv, the first 700 rows: forest predictions (3-fold, out of fold)")

    X, y = load("diabetes.csv", "progression")
    yr = np.array([float(v) for v in y])
    rf = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0)
    p = cross_val_predict(rf, X, yr, cv=5)
    write("diabetes.lua", [reg_case("diabetes", yr, p)],
          "diabetes.csv: forest predictions (5-fold, out of fold)")

    rng = np.random.default_rng(7)
    syn = []
    # ties: scores on a coarse grid, many equal
    t = list(rng.integers(0, 2, 200))
    s = np.round(np.clip(rng.normal(0.3 + 0.4 * np.array(t), 0.25), 0, 1), 1)
    syn.append(score_case("binary ties", t, s))
    syn.append(class_case("binary ties labels", t, [int(v >= 0.5) for v in s]))
    # all scores equal
    syn.append(score_case("all tied", [0, 1, 0, 1, 1], [0.5] * 5))
    # the prediction holds a class the truth never has; the truth a class never predicted
    tr = ["a", "b", "a", "c", "b", "a", "c", "c"]
    pr = ["a", "a", "a", "d", "b", "d", "c", "a"]
    syn.append(class_case("extra and missing class", tr, pr))
    # probabilities for 4 columns, the truth has 3 of them
    P = rng.dirichlet(np.ones(4), 30)
    t4 = list(rng.choice(["w", "x", "y"], 30))
    syn.append(score_case("missing class in truth", t4, P, labels=["w", "x", "y", "z"]))
    # a single row
    syn.append(class_case("single row", ["x"], ["x"]))
    syn.append(class_case("single row wrong", ["x"], ["y"]))
    syn.append(score_case("single row scores", [1], [0.7], labels=[0, 1]))
    syn.append(reg_case("single row regression", [3.0], [2.5]))
    # regression: ties, zeros in the truth (mape's eps), a constant truth
    yt = np.round(rng.normal(0, 2, 50), 1)
    yt[:5] = 0
    syn.append(reg_case("regression zeros", yt, yt + rng.normal(0, 0.5, 50)))
    syn.append(reg_case("constant truth", [2.0] * 6, [2.0, 2.5, 1.0, 2.0, 2.0, 3.0]))
    syn.append(reg_case("constant exact", [2.0] * 4, [2.0] * 4))
    # extreme probabilities: log-loss clipping
    syn.append(score_case("clipped", [0, 1, 1, 0], [0.0, 1.0, 0.0, 1e-300]))
    write("synthetic.lua", syn, "synthetic cases: ties, extra and missing classes, one row")
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
