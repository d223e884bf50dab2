-- gwb/help.lua - help(): texts for everything gwb exports, kept in the registry that C modules
-- fill through gwb_lua_newlib (value -> {name, text}) and Lua modules fill through register().
-- help() lists it all, grouped by module and by class; help(rf) lists one module, help(d) one
-- object's class (methods and fields); help(rf.train) or help("rf.train") explains one. Output
-- wraps to the terminal and pages through $PAGER when longer than the screen.
local M = {}

function M.register(value, name, text)
  local all = gwb.helpall()
  local e = { name = name, text = text }
  all[value] = e
  all[name] = e
end

-- --- classes: their fields (what __index answers besides methods) --------------------------
-- One place: help(obj) lists them and the REPL completes them (metatable __fields).
M.classes = {
  ["gwb.Dataset"] = { short = "Dataset", var = "d", what = "a table of features and a target (data.load, data.synth); d.NAME, d[j]: its Columns",
    fields = {
      rows = "number of rows", features = "number of feature columns", names = "feature names (a list)",
      target = "the target column's name", task = '"classification" or "regression"',
      classes = "number of classes (classification)", labels = "class names (classification)",
      bytes = "host memory held", source = "what the CSV reader found (path, sep, header, ...)",
    } },
  ["gwb.Column"] = { short = "Column", var = "c", what = "one column of a Dataset (d.name, d[j], d:col(name)), a mask or an arithmetic result; c[i] is row i (nil when missing)",
    fields = {
      name = "the column's name", kind = '"number", "category", "text" or "bool" (a mask)',
      dtype = '"i64", "f64", "f32", "category", "text" (c[i] of an i64 column is a Lua integer)', rows = "its length (#c)",
      labels = "a category's labels",
    } },
  ["gwb.GroupBy"] = { short = "GroupBy", var = "g", what = "rows grouped by key columns (d:group_by(keys)); g:agg{...}",
    fields = {} },
  ["gwb.Forest"] = { short = "Forest", var = "f", what = "a trained random forest (rf.train, rf.load)",
    fields = {
      trees = "number of trees", features = "features it was trained on", classes = "number of classes",
      task = '"classification" or "regression"', oob = "out-of-bag accuracy or R2",
      oob_rows = "rows with an out-of-bag prediction", nodes = "nodes in all trees",
      leaves = "leaves in all trees", depth = "deepest level reached", backend = "where it was trained",
      backend_why = "why that backend", timing = "total_ms, quantize_ms, grow_ms, kernel_ms, ...",
      params = "the training options", names = "feature names", labels = "class names",
      target = "the target's name", train_rows = "rows it was trained on",
    } },
  ["gwb.Eigen"] = { short = "Eigen", var = "e", what = "an eigen- or singular-value result (eig.solve, eig.svd)",
    fields = {
      values = "eigenvalues (ascending) or singular values (descending)", n = "matrix size (columns)",
      m = "rows (SVD)", k = "pairs computed", count = "matrices in a batch", residuals = "per pair",
      max_residual = "the largest residual", orthogonality = "max |V^T V - I|", iterations = "solver iterations",
      sweeps = "Jacobi sweeps", converged = "true when every pair met tol", method = "the solver used",
      backend = "cpu or gpu", dtype = "f32 or f64", note = "what the solver did", history = "per iteration",
      timing = "total_ms, kernel_ms, transfer_ms", has_vectors = "vectors were kept", svd = "an SVD result",
    } },
  ["gwb.Matrix"] = { short = "Matrix", var = "A", what = "a dense matrix (mat.randn, mat.from, mat.load)",
    fields = {
      rows = "rows", cols = "columns", n = "size of a square matrix", count = "matrices in a batch",
      dtype = "f32 or f64", layout = "row or col (major)",
    } },
  ["gwb.SparseMatrix"] = { short = "SparseMatrix", var = "A", what = "a CSR sparse matrix (mat.read, mat.laplacian2d)",
    fields = {
      rows = "rows", cols = "columns", n = "size of a square matrix", nnz = "stored entries",
      shape = "{rows, cols}", name = "where it came from", index_bits = "32 or 64", bytes = "memory held",
      sparse = "true",
    } },
}

