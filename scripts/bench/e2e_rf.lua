-- scripts/bench/e2e_rf.lua - random forests end to end on the GPU: the wall time of the Lua
-- call, split into kernel, transfer and host time, in the issue-12 line format. Cases:
--   rf_train_oob    rf.train 800k x 256 (of a 1M synthetic set, 80/20), 100 trees, depth 10, 64
--                   bins, sqrt features, OOB on; peer = the same fit with oob = false (our own
--                   reference: target ratio <= 1.15 and gwb_s <= 0.35); host mode (the
--                   Dataset on the host) and device mode (train:to("gpu") first)
--   rf_predict      f:predict of the 200k x 256 test rows; host mode reads the result back
--                   (p[1] copies all of it), peer = kernel time + the pinned-copy floor of the
--                   input (bytes / gpu.bandwidth()'s pinned host-to-device rate; target ratio
--                   <= 1.2); device mode (test:to("gpu"), the result left on the device), peer
--                   = kernel time (target ratio <= 1.5)
--   transpose_h2d / transpose_d2h   d:transpose{backend = "gpu"} of the test rows: each copy
--                   against gpu.bandwidth()'s pinned figure for the same bytes (target ratio
--                   <= 1.25, i.e. >= 80 % of pinned)
-- Every case prints one line and appends it to bench/results/e2e-<date>.txt (GWB_E2E_OUT
-- overrides), through scripts/bench/e2e.lua's E2E.emit when e2e.lua runs this file. Each timing is the median
-- of GWB_E2E_RUNS (default 3) calls after a warm-up. GWB_BENCH_QUICK=1: 250k x 64 / 50k x 64.
local quick = (os.getenv("GWB_BENCH_QUICK") or "") ~= "" and os.getenv("GWB_BENCH_QUICK") ~= "0"
local runs = tonumber(os.getenv("GWB_E2E_RUNS") or "") or 3

print("== e2e_rf: random forests end to end on the GPU" .. (quick and " (quick sizes)" or ""))
local ok, why = gpu.available()
if not ok then
  print("e2e_rf: skipped, no GPU: " .. tostring(why))
  return
end

-- One line per case: through scripts/bench/e2e.lua's E2E.emit when it loaded this file, else
-- printed and appended here in the same format (target and MET / MISSED at the end).
local out_path = os.getenv("GWB_E2E_OUT") or ("bench/results/e2e-" .. os.date("!%Y-%m-%d") .. ".txt")
local function emit(f)
  if rawget(_G, "E2E") and E2E.emit then return E2E.emit(f) end
  local ratio = f.peer_s > 0 and f.gwb_s / f.peer_s or 0
  local s = string.format("e2e case=%s mode=%s gwb_s=%.4f peer=%s peer_s=%.4f ratio=%.3f " ..
    "kernel_ms=%.2f transfer_ms=%.2f host_ms=%.2f%s%s", f.case, f.mode, f.gwb_s, f.peer,
    f.peer_s, ratio, f.kernel_ms, f.transfer_ms, f.host_ms,
    f.target and string.format(" target<=%.2f %s", f.target, ratio <= f.target and "MET" or
      "MISSED") or "", f.extra and (" " .. f.extra) or "")
  print(s)
  local fh = io.open(out_path, "a")
  if fh then
    fh:write(s, "\n")
    fh:close()
  else
    print("e2e_rf: cannot append to " .. out_path)
  end
end

local function line(case, mode, gwb_s, peer, peer_s, kernel_ms, transfer_ms, host_ms, target,
                    extra)
  emit{case = case, mode = mode, gwb_s = gwb_s, peer = peer, peer_s = peer_s,
       kernel_ms = kernel_ms, transfer_ms = transfer_ms, host_ms = host_ms, target = target,
       extra = extra}
end

