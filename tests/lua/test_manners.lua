-- test_manners.lua - tagged runs and the dataset in each record; help(module) and help(obj);
-- floats as Lua prints them; results that draw in scripts; gpu.occupancy in a fresh gwb; the
-- formatting helpers (sizes, times, counts).
local R = require "gwb.runs"
local H = require "gwb.help"

local function with_log(fn)
  local path = T.tmpdir() .. "/manners.jsonl"
  os.remove(path)
  local saved = R.path
  R.path = function() return path end
  local ok, err = pcall(fn, path)
  R.path = saved
  if not ok then error(err, 0) end
end

local function gwb_bin()
  return os.getenv("GWB_BIN") or (arg and arg[-1]) or "build/gwb"
end

T.test("tag = string or list on rf.train, rf.cv, eig.solve, gwb.bench; runs{tag} filters", function()
  with_log(function()
    local d = data.synth { rows = 120, features = 4, seed = 3 }
    rf.train(d, { trees = 2, tag = "a", progress = false })
    rf.train(d, { trees = 2, tag = { "a", "b" }, progress = false })
    rf.cv(d, { folds = 2, trees = 2, tag = "b", progress = false })
    eig.solve(mat.laplacian1d(20), { k = 2, tag = "b" })
    eig.solve(mat.laplacian2d(6), { k = 2, tag = "a" })
    gwb.bench(function() end, { runs = 2, tag = "c" })
    T.eq(#runs { tag = "a" }, 3)
    T.eq(#runs { tag = "b" }, 3)
    T.eq(#runs { tag = { "a", "b" } }, 1)
    T.eq(#runs { tag = "c", kind = "bench" }, 1)
    T.eq(#runs { tag = "zzz" }, 0)
    local r = runs { tag = "b", kind = "eig" }
    T.eq(#r, 1)
    T.eq(r[1].tag[1], "b")
    T.eq(r[1].params.tag, nil, "the tag is the record's, not a parameter")
    T.raises(function() rf.train(d, { trees = 1, tag = 3 }) end, "option 'tag' must be a string or a list")
    T.raises(function() eig.solve(mat.laplacian1d(5), { tag = { 1 } }) end, "item 1 is a number")
  end)
end)

T.test("each record names its dataset: path, rows, features, a checksum of the content", function()
  with_log(function()
    local d = data.load("datasets/iris.csv", { target = "species", progress = false })
    rf.train(d, { trees = 2, progress = false })
    rf.train(d:take { 1, 2, 3, 51, 52, 53, 101, 102, 103 }, { trees = 2, progress = false })
    local d2 = data.load("datasets/iris.csv", { target = "species", progress = false })
    rf.train(d2, { trees = 2, seed = 9, progress = false })
    local r = runs { kind = "rf.train" }
    T.eq(#r, 3)
    T.eq(r[1].data.path, "datasets/iris.csv")
    T.eq(r[1].data.rows, 150)
    T.eq(r[1].data.features, 4)
    T.eq(r[2].data.rows, 9)
    T.ok(r[1].data.checksum:match("^%x+$") and #r[1].data.checksum == 16, r[1].data.checksum)
    T.ok(r[1].data.checksum ~= r[2].data.checksum, "different data, different checksums")
    T.eq(r[1].data.checksum, r[3].data.checksum, "the same content, the same checksum")
    -- eigensolver records name their matrix the same way
    eig.solve(mat.laplacian1d(12), { k = 2 })
    eig.solve(mat.laplacian1d(13), { k = 2 })
    eig.solve(mat.read("datasets/matrices/bcsstk04.mtx"), { k = 2 })
    local e = runs { kind = "eig.solve" }
    T.eq(#e, 3)
    T.eq(e[1].data.rows, 12)
    T.ok(#e[1].data.checksum == 16 and e[1].data.checksum ~= e[2].data.checksum, "dense checksums")
    T.eq(e[3].data.name, "bcsstk04.mtx")
    T.eq(e[3].data.nnz, mat.read("datasets/matrices/bcsstk04.mtx").nnz)
    T.eq(e[3].params.data, nil)
  end)
end)

T.test("help(module) lists every function one line each; help(obj) its methods and fields", function()
  local t = H.text(rf)
  for _, f in ipairs { "rf.train", "rf.cv", "rf.load", "rf.search" } do
    T.ok(t:find("\n  " .. f .. "(", 1, true), "help(rf) lacks " .. f .. ":\n" .. t)
  end
  local n = 0
  for _ in t:gmatch("\n  rf%.") do n = n + 1 end
  T.eq(n, 4, "one line per function")
  T.ok(H.text(eig):find("eig.solve(A", 1, true))
  local d = data.synth { rows = 10, features = 4 }
  local td = H.text(d)
  T.ok(td:find("methods", 1, true) and td:find("d:head(", 1, true), td)
  T.ok(td:find("\n  d.rows ", 1, true), "fields listed: " .. td)
  local f = rf.train(d, { trees = 1, progress = false })
  T.ok(H.text(f):find("f:predict(", 1, true) and H.text(f):find("f.oob ", 1, true))
  T.ok(H.text(mat.randn(2, 2)):find("A.dtype", 1, true))
  T.ok(H.text(eig.solve(mat.laplacian1d(4))):find("e:vector(", 1, true))
  -- metatables carry __fields for completion
  T.ok(getmetatable(d).__fields and getmetatable(d).__fields.rows, "Dataset __fields")
  local all = H.text()
  T.ok(all:find("\nclass Dataset\n", 1, true), "help() groups methods under their class")
  T.ok(not all:find("\ngwb\n  gwb.Dataset:", 1, true), "methods are not under gwb")
end)

T.test("help() wraps to the width, never cutting a signature", function()
  local saved = gwb.term_size
  gwb.term_size = function() return 60, 1000 end
  local ok, t = pcall(H.text)
  gwb.term_size = saved
  T.ok(ok, t)
  for line in t:gmatch("[^\n]+") do
    -- wider only where one word alone is wider than the room left
    T.ok(utf8.len(line) <= 60 or line:match("^%s*%S+$"), "too wide: " .. line)
  end
  -- every signature's tokens are whole somewhere: rf.train's signature is on one line
  T.ok(t:find("rf.train(d [, opts]) -> Forest", 1, true), "signature kept whole")
end)

T.test("floats print as Lua prints them; integers stay integers", function()
  T.eq(gwb.pretty(3.0), "3.0")
  T.eq(gwb.pretty(3), "3")
  T.eq(gwb.pretty({ x = 2.0, y = 0.1 }), "{x = 2.0, y = 0.1}")
  T.eq(gwb.pretty(1e100), "1e+100")
end)

T.test("sizes, times and counts are formatted in one place", function()
  T.eq(gwb.fmt_bytes(512), "512 B")
  T.eq(gwb.fmt_bytes(1536), "1.5 KiB")
  T.eq(gwb.fmt_bytes(256 * 2 ^ 20), "256 MiB")
  T.eq(gwb.fmt_bytes(3 * 2 ^ 40), "3 TiB")
  T.eq(gwb.fmt_time(3.14159), "3.14 ms")
  T.eq(gwb.fmt_time(2500), "2.50 s")
  T.eq(gwb.fmt_time(12345), "12.3 s")
  T.eq(gwb.fmt_time(125000), "2 min 5 s")
  T.eq(gwb.plural(1, "iteration"), "1 iteration")
  T.eq(gwb.plural(3, "iteration"), "3 iterations")
  T.eq(gwb.plural(2, "matrix", "matrices"), "2 matrices")
  local e = eig.solve(mat.read("datasets/matrices/bcsstk04.mtx"), { k = 3 })  -- one "iteration"
  T.eq(e.iterations, 1)
  local s = tostring(e)
  T.ok(not s:find("1 iterations", 1, true) and not s:find("1 sweeps", 1, true), s)
  T.ok(s:find("; 1 iteration\n", 1, true), s)
  local d = data.load("datasets/iris.csv", { target = "species", progress = false })
  T.ok(tostring(d:take { 1 }):find("Dataset: 1 row x 4 features", 1, true), tostring(d:take { 1 }))
  local f = rf.train(d:select { 1 }, { trees = 1, progress = false })
  T.ok(tostring(f):find("Forest: 1 tree, classification on 1 feature ", 1, true), tostring(f))
end)

-- Run a script in a fresh gwb and return its output.
local function run_script(src)
  local dir = T.tmpdir()
  local path = dir .. "/script.lua"
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
  local p = assert(io.popen(string.format("GWB_NORC=1 GWB_RUNS=%s/r.jsonl '%s' '%s' 2>&1", dir, gwb_bin(), path)))
  local out = p:read("a")
  p:close()
  return out
end

T.test("results that draw (describe, plots, lessons) draw in a script as statements", function()
  local out = run_script([[
d = data.load("datasets/iris.csv", {target = "species"})
d:describe()
f = rf.train(d, {trees = 3, progress = false})
f:plot_importance()
e = eig.solve(mat.laplacian1d(10), {k = 2})
e:plot_convergence()
teach.layout({2, 2}, {32, 2})
print("end")
]])
  T.ok(out:find("sepal_length", 1, true), "describe drew nothing:\n" .. out)
  T.ok(out:find("petal_", 1, true) and out:find("importance", 1, true) or out:find("█", 1, true) or out:find("#", 1, true),
    "plot_importance drew nothing:\n" .. out)
  T.ok(out:find("residual", 1, true), "plot_convergence drew nothing:\n" .. out)
  T.ok(out:find("Element", 1, true) or out:find("warp", 1, true), "teach.layout drew nothing:\n" .. out)
  T.ok(out:find("end", 1, true))
end)

T.test("gpu.occupancy(\"rf_hist\", 256) in a fresh gwb: an answer, or why not", function()
  local out = run_script([[
local ok, r = pcall(gpu.occupancy, "rf_hist", 256)
if ok then print("limited_by=" .. tostring(r.limited_by), "occupancy=" .. tostring(r.occupancy),
  "source=" .. tostring(r.source), "note=" .. tostring(r.note))
else print("error=" .. r) end
]])
  -- an answer either way: without a GPU from the build's table of the kernels' resources
  T.ok(out:find("limited_by=%a"), out)
  if not gpu.available() then
    T.ok(out:find("source=build table", 1, true), "says where the registers came from: " .. out)
    T.ok(out:find("no GPU", 1, true), "says there is no GPU: " .. out)
  end
end)

T.test("rf.cv's timing adds up: kernel + transfer + host = total", function()
  local cv = rf.cv(data.load("datasets/iris.csv"), { trees = 3, folds = 3, backend = "cpu" })
  local t = cv.timing
  T.ok(t.total_ms > 0, "total_ms")
  T.near(t.kernel_ms + t.transfer_ms + t.host_ms, t.total_ms, 1e-6 * t.total_ms + 1e-9)
end)

T.test("a CPU sparse eig or svd counts no transfer, and its times add up", function()
  local A = mat.read("datasets/matrices/bcsstk04.mtx")
  local e = eig.solve(A, { k = 4, vectors = true, backend = "cpu", method = "lanczos" })
  local t = e.timing
  T.eq(t.transfer_ms, 0, "eig.solve on the CPU: " .. tostring(e))
  T.near(t.kernel_ms + t.transfer_ms + t.host_ms, t.total_ms, 1e-6 * t.total_ms + 1e-9)
  local s = eig.svd(mat.sprand(300, 200, { density = 0.05, seed = 1 }), { k = 3, backend = "cpu" })
  T.eq(s.timing.transfer_ms, 0, "eig.svd on the CPU: " .. tostring(s))
end)

T.test("the sparse eig note is whole: the backend's reason is not cut at 40 characters", function()
  local A = mat.read("datasets/matrices/bcsstk04.mtx")
  for _, m in ipairs { "auto", "lanczos" } do
    local e = eig.solve(A, { k = 4, method = m })
    -- a small matrix: "auto: 2.3 MB is below the 34 MB GPU crossover" (46 characters)
    T.ok(e.note:find("auto: [%d.]+ MB is below the [%d.]+ MB GPU crossover$"), m .. ": " .. e.note)
  end
end)

T.test("a loaded .npy says so as its source (not a CSV's separator and header)", function()
  local path = T.tmpdir() .. "/src.npy"
  data.synth { rows = 20, features = 4, seed = 1 }:save(path)
  local s = tostring(data.load(path))
  T.ok(s:find("source: " .. path .. " (a NumPy .npy array)", 1, true), s)
  T.ok(not s:find("separated", 1, true) and not s:find("header", 1, true), s)
end)

T.test("one help text wrapped to the width reads as paragraphs: no broken-off fragment", function()
  -- the wrap of a single text once left "  last" alone on a line, the paragraph going on
  -- below it at the left edge ("column (class codes ...)"): a hanging line followed by a less
  -- indented line that goes on in lower case
  local saved = gwb.term_size
  local bad, n = {}, 0
  for _, width in ipairs { 60, 80 } do
    gwb.term_size = function() return width, 1000 end
    for name, e in pairs(gwb.helpall()) do
      if type(name) == "string" and type(e) == "table" and e.text then
        local ok, t = pcall(H.text, name)
        if ok and type(t) == "string" then
          n = n + 1
          local prev
          for line in (t .. "\n"):gmatch("(.-)\n") do
            if prev and #prev:match("^ *") > #line:match("^ *") and line:find("^%s*%l")
                and not prev:find("[.:;,]$") then
              bad[#bad + 1] = width .. " " .. name .. ": [" .. prev .. "] then [" .. line .. "]"
            end
            T.ok((utf8.len(line) or #line) <= width or line:match("^%s*%S+$"), name .. " too wide: " .. line)
            prev = line
          end
        end
      end
    end
  end
  gwb.term_size = saved
  T.ok(n > 100, "help texts checked: " .. n)
  T.ok(#bad == 0, #bad .. " broken paragraphs, e.g.\n" .. table.concat(bad, "\n", 1, math.min(#bad, 5)))
end)
