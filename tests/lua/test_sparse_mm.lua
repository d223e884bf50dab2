-- test_sparse_mm.lua - Matrix Market files from Lua (round trips, errors with line numbers)
-- and real SuiteSparse matrices (datasets/matrices) solved sparse vs dense.
local test, ok, eq, near, raises = T.test, T.ok, T.eq, T.near, T.raises

local M = "datasets/matrices/"

test("mat.read: real, integer and pattern SuiteSparse files", function()
  local A = mat.read(M .. "bcsstk04.mtx")
  eq(A.rows, 132)
  eq(A.nnz, 2 * 1890 - 132, "lower triangle mirrored")
  ok(A:symmetric())
  local T2 = mat.read(M .. "Trefethen_2000.mtx")
  eq(T2.rows, 2000)
  eq(T2:get(1, 1), 2)          -- primes on the diagonal
  eq(T2:get(2000, 2000), 17389)
  eq(T2:get(1, 2), 1)          -- |i - j| = 1 is a power of two
  eq(T2:get(1, 4), 0)
  local C = mat.read(M .. "crack.mtx")
  eq(C.rows, 10240)
  ok(C.nnz > 30380 and C.nnz <= 2 * 30380, "pattern entries mirrored")
  ok(C:symmetric())
  eq(C:get(806, 1), 1)         -- the first entry of the file, and its mirror
  eq(C:get(1, 806), 1)
  ok(tostring(C):find("crack.mtx", 1, true))
end)

test("Matrix Market round trips: sparse and dense", function()
  local dir = T.tmpdir()
  local A = mat.randsym(500, { density = 0.02, seed = 11, diag = true })
  mat.write(A, dir .. "/a.mtx")
  local B = mat.read(dir .. "/a.mtx")
  eq(B.nnz, A.nnz)
  local x = {}
  for i = 1, 500 do x[i] = math.cos(i) end
  local ya, yb = A:spmv(x), B:spmv(x)
  for i = 1, 500 do eq(ya[i], yb[i], "bit-exact values after a round trip") end
  ok(T.readfile(dir .. "/a.mtx"):find("coordinate real symmetric", 1, true))
  -- the method form, and a dense matrix through the array format
  A:write(dir .. "/b.mtx", "hello")
  ok(T.readfile(dir .. "/b.mtx"):find("% hello", 1, true))
  local D = mat.laplacian1d(7)
  mat.write(D, dir .. "/d.mtx")
  local D2 = mat.read(dir .. "/d.mtx")
  eq(getmetatable(D2).__name, "gwb.Matrix")
  for i = 1, 7 do for j = 1, 7 do eq(D2:get(i, j), D:get(i, j)) end end
  -- SuiteSparse file -> write -> read gives the same matrix
  local K = mat.read(M .. "494_bus.mtx")
  mat.write(K, dir .. "/k.mtx")
  local K2 = mat.read(dir .. "/k.mtx")
  eq(K2.nnz, K.nnz)
  for _, ij in ipairs { { 1, 1 }, { 494, 494 }, { 2, 1 } } do eq(K2:get(ij[1], ij[2]), K:get(ij[1], ij[2])) end
end)

test("binary save/load: exact round trip, damage detected", function()
  local dir = T.tmpdir()
  local A = mat.randsym(400, { density = 0.03, seed = 5 })
  A:save(dir .. "/a.gwbs")
  local B = mat.read(dir .. "/a.gwbs")
  eq(B.nnz, A.nnz)
  eq(B.name, A.name)
  ok(B:symmetric())
  local x = {}
  for i = 1, 400 do x[i] = 1 / i end
  local ya, yb = A:spmv(x), B:spmv(x)
  for i = 1, 400 do eq(ya[i], yb[i]) end
  -- flip one byte in the values: the checksum catches it
  local bytes = T.readfile(dir .. "/a.gwbs")
  local pos = #bytes - 20
  local flipped = bytes:sub(1, pos - 1) .. string.char((bytes:byte(pos) + 1) % 256) .. bytes:sub(pos + 1)
  T.writefile(dir .. "/bad.gwbs", flipped)
  raises(function() mat.read(dir .. "/bad.gwbs") end, "checksum")
  T.writefile(dir .. "/short.gwbs", bytes:sub(1, 200))
  raises(function() mat.read(dir .. "/short.gwbs") end, "truncated")
end)

