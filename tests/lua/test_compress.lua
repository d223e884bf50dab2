-- test_compress.lua - gzip and zstd CSV (issue 28): d:write_csv("x.csv.gz" | ".zst") and
-- data.load of what it wrote give the same values; the compression is found by the magic
-- bytes whatever the name; a truncated or corrupt stream is an error with its offsets and
-- nothing loaded; the "binary data" message lists every format; the .npy sidecar keeps the
-- names, target, classes and levels. (Multi-member files and pipes: tests/cli/test_load_pipe.sh.)
local dir = T.tmpdir()

local function same(d, e)
  T.eq(e.rows, d.rows); T.eq(e.features, d.features); T.eq(e.task, d.task)
  T.eq(e.target, d.target)
  for j = 1, d.features do
    T.eq(e.names[j], d.names[j])
    local a, la = d:column(j)
    local b, lb = e:column(j)
    for i = 1, d.rows do
      if a[i] == a[i] then T.eq(b[i], a[i], "column " .. j .. " row " .. i) else T.ok(b[i] ~= b[i]) end
    end
    T.eq(lb and table.concat(lb, "|"), la and table.concat(la, "|"))
  end
  T.eq(e.labels and table.concat(e.labels, "|"), d.labels and table.concat(d.labels, "|"))
  local a, b = d:column(d.target), e:column(e.target)
  for i = 1, d.rows do T.eq(b[i], a[i], "the target, row " .. i) end
end

local function esc(s) return (s:gsub("%p", "%%%0")) end

-- a table with numbers, missing cells, a categorical column with quotes and commas
local function mixed(n)
  local rows = { "id,x,kind,note,y" }
  for i = 1, n do
    rows[#rows + 1] = string.format('%d,%s,%s,"say ""%d"", ok",%s', i,
      i % 7 == 0 and "" or string.format("%.3f", i / 3), ({ "a", "b", "c d" })[i % 3 + 1], i % 5,
      i % 2 == 0 and "yes" or "no")
  end
  local p = dir .. "/mixed.csv"
  T.writefile(p, table.concat(rows, "\n") .. "\n")
  return p
end

