-- scripts/bench/rf_gpu.lua - the GPU random forest beside scikit-learn in the same run.
--   fit 800,000 x 256 (of a 1,000,000-row synthetic set, 80/20 split), 100 trees, depth 10,
--     64 bins, sqrt features: end to end (quantization and transfers included), per block size;
--   predict the 200,000 test rows with that forest: kernel time (block votes and plain atomics);
--   kernel time per phase beside the memory floor of the bytes each phase must move;
--   1,000 trees of depth 20 on 1,000,000 x 64 (must not run out of memory);
--   the CPU/GPU crossover that backend = "auto" uses.
--   sibling histogram subtraction on and off where it applies (same trees, time saved);
-- GWB_BENCH_QUICK=1: smaller sizes (a first look). GWB_BENCH_PART=fit|subtract|deep|hybrid|cross runs one
-- part (default: all); peerdata only writes the fit's rows for scikit-learn (GWB_BENCH_PEER_DIR,
-- see the fit part). Without a GPU it says so and stops.
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
local part = os.getenv("GWB_BENCH_PART") or "all"
local function want(p) return part == "all" or part == p end
local tmp = os.getenv("TMPDIR") or "/tmp"
local gwb_bin = os.getenv("GWB") or "build/gwb"

print("== rf_gpu: random forests on the GPU" .. (quick and " (quick sizes)" or ""))
local ok, why = gpu.available()
if not ok and part ~= "peerdata" then
  print("rf_gpu: skipped, no GPU: " .. tostring(why))
  return
end
if ok then
  local info = gpu.info()
  print(string.format("device: %s, %d SMs, %.0f GiB", info.name, info.sms,
    info.memory_bytes / 2 ^ 30))
end

local function wall(fn)
  local r = gwb.bench(fn, {runs = 1, warmup = 0, log = false})
  return r.median_ms
end

-- kernel totals by name since the last gpu.reset()
local function kernels()
  local k = {}
  for _, r in ipairs(gpu.kernels()) do
    k[r.name] = {ms = r.total_ms, bytes = r.gbps * r.total_ms * 1e6, n = r.launches}
  end
  return k
end

local function sum(k, names)
  local ms, bytes = 0, 0
  for _, n in ipairs(names) do
    if k[n] then ms = ms + k[n].ms; bytes = bytes + k[n].bytes end
  end
  return ms, bytes
end

if want("fit") or part == "peerdata" then
-- GWB_BENCH_PART=peerdata: only write the headline train/test rows to $GWB_BENCH_PEER_DIR, for
-- scikit-learn's full fit started early in the background (scripts/gpu-check); the fit part
-- then reads its result from $GWB_BENCH_PEER_OUT instead of running a budgeted fit itself.
local peak = 1
if part ~= "peerdata" then
  local bw = gpu.bandwidth{bytes = 512 * 2 ^ 20, reps = 3, log = false}
  peak = bw.d2d_gbps * 1e9
  print(string.format("memory ceiling (device-to-device copy, read + written): %.0f GB/s; " ..
    "host to device %.1f GB/s pageable, %.1f pinned", bw.d2d_gbps, bw.h2d_pageable_gbps,
    bw.h2d_pinned_gbps))
end

-- ---- the headline fit -------------------------------------------------------------------
local N, F = quick and 250000 or 1000000, quick and 64 or 256
local d = data.synth{kind = "classification", rows = N, features = F, informative = 24,
                     redundant = 8, classes = 2, seed = 1}
local train, test = d:split(0.8, {seed = 1})
d = nil
collectgarbage()
if part == "peerdata" then
  local dir = assert(os.getenv("GWB_BENCH_PEER_DIR"), "GWB_BENCH_PEER_DIR is not set")
  train:save(dir .. "/train.gwbd")
  test:save(dir .. "/test.gwbd")
  print(string.format("rf_gpu peer data: %d train and %d test rows x %d features in %s",
    train.rows, test.rows, train.features, dir))
  return
