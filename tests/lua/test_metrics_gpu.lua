-- test_metrics_gpu.lua - the metrics of a prediction kept on the GPU (a Predictions object from
-- f:predict / f:predict_proba on a GPU-resident Dataset) computed on the device (kernels/
-- metrics.cu) against the CPU's metrics of the same predictions (the switch metrics.gpu off:
-- the host copy judged by metrics.c): counts exactly, every other value to 1e-12 relative;
-- that the device path ran (its kernels launched, the predictions never read back); its
-- errors equal the CPU's. Skips without a GPU.
local REL = 1e-12
local light = os.getenv("CUDA_INJECTION64_PATH") ~= nil

local function close(got, want, what)
  T.near(got, want, REL * math.max(1, math.abs(want)), what)
end

-- fn() with the metrics on the device (the default), then on the host; both results
local function both(fn)
  local a, an = fn()
  local old = gwb.switches { ["metrics.gpu"] = false }
  local ok, b, bn = pcall(fn)
  gwb.switches(old)
  if not ok then error(b, 0) end
  return a, b, an, bn
end

-- the rows of d whose class number (d:column(d.target)) is (keep true) or is not code
local function rows_of(d, code, keep)
  local idx = {}
  for i, v in ipairs(d:column(d.target)) do
    if (v == code) == keep then idx[#idx + 1] = i end
  end
  return d:take(idx)
end

-- the truth of d as a Lua array of f's labels
local function labels_of(d, f)
  local t = {}
  for i, v in ipairs(d:column(d.target)) do t[i] = f.labels[v] end
  return t
end

local function launched(name)
  for _, k in ipairs(gpu.kernels()) do if k.name == name then return k.launches end end
  return 0
end

local function not_read(p, what)
  T.ok(tostring(p):find("not read yet", 1, true), what .. ": the predictions stayed on the "
    .. "device (" .. tostring(p) .. ")")
end

-- a forest, a GPU-resident test set and its predictions (labels and probability rows)
local function setup(d, o)
  local train, test = d:split(0.7, { seed = 2 })
  local f = rf.train(train, o)
  test:to("gpu")
  return f, test
end

T.test("classification on the device: confusion, accuracy, precision/recall/F1 = the CPU's", function()
  T.need_gpu()
  for _, case in ipairs {
    { "digits", data.load("datasets/digits.csv"), { trees = 20, seed = 1 } },
    { "synthetic 3 classes", data.synth { kind = "classification", rows = light and 3000 or 40000,
      features = 10, informative = 4, classes = 3, seed = 5 }, { trees = 6, depth = 4, seed = 1 } },
  } do
    local name, d, o = case[1], case[2], case[3]
    local f, test = setup(d, o)
    gpu.reset()
    local p = f:predict(test)
    T.eq(type(p), "userdata", name)
    local ca, cb = both(function() return metrics.confusion(test, p) end)
    T.ok(launched("metrics_confusion") >= 1, name .. ": the confusion counts ran on the device")
    T.eq(#ca.labels, #cb.labels, name .. " labels")
    for i = 1, #cb.labels do
      T.eq(ca.labels[i], cb.labels[i], name .. " label " .. i)
      for j = 1, #cb.labels do
        T.eq(ca.counts[i][j], cb.counts[i][j], name .. " counts " .. i .. "," .. j)
      end
    end
    local ra, rb = both(function() return metrics._report(test, p) end)
    for _, k in ipairs { "accuracy", "balanced_accuracy", "precision_macro", "recall_macro",
      "f1_macro", "precision_weighted", "recall_weighted", "f1_weighted", "f1_micro" } do
      close(ra[k], rb[k], name .. " " .. k)
    end
    for _, l in ipairs(rb.labels) do close(ra.f1[l], rb.f1[l], name .. " f1 of " .. tostring(l)) end
    local fa, fb = both(function() return metrics.f1(test, p, { average = "none" }) end)
    for l, v in pairs(fb) do close(fa[l], v, name .. " f1 none " .. tostring(l)) end
    local aa, ab = both(function() return metrics.balanced_accuracy(test, p) end)
    close(aa, ab, name .. " balanced_accuracy")
    -- the truth as a Lua array of labels (not a Dataset) and the labels as class numbers
    local truth = labels_of(test, f)
    local pa, pb = both(function() return metrics.precision(truth, p, { average = "weighted" }) end)
    close(pa, pb, name .. " precision, truth as an array")
    local pc = f:predict(test, { codes = true })
    local xa, xb = both(function() return metrics.recall(test, pc, { average = "micro" }) end)
    close(xa, xb, name .. " recall, prediction as class numbers (labels the truth never has)")
    -- the metrics above ran on the device only: p was judged there and never read back
    p:close()
    pc:close()
  end
end)

T.test("a prediction with labels the truth never has: the same note and counts", function()
  T.need_gpu()
  local d = data.load("datasets/iris.csv", { target = "species" })
  local f = rf.train(d, { trees = 5, seed = 3 })
  T.eq(f.labels[1], "setosa")
  T.eq(f.labels[3], "virginica")
  local setosa = rows_of(d, 1, true)
  local two = rows_of(d, 3, false)
  setosa:to("gpu")
  two:to("gpu")
  for _, t in ipairs { setosa, two } do
    local p = f:predict(t)
    metrics.accuracy(t, p)
    not_read(p, "accuracy")
    local a, b, an, bn = both(function() return metrics.accuracy(t, p) end)
    close(a, b, "accuracy")
    T.eq(an, bn, "the note")
    local ca, cb = both(function() return metrics.confusion(t, p) end)
    T.eq(ca.note, cb.note, "the confusion's note")
    T.eq(#ca.labels, #cb.labels)
  end
end)

T.test("ROC AUC, average precision, log-loss, Brier on the device = the CPU's (ties included)", function()
  T.need_gpu()
  local rows = light and 4000 or 60000
  for _, case in ipairs {
    -- 5 shallow trees: probabilities are multiples of 1/5 and tie on most rows
    { "binary, tied scores", data.synth { kind = "classification", rows = rows, features = 8,
      informative = 3, classes = 2, seed = 11 }, { trees = 5, depth = 3, seed = 1 } },
    { "binary", data.synth { kind = "classification", rows = rows, features = 8, informative = 3,
      classes = 2, seed = 12 }, { trees = 40, seed = 2 } },
    { "4 classes", data.synth { kind = "classification", rows = rows, features = 12,
      informative = 5, classes = 4, seed = 13 }, { trees = 30, depth = 8, seed = 3 } },
    { "digits", data.load("datasets/digits.csv"), { trees = 30, seed = 4 } },
  } do
    local name, d, o = case[1], case[2], case[3]
    local f, test = setup(d, o)
    gpu.reset()
    local pr = f:predict_proba(test)
    T.eq(type(pr), "userdata", name)
    local opts = { labels = f.labels }
    local calls = {
      { "roc_auc", function() return metrics.roc_auc(test, pr, opts) end },
      { "pr_auc", function() return metrics.pr_auc(test, pr, opts) end },
      { "log_loss", function() return metrics.log_loss(test, pr, opts) end },
      { "brier", function() return metrics.brier(test, pr, opts) end },
    }
    if #f.labels > 2 then
      calls[#calls + 1] = { "roc_auc weighted", function()
        return metrics.roc_auc(test, pr, { labels = f.labels, average = "weighted" }) end }
      calls[#calls + 1] = { "roc_auc ovo", function()
        return metrics.roc_auc(test, pr, { labels = f.labels, multi_class = "ovo" }) end }
      calls[#calls + 1] = { "pr_auc weighted", function()
        return metrics.pr_auc(test, pr, { labels = f.labels, average = "weighted" }) end }
    else
      calls[#calls + 1] = { "roc_auc pos = first", function()
        return metrics.roc_auc(test, pr, { labels = f.labels, pos = f.labels[1] }) end }
    end
    local dev = {}
    for i, c in ipairs(calls) do dev[i] = c[2]() end  -- the device (metrics.gpu is on by default)
    not_read(pr, name)
    for i, c in ipairs(calls) do
      local a, b = both(c[2])
      T.eq(a, dev[i], name .. " " .. c[1] .. ": the device's value again")
      close(a, b, name .. " " .. c[1])
    end
    T.ok(launched("metrics_auc_prep") >= 1 and launched("metrics_log_loss") >= 1 and
      launched("metrics_brier") >= 1, name .. ": the device kernels ran")
    -- the curves need every point: read on the host, their areas the same as the device's
    if #f.labels == 2 then
      close(metrics.roc_curve(test, pr, opts).auc, dev[1], name .. " roc_curve's area")
    end
    pr:close()
  end
end)

T.test("device ranking errors are the CPU's: one class in the truth", function()
  T.need_gpu()
  local d = data.synth { kind = "classification", rows = 3000, features = 6, informative = 3,
    classes = 2, seed = 21 }
  local f = rf.train(d, { trees = 5, seed = 1 })
  local one = rows_of(d, 1, true)
  one:to("gpu")
  local pr = f:predict_proba(one)
  local truth = labels_of(one, f)
  local function auc() return metrics.roc_auc(truth, pr, { labels = f.labels }) end
  local ea = T.raises(auc, "only one class")
  not_read(pr, "the one-class check")
  local old = gwb.switches { ["metrics.gpu"] = false }
  local eb = T.raises(auc, "only one class")
  gwb.switches(old)
  T.eq(ea, eb)
end)

T.test("regression on the device: rmse, mae, r2, mape, max_error = the CPU's", function()
  T.need_gpu()
  for _, case in ipairs {
    { "diabetes", data.load("datasets/diabetes.csv"), { trees = 20, seed = 1 } },
    { "synthetic", data.synth { kind = "regression", rows = light and 4000 or 50000, features = 10,
      informative = 5, seed = 8 }, { trees = 10, depth = 8, seed = 2 } },
  } do
    local name, d, o = case[1], case[2], case[3]
    local f, test = setup(d, o)
    gpu.reset()
    local p = f:predict(test)
    T.eq(type(p), "userdata", name)
    local a, b = both(function() return metrics.regression(test, p) end)
    T.ok(launched("metrics_regression") >= 1, name .. ": the device kernel ran")
    for _, k in ipairs { "rmse", "mse", "mae", "r2", "mape", "max_error" } do
      close(a[k], b[k], name .. " " .. k)
    end
    local truth = test:column(test.target)
    close(both(function() return metrics.rmse(truth, p) end), b.rmse, name .. " rmse, array truth")
    p:close()
  end
end)
