-- test_udata.lua - a value given another type's metatable through the debug library is
-- refused with an error (the type tag is checked, not only the metatable), and collecting it
-- frees nothing it does not own.

local reg = debug.getregistry()

-- Every metatable gwb registers ("gwb.*"), by name.
local function gwb_metatables()
  local t = {}
  for k, v in pairs(reg) do
    if type(k) == "string" and k:match("^gwb%.") and type(v) == "table" then t[k] = v end
  end
  return t
end

-- One live value of every userdata type, made fresh.
local function samples()
  local d = data.synth { rows = 40, features = 5, seed = 1 }
  local A = mat.randn(4, 4, { seed = 1 })
  return {
    Dataset = d,
    Forest = rf.train(d, { trees = 2, depth = 2 }),
    Matrix = A,
    MatrixRow = A[1],
    Eigen = eig.solve(mat.laplacian1d(6)),
    SparseMatrix = mat.laplacian1d(20, { sparse = true }),
    file = io.tmpfile(),
  }
end

-- Call everything a metatable offers on v: its metamethods and the methods it lists.
local function poke(v, mt)
  local calls = 0
  local function try(f, ...)
    if type(f) == "function" then
      calls = calls + 1
      pcall(f, v, ...)
    end
  end
  for _, k in ipairs { "__tostring", "__len", "__index", "__call", "__close", "__eq", "__lt",
    "__add", "__mul", "__concat", "__newindex" } do
    try(rawget(mt, k), "rows", 1)
  end
  for _, m in ipairs { mt.__methods, type(mt.__index) == "table" and mt.__index or nil } do
    for _, f in pairs(m) do
      try(f)
      try(f, v)
      try(f, 1, 1)
    end
  end
  pcall(tostring, v)
  pcall(function() return #v end)
  pcall(function() return v.rows end)
  return calls
end

T.test("every userdata given every other gwb type's metatable raises, never crashes", function()
  local mts = gwb_metatables()
  T.ok(mts["gwb.Dataset"] and mts["gwb.Forest"] and mts["gwb.Matrix"] and mts["gwb.Eigen"]
    and mts["gwb.SparseMatrix"], "the registered metatables")
  local calls = 0
  for mtname, mt in pairs(mts) do
    for kind in pairs(samples()) do
      local v = samples()[kind]
      local own = debug.getmetatable(v)
      if own ~= mt then
        debug.setmetatable(v, mt)
        calls = calls + poke(v, mt)
        debug.setmetatable(v, own)
      end
      -- the sample's own methods still work (nothing was freed by the wrong type)
      T.ok(#tostring(v) > 0, kind .. " after " .. mtname)
    end
    collectgarbage()
  end
  T.ok(calls > 100, "methods called: " .. calls)
end)

T.test("methods called on a value of the wrong type say what they expected", function()
  local s = samples()
  local mt = debug.getmetatable(s.Dataset)
  local mmt, fmt = debug.getmetatable(s.Matrix), debug.getmetatable(s.file)
  debug.setmetatable(s.Matrix, mt)
  local e = T.raises(function() return s.Matrix:head() end, "Dataset")
  T.ok(e:find("expected", 1, true), e)
  T.raises(function() return tostring(s.Matrix) end, "expected")
  debug.setmetatable(s.file, debug.getmetatable(s.Forest))
  T.raises(function() return s.file:predict(s.Dataset) end, "Forest")
  T.raises(function() return tostring(s.file) end, "expected")
  debug.setmetatable(s.Matrix, mmt)   -- (so that they are freed: no leak under ASan)
  debug.setmetatable(s.file, fmt)
  s.file:close()
end)

T.test("the __gc and __close of a gwb type free nothing of a value of another type", function()
  -- called directly (as the collector would), so that nothing is left to leak afterwards
  for _, name in ipairs { "gwb.Dataset", "gwb.Forest", "gwb.Matrix", "gwb.Eigen",
    "gwb.SparseMatrix", "gwb.MatrixRow" } do
    local mt = reg[name]
    if mt then
      local s = samples()
      for kind, v in pairs(s) do
        local own = debug.getmetatable(v)
        if own ~= mt then
          -- as the collector would see it: v under the other type's metatable
          debug.setmetatable(v, mt)
          for _, mm in ipairs { "__gc", "__close" } do
            if mt[mm] then pcall(mt[mm], v) end
          end
          debug.setmetatable(v, own)
          T.ok(#tostring(v) > 0 and not tostring(v):find("closed"), kind .. " under " .. name)
        end
      end
      s.file:close()
    end
  end
  collectgarbage()
end)

T.test("light userdata given a gwb metatable raise", function()
  local function f() return reg end
  local lud = debug.upvalueid(f, 1)
  T.eq(type(lud), "userdata")
  local old = debug.getmetatable(lud)
  local ok, err = pcall(function()
    for _, name in ipairs { "gwb.Dataset", "gwb.Forest", "gwb.Matrix", "gwb.Eigen",
      "gwb.SparseMatrix", "gwb.MatrixRow" } do
      local mt = reg[name]
      debug.setmetatable(lud, mt)
      T.raises(function() return tostring(lud) end, "expected")
      poke(lud, mt)
    end
  end)
  debug.setmetatable(lud, old)
  T.ok(ok, tostring(err))
  -- as arguments too
  local m = mat.randn(3, 3)
  T.raises(function() return m:copy():matrix(lud) end)
  T.raises(function() return rf.train(lud) end, "Dataset")
end)
