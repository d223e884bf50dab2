-- test_plot.lua - terminal plots: bar, line (log scale), histogram, and their help texts.
local P = require "gwb.plot"

local function ulen(s) return utf8.len(s) end

T.test("every plot function has a help text", function()
  for k, v in pairs(plot) do
    if type(v) == "function" then T.ok(gwb.helpentry(v), "no help for plot." .. k) end
  end
  T.ok(require("gwb.help").text("plot.line"):find("log", 1, true))
end)

T.test("bar: lengths proportional to values, sorted tables, width respected", function()
  local p = plot.bar({ a = 10, b = 5, c = 2.5 }, { width = 50 })
  T.eq(#p.lines, 3)
  T.ok(p.lines[1]:match("^a "), "largest first")
  local function blocks(l) local _, n = l:gsub("█", ""); return n end
  local a, b = blocks(p.lines[1]), blocks(p.lines[2])
  T.ok(math.abs(a / b - 2) < 0.15, "a is twice b: " .. a .. " vs " .. b)
  for _, l in ipairs(p.lines) do T.ok(ulen(l) <= 50, "line too wide: " .. ulen(l)) end
  T.ok(tostring(p):find("10", 1, true))
  -- list with labels keeps order unless sort = true
  local q = plot.bar({ 1, 3 }, { labels = { "x", "y" }, width = 40, ascii = true })
  T.ok(q.lines[1]:match("^x ") and q.lines[2]:match("^y "))
  T.ok(not tostring(q):find("█", 1, true), "ascii mode uses no blocks")
  T.raises(function() plot.bar({ 1, "two" }) end, "not a number")
  T.eq(tostring(plot.bar({})), "(no data)")
end)

T.test("bar: negative values draw left of a zero axis", function()
  local p = plot.bar({ 4, -4 }, { labels = { "pos", "neg" }, width = 40 })
  local pos_start = p.lines[1]:find("█")
  local neg_start = p.lines[2]:find("█")
  T.ok(neg_start < pos_start, "negative bar starts left of the positive one")
  T.ok(utf8.len(p.lines[2]), "valid UTF-8")
end)

T.test("line: log scale puts decades evenly; values <= 0 are counted", function()
  local ys = {}
  for i = 1, 9 do ys[i] = 10 ^ (-i) end
  ys[10] = 0
  local p = plot.line(ys, { log = true, width = 50, height = 9 })
  local s = tostring(p)
  T.ok(s:find("log scale", 1, true))
  T.ok(s:find("1 values <= 0 left out", 1, true))
  T.ok(p.lines[1]:find("0.1", 1, true), "top label is the largest value")
  -- a straight falling line on a log scale: the first column's dots are in the top row and
  -- the last column's in the bottom row
  local rows = {}
  for _, l in ipairs(p.lines) do if l:find("│", 1, true) then rows[#rows + 1] = l end end
  T.eq(#rows, 9)
  local function cell(row, i) local body = row:match("│(.*)$"); return utf8.codepoint(body, utf8.offset(body, i)) end
  T.ok(cell(rows[1], 1) ~= 32 and cell(rows[1], 1) >= 0x2800, "top-left has dots")
  T.ok(cell(rows[9], utf8.len(rows[9]:match("│(.*)$"))) >= 0x2800, "bottom-right has dots")
  T.eq(cell(rows[9], 1), 32, "bottom-left is empty")
end)

T.test("line: xs and ys, several series, errors", function()
  local xs, a, b = {}, {}, {}
  for i = 1, 20 do xs[i] = i * 0.5; a[i] = i; b[i] = 20 - i end
  local p = plot.line(xs, { a, b }, { width = 40, height = 6, title = "two" })
  T.eq(p.lines[1], "two")
  T.ok(tostring(p):find("2 series", 1, true))
  T.ok(tostring(p):find("0.5", 1, true) and tostring(p):find("10", 1, true), "x range shown")
  T.raises(function() plot.line({ 1, "x" }) end, "not a number")
  T.ok(tostring(plot.line({ -1, 0 }, { log = true })):find("no positive values", 1, true))
  local asc = plot.line({ 1, 2, 3 }, { ascii = true, width = 30, height = 4 })
  T.ok(not tostring(asc):find("[\128-\255]"), "ascii line has only ASCII")
end)

T.test("hist: counts add up, bins and range", function()
  local v = {}
  for i = 1, 1000 do v[i] = (i - 1) % 10 end  -- 100 of each 0..9
  local p = plot.hist(v, { bins = 10, width = 60 })
  local total = 0
  for _, c in ipairs(p.counts) do total = total + c; T.eq(c, 100) end
  T.eq(total, 1000)
  T.eq(#p.edges, 11)
  T.near(p.edges[1], 0)
  T.near(p.edges[11], 9)
  local q = plot.hist(v, { bins = 5, range = { 0, 4 } })
  local inside = 0
  for _, c in ipairs(q.counts) do inside = inside + c end
  T.eq(inside, 500)
  T.ok(tostring(q):find("500 outside the range", 1, true))
  T.raises(function() plot.hist({ 1, {} }) end, "not a number")
  T.eq(tostring(plot.hist({})), "(no data)")
end)

T.test("plot_importance and plot_convergence work on result-like objects", function()
  local f = { names = { "sepal", "petal" }, importance = function() return { 0.2, 0.8 } end }
  local p = P.plot_importance(f, { width = 50 })
  T.ok(p.lines[2]:match("^petal"), "largest importance first: " .. tostring(p))
  local e = { residuals = { 1e-12, 1e-10, 1e-11 } }
  T.ok(tostring(P.plot_convergence(e, { width = 50 })):find("each eigenpair", 1, true))
  local e2 = { history = { 1, 0.1, 0.01, 0.001 } }
  T.ok(tostring(P.plot_convergence(e2, { width = 50 })):find("per iteration", 1, true))
  T.raises(function() P.plot_convergence({}) end, "neither")
end)

T.test("result classes that exist get plot methods", function()
  local attached = plot.attach()
  local reg = debug.getregistry()
  for _, name in ipairs { "gwb.Forest", "gwb.Eigen" } do
    if type(reg[name]) == "table" then
      local found = false
      for _, a in ipairs(attached) do if a:find(name, 1, true) == 1 then found = true end end
      T.ok(found, name .. " got its plot method")
    end
  end
end)

T.test("a trained forest and an eigen result plot themselves", function()
  if not (rf and rf.train and eig and mat) then T.skip("rf or eig is not in this gwb") end
  local d = data.load("datasets/iris.csv", { target = "species" })
  local f = rf.train(d, { trees = 10, seed = 1, backend = "cpu" })
  local p = f:plot_importance { width = 60 }
  local s = tostring(p)
  for _, name in ipairs(d.names) do T.ok(s:find(name, 1, true), "feature " .. name .. " in the plot") end
  T.ok(gwb.helpentry(f.plot_importance), "help for f:plot_importance")
  local e = eig.solve(mat.laplacian1d(50), { k = 3 })
  local q = tostring(e:plot_convergence { width = 60 })
  T.ok(q:find("log scale", 1, true))
  T.ok(gwb.helpentry(e.plot_convergence), "help for e:plot_convergence")
end)
