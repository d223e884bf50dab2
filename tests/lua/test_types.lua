-- test_types.lua - typed columns (issue 30): a numeric column keeps what it was read as, int64
-- for integers (ids, counts, epoch seconds), float64 for other numbers, float32 only where asked
-- (dtype = "f32") or where a model reads X. Every value survives the CSV readers (sequential and
-- parallel), .gwbd, Parquet and the CSV writer exactly; verbs, masks, expressions and sums read
-- the exact values; models still train on X.
local dir = T.tmpdir()

-- ids that float32 (24 bits) and even float64 (53 bits) cannot tell apart
local BIG = {
  2095257564, 2095257565,                    -- float32 reads both as 2095257600
  16777217, 16777216,                        -- 2^24 + 1, 2^24
  9007199254740993, 9007199254740992,        -- 2^53 + 1, 2^53
  math.maxinteger, math.maxinteger - 1, -math.maxinteger,
  1700000000, 1700000001,                    -- epoch seconds a second apart
}

-- n rows: id (int64, some near the limits), cents (amounts with two decimals), ts (epoch
-- seconds), k (a small integer key), v (a float), y (target 0/1). Row i's id is BIG[i] for the
-- first rows, then 3000000000 + i.
local function write_table(path, n)
  local lines, ids, cents = { "id,cents,ts,k,v,y" }, {}, {}
  for i = 1, n do
    local id = BIG[i] or 3000000000 + i
    ids[i] = id
    cents[i] = string.format("%d.%02d", i % 1000, i % 100)
    lines[#lines + 1] = string.format("%d,%s,%d,%d,%.3f,%d", id, cents[i], 1700000000 + i,
      i % 7, i * 0.25, i % 2)
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
  return ids, cents
end

local small = dir .. "/types_small.csv"
local ids, cents = write_table(small, 500)

