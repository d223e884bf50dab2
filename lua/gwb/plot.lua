-- gwb/plot.lua - terminal plots drawn with Unicode blocks and braille (ASCII with
-- plot.ascii = true): horizontal bars, lines (optionally log scale), histograms.
-- Each returns a Plot: the REPL prints it, tostring(p) is its text, p.lines its rows.
-- Results use it too: f:plot_importance(), e:plot_convergence().
local help = require "gwb.help"

local M = {}

-- Unicode unless the locale says otherwise (or plot.ascii = true).
local function default_ascii()
  local lc = os.getenv("LC_ALL")
  if not lc or lc == "" then lc = os.getenv("LC_CTYPE") end
  if not lc or lc == "" then lc = os.getenv("LANG") end
  if not lc or lc == "" or lc == "C" or lc == "POSIX" then return false end
  return not lc:upper():gsub("%-", ""):find("UTF8", 1, true)
end
M.ascii = default_ascii()

local Plot = { __name = "gwb.Plot" }
Plot.__index = Plot
function Plot.__tostring(p) return table.concat(p.lines, "\n") end
function Plot:print() print(tostring(self)) end
local function new_plot(lines, kind) return setmetatable({ lines = lines, kind = kind }, Plot) end

local EIGHTHS = { "▏", "▎", "▍", "▌", "▋", "▊", "▉" }
local VBLOCKS = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" }

local function use_ascii(opts) if opts.ascii ~= nil then return opts.ascii end return M.ascii end

local function width_of(opts, default)
  local w = opts.width
  if w == nil then
    w = tonumber(os.getenv("COLUMNS")) or 80
    w = math.min(default or w, w)
  end
  if type(w) ~= "number" or w < 10 then error("plot: width must be a number >= 10", 3) end
  return math.floor(w)
end

local function fmt(v)
  if v ~= v then return "nan" end
  local a = math.abs(v)
  if v == math.floor(v) and a < 1e7 then return string.format("%d", v) end
  if a ~= 0 and (a < 1e-3 or a >= 1e6) then return string.format("%.2e", v) end
  return string.format("%.4g", v)
end

local function ulen(s) return utf8.len(s) or #s end

local function pad(s, n, right)
  local l = ulen(s)
  if l >= n then return s end
  if right then return string.rep(" ", n - l) .. s end
  return s .. string.rep(" ", n - l)
end

local function cut(s, n)
  if ulen(s) <= n then return s end
  local off = utf8.offset(s, n) or n
  return s:sub(1, off - 1) .. "~"
end

-- A bar of `cells` (fractional) cells.
local function hbar(cells, ascii)
  if cells <= 0 then return "" end
  local full = math.floor(cells)
  local frac = cells - full
  if ascii then return string.rep("#", full + (frac >= 0.5 and 1 or 0)) end
  local s = string.rep("█", full)
  local e = math.floor(frac * 8)
  if e >= 1 then s = s .. EIGHTHS[e] end
  return s
end

