-- run.lua - runs Lua test files given as arguments: gwb tests/lua/run.lua tests/lua/test_*.lua
-- Prints one line per test and closes with "lua: N passed, N failed, N skipped".
local here = arg[0]:match("^(.*)/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path
local T = require "testlib"
_G.T = T
gwb.autodraw = false  -- results that draw (d:describe(), plots, lessons) stay quiet in tests

local only = os.getenv("GWB_TEST_FILTER")
for i = 1, #arg do
  T.current_file = arg[i]
  local chunk, err = loadfile(arg[i])
  if not chunk then
    T.tests[#T.tests + 1] = { name = "load " .. arg[i], file = arg[i], fn = function() error(err, 0) end }
  else
    local ok, e = pcall(chunk)
    if not ok then
      T.tests[#T.tests + 1] = { name = "run " .. arg[i], file = arg[i], fn = function() error(e, 0) end }
    end
  end
end

local passed, failed, skipped = 0, 0, 0
for _, t in ipairs(T.tests) do
  local label = (t.file or "?"):match("([^/]*)%.lua$") .. ": " .. t.name
  if only and not label:find(only, 1, true) then goto continue end
  do
    local t0 = os.clock()
    local ok, err = xpcall(t.fn, function(e)
      if T.is_skip(e) then return e end
      return debug.traceback(tostring(e), 2)
    end)
    collectgarbage()
    if ok then
      passed = passed + 1
      print(string.format("  ok    %s (%.0f ms)", label, (os.clock() - t0) * 1000))
    elseif T.is_skip(err) then
      skipped = skipped + 1
      print(string.format("  skip  %s: %s", label, err.reason))
    else
      failed = failed + 1
      print(string.format("  FAIL  %s\n%s", label, tostring(err):gsub("\n", "\n        ")))
    end
  end
  ::continue::
end
print(string.format("lua: %d passed, %d failed, %d skipped", passed, failed, skipped))
os.exit(failed == 0 and 0 or 1)