local function same_ids(d, want, label)
  T.eq(d.id.dtype, "i64", label .. ": dtype")
  T.eq(d.rows, #want, label .. ": rows")
  for i = 1, #want do
    local v = d.id[i]
    T.eq(math.type(v), "integer", string.format("%s: row %d is an integer", label, i))
    T.eq(v, want[i], string.format("%s: row %d", label, i))
  end
end

T.test("integer columns read as int64, exactly, up to the int64 limits", function()
  local d = data.load(small, { target = "y" })
  same_ids(d, ids, "csv")
  T.eq(d.ts.dtype, "i64")
  T.eq(d.ts[1], 1700000001)
  T.eq(d.cents.dtype, "f64")
  T.eq(d.v.dtype, "f64")
  T.eq(d.cents[3], 3.03)
  T.eq(d.id.kind, "number", "kind stays number")
  T.ok(d.id[1] ~= d.id[2], "2095257564 and 2095257565 differ")
end)

T.test("dtype = 'f32' gives the old float32 values; dtypes sets one column", function()
  local d = data.load(small, { target = "y", dtype = "f32" })
  T.eq(d.id.dtype, "f32")
  T.eq(d.id[1], 2095257600.0, "float32's rounding")
  T.eq(d.id[1], d.id[2], "merged by float32")
  local e = data.load(small, { target = "y", dtypes = { id = "f64", cents = "f32", ts = "i64" } })
  T.eq(e.id.dtype, "f64")
  T.eq(e.cents.dtype, "f32")
  T.eq(e.ts.dtype, "i64")
  T.eq(e.k.dtype, "i64", "the others as read")
  T.raises(function() data.load(small, { target = "y", dtypes = { cents = "i64" } }) end,
    "not integers")
  T.raises(function() data.load(small, { target = "y", dtypes = { nope = "f64" } }) end,
    "not in the file")
  T.raises(function() data.load(small, { target = "y", dtype = "f16" }) end, "dtype is")
  -- d:column is X, what models read: the float32 values, as before; Columns are exact
  local g = data.load(small, { target = "y" })
  T.eq(g:column("cents")[3], d:column("cents")[3])
  T.eq(g:column("cents")[3], 3.0299999713897705, "float32's")
  T.eq(g.cents:totable()[3], 3.03)
  T.eq(g.id:totable()[9], -math.maxinteger)
end)

T.test("the parallel reader gives the same int64 and float64 values as the sequential one", function()
  local big = dir .. "/types_big.csv"
  local bids = write_table(big, 150000)   -- ~6 MB: past the parallel reader's 4 MiB
  local p = data.load(big, { target = "y", threads = 2 })
  local q = data.load(big, { target = "y", threads = 1 })
  T.eq(p.source.threads, 2, "parsed by two threads")
  T.eq(q.source.threads, 1)
  same_ids(p, bids, "parallel")
  same_ids(q, bids, "sequential")
  T.eq(p.cents.dtype, "f64")
  for _, i in ipairs { 1, 2, 77777, 149999, 150000 } do
    T.eq(p.cents[i], q.cents[i])
    T.eq(p.ts[i], q.ts[i])
  end
  T.eq(p.cents:sum(), q.cents:sum(), "sums agree")
end)

T.test("a column that turns to fractions late becomes float64 in both readers", function()
  -- integers for most of the file, one fraction near the end: the cells read as int64 so far
  -- turn to doubles (csv_wide_flip), in the range that saw it and, merged, in the others
  local path = dir .. "/types_late.csv"
  local lines = { "a,b,y" }
  local n = 260000   -- ~5 MB: the parallel reader at two threads
  for i = 1, n do
    lines[#lines + 1] = string.format("%d,%s,%d", 5000000000 + i, i == n - 3 and "0.5" or tostring(i), i % 2)
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
  for _, th in ipairs { 1, 2 } do
    local d = data.load(path, { target = "y", threads = th })
    T.eq(d.source.threads, th)
    T.eq(d.b.dtype, "f64", "threads " .. th)
    T.eq(d.a.dtype, "i64")
    T.eq(d.b[1], 1.0)
    T.eq(d.b[n - 3], 0.5)
    T.eq(d.b[n], n + 0.0)
    T.eq(d.a[n], 5000000000 + n)
  end
end)

T.test("missing values in an int64 column", function()
  local path = dir .. "/types_missing.csv"
  T.writefile(path, "id,x,y\n9007199254740993,1,0\n,2,1\nNA,3,0\n9007199254740995,4,1\n")
  local d = data.load(path, { target = "y" })
  T.eq(d.id.dtype, "i64")
  T.eq(d.id[1], 9007199254740993)
  T.eq(d.id[2], nil)
  T.eq(d.id[3], nil)
  T.eq(d.id:missing(), 2)
  T.eq(d.id:count(), 2)
  T.eq(d.id:sum(), 9007199254740993 + 9007199254740995)
  T.eq(d:filter(d.id:isnan()).rows, 2)
  T.eq(d:filter("isnan(id)").rows, 2)
  d:save(dir .. "/types_missing.gwbd")
  local g = data.load(dir .. "/types_missing.gwbd")
  T.eq(g.id[2], nil)
  T.eq(g.id[4], 9007199254740995)
  d:save(dir .. "/types_missing.parquet")
  local q = data.load(dir .. "/types_missing.parquet", { target = "y" })
  T.eq(q.id.dtype, "i64")
  T.eq(q.id[2], nil)
  T.eq(q.id[1], 9007199254740993)
  d:write_csv(dir .. "/types_missing_out.csv")
  local c = data.load(dir .. "/types_missing_out.csv", { target = "y" })
  T.eq(c.id[3], nil)
  T.eq(c.id[4], 9007199254740995)
end)

T.test("int64 and float64 survive .gwbd (version 3), Parquet and CSV round trips", function()
  local d = data.load(small, { target = "y" })
  d:save(dir .. "/types.gwbd")
  local f = assert(io.open(dir .. "/types.gwbd", "rb"))
  local h = f:read(12)
  f:close()
  T.eq(string.unpack("<I4", h, 9), 3, ".gwbd version 3")
  local g = data.load(dir .. "/types.gwbd")
  same_ids(g, ids, ".gwbd")
  T.eq(g.cents.dtype, "f64")
  T.eq(g.cents[37], d.cents[37])
  d:save(dir .. "/types.parquet")
  local q = data.load(dir .. "/types.parquet", { target = "y" })
  same_ids(q, ids, "Parquet")
  T.eq(q.cents.dtype, "f64")
  for i = 1, 500 do T.eq(q.cents[i], d.cents[i]) end
  d:write_csv(dir .. "/types_out.csv")
  local c = data.load(dir .. "/types_out.csv", { target = "y" })
  same_ids(c, ids, "CSV")
  for i = 1, 500 do T.eq(c.cents[i], tonumber(cents[i])) end
  local s = T.readfile(dir .. "/types_out.csv")
  T.ok(s:find("\n9223372036854775807,", 1, true), "int64 max written in full")
  T.ok(s:find("\n2095257565,", 1, true), "written exactly")
  -- a table of float32 columns only is still written as version 1
  local f32 = data.load(small, { target = "y", dtype = "f32" })
  f32:save(dir .. "/types_v1.gwbd")
  f = assert(io.open(dir .. "/types_v1.gwbd", "rb"))
  h = f:read(12)
  f:close()
  T.eq(string.unpack("<I4", h, 9), 1)
end)

T.test("sums of cents are exact; int64 sums stay integers", function()
  local path = dir .. "/types_cents.csv"
  local lines, want = { "amount,n,y" }, 0
  for i = 1, 10000 do
    lines[#lines + 1] = string.format("0.%02d,%d,%d", i % 100, 1000000007, i % 2)
    want = want + i % 100
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
  local d = data.load(path, { target = "y" })
  T.eq(d.amount.dtype, "f64")
  T.eq(string.format("%.2f", d.amount:sum()), string.format("%.2f", want / 100))
  T.near(d.amount:sum(), want / 100, 1e-9)
  T.eq(d.n:sum(), 10000 * 1000000007)
  T.eq(math.type(d.n:sum()), "integer")
  local f = data.load(path, { target = "y", dtype = "f32" })
  T.ok(f.n:sum() ~= 10000 * 1000000007, "float32 loses the ids' digits")
  local g = d:group_by("y"):agg { s = "sum(n)", a = "sum(amount)", c = "count(n)" }
  T.eq(g.s[1] + g.s[2], 10000 * 1000000007)
  T.eq(math.type(g.s[1]), "integer")
  T.eq(g.c[1] + g.c[2], 10000)
end)

T.test("sort, group_by, join, filter, unique on int64 keys float32 would merge", function()
  local d = data.load(small, { target = "y" })
  local s = d:sort("id")
  T.eq(s.id[1], -math.maxinteger)
  T.eq(s.id[2], 16777216)
  T.eq(s.id[3], 16777217)
  T.eq(s.id[500], math.maxinteger)
  T.eq(s.id[499], math.maxinteger - 1)
  local desc = d:sort("-id")
  T.eq(desc.id[1], math.maxinteger)
  -- two ids that differ by 1 above 2^24 and above 2^53 group apart
  local two = d:filter(d.id:isin { 2095257564, 2095257565, 9007199254740993, 9007199254740992 })
  T.eq(two.rows, 4)
  local g = two:group_by("id"):agg { n = "count(k)", first = "first(id)", mx = "max(id)" }
  T.eq(g.rows, 4, "four groups")
  for i = 1, 4 do
    T.eq(g.n[i], 1)
    T.eq(g.first[i], g.id[i])
    T.eq(g.mx[i], g.id[i])
  end
  local pair = d:filter(d.id:isin { 9007199254740993, 9007199254740992 }):with { g = "k * 0" }
  local nu = pair:group_by("g"):agg { u = "nunique(id)", n = "count(id)", lo = "min(id)" }
  T.eq(nu.rows, 1)
  T.eq(nu.n[1], 2)
  T.eq(nu.u[1], 2, "nunique tells 2^53 from 2^53 + 1")
  T.eq(nu.lo[1], 9007199254740992)
  T.eq(#d.id:unique(), 500)
  T.eq(d.id:value_counts().rows, 500)
  T.eq(d:filter(d.id:eq(2095257565)).rows, 1)
  T.eq(d:filter(d.id:eq(9007199254740993)).rows, 1)
  T.eq(d:filter(d.id:eq(9007199254740993)).k[1], d.k[5])
  T.eq(d:filter(d.id:between(9007199254740992, 9007199254740993)).rows, 2)
  T.eq(d:filter(d.id:gt(math.maxinteger - 1)).rows, 1)
  -- expressions compare exactly too
  T.eq(d:filter("id == 2095257565").rows, 1)
  T.eq(d:filter("id == 9007199254740993").rows, 1)
  T.eq(d:filter("9007199254740992 < id & id < 9223372036854775807").rows, 2)
  T.eq(d:filter("id != 9007199254740993").rows, 499)
  -- join on int64 keys: each id finds only its own row
  local right = d:select { "id", "k" }:rename { k = "k2" }
  local j = d:join(right, { on = "id" })
  T.eq(j.rows, 500)
  for i = 1, 12 do T.eq(j.k2[i], j.k[i]) end
  local top = d:filter(d.id:isin { 9007199254740993 })
  local jj = top:join(right, { on = "id" })
  T.eq(jj.rows, 1, "2^53 + 1 does not match 2^53")
end)

T.test("verbs keep the types; describe, head and Column printing show them", function()
  local d = data.load(small, { target = "y" })
  local t = d:sample(40, { seed = 1 })
  local row, dc, tc = {}, d:column("cents"), t:column("cents")
  for i = 1, d.rows do row[d.id[i]] = i end
  for i = 1, 40 do
    local r = d:filter(d.id:eq(t.id[i]))
    T.eq(r.rows, 1)
    T.eq(r.cents[1], t.cents[i])
    -- X (what models read) is carried, not rounded again from the float64
    T.eq(tc[i], dc[row[t.id[i]]])
  end
  T.eq(d:take({ 5, 6 }).id[1], 9007199254740993)
  T.eq(d:drop { "v" }.id.dtype, "i64")
  T.eq(d:rename { id = "key" }.key[7], math.maxinteger)
  local w = d:with { z = "k * 2" }
  T.eq(w.id[8], math.maxinteger - 1)
  local desc = d:describe()
  T.eq(desc[1].dtype, "i64")
  T.eq(desc[2].dtype, "f64")
  T.eq(desc[1].max, math.maxinteger, "describe's int64 max is exact")
  T.eq(desc[1].min, -math.maxinteger)
  local shown = tostring(d:head(12))
  T.ok(shown:find("9223372036854775807", 1, true), shown)
  T.ok(shown:find("2095257565", 1, true), shown)
  T.ok(not shown:find("2095257565.0", 1, true), "no .0 on integers")
  local cs = tostring(d.id)
  T.ok(cs:find("i64", 1, true) and cs:find("2095257564", 1, true), cs)
  local fd = data.load(small, { target = "y", dtype = "f32" }):describe()
  T.eq(fd[1].dtype, "f32")
end)

T.test("models train on int64 and float64 columns: the same forest as float32 when exact", function()
  -- values that float32 holds exactly: the forest is the same tree for tree
  local path = dir .. "/types_model.csv"
  local lines = { "a,b,c,y" }
  for i = 1, 400 do
    lines[#lines + 1] = string.format("%d,%.2f,%d,%d", (i * 37) % 101, (i % 13) * 0.25, i, (i * 37) % 101 > 50 and 1 or 0)
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
  local d = data.load(path, { target = "y" })
  local f = data.load(path, { target = "y", dtype = "f32" })
  T.eq(d.a.dtype, "i64")
  T.eq(d.b.dtype, "f64")
  local m1 = rf.train(d, { trees = 5, seed = 3, backend = "cpu" })
  local m2 = rf.train(f, { trees = 5, seed = 3, backend = "cpu" })
  local p1, p2 = m1:predict(d), m2:predict(f)
  for i = 1, 400 do T.eq(p1[i], p2[i]) end
  T.eq(m1.oob, m2.oob)
  T.ok(m1:score(d) > 0.9)
end)

T.test("pyarrow reads the int64 and float64 columns gwb writes, and gwb reads pyarrow's", function()
  if os.execute("python3 -c 'import pyarrow' 2>/dev/null") ~= true then
    T.skip("pyarrow is not importable here (pip install pyarrow)")
  end
  local d = data.load(dir .. "/types_missing.csv", { target = "y" })
  local out, back = dir .. "/types_gwb.parquet", dir .. "/types_pa.parquet"
  d:save(out)
  local py = dir .. "/types_check.py"
  T.writefile(py, string.format([[
import pyarrow as pa, pyarrow.parquet as pq
t = pq.read_table('%s')
assert t.schema.field('id').type == pa.int64(), t.schema
assert t.column('id').to_pylist() == [9007199254740993, None, None, 9007199254740995], t.column('id')
assert t.schema.field('x').type == pa.int64()
big = pa.table({'id': pa.array([9223372036854775807, -9223372036854775807, 16777217, None], pa.int64()),
                'n': pa.array([1, 2, 3, 4], pa.int32()),
                'amt': pa.array([0.1, 0.2, 1e300, None], pa.float64()),
                'y': pa.array([0, 1, 0, 1], pa.int64())})
pq.write_table(big, '%s')
]], out, back))
  T.ok(os.execute("python3 " .. py) == true, "pyarrow side")
  local e = data.load(back, { target = "y" })
  T.eq(e.id.dtype, "i64")
  T.eq(e.id[1], math.maxinteger)
  T.eq(e.id[2], -math.maxinteger)
  T.eq(e.id[3], 16777217)
  T.eq(e.id[4], nil)
  T.eq(e.n.dtype, "i64", "INT32 reads as int64")
  T.eq(e.amt.dtype, "f64")
  T.eq(e.amt[1], 0.1)
  T.eq(e.amt[3], 1e300)
  T.eq(e.amt[4], nil)
  T.eq(data.load(back, { target = "y", dtype = "f32" }).id.dtype, "f32")
end)

T.test("integers int64 cannot hold read as float64; the rest of a column decides its type", function()
  local path = dir .. "/types_edge.csv"
  T.writefile(path, table.concat({
    "huge,minval,plus,expo,y",
    "123456789012345678901234,-9223372036854775808,+5,1e3,0",
    "1,1,\"7\",2,1",
    "2,2, 9 ,3,0",
  }, "\n") .. "\n")
  local d = data.load(path, { target = "y" })
  T.eq(d.huge.dtype, "f64", "past int64")
  T.eq(d.huge[1], 1.2345678901234568e23)
  T.eq(d.minval.dtype, "f64", "INT64_MIN is int64's missing marker: the column is float64")
  T.eq(d.minval[1], -9223372036854775808.0)
  T.eq(d.plus.dtype, "i64", "+5, a quoted 7 and a blank-padded 9 are integers")
  T.eq(d.plus[1], 5)
  T.eq(d.plus[2], 7)
  T.eq(d.plus[3], 9)
  T.eq(d.expo.dtype, "f64", "1e3 is not an integer literal")
  T.eq(d.expo[1], 1000.0)
end)

T.test("the parallel reader's 64-bit columns grow past their first estimate and join exactly", function()
  -- rows of mostly empty fields (",,1": under 2 bytes a field) outgrow each range's first
  -- estimate of rows, so the ranges' mapped columns grow (csv_wide_reserve) before the join
  -- moves their pages into place; every cell must match the sequential reader's
  local path = dir .. "/types_sparse.csv"
  local lines = { "a,b,y" }
  local n = 1400000   -- ~5.7 MB: past the parallel reader's 4 MiB
  for i = 1, n do
    if i % 97 == 0 then
      lines[#lines + 1] = string.format("%d,%d.25,%d", 4000000000000 + i, i, i % 2)
    else
      lines[#lines + 1] = ",," .. (i % 2)
    end
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
  local p = data.load(path, { target = "y", threads = 2 })
  local q = data.load(path, { target = "y", threads = 1 })
  T.eq(p.source.threads, 2)
  T.eq(p.rows, n)
  T.eq(p.a.dtype, "i64")
  T.eq(p.b.dtype, "f64")
  local pa, qa, pb, qb = p.a:totable(), q.a:totable(), p.b:totable(), q.b:totable()
  local bad = 0
  local function differ(x, y) return x ~= y and not (x ~= x and y ~= y) end   -- (NaN: missing)
  for i = 1, n do
    if differ(pa[i], qa[i]) or differ(pb[i], qb[i]) then bad = bad + 1 end
  end
  T.eq(bad, 0, "cells that differ between the readers")
  T.eq(p.a[97 * 1000], 4000000000000 + 97 * 1000)
  T.eq(p.b[97 * 1000], 97 * 1000 + 0.25)
  T.eq(p.a[1], nil)
  T.eq(p.a:missing(), n - n // 97)
end)
