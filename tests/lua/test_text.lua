-- test_text.lua - free-text columns (kind "text"): a string column whose sampled values mostly
-- differ is kept as strings, not coded as a category of as many levels as rows. The CSV
-- readers (sequential and parallel), Parquet, .gwbd, CSV and Parquet writers keep the strings
-- exactly; Columns, verbs, expressions and models see the column for what it is, and what
-- cannot use text says so by name.
local dir = T.tmpdir()

-- n rows: id, x (a number), color (4 levels), note (free text: quoted commas, "" escapes,
-- some empty), y (target 0/1). Returns the path and the note of each row (nil = empty).
local function write_table(path, n)
  local words = { "red", "late", "box", "river", "quiet", "never", "train", "cheap", "north" }
  local notes, lines = {}, { "id,x,color,note,y" }
  for i = 1, n do
    local note
    if i % 17 ~= 0 then
      note = string.format("%s %s %d", words[i % 9 + 1], words[(i * 7) % 9 + 1], i)
      if i % 5 == 0 then note = note .. ", again" end
      if i % 11 == 0 then note = note .. ' said "hi"' end
    end
    notes[i] = note
    local cell = note or ""
    if cell:find('[,"]') then cell = '"' .. cell:gsub('"', '""') .. '"' end
    lines[#lines + 1] = string.format("%d,%.3f,%s,%s,%d", i, i * 0.5,
      ({ "a", "b", "c", "d" })[i % 4 + 1], cell, i % 2)
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
  return notes
end