end
local opts = {trees = 100, depth = 10, bins = 64, max_features = "sqrt", seed = 1,
              backend = "gpu"}
-- warm-up: context, module load, first allocations (not timed)
rf.train(test, {trees = 2, depth = 4, backend = "gpu"})

print(string.format("\nfit %d x %d, %d trees, depth %d, %d bins, sqrt features (end to end: " ..
  "quantize + transfers + grow; OOB reported apart)", train.rows, train.features, opts.trees,
  opts.depth, opts.bins))
print(string.format("  %-6s %10s %10s %10s %10s %10s %8s", "block", "fit ms", "quant ms",
  "grow ms", "kernel ms", "xfer ms", "acc"))
local best, bestf, best_block, phases
for _, block in ipairs({128, 256, 512}) do
  opts.block = block
  gpu.reset()
  local f = rf.train(train, opts)
  local k = kernels()
  local t = f.timing
  local fit = t.total_ms - t.oob_ms
  local acc = f:score(test)
  print(string.format("  %-6d %10.1f %10.1f %10.1f %10.1f %10.1f %8.4f", block, fit,
    t.quantize_ms, t.grow_ms, t.kernel_ms, t.transfer_ms, acc))
  if not best or fit < best then best, bestf, best_block, phases = fit, f, block, k end
end
local f = bestf
print(string.format("  fastest block %d: fit %.1f ms (target <= 500 ms); oob %.1f ms on the " ..
  "GPU (oob %.4f)", best_block, best, f.timing.oob_ms, f.oob))

-- ---- predict ----------------------------------------------------------------------------
local function predict_kernel_ms()
  local runs = {}
  for i = 1, 5 do
    gpu.reset()
    f:predict(test)
    local k = kernels()
    runs[i] = sum(k, {"rf_pcode", "rf_predict", "rf_predict_atomic"})
  end
  table.sort(runs)
  return runs[3], kernels()
