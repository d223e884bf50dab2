-- test_parquet.lua - Parquet files: the fixtures pyarrow, polars and DuckDB wrote
-- (tests/fixtures/parquet, made by make.py there) load with the values pyarrow reads from
-- them; files gwb writes load back the same and (where pyarrow is importable) read the same
-- in pyarrow; columns = {...} reads only those; damaged or unsupported files say what and
-- where.
local FIX = "tests/fixtures/parquet/"
local dir = T.tmpdir()

-- T.raises with a Lua pattern
local function raises(fn, pat)
  local ok, err = pcall(fn)
  T.ok(not ok, "expected an error matching " .. pat)
  T.ok(tostring(err):find(pat), string.format("error %q does not match %q", tostring(err), pat))
end

local function expected(name) return dofile(FIX .. name .. ".lua") end

-- every column of want (target = false: all are features) has exactly its values in d
local function same(d, want, label)
  T.eq(d.rows, want.rows, label .. ": rows")
  T.eq(d.features, #want.columns, label .. ": columns")
  for j, c in ipairs(want.columns) do
    T.eq(d.names[j], c.name, label .. ": column " .. j .. "'s name")
    local vals, levels = d:column(j)
    T.eq(levels ~= nil, c.kind == "text", label .. ": " .. c.name .. " is " .. c.kind)
    for i = 1, want.rows do
      local w, g = c.values[i], vals[i]
      if levels and g == g then g = levels[g] end
      if w == nil then
        T.ok(g ~= g, string.format("%s: %s row %d is missing, got %s", label, c.name, i,
          tostring(g)))
      elseif w ~= g and not (w ~= w and g ~= g) then
        error(string.format("%s: %s row %d: want %s, got %s", label, c.name, i, tostring(w),
          tostring(g)))
      end
    end
  end
end

local fixtures = { "pa_plain_v1_none", "pa_dict_v1_snappy", "pa_dict_v2_gzip",
  "pa_plain_v2_zstd", "pa_delta_v2_zstd", "pa_delta_v1_snappy", "pa_groups_pages",
  "polars_default", "duckdb_default" }

for _, name in ipairs(fixtures) do
  T.test("parquet: " .. name .. " loads with the values pyarrow reads", function()
    local d = data.load(FIX .. name .. ".parquet", { target = false })
    same(d, expected(name), name)
    T.eq(d.source.format, "parquet")
  end)
end

T.test("parquet: several row groups, read on several threads, give one table", function()
  local one = data.load(FIX .. "pa_groups_pages.parquet", { target = false, threads = 1 })
  local many = data.load(FIX .. "pa_groups_pages.parquet", { target = false, threads = 3 })
  T.eq(many.source.row_groups, 3)
  same(many, expected("pa_groups_pages"), "threads = 3")
  for j = 1, one.features do
    local a, b = one:column(j), many:column(j)
    for i = 1, one.rows do T.ok(a[i] == b[i] or (a[i] ~= a[i] and b[i] ~= b[i])) end
  end
end)

T.test("parquet: the target by name, by index, the last by default; tasks as for CSV", function()
  local p = FIX .. "pa_dict_v1_snappy.parquet"
  local d = data.load(p)
  T.eq(d.target, "y"); T.eq(d.task, "classification"); T.eq(d.classes, 3)
  T.eq(d.labels[1], "bird"); T.eq(d.labels[3], "dog")   -- sorted as the CSV reader sorts
  local e = data.load(p, { target = "f32" })
  T.eq(e.task, "regression"); T.eq(e.features, 6); T.eq(e.names[6], "y")
  local f = data.load(p, { target = 2 })
  T.eq(f.target, "i64")
  T.raises(function() data.load(p, { target = "f3" }) end, 'unknown target "f3": did you mean')
  T.raises(function() data.load(p, { target = "i32" }) end, 'missing target value in row')
  T.raises(function() data.load(p, { sep = ";" }) end, "applies to CSV files")
  T.raises(function() data.load(p, { target = "s", task = "regression" }) end, "holds text")
end)

T.test("parquet: columns = {...} reads only those, in that order", function()
  local p = FIX .. "pa_plain_v2_zstd.parquet"
  local d = data.load(p, { columns = { "f64", "s", "y" } })
  T.eq(d.features, 2); T.eq(d.names[1], "f64"); T.eq(d.names[2], "s"); T.eq(d.target, "y")
  T.eq(d.source.read, 3); T.eq(d.source.columns, 7)
  local e = data.load(p, { columns = { "f32" }, target = "y" })
  T.eq(e.features, 1); T.eq(e.target, "y")
  T.raises(function() data.load(p, { columns = { "f33" } }) end,
    'unknown column "f33": did you mean')
  T.raises(function() data.load("datasets/iris.csv", { columns = { "x" } }) end,
    "applies to Parquet files")
end)

T.test("parquet: unsupported columns are named; the others load with columns =", function()
  local n = FIX .. "nested.parquet"
  raises(function() data.load(n) end, 'column "tags" is a nested type %(a list%)')
  raises(function() data.load(n, { columns = { "x", "pt", "y" } }) end,
    'column "pt" is a nested type %(a struct%).*columns = ')
  same(data.load(n, { columns = { "x", "y" }, target = false }), expected("nested"), "nested")
  local o = FIX .. "int96_decimal.parquet"
  T.raises(function() data.load(o) end, 'column "when" is the INT96 type')
  T.raises(function() data.load(o, { columns = { "price", "y" } }) end,
    'column "price" is FIXED_LEN_BYTE_ARRAY')
  same(data.load(o, { columns = { "x", "y" }, target = false }), expected("int96_decimal"), "int96")
  raises(function() data.load(FIX .. "lz4.parquet") end,
    'column "x" %(row group 1, page at byte offset %d+%) uses the LZ4.*codec')
end)

-- a copy of a fixture with bytes changed
local function damaged(name, fn)
  local s = T.readfile(FIX .. name .. ".parquet")
  local p = dir .. "/bad-" .. name .. "-" .. math.random(1e9) .. ".parquet"
  T.writefile(p, fn(s))
  return p
end

T.test("parquet: truncated, corrupt, wrong magic: errors with the file and where", function()
  local p = damaged("pa_plain_v1_none", function(s) return s:sub(1, #s - 100) end)
  raises(function() data.load(p) end, "not a Parquet file %(it does not end with")
  p = damaged("pa_plain_v1_none", function(s) return "PAR2" .. s:sub(5) end)
  -- (no PAR1 at the start: not taken for Parquet; the CSV reader refuses the binary data)
  raises(function() data.load(p) end, "bad%-.*binary data")
  p = damaged("pa_plain_v1_none", function(s) return s:sub(1, 8) .. string.rep("\255", 40) .. s:sub(49) end)
  raises(function() data.load(p) end,
    'column "i32", row group 1, page at byte offset 4: .*damaged')
  -- only the pages of the columns asked for are read: the others load past the damage
  local d = data.load(p, { columns = { "f32", "s", "y" }, target = false })
  local want = expected("pa_plain_v1_none")
  same(d, { rows = want.rows, columns = { want.columns[3], want.columns[6], want.columns[7] } },
    "past a damaged column")
  -- a snappy page whose stream says another length (its first bytes, after the 14-byte
  -- page header at offset 4)
  p = damaged("pa_dict_v1_snappy", function(s) return s:sub(1, 18) .. "\255\255" .. s:sub(21) end)
  local ok, err = pcall(data.load, p)
  T.ok(not ok and err:find("row group 1, page at byte offset") and err:find("damaged"), err)
  -- a footer length past the file
  p = damaged("pa_plain_v1_none", function(s) return s:sub(1, #s - 8) .. string.pack("<I4", 1e6) .. "PAR1" end)
  raises(function() data.load(p) end, "the footer length %(1000000 bytes%) exceeds the file")
end)

local function roundtrip(d, opts)
  local p = dir .. "/rt-" .. math.random(1e9) .. ".parquet"
  d:save(p, opts)
  local e = data.load(p)
  T.eq(e.rows, d.rows); T.eq(e.features, d.features); T.eq(e.target, d.target)
  T.eq(e.task, d.task)
  local cols = {}
  for j = 1, d.features do cols[j] = j end
  cols[#cols + 1] = d.target
  for _, j in ipairs(cols) do
    local a, la = d:column(j)
    local b, lb = e:column(j)
    T.eq(la ~= nil, lb ~= nil)
    for i = 1, d.rows do
      local x, y = a[i], b[i]
      if la and x == x then x = la[x] end
      if lb and y == y then y = lb[y] end
      T.ok(x == y or (x ~= x and y ~= y), string.format("column %s row %d: %s vs %s", j, i,
        tostring(x), tostring(y)))
    end
  end
  return p, e
end

T.test("parquet: d:save writes every codec; data.load gives back the same Dataset", function()
  local iris = data.load("datasets/iris.csv", { target = "species", progress = false })
  for _, c in ipairs({ "snappy", "zstd", "gzip", "none" }) do
    roundtrip(iris, { compression = c })
  end
  roundtrip(iris, { row_group = 7 })     -- 22 row groups
  local p = FIX .. "pa_dict_v2_gzip.parquet"
  roundtrip(data.load(p, { target = "f32" }), { row_group = 9 })   -- categories with missing
  roundtrip(data.load(p, { target = "flag" }))                     -- a 0/1 class target
  local s = data.synth{ rows = 2000, features = 5, kind = "regression" }
  roundtrip(s, { compression = "zstd", row_group = 500 })
  T.raises(function() iris:save(dir .. "/x.parquet", { compression = "lzo" }) end,
    'compression must be "snappy"')
end)

T.test("parquet: a Dataset without a target keeps none", function()
  local d = data.load(FIX .. "pa_plain_v1_none.parquet", { target = false })
  local p = dir .. "/nt.parquet"
  d:save(p)
  local e = data.load(p)
  T.eq(e.features, 7)
  same(e, expected("pa_plain_v1_none"), "saved without a target")
end)

T.test("parquet: the magic decides, whatever the name; a FIFO loads too", function()
  local p = dir .. "/iris.data"
  local iris = data.load("datasets/iris.csv", { target = "species", progress = false })
  iris:save(dir .. "/iris.parquet")
  os.execute("cp " .. dir .. "/iris.parquet " .. p)
  T.eq(data.load(p).source.format, "parquet")
  -- through a FIFO (read whole into memory first, as for CSV): the same table, the FIFO named
  local fifo = dir .. "/pq.fifo"
  T.ok(os.execute("mkfifo " .. fifo) == true, "mkfifo")
  os.execute("cat " .. p .. " > " .. fifo .. " &")
  local d = data.load(fifo)
  T.eq(d.rows, 150); T.eq(d.source.path, fifo); T.eq(d.target, "species")
  local a, b = d:column(3), iris:column(3)
  for i = 1, 150 do T.eq(a[i], b[i]) end
end)

T.test("parquet: files gwb writes read the same in pyarrow", function()
  if os.execute("python3 -c 'import pyarrow' 2>/dev/null") ~= true then
    T.skip("pyarrow is not importable here (pip install pyarrow)")
  end
  local d = data.load(FIX .. "pa_dict_v2_gzip.parquet", { target = "f32" })
  for _, c in ipairs({ "snappy", "zstd", "gzip", "none" }) do
    local p = dir .. "/py-" .. c .. ".parquet"
    d:save(p, { compression = c, row_group = 13 })
    local out = dir .. "/py-" .. c .. ".lua"
    local py = string.format([[python3 -c '
import sys, math, pyarrow.parquet as pq, numpy as np
t = pq.read_table(sys.argv[1])
assert t.schema.metadata[b"gwb.target"] == b"f32"
f = open(sys.argv[2], "w")
f.write("return {rows = %%d, columns = {\n" %% t.num_rows)
for name in t.column_names:
    v = t.column(name).to_pylist()
    text = isinstance(next((x for x in v if x is not None), 0), str)
    items = []
    for i, x in enumerate(v):
        if x is None: continue
        items.append("[%%d] = %%s" %% (i + 1, ("%%r" %% x).replace("\\x27", "\\x22") if text else repr(float(np.float32(x)))))
    f.write("{name = %%r, kind = %%r, values = {%%s}},\n" %% (name, "text" if text else "num", ", ".join(items)))
f.write("}}\n")
' %s %s]], p, out)
    T.ok(os.execute(py) == true, "pyarrow read " .. p)
    local want = dofile(out)
    local e = data.load(p, { target = false })
    same(e, want, "pyarrow " .. c)
  end
end)
