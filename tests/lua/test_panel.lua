-- test_panel.lua - the panel module off a terminal, gwb.bench (the timing loop that drives
-- progress), telemetry switch, the occupancy calculator and gpu.bandwidth / gpu.profile.

T.test("panel is off without a terminal, and says why", function()
  local s = panel.status()
  T.eq(s.allowed, false)
  T.ok(s.reason and s.reason:find("terminal", 1, true), "reason names the terminal")
  T.eq(s.up, false)
  T.raises(panel.on, "not a terminal")
  panel.off()  -- safe when nothing is up
  T.eq(gwb.panel_allowed, false)
end)

T.test("gwb.bench times calls and returns ordered statistics", function()
  local n = 0
  local r = gwb.bench(function() n = n + 1 end, { runs = 50, warmup = 3, log = false })
  T.eq(r.calls, 50)
  T.eq(n, 53, "warmup calls are made but not timed")
  T.ok(r.min_ms <= r.median_ms and r.median_ms <= r.max_ms)
  T.ok(r.mean_ms >= r.min_ms and r.mean_ms <= r.max_ms)
  local t = gwb.bench(function() end, { seconds = 0.15, log = false })
  T.ok(t.total_s >= 0.15 and t.total_s < 1.5, "ran for about the time asked: " .. t.total_s)
  T.ok(t.calls > 10)
end)

T.test("gwb.bench reports progress as a phase and in the panel summary", function()
  gpu.reset()
  gwb.bench(function() end, { seconds = 0.12, label = "phase-x", log = false })
  T.ok(panel.status().summary:find("phase-x", 1, true), panel.status().summary)
end)

T.test("gwb.bench: errors propagate, bad options are named", function()
  T.raises(function() gwb.bench(function() error("boom-42") end, { runs = 3, warmup = 0, log = false }) end, "boom-42")
  T.raises(function() gwb.bench(function() end, { runs = -1 }) end, "runs")
  T.raises(function() gwb.bench(function() end, { second = 1 }) end, "second")
  T.raises(function() gwb.bench(42) end, "function expected")
  -- progress state was cleaned up: a later run still works
  T.eq(gwb.bench(function() end, { runs = 2, log = false }).calls, 2)
end)

T.test("gwb.bench appends a run record through gwb_lua_log_run", function()
  if not os.getenv("GWB_RUNS") then T.skip("GWB_RUNS not set (run through tests/run)") end
  local before = #runs { kind = "bench" }
  gwb.bench(function() end, { runs = 5, label = "logged" })
  local after = runs { kind = "bench" }
  T.eq(#after, before + 1)
  local rec = after[#after]
  T.eq(rec.params.label, "logged")
  T.eq(rec.metrics.calls, 5)
  T.eq(rec.version, gwb.version)
  T.ok(rec.timing.median_ms >= 0)
end)

T.test("gwb.telemetry switches kernel records off and on", function()
  local old = gwb.telemetry()
  T.eq(gwb.telemetry(false), false)
  T.eq(panel.status().telemetry, false)
  T.eq(gwb.telemetry(true), true)
  gwb.telemetry(old)
  T.raises(function() gwb.telemetry("yes") end, "boolean expected")
end)

T.test("occupancy calculator: each resource can be the limit", function()
  local function occ(regs, smem, block) return gpu.occupancy({ regs = regs, smem = smem }, block) end
  local a = occ(16, 0, 1024)        -- 2 blocks of 32 warps fill 64 warps
  T.eq(a.limits.warps, a.max_warps // 32)
  T.near(a.occupancy, 1.0, 1e-9)
  local b = occ(128, 0, 256)        -- 128 regs x 256 threads: registers
  T.eq(b.limited_by, "registers")
  T.ok(b.occupancy < 0.5)
  local c = occ(16, 100 * 1024, 128) -- 100 KB of shared memory per block
  T.eq(c.limited_by, "shared memory")
  T.ok(c.active_blocks <= 2)
  local d = occ(16, 0, 32)          -- tiny blocks: the blocks-per-SM cap
  T.eq(d.limited_by, "blocks")
  for _, r in ipairs { a, b, c, d } do
    T.ok(r.occupancy > 0 and r.occupancy <= 1)
    T.eq(r.active_warps, r.active_blocks * math.ceil(r.block / 32))
  end
  -- more registers never raise occupancy
  local last = 2
  for regs = 16, 255, 16 do
    local o = occ(regs, 0, 256).occupancy
    T.ok(o <= last + 1e-12, "monotone in registers")
    last = o
  end
  T.raises(function() occ(32, 0, 4096) end, "block must be")
  T.raises(function() occ(32, 10 * 1024 * 1024, 128) end, "shared memory")
  T.raises(function() gpu.occupancy("no_such_kernel", 128) end, "no kernel named")
  T.eq(type(gpu.occupancy()), "table")
end)

T.test("gpu.bandwidth without a GPU says why and still measures the host", function()
  if gpu.available() then T.skip("a GPU is present (see the gpu test)") end
  local b = gpu.bandwidth { bytes = 1 << 20, reps = 2 }
  T.eq(b.available, false)
  T.ok(#b.reason > 10)
  T.ok(b.host_memcpy_gbps > 0)
  T.raises(function() gpu.bandwidth { bytes = 10 } end, "bytes must be")
end)

T.test("gpu bandwidth and panel memory agree with the device", function()
  T.need_gpu()
  local b = gpu.bandwidth { bytes = 64 << 20, reps = 3, log = false }
  T.ok(b.h2d_pinned_gbps > 1 and b.d2h_pinned_gbps > 1, "pinned copies measured")
  T.ok(b.d2d_gbps > 100, "device copies faster than 100 GB/s")
  T.ok(b.d2d_fraction_of_peak > 0.2 and b.d2d_fraction_of_peak < 1.2, "d2d vs peak: " .. b.d2d_fraction_of_peak)
  local x = gpu.mem()
  local s = panel.status().gpu
  T.ok(s, "the panel sees the GPU once gwb used it")
  T.eq(s.total, x.total)
  T.ok(math.abs(s.free - x.free) <= 64 << 20, "panel free vs cudaMemGetInfo")
  T.eq(s.ours, x.ours)
end)

T.test("gpu.profile runs fn and lists the kernels it launched", function()
  local p = gpu.profile(function() local s = 0; for i = 1, 1000 do s = s + i end end)
  T.eq(type(p.kernels), "table")
  T.eq(#p.kernels, 0, "fn launched no kernel")
  if p.achieved then
    -- CUPTI measured (a GPU that permits profiling): nothing to measure, nothing dropped
    T.ok(gpu.available(), "achieved occupancy needs a GPU")
  else
    -- no GPU, no CUPTI or not permitted: the reason says how to measure instead
    T.ok(p.reason:find("ncu", 1, true), p.reason)
  end
  T.ok(p.wall_ms >= 0)
  T.raises(function() gpu.profile(function() error("inner-7") end) end, "inner-7")
end)

T.test("gpu telemetry off: kernels run but leave no records", function()
  T.need_gpu()
  local old = gwb.telemetry()
  gpu.reset()
  gwb.telemetry(false)
  local ok, m = pcall(teach.measure_transpose, 256, 256, { reps = 1 })
  gwb.telemetry(true)
  T.ok(ok, tostring(m))
  T.ok(m.gpu.padded.correct, "kernels still ran and were right")
  T.eq(#gpu.kernels(), 0, "no kernel records while off")
  teach.measure_transpose(256, 256, { reps = 1 })
  T.ok(#gpu.kernels() >= 3, "records again once on")
  gwb.telemetry(old)
end)
