-- test_sparse.lua - sparse matrices and the sparse eigensolvers on the CPU: closed-form
-- Laplacian spectra to 1e-10, multiplicities and clusters (no spurious copies, none missed),
-- every returned pair with residual <= 1e-10 * ||A||, agreement with the dense solver, and
-- the errors users meet.
local test, ok, eq, near, raises = T.test, T.ok, T.eq, T.near, T.raises

local function lap1(n, k) return 2 - 2 * math.cos(k * math.pi / (n + 1)) end

-- The m smallest (or largest) exact eigenvalues of the Laplacian of a grid (dims sizes).
local function lap_spectrum(sizes, m, largest)
  local all = {}
  local function rec(d, acc)
    if d > #sizes then all[#all + 1] = acc return end
    local n = sizes[d]
    for k = 1, n do rec(d + 1, acc + lap1(n, k)) end
  end
  rec(1, 0)
  table.sort(all)
  local out = {}
  for i = 1, m do out[i] = largest and all[#all - m + i] or all[i] end
  return out
end

-- Every pair converged to tol: values match `want` (ascending) to vtol, residuals small,
-- vectors orthonormal.
local function check(e, want, vtol, what)
  ok(e.converged, what .. ": not converged (" .. tostring(e.note) .. ")")
  local v, r = e.values, e.residuals
  eq(#v, #want, what .. ": number of values")
  for i = 1, #want do
    near(v[i], want[i], vtol, string.format("%s: value %d", what, i))
    ok(r[i] <= 1e-10, string.format("%s: residual %d is %g", what, i, r[i]))
  end
  ok(e.orthogonality < 1e-9, what .. ": orthogonality " .. tostring(e.orthogonality))
end

test("laplacian1d: every method finds the analytic ends to 1e-10", function()
  local n = 400
  local A = mat.laplacian1d(n, { sparse = true })
  eq(A.nnz, 3 * n - 2)
  local small, large = {}, {}
  for i = 1, 6 do small[i] = lap1(n, i); large[i] = lap1(n, n - 6 + i) end
  for _, m in ipairs { "auto", "chebyshev", "lanczos", "lobpcg", "randomized", "rand+lanczos", "dense" } do
    check(eig.solve(A, { k = 6, method = m, backend = "cpu" }), small, 1e-10, m .. " smallest")
    check(eig.solve(A, { k = 6, method = m, which = "largest", backend = "cpu" }), large, 1e-10,
      m .. " largest")
  end
  check(eig.solve(A, { k = 6, method = "lanczos", reorth = "full" }), small, 1e-10, "lanczos full")
  check(eig.solve(A, { k = 6, method = "lanczos", ncv = 16 }), small, 1e-10, "lanczos ncv=16")
end)

test("laplacian2d: double eigenvalues come with their multiplicity", function()
  local m = 36
  local A = mat.laplacian2d(m, { sparse = true })
  for _, which in ipairs { "smallest", "largest" } do
    local want = lap_spectrum({ m, m }, 12, which == "largest")
    -- the list has pairs of equal values: a solver that misses a copy or adds one fails
    local doubles = 0
    for i = 2, #want do if math.abs(want[i] - want[i - 1]) < 1e-12 then doubles = doubles + 1 end end
    ok(doubles >= 4, "test spectrum should hold repeated values")
    for _, meth in ipairs { "auto", "lobpcg", "lanczos", "rand+lanczos" } do
      local e = eig.solve(A, { k = 12, which = which, method = meth })
      check(e, want, 1e-10, meth .. " " .. which)
    end
  end
  -- the case where one Lanczos run from a symmetric start sees one copy of each double value:
  -- the deflated check must bring the second copies in
  local B = mat.laplacian2d(30, { sparse = true })
  check(eig.solve(B, { k = 8, method = "rand+lanczos", backend = "cpu" }), lap_spectrum({ 30, 30 }, 8),
    1e-10, "rand+lanczos 30x30")
  -- deflated_check = false skips it (as ARPACK and SLEPc): the note says so, no products for
  -- it, and on a matrix without repeated values the same values
  local R = mat.randsym(3000, { density = 3e-3, seed = 5 })
  local on = eig.solve(R, { k = 5, which = "largest", method = "lanczos" })
  local off = eig.solve(R, { k = 5, which = "largest", method = "lanczos", deflated_check = false })
  ok(on.note:find("deflated check (", 1, true), on.note)
  ok(off.note:find("no deflated check (deflated_check = false)", 1, true), off.note)
  local pon, poff = tonumber(on.note:match("(%d+) products A x")), tonumber(off.note:match("(%d+) products A x"))
  ok(poff < pon, "the check's products are saved: " .. poff .. " against " .. pon)
  for i = 1, 5 do near(off.values[i], on.values[i], 1e-10, "deflated_check = false value " .. i) end
end)

test("laplacian3d: triple eigenvalues and the analytic spectrum to 1e-10", function()
  local A = mat.laplacian3d(12)
  eq(A.rows, 1728)
  eq(A:get(1, 1), 6)
  local want = lap_spectrum({ 12, 12, 12 }, 10)
  -- (1,1,2), (1,2,1), (2,1,1): a triple eigenvalue right after the smallest
  near(want[2], want[4], 1e-13)
  check(eig.solve(A, { k = 10 }), want, 1e-10, "3d auto")
  check(eig.solve(A, { k = 10, method = "lobpcg" }), want, 1e-10, "3d lobpcg")
  local big = lap_spectrum({ 12, 12, 12 }, 4, true)
  check(eig.solve(A, { k = 4, which = "largest" }), big, 1e-10, "3d largest")
  -- non-cubic grid
  local B = mat.laplacian3d(9, 7, 5)
  check(eig.solve(B, { k = 5 }), lap_spectrum({ 9, 7, 5 }, 5), 1e-10, "3d 9x7x5")
end)

-- Three copies of laplacian1d(n) on the diagonal, the second shifted by delta: eigenvalues
-- lambda_i twice (exactly) and lambda_i + delta once (a cluster 1e-9 wide).
local function copies_mtx(n, delta)
  local lines = {}
  local nnz = 0
  for c = 0, 2 do
    for i = 1, n do
      local r = c * n + i
      lines[#lines + 1] = string.format("%d %d %.17g", r, r, 2 + (c == 1 and delta or 0))
      nnz = nnz + 1
      if i > 1 then lines[#lines + 1] = string.format("%d %d -1", r, r - 1); nnz = nnz + 1 end
    end
  end
  return string.format("%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n%s\n",
    3 * n, 3 * n, nnz, table.concat(lines, "\n"))
end

test("repeated and clustered eigenvalues: no spurious copies, none missed", function()
  local n, delta = 150, 1e-9
  local path = T.tmpdir() .. "/copies.mtx"
  T.writefile(path, copies_mtx(n, delta))
  local A = mat.read(path)
  eq(A.rows, 3 * n)
  local want = {}
  for i = 1, 3 do
    local l = lap1(n, i)
    want[#want + 1] = l; want[#want + 1] = l; want[#want + 1] = l + delta
  end
  table.sort(want)
  for _, meth in ipairs { "auto", "chebyshev", "lobpcg", "randomized", "lanczos", "rand+lanczos" } do
    check(eig.solve(A, { k = 9, method = meth }), want, 1e-11, meth)
  end
end)

test("which = both returns k at each end, ascending", function()
  local n = 300
  local A = mat.laplacian1d(n, { sparse = true })
  local e = eig.solve(A, { k = 3, which = "both" })
  local want = { lap1(n, 1), lap1(n, 2), lap1(n, 3), lap1(n, n - 2), lap1(n, n - 1), lap1(n, n) }
  check(e, want, 1e-10, "both")
  -- each vector satisfies its own pair
  local v = e:vector(6)
  local Av = A:spmv(v)
  local r = 0
  for i = 1, n do r = math.max(r, math.abs(Av[i] - e.values[6] * v[i])) end
  ok(r < 1e-9, "A v = lambda v for the largest pair, got " .. r)
end)

test("agreement with the dense solver on small matrices", function()
  local A = mat.randsym(300, { density = 0.05, diag = true, seed = 4 })
  ok(A:symmetric())
  local D = A:todense()
  local ed = eig.solve(D, { vectors = false })
  local all = ed.values
  local scale = math.max(math.abs(all[1]), math.abs(all[#all]))
  for _, meth in ipairs { "chebyshev", "lanczos", "lobpcg", "rand+lanczos" } do
    local lo = eig.solve(A, { k = 5, method = meth })
    local hi = eig.solve(A, { k = 5, method = meth, which = "largest" })
    for i = 1, 5 do
      near(lo.values[i], all[i], 1e-10 * scale, meth .. " smallest " .. i)
      near(hi.values[i], all[#all - 5 + i], 1e-10 * scale, meth .. " largest " .. i)
    end
  end
end)

test("lanczos keeps its accuracy with a large basis and many wanted pairs", function()
  -- a basis of 120+ vectors drifts from orthogonality faster than the omega estimate says;
  -- the measured check must switch to full reorthogonalization instead of stalling near 1e-9
  local A = mat.randsym(500, { density = 0.05, seed = 2, diag = true })
  local all = eig.solve(A:todense(), { vectors = false }).values
  local scale = math.max(math.abs(all[1]), math.abs(all[#all]))
  for _, k in ipairs { 50, 200 } do
    local e = eig.solve(A, { k = k, method = "lanczos" })
    ok(e.converged, "k = " .. k .. ": " .. e.note)
    ok(e.max_residual <= 1e-10, "k = " .. k .. " residual " .. e.max_residual)
    for i = 1, k do near(e.values[i], all[i], 1e-10 * scale, "k = " .. k .. " value " .. i) end
  end
end)

test("convergence history: one entry per iteration, ends converged", function()
  local A = mat.laplacian2d(30, { sparse = true })
  for _, meth in ipairs { "chebyshev", "lanczos", "lobpcg" } do
    local e = eig.solve(A, { k = 4, method = meth })
    local h = e.history
    ok(#h >= 1, meth .. ": empty history")
    eq(#h, e.iterations, meth .. ": history length")
    for i = 2, #h do eq(h[i].iteration, h[i - 1].iteration + 1, meth .. ": iteration numbers") end
    eq(h[#h].converged, 4, meth .. ": last entry")
    ok(h[#h].max_residual <= 1e-10, meth .. ": last residual")
    ok(h[1].max_residual > h[#h].max_residual, meth .. ": residual decreased")
  end
end)

test("errors: non-square, non-symmetric, k >= n, NaN/Inf, bad options", function()
  local dir = T.tmpdir()
  T.writefile(dir .. "/rect.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 2\n1 1 1\n2 4 1\n")
  raises(function() eig.solve(mat.read(dir .. "/rect.mtx"), { k = 1 }) end, "must be square")
  T.writefile(dir .. "/nonsym.mtx",
    "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 1\n3 3 1\n1 2 0.5\n")
  local err = raises(function() eig.solve(mat.read(dir .. "/nonsym.mtx"), { k = 1 }) end,
    "not symmetric")
  ok(err:find("(1, 2)", 1, true), "names the entry: " .. err)
  T.writefile(dir .. "/nan.mtx",
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 2 nan\n3 3 1\n")
  raises(function() eig.solve(mat.read(dir .. "/nan.mtx"), { k = 1 }) end, "NaN or Inf at (2, 2)")
  T.writefile(dir .. "/inf.mtx",
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 2 1\n3 1 inf\n")
  raises(function() eig.solve(mat.read(dir .. "/inf.mtx"), { k = 1 }) end, "NaN or Inf")
  local A = mat.laplacian1d(50, { sparse = true })
  raises(function() eig.solve(A, { k = 50 }) end, "k must be in [1, n)")
  raises(function() eig.solve(A, { k = 0 }) end, "k must be in [1, 100000] (got 0)")
  raises(function() eig.solve(A, { k = 200000 }) end, "k must be in [1, 100000] (got 200000)")
  raises(function() eig.solve(A, { maxiter = 2 ^ 32 | 0 }) end, "maxiter must be in [0, 2147483647]")
  raises(function() eig.solve(A, { block = -1 }) end, "block must be in [0, 100000]")
  raises(function() eig.solve(A, { ncv = 2 ^ 32 | 0 }) end, "ncv must be in [0, 100000]")
  raises(function() eig.solve(A, { degree = 100001 }) end, "degree must be in [0, 100000]")
  raises(function() eig.solve(A, { k = 25, which = "both" }) end, "k must be in [1, n/2)")
  raises(function() eig.solve(A, { which = "middle" }) end, "which must be")
  raises(function() eig.solve(A, { method = "magic" }) end, "method must be")
  raises(function() eig.solve(A, { reorth = "sometimes" }) end, "reorth must be")
  raises(function() eig.solve(A, { tol = 0 }) end, "tol must be")
  raises(function() eig.solve(A, { kk = 3 }) end, "kk")
  raises(function() eig.solve(A, { k = 4, ncv = 3, method = "lanczos" }) end, "ncv must exceed k")
  raises(function() mat.randsym(10, { density = 2 }) end, "density")
  raises(function() mat.laplacian3d(0) end, ">= 1")
  -- a method that cannot reach tol in maxiter says so in the result instead of lying
  local e = eig.solve(mat.laplacian1d(2000, { sparse = true }), { k = 3, method = "lanczos", maxiter = 1 })
  eq(e.converged, false)
end)

test("sparse generators and the laplacian rule", function()
  local D = mat.laplacian2d(10)
  eq(getmetatable(D).__name, "gwb.Matrix", "small grids stay dense")
  local S = mat.laplacian2d(10, { sparse = true })
  eq(S.sparse, true)
  eq(S.rows, 100)
  eq(S.nnz, 100 + 2 * 2 * 10 * 9)
  local big = mat.laplacian2d(100)
  eq(big.sparse, true, "order > 4096 is sparse by default")
  eq(big.rows, 10000)
  ok(tostring(big):find("SparseMatrix 10000x10000", 1, true), tostring(big))
  ok(tostring(big):find("symmetric", 1, true))
  eq(#big.shape, 2)
  eq(big.index_bits, 32)
  -- randsym: density, determinism, symmetry
  local R1 = mat.randsym(2000, { density = 0.01, seed = 3 })
  local R2 = mat.randsym(2000, { density = 0.01, seed = 3 })
  local R3 = mat.randsym(2000, { density = 0.01, seed = 4 })
  eq(R1.nnz, R2.nnz)
  ok(math.abs(R1.nnz / 2000 ^ 2 - 0.01) < 0.001, "density " .. R1.nnz / 2000 ^ 2)
  ok(R1:symmetric())
  local x = {}
  for i = 1, 2000 do x[i] = math.sin(i) end
  local y1, y2, y3 = R1:spmv(x), R2:spmv(x), R3:spmv(x)
  eq(y1[17], y2[17])
  ok(y1[17] ~= y3[17], "another seed gives another matrix")
  -- spmv against the dense product
  local S2 = mat.randsym(60, { density = 0.1, diag = true, seed = 9 })
  local Dn = S2:todense()
  local xs = {}
  for i = 1, 60 do xs[i] = i / 7 end
  local ys = S2:spmv(xs)
  for i = 1, 60 do
    local s = 0
    for j = 1, 60 do s = s + Dn:get(i, j) * xs[j] end
    near(ys[i], s, 1e-12)
  end
  raises(function() S2:spmv { 1, 2 } end, "60 entries")
end)

test("knn_laplacian: graph Laplacian of a dataset (spectral clustering)", function()
  if not data or not data.load then T.skip("the data module is not built in") end
  local d = data.load("datasets/iris.csv", { target = "species" })
  local L = mat.knn_laplacian(d, { k = 8 })
  eq(L.rows, d.rows)
  ok(L:symmetric())
  local ones = {}
  for i = 1, L.rows do ones[i] = 1 end
  local y = L:spmv(ones)
  for i = 1, L.rows do near(y[i], 0, 1e-12, "row sums of a Laplacian are zero") end
  local e = eig.solve(L, { k = 3 })
  ok(e.converged)
  near(e.values[1], 0, 1e-9, "a Laplacian is singular")
  ok(e.values[2] >= -1e-9)
  raises(function() mat.knn_laplacian(d, { k = 0 }) end, "k must be")
end)

-- A sparse symmetric matrix with a chosen spectrum (the sparse cousin of mat.spectral): a
-- direct sum of 2x2 rotations R diag(a, b) R^T, the blocks' rows spread over the matrix by a
-- fixed permutation so no block sits on the diagonal. `pairs` lists {a, b} per block.
local function spectrum_mtx(pairs, seed)
  local n = 2 * #pairs
  local perm, x = {}, seed or 12345
  for i = 1, n do perm[i] = i end
  for i = n, 2, -1 do   -- Fisher-Yates on a small LCG: the same matrix every run
    x = (x * 1103515245 + 12345) % 2147483648
    local j = x % i + 1
    perm[i], perm[j] = perm[j], perm[i]
  end
  local lines = {}
  for b, p in ipairs(pairs) do
    local t = 0.3 + 1.1 * b / #pairs
    local c, s = math.cos(t), math.sin(t)
    local a, d = p[1], p[2]
    local r1, r2 = perm[2 * b - 1], perm[2 * b]
    local lo, hi = math.min(r1, r2), math.max(r1, r2)
    local d1, d2 = a * c * c + d * s * s, a * s * s + d * c * c
    if r1 > r2 then d1, d2 = d2, d1 end
    lines[#lines + 1] = ("%d %d %.17g"):format(lo, lo, d1)
    lines[#lines + 1] = ("%d %d %.17g"):format(hi, hi, d2)
    lines[#lines + 1] = ("%d %d %.17g"):format(hi, lo, (a - d) * c * s)
  end
  return ("%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n%s\n"):format(n, n,
    #lines, table.concat(lines, "\n"))
end

test("lanczos (partial reorthogonalization, CGS2, restarts) agrees with the dense solver on repeated and clustered spectra", function()
  -- the top: 10 three times, 10 - 1e-9 (a cluster), 9.5 twice, 9; the bottom: -6 twice and
  -- -6 + 1e-9; the rest spread over [-5, 8]
  local pairs = { { 10, -6 }, { 10, 1 }, { 10, 2 }, { 10 - 1e-9, -6 }, { 9.5, -6 + 1e-9 },
    { 9.5, 3 }, { 9, 4 } }
  for i = 1, 293 do pairs[#pairs + 1] = { -5 + 13 * (i / 294), -5 + 13 * ((i * 37 % 293) / 293) } end
  local path = T.tmpdir() .. "/spectrum.mtx"
  T.writefile(path, spectrum_mtx(pairs))
  local A = mat.read(path)
  eq(A.rows, 600)
  local all = eig.solve(A:todense(), { vectors = false }).values
  near(all[#all], 10, 1e-12)
  near(all[#all - 2], 10, 1e-12, "the matrix holds 10 three times")
  for _, which in ipairs { "largest", "smallest" } do
    for _, o in ipairs { {}, { ncv = 16 }, { reorth = "full" } } do
      o.k, o.which, o.method = 8, which, "lanczos"
      local e = eig.solve(A, o)
      local what = ("%s ncv=%s reorth=%s"):format(which, tostring(o.ncv), tostring(o.reorth))
      ok(e.converged, what .. ": " .. e.note)
      for i = 1, 8 do
        local want = which == "largest" and all[#all - 8 + i] or all[i]
        near(e.values[i], want, 1e-10 * 10, what .. " value " .. i)
        ok(e.residuals[i] <= 1e-10, what .. " residual " .. i)
      end
      ok(e.orthogonality < 1e-9, what .. " orthogonality " .. e.orthogonality)
    end
  end
end)

test("lanczos restarts with partial reorthogonalization and reports its work", function()
  -- randsym: a spectrum that needs many restarts with a small basis; the partial scheme
  -- must hold (no fall-back to CGS2 every step) and the note says what ran
  local A = mat.randsym(3000, { density = 3e-3, seed = 5 })
  local all = eig.solve(A:todense(), { vectors = false }).values
  for _, ncv in ipairs { 24, 0 } do
    local e = eig.solve(A, { k = 6, which = "largest", method = "lanczos", ncv = ncv })
    ok(e.converged, e.note)
    for i = 1, 6 do near(e.values[i], all[#all - 6 + i], 1e-9, "value " .. i) end
    local restarts = tonumber(e.note:match("(%d+) restarts"))
    local passes = tonumber(e.note:match("(%d+) CGS2 passes"))
    ok(restarts and restarts >= 3, "restarts: " .. e.note)
    ok(passes and passes >= restarts, "a CGS2 pass at least per cycle: " .. e.note)
    ok(e.note:find("partial reorthogonalization", 1, true), "partial held: " .. e.note)
    ok(e.note:find("deflated check", 1, true), "the multiplicity check ran: " .. e.note)
    ok(e.note:find("%d+ products A x"), e.note)
    ok(e.note:find("reorthogonalization %d+ ms"), "reorthogonalization time: " .. e.note)
    -- far fewer CGS2 passes than steps: the omega recurrence asked for few
    local products = tonumber(e.note:match("(%d+) products A x"))
    ok(passes < products / 3, ("%d passes for %d products"):format(passes, products))
  end
end)

test("auto picks by the gap ratio of the wanted end and says why", function()
  -- a random sparse matrix: a wide gap at either end -> Lanczos
  local R = mat.randsym(5000, { density = 2e-3, seed = 3 })
  local e = eig.solve(R, { k = 5, which = "largest", backend = "cpu" })
  eq(e.method, "lanczos")
  ok(e.note:find("^auto: lanczos %(gap ratio of the wanted end"), e.note)
  ok(e.converged)
  local all = eig.solve(R:todense(), { vectors = false }).values
  for i = 1, 5 do near(e.values[i], all[#all - 5 + i], 1e-9, "randsym value " .. i) end
  -- a 2-D Laplacian: dozens of eigenvalues under the first Ritz value -> the block filter
  -- (maxiter = 1: the choice is made before the first iteration)
  local L = mat.laplacian2d(200, { sparse = true })
  local f = eig.solve(L, { k = 10, maxiter = 1, backend = "cpu" })
  eq(f.method, "chebyshev")
  ok(f.note:find("^auto: chebyshev %(gap ratio of the wanted end ~[%d.e-]+ < "), f.note)
  -- both ends: one choice per end, both named
  local b = eig.solve(R, { k = 3, which = "both", backend = "cpu" })
  eq(b.method, "lanczos")
  ok(b.converged)
  -- an explicit method is not second-guessed
  eq(eig.solve(R, { k = 3, method = "chebyshev", backend = "cpu" }).method, "chebyshev")
end)
