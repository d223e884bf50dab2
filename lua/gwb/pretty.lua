-- gwb/pretty.lua - the pretty printer: nested tables with sorted keys, depth and length
-- limits, cycles marked, our userdata through __tostring.
local M = {}

M.max_depth = 4
M.max_items = 40
M.width = 80

local function is_ident(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

local function fmt_num(v)
  if math.type(v) == "integer" then return tostring(v) end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  return tostring(v)  -- as Lua prints it: 3.0 stays 3.0
end

local function key_lt(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then
    if ta == "number" then return true end
    if tb == "number" then return false end
    return ta < tb
  end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

local format

local function fmt_key(k, seen, depth)
  if is_ident(k) then return k end
  return "[" .. format(k, seen, depth) .. "]"
end

function format(v, seen, depth)
  local t = type(v)
  depth = depth or 0
  if t == "string" then return string.format("%q", v):gsub("\\\n", "\\n") end
  if t == "number" then return fmt_num(v) end
  if t ~= "table" then
    local mt = getmetatable(v)
    if mt and (type(mt) ~= "table" or mt.__tostring) then return tostring(v) end
    return tostring(v)
  end
  local mt = getmetatable(v)
  if type(mt) == "table" and mt.__tostring then return tostring(v) end
  seen = seen or {}
  if seen[v] then return "<cycle>" end
  if depth >= M.max_depth then return "{...}" end
  seen[v] = true
  local parts, n = {}, #v
  local count = 0
  for i = 1, n do
    count = count + 1
    if count > M.max_items then parts[#parts + 1] = "... (" .. n .. " items)"; break end
    parts[#parts + 1] = format(v[i], seen, depth + 1)
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, key_lt)
  for i, k in ipairs(keys) do
    if count >= M.max_items then
      parts[#parts + 1] = "... (" .. (#keys - i + 1) .. " more keys)"
      break
    end
    count = count + 1
    parts[#parts + 1] = fmt_key(k, seen, depth + 1) .. " = " .. format(v[k], seen, depth + 1)
  end
  seen[v] = nil
  if #parts == 0 then return "{}" end
  local one = "{" .. table.concat(parts, ", ") .. "}"
  if #one + depth * 2 <= M.width and not one:find("\n") then return one end
  local pad = string.rep("  ", depth + 1)
  return "{\n" .. pad .. table.concat(parts, ",\n" .. pad) .. "\n" .. string.rep("  ", depth) .. "}"
end

M.format = function(v) return (format(v, nil, 0)) end

return M
