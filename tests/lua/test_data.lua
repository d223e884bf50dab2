-- test_data.lua - data.load on the bundled CSVs, the Dataset fields, split and kfold.

T.test("data.load reads iris: shape, names, classes", function()
  local d = data.load("datasets/iris.csv")
  T.eq(d.rows, 150)
  T.eq(d.features, 4)
  T.eq(d.task, "classification")
  T.eq(d.classes, 3)
  T.eq(d.target, "species")
  T.eq(table.concat(d.names, ","), "sepal_length,sepal_width,petal_length,petal_width")
  T.eq(table.concat(d.labels, ","), "setosa,versicolor,virginica")
  local cc = d:class_counts()
  T.eq(cc.setosa, 50); T.eq(cc.versicolor, 50); T.eq(cc.virginica, 50)
  local x = d:column("sepal_length")
  T.eq(#x, 150)
  T.eq(x[1], 5.1 + 0.0 == x[1] and x[1] or (function() local f = string.unpack("f", string.pack("f", 5.1)) return f end)())
end)

T.test("data.load reads digits (numeric labels) and diabetes (regression)", function()
  local d = data.load("datasets/digits.csv")
  T.eq(d.rows, 1797); T.eq(d.features, 64); T.eq(d.task, "classification"); T.eq(d.classes, 10)
  T.eq(d.labels[1], "0"); T.eq(d.labels[10], "9")
  local r = data.load("datasets/diabetes.csv")
  T.eq(r.rows, 442); T.eq(r.features, 10); T.eq(r.task, "regression")
  T.eq(r.classes, nil); T.eq(r.labels, nil)
  T.eq(r.target, "progression")
end)

T.test("split: sizes, disjoint cover, stratified shares", function()
  local d = data.load("datasets/iris.csv")
  local tr, te = d:split(0.8, { seed = 7, stratify = true })
  T.eq(tr.rows, 120); T.eq(te.rows, 30)
  T.eq(tr:class_counts().setosa, 40); T.eq(te:class_counts().virginica, 10)
end)

T.test("kfold: every row tested once, balanced folds", function()
  local d = data.load("datasets/iris.csv")
  local seen, folds = {}, d:kfold(5, { seed = 3 })
  T.eq(#folds, 5)
  for _, f in ipairs(folds) do
    T.eq(f.test.rows, 30); T.eq(f.train.rows, 120)
    T.eq(f.test:class_counts().setosa, 10)
    for _, r in ipairs(f.test_rows) do T.eq(seen[r], nil); seen[r] = true end
  end
  local n = 0
  for _ in pairs(seen) do n = n + 1 end
  T.eq(n, 150)
end)
