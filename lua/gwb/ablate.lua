-- gwb/ablate.lua - gwb.ablate(fn [, opts]): what each optimisation buys. Runs fn with every
-- chosen switch on, then with each one off in turn, checks that the results agree, and prints
-- a table (switch, wall time, kernel time, slowdown, result check). The switches themselves
-- live in src/switches.c; the C half (the ablation level, read counts, kernel time, result
-- comparison of gwb's objects) is gwb._ablate in src/lapi_switches.c.
local help = require "gwb.help"

local A = gwb._ablate
local M = {}

-- --- comparing results ------------------------------------------------------------------

local function fmt(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- ok, detail: a and b agree (gwb's objects by their own rule, numbers within tol relative,
-- tables key by key).
local function same(a, b, tol, path, depth)
  local ok, detail = A.compare(a, b, tol)
  if ok ~= nil then
    if not ok and path ~= "" then detail = path .. ": " .. detail end
    return ok, detail
  end
  local ta, tb = type(a), type(b)
  local where = path == "" and "result" or path
  if ta ~= tb then return false, string.format("%s: a %s against a %s", where, ta, tb) end
  if ta == "number" then
    local t = tol or 1e-9
    if a == b or (a ~= a and b ~= b) or math.abs(a - b) <= t * math.max(math.abs(a), math.abs(b)) then
      return true, "same"
    end
    return false, string.format("%s: %.10g against %.10g", where, a, b)
  end
  if ta == "userdata" then
    -- objects that read as a table (f:predict's Predictions on the GPU): their contents
    local o1, t1 = pcall(function() return a:totable() end)
    local o2, t2 = pcall(function() return b:totable() end)
    if o1 and o2 and type(t1) == "table" and type(t2) == "table" then
      return same(t1, t2, tol, path, depth + 1)
    end
  end
  if ta == "table" then
    if depth > 20 then return true, "same" end
    local na, nb = #a, #b
    if na ~= nb then return false, string.format("%s: %d against %d items", where, na, nb) end
    for i = 1, na do  -- the array part in order (fast where equal)
      local x, y = a[i], b[i]
      if x ~= y then
        local o, d = same(x, y, tol, string.format("%s[%d]", path, i), depth + 1)
        if not o then return false, d end
      end
    end
    local function in_array(k) return math.type(k) == "integer" and k >= 1 and k <= na end
    local keys = {}
    for k in pairs(a) do if not in_array(k) then keys[#keys + 1] = k end end
    for k in pairs(b) do if a[k] == nil and not in_array(k) then keys[#keys + 1] = k end end
    table.sort(keys, function(x, y) return tostring(x) < tostring(y) end)
    for _, k in ipairs(keys) do
      local sub = type(k) == "string" and (path == "" and k or path .. "." .. k)
        or string.format("%s[%s]", path, tostring(k))
      local o, d = same(a[k], b[k], tol, sub, depth + 1)
      if not o then return false, d end
    end
    return true, "same"
  end
  if a == b or tostring(a) == tostring(b) then return true, "same" end
  return false, string.format("%s: %s against %s", where, fmt(a), fmt(b))
end

M.same = function(a, b, tol) return same(a, b, tol, "", 0) end

-- --- the runs ---------------------------------------------------------------------------

local function median(xs)
  local t = {}
  for i, x in ipairs(xs) do t[i] = x end
  table.sort(t)
  local n = #t
  if n == 0 then return 0 end
  if n % 2 == 1 then return t[(n + 1) // 2] end
  return 0.5 * (t[n // 2] + t[n // 2 + 1])
end

-- Run fn `runs` times under layer; wall and kernel ms (medians), the first result, the reads.
local function measure(fn, layer, runs)
  local walls, kernels, results = {}, {}, {}
  A.set(layer)
  A.reads(true)
  for r = 1, runs do
    local k0 = A.kernel_ms()
    local t0 = A.now()
    local res = fn()
    local t1 = A.now()
    local k1 = A.kernel_ms()
    walls[r] = (t1 - t0) * 1e3
    kernels[r] = k1 - k0
    results[r] = res
  end
  local reads = A.reads(true)
  return { wall_ms = median(walls), kernel_ms = median(kernels), results = results, reads = reads }
end

local function fmt_ms(ms)
  if ms >= 100 then return string.format("%.0f", ms) end
  if ms >= 10 then return string.format("%.1f", ms) end
  return string.format("%.3f", ms)
end

local function table_text(res)
  local lines = {}
  local function row(...) lines[#lines + 1] = string.format("%-16s %10s %10s %9s  %s", ...) end
  row("switch", "wall ms", "kernel ms", "slowdown", "result")
  local b = res.baseline
  row("(all on)", fmt_ms(b.wall_ms), res.gpu_used and fmt_ms(b.kernel_ms) or "-", "1.00x",
    b.check)
  for _, r in ipairs(res.rows) do
    if r.measured then
      row(r.switch .. " off", fmt_ms(r.wall_ms), res.gpu_used and fmt_ms(r.kernel_ms) or "-",
        string.format("%.2fx", r.slowdown), (r.agree and "agrees: " or "DIFFERS: ") .. r.check)
    else
      row(r.switch .. " off", "-", "-", "-", "not measured: " .. r.why)
    end
  end
  lines[#lines + 1] = string.format("%d runs each, medians; slowdown = wall time with the switch "
    .. "off / all on%s", res.runs, res.gpu_used and " (kernel time beside it)" or "")
  return table.concat(lines, "\n")
end

local Result = { __name = "gwb.Ablation" }
Result.__index = Result
function Result.__tostring(r)
  local measured, differ = 0, 0
  for _, row in ipairs(r.rows) do
    if row.measured then measured = measured + 1 end
    if row.measured and not row.agree then differ = differ + 1 end
  end
  return string.format("ablation: %d switches, %d measured, %s (r:table() for the table)",
    #r.rows, measured, differ == 0 and "all results agree" or (differ .. " disagree"))
end
function Result.table(r) return table_text(r) end

local known_opts = { switches = true, runs = true, tol = true, check = true, log = true,
  print = true, label = true }

function M.ablate(fn, opts)
  if type(fn) ~= "function" then
    error("gwb.ablate: expected a function (got " .. type(fn) .. ")", 2)
  end
  opts = opts or {}
  if type(opts) ~= "table" then error("gwb.ablate: opts must be a table (got " .. type(opts) .. ")", 2) end
  for k in pairs(opts) do
    if not known_opts[k] then
      error("gwb.ablate: unknown option '" .. tostring(k) .. "' (known: switches, runs, tol, check, "
        .. "log, print, label)", 2)
    end
  end
  local runs = opts.runs or 3
  if math.type(runs) ~= "integer" or runs < 1 or runs > 1000 then
    error("gwb.ablate: runs must be an integer from 1 to 1000 (got " .. tostring(runs) .. ")", 2)
  end
  if opts.tol ~= nil and (type(opts.tol) ~= "number" or not (opts.tol >= 0)) then
    error("gwb.ablate: tol must be a number >= 0", 2)
  end
  if opts.check ~= nil and type(opts.check) ~= "function" then
    error("gwb.ablate: check must be a function(a, b) -> ok [, detail]", 2)
  end
  -- the switches: a list of names or a set {["rf.subtract"] = true}; default all
  local names = {}
  if opts.switches == nil then
    for _, s in ipairs(gwb.switches()) do names[#names + 1] = s.name end
  elseif type(opts.switches) == "table" then
    for i = 1, #opts.switches do names[i] = opts.switches[i] end   -- a list: in its order
    local set = {}
    for k, v in pairs(opts.switches) do
      if math.type(k) ~= "integer" and v then set[#set + 1] = k end
    end
    table.sort(set, function(x, y) return tostring(x) < tostring(y) end)
    for _, k in ipairs(set) do names[#names + 1] = k end
  else
    error("gwb.ablate: switches must be a list of names such as {\"rf.subtract\"}", 2)
  end
  if #names == 0 then error("gwb.ablate: no switches to ablate", 2) end
  for _, n in ipairs(names) do
    if type(n) ~= "string" then error("gwb.ablate: switch names are strings (got " .. type(n) .. ")", 2) end
    local ok, err = pcall(A.info, n, "gwb.ablate")
    if not ok then error(err, 2) end
  end
  local check = opts.check or function(a, b) return same(a, b, opts.tol, "", 0) end
  local function compare(a, b)
    local ok, detail = check(a, b)
    return ok and true or false, detail or (ok and "agrees" or "differs")
  end

  -- everything chosen on; the ablation level stays set only while fn runs
  local all_on = {}
  for _, n in ipairs(names) do all_on[n] = true end
  local guard <close> = setmetatable({}, { __close = function() A.set(nil) end })

  local base = measure(fn, all_on, runs)
  local ref = base.results[1]
  local res = setmetatable({ runs = runs, rows = {}, label = opts.label or "ablate" }, Result)
  res.gpu_used = base.kernel_ms > 0
  res.baseline = { wall_ms = base.wall_ms, kernel_ms = base.kernel_ms, check = "reference" }
  -- repeated runs with everything on must agree among themselves, or no check means much
  for r = 2, runs do
    local ok, d = compare(ref, base.results[r])
    if not ok then
      res.baseline.check = "runs with all on disagree among themselves: " .. d
      res.nondeterministic = true
      break
    end
  end
  for _, n in ipairs(names) do
    local backends, cpu, gpu = A.info(n)
    local row = { switch = n, backends = backends }
    res.rows[#res.rows + 1] = row
    if (base.reads[n] or 0) == 0 then
      -- fn never asked: the switch does not apply to what ran; say so instead of measuring
      row.measured = false
      if gpu and not cpu and not res.gpu_used then
        row.why = "GPU only; this run used the CPU"
      elseif cpu and not gpu and res.gpu_used then
        row.why = "CPU only; this run used the GPU"
      else
        row.why = "fn never reached its code path (" .. backends .. ")"
      end
    else
      local layer = {}
      for _, m in ipairs(names) do layer[m] = m ~= n end
      local off = measure(fn, layer, runs)
      row.measured = true
      row.wall_ms = off.wall_ms
      row.kernel_ms = off.kernel_ms
      row.slowdown = base.wall_ms > 0 and off.wall_ms / base.wall_ms or 0
      row.kernel_slowdown = base.kernel_ms > 0 and off.kernel_ms / base.kernel_ms or nil
      row.agree, row.check = true, "same"
      for r = 1, runs do
        local ok, d = compare(ref, off.results[r])
        if not ok then row.agree, row.check = false, d; break end
        row.check = d
      end
    end
  end
  A.set(nil)
  res.ok = not res.nondeterministic
  for _, r in ipairs(res.rows) do if r.measured and not r.agree then res.ok = false end end

  if opts.print ~= false then print(table_text(res)) end
  if opts.log ~= false then
    local rows = {}
    for i, r in ipairs(res.rows) do
      rows[i] = { switch = r.switch, measured = r.measured, wall_ms = r.wall_ms,
        kernel_ms = r.kernel_ms, slowdown = r.slowdown, agree = r.agree, check = r.check or r.why }
    end
    local ok, err = pcall(gwb.log_run, { kind = "gwb.ablate", backend = res.gpu_used and "gpu" or "cpu",
      params = { label = res.label, runs = runs, switches = names },
      timing = { wall_ms = base.wall_ms, kernel_ms = base.kernel_ms },
      metrics = { ok = res.ok, rows = rows } })
    if not ok then io.stderr:write("gwb: warning: ablation not logged: ", tostring(err), "\n") end
  end
  return res
end

gwb.ablate = M.ablate

-- gwb ablate [--switches a,b] [--runs N] [--tol X] SCRIPT.lua [args...] (src/main.c calls
-- this with the words after "ablate"): the script is fn, its return value the result.
-- Returns the exit status: 0 all agree, 2 usage, 3 a result disagrees.
function M.main(...)
  local argv, i, opts, json = { ... }, 1, { print = true }, false
  local function usage(msg)
    io.stderr:write("gwb ablate: ", msg, "\nusage: gwb ablate [--switches a,b,...] [--runs N] "
      .. "[--tol X] [--json] SCRIPT.lua [args...]\n")
    return 2
  end
  while argv[i] and argv[i]:sub(1, 2) == "--" do
    local a, v = argv[i], argv[i + 1]
    if a == "--" then i = i + 1; break end
    local key, inline = a:match("^%-%-([%w_]+)=(.*)$")
    if key then a, v, i = "--" .. key, inline, i - 1 end
    if a == "--switches" and v then
      opts.switches = {}
      for name in v:gmatch("[^,%s]+") do opts.switches[#opts.switches + 1] = name end
    elseif a == "--runs" and v and math.tointeger(tonumber(v)) then
      opts.runs = math.tointeger(tonumber(v))
    elseif a == "--tol" and v and tonumber(v) then
      opts.tol = tonumber(v)
    elseif a == "--json" then  -- one JSON object instead of the table (a flag: no value)
      json, opts.print = true, false
      i = i - 1
    elseif a == "--switches" or a == "--runs" or a == "--tol" then
      return usage(a .. " needs a value" .. (a == "--switches" and " (names, comma-separated)"
        or a == "--runs" and " (an integer)" or " (a number)"))
    else
      return usage("unknown option '" .. a .. "'")
    end
    i = i + 2
  end
  local path = argv[i]
  if not path then return usage("no script given") end
  local chunk, err = loadfile(path)
  if not chunk then io.stderr:write("gwb ablate: ", err, "\n"); return 1 end
  local args = table.move(argv, i + 1, #argv, 1, {})
  opts.label = path
  local r = M.ablate(function() return chunk(table.unpack(args)) end, opts)
  if json then
    local rows = {}
    for k, row in ipairs(r.rows or {}) do
      rows[k] = { switch = row.switch, measured = row.measured, wall_ms = row.wall_ms,
        kernel_ms = row.kernel_ms, slowdown = row.slowdown, agree = row.agree,
        check = row.check or row.why }
    end
    io.write(require("gwb.runs").encode({ command = "ablate", script = path, ok = r.ok,
      rows = rows }), "\n")
  end
  if not r.ok then
    io.stderr:write("gwb ablate: some results disagree (see the table)\n")
    return 3
  end
  return 0
end
gwb.ablate_main = M.main
help.register(M.main, "gwb.ablate_main",
  "gwb.ablate_main(word, ...) -> exit status\n"
  .. "What `gwb ablate [--switches a,b] [--runs N] [--tol X] SCRIPT.lua [args]` runs, given the\n"
  .. "words after `ablate`: gwb.ablate over the script (its return value is the result).\n"
  .. "Returns 0 when every result agrees, 2 for bad usage, 3 when a result disagrees.")

help.register(M.ablate, "gwb.ablate",
  "gwb.ablate(fn [, opts]) -> result\n"
  .. "What each optimisation buys: run fn with every chosen switch on (gwb.switches()), then\n"
  .. "with each one off in turn, check that the results agree, and print a table: switch,\n"
  .. "wall time, kernel time (GPU), slowdown (wall off / all on), result check. fn returns\n"
  .. "what to compare: a Forest (same trees), an Eigen (values within the solvers'\n"
  .. "residuals), a Dataset or Matrix (same values), numbers (within tol), tables (key by key).\n"
  .. "A switch that fn never consults (a GPU switch on a CPU run) is listed as not measured\n"
  .. "with the reason. Options: switches (a list of names; default all), runs (3; medians),\n"
  .. "tol (relative tolerance for numbers and Eigen values), check (function(a, b) -> ok,\n"
  .. "detail), print (true), log (true: a gwb.ablate record in the run log), label.\n"
  .. "The result: r.ok, r.rows ({switch, measured, wall_ms, kernel_ms, slowdown, agree,\n"
  .. "check | why}), r.baseline, r:table(). On the command line: gwb ablate SCRIPT.lua\n"
  .. "(the script's return value is the result).\n"
  .. "Example: gwb.ablate(function() return rf.train(d, {trees = 50}) end, "
  .. "{switches = {\"rf.subtract\", \"rf.rowmajor\"}})")

return M