-- Normalise bar input to {labels}, {values}.
local function bar_data(data, opts)
  local labels, values = {}, {}
  if type(data) ~= "table" then error("plot.bar: expected a table of numbers, got " .. type(data), 3) end
  if #data > 0 then
    for i, v in ipairs(data) do
      if type(v) == "table" then
        labels[i], values[i] = tostring(v[1] or v.label or v.name or i), v[2] or v.value
      else
        labels[i] = opts.labels and tostring(opts.labels[i] or i) or tostring(i)
        values[i] = v
      end
    end
  else
    for k, v in pairs(data) do
      labels[#labels + 1] = tostring(k)
      values[#values + 1] = v
    end
    if opts.sort == nil then opts.sort = true end
  end
  for i, v in ipairs(values) do
    if type(v) ~= "number" then
      error(string.format("plot.bar: value %d (%s) is a %s, not a number", i, labels[i], type(v)), 3)
    end
  end
  if opts.sort then
    local idx = {}
    for i = 1, #values do idx[i] = i end
    table.sort(idx, function(a, b)
      if values[a] ~= values[b] then return values[a] > values[b] end
      return labels[a] < labels[b]
    end)
    local l2, v2 = {}, {}
    for i, j in ipairs(idx) do l2[i], v2[i] = labels[j], values[j] end
    labels, values = l2, v2
  end
  if opts.top and #values > opts.top then
    for i = #values, opts.top + 1, -1 do labels[i], values[i] = nil, nil end
  end
  return labels, values
end

function M.bar(data, opts)
  opts = opts or {}
  local ascii = use_ascii(opts)
  local labels, values = bar_data(data, opts)
  local W = width_of(opts, 72)
  local lines = {}
  if opts.title then lines[#lines + 1] = opts.title end
  if #values == 0 then lines[#lines + 1] = "(no data)"; return new_plot(lines, "bar") end
  local lw = 0
  for _, l in ipairs(labels) do lw = math.max(lw, ulen(l)) end
  lw = math.min(lw, math.max(8, W // 3))
  local texts, tw = {}, 0
  local unit = opts.unit or ""
  for i, v in ipairs(values) do
    texts[i] = (opts.format and string.format(opts.format, v) or fmt(v)) .. unit
    tw = math.max(tw, #texts[i])
  end
  local mx, mn = 0, 0
  for _, v in ipairs(values) do mx = math.max(mx, v); mn = math.min(mn, v) end
  local span = mx - mn
  local bw = math.max(4, W - lw - tw - 3)
  -- negative values: a zero axis inside the bar area
  local zero = span > 0 and math.floor((-mn) / span * bw + 0.5) or 0
  for i, v in ipairs(values) do
    local cells = span > 0 and math.abs(v) / span * bw or 0
    local b
    if v >= 0 then
      b = string.rep(" ", zero) .. hbar(cells, ascii)
    else
      local n = math.max(1, math.floor(cells + 0.5))
      b = string.rep(" ", math.max(0, zero - n)) .. string.rep(ascii and "#" or "█", n)
    end
    lines[#lines + 1] = pad(cut(labels[i], lw), lw) .. " " .. pad(b, bw) .. " " .. pad(texts[i], tw, true)
  end
  return new_plot(lines, "bar")
end

-- --- braille canvas ----------------------------------------------------------------------

-- dot bits of a braille cell, [row 0..3][col 0..1]
local BRAILLE = { { 0x01, 0x08 }, { 0x02, 0x10 }, { 0x04, 0x20 }, { 0x40, 0x80 } }

local function canvas(w, h)
  local c = { w = w, h = h, cells = {} }
  for i = 1, w * h do c.cells[i] = 0 end
  return c
end

-- set dot (px, py) with px in [0, 2w), py in [0, 4h), py = 0 at the top
local function dot(c, px, py)
  if px < 0 or py < 0 or px >= 2 * c.w or py >= 4 * c.h then return end
  local cx, cy = px // 2, py // 4
  local i = cy * c.w + cx + 1
  c.cells[i] = c.cells[i] | BRAILLE[py % 4 + 1][px % 2 + 1]
end

local function segment(c, x0, y0, x1, y1)
  local n = math.max(math.abs(x1 - x0), math.abs(y1 - y0), 1)
  for k = 0, n do
    local t = k / n
    dot(c, math.floor(x0 + (x1 - x0) * t + 0.5), math.floor(y0 + (y1 - y0) * t + 0.5))
  end
end

local function canvas_rows(c, ascii)
  local rows = {}
  for y = 0, c.h - 1 do
    local r = {}
    for x = 0, c.w - 1 do
      local b = c.cells[y * c.w + x + 1]
      if ascii then
        r[#r + 1] = b == 0 and " " or (b & 0x09 ~= 0 and "'" or b & 0xC0 ~= 0 and "." or "*")
      else
        r[#r + 1] = b == 0 and " " or utf8.char(0x2800 + b)
      end
    end
    rows[#rows + 1] = table.concat(r)
  end
  return rows
end

-- plot.line(ys [, opts]) or plot.line(xs, ys [, opts]); ys may be a list of series.
function M.line(a, b, c)
  local xs, ys, opts
  if type(b) == "table" and b[1] ~= nil then
    xs, ys, opts = a, b, c or {}
  else
    ys, opts = a, b or {}
  end
  if type(ys) ~= "table" then error("plot.line: expected a table of numbers, got " .. type(ys), 2) end
  local series = type(ys[1]) == "table" and ys or { ys }
  local ascii = use_ascii(opts)
  local log = opts.log
  local W = width_of(opts, 72)
  local H = math.floor(opts.height or 12)
  if H < 2 then error("plot.line: height must be >= 2", 2) end
  local ylab_w = 10
  local cw = math.max(8, W - ylab_w - 1)
  local xmin, xmax, ymin, ymax = math.huge, -math.huge, math.huge, -math.huge
  local skipped = 0
  local pts = {}
  for si, s in ipairs(series) do
    pts[si] = {}
    for i, y in ipairs(s) do
      local x = xs and xs[i] or i
      if type(y) ~= "number" or type(x) ~= "number" then
        error(string.format("plot.line: point %d is not a number", i), 2)
      end
      local yy = y
      if log then
        if y > 0 then yy = math.log(y, 10) else yy = nil; skipped = skipped + 1 end
      end
      if yy and yy == yy and x == x then
        pts[si][#pts[si] + 1] = { x, yy }
        xmin, xmax = math.min(xmin, x), math.max(xmax, x)
        ymin, ymax = math.min(ymin, yy), math.max(ymax, yy)
      end
    end
  end
  local lines = {}
  if opts.title then lines[#lines + 1] = opts.title end
  if xmin == math.huge then
    lines[#lines + 1] = log and "(no positive values to draw on a log scale)" or "(no data)"
    return new_plot(lines, "line")
  end
  if ymax == ymin then ymax, ymin = ymax + 0.5, ymin - 0.5 end
  if xmax == xmin then xmax, xmin = xmax + 0.5, xmin - 0.5 end
  local cv = canvas(cw, H)
  local pw, ph = 2 * cw - 1, 4 * H - 1
  local function px(x) return (x - xmin) / (xmax - xmin) * pw end
  local function py(y) return ph - (y - ymin) / (ymax - ymin) * ph end
  for _, p in ipairs(pts) do
    if #p == 1 then dot(cv, math.floor(px(p[1][1]) + 0.5), math.floor(py(p[1][2]) + 0.5)) end
    for i = 2, #p do segment(cv, px(p[i - 1][1]), py(p[i - 1][2]), px(p[i][1]), py(p[i][2])) end
  end
  local rows = canvas_rows(cv, ascii)
  local function ylabel(v) return log and fmt(10 ^ v) or fmt(v) end
  local axis = ascii and "|" or "│"
  for r = 1, H do
    local lab = ""
    if r == 1 then lab = ylabel(ymax)
    elseif r == H then lab = ylabel(ymin)
    elseif r == (H + 1) // 2 and H >= 5 then lab = ylabel((ymax + ymin) / 2) end
    lines[#lines + 1] = pad(lab, ylab_w - 1, true) .. " " .. axis .. rows[r]
  end
  local base = ascii and "+" or "└"
  lines[#lines + 1] = string.rep(" ", ylab_w) .. base .. string.rep(ascii and "-" or "─", cw)
  local xl, xr = fmt(xmin), fmt(xmax)
  lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. xl .. string.rep(" ", math.max(1, cw - #xl - #xr)) .. xr
  local notes = {}
  if log then notes[#notes + 1] = "log scale" end
  if opts.xlabel then notes[#notes + 1] = "x: " .. opts.xlabel end
  if opts.ylabel then notes[#notes + 1] = "y: " .. opts.ylabel end
  if skipped > 0 then notes[#notes + 1] = skipped .. " values <= 0 left out" end
  if #series > 1 then notes[#notes + 1] = #series .. " series" end
  if #notes > 0 then lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. "(" .. table.concat(notes, ", ") .. ")" end
  return new_plot(lines, "line")
end

-- plot.hist(values [, opts]): opts.bins (default: Sturges), opts.range = {lo, hi}, height.
function M.hist(values, opts)
  opts = opts or {}
  if type(values) ~= "table" then error("plot.hist: expected a table of numbers, got " .. type(values), 2) end
  local ascii = use_ascii(opts)
  local lo, hi = math.huge, -math.huge
  local n = 0
  for i, v in ipairs(values) do
    if type(v) ~= "number" then error(string.format("plot.hist: value %d is a %s, not a number", i, type(v)), 2) end
    if v == v then lo, hi = math.min(lo, v), math.max(hi, v); n = n + 1 end
  end
  if opts.range then lo, hi = opts.range[1], opts.range[2] end
  local lines = {}
  if opts.title then lines[#lines + 1] = opts.title end
  if n == 0 then lines[#lines + 1] = "(no data)"; return new_plot(lines, "hist") end
  local bins = math.floor(opts.bins or math.max(1, math.ceil(math.log(n, 2)) + 1))
  if bins < 1 then error("plot.hist: bins must be >= 1", 2) end
  if hi == lo then hi = lo + 1 end
  local counts = {}
  for b = 1, bins do counts[b] = 0 end
  local outside = 0
  for _, v in ipairs(values) do
    if v == v then
      if v < lo or v > hi then outside = outside + 1
      else
        local b = math.floor((v - lo) / (hi - lo) * bins) + 1
        if b > bins then b = bins end
        counts[b] = counts[b] + 1
      end
    end
  end
  local mx = 0
  for b = 1, bins do mx = math.max(mx, counts[b]) end
  local W = width_of(opts, 72)
  local H = math.floor(opts.height or 8)
  local ylab_w = #tostring(mx) + 1
  local colw = math.max(1, math.min(8, (W - ylab_w - 1) // bins))
  local axis = ascii and "|" or "│"
  for r = H, 1, -1 do
    local row = {}
    for b = 1, bins do
      local h = mx > 0 and counts[b] / mx * H or 0  -- height in rows
      local cell
      if h >= r then cell = ascii and "#" or "█"
      elseif h > r - 1 and counts[b] > 0 then
        local e = math.floor((h - (r - 1)) * 8)
        cell = ascii and (e >= 4 and "#" or (r == 1 and "." or " ")) or (e >= 1 and VBLOCKS[e] or (r == 1 and "▁" or " "))
      else cell = " " end
      row[#row + 1] = string.rep(cell, colw)
    end
    local lab = r == H and tostring(mx) or (r == 1 and "0" or "")
    lines[#lines + 1] = pad(lab, ylab_w - 1, true) .. " " .. axis .. table.concat(row)
  end
  lines[#lines + 1] = string.rep(" ", ylab_w) .. (ascii and "+" or "└") .. string.rep(ascii and "-" or "─", bins * colw)
  local l, r = fmt(lo), fmt(hi)
  lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. l .. string.rep(" ", math.max(1, bins * colw - #l - #r)) .. r
  local note = string.format("(%d values, %d bins of width %s", n, bins, fmt((hi - lo) / bins))
  if outside > 0 then note = note .. string.format(", %d outside the range", outside) end
  lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. note .. ")"
  local p = new_plot(lines, "hist")
  p.counts, p.edges = counts, {}
  for b = 0, bins do p.edges[b + 1] = lo + (hi - lo) * b / bins end
  return p
end

-- --- methods for result objects (added to their classes when they exist) -----------------

-- f:plot_importance([opts]) for gwb.Forest: feature importances as sorted bars.
function M.plot_importance(f, opts)
  opts = opts or {}
  local imp = f:importance()
  local data = {}
  if type(imp) ~= "table" then error("plot_importance: importance() returned a " .. type(imp), 2) end
  if #imp > 0 and type(imp[1]) == "number" then
    local names = f.names or f.feature_names or {}
    for i, v in ipairs(imp) do data[#data + 1] = { names[i] or ("f" .. i), v } end
  elseif #imp > 0 and type(imp[1]) == "table" then
    for i, e in ipairs(imp) do
      data[#data + 1] = { e.name or e.feature or e[1] or ("f" .. i), e.importance or e.value or e[2] }
    end
  else
    for k, v in pairs(imp) do if type(v) == "number" then data[#data + 1] = { k, v } end end
  end
  local o = { sort = true, top = opts.top or 20, width = opts.width, ascii = opts.ascii,
    title = opts.title or "feature importance (mean decrease in impurity)", format = "%.4f" }
  return M.bar(data, o)
end

-- e:plot_convergence([opts]) for gwb.Eigen: residual per iteration on a log scale, or the
-- final residual of each pair when there is no history.
function M.plot_convergence(e, opts)
  opts = opts or {}
  local hist = e.history or e.convergence or e.residual_history
  if type(hist) == "table" and type(hist[1]) == "table" then
    -- {{iteration, residual}, ...} or {{it = , residual = }}
    local xs, ys = {}, {}
    for i, h in ipairs(hist) do
      xs[i] = h.iteration or h.it or h[1] or i
      ys[i] = h.residual or h.max_residual or h[2]
    end
    hist = { xs = xs, ys = ys }
  elseif type(hist) == "table" and #hist > 0 then
    local xs = {}
    for i = 1, #hist do xs[i] = i end
    hist = { xs = xs, ys = hist }
  else
    hist = nil
  end
  local o = { log = true, width = opts.width, height = opts.height or 10, ascii = opts.ascii }
  if hist then
    o.title = opts.title or "convergence: largest residual per iteration"
    o.xlabel, o.ylabel = "iteration", "residual"
    return M.line(hist.xs, hist.ys, o)
  end
  local r = e.residuals
  if type(r) ~= "table" or #r == 0 then
    error("plot_convergence: this result has neither a residual history nor residuals", 2)
  end
  local xs = {}
  for i = 1, #r do xs[i] = i end
  o.title = opts.title or "residual of each eigenpair (no per-iteration history for this method)"
  o.xlabel, o.ylabel = "pair", "residual"
  return M.line(xs, r, o)
end

-- Add f:plot_importance() and e:plot_convergence() to the Forest and Eigen classes if their
-- metatables exist (called at load and again by plot.attach() after a module loads late).
function M.attach()
  local reg = debug.getregistry()
  local attached = {}
  local function add(tname, name, fn, text)
    local mt = reg[tname]
    if type(mt) ~= "table" then return end
    local methods = type(mt.__index) == "table" and mt.__index or mt.__methods
    if type(methods) ~= "table" then
      methods = {}
      mt.__methods = methods
    end
    if methods[name] == nil then
      methods[name] = fn
      help.register(fn, tname .. ":" .. name, text)
    end
    attached[#attached + 1] = tname .. ":" .. name
  end
  -- they draw as they are made (gwb.draw), so f:plot_importance() shows in a script too
  add("gwb.Forest", "plot_importance", function(...) return gwb.draw(M.plot_importance(...)) end,
    "f:plot_importance([opts]) -> plot\n"
    .. "The forest's feature importances as sorted horizontal bars (the top 20; opts.top\n"
    .. "changes it, opts.width the width). Longer bars: features the trees split on with more\n"
    .. "impurity decrease.\nExample: f:plot_importance{top = 10}")
  add("gwb.Eigen", "plot_convergence", function(...) return gwb.draw(M.plot_convergence(...)) end,
    "e:plot_convergence([opts]) -> plot\n"
    .. "How the solver converged: the largest residual per iteration on a log scale (a straight\n"
    .. "falling line is linear convergence); for direct methods without a history, the final\n"
    .. "residual of each eigenpair.\nExample: e = eig.solve(A, {k = 6}); e:plot_convergence()")
  return attached
end

_G.plot = _G.plot or {}
for _, name in ipairs { "bar", "line", "hist", "attach" } do _G.plot[name] = M[name] end
setmetatable(_G.plot, {
  __index = function(_, k) if k == "ascii" then return M.ascii end end,
  __newindex = function(t, k, v) if k == "ascii" then M.ascii = v else rawset(t, k, v) end end,
})

help.register(M.bar, "plot.bar",
  "plot.bar(data [, opts]) -> plot\n"
  .. "Horizontal bars drawn with Unicode blocks. data: a list of numbers, a table\n"
  .. "{name = value, ...} (sorted by value) or a list of {label, value}.\n"
  .. "opts: labels (for a list), sort, top (keep the N largest), width, title, unit,\n"
  .. "format (e.g. \"%.2f\"), ascii. Negative values draw left of a zero axis.\n"
  .. "Example: plot.bar({gpu = 12.5, cpu = 3.1}, {unit = \" GB/s\", title = \"bandwidth\"})")
help.register(M.line, "plot.line",
  "plot.line(ys [, opts]) or plot.line(xs, ys [, opts]) -> plot\n"
  .. "A line drawn with braille dots (2x4 per character), y axis labelled at top, middle and\n"
  .. "bottom. ys may be a list of series ({ys1, ys2}). opts: log = true (log10 y scale; values\n"
  .. "<= 0 are left out and counted), width, height (rows, default 12), title, xlabel, ylabel,\n"
  .. "ascii.\nExample: plot.line(e.residuals, {log = true, title = \"residuals\"})")
help.register(M.hist, "plot.hist",
  "plot.hist(values [, opts]) -> plot\n"
  .. "A histogram: vertical bars in eighth-blocks. opts: bins (default Sturges' rule), range =\n"
  .. "{lo, hi} (values outside are counted and reported), height (rows, default 8), width,\n"
  .. "title, ascii. The result also has counts and edges.\n"
  .. "Example: plot.hist(d:column(1), {bins = 20})")
help.register(M.attach, "plot.attach",
  "plot.attach() -> list\nAdd plot methods to result classes that exist now (f:plot_importance,\n"
  .. "e:plot_convergence); gwb does this at start. Returns the methods attached.")

M.attach()
return M
