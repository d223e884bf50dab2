-- test_copy_gpu.lua - registered host memory (buffer.h): a Dataset's X or a Matrix's data of
-- 64 MiB or more is page-locked (cudaHostRegister) on its first crossing to the GPU, copied
-- straight from/to after that, and unregistered when the object is freed (close, GC) or by
-- gpu.trim(). gpu.mem().registered shows the bytes. The bookkeeping itself (what is tracked,
-- registered once, released on every free path) is covered without a GPU by
-- tests/unit/test_buffer.c; these tests skip without one.

local ROWS, F = 300000, 64  -- 76.8 MB of features: above the 64 MiB threshold

local function registered()
  return gpu.mem().registered
end

local function big_dataset(seed)
  return data.synth{kind = "regression", rows = ROWS, features = F, seed = seed}
end

T.test("gpu registered copies: a large Dataset is page-locked once, released at close", function()
  T.need_gpu()
  collectgarbage()
  collectgarbage()
  local r0 = registered()
  local d = big_dataset(3)
  local bytes = ROWS * F * 4
  T.eq(registered(), r0, "tracking costs nothing: no registration before a copy")
  d:to("gpu")
  T.eq(d.device, "gpu")
  T.eq(registered(), r0 + bytes, "X is registered by its first crossing")
  d:to("cpu")
  d:to("gpu")
  T.eq(registered(), r0 + bytes, "the second crossing registers nothing more")
  -- the transpose's row-major input and its result are registered for the copies, checked
  -- bit for bit, and released before it returns
  local t = d:transpose{backend = "gpu", reps = 1}
  T.eq(t.verified, true)
  T.eq(t.copy_path, "registered")
  T.ok(t.h2d_gbps > 0 and t.d2h_gbps > 0 and t.register_ms >= 0, "rates and the pinning time")
  T.near(t.transfer_ms, t.h2d_ms + t.d2h_ms, 1e-9)
  T.eq(registered(), r0 + bytes, "the transpose's temporaries are unregistered")
  d:close()
  T.eq(registered(), r0, "released at close")
  T.raises(function() d:to("gpu") end, "closed")
  T.raises(function() d:transpose{backend = "gpu"} end, "closed")
end)

T.test("gpu registered copies: released by the GC, and by gpu.trim() until the next copy", function()
  T.need_gpu()
  collectgarbage()
  collectgarbage()
  gpu.trim()  -- whatever earlier tests left registered goes too
  local r0 = registered()
  T.eq(r0, 0, "gpu.trim() unregisters everything")
  do
    local d = big_dataset(4)
    d:to("gpu")
    T.ok(registered() > r0, "registered")
  end
  collectgarbage()
  collectgarbage()
  T.eq(registered(), r0, "the GC unregisters X before freeing it")
  local d = big_dataset(5)
  d:to("gpu")
  T.ok(registered() > r0)
  gpu.trim()
  T.eq(registered(), r0, "gpu.trim() unregisters")
  d:to("cpu")
  d:to("gpu")
  T.eq(registered(), r0 + ROWS * F * 4, "registered again by the next crossing")
  d:close()
  T.eq(registered(), r0)
end)

T.test("gpu registered copies: a large Matrix round-trips exactly and is released", function()
  T.need_gpu()
  collectgarbage()
  collectgarbage()
  local r0 = registered()
  local A = mat.randn(3000, 3000, {seed = 6})  -- 72 MB of f64
  local H = A:copy()
  A:to("gpu")
  T.eq(A.device, "gpu")
  T.ok(registered() >= r0 + 3000 * 3000 * 8, "the matrix's data is registered")
  -- a host write goes up through the registered range; the values stay exact
  A:set(1, 1, 42.5)
  H:set(1, 1, 42.5)
  A:to("cpu")
  for _, ij in ipairs { {1, 1}, {2, 3}, {1500, 1501}, {3000, 3000}, {3000, 1} } do
    T.eq(A:get(ij[1], ij[2]), H:get(ij[1], ij[2]))
  end
  A:close()
  T.eq(registered(), r0, "A's registration is released at close (H never crossed)")
  H:close()
end)
