-- test_onnx.lua - f:export_onnx: every bundled dataset's forest exported, checked by the onnx
-- package's checker and run by onnxruntime where Python can import them (labels exactly,
-- probabilities to 1e-6), skipped with the reason otherwise; the refusals.
local python = os.getenv("GWB_PYTHON") or "python3"
local here = (T.current_file or "tests/lua/x"):match("^(.*)/[^/]*$") or "tests/lua"

local function sh(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function export_and_check(name, target, opts)
  local d = data.load("datasets/" .. name .. ".csv", { target = target })
  local f = rf.train(d, T.merge({ trees = 15, seed = 1, progress = false }, opts))
  local dir = T.tmpdir()
  local model, npy, pred = dir .. "/" .. name .. ".onnx", dir .. "/" .. name .. "-onnx.npy",
    dir .. "/" .. name .. "-onnx.txt"
  f:export_onnx(model)
  local bytes = T.readfile(model)
  T.ok(#bytes > 100 and bytes:find("TreeEnsemble", 1, true), name .. ": an ONNX file")
  d:save(npy)
  local out = {}
  if f.task == "classification" then
    local lab, pr = f:predict(d), f:predict_proba(d)
    for i = 1, d.rows do
      local row = { tostring(lab[i]) }
      for k, v in ipairs(pr[i]) do row[k + 1] = string.format("%.9g", v) end
      out[i] = table.concat(row, ",")
    end
  else
    local v = f:predict(d)
    for i = 1, d.rows do out[i] = string.format("%.9g", v[i]) end
  end
  T.writefile(pred, table.concat(out, "\n"))
  local p = io.popen(string.format("%s %s %s %s %s 2>&1", python, sh(here .. "/onnx_check.py"),
    sh(model), sh(npy), sh(pred)))
  local res = p:read("a")
  local ok = p:close()
  if not ok and res:find("No such file", 1, true) and not res:find("row", 1, true) then
    return "python: " .. res:sub(1, 120)
  end
  T.ok(ok, name .. ": " .. res)
  if res:find("skip:", 1, true) and not res:find("compared", 1, true) then
    return res:match("skip: ([^\n]*)")
  end
  T.ok(res:find("compared " .. d.rows, 1, true), name .. ": " .. res)
end

T.test("export_onnx: every bundled dataset, checked and run by onnxruntime", function()
  local why
  for _, c in ipairs { { "iris", "species" }, { "digits", "digit" }, { "diabetes", "progression" } } do
    why = export_and_check(c[1], c[2], {}) or why
  end
  why = export_and_check("iris", "species", { depth = 2, class_weight = "balanced" }) or why
  if why then T.skip(why) end
end)

T.test("export_onnx: refusals name what is wrong", function()
  local dir = T.tmpdir()
  local csv = dir .. "/onnx-cat.csv"
  T.writefile(csv, "x,colour,y\n1,red,a\n2,green,b\n3,red,a\n4,blue,b\n5,green,a\n6,blue,b\n")
  local d = data.load(csv, { target = "y" })
  local f = rf.train(d, { trees = 3, progress = false })
  T.raises(function() f:export_onnx(dir .. "/cat.onnx") end, "feature 'colour' is categorical")
  f:export_onnx(dir .. "/cat.onnx", { categorical = "codes" })
  T.ok(T.readfile(dir .. "/cat.onnx"):find("0 = ", 1, true), "the doc string lists the codes")
  T.raises(function() f:export_onnx(dir .. "/cat.onnx", { categorical = "labels" }) end, "\"codes\"")
  T.raises(function() f:export_onnx(dir .. "/cat.onnx", { categoricl = "codes" }) end, "unknown option")
  T.raises(function() f:export_onnx(dir) end, "")
end)