local function median(t)
  table.sort(t, function(a, b) return a[1] < b[1] end)
  return t[(#t + 1) // 2]
end

-- {wall_s, kernel_ms, transfer_ms} of fn() (which returns the kernel and transfer ms its
-- result reports), median of runs after one warm-up
local function timed(fn)
  fn()
  local all = {}
  for i = 1, runs do
    local k, x
    local r = gwb.bench(function() k, x = fn() end, {runs = 1, warmup = 0, log = false})
    all[i] = {r.median_ms / 1e3, k, x}
  end
  return median(all)
end

local bw = gpu.bandwidth{bytes = 256 * 2 ^ 20, reps = 3, log = false}
print(string.format("pinned: host to device %.1f GB/s, device to host %.1f GB/s; pageable %.1f / %.1f",
  bw.h2d_pinned_gbps, bw.d2h_pinned_gbps, bw.h2d_pageable_gbps, bw.d2h_pageable_gbps))

local N, F = quick and 312500 or 1000000, quick and 64 or 256
local d = data.synth{kind = "classification", rows = N, features = F, informative = 24,
                     redundant = 8, classes = 2, seed = 1}
local train, test = d:split(0.8, {seed = 1})
d = nil
collectgarbage()
local opts = {trees = 100, depth = 10, bins = 64, max_features = "sqrt", seed = 1,
              backend = "gpu", progress = false}

-- ---- rf.train: OOB on against OOB off --------------------------------------------------------
for _, mode in ipairs({"host", "device"}) do
  if mode == "device" then train:to("gpu") end
  local f
  local on = timed(function()
    f = rf.train(train, opts)
    return f.timing.kernel_ms, f.timing.transfer_ms
  end)
  local t = f.timing
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.oob = false
  local off = timed(function()
    local g = rf.train(train, o)
    return g.timing.kernel_ms, g.timing.transfer_ms
  end)
  print(string.format("  rf.train %d x %d (%s): oob on %.1f ms (oob %.4f, oob part %.1f ms), " ..
    "off %.1f ms; last fit: quantize %.1f, grow %.1f, kernels %.1f, transfers %.1f, host %.1f",
    train.rows, F, mode, on[1] * 1e3, f.oob or 0 / 0, t.oob_ms, off[1] * 1e3, t.quantize_ms,
    t.grow_ms, t.kernel_ms, t.transfer_ms, t.host_ms))
  line("rf_train_oob", mode, on[1], "gwb_oob_off", off[1], t.kernel_ms, t.transfer_ms, t.host_ms,
    1.15, string.format("wall<=0.35s %s", on[1] <= 0.35 and "MET" or "MISSED"))
  f = nil
  collectgarbage()
end
train:to("cpu")

-- ---- f:predict -------------------------------------------------------------------------------
local f = rf.train(train, opts)
local bytes = test.rows * F * 4
local floor_s = bytes / (bw.h2d_pinned_gbps * 1e9)
for _, mode in ipairs({"host", "device"}) do
  if mode == "device" then test:to("gpu") end
  local p
  local r = timed(function()
    p = f:predict(test)
    if type(p) == "table" then return 0, 0 end  -- the CPU answered (no GPU path taken)
    if mode == "host" then local _ = p[1] end  -- host mode: the labels come back
    local t = p.timing
    return t.kernel_ms, t.transfer_ms + t.read_ms
  end)
  local kern = r[2] / 1e3
  local host_ms = r[1] * 1e3 - r[2] - r[3]
  print(string.format("  f:predict %d x %d (%s): wall %.3f ms, kernels %.3f ms, transfers %.3f ms, " ..
    "input pinned floor %.3f ms (%s)", test.rows, F, mode, r[1] * 1e3, r[2], r[3], floor_s * 1e3,
    type(p) == "table" and "a table: ran on the CPU?" or tostring(p)))
  if mode == "host" then
    line("rf_predict", mode, r[1], "kernel+pinned_floor", kern + floor_s, r[2], r[3], host_ms,
      1.2)
  else
    line("rf_predict", mode, r[1], "kernel", kern, r[2], r[3], host_ms, 1.5)
  end
end
test:to("cpu")

-- ---- d:transpose on the GPU: the copies against gpu.bandwidth()'s pinned figures -------------
do
  local all = {}
  for i = 1, runs do
    local t = test:transpose{backend = "gpu", reps = 3}
    assert(t.verified, "transpose: the result differs from the Dataset")
    all[i] = {t.h2d_ms, t}
  end
  local t = median(all)[2]
  local pin_h2d = bytes / (bw.h2d_pinned_gbps * 1e9)
  local pin_d2h = bytes / (bw.d2h_pinned_gbps * 1e9)
  print(string.format("  d:transpose %d x %d gpu: h2d %.2f ms (%.1f GB/s, %.0f %% of pinned), " ..
    "kernel %.3f ms, d2h %.2f ms (%.1f GB/s, %.0f %% of pinned)", test.rows, F, t.h2d_ms,
    t.h2d_gbps, 100 * t.h2d_gbps / bw.h2d_pinned_gbps, t.kernel_ms, t.d2h_ms, t.d2h_gbps,
    100 * t.d2h_gbps / bw.d2h_pinned_gbps))
  -- copy_path: "registered" (the two host arrays page-locked first, register_ms, not part of
  -- the copies' own time) or "staged" (through the pinned staging ring)
  local how = string.format("copy_path=%s register_ms=%.2f", tostring(t.copy_path),
    t.register_ms or 0)
  line("transpose_h2d", "host", t.h2d_ms / 1e3, "gpu.bandwidth_pinned", pin_h2d, t.kernel_ms,
    t.h2d_ms, 0, 1.25, how)
  line("transpose_d2h", "host", t.d2h_ms / 1e3, "gpu.bandwidth_pinned", pin_d2h, t.kernel_ms,
    t.d2h_ms, 0, 1.25, how)
end
