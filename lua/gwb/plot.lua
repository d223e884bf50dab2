-- gwb/plot.lua - terminal plots drawn with Unicode blocks and braille (ASCII with
-- plot.ascii = true): horizontal bars, lines (optionally log scale), histograms.
-- Each returns a Plot: the REPL prints it, tostring(p) is its text, p.lines its rows, and
-- p.model the same drawing as a model (title, axes, items in data coordinates, legend) that
-- p:save("x.svg" | "x.png") draws as a picture (src/plot.c through plot._render).
-- Results use it too: f:plot_importance(), e:plot_convergence(), e:plot_spectrum(),
-- d:scatter(), d:hist(), d:box(); metrics' confusion matrices and curves and the lessons'
-- drawings save the same way.
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
local function new_plot(lines, kind, model)
  return setmetatable({ lines = lines, kind = kind, model = model }, Plot)
end
M.Plot = Plot
M.new_plot = new_plot
debug.getregistry()["gwb.Plot"] = Plot

local NAN = 0 / 0
-- the colours of series and categories (matplotlib's tab10), and their terminal codes
M.PALETTE = { 0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f,
  0xbcbd22, 0x17becf }
local ANSI = { 34, 33, 32, 31, 35, 36, 94, 93, 92, 95 }
local function colour_of(i) return M.PALETTE[(i - 1) % #M.PALETTE + 1] end

-- Colour on a terminal that takes it (NO_COLOR and TERM=dumb turn it off).
local function use_colour(opts)
  if opts.colour ~= nil then return opts.colour end
  if os.getenv("NO_COLOR") or os.getenv("TERM") == "dumb" then return false end
  return gwb.term_size ~= nil and gwb.term_size() ~= nil
end

-- The path a save writes: relative names go under gwb.plot_dir when it is set.
local function save_path(path)
  local dir = gwb.plot_dir
  if dir ~= nil and type(dir) ~= "string" then
    error("save: gwb.plot_dir must be a folder name (a string) or nil, not a " .. type(dir), 3)
  end
  if dir and dir ~= "" and path:sub(1, 1) ~= "/" then
    return (dir:sub(-1) == "/" and dir or dir .. "/") .. path
  end
  return path
end

-- p:save(path [, {width = 640, height = 480}]): the plot as an SVG or PNG picture (by the
-- name's extension), written atomically. Prints the file and its size (unless
-- gwb.autodraw is off, as in tests); returns nothing.
local SAVE_OPTS = { width = true, height = true }
function M.save_model(model, path, opts, what)
  what = what or "save"
  if type(path) ~= "string" or path == "" then
    error(what .. ": give a file name ending in .svg or .png (got " .. type(path) .. ")", 3)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(what .. ": opts must be a table {width = 640, height = 480} (got " .. type(opts) .. ")", 3)
  end
  opts = opts or {}
  for k in pairs(opts) do
    if not SAVE_OPTS[k] then
      error(what .. ": unknown option '" .. tostring(k) .. "' (known: width, height)", 3)
    end
  end
  if type(model) ~= "table" then error(what .. ": this plot has no picture model", 3) end
  local full = save_path(path)
  local ok, bytes = pcall(plot._render, model, full, { width = opts.width, height = opts.height })
  if not ok then error(tostring(bytes), 3) end
  if gwb.autodraw then
    io.write(string.format("saved %s (%s, %d x %d)\n", full, gwb.fmt_bytes(bytes),
      opts.width or 640, opts.height or 480))
  end
end
function Plot:save(path, opts) M.save_model(self.model, path, opts, "p:save") end

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

-- Horizontal bars as a picture: one category a row, the first at the top, from 0.
local function bar_model(labels, values, opts)
  local xs, ys, ticks, mn, mx = {}, {}, {}, 0, 0
  for i, v in ipairs(values) do
    xs[#xs + 1], xs[#xs + 2] = 0, v
    ys[#ys + 1], ys[#ys + 2] = i - 0.38, i + 0.38
    ticks[i] = i
    mn, mx = math.min(mn, v), math.max(mx, v)
  end
  local unit = opts.unit and (opts.unit:gsub("^%s+", ""))
  return { title = opts.title, xlabel = opts.xlabel or (unit ~= "" and unit or nil),
    ylabel = opts.ylabel, yticks = ticks, ytick_labels = labels, yflip = true,
    ylim = { 0.4, #values + 0.6 }, xlim = { mn < 0 and NAN or 0, mx > 0 and NAN or 0 },
    items = { { kind = "rects", x = xs, y = ys, color = M.PALETTE[1] } } }
end

function M.bar(data, opts)
  opts = opts or {}
  local ascii = use_ascii(opts)
  local labels, values = bar_data(data, opts)
  local W = width_of(opts, 72)
  local lines = {}
  local model = bar_model(labels, values, opts)
  if opts.title then lines[#lines + 1] = opts.title end
  if #values == 0 then lines[#lines + 1] = "(no data)"; return new_plot(lines, "bar", model) end
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
  return new_plot(lines, "bar", model)
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
  -- the picture: each series a line of its own colour (values <= 0 left out on a log scale
  -- by the drawing itself), a legend when there are several
  local model = { title = opts.title, xlabel = opts.xlabel, ylabel = opts.ylabel, ylog = log or nil,
    xlim = opts.xlim, ylim = opts.ylim, items = {} }
  for si, sr in ipairs(series) do
    local mx, my = {}, {}
    for i, y in ipairs(sr) do mx[i], my[i] = xs and xs[i] or i, y end
    model.items[si] = { kind = "line", x = mx, y = my, color = colour_of(si) }
  end
  if #series > 1 or opts.labels then
    model.legend = {}
    for si = 1, #series do
      model.legend[si] = { label = tostring(opts.labels and opts.labels[si] or ("series " .. si)),
        color = colour_of(si), shape = "line" }
    end
  end
  for _, extra in ipairs(opts.extra or {}) do model.items[#model.items + 1] = extra end
  if opts.title then lines[#lines + 1] = opts.title end
  if xmin == math.huge then
    lines[#lines + 1] = log and "(no positive values to draw on a log scale)" or "(no data)"
    return new_plot(lines, "line", model)
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
  return new_plot(lines, "line", model)
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
  if n == 0 then
    lines[#lines + 1] = "(no data)"
    return new_plot(lines, "hist", { title = opts.title, items = {} })
  end
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
  local rx, ry = {}, {}
  for b = 1, bins do
    rx[#rx + 1], rx[#rx + 2] = p.edges[b], p.edges[b + 1]
    ry[#ry + 1], ry[#ry + 2] = 0, counts[b]
  end
  p.model = { title = opts.title, xlabel = opts.xlabel, ylabel = opts.ylabel or "count",
    ylim = { 0, NAN }, items = { { kind = "rects", x = rx, y = ry, color = M.PALETTE[1], stroke = 0xffffff } } }
  return p
end

-- plot.scatter(xs, ys [, opts]): points as braille dots (coloured by opts.groups, a list of
-- category labels a point, on a terminal that takes colour); the picture draws circles and
-- a legend of the categories. opts: groups, log (log10 y), width, height, title, xlabel,
-- ylabel, ascii, colour.
function M.scatter(xs, ys, opts)
  opts = opts or {}
  if type(xs) ~= "table" or type(ys) ~= "table" then
    error("plot.scatter: expected two lists of numbers (xs, ys)", 2)
  end
  if #xs ~= #ys then error(string.format("plot.scatter: xs has %d values, ys %d", #xs, #ys), 2) end
  local ascii, colour = use_ascii(opts), use_colour(opts)
  local W = width_of(opts, 72)
  local H = math.floor(opts.height or 14)
  if H < 2 then error("plot.scatter: height must be >= 2", 2) end
  local groups, names, gi = opts.groups, {}, {}
  local code = {}
  if groups then
    for _, g in ipairs(opts.order or {}) do   -- the categories' own order first
      g = tostring(g)
      if not gi[g] then names[#names + 1] = g; gi[g] = #names end
    end
    for i = 1, #xs do
      local g = groups[i]
      if g ~= nil and g == g then
        g = tostring(g)
        if not gi[g] then names[#names + 1] = g; gi[g] = #names end
        code[i] = gi[g]
      end
    end
  end
  local ylab_w, cw = 10, math.max(8, W - 11)
  local xmin, xmax, ymin, ymax, n, skipped = math.huge, -math.huge, math.huge, -math.huge, 0, 0
  local function ty(y) if opts.log then return y > 0 and math.log(y, 10) or nil end return y end
  for i = 1, #xs do
    local x, y = xs[i], ys[i]
    if type(x) ~= "number" or type(y) ~= "number" then
      error(string.format("plot.scatter: point %d is not a pair of numbers", i), 2)
    end
    local yy = ty(y)
    if yy == nil then skipped = skipped + 1 end
    if yy and x == x and yy == yy then
      xmin, xmax, ymin, ymax, n = math.min(xmin, x), math.max(xmax, x), math.min(ymin, yy), math.max(ymax, yy), n + 1
    end
  end
  local model = { title = opts.title, xlabel = opts.xlabel, ylabel = opts.ylabel, ylog = opts.log or nil,
    items = { { kind = "points", x = xs, y = ys, color = M.PALETTE[1], size = #xs > 20000 and 1.5 or 3 } } }
  if groups then
    local cols = {}
    for i = 1, #xs do cols[i] = code[i] and colour_of(code[i]) or 0x999999 end
    model.items[1].colors = cols
    model.legend = {}
    for k, g in ipairs(names) do model.legend[k] = { label = g, color = colour_of(k), shape = "point" } end
  end
  local lines = {}
  if opts.title then lines[#lines + 1] = opts.title end
  if n == 0 then lines[#lines + 1] = "(no data)"; return new_plot(lines, "scatter", model) end
  if ymax == ymin then ymax, ymin = ymax + 0.5, ymin - 0.5 end
  if xmax == xmin then xmax, xmin = xmax + 0.5, xmin - 0.5 end
  local cv = canvas(cw, H)
  local owner = {}   -- the group of the last dot in each cell (its colour)
  local pw, ph = 2 * cw - 1, 4 * H - 1
  for i = 1, #xs do
    local yy = ty(ys[i])
    if yy and yy == yy and xs[i] == xs[i] then
      local px = math.floor((xs[i] - xmin) / (xmax - xmin) * pw + 0.5)
      local py = math.floor(ph - (yy - ymin) / (ymax - ymin) * ph + 0.5)
      dot(cv, px, py)
      owner[(py // 4) * cw + px // 2 + 1] = code[i]
    end
  end
  local rows = canvas_rows(cv, ascii)
  if colour and groups then   -- paint each cell by its owner
    for r = 1, H do
      local out, k = {}, 0
      for _, ch in utf8.codes(rows[r]) do
        k = k + 1
        local g = owner[(r - 1) * cw + k]
        local c = utf8.char(ch)
        out[k] = (g and ch ~= 32) and ("\27[" .. ANSI[(g - 1) % #ANSI + 1] .. "m" .. c .. "\27[0m") or c
      end
      rows[r] = table.concat(out)
    end
  end
  local function ylabel(v) return opts.log and fmt(10 ^ v) or fmt(v) end
  local axis = ascii and "|" or "│"
  for r = 1, H do
    local lab = ""
    if r == 1 then lab = ylabel(ymax) elseif r == H then lab = ylabel(ymin)
    elseif r == (H + 1) // 2 and H >= 5 then lab = ylabel((ymax + ymin) / 2) end
    lines[#lines + 1] = pad(lab, ylab_w - 1, true) .. " " .. axis .. rows[r]
  end
  lines[#lines + 1] = string.rep(" ", ylab_w) .. (ascii and "+" or "└") .. string.rep(ascii and "-" or "─", cw)
  local xl, xr = fmt(xmin), fmt(xmax)
  lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. xl .. string.rep(" ", math.max(1, cw - #xl - #xr)) .. xr
  local notes = { string.format("%d points", n) }
  if opts.xlabel then notes[#notes + 1] = "x: " .. opts.xlabel end
  if opts.ylabel then notes[#notes + 1] = "y: " .. opts.ylabel end
  if opts.log then notes[#notes + 1] = "log scale" end
  if skipped > 0 then notes[#notes + 1] = skipped .. " values <= 0 left out" end
  lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. "(" .. table.concat(notes, ", ") .. ")"
  if groups then
    local key = {}
    for k, g in ipairs(names) do
      local mark = ascii and ("[" .. k .. "]") or "●"
      if colour then mark = "\27[" .. ANSI[(k - 1) % #ANSI + 1] .. "m" .. mark .. "\27[0m" end
      key[k] = mark .. " " .. g
      if k == 12 and #names > 12 then key[k] = "+" .. (#names - 11) .. " more"; break end
    end
    if not colour then
      for k in ipairs(key) do key[k] = key[k]:gsub("^● ", "") end
      key[1] = "groups (coloured on a terminal and in p:save): " .. key[1]
      lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. table.concat(key, ", ")
    else
      lines[#lines + 1] = string.rep(" ", ylab_w + 1) .. table.concat(key, "  ")
    end
  end
  return new_plot(lines, "scatter", model)
end

-- the five numbers of a box plot (Tukey): quartiles as numpy's default (linear), whiskers at
-- the last values within 1.5 IQR of the box, the rest outliers
local function five(v)
  table.sort(v)
  local n = #v
  local function q(p)
    local h = (n - 1) * p + 1
    local lo = math.floor(h)
    return v[lo] + (h - lo) * ((v[math.min(lo + 1, n)] or v[lo]) - v[lo])
  end
  local q1, med, q3 = q(0.25), q(0.5), q(0.75)
  local iqr = q3 - q1
  local wlo, whi, out = math.huge, -math.huge, {}
  for _, x in ipairs(v) do
    if x < q1 - 1.5 * iqr or x > q3 + 1.5 * iqr then out[#out + 1] = x
    else wlo, whi = math.min(wlo, x), math.max(whi, x) end
  end
  return { n = n, q1 = q1, median = med, q3 = q3, lo = wlo, hi = whi, outliers = out }
end

-- plot.box(groups [, opts]): box plots of lists of numbers; groups = {{label, values}, ...}.
-- The terminal draws one row a group (whiskers ├─, box ▒, median ┃, outliers •); the
-- picture vertical boxes with the labels under them. Each box's numbers are in p.stats.
function M.box(groups, opts)
  opts = opts or {}
  if type(groups) ~= "table" then error("plot.box: expected a list of {label, values}", 2) end
  local ascii = use_ascii(opts)
  local W = width_of(opts, 72)
  local stats, labels = {}, {}
  local vmin, vmax = math.huge, -math.huge
  for i, g in ipairs(groups) do
    local vals = {}
    for _, x in ipairs(g[2]) do
      if type(x) ~= "number" then error("plot.box: group " .. tostring(g[1]) .. " has a value that is not a number", 2) end
      if x == x then vals[#vals + 1] = x end
    end
    labels[i] = tostring(g[1])
    if #vals > 0 then
      stats[i] = five(vals)
      vmin, vmax = math.min(vmin, vals[1]), math.max(vmax, vals[#vals])
    else
      stats[i] = { n = 0, outliers = {} }
    end
    stats[i].label = labels[i]
  end
  local lines = {}
  if opts.title then lines[#lines + 1] = opts.title end
  -- the picture
  local bx, by, cols, wx, wy, mx, my, ox, oy, ticks = {}, {}, {}, {}, {}, {}, {}, {}, {}, {}
  for i, st in ipairs(stats) do
    ticks[i] = i
    if st.n > 0 then
      bx[#bx + 1], bx[#bx + 2], by[#by + 1], by[#by + 2] = i - 0.3, i + 0.3, st.q1, st.q3
      cols[#cols + 1] = colour_of(i)
      for _, seg in ipairs { { st.lo, st.q1 }, { st.q3, st.hi } } do
        wx[#wx + 1], wx[#wx + 2], wx[#wx + 3] = i, i, NAN
        wy[#wy + 1], wy[#wy + 2], wy[#wy + 3] = seg[1], seg[2], NAN
      end
      for _, y in ipairs { st.lo, st.hi } do
        wx[#wx + 1], wx[#wx + 2], wx[#wx + 3] = i - 0.12, i + 0.12, NAN
        wy[#wy + 1], wy[#wy + 2], wy[#wy + 3] = y, y, NAN
      end
      mx[#mx + 1], mx[#mx + 2], mx[#mx + 3] = i - 0.3, i + 0.3, NAN
      my[#my + 1], my[#my + 2], my[#my + 3] = st.median, st.median, NAN
      for _, y in ipairs(st.outliers) do ox[#ox + 1], oy[#oy + 1] = i, y end
    end
  end
  local model = { title = opts.title, xlabel = opts.xlabel, ylabel = opts.ylabel,
    xticks = ticks, xtick_labels = labels, xlim = { 0.4, #stats + 0.6 },
    items = { { kind = "line", x = wx, y = wy, color = 0x333333, size = 1.5 },
      { kind = "rects", x = bx, y = by, color = M.PALETTE[1], colors = cols, stroke = 0x333333 },
      { kind = "line", x = mx, y = my, color = 0x000000, size = 2.5 },
      { kind = "points", x = ox, y = oy, color = 0x333333, size = 2.5 } } }
  if vmin == math.huge then
    lines[#lines + 1] = "(no data)"
    local p = new_plot(lines, "box", model)
    p.stats = stats
    return p
  end
  if vmax == vmin then vmax, vmin = vmax + 0.5, vmin - 0.5 end
  local lw = 0
  for _, l in ipairs(labels) do lw = math.max(lw, ulen(l)) end
  lw = math.min(lw, math.max(6, W // 4))
  local bw = math.max(10, W - lw - 2)
  local function col(v) return math.floor((v - vmin) / (vmax - vmin) * (bw - 1) + 0.5) + 1 end
  for i, st in ipairs(stats) do
    local row = {}
    for k = 1, bw do row[k] = " " end
    if st.n > 0 then
      for k = col(st.lo), col(st.hi) do row[k] = ascii and "-" or "─" end
      for k = col(st.q1), col(st.q3) do row[k] = ascii and "=" or "▒" end
      row[col(st.lo)], row[col(st.hi)] = ascii and "|" or "├", ascii and "|" or "┤"
      row[col(st.median)] = ascii and "#" or "┃"
      for _, y in ipairs(st.outliers) do row[col(y)] = ascii and "o" or "•" end
    end
    lines[#lines + 1] = pad(cut(labels[i], lw), lw) .. " " .. table.concat(row)
  end
  local l, r = fmt(vmin), fmt(vmax)
  lines[#lines + 1] = string.rep(" ", lw + 1) .. l .. string.rep(" ", math.max(1, bw - #l - #r)) .. r
  lines[#lines + 1] = string.rep(" ", lw + 1) .. "(box: quartiles, " .. (ascii and "#" or "┃")
    .. " median, whiskers to 1.5 IQR, " .. (ascii and "o" or "•") .. " beyond)"
  local p = new_plot(lines, "box", model)
  p.stats = stats
  return p
end

-- --- methods for result objects (added to their classes when they exist) -----------------

-- The values of column `name` of Dataset d as a list (labels for a category column), and the
-- Column; the error names the method.
local function column_values(d, name, what)
  local ok, c = pcall(d.col, d, name)
  if not ok then error(what .. ": " .. tostring(c):gsub("^.-col: ", ""), 3) end
  return c:totable(), c
end

-- d:scatter(x, y [, opts]): column x against column y; opts.color = a column whose values
-- (categories, or numbers taken as labels) colour the points.
function M.dataset_scatter(d, x, y, opts)
  if opts ~= nil and type(opts) ~= "table" then error("d:scatter: opts must be a table", 2) end
  opts = opts or {}
  local xv, xc = column_values(d, x, "d:scatter")
  local yv, yc = column_values(d, y, "d:scatter")
  if xc.kind == "category" or yc.kind == "category" then
    error("d:scatter: " .. (xc.kind == "category" and xc.name or yc.name)
      .. " is a category column; x and y must be numbers (colour by it: {color = '" ..
      (xc.kind == "category" and xc.name or yc.name) .. "'})", 2)
  end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.color, o.groups = nil, nil
  if opts.color ~= nil then
    local g, gc = column_values(d, opts.color, "d:scatter")
    o.groups, o.order = g, gc.labels
  end
  o.xlabel, o.ylabel = o.xlabel or xc.name, o.ylabel or yc.name
  o.title = o.title or (yc.name .. " against " .. xc.name .. (opts.color and (" by " .. tostring(opts.color)) or ""))
  return M.scatter(xv, yv, o)
end

-- d:hist(col [, opts]): the histogram of a number column (missing values left out).
function M.dataset_hist(d, col, opts)
  if opts ~= nil and type(opts) ~= "table" then error("d:hist: opts must be a table", 2) end
  local v, c = column_values(d, col, "d:hist")
  if c.kind == "category" then
    error("d:hist: " .. c.name .. " is a category column; count its values with d:value_counts('"
      .. c.name .. "') or plot.bar", 2)
  end
  local xs = {}
  for _, x in ipairs(v) do if x == x then xs[#xs + 1] = x end end
  local o = {}
  for k, val in pairs(opts or {}) do o[k] = val end
  o.title = o.title or string.format("%s (%d values)", c.name, #xs)
  o.xlabel = o.xlabel or c.name
  return M.hist(xs, o)
end

-- d:box(col [, {by = col2}]): box plots of a number column, one per category of `by`.
function M.dataset_box(d, col, opts)
  if opts ~= nil and type(opts) ~= "table" then error("d:box: opts must be a table", 2) end
  opts = opts or {}
  local v, c = column_values(d, col, "d:box")
  if c.kind == "category" then error("d:box: " .. c.name .. " is a category column; give a number column", 2) end
  local groups = {}
  if opts.by ~= nil then
    local g, gc = column_values(d, opts.by, "d:box")
    local at, order = {}, {}
    for i, x in ipairs(v) do
      local key = g[i]
      if key ~= nil and key == key then
        key = tostring(key)
        if not at[key] then order[#order + 1] = key; at[key] = {} end
        local t = at[key]
        t[#t + 1] = x
      end
    end
    if gc.labels then   -- categories in the column's own order
      local o2 = {}
      for _, l in ipairs(gc.labels) do if at[l] then o2[#o2 + 1] = l end end
      order = o2
    else
      table.sort(order, function(a, b) return (tonumber(a) or 0) < (tonumber(b) or 0) end)
    end
    for _, k in ipairs(order) do groups[#groups + 1] = { k, at[k] } end
  else
    groups[1] = { c.name, v }
  end
  local o = {}
  for k, val in pairs(opts) do o[k] = val end
  o.by = nil
  o.title = o.title or (c.name .. (opts.by and (" by " .. tostring(opts.by)) or ""))
  o.ylabel = o.ylabel or c.name
  o.xlabel = o.xlabel or (opts.by and tostring(opts.by) or nil)
  return M.box(groups, o)
end

-- e:plot_spectrum([opts]): the eigenvalues as points by index; opts.log: |value| on a log
-- scale (zeros left out and counted).
function M.plot_spectrum(e, opts)
  if opts ~= nil and type(opts) ~= "table" then error("plot_spectrum: opts must be a table", 2) end
  opts = opts or {}
  local vals = e.values
  if type(vals) ~= "table" or #vals == 0 then error("plot_spectrum: this result has no eigenvalues", 2) end
  local xs, ys, neg = {}, {}, 0
  for i, v in ipairs(vals) do
    xs[i] = i
    if opts.log then
      if v < 0 then neg = neg + 1 end
      ys[i] = math.abs(v)
    else
      ys[i] = v
    end
  end
  local title = opts.title or string.format("spectrum: %d eigenvalues%s", #vals,
    opts.log and (neg > 0 and string.format(" (|value|; %d negative)", neg) or "") or "")
  return M.scatter(xs, ys, { log = opts.log, title = title, xlabel = "index",
    ylabel = opts.log and "|eigenvalue|" or "eigenvalue", width = opts.width, height = opts.height or 10,
    ascii = opts.ascii })
end


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
  add("gwb.Eigen", "plot_spectrum", function(...) return gwb.draw(M.plot_spectrum(...)) end,
    "e:plot_spectrum([{log = true}]) -> plot\n"
    .. "The eigenvalues as points by index (ascending, as e.values holds them); log = true puts\n"
    .. "|value| on a log10 scale (zeros left out). p:save(\"spectrum.svg\") draws it as a picture.\n"
    .. "Example: e = eig.solve(A, {k = 20}); e:plot_spectrum{log = true}")
  add("gwb.Dataset", "scatter", function(...) return gwb.draw(M.dataset_scatter(...)) end,
    "d:scatter(x, y [, {color = col}]) -> plot\n"
    .. "Column y against column x as braille dots; color = a column whose categories colour the\n"
    .. "points (on a terminal that takes colour; a key underneath). opts: log, width, height,\n"
    .. "title, xlabel, ylabel. p:save(\"x.png\") draws circles with a legend.\n"
    .. "Example: d:scatter(\"petal_length\", \"petal_width\", {color = \"species\"}):save(\"iris.svg\")")
  add("gwb.Dataset", "hist", function(...) return gwb.draw(M.dataset_hist(...)) end,
    "d:hist(col [, opts]) -> plot\n"
    .. "The histogram of a number column (missing values left out); plot.hist's options: bins,\n"
    .. "range, height, width, title. p.counts and p.edges hold the numbers.\n"
    .. "Example: d:hist(\"sepal_length\", {bins = 12}):save(\"sepal.png\")")
  add("gwb.Dataset", "box", function(...) return gwb.draw(M.dataset_box(...)) end,
    "d:box(col [, {by = col2}]) -> plot\n"
    .. "Box plots of a number column: quartiles (linear, numpy's default), the median, whiskers\n"
    .. "to the last values within 1.5 IQR and the outliers beyond; by = a column: one box per\n"
    .. "value of it. p.stats holds each box's numbers.\n"
    .. "Example: d:box(\"petal_length\", {by = \"species\"}):save(\"box.svg\")")
  add("gwb.Eigen", "plot_convergence", function(...) return gwb.draw(M.plot_convergence(...)) end,
    "e:plot_convergence([opts]) -> plot\n"
    .. "How the solver converged: the largest residual per iteration on a log scale (a straight\n"
    .. "falling line is linear convergence); for direct methods without a history, the final\n"
    .. "residual of each eigenpair.\nExample: e = eig.solve(A, {k = 6}); e:plot_convergence()")
  return attached
end

_G.plot = _G.plot or {}
for _, name in ipairs { "bar", "line", "hist", "scatter", "box", "attach" } do _G.plot[name] = M[name] end
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
help.register(M.scatter, "plot.scatter",
  "plot.scatter(xs, ys [, opts]) -> plot\n"
  .. "Points drawn as braille dots. opts: groups (a label a point: the dots are coloured by it\n"
  .. "on a terminal that takes colour, with a key), log (log10 y), width, height, title,\n"
  .. "xlabel, ylabel, ascii, colour.\nExample: plot.scatter({1, 2, 3}, {2, 4, 9}, {title = \"growth\"})")
help.register(M.box, "plot.box",
  "plot.box(groups [, opts]) -> plot\n"
  .. "Box plots: groups = {{label, values}, ...}; one row a group (whiskers to 1.5 IQR, box from\n"
  .. "the first to the third quartile, the median, outliers). p.stats: each box's numbers.\n"
  .. "opts: width, title, xlabel, ylabel, ascii.\nExample: plot.box({{\"a\", {1, 2, 3, 10}}, {\"b\", {2, 3}}})")
help.register(Plot.save, "gwb.Plot:save",
  "p:save(path [, {width = 640, height = 480}])\n"
  .. "Save the plot as a picture: SVG or PNG by the name's extension (.svg, .png), with axes,\n"
  .. "ticks, labels, legend and title, written atomically. A relative name goes under\n"
  .. "gwb.plot_dir when that is set. Prints the file and its size; returns nothing. Every plot\n"
  .. "has it: plot.*, f:plot_importance(), e:plot_convergence(), e:plot_spectrum(),\n"
  .. "d:scatter/hist/box, metrics curves and confusion matrices, teach lessons' drawings.\n"
  .. "Example: f:plot_importance():save(\"importance.png\", {width = 800, height = 600})")
help.register(M.attach, "plot.attach",
  "plot.attach() -> list\nAdd plot methods to result classes that exist now (f:plot_importance,\n"
  .. "e:plot_convergence, e:plot_spectrum, d:scatter, d:hist, d:box); gwb does this at start.\n"
  .. "Returns the methods attached.")

M.attach()
return M
