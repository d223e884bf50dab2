-- test_eig.lua - dense and batched symmetric eigensolvers on the CPU, the SVD, data.pca:
-- residuals and orthogonality on random, graded, clustered and repeated spectra, agreement
-- with LAPACK and with known spectra, the non-symmetric error, the run log.

local spectra = { "randn", "graded", "clustered", "repeated" }

local function max_abs_diff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

local function norm2(v)
  local s = 0
  for i = 1, #v do s = s + v[i] * v[i] end
  return math.sqrt(s)
end

T.test("eig.solve (LAPACK) on random, graded, clustered, repeated spectra: f64 residual and orthogonality <= 1e-12", function()
  for _, sp in ipairs(spectra) do
    local B = mat.batch(1, 60, { spectrum = sp, seed = 11 })
    local e = eig.solve(B:matrix(1))
    T.eq(e.k, 60); T.eq(e.backend, "cpu")
    T.ok(e.max_residual <= 1e-12, sp .. ": residual " .. e.max_residual)
    T.ok(e.orthogonality <= 1e-12, sp .. ": orthogonality " .. e.orthogonality)
    for i = 2, 60 do T.ok(e.values[i] >= e.values[i - 1], "ascending") end
  end
end)

T.test("eig.solve agrees with a known spectrum and with the 1-D Laplacian formula", function()
  local lam = { -2, -1e-9, 0.5, 0.5, 0.5, 3, 7 }
  local e = eig.solve(mat.spectral(lam, { seed = 3 }))
  T.ok(max_abs_diff(e.values, lam) <= 1e-13 * 7, "spectrum: " .. max_abs_diff(e.values, lam))
  local n = 50
  local L = eig.solve(mat.laplacian1d(n), { k = 4 })
  for k = 1, 4 do T.near(L.values[k], 2 - 2 * math.cos(k * math.pi / (n + 1)), 1e-13) end
  local v = L:vector(1)
  T.eq(#v, n)
  T.near(norm2(v), 1, 1e-14)
end)

T.test("cyclic Jacobi and mixed precision agree with LAPACK (f64 residuals)", function()
  for _, sp in ipairs(spectra) do
    local A = mat.batch(1, 40, { spectrum = sp, seed = 5 }):matrix(1)
    local ref = eig.solve(A)
    local scale = math.max(math.abs(ref.values[1]), math.abs(ref.values[40]))
    for _, m in ipairs { "jacobi", "mixed" } do
      local e = eig.solve(A, { method = m, backend = "cpu" })
      T.ok(max_abs_diff(e.values, ref.values) <= 1e-12 * scale, sp .. "/" .. m .. " values")
      T.ok(e.max_residual <= 1e-12, sp .. "/" .. m .. ": residual " .. e.max_residual)
      T.ok(e.orthogonality <= 1e-12, sp .. "/" .. m .. ": orthogonality " .. e.orthogonality)
    end
  end
  local j = eig.solve(mat.randn(30, 30, { sym = true }), { method = "jacobi" })
  T.ok(j.iterations >= 3 and j.iterations <= 20, "sweeps " .. j.iterations)
  T.ok(j.method:find("jacobi", 1, true))
  local h = j.history
  T.eq(#h, j.iterations)
  T.eq(h[1].iteration, 1)
  T.ok(h[1].max_residual > 1e-3 and h[#h].max_residual < 1e-13, "off-diagonal norm falls")
  T.eq(h[#h].converged, 30)
end)

T.test("subsets: k smallest, largest and both match the full solve (dsyevr)", function()
  local A = mat.randn(80, 80, { sym = true, seed = 2 })
  local full = eig.solve(A)
  local s = eig.solve(A, { k = 5, which = "smallest" })
  local l = eig.solve(A, { k = 3, which = "largest" })
  local b = eig.solve(A, { k = 2, which = "both" })
  T.eq(s.k, 5); T.eq(l.k, 3); T.eq(b.k, 4)
  T.ok(s.method:find("syevr", 1, true), s.method)
  for i = 1, 5 do T.near(s.values[i], full.values[i], 1e-12) end
  for i = 1, 3 do T.near(l.values[i], full.values[77 + i], 1e-12) end
  T.near(b.values[1], full.values[1], 1e-12); T.near(b.values[4], full.values[80], 1e-12)
  T.ok(s.max_residual <= 1e-12 and l.max_residual <= 1e-12 and b.max_residual <= 1e-12)
  local nv = eig.solve(A, { k = 3, vectors = false })
  T.eq(nv.max_residual, nil)
  T.raises(function() nv:vector(1) end, "vectors = true")
  T.raises(function() eig.solve(A, { k = 81 }) end, "exceeds")
  T.raises(function() eig.solve(A, { which = "middle" }) end, "which")
  T.raises(function() eig.solve(A, { method = "qr" }) end, "method")
end)

T.test("non-symmetric and non-square input get an error pointing to eig.svd", function()
  local A = mat.randn(6, 6, { seed = 1 })
  T.raises(function() eig.solve(A) end, "eig.svd")
  T.raises(function() eig.solve(A) end, "not symmetric")
  T.raises(function() eig.solve(mat.randn(4, 6)) end, "eig.svd")
  local B = mat.from({ { { 1, 2 }, { 2, 1 } }, { { 1, 2 }, { 3, 1 } } })
  T.raises(function() eig.batched(B) end, "matrix 2 of the batch")
  -- A tiny asymmetry within sym_tol is accepted; a looser tolerance can be asked for.
  local S = mat.from({ { 2, 1 }, { 1 + 1e-13, 2 } })
  T.near(eig.solve(S).values[2], 3, 1e-12)
  local S2 = mat.from({ { 2, 1 }, { 1.001, 2 } })
  T.raises(function() eig.solve(S2) end, "sym_tol")
  T.near(eig.solve(S2, { sym_tol = 1e-2 }).values[1], 1, 1e-2)
end)

T.test("eig.batched on the CPU: f64 and f32, every spectrum, against eig.solve per matrix", function()
  for _, sp in ipairs(spectra) do
    for _, dt in ipairs { "f64", "f32" } do
      local B = mat.batch(12, 24, { spectrum = sp, dtype = dt, seed = 8 })
      local eb = eig.batched(B, { vectors = true, backend = "cpu", threads = 2 })
      T.eq(eb.count, 12); T.eq(eb.backend, "cpu")
      local tol = dt == "f64" and 1e-12 or 1e-5
      T.ok(eb.max_residual <= tol, sp .. "/" .. dt .. " residual " .. eb.max_residual)
      T.ok(eb.orthogonality <= tol, sp .. "/" .. dt .. " orthogonality " .. eb.orthogonality)
      local ref = eig.solve(B:matrix(7):astype("f64"))
      local scale = math.max(math.abs(ref.values[1]), math.abs(ref.values[24]))
      T.ok(max_abs_diff(eb:values(7), ref.values) <= (dt == "f64" and 1e-12 or 1e-5) * scale,
        sp .. "/" .. dt .. " values of matrix 7")
    end
  end
  local eb = eig.batched(mat.batch(6, 10, { seed = 2 }), { backend = "cpu", method = "jacobi", vectors = true })
  T.ok(eb.max_residual <= 1e-12)
  T.eq(#eb:vector(3, 10), 10)
  local novec = eig.batched(mat.batch(3, 5), { backend = "cpu" })
  T.eq(novec.max_residual, nil)
  T.ok(tostring(novec):find("Eigen batch: 3 matrices of order 5", 1, true))
  T.raises(function() eig.batched(mat.batch(3, 5, { dtype = "f32" }), { method = "mixed", backend = "cpu" }) end, "f64")
end)

T.test("residuals stay accurate for entries near the ends of the f64 range (1e+-160, 1e300)", function()
  -- The residual differences are divided by ||A|| before squaring: (1e161 * 1e-15)^2 would
  -- overflow, (1e-159 * 1e-15)^2 underflow to a residual of 0.
  local B = mat.batch(2, 20, { seed = 9 })
  local base = eig.batched(B, { backend = "cpu" })
  for _, f in ipairs { 1e160, 1e-160, 1e300 } do
    local C = B:copy()
    for b = 1, 2 do
      for i = 1, 20 do
        for j = 1, 20 do C:set(i, j, B:get(i, j, b) * f, b) end
      end
    end
    -- mixed solves 2^-e C in f32 first (no overflow, no flush to zero), then refines in f64
    local m = eig.batched(C, { backend = "cpu", method = "mixed", vectors = true })
    T.ok(m.max_residual > 0 and m.max_residual <= 1e-12, ("mixed x %g: residual %s"):format(f, m.max_residual))
    local e = eig.batched(C, { backend = "cpu", vectors = true })
    T.ok(e.max_residual > 0 and e.max_residual <= 1e-12, ("x %g: residual %s"):format(f, e.max_residual))
    T.ok(e.orthogonality <= 1e-12, ("x %g: orthogonality %s"):format(f, e.orthogonality))
    for b = 1, 2 do
      local v, r, d = e:values(b), base:values(b), 0
      for i = 1, #v do d = math.max(d, math.abs(v[i] / f - r[i])) end
      T.ok(d <= 1e-12 * math.abs(r[1]), ("x %g: values off by %.3g"):format(f, d))
    end
  end
end)

T.test("a single result's values are an array and also answer e:values() like a batch's", function()
  local one = eig.batched(mat.batch(1, 6, { seed = 2 }), { backend = "cpu" })
  T.eq(#one.values, 6)
  T.eq(one:values(1)[1], one.values[1])
  T.eq(#one:values(), 6)
  T.raises(function() return one:values(2) end, "out of range")
  local s = eig.solve(mat.laplacian1d(5), { backend = "cpu" })
  T.eq(s:values()[3], s.values[3])
  for i = 2, #s.values do T.ok(s.values[i] >= s.values[i - 1], "ascending") end
end)

T.test("eig.svd: singular values, vectors, residuals, k, shapes", function()
  local A = mat.randn(30, 20, { seed = 6 })
  local s = eig.svd(A)
  T.eq(s.k, 20); T.eq(s.svd, true)
  for i = 2, 20 do T.ok(s.values[i] <= s.values[i - 1], "descending") end
  T.ok(s.max_residual <= 1e-12, "residual " .. s.max_residual)
  T.ok(s.orthogonality <= 1e-12)
  T.eq(#s:vector(1), 20); T.eq(#s:left(1), 30)
  -- sigma_i^2 are the eigenvalues of A^T A: compare the largest with eig.solve.
  local t = {}
  for i = 1, 20 do
    t[i] = {}
    for j = 1, 20 do
      local x = 0
      for r = 1, 30 do x = x + A[r][i] * A[r][j] end
      t[i][j] = x
    end
  end
  local e = eig.solve(mat.from(t))
  T.near(s.values[1] ^ 2, e.values[20], 1e-10 * e.values[20])
  local w = eig.svd(mat.randn(10, 25, { seed = 1 }), { k = 3 })
  T.eq(w.k, 3); T.eq(#w:left(2), 10); T.eq(#w:vector(2), 25)
  T.raises(function() eig.svd(A, { k = 21 }) end, "exceeds")
end)

T.test("data.pca: explained variance from the covariance eigendecomposition", function()
  local d = data.load("datasets/iris.csv")
  local p = data.pca(d, 2)
  T.eq(p.k, 2); T.eq(p.features, 4)
  T.ok(p.values[1] >= p.values[2])
  T.ok(p.ratio[1] > 0.9 and p.ratio[1] < 0.95, "iris PC1 explains ~92%: " .. p.ratio[1])
  T.near(p.cumulative[2], p.ratio[1] + p.ratio[2], 1e-15)
  local total = 0
  local C = mat.cov(d)
  for i = 1, 4 do total = total + C[i][i] end
  T.near(p.values[1] / total, p.ratio[1], 1e-12)
  T.near(norm2(p.components[1]), 1, 1e-12)
  local s = tostring(p)
  T.ok(s:find("explained", 1, true) and s:find("PC1", 1, true), s)
  local S = p:transform(d)
  T.eq(S.rows, 150); T.eq(S.cols, 2)
  -- The variance of the scores on PC1 is the first eigenvalue.
  local m, v = 0, 0
  for i = 1, 150 do m = m + S[i][1] end
  m = m / 150
  for i = 1, 150 do v = v + (S[i][1] - m) ^ 2 end
  T.near(v / 149, p.values[1], 1e-5 * p.values[1])
  T.raises(function() data.pca(d, 5) end, "k must be")
  local r = data.pca(d, 4, { corr = true })
  T.near(r.cumulative[4], 1, 1e-12)
end)

T.test("eig results print a summary and log a run", function()
  local e = eig.solve(mat.laplacian1d(10), { k = 2 })
  local s = tostring(e)
  T.ok(s:find("Eigen: 2 of 10 pairs", 1, true), s)
  T.ok(s:find("max residual", 1, true), s)
  T.ok(e.timing.total_ms >= 0 and e.timing.kernel_ms >= 0)
  local r = runs { kind = "eig.solve" }
  T.ok(#r >= 1, "a run was logged")
  local last = r[#r]
  T.eq(last.kind, "eig.solve")
  T.eq(last.params.k, 2)
  T.eq(last.backend, "cpu")
end)

T.test("gpu backend request without a GPU says why", function()
  if gpu.available() then T.skip("a GPU is present") end
  T.raises(function() eig.solve(mat.laplacian1d(4), { backend = "gpu" }) end, "")
  T.raises(function() eig.batched(mat.batch(2, 4), { method = "cusolver" }) end, "")
end)
