-- test_mat.lua - the Matrix userdata and the `mat` module: generators, tables, element
-- access, printing, covariance from a Dataset, binary save/load with checksum.

local tmp = T.tmpdir()
local function f32(x) return (string.unpack("f", string.pack("f", x))) end

T.test("mat.randn: shape, dtype, determinism by seed, symmetric option", function()
  local A = mat.randn(3, 5, { seed = 4 })
  T.eq(A.rows, 3); T.eq(A.cols, 5); T.eq(A.dtype, "f64"); T.eq(A.batched, false)
  local B = mat.randn(3, 5, { seed = 4 })
  local C = mat.randn(3, 5, { seed = 5 })
  T.eq(A:get(2, 3), B:get(2, 3))
  T.ok(A:get(2, 3) ~= C:get(2, 3))
  local S = mat.randn(40, 40, { sym = true, dtype = "f32", seed = 1 })
  T.eq(S.dtype, "f32")
  local ok, asym = S:symmetric(0)
  T.ok(ok, "exactly symmetric"); T.eq(asym, 0)
  T.eq(mat.randn(6).cols, 6)
  T.raises(function() mat.randn(3, 4, { sym = true }) end, "square")
  T.raises(function() mat.randn(3, 4, { dtype = "f16" }) end, "dtype")
  T.raises(function() mat.randn(3, 4, { colour = 1 }) end, "unknown option 'colour'")
  T.raises(function() mat.randn(0, 4) end, "rows")
end)