end
local pk, kp = predict_kernel_ms()
local pwall = wall(function() f:predict(test) end)
-- plain atomics, in a child process (the vote mode is an environment knob)
local mpath, tpath = tmp .. "/rf_gpu_bench.gwbf", tmp .. "/rf_gpu_test.gwbd"
f:save(mpath)
test:save(tpath)
local child = string.format([[GWB_RF_PREDICT_VOTE=atomic %s -e 'local f = rf.load("%s"); ]] ..
  [[local t = data.load("%s"); f:predict(t); local r = {} for i = 1, 5 do gpu.reset(); ]] ..
  [[f:predict(t); local s = 0 for _, k in ipairs(gpu.kernels()) do if k.name:find("^rf_p") ]] ..
  [[then s = s + k.total_ms end end r[i] = s end table.sort(r) print("ATOMIC", r[3])' 2>&1]],
  gwb_bin, mpath, tpath)
local h = io.popen(child)
local out = h:read("a")
h:close()
local atomic_ms = tonumber(out:match("ATOMIC%s+([%d%.e%-]+)"))
if pk == 0 then
  -- no predict kernel ran: "auto" kept a prediction this small on the CPU
  print(string.format("\npredict %d x %d with that forest: ran on the CPU (backend \"auto\" keeps " ..
    "predictions this small there; no kernel time to report), wall %.1f ms", test.rows, F, pwall))
else
  print(string.format("\npredict %d x %d with that forest: kernel %.3f ms (quantize rows %.3f + " ..
    "traverse %.3f; target <= 1 ms), wall %.1f ms; plain per-row atomics: %s ms", test.rows, F,
    pk, (kp.rf_pcode or {ms = 0}).ms, (kp.rf_predict or {ms = 0}).ms, pwall,
    atomic_ms and string.format("%.3f", atomic_ms) or ("? " .. out:sub(1, 200))))
end

-- ---- phases against the memory floor ----------------------------------------------------
print("\nkernel time per phase (fit above, predict above) beside the floor: the bytes the " ..
  "phase must move / ceiling")
print(string.format("  %-26s %10s %10s %10s %8s", "phase", "ms", "GB moved", "floor ms",
  "x floor"))
local groups = {
  {"quantize", {"rf_qsample", "rf_qkeys", "rf_qsort (cub)", "rf_qedges", "rf_quantize"}},
  {"bootstrap", {"rf_boot_count", "rf_boot_write", "rf_roots"}},
  {"node sums + decide", {"rf_nchunk", "rf_stats", "rf_decide"}},
  {"histogram + split search", {"rf_hist"}},
  {"partition", {"rf_pcount", "rf_sizes", "rf_pscatter", "rf_emit", "rf_tadv"}},
  {"records", {"rf_reorder"}},
}
for _, g in ipairs(groups) do
  local ms, bytes = sum(phases, g[2])
  local floor = bytes / peak * 1e3
  print(string.format("  %-26s %10.3f %10.3f %10.3f %8.1f", g[1], ms, bytes / 1e9, floor,
    floor > 0 and ms / floor or 0))
end
do
  local ms, bytes = sum(kp, {"rf_pcode", "rf_predict"})
  local floor = bytes / peak * 1e3
  print(string.format("  %-26s %10.3f %10.3f %10.3f %8.1f", "predict", ms, bytes / 1e9, floor,
    floor > 0 and ms / floor or 0))
end

-- ---- scikit-learn, same files, same run --------------------------------------------------
-- GWB_BENCH_PEER_BUDGET: seconds scikit-learn may spend (its fit time is then extrapolated);
-- a negative budget skips it (a device run that measures only our side)
local trpath = tmp .. "/rf_gpu_train.gwbd"
local budget = tonumber(os.getenv("GWB_BENCH_PEER_BUDGET") or "") or (quick and 10 or 30)
local pout = "skipped: GWB_BENCH_PEER_BUDGET < 0"
local peer_out = os.getenv("GWB_BENCH_PEER_OUT")
if peer_out then
  -- scikit-learn's full fit on the same rows, run before this script (no time budget)
  local fh = io.open(peer_out)
  pout = fh and fh:read("a") or ("no result file " .. peer_out)
  if fh then fh:close() end
  budget = 0
elseif budget >= 0 then
  train:save(trpath)
  local ph = io.popen(string.format("python3 scripts/bench/rf_gpu_peer.py %s %s %d %d %d 2>&1",
    trpath, tpath, opts.trees, opts.depth, budget))
  pout = ph:read("a")
  ph:close()
end
local peer = {}
for k, v in pout:gmatch("(%S+)=(%S+)") do peer[k] = v end
print("\nside by side (same train/test rows):")
if peer.accuracy then
  local sk_fit = tonumber(peer["fit_s_for_" .. opts.trees])
  print(string.format("  %-34s %12s %12s %10s", "", "fit s", "predict s", "accuracy"))
  print(string.format("  %-34s %12.3f %12.4f %10.4f", "gwb gpu (block " .. best_block .. ")",
    best / 1e3, pwall / 1e3, f:score(test)))
  print(string.format("  %-34s %12.3f %12.4f %10.4f", string.format("scikit-learn %s, %s cores%s",
    peer.sklearn, peer.cores, peer.extrapolated == "1" and ("*") or ""), sk_fit,
    tonumber(peer.predict_s), tonumber(peer.accuracy)))
  print(string.format("  fit speed-up x%.0f, accuracy difference %.4f (target <= 0.005)",
    sk_fit / (best / 1e3), f:score(test) - tonumber(peer.accuracy)))
  if peer.extrapolated == "1" then
    print(string.format("  * scikit-learn grew %s of %d trees in %s s (a %d s budget); its fit " ..
      "time is scaled to %d trees and its accuracy is that of %s trees", peer.trees_fitted,
      opts.trees, peer.fit_s, budget, opts.trees, peer.trees_fitted))
  end
else
  print("  scikit-learn: peer not available (" .. pout:gsub("\n", " "):sub(1, 200) .. ")")
end
os.remove(trpath)
os.remove(tpath)
os.remove(mpath)
train, test, f, bestf = nil, nil, nil, nil
collectgarbage()
end

-- ---- sibling histogram subtraction --------------------------------------------------------
-- Valid where every node draws all features: regression's default and max_features = "all".
-- The same forest with subtract = false and true: fit time, histogram kernels, same trees.
if want("subtract") then
  local n = quick and 200000 or 1000000
  print(string.format("\nsibling subtraction (every node draws all 64 features; %d rows, 20 " ..
    "trees, depth 10, 64 bins): subtract = false / true", n))
  print(string.format("  %-44s %10s %10s %10s %10s %10s  %s", "", "fit ms", "kernel ms",
    "hist ms", "derive ms", "plan ms", "same trees"))
  local function same(a, b)
    if a.nodes ~= b.nodes then return string.format("no (%d vs %d nodes)", a.nodes, b.nodes) end
    local diff = 0
    for t = 1, a.trees do
      local ta, tb = a:tree(t), b:tree(t)
      for i = 1, #ta do
        if ta[i].feature ~= tb[i].feature or ta[i].bin ~= tb[i].bin then diff = diff + 1 end
      end
    end
    return diff == 0 and "yes" or string.format("%d nodes differ", diff)
  end
  local sets = {
    {"regression (default: all)", {kind = "regression", rows = n, features = 64,
      informative = 24, seed = 5}, {}},
    {"classification, max_features all", {kind = "classification", rows = n, features = 64,
      informative = 24, classes = 2, seed = 5}, {max_features = "all"}},
  }
  for _, s in ipairs(sets) do
    local dd = data.synth(s[2])
    local opts = {trees = 20, depth = 10, bins = 64, seed = 1, backend = "gpu",
                  bootstrap = true}
    for k, v in pairs(s[3]) do opts[k] = v end
    opts.subtract = false
    rf.train(dd, {trees = 1, depth = 3, backend = "gpu", max_features = opts.max_features})
    local res = {}
    for _, sub in ipairs({false, true}) do
      opts.subtract = sub
      gpu.reset()
      local g = rf.train(dd, opts)
      local k = kernels()
      local t = g.timing
      res[#res + 1] = g
      print(string.format("  %-44s %10.1f %10.1f %10.1f %10.1f %10.1f  %s",
        s[1] .. (sub and ", subtract" or ""), t.total_ms - t.oob_ms, t.kernel_ms,
        (k.rf_hist or {ms = 0}).ms, (k.rf_derive or {ms = 0}).ms, (k.rf_plan or {ms = 0}).ms,
        sub and same(res[1], g) or ""))
    end
    print(string.format("  %-44s kernels x%.2f faster, fit x%.2f", "",
      ((res[1].timing.kernel_ms) / math.max(res[2].timing.kernel_ms, 1e-9)),
      (res[1].timing.total_ms - res[1].timing.oob_ms) /
        math.max(res[2].timing.total_ms - res[2].timing.oob_ms, 1e-9)))
    dd = nil
    res = nil
    collectgarbage()
  end
end

-- ---- depth 20, 1,000 trees ---------------------------------------------------------------
if want("deep") then
  local n, trees = quick and 200000 or 1000000, quick and 100 or 1000
  local dd = data.synth{kind = "classification", rows = n, features = 64, informative = 16,
                        classes = 2, seed = 2}
  gpu.reset()
  print(string.format("\n%d trees, depth 20 on %d x 64: training ...", trees, n))
  io.stdout:flush()
  local g = rf.train(dd, {trees = trees, depth = 20, backend = "gpu", seed = 1})
  local t = g.timing
  print(string.format("%d trees, depth 20 on %d x 64: %.1f s (grow %.1f s, kernels %.1f s, " ..
    "oob on the GPU %.1f s), %d nodes, depth reached %d: no out-of-memory", trees, n,
    t.total_ms / 1e3, t.grow_ms / 1e3, t.kernel_ms / 1e3, t.oob_ms / 1e3, g.nodes,
    g.depth))
end
collectgarbage()

-- ---- the hybrid forest: GPU and CPU threads on one queue ---------------------------------
-- The same forest (checked tree for tree), the wall time of the rf.train call (OOB included)
-- beside each side alone. CPU alone is timed on a part of the trees and scaled (trees are
-- independent and alike in cost): a full CPU fit would take minutes of device time.
-- Equal forests give equal files (forest.h: no timings, no thread count): the saved files are
-- compared, trees, node arrays, OOB score and importances at once (a forest of depth 20 has
-- millions of nodes, too many to walk from Lua).
local function same_forest(a, b)
  if a.trees ~= b.trees or a.nodes ~= b.nodes then return false end
  local dir = io.open("/dev/shm", "r") and "/dev/shm" or tmp
  local pa, pb = dir .. "/rf_gpu_same_a.gwbf", dir .. "/rf_gpu_same_b.gwbf"
  a:save(pa)
  b:save(pb)
  local fa, fb = io.open(pa, "rb"), io.open(pb, "rb")
  local same = true
  while same do
    local x, y = fa:read(1 << 20), fb:read(1 << 20)
    if x ~= y then same = false end
    if not x then break end
  end
  fa:close()
  fb:close()
  os.remove(pa)
  os.remove(pb)
  return same
end

if want("hybrid") then
  local ph = io.popen("nproc")
  local ncpu = tonumber(ph and ph:read("*l") or "") or 1
  if ph then ph:close() end
  print("\nhybrid forest (backend = \"hybrid\": the GPU and threads - 1 CPU workers, one queue):")
  print("  (wall ms of the rf.train call, OOB included; kernel/transfer/host/oob beside it)")
  print(string.format("  %-40s %10s %10s %10s %10s %10s  %s", "case", "gpu ms", "hybrid ms",
    "cpu ms*", "gpu trees", "cpu trees", "same trees"))
  rf.train(data.load("datasets/iris.csv"), {trees = 2, depth = 3, backend = "hybrid"})  -- warm-up
  local hn, hf = quick and 200000 or 800000, quick and 64 or 256
  local hd = data.synth{kind = "classification", rows = hn, features = hf, informative = 24,
                        redundant = 8, classes = 2, seed = 1}
  local cases = {
    { string.format("%dk x %d, 100 trees, depth 10", hn // 1000, hf), hd,
      { trees = 100, depth = 10, bins = 64, max_features = "sqrt", seed = 1 } },
  }
  if not quick or part == "hybrid" then
    local n = quick and 200000 or 1000000
    cases[#cases + 1] = { string.format("%dk x 64, 200 trees, depth 20", n // 1000),
      data.synth{kind = "classification", rows = n, features = 64, informative = 16, classes = 2, seed = 2},
      { trees = quick and 50 or 200, depth = 20, seed = 1 } }
    -- a forest where the rule gives the CPU a share (many trees of medium work)
    cases[#cases + 1] = { "100k x 32, 1000 trees, depth 10",
      data.synth{kind = "classification", rows = 100000, features = 32, informative = 12, classes = 2, seed = 3},
      { trees = 1000, depth = 10, seed = 1 } }
  end
  for _, c in ipairs(cases) do
    local name, dd, o = c[1], c[2], c[3]
    local function fit(backend, trees)
      local oo = {}
      for k, v in pairs(o) do oo[k] = v end
      oo.backend, oo.trees = backend, trees or o.trees
      gpu.reset()
      local f
      -- the wall time of the Lua call, OOB included: what the user waits for
      local ms = wall(function() f = rf.train(dd, oo) end)
      return f, ms
    end
    -- GWB_BENCH_HYBRID_REPS (2) alternating fits of each, the fastest of each reported
    local g, gms, h, hms
    for _ = 1, tonumber(os.getenv("GWB_BENCH_HYBRID_REPS") or "") or 2 do
      local g1, gms1 = fit("gpu")
      if not gms or gms1 < gms then g, gms = g1, gms1 end
      g1 = nil
      collectgarbage()
      local h1, hms1 = fit("hybrid")
      if not hms or hms1 < hms then h, hms = h1, hms1 end
      h1 = nil
      collectgarbage()
    end
    local part_trees = math.min(o.trees, ncpu)
    local _, cpart = fit("cpu", part_trees)
    local cms = cpart * o.trees / part_trees
    local hy = h.timing.hybrid
    print(string.format("  %-40s %10.1f %10.1f %10.0f %10d %10d  %s", name, gms, hms, cms,
      hy.gpu_trees, hy.cpu_trees, same_forest(g, h) and "yes" or "NO"))
    print(string.format("  %-40s hybrid / faster alone = %.3f (target <= 1); %d CPU trees begun and dropped; " ..
      "rates gpu %.1f, cpu %.2f trees/s", "", hms / math.min(gms, cms), hy.cpu_dropped,
      hy.gpu_trees_per_s, hy.cpu_trees_per_s))
    -- the rule's ratio (a CPU worker's tree time x the GPU's trees per second) as measured
    -- here: one tree per thread on every thread, against the GPU alone's rate
    print(string.format("  %-40s ratio measured %.0f (cpu %.0f ms a tree x gpu %.1f trees/s); the rule's " ..
      "prior %.0f, its last %.0f; CPU side %s", "", cpart / 1e3 * o.trees / (gms / 1e3), cpart,
      o.trees / (gms / 1e3), hy.ratio_prior, hy.ratio, hy.cpu_started and "started" or "not started"))
    print(string.format("  %-40s breakdown ms: gpu alone oob %.1f kernel %.1f transfer %.1f host %.1f; " ..
      "hybrid oob %.1f kernel %.1f transfer %.1f host %.1f", "", g.timing.oob_ms, g.timing.kernel_ms,
      g.timing.transfer_ms, g.timing.host_ms, h.timing.oob_ms, h.timing.kernel_ms,
      h.timing.transfer_ms, h.timing.host_ms))
    g, h, c[2] = nil, nil, nil
    collectgarbage()
  end
  hd = nil
  print(string.format("  * cpu alone: %d trees (one per thread) timed on all %d threads and scaled to the forest's trees", ncpu, ncpu))
end
collectgarbage()

-- ---- the auto crossover ------------------------------------------------------------------
if want("cross") then
print("\ncrossover (end to end fit, 100 trees, depth 10, 32 features; auto estimate = rows x " ..
  "mtry x depth x trees)")
print(string.format("  %-10s %12s %12s %12s %8s", "rows", "cpu ms", "gpu ms", "estimate MB",
  "winner"))
for _, n in ipairs(quick and {2000, 20000} or {1000, 5000, 20000, 100000}) do
  local s = data.synth{kind = "classification", rows = n, features = 32, informative = 12,
                       classes = 2, seed = 3}
  local c = rf.train(s, {trees = 100, depth = 10, backend = "cpu"})
  local g = rf.train(s, {trees = 100, depth = 10, backend = "gpu"})
  local cm, gm = c.timing.total_ms - c.timing.oob_ms, g.timing.total_ms - g.timing.oob_ms
  print(string.format("  %-10d %12.1f %12.1f %12.1f %8s", n, cm, gm,
    n * 5 * 10 * 100 / 1e6, gm < cm and "gpu" or "cpu"))
end
end
