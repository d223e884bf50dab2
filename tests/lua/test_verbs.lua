-- test_verbs.lua - the table verbs on a table large enough for their parallel paths (radix
-- passes split into row blocks, group numbering with counts per part of the pool, medians
-- moved per block, filter masks on bytes, a left join through a lookup of unique right keys),
-- each compared with a reference computed here by Lua loops over the rows: stable order with
-- ties, -0 = 0, missing values last (both directions), int64 keys beyond 2^53, categories by
-- label, labels that no row uses (a filtered table keeps its dictionary), and missing keys.

local N = 100000
local tmp = T.tmpdir()
local path = tmp .. "/verbs.csv"

local function isnan(x) return x ~= x end

-- the rows: id, k (40 labels in a shuffled order of first appearance, some missing), k2 (6
-- labels), x (two decimals with ties, negatives, -0.00 and 0.00, missing), n (int64 around
-- 2^53, where doubles cannot tell neighbours apart; missing), v (numbers for the aggregates)
local R = {}
do
  local seed = 12345
  local function rnd(m)   -- a small LCG: the same file on every run
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % m
  end
  local labels = {}
  for i = 1, 40 do labels[i] = string.format("L%02d", (i * 17) % 40) end
  local lines = { "id,k,k2,x,n,v" }
  for i = 1, N do
    local r = { id = i }
    local a = rnd(100)
    if a >= 3 then r.k = labels[1 + rnd(40)] end
    r.k2 = "c" .. rnd(6)
    local b = rnd(1000)
    if b < 10 then r.x = nil
    elseif b < 20 then r.x = -0.0
    elseif b < 30 then r.x = 0.0
    else r.x = (rnd(4001) - 2000) / 100 end
    local c = rnd(50)
    if c ~= 0 then r.n = 9007199254740992 + rnd(64) - 32 end
    if rnd(10) ~= 0 then r.v = (rnd(100000) - 50000) / 1000 end
    R[i] = r
    local xs = r.x == nil and "" or (r.x == 0 and 1 / r.x < 0 and "-0.00") or string.format("%.2f", r.x)
    lines[#lines + 1] = string.format("%d,%s,%s,%s,%s,%s", i, r.k or "", r.k2, xs,
      r.n and string.format("%d", r.n) or "", r.v and string.format("%.3f", r.v) or "")
  end
  T.writefile(path, table.concat(lines, "\n") .. "\n")
end
local d = data.load(path, { target = "id", categorical = { "k", "k2" } })

-- the reference order: stable by the keys (missing last either way)
local function ref_order(rows, keys)
  local idx = {}
  for i = 1, #rows do idx[i] = i end
  table.sort(idx, function(a, b)
    for _, k in ipairs(keys) do
      local name, desc = k:gsub("^%-", "")
      local x, y = rows[a][name], rows[b][name]
      if x == nil and y ~= nil then return false end
      if y == nil and x ~= nil then return true end
      if x ~= nil and x ~= y then
        if desc == 1 then return x > y end
        return x < y
      end
    end
    return a < b
  end)
  return idx
end

