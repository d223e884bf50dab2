-- scripts/demo.lua - a tour of gwb (run by `make demo`). It grows with the project.
local function section(t) print(("\n== %s %s"):format(t, ("="):rep(70 - #t))) end

section("gwb")
print("gwb " .. gwb.version .. " (commit " .. gwb.commit .. "), default backend " .. gwb.backend())
print("Everything here is plain Lua 5.4; type help() at the prompt for the whole API.")

section("The GPU")
local ok, why = gpu.available()
if ok then
  local i = gpu.info()
  print(("%s: compute capability %s, %d SMs, %.1f GiB, L2 %.0f MB, %d KB shared memory per block")
    :format(i.name, i.compute_capability, i.sms, i.memory_bytes / 2^30, i.l2_bytes / 1e6,
            i.smem_per_block_optin // 1024))
  local m = gpu.mem()
  print(("memory: %.1f GiB free of %.1f GiB"):format(m.free / 2^30, m.total / 2^30))
else
  print("no GPU: " .. why)
  print("every operation also has a CPU backend, so the rest of the tour runs on the CPU"
    .. (gwb.cuda_build and "; without a GPU, `make demo CUDA=0` builds without compiling the kernels." or "."))
end

section("Datasets")
do
  local d = data.load("datasets/iris.csv", { target = "species" })
  print(d)
  print(d:head(3))
  d:describe()  -- draws (as at the prompt)
  local train, test = d:split(0.8, { seed = 1, stratify = true })
  print(("split 0.8 (stratified): %d training rows, %d test rows; the test part:"):format(
    train.rows, test.rows))
  print(test:class_counts())
  local s = data.synth { rows = 100000, features = 32, informative = 8, classes = 3, seed = 1 }
  print(s)
  local t = s:transpose { reps = 3 }
  print(("row-major -> column-major, %d x %d on the %s (%s): %.2f ms, %.1f GB/s%s, verified: %s")
    :format(t.rows, t.cols, t.backend, t.kernel, t.kernel_ms, t.gbps,
      t.copy_gbps and (" (%.0f%% of a device copy)"):format(100 * t.copy_fraction) or "",
      tostring(t.verified)))
end

section("Random forests")
do
  local d = data.load("datasets/iris.csv", { target = "species" })
  local train, test = d:split(0.8, { seed = 1 })
  local f = rf.train(train, { trees = 100, bins = 64, seed = 1, progress = false })
  print(f)
  print(("test accuracy %.3f; the most important feature:"):format(f:score(test)))
  local best, bv = nil, -1
  for k, v in pairs(f:importance()) do if v > bv then best, bv = k, v end end
  print(("  %s (%.2f of the impurity decrease)"):format(best, bv))
  local cv = rf.cv(d, { folds = 5, trees = 100, seed = 1, progress = false })
  print("rf.cv: " .. cv.summary .. " (scikit-learn's RandomForestClassifier: 0.967)")
  -- the same forest on the GPU when there is one ("auto" takes it for work this size)
  local dg = data.load("datasets/digits.csv")
  local gtrain, gtest = dg:split(0.8, { seed = 1 })
  local fc = rf.train(gtrain, { trees = 50, seed = 1, backend = "cpu", progress = false })
  local fa = rf.train(gtrain, { trees = 50, seed = 1, progress = false })
  print(("digits, 50 trees: cpu %.1f ms, accuracy %.4f; auto -> %s (%s) %.1f ms, accuracy %.4f%s")
    :format(fc.timing.total_ms, fc:score(gtest), fa.backend, fa.backend_why, fa.timing.total_ms,
      fa:score(gtest), fa.backend == "gpu" and
        (" (tree 1: %d nodes on the CPU, %d on the GPU)"):format(#fc:tree(1), #fa:tree(1)) or ""))
end

section("Eigenvalues")
do
  local d = data.load("datasets/iris.csv", { target = "species" })
  print(data.pca(d, 2))
  local A = mat.laplacian1d(200)
  local e = eig.solve(A, { k = 3 })
  print(("smallest eigenvalues of the 1-D Laplacian (n = 200): %.6g %.6g %.6g (exact: 2 - 2cos(k pi/201))")
    :format(e.values[1], e.values[2], e.values[3]))
  local B = mat.batch(500, 32, { dtype = "f32", seed = 1 })
  local eb = eig.batched(B, { vectors = true })
  print(eb)
  local ok, why = pcall(eig.solve, mat.randn(4, 4))
  print("a non-symmetric matrix: " .. tostring(why):gsub("^.-: ", "", 1))
end

section("Sparse eigenvalues")
do
  local A = mat.laplacian2d(100)   -- order 10000: sparse (CSR) by default
  print(A)
  local e = eig.solve(A, { k = 6, which = "smallest" })
  print(("the 6 smallest of the 2-D Laplacian (100^2): %s"):format(table.concat((function()
    local t = {} for i = 1, 6 do t[i] = ("%.8f"):format(e.values[i]) end return t end)(), " ")))
  print(("  %s on the %s, %d iterations, largest residual %.1e, %.0f ms (eigenvalues 2 and 3, 5 and 6"
    .. " are double: a block method keeps both copies)"):format(e.method, e.backend, e.iterations,
    e.max_residual, e.timing.total_ms))
  local K = mat.read("datasets/matrices/bcsstk04.mtx")
  local k = eig.solve(K, { k = 2, which = "largest" })
  print(("bcsstk04 (SuiteSparse, %d nonzeros): largest eigenvalues %.6g, %.6g"):format(K.nnz,
    k.values[1], k.values[2]))
  local R = mat.sprand(2000, 500, { density = 0.01 })
  local s = eig.svd(R, { k = 3 })
  print(("a random 2000x500 sparse matrix: singular values %.6f %.6f %.6f (randomized, %d"
    .. " iterations, residual %.1e)"):format(s.values[1], s.values[2], s.values[3], s.iterations,
    s.max_residual))
end

section("Seeing the machine: panel, plots, lessons, run log")
do
  print("On a terminal, an operation longer than ~0.3 s brings up the live panel (panel.on() keeps")
  print("it up). What it would leave in the scrollback now: " .. panel.status().summary:gsub("\n", "\n  "))
  local d = data.load("datasets/iris.csv", { target = "species" })
  local f = rf.train(d, { trees = 30, seed = 1, backend = "cpu" })
  f:plot_importance { width = 64 }
  local r = gwb.bench(function() f:predict(d) end, { seconds = 0.2, label = "predict iris", log = false })
  print(("gwb.bench: predicting 150 rows takes %.3f ms (median of %d calls)"):format(r.median_ms, r.calls))
  local o = gpu.occupancy({ regs = 64, smem = 48 * 1024 }, 256)
  print(("a kernel with 64 registers and 48 KB shared memory at 256 threads: %.0f%% occupancy, limited by %s")
    :format(o.occupancy * 100, o.limited_by))
  gwb.autodraw = false  -- the lessons' measurements only, not their text (it draws otherwise)
  local p = gpu.profile(function()
    if gpu.available() then teach.transpose { rows = 512, cols = 512, reps = 1 } end
  end)
  if p.achieved then
    print(tostring(p))
  else
    print("gpu.profile (achieved occupancy, CUPTI): " .. p.reason:match("^[^.]*"))
  end
  for _, line in ipairs(teach.layout({ 2, 2 }, { 32, 2 }).text) do
    if line:match("^Element") then print("teach.layout({2, 2}, {32, 2}): " .. line) end
  end
  gwb.autodraw = true
  print(("the run log (%s) holds %d records; runs{last = 3} shows the newest"):format(gwb.runs_path(), #runs()))
end

section("The REPL")
print("At the gwb> prompt: bare expressions print their values, tables are pretty-printed,")
print("a trailing ';' keeps a result quiet, Tab completes names, Ctrl-C stops long work.")
print("?rf.train (or rf.train?) explains a function, help(rf) lists a module, help(d) an object; _ is")
print("the last result. One-shot commands need no Lua: gwb rf train FILE --target y, gwb eig A.mtx,")
print("gwb info, gwb runs --tag x (gwb help lists them).")
print("For example, the value of {b = 2, a = {1, 2, 3}} prints as:")
gwb.print_results({ b = 2, a = { 1, 2, 3 } })

print("\nThe demo is over. Start the REPL with: build/gwb")
