-- gwb/init.lua - the Lua side of gwb, loaded at start: help(), the REPL's pretty printer,
-- and the Lua-written parts of modules (lua/gwb/*.lua).
local pretty = require "gwb.pretty"
local help = require "gwb.help"

gwb.pretty = pretty.format
gwb.timing = false

-- Results that draw (d:describe(), f:plot_importance(), e:plot_convergence(), teach.*) draw
-- when they are made, in a script as at the prompt, and return the object; the REPL then does
-- not print it a second time. gwb.autodraw = false turns this off (the test runner does).
gwb.autodraw = true
local drawn = setmetatable({}, { __mode = "k" })
function gwb.draw(v)
  if gwb.autodraw and v ~= nil then
    io.write(tostring(v), "\n")
    if type(v) == "table" or type(v) == "userdata" then drawn[v] = true end
  end
  return v
end

-- The REPL prints results through this: several results tab-separated, tables pretty-printed,
-- our userdata through __tostring; a result drawn as it was made is not printed again.
function gwb.print_results(...)
  local n = select("#", ...)
  local out = {}
  for i = 1, n do
    local v = select(i, ...)
    if (type(v) == "table" or type(v) == "userdata") and drawn[v] then
      drawn[v] = nil
    else
      out[#out + 1] = pretty.format(v)
    end
  end
  if #out > 0 or n == 0 then io.write(table.concat(out, "\t"), "\n") end
end

_G.help = help.help
_G.pp = function(...) gwb.print_results(...) end
help.register(_G.pp, "pp", "pp(...)\nPretty-print values as the REPL does (nested tables, sorted keys).")
help.register(gwb.pretty, "gwb.pretty", "gwb.pretty(v) -> string\nFormat a value as the REPL prints it.")
help.register(gwb.print_results, "gwb.print_results",
  "gwb.print_results(...)\nHow the REPL prints results: tab-separated, tables pretty-printed.")
help.register(_G.help, "help", "help([x])\nWith no argument, list every module and function "
  .. "(modules, then classes). help(rf) lists a module, help(d) an object's methods and fields, "
  .. "help(rf.train) or help(\"rf.train\") explains one; ?name and name? at the prompt do the "
  .. "same. Long text pages through $PAGER (less -R) on a terminal.")
help.register(gwb.draw, "gwb.draw", "gwb.draw(v) -> v\nPrint v as it draws (its __tostring) and "
  .. "return it: how d:describe(), plots and lessons show in scripts. gwb.autodraw = false stops it.")

-- d:describe() draws (see gwb.draw)
do
  local mt = debug.getregistry()["gwb.Dataset"]
  local methods = type(mt) == "table" and (type(mt.__index) == "table" and mt.__index or mt.__methods)
  if methods and methods.describe then
    local describe = methods.describe
    methods.describe = function(...) return gwb.draw(describe(...)) end
    local e = gwb.helpentry(describe)
    if e then help.register(methods.describe, e.name, e.text) end
  end
end

-- Lua-written parts of modules: each lua/gwb/<name>.lua adds functions and help texts to a
-- global module. Add the name here when you add such a file.
local lua_modules = { "gwb.runs", "gwb.plot", "gwb.teach", "gwb.ablate", "gwb.metrics" }
for _, m in ipairs(lua_modules) do require(m) end
help.attach_fields()  -- d.r<Tab> completes d.rows

return gwb
