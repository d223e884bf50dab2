-- test_integers.lua - integer options checked as 64-bit values before they are narrowed (the
-- error prints the value as given), size products checked for overflow (data.synth{rows =
-- 2^62} overflowed a heap buffer), and a .gwbd of 65,537 classes loading back (issue 26).

T.test("integer options above 2^32 are refused with the value as given, never cut to 32 bits", function()
  T.raises(function() data.synth { rows = 10, features = 2 ^ 32 + 5 } end, "got 4294967301")
  T.raises(function() data.synth { rows = 10, classes = 2 ^ 32 + 2 } end, "'classes'")
  local d = data.synth { rows = 30, features = 4, seed = 1 }
  T.raises(function() rf.train(d, { trees = 2 ^ 32 + 1, progress = false }) end, "got 4294967297")
  T.raises(function() rf.train(d, { depth = -2 ^ 40, progress = false }) end, "got -1099511627776")
  T.raises(function() rf.cv(d, { folds = 2 ^ 33 + 3, progress = false }) end, "got 8589934595")
  T.raises(function() d:transpose { reps = 2 ^ 32 + 1 } end, "got 4294967297")
  local f = rf.train(d, { trees = 2, progress = false, backend = "cpu" })
  T.raises(function() f:importance { method = "permutation", data = d, repeats = 2 ^ 32 + 1 } end,
    "got 4294967297")
end)

T.test("threads: 0 (all cores) or more; a negative count is refused with the range", function()
  local d = data.synth { rows = 30, features = 4, seed = 1 }
  T.raises(function() rf.train(d, { threads = -3, progress = false }) end, "got -3")
  T.raises(function() rf.train(d, { threads = 2 ^ 32, progress = false }) end, "got 4294967296")
  T.raises(function() data.synth { rows = 10, threads = -1 } end, "'threads' must be in 0..")
  T.eq(rf.train(d, { threads = 1, trees = 2, progress = false }).trees, 2)
end)

T.test("data.synth with rows = 2^62: refused (the shuffle's size wrapped and overflowed)", function()
  T.raises(function() data.synth { rows = 2 ^ 62 } end, "does not fit in memory")
  T.raises(function() data.synth { rows = 2 ^ 62, features = 1, informative = 1, redundant = 0,
    classes = 2 } end, "4611686018427387904")
  T.raises(function() data.synth { rows = math.maxinteger, kind = "regression" } end, "does not fit")
  T.eq(data.synth { rows = 5, seed = 1 }.rows, 5)
end)

T.test("a target of 65,537 classes saves as .gwbd and loads back", function()
  local lines = { "x,y" }
  for i = 1, 65537 do lines[#lines + 1] = i .. ",c" .. i end
  local csv = T.tmpdir() .. "/gwb_classes65537.csv"
  T.writefile(csv, table.concat(lines, "\n") .. "\n")
  local d = data.load(csv, { target = "y" })
  T.eq(d.classes, 65537)
  local path = T.tmpdir() .. "/gwb_classes65537.gwbd"
  d:save(path)
  local e = data.load(path)
  T.eq(e.classes, 65537)
  T.eq(e.rows, 65537)
  for _, i in ipairs { 1, 2, 40000, 65537 } do T.eq(e.labels[i], d.labels[i]) end
  T.eq(e:class_counts()["c40000"] or e:class_counts()[40000] or 1, 1)
  os.remove(csv)
  os.remove(path)
end)
