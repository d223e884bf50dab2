-- api_fuzz.lua - every function of every gwb module and every method of every gwb class,
-- called under pcall with adversarial arguments; every result printed and converted to a
-- string. Run by tests/cli/test_api_fuzz.sh in a child gwb (a crash is a test failure named
-- by the last "CALL" line of the log, written unbuffered before each call).
--   gwb tests/lua/api_fuzz.lua <repo root> <log file>
-- The functions, methods and option keys are enumerated, not listed: module tables in _G,
-- class metatables ("gwb.*") in the registry, option keys from the "unknown option" error
-- ("(known: a, b, c)"), so whatever is added later is fuzzed too. Calls that run long are
-- stopped by the shell test with Ctrl-C (every long operation must honour it).

local root, logpath = arg[1], arg[2]
assert(root and logpath, "usage: api_fuzz.lua <repo root> <log file>")
local log = assert(io.open(logpath, "w"))
log:setvbuf("no")
local out = io.stdout

-- Functions not called, and why. Keys: "module.function" or "Class:method".
local SKIP = {
  ["panel.on"] = "takes over the terminal until panel.off (covered by tests/repl)",
  ["gwb.bench"] = "calls its function argument a given number of times: unbounded by design",
  ["gwb.helpall"] = "prints every help entry (help() is fuzzed; this only costs time)",
  ["teach.transpose"] = "a lesson: times a 4096 x 4096 transpose 5 times by default (4 s a call)",
}
-- The measured lessons run their measurements for seconds by design; their options and
-- Ctrl-C are tested in tests/lua/test_teach.lua.
for _, k in ipairs { "atomics", "banks", "coalescing", "divergence", "histogram", "launch",
  "measure", "memory" } do
  SKIP["teach." .. k] = "a measured lesson: runs for seconds by design (tests/lua/test_teach.lua)"
end
SKIP["gpu.bandwidth"] = "a benchmark: copies buffers of sizes it picks (seconds on a GPU)"
SKIP["gpu.reset"] = "resets the device under every other test of the process"
-- The run log's file primitives write the file their first argument names, and the fuzzer
-- gives module functions the bundled iris path there (tests/cli/test_runlog.sh covers them).
for _, k in ipairs { "_save_text", "_append_line", "_attach" } do
  SKIP["gwb." .. k] = "writes the file named by its first argument (the repository's datasets)"
end

-- --- adversarial values ------------------------------------------------------------------

local rec = {}
rec.self = rec
local co = coroutine.create(function() end)
local values = {
  { "nil", nil }, { "true", true }, { "false", false },
  { "0", 0 }, { "1", 1 }, { "2", 2 }, { "3", 3 }, { "-1", -1 }, { "0.5", 0.5 },
  { "1.5", 1.5 }, { "-0.0", -0.0 }, { "nan", 0 / 0 }, { "inf", math.huge },
  { "-inf", -math.huge }, { "maxinteger", math.maxinteger }, { "mininteger", math.mininteger },
  { "2^31", 2 ^ 31 }, { "2^32+1", 4294967297 }, { "2^53", 2 ^ 53 }, { "1e300", 1e300 },
  { "-1e300", -1e300 }, { "-2^31", -2147483648 },
  { '""', "" }, { '"x"', "x" }, { '"\\0"', "\0" }, { '"%s%n%d"', "%s%n%d" },
  { "long string", ("a"):rep(5000) }, { '"1"', "1" }, { '"nan"', "nan" }, { '"-1"', "-1" },
  { "{}", {} }, { "{1,2,3}", { 1, 2, 3 } }, { "{{}}", { {} } }, { "{0/0}", { 0 / 0 } },
  { "{x=1}", { x = 1 } }, { "{-1}", { -1 } }, { "{2^53}", { 2 ^ 53 } },
  { "{'a','b'}", { "a", "b" } }, { "recursive table", rec },
  { "function", function() return 1 end }, { "erroring function", function() error("boom") end },
  { "coroutine", co }, { "io.stdout", io.stdout },
}

-- --- objects of every class: good, empty, closed -------------------------------------------

local pool = {}      -- class name -> list of {label, object}
local function classof(v)
  local mt = getmetatable(v)
  return type(mt) == "table" and type(rawget(mt, "__name")) == "string" and mt.__name or nil
end
local function add(label, v)
  local c = classof(v)
  if not c or not c:match("^gwb%.") then return end
  pool[c] = pool[c] or {}
  if #pool[c] < 6 then table.insert(pool[c], { label, v }) end
