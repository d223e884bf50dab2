-- test_blas.lua - the BLAS/LAPACK layer seen from Lua: gwb.blas() fields, the thread policy
-- (a call's threads option, restored after; parallel sections leave the count as it was),
-- e.timing.check_ms apart from the solve, the subset path (dsyevr) chosen and correct
-- against the full solve, f32 input solved in f64 on the CPU.

local function max_abs_diff(a, b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

T.test("gwb.blas(): which library, its files and threads", function()
  local b = gwb.blas()
  T.ok(({ OpenBLAS = 1, MKL = 1, BLIS = 1, FlexiBLAS = 1, reference = 1, unknown = 1 })[b.name], b.name)
  T.eq(type(b.version), "string")
  T.ok(b.blas ~= "" and b.lapack ~= "", "the files dgemm_ and dsyevd_ come from")
  T.ok(math.type(b.threads) == "integer" and b.threads >= 1, "threads")
  T.ok(b.default_threads >= 1)
  T.eq(type(b.settable), "boolean")
  T.eq(b.reference, b.name == "reference")
  T.eq(b.note ~= nil, b.reference, "the install note only on the reference BLAS")
  if b.settable and b.threads_from == "gwb" then T.eq(b.threads, b.default_threads) end
  T.raises(function() gwb.blas { thread = 2 } end, "unknown option 'thread'")
  T.raises(function() gwb.blas { threads = -1 } end, "got -1")
  T.raises(function() gwb.blas(3) end, "table expected")
end)

T.test("BLAS threads: gwb.blas{threads}, a call's threads option, parallel sections restore", function()
  local b = gwb.blas()
  if not b.settable then T.skip(b.name .. " BLAS: its thread count cannot be set") end
  local before = b.default_threads
  T.eq(gwb.blas { threads = 3 }.threads, 3)
  T.eq(gwb.blas().threads_from, "gwb.blas")
  local A = mat.randn(40, 40, { sym = true, seed = 3 })
  local e = eig.solve(A, { threads = 1, backend = "cpu" })
  T.ok(e.max_residual <= 1e-13)
  T.eq(gwb.blas().threads, 3, "restored after a call with threads = 1")
  -- a batch runs on our threads with BLAS on one each, and restores the count after
  local eb = eig.batched(mat.batch(16, 12, { seed = 4 }), { backend = "cpu", threads = 2, vectors = true })
  T.ok(eb.max_residual <= 1e-12)
  T.eq(gwb.blas().threads, 3, "restored after a CPU batch")
  local f = rf.train(data.load("datasets/iris.csv"), { trees = 8, threads = 2, backend = "cpu" })
  T.ok(f ~= nil)
  T.eq(gwb.blas().threads, 3, "restored after training a forest over threads")
  gwb.blas { threads = 0 }
  T.eq(gwb.blas().threads_from, "gwb")
  T.eq(gwb.blas().threads, before)
end)

T.test("e.timing.check_ms: the residual and orthogonality checks apart from the solve", function()
  local A = mat.randn(120, 120, { sym = true, seed = 5 })
  local e = eig.solve(A, { backend = "cpu" })
  local t = e.timing
  T.ok(type(t.check_ms) == "number" and t.check_ms > 0, "check_ms " .. tostring(t.check_ms))
  T.ok(t.kernel_ms + t.check_ms <= t.total_ms * (1 + 1e-9) + 1e-6, "solve + checks within the total")
  T.ok(tostring(e):find("checks ", 1, true), tostring(e))
  local off = eig.solve(A, { backend = "cpu", residuals = false })
  T.eq(off.timing.check_ms, 0)
  T.eq(off.max_residual, nil)
  local eb = eig.batched(mat.batch(8, 16, { seed = 1 }), { backend = "cpu", vectors = true })
  T.ok(eb.timing.check_ms > 0)
  local s = eig.svd(mat.randn(30, 20, { seed = 2 }), { backend = "cpu" })
  T.ok(s.timing.check_ms > 0)
end)

T.test("subset solves: k pairs at one end through dsyevr, equal to the full solve", function()
  local n = 150
  local A = mat.randn(n, n, { sym = true, seed = 9 })
  local full = eig.solve(A, { backend = "cpu" })
  T.eq(full.method, "lapack-dsyevd")
  local scale = math.max(math.abs(full.values[1]), math.abs(full.values[n]))
  for _, which in ipairs { "smallest", "largest", "both" } do
    local e = eig.solve(A, { k = 7, which = which, backend = "cpu" })
    T.eq(e.method, "lapack-dsyevr", which)
    T.ok(e.note:find("subset: 7 of 150 pairs", 1, true), e.note)
    T.eq(e.k, which == "both" and 14 or 7)
    local want = {}
    if which ~= "largest" then for i = 1, 7 do want[#want + 1] = full.values[i] end end
    if which ~= "smallest" then for i = n - 6, n do want[#want + 1] = full.values[i] end end
    T.ok(max_abs_diff(e.values, want) <= 1e-12 * scale, which .. ": values against the full solve")
    T.ok(e.max_residual <= 1e-12, which .. ": residual " .. e.max_residual)
    T.ok(e.orthogonality <= 1e-12, which .. ": orthogonality " .. e.orthogonality)
    -- the vectors span the same lines as the full solve's (distinct values here)
    local off = which == "largest" and n - 7 or 0
    for i = 1, 7 do
      local v, w, d = e:vector(i), full:vector(i + off), 0
      for r = 1, n do d = d + v[r] * w[r] end
      T.near(math.abs(d), 1, 1e-9, which .. ": vector " .. i)
    end
  end
  -- method = "syevd" with k solves everything and says so
  local e = eig.solve(A, { k = 3, method = "syevd", backend = "cpu" })
  T.eq(e.method, "lapack-dsyevd")
  T.ok(e.note:find("all 150 pairs solved", 1, true), e.note)
  T.ok(max_abs_diff(e.values, { full.values[1], full.values[2], full.values[3] }) <= 1e-13 * scale)
end)

T.test("eig.solve on an f32 matrix solves in f64 on the CPU (as numpy.linalg.eigh does)", function()
  local A = mat.randn(80, 80, { sym = true, seed = 6, dtype = "f32" })
  local e = eig.solve(A, { backend = "cpu" })
  T.eq(e.dtype, "f64"); T.eq(e.method, "lapack-dsyevd")
  T.ok(e.max_residual <= 1e-13 and e.orthogonality <= 1e-13, "f64 accuracy " .. e.max_residual)
end)

T.test("pca:transform through DGEMM equals the direct sum, over several row blocks", function()
  local d = data.synth { rows = 9000, features = 6, informative = 4, seed = 3 }
  local p = data.pca(d, 3)
  local S = p:transform(d)
  T.eq(S.rows, 9000)
  T.eq(S.cols, 3)
  local cols = {}
  for j = 1, d.features do cols[j] = d:column(j) end
  local worst = 0
  for i = 1, d.rows, 7 do
    for c = 1, 3 do
      local s = 0
      for j = 1, d.features do s = s + (cols[j][i] - p.mean[j]) * p.components[c][j] end
      worst = math.max(worst, math.abs(s - S:get(i, c)))
    end
  end
  T.ok(worst < 1e-10, "largest difference " .. worst)
end)
