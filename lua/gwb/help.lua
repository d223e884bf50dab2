-- gwb/help.lua - help(): texts for everything gwb exports, kept in the registry that C modules
-- fill through gwb_lua_newlib (value -> {name, text}) and Lua modules fill through register().
local M = {}

function M.register(value, name, text)
  local all = gwb.helpall()
  local e = { name = name, text = text }
  all[value] = e
  all[name] = e
end

local function entry_of(x)
  local e = gwb.helpentry(x)
  if e then return e end
  if type(x) == "string" then
    -- "d:head" style: look among class methods by method name
    local meth = x:match("[:.]([%w_]+)$")
    if meth then
      for k, v in pairs(gwb.helpall()) do
        if type(k) == "string" and k:match("[:.]" .. meth .. "$") then return v end
      end
    end
  end
  -- a userdata or table with a metatable: explain its class
  local mt = getmetatable(x)
  if type(mt) == "table" and mt.__name then return gwb.helpentry(mt.__name) end
  return nil
end

local function list_all()
  local mods = {}
  for k, e in pairs(gwb.helpall()) do
    if type(k) == "string" then
      local mod = k:match("^([%w_]+)[.:]") or "(global)"
      mods[mod] = mods[mod] or {}
      mods[mod][#mods[mod] + 1] = e
    end
  end
  local names = {}
  for m in pairs(mods) do names[#names + 1] = m end
  table.sort(names)
  local out = { "gwb " .. gwb.version .. ": type help(x) for one of these, e.g. help(gpu.info).", "" }
  for _, m in ipairs(names) do
    table.sort(mods[m], function(a, b) return a.name < b.name end)
    out[#out + 1] = m
    for _, e in ipairs(mods[m]) do
      local first = (e.text or ""):match("^[^\n]*") or ""
      local summary = (e.text or ""):match("\n([^\n]*)") or ""
      out[#out + 1] = string.format("  %-28s %s", first:sub(1, 40), summary)
    end
  end
  return table.concat(out, "\n")
end

function M.text(x)
  if x == nil then return list_all() end
  local e = entry_of(x)
  if not e then
    return nil, "no help for " .. tostring(x) .. "; help() lists everything"
  end
  return e.text
end

function M.help(x)
  local t, err = M.text(x)
  print(t or err)
end

return M