end
local function try(label, f, ...)
  local ok, v = pcall(f, ...)
  if ok then add(label, v) end
  return ok and v or nil
end

local iris = try("iris", data.load, root .. "/datasets/iris.csv")
try("diabetes", data.load, root .. "/datasets/diabetes.csv")
local reg = try("synth regression", data.synth, { kind = "regression", rows = 40, features = 3 })
try("40 features", data.synth, { rows = 100, features = 40 })
try("one row", data.new, { X = { { 1, 2 } }, y = { "a" } })
try("nan column", data.new, { X = { { 0 / 0, 1 }, { 0 / 0, 2 }, { 0 / 0, 3 } }, y = { 1, 2, 1 } })
if iris then
  try("no rows", function() return iris:take({}) end)
  try("no columns", function() return iris:select({}) end)
  try("iris forest", rf.train, iris, { trees = 3, seed = 1 })
  try("pca", data.pca, iris, { k = 2 })
  local ok, folds = pcall(function() return iris:kfold(3) end)
  if ok and type(folds) == "table" then add("fold", folds[1]) end
end
if reg then try("regression forest", rf.train, reg, { trees = 2, seed = 1 }) end
local A = try("randn sym 4", mat.randn, 4, { sym = true })
try("randn 3x5 f32", mat.randn, 3, 5, { dtype = "f32" })
try("zeros 1", mat.zeros, 1)
try("batch 2x3", mat.batch, 2, 3)
try("laplacian1d 6", mat.laplacian1d, 6)
try("sprand", mat.sprand, 6, 6, 0.3)
try("empty sparse", mat.sprand, 3, 3, 0)
if A then
  try("eig", eig.solve, A)
  try("eig k=1 no vectors", eig.solve, A, { k = 1, vectors = false })
  try("svd", eig.svd, A)
  try("matrix row", function() return A[1] end)
end
try("batched eig", function() return eig.batched(mat.batch(2, 3)) end)
-- closed objects: through :close() where there is one, else __close
local function closed(label, mk)
  local ok, v = pcall(mk)
  if not ok or v == nil then return end
  local mt = getmetatable(v)
  if type(v.close) == "function" then pcall(v.close, v)
  elseif mt and mt.__close then pcall(mt.__close, v) end
  add(label, v)
end
closed("closed dataset", function() return iris:take({ 1, 2, 3 }) end)
closed("closed matrix", function() return mat.randn(3) end)
closed("closed sparse", function() return mat.laplacian1d(4) end)
closed("closed forest", function() return rf.train(iris, { trees = 1 }) end)
closed("closed eigen", function() return eig.solve(mat.randn(3, { sym = true })) end)

-- As arguments: the first good object of each class and its closed one (the other pooled
-- objects are the selves of their methods).
local objects = {}
for c, list in pairs(pool) do
  local good, shut
  for _, o in ipairs(list) do
    if o[1]:find("closed", 1, true) then shut = shut or o else good = good or o end
  end
  if good then table.insert(objects, { c .. " " .. good[1], good[2] }) end
  if shut then table.insert(objects, { c .. " " .. shut[1], shut[2] }) end
end
table.sort(objects, function(a, b) return a[1] < b[1] end)
local argvals = {}
for _, v in ipairs(values) do table.insert(argvals, v) end
for _, o in ipairs(objects) do table.insert(argvals, o) end

-- --- calling and showing -------------------------------------------------------------------

