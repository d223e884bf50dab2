-- test_e2e_gpu.lua - data that stays on the GPU: Matrix residency (A:to, A.device, lazy
-- cached host reads, A:set keeping both copies), results whose vectors stay on the device
-- (e:matrix() GPU-resident, e:vector(i) copied when asked), the device-side checks
-- (symmetry, residuals, orthogonality, Jacobi's sort) against the CPU checks of the same
-- vectors (e:check(A)), the pool (gpu.mem().pool, gpu.trim()) and timing. The first test
-- runs without a GPU (the error says why); the others skip there.

-- Same definition, different summation order (cuBLAS vs OpenBLAS GEMM): agree to a few
-- rounding units of the GEMM, absolutely, plus a relative part for large residuals.
local function close(gpu_v, cpu_v, n)
  return math.abs(gpu_v - cpu_v) <= 64 * n * 2.2e-16 + 1e-6 * math.abs(cpu_v)
end

local function compare_checks(e, A, what)
  local c = e:check(A)
  T.ok(close(e.max_residual, c.max_residual, e.n),
       ("%s: max residual GPU %.6g vs CPU %.6g"):format(what, e.max_residual, c.max_residual))
  T.ok(close(e.orthogonality, c.orthogonality, e.n),
       ("%s: orthogonality GPU %.6g vs CPU %.6g"):format(what, e.orthogonality, c.orthogonality))
  local worst = 0
  for b = 1, e.count do
    local r = e.count > 1 and e:residual_list(b) or e.residuals
    for i = 1, e.k do
      local g, h = r[i], c.residuals[(b - 1) * e.k + i]
      if not close(g, h, e.n) then
        error(("%s: matrix %d pair %d residual GPU %.6g vs CPU %.6g"):format(what, b, i, g, h), 2)
      end
      worst = math.max(worst, math.abs(g - h))
    end
  end
  return worst
end

T.test("Matrix:to(\"gpu\") without a GPU says why and leaves the matrix where it was", function()
  if gpu.available() then T.skip("a GPU is present: the GPU tests below cover A:to") end
  local A = mat.randn(4, 4, { sym = true })
  T.eq(A.device, "cpu")
  T.raises(function() A:to("gpu") end, "cannot move the 4 x 4 f64 matrix to the GPU: ")
  local ok, msg = pcall(A.to, A, "gpu")
  T.ok(not ok and (msg:find("without CUDA", 1, true) or msg:find("driver", 1, true) or
       msg:find("device", 1, true)), "the reason: " .. tostring(msg))
  T.eq(A.device, "cpu")
  T.near(A:get(1, 1), A:copy():get(1, 1), 0)
  T.raises(function() A:to("tpu") end, 'device must be "cpu" or "gpu"')
  local B = mat.batch(3, 4)
  T.raises(function() B:to("gpu") end, "cannot move the batch of 3 4 x 4 f64 matrices")
  T.eq(gpu.trim(), 0)
end)

T.test("gpu residency: to, device, lazy host reads, set keeps both copies, to cpu", function()
  T.need_gpu()
  collectgarbage()
  local ours0 = gpu.mem().ours
  local A = mat.randn(150, 150, { sym = true, seed = 3 })
  local H = A:copy()
  T.eq(A:to("gpu"), A)
  T.eq(A.device, "gpu")
  T.ok(gpu.mem().ours >= ours0 + 150 * 150 * 8, "device bytes held for the matrix")
  T.ok(gpu.mem().by_purpose["mat.data"], "ledger names the matrix")
  T.eq(A:get(7, 9), H:get(7, 9))
  T.ok(tostring(A):find("on the GPU", 1, true), "printing says where it is")
  -- a host write reaches the device copy: the GPU solve sees it
  for _, M in ipairs { A, H } do M:set(1, 2, 3.5); M:set(2, 1, 3.5) end
  local eg = eig.solve(A)  -- auto follows the matrix to the GPU
  T.eq(eg.backend, "gpu")
  T.ok(eg.note:find("on the GPU", 1, true), "note: " .. eg.note)
  local ec = eig.solve(H, { backend = "cpu" })
  for i = 1, 150, 7 do T.near(eg.values[i], ec.values[i], 1e-11 * 20) end
  -- an explicit CPU solve of a resident matrix reads its host copy (A:set kept it current:
  -- nothing crosses) and says so
  local e2 = eig.solve(A, { backend = "cpu" })
  T.ok(e2.note:find("the matrix is on the GPU: the CPU solve read its host copy (current, nothing copied)",
    1, true), "note: " .. e2.note)
  T.eq(A:to("cpu"), A)
  T.eq(A.device, "cpu")
  T.eq(A:get(1, 2), 3.5)
  A:to("gpu")
  A:close()
  eg, ec, e2 = nil, nil, nil
  collectgarbage()
  T.eq(gpu.mem().ours, ours0)
end)

T.test("gpu dense eig.solve: device checks equal the CPU checks of the same vectors", function()
  T.need_gpu()
  for _, dt in ipairs { "f64", "f32" } do
    for _, n in ipairs { 1, 7, 200, 513 } do
      local A = mat.randn(n, n, { sym = true, dtype = dt, seed = n })
      local e = eig.solve(A, { backend = "gpu" })
      local what = ("eig.solve %s n=%d (%s)"):format(dt, n, e.method)
      T.ok(e.max_residual <= (dt == "f64" and 1e-13 or 1e-5), what .. ": residual " .. e.max_residual)
      compare_checks(e, A, what)
      -- resident input: the same answer, in place
      local R = A:copy():to("gpu")
      local er = eig.solve(R)
      T.eq(er.backend, "gpu")
      for i = 1, n, math.max(1, n // 10) do T.near(er.values[i], e.values[i], 0) end
    end
  end
  -- subsets by index (Xsyevdx), both ends, and the Jacobi / mixed paths
  local A = mat.randn(120, 120, { sym = true, seed = 9 })
  for _, o in ipairs {
    { k = 5, which = "smallest" }, { k = 5, which = "largest" }, { k = 4, which = "both" },
    { method = "jacobi" }, { method = "mixed" }, { method = "jacobi", k = 3, which = "largest" },
  } do
    o.backend = "gpu"
    local e = eig.solve(A, o)
    local ref = eig.solve(A, { backend = "cpu", k = o.k, which = o.which })
    local what = ("eig.solve %s k=%s %s"):format(o.method or "auto", tostring(o.k), o.which or "")
    for i = 1, e.k do T.near(e.values[i], ref.values[i], 1e-10, what .. " value " .. i) end
    compare_checks(e, A, what)
  end
end)

T.test("gpu eig.batched: device residuals, orthogonality and sort equal the CPU's", function()
  T.need_gpu()
  for _, c in ipairs {
    { 40, 16, "f32", "jacobi" }, { 40, 16, "f64", "jacobi" }, { 9, 64, "f64", "auto" },
    { 6, 100, "f32", "auto" }, { 5, 130, "f64", "cusolver" }, { 7, 24, "f64", "mixed" },
  } do
    local B = mat.batch(c[1], c[2], { dtype = c[3], seed = c[2], spectrum = "clustered" })
    local eb = eig.batched(B, { backend = "gpu", vectors = true, method = c[4] })
    local what = ("eig.batched %dx%d %s %s (%s)"):format(c[1], c[2], c[3], c[4], eb.method)
    for b = 1, B.count, 3 do
      local v = eb:values(b)
      for i = 2, #v do T.ok(v[i - 1] <= v[i], what .. ": ascending") end
    end
    compare_checks(eb, B, what)
  end
end)

T.test("gpu results stay on the device until read", function()
  T.need_gpu()
  local A = mat.randn(64, 64, { sym = true, seed = 5 })
  local e = eig.solve(A, { backend = "gpu" })
  T.ok(tostring(e):find("vectors on the GPU", 1, true), "printed summary says where")
  local V = e:matrix()
  T.eq(V.device, "gpu")
  T.eq(V.rows, 64)
  T.eq(V.cols, 64)
  local v3 = e:vector(3)
  for i = 1, 64, 9 do T.eq(V:get(i, 3), v3[i]) end  -- V:get copies lazily
  local ref = eig.solve(A, { backend = "cpu" })
  local r3 = ref:vector(3)
  local dot = 0
  for i = 1, 64 do dot = dot + v3[i] * r3[i] end
  T.near(math.abs(dot), 1, 1e-10, "vector 3 matches LAPACK's up to sign")
  -- a resident batch, values only: nothing but values comes back
  local B = mat.batch(30, 32, { dtype = "f32" }):to("gpu")
  local eb = eig.batched(B)
  T.eq(eb.backend, "gpu")
  T.ok(not eb.has_vectors, "values only")
  local ebv = eig.batched(B, { vectors = true })
  T.eq(ebv:matrix(2).device, "gpu")
  T.eq(ebv:matrix(2).dtype, "f32")
  T.eq(ebv.device, "gpu")
  local w = ebv:vector(5, 7)
  T.eq(ebv:to("cpu"), ebv)
  T.eq(ebv.device, "cpu")
  local w2 = ebv:vector(5, 7)
  for i = 1, 32 do T.eq(w2[i], w[i]) end
  collectgarbage()
end)

T.test("gpu mixed residency: a call that copies an operand across says so in the note", function()
  T.need_gpu()
  local A = mat.randn(96, 96, { sym = true, seed = 4 })
  local e = eig.solve(A, { backend = "gpu" })        -- host A, GPU solve: A crosses
  T.ok(e.note:find("A is on the host: ", 1, true) and e.note:find("copied to the GPU for this call", 1, true),
    "host operand on the GPU backend: " .. e.note)
  A:to("gpu")
  e = eig.solve(A, { backend = "gpu" })              -- resident: nothing crosses
  T.ok(not e.note:find("copied to the GPU", 1, true), "resident operand: " .. e.note)
  e = eig.solve(A, { backend = "cpu" })              -- resident A, CPU solve: its host copy
  T.ok(e.note:find("the matrix is on the GPU: the CPU solve read its host copy", 1, true), e.note)
  local V = eig.solve(A, { backend = "gpu", vectors = true }):matrix()  -- born on the GPU
  local B = mat.batch(8, 16, { seed = 2 })
  local eb = eig.batched(B, { backend = "gpu" })
  T.ok(eb.note:find("B is on the host: ", 1, true), "batch: " .. eb.note)
  B:to("gpu")
  eb = eig.batched(B, { backend = "gpu" })
  T.ok(not eb.note:find("copied to the GPU", 1, true), "resident batch: " .. eb.note)
  T.eq(V.device, "gpu")
  -- a forest meeting host data on the GPU: the Predictions object says the features crossed
  local d = data.synth { kind = "classification", rows = 50000, features = 8, classes = 2, seed = 3 }
  local f = rf.train(d, { trees = 4, depth = 4, backend = "gpu", seed = 1 })
  local p = f:predict(d)
  if type(p) == "userdata" then
    T.ok(p.note and p.note:find("d is on the host: ", 1, true), "host d: " .. tostring(p.note))
    d:to("gpu")
    local q = f:predict(d)
    T.ok(not (q.note and q.note:find("copied to the GPU", 1, true)), "resident d: " .. tostring(q.note))
  end
end)

T.test("gpu non-symmetric input is refused by the device check, naming where", function()
  T.need_gpu()
  local A = mat.randn(50, 50, { sym = true })
  A:set(3, 40, A:get(3, 40) + 1)
  A:to("gpu")
  local msg = T.raises(function() eig.solve(A) end, "is not symmetric: relative asymmetry")
  T.ok(msg:find("at (3, 40)", 1, true), "names the element: " .. msg)
  local B = mat.batch(6, 8)
  B:set(2, 5, 9, 4)
  B:to("gpu")
  T.raises(function() eig.batched(B) end, "matrix 4 of the batch")
end)

T.test("gpu timing: total is the wall time of the call and the parts add up", function()
  T.need_gpu()
  local B = mat.batch(200, 32, { dtype = "f32" })
  local eb = eig.batched(B, { backend = "gpu", vectors = true })
  local t = eb.timing
  for _, k in ipairs { "total_ms", "kernel_ms", "transfer_ms", "host_ms", "check_ms" } do
    T.ok(type(t[k]) == "number" and t[k] >= 0, k)
  end
  T.ok(t.kernel_ms > 0 and t.check_ms > 0 and t.check_ms <= t.kernel_ms, "checks are kernels")
  -- host is what is left: the three add up (within the microseconds two clocks can disagree)
  T.near(t.kernel_ms + t.transfer_ms + t.host_ms, t.total_ms, 0.05 + 1e-3 * t.total_ms,
         "kernel + transfer + host = total")
  T.ok(tostring(eb):find("host", 1, true), "the summary shows host time")
end)

T.test("gpu pool: freed blocks are reused and gpu.trim() gives them back", function()
  T.need_gpu()
  collectgarbage()
  local B = mat.batch(100, 48)
  eig.batched(B, { backend = "gpu", vectors = true })
  collectgarbage()
  local m1 = gpu.mem()
  T.ok(m1.pool > 0, "the pool caches freed blocks")
  eig.batched(B, { backend = "gpu", vectors = true })
  collectgarbage()
  local m2 = gpu.mem()
  T.ok(m2.pool_hits > m1.pool_hits, "the second call is served from the pool")
  T.ok(gpu.trim() > 0, "trim releases bytes")
  T.eq(gpu.mem().pool, 0)
  T.eq(gpu.mem().staging, 0)
end)

T.test("gpu large staged copies: a batch over several staging chunks round-trips", function()
  T.need_gpu()
  local B = mat.batch(2000, 64, { dtype = "f64", seed = 2 })  -- 62.5 MiB: 2 chunks
  local H = B:copy()
  B:to("gpu")
  T.eq(B.device, "gpu")
  B:to("cpu")
  for _, b in ipairs { 1, 777, 2000 } do
    T.eq(B:get(64, 63, b), H:get(64, 63, b))
    T.eq(B:get(1, 1, b), H:get(1, 1, b))
  end
end)

T.test("SparseMatrix:to(\"gpu\") without a GPU says why", function()
  if gpu.available() then T.skip("a GPU is present: the GPU test below covers it") end
  local A = mat.laplacian3d(4)
  T.eq(A.device, "cpu")
  T.raises(function() A:to("gpu") end, "cannot move the 64 x 64 sparse matrix to the GPU: ")
  T.eq(A.device, "cpu")
  T.raises(function() A:to("fpga") end, 'device must be "cpu" or "gpu"')
end)

T.test("gpu SparseMatrix residency: the solvers use the resident CSR in place", function()
  T.need_gpu()
  collectgarbage()
  local A = mat.laplacian3d(24)
  local ref = eig.solve(A, { k = 4, backend = "gpu" })
  local before = gpu.mem().ours
  T.eq(A:to("gpu"), A)
  T.eq(A.device, "gpu")
  local held = gpu.mem().ours
  T.ok(held > before, "the CSR is held on the device")
  local e = eig.solve(A, { k = 4 })  -- auto follows the matrix
  T.eq(e.backend, "gpu")
  for i = 1, 4 do T.near(e.values[i], ref.values[i], 1e-10) end
  local s = eig.svd(A, { k = 3 })
  T.eq(s.backend, "gpu")
  e, s = nil, nil
  collectgarbage()
  T.ok(gpu.mem().ours >= held, "the resident copy survives the solves")
  A:to("cpu")
  T.eq(A.device, "cpu")
  collectgarbage()
  T.eq(gpu.mem().ours, before)
end)

T.test("e:check(A), e.device and e:to on CPU results (every machine)", function()
  local A = mat.randn(30, 30, { sym = true, seed = 8 })
  local e = eig.solve(A, { backend = "cpu" })
  T.eq(e.device, "cpu")
  local c = e:check(A)
  T.eq(c.max_residual, e.max_residual)  -- the same check on the same vectors
  T.eq(c.orthogonality, e.orthogonality)
  T.eq(#c.residuals, 30)
  for i = 1, 30 do T.eq(c.residuals[i], e.residuals[i]) end
  T.eq(e:to("cpu"), e)
  T.raises(function() e:to("gpu") end, "computed on the cpu")
  T.raises(function() e:to("tpu") end, 'device must be "cpu" or "gpu"')
  T.raises(function() e:check(mat.randn(5, 5, { sym = true })) end, "pass the matrix that was solved")
  T.raises(function() eig.solve(A, { vectors = false }):check(A) end, "has no vectors")
  local B = mat.batch(4, 6)
  local eb = eig.batched(B, { backend = "cpu", vectors = true })
  local cb = eb:check(B)
  T.eq(#cb.residuals, 24)
  T.eq(cb.max_residual, eb.max_residual)
  local t = eb.timing
  T.ok(t.host_ms >= 0 and t.check_ms >= 0 and t.total_ms >= t.kernel_ms, "timing fields")
end)
