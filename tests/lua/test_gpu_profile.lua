-- test_gpu_profile.lua - gpu.profile: the reason path (no GPU, no CUDA, counters = false, a
-- tool attached), errors raised by the measured function, bad options; on a GPU the CUPTI
-- range profiler's achieved occupancy of the transpose kernels against their theoretical
-- occupancy, and sessions that do not nest. Where the counters are not permitted (or a tool
-- such as compute-sanitizer holds them) the GPU test skips with CUPTI's reason.
local test, ok, eq = T.test, T.ok, T.eq


test("gpu.profile reason path: no counters, a clear reason, the ncu command, a table", function()
  local p = gpu.profile(function() os.execute("sleep 0.05") end, { counters = false })
  eq(p.achieved, false)
  ok(p.reason:find("counters = false", 1, true), p.reason)
  ok(p.wall_ms >= 40, "wall_ms covers fn (a 50 ms sleep): " .. p.wall_ms)
  eq(type(p.kernels), "table")
  for _, k in ipairs(p.kernels) do  -- not measured: no row carries CUPTI's fields
    eq(k.profiled, 0, k.name)
    eq(k.achieved_occupancy, nil, k.name)
  end
  local s = tostring(p)
  ok(s:find("achieved occupancy not measured: counters = false", 1, true), s)
  ok(s:find("theoretical", 1, true), s)

  -- the table print(p) shows, from rows like a measured profile's
  local fmt = getmetatable(p).__tostring
  local t = fmt({ achieved = true, wall_ms = 12.5, profiled = 3, dropped = 1, kernels = {
    { name = "k_a", launches = 2, profiled = 2, achieved_occupancy = 0.5, theoretical_occupancy = 0.75,
      duration_us = 10.25, sm_throughput = 0.3, mean_us = 999 },
    { name = "lib::k", launches = 1, profiled = 1, achieved_occupancy = 0.25, duration_us = 3 },
    { name = "k_b", launches = 1, profiled = 0, theoretical_occupancy = 1, mean_us = 777 } } })
  for _, want in ipairs { "3 kernels in 12.5 ms", "3 launches measured by CUPTI", "1 not measured",
    "k_a", "50.0%", "75.0%", "10.25", "30.0%", "lib::k", "25.0%", "100.0%" } do
    ok(t:find(want, 1, true), want .. " in\n" .. t)
  end
  ok(not t:find("777", 1, true) and not t:find("999", 1, true), "no replay-inflated event times when measured")

  -- a row without telemetry (mean_us, block, regs nil: CUPTI saw it, telemetry did not) and
  -- one without measurements print "-" where the value is missing, not a 0
  local u = fmt({ achieved = false, wall_ms = 1, reason = "r", kernels = {
    { name = "k_only_cupti", launches = 2, profiled = 0 },
    { name = "k_timed", launches = 1, profiled = 0, mean_us = 4.5 } } })
  local only = u:match("k_only_cupti[^\n]*")
  ok(only and select(2, only:gsub(" %-", "")) == 4 and not only:find("0.0", 1, true),
    "achieved, theoretical, duration, SM all '-': " .. tostring(only))
  ok(u:match("k_timed[^\n]*"):find("4.50", 1, true), u)

  -- the default call: without a GPU (or CUDA) the reason says so and how to measure instead
  if not gpu.available() then
    local q = gpu.profile(function() end)
    eq(q.achieved, false)
    ok(q.reason:find("no GPU", 1, true) or q.reason:find("no CUDA", 1, true), q.reason)
    ok(q.reason:find("ncu --clock-control none --metrics sm__warps_active", 1, true), q.reason)
    eq(#q.kernels, 0)
    ok(tostring(q):find(q.reason, 1, true), "tostring carries the reason")
  end
end)

test("gpu.profile: errors in fn propagate, bad options raise, the next call still works", function()
  T.raises(function() gpu.profile(function() error("inside the measured code") end) end,
    "inside the measured code")
  T.raises(function() gpu.profile(42) end, "function expected")
  T.raises(function() gpu.profile(function() end, { max_ranges = 0 }) end, "max_ranges must be 1..100000")
  -- checked as the integer given, not as an int cast (2^32 + 5 would wrap to 5), and before
  -- the no-GPU / no-CUDA reason path returns
  local ran = false
  T.raises(function() gpu.profile(function() ran = true end, { max_ranges = 2^32 + 5 }) end,
    "max_ranges must be 1..100000 (got 4294967301)")
  T.raises(function() gpu.profile(function() ran = true end, { max_ranges = -(2^32) + 5 }) end,
    "max_ranges must be 1..100000")
  T.raises(function() gpu.profile(function() ran = true end, { max_ranges = 100001, counters = false }) end,
    "max_ranges must be 1..100000")
  eq(ran, false, "fn does not run when an option is bad")
  T.raises(function() gpu.profile(function() end, { max_range = 10 }) end, "unknown option 'max_range'")
  T.raises(function() gpu.profile(function() end, { counters = "yes" }) end, "counters")
  local p = gpu.profile(function() end)  -- no session was left open by the error above
  eq(type(p.achieved), "boolean")
  if not p.achieved then ok(#p.reason > 20, p.reason) end
end)

local function row(p, name)
  for _, k in ipairs(p.kernels) do if k.name == name then return k end end
end

test("gpu profile: achieved occupancy of the transpose kernels, not above theoretical", function()
  T.need_gpu()
  local p = gpu.profile(function() teach.transpose { rows = 2048, cols = 2048, reps = 2 } end)
  if not p.achieved then T.skip("CUPTI range profiler: " .. p.reason) end
  ok(p.profiled >= 6, "every launch measured: " .. p.profiled)
  eq(p.dropped, 0)
  ok(#p.library > 0, "names the libcupti it used")
  for _, v in ipairs { "transpose_naive", "transpose_tiled", "transpose_padded" } do
    local k = row(p, v)
    ok(k, v .. " has a row:\n" .. tostring(p))
    eq(k.gwb, true, v)
    ok(k.profiled >= 1 and k.profiled <= k.launches, v .. " measured " .. k.profiled .. " of " .. k.launches)
    ok(k.theoretical_occupancy and k.theoretical_occupancy > 0, v .. " theoretical from telemetry")
    ok(k.achieved_occupancy > 0, v .. " achieved " .. k.achieved_occupancy)
    ok(k.achieved_occupancy <= k.theoretical_occupancy + 0.05,
      string.format("%s: achieved %.3f above theoretical %.3f", v, k.achieved_occupancy,
        k.theoretical_occupancy))
    ok(k.achieved_min <= k.achieved_occupancy + 1e-9 and k.achieved_occupancy <= k.achieved_max + 1e-9, v)
    ok(k.duration_us and k.duration_us > 0, v .. " duration")
  end
  local s = tostring(p)
  ok(s:find("transpose_padded", 1, true) and s:find("%", 1, true), s)
  ok(s:find("measured by CUPTI", 1, true), s)
end)

test("gpu profile: counters = false keeps the telemetry rows and no CUPTI fields", function()
  T.need_gpu()
  local p = gpu.profile(function() teach.transpose { rows = 256, cols = 256, reps = 1 } end,
    { counters = false })
  eq(p.achieved, false)
  local k = row(p, "transpose_padded")
  ok(k, "a telemetry row:\n" .. tostring(p))
  ok(k.launches >= 1 and type(k.mean_us) == "number" and type(k.total_ms) == "number" and
    #k.block > 0 and k.regs > 0, "telemetry fields")
  for _, r in ipairs(p.kernels) do
    eq(r.profiled, 0, r.name)
    eq(r.achieved_occupancy, nil, r.name)
  end
end)

test("gpu profile: sessions do not nest; the inner call gives a reason", function()
  T.need_gpu()
  local inner
  local p = gpu.profile(function()
    inner = gpu.profile(function() teach.transpose { rows = 256, cols = 256, reps = 1 } end)
  end)
  if not p.achieved then T.skip("CUPTI range profiler: " .. p.reason) end
  eq(inner.achieved, false)
  ok(inner.reason:find("do not nest", 1, true), inner.reason)
  ok(row(p, "transpose_padded"), "the outer session measured the inner call's kernels")
end)

test("gpu profile: every gwb launch is measured under its label; library kernels get rows", function()
  T.need_gpu()
  local A = mat.laplacian2d(60, { sparse = true })
  local p = gpu.profile(function() A:spmv_bench { reps = 1 } end)
  if not p.achieved then T.skip("CUPTI range profiler: " .. p.reason) end
  eq(p.dropped, 0)
  local ours, lib = 0, 0
  for _, k in ipairs(p.kernels) do
    if k.theoretical_occupancy then  -- launched through gwb_launch: every launch measured
      ours = ours + 1
      eq(k.gwb, true, k.name)
      eq(k.profiled, k.launches, k.name .. ": measured launches (template instantiations share the label)")
    elseif not k.gwb then
      lib = lib + 1
      ok(k.profiled >= 1 and k.achieved_occupancy > 0 and k.achieved_occupancy <= 1, k.name)
      -- seen by CUPTI only: no telemetry fields that would read as real zeros
      ok(k.mean_us == nil and k.total_ms == nil and k.block == nil and k.regs == nil, k.name)
    end
  end
  ok(row(p, "spmv_seg"), "our SpMV has a row:\n" .. tostring(p))
  ok(ours >= 1 and lib >= 1, "ours " .. ours .. ", library " .. lib .. ":\n" .. tostring(p))
end)
