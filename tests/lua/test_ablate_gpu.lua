-- test_ablate_gpu.lua - measured, not declared, and ablation on the GPU: CUPTI's DRAM bytes of
-- a copy kernel against the bytes its launch declares, the roofline fields and verdict of
-- gpu.profile, measured beside declared in gpu.kernels(), and a transpose ablation that shows
-- what the padding buys. Skips without a GPU (and the CUPTI parts where the counters are not
-- permitted, with CUPTI's reason). On the CPU: the roofline table's printing.
local test, ok, eq = T.test, T.ok, T.eq

-- Under compute-sanitizer (a CUDA tool attached) the large runs below would take minutes and
-- CUPTI's counters are the tool's: those tests skip there.
local function not_under_tool()
  local san = os.getenv("GWB_SANITIZER")  -- gpu-check's compute-sanitizer runs set it
  if san then T.skip("under compute-sanitizer (" .. san .. "): sizes and timings are not for it") end
  local inj = os.getenv("CUDA_INJECTION64_PATH")
  if inj and inj ~= "" then T.skip("a CUDA tool is attached (" .. inj .. ")") end
end

local function row(p, name)
  for _, k in ipairs(p.kernels) do if k.name == name then return k end end
end

test("gpu.profile prints the roofline table from measured rows (no GPU needed)", function()
  local fmt = getmetatable(gpu.profile(function() end, { counters = false })).__tostring
  local t = fmt({ achieved = true, wall_ms = 3, profiled = 2, dropped = 0, kernels = {
    { name = "k_copy", launches = 1, profiled = 1, achieved_occupancy = 0.8, duration_us = 100,
      dram_gbps = 4321.5, dram_peak_fraction = 0.9, l2_throughput = 0.5, gflops_sp = 0,
      gflops_dp = 0, flop_peak_fraction = 0, dram_read_bytes = 5e8, dram_write_bytes = 5e8,
      declared_bytes = 1e9, verdict = "memory-bound" },
    { name = "k_math", launches = 1, profiled = 1, achieved_occupancy = 0.5, duration_us = 10,
      verdict = "compute-bound", gflops_sp = 50000, gflops_dp = 10, flop_peak_fraction = 0.75 },
    { name = "k_plain", launches = 1, profiled = 1, achieved_occupancy = 0.5 } } })
  for _, want in ipairs { "roofline (measured per launch)", "DRAM GB/s", "verdict", "k_copy",
    "4321.5", "90.0%", "1.00x", "memory-bound", "k_math", "50000.0", "75.0%", "compute-bound" } do
    ok(t:find(want, 1, true), want .. " in\n" .. t)
  end
  local roof = t:sub(t:find("roofline", 1, true))
  ok(not roof:find("k_plain", 1, true), "a row without a verdict is not in the roofline table")
  local q = gpu.profile(function() end)
  if not q.achieved then
    for _, m in ipairs { "dram__bytes_read.sum", "dram__bytes_write.sum",
      "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__inst_executed_pipe_tensor.sum" } do
      ok(q.reason:find(m, 1, true), "the ncu command measures " .. m .. ": " .. q.reason)
    end
  end
end)

test("gpu.kernels() shows declared bytes for every launch", function()
  T.need_gpu()
  gpu.reset()
  local d = data.synth { kind = "classification", rows = 20000, features = 8, classes = 3, informative = 6, seed = 1 }
  rf.train(d, { trees = 4, backend = "gpu", progress = false, max_features = "all" })
  local ks = gpu.kernels()
  ok(#ks > 5, "the trainer launched kernels")
  for _, k in ipairs(ks) do
    ok(k.declared_bytes > 0, k.name .. " declares the bytes it moves (no zero rows)")
  end
end)

test("measured DRAM bytes of a copy kernel are within 10 % of its declared bytes", function()
  T.need_gpu()
  not_under_tool()
  gpu.reset()
  -- 2^21 x 32 floats: 256 MiB each way, far beyond the L2, so DRAM sees every byte once
  local d = data.synth { kind = "classification", rows = 1 << 21, features = 32, classes = 2, seed = 9 }
  local p = gpu.profile(function() d:transpose { backend = "gpu", kernel = "padded", reps = 1 } end)
  if not p.achieved then T.skip("CUPTI range profiler: " .. p.reason) end
  local k = row(p, "transpose_padded")
  ok(k, "transpose_padded measured:\n" .. tostring(p))
  if not k.dram_read_bytes then T.skip("this chip gives no DRAM byte counters:\n" .. tostring(p)) end
  local measured = k.dram_read_bytes + k.dram_write_bytes
  ok(k.declared_bytes and k.declared_bytes > 0, "declared per launch")
  local r = measured / k.declared_bytes
  ok(r > 0.9 and r < 1.1, string.format("measured %.0f bytes against %.0f declared (%.3fx)",
    measured, k.declared_bytes, r))
  ok(k.dram_gbps > 0 and k.dram_peak_fraction > 0 and k.dram_peak_fraction <= 1.05,
    "throughput against the peak: " .. tostring(k.dram_peak_fraction))
  eq(k.verdict, "memory-bound", "a copy is memory-bound:\n" .. tostring(p))
  ok(tostring(p):find("roofline (measured per launch)", 1, true), tostring(p))
  -- the telemetry keeps the measurement: gpu.kernels() shows measured beside declared
  local g
  for _, x in ipairs(gpu.kernels()) do if x.name == "transpose_padded" then g = x end end
  ok(g and g.measured_launches and g.measured_launches >= 1, "gpu.kernels() has the measurement")
  ok(math.abs(g.measured_over_declared - r) < 0.05, "the same ratio: " .. g.measured_over_declared)
  ok(g.measured_gbps > 0 and g.measured_peak_fraction > 0, "measured GB/s and fraction of peak")
end)

test("gpu.profile: measured GB/s reach gpu.kernels() (and the panel) while the profile runs", function()
  T.need_gpu()
  not_under_tool()
  gpu.reset()
  local now = gwb._ablate.now  -- the monotonic clock every timing uses
  local d = data.synth { kind = "classification", rows = 1 << 18, features = 32, classes = 2, seed = 9 }
  local live, launches_before_end
  local p = gpu.profile(function()
    local t0 = now()
    -- our launches for more than two live-decode intervals (profile.h: 0.5 s)
    repeat d:transpose { backend = "gpu", kernel = "padded", reps = 1 } until now() - t0 > 1.2
    for _, x in ipairs(gpu.kernels()) do
      if x.name == "transpose_padded" then live = x end
    end
    launches_before_end = live and live.launches
  end)
  if not p.achieved then T.skip("CUPTI range profiler: " .. p.reason) end
  local k = row(p, "transpose_padded")
  ok(k, "transpose_padded measured:\n" .. tostring(p))
  if not k.dram_read_bytes then T.skip("this chip gives no DRAM byte counters:\n" .. tostring(p)) end
  ok(live and live.measured_launches and live.measured_launches >= 1,
    "measured launches in gpu.kernels() before gpu.profile returned: " ..
    tostring(live and live.measured_launches))
  ok(live.measured_gbps > 0 and live.measured_peak_fraction > 0, "live GB/s and fraction of peak")
  -- every launch is measured once: the live batches and the last one add up
  eq(p.dropped, 0)
  eq(k.profiled, k.launches, "profiled launches of transpose_padded")
  local g
  for _, x in ipairs(gpu.kernels()) do if x.name == "transpose_padded" then g = x end end
  eq(g.measured_launches, g.launches, "gpu.kernels(): every launch measured exactly once")
  ok(launches_before_end <= g.launches, "launch count")
end)

test("gpu.profile: FP64 work counts FLOPs against the FP64 peak", function()
  T.need_gpu()
  not_under_tool()
  local B = mat.batch(2000, 32, { seed = 1, dtype = "f64" })
  local p = gpu.profile(function() eig.batched(B, { method = "jacobi", backend = "gpu" }) end)
  if not p.achieved then T.skip("CUPTI range profiler: " .. p.reason) end
  local k
  for _, x in ipairs(p.kernels) do if x.name:find("jacobi_os", 1, true) then k = x end end
  ok(k, "the Jacobi kernel measured:\n" .. tostring(p))
  if not k.gflops_dp then T.skip("this chip gives no FLOP counters") end
  ok(k.gflops_dp > 0, "FP64 FLOP/s measured: " .. k.gflops_dp)
  ok(k.fp64_peak_fraction > 0 and k.fp64_peak_fraction <= 1.05, "against the FP64 peak")
  ok(k.verdict, "a verdict")
end)

test("a transpose ablation on the GPU shows the padding's gain", function()
  T.need_gpu()
  not_under_tool()
  local d = data.synth { kind = "classification", rows = 1 << 20, features = 32, classes = 2, seed = 3 }
  local r = gwb.ablate(function()
    local t = d:transpose { backend = "gpu", reps = 9 }
    return { verified = t.verified, mismatches = t.mismatches }
  end, { switches = { "transpose.pad", "transpose.tile" }, runs = 3, print = false, log = false })
  local pad, tile = r.rows[1], r.rows[2]
  eq(pad.measured, true, "transpose.pad applies on the GPU")
  eq(pad.agree, true, pad.check)
  eq(tile.agree, true, tile.check)
  ok(r.gpu_used, "kernel time measured")
  ok(pad.kernel_ms > r.baseline.kernel_ms,
    string.format("transpose.pad off is slower: %.3f ms against %.3f ms with padding\n%s",
      pad.kernel_ms, r.baseline.kernel_ms, r:table()))
  ok(tile.kernel_ms > r.baseline.kernel_ms, "the naive kernel is slower than the padded one")
  print(r:table())
end)

test("GPU switches reach their code paths and keep the results", function()
  T.need_gpu()
  not_under_tool()
  local B = mat.batch(500, 48, { seed = 2, dtype = "f64" })
  local r = gwb.ablate(function()
    return eig.batched(B, { method = "mixed", backend = "gpu", vectors = true })
  end,
    { switches = { "jacobi.smem", "jacobi.shift", "eig.mixed" }, runs = 1, print = false, log = false })
  for _, x in ipairs(r.rows) do
    eq(x.measured, true, x.switch)
    ok(x.agree, x.switch .. ": " .. tostring(x.check))
  end
  local d = data.synth { kind = "classification", rows = 50000, features = 16, classes = 3, informative = 6, seed = 4 }
  local f = rf.train(d, { trees = 8, backend = "gpu", progress = false, max_features = "all", seed = 5 })
  local r2 = gwb.ablate(function()
    return rf.train(d, { trees = 8, backend = "gpu", progress = false, max_features = "all", seed = 5 })
  end, { switches = { "rf.subtract", "rf.smem_hist" }, runs = 1, print = false, log = false })
  for _, x in ipairs(r2.rows) do
    eq(x.measured, true, x.switch)
    ok(x.agree, x.switch .. ": " .. tostring(x.check))
  end
  -- prediction goes to the GPU for large work (GWB_RF_GPU_PREDICT_MIN_BYTES) or --backend gpu
  local big = data.synth { kind = "classification", rows = 1 << 20, features = 16, classes = 3, informative = 6, seed = 6 }
  local fb = rf.train(big, { trees = 64, depth = 8, backend = "gpu", progress = false, seed = 5 })
  local r3 = gwb.ablate(function() return fb:predict(big, { codes = true }) end,
    { switches = { "rf.predict_vote" }, runs = 1, print = false, log = false })
  eq(r3.rows[1].measured, true, "rf.predict_vote reached: " .. tostring(r3.rows[1].why))
  ok(r3.rows[1].agree, "rf.predict_vote: " .. tostring(r3.rows[1].check))
  ok(f, "a forest")
  -- the staged copies: d:to("gpu") uploads through buffer.c's pinned ring
  local r5 = gwb.ablate(function()
    big:to("gpu")
    local p = fb:predict(big, { codes = true })
    big:to("cpu")
    return p
  end, { switches = { "copy.pinned", "copy.streamed" }, runs = 1, print = false, log = false })
  for _, x in ipairs(r5.rows) do
    eq(x.measured, true, x.switch .. " reached: " .. tostring(x.why))
    ok(x.agree, x.switch .. ": " .. tostring(x.check))
  end
  local A = mat.laplacian2d(200, { sparse = true })
  local r4 = gwb.ablate(function() return eig.solve(A, { k = 6, which = "smallest", backend = "gpu" }) end,
    { switches = { "spmv.ours", "eig.rowmajor", "eig.chebyshev" }, runs = 1, print = false, log = false })
  for _, x in ipairs(r4.rows) do
    eq(x.measured, true, x.switch)
    ok(x.agree, x.switch .. ": " .. tostring(x.check))
  end
end)
