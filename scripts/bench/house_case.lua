-- house_case.lua - one case of the house A/B (scripts/bench/house_ab.sh): builds its input,
-- warms up where a first call pays a one-time cost (the GPU plugin and context), then times the
-- user's Lua call once and prints "case <name> <seconds>". Run by each binary of the A/B in a
-- fresh process: build/gwb scripts/bench/house_case.lua <name> [csv path]
-- CPU cases (what the thread pool touches): csv, eig_sparse, rf, synth, transpose.
-- GPU cases: rf_gpu, eig_sparse_gpu, eig_batched_gpu.
local name, path = arg[1], arg[2]

-- one timed call through gwb.bench (no warm-up call: each case does its own first)
local function timed(fn)
  return gwb.bench(fn, { runs = 1, warmup = 0, log = false }).total_s
end

local cases = {}

cases.csv = function()   -- data.load of a numeric CSV (path made by house_ab.sh)
  assert(path, "csv: give the CSV path")
  return timed(function() return data.load(path) end)
end

cases.eig_sparse = function()   -- rs100k1m: randsym(100000, density 1e-4: 1M nonzeros), k = 10
  local A = mat.randsym(100000, { density = 1e-4, seed = 1 })
  return timed(function() return eig.solve(A, { k = 10, which = "largest", backend = "cpu" }) end)
end

cases.rf = function()
  local d = data.synth { kind = "classification", rows = 10000, features = 20, seed = 1 }
  return timed(function() return rf.train(d, { trees = 30, backend = "cpu", seed = 1 }) end)
end

cases.synth = function()
  return timed(function()
    return data.synth { kind = "classification", rows = 300000, features = 32, seed = 1 }
  end)
end

cases.transpose = function()   -- d:transpose's CPU kernel, the whole Lua call
  local d = data.synth { kind = "regression", rows = 300000, features = 64, informative = 8, seed = 3 }
  return timed(function() return d:transpose { backend = "cpu", reps = 1 } end)
end

cases.rf_gpu = function()
  local d = data.synth { kind = "classification", rows = 200000, features = 32, seed = 1 }
  rf.train(d, { trees = 2, depth = 4, backend = "gpu" })   -- warm-up: plugin, context
  return timed(function() return rf.train(d, { trees = 100, backend = "gpu", seed = 1 }) end)
end

cases.eig_sparse_gpu = function()   -- rs100k: randsym(100000, density 1e-3), k = 10 largest
  local A = mat.randsym(100000, { density = 1e-3, seed = 1 })
  eig.solve(mat.laplacian2d(40, { sparse = true }), { k = 4, backend = "gpu" })   -- warm-up
  return timed(function() return eig.solve(A, { k = 10, which = "largest", backend = "gpu" }) end)
end

cases.eig_batched_gpu = function()
  local B = mat.batch(2000, 64, { dtype = "f64", seed = 1 })
  eig.batched(mat.batch(8, 16, { dtype = "f64", seed = 2 }), { backend = "gpu" })   -- warm-up
  return timed(function() return eig.batched(B, { backend = "gpu" }) end)
end

local fn = cases[name]
if not fn then
  local names = {}
  for k in pairs(cases) do names[#names + 1] = k end
  table.sort(names)
  error("house_case: unknown case '" .. tostring(name) .. "' (one of: " .. table.concat(names, ", ") .. ")")
end
local t = fn()
print(string.format("case %s %.4f", name, t))