test("Matrix Market errors name the file and line", function()
  local dir = T.tmpdir()
  local function bad(text, want)
    T.writefile(dir .. "/bad.mtx", text)
    local err = raises(function() mat.read(dir .. "/bad.mtx") end, want)
    ok(err:find("bad.mtx", 1, true), "names the file: " .. err)
  end
  bad("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 2\n", "bad.mtx:4: expected 3 values")
  bad("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n", "bad.mtx:3: entry (3, 1) is outside")
  bad("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n", "after 1 of the 3 entries")
  bad("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n", "complex")
  bad("%%MatrixMarket matrix coordinate real general\n2 x 1\n", "bad.mtx:2: bad size line")
  bad("not a matrix\n", "not a Matrix Market file")
  raises(function() mat.read(dir .. "/does-not-exist.mtx") end, "cannot open")
end)

test("SuiteSparse matrices: sparse solvers agree with the dense solver", function()
  for _, f in ipairs { "bcsstk04.mtx", "494_bus.mtx", "1138_bus.mtx" } do
    local A = mat.read(M .. f)
    local ed = eig.solve(A:todense(), { vectors = false })
    local all = ed.values
    local scale = math.max(math.abs(all[1]), math.abs(all[#all]))
    local hi = eig.solve(A, { k = 4, which = "largest" })
    ok(hi.converged, f)
    for i = 1, 4 do
      near(hi.values[i], all[#all - 4 + i], 1e-10 * scale, f .. " largest " .. i)
      ok(hi.residuals[i] <= 1e-10, f .. " residual")
    end
  end
  -- 494_bus: the smallest end too (ill-conditioned, well inside the spectrum's scale)
  local A = mat.read(M .. "494_bus.mtx")
  local all = eig.solve(A:todense(), { vectors = false }).values
  local scale = math.max(math.abs(all[1]), math.abs(all[#all]))
  local lo = eig.solve(A, { k = 3, method = "lobpcg" })
  for i = 1, 3 do near(lo.values[i], all[i], 1e-10 * scale, "494_bus smallest " .. i) end
end)

test("auto picks LOBPCG + Jacobi for the smallest end of a stiffness matrix", function()
  -- bcsstk06: a diagonal spanning decades, where Jacobi preconditioning pays
  local A = mat.read(M .. "bcsstk06.mtx")
  local all = eig.solve(A:todense(), { vectors = false }).values
  local scale = math.max(math.abs(all[1]), math.abs(all[#all]))
  local e = eig.solve(A, { k = 5, which = "both" })
  -- the largest end: whichever the gap rule picks (its reason is in the note)
  ok(e.method == "lobpcg+lanczos" or e.method == "lobpcg+chebyshev", e.method)
  ok(e.note:find("auto: ", 1, true), e.note)
  ok(e.converged)
  for i = 1, 5 do
    near(e.values[i], all[i], 1e-10 * scale, "bcsstk06 smallest " .. i)
    near(e.values[5 + i], all[#all - 5 + i], 1e-10 * scale, "bcsstk06 largest " .. i)
  end
  for i = 1, 10 do ok(e.residuals[i] <= 1e-10, "residual " .. i) end
  -- a crowded end (a large 2-D Laplacian: constant diagonal) stays with Chebyshev, whose
  -- choice the gap ratio of a short Lanczos run makes (maxiter = 1: decided before it runs)
  local f = eig.solve(mat.laplacian2d(200, { sparse = true }), { k = 3, maxiter = 1, backend = "cpu" })
  eq(f.method, "chebyshev")
  ok(f.note:find("auto: chebyshev (gap ratio", 1, true), f.note)
  eq(eig.solve(mat.laplacian1d(100, { sparse = true }), { k = 3 }).method, "dense")
end)
