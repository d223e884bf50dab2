-- test_table_gpu.lua - the table verbs on a GPU-resident Dataset (verbs_gpu.c, kernels/verbs.cu)
-- against the same verbs on the CPU (backend = "cpu", verbs.c): filter (expressions, Column
-- masks, functions), sort by one and two keys (descending, categories, the target), group_by
-- with every aggregate the device computes by one and two keys (category keys: the direct
-- table; float keys: the sort-based groups), value_counts; on a table with ties, missing values,
-- -0 beside 0, int64 values above 2^53, a float32 column, a category target, 1 row, and empty
-- results. Rows, order, keys, counts, min, max, first, last and medians must be equal bit for
-- bit (zeros by sign too); sums, means, var and std to 1e-9 relative (the device adds in
-- double atomics, the CPU with Neumaier's compensation: they differ by rounding only). Also: the result stays on the device, the run log says
-- backend gpu, "auto" keeps a small table on the CPU and says why. Skips without a GPU.

local tmp = os.getenv("GWB_TEST_TMP") or "/tmp"
local FILE = tmp .. "/table_gpu.csv"

-- the table: a seeded LCG so every run writes the same file
do
  local x = 12345
  local function rnd(n) x = (x * 1103515245 + 12345) % 2147483648; return x % n end
  local h = assert(io.open(FILE, "w"))
  h:write("id,k1,k2,i,f,s,cls\n")
  local labels = { "pear", "apple", "fig", "kiwi", "date" }
  local fv = { "1.5", "-0.0", "0.0", "", "-2.25", "3.125", "1e300", "-1e-300", "7", "0.1" }
  local iv = { "5", "", "-3", "9007199254740993", "9007199254740992", "0", "-9007199254740993", "12" }
  for r = 1, 300 do
    local k1 = rnd(7) == 0 and "" or labels[rnd(#labels) + 1]
    local k2 = ({ "x", "y", "z" })[rnd(3) + 1]
    local f = fv[rnd(#fv) + 1]
    if f ~= "" and rnd(3) == 0 then f = string.format("%.3f", (rnd(2000) - 1000) / 7) end
    local s = rnd(9) == 0 and "" or string.format("%.2f", (rnd(400) - 200) / 8)
    h:write(string.format("%d,%s,%s,%s,%s,%s,%s\n", r, k1, k2, iv[rnd(#iv) + 1], f, s,
      rnd(2) == 0 and "yes" or "no"))
  end
  h:close()
end

local function load(gpu)
  local d = data.load(FILE, { target = "cls", dtypes = { s = "f32" } })
  if gpu then d:to("gpu") end
  return d
end

local function isnan(x) return x ~= x end
local function negzero(x) return x == 0 and math.type(x) == "float" and 1 / x < 0 end

-- every column of a and b equal (names, kinds, values); loose[name]: a sum-like column, equal
-- to 1e-9 relative (of max(1, |value|))
local function same(a, b, what, loose)
  T.eq(b.rows, a.rows, what .. ": rows")
  local j = 1
  while a[j] do
    local ca, cb = a[j], b[j]
    T.ok(cb ~= nil, what .. ": column " .. ca.name .. " missing on the GPU")
    T.eq(cb.name, ca.name, what .. ": column " .. j)
    T.eq(cb.kind, ca.kind, what .. ": kind of " .. ca.name)
    local ta, tb = ca:totable(), cb:totable()
    for i = 1, a.rows do
      local x, y = ta[i], tb[i]
      local where = string.format("%s: %s row %d (cpu %s, gpu %s)", what, ca.name, i, tostring(x), tostring(y))
      if loose and loose[ca.name] and type(x) == "number" and not isnan(x) then
        T.ok(type(y) == "number" and (x == y or math.abs(x - y) <= 1e-9 * math.max(1, math.abs(x))), where)
      elseif type(x) == "number" and isnan(x) then
        T.ok(type(y) == "number" and isnan(y), where)
      else
        T.ok(x == y and math.type(x) == math.type(y) and negzero(x) == negzero(y), where)
      end
    end
    j = j + 1
  end
  T.eq(b[j], nil, what .. ": extra columns on the GPU")
end

local function last_run(kind)
  local r = runs { kind = kind }
  return r[#r]
end

-- fn(d, opts) on the host table with the CPU and on the resident one with the GPU
local function check(what, kind, fn, loose)
  local c = fn(load(false), { backend = "cpu" })
  local gd = load(true)
  local g = fn(gd, { backend = "gpu" })
  same(c, g, what, loose)
  T.eq(g.device, "gpu", what .. ": the result stays on the device")
  if kind then
    local r = last_run(kind)
    T.eq(r.backend, "gpu", what .. ": run log backend (" .. tostring(r.backend_why) .. ")")
  end
  return c, g
end

T.test("filter on the device: expressions, masks, functions, empty and one-row results = the CPU's", function()
  T.need_gpu()
  for _, e in ipairs {
    "f > 0 & k1 == 'apple'", "isnan(f) | i >= 5", "~(k2 == 'x')", "i == 9007199254740993",
    "i != 9007199254740992", "f * 2 + 1 > s / 4", "-f <= 0 & ~isnan(s)", "cls == 'yes'",
    "f > 1e308", "id == 17",
    -- a column against a constant compiles to one fused OP_CMPC (expr.c), which
    -- verbs_gpu.c expands back into COL, NUM and the comparison for the device
    "f > 0.5", "f > 1 & s <= 2", "s < -3.5 | f >= 7", "f != 0.1", "f == 0",
    "~(s > 2.5) & k2 != 'z'", "0.5 < f", "i >= 5 & f < 3.125 | isnan(s)",
    "(f > 0 | s > 0) & (f < 5 | s < 5) & k1 != 'fig'",
  } do
    check("filter " .. e, "data.filter", function(d, o) return d:filter(e, o) end)
  end
  local _, g = check("filter by a Column mask", "data.filter", function(d, o) return d:filter(d.f:gt(0), o) end)
  T.ok(g.rows > 0)
  check("filter by a function", "data.filter", function(d, o)
    return d:filter(function(r) return r.k2 == "y" end, o)
  end)
  local _, e = check("an empty result", nil, function(d, o) return d:filter("f > 1e308 & f < 0", o) end)
  T.eq(e.rows, 0)
  -- a filtered table on the device filters again there
  check("a filter of a filter", "data.filter", function(d, o) return d:filter("s > 0", o):filter("f < 0", o) end)
end)

T.test("sort on the device: one and two keys, descending, categories, the target, missing last = the CPU's", function()
  T.need_gpu()
  for _, k in ipairs { "f", "-f", "s", "-s", "i", "-i", "k1", "-k1", "cls", { "k1", "-i" },
    { "k2", "f" }, { "-k2", "-s" }, { "f", "id" } } do
    local name = type(k) == "table" and table.concat(k, ",") or k
    check("sort " .. name, "data.sort", function(d, o) return d:sort(k, o) end)
  end
  check("sort of one row", nil, function(d, o) return d:filter("id == 5", o):sort({ "f", "k1" }, o) end)
  check("sort of no rows", nil, function(d, o) return d:filter("id < 0", o):sort("f", o) end)
end)

local AGGS = { n = "count()", cf = "count(f)", sf = "sum(f)", mf = "mean(f)", lo = "min(f)",
  hi = "max(f)", md = "median(f)", si = "sum(i)", mi = "min(i)", xi = "max(i)", fi = "first(f)",
  la = "last(i)", vf = "var(f)", sd = "std(f)", ms = "median(s)", mis = "min(s)", fk = "first(k2)",
  lk = "last(k2)", mdi = "median(i)", mei = "mean(i)" }
local LOOSE = { sf = true, mf = true, vf = true, sd = true, mei = true }

T.test("group_by on the device: every aggregate by one and two keys (direct and sort-based) = the CPU's", function()
  T.need_gpu()
  for _, k in ipairs { "k1", { "k1", "k2" }, "cls", "f", "s", { "k2", "f" }, "i", { "i", "k1" } } do
    local name = type(k) == "table" and table.concat(k, ",") or k
    local c, g = check("group_by " .. name, "data.group_by", function(d, o) return d:group_by(k, o):agg(AGGS) end, LOOSE)
    T.ok(g.rows >= 3, name .. ": groups")
  end
  -- the device's two ways of grouping, forced: the same groups
  for _, how in ipairs { "direct", "sort" } do
    check("group_by k1, k2 with groups = " .. how, "data.group_by", function(d, o)
      o.groups = how
      return d:group_by({ "k1", "k2" }, o):agg(AGGS)
    end, LOOSE)
  end
  -- one row, and no rows
  check("group_by of one row", nil, function(d, o) return d:filter("id == 9", o):group_by("k1", o):agg(AGGS) end, LOOSE)
  check("group_by of no rows", nil, function(d, o) return d:filter("id < 0", o):group_by({ "k1", "f" }, o):agg(AGGS) end, LOOSE)
  -- nunique is the CPU's: the whole agg runs there and says so
  local gd = load(true)
  gd:group_by("k1", { backend = "gpu" }):agg { u = "nunique(f)" }
  local r = last_run("data.group_by")
  T.eq(r.backend, "cpu")
  T.ok(tostring(r.backend_why):find("nunique", 1, true), tostring(r.backend_why))
  -- a free-text key (grouped by its strings, verbs.c) is the CPU's too
  local tf = tmp .. "/table_gpu_text.csv"
  local lines = { "note,v" }
  for i = 1, 300 do lines[#lines + 1] = string.format("w%d,%d", (i * 7) % 200, i) end
  T.writefile(tf, table.concat(lines, "\n") .. "\n")
  local td = data.load(tf)
  T.eq(td.note.kind, "text")
  local want = td:group_by("note", { backend = "cpu" }):agg { n = "count()", s = "sum(v)" }
  local got = td:group_by("note", { backend = "gpu" }):agg { n = "count()", s = "sum(v)" }
  r = last_run("data.group_by")
  T.eq(r.backend, "cpu")
  T.ok(tostring(r.backend_why):find("text", 1, true), tostring(r.backend_why))
  same(want, got, "group_by a text key")
end)

T.test("value_counts on the device = the CPU's (order of counts, ties by first appearance)", function()
  T.need_gpu()
  for _, col in ipairs { "k1", "k2", "f", "s", "i", "cls" } do
    check("value_counts " .. col, "data.value_counts", function(d, o) return d:value_counts(col, o) end)
  end
end)

T.test("backend = 'auto' on the device: small tables stay on the CPU and say why", function()
  T.need_gpu()
  local gd = load(true)
  gd:sort("f")
  local r = last_run("data.sort")
  T.eq(r.backend, "cpu")
  T.ok(tostring(r.backend_why):find("crossover", 1, true), tostring(r.backend_why))
  local hd = load(false)
  hd:sort("f")
  r = last_run("data.sort")
  T.eq(r.backend, "cpu")
  T.ok(tostring(r.backend_why):find("on the host", 1, true), tostring(r.backend_why))
  -- "gpu" on a host table puts it on the device first
  hd:sort("f", { backend = "gpu" })
  r = last_run("data.sort")
  T.eq(r.backend, "gpu")
  T.eq(hd.device, "gpu")
  T.raises(function() return hd:sort("f", { backend = "tpu" }) end, "backend must be")
end)
