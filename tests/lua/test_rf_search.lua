-- test_rf_search.lua - rf.search: every setting's CV value equals a separate rf.cv call (the
-- trees grid shares forests), the best is refitted, random strategy and budget, run-log
-- records, bad grids; and rf.cv's metrics (mean +- std of each, metric = chooses the headline).
local function iris() return data.load("datasets/iris.csv", { target = "species" }) end

T.test("rf.search: each setting equals rf.cv with it; best refitted", function()
  local d = iris()
  local tag = string.format("search-test-%d-%d", os.time(), math.random(1, 1e9))
  local s = rf.search(d, { trees = { 6, 12 }, depth = { 3, 0 }, bins = 32 },
    { cv = 4, metric = "f1_macro", progress = false, tag = tag })
  T.eq(#s.settings, 4)
  T.eq(s.ran, 4)
  local best, bi = -1, nil
  for i, st in ipairs(s.settings) do
    local o = { folds = 4, metric = "f1_macro", progress = false, bins = 32, trees = st.params.trees,
      depth = st.params.depth == 0 and 64 or st.params.depth }
    local cv = rf.cv(d, o)
    T.eq(st.mean, cv.mean, "setting " .. i .. " mean")
    T.eq(st.std, cv.std, "setting " .. i .. " std")
    T.eq(st.metrics.accuracy.mean, cv.metrics.accuracy.mean, "setting " .. i .. " accuracy")
    if st.mean > best then best, bi = st.mean, i end
  end
  T.eq(s.best_index, bi)
  T.eq(s.best_mean, best)
  T.eq(s.forest.trees, s.settings[bi].params.trees)
  T.ok(s.summary:find("best f1_macro", 1, true), s.summary)
  local recs = runs { tag = tag, kind = "rf.search" }
  T.eq(#recs, 4, "one run-log record per setting")
end)

T.test("rf.search: depths share one forest per fold (cut), values equal rf.cv", function()
  local d = data.load("datasets/diabetes.csv", { target = "progression" })
  local grid = { trees = { 3, 6 }, depth = { 2, 5, 0 }, max_features = { 1.0, 0.5 } }
  local s = rf.search(d, grid, { cv = 3, metric = "rmse", progress = false, refit = false })
  T.eq(#s.settings, 12)
  T.eq(s.ran, 12)
  -- the grid's order: keys sorted (depth, max_features, trees), the last fastest
  local i = 0
  for _, dv in ipairs(grid.depth) do
    for _, mf in ipairs(grid.max_features) do
      for _, tv in ipairs(grid.trees) do
        i = i + 1
        local st = s.settings[i]
        T.eq(st.params.depth, dv, "setting " .. i .. " depth")
        T.eq(st.params.max_features, mf, "setting " .. i .. " max_features")
        T.eq(st.params.trees, tv, "setting " .. i .. " trees")
        local cv = rf.cv(d, { folds = 3, metric = "rmse", progress = false, trees = tv,
          depth = dv == 0 and 64 or dv, max_features = mf })
        T.eq(st.mean, cv.mean, "setting " .. i .. " rmse")
        T.eq(st.metrics.r2.mean, cv.metrics.r2.mean, "setting " .. i .. " r2")
      end
    end
  end
  T.ok(s.settings[1].mean ~= s.settings[5].mean, "depth 2 and 5 differ")
  -- a random sample of a depth grid: the settings that ran equal rf.cv too
  local r = rf.search(d, grid, { cv = 3, metric = "rmse", strategy = "random", n = 4, seed = 3,
    progress = false, refit = false })
  T.eq(r.ran, 4)
  for j, st in ipairs(r.settings) do
    T.eq(st.params.depth, s.settings[j].params.depth)
    if st.ran then
      local cv = rf.cv(d, { folds = 3, metric = "rmse", progress = false, seed = 3,
        trees = st.params.trees, depth = st.params.depth == 0 and 64 or st.params.depth,
        max_features = st.params.max_features })
      T.eq(st.mean, cv.mean, "random setting " .. j)
    end
  end
  T.raises(function() rf.search(d, { depth = { 3, 99 } }, { progress = false }) end,
    "grid depth[2] must be 0 (no limit) or a depth from 1 to 64")
end)

T.test("rf.search: random strategy, budget, bad grids", function()
  local d = iris()
  local s = rf.search(d, { trees = { 4, 8 }, min_leaf = { 1, 2, 4 } },
    { cv = 3, strategy = "random", n = 3, seed = 2, progress = false, refit = false })
  local n = 0
  for _, st in ipairs(s.settings) do if st.ran then n = n + 1 end end
  T.eq(n, 3)
  T.eq(s.forest, nil)
  local b = rf.search(d, { trees = { 4 }, min_leaf = { 1, 2, 4 } }, { cv = 3, progress = false, budget_s = 1e-9 })
  T.ok(b.budget_reached and b.ran == 1, "the budget stops after the first setting")
  T.ok(b.note:find("1 of 3", 1, true), b.note)
  T.ok(b.summary:find("budget", 1, true))
  T.raises(function() rf.search(d, { dpeth = { 3 } }) end, "did you mean 'depth'")
  T.raises(function() rf.search(d, { trees = { 5 } }, { metrc = "x" }) end, "did you mean 'metric'")
  T.raises(function() rf.search(d, { trees = { 5 } }, { metric = "f1_mac" }) end, "did you mean \"f1_macro\"")
  T.raises(function() rf.search(d, { trees = { 5 } }, { metric = "rmse" }) end, "is not for classification")
  T.raises(function() rf.search(d, { depth = { -1 } }, { progress = false }) end, "depth")
  T.raises(function() rf.search(d, { trees = {} }) end, "no values")
end)

T.test("rf.cv: every metric as mean +- std; metric chooses the headline", function()
  local d = iris()
  local a = rf.cv(d, { folds = 5, trees = 10, progress = false })
  local b = rf.cv(d, { folds = 5, trees = 10, progress = false, metric = "f1_macro" })
  T.eq(a.metric, "accuracy")
  T.eq(b.metric, "f1_macro")
  T.eq(b.mean, b.metrics.f1_macro.mean)
  T.eq(a.mean, b.metrics.accuracy.mean)
  T.ok(b.summary:find("5-fold f1_macro", 1, true), b.summary)
  T.ok(b.report:find("* f1_macro", 1, true), b.report)
  for _, m in ipairs { "balanced_accuracy", "f1_weighted", "roc_auc", "log_loss" } do
    T.ok(b.metrics[m] and b.metrics[m].mean == b.metrics[m].mean, m)
  end
  T.raises(function() rf.cv(d, { metric = "f1_mcro" }) end, "did you mean \"f1_macro\"")
  local r = rf.cv(data.load("datasets/diabetes.csv", { target = "progression" }),
    { folds = 3, trees = 5, metric = "rmse", progress = false })
  T.ok(r.mean > 0 and r.metrics.r2.mean < 1)
  T.ok(r.summary:find("rmse", 1, true))
end)

T.test("rf.search on the gpu: depths and tree counts cut from one forest equal rf.cv", function()
  T.need_gpu()
  local d = data.load("datasets/digits.csv")
  local s = rf.search(d, { trees = { 4, 8 }, depth = { 3, 6, 0 } },
    { cv = 3, metric = "f1_macro", progress = false, refit = false, backend = "gpu" })
  T.eq(s.ran, 6)
  for i, st in ipairs(s.settings) do
    local cv = rf.cv(d, { folds = 3, metric = "f1_macro", progress = false, backend = "gpu",
      trees = st.params.trees, depth = st.params.depth == 0 and 64 or st.params.depth })
    T.eq(st.mean, cv.mean, "setting " .. i)
    -- the same forests; the GPU's votes are float sums whose order varies (atomic votes), so
    -- the probabilities agree to float rounding, not bit for bit
    T.near(st.metrics.log_loss.mean, cv.metrics.log_loss.mean, 1e-6, "setting " .. i .. " log_loss")
  end
end)

T.test("rf.search on the gpu judges each fold on the device: the CPU search's values, and the host path's", function()
  T.need_gpu()
  local metric_names = { "accuracy", "balanced_accuracy", "f1_macro", "f1_weighted", "roc_auc", "log_loss" }
  local d = data.load("datasets/digits.csv")
  local grid = { trees = { 3, 7 }, depth = { 2, 5, 0 } }
  local function run(backend, judge)
    local old = gwb.switches { ["rf.judge_gpu"] = judge }
    local ok, s = pcall(rf.search, d, grid, { cv = 3, metric = "f1_macro", progress = false,
      refit = false, backend = backend })
    gwb.switches(old)
    assert(ok, s)
    return s
  end
  local dev, host, cpu = run("gpu", true), run("gpu", false), run("cpu", true)
  T.eq(dev.ran, 6)
  for i, st in ipairs(dev.settings) do
    for _, m in ipairs(metric_names) do
      -- the GPU forest is the CPU forest node for node, and the device sums the trees in
      -- double in index order as forest.c does: the same numbers, bit for bit
      T.eq(st.metrics[m].mean, cpu.settings[i].metrics[m].mean, "setting " .. i .. " " .. m .. " (cpu)")
    end
    -- the host path's GPU prediction sums votes in float: labels equal, probabilities to rounding
    T.eq(st.metrics.accuracy.mean, host.settings[i].metrics.accuracy.mean, "setting " .. i .. " (host)")
    T.near(st.metrics.log_loss.mean, host.settings[i].metrics.log_loss.mean, 1e-6, "setting " .. i .. " log_loss (host)")
  end
  -- regression: the device path against the host path of the same GPU forests
  local r = data.load("datasets/diabetes.csv")
  local rg = { trees = { 4, 9 }, depth = { 3, 0 } }
  local function runr(judge)
    local old = gwb.switches { ["rf.judge_gpu"] = judge }
    local ok, s = pcall(rf.search, r, rg, { cv = 4, metric = "rmse", progress = false, refit = false, backend = "gpu" })
    gwb.switches(old)
    assert(ok, s)
    return s
  end
  local a, b = runr(true), runr(false)
  for i, st in ipairs(a.settings) do
    for _, m in ipairs { "rmse", "mae", "r2" } do
      T.near(st.metrics[m].mean, b.settings[i].metrics[m].mean, 1e-5 * math.max(1, math.abs(st.metrics[m].mean)),
        "setting " .. i .. " " .. m)
    end
  end
end)
