-- test_edges.lua - the smaller hardening items of issue 26: mat.read of a directory, a
-- negative field in a .gwbs header, a userdata given a gwb metatable through the debug
-- library, close() twice on every closable type, teach.transpose(n).

T.test("mat.read of a directory says so (it asked malloc for 2^63 bytes)", function()
  local dir = T.tmpdir() .. "/gwb_edges_dir"
  os.execute("mkdir -p '" .. dir .. "'")
  T.raises(function() mat.read(dir) end, "is a directory")
  T.raises(function() mat.read(dir .. "/") end, "is a directory")
end)

T.test("a negative cols in a .gwbs header names the field, not the version", function()
  local p = T.tmpdir() .. "/gwb_edges.gwbs"
  mat.randsym(20, { density = 0.2, seed = 1 }):save(p)
  local s = T.readfile(p)
  T.eq(string.unpack("<I4", s, 5), 1, "the version")
  -- magic, u32 version, i64 rows (9..16), i64 cols (17..24), i64 nnz (25..32)
  T.writefile(p, s:sub(1, 16) .. string.pack("<i8", -3) .. s:sub(25))
  local e = T.raises(function() mat.read(p) end, "cols = -3")
  T.ok(not e:find("version", 1, true), e)
  T.writefile(p, s:sub(1, 24) .. string.pack("<i8", -1) .. s:sub(33))
  T.raises(function() mat.read(p) end, "nnz = -1")
  T.writefile(p, s:sub(1, 4) .. string.pack("<I4", 7) .. s:sub(9))
  T.raises(function() mat.read(p) end, "unsupported .gwbs version 7")
  os.remove(p)
end)

T.test("a userdata given a gwb metatable through the debug library: the error says what it is", function()
  local d = data.synth { rows = 10, features = 4 }
  local A = mat.randn(3, 3)
  debug.setmetatable(A, getmetatable(d))
  local e = T.raises(function() return A.rows end, "got a gwb.Matrix wearing gwb.Dataset's metatable")
  T.ok(not e:find("got gwb.Dataset", 1, true), e)
  T.raises(function() rf.train(A) end, "it is not a gwb.Dataset")
  local f = io.open(T.tmpdir() .. "/gwb_edges_file", "w")
  debug.setmetatable(f, getmetatable(d))
  T.raises(function() rf.train(f) end, "a userdata gwb did not make wearing gwb.Dataset's metatable")
  -- an ordinary wrong type keeps the ordinary message
  T.raises(function() rf.train(mat.randn(2, 2)) end, "expected, got gwb.Matrix")
end)

T.test("a gwb object wearing another type's metatable is still freed when collected", function()
  -- the Dataset's __gc left a Matrix alone (its tag differs) and the Matrix leaked (make
  -- sanitize's LeakSanitizer found it)
  local mt = getmetatable(data.synth { rows = 10, features = 4 })
  collectgarbage()
  collectgarbage()
  local before = gwb.external_bytes()
  do
    local A = mat.randn(300, 300)
    T.ok(gwb.external_bytes() >= before + 300 * 300 * 8, "the matrix is counted")
    debug.setmetatable(A, mt)
    local S = mat.laplacian2d(40)
    debug.setmetatable(S, getmetatable(mat.randn(1, 1)))
  end
  collectgarbage()
  collectgarbage()
  T.eq(gwb.external_bytes(), before)
end)

T.test("close() twice does nothing on every closable type; other uses of a closed object raise", function()
  local made = {
    Dataset = function() return data.synth { rows = 8, features = 4 } end,
    Matrix = function() return mat.randn(3, 3) end,
    SparseMatrix = function() return mat.laplacian2d(3) end,
    Eigen = function() return eig.solve(mat.randn(4, 4, { sym = true })) end,
    Forest = function() return rf.train(data.synth { rows = 20, features = 4 }, { trees = 1, progress = false }) end,
  }
  for name, mk in pairs(made) do
    local x = mk()
    x:close()
    T.ok(pcall(function() x:close() end), name .. ": a second close")
    T.ok(pcall(x.close, x), name .. ": x.close(x) again")
  end
  local d = made.Dataset()
  d:close()
  d:close()
  T.raises(function() return d.rows end, "closed")
  local f = made.Forest()
  f:close()
  f:close()
  T.raises(function() return f.trees end, "closed")
end)

T.test("teach.transpose(n): an n x n lesson, or a clear limit", function()
  T.raises(function() teach.transpose(1e6) end, "rows and cols must be 1..65536 (got 1000000 x 1000000)")
  T.raises(function() teach.transpose(2 ^ 40) end, "got 1099511627776 x 1099511627776")
  T.raises(function() teach.transpose(1.5) end, "a whole number of rows (got 1.5)")
  T.raises(function() teach.transpose("big") end, "(got string)")
end)
