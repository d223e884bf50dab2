-- test_rf_levels.lua - a forest scores new data's categorical levels and classes by label, not
-- by code position: other orders of first appearance, subsets and supersets of the levels, an
-- unseen level (missing, counted; an error with strict = true), text where the model had
-- numbers and the reverse, a file saved before the levels were recorded (version 2), and
-- pca:transform.

local Q = { progress = false, backend = "cpu" }
local function tmp(name) return T.tmpdir() .. "/gwb_levels_" .. name end
local function csv(name, text)
  local p = tmp(name)
  T.writefile(p, text)
  return p
end

-- a forest that learns y = A, B, C for color a, b, c, perfectly (the reader codes levels and
-- classes in sorted order, so a file holding only b and c codes b as a's 0 and c as b's 1)
local function ab_forest()
  local rows = { "color,y" }
  for i = 1, 21 do rows[#rows + 1] = ({ "a,A", "b,B", "c,C" })[i % 3 + 1] end
  local d = data.load(csv("ab.csv", table.concat(rows, "\n") .. "\n"), { target = "y" })
  return rf.train(d, T.merge(Q, { trees = 5, bootstrap = false, seed = 1 }))
end

T.test("two rows holding a subset of the levels: accuracy 1 (was 0), through save and load", function()
  local f = ab_forest()
  local path = tmp("ab.gwbf")
  f:save(path)
  local g = rf.load(path)
  local test = data.load(csv("ba.csv", "color,y\nc,C\nb,B\n"), { target = "y" })
  for _, m in ipairs { f, g } do
    T.eq(m:score(test), 1.0)
    local p = m:predict(test)
    T.eq(p[1], "C")
    T.eq(p[2], "B")
    local pr = m:predict_proba(test)
    T.near(pr[1][3], 1, 1e-6)   -- class C is the forest's third
    T.near(pr[2][2], 1, 1e-6)
  end
  os.remove(path)
end)

T.test("a subset of the levels: the one level present keeps its meaning", function()
  local f = ab_forest()
  local test = data.load(csv("b.csv", "color,y\nc,C\nc,C\n"), { target = "y" })
  T.eq(f:score(test), 1.0)
  T.eq(f:predict(test)[1], "C")
end)

T.test("an unseen level: missing, counted in the note and the result; strict = true refuses", function()
  local f = ab_forest()
  local test = data.load(csv("c.csv", "color,y\npurple,A\na,A\npurple,B\n"), { target = "y" })
  local p, note = f:predict(test)
  T.eq(#p, 3)
  T.eq(p[2], "A")
  T.eq(p.unseen, 2)
  T.ok(note and note:find("2 values of 1 level", 1, true), tostring(note))
  T.ok(note:find("purple", 1, true) and note:find("color", 1, true), note)
  local pr, n2 = f:predict_proba(test)
  T.eq(pr.unseen, 2)
  T.ok(n2:find("never saw", 1, true))
  local s, n3, unseen = f:score(test)
  T.ok(s >= 0 and s <= 1)
  T.ok(n3:find("missing", 1, true))
  T.eq(unseen, 2)
  -- scored as missing: the same as the row with the value left out
  local miss = data.load(csv("cm.csv", "color,y\n,A\na,A\n,B\n"), { target = "y" })
  local pm = f:predict_proba(miss)
  T.eq(pr[1][1], pm[1][1])
  T.eq(pr[3][2], pm[3][2])
  T.raises(function() f:predict(test, { strict = true }) end, "never saw")
  T.raises(function() f:score(test, { strict = true }) end, "'purple' (row 1)")
  T.raises(function() f:predict_proba(test, { strict = true }) end, "column 'color'")
  -- the known levels alone pass strict
  T.eq(#f:predict(data.load(csv("a.csv", "color,y\na,A\n"), { target = "y" }), { strict = true }), 1)
end)

T.test("text where the forest has numbers, and numbers where it has text: errors naming the column", function()
  local rows = { "x,y" }
  for i = 1, 20 do rows[#rows + 1] = (i % 2 == 1) and "1.5,A" or "7,B" end
  local d = data.load(csv("num.csv", table.concat(rows, "\n") .. "\n"), { target = "y" })
  local f = rf.train(d, T.merge(Q, { trees = 3, seed = 1 }))
  local bad = data.load(csv("numtext.csv", "x,y\nfoo,A\n7,B\n"), { target = "y" })
  T.raises(function() f:predict(bad) end, "column 'x' holds text (e.g. 'foo'")
  T.raises(function() f:score(bad) end, "trained on numbers")
  local g = ab_forest()
  local nums = data.load(csv("textnum.csv", "color,y\n3.25,A\n"), { target = "y" })
  T.raises(function() g:predict(nums) end, "column 'color' holds numbers (e.g. 3.25")
  T.raises(function() g:predict_proba(nums) end, "'a', 'b'")
  -- a column with every value missing is neither
  local empty = data.load(csv("allmiss.csv", "color,y\n,A\n,B\n"), { target = "y" })
  T.eq(#g:predict(empty), 2)
end)

T.test("the target's classes in another order score correctly", function()
  local f = ab_forest()
  -- classes B and C only: the file codes them 0 and 1, the forest 1 and 2
  local test = data.load(csv("cls.csv", "color,y\nb,B\nc,C\nc,C\n"), { target = "y" })
  T.eq(test.labels[1], "B")
  T.eq(f:score(test), 1.0)
  local p = f:predict(test, { codes = true })
  T.eq(p[1], 2)
  T.eq(p[2], 3)
end)

-- FNV-1a 64 (the forest file's checksum), on Lua's wrapping integers
local function fnv1a(s)
  local h = -3750763034362895579   -- 0xcbf29ce484222325
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

T.test("a version-2 file (no levels recorded) loads, scores by code as before, and says so", function()
  local f = ab_forest()
  local path, old = tmp("v3.gwbf"), tmp("v2.gwbf")
  f:save(path)
  local s = T.readfile(path)
  T.eq(string.unpack("<I4", s, 11), 3)
  local payload = s:sub(23, #s - 8)
  local block = string.pack("<I4I4", 3, 1) .. "a" .. string.pack("<I4", 1) .. "b" ..
    string.pack("<I4", 1) .. "c"
  local at = payload:find(block, 1, true)
  T.ok(at, "the level block is in the payload")
  payload = payload:sub(1, at - 1) .. payload:sub(at + #block)
  T.writefile(old, s:sub(1, 10) .. string.pack("<I4I8", 2, #payload) .. payload ..
    string.pack("<i8", fnv1a(payload)))
  local g = rf.load(old)
  local test = data.load(csv("ba2.csv", "color,y\nb,B\nc,C\n"), { target = "y" })
  local acc, note = g:score(test)
  T.eq(acc, 0.0)   -- by code, as version 2 did: the note is the warning
  T.ok(note and note:find("does not record its categorical levels", 1, true), tostring(note))
  T.ok(note:find("version 2", 1, true))
  local same = data.load(csv("ab2.csv", "color,y\na,A\nb,B\nc,C\n"), { target = "y" })
  T.eq(g:score(same), 1.0)
  os.remove(path)
  os.remove(old)
end)

-- ---- the property: any order, subset or superset of the levels scores as the training coding

local function lcg(seed)
  local s = seed
  return function(n)
    s = (s * 6364136223846793005 + 1442695040888963407)
    return ((s >> 33) % n) + 1
  end
end

-- XXH64 with seed 0 (the .gwbd file's checksums), on Lua's wrapping integers
local P1, P2, P3, P4, P5 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
  0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
local function rotl(x, r) return (x << r) | (x >> (64 - r)) end
local function xround(acc, v) return rotl(acc + v * P2, 31) * P1 end
local function xmerge(h, v) return (h ~ xround(0, v)) * P1 + P4 end
local function xxh64(s)
  local n, i, h = #s, 1, nil
  if n >= 32 then
    local v1, v2, v3, v4 = P1 + P2, P2, 0, -P1
    while i + 31 <= n do
      local a, b, c, d = string.unpack("<i8i8i8i8", s, i)
      v1, v2, v3, v4 = xround(v1, a), xround(v2, b), xround(v3, c), xround(v4, d)
      i = i + 32
    end
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
    h = xmerge(xmerge(xmerge(xmerge(h, v1), v2), v3), v4)
  else
    h = P5
  end
  h = h + n
  while i + 7 <= n do
    h = rotl(h ~ xround(0, (string.unpack("<i8", s, i))), 27) * P1 + P4
    i = i + 8
  end
  if i + 3 <= n then
    h = rotl(h ~ ((string.unpack("<I4", s, i)) * P1), 23) * P2 + P3
    i = i + 4
  end
  while i <= n do
    h = rotl(h ~ (s:byte(i) * P5), 11) * P1
    i = i + 1
  end
  h = (h ~ (h >> 33)) * P2
  h = (h ~ (h >> 29)) * P3
  return h ~ (h >> 32)
end

-- Rewrite the .gwbd at path with each text feature's levels listed in a random other order and
-- its codes changed to match: the same values, coded otherwise. No reader makes such a Dataset
-- (CSV, data.new and the verbs list levels sorted), so a permutation of the coding itself is
-- only reachable this way. Layout: dsio.c's header comment.
local function permute_levels(path, rnd)
  local s = T.readfile(path)
  local rows, F, _, classes = string.unpack("<I8I4I4I4", s, 17)
  local plen = string.unpack("<I8", s, 41)
  local p = s:sub(65, 64 + plen)
  T.eq(string.unpack("<i8", s, 49), xxh64(p), "the payload's XXH64 as dsio.c computes it")
  T.eq(string.unpack("<i8", s, 57), xxh64(s:sub(1, 56)), "the header's XXH64")
  local pos = 1
  local function str()
    local v, nxt = string.unpack("<s4", p, pos)
    pos = nxt
    return v
  end
  str()                                  -- the target's name
  for _ = 1, F + classes do str() end    -- feature names, class names
  local counts = {}
  for j = 1, F do counts[j], pos = string.unpack("<I4", p, pos) end
  local out, newcode = { p:sub(1, pos - 1) }, {}
  for j = 1, F do
    if counts[j] > 0 then
      local lv, order = {}, {}
      for k = 1, counts[j] do lv[k], order[k] = str(), k end
      for k = #lv, 2, -1 do
        local r = rnd(k)
        order[k], order[r] = order[r], order[k]
      end
      newcode[j] = {}
      for at, old in ipairs(order) do
        newcode[j][old] = at - 1
        out[#out + 1] = string.pack("<s4", lv[old])
      end
    end
  end
  for j = 1, F do
    for i = 0, rows - 1 do
      local v = string.unpack("<f", p, pos + ((j - 1) * rows + i) * 4)
      if newcode[j] and v == v then v = newcode[j][math.tointeger(v) + 1] end
      out[#out + 1] = string.pack("<f", v)
    end
  end
  out[#out + 1] = p:sub(pos + F * rows * 4)
  local np = table.concat(out)
  local hdr = s:sub(1, 48) .. string.pack("<i8", xxh64(np))
  T.writefile(path, hdr .. string.pack("<i8", xxh64(hdr)) .. np)
end

T.test("property: permutations, subsets and supersets of the levels predict as the training coding", function()
  local rnd = lcg(12345)
  local pools = {
    { "red", "green", "blue", "cyan", "magenta", "yellow" },
    { "s", "m", "l", "xl" },
    { "north", "south", "east", "west", "up", "down", "in" },
  }
  local names = { "c1", "c2", "num", "c3" }
  local train_rows = {}
  for i = 1, 300 do
    local a, b, c = rnd(#pools[1]), rnd(#pools[2]), rnd(#pools[3])
    local x = rnd(1000) / 100
    local cls = ((a + 2 * b + c + (x > 5 and 1 or 0)) % 3) + 1
    if rnd(10) == 1 then cls = rnd(3) end
    train_rows[i] = { pools[1][a], pools[2][b], string.format("%.2f", x), pools[3][c], "k" .. cls }
  end
  local function text(rows, order)
    local out = { table.concat(order and { names[order[1]], names[order[2]], names[order[3]],
      names[order[4]], "y" } or { "c1", "c2", "num", "c3", "y" }, ",") }
    for _, r in ipairs(rows) do
      local v = order and { r[order[1]], r[order[2]], r[order[3]], r[order[4]], r[5] } or r
      out[#out + 1] = table.concat(v, ",")
    end
    return table.concat(out, "\n") .. "\n"
  end
  local train_text = text(train_rows)
  local d = data.load(csv("prop_train.csv", train_text), { target = "y" })
  local f = rf.train(d, T.merge(Q, { trees = 15, seed = 7, max_features = 2 }))
  local path = tmp("prop.gwbf")
  f:save(path)
  local g = rf.load(path)
  local seen = { permuted = 0 }
  for trial = 1, 8 do
    -- pick rows, make some values unseen levels (a superset), shuffle them
    local n = 3 + rnd(60)
    local rows, expect, unseen = {}, {}, 0
    for i = 1, n do
      local r = { table.unpack(train_rows[rnd(#train_rows)]) }
      local e = { table.unpack(r) }
      if trial % 2 == 0 and rnd(4) == 1 then
        local col = ({ 1, 2, 4 })[rnd(3)]
        r[col] = "new" .. rnd(3)
        e[col] = ""   -- the training coding's missing value
        unseen = unseen + 1
      end
      rows[i], expect[i] = r, e
    end
    for i = n, 2, -1 do   -- another order of first appearance
      local j = rnd(i)
      rows[i], rows[j] = rows[j], rows[i]
      expect[i], expect[j] = expect[j], expect[i]
    end
    -- the scoring file, columns also in another order
    local order = ({ { 4, 3, 2, 1 }, { 2, 1, 4, 3 }, { 1, 2, 3, 4 }, { 3, 4, 1, 2 } })[rnd(4)]
    local test = data.load(csv("prop_test.csv", text(rows, order)), { target = "y" })
    -- the same rows in the training file's coding: the training rows first, then these
    local both = data.load(csv("prop_ref.csv", train_text .. text(expect):gsub("^[^\n]*\n", "")),
      { target = "y" })
    local idx = {}
    for i = 1, n do idx[i] = #train_rows + i end
    local ref = both:take(idx)
    -- what this trial's file is, level by level, against the training data's coding
    for _, name in ipairs { "c1", "c2", "c3" } do
      local _, tl = test:column(name)
      local _, dl = d:column(name)
      local known = {}
      for _, v in ipairs(dl) do known[v] = true end
      local new, same = false, #tl == #dl
      for k, v in ipairs(tl) do
        new = new or not known[v]
        same = same and tl[k] == dl[k]
      end
      seen.superset = seen.superset or new
      seen.subset = seen.subset or (#tl < #dl and not new)
      seen.shifted = seen.shifted or not same
    end
    -- the same file with its levels listed in another order (codes permuted to match)
    local ppath = tmp("prop_perm.gwbd")
    test:save(ppath)
    permute_levels(ppath, rnd)
    local perm = data.load(ppath)
    os.remove(ppath)
    for _, name in ipairs { "c1", "c2", "c3" } do
      local tv, tl = test:column(name)
      local pv, pl = perm:column(name)
      local a, b = table.concat(tl, ","), table.concat(pl, ",")
      if a ~= b then seen.permuted = seen.permuted + 1 end
      for i = 1, n do   -- every row keeps its label (d:column gives 1-based codes)
        T.eq(pv[i] == pv[i] and pl[pv[i]] or "", tv[i] == tv[i] and tl[tv[i]] or "",
          name .. " row " .. i)
      end
      table.sort(pl)
      T.eq(table.concat(pl, ","), a, "the same levels")
    end
    for _, m in ipairs { f, g } do
      local want = m:predict(ref, { codes = true })
      local wpr = m:predict_proba(ref)
      for _, t in ipairs { test, perm } do
        local p, note = m:predict(t, { codes = true })
        local pr = m:predict_proba(t)
        for i = 1, n do
          T.eq(p[i], want[i], "trial " .. trial .. " row " .. i)
          for k = 1, 3 do T.eq(pr[i][k], wpr[i][k], "trial " .. trial .. " row " .. i .. " p" .. k) end
        end
        T.eq(p.unseen, unseen > 0 and unseen or nil, "trial " .. trial)
        if unseen > 0 then T.ok(note and note:find(unseen .. " value", 1, true), tostring(note)) end
        T.eq(m:score(t), m:score(ref))
      end
    end
  end
  -- the trials covered every kind of file: a subset, a superset, codes shifted from the
  -- training coding, and level lists permuted
  T.ok(seen.subset and seen.superset and seen.shifted, "kinds of files met: " ..
    tostring(seen.subset) .. " " .. tostring(seen.superset) .. " " .. tostring(seen.shifted))
  T.ok(seen.permuted >= 8, "permuted level lists: " .. seen.permuted)
  os.remove(path)
end)

T.test("pca:transform matches text levels by label too", function()
  local rows = { "color,x,y" }
  for i = 1, 30 do rows[#rows + 1] = ({ "a", "b", "c" })[i % 3 + 1] .. "," .. (i % 7) .. ",1" end
  local d = data.load(csv("pca.csv", table.concat(rows, "\n") .. "\n"), { target = "y" })
  local p = data.pca(d, 2)
  T.eq(p.levels[1][3], "c")
  -- b and c only: the file codes them 0 and 1, the PCA 1 and 2
  local sub = data.load(csv("pcasub.csv", "color,x,y\nc,3,1\nb,5,1\n"), { target = "y" })
  -- the same rows in the training file's coding: after its rows, in one file
  local ref = data.load(csv("pcaref.csv", table.concat(rows, "\n") .. "\nc,3,1\nb,5,1\n"),
    { target = "y" }):take { 31, 32 }
  local s, r = p:transform(sub), p:transform(ref)
  for i = 1, 2 do for k = 1, 2 do T.near(s[i][k], r[i][k], 1e-12) end end
  T.raises(function() p:transform(data.load(csv("pcanum.csv", "color,x,y\n2.5,3,1\n"), { target = "y" })) end,
    "column 'color' holds numbers")
end)

T.test("f:grow refuses data whose text levels are coded otherwise than the training data's", function()
  local f = ab_forest()
  local rows = { "color,y" }
  for i = 1, 21 do rows[#rows + 1] = ({ "b,A", "c,B", "b,C" })[i % 3 + 1] end   -- same shape
  local other = data.load(csv("grow.csv", table.concat(rows, "\n") .. "\n"), { target = "y" })
  T.raises(function() f:grow(2, other, { progress = false }) end, "code their levels otherwise")
end)

T.test("GPU: a GPU-resident d is scored by label too, and Predictions close twice", function()
  T.need_gpu()
  local f = ab_forest()
  -- the training levels as they are: no recoding, the prediction runs on the device
  local same = data.load(csv("gpu_same.csv", "color,y\na,A\nb,B\nc,C\n"), { target = "y" })
  same:to("gpu")
  local p = f:predict(same)
  T.eq(p[1], "A")
  T.eq(p[3], "C")
  if type(p) == "userdata" then
    p:close()
    T.ok(pcall(function() p:close() end), "Predictions: a second close does nothing")
    T.raises(function() return p[1] end, "closed")
  end
  -- a subset in another order: recoded (on the host copy), the same labels as the CPU's
  local sub = data.load(csv("gpu_sub.csv", "color,y\nc,C\nb,B\n"), { target = "y" })
  sub:to("gpu")
  local q = f:predict(sub)
  T.eq(q[1], "C")
  T.eq(q[2], "B")
  T.eq(f:score(sub), 1.0)
  local pr = f:predict_proba(sub)
  T.near(pr[1][3], 1, 1e-6)
end)
