-- scripts/bench/telemetry.lua - what the telemetry costs: the same GPU work with kernel
-- records on (CUDA events per launch, occupancy, bytes) and off (gwb.telemetry(false): the
-- bare launch), alternating, 7 runs each, medians and minima. Goal: under 2% on every workload.
print("== telemetry: GPU work with kernel telemetry on vs off")
local ok, why = gpu.available()
if not ok then
  print("telemetry: skipped, no GPU: " .. tostring(why))
  return
end
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
local function median(t) table.sort(t); local n = #t; return n % 2 == 1 and t[(n + 1) // 2] or (t[n // 2] + t[n // 2 + 1]) / 2 end

local work = {}
if rf and data and data.synth then
  local d = data.synth { kind = "classification", rows = quick and 100000 or 400000, features = 32,
    informative = 16, classes = 2, seed = 1 }
  work[#work + 1] = { "rf.train gpu, " .. d.rows .. " x 32, 50 trees", function()
    rf.train(d, { trees = 50, depth = 10, backend = "gpu", seed = 1 })
  end }
end
if eig and mat and mat.batch then
  local B = mat.batch(quick and 2000 or 8000, 32, { seed = 1, dtype = "f32" })
  work[#work + 1] = { "eig.batched gpu, " .. (quick and 2000 or 8000) .. " x 32x32 f32", function()
    eig.batched(B, { backend = "gpu" })
  end }
end
print(string.format("%-40s %9s %9s %8s %8s %9s", "workload", "on ms", "off ms", "median", "min", "launches"))
local worst = 0
for _, w in ipairs(work) do
  local name, fn = w[1], w[2]
  fn()  -- warm-up (context, allocations, caches)
  local on, off = {}, {}
  gpu.reset()
  for i = 1, 7 do
    for _, mode in ipairs(i % 2 == 1 and { true, false } or { false, true }) do
      gwb.telemetry(mode)
      local t0 = os.clock()
      local r = gwb.bench(fn, { runs = 1, warmup = 0, log = false })
      local _ = t0
      if mode then on[#on + 1] = r.median_ms else off[#off + 1] = r.median_ms end
    end
  end
  gwb.telemetry(true)
  local launches = 0
  for _, k in ipairs(gpu.kernels()) do launches = launches + k.launches end
  local min_on, min_off = math.min(table.unpack(on)), math.min(table.unpack(off))
  local m_on, m_off = median(on), median(off)
  local cost = (m_on - m_off) / m_off * 100
  local cost_min = (min_on - min_off) / min_off * 100
  worst = math.max(worst, math.min(cost, cost_min))
  print(string.format("%-40s %9.2f %9.2f %7.2f%% %7.2f%% %9d", name, m_on, m_off, cost, cost_min,
    launches // 7))
end
print(string.format("telemetry: worst overhead %.2f%% (the smaller of the median and min comparisons; goal < 2%%)", worst))
gwb.log_run { kind = "bench", backend = "gpu", params = { bench = "telemetry" }, metrics = { worst_overhead_pct = worst } }
