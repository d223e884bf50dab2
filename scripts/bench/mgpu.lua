-- scripts/bench/mgpu.lua - several GPUs of one host (issue 18): wall time of rf.train and
-- eig.batched for gpus = 1, 2, ... up to the devices there are, at the issue's sizes, beside
-- the result check (the same forest bytes as gpus = 1, the same eigenvalues), and gpus = 1
-- against no option (today's path: the same time within noise). The sparse solve over several
-- GPUs is not built, so it has no line here.
--   forest: 800,000 x 256 (synthetic, 2 classes), 200 trees, depth 10, 64 bins
--   batch:  40,000 matrices 64 x 64, f32, values only
-- GWB_BENCH_QUICK=1: 50,000 x 32, 20 trees; 4,000 matrices (a first look). Without a GPU it
-- says so and stops. Median of GWB_BENCH_REPS runs (default 3; 1 at full sizes).
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
local reps = tonumber(os.getenv("GWB_BENCH_REPS") or (quick and "3" or "1"))

print("== mgpu: work dealt over the GPUs of one host" .. (quick and " (quick sizes)" or ""))
local ok, why = gpu.available()
if not ok then
  print("mgpu: skipped, no GPU: " .. tostring(why))
  return
end
local devs = gwb.gpus()
for _, g in ipairs(devs) do
  local peers = {}
  for j, p in ipairs(g.peer) do if p then peers[#peers + 1] = j - 1 end end
  print(string.format("device %d: %s, %d SMs, %.0f GiB, %s, peers {%s}", g.index, g.name, g.sms,
    g.memory_total / 2 ^ 30, g.pci_bus_id, table.concat(peers, ",")))
end

local function median(fn)
  local t = {}
  for i = 1, reps do
    t[i] = gwb.bench(fn, { runs = 1, warmup = 0, log = false }).median_ms
  end
  table.sort(t)
  return t[(#t + 1) // 2]
end

local function bytes_of(f, name)
  local path = (os.getenv("TMPDIR") or "/tmp") .. "/mgpu_bench_" .. name .. ".gwbf"
  f:save(path)
  local h = assert(io.open(path, "rb"))
  local s = h:read("a")
  h:close()
  os.remove(path)
  return s
end

-- forest
local rows, feats, trees = quick and 50000 or 800000, quick and 32 or 256, quick and 20 or 200
local d = data.synth { rows = rows, features = feats, classes = 2, seed = 11 }
local o = { trees = trees, depth = 10, bins = 64, seed = 1, progress = false, backend = "gpu" }
rf.train(d, { trees = 2, depth = 4, progress = false, backend = "gpu" })  -- warm-up
local ref
local t_none = median(function() ref = rf.train(d, o) end)
local ref_bytes = bytes_of(ref, "ref")
print(string.format("rf.train %d x %d, %d trees, depth 10:", rows, feats, trees))
print(string.format("  %-10s %10s %8s  %s", "gpus", "wall ms", "speedup", "forest"))
print(string.format("  %-10s %10.1f %8s  %s", "(none)", t_none, "1.00", "reference"))
for n = 1, #devs do
  local f
  local t = median(function() f = rf.train(d, { trees = o.trees, depth = o.depth, bins = o.bins,
    seed = o.seed, progress = false, backend = "gpu", gpus = n }) end)
  print(string.format("  %-10d %10.1f %8.2f  %s; kernel %.1f, transfer %.1f, host %.1f ms", n, t,
    t_none / t, bytes_of(f, "n" .. n) == ref_bytes and "same bytes" or "DIFFERS",
    f.timing.kernel_ms or 0, f.timing.transfer_ms or 0, f.timing.host_ms or 0))
end

-- batch
local count = quick and 4000 or 40000
local B = mat.batch(count, 64, { seed = 3, dtype = "f32" })
eig.batched(mat.batch(8, 64, { seed = 1, dtype = "f32" }), { backend = "gpu" })  -- warm-up
local eref
local b_none = median(function() eref = eig.batched(B, { backend = "gpu" }) end)
print(string.format("eig.batched %d x 64^2 f32, values:", count))
print(string.format("  %-10s %10s %8s  %s", "gpus", "wall ms", "speedup", "values"))
print(string.format("  %-10s %10.1f %8s  %s", "(none)", b_none, "1.00", "reference"))
for n = 1, #devs do
  local e
  local t = median(function() e = eig.batched(B, { backend = "gpu", gpus = n }) end)
  local worst = 0
  for b = 1, count, math.max(1, count // 200) do
    local va, vb = eref:values(b), e:values(b)
    for i = 1, #va do worst = math.max(worst, math.abs(va[i] - vb[i])) end
  end
  print(string.format("  %-10d %10.1f %8.2f  max |diff| %.3g (sampled); kernel %.1f, transfer %.1f ms",
    n, t, b_none / t, worst, e.timing and e.timing.kernel_ms or 0, e.timing and e.timing.transfer_ms or 0))
end
