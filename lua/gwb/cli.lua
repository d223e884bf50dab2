-- gwb/cli.lua - the one-shot commands (`gwb rf train FILE --target y`, `gwb eig A.mtx`, ...).
-- src/cli.c parses argv into positional arguments and an options table (the Lua API's option
-- names) and calls M.run(name, pos, opts); each command below is the Lua call a script would
-- make, plus printing. A command returns its exit status (nil = 0); errors raise: a string
-- (exit 1) or {usage = "..."} (exit 2).
local runs = require "gwb.runs"

local M = {}
local cmd = {}
M.commands = cmd

local function usage(msg) error({ usage = msg }, 0) end
local function say(...) io.write(string.format(...), "\n") end
local function warn(...) io.stderr:write("gwb: ", string.format(...), "\n") end
local function json(v) io.write(runs.encode(v), "\n") end

local function fmt_ms(ms) return gwb.fmt_time and gwb.fmt_time(ms) or string.format("%.1f ms", ms) end

-- Copy the keys of opts listed in keys (and only those) into a new table.
local function pick(opts, keys, extra)
  local t = {}
  for _, k in ipairs(keys) do if opts[k] ~= nil then t[k] = opts[k] end end
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

local train_keys = { "trees", "depth", "bins", "max_features", "min_leaf", "criterion", "block",
  "seed", "threads", "backend", "tag" }