T.test("mat.from: tables of rows, batches, errors that name the entry", function()
  local A = mat.from({ { 1, 2, 3 }, { 4, 5, 6 } })
  T.eq(A.rows, 2); T.eq(A.cols, 3)
  T.eq(A[2][3], 6); T.eq(A:get(1, 2), 2)
  A[2][3] = 7.5
  T.eq(A:get(2, 3), 7.5)
  A:set(1, 1, -1)
  T.eq(A[1][1], -1)
  T.eq(#A, 2); T.eq(#A[1], 3)
  local t = A:totable()
  T.eq(t[2][3], 7.5)
  local B = mat.from({ { { 2, 1 }, { 1, 2 } }, { { 3, 0 }, { 0, 1 } } }, { dtype = "f32" })
  T.eq(B.batched, true); T.eq(B.count, 2); T.eq(B.rows, 2); T.eq(B.dtype, "f32")
  T.eq(B:get(1, 1, 2), 3)
  T.eq(B[2]:get(1, 1), 3)            -- B[b] is a copy of matrix b
  T.raises(function() mat.from({ { 1, 2 }, { 3 } }) end, "row 2")
  T.raises(function() mat.from({ { 1, "x" } }) end, "entry (1, 2)")
  T.raises(function() mat.from({}) end, "empty")
  T.raises(function() return A[3] end, "row index 3 out of range")
  T.raises(function() return A[1][4] end, "column index 4 out of range")
  T.raises(function() A:get(0, 1) end, "out of range")
end)

T.test("mat.laplacian1d/2d: dense structure for small orders", function()
  local L = mat.laplacian1d(5)
  T.eq(L[1][1], 2); T.eq(L[1][2], -1); T.eq(L[1][3], 0); T.eq(L[5][4], -1)
  local L2 = mat.laplacian2d(3)
  T.eq(L2.rows, 9)
  T.eq(L2[5][5], 4); T.eq(L2[5][4], -1); T.eq(L2[5][6], -1); T.eq(L2[5][2], -1); T.eq(L2[5][8], -1)
  T.eq(L2[3][4], 0)                  -- grid row wrap: 3 and 4 are not neighbours
  local s = 0
  for j = 1, 9 do s = s + L2[1][j] end
  T.eq(s, 2)                         -- corner node: 4 - 2 neighbours
  T.eq(L.kind, "dense")               -- small orders are dense (large ones go sparse)
end)

T.test("mat.batch: spectra, dtype, sizes, determinism", function()
  local B = mat.batch(5, 12, { seed = 3, dtype = "f32" })
  T.eq(B.count, 5); T.eq(B.rows, 12); T.eq(B.dtype, "f32"); T.eq(#B, 5)
  T.ok((B:symmetric(0)))
  local B2 = mat.batch(5, 12, { seed = 3, dtype = "f32" })
  T.eq(B:get(3, 4, 5), B2:get(3, 4, 5))
  for _, sp in ipairs { "graded", "clustered", "repeated", "uniform" } do
    local G = mat.batch(2, 9, { spectrum = sp, seed = 1 })
    T.ok(G:symmetric(1e-14), sp .. " is symmetric")
  end
  T.raises(function() mat.batch(2, 4, { spectrum = "odd" }) end, "spectrum")
end)

T.test("mat.spectral builds a matrix with the given eigenvalues", function()
  local A = mat.spectral({ 3, 1, 2, -1 }, { seed = 9 })
  local tr = 0
  for i = 1, 4 do tr = tr + A[i][i] end
  T.near(tr, 5, 1e-13)
  T.near(A:norm(), math.sqrt(9 + 1 + 4 + 1), 1e-13)   -- Frobenius = sqrt(sum l^2)
end)

T.test("printing shows shape, dtype and a corner", function()
  local A = mat.from({ { 1.5, 2 }, { 3, 4 } })
  local s = tostring(A)
  T.ok(s:find("Matrix 2 x 2 f64", 1, true), s)
  T.ok(s:find("1.5", 1, true), s)
  local big = tostring(mat.zeros(10, 10))
  T.ok(big:find("...", 1, true), big)
  local b = tostring(mat.batch(7, 3, { dtype = "f32" }))
  T.ok(b:find("7 matrices of 3 x 3 f32", 1, true), b)
  T.ok(tostring(A[1]):find("row 1: 1.5 2", 1, true))
end)

T.test("save/load round trip (f64, f32, batches, column-major) and corruption", function()
  local cases = {
    mat.randn(7, 5, { seed = 2 }),
    mat.randn(6, 6, { dtype = "f32", seed = 3 }),
    mat.batch(4, 5, { seed = 1 }),
    mat.zeros(3, 2, { layout = "col" }),
  }
  cases[4]:set(3, 2, 42)
  for i, A in ipairs(cases) do
    local p = tmp .. "/m" .. i .. ".gwbm"
    A:save(p)
    local B = mat.load(p)
    T.eq(B.rows, A.rows); T.eq(B.cols, A.cols); T.eq(B.count, A.count)
    T.eq(B.dtype, A.dtype); T.eq(B.layout, A.layout); T.eq(B.batched, A.batched)
    for b = 1, A.count do
      for r = 1, A.rows do
        for c = 1, A.cols do
          if A:get(r, c, b) ~= B:get(r, c, b) then error(("case %d differs at %d,%d,%d"):format(i, r, c, b)) end
        end
      end
    end
  end
  local p = tmp .. "/m1.gwbm"
  local bytes = T.readfile(p)
  local pos = 60
  local flipped = bytes:sub(1, pos - 1) .. string.char((bytes:byte(pos) + 1) % 256) .. bytes:sub(pos + 1)
  T.writefile(tmp .. "/bad.gwbm", flipped)
  T.raises(function() mat.load(tmp .. "/bad.gwbm") end, "checksum")
  T.writefile(tmp .. "/short.gwbm", bytes:sub(1, #bytes - 9))
  T.raises(function() mat.load(tmp .. "/short.gwbm") end, "truncated")
  T.writefile(tmp .. "/text.gwbm", "%%MatrixMarket matrix array real general\n1 1\n1\n")
  T.raises(function() mat.load(tmp .. "/text.gwbm") end, "not a gwb matrix file")
  T.raises(function() mat.load(tmp .. "/nope.gwbm") end, "nope.gwbm")
end)

T.test("mat.cov and mat.corr of a Dataset agree with a direct computation", function()
  local d = data.load("datasets/iris.csv")
  local C = mat.cov(d)
  T.eq(C.rows, 4); T.eq(C.dtype, "f64")
  local x, y = d:column(1), d:column(3)
  local n, mx, my = #x, 0, 0
  for i = 1, n do mx = mx + x[i]; my = my + y[i] end
  mx, my = mx / n, my / n
  local sxy, sxx = 0, 0
  for i = 1, n do sxy = sxy + (x[i] - mx) * (y[i] - my); sxx = sxx + (x[i] - mx) ^ 2 end
  T.near(C[1][3], sxy / (n - 1), 1e-12)
  T.near(C[1][1], sxx / (n - 1), 1e-12)
  T.eq(C[1][3], C[3][1])
  local R = mat.cov(d, { corr = true })
  T.eq(R[2][2], 1)
  local syy = 0
  for i = 1, n do syy = syy + (y[i] - my) ^ 2 end
  T.near(R[1][3], sxy / math.sqrt(sxx * syy), 1e-12)
  T.near(mat.corr(d)[1][3], R[1][3], 0)
end)

T.test("a closed matrix says so", function()
  local A = mat.zeros(2)
  A:close()
  T.ok(tostring(A):find("closed", 1, true))
  T.raises(function() A:get(1, 1) end, "closed")
end)

-- f32 storage rounds on set.
T.test("f32 matrices round element writes", function()
  local A = mat.zeros(1, 1, { dtype = "f32" })
  A:set(1, 1, 0.1)
  T.eq(A:get(1, 1), f32(0.1))
end)
