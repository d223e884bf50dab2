/* onnx_export.h - a forest as an ONNX model (ai.onnx.ml TreeEnsembleClassifier /
 * TreeEnsembleRegressor, opset 3), so it can be served by onnxruntime and the tools that read
 * ONNX. Written with protobuf-c from onnx-ml.proto (src/onnx/) through the atomic save. */
#ifndef GWB_ONNX_EXPORT_H
#define GWB_ONNX_EXPORT_H

#include <stdbool.h>

#include "forest.h"
#include "status.h"

/* Write f to path. The graph: input "X" (float [N, features], its doc string the feature names
 * in order), outputs "label" ([N]; int64 when every class name is an integer, else string)
 * and "probabilities" (float [N, classes]) for classification, "variable" (float [N, 1]) for
 * regression. node <= threshold goes to the true branch (left), NaN as nan_left says; leaf
 * weights are each tree's value / trees, summed (classification) or averaged (regression).
 * A categorical feature (f->cat_levels) is refused, naming it, unless codes is true: then the
 * model takes the level codes as numbers (the doc string lists code = level). GWB_EIO when the
 * file cannot be written. */
gwb_status gwb_forest_export_onnx(const gwb_forest *f, const char *path, bool codes);

#endif