-- --target NAME, else the last column (data.load's default); a .gwbd carries its target:
-- --target may be left out (or must name the same column).
local function load_data(path, target)
  if path and path:lower():match("%.gwbd$") then
    local d = data.load(path)
    if target and target ~= d.target then
      usage(string.format("%s carries its target '%s'; --target %s does not match it (leave "
        .. "--target out)", path, tostring(d.target), target))
    end
    return d
  end
  return data.load(path, { target = target })
end

local function data_json(d)
  return { path = d.source and d.source.path or nil, rows = d.rows, features = d.features,
    task = d.task, target = d.target, classes = d.classes }
end

-- kernel + transfer + host = total: host is everything that is not a kernel or a copy, so the
-- three add up to the wall time (a result's host_ms that does not is not used)
local function time_split(t)
  local total = t.total_ms or 0
  local k, x = t.kernel_ms or 0, t.transfer_ms or 0
  local host = math.max(0, total - k - x)
  return { total_ms = t.total_ms, kernel_ms = k, transfer_ms = x, host_ms = host }
end

local function time_line(t)
  local s = time_split(t)
  if s.kernel_ms == 0 and s.transfer_ms == 0 then  -- a CPU run: no GPU parts to split off
    return string.format("  time      %s (CPU)", fmt_ms(s.total_ms or 0))
  end
  return string.format("  time      %s = kernel %s + transfer %s + host %s", fmt_ms(s.total_ms),
    fmt_ms(s.kernel_ms), fmt_ms(s.transfer_ms), fmt_ms(s.host_ms))
end

-- A Forest's summary has its own time line (total = kernels + transfers + host); add ours
-- only to a summary without one.
local function forest_text(f)
  local s = tostring(f)
  if s:find("\n  time ", 1, true) then return s end
  return s .. "\n" .. time_line(f.timing)
end

local function forest_json(f)
  return { trees = f.trees, nodes = f.nodes, leaves = f.leaves, depth = f.depth, task = f.task,
    oob = f.oob, oob_metric = f.task == "classification" and "accuracy" or "r2",
    backend = f.backend, backend_why = f.backend_why, params = f.params,
    timing = time_split(f.timing) }
end

-- Same trees: every tree's nodes agree in feature, threshold, children and NaN side.
local function same_trees(a, b)
  if a.trees ~= b.trees then return false, 0 end
  local same = 0
  for i = 1, a.trees do
    local ta, tb = a:tree(i), b:tree(i)
    local ok = #ta == #tb
    for j = 1, ok and #ta or 0 do
      local x, y = ta[j], tb[j]
      if x.feature ~= y.feature or x.threshold ~= y.threshold or x.left ~= y.left
        or x.right ~= y.right or x.nan_left ~= y.nan_left then ok = false; break end
    end
    if ok then same = same + 1 end
  end
  return same == a.trees, same
end

local function train_both(d, opts, o)
  local cpu = rf.train(d, pick(opts, train_keys, { backend = "cpu" }))
  local avail, why = gpu.available()
  if not avail then
    if o.json then
      json({ command = "rf train", data = data_json(d), cpu = forest_json(cpu),
        gpu = { available = false, reason = why } })
    else
      say("%s", forest_text(cpu))
    end
    warn("rf train --backend both: the GPU is unavailable (%s); trained on the CPU only, "
      .. "no parity check", why)
    return 1
  end
  local g = rf.train(d, pick(opts, train_keys, { backend = "gpu" }))
  local same, nsame = same_trees(cpu, g)
  local metric = d.task == "classification" and "accuracy" or "R2"
  local diff = (g.oob or 0 / 0) - (cpu.oob or 0 / 0)
  local ratio = cpu.timing.total_ms / math.max(g.timing.total_ms, 1e-9)
  local parity = {
    metric = metric, cpu = cpu.oob, gpu = g.oob, difference = diff,
    same_trees = same, trees_equal = nsame, trees = cpu.trees, speedup = ratio,
  }
  if o.save then g:save(o.save) end
  if o.json then
    json({ command = "rf train", data = data_json(d), cpu = forest_json(cpu),
      gpu = forest_json(g), parity = parity, saved = o.save })
    return 0
  end
  say("%s\n\n%s", forest_text(cpu), forest_text(g))
  say("parity    OOB %s cpu %.4f, gpu %.4f (difference %+.4f); same trees: %s (%d of %d); "
    .. "gpu %.2fx the speed of cpu (%s vs %s)", metric, cpu.oob or 0 / 0, g.oob or 0 / 0, diff,
    same and "yes" or "no", nsame, cpu.trees, ratio, fmt_ms(g.timing.total_ms),
    fmt_ms(cpu.timing.total_ms))
  if o.save then say("saved     %s (the GPU forest)", o.save) end
  return 0
end

cmd["rf train"] = function(pos, o)
  local d = load_data(pos[1], o.target)
  if o.backend == "both" then return train_both(d, o, o) end
  local f = rf.train(d, pick(o, train_keys))
  if o.save then f:save(o.save) end
  if o.json then
    local r = forest_json(f)
    r.command, r.data, r.saved = "rf train", data_json(d), o.save
    json(r)
  else
    say("%s", forest_text(f))
    if o.save then say("saved     %s", o.save) end
  end
end

cmd["rf cv"] = function(pos, o)
  local d = load_data(pos[1], o.target)
  if o.backend == "both" then usage("--backend both is for rf train; pick cpu, gpu or auto") end
  local cv = rf.cv(d, pick(o, train_keys, { folds = o.folds, shuffle = o.shuffle }))
  if o.json then
    json({ command = "rf cv", data = data_json(d), mean = cv.mean, std = cv.std,
      metric = cv.metric, folds = cv.folds, backend = cv.backend, timing = time_split(cv.timing) })
    return
  end
  local parts = {}
  for i, s in ipairs(cv.folds) do parts[i] = string.format("%.4f", s) end
  say("%s\n  folds     %s\n  backend   %s\n%s", cv.summary, table.concat(parts, " "), cv.backend,
    time_line(cv.timing))
end

-- The first line of a text file and the separator it seems to use.
local function header_of(path)
  local f, err = io.open(path, "r")
  if not f then error(err, 0) end
  local line = f:read("l") or ""
  f:close()
  line = line:gsub("^\239\187\191", ""):gsub("\r$", "")
  local sep = ","
  for _, c in ipairs({ ",", "\t", ";", "|" }) do
    if line:find(c, 1, true) then sep = c; break end
  end
  local cols = {}
  for field in (line .. sep):gmatch("(.-)" .. (sep == "|" and "%|" or sep)) do
    cols[#cols + 1] = field:gsub('^"(.*)"$', "%1")
  end
  return cols, sep
end

local function csv_field(v)
  v = tostring(v)
  if v:find('[,"\n\r]') then v = '"' .. v:gsub('"', '""') .. '"' end
  return v
end

-- rf predict reads FILE's header line itself: stdin ("-") is saved to a temporary first, and
-- a gzip/zstd file is written out plain (data.load decompresses it, d:write_csv gives the same
-- values back). Returns the path to read and the temporary to remove (nil when none).
local function plain_input(path)
  local f, err
  if path == "-" then f = io.stdin else f, err = io.open(path, "rb") end
  if not f then error(err, 0) end
  local head = f:read(4) or ""
  local packed = head:sub(1, 3) == "\31\139\8" or head == "\40\181\47\253"
  if path ~= "-" then
    f:close()
    if not packed then return path end
  end
  local tmp = os.tmpname()
  local ok, e = pcall(function()
    if path == "-" then
      local out = assert(io.open(tmp, "wb"))
      assert(out:write(head))
      for b in function() return io.stdin:read(1 << 20) end do assert(out:write(b)) end
      assert(out:close())
    end
    if packed then data.load(path == "-" and tmp or path, { progress = false }):write_csv(tmp) end
  end)
  if not ok then
    os.remove(tmp)
    error((tostring(e):gsub(tmp:gsub("%p", "%%%0"), path == "-" and "stdin" or path)), 0)
  end
  return tmp, tmp
end

cmd["rf predict"] = function(pos, o)
  local f = rf.load(pos[1])
  local path = pos[2]
  local src, tmp0 = plain_input(path)
  local ok0, cols, sep = pcall(header_of, src)
  if not ok0 then
    if tmp0 then os.remove(tmp0) end
    error(cols, 0)
  end
  local has_target = false
  for _, c in ipairs(cols) do if c == f.target then has_target = true end end
  local d
  if has_target then
    local ok, res = pcall(data.load, src, { target = f.target })
    if tmp0 then os.remove(tmp0) end
    if not ok then error((tostring(res):gsub(src:gsub("%p", "%%%0"), path)), 0) end
    d = res
  else
    -- no target column: a copy with a placeholder one, so the reader keeps every feature
    local inp, err = io.open(src, "r")
    if not inp then if tmp0 then os.remove(tmp0) end error(err, 0) end
    local tmp = os.tmpname()
    -- the temporary goes on every path out (an unreadable input, a full disk, a bad row)
    local ok, res = pcall(function()
      local dst = assert(io.open(tmp, "w"))
      local first = true
      for line in inp:lines() do
        local cr = line:match("\r$") and "\r" or ""
        if cr ~= "" then line = line:sub(1, -2) end
        if line ~= "" then assert(dst:write(line, sep, first and "__gwb_no_target" or "0", cr, "\n")) end
        first = false
      end
      assert(dst:close())
      return data.load(tmp, { target = "__gwb_no_target", task = "regression" })
    end)
    inp:close()
    os.remove(tmp)
    if tmp0 then os.remove(tmp0) end
    if not ok then error((tostring(res):gsub(tmp:gsub("%p", "%%%0"), path)), 0) end
    d = res
  end
  local popts = { threads = o.threads, strict = o.strict }
  local pred, note = f:predict(d, popts)
  if note and not o.json then warn("note: %s", note) end  -- under --json: the object's note
  local proba = o.proba and f:predict_proba(d, popts) or nil
  local score = has_target and f:score(d, popts) or nil
  local metric = f.task == "classification" and "accuracy" or "r2"
  if o.json and not o.out then
    json({ command = "rf predict", model = pos[1], data = path, rows = #pred,
      predictions = pred, proba = proba, labels = proba and f.labels or nil,
      score = score, metric = score and metric or nil, note = note })
    return
  end
  local lines = {}
  local head = { "prediction" }
  if proba then for _, l in ipairs(f.labels) do head[#head + 1] = csv_field("p_" .. l) end end
  lines[1] = table.concat(head, ",")
  for i = 1, #pred do
    local row = { csv_field(pred[i]) }
    if proba then for k = 1, #proba[i] do row[#row + 1] = string.format("%.7g", proba[i][k]) end end
    lines[#lines + 1] = table.concat(row, ",")
  end
  lines[#lines + 1] = ""
  if o.out then
    gwb._save_text(o.out, table.concat(lines, "\n"), "rf predict --out")   -- atomic (fileio.c)
  else
    io.write(table.concat(lines, "\n"))
  end
  if o.json then  -- --out with --json: the file has the CSV, stdout the summary
    json({ command = "rf predict", model = pos[1], data = path, rows = #pred, out = o.out,
      score = score, metric = score and metric or nil, note = note })
    return
  end
  if has_target then
    io.stderr:write(string.format("%s %.4f on %d rows of %s (its '%s' column)\n",
      f.task == "classification" and "accuracy" or "R2", score, d.rows, path, f.target))
  end
  if o.out then io.stderr:write(string.format("wrote %d predictions to %s\n", #pred, o.out)) end
end

local function eig_json(name, e, o)
  local vals = e.values
  local res = {}
  for i, r in ipairs(e.residuals or {}) do res[i] = r end
  return { command = name, values = vals, residuals = res, max_residual = e.max_residual,
    orthogonality = e.orthogonality, iterations = e.iterations, converged = e.converged,
    method = e.method, backend = e.backend, timing = e.timing, vectors = o.vectors }
end

-- Matrix Market and SparseMatrix files (mat.read), or a dense Matrix written by A:save (mat.load)
local function read_matrix(path)
  local ok, A = pcall(mat.read, path)
  if ok then return A end
  if tostring(A):find("not a Matrix Market file", 1, true) then
    local ok2, B = pcall(mat.load, path)
    if ok2 then return B end
  end
  error(A, 0)
end

local function solve_cmd(name, fn, keys)
  return function(pos, o)
    local A = read_matrix(pos[1])
    local opts = pick(o, keys)
    if o.vectors then opts.vectors = true end
    local e = fn(A, opts)
    if o.vectors then mat.write(e:matrix(), o.vectors) end
    if o.json then json(eig_json(name, e, o)) return end
    say("%s", tostring(e))
    if o.vectors then say("  vectors written to %s", o.vectors) end
  end
end

cmd["eig"] = solve_cmd("eig", function(A, opts) return eig.solve(A, opts) end,
  { "k", "which", "method", "backend", "tol", "seed", "tag" })
cmd["svd"] = solve_cmd("svd", function(A, opts) return eig.svd(A, opts) end,
  { "k", "method", "backend", "tol", "seed", "tag" })

cmd["bench bandwidth"] = function(_, o)
  local b = gpu.bandwidth(pick(o, { "bytes", "reps" }))
  if o.json then b.command = "bench bandwidth"; json(b) return b.available and 0 or 1 end
  if not b.available then
    warn("bench bandwidth: no GPU: %s", b.reason)
    say("host memcpy %.1f GB/s", b.host_memcpy_gbps)
    return 1
  end
  say("%s, %s per copy, median of %d", b.device, gwb.fmt_bytes and gwb.fmt_bytes(b.bytes) or b.bytes, b.reps)
  local rows = {
    { "host -> device, pageable", b.h2d_pageable_gbps }, { "host -> device, pinned", b.h2d_pinned_gbps },
    { "device -> host, pageable", b.d2h_pageable_gbps }, { "device -> host, pinned", b.d2h_pinned_gbps },
    { "device -> device (r + w)", b.d2d_gbps },
  }
  for _, r in ipairs(rows) do say("  %-26s %8.1f GB/s", r[1], r[2]) end
  say("  %-26s %8.1f GB/s (device copy reaches %.0f%%)", "DRAM peak", b.dram_peak_gbps,
    100 * b.d2d_fraction_of_peak)
  say("  %-26s %8.1f GB/s", "host memcpy", b.host_memcpy_gbps)
end

cmd["bench transpose"] = function(_, o)
  local lesson = teach.transpose(pick(o, { "rows", "cols", "reps" }))
  if o.json then
    local r = { command = "bench transpose" }
    for k, v in pairs(lesson) do if type(v) ~= "function" then r[k] = v end end
    json(r)
  else
    say("%s", tostring(lesson))
  end
end

local function meminfo()
  local f = io.open("/proc/meminfo")
  if not f then return nil end
  local t = {}
  for line in f:lines() do
    local k, v = line:match("^(%w+):%s+(%d+) kB")
    if k then t[k] = tonumber(v) * 1024 end
  end
  f:close()
  return t
end

cmd["info"] = function(_, o)
  local g = gpu.info()
  local m = meminfo() or {}
  local libs = gwb.libraries and gwb.libraries() or {}
  local fb = gwb.fmt_bytes or tostring
  local r = {
    command = "info", version = gwb.version, commit = gwb.commit, cuda_build = gwb.cuda_build,
    lua = _VERSION, gpu = g, host_memory_bytes = m.MemTotal, host_available_bytes = m.MemAvailable,
    cpus = gwb.cpu_count and gwb.cpu_count() or nil, blas = libs.blas, lapack = libs.lapack,
    blas_config = libs.blas_config,
    backend = gwb.backend(),
  }
  if g.available then
    local ok, m = pcall(gpu.mem)  -- {free, total, ...}
    if ok and type(m) == "table" then
      r.gpu_memory = { free_bytes = m.free, total_bytes = m.total }
    end
  end
  if o.json then json(r) return end
  say("gwb %s (commit %s), %s, %s", gwb.version, gwb.commit,
    gwb.cuda_build and "built with CUDA" or "CPU-only build (make CUDA=0)", _VERSION)
  if g.available then
    say("device    %s, compute capability %s, %s SMs, %s", g.name, tostring(g.compute_capability),
      tostring(g.sms), fb(g.memory_bytes or 0))
    if r.gpu_memory and r.gpu_memory.free_bytes then
      say("memory    %s free of %s on the device", fb(r.gpu_memory.free_bytes), fb(r.gpu_memory.total_bytes))
    end
  else
    say("device    none: %s", g.reason)
  end
  say("host      %s CPUs, %s memory (%s available)", tostring(r.cpus or "?"),
    m.MemTotal and fb(m.MemTotal) or "?", m.MemAvailable and fb(m.MemAvailable) or "?")
  say("BLAS      %s%s", libs.blas or "?", libs.blas_config and (" (" .. libs.blas_config:gsub("%s+$", "") .. ")") or "")
  say("LAPACK    %s", libs.lapack or "?")
  say("backend   %s (the default for every operation; --backend sets it)", r.backend)
end

cmd["runs"] = function(_, o)
  local filter = pick(o, { "tag", "kind", "last" })
  local list = runs.runs(filter)
  if o.json then
    local arr = {}
    for i, rec in ipairs(list) do arr[i] = rec end
    io.write(runs.encode({ command = "runs", path = list.path, count = #arr, runs = #arr > 0 and arr or nil }), "\n")
    return
  end
  list.hint = false  -- no "r[i] for one record": that is for the Lua prompt
  say("%s", tostring(list))
end

cmd["ablate"] = function(pos) return gwb.ablate_main(table.unpack(pos)) end

function M.run(name, pos, opts)
  gwb.autodraw = false  -- each command prints what it shows itself (once; none under --json)
  local f = cmd[name]
  if not f then error("no Lua side for the command '" .. name .. "'", 0) end
  local ok, rc = xpcall(f, function(e)
    if type(e) == "table" then return e end
    -- drop the "…/cli.lua:123: " position of the API call: the message is the API's own
    e = tostring(e):gsub("^[^\n]-gwb/cli%.lua:%d+: ", "")
    return e
  end, pos, opts)
  if not ok then error(rc, 0) end
  io.stdout:flush()
  return math.tointeger(rc) or 0
end

return M
