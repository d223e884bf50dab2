-- test_sparse_gpu.lua - the GPU paths of the sparse module against the CPU: our SpMV and
-- cuSPARSE's on short, medium and long rows, every eigensolver method on the GPU against the
-- analytic spectrum and the CPU result, and no device memory left behind. Small sizes, so
-- compute-sanitizer runs them in seconds.
local test, ok, eq, near = T.test, T.ok, T.eq, T.near

local function lap1(n, k) return 2 - 2 * math.cos(k * math.pi / (n + 1)) end
local function lap2(m, count, largest)
  local all = {}
  for p = 1, m do for q = 1, m do all[#all + 1] = lap1(m, p) + lap1(m, q) end end
  table.sort(all)
  local out = {}
  for i = 1, count do out[i] = largest and all[#all - count + i] or all[i] end
  return out
end

test("gpu spmv: ours and cuSPARSE agree with the CPU on short, medium and long rows", function()
  T.need_gpu()
  local cases = {
    { "1d (3 per row)", mat.laplacian1d(5000, { sparse = true }), 1 },
    { "2d (5 per row)", mat.laplacian2d(120, { sparse = true }), 1 },
    { "3d (7 per row)", mat.laplacian3d(20), 1 },
    { "randsym (~20 per row)", mat.randsym(4000, { density = 5e-3, seed = 2 }), 8 },
    { "randsym (~200 per row)", mat.randsym(2000, { density = 0.1, seed = 3 }), 32 },
  }
  for _, c in ipairs(cases) do
    local r = c[2]:spmv_bench { reps = 3 }
    ok(r.ours_err <= 1e-14, c[1] .. ": ours differs from the CPU by " .. r.ours_err)
    ok(r.cusparse_err <= 1e-14, c[1] .. ": cuSPARSE differs from the CPU by " .. r.cusparse_err)
    ok(r.ours_ms > 0 and r.cusparse_ms > 0, c[1] .. ": timed")
    ok(r.lanes >= 1 and r.lanes <= 32, c[1] .. ": lanes " .. r.lanes)
    if c[3] == 1 then eq(r.lanes, 1, c[1] .. ": short rows get a thread each") end
    if c[3] == 32 then ok(r.lanes >= 16, c[1] .. ": long rows get (nearly) a warp") end
    eq(#r.sweep_ms, 6, c[1] .. ": lanes sweep")
    for i = 1, 6 do ok(r.sweep_ms[i] > 0, c[1] .. ": sweep timed " .. i) end
    -- blocks of vectors, both layouts, ours and cuSPARSE
    eq(r.block_b, 16, c[1] .. ": block width")
    for _, v in ipairs { "ours_col", "cusparse_col", "ours_rows", "cusparse_rows" } do
      ok(r.block[v].err <= 1e-13, c[1] .. ": block " .. v .. " differs from the CPU by " .. r.block[v].err)
      ok(r.block[v].ms > 0, c[1] .. ": block " .. v .. " timed")
    end
  end
end)

test("gpu eig.solve: every method matches the analytic spectrum and the CPU", function()
  T.need_gpu()
  local m = 30
  local A = mat.laplacian2d(m, { sparse = true })
  for _, which in ipairs { "smallest", "largest" } do
    local want = lap2(m, 8, which == "largest")
    for _, meth in ipairs { "chebyshev", "lanczos", "lobpcg", "randomized", "rand+lanczos" } do
      local g = eig.solve(A, { k = 8, which = which, method = meth, backend = "gpu" })
      local c = eig.solve(A, { k = 8, which = which, method = meth, backend = "cpu" })
      eq(g.backend, "gpu", meth)
      eq(c.backend, "cpu", meth)
      ok(g.converged, meth .. " " .. which .. " converged on the GPU")
      for i = 1, 8 do
        near(g.values[i], want[i], 1e-10, meth .. " " .. which .. " value " .. i)
        near(g.values[i], c.values[i], 1e-10, meth .. " " .. which .. " GPU vs CPU " .. i)
        ok(g.residuals[i] <= 1e-10, meth .. " residual " .. g.residuals[i])
      end
      ok(g.orthogonality < 1e-9, meth .. " orthogonality " .. g.orthogonality)
      -- the vectors came back: A v = lambda v on the CPU
      local v = g:vector(1)
      local Av = A:spmv(v)
      local r = 0
      for i = 1, #v do r = math.max(r, math.abs(Av[i] - g.values[1] * v[i])) end
      ok(r < 1e-9, meth .. ": GPU vector checked on the CPU, residual " .. r)
    end
  end
end)

test("gpu eig.solve: our SpMV and cuSPARSE in the solver, repeated eigenvalues", function()
  T.need_gpu()
  local m = 24
  local A = mat.laplacian2d(m, { sparse = true })
  local want = lap2(m, 10)
  for _, kind in ipairs { "ours", "cusparse" } do
    for _, meth in ipairs { "chebyshev", "lanczos" } do
      local e = eig.solve(A, { k = 10, backend = "gpu", spmv = kind, method = meth })
      for i = 1, 10 do near(e.values[i], want[i], 1e-10, kind .. " " .. meth .. " " .. i) end
    end
  end
  local B = mat.randsym(3000, { density = 4e-3, seed = 8, diag = true })
  local g = eig.solve(B, { k = 5, which = "both", backend = "gpu" })
  local c = eig.solve(B, { k = 5, which = "both", backend = "cpu" })
  for i = 1, 10 do near(g.values[i], c.values[i], 1e-9, "randsym both " .. i) end
end)

test("gpu eig.solve leaves no device memory behind", function()
  T.need_gpu()
  collectgarbage()
  local before = gpu.mem().ours
  local A = mat.laplacian3d(10)
  for _ = 1, 3 do eig.solve(A, { k = 4, backend = "gpu" }) end
  A:spmv_bench { reps = 2 }
  collectgarbage()
  eq(gpu.mem().ours, before, "bytes held by gwb after the solves")
  eq(gpu.mem().by_purpose["eig.sparse"], nil)
  eq(gpu.mem().by_purpose["sparse.csr"], nil)
end)

test("gpu lanczos: partial reorthogonalization (cuBLAS Dgemv CGS2, Cholesky QR restarts) matches the CPU and the dense solver; auto keeps Chebyshev on the GPU", function()
  T.need_gpu()
  local A = mat.randsym(3000, { density = 3e-3, seed = 5 })
  local all = eig.solve(A:todense(), { vectors = false }).values
  for _, ncv in ipairs { 24, 0 } do
    local g = eig.solve(A, { k = 6, which = "largest", method = "lanczos", ncv = ncv, backend = "gpu" })
    local c = eig.solve(A, { k = 6, which = "largest", method = "lanczos", ncv = ncv, backend = "cpu" })
    eq(g.backend, "gpu")
    ok(g.converged, g.note)
    ok(g.note:find("partial reorthogonalization", 1, true), g.note)
    ok(tonumber(g.note:match("(%d+) restarts")) >= 3, g.note)
    for i = 1, 6 do
      near(g.values[i], all[#all - 6 + i], 1e-9, "GPU vs dense " .. i)
      near(g.values[i], c.values[i], 1e-9, "GPU vs CPU " .. i)
      ok(g.residuals[i] <= 1e-10, "residual " .. i)
    end
    ok(g.orthogonality < 1e-9, "orthogonality " .. g.orthogonality)
  end
  -- a wide gap that picks Lanczos on the CPU keeps the block filter on the GPU, and says so
  local e = eig.solve(A, { k = 6, which = "largest", backend = "gpu" })
  eq(e.method, "chebyshev")
  ok(e.note:find("the GPU keeps the filter", 1, true), e.note)
  eq(eig.solve(A, { k = 6, which = "largest", backend = "cpu" }).method, "lanczos")
end)