local function check_ids(got, rows, want, msg)
  local ids = got.id:totable()
  T.eq(#ids, #want, msg .. ": rows")
  for i = 1, #want do
    if ids[i] ~= rows[want[i]].id then
      T.eq(ids[i], rows[want[i]].id, msg .. ": row " .. i)
      return
    end
  end
end

T.test("sort on the parallel radix path: floats with ties, -0 and missing; desc; int64; two keys", function()
  check_ids(d:sort("x"), R, ref_order(R, { "x" }), "sort x")
  check_ids(d:sort("-x"), R, ref_order(R, { "-x" }), "sort -x")
  check_ids(d:sort("n"), R, ref_order(R, { "n" }), "sort n (int64 beyond 2^53)")
  check_ids(d:sort { "k", "-x" }, R, ref_order(R, { "k", "-x" }), "sort k, -x")
  check_ids(d:sort { "k2", "n", "x" }, R, ref_order(R, { "k2", "n", "x" }), "sort k2, n, x")
  local s = d:sort("x").x:totable()
  for i = 2, #s do
    if not isnan(s[i]) and s[i] < s[i - 1] then T.ok(false, "x not ascending at " .. i) break end
  end
end)

-- the reference aggregates of rows by keys: {key string -> {n, sum, vals}}
local function ref_groups(rows, keys)
  local g, order = {}, {}
  for _, r in ipairs(rows) do
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = r[k] == nil and "\255" or tostring(r[k]) end
    local key = table.concat(parts, "\1")
    local e = g[key]
    if not e then
      e = { n = 0, rows = 0, sum = 0, vals = {}, key = key }
      g[key] = e
      order[#order + 1] = e
    end
    e.rows = e.rows + 1
    if r.v ~= nil then
      e.n = e.n + 1
      e.sum = e.sum + r.v
      e.vals[#e.vals + 1] = r.v
    end
  end
  table.sort(order, function(a, b) return a.key < b.key end)
  for _, e in ipairs(order) do
    table.sort(e.vals)
    local m = #e.vals
    e.median = m == 0 and 0 / 0 or (m % 2 == 1 and e.vals[(m + 1) // 2] or (e.vals[m // 2] + e.vals[m // 2 + 1]) / 2)
  end
  return order
end

local function check_agg(t, ref, msg)
  T.eq(t.rows, #ref, msg .. ": groups")
  local n, s, md, c = t.nr:totable(), t.s:totable(), t.md:totable(), t.c:totable()
  for i, e in ipairs(ref) do
    T.eq(n[i], e.rows, msg .. ": count() of group " .. i)
    T.eq(c[i], e.n, msg .. ": count(v) of group " .. i)
    T.near(s[i], e.sum, 1e-9 * math.max(1, math.abs(e.sum)), msg .. ": sum of group " .. i)
    if isnan(e.median) then T.ok(isnan(md[i]), msg .. ": median of group " .. i .. " is NaN")
    else T.near(md[i], e.median, 1e-12 * math.max(1, math.abs(e.median)), msg .. ": median of group " .. i) end
  end
end

local AGG = { nr = "count()", c = "count(v)", s = "sum(v)", md = "median(v)" }

T.test("group_by on category keys numbered directly: sums, counts and medians match Lua loops", function()
  -- labels are named so that label order is the reference's string order; missing last
  local g1 = d:group_by("k"):agg(AGG)
  check_agg(g1, ref_groups(R, { "k" }), "k")
  local kk = g1.k:totable()
  T.ok(isnan(kk[g1.rows]), "the missing key's group comes last")
  T.eq(kk[g1.rows - 1], "L39")
  check_agg(d:group_by { "k", "k2" }:agg(AGG), ref_groups(R, { "k", "k2" }), "k, k2")
  check_agg(d:group_by { "k2", "k" }:agg(AGG), ref_groups(R, { "k2", "k" }), "k2, k")
  -- a filtered table keeps all 40 labels, some now unused: groups are only those that occur
  local f = d:filter("k != 'L05' & k != 'L00' & k2 != 'c0'")
  local FR = {}
  for _, r in ipairs(R) do
    if r.k ~= "L05" and r.k ~= "L00" and r.k2 ~= "c0" then FR[#FR + 1] = r end
  end
  T.eq(f.rows, #FR, "filter rows")
  check_agg(f:group_by("k"):agg(AGG), ref_groups(FR, { "k" }), "filtered k")
  check_agg(f:group_by { "k", "k2" }:agg(AGG), ref_groups(FR, { "k", "k2" }), "filtered k, k2")
  -- numbers as keys (the general path) agree as well
  check_agg(d:group_by { "k2", "n" }:agg(AGG), ref_groups(R, { "k2", "n" }), "k2, n")
end)

T.test("filter masks on bytes: comparisons with NaN, !=, ~, | against Lua loops", function()
  local cases = {
    { "x > 1.5 & k2 == 'c3'", function(r) return r.x ~= nil and r.x > 1.5 and r.k2 == "c3" end },
    { "x != 0", function(r) return not (r.x ~= nil and r.x == 0) end },
    { "~(x <= -3) | k == 'L07'", function(r) return not (r.x ~= nil and r.x <= -3) or r.k == "L07" end },
    { "v >= 0 & x < 0 & k2 != 'c1'", function(r) return r.v ~= nil and r.v >= 0 and r.x ~= nil and r.x < 0 and r.k2 ~= "c1" end },
    { "x == 0", function(r) return r.x ~= nil and r.x == 0 end },
  }
  for _, c in ipairs(cases) do
    local want = {}
    for i, r in ipairs(R) do if c[2](r) then want[#want + 1] = i end end
    check_ids(d:filter(c[1]), R, want, "filter " .. c[1])
  end
end)

T.test("a left join on unique right keys (a lookup) and on repeated ones match Lua loops", function()
  local labels, seen = {}, {}
  for _, r in ipairs(R) do
    if r.k and not seen[r.k] then seen[r.k] = true; labels[#labels + 1] = r.k end
  end
  table.sort(labels)
  -- right table: every other label once (so some left rows find none), plus one absent label
  local rl, w = { "k,w" }, {}
  for i = 1, #labels, 2 do
    rl[#rl + 1] = labels[i] .. "," .. i
    w[labels[i]] = i
  end
  rl[#rl + 1] = "ZZZ,999"
  for i = 1, 70 do rl[#rl + 1] = "Y" .. i .. "," .. i end   -- (many labels: still a category)
  local rp = tmp .. "/right.csv"
  T.writefile(rp, table.concat(rl, "\n") .. "\n")
  local r = data.load(rp, { target = "w", categorical = { "k" } })
  local j = d:join(r, { on = "k", how = "left" })
  T.eq(j.rows, N)
  local ids, jw = j.id:totable(), j.w:totable()
  for i = 1, N do
    local want = R[i].k and w[R[i].k]
    if ids[i] ~= i or (want == nil and not isnan(jw[i])) or (want ~= nil and jw[i] ~= want) then
      T.ok(false, string.format("lookup join row %d: id %s w %s, want id %d w %s", i, ids[i], jw[i], i, want))
      break
    end
  end
  -- the inner join (not a lookup) keeps only the rows that found one
  local inner = d:join(r, { on = "k" })
  local cnt = 0
  for i = 1, N do if R[i].k and w[R[i].k] then cnt = cnt + 1 end end
  T.eq(inner.rows, cnt, "inner join rows")
  -- a repeated right key: every match, left order kept
  rl[#rl + 1] = labels[1] .. ",-1"
  T.writefile(rp, table.concat(rl, "\n") .. "\n")
  local r2 = data.load(rp, { target = "w", categorical = { "k" } })
  local j2 = d:join(r2, { on = "k", how = "left" })
  local extra = 0
  for i = 1, N do if R[i].k == labels[1] then extra = extra + 1 end end
  T.eq(j2.rows, N + extra, "left join with a repeated right key")
  local ids2, w2 = j2.id:totable(), j2.w:totable()
  local p = 1
  for i = 1, N do
    local want = R[i].k and w[R[i].k]
    if ids2[p] ~= i then T.eq(ids2[p], i, "repeated-key join row " .. p) break end
    if R[i].k == labels[1] then
      T.eq(w2[p], want)
      T.eq(ids2[p + 1], i)
      T.eq(w2[p + 1], -1)
      p = p + 2
    else
      p = p + 1
    end
  end
  -- numbers as the key: the lookup through the map
  local nl = { "n,z" }
  local nz = {}
  for i = 0, 63, 3 do
    local v = 9007199254740992 + i - 32
    nl[#nl + 1] = string.format("%d,%d", v, i)
    nz[v] = i
  end
  local np = tmp .. "/right_n.csv"
  T.writefile(np, table.concat(nl, "\n") .. "\n")
  local rn = data.load(np, { target = "z" })
  local jn = d:join(rn, { on = "n", how = "left" })
  T.eq(jn.rows, N)
  local zz = jn.z:totable()
  for i = 1, N do
    local want = R[i].n and nz[R[i].n]
    if (want == nil and not isnan(zz[i])) or (want ~= nil and zz[i] ~= want) then
      T.eq(zz[i], want, "int64 lookup join row " .. i)
      break
    end
  end
end)

T.test("isin with long lists (a hash set) and short ones (a scan) match Lua loops", function()
  local function check(col, set, want_of, msg)
    local m = d[col]:isin(set)
    local got = d:filter(m).id:totable()
    local want = {}
    for i, r in ipairs(R) do if want_of(r) then want[#want + 1] = i end end
    T.eq(#got, #want, msg .. ": rows")
    for i = 1, #want do
      if got[i] ~= want[i] then T.eq(got[i], want[i], msg .. ": row " .. i) break end
    end
  end
  for _, size in ipairs { 5, 40 } do
    local xs, xset, ns, nset, ks, kset = {}, {}, {}, {}, {}, {}
    for i = 1, size do
      local x = (i * 37 % 4001 - 2000) / 100
      xs[#xs + 1] = x; xset[x] = true
      local n = 9007199254740992 + i * 3 - 32
      ns[#ns + 1] = n; nset[n] = true
      local k = string.format("L%02d", i * 7 % 40)
      ks[#ks + 1] = k; kset[k] = true
    end
    xs[#xs + 1] = -0.0   -- -0 finds the zeros of either sign; NaN finds nothing
    xs[#xs + 1] = 0 / 0
    check("x", xs, function(r) return r.x ~= nil and (xset[r.x] or r.x == 0) end, "x isin " .. size)
    check("n", ns, function(r) return r.n ~= nil and nset[r.n] end, "int64 isin " .. size)
    check("k", ks, function(r) return r.k ~= nil and kset[r.k] end, "category isin " .. size)
  end
end)

T.test("a taken float64 column's float32 copy is the source's (midpoint decimals included)", function()
  -- 1 + 2^-24 lies halfway between two floats: a decimal just above it rounds up as a float,
  -- though its double is the midpoint itself and would round to even
  local p = tmp .. "/mid.csv"
  T.writefile(p, "id,x\n1,1.0000000596046447753906251\n2,2.5\n3,1.0000000596046447753906249\n"
    .. "4,-1.0000000596046447753906251\n5,\n6,1e-40\n7,3e38\n")
  local m = data.load(p, { target = "id" })
  local function same_x32(t, src, msg)
    local x, ids, sx = t:column("x"), t:column("id"), src:column("x")
    local sids = src:column("id")
    local at = {}
    for i, id in ipairs(sids) do at[id] = i end
    for i = 1, #ids do
      local a, b = x[i], sx[at[ids[i]]]
      if not (a == b or (a ~= a and b ~= b)) then
        T.eq(a, b, msg .. ": float32 of id " .. ids[i])
        return
      end
    end
  end
  T.eq(m:column("x")[1], 1.0000001192092896, "the decimal's float, not the double's")
  same_x32(m:sort("-x"), m, "sort")
  same_x32(m:filter("x < 2 | isnan(x)"), m, "filter")
  same_x32(d:sort("x"), d, "sort of the large table")
  same_x32(d:filter("k2 == 'c1'"), d, "filter of the large table")
end)
