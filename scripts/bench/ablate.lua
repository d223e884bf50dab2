-- scripts/bench/ablate.lua - what each optimisation buys: gwb.ablate over representative work,
-- on the CPU and (where there is one) the GPU, one table per workload (switch, wall time,
-- kernel time, slowdown with the switch off, result check). GWB_BENCH_QUICK=1: small sizes.
-- Run alone: build/gwb scripts/bench/ablate.lua (scripts/bench/run includes it).
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
local function S(full, small) return quick and small or full end
local runs = S(3, 1)
local all_ok = true

local function case(title, fn, switches)
  print(string.format("== ablate: %s", title))
  local ok, r = pcall(gwb.ablate, fn, { switches = switches, runs = runs, label = "bench " .. title })
  if not ok then
    print("  failed: " .. tostring(r))
    all_ok = false
  elseif not r.ok then
    all_ok = false
  end
  print()
end

-- CPU
local d = data.synth { kind = "classification", rows = S(200000, 20000), features = 32, classes = 3, informative = 6, seed = 1 }
case(string.format("rf.train cpu, %d x 32, 20 trees, all features", d.rows), function()
  return rf.train(d, { trees = 20, depth = 12, seed = 1, progress = false, backend = "cpu",
    max_features = "all" })
end, { "rf.subtract", "rf.rowmajor" })

local t = data.synth { kind = "classification", rows = S(1 << 21, 1 << 16), features = 32, classes = 2, seed = 2 }
case(string.format("d:transpose cpu, %d x 32", t.rows), function()
  return t:transpose { backend = "cpu", reps = 5 }.mismatches
end, { "transpose.tile" })

local path = os.tmpname()
do
  local f = assert(io.open(path, "w"))
  local rows = S(400000, 20000)
  f:write("a,b,c,d,y\n")
  for i = 1, rows do f:write(string.format("%.4f,%d,%.2f,%g,%d\n", i / 7, i, i * 0.25, i / 3, i % 3)) end
  f:close()
end
case("data.load csv (numbers)", function() return data.load(path, { target = "y" }) end,
  { "csv.fast", "csv.parallel" })
os.remove(path)

local L = mat.laplacian2d(S(120, 40), { sparse = true })
case(string.format("eig.solve cpu, 2-D Laplacian n = %d, k = 6 smallest", L.rows), function()
  return eig.solve(L, { k = 6, which = "smallest", backend = "cpu" })
end, { "eig.chebyshev" })

local B = mat.batch(S(2000, 200), 48, { seed = 1, dtype = "f64" })
case("eig.batched cpu, method mixed", function()
  return eig.batched(B, { method = "mixed", backend = "cpu" })
end, { "eig.mixed" })

-- GPU
if gpu.available() then
  local g = data.synth { kind = "classification", rows = S(1 << 20, 1 << 16), features = 32, classes = 3, informative = 6, seed = 3 }
  case(string.format("rf.train gpu, %d x 32, 32 trees, all features", g.rows), function()
    return rf.train(g, { trees = 32, depth = 10, seed = 1, progress = false, backend = "gpu",
      max_features = "all" })
  end, { "rf.subtract", "rf.smem_hist" })
  local fg = rf.train(g, { trees = 64, depth = 10, seed = 1, progress = false, backend = "gpu" })
  case("f:predict gpu, 64 trees", function() return fg:predict(g, { codes = true }) end,
    { "rf.predict_vote", "copy.pinned", "copy.streamed" })
  case(string.format("d:transpose gpu, %d x 32", t.rows), function()
    local r = t:transpose { backend = "gpu", reps = 9 }
    return { verified = r.verified, mismatches = r.mismatches }
  end, { "transpose.pad", "transpose.tile", "copy.pinned" })
  local Bg = mat.batch(S(4000, 400), 64, { seed = 1, dtype = "f64" })
  case("eig.batched gpu, 64 x 64 f64, method mixed", function()
    return eig.batched(Bg, { method = "mixed", backend = "gpu", vectors = true })
  end, { "jacobi.smem", "jacobi.shift", "eig.mixed", "copy.pinned" })
  local Lg = mat.laplacian2d(S(400, 100), { sparse = true })
  case(string.format("eig.solve gpu, 2-D Laplacian n = %d, k = 8 smallest", Lg.rows), function()
    return eig.solve(Lg, { k = 8, which = "smallest", backend = "gpu" })
  end, { "spmv.ours", "eig.rowmajor", "eig.chebyshev" })
else
  print("ablate: GPU cases skipped: " .. tostring(select(2, gpu.available())))
end
if not all_ok then
  print("ablate: some results disagree or a case failed (see above)")
  os.exit(1)
end