T.test("compress: write_csv .gz/.zst round trips give the same Dataset as the plain file", function()
  for _, src in ipairs { "datasets/iris.csv", mixed(3000) } do
    local d = data.load(src, { progress = false })
    for _, ext in ipairs { ".csv.gz", ".csv.zst", ".csv.GZ", ".csv.zstd" } do
      local p = dir .. "/rt" .. ext
      d:write_csv(p)
      local head = T.readfile(p):sub(1, 4)
      if ext:lower():find("gz") then T.eq(head:sub(1, 2), "\31\139", ext .. " is gzip")
      else T.eq(head, "\40\181\47\253", ext .. " is zstd") end
      local e = data.load(p, { progress = false })
      same(d, e)
      same(d, data.load(p, { progress = false, threads = 1 }))  -- decoded on the caller's thread
      T.eq(e.source.compression, ext:lower():find("gz") and "gzip" or "zstd")
      T.eq(e.source.compressed_bytes, #T.readfile(p))
      local plain = dir .. "/rt_plain.csv"
      d:write_csv(plain)
      T.eq(e.source.bytes, #T.readfile(plain), "d.source.bytes counts the uncompressed text")
    end
  end
end)

T.test("compress: the magic bytes decide, not the name", function()
  local d = data.load("datasets/iris.csv", { progress = false })
  d:write_csv(dir .. "/named.gz")
  local gz = T.readfile(dir .. "/named.gz")
  T.writefile(dir .. "/really_gzip.csv", gz)             -- a .gz named .csv
  same(d, data.load(dir .. "/really_gzip.csv", { progress = false }))
  T.writefile(dir .. "/plain_named.gz", T.readfile("datasets/iris.csv"))  -- plain text named .gz
  local e = data.load(dir .. "/plain_named.gz", { progress = false })
  same(d, e)
  T.eq(e.source.compression, nil)
  d:write_csv(dir .. "/z.zst")
  T.writefile(dir .. "/really_zstd.npy", T.readfile(dir .. "/z.zst"))   -- not taken for a .npy
  same(d, data.load(dir .. "/really_zstd.npy", { progress = false }))
  -- mat.read names the compression instead of misreading the bytes
  T.raises(function() mat.read(dir .. "/named.gz") end, "gzip-compressed; mat.read reads")
end)

T.test("compress: a truncated or corrupt stream fails with its offsets, nothing loaded", function()
  local d = data.load(mixed(3000), { progress = false })
  for _, ext in ipairs { "gz", "zst" } do
    local p = dir .. "/full." .. ext
    d:write_csv(p)
    local s = T.readfile(p)
    local cut = dir .. "/cut." .. ext
    T.writefile(cut, s:sub(1, #s // 2))
    local ok, err = pcall(data.load, cut, { progress = false, threads = 1 })
    T.ok(not ok, "a truncated ." .. ext .. " loaded (one thread)")
    local err1 = err
    ok, err = pcall(data.load, cut, { progress = false })
    T.ok(not ok, "a truncated ." .. ext .. " loaded")
    T.eq(err, err1, "the decoder thread's message is the one-thread message")
    local tool = ext == "gz" and "gzip" or "zstd"
    T.ok(err:find(esc(cut) .. ": truncated " .. tool .. " stream: the compressed data ends at byte "
      .. (#s // 2) .. " %(uncompressed byte %d+%)"), err)
    T.ok(err:find(tool .. " -t", 1, true), "says how to check the file: " .. err)
    -- a flipped byte in the middle: corrupt data (or a checksum that does not match)
    local bad = dir .. "/bad." .. ext
    local k = #s // 2
    T.writefile(bad, s:sub(1, k - 1) .. string.char((s:byte(k) + 77) % 256) .. s:sub(k + 1))
    ok, err = pcall(data.load, bad, { progress = false })
    T.ok(not ok, "a corrupt ." .. ext .. " loaded")
    T.ok(err:find(esc(bad) .. ": corrupt " .. tool .. " data at compressed byte %d+ %(uncompressed byte %d+%)"), err)
    -- bytes after the end that start no further member or frame
    T.writefile(bad, s .. "trailing text")
    ok, err = pcall(data.load, bad, { progress = false })
    T.ok(not ok and err:find("corrupt " .. tool .. " data at compressed byte " .. #s, 1, true), tostring(err))
  end
  -- a zstd frame that asks for a 1 GiB window (zstd --long=30): refused, saying why
  local win = dir .. "/window.zst"
  T.writefile(win, "\40\181\47\253\0\160\41\0\0a,b\n1")
  T.raises(function() data.load(win) end, "needs a decoding window over the 128 MiB gwb allows")
  -- gzip's zero padding after the last member is accepted, as gzip accepts it
  local s = T.readfile(dir .. "/full.gz")
  T.writefile(dir .. "/pad.gz", s .. string.rep("\0", 100))
  same(d, data.load(dir .. "/pad.gz", { progress = false }))
end)

T.test("compress: binary data names every format data.load reads", function()
  local p = dir .. "/bin.dat"
  T.writefile(p, "a,b\n1,\0\2\n")
  local ok, err = pcall(data.load, p)
  T.ok(not ok)
  for _, w in ipairs { "CSV text", "gzip or zstd", ".gwbd", ".npy", "Parquet (.parquet)" } do
    T.ok(err:find(w, 1, true), "the message lists " .. w .. ": " .. err)
  end
  -- NUL bytes inside a compressed file: the offset is the uncompressed one
  local d = data.load("datasets/iris.csv", { progress = false })
  d:save(dir .. "/bin.npy")
  local f = io.popen("gzip -c < " .. dir .. "/bin.npy > " .. dir .. "/bin.npy.gz && echo ok")
  local made = f:read("a"); f:close()
  if made:find("ok") then
    ok, err = pcall(data.load, dir .. "/bin.npy.gz")
    T.ok(not ok and err:find("binary data %(a NUL byte at uncompressed offset %d+%)"), tostring(err))
    T.ok(err:find("only CSV is read compressed: decompress a .gwbd or .npy file first", 1, true), err)
  end
end)

T.test("compress: the .npy sidecar keeps names, target, classes and levels", function()
  local src = mixed(500)
  local d = data.load(src, { progress = false })
  local p = dir .. "/side.npy"
  os.remove(p .. ".json")
  d:save(p)
  local meta = T.readfile(p .. ".json")
  T.ok(meta:find('"columns"', 1, true) and meta:find('"target": "y"', 1, true), meta)
  local e = data.load(p)
  same(d, e)
  -- another target by its name, and a near miss suggested
  local f = data.load(p, { target = "id", task = "regression" })
  T.eq(f.target, "id"); T.eq(f.task, "regression"); T.eq(f.names[1], "x"); T.eq(f.names[4], "y")
  T.raises(function() data.load(p, { target = "kinds" }) end, "no column \"kinds\" (did you mean 'kind'?)")
  -- without the sidecar: col1, col2, ... and class codes
  os.rename(p .. ".json", p .. ".json.away")
  local g = data.load(p)
  T.eq(g.names[1], "col1"); T.eq(g.target, "col5")
  T.raises(function() data.load(p, { target = "x" }) end, "without a sidecar .json the columns are col1")
  -- a sidecar that does not fit: an error naming it
  T.writefile(p .. ".json", '{"columns": ["a", "b"]}')
  T.raises(function() data.load(p) end, "side.npy.json: it names 2 columns, the array has 5")
  T.writefile(p .. ".json", '{"columns": [1, 2,')
  T.raises(function() data.load(p) end, "not valid JSON: fix it, or remove it")
  os.rename(p .. ".json.away", p .. ".json")
  same(d, data.load(p))
  -- a regression target and numeric class names keep their values
  local r = data.load("datasets/iris.csv", { target = "petal_width", progress = false })
  r:save(dir .. "/reg.npy")
  same(r, data.load(dir .. "/reg.npy"))
end)

T.test("d:save with a CSV name writes CSV text (not a .gwbd under a .csv name)", function()
  local d = data.load("datasets/iris.csv")
  local dir = T.tmpdir()
  for _, name in ipairs { "a.csv", "b.TSV", "c.csv.gz", "d.txt.zst" } do
    local p = dir .. "/" .. name
    d:save(p)
    local head = T.readfile(p):sub(1, 5)
    T.ok(not head:find("GWBD", 1, true), name .. ": a .gwbd was written")
    local e = data.load(p)
    T.eq(e.rows, d.rows, name)
    T.eq(e.features, d.features, name)
    T.eq(e:column("sepal_length")[7], d:column("sepal_length")[7], name)
  end
  T.eq(T.readfile(dir .. "/a.csv"):match("^[^\n]*"), "sepal_length,sepal_width,petal_length,petal_width,species")
  T.ok(T.readfile(dir .. "/b.TSV"):match("^[^\n]*"):find("\t", 1, true), "a .tsv is tab-separated")
end)
