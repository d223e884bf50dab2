-- test_metrics.lua - the metrics module against scikit-learn's values on committed fixtures
-- (tests/fixtures/metrics/*.lua, made by scripts/gen-metric-fixtures.py: the bundled datasets
-- and synthetic cases with ties, extra and missing classes, a single row), to 1e-12; and its
-- errors on bad input.
local TOL = 1e-12

local function fixtures(name) return dofile("tests/fixtures/metrics/" .. name .. ".lua") end

local function close(got, want, what)
  if want ~= want then T.ok(got ~= got, what .. ": expected nan, got " .. tostring(got)) return end
  if want == math.huge or want == -math.huge then T.eq(got, want, what) return end
  T.near(got, want, TOL * math.max(1, math.abs(want)), what)
end

local function close_list(got, want, what)
  T.eq(#got, #want, what .. ": length")
  for i = 1, #want do close(got[i], want[i], what .. "[" .. i .. "]") end
end

local function has(list, x) for _, v in ipairs(list or {}) do if v == x then return true end end end

local function check_class(c)
  local e, t, p = c.expect, c.truth, c.pred
  local what = c.name
  close(metrics.accuracy(t, p), e.accuracy, what .. " accuracy")
  close(metrics.balanced_accuracy(t, p), e.balanced_accuracy, what .. " balanced_accuracy")
  for _, f in ipairs { "precision", "recall", "f1" } do
    for _, avg in ipairs { "macro", "weighted", "micro" } do
      close(metrics[f](t, p, { average = avg }), e[f .. "_" .. avg], what .. " " .. f .. " " .. avg)
    end
    local per = metrics[f](t, p, { average = "none" })
    for i, l in ipairs(e.labels) do close(per[l], e[f .. "_none"][i], what .. " " .. f .. "[" .. l .. "]") end
  end
  local cm = metrics.confusion(t, p)
  T.eq(#cm.labels, #e.labels, what .. " labels")
  for i, l in ipairs(e.labels) do
    T.eq(tostring(cm.labels[i]), tostring(l), what .. " label order")
    for j = 1, #e.labels do T.eq(cm.counts[i][j], e.confusion[i][j], what .. " confusion") end
  end
  local _, note = metrics.accuracy(t, p)
  if e.extra > 0 then
    T.ok(note and note:find(tostring(e.extra) .. " prediction", 1, true),
      what .. ": the note counts the labels the truth never has: " .. tostring(note))
  else
    T.eq(note, nil, what .. " no note")
  end
end

local function check_curve(got, want, xs, what)
  for _, k in ipairs(xs) do close_list(got[k], want[k], what .. " " .. k) end
end

local function check_score(c)
  local e, t, s, what = c.expect, c.truth, c.scores, c.name
  local o = c.labels and { labels = c.labels } or {}
  if has(c.errors, "roc_auc") then
    T.raises(function() metrics.roc_auc(t, s, o) end, "roc_auc", what)
  end
  if e.roc_auc then close(metrics.roc_auc(t, s, o), e.roc_auc, what .. " roc_auc") end
  if e.pr_auc then close(metrics.pr_auc(t, s, o), e.pr_auc, what .. " pr_auc") end
  if e.roc_curve then
    local rc = metrics.roc_curve(t, s, o)
    check_curve(rc, e.roc_curve, { "fpr", "tpr", "thresholds" }, what .. " roc_curve")
    close(rc.auc, e.roc_auc, what .. " roc_curve.auc")
    local all = metrics.roc_curve(t, s, T.merge(o, { drop_intermediate = false }))
    check_curve(all, e.roc_curve_all, { "fpr", "tpr", "thresholds" }, what .. " roc_curve (all)")
    T.ok(#tostring(rc) > 0, "a curve prints")
  end
  if e.pr_curve then
    local pc = metrics.pr_curve(t, s, o)
    check_curve(pc, e.pr_curve, { "precision", "recall", "thresholds" }, what .. " pr_curve")
    close(pc.ap, e.pr_auc, what .. " pr_curve.ap")
  end
  for _, m in ipairs { "ovr", "ovo" } do
    for _, avg in ipairs { "macro", "weighted" } do
      local want = e["roc_auc_" .. m .. "_" .. avg]
      if want then
        close(metrics.roc_auc(t, s, T.merge(o, { multi_class = m, average = avg })), want,
          what .. " roc_auc " .. m .. " " .. avg)
      end
    end
  end
  for _, avg in ipairs { "macro", "weighted" } do
    local want = e["pr_auc_" .. avg]
    if want then close(metrics.pr_auc(t, s, T.merge(o, { average = avg })), want, what .. " pr_auc " .. avg) end
  end
  if e.log_loss then close(metrics.log_loss(t, s, o), e.log_loss, what .. " log_loss") end
  if e.brier then close(metrics.brier(t, s, o), e.brier, what .. " brier") end
end

local function check_regression(c)
  local e, what = c.expect, c.name
  for _, m in ipairs { "rmse", "mse", "mae", "mape", "max_error", "r2" } do
    if e[m] then close(metrics[m](c.truth, c.pred), e[m], what .. " " .. m) end
  end
  if has(c.errors, "r2") then T.raises(function() metrics.r2(c.truth, c.pred) end, "two rows", what) end
  local all = metrics.regression(c.truth, c.pred)
  close(all.rmse, e.rmse, what .. " regression().rmse")
end

for _, file in ipairs { "iris", "digits", "diabetes", "synthetic" } do
  T.test("scikit-learn's values to 1e-12: " .. file, function()
    local n = 0
    for _, c in ipairs(fixtures(file)) do
      if c.kind == "class" then check_class(c)
      elseif c.kind == "score" then check_score(c)
      else check_regression(c) end
      n = n + 1
    end
    T.ok(n > 0)
  end)
end

T.test("Datasets' target columns and forest predictions are taken as they are", function()
  local d = data.load("datasets/iris.csv", { target = "species" })
  local f = rf.train(d, { trees = 10, seed = 1, progress = false })
  local p = f:predict(d)
  T.eq(metrics.accuracy(d, p), f:score(d))
  local labels = {}
  for i = 1, d.rows do labels[i] = p[i] end
  T.eq(metrics.accuracy(d, labels), metrics.accuracy(labels, d) == metrics.accuracy(d, labels)
    and metrics.accuracy(d, labels))
  local pr = f:predict_proba(d)
  local a = metrics.roc_auc(d, pr, { labels = f.labels })
  T.ok(a > 0.9 and a <= 1, "roc_auc " .. a)
  local r = data.load("datasets/diabetes.csv", { target = "progression" })
  local g = rf.train(r, { trees = 10, seed = 1, progress = false })
  T.near(metrics.r2(r, g:predict(r)), g:score(r), 1e-5)
  T.raises(function() metrics.rmse(d, p) end, "regression metric")
  T.raises(function() metrics.accuracy(r, g:predict(r)) end, "regression target")
end)

T.test("bad input: lengths, single-class AUC, labels, regression on labels", function()
  T.raises(function() metrics.accuracy({ 1, 2 }, { 1 }) end, "the truth has 2 rows and the prediction 1")
  T.raises(function() metrics.roc_auc({ 1, 1, 1 }, { 0.1, 0.5, 0.9 }) end, "only one class is present")
  T.raises(function() metrics.roc_curve({ 0, 0 }, { 0.1, 0.5 }) end, "only one class is present")
  T.raises(function() metrics.rmse({ "a", "b" }, { 1, 2 }) end, "regression metric")
  T.raises(function() metrics.f1({ 1, 2 }, { 1, 2 }, { average = "macr" }) end, "\"macro\"")
  T.raises(function() metrics.f1({ 1, 2 }, { 1, 2 }, { avg = "macro" }) end, "avg")
  T.raises(function() metrics.roc_auc({ 1, 2, 3 }, { 0.1, 0.2, 0.3 }) end, "probability rows")
  T.raises(function() metrics.roc_auc({ "a", "b" }, { { 0.5, 0.5 }, { 0.5 } }) end, "score[2]")
  T.raises(function() metrics.log_loss({ "a", "b" }, { { 0.5, 0.5, 0 }, { 0.5, 0.5, 0 } }) end,
    "3 columns but there are 2 classes")
  T.raises(function() metrics.log_loss({ "a", "q" }, { { 0.5, 0.5 }, { 0.5, 0.5 } }, { labels = { "a", "b" } }) end,
    "truth[2] is \"q\"")
  T.raises(function() metrics.log_loss({ "a", "b" }, { { 1.5, -0.5 }, { 0.5, 0.5 } }) end, "not a probability")
  T.raises(function() metrics.accuracy({}, {}) end, "no rows")
  T.raises(function() metrics.accuracy({ {} }, { 1 }) end, "truth[1] is table")
  T.raises(function() metrics.r2({ 1 }, { 1 }) end, "two rows")
  -- the same label as a number and as a string is one label
  T.eq(metrics.accuracy({ 1, 2, 2 }, { "1", "2", 2.0 }), 1.0)
end)

T.test("every metrics function has a help text", function()
  for k, v in pairs(metrics) do
    if type(v) == "function" then T.ok(gwb.helpentry(v), "no help for metrics." .. k) end
  end
end)

T.test("f:evaluate: the report's values are the metrics' and it prints as classification_report", function()
  local d = data.load("datasets/iris.csv", { target = "species" })
  local train, test = d:split(0.8, { seed = 1 })
  local f = rf.train(train, { trees = 20, seed = 1, progress = false })
  local r = f:evaluate(test)
  local p, pr = f:predict(test), f:predict_proba(test)
  T.eq(r.accuracy, metrics.accuracy(test, p))
  T.eq(r.accuracy, f:score(test))
  T.eq(r.f1_macro, metrics.f1(test, p))
  T.eq(r.f1_weighted, metrics.f1(test, p, { average = "weighted" }))
  T.eq(r.balanced_accuracy, metrics.balanced_accuracy(test, p))
  T.eq(r.roc_auc, metrics.roc_auc(test, pr, { labels = f.labels }))
  T.eq(r.log_loss, metrics.log_loss(test, pr, { labels = f.labels }))
  T.eq(r.precision.setosa, metrics.precision(test, p, { average = "none" }).setosa)
  local cm = metrics.confusion(test, p)
  T.eq(r.confusion.counts[2][3], cm.counts[2][3])
  local s = tostring(r)
  for _, want in ipairs { "precision    recall  f1-score   support", "macro avg", "weighted avg",
    "accuracy", "setosa", "confusion matrix", "true \\ predicted" } do
    T.ok(s:find(want, 1, true), "the report shows " .. want .. ":\n" .. s)
  end
  T.ok(not s:find("\27[", 1, true), "no colour when stdout is not a terminal")
  local drawn = require("gwb.metrics").draw_confusion(cm, { colour = true })
  T.ok(drawn:find("\27[32m", 1, true), "the diagonal is green on a terminal")
  T.ok(drawn:find("100%", 1, true) or drawn:find("%", 1, true), "row shares")
  local g = rf.train(data.load("datasets/diabetes.csv", { target = "progression" }), { trees = 5, progress = false })
  local rr = g:evaluate(data.load("datasets/diabetes.csv", { target = "progression" }))
  T.ok(rr.rmse > 0 and rr.r2 < 1 and rr.mae > 0 and rr.mape > 0)
  T.ok(tostring(rr):find("rmse", 1, true))
  T.raises(function() f:evaluate(test, { thread = 2 }) end, "unknown option 'thread'")
end)
