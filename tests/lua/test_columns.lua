-- test_columns.lua - forests and PCAs match a Dataset's columns by name: another order is
-- reordered (same answers), renamed, missing or extra columns raise naming them, and a
-- Dataset without names (header = false) is matched by position only with the same count,
-- and the result says so.

local tmp = T.tmpdir()
local iris = data.load("datasets/iris.csv")
local f = rf.train(iris, { trees = 30, seed = 1 })
local reversed = iris:select { "petal_width", "petal_length", "sepal_width", "sepal_length" }

-- iris's feature rows without a header, target last
local function headerless(d, name)
  local p = tmp .. "/" .. name
  d:write_csv(p)
  local s = T.readfile(p)
  T.writefile(p, s:sub(s:find("\n", 1, true) + 1))
  return data.load(p, { header = false })
end

T.test("a forest scores a Dataset with its columns in another order as the original", function()
  T.eq(reversed.names[1], "petal_width")
  local s0, s1 = f:score(iris), f:score(reversed)
  T.ok(s0 > 0.9, "score " .. s0)
  T.eq(s1, s0, "reversed columns")
  local p0, p1 = f:predict(iris), f:predict(reversed)
  for i = 1, iris.rows do T.eq(p1[i], p0[i], "prediction " .. i) end
  T.eq(p1.note, nil, "matched by name: no note")
  local q0, q1 = f:predict_proba(iris), f:predict_proba(reversed)
  for i = 1, iris.rows, 7 do
    for k = 1, 3 do T.eq(q1[i][k], q0[i][k]) end
  end
  local m0 = f:importance { method = "permutation", data = iris, seed = 3 }
  local m1 = f:importance { method = "permutation", data = reversed, seed = 3 }
  for name, v in pairs(m0) do T.eq(m1[name], v, "permutation importance of " .. name) end
  -- the same for a regression forest
  local dia = data.load("datasets/diabetes.csv")
  local g = rf.train(dia, { trees = 10, seed = 1 })
  local names = {}
  for i = #dia.names, 1, -1 do names[#names + 1] = dia.names[i] end
  T.eq(g:score(dia:select(names)), g:score(dia))
end)

T.test("renamed, missing and extra columns raise naming them", function()
  local three = iris:select { "sepal_length", "sepal_width", "petal_length" }
  local e = T.raises(function() return f:score(three) end, "missing 'petal_width'")
  T.ok(e:find("score:", 1, true), e)
  T.raises(function() return f:predict(three) end, "missing 'petal_width'")
  T.raises(function() return f:predict_proba(three) end, "missing 'petal_width'")
  -- a renamed column: missing the old name, unexpected the new one
  local X, y = {}, {}
  for i = 1, 20 do X[i] = { i, i * 2, i * 3, i % 3 }; y[i] = iris.labels[1 + i % 3] end
  local renamed = data.new { X = X, y = y,
    names = { "sepal_length", "sepal_width", "petal_length", "petal_w" } }
  e = T.raises(function() return f:score(renamed) end, "missing 'petal_width'")
  T.ok(e:find("unexpected 'petal_w'", 1, true), e)
  -- an extra column
  local five = iris:select { "sepal_length", "sepal_width", "petal_length", "petal_width", 1 }
  T.raises(function() return f:predict(five) end, "two columns named 'sepal_length'")
  local extra = data.new { X = { { 1, 2, 3, 4, 5 }, { 2, 3, 4, 5, 6 } }, y = { "setosa", "virginica" },
    names = { "sepal_length", "sepal_width", "petal_length", "petal_width", "colour" } }
  T.raises(function() return f:predict(extra) end, "unexpected 'colour'")
end)

T.test("a Dataset without names is matched by position with the same count, and says so", function()
  local nh = headerless(iris, "iris_noheader.csv")
  T.eq(nh.names[1], "col1")
  T.eq(nh.features, 4)
  local s, note = f:score(nh)
  T.eq(s, f:score(iris))
  T.ok(note and note:find("matched by position", 1, true), tostring(note))
  local p, pnote = f:predict(nh)
  T.ok(p.note and p.note:find("by position", 1, true))
  T.eq(pnote, p.note, "the note is the second result too")
  T.eq(select("#", f:predict(iris)), 1, "no note when matched by name")
  T.eq(p[1], f:predict(iris)[1])
  T.ok(f:predict_proba(nh).note)
  -- a different count cannot be matched
  local nh3 = headerless(iris:select { 1, 2, 3 }, "iris3_noheader.csv")
  T.raises(function() return f:score(nh3) end, "fitted on 4 features but the dataset has 3")
  -- a forest trained without names predicts named data by position, and says so
  local g = rf.train(nh, { trees = 10, seed = 1 })
  local s2, note2 = g:score(iris)
  T.eq(s2, g:score(nh))
  T.ok(note2 and note2:find("by position", 1, true))
end)

T.test("p:transform matches columns by name, like forests", function()
  local p = data.pca(iris, 2)
  local A, B = p:transform(iris), p:transform(reversed)
  for i = 1, iris.rows, 5 do
    for c = 1, 2 do T.eq(B:get(i, c), A:get(i, c), "score " .. i .. "," .. c) end
  end
  T.raises(function() return p:transform(iris:select { 1, 2, 3 }) end, "missing 'petal_width'")
  local nh = headerless(iris, "iris_pca_noheader.csv")
  local C, note = p:transform(nh)
  T.eq(C:get(1, 1), A:get(1, 1))
  T.ok(note and note:find("by position", 1, true), tostring(note))
  T.raises(function() return p:transform(headerless(iris:select { 1, 2 }, "i2.csv")) end,
    "has 2")
  -- a PCA table that was changed is refused, not misread
  local q = data.pca(iris, 2)
  q.components = nil
  T.raises(function() return q:transform(iris) end, "p.components")
  q = data.pca(iris, 2)
  q.k = 1e9
  T.raises(function() return q:transform(iris) end, "1 <= k <= features")
  q = data.pca(iris, 2)
  q.mean[2] = "x"
  T.raises(function() return q:transform(iris) end, "p.mean[2] is not a number")
  q = data.pca(iris, 2)
  q.ratio = nil
  T.ok(#tostring(q) > 0)
end)

T.test("a PCA of many components prints (its text passes the buffer's first block)", function()
  local d = data.synth { rows = 300, features = 100, informative = 2, redundant = 0, seed = 1 }
  local p = data.pca(d, 80)
  local s = tostring(p)
  T.ok(s:find("^PCA: 80 of 100 components\n"), s:sub(1, 80))
  T.ok(s:find(string.format("PC80  variance %-12.6g", p.values[80]), 1, true), s:sub(-200))
end)
