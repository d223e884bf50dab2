-- test_rf_gpu.lua - rf.train(backend = "gpu") against the CPU backend through the Lua API:
-- the same trees node for node on small forests, accuracy and R^2 within 0.01 on iris, digits,
-- a synthetic 100k x 32 set and diabetes, large predictions on the GPU, OOB on the device
-- row by row, bad options.
-- (tests/unit/test_rf_gpu.c checks the same at the C level, plus NaN, batches and votes.)
-- Under compute-sanitizer (it sets CUDA_INJECTION64_PATH) the sizes shrink, so that the
-- instrumented run of every GPU test stays within scripts/gpu-check's time limit.
local light = os.getenv("CUDA_INJECTION64_PATH") ~= nil

local function both(d, opts)
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.backend = "cpu"
  local a = rf.train(d, o)
  o.backend = "gpu"
  local b = rf.train(d, o)
  return a, b
end

local function same_trees(a, b)
  T.eq(b.backend, "gpu")
  for t = 1, a.trees do
    local ta, tb = a:tree(t), b:tree(t)
    T.eq(#tb, #ta, "tree " .. t .. " node count")
    for i = 1, #ta do
      local x, y = ta[i], tb[i]
      local where = string.format("tree %d node %d", t, i)
      T.eq(y.feature, x.feature, where .. " feature")
      T.eq(y.bin, x.bin, where .. " threshold bin")
      T.eq(y.threshold, x.threshold, where .. " threshold")
      T.eq(y.nan_left, x.nan_left, where .. " nan_left")
      T.eq(y.left, x.left, where .. " left")
      T.eq(y.count, x.count, where .. " count")
      T.eq(y.weight, x.weight, where .. " weight")
    end
  end
end

T.test("gpu forest equals the CPU forest node for node (iris, digits)", function()
  T.need_gpu()
  local iris = data.load("datasets/iris.csv")
  same_trees(both(iris, {trees = 5, seed = 3}))
  same_trees(both(iris, {trees = 3, criterion = "entropy", max_features = "all", bins = 16}))
  local digits = data.load("datasets/digits.csv")
  same_trees(both(digits, {trees = 3, depth = 10, seed = 2}))
end)

local function parity(d, opts, tol, what)
  local train, test = d:split(0.8, {seed = 1})
  local a, b = both(train, opts)
  local sa, sb = a:score(test), b:score(test)
  T.ok(math.abs(sa - sb) <= tol,
    string.format("%s: cpu %.4f gpu %.4f differ by more than %g", what, sa, sb, tol))
  T.ok(b.timing.kernel_ms > 0, what .. ": kernel time recorded")
  return a, b
end

T.test("gpu accuracy within 0.01 of the CPU: iris, digits, synthetic 100k x 32", function()
  T.need_gpu()
  parity(data.load("datasets/iris.csv"), {trees = light and 20 or 100}, 0.01, "iris")
  parity(data.load("datasets/digits.csv"), {trees = light and 10 or 100}, 0.01, "digits")
  local s = data.synth{kind = "classification", rows = light and 20000 or 100000, features = 32,
                       informative = 16, classes = 2, seed = 1}
  parity(s, {trees = light and 5 or 50, depth = 10}, light and 0.02 or 0.01,
    light and "synthetic 20k x 32" or "synthetic 100k x 32")
end)

T.test("gpu regression R2 within 0.01 of the CPU (diabetes)", function()
  T.need_gpu()
  local a, b = parity(data.load("datasets/diabetes.csv"), {trees = light and 30 or 100}, 0.01,
    "diabetes R2")
  T.ok(math.abs(a.oob - b.oob) <= 0.01, "oob R2 close")
end)

T.test("gpu forest: subtract = true and false give the same trees (max_features = all)", function()
  T.need_gpu()
  local function pair(d, opts)
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.backend, o.subtract = "gpu", false
    local a = rf.train(d, o)
    o.subtract = true
    local b = rf.train(d, o)
    T.eq(a.params.subtract, false)
    T.eq(b.params.subtract, true)
    return a, b
  end
  local digits = data.load("datasets/digits.csv")
  -- integer histograms: the same trees, and the same as the CPU's
  local a, b = pair(digits, {trees = 3, depth = 8, max_features = "all", seed = 4})
  same_trees(a, b)
  same_trees(rf.train(digits, {trees = 3, depth = 8, max_features = "all", seed = 4,
                               backend = "cpu"}), b)
  T.ok(b.timing.subtract_derived > 0, "digits derives")
  T.eq(a.timing.subtract_derived, 0)
  -- regression (all features by default): double sums, the same predictions to rounding;
  -- without bootstrap every node holds all its rows (the root 442 >= 2 x min rows 145)
  local diab = data.load("datasets/diabetes.csv")
  a, b = pair(diab, {trees = light and 10 or 40, bootstrap = false})
  T.ok(b.timing.subtract_derived > 0, "diabetes derives")
  T.ok(math.abs(a:score(diab) - b:score(diab)) <= 1e-3, "diabetes R2 with and without")
  T.raises(function() rf.train(diab, {backend = "gpu", subtract = "yes"}) end, "subtract")
end)

T.test("gpu OOB (on the device) equals the CPU OOB of the same trees, row by row", function()
  -- classification with integer counts: the GPU grows the CPU's trees node for node
  T.need_gpu()
  local cases = {
    {data.load("datasets/iris.csv"), {trees = 20, seed = 2}},
    {data.load("datasets/digits.csv", {target = "digit"}), {trees = light and 5 or 20, depth = 10}},
    {data.synth{kind = "classification", rows = light and 5000 or 20000, features = 20,
                informative = 4, classes = 3, seed = 4}, {trees = 12, depth = 10}},
  }
  -- (regression forests agree with the CPU's only up to rounding, so their OOB is checked
  -- against the CPU's OOB of the same GPU forest in tests/unit/test_rf_gpu.c, test_gpu_oob)
  for _, c in ipairs(cases) do
    local d, o = c[1], c[2]
    local a, b = both(d, o)
    same_trees(a, b)
    T.eq(b.oob, a.oob, "oob score")
    T.eq(b.oob_rows, a.oob_rows)
    local pa, pb = a:oob_predict(), b:oob_predict()
    for i = 1, #pa do
      if pa[i] ~= pa[i] then T.ok(pb[i] ~= pb[i], "row " .. i .. " has no OOB tree")
      else T.eq(pb[i], pa[i], "row " .. i .. " OOB prediction") end
    end
    T.ok(tostring(b):find("on the gpu", 1, true), tostring(b))
    local t = b.timing
    T.ok(t.kernel_ms > 0 and t.transfer_ms > 0 and t.oob_ms > 0, "GPU time split")
    -- copies on the copy stream overlap kernels (much more under a sanitizer): the parts
    -- add up to the wall time with the overlap taken out once
    T.ok(t.host_ms >= 0 and t.overlap_ms >= 0 and (t.host_ms == 0 or t.overlap_ms == 0), "host/overlap")
    T.near(t.kernel_ms + t.transfer_ms + t.host_ms - t.overlap_ms, t.total_ms, 1e-6)
    o.backend, o.oob = "gpu", false
    T.eq(rf.train(d, o).oob, nil)
  end
end)

T.test("GPU-resident Dataset: d:to, d.device, used in place, freed by to(cpu) and close", function()
  T.need_gpu()
  local d = data.synth{kind = "classification", rows = light and 4000 or 30000, features = 12,
                       informative = 4, classes = 3, seed = 6}
  local o = {trees = 8, depth = 8, seed = 3, backend = "gpu"}
  local host = rf.train(d, o)
  local function held()
    local e = gpu.mem().by_purpose["data.X"]
    return e and e.bytes or 0
  end
  local before = held()
  T.eq(d.device, "cpu")
  T.eq(d:to("gpu"), d)
  T.eq(d.device, "gpu")
  T.eq(held() - before, d.rows * d.features * 4)
  T.eq(d:to("gpu").device, "gpu")                -- twice: nothing more
  T.eq(held() - before, d.rows * d.features * 4)
  local dev = rf.train(d, o)                      -- trained from the device copy in place
  same_trees(host, dev)
  T.eq(dev.oob, host.oob)
  -- host reads still work (the host copy stays)
  T.eq(#d:column(1), d.rows)
  -- predictions: the CPU's labels, a Predictions object that reads like the array
  local ref = rf.train(d, {trees = 8, depth = 8, seed = 3, backend = "cpu"})
  local want = ref:predict(d:select{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {codes = true})
  local p = ref:predict(d, {codes = true})
  T.eq(type(p), "userdata")
  T.eq(#p, d.rows)
  T.eq(p.device, "gpu")
  T.ok(tostring(p):find("not read yet", 1, true), tostring(p))
  local bad = 0
  for i, v in ipairs(p) do if v ~= want[i] then bad = bad + 1 end end
  T.ok(bad <= d.rows // 1000, "labels differ from the CPU's on " .. bad .. " rows (near ties)")
  T.ok(tostring(p):find("cached", 1, true), tostring(p))
  T.eq(p[0], nil)
  T.eq(p[d.rows + 1], nil)
  local t = p:totable()
  T.eq(type(t), "table")
  T.eq(#t, d.rows)
  T.eq(t[1], p[1])
  T.ok(p.timing.kernel_ms > 0 and p.timing.total_ms >= p.timing.kernel_ms)
  local names = ref:predict(d)
  T.eq(names[1], ref.labels[p[1]])
  local pr = ref:predict_proba(d)
  T.eq(#pr, d.rows)
  T.near(pr[1][1] + pr[1][2] + pr[1][3], 1, 1e-5)
  T.near(ref:score(d), ref:score(d:select{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}), 2e-3)
  p:close()
  T.raises(function() return p[1] end, "closed")
  -- back to the host: the device memory goes back
  T.eq(d:to("cpu").device, "cpu")
  T.eq(held(), before)
  d:to("gpu")
  d:close()
  collectgarbage()
  T.eq(held(), before)
  T.raises(function() d:to("gpu") end, "closed")
  T.raises(function() data.load("datasets/iris.csv"):to("tpu") end, "\"gpu\" or \"cpu\"")
end)

T.test("d:transpose on the GPU: copies through pinned staging, rates reported", function()
  T.need_gpu()
  local d = data.synth{kind = "classification", rows = light and 2000 or 100000, features = 16,
                       seed = 2}
  local t = d:transpose{backend = "gpu", reps = 2}
  T.eq(t.verified, true)
  T.ok(t.h2d_gbps > 0 and t.d2h_gbps > 0, "copy rates")
  T.near(t.transfer_ms, t.h2d_ms + t.d2h_ms, 1e-9)
end)

T.test("gpu forest: bad block size is refused with the parameter named", function()
  T.need_gpu()
  local d = data.load("datasets/iris.csv")
  T.raises(function() rf.train(d, {backend = "gpu", block = 100}) end, "block")
end)
