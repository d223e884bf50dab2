-- test_table.lua - exploring a table: Columns (d.name, d[j], d:col), their summaries, masks and
-- arithmetic, the expression language, and the verbs (filter, sort, group_by + agg,
-- value_counts, unique, join, with, drop, rename, sample, set_target). Each is compared with a
-- reference computed independently: Lua loops over the rows here, and pandas' answers for the
-- same file committed in fixtures/table_pandas.lua (fixtures/make_table_fixtures.py wrote them;
-- the test never imports pandas).

local P = dofile("tests/lua/fixtures/table_pandas.lua")
local FILE = "tests/lua/fixtures/table_small.csv"
local d = data.load(FILE, { target = "cls" })
local iris = data.load("datasets/iris.csv", { target = "species" })

local function isnan(x) return x ~= x end
local function rel(a, b) return math.abs(a - b) / math.max(1, math.abs(b)) end
-- float32 storage: values agree with pandas' float64 to ~1e-7 relative, sums to ~1e-6
local function near(got, want, msg, tol)
  if isnan(want) then return T.ok(isnan(got), (msg or "") .. ": want NaN, got " .. tostring(got)) end
  T.ok(rel(got, want) <= (tol or 2e-6), string.format("%s: got %.10g, want %.10g", msg or "", got, want))
