-- test_mgpu.lua - several GPUs of one host (src/mgpu.h): gwb.gpus(), the gpus option's checks,
-- and dealing work to devices in index order. Without a GPU the dealing runs over CPU
-- stand-ins (gpu_standin = "cpu" on rf.train and eig.batched: each "device" its own host
-- thread running the CPU code on its share), which must give exactly what one run gives. The
-- GPU tests check that gpus = 1 is today's path (the same forest bytes and eigenvalues as no
-- option) and that asking for more GPUs than there are is a clear error.

local function iris() return data.load("datasets/iris.csv", { target = "species" }) end

local opts = T.merge

local function bytes_of(f, name)
  local path = T.tmpdir() .. "/mgpu_" .. name .. ".gwbf"
  f:save(path)
  return T.readfile(path)
end

local function ngpus()
  return #gwb.gpus()
end

-- ---- gwb.gpus() --------------------------------------------------------------------------

T.test("gwb.gpus(): devices with their fields, or an empty list and the reason", function()
  local list, why = gwb.gpus()
  T.eq(type(list), "table")
  local ok, reason = gpu.available()
  if not ok then
    T.eq(#list, 0, "no GPU: no devices")
    T.eq(why, reason, "the reason is gpu.available()'s")
    return
  end
  T.ok(#list >= 1, "a usable GPU is listed")
  T.eq(list[1].name, gpu.info().name, "device 0 is the one gpu.info() describes")
  for i, g in ipairs(list) do
    T.eq(g.index, i - 1, "index is the CUDA ordinal")
    T.ok(type(g.name) == "string" and #g.name > 0, "name")
    T.ok(g.memory_total > 0 and g.memory_free > 0 and g.memory_free <= g.memory_total,
      "memory free within total")
    T.ok(g.sms > 0, "multiprocessors")
    T.ok(g.pci_bus_id:match("^%x+:%x+:%x+%.%x$"), "PCI bus id " .. g.pci_bus_id)
    T.eq(#g.peer, #list, "a peer row per device")
    T.eq(g.peer[i], false, "a device is not its own peer")
  end
end)

-- ---- the option's checks -----------------------------------------------------------------

T.test("gpus: bad values are refused naming the parameter, what exists and what to do", function()
  local d = iris()
  local n = ngpus()
  local base = { trees = 2, progress = false }
  T.raises(function() rf.train(d, opts(base, { gpus = 0, gpu_standin = "cpu" })) end,
    "rf.train: gpus must be a device count >= 1")
  T.raises(function() rf.train(d, opts(base, { gpus = -2, gpu_standin = "cpu" })) end,
    "got -2")
  T.raises(function() rf.train(d, opts(base, { gpus = {}, gpu_standin = "cpu" })) end,
    "lists no device")
  T.raises(function() rf.train(d, opts(base, { gpus = { 0, 1, 0 }, gpu_standin = "cpu" })) end,
    "gpus lists device 0 twice (entries 1 and 3)")
  T.raises(function() rf.train(d, opts(base, { gpus = { 0, 99 }, gpu_standin = "cpu" })) end,
    "gpus[2] = 99 is not a device here")
  T.raises(function() rf.train(d, opts(base, { gpus = 1.5 })) end, "got a fraction")
  T.raises(function() rf.train(d, opts(base, { gpus = "two" })) end, "got string")
  T.raises(function() rf.train(d, opts(base, { gpus = { "a" } })) end, "gpus[1] must be a device id")
  T.raises(function() rf.train(d, opts(base, { gpus = 2, backend = "cpu" })) end,
    "gpus applies to GPU backends, and backend = \"cpu\" here")
  T.raises(function() rf.train(d, opts(base, { gpus = 2, backend = "hybrid", gpu_standin = "cpu" })) end,
    "backend = \"hybrid\" runs on one GPU")
  -- more devices than this machine has
  local want = math.max(n + 1, 2)
  local err = T.raises(function() rf.train(d, opts(base, { gpus = want })) end, "gpus")
  if n == 0 then
    T.ok(err:find("gpus applies to GPU backends, and there is no GPU here", 1, true), err)
    T.ok(err:find(select(2, gpu.available()), 1, true), "the reason: " .. err)
  else
    T.ok(err:find(string.format("gpus = %d, but this machine has only %d device", want, n), 1, true), err)
    T.ok(err:find(gwb.gpus()[1].name, 1, true), "names the devices: " .. err)
  end
  err = T.raises(function() rf.train(d, opts(base, { gpus = { math.max(n, 1) } })) end, "gpus")
  T.ok(err:find(n == 0 and "there is no GPU here" or "is not a device here", 1, true), err)
  -- the default, spelled out, is accepted everywhere (CPU builds included)
  T.ok(rf.train(d, opts(base, { gpus = 1, backend = "cpu" })))
  T.ok(rf.train(d, opts(base, { gpus = { 0 } })))
  T.raises(function() rf.train(d, opts(base, { gpu_standin = "gpu" })) end,
    "gpu_standin must be \"cpu\"")
end)

-- ---- dealing trees (CPU stand-ins) --------------------------------------------------------

T.test("trees dealt over CPU stand-in devices: the same forest bytes and OOB as one run", function()
  local digits = data.load("datasets/digits.csv")
  local diabetes = data.load("datasets/diabetes.csv")
  for ci, c in ipairs {
    { iris(), { trees = 9, seed = 3 }, 2 },
    { iris(), { trees = 10, seed = 5 }, { 1, 0 } },   -- dealt in the order listed
    { digits, { trees = 7, depth = 6, seed = 2, threads = 2 }, 3 },
    { diabetes, { trees = 6, depth = 5, seed = 4 }, 2 },
    { iris(), { trees = 3, seed = 1 }, 5 },             -- more devices than trees
  } do
    local d, o, g = c[1], opts(c[2], { progress = false }), c[3]
    local a = rf.train(d, opts(o, { backend = "cpu" }))
    local m = rf.train(d, opts(o, { gpus = g, gpu_standin = "cpu" }))
    T.eq(m.trees, a.trees, "case " .. ci .. ": tree count")
    T.ok(bytes_of(m, "m" .. ci) == bytes_of(a, "a" .. ci), "case " .. ci .. ": same forest bytes")
    T.eq(m.oob, a.oob, "case " .. ci .. ": same OOB score")
    local pa, pm = a:predict(d), m:predict(d)
    for i = 1, #pa do
      if pa[i] ~= pm[i] then T.eq(pm[i], pa[i], "case " .. ci .. " row " .. i) end
    end
  end
  -- a stand-in set of one is the ordinary path
  local d = iris()
  local a = rf.train(d, { trees = 5, progress = false, backend = "cpu" })
  local m = rf.train(d, { trees = 5, progress = false, gpus = 1, gpu_standin = "cpu" })
  T.ok(bytes_of(m, "one") == bytes_of(a, "one_a"), "one stand-in: same bytes")
end)

-- ---- on a GPU ------------------------------------------------------------------------------

T.test("gpu: gpus = 1 grows the same forest as no option (bytes and OOB)", function()
  T.need_gpu()
  local d = data.synth { rows = 3000, features = 12, classes = 3, informative = 6, seed = 4 }
  for _, o in ipairs {
    { trees = 12, depth = 7, seed = 3 },
    { trees = 9, depth = 6, seed = 5, max_features = "all" },
  } do
    o.progress = false
    o.backend = "gpu"
    local a = rf.train(d, o)
    local b = rf.train(d, opts(o, { gpus = 1 }))
    local c = rf.train(d, opts(o, { gpus = { 0 } }))
    T.eq(b.backend, "gpu")
    T.ok(bytes_of(b, "g1") == bytes_of(a, "g0"), "gpus = 1: same bytes")
    T.ok(bytes_of(c, "g2") == bytes_of(a, "g0"), "gpus = {0}: same bytes")
    T.eq(b.oob, a.oob, "same OOB (on the device)")
  end
end)

T.test("gpu: more GPUs than the machine has is a clear error; all of them agree", function()
  T.need_gpu()
  local n = ngpus()
  local d = iris()
  local o = { trees = 8, seed = 2, progress = false, backend = "gpu" }
  T.raises(function() rf.train(d, opts(o, { gpus = n + 1 })) end,
    string.format("rf.train: gpus = %d, but this machine has only %d device", n + 1, n))
  T.raises(function() eig.batched(mat.batch(4, 8, { seed = 1 }), { backend = "gpu", gpus = n + 1 }) end,
    string.format("eig.batched: gpus = %d, but this machine has only %d device", n + 1, n))
  if n < 2 then return end
  -- (a two-GPU machine) the forest of every device together is the one of device 0
  local a = rf.train(d, o)
  local b = rf.train(d, opts(o, { gpus = n }))
  T.ok(bytes_of(b, "gn") == bytes_of(a, "ga"), "gpus = " .. n .. ": same bytes")
  T.eq(b.oob, a.oob, "same OOB (CPU after the merge, device 0's on one)")
end)

-- ---- dealing matrices (CPU stand-ins) ------------------------------------------------------

T.test("matrices dealt over CPU stand-in devices: the same values, vectors and residuals", function()
  for ci, c in ipairs {
    { mat.batch(7, 6, { seed = 3 }), 2, {} },
    { mat.batch(10, 5, { seed = 4, dtype = "f32" }), { 2, 0, 1 }, {} },
    { mat.batch(9, 8, { seed = 5 }), 3, { vectors = true } },
    { mat.batch(3, 4, { seed = 6 }), 5, { vectors = true, method = "jacobi" } },  -- more devices than matrices
  } do
    local B, g, o = c[1], c[2], c[3]
    local a = eig.batched(B, opts(o, { backend = "cpu" }))
    local m = eig.batched(B, opts(o, { gpus = g, gpu_standin = "cpu" }))
    T.eq(m.count, a.count, "case " .. ci .. ": count")
    for b = 1, B.count do
      local va, vm = a:values(b), m:values(b)
      for i = 1, #va do T.eq(vm[i], va[i], string.format("case %d matrix %d value %d", ci, b, i)) end
      if o.vectors then
        for i = 1, #va do
          local xa, xm = a:vector(b, i), m:vector(b, i)
          for j = 1, #xa do T.eq(xm[j], xa[j], string.format("case %d matrix %d vector %d", ci, b, i)) end
        end
      end
    end
    T.eq(m.method, a.method, "case " .. ci .. ": method")
    T.eq(m.max_residual, a.max_residual, "case " .. ci .. ": residual")
    if o.vectors then T.eq(m.orthogonality, a.orthogonality, "case " .. ci .. ": orthogonality") end
  end
  T.raises(function() eig.batched(mat.batch(2, 3), { gpus = { 0, 0 }, gpu_standin = "cpu" }) end,
    "eig.batched: gpus lists device 0 twice")
  T.raises(function() eig.batched(mat.batch(2, 3), { gpus = 2, backend = "cpu" }) end,
    "eig.batched: gpus applies to GPU backends")
  T.raises(function() eig.solve(mat.batch(1, 3), { gpus = 2 }) end, "gpus")
end)

T.test("gpu: eig.batched with gpus = 1 gives the values of no option", function()
  T.need_gpu()
  for _, o in ipairs {
    { backend = "gpu" },
    { backend = "gpu", vectors = true, dtype = "f64" },
    { backend = "gpu", method = "cusolver" },
  } do
    local B = mat.batch(300, 24, { seed = 8, dtype = o.dtype or "f32" })
    o.dtype = nil
    local a = eig.batched(B, o)
    local m = eig.batched(B, opts(o, { gpus = 1 }))
    local z = eig.batched(B, opts(o, { gpus = { 0 } }))
    T.eq(m.backend, "gpu")
    T.eq(m.method, a.method)
    for b = 1, B.count, 37 do
      local va, vm, vz = a:values(b), m:values(b), z:values(b)
      for i = 1, #va do
        T.eq(vm[i], va[i], "gpus = 1, matrix " .. b)
        T.eq(vz[i], va[i], "gpus = {0}, matrix " .. b)
      end
    end
    if o.vectors then T.eq(m.max_residual, a.max_residual, "residuals") end
  end
end)

-- ---- d:to("gpu", {gpus}) and the sparse solve ----------------------------------------------

T.test("d:to and eig.solve (sparse) check gpus like the others", function()
  local d = iris()
  local n = ngpus()
  T.raises(function() d:to("gpu", { gpus = 0 }) end, "d:to: gpus must be a device count >= 1")
  T.raises(function() d:to("gpu", { gpus = { 0, 0 } }) end, "d:to: gpus")
  T.raises(function() d:to("gpu", { gpus = math.max(n + 1, 2) }) end, "d:to: gpus")
  T.raises(function() d:to("cpu", { gpus = 1 }) end, "options are for \"gpu\"")
  T.raises(function() d:to("gpu", { bogus = 1 }) end, "bogus")
  T.eq(d.device, "cpu", "a refused move leaves d on the host")
  T.eq(#d.gpus, 0)
  local S = mat.laplacian2d(12, { sparse = true })
  local a = eig.solve(S, { k = 3, backend = "cpu" })
  local b = eig.solve(S, { k = 3, backend = "cpu", gpus = 1 })
  for i = 1, 3 do T.eq(b.values[i], a.values[i], "gpus = 1 is the default") end
  T.raises(function() eig.solve(S, { k = 3, gpus = 2, backend = "cpu" }) end,
    "eig.solve: gpus applies to GPU backends")
  T.raises(function() eig.solve(S, { k = 3, gpus = math.max(n + 1, 2) }) end, "eig.solve: gpus")
end)

T.test("gpu: d:to(\"gpu\", {gpus = 1}) is d:to(\"gpu\"); the sparse solve refuses other devices", function()
  T.need_gpu()
  local d = iris()
  d:to("gpu", { gpus = 1 })
  T.eq(d.device, "gpu")
  T.eq(#d.gpus, 1)
  T.eq(d.gpus[1], 0)
  local a = rf.train(d, { trees = 6, seed = 2, progress = false, backend = "gpu" })
  local b = rf.train(d, { trees = 6, seed = 2, progress = false, backend = "gpu", gpus = 1 })
  T.ok(bytes_of(b, "res1") == bytes_of(a, "res0"), "resident: gpus = 1 same bytes")
  d:to("cpu")
  T.eq(d.device, "cpu")
  T.eq(#d.gpus, 0)
  local n = ngpus()
  if n >= 2 then
    d:to("gpu", { gpus = { 0, 1 } })
    T.eq(#d.gpus, 2, "a copy on each device")
    local c = rf.train(d, { trees = 6, seed = 2, progress = false, backend = "gpu", gpus = 2 })
    T.ok(bytes_of(c, "res2") == bytes_of(a, "res0"), "two devices, each reading its copy")
    T.raises(function() eig.solve(mat.laplacian2d(12, { sparse = true }), { k = 3, backend = "gpu", gpus = 2 }) end,
      "the solve over several GPUs (rows partitioned, halo exchanged) is not built")
  end
end)
