-- test_sparse_svd.lua - eig.svd on a SparseMatrix (randomized subspace iteration on A and
-- A^T): against the dense SVD on tall, wide and square matrices; the returned triplets
-- checked independently (A v - s u and A^T u - s v computed here from A's entries);
-- repeated and zero singular values; the full spectrum; history; errors; the GPU path
-- against the CPU. Small sizes: the CPU part runs in well under a second.
local test, ok, eq, near, raises = T.test, T.ok, T.eq, T.near, T.raises

-- max_i ||A v_i - s_i u_i|| and ||A^T u_i - s_i v_i|| over the k triplets, from A's entries
local function check_triplets(A, e, k, what)
  local rows, cols = A.rows, A.cols
  local D = {}  -- dense copy, row-major, from the stored entries
  for i = 1, rows do D[i] = {} for j = 1, cols do D[i][j] = A:get(i, j) end end
  for t = 1, k do
    local v, u, s = e:vector(t), e:left(t), e.values[t]
    eq(#v, cols, what .. ": right vector length")
    eq(#u, rows, what .. ": left vector length")
    local r1, r2 = 0, 0
    for i = 1, rows do
      local a = 0
      for j = 1, cols do a = a + D[i][j] * v[j] end
      r1 = r1 + (a - s * u[i]) ^ 2
    end
    for j = 1, cols do
      local a = 0
      for i = 1, rows do a = a + D[i][j] * u[i] end
      r2 = r2 + (a - s * v[j]) ^ 2
    end
    local r = math.max(math.sqrt(r1), math.sqrt(r2)) / e.values[1]
    ok(r <= 1e-10, ("%s: triplet %d residual %.3g (checked here)"):format(what, t, r))
    ok(e.residuals[t] <= 1e-10, ("%s: triplet %d reported residual %.3g"):format(what, t, e.residuals[t]))
  end
  ok(e.orthogonality <= 1e-12, what .. ": right vectors orthonormal, " .. e.orthogonality)
end

test("eig.svd sparse: agrees with the dense SVD on tall, wide and square matrices", function()
  for _, c in ipairs {
    { "tall 300x200", mat.sprand(300, 200, { density = 0.05, seed = 3 }), 6 },
    { "wide 50x400", mat.sprand(50, 400, { density = 0.1, seed = 4 }), 5 },
    { "square 150x150", mat.sprand(150, 150, { density = 0.04, seed = 5 }), 8 },
  } do
    local name, A, k = c[1], c[2], c[3]
    local e = eig.svd(A, { k = k, backend = "cpu" })
    local d = eig.svd(A:todense(), { k = k })
    eq(e.backend, "cpu", name)
    ok(e.converged, name .. " converged")
    eq(#e.values, k, name .. ": k values")
    for i = 1, k do
      near(e.values[i], d.values[i], 1e-10 * d.values[1], name .. " value " .. i)
      if i > 1 then ok(e.values[i] <= e.values[i - 1], name .. ": descending") end
    end
    check_triplets(A, e, k, name)
  end
end)

test("eig.svd sparse: close singular values (Chebyshev on A^T A) still match the dense SVD", function()
  -- a random 2000 x 500 matrix: its top singular values are a few percent apart
  local A = mat.sprand(2000, 500, { density = 0.01, seed = 21 })
  local e = eig.svd(A, { k = 8, backend = "cpu" })
  local d = eig.svd(A:todense(), { k = 8 })
  ok(e.converged, "converged")
  -- block (18) > k: the filter ran, with a degree of at least 2
  local deg = tonumber(e.note:match("Chebyshev degree (%d+)"))
  ok(deg and deg >= 2, "Chebyshev filter on (degree >= 2): " .. e.note)
  for i = 1, 8 do
    near(e.values[i], d.values[i], 1e-10 * d.values[1], "value " .. i)
    ok(e.residuals[i] <= 1e-10, "residual " .. i .. " " .. e.residuals[i])
  end
  ok(e.orthogonality <= 1e-12, "orthogonality (right and left) " .. e.orthogonality)
  -- the left vectors are unit and orthogonal too
  local u1, u2 = e:left(1), e:left(2)
  local n1, d12 = 0, 0
  for i = 1, #u1 do n1 = n1 + u1[i] * u1[i]; d12 = d12 + u1[i] * u2[i] end
  near(n1, 1, 1e-12, "||u1||")
  near(d12, 0, 1e-12, "u1 . u2")
end)

test("eig.svd sparse: block = k runs without the filter (degree 0 in the note)", function()
  local A = mat.sprand(300, 200, { density = 0.05, seed = 3 })
  local e = eig.svd(A, { k = 3, block = 3, backend = "cpu" })
  local d = eig.svd(A:todense(), { k = 3 })
  eq(tonumber(e.note:match("Chebyshev degree (%d+)")), 0, "no filter: " .. e.note)
  ok(e.converged, "converged without the filter")
  for i = 1, 3 do near(e.values[i], d.values[i], 1e-10 * d.values[1], "value " .. i) end
end)

test("eig.svd sparse: nearby seeds start from unrelated vectors", function()
  -- k = block = 1, maxiter = 1: the right vector is the normalized random start itself. The
  -- start's key was once linear in the seed, so seed s + 1 drew seed s's numbers shifted by
  -- one place (correlation 0.997 at shift 1); unrelated vectors of 300 entries correlate
  -- ~0.06 at any shift.
  local A = mat.sprand(400, 300, { density = 0.05, seed = 3 })
  local function start(seed)
    local e = eig.svd(A, { k = 1, block = 1, maxiter = 1, seed = seed, backend = "cpu" })
    eq(e.iterations, 1, "one iteration")
    return e:vector(1)
  end
  for s = 1, 3 do
    local a, b = start(s), start(s + 1)
    for t = -2, 2 do
      local c = 0
      for i = 1, #b do
        local j = i + t
        if j >= 1 and j <= #a then c = c + a[j] * b[i] end
      end
      ok(math.abs(c) < 0.5, ("seeds %d and %d, shift %d: correlation %.3f"):format(s, s + 1, t, c))
    end
  end
  -- and both seeds converge to the same (correct) triplets along different histories
  local B = mat.sprand(120, 80, { density = 0.08, seed = 11 })
  local e1 = eig.svd(B, { k = 4, seed = 1, backend = "cpu" })
  local e2 = eig.svd(B, { k = 4, seed = 2, backend = "cpu" })
  local d = eig.svd(B:todense(), { k = 4 })
  ok(e1.converged and e2.converged, "both seeds converge")
  ok(e1.history[1].max_residual ~= e2.history[1].max_residual,
     ("different histories: %.6g vs %.6g"):format(e1.history[1].max_residual, e2.history[1].max_residual))
  for i = 1, 4 do
    near(e1.values[i], d.values[i], 1e-10 * d.values[1], "seed 1 value " .. i)
    near(e2.values[i], d.values[i], 1e-10 * d.values[1], "seed 2 value " .. i)
  end
end)

test("eig.svd sparse: an unconverged run comes back with converged = false", function()
  local A = mat.sprand(300, 200, { density = 0.05, seed = 3 })
  local e = eig.svd(A, { k = 6, maxiter = 2, backend = "cpu" })
  eq(e.converged, false, "not converged after 2 iterations")
  eq(e.iterations, 2, "iterations")
  eq(#e.history, 2, "history")
  ok(e.max_residual > 1e-10, "residual above tol: " .. e.max_residual)
end)

test("eig.svd sparse: Ctrl-C stops it with its own name", function()
  -- a run that cannot converge (tol 1e-300) and an interrupt from a background shell
  local A = mat.sprand(400, 300, { density = 0.05, seed = 3 })
  local t0 = os.time()
  os.execute("(sleep 0.3; kill -INT $PPID) >/dev/null 2>&1 &")
  local okc, err = pcall(eig.svd, A, { k = 4, tol = 1e-300, maxiter = 5000, backend = "cpu" })
  ok(not okc, "interrupted, not finished")
  ok(tostring(err):find("eig.svd: interrupted", 1, true), "message: " .. tostring(err))
  ok(os.time() - t0 <= 30, "stopped promptly")
end)

test("eig.svd sparse: repeated and zero singular values, the full spectrum", function()
  local dir = T.tmpdir()
  -- 40 x 25 with singular values 5, 5, 3, 3, 3 and then 0.5: a scaled partial permutation
  local lines, vals = {}, { 5, 5, 3, 3, 3, 0.5, 0.5, 0.25 }
  for t, v in ipairs(vals) do lines[#lines + 1] = ("%d %d %.17g"):format(3 * t, 2 * t + 1, (t % 2 == 0) and -v or v) end
  T.writefile(dir .. "/svd-rep.mtx", ("%%%%MatrixMarket matrix coordinate real general\n40 25 %d\n%s\n"):format(#lines,
    table.concat(lines, "\n")))
  local A = mat.read(dir .. "/svd-rep.mtx")
  local e = eig.svd(A, { k = 5, backend = "cpu" })
  local want = { 5, 5, 3, 3, 3 }
  for i = 1, 5 do near(e.values[i], want[i], 1e-12, "repeated value " .. i) end
  check_triplets(A, e, 5, "repeated")
  -- k beyond the rank: the zero singular values come back with valid triplets
  local z = eig.svd(A, { k = 12, backend = "cpu" })
  for i = 9, 12 do near(z.values[i], 0, 1e-12, "zero value " .. i) end
  near(z.values[8], 0.25, 1e-12, "smallest nonzero")
  check_triplets(A, z, 12, "rank-deficient")
  -- the full spectrum of a small dense-ish matrix
  local F = mat.sprand(40, 30, { density = 0.3, seed = 9 })
  local f = eig.svd(F, { k = 30, backend = "cpu" })
  local d = eig.svd(F:todense())
  for i = 1, 30 do near(f.values[i], d.values[i], 1e-10 * d.values[1], "full spectrum " .. i) end
  check_triplets(F, f, 30, "full")
end)

test("eig.svd sparse: history, vectors = false, tostring", function()
  local A = mat.sprand(120, 80, { density = 0.08, seed = 11 })
  local e = eig.svd(A, { k = 4, backend = "cpu" })
  local h = e.history
  ok(#h >= 1, "history kept")
  eq(#h, e.iterations, "one entry per iteration")
  eq(h[#h].converged, 4, "last entry: all converged")
  ok(h[#h].max_residual <= 1e-10, "last residual")
  local nv = eig.svd(A, { k = 4, backend = "cpu", vectors = false })
  for i = 1, 4 do near(nv.values[i], e.values[i], 1e-12, "values without vectors " .. i) end
  raises(function() nv:vector(1) end, "no vectors")
  ok(tostring(e):len() > 0, "prints")
  ok(e.method == "randomized", "method " .. tostring(e.method))
end)

test("eig.svd sparse: errors name the problem", function()
  local A = mat.sprand(30, 20, { density = 0.2, seed = 2 })
  raises(function() eig.svd(A, { k = 0 }) end, "k must be in [1, 100000] (got 0)")
  raises(function() eig.svd(A, { k = 200000 }) end, "k must be in [1, 100000] (got 200000)")
  raises(function() eig.svd(A, { k = 2, block = 100001 }) end, "block must be in [0, 100000]")
  raises(function() eig.svd(A, { k = 2, maxiter = 2 ^ 31 | 0 }) end, "maxiter must be in [0, 2147483647]")
  raises(function() eig.svd(A, { k = 2, maxiter = -1 }) end, "maxiter must be in [0, 2147483647]")
  raises(function() eig.svd(A, { k = 21 }) end, "k must be in [1, min(rows, cols)] = [1, 20]")
  raises(function() eig.svd(A, { k = 2, tol = 0 }) end, "tol must be in (0, 1)")
  raises(function() eig.svd(A, { k = 2, block = 1 }) end, "block must be >= k")
  raises(function() eig.svd(A, { k = 2, method = "lapack" }) end, "method must be")
  raises(function() eig.svd(A, { k = 2, kk = 1 }) end, "kk")
  local dir = T.tmpdir()
  T.writefile(dir .. "/svd-inf.mtx", "%%MatrixMarket matrix coordinate real general\n3 2 2\n1 1 1\n3 2 inf\n")
  raises(function() eig.svd(mat.read(dir .. "/svd-inf.mtx"), { k = 1 }) end, "NaN or Inf at (3, 2)")
  raises(function() mat.sprand(0, 5) end, "rows and cols must be >= 1")
  raises(function() mat.sprand(5, 5, { density = 2 }) end, "density must be in (0, 1]")
  raises(function() mat.sprand(2 ^ 40 | 0, 2 ^ 40 | 0, { density = 1 }) end,
    "density * rows * cols = 1.21e+24 entries (density 1, rows 1099511627776, cols 1099511627776)")
  raises(function() mat.randsym(2 ^ 40 | 0, { density = 0.5 }) end, "more than any memory holds")
  -- "rsvd" is an alias of "randomized"
  eq(eig.svd(A, { k = 2, method = "rsvd", backend = "cpu" }).method, "randomized", "rsvd alias")
  -- the dense path is still there for dense matrices
  local d = eig.svd(A:todense(), { k = 2 })
  eq(#d.values, 2, "dense eig.svd still works")
end)

test("gpu eig.svd sparse: cuSOLVER QR path matches the CPU and the dense SVD", function()
  T.need_gpu()
  collectgarbage()
  local before = gpu.mem().ours
  for _, c in ipairs {
    { "tall 300x200", mat.sprand(300, 200, { density = 0.05, seed = 3 }), 6 },
    { "wide 50x400", mat.sprand(50, 400, { density = 0.1, seed = 4 }), 5 },
  } do
    local name, A, k = c[1], c[2], c[3]
    local g = eig.svd(A, { k = k, backend = "gpu" })
    local cpu = eig.svd(A, { k = k, backend = "cpu" })
    eq(g.backend, "gpu", name)
    ok(g.converged, name .. " converged on the GPU")
    for i = 1, k do near(g.values[i], cpu.values[i], 1e-10 * cpu.values[1], name .. " GPU vs CPU " .. i) end
    check_triplets(A, g, k, name .. " (gpu)")
  end
  collectgarbage()
  eq(gpu.mem().ours, before, "bytes held by gwb after the GPU SVDs")
end)
