-- gwb/runs.lua - the run log: every train / eig / bench call appends one JSON line (kind,
-- parameters, backend, device, timings, metrics, version, commit, time) to $GWB_RUNS or
-- ~/.local/share/gwb/runs.jsonl, so experiments are never lost; runs() reads them back.
-- Bindings write through gwb_lua_log_run (src/lapi.c), which calls gwb.log_run.
local help = require "gwb.help"

local M = {}

-- --- JSON (just what the log needs: objects, arrays, strings, numbers, booleans) ----------

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function esc_valid(s)
  return (s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end))
end

-- Strings are written as valid UTF-8 JSON whatever bytes they hold: a byte that is not part
-- of a valid UTF-8 sequence (strict: no overlongs, surrogates or code points past U+10FFFF)
-- becomes \u00XX, its Latin-1 reading (so 0xFF reads back as "\u{FF}", y with diaeresis).
local function enc_string(s)
  if utf8.len(s) then return '"' .. esc_valid(s) .. '"' end
  local out, i, n = { '"' }, 1, #s
  while i <= n do
    local ok, bad = utf8.len(s, i)
    if ok then out[#out + 1] = esc_valid(s:sub(i)); break end
    out[#out + 1] = esc_valid(s:sub(i, bad - 1))
    out[#out + 1] = string.format("\\u%04x", s:byte(bad))
    i = bad + 1
  end
  out[#out + 1] = '"'
  return table.concat(out)
end

local function is_array(t)
  local n = #t
  if n == 0 then return next(t) == nil and "empty" or false end
  local count = 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
    count = count + 1
  end
  return count == n
end

local encode
local warn_once

local function enc_value(v, seen, out)
  local t = type(v)
  if t == "nil" then out[#out + 1] = "null"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then out[#out + 1] = "null"
    elseif math.type(v) == "integer" then out[#out + 1] = tostring(v)
    else out[#out + 1] = string.format("%.17g", v) end
  elseif t == "string" then out[#out + 1] = enc_string(v)
  elseif t == "table" then
    if seen[v] then error("gwb.log_run: the record contains a cycle", 0) end
    seen[v] = true
    local arr = is_array(v)
    if arr == "empty" then out[#out + 1] = "{}"
    elseif arr then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        enc_value(v[i], seen, out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = tostring(k) end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        local val = v[k]
        if val == nil then val = v[tonumber(k)] end
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = enc_string(k)
        out[#out + 1] = ":"
        enc_value(val, seen, out)
      end
      out[#out + 1] = "}"
    end
    seen[v] = nil
  else
    -- functions, userdata: their printed form (a Dataset prints its summary)
    out[#out + 1] = enc_string(tostring(v))
  end
end

function encode(v)
  local out = {}
  enc_value(v, {}, out)
  return table.concat(out)
end

local function decode(s)
  local pos = 1
  local function err(what) error(string.format("%s at byte %d", what, pos), 0) end
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local value
  local function str()
    pos = pos + 1
    local parts = {}
    while true do
      local c = s:sub(pos, pos)
      if c == "" then err("unterminated string") end
      if c == '"' then pos = pos + 1; break end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        local map = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
        if map[e] then parts[#parts + 1] = map[e]; pos = pos + 2
        elseif e == "u" then
          local hex = s:sub(pos + 2, pos + 5)
          if not hex:match("^%x%x%x%x$") then err("bad \\u escape") end
          local cp = tonumber(hex, 16)
          pos = pos + 6
          local lo = cp >= 0xD800 and cp < 0xDC00 and s:match("^\\u([dD][c-fC-F]%x%x)", pos)
          if lo then   -- a surrogate pair: one code point
            cp = 0x10000 + (cp - 0xD800) * 0x400 + (tonumber(lo, 16) - 0xDC00)
            pos = pos + 6
          end
          parts[#parts + 1] = utf8.char(cp)
        else err("bad escape") end
      else
        local j = s:find('["\\]', pos) or #s + 1
        parts[#parts + 1] = s:sub(pos, j - 1)
        pos = j
      end
    end
    return table.concat(parts)
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws()
        if s:sub(pos, pos) ~= '"' then err("expected a key") end
        local k = str()
        ws()
        if s:sub(pos, pos) ~= ":" then err("expected ':'") end
        pos = pos + 1
        t[k] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return t end
        if d ~= "," then err("expected ',' or '}'") end
      end
    elseif c == "[" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        t[#t + 1] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return t end
        if d ~= "," then err("expected ',' or ']'") end
      end
    elseif c == '"' then return str()
    elseif s:sub(pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif s:sub(pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif s:sub(pos, pos + 3) == "null" then pos = pos + 4; return nil
    else
      local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" or num == "-" then err("unexpected character") end
      pos = pos + #num
      local v = math.tointeger(tonumber(num)) or tonumber(num)
      if v == nil then err("bad number") end
      return v
    end
  end
  local v = value()
  ws()
  if pos <= #s then err("trailing characters") end
  return v
end

M.encode, M.decode = encode, decode

-- --- where the log lives -----------------------------------------------------------------

function M.path()
  local p = os.getenv("GWB_RUNS")
  if p and p ~= "" then return p end
  local home = os.getenv("HOME")
  if not home or home == "" then return nil, "neither GWB_RUNS nor HOME is set" end
  local base = os.getenv("XDG_DATA_HOME")
  if not base or base == "" then base = home .. "/.local/share" end
  return base .. "/gwb/runs.jsonl"
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function ensure_dir(path)
  local dir = path:match("^(.*)/[^/]*$")
  if not dir or dir == "" then return true end
  local f = io.open(path, "a")
  if f then f:close(); return true end
  -- create the missing directories (mkdir -p), then try again
  os.execute("mkdir -p " .. shell_quote(dir) .. " 2>/dev/null")
  return true
end

local cpu_name_cache
local function cpu_name()
  if cpu_name_cache then return cpu_name_cache end
  local f = io.open("/proc/cpuinfo")
  local name
  if f then
    for line in f:lines() do
      name = line:match("^model name%s*:%s*(.-)%s*$")
      if name then break end
    end
    f:close()
  end
  cpu_name_cache = name or "cpu"
  return cpu_name_cache
end

-- The device a record ran on. Never creates a CUDA context for a CPU run.
local function device_of(rec)
  if rec.device ~= nil then return rec.device end
  if rec.backend == "gpu" and gpu and gpu.info then
    local ok, i = pcall(gpu.info)
    if ok and i.available then return i.name end
  end
  return "cpu: " .. cpu_name()
end

-- A run log that cannot be written (full disk, size limit, no permission) is reported once
-- per process; the run itself goes on.
local warned = false
function warn_once(path, err)
  if warned then return end
  warned = true
  io.stderr:write(string.format("gwb: warning: the run log %s could not be written (%s); "
    .. "this run's record is lost (set GWB_RUNS to a writable file; further failures are not "
    .. "reported)\n", path, tostring(err)))
end

-- gwb.log_run(rec): add version, commit, device and time, append one JSON line.
function M.log_run(rec)
  if type(rec) ~= "table" then error("gwb.log_run: expected a table, got " .. type(rec), 2) end
  local r = {}
  for k, v in pairs(rec) do r[k] = v end
  r.kind = r.kind or "run"
  if type(r.tag) == "string" then r.tag = { r.tag } end
  if r.tag ~= nil and type(r.tag) ~= "table" then
    error("gwb.log_run: tag must be a string or a list of strings, got " .. type(r.tag), 2)
  end
  if r.tag and #r.tag == 0 then r.tag = nil end
  r.version = gwb.version
  r.commit = gwb.commit
  r.device = device_of(rec)
  r.time = os.date("!%Y-%m-%dT%H:%M:%SZ")
  r.unix_time = os.time()
  local line = encode(r)
  local path, why = M.path()
  if not path then error("gwb.log_run: " .. why .. "; set GWB_RUNS to a file", 2) end
  ensure_dir(path)
  if #line + 1 > gwb._append_max then
    -- too long for one atomic append: the whole record goes to an attachment file, the log
    -- gets a short record that names it (runs() reads the attachment back)
    local rel, aerr = gwb._attach(path, line)
    if not rel then return warn_once(path, aerr), r end
    local stub = { kind = r.kind, time = r.time, unix_time = r.unix_time, backend = r.backend,
      version = r.version, commit = r.commit, device = r.device, tag = r.tag, attachment = rel }
    line = encode(stub)
    if #line + 1 > gwb._append_max then
      stub.tag, stub.device = nil, nil
      line = encode(stub)
    end
  end
  local ok, err = gwb._append_line(path, line .. "\n")
  if not ok then warn_once(path, err) end
  return r
end

-- --- reading back --------------------------------------------------------------------------

local function matches(rec, filter)
  if filter == nil then return true end
  if type(filter) == "function" then return filter(rec) and true or false end
  if type(filter) == "string" then
    return type(rec.kind) == "string" and rec.kind:sub(1, #filter) == filter
  end
  for k, want in pairs(filter) do
    if k == "since" then
      if type(rec.time) ~= "string" or rec.time < want then return false end
    elseif k == "until_" or k == "before" then
      if type(rec.time) ~= "string" or rec.time >= want then return false end
    elseif k == "last" then
      -- applied after filtering
    elseif k == "kind" then
      if type(rec.kind) ~= "string" or rec.kind:sub(1, #want) ~= want then return false end
    elseif k == "tag" then
      -- the record's tags (a list; a string in hand-written records) hold every wanted one
      local have = {}
      for _, t in ipairs(type(rec.tag) == "table" and rec.tag or { rec.tag }) do have[t] = true end
      for _, t in ipairs(type(want) == "table" and want or { want }) do
        if not have[t] then return false end
      end
    else
      local v = rec[k]
      if v == nil and type(rec.params) == "table" then v = rec.params[k] end
      if v ~= want then return false end
    end
  end
  return true
end

local function fmt_ms(ms)
  if type(ms) ~= "number" then return "" end
  return gwb.fmt_time(ms)
end

local function first_metric(m)
  if type(m) ~= "table" then return "" end
  local keys = {}
  for k, v in pairs(m) do if type(v) == "number" then keys[#keys + 1] = k end end
  -- the figures people compare first, then the rest by name
  local rank = { oob = 1, score = 2, accuracy = 3, r2 = 4, mean = 5, max_residual = 6,
    residual = 7, gbps = 8, calls = 9 }
  table.sort(keys, function(a, b)
    local ra, rb = rank[a] or 99, rank[b] or 99
    if ra ~= rb then return ra < rb end
    return a < b
  end)
  local parts = {}
  for i = 1, math.min(2, #keys) do
    parts[#parts + 1] = string.format("%s=%.4g", keys[i], m[keys[i]])
  end
  return table.concat(parts, " ")
end

local List = {}
List.__index = List
List.__name = "gwb.Runs"
function List.__tostring(self)
  if #self == 0 then
    local total = rawget(self, "recorded") or 0
    if total > 0 then
      return string.format("(no run matches%s; %s recorded in %s)",
        rawget(self, "filter_text") or "", gwb.plural(total, "run"), self.path or "?")
    end
    return "(no runs recorded" .. (self.path and (" in " .. self.path) or "") .. ")"
  end
  local out = { string.format("%-3s %-20s %-12s %-5s %-22s %10s  %s", "#", "time", "kind",
    "back", "device", "total", "metrics") }
  for i, r in ipairs(self) do
    local dev = tostring(r.device or ""):gsub("^cpu: ", "")
    local total = type(r.timing) == "table" and (r.timing.total_ms or r.timing.ms) or nil
    out[#out + 1] = string.format("%-3d %-20s %-12s %-5s %-22s %10s  %s", i,
      tostring(r.time or "?"):sub(1, 20), tostring(r.kind or "?"):sub(1, 12),
      tostring(r.backend or ""):sub(1, 5), dev:sub(1, 22), fmt_ms(total), first_metric(r.metrics)
      .. (type(r.tag) == "table" and #r.tag > 0 and ("  [" .. table.concat(r.tag, ", ") .. "]") or ""))
  end
  out[#out + 1] = string.format("(%s from %s%s)", gwb.plural(#self, "run"), self.path or "?",
    rawget(self, "hint") == false and "" or "; r[i] for one record")
  return table.concat(out, "\n")
end

-- A record too long for one line lives in <log>.d/NAME, named by its line's attachment.
local function read_attachment(path, n, stub)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local f = io.open(dir .. "/" .. stub.attachment, "r")
  local ok, rec
  if f then
    ok, rec = pcall(decode, f:read("a"))
    f:close()
  end
  if ok and type(rec) == "table" then return rec end
  io.stderr:write(string.format("gwb: warning: %s:%d: the record's attachment %s cannot be "
    .. "read (%s); keeping its summary\n", path, n, stub.attachment, f and tostring(rec) or "missing"))
  return stub
end

-- runs([filter]) -> list of records, oldest first.
function M.runs(filter)
  local ft = type(filter)
  if filter ~= nil and ft ~= "table" and ft ~= "string" and ft ~= "function" then
    error("runs: filter must be a table, a kind prefix or a function, got " .. ft, 2)
  end
  local path, why = M.path()
  if not path then error("runs: " .. why .. "; set GWB_RUNS to the log file", 2) end
  local list = setmetatable({ path = path }, List)
  local f = io.open(path, "r")
  if not f then return list end
  local n, bad, recorded = 0, 0, 0
  for line in f:lines() do
    n = n + 1
    if line:match("%S") then
      local ok, rec = pcall(decode, line)
      if ok and type(rec) == "table" and type(rec.attachment) == "string" then
        rec = read_attachment(path, n, rec)
      end
      if ok and type(rec) == "table" then
        recorded = recorded + 1
        if matches(rec, filter) then list[#list + 1] = rec end
      else
        bad = bad + 1
        io.stderr:write(string.format("gwb: warning: %s:%d: skipping a broken run record (%s)\n",
          path, n, ok and "not an object" or tostring(rec)))
      end
    end
  end
  f:close()
  local last = ft == "table" and filter.last or nil
  if last and #list > last then
    local keep = setmetatable({ path = path }, List)
    for i = #list - last + 1, #list do keep[#keep + 1] = list[i] end
    list = keep
  end
  list.skipped = bad
  -- what an empty result says: the filter matched nothing, or nothing is recorded at all
  list.recorded = recorded
  if ft == "string" then
    list.filter_text = " kind " .. filter .. "*"
  elseif ft == "table" then
    local parts = {}
    for k, v in pairs(filter) do
      if k ~= "last" then
        parts[#parts + 1] = k .. " " .. (type(v) == "table" and table.concat(v, ",") or tostring(v))
          .. (k == "kind" and "*" or "")
      end
    end
    table.sort(parts)
    list.filter_text = #parts > 0 and (" " .. table.concat(parts, ", ")) or ""
  end
  return list
end

gwb.log_run = M.log_run
gwb.runs = M.runs
_G.runs = M.runs

help.register(M.log_run, "gwb.log_run",
  "gwb.log_run(record) -> record\n"
  .. "Append one JSON line to the run log ($GWB_RUNS, else ~/.local/share/gwb/runs.jsonl;\n"
  .. "directories are created). Adds version, commit, device, time and unix_time to the\n"
  .. "record ({kind = \"rf.train\", params = {...}, backend = ..., timing = {...},\n"
  .. "metrics = {...}, tag = \"x\" or {\"x\", \"y\"}, data = {path, rows, features, checksum}}).\n"
  .. "rf.train, rf.cv, eig.solve, eig.svd, gpu.bandwidth and gwb.bench call it for you; each\n"
  .. "takes tag = \"...\" (or a list) among its options, kept in the record for runs{tag = ...}.\n"
  .. "Example: gwb.log_run{kind = \"my.experiment\", params = {lr = 0.1}, metrics = {acc = 0.93}}")
help.register(M.runs, "runs",
  "runs([filter]) -> list\n"
  .. "Read the run log back, oldest first; prints as a table, r[i] is one record.\n"
  .. "filter: a kind prefix (\"rf\"), a predicate function(rec), or a table whose fields must\n"
  .. "match: kind (prefix), tag (records carrying this tag, or every tag of a list), backend,\n"
  .. "device, any parameter name, since / before (ISO time\n"
  .. "strings, e.g. \"2026-11-30\"), last = N (only the N newest).\n"
  .. "A broken line is skipped with a warning on stderr.\n"
  .. "Example: runs{kind = \"rf.train\", backend = \"gpu\", last = 5}")
help.register(M.path, "gwb.runs_path", "gwb.runs_path() -> path\nWhere the run log is written.")
gwb.runs_path = M.path

return M