end
local function ids(t) return t.id:totable() end
local function same_list(got, want, msg)
  T.eq(#got, #want, (msg or "") .. ": length")
  for i = 1, #want do T.eq(got[i], want[i], (msg or "") .. " at " .. i) end
end

-- the rows as Lua tables (the independent reference for the loop checks)
local rows = {}
do
  local cols = { "id", "k1", "k2", "v1", "v2", "v3", "cls" }
  local vals = {}
  for _, c in ipairs(cols) do vals[c] = d:col(c):totable() end
  for i = 1, d.rows do
    local r = {}
    for _, c in ipairs(cols) do r[c] = vals[c][i] end
    rows[i] = r
  end
end

T.test("d.name, d['name'], d[j] and d:col give Columns; fields and methods still win", function()
  local c = d.v2
  T.eq(getmetatable(c).__name, "gwb.Column")
  T.eq(c.name, "v2")
  T.eq(c.kind, "number")
  T.eq(d.k1.kind, "category")
  T.eq(d.cls.kind, "category", "the target is a column too")
  T.eq(#c, 240)
  T.eq(d["v2"].name, "v2")
  T.eq(d[1].name, "id")
  T.eq(d[7].name, "cls", "features, then the target")
  T.eq(d[8], nil)
  T.eq(d.nosuch, nil)
  T.eq(d.rows, 240)
  T.eq(d.target, "cls")
  T.eq(type(d.head), "function")
  T.eq(d:col("k1")[1], "e")
  T.eq(d.v2[1], 9.38, "a float32 value reads back as the decimal in the file")
  T.eq(iris.sepal_length[1], 5.1)
  T.raises(function() return d:col("v22") end, "nearest: 'v2'")
  T.raises(function() return d.v2[241] end, "outside 1..240")
  -- a view keeps its Dataset alive; a closed Dataset is an error, not a crash
  local e = data.load(FILE, { target = "cls" })
  local v = e.v1
  e = nil
  collectgarbage()
  T.eq(#v, 240)
  local f = data.load(FILE, { target = "cls" })
  local w = f.v1
  f:close()
  T.raises(function() return w:sum() end, "closed")
  T.ok(tostring(d.v2):find("Column 'v2': number, 240 rows, 9 missing", 1, true), tostring(d.v2))
end)

T.test("column summaries match Lua loops and pandas", function()
  local vals, n, s = {}, 0, 0
  for _, r in ipairs(rows) do
    if not isnan(r.v2) then n = n + 1; s = s + r.v2; vals[#vals + 1] = r.v2 end
  end
  local mean, ss = s / n, 0
  for _, v in ipairs(vals) do ss = ss + (v - mean) ^ 2 end
  table.sort(vals)
  near(d.v2:sum(), s, "sum (loop)")
  near(d.v2:sum(), P.v2_sum, "sum (pandas)")
  near(d.v2:mean(), P.v2_mean, "mean")
  near(d.v2:std(), math.sqrt(ss / (n - 1)), "std (loop)")
  near(d.v2:std(), P.v2_std, "std (pandas)", 1e-5)
  near(d.v2:var(), ss / (n - 1), "var", 1e-5)
  near(d.v2:min(), vals[1], "min")
  near(d.v2:max(), vals[#vals], "max")
  T.eq(d.v2:count(), n)
  T.eq(d.v2:missing(), 240 - n)
  local q = d.v2:quantile { 0.1, 0.25, 0.5, 0.9 }
  for i = 1, 4 do near(q[i], P.q_v2[i], "quantile " .. i) end
  near(d.v2:median(), P.q_v2[3], "median")
  near(d.v2:quantile(0), vals[1], "q = 0")
  near(d.v2:quantile(1), vals[#vals], "q = 1")
  T.raises(function() return d.v2:quantile(1.5) end, "outside 0..1")
  T.raises(function() return d.k1:mean() end, "is a category")
  -- compensated sums: 1e8 + many small values in float64 arithmetic
  local big = data.new { X = { { 1e8 }, { 1 }, { 1 }, { 1 }, { -1e8 } }, y = { 1, 2, 3, 4, 5 } }
  T.eq(big.x1:sum(), 3)
end)

T.test("unique, value_counts and hist", function()
  local seen, order = {}, {}
  for _, r in ipairs(rows) do
    if not seen[r.k1] then seen[r.k1] = 0; order[#order + 1] = r.k1 end
    seen[r.k1] = seen[r.k1] + 1
  end
  same_list(d.k1:unique(), order, "unique in order of appearance")
  local vc = d.k1:value_counts()
  T.eq(vc.rows, 5)
  T.eq(vc.target, "")
  same_list(vc.k1:totable(), P.vc_k1, "value_counts order (pandas)")
  same_list(vc.count:totable(), P.vc_n, "value_counts counts (pandas)")
  near(vc.fraction[1], P.vc_n[1] / 240, "fraction")
  local vc2 = d:value_counts("k1")
  same_list(vc2.k1:totable(), P.vc_k1, "d:value_counts")
  local h = d.v2:hist { bins = 5 }
  T.ok(tostring(h):find("v2", 1, true), tostring(h))
end)

T.test("masks: comparisons, & | ~, between, isin, isnan", function()
  local m = d.v1:gt(50) & d.k2:eq("y")
  T.eq(m.kind, "bool")
  same_list(ids(d:filter(m)), P.filter_ids, "v1 > 50 & k2 == y (pandas)")
  local m2 = ~d.v2:isnan() & (d.v3:lt(0) | d.k1:eq("a"))
  same_list(ids(d:filter(m2)), P.filter2_ids, "~isnan & (| ) (pandas)")
  local want = {}
  for _, r in ipairs(rows) do
    local b = r.v3 >= -1 and r.v3 <= 1 and (r.k1 == "b" or r.k1 == "e") and r.v1 ~= 37
    if b then want[#want + 1] = r.id end
  end
  same_list(ids(d:filter(d.v3:between(-1, 1) & d.k1:isin { "b", "e" } & d.v1:ne(37))), want, "loop")
  T.eq(d.v2:isnan():sum(), 9)
  T.eq(d.v1:le(10):sum() + d.v1:gt(10):sum() + d.v1:isnan():sum(), 240)
  T.raises(function() return d.k1:eq("q") end, "not a label of column 'k1'")
  T.raises(function() return d.k1:gt("a") end, "no order")
  T.raises(function() return d.v1:eq("a") end, "holds numbers")
  T.raises(function() return d.v1 & d.v2 end, "combines masks")
  local short = iris.sepal_length:gt(5)
  T.raises(function() return d:filter(short) end, "the mask has 150 rows and the table 240")
  T.raises(function() return d.v1:gt(1) & short end, "masks of 240 and 150 rows")
end)

T.test("arithmetic on numeric columns gives new columns", function()
  local r = d.v2 / d.v3 + 1
  for i = 1, 240, 17 do
    local want = d.v2:totable()[i] / d.v3:totable()[i] + 1
    if isnan(want) then T.eq(r[i], nil, "missing reads as nil") else near(r[i], want, "row " .. i, 1e-6) end
  end
  T.eq(r.kind, "number")
  near((-d.v3)[2], 1.961, "negation")
  near((2 * d.v3)[2], -3.922, "scalar on the left")
  near((d.v3 - 1)[2], -2.961, "minus")
  near((d.v3 * d.v3):sum(), (function() local s = 0 for _, x in ipairs(rows) do s = s + x.v3 ^ 2 end return s end)(),
    "sum of squares", 1e-5)
  T.raises(function() return d.k1 * 2 end, "needs numbers")
  T.raises(function() return d.v1 + iris.sepal_length end, "columns of 240 and 150 rows")
end)

T.test("the expression language: the same rows as the masks and pandas", function()
  same_list(ids(d:filter("v1 > 50 & k2 == 'y'")), P.filter_ids, "expr (pandas)")
  same_list(ids(d:filter("~isnan(v2) & (v3 < 0 | k1 == 'a')")), P.filter2_ids, "expr 2 (pandas)")
  same_list(ids(d:filter("(v1 + 2 * v3) / 2 >= 20 & k1 != 'c'")), (function()
    local w = {}
    for _, r in ipairs(rows) do
      if (r.v1 + 2 * r.v3) / 2 >= 20 and r.k1 ~= "c" then w[#w + 1] = r.id end
    end
    return w
  end)(), "arithmetic in expressions (loop)")
  T.eq(iris:filter("sepal_length == 5.1").rows, 9, "constants meet float32 columns")
  T.eq(iris:filter("species == 'setosa' & petal_width > 0.3").rows, 9)
  T.eq(iris:filter("species == 'setosa' & -petal_width < -0.35").rows, 9)
  local e = T.raises(function() return d:filter("v1 > 5 & k3 == 'y'") end, "unknown column 'k3'")
  T.ok(e:find("nearest: 'k1'", 1, true) and e:find("character 10", 1, true), e)
  T.ok(e:find("\n  v1 > 5 & k3 == 'y'\n           ^", 1, true), e)
  T.raises(function() return d:filter("k1 == 'zz'") end, "'zz' is not a label of column 'k1'")
  T.raises(function() return d:filter("v1 > ") end, "ends where a value")
  T.raises(function() return d:filter("(v1 > 5") end, "is not closed")
  T.raises(function() return d:filter("v1 > 5)") end, "without its '('")
  T.raises(function() return d:filter("v1 = 5") end, "compare with ==")
  T.raises(function() return d:filter("k1 > 'a'") end, "== and != only")
  T.raises(function() return d:filter("k1 + 1 > 2") end, "needs a number")
  T.raises(function() return d:filter("v1 & v2") end, "needs a condition")
  T.raises(function() return d:filter("1 < v1 < 5") end, "do not chain")
  T.raises(function() return d:filter("v1 + 1") end, "a number, not a condition")
  T.raises(function() return d:filter('k1 == "a"') end, "single quotes")
  -- a function per row: the slow general path
  same_list(ids(d:filter(function(r) return r.v1 and r.v1 > 50 and r.k2 == "y" end)), P.filter_ids, "fn")
end)

T.test("sort: stable, multi-key, descending, missing last (pandas)", function()
  same_list(ids(d:sort { "k1", "-v2" }), P.sort_ids, "k1, -v2")
  same_list(ids(d:sort "v2"), P.sort1_ids, "v2")
  local s = d:sort "-v2"
  T.ok(s.v2[240] == nil and s.v2[232] == nil and s.v2[231] ~= nil, "missing last when descending too")
  T.eq(s.rows, 240)
  T.eq(s.target, "cls")
  T.eq(s.cls:value_counts().count[1], d.cls:value_counts().count[1], "the target comes along")
  T.raises(function() return d:sort { "k1", "-v9" } end, "no column 'v9'")
end)

T.test("group_by + agg: every aggregate against pandas", function()
  local g = d:group_by { "k1", "k2" }:agg { n = "count()", cnt = "count(v1)", total = "sum(v1)",
    avg = "mean(v2)", lo = "min(v3)", hi = "max(v3)", sd = "std(v2)", var = "var(v2)",
    mid = "median(v2)", fst = "first(v1)", lst = "last(v1)", nu = "nunique(v1)" }
  T.eq(g.rows, #P.agg_k1)
  T.eq(g.target, "")
  local k1, k2 = g.k1:totable(), g.k2:totable()
  for i = 1, g.rows do
    T.eq(k1[i], P.agg_k1[i], "key 1 of group " .. i)
    T.eq(isnan(k2[i]) and "" or k2[i], P.agg_k2[i], "key 2 of group " .. i .. " (missing last)")
  end
  for _, name in ipairs { "n", "cnt", "total", "avg", "lo", "hi", "sd", "var", "mid", "fst", "lst", "nu" } do
    local got = g:col(name):totable()
    for i = 1, g.rows do near(got[i], P["agg_" .. name][i], name .. " of group " .. i, 1e-5) end
  end
  -- one key, list form names the aggregates fn_col
  local h = iris:group_by("species"):agg { "mean(petal_length)", "count()" }
  T.eq(h.names[2], "mean_petal_length")
  near(h.mean_petal_length[1], 1.462, "iris setosa petal_length mean")
  T.raises(function() return d:group_by("k1"):agg { x = "mean(k2)" } end, "a category")
  T.raises(function() return d:group_by("k1"):agg { x = "meen(v1)" } end, "nearest: 'mean'")
  T.raises(function() return d:group_by("k1"):agg { x = "sum(v7)" } end, "no column 'v7'")
  T.raises(function() return d:group_by("k1"):agg { x = "sum()" } end, "needs a column")
  T.raises(function() return d:group_by("kk") end, "nearest: 'k1'")
end)

T.test("unique rows, join (inner and left) against pandas", function()
  local u = d:unique { "k1", "k2" }
  T.eq(u.rows, #P.agg_k1)
  local r = data.load("tests/lua/fixtures/table_right.csv", { target = "w" })
  local j = d:join(r, { on = "k1", how = "left" })
  same_list(ids(j), P.left_ids, "left join rows")
  local w = j.w:totable()
  for i = 1, #P.left_w do near(w[i], P.left_w[i], "left w " .. i) end
  T.eq(j.target, "cls")
  local k = d:join(r, { on = "k1" })
  same_list(ids(k), P.inner_ids, "inner join rows")
  local w2 = k.w:totable()
  for i = 1, #P.inner_w do near(w2[i], P.inner_w[i], "inner w " .. i) end
  T.raises(function() return d:join(r, { on = "k9" }) end, "no column 'k9'")
  T.raises(function() return d:join(r, { on = "k1", how = "outer" }) end, "\"inner\" or \"left\"")
  local num = data.new { X = { { 1 }, { 2 } }, y = { 1, 2 }, names = { "k1" } }
  T.raises(function() return d:join(num, { on = "k1" }) end, "different kinds")
end)

T.test("with, drop, rename, sample, set_target", function()
  local w = d:with { ratio = "v2 / v3", twice = d.v1 * 2, sq = function(r) return r.v3 * r.v3 end }
  T.eq(w.features, 9)
  T.eq(w.target, "cls")
  near(w.ratio[1], 9.38 / -3.157, "expr column", 1e-6)
  near(w.twice[1], 178, "Column")
  near(w.sq[1], 3.157 ^ 2, "function", 1e-6)
  local w2 = d:with { v1 = "v1 + 1" }
  T.eq(w2.features, 6, "a name the table has replaces that column")
  near(w2.v1[1], 90, "replaced")
  T.raises(function() return d:with { x = "v1 +" } end, "x = \"v1 +\"")
  T.raises(function() return d:with { x = iris.sepal_length } end, "has 150 rows and the table 240")
  local dr = d:drop { "v3", "k2" }
  T.eq(table.concat(dr.names, ","), "id,k1,v1,v2")
  local nt = d:drop { "cls" }
  T.eq(nt.target, "")
  T.raises(function() return rf.train(nt) end, "no target")
  local rn = d:rename { v1 = "first", cls = "label" }
  T.eq(rn.names[4], "first")
  T.eq(rn.target, "label")
  T.raises(function() return d:rename { v1 = "v2" } end, "two columns would be named 'v2'")
  local s1, s2 = d:sample(20, { seed = 4 }), d:sample(20, { seed = 4 })
  same_list(ids(s1), ids(s2), "same seed, same rows")
  local seen = {}
  for _, id in ipairs(ids(s1)) do T.ok(not seen[id], "without replacement"); seen[id] = true end
  T.eq(d:sample(0.25).rows, 60)
  T.raises(function() return d:sample(241) end, "without replacement")
  local t = d:set_target("k1")
  T.eq(t.target, "k1")
  T.eq(t.task, "classification")
  T.eq(t.classes, 5)
  T.eq(t.names[#t.names], "cls", "the old target becomes a feature")
  local t2 = d:set_target("v3")
  T.eq(t2.task, "regression")
  T.eq(d:set_target(false).target, "")
  T.raises(function() return d:set_target("k2") end, "missing in row")
end)

T.test("verbs are run-logged", function()
  local before = #runs { kind = "data.filter" }
  d:filter("v1 > 3")
  local r = runs { kind = "data.filter" }
  T.eq(#r, before + 1)
  T.eq(r[#r].params.what, "v1 > 3")
  T.eq(r[#r].params.rows, 240)
end)

T.test("sums, var and std past the double range are inf (as pandas and numpy), not nan", function()
  local path = T.tmpdir() .. "/big.csv"
  local h = assert(io.open(path, "w"))
  h:write("g,x,y\na,1e300,0\na,1.5,1\na,-2.25,0\nb,1e308,1\nb,1e308,0\nc,1e308,1\nc,-1e308,0\nc,4,1\n")
  h:close()
  local t = data.load(path, { target = "y" })
  T.eq(t.x.dtype, "f64")
  local r = t:group_by("g"):agg { s = "sum(x)", v = "var(x)", sd = "std(x)", m = "mean(x)" }
  -- pandas: a var inf (the squares overflow), std inf; b sum inf, var 0; c sum 4, mean 4/3
  T.eq(r.v[1], math.huge)
  T.eq(r.sd[1], math.huge)
  T.eq(r.s[1], 1e300)
  T.eq(r.s[2], math.huge)
  T.eq(r.s[3], 4)
  T.ok(math.abs(r.m[3] - 4 / 3) < 1e-15)
  T.eq(t.x:sum(), math.huge)
end)
