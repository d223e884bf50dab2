-- test_rf_hybrid.lua - rf.train(backend = "hybrid"): one queue of tree indices shared by two
-- sides grows the forest either side grows alone, tree for tree and node for node. Without a
-- GPU the scheduler is tested with two CPU pools (hybrid_front = "cpu"); the GPU tests compare
-- the real hybrid with backend = "gpu".

local function same_trees(a, b)
  T.eq(b.trees, a.trees, "tree count")
  for t = 1, a.trees do
    local ta, tb = a:tree(t), b:tree(t)
    T.eq(#tb, #ta, "tree " .. t .. " node count")
    for i = 1, #ta do
      local x, y = ta[i], tb[i]
      local where = string.format("tree %d node %d", t, i)
      T.eq(y.feature, x.feature, where .. " feature")
      T.eq(y.bin, x.bin, where .. " threshold bin")
      T.eq(y.threshold, x.threshold, where .. " threshold")
      T.eq(y.left, x.left, where .. " left")
      T.eq(y.count, x.count, where .. " count")
    end
  end
end

local opts = T.merge

T.test("hybrid with two CPU pools grows the CPU forest tree for tree", function()
  local iris = data.load("datasets/iris.csv")
  local digits = data.load("datasets/digits.csv")
  local diabetes = data.load("datasets/diabetes.csv")
  for _, c in ipairs {
    { iris, { trees = 9, seed = 3 } },
    { digits, { trees = 13, depth = 7, seed = 2, threads = 3 } },
    { digits, { trees = 5, depth = 6, seed = 5, threads = 2, max_features = "all" } },
    { diabetes, { trees = 7, depth = 6, seed = 4, threads = 4 } },
  } do
    local d, o = c[1], c[2]
    local a = rf.train(d, opts(o, { backend = "cpu" }))
    local h = rf.train(d, opts(o, { backend = "hybrid", hybrid_front = "cpu" }))
    same_trees(a, h)
    T.eq(h.oob, a.oob, "same OOB score")
    local hy = h.timing.hybrid
    T.ok(hy, "f.timing.hybrid is there")
    T.eq(hy.gpu_trees + hy.cpu_trees, o.trees, "every tree was grown by one side")
    T.ok(hy.gpu_busy_ms > 0 and hy.cpu_busy_ms >= 0)
    T.ok(tostring(h):find("hybrid", 1, true), "the summary says who grew what")
  end
end)

T.test("hybrid: both sides grow trees when they are equally fast", function()
  local d = data.synth { rows = 4000, features = 16, classes = 2, seed = 9 }
  local saw_both = false
  for seed = 1, 4 do
    local h = rf.train(d, { trees = 24, depth = 8, seed = seed, threads = 4, backend = "hybrid", hybrid_front = "cpu" })
    local a = rf.train(d, { trees = 24, depth = 8, seed = seed, threads = 4, backend = "cpu" })
    same_trees(a, h)
    if h.timing.hybrid.gpu_trees > 0 and h.timing.hybrid.cpu_trees > 0 then saw_both = true end
  end
  T.ok(saw_both, "in four fits, both sides grew part of a forest")
end)

local function same_oob(a, b, what)
  T.eq(b.oob, a.oob, what .. ": same OOB score")
  local pa, pb = a:oob_predict(), b:oob_predict()
  T.eq(#pb, #pa, what .. ": OOB predictions per row")
  for i = 1, #pa do
    if pa[i] ~= pb[i] and not (pa[i] ~= pa[i] and pb[i] ~= pb[i]) then
      T.eq(pb[i], pa[i], what .. ": OOB prediction of row " .. i)
    end
  end
end

T.test("hybrid: any split of the work (skewed plans, takeovers) gives the CPU forest and its OOB", function()
  local d = data.synth { rows = 3000, features = 12, informative = 6, classes = 3, seed = 6 }
  local r = data.synth { kind = "regression", rows = 2000, features = 10, seed = 7 }
  for _, c in ipairs {
    { d, { trees = 20, depth = 7, seed = 2, threads = 4 } },
    { r, { trees = 16, depth = 6, seed = 3, threads = 3 } },
  } do
    local dd, o = c[1], c[2]
    local a = rf.train(dd, opts(o, { backend = "cpu" }))
    for _, ratio in ipairs { 0.05, 1, 50 } do
      local h = rf.train(dd, opts(o, { backend = "hybrid", hybrid_front = "cpu", hybrid_ratio = ratio }))
      same_trees(a, h)
      same_oob(a, h, "hybrid_ratio " .. ratio)
      local hy = h.timing.hybrid
      T.eq(hy.gpu_trees + hy.cpu_trees, o.trees)
      T.eq(hy.ratio_prior, ratio, "the prior is the one asked for")
    end
  end
end)

T.test("hybrid: a CPU side the plan leaves no tree does not start", function()
  local d = data.load("datasets/digits.csv")
  local o = { trees = 10, depth = 6, seed = 4, threads = 4 }
  local a = rf.train(d, opts(o, { backend = "cpu" }))
  local h = rf.train(d, opts(o, { backend = "hybrid", hybrid_front = "cpu", hybrid_ratio = 1e6 }))
  same_trees(a, h)
  same_oob(a, h, "front alone")
  local hy = h.timing.hybrid
  T.eq(hy.cpu_started, false, "the back never started")
  T.eq(hy.cpu_trees, 0)
  T.eq(hy.cpu_busy_ms, 0)
  T.ok(tostring(h):find("not started", 1, true), "the summary says the CPU side did not start")
  -- and a plan that gives the back a share starts it
  local h2 = rf.train(d, opts(o, { backend = "hybrid", hybrid_front = "cpu", hybrid_ratio = 1 }))
  T.eq(h2.timing.hybrid.cpu_started, true)
  same_trees(a, h2)
  -- a share that ends the fit less than 5 % sooner does not pay for the CPU side: with 2
  -- workers and a front 38 times faster per tree the plan gives the back 4 of 100 trees (4 %)
  local o2 = { trees = 100, depth = 4, seed = 4, threads = 4, backend = "hybrid", hybrid_front = "cpu" }
  T.eq(rf.train(d, opts(o2, { hybrid_ratio = 38 })).timing.hybrid.cpu_started, false)
  T.eq(rf.train(d, opts(o2, { hybrid_ratio = 20 })).timing.hybrid.cpu_started, true)
  T.raises(function() rf.train(d, opts(o, { backend = "hybrid", hybrid_ratio = -1 })) end,
    "hybrid_ratio must be a number > 0")
end)

T.test("hybrid without a GPU trains on the CPU and says so; require_gpu makes it an error", function()
  if gpu.available() then T.skip("a GPU is present: the fallback is not taken") end
  local d = data.load("datasets/iris.csv")
  local f = rf.train(d, { trees = 4, backend = "hybrid" })
  T.eq(f.backend, "cpu")
  T.ok(f.backend_why:find("hybrid asked for, but no GPU", 1, true), f.backend_why)
  local a = rf.train(d, { trees = 4, backend = "cpu" })
  same_trees(a, f)
  T.raises(function() rf.train(d, { trees = 4, backend = "hybrid", require_gpu = true }) end,
    "require_gpu = true, but there is no GPU")
  T.raises(function() rf.train(d, { trees = 4, backend = "hybrid", hybrid_front = "tpu" }) end,
    "hybrid_front must be")
end)

T.test("hybrid: Ctrl-C stops both sides and leaves no forest", function()
  local d = data.synth { rows = 20000, features = 16, classes = 2, seed = 1 }
  local t0 = os.time()
  os.execute("(sleep 0.4; kill -INT $PPID) >/dev/null 2>&1 &")
  local ok, err = pcall(rf.train, d, { trees = 100000, depth = 10, threads = 2, backend = "hybrid", hybrid_front = "cpu" })
  T.ok(not ok, "interrupted")
  T.ok(tostring(err):find("interrupted", 1, true) and tostring(err):find("hybrid", 1, true), tostring(err))
  T.ok(os.time() - t0 <= 30, "stopped promptly")
  -- the process still trains
  local f = rf.train(data.load("datasets/iris.csv"), { trees = 3, backend = "hybrid", hybrid_front = "cpu" })
  T.eq(f.trees, 3)
end)

T.test("gpu hybrid grows the GPU forest tree for tree (iris, digits, synthetic)", function()
  T.need_gpu()
  local light = os.getenv("CUDA_INJECTION64_PATH") ~= nil
  local cases = {
    { data.load("datasets/iris.csv"), { trees = 9, seed = 3 } },
    { data.load("datasets/digits.csv"), { trees = 12, depth = 8, seed = 2 } },
  }
  if not light then
    cases[#cases + 1] = { data.synth { rows = 200000, features = 32, classes = 2, seed = 4 }, { trees = 40, depth = 10, seed = 1 } }
  end
  for _, c in ipairs(cases) do
    local d, o = c[1], c[2]
    local g = rf.train(d, opts(o, { backend = "gpu" }))
    local h = rf.train(d, opts(o, { backend = "hybrid" }))
    T.eq(h.backend, h.timing.hybrid.gpu_trees > 0 and "gpu" or "cpu")
    same_trees(g, h)
    same_oob(g, h, "gpu hybrid")
    T.eq(h.timing.hybrid.gpu_trees + h.timing.hybrid.cpu_trees, o.trees)
    -- a plan that gives the CPU a share (a CPU tree as cheap as a GPU tree): the same forest,
    -- the OOB still the GPU's over every tree
    local h1 = rf.train(d, opts(o, { backend = "hybrid", hybrid_ratio = 1 }))
    same_trees(g, h1)
    same_oob(g, h1, "gpu hybrid, CPU share")
    T.eq(h1.timing.hybrid.cpu_started, true)
    -- a plan that leaves the CPU nothing: it never builds its host codes
    local h0 = rf.train(d, opts(o, { backend = "hybrid", hybrid_ratio = 1e6 }))
    same_trees(g, h0)
    same_oob(g, h0, "gpu hybrid, GPU alone")
    T.eq(h0.timing.hybrid.cpu_started, false)
    T.eq(h0.timing.hybrid.gpu_trees, o.trees)
  end
end)

T.test("gpu: auto chooses hybrid where the rule says the CPU's share pays, and says why", function()
  T.need_gpu()
  if os.getenv("CUDA_INJECTION64_PATH") ~= nil then T.skip("too slow under compute-sanitizer") end
  local d = data.synth { rows = 100000, features = 32, classes = 2, seed = 8 }
  -- the recorded ratio (a CPU tree costs 400 GPU trees here): 16 threads add < 5 %, so no
  local f0 = rf.train(d, { trees = 300, depth = 10, seed = 1 })
  T.eq(f0.backend, "gpu")
  T.ok(not f0.backend_why:find("hybrid", 1, true), f0.backend_why)
  T.eq(f0.timing.hybrid, nil)
  -- a ratio measured elsewhere (hybrid_ratio = 20): the CPU's share pays
  local o = { trees = 300, depth = 10, seed = 1, hybrid_ratio = 20 }
  local f = rf.train(d, o)
  T.ok(f.backend_why:find("auto: hybrid", 1, true), f.backend_why)
  T.ok(f.backend_why:find("CPU threads can grow", 1, true), f.backend_why)
  local hy = f.timing.hybrid
  T.ok(hy, "f.timing.hybrid is there")
  T.eq(hy.ratio_prior, 20)
  local g = rf.train(d, opts(o, { backend = "gpu" }))
  T.eq(f.nodes, g.nodes, "same node count")
  for _, t in ipairs { 1, 2, 150, 250, 299, 300 } do
    local ta, tb = g:tree(t), f:tree(t)
    T.eq(#tb, #ta, "tree " .. t)
    for k = 1, #ta do
      T.eq(tb[k].feature, ta[k].feature, "tree " .. t .. " node " .. k)
      T.eq(tb[k].bin, ta[k].bin, "tree " .. t .. " node " .. k)
    end
  end
  T.eq(f.oob, g.oob, "same OOB")
  -- small work stays on the CPU
  T.ok(not rf.train(data.load("datasets/iris.csv"), { trees = 10, hybrid_ratio = 20 }).backend_why:find("hybrid", 1, true))
end)
