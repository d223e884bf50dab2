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
  T.raises(function() teach.occupancy() end, "name one of gwb's kernels")
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
