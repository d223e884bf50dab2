-- test_rf_grow.lua - warm start (f:grow): T trees then n more are the forest of T + n trees
-- trained at once, byte for byte in the saved file; the CPU backend here, the GPU backend
-- through the same path where there is a GPU.
local function same_file(a, b, what)
  local x, y = T.readfile(a), T.readfile(b)
  T.ok(#x > 0 and x == y, what .. ": the saved files differ (" .. #x .. " vs " .. #y .. " bytes)")
end

local function grow_case(d, opts, what, backend)
  local dir = T.tmpdir()
  local o = T.merge(opts, { progress = false, backend = backend })
  local all = rf.train(d, T.merge(o, { trees = 12 }))
  local f = rf.train(d, T.merge(o, { trees = 5 }))
  T.eq(f:grow(4, d, { progress = false, backend = backend }), f, "grow returns f")
  f:grow(3, d, { progress = false, backend = backend })
  T.eq(f.trees, 12)
  all:save(dir .. "/grow-all.gwbf")
  f:save(dir .. "/grow-grown.gwbf")
  same_file(dir .. "/grow-all.gwbf", dir .. "/grow-grown.gwbf", what)
  if all.oob == all.oob then T.eq(f.oob, all.oob, what .. " oob") end
  local a, b = all:importance(), f:importance()
  for k, v in pairs(a) do T.eq(b[k], v, what .. " importance " .. tostring(k)) end
end

T.test("grow: 5 + 4 + 3 trees = 12 at once, byte for byte (CPU)", function()
  local iris = data.load("datasets/iris.csv", { target = "species" })
  grow_case(iris, { seed = 3, bins = 32 }, "iris", "cpu")
  grow_case(iris, { seed = 5, class_weight = "balanced", max_features = 0.5, depth = 4 }, "iris balanced", "cpu")
  local dia = data.load("datasets/diabetes.csv", { target = "progression" })
  grow_case(dia, { seed = 2, min_leaf = 3 }, "diabetes", "cpu")
end)

T.test("grow on the GPU backend: the same forest as one GPU fit", function()
  T.need_gpu()
  local digits = data.load("datasets/digits.csv", { target = "digit" })
  grow_case(digits, { seed = 4 }, "digits gpu", "gpu")
end)

T.test("a forest of n trees is the first n trees of a larger one (same seed)", function()
  local d = data.load("datasets/digits.csv", { target = "digit" })
  local small = rf.train(d, { trees = 4, seed = 9, progress = false, backend = "cpu" })
  local big = rf.train(d, { trees = 9, seed = 9, progress = false, backend = "cpu" })
  for t = 1, 4 do
    local a, b = small:tree(t), big:tree(t)
    T.eq(gwb.pretty(a), gwb.pretty(b), "tree " .. t)
  end
end)

T.test("grow: bad input", function()
  local d = data.load("datasets/iris.csv", { target = "species" })
  local f = rf.train(d, { trees = 3, progress = false })
  T.raises(function() f:grow(0, d) end, "n must be")
  local train = d:split(0.5, { seed = 1 })
  T.raises(function() f:grow(2, train) end, "training data")
  T.raises(function() f:grow(2, d, { trees = 3 }) end, "unknown option 'trees'")
  T.eq(f.trees, 3, "f unchanged after an error")
end)