local ncalls, nok, slow, bad, cost = 0, 0, {}, {}, {}
local function show(v, depth)
  local s = tostring(v)
  out:write(s, "\n")
  if type(v) == "table" and depth < 2 then
    local n = 0
    for k, x in pairs(v) do
      n = n + 1
      if n > 40 then break end
      out:write(tostring(k), " = ")
      show(x, depth + 1)
    end
  elseif type(v) == "userdata" then
    pcall(function() out:write(tostring(#v), "\n") end)
  end
end
local function describe(args, n)
  local t = {}
  for i = 1, n do t[i] = args[i] end
  return table.concat(t, ", ")
end

-- Call f with the given (label, value) pairs; log first, show every result after.
local function call(name, f, ...)
  local pairs_ = { ... }
  local n = select("#", ...)
  local labels, vals = {}, {}
  for i = 1, n do labels[i], vals[i] = pairs_[i][1], pairs_[i][2] end
  ncalls = ncalls + 1
  log:write("CALL ", ncalls, " ", name, "(", describe(labels, n), ")\n")
  local t0 = os.clock()
  local r = table.pack(pcall(f, table.unpack(vals, 1, n)))
  local dt = os.clock() - t0
  if dt > 1 then table.insert(slow, string.format("%.1fs %s(%s)", dt, name, describe(labels, n))) end
  cost[name] = (cost[name] or 0) + dt
  if r[1] then
    nok = nok + 1
    for i = 2, r.n do
      -- a result that cannot be printed is a defect, collected and reported at the end
      local ok, err = pcall(show, r[i], 0)
      if ok then ok, err = pcall(print, r[i]) end
      if not ok then
        table.insert(bad, string.format("%s(%s): result %d (%s) does not print: %s", name,
          describe(labels, n), i - 1, type(r[i]), tostring(err)))
      end
      add("result of " .. name, r[i])
    end
  else
    out:write("error: ", tostring(r[2]), "\n")
  end
  if ncalls % 200 == 0 then collectgarbage() end
  return r
end

-- Option keys of f at this argument position: from the message that rejects a made-up one.
local function option_keys(name, f, prefix)
  local args = {}
  for i, p in ipairs(prefix) do args[i] = p end
  args[#args + 1] = { "{zz_probe=1}", { zz_probe = 1 } }
  local r = call(name, f, table.unpack(args))
  local msg = not r[1] and tostring(r[2]) or ""
  if not msg:find("zz_probe", 1, true) then return nil end
  local list = msg:match("%(known: ([^)]*)%)")
  local keys = {}
  for k in (list or ""):gmatch("[%w_]+") do keys[#keys + 1] = k end
  return keys
end

-- Fuzz f: each value alone, each value after each good prefix, options by key.
local fuzz_prefix
local function fuzz(name, f, prefixes)
  if SKIP[name] then
    out:write("skip ", name, ": ", SKIP[name], "\n")
    return
  end
  call(name, f)
  for _, prefix in ipairs(prefixes) do
    -- a prefix whose own arguments are refused as the wrong type adds nothing: skip it
    local r = #prefix > 0 and call(name, f, table.unpack(prefix)) or { true }
    local bad_arg = not r[1] and tonumber(tostring(r[2]):match("bad argument #(%d+)"))
    if not (bad_arg and bad_arg <= #prefix) then
      fuzz_prefix(name, f, prefix)
    end
  end
end

fuzz_prefix = function(name, f, prefix)
  do
    for _, v in ipairs(argvals) do
      local a = {}
      for i, p in ipairs(prefix) do a[i] = p end
      a[#a + 1] = v
      call(name, f, table.unpack(a))
    end
    local keys = option_keys(name, f, prefix)
    for _, k in ipairs(keys or {}) do
      for _, v in ipairs(values) do
        local a = {}
        for i, p in ipairs(prefix) do a[i] = p end
        a[#a + 1] = { "{" .. k .. "=" .. v[1] .. "}", { [k] = v[2] } }
        call(name, f, table.unpack(a))
      end
    end
  end
end

-- Good first arguments for a module function: the values its first argument most likely
-- takes (an object of each class, a small count, a path).
local function good_prefixes()
  local p = { {} }
  for _, o in ipairs(objects) do
    if not o[1]:find("closed", 1, true) and not o[1]:find("result of", 1, true) then
      table.insert(p, { o })
    end
  end
  table.insert(p, { { "3", 3 } })
  table.insert(p, { { "3", 3 }, { "3", 3 } })
  table.insert(p, { { "iris path", root .. "/datasets/iris.csv" } })
  return p
end

-- --- modules -------------------------------------------------------------------------------

local STD = { _G = 1, string = 1, table = 1, math = 1, io = 1, os = 1, coroutine = 1,
  debug = 1, utf8 = 1, package = 1, arg = 1 }
local STDFN = {}
for _, k in ipairs { "assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs",
  "load", "loadfile", "next", "pairs", "pcall", "print", "rawequal", "rawget", "rawlen", "rawset",
  "require", "select", "setmetatable", "tonumber", "tostring", "type", "warn", "xpcall" } do
  STDFN[k] = true
end

local modules, globals = {}, {}
for k, v in pairs(_G) do
  if type(v) == "table" and not STD[k] then table.insert(modules, k) end
  if type(v) == "function" and not STDFN[k] then table.insert(globals, k) end
end
table.sort(modules)
table.sort(globals)

-- the run log grows with every successful call and runs() reads all of it: the functions
-- that read it go first
table.sort(modules, function(a, b) return (a == "gwb" and "" or a) < (b == "gwb" and "" or b) end)
local prefixes = good_prefixes()
local nfuncs, nmethods = 0, 0
for _, k in ipairs(globals) do
  nfuncs = nfuncs + 1
  fuzz(k, _G[k], { {}, { { "{}", {} } } })
end
for _, m in ipairs(modules) do
  local names = {}
  for k, v in pairs(_G[m]) do
    if type(v) == "function" then table.insert(names, k) end
  end
  table.sort(names)
  for _, k in ipairs(names) do
    nfuncs = nfuncs + 1
    fuzz(m .. "." .. k, _G[m][k], prefixes)
  end
end

-- --- classes -------------------------------------------------------------------------------

local registry = debug.getregistry()
local classes = {}
for k, mt in pairs(registry) do
  if type(k) == "string" and k:match("^gwb%.") and type(mt) == "table" then
    table.insert(classes, k)
  end
end
table.sort(classes)

local plain = { { "1", 1 }, { '"x"', "x" }, { "{}", {} } }
for _, c in ipairs(classes) do
  local mt = registry[c]
  local methods = {}
  local idx = type(rawget(mt, "__index")) == "table" and rawget(mt, "__index") or rawget(mt, "__methods")
  for k, v in pairs(idx or {}) do
    if type(v) == "function" then table.insert(methods, k) end
  end
  table.sort(methods)
  local selves = {}
  for _, o in ipairs(pool[c] or {}) do table.insert(selves, { c .. " " .. o[1], o[2] }) end
  if #selves == 0 then out:write("note: no object of ", c, " to call its methods on\n") end
  local short = c:gsub("^gwb%.", "")
  for _, k in ipairs(methods) do
    local f = idx[k]
    local name = short .. ":" .. k
    nmethods = nmethods + 1
    if SKIP[name] then
      out:write("skip ", name, ": ", SKIP[name], "\n")
    else
      -- self: every value and every object (wrong classes, closed ones)
      for _, s in ipairs(argvals) do call(name, f, s) end
      -- the first self gets every argument after it and after a plain one; the others
      -- (empty, one-row, result objects) every plain value
      for i, s in ipairs(selves) do
        if i == 1 then
          local p = { { s } }
          for _, a in ipairs(plain) do table.insert(p, { s, a }) end
          fuzz(name, f, p)
        else
          fuzz_prefix(name, f, { s })
        end
      end
    end
  end
  -- metamethods: __tostring, __len, __index with odd keys, __newindex, __concat, __eq ...
  local metas = {}
  for k, v in pairs(mt) do
    if type(k) == "string" and type(v) == "function" and k ~= "__gc" and k ~= "__close" then
      table.insert(metas, k)
    end
  end
  table.sort(metas)
  for _, k in ipairs(metas) do
    local name = short .. "." .. k
    for _, s in ipairs(selves) do
      for _, a in ipairs(values) do call(name, mt[k], s, a, { "1", 1 }) end
    end
    for _, a in ipairs(argvals) do call(name, mt[k], a, { '"x"', "x" }) end
  end
end

-- last: release through __close and __gc twice over (each must be idempotent), then use
for _, c in ipairs(classes) do
  local mt = registry[c]
  for _, o in ipairs(pool[c] or {}) do
    for _, k in ipairs { "__close", "__gc", "__close", "__gc" } do
      if type(rawget(mt, k)) == "function" then
        call(c .. "." .. k, mt[k], { c .. " " .. o[1], o[2] })
      end
    end
    call("tostring", tostring, { "released " .. c .. " " .. o[1], o[2] })
  end
end
collectgarbage()
collectgarbage()

out:write("\n")
for _, s in ipairs(slow) do io.stderr:write("slow: ", s, "\n") end
if os.getenv("GWB_FUZZ_COST") then
  local t = {}
  for k, v in pairs(cost) do t[#t + 1] = { k, v } end
  table.sort(t, function(a, b) return a[2] > b[2] end)
  for i = 1, math.min(25, #t) do io.stderr:write(string.format("cost %.2fs %s\n", t[i][2], t[i][1])) end
end
for _, s in ipairs(bad) do io.stderr:write("FAIL: ", s, "\n") end
io.stderr:write(string.format("api fuzz: %d functions, %d methods of %d classes, %d calls (%d returned)\n",
  nfuncs, nmethods, #classes, ncalls, nok))
log:write("FUZZ DONE\n")
log:close()
if #bad > 0 then
  io.stderr:write(#bad, " results did not print\n")
  os.exit(1)
end