local function same_notes(d, notes, label)
  T.eq(d.note.kind, "text", label .. ": kind")
  T.eq(d.rows, #notes, label .. ": rows")
  for i = 1, #notes do
    T.eq(d.note[i], notes[i], string.format("%s: row %d", label, i))
  end
end

local small = dir .. "/small.csv"
local notes = write_table(small, 600)

T.test("a free-text CSV column loads as text with every string as written", function()
  local d = data.load(small, { target = "y" })
  same_notes(d, notes, "small")
  T.eq(d.color.kind, "category", "a few labels stay a category")
  T.eq(d.note:missing(), 35, "empty cells are missing")
  local desc = d:describe()
  T.eq(desc[4].type, "text")
  T.eq(desc[4].distinct, 565)
  T.eq(desc[4].missing, 35)
  T.ok(tostring(d):find("text columns: 1", 1, true), tostring(d))
  local vals = d:column("note")
  T.eq(vals[3], notes[3])
  T.ok(vals[17] ~= vals[17], "a missing string is NaN in d:column")
  local shown = tostring(d:head(3))
  T.ok(shown:find(notes[2], 1, true), shown)
end)

T.test("the parallel reader gives the same text as the sequential one", function()
  local big = dir .. "/big.csv"
  local bn = write_table(big, 60000)   -- ~2.3 MB: doubled below to pass 4 MiB
  local s = T.readfile(big)
  local body = s:sub(s:find("\n", 1, true) + 1)
  T.writefile(big, s .. body)
  for i = 1, 60000 do bn[60000 + i] = bn[i] end
  local p = data.load(big, { threads = 2 })
  local q = data.load(big, { threads = 1 })
  T.eq(p.source.threads, 2, "parsed by two threads")
  same_notes(p, bn, "parallel")
  same_notes(q, bn, "sequential")
end)

T.test("text and categorical options override the sample", function()
  local d = data.load(small, { target = "y", categorical = { "note" } })
  T.eq(d.note.kind, "category")
  local e = data.load(small, { target = "y", text = { "color" } })
  T.eq(e.color.kind, "text")
  T.eq(e.color[1], "b")
  T.raises(function() data.load(small, { target = "y", text = { "nope" } }) end, "nope")
  T.raises(function() data.load(small, { target = "y", text = { "y" } }) end, "is the target")
end)

T.test("text survives .gwbd, CSV and Parquet round trips", function()
  local d = data.load(small, { target = "y" })
  d:save(dir .. "/t.gwbd")
  local g = data.load(dir .. "/t.gwbd")
  same_notes(g, notes, ".gwbd")
  d:write_csv(dir .. "/t.csv")
  same_notes(data.load(dir .. "/t.csv", { target = "y" }), notes, "CSV")
  d:save(dir .. "/t.parquet")
  same_notes(data.load(dir .. "/t.parquet", { target = "y" }), notes, "Parquet")
  T.raises(function() d:save(dir .. "/t.npy") end, 'column "note" holds free text')
end)

T.test("a table without text columns is still written as .gwbd version 1", function()
  -- (dtype = "f32": no int64 or float64 columns either, which version 3 holds)
  local d = data.load(small, { target = "y", dtype = "f32" }):drop { "note" }
  d:save(dir .. "/v1.gwbd")
  local f = assert(io.open(dir .. "/v1.gwbd", "rb"))
  local h = f:read(12)
  f:close()
  T.eq(string.unpack("<I4", h, 9), 1)
  d = data.load(small, { target = "y", dtype = "f32" })
  d:save(dir .. "/v2.gwbd")
  f = assert(io.open(dir .. "/v2.gwbd", "rb"))
  h = f:read(12)
  f:close()
  T.eq(string.unpack("<I4", h, 9), 2)
end)

T.test("a damaged .gwbd text section is refused with what is wrong", function()
  local d = data.load(small, { target = "y" })
  local p = dir .. "/bad.gwbd"
  d:save(p)
  local s = T.readfile(p)
  -- cut the file: the header's payload size no longer matches
  T.writefile(p, s:sub(1, #s - 10))
  T.raises(function() data.load(p) end, "truncated")
end)

T.test("Columns of text: strings, eq, isin, unique, value_counts; numbers refused", function()
  local d = data.load(small, { target = "y" })
  local c = d.note
  T.eq(#c, 600)
  T.eq(c[1], notes[1])
  T.eq(c[17], nil, "missing")
  local m = c:eq(notes[5])
  local f = d:filter(m)
  T.eq(f.rows, 1)
  T.eq(f.note[1], notes[5])
  T.eq(f.id[1], 5)
  T.eq(d:filter(c:ne(notes[5])).rows, 599, "ne: missing rows too")
  T.eq(d:filter(c:isin { notes[1], notes[2], "no such" }).rows, 2)
  T.eq(d:filter(c:isnan()).rows, 35)
  T.eq(#c:unique(), 565)
  local vc = c:value_counts()
  T.eq(vc.rows, 565)
  T.eq(vc.count[1], 1)
  T.eq(vc.note[1], notes[1], "ties keep first-seen order")
  T.raises(function() c:mean() end, "holds free text")
  T.raises(function() return c + 1 end, "needs numbers")
  T.raises(function() c:lt("a") end, "compare it with eq, ne or isin")
  T.raises(function() c:eq(3) end, "compare it with a string")
end)

T.test("verbs carry text; keys and expressions refuse it by name", function()
  local d = data.load(small, { target = "y" })
  local s = d:sort("-id")
  T.eq(s.note[1], notes[600])
  T.eq(s.note[600], notes[1])
  local h = d:sample(50, { seed = 3 })
  for i = 1, 50 do T.eq(h.note[i], notes[h.id[i]]) end
  local w = d:with { z = "x * 2" }
  T.eq(w.note[7], notes[7])
  T.raises(function() d:filter("note == 'x'") end, "holds free text")
  local g = d:group_by("color"):agg { n = "count(note)" }
  local total = 0
  for i = 1, g.rows do total = total + g.n[i] end
  T.eq(total, 565, "count() counts strings")
  T.raises(function() d:group_by("color"):agg { s = "sum(note)" } end, "a text column")
end)

T.test("text keys sort, group and join by their strings, as the same labels in a category do", function()
  -- by a Lua loop: the notes in string order, stable, missing last
  local d = data.load(small, { target = "y" })
  local idx = {}
  for i = 1, 600 do idx[i] = i end
  table.sort(idx, function(a, b)
    local x, y = notes[a], notes[b]
    if x == nil or y == nil then
      if x ~= nil then return true end
      if y ~= nil then return false end
      return a < b
    end
    if x ~= y then return x < y end
    return a < b
  end)
  local s = d:sort("note")
  for i = 1, 600 do T.eq(s.id[i], idx[i], "sort by note: row " .. i) end
  local s2 = d:sort { "-note" }
  T.eq(s2.id[1], idx[565], "descending: the last string first")
  T.eq(s2.note[600], nil, "missing last either way")
  -- repeated strings read as text (asked for) and as a category give the same answers
  local p = dir .. "/words.csv"
  local lines = { "id,t,c,v" }
  local words = { "pear", "fig", "apple", "kiwi", "lime", "", "date" }
  for i = 1, 3000 do
    local w = words[(i * 7919) % 7 + 1]
    lines[#lines + 1] = string.format("%d,%s,%s,%d", i, w, w, (i * 37) % 101)
  end
  T.writefile(p, table.concat(lines, "\n") .. "\n")
  local e = data.load(p, { target = "id", text = { "t" }, categorical = { "c" } })
  T.eq(e.t.kind, "text")
  T.eq(e.c.kind, "category")
  local a, b = e:sort { "t", "-v" }, e:sort { "c", "-v" }
  for i = 1, 3000 do T.eq(a.id[i], b.id[i], "sort by text and by category: row " .. i) end
  local ga = e:group_by("t"):agg { n = "count()", s = "sum(v)", m = "median(v)" }
  local gb = e:group_by("c"):agg { n = "count()", s = "sum(v)", m = "median(v)" }
  T.eq(ga.rows, 7, "six words and the missing one")
  T.eq(ga.t.kind, "text", "the key stays text")
  for i = 1, ga.rows do
    T.eq(ga.t[i], gb.c[i] == gb.c[i] and gb.c[i] or nil, "group key " .. i)
    T.eq(ga.n[i], gb.n[i])
    T.eq(ga.s[i], gb.s[i])
    T.eq(ga.m[i], gb.m[i])
  end
  local g2 = e:group_by { "t", "v" }:agg { n = "count()" }
  local g3 = e:group_by { "c", "v" }:agg { n = "count()" }
  T.eq(g2.rows, g3.rows)
  for i = 1, g2.rows do T.eq(g2.n[i], g3.n[i]) end
  -- joins: text on either side matches labels of a category or of text
  local rp = dir .. "/wordsr.csv"
  T.writefile(rp, "t,w\nfig,1\nkiwi,2\nplum,3\ndate,4\n")
  local r = data.load(rp, { target = "w", text = { "t" } })
  local rc = data.load(rp, { target = "w", categorical = { "t" } })
  local want = { fig = 1, kiwi = 2, date = 4 }
  for _, pair in ipairs { { e, r }, { e, rc }, { e:rename { t = "x", c = "t" }, r } } do
    local j = pair[1]:join(pair[2], { on = "t", how = "left" })
    T.eq(j.rows, 3000)
    for i = 1, 3000, 7 do
      local w = words[(i * 7919) % 7 + 1]
      local got = j.w[i]
      if want[w] then T.eq(got, want[w], "join row " .. i) else T.eq(got, nil, "join row " .. i .. ": none") end
    end
    local inner = pair[1]:join(pair[2], { on = "t" })
    local cnt = 0
    for i = 1, 3000 do if want[words[(i * 7919) % 7 + 1]] then cnt = cnt + 1 end end
    T.eq(inner.rows, cnt, "inner join rows")
  end
  T.raises(function() return e:join(data.load(rp, { target = "t" }), { on = "w" }) end, "no column")
  -- isin of a long list of strings (a hash set) and a short one (a scan)
  for _, size in ipairs { 4, 60 } do
    local set, want = {}, {}
    for i = 1, size do
      local row = (i * 97) % 600 + 1
      if notes[row] then set[#set + 1] = notes[row]; want[notes[row]] = true end
      set[#set + 1] = "absent " .. i
    end
    local m = d.note:isin(set)
    local n = 0
    for i = 1, 600 do
      local w = notes[i] ~= nil and want[notes[i]] == true
      T.eq(m[i], w, "isin of " .. size .. ": row " .. i)
      if w then n = n + 1 end
    end
    T.ok(n > 0)
  end
end)

T.test("models refuse a text column by name; dropping it trains", function()
  local d = data.load(small, { target = "y" })
  T.raises(function() rf.train(d, { trees = 2 }) end, 'column "note" holds free text')
  T.raises(function() data.pca(d, 2) end, 'column "note" holds free text')
  local f = rf.train(d:drop { "note" }, { trees = 5, seed = 1 })
  -- a forest that read the column as a category is not fed the strings by position
  local fc = rf.train(data.load(small, { target = "y", categorical = { "note" } }), { trees = 2, seed = 1 })
  T.raises(function() fc:predict(d) end, 'column "note" holds free text')
  T.ok(f:score(d:drop { "note" }) > 0.4)
end)
