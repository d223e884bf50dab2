-- gwb/metrics.lua - the Lua half of the `metrics` module (src/lapi_metrics.c computes): how
-- a confusion matrix, a curve and a model's report print (a classification report as
-- scikit-learn's, the confusion matrix drawn with the class labels, counts and row shares,
-- coloured on a terminal), and f:evaluate(d) on the Forest class.
local help = require "gwb.help"
local plot = require "gwb.plot"

local M = {}

local function ulen(s) return utf8.len(s) or #s end
local function lpad(s, n) s = tostring(s) return string.rep(" ", math.max(0, n - ulen(s))) .. s end
local function rpad(s, n) s = tostring(s) return s .. string.rep(" ", math.max(0, n - ulen(s))) end

-- Colour only where standard output is a terminal that takes it.
local function colour()
  if os.getenv("NO_COLOR") or os.getenv("TERM") == "dumb" then return false end
  return gwb.term_size() ~= nil
end

local function paint(s, code, on) if on then return "\27[" .. code .. "m" .. s .. "\27[0m" end return s end

-- The confusion matrix: rows by true label, columns by predicted label, each cell
-- "count share" with the share of its row; the diagonal green, errors red (terminal only).
function M.draw_confusion(c, opts)
  opts = opts or {}
  local on = opts.colour
  if on == nil then on = colour() end
  local labels, counts = c.labels, c.counts
  local names, w0 = {}, #"true \\ predicted"
  for i, l in ipairs(labels) do names[i] = tostring(l) w0 = math.max(w0, ulen(names[i])) end
  local cw = 0
  for i = 1, #labels do
    for j = 1, #labels do cw = math.max(cw, #tostring(counts[i][j])) end
  end
  cw = cw + 5  -- " 100%"
  for i = 1, #labels do cw = math.max(cw, ulen(names[i])) end
  local lines = {}
  local head = { rpad("true \\ predicted", w0) }
  for j = 1, #labels do head[#head + 1] = lpad(names[j], cw) end
  lines[1] = table.concat(head, "  ")
  for i = 1, #labels do
    local row, total = { rpad(names[i], w0) }, 0
    for j = 1, #labels do total = total + counts[i][j] end
    for j = 1, #labels do
      local n = counts[i][j]
      local share = total > 0 and string.format("%3d%%", math.floor(100 * n / total + 0.5)) or "   -"
      local cell = lpad(tostring(n) .. " " .. share, cw)
      if n > 0 then cell = paint(cell, i == j and "32" or "31", on) end
      row[#row + 1] = cell
    end
    lines[#lines + 1] = table.concat(row, "  ")
  end
  if c.note then lines[#lines + 1] = "note: " .. c.note end
  return table.concat(lines, "\n")
end

-- The confusion matrix as a picture: a heatmap (cells shaded by the share of their row,
-- white to dark blue), each cell's count written in it, the labels along both axes.
local function blues(t)
  local a, b = { 0xf7, 0xfb, 0xff }, { 0x08, 0x30, 0x6b }
  local c = {}
  for i = 1, 3 do c[i] = math.floor(a[i] + (b[i] - a[i]) * t + 0.5) end
  return (c[1] << 16) | (c[2] << 8) | c[3]
end

function M.confusion_model(c, opts)
  opts = opts or {}
  local labels, counts = c.labels, c.counts
  local k = #labels
  local rx, ry, fills, tx, ty, texts, tcol, ticks, names = {}, {}, {}, {}, {}, {}, {}, {}, {}
  for i = 1, k do
    ticks[i], names[i] = i, tostring(labels[i])
    local total = 0
    for j = 1, k do total = total + counts[i][j] end
    for j = 1, k do
      local n = counts[i][j]
      local share = total > 0 and n / total or 0
      rx[#rx + 1], rx[#rx + 2] = j - 0.5, j + 0.5
      ry[#ry + 1], ry[#ry + 2] = i - 0.5, i + 0.5
      fills[#fills + 1] = blues(share)
      tx[#tx + 1], ty[#ty + 1], texts[#texts + 1] = j, i, tostring(n)
      tcol[#tcol + 1] = share > 0.5 and 0xffffff or 0x222222
    end
  end
  return { title = opts.title or "confusion matrix (shade: share of the row)",
    xlabel = "predicted", ylabel = "true", grid = false,
    xticks = ticks, xtick_labels = names, yticks = ticks, ytick_labels = names, yflip = true,
    xlim = { 0.5, k + 0.5 }, ylim = { 0.5, k + 0.5 },
    items = { { kind = "rects", x = rx, y = ry, color = 0xffffff, colors = fills, stroke = 0xffffff },
      { kind = "texts", x = tx, y = ty, texts = texts, color = 0x222222, colors = tcol } } }
end

local Confusion = { __name = "gwb.Confusion" }
Confusion.__index = Confusion
Confusion.__tostring = function(c) return M.draw_confusion(c) end
-- c:plot([opts]): the matrix as a Plot (its text as printed, its picture a heatmap)
function Confusion.plot(c, opts)
  local lines = {}
  for l in (M.draw_confusion(c, { colour = false }) .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  return plot.new_plot(lines, "confusion", M.confusion_model(c, opts))
end
function Confusion.save(c, path, opts) plot.save_model(M.confusion_model(c), path, opts, "c:save") end
debug.getregistry()["gwb.Confusion"] = Confusion

local Curve = { __name = "gwb.Curve" }
Curve.__index = Curve
-- cv:plot([opts]): the curve as a Plot (braille in the terminal; the picture adds the
-- chance line of a ROC curve and the area in the legend)
function Curve.plot(c, opts)
  opts = opts or {}
  local roc = c.kind == "roc"
  local xs, ys = roc and c.fpr or c.recall, roc and c.tpr or c.precision
  local title = opts.title or (roc and string.format("ROC curve of %s (AUC %.4f)", tostring(c.pos), c.auc)
    or string.format("precision-recall curve of %s (average precision %.4f)", tostring(c.pos), c.ap))
  local p = plot.line(xs, ys, { title = title, xlabel = roc and "false positive rate" or "recall",
    ylabel = roc and "true positive rate" or "precision", xlim = { 0, 1 }, ylim = { 0, 1.02 },
    labels = { roc and string.format("AUC %.4f", c.auc) or string.format("AP %.4f", c.ap) },
    width = opts.width, height = opts.height })
  if roc then
    table.insert(p.model.items, 1, { kind = "line", x = { 0, 1 }, y = { 0, 1 }, color = 0xaaaaaa, size = 1 })
    p.model.legend[2] = { label = "chance", color = 0xaaaaaa, shape = "line" }
  end
  return p
end
function Curve.save(c, path, opts) plot.save_model(Curve.plot(c).model, path, opts, "cv:save") end
Curve.__tostring = function(c) return tostring(Curve.plot(c)) end
debug.getregistry()["gwb.Curve"] = Curve

help.register(Confusion.plot, "gwb.Confusion:plot",
  "c:plot([{title = ...}]) -> plot\n"
  .. "The confusion matrix as a plot: its text as printed, and a heatmap picture (cells shaded\n"
  .. "by the share of their true label's row, the count in each, labels on both axes) that\n"
  .. "p:save(\"cm.png\") writes.\nExample: r = f:evaluate(test); r.confusion:save(\"cm.svg\")")
help.register(Confusion.save, "gwb.Confusion:save",
  "c:save(path [, {width = 640, height = 480}])\n"
  .. "Save the confusion matrix's heatmap as SVG or PNG (by the extension); as p:save.")
help.register(Curve.plot, "gwb.Curve:plot",
  "cv:plot([opts]) -> plot\n"
  .. "The ROC or precision-recall curve as a plot (braille in the terminal; the picture adds\n"
  .. "the chance diagonal of a ROC curve and the area in the legend).\n"
  .. "Example: metrics.roc_curve(test, f:predict_proba(test), {labels = f.labels}):save(\"roc.png\")")
help.register(Curve.save, "gwb.Curve:save",
  "cv:save(path [, {width = 640, height = 480}])\n"
  .. "Save the curve as an SVG or PNG picture (by the extension); as p:save.")

local function f4(x) if x == nil or x ~= x then return "-" end return string.format("%.4f", x) end

-- classification_report's layout: per class precision / recall / f1-score / support, then
-- accuracy and the macro and weighted averages; then the scores from probabilities and the
-- confusion matrix.
local function draw_class(r, opts)
  local names, w = {}, #"weighted avg"
  for i, l in ipairs(r.labels) do names[i] = tostring(l) w = math.max(w, ulen(names[i])) end
  local n = r.rows
  local out = { lpad("", w) .. lpad("precision", 11) .. lpad("recall", 10) .. lpad("f1-score", 10)
    .. lpad("support", 10), "" }
  for i, l in ipairs(r.labels) do
    out[#out + 1] = lpad(names[i], w) .. lpad(f4(r.precision[l]), 11) .. lpad(f4(r.recall[l]), 10)
      .. lpad(f4(r.f1[l]), 10) .. lpad(r.support[l], 10)
  end
  out[#out + 1] = ""
  out[#out + 1] = lpad("accuracy", w) .. lpad("", 21) .. lpad(f4(r.accuracy), 10) .. lpad(n, 10)
  out[#out + 1] = lpad("macro avg", w) .. lpad(f4(r.precision_macro), 11) .. lpad(f4(r.recall_macro), 10)
    .. lpad(f4(r.f1_macro), 10) .. lpad(n, 10)
  out[#out + 1] = lpad("weighted avg", w) .. lpad(f4(r.precision_weighted), 11)
    .. lpad(f4(r.recall_weighted), 10) .. lpad(f4(r.f1_weighted), 10) .. lpad(n, 10)
  out[#out + 1] = ""
  local s = { "balanced accuracy " .. f4(r.balanced_accuracy) }
  if r.roc_auc then s[#s + 1] = "ROC AUC " .. f4(r.roc_auc) end
  if r.log_loss then s[#s + 1] = "log-loss " .. f4(r.log_loss) end
  if r.brier then s[#s + 1] = "Brier " .. f4(r.brier) end
  out[#out + 1] = table.concat(s, "   ")
  out[#out + 1] = ""
  out[#out + 1] = "confusion matrix (rows: true label, columns: predicted; count and row share)"
  out[#out + 1] = M.draw_confusion(r.confusion, opts)
  for _, k in ipairs { "note", "roc_auc_note" } do
    if r[k] and not (k == "note" and r.confusion.note) then out[#out + 1] = "note: " .. r[k] end
  end
  return table.concat(out, "\n")
end

local function draw_regression(r)
  local out = {}
  for _, k in ipairs { "rmse", "mae", "r2", "mape", "max_error" } do
    out[#out + 1] = rpad(k, 10) .. string.format("%.6g", r[k])
  end
  out[#out + 1] = rpad("rows", 10) .. tostring(r.rows)
  if r.note then out[#out + 1] = "note: " .. r.note end
  return table.concat(out, "\n")
end

local Report = { __name = "gwb.Report" }
Report.__index = Report
Report.__tostring = function(r)
  if r.task == "regression" then return draw_regression(r) end
  return draw_class(r)
end
M.Report = Report

-- f:evaluate(d [, opts]): the report of forest f on d (its target column).
function M.evaluate(f, d, opts)
  if type(opts) ~= "nil" and type(opts) ~= "table" then
    error("evaluate: opts must be a table (got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= "threads" then error("evaluate: unknown option '" .. tostring(k) .. "' (known: threads)", 2) end
  end
  local p, how = f:predict(d, opts)
  local r
  if f.task == "regression" then
    r = metrics.regression(d, p)
    r.task = "regression"
  else
    r = metrics._report(d, p)
    r.task = "classification"
    setmetatable(r.confusion or {}, Confusion)
    r.confusion = setmetatable({ labels = r.labels, counts = r.counts, rows = r.rows, note = r.note },
      Confusion)
    r.counts = nil
    local pr = f:predict_proba(d, opts)
    local po = { labels = f.labels }
    local ok, v = pcall(metrics.roc_auc, d, pr, po)
    if ok then r.roc_auc = v else r.roc_auc_note = tostring(v):gsub("^.-metrics%.roc_auc: ", "ROC AUC: ") end
    ok, v = pcall(metrics.log_loss, d, pr, po)
    if ok then r.log_loss = v end
    ok, v = pcall(metrics.brier, d, pr, po)
    if ok then r.brier = v end
  end
  if how then r.columns_note = how end
  return setmetatable(r, Report)
end

local function attach()
  local mt = debug.getregistry()["gwb.Forest"]
  if type(mt) ~= "table" then return end
  local methods = type(mt.__index) == "table" and mt.__index or mt.__methods
  if type(methods) ~= "table" or methods.evaluate then return end
  methods.evaluate = M.evaluate
  help.register(M.evaluate, "gwb.Forest:evaluate",
    "f:evaluate(d [, {threads = n}]) -> report\n"
    .. "How well f predicts d's target column. Classification: accuracy, balanced_accuracy,\n"
    .. "f1_macro, f1_weighted, precision, recall and f1 (tables by label), support, roc_auc\n"
    .. "(one-vs-rest macro; binary: of the last label), log_loss, brier, and confusion (rows by\n"
    .. "true label, columns by predicted: confusion.counts[i][j], confusion.labels). Regression:\n"
    .. "rmse, mae, r2, mape, max_error. It prints as scikit-learn's classification_report with\n"
    .. "the confusion matrix drawn (counts and row shares, coloured on a terminal).\n"
    .. "Example: train, test = d:split(0.8); f = rf.train(train); print(f:evaluate(test))")
end
attach()

return M
