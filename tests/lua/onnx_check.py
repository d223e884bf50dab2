#!/usr/bin/env python3
"""onnx_check.py - used by tests/lua/test_onnx.lua: check an ONNX file that gwb exported and
compare onnxruntime's predictions with gwb's.
Usage: onnx_check.py MODEL.onnx DATA.npy PRED.txt
  DATA.npy: the features then the target (gwb's d:save); PRED.txt: gwb's predictions, one row
  per line: "label,p1,p2,..." (classification) or "value" (regression).
Prints "checked" (the onnx checker passed), "compared N" (onnxruntime agreed on N rows), or
"skip: <reason>" when a package is missing; exits 1 with the first difference otherwise."""
import sys


def main():
    model, data, pred = sys.argv[1:4]
    try:
        import onnx
    except ImportError:
        onnx = None
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    if onnx is None and ort is None:
        print("skip: neither onnx nor onnxruntime can be imported (pip install onnxruntime, "
              "or apt-get install python3-onnx)")
        return 0
    if onnx is not None:
        onnx.checker.check_model(onnx.load(model), full_check=True)
        print("checked")
    if ort is None:
        print("skip: onnxruntime cannot be imported: predictions not compared")
        return 0
    import numpy as np
    a = np.load(data)
    X = np.ascontiguousarray(a[:, :-1], dtype=np.float32)
    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    outs = s.run(None, {"X": X})
    lines = open(pred).read().split("\n")
    for i in range(X.shape[0]):
        f = lines[i].split(",")
        if len(outs) == 2:
            lab, prob = outs[0][i], outs[1][i]
            if str(lab) != f[0]:
                print(f"row {i + 1}: label {lab} (onnxruntime) vs {f[0]} (gwb)")
                return 1
            want = np.array([float(v) for v in f[1:]])
            if np.abs(prob - want).max() > 1e-6:
                print(f"row {i + 1}: probabilities {list(prob)} vs {list(want)}")
                return 1
        else:
            v = float(outs[0][i][0])
            if abs(v - float(f[0])) > 1e-6 * max(1.0, abs(v)):
                print(f"row {i + 1}: value {v} vs {f[0]}")
                return 1
    print(f"compared {X.shape[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
