-- test_memory.lua - every gwb object that owns C memory reports its bytes to the collector
-- (gwb.external_bytes, src/lapi_mem.c): counted when made, subtracted when closed or collected.

local function ext() return (gwb.external_bytes()) end

local function counts(name, make, want, close)
  collectgarbage("collect")
  local before = ext()
  local x = make()
  local got = ext() - before
  T.ok(got >= want and got <= want * 1.5 + 65536,
    string.format("%s: counted %d bytes, want about %d", name, got, want))
  if close then close(x) else x = nil; collectgarbage("collect") end
  T.ok(ext() <= before, string.format("%s: %d bytes still counted after it was released", name, ext() - before))
end

T.test("Matrix, batch, SparseMatrix, Dataset, Eigen and Forest bytes are counted and released", function()
  counts("Matrix", function() return mat.zeros(500, 400) end, 500 * 400 * 8, function(A) A:close() end)
  counts("Matrix (collected)", function() return mat.zeros(300, 300) end, 300 * 300 * 8)
  counts("batch", function() return mat.batch(50, 16, { seed = 1 }) end, 50 * 16 * 16 * 8)
  counts("SparseMatrix", function() return mat.laplacian1d(100000, { sparse = true }) end,
    100001 * 4 + 299998 * 12)
  counts("Dataset", function() return data.synth { rows = 20000, features = 10, seed = 1 } end,
    20000 * 11 * 4, function(d) d:close() end)
  local A = mat.randn(200, 200, { sym = true, seed = 1 })
  counts("Eigen", function() return eig.solve(A, { k = 200, method = "syevd" }) end, 200 * 200 * 8)
  local d = data.synth { rows = 2000, features = 6, seed = 1 }
  counts("Forest", function() return rf.train(d, { trees = 5, depth = 6, seed = 1 }) end, 5 * 40)
end)

T.test("a loop of dropped matrices stays at about one matrix", function()
  collectgarbage("collect")
  local before, runs0 = gwb.external_bytes()
  local peak = 0
  for i = 1, 30 do
    local A = mat.zeros(2048, 2048)   -- 32 MiB
    A[1][1] = i
    peak = math.max(peak, ext() - before)
  end
  local _, runs1 = gwb.external_bytes()
  T.ok(runs1 > runs0, "the count never ran the collector")
  -- the collector runs once the count has grown by the larger of 64 MiB and what was live
  -- after the last collection (earlier tests' objects count there), plus the matrix in hand
  local bound = math.max(64 * 2^20, before) + 2 * 32 * 2^20
  T.ok(peak <= bound, string.format("peak %d bytes counted for 32 MiB matrices (bound %d, %d live before, %d collections)",
    peak, bound, before, runs1 - runs0))
end)

T.test("a collection that is not the count's own lowers its threshold", function()
  -- twelve matrices live, then dropped and collected by the user: the threshold follows what
  -- is live now, not the 384 MiB live at the count's last collection
  local keep = {}
  for i = 1, 12 do keep[i] = mat.zeros(2048, 2048) end
  keep = nil
  collectgarbage("collect")
  local before = ext()
  local peak = 0
  for _ = 1, 30 do
    local A = mat.zeros(2048, 2048)
    peak = math.max(peak, ext() - before)
  end
  local bound = math.max(64 * 2^20, before) + 2 * 32 * 2^20
  T.ok(peak <= bound, string.format("peak %d bytes counted after a user's collection (bound %d)", peak, bound))
end)

T.test("a finalizer that makes a gwb object counts no collection", function()
  -- inside a __gc Lua collects nothing (lua_gc answers -1); the count must not record one, or
  -- its threshold rises to what is dead
  collectgarbage("collect")
  local _, runs0 = gwb.external_bytes()
  for i = 1, 30 do
    setmetatable({}, { __gc = function() local z = mat.zeros(1, 1) end })
    for _ = 1, 200 do local t = {} end   -- Lua's own steps run the finalizers
    local A = mat.zeros(2048, 2048)
    A[1][1] = i
  end
  local _, runs1 = gwb.external_bytes()
  -- a collection needs 64 MiB of new objects since the last: 30 x 32 MiB allow at most 15
  T.ok(runs1 - runs0 <= 15, string.format("%d collections counted for 30 x 32 MiB", runs1 - runs0))
end)
