-- testlib.lua - the tiny test framework for Lua tests run by gwb itself (tests/lua/run.lua).
-- test(name, fn) registers a test; inside, use the assertions below; skip(reason) skips.
local T = { tests = {} }

local SKIP = {}

function T.test(name, fn) T.tests[#T.tests + 1] = { name = name, fn = fn, file = T.current_file } end

function T.skip(reason) error(setmetatable({ reason = reason }, SKIP), 0) end
function T.is_skip(e) return getmetatable(e) == SKIP end

-- Skip unless a GPU is usable; the reason says why not.
function T.need_gpu()
  local ok, why = gpu.available()
  if not ok then T.skip("no GPU: " .. tostring(why)) end
end

local function fail(msg, level) error(msg, (level or 1) + 2) end

function T.ok(cond, msg) if not cond then fail(msg or "expected a true value", 1) end return cond end

function T.eq(got, want, msg)
  if got ~= want then
    fail(string.format("%sexpected %s, got %s", msg and (msg .. ": ") or "",
      gwb.pretty(want), gwb.pretty(got)), 1)
  end
end

function T.near(got, want, tol, msg)
  tol = tol or 1e-12
  if type(got) ~= "number" or got ~= got or math.abs(got - want) > tol then
    fail(string.format("%sexpected %s within %g, got %s", msg and (msg .. ": ") or "",
      tostring(want), tol, tostring(got)), 1)
  end
end

-- fn must raise an error whose message contains `pattern` (plain text).
function T.raises(fn, pattern, msg)
  local ok, err = pcall(fn)
  if ok then fail((msg and (msg .. ": ") or "") .. "expected an error, none raised", 1) end
  err = tostring(err)
  if pattern and not err:find(pattern, 1, true) then
    fail(string.format("%serror %q does not mention %q", msg and (msg .. ": ") or "", err, pattern), 1)
  end
  return err
end

-- A scratch directory for the run (removed by tests/run).
-- a copy of option table o with the fields of extra set on top (neither is changed)
function T.merge(o, extra)
  local r = {}
  for k, v in pairs(o) do r[k] = v end
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

function T.tmpdir()
  local d = os.getenv("GWB_TEST_TMP") or "/tmp"
  return d
end

function T.readfile(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function T.writefile(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

return T
