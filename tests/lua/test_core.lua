-- test_core.lua - the Lua-facing core: help, pretty printer, gpu module, backend, options.

T.test("help has a text for everything exported by C modules", function()
  local missing = {}
  for _, modname in ipairs { "gpu", "gwb", "panel", "data", "rf", "mat", "eig", "teach", "plot" } do
    for k, v in pairs(_G[modname]) do
      if type(v) == "function" and not gwb.helpentry(v) then
        missing[#missing + 1] = modname .. "." .. k
      end
    end
  end
  T.eq(#missing, 0, "functions without help: " .. table.concat(missing, ", "))
end)

T.test("help(x) finds a text by value and by name", function()
  local h = require "gwb.help"
  T.ok(h.text(gpu.info):find("gpu.info()", 1, true))
  T.ok(h.text("gpu.mem"):find("cudaMemGetInfo", 1, true))
  local t, err = h.text(42)
  T.eq(t, nil)
  T.ok(err:find("help()", 1, true))
  T.ok(h.text():find("gpu.info", 1, true), "help() lists gpu.info")
end)

T.test("pretty printer: nested, sorted keys, limits, cycles", function()
  local p = gwb.pretty
  T.eq(p({ b = 2, a = 1, 3 }), "{3, a = 1, b = 2}")
  T.eq(p({ x = { y = { z = {} } } }), "{x = {y = {z = {}}}}")
  T.eq(p({ 1, { 2, { 3, { 4, { 5 } } } } }), "{1, {2, {3, {4, {...}}}}}")
  local c = {}; c.self = c
  T.eq(p(c), "{self = <cycle>}")
  local big = {}
  for i = 1, 100 do big[i] = i end
  T.ok(p(big):find("... (100 items)", 1, true))
  T.eq(p("a\nb"), '"a\\nb"')
  T.eq(p(0.1), "0.1")
  T.eq(p(3), "3")
  T.eq(p(0 / 0), "nan")
  T.eq(p({ ["not ident"] = true }), '{["not ident"] = true}')
end)

T.test("gpu.available returns a reason when false", function()
  local ok, why = gpu.available()
  if ok then
    T.eq(why, nil)
  else
    T.ok(type(why) == "string" and #why > 10, "a reason string")
  end
end)

T.test("gpu.info describes the device or says why there is none", function()
  local i = gpu.info()
  if i.available then
    T.ok(i.sms > 0 and i.memory_bytes > 0 and i.name ~= "")
    T.ok(i.smem_per_block_optin >= i.smem_per_block)
  else
    T.ok(i.reason:find("CPU", 1, true) or i.reason:find("driver", 1, true) or i.reason:find("device", 1, true))
    T.raises(gpu.mem, gpu.info().reason:sub(1, 20))
  end
end)

T.test("gpu.kernels and reset work without launches", function()
  gpu.reset()
  T.eq(#gpu.kernels(), 0)
end)

T.test("default backend can be read and set, bad names rejected", function()
  local old = gwb.backend()
  T.eq(gwb.backend("cpu"), "cpu")
  T.raises(function() gwb.backend("tpu") end, 'must be "auto", "cpu" or "gpu"')
  gwb.backend(old)
end)

T.test("version and build flags are exposed", function()
  T.ok(gwb.version:match("^%d+%.%d+%.%d+$"))
  T.eq(type(gwb.cuda_build), "boolean")
end)
