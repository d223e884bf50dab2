-- test_teach.lua - the lessons: transpose numbers are measured and correct, occupancy bars
-- follow the calculator, layout maps every element to the right block and warp.

T.test("every teach function has a help text written out", function()
  for k, v in pairs(teach) do
    if type(v) == "function" then
      local e = gwb.helpentry(v)
      T.ok(e and #e.text > 200, "no (or a thin) help text for teach." .. k)
    end
  end
end)

T.test("teach.transpose measures every CPU variant correctly and explains bank conflicts", function()
  local l = teach.transpose { rows = 300, cols = 200, reps = 2 }
  local s = tostring(l)
  for _, v in ipairs { "naive", "blocked", "threads" } do
    T.ok(l.cpu[v].correct, v .. " result matches")
    T.ok(l.cpu[v].gbps > 0 and l.cpu[v].ms > 0, v .. " was timed")
  end
  T.ok(s:find("32 banks", 1, true) and s:find("32x33", 1, true), "bank conflicts explained")
  T.ok(s:find("GB/s", 1, true))
  if gpu.available() then
    T.ok(l.gpu and l.gpu.padded.correct)
  else
    T.ok(l.gpu_reason and s:find("No GPU here", 1, true), "says it shows CPU numbers only")
  end
  T.raises(function() teach.transpose { rows = 0 } end, "rows and cols")
end)

-- Which kernel is faster is a benchmark question (scripts/bench/data.lua), not asserted here:
-- under compute-sanitizer every kernel is serialised and timings mean nothing.
T.test("gpu teach.transpose: the three kernels agree with the CPU", function()
  T.need_gpu()
  local l = teach.transpose { rows = 4096, cols = 4096, reps = 5 }
  for _, v in ipairs { "naive", "tiled", "padded" } do T.ok(l.gpu[v].correct, v) end
  for _, v in ipairs { "naive", "tiled", "padded" } do T.ok(l.gpu[v].gbps > 0, v .. " timed") end
end)

T.test("teach.occupancy: rows follow gpu.occupancy, best is the highest", function()
  local l = teach.occupancy({ regs = 64, smem = 0 }, { blocks = { 64, 128, 256, 512, 1024 } })
  T.eq(#l.rows, 5)
  for _, r in ipairs(l.rows) do
    T.near(r.occupancy, gpu.occupancy({ regs = 64, smem = 0 }, r.block).occupancy, 1e-12)
    T.ok(r.occupancy <= l.best.occupancy + 1e-12)
  end
  T.ok(tostring(l):find("limited by", 1, true))
  local big = teach.occupancy { regs = 200, smem = 0 }
  T.ok(tostring(big):find("cannot launch", 1, true), "sizes that cannot launch are named")
  -- no argument: the forest's histogram kernel (without a GPU, from the build's table)
  T.ok(#teach.occupancy().rows > 0, "teach.occupancy() with no argument draws rf_hist")
  T.raises(function() teach.occupancy("no_such_kernel") end, "no kernel named")
end)

T.test("teach.layout maps elements to blocks and warps", function()
  local l = teach.layout({ 2, 2 }, { 32, 2 }, { row = 3, col = 40 })
  T.eq(l.width, 64)
  T.eq(l.height, 4)
  local s = tostring(l)
  -- element (3, 40): block (1, 1) = D, thread (8, 1) = 40 of its block, warp 1, lane 8
  T.ok(s:find("blockIdx = (1, 1), threadIdx = (8, 1), thread 40 of its block, warp 1, lane 8; index 232", 1, true), s)
  local maps = {}
  for line in s:gmatch("[^\n]+") do if line:match("^  [A-Z]+$") then maps[#maps + 1] = line end end
  T.eq(#maps, 4)
  T.eq(maps[1], "  " .. string.rep("A", 32) .. string.rep("B", 32))
  T.eq(maps[4], "  " .. string.rep("C", 32) .. string.rep("D", 32))
  T.ok(not s:find("not a multiple of 32", 1, true))
  T.ok(tostring(teach.layout(3, 48)):find("not a multiple of 32", 1, true))
  T.raises(function() teach.layout(1, 2048) end, "at most 1024")
  T.raises(function() teach.layout("x", 1) end, "grid must be")
end)

-- --- the measured lessons ----------------------------------------------------------------
-- Small sizes so the CPU side runs in CI in well under a second each; the text must show the
-- numbers the lesson returns (it prints nothing it did not measure).

local small = {
  memory = { reps = 1, max_bytes = 1 << 20, touched = 4 << 20, gpu_max_bytes = 64 << 20, work = 0.01 },
  coalescing = { reps = 1, bytes = 4 << 20, rows = 1 << 14, gpu_bytes = 16 << 20, gpu_rows = 1 << 18 },
  banks = { reps = 1, rows = 256, work = 0.02 },
  atomics = { reps = 1, rows = 1 << 14, gpu_rows = 1 << 18 },
  histogram = { reps = 1, rows = 1 << 12, gpu_rows = 1 << 16 },
  divergence = { reps = 1, elems = 1 << 14, work = 0.02 },
  launch = { reps = 1, count = 50, cpu_count = 4, elems = 256 },
}

local function has(s, fmt, ...)
  local want = string.format(fmt, ...)
  T.ok(s:find(want, 1, true), "text shows " .. want .. "\n" .. s)
end

local function positive(list, what)
  T.ok(type(list) == "table" and #list > 0, what .. " measured")
  for i, v in ipairs(list) do T.ok(v > 0 and v == v, string.format("%s[%d] = %s", what, i, tostring(v))) end
end

T.test("teach() lists every lesson, each callable with a help text", function()
  local s = tostring(teach())
  for _, n in ipairs { "memory", "coalescing", "banks", "atomics", "histogram", "divergence", "launch",
      "transpose", "occupancy", "layout" } do
    T.ok(s:find("teach." .. n, 1, true), "listed: " .. n)
    T.ok(type(teach[n]) == "function", "teach." .. n .. " exists")
  end
end)

T.test("teach.memory: the CPU sweep is measured and shown", function()
  local l = teach.memory(small.memory)
  local s = tostring(l)
  T.ok(rawequal(next(l) and l, l) and small.memory.cpu == nil and small.memory.l2_bytes == nil,
    "the options table is left as it was (the result is a new table)")
  T.eq(#l.cpu.sizes, #l.cpu.gbps)
  T.eq(l.cpu.sizes[1], 4096)
  T.eq(l.cpu.sizes[#l.cpu.sizes], 1 << 20)
  positive(l.cpu.gbps, "cpu.gbps")
  has(s, "%.1f GB/s", l.cpu.l1_gbps)
  T.ok(s:find("working set", 1, true))
  if not gpu.available() then T.ok(s:find("on this CPU only", 1, true), "says where it measured") end
  T.raises(function() teach.memory { max_bytes = 10 } end, "max_bytes must be 65536..")
  T.raises(function() teach.memory { reps = 0 } end, "teach.memory: reps must be 1..32 (got 0)")
  T.raises(function() teach.memory { nope = 1 } end, "unknown option 'nope'")
  T.raises(function() teach.memory(3) end, "options must be a table")
  T.raises(function() teach.memory { work = 2 } end, "work must be in (0, 1]")
end)

T.test("teach.coalescing: strides and the SoA/AoS scan", function()
  local l = teach.coalescing(small.coalescing)
  local s = tostring(l)
  T.eq(#l.strides, 6)
  positive(l.cpu.gbps, "cpu.gbps")
  T.ok(l.cpu.aos_ms > 0 and l.cpu.soa_ms > 0)
  has(s, "AoS %.3f ms, SoA %.3f ms", l.cpu.aos_ms, l.cpu.soa_ms)
  has(s, "%14.2f", l.cpu.gbps[1])
  T.raises(function() teach.coalescing { features = 1 } end, "features must be 2..256 (got 1)")
end)

T.test("teach.banks: the CPU's cache-set conflicts, the GPU's bank table", function()
  local l = teach.banks(small.banks)
  local s = tostring(l)
  T.eq(#l.cpu.pitches, #l.cpu.ns)
  positive(l.cpu.ns, "cpu.ns")
  has(s, "%7.2f ns", l.cpu.ns[1])
  T.ok(s:find("32 banks", 1, true) and s:find("gcd(stride, 32)", 1, true))
  T.raises(function() teach.banks { rows = 1 << 20 } end, "rows must be 64..65536")
end)

T.test("teach.atomics: both CPU voting modes agree and are timed", function()
  local l = teach.atomics(small.atomics)
  local s = tostring(l)
  T.eq(#l.classes, 8)
  positive(l.cpu.shared_ms, "cpu.shared_ms")
  positive(l.cpu.private_ms, "cpu.private_ms")
  has(s, "%15.3f %15.3f", l.cpu.shared_ms[1], l.cpu.private_ms[1])
  T.raises(function() teach.atomics { threads = 0 } end, "threads must be 1..64")
end)

T.test("teach.histogram: shared and private histograms agree and are timed", function()
  local l = teach.histogram(small.histogram)
  local s = tostring(l)
  T.eq(#l.bins, 4)
  positive(l.cpu.shared_ms, "cpu.shared_ms")
  has(s, "256 bins: shared %.3f ms, private %.3f ms", l.cpu.shared_ms[4], l.cpu.private_ms[4])
end)

T.test("teach.divergence and teach.launch: measured and shown", function()
  local d = teach.divergence(small.divergence)
  T.eq(#d.cpu.fractions, #d.cpu.ns)
  positive(d.cpu.ns, "cpu.ns")
  has(tostring(d), "%14.2f", d.cpu.ns[1])
  local l = teach.launch(small.launch)
  T.ok(l.cpu.many_ms > 0 and l.cpu.one_ms > 0)
  has(tostring(l), "%d tasks on a thread each %.3f ms", l.cpu.count, l.cpu.many_ms)
  T.raises(function() teach.launch { elems = 0 } end, "elems must be 1..")
end)

T.test("teach.layout: the forest's histogram kernel and the Jacobi kernel", function()
  local h = teach.layout("rf_hist", { block = 64, rows = 200, features = 3, bins = 16, classes = 2 })
  -- row 100 of the chunk: thread 36 (100 - 64), warp 1, lane 4, second pass
  T.eq(h.map[101].thread, 36)
  T.eq(h.map[101].warp, 1)
  T.eq(h.map[101].lane, 4)
  T.eq(h.map[101].pass, 1)
  T.eq(h.smem_bytes, 3 * 16 * 3 * 4)
  T.raises(function() teach.layout("rf_hist", { block = 48 }) end, "multiple of 32")
  local j = teach.layout("jacobi", { n = 8, round = 1 })
  T.eq(j.lanes, 4)
  T.eq(#j.pairs, 4)
  -- every column appears in exactly one pair of a round
  local seen = {}
  for _, p in ipairs(j.pairs) do
    T.ok(not seen[p.p] and not seen[p.q], "a column in two pairs")
    seen[p.p], seen[p.q] = true, true
  end
  for c = 0, 7 do T.ok(seen[c], "column " .. c .. " paired") end
  T.eq(table.concat(j.lane_rows[2], ","), "1,5")
  T.raises(function() teach.layout("jacobi", { n = 8, round = 7 }) end, "round must be 0..6")
end)

T.test("teach lesson: Ctrl-C stops a long measurement", function()
  local t0 = os.time()
  os.execute("(sleep 0.3; kill -INT $PPID) >/dev/null 2>&1 &")
  local okc, err = pcall(teach.divergence, { elems = 1 << 26, reps = 32, gpu = false })
  T.ok(not okc, "interrupted, not finished")
  T.ok(tostring(err):find("interrupted", 1, true), "message: " .. tostring(err))
  T.ok(os.time() - t0 <= 30, "stopped promptly")
end)

-- On the H200 the lessons' claims must hold as measured. Timings under compute-sanitizer mean
-- nothing (every kernel is serialised), so gpu-check's sanitizer runs set GWB_SANITIZER.
T.test("gpu teach lessons: the measured ordering holds on the card", function()
  T.need_gpu()
  if os.getenv("GWB_SANITIZER") then T.skip("timings under compute-sanitizer mean nothing") end
  local b = teach.banks { reps = 5 }
  T.ok(b.gpu.padded_ms < b.gpu.tile_ms, string.format("padded %.3f ms < unpadded %.3f ms", b.gpu.padded_ms, b.gpu.tile_ms))
  T.ok(b.gpu.ms[32] > 4 * b.gpu.ms[1], "a 32-way conflict is slower than none")
  local c = teach.coalescing { reps = 5 }
  T.ok(c.gpu.float[1] > 2 * c.gpu.float[6], string.format("coalesced %.0f GB/s > strided %.0f GB/s", c.gpu.float[1], c.gpu.float[6]))
  T.ok(c.gpu.soa_ms < c.gpu.aos_ms, "SoA scan faster than AoS")
  local m = teach.memory { reps = 3 }
  T.ok(m.host, "host link measured")
  T.ok(m.host.h2d_pinned_gbps > m.host.h2d_pageable_gbps, "pinned faster than pageable")
  T.ok(m.gpu.l2_gbps > m.gpu.dram_gbps, "L2 faster than device memory")
  local l = teach.launch { reps = 5 }
  T.ok(l.gpu.one_ms < l.gpu.many_ms, "one batched launch beats many")
  local d = teach.divergence { reps = 5 }
  T.ok(d.gpu.ms[#d.gpu.ms] > 1.5 * d.gpu.ms[1], "split warps run both sides")
end)

T.test("gpu teach lessons: every GPU measurement runs and checks itself", function()
  T.need_gpu()
  for name, o in pairs(small) do
    local l = teach[name](o)
    T.ok(l.gpu, name .. ": measured on the GPU")
    T.ok(#tostring(l) > 200, name .. ": text")
  end
end)
