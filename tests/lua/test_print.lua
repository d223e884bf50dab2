-- test_print.lua - every result type prints (tostring) at sizes from 1 row to 10,000 rows and
-- from 1 to 1,000 columns, and aligned tables line up by display width (UTF-8, CJK).

local tmp = T.tmpdir()

-- Display width of a UTF-8 string (CJK and fullwidth count 2), for the alignment checks.
local function dwidth(s)
  local w = 0
  for _, c in utf8.codes(s) do
    if (c >= 0x1100 and c <= 0x115F) or (c >= 0x2E80 and c <= 0xA4CF) or
       (c >= 0xAC00 and c <= 0xD7A3) or (c >= 0xF900 and c <= 0xFAFF) or
       (c >= 0xFF00 and c <= 0xFF60) or (c >= 0xFFE0 and c <= 0xFFE6) or
       (c >= 0x20000 and c <= 0x3FFFD) then
      w = w + 2
    elseif (c >= 0x300 and c <= 0x36F) then
      w = w + 0
    else
      w = w + 1
    end
  end
  return w
end

local function lines(s)
  local t = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do t[#t + 1] = l end
  return t
end

-- The display columns at which the dash runs of line 2 start: the column starts of the table.
local function column_starts(dash)
  local starts, col = {}, 0
  for run, gap in dash:gmatch("(%-+)( *)") do
    starts[#starts + 1] = col
    col = col + #run + #gap
  end
  return starts
end

-- An aligned table's text: a header line, a dash line, then rows; every line fits the
-- columns the dashes mark (no cell spills into the next column), checked in display width.
local function check_table(s, nrows, what)
  T.eq(type(s), "string", what)
  local ls = lines(s)
  T.ok(#ls >= 2, what .. ": a header and a rule")
  local dash = ls[2]
  T.ok(dash:match("^[- ]+$"), what .. ": line 2 is the rule: " .. dash)
  local starts = column_starts(dash)
  local shown = math.min(nrows, 200)
  local body = 0
  for i = 3, #ls do
    if ls[i]:match("^%.%.%. %(%d+ more rows%)$") then break end
    body = body + 1
    T.ok(dwidth(ls[i]) <= #dash, string.format("%s: row %d is wider than the rule:\n%s\n%s",
      what, i - 2, dash, ls[i]))
  end
  T.eq(body, shown, what .. ": rows shown")
  if nrows > 200 then
    T.ok(s:find("... (" .. (nrows - 200) .. " more rows)", 1, true), what .. ": more rows note")
  end
  return ls, starts
end

local function synth(rows, cols, kind, seed)
  return data.synth { rows = rows, features = cols, informative = math.min(cols, 2),
    redundant = 0, clusters_per_class = 1, kind = kind, seed = seed or 1 }
end

local sizes = { { 1, 1 }, { 1, 1000 }, { 15, 4 }, { 100, 40 }, { 10000, 1 }, { 10000, 1000 } }

T.test("Dataset, head, describe, class_counts print at 1..10,000 rows and 1..1,000 columns", function()
  for _, sz in ipairs(sizes) do
    local rows, cols = sz[1], sz[2]
    for _, task in ipairs { "classification", "regression" } do
      local what = string.format("%s %d x %d", task, rows, cols)
      local d = synth(rows, cols, task == "regression" and "regression" or nil)
      local function n_of(n, word) return n .. " " .. word .. (n == 1 and "" or "s") end
      T.ok(tostring(d):find(n_of(rows, "row") .. " x " .. n_of(cols, "feature"), 1, true), what)
      for _, n in ipairs { 1, 15, 250, rows } do
        local h = d:head(n)
        check_table(tostring(h), math.min(n, rows), what .. " head(" .. n .. ")")
      end
      local ds = d:describe()
      local ls = check_table(tostring(ds), cols + 1, what .. " describe")
      -- every column, or (too wide) the first ones, the count hidden and the last
      local h = ls[1]:gsub(" +top$", "")   -- top: only where there are categories
      T.ok(h:find("^column +type +dtype +min +25%% +median +75%% +max +mean +std +missing +distinct$") or
        h:find("^column +type +dtype +min +25%% +median .*%.%.%. %(%d+ more columns%)"), ls[1])
      if task == "classification" then
        check_table(tostring(d:class_counts()), d.classes, what .. " class_counts")
      end
    end
  end
end)

T.test("a table with many classes and long names prints (class_counts of 1,000 classes)", function()
  local X, y = {}, {}
  for i = 1, 2000 do
    X[i] = { i }
    y[i] = string.rep("class_name_", 8) .. (i % 1000)
  end
  local d = data.new { X = X, y = y }
  T.eq(d.classes, 1000)
  local s = tostring(d:class_counts())
  check_table(s, 1000, "class_counts")
  -- long cells are cut to 48 columns with "..."
  T.ok(s:find("class_name_class_name_class_name_class_name_c...", 1, true), s:sub(1, 400))
  T.ok(#tostring(d) > 0)
end)

T.test("UTF-8 and CJK headers align by display width", function()
  local p = tmp .. "/print_cjk.csv"
  T.writefile(p, "名前,長さ,café,x\n1,2.5,3,a\n100000,0.25,3.5,b\n7,8,9,a\n")
  local d = data.load(p, { target = "x" })
  T.eq(d.names[1], "名前")
  local ls, starts = check_table(tostring(d:head()), 3, "head")
  -- every header and row line starts column k at the same display column
  T.eq(#starts, 4)
  local header = ls[1]
  -- "名前" is 4 columns wide: right-aligned numeric column of width 6 ("100000")
  T.eq(starts[2] - starts[1], 8, "first column width 6 + 2: " .. ls[2])
  local function start_of(line, k)
    -- display column of the k-th cell's first character, given the rule's column starts
    local col, pos = 0, 1
    local cps = {}
    for _, c in utf8.codes(line) do cps[#cps + 1] = utf8.char(c) end
    local at = {}
    for i, ch in ipairs(cps) do
      at[i] = col
      col = col + dwidth(ch)
    end
    -- the text in [starts[k], starts[k+1]) must be the k-th cell: check it begins after spaces
    local s = {}
    for i, ch in ipairs(cps) do
      if at[i] >= starts[k] and (not starts[k + 1] or at[i] < starts[k + 1]) then s[#s + 1] = ch end
    end
    return table.concat(s)
  end
  T.eq(start_of(header, 1):match("^%s*(.-)%s*$"), "名前")
  T.eq(start_of(header, 2):match("^%s*(.-)%s*$"), "長さ")
  T.eq(start_of(header, 3):match("^%s*(.-)%s*$"), "café")
  T.eq(start_of(ls[4], 1):match("^%s*(.-)%s*$"), "100000")
  T.eq(start_of(ls[4], 2):match("^%s*(.-)%s*$"), "0.25")
  T.eq(start_of(ls[4], 3):match("^%s*(.-)%s*$"), "3.5")
  T.eq(start_of(ls[4], 4):match("^%s*(.-)%s*$"), "b")
  -- the rule under "長さ" is as wide as the widest cell (4 columns: "長さ" and "0.25")
  T.eq(starts[3] - starts[2], 6)
  local ds = tostring(d:describe())
  check_table(ds, 4, "describe")
  T.ok(ds:find("名前", 1, true))
end)

T.test("a table printed after its metatable was tampered with raises or prints, never crashes", function()
  local h = synth(3, 2):head()
  local mt = getmetatable(h)
  mt.__columns = { {}, 1.5, true }
  T.ok(type(tostring(h)) == "string")
  mt.__columns = "x"
  T.raises(function() return tostring(h) end, "__columns")
  rawset(h, 1, "not a row")
  mt.__columns = { "a" }
  T.ok(type(tostring(h)) == "string")
end)

T.test("forests, predictions, cv, importances print at 1..1,000 features", function()
  for _, cols in ipairs { 1, 40, 1000 } do
    local d = synth(300, cols, nil, 2)
    local f = rf.train(d, { trees = 3, depth = 3, seed = 1 })
    T.ok(#tostring(f) > 0)
    T.ok(#tostring(f:importance()) > 0)
    T.ok(#tostring(f:predict(d)) > 0)
    T.ok(#tostring(f:predict_proba(d)) > 0)
    T.ok(#tostring(f:score(d)) > 0)
    T.ok(#tostring(f:tree(1)) > 0)
    T.ok(#gwb.pretty(f:importance()) > 0)
    f:close()
    T.ok(tostring(f):find("closed"), tostring(f))
  end
  local cv = rf.cv(data.synth { rows = 200, features = 5, seed = 3 }, { trees = 2, depth = 2, folds = 2 })
  T.ok(#tostring(cv) > 0 and #gwb.pretty(cv) > 0)
end)

T.test("matrices, sparse matrices, eigen results and PCA print at 1..10,000 rows", function()
  for _, sz in ipairs { { 1, 1 }, { 1, 1000 }, { 10000, 1 }, { 10000, 20 }, { 300, 300 } } do
    local A = mat.randn(sz[1], sz[2], { seed = 1 })
    T.ok(#tostring(A) > 0)
    T.ok(#tostring(A[1]) > 0)
    A:close()
    T.ok(tostring(A):find("closed"), tostring(A))
  end
  for _, n in ipairs { 10, 200, 10000 } do
    local S = mat.laplacian1d(n)
    T.ok(#tostring(S) > 0)
    local e = eig.solve(mat.randsym(math.min(n, 200), { seed = 1 }), { k = 3 })
    T.ok(#tostring(e) > 0 and #tostring(e.values) > 0 and #gwb.pretty(e) > 0)
  end
  local B = mat.batch(100, 4, { seed = 1 })
  T.ok(#tostring(B) > 0)
  T.ok(#tostring(eig.batched(B)) > 0)
  local p = data.pca(data.synth { rows = 500, features = 60, seed = 1 }, 5)
  T.ok(#tostring(p) > 0 and #gwb.pretty(p) > 0)
end)

T.test("runs() prints with many records", function()
  local R = require "gwb.runs"
  local path = tmp .. "/print_runs.jsonl"
  local f = assert(io.open(path, "w"))
  for i = 1, 3000 do
    f:write(string.format('{"kind":"rf.train","time":"2026-01-01T00:00:%02d","backend":"cpu",' ..
      '"device":"cpu: x","timing":{"total_ms":%d},"metrics":{"oob":0.5},"params":{"trees":%d}}\n',
      i % 60, i, i))
  end
  f:close()
  local saved = R.path
  R.path = function() return path end
  local ok, r = pcall(runs)
  R.path = saved
  T.ok(ok, tostring(r))
  T.eq(#r, 3000)
  T.ok(#tostring(r) > 0)
end)

T.test("splits, folds, bench, gpu and panel results print", function()
  local d = synth(1000, 8)
  local tr, te = d:split(0.8)
  T.ok(#tostring(tr) > 0 and #tostring(te) > 0)
  for _, fold in ipairs(d:kfold(3)) do
    T.ok(#gwb.pretty(fold) > 0)
    T.ok(#tostring(fold.train) > 0 and #tostring(fold.test) > 0)
  end
  T.ok(#gwb.pretty(gwb.bench(function() end, { runs = 3, log = false })) > 0)
  T.ok(#gwb.pretty(gpu.info()) > 0)
  T.ok(#gwb.pretty(panel.status()) > 0)
  T.ok(#tostring(eig.svd(mat.randn(60, 40, { seed = 1 }))) > 0)
  T.ok(#gwb.pretty(eig.svd(mat.randn(60, 40, { seed = 1 }))) > 0)
end)