-- Give each class metatable its __fields (for completion); classes made later get it at help().
function M.attach_fields()
  local reg = debug.getregistry()
  for tname, c in pairs(M.classes) do
    local mt = reg[tname]
    if type(mt) == "table" and mt.__fields == nil then mt.__fields = c.fields end
  end
end

-- --- layout -----------------------------------------------------------------------------------

local function term_width()
  local w = gwb.term_size and gwb.term_size()
  if not w then w = tonumber(os.getenv("COLUMNS")) end
  if not w or w < 40 then w = 80 end
  return w
end

-- Break text into lines of at most width characters at spaces, never inside a word. The first
-- line starts after `first` characters already used; following lines are indented by indent.
local function wrap(text, width, indent, first)
  local lines, cur, used = {}, {}, first or 0
  local pad = string.rep(" ", indent)
  for word in text:gmatch("%S+") do
    local wl = utf8.len(word) or #word
    if #cur > 0 and used + 1 + wl > width then
      lines[#lines + 1] = table.concat(cur, " ")
      cur, used = {}, indent
    end
    cur[#cur + 1] = word
    used = used + (#cur > 1 and 1 or 0) + wl
  end
  lines[#lines + 1] = table.concat(cur, " ")
  for i = 2, #lines do lines[i] = pad .. lines[i] end
  return lines
end

-- A signature (kept whole when it fits; else broken only after ", " or before " ->") and its
-- summary, both wrapped under width.
local function entry_lines(sig, summary, width, out)
  local col = 30
  local slen = utf8.len(sig) or #sig
  if slen + 2 <= width then
    if summary == "" then out[#out + 1] = "  " .. sig; return end
    if slen + 2 < col then
      local lines = wrap(summary, width, col + 1, col + 1)
      lines[1] = string.format("  %-" .. (col - 2) .. "s %s", sig, lines[1])
      for _, l in ipairs(lines) do out[#out + 1] = l end
      return
    end
    out[#out + 1] = "  " .. sig
  else
    -- a signature wider than the screen: break between its arguments, not inside them
    -- pieces end after ", " or " | ", or just before " -> "
    local pieces, i = {}, 1
    while i <= #sig do
      local best
      local _, b = sig:find(", ", i, true)
      if b then best = b end
      local _, d = sig:find(" | ", i, true)
      if d and (not best or d < best) then best = d end
      local e = sig:find(" -> ", i, true)
      if e and e > i and (not best or e < best) then best = e end
      if not best then pieces[#pieces + 1] = sig:sub(i); break end
      pieces[#pieces + 1] = sig:sub(i, best)
      i = best + 1
    end
    local parts, cur = {}, "  "
    for _, piece in ipairs(pieces) do
      if #cur + #piece > width and cur ~= "  " and cur ~= "      " then
        parts[#parts + 1] = cur:gsub("%s+$", "")
        cur = "      "
      end
      cur = cur .. piece
    end
    parts[#parts + 1] = cur:gsub("%s+$", "")
    for _, p in ipairs(parts) do out[#out + 1] = p end
  end
  if summary ~= "" then
    for _, l in ipairs(wrap(summary, width, col + 1, col + 1)) do
      out[#out + 1] = (l:sub(1, 1) == " " and "" or string.rep(" ", col + 1)) .. l
    end
  end
end

-- The first sentence of text: up to a ". " that ends a sentence, not an abbreviation's ("i.e.",
-- "e.g.", "etc.", "vs.") nor one inside parentheses.
local abbrev = { ["i.e."] = true, ["e.g."] = true, ["etc."] = true, ["vs."] = true, ["cf."] = true }
local function first_sentence(rest)
  local depth, i = 0, 1
  while i <= #rest do
    local c = rest:sub(i, i)
    if c == "(" then depth = depth + 1
    elseif c == ")" then depth = math.max(0, depth - 1)
    elseif c == "." and depth == 0 and (i == #rest or rest:sub(i + 1, i + 1):match("%s")) then
      local word = rest:sub(1, i):match("(%S+)$") or ""
      if not abbrev[word:lower()] then return rest:sub(1, i) end
    end
    i = i + 1
  end
  return rest
end

-- The signature (the text's first line) and its first sentence.
local function sig_and_summary(e)
  local text = e.text or ""
  local first = text:match("^[^\n]*") or ""
  local rest = (text:match("\n(.*)$") or ""):gsub("\n%s*", " ")
  return first, first_sentence(rest)
end

-- Where a help name belongs: "rf.train" -> module rf; "gwb.Dataset:head" -> class Dataset.
local function group_of(name)
  local cls = name:match("^(.-):[%w_]+$")
  if cls then
    local c = M.classes[cls]
    return "class " .. (c and c.short or cls:gsub("^gwb%.", "")), true
  end
  -- a class-level entry ("gwb.EigenValues": e.values) goes with the class it belongs to
  local cname = name:match("^gwb%.(%u[%w_]*)$")
  if cname then
    local best
    for tname, c in pairs(M.classes) do
      if cname:sub(1, #c.short) == c.short and (not best or #c.short > #best) then best = c.short end
    end
    return "class " .. (best or cname), true
  end
  local mod = name:match("^([%w_]+)%.")
  return mod or "(global)", false
end

local function sorted_entries(pred)
  local list = {}
  for k, e in pairs(gwb.helpall()) do
    if type(k) == "string" and k == e.name and pred(k) then list[#list + 1] = e end
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

local function list_all(width)
  local groups, order = {}, {}
  for _, e in ipairs(sorted_entries(function() return true end)) do
    local g, is_class = group_of(e.name)
    if not groups[g] then
      groups[g] = {}
      order[#order + 1] = { name = g, class = is_class }
    end
    groups[g][#groups[g] + 1] = e
  end
  -- modules first (alphabetically), then the classes
  table.sort(order, function(a, b)
    if a.class ~= b.class then return not a.class end
    return a.name < b.name
  end)
  local out = { "gwb " .. gwb.version .. ": help(x) explains one of these (help(rf.train)); help(rf)"
    .. " lists a module, help(d) an object's methods and fields; ?name at the prompt.", "" }
  out = { table.unpack(wrap(out[1], width, 0, 0)), "" }
  for _, g in ipairs(order) do
    out[#out + 1] = g.name
    for _, e in ipairs(groups[g.name]) do
      local sig, summary = sig_and_summary(e)
      entry_lines(sig, summary, width, out)
    end
  end
  return table.concat(out, "\n")
end

-- The global name of a module table (rf, eig, data, ...), or nil.
local function module_name(t)
  for k, v in pairs(_G) do
    if v == t and type(k) == "string" then return k end
  end
  if t == gwb then return "gwb" end
  return nil
end

local function list_module(name, t, width)
  local out = { name .. ": " .. "help(" .. name .. ".x) explains one", "" }
  local seen = {}
  -- the module's own functions: not a class's methods ("gwb.Dataset:head") nor class
  -- entries ("gwb.EigenValues"), which help() files under their classes
  local function own(k)
    if k:sub(1, #name + 1) ~= name .. "." then return false end
    local rest = k:sub(#name + 2)
    return not rest:find(":", 1, true) and not (name == "gwb" and rest:match("^%u"))
  end
  for _, e in ipairs(sorted_entries(own)) do
    local key = e.name:sub(#name + 2)
    seen[key] = true
    local sig, summary = sig_and_summary(e)
    entry_lines(sig, summary, width, out)
  end
  -- functions in the table that have no help text still get a line
  local extra = {}
  for k, v in pairs(t) do
    if type(k) == "string" and not seen[k] and type(v) == "function" then extra[#extra + 1] = k end
  end
  table.sort(extra)
  for _, k in ipairs(extra) do out[#out + 1] = "  " .. name .. "." .. k .. "(...)" end
  if #out == 2 then out[#out + 1] = "  (no functions)" end
  return table.concat(out, "\n")
end

local function class_text(tname, width)
  local c = M.classes[tname] or {}
  local short = c.short or tname:gsub("^gwb%.", "")
  local out = {}
  local head = short .. (c.what and (": " .. c.what) or "")
  for _, l in ipairs(wrap(head, width, 2, 0)) do out[#out + 1] = l end
  local own = gwb.helpentry(tname)
  if own and own.text then out[#out + 1] = own.text end
  out[#out + 1] = ""
  out[#out + 1] = "methods (" .. (c.var or "x") .. ":name(...); help(\"" .. short .. ":name\") for one)"
  local methods = sorted_entries(function(k) return k:sub(1, #tname + 1) == tname .. ":" end)
  for _, e in ipairs(methods) do
    local sig, summary = sig_and_summary(e)
    entry_lines(sig, summary, width, out)
  end
  if #methods == 0 then out[#out + 1] = "  (none)" end
  if c.fields then
    out[#out + 1] = ""
    out[#out + 1] = "fields (" .. (c.var or "x") .. ".name)"
    local names = {}
    for k in pairs(c.fields) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do
      entry_lines((c.var or "x") .. "." .. k, c.fields[k], width, out)
    end
  end
  return table.concat(out, "\n")
end

local function entry_of(x)
  local e = gwb.helpentry(x)
  if e then return e end
  if type(x) == "string" then
    -- "d:head", "Dataset:head" style: look among class methods by method name
    local cls, meth = x:match("^([%w_.]*)[:.]([%w_]+)$")
    if meth then
      for k, v in pairs(gwb.helpall()) do
        if type(k) == "string" and k:match(":" .. meth .. "$") then
          local kc = k:match("^gwb%.([%w_]+):")
          if not cls or cls == "" or not kc or kc == cls or #cls <= 2 then return v end
        end
      end
    end
  end
  return nil
end

-- One help text at the width (the texts are written for ~92 columns): a line wider than the
-- screen is broken at a space, and what is left flows into the next line when that line goes
-- on with the same prose (not blank, not an example or a list item, not a new sentence,
-- indented as much or up to two more: a hanging paragraph), so a paragraph reads as one;
-- otherwise it takes lines of its own, indented as the paragraph goes on (an example's two
-- more, to show it is one).
local function is_example(line) return line:find("^%s*Example") ~= nil end

local function goes_on(line, nxt, indent, rest)
  if nxt == nil or not nxt:find("%S") or is_example(line) or is_example(nxt) then return false end
  local ind = #nxt:match("^ *")
  return ind >= indent and ind <= indent + 2 and not nxt:find("^%s*[-*]%s")
    and not (rest:find("[.:;]$") and nxt:find("^%s*%u"))
end

local function fit(text, width)
  local src, out, carry = {}, {}, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do src[#src + 1] = line end
  for i, line in ipairs(src) do
    local indent = #line:match("^ *")
    local pad = string.rep(" ", indent)
    if carry then
      line, carry = pad .. carry .. " " .. line:sub(indent + 1), nil
    end
    if (utf8.len(line) or #line) <= width then
      out[#out + 1] = line
    else
      local lines = wrap(line:sub(indent + 1), width, indent, indent)
      out[#out + 1] = pad .. lines[1]
      if #lines > 1 then
        local rest = {}
        for j = 2, #lines do rest[#rest + 1] = lines[j]:sub(indent + 1) end
        rest = table.concat(rest, " ")
        local nxt = src[i + 1]
        if goes_on(line, nxt, indent, rest) then
          carry = rest
        else
          local hang = indent
          if is_example(line) then
            hang = indent + 2
          elseif nxt and nxt:find("%S") then
            hang = math.max(indent, math.min(#nxt:match("^ *"), indent + 2))
          end
          for _, l in ipairs(wrap(rest, width, hang, hang)) do
            out[#out + 1] = l:find("^ ") and l or string.rep(" ", hang) .. l
          end
        end
      end
    end
  end
  return table.concat(out, "\n")
end

function M.text(x)
  local width = term_width()
  M.attach_fields()
  if x == nil then return list_all(width) end
  local e = entry_of(x)
  if e then return fit(e.text, width) end
  -- an object of one of our classes: its methods and fields
  local mt = getmetatable(x)
  if type(mt) == "table" and type(mt.__name) == "string" and
    (M.classes[mt.__name] or next(sorted_entries(function(k) return k:sub(1, #mt.__name + 1) == mt.__name .. ":" end))) then
    return class_text(mt.__name, width)
  end
  if type(mt) == "table" and type(mt.__name) == "string" and gwb.helpentry(mt.__name) then
    return gwb.helpentry(mt.__name).text  -- a class with a text of its own (gwb.Lesson, ...)
  end
  if type(x) == "string" then
    for tname, c in pairs(M.classes) do
      if x == c.short or x == tname then return class_text(tname, width) end
    end
    local t = _G[x]
    if type(t) == "table" then return M.text(t) end
  end
  -- a module table: its functions
  if type(x) == "table" then
    local name = module_name(x)
    if name then return list_module(name, x, width) end
  end
  return nil, "no help for " .. (type(x) == "string" and ("'" .. x .. "'") or tostring(x))
    .. "; help() lists everything"
end

-- Show text: through $PAGER (less -R) when stdout is a terminal and the text is taller than
-- the screen, printed otherwise.
local function show(t)
  local _, rows = nil, nil
  if gwb.term_size then _, rows = gwb.term_size() end
  local n = select(2, t:gsub("\n", "")) + 1
  -- not while the live panel owns the screen (panel.on()): it shows output in its own area
  local up = panel and panel.status and (function()
    local ok, st = pcall(panel.status)
    return ok and type(st) == "table" and st.up
  end)()
  if rows and n >= rows and not up then
    local pager = os.getenv("PAGER")
    if not pager or pager == "" then pager = "less -R" end
    local p = io.popen(pager, "w")
    if p then
      p:write(t, "\n")
      if p:close() ~= nil then return end
    end
  end
  print(t)
end

-- help() lists everything; help(nil) (a variable not assigned yet) says so instead.
function M.help(...)
  if select("#", ...) > 0 and (...) == nil then
    return print("help: the value is nil (nothing is assigned to it yet?); help() lists everything")
  end
  local t, err = M.text((...))
  show(t or err)
end

-- The names help knows, for "did you mean" ("rf.trian" -> rf.train).
local function known_names()
  local names = {}
  for k in pairs(gwb.helpall()) do
    if type(k) == "string" then names[#names + 1] = k:gsub("^gwb%.(%u[%w_]*):", function(c)
      return ((M.classes["gwb." .. c] or {}).var or c) .. ":" end) end
  end
  for k, v in pairs(_G) do
    if type(k) == "string" and type(v) == "table" then names[#names + 1] = k end
  end
  return names
end

-- ?name and name? at the prompt, and help(name) typed there: the value the name has, or the
-- name itself ("d:head"); a name that is nil and has no help says so (help(d) before d = ...).
function M.at_prompt(name)
  if name == "" then return M.help() end
  local f = load("return " .. name, "=help", "t", _G)
  local ok, v = false, nil
  if f and not name:find(":", 1, true) then
    ok, v = pcall(f)
    if ok and v ~= nil then return M.help(v) end
  end
  if M.text(name) ~= nil then return M.help(name) end
  local near = gwb.suggest(name, known_names())
  near = near and ("; " .. near .. " ") or "; "
  if ok and v == nil and not name:find(".", 1, true) then
    return print(name .. " is nil (nothing is assigned to it yet)" .. near .. "help() lists everything")
  end
  print("no help for '" .. name .. "'" .. near .. "help() lists everything")
end

gwb.help_at_prompt = M.at_prompt
M.register(M.at_prompt, "gwb.help_at_prompt", "gwb.help_at_prompt(name)\n"
  .. "What ?name and name? at the prompt run: help of the value name has, or of the name itself.")

return M
