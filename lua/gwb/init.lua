-- gwb/init.lua - the Lua side of gwb, loaded at start: help(), the REPL's pretty printer,
-- and the Lua-written parts of modules (lua/gwb/*.lua).
local pretty = require "gwb.pretty"
local help = require "gwb.help"

gwb.pretty = pretty.format
gwb.timing = false

-- The REPL prints results through this: several results tab-separated, tables pretty-printed,
-- our userdata through __tostring.
function gwb.print_results(...)
  local n = select("#", ...)
  local out = {}
  for i = 1, n do
    local v = select(i, ...)
    out[i] = pretty.format(v)
  end
  io.write(table.concat(out, "\t"), "\n")
end

_G.help = help.help
_G.pp = function(...) gwb.print_results(...) end
help.register(_G.pp, "pp", "pp(...)\nPretty-print values as the REPL does (nested tables, sorted keys).")
help.register(gwb.pretty, "gwb.pretty", "gwb.pretty(v) -> string\nFormat a value as the REPL prints it.")
help.register(gwb.print_results, "gwb.print_results",
  "gwb.print_results(...)\nHow the REPL prints results: tab-separated, tables pretty-printed.")
help.register(_G.help, "help", "help([x])\nWith no argument, list every module and function. "
  .. "help(x) or help(\"rf.train\") explains one.")

-- Lua-written parts of modules: each lua/gwb/<name>.lua adds functions and help texts to a
-- global module. Add the name here when you add such a file.
local lua_modules = { "gwb.runs", "gwb.plot", "gwb.teach", "gwb.ablate" }
for _, m in ipairs(lua_modules) do require(m) end

return gwb
