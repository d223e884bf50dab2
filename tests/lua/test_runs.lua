-- test_runs.lua - the run log: gwb.log_run appends JSON lines, runs() reads and filters them.
local R = require "gwb.runs"

local function with_log(name, fn)
  local old = os.getenv("GWB_RUNS")
  local path = T.tmpdir() .. "/" .. name
  os.remove(path)
  -- os.getenv cannot be changed from Lua: point the module at the file instead
  local saved = R.path
  R.path = function() return path end
  local ok, err = pcall(fn, path)
  R.path = saved
  if not ok then error(err, 0) end
  return old
end

T.test("JSON encode/decode round trip keeps values", function()
  local v = { kind = "rf.train", params = { trees = 100, depth = 10, max_features = "sqrt",
    bootstrap = true, list = { 1, 2.5, "x\n\"q\"" } }, timing = { total_ms = 12.25 }, empty = {} }
  local back = R.decode(R.encode(v))
  T.eq(back.kind, "rf.train")
  T.eq(back.params.trees, 100)
  T.eq(math.type(back.params.trees), "integer")
  T.eq(back.params.bootstrap, true)
  T.eq(back.params.list[3], "x\n\"q\"")
  T.near(back.params.list[2], 2.5)
  T.near(back.timing.total_ms, 12.25)
  T.eq(next(back.empty), nil)
  T.eq(R.encode(0 / 0), "null")
  T.raises(function() R.decode('{"a":1') end, "expected")
  local c = {}; c.c = c
  T.raises(function() R.encode(c) end, "cycle")
end)

T.test("log_run appends one line per call with version, device and time", function()
  with_log("runs_a.jsonl", function(path)
    gwb.log_run { kind = "rf.train", backend = "cpu", params = { trees = 10 }, metrics = { acc = 0.9 } }
    gwb.log_run { kind = "eig.solve", backend = "cpu", params = { k = 3 }, timing = { total_ms = 5 } }
    local lines = {}
    for l in io.lines(path) do lines[#lines + 1] = l end
    T.eq(#lines, 2)
    local r = R.decode(lines[1])
    T.eq(r.kind, "rf.train")
    T.eq(r.version, gwb.version)
    T.eq(r.commit, gwb.commit)
    T.ok(r.time:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"), "ISO time")
    T.ok(type(r.device) == "string" and r.device:find("cpu", 1, true), "cpu device named")
    local all = runs()
    T.eq(#all, 2)
    T.eq(all[2].params.k, 3)
  end)
end)

T.test("runs() filters by kind prefix, field, parameter, function and last", function()
  with_log("runs_b.jsonl", function()
    for i = 1, 5 do
      gwb.log_run { kind = i % 2 == 0 and "eig.solve" or "rf.train", backend = i <= 2 and "gpu" or "cpu",
        device = "test-device", params = { trees = i * 10 } }
    end
    T.eq(#runs("rf"), 3)
    T.eq(#runs { kind = "eig" }, 2)
    T.eq(#runs { backend = "gpu" }, 2)
    T.eq(#runs { trees = 30 }, 1)
    T.eq(#runs(function(r) return r.params.trees > 20 end), 3)
    local l = runs { last = 2 }
    T.eq(#l, 2)
    T.eq(l[2].params.trees, 50)
    T.eq(#runs { since = "1999-01-01" }, 5)
    T.eq(#runs { since = "2999-01-01" }, 0)
    T.ok(tostring(runs()):find("rf.train", 1, true), "printed table names the kind")
    T.raises(function() runs(42) end, "filter must be")
  end)
end)

T.test("a broken line is skipped with a warning, the rest is read", function()
  with_log("runs_c.jsonl", function(path)
    gwb.log_run { kind = "rf.train", device = "d" }
    local f = assert(io.open(path, "a"))
    f:write('{"kind": "rf.train", "params": {"trees": \n')  -- truncated line
    f:write("not json at all\n")
    f:close()
    gwb.log_run { kind = "eig.solve", device = "d" }
    local l = runs()
    T.eq(#l, 2)
    T.eq(l.skipped, 2)
    T.eq(l[2].kind, "eig.solve")
  end)
end)

T.test("log_run creates missing directories", function()
  with_log("deep/er/runs.jsonl", function(path)
    os.execute("rm -rf '" .. T.tmpdir() .. "/deep'")
    gwb.log_run { kind = "bench", device = "d" }
    T.eq(#runs(), 1)
    T.ok(io.open(path) ~= nil)
  end)
end)

T.test("runs() on a missing log is empty and says where it looked", function()
  with_log("missing.jsonl", function()
    local l = runs()
    T.eq(#l, 0)
    T.ok(tostring(l):find("missing.jsonl", 1, true))
  end)
end)

T.test("eig run records name the matrix by a checksum that follows writes", function()
  with_log("runs_sum.jsonl", function()
    local A = mat.randn(40, 40, { sym = true, seed = 3 })
    eig.solve(A, { backend = "cpu" })
    eig.solve(A, { backend = "cpu" })        -- the cached checksum: the same
    local v = A:get(1, 2)
    A:set(1, 2, v + 1); A:set(2, 1, v + 1)   -- a write: a new checksum
    eig.solve(A, { backend = "cpu" })
    A:set(1, 2, v); A:set(2, 1, v)           -- written back: the first one again
    eig.solve(A, { backend = "cpu" })
    local r = runs("eig.solve")
    T.eq(#r, 4)
    local s = {}
    for i = 1, 4 do
      s[i] = r[i].data.checksum
      T.ok(type(s[i]) == "string" and #s[i] == 16, "checksum " .. i .. " is 16 hex digits")
      T.eq(r[i].data.device, "cpu")
    end
    T.eq(s[2], s[1])
    T.ok(s[3] ~= s[1], "a write changes the checksum")
    T.eq(s[4], s[1])
    -- datasets: the same content gives the same checksum on every call
    local d = data.load("datasets/iris.csv")
    rf.train(d, { trees = 2, backend = "cpu" })
    rf.train(d, { trees = 2, backend = "cpu" })
    local t = runs("rf.train")
    T.eq(#t, 2)
    T.eq(t[1].data.checksum, t[2].data.checksum)
  end)
end)

T.test("every string is written as valid UTF-8 JSON: invalid bytes as \\u00XX (Latin-1)", function()
  with_log("utf8.jsonl", function(path)
    gwb.log_run { kind = "x\xffy", tag = { "caf\xe9", "ok" }, params = { ["k\x80"] = "\xc3(\xed\xa0\x80\xf4\x90\x80\x80" },
      note = "valid: caf\xc3\xa9 \xf0\x9f\x98\x80" }
    local f = assert(io.open(path, "r"))
    local line = f:read("l")
    f:close()
    T.ok(utf8.len(line) ~= nil, "the run log line is not valid UTF-8: " .. line)
    T.ok(line:find('"x\\u00ffy"', 1, true), line)
    T.ok(line:find('"caf\\u00e9"', 1, true), line)
    T.ok(line:find('"k\\u0080"', 1, true), line)
    -- an invalid byte reads back as its Latin-1 code point; valid UTF-8 passes unchanged
    local r = runs()[1]
    T.eq(r.kind, "x\u{ff}y")
    T.eq(r.tag[1], "caf\u{e9}")
    T.eq(r.params["k\u{80}"], "\u{c3}(\u{ed}\u{a0}\u{80}\u{f4}\u{90}\u{80}\u{80}")
    T.eq(r.note, "valid: caf\xc3\xa9 \xf0\x9f\x98\x80")
  end)
  T.eq(R.decode('"\\ud83d\\ude00"'), "\u{1F600}")
end)

T.test("a record over PIPE_BUF goes to an attachment the log line names; runs() reads it whole", function()
  with_log("long.jsonl", function(path)
    local big = string.rep("v", 10000)
    gwb.log_run { kind = "long.one", params = { big = big }, tag = "t1" }
    gwb.log_run { kind = "short.one", params = { n = 1 } }
    local f = assert(io.open(path, "r"))
    local lines = {}
    for l in f:lines() do lines[#lines + 1] = l end
    f:close()
    T.eq(#lines, 2)
    T.ok(#lines[1] < gwb._append_max, "the long record's line is " .. #lines[1] .. " bytes")
    local stub = R.decode(lines[1])
    T.eq(stub.kind, "long.one")
    T.ok(type(stub.attachment) == "string" and stub.attachment:match("^long%.jsonl%.d/"), tostring(stub.attachment))
    local list = runs()
    T.eq(#list, 2)
    T.eq(list[1].params.big, big)
    T.eq(list[1].tag[1], "t1")
    T.eq(list[2].kind, "short.one")
    T.eq(#runs { tag = "t1" }, 1)
  end)
end)

T.test("f:export_json writes names that are not UTF-8 as \\u00XX (valid UTF-8 JSON)", function()
  local base = T.tmpdir() .. "/json-names"
  local f = assert(io.open(base .. ".csv", "w"))
  f:write("caf\xe9,ok\xc3\xa9,bad\xed\xa0\x80,y\n")
  for i = 1, 40 do f:write(string.format("%d,%d,%d,%s\n", i, i % 3, i % 5, i % 2 == 0 and "\xffa" or "b")) end
  f:close()
  local fo = rf.train(data.load(base .. ".csv", { target = "y" }), { trees = 2, depth = 3, seed = 1 })
  fo:export_json(base .. ".json")
  local s = assert(io.open(base .. ".json")):read("a")
  os.remove(base .. ".csv")
  os.remove(base .. ".json")
  T.ok(utf8.len(s) ~= nil, "export_json wrote bytes that are not UTF-8")
  local j = R.decode(s)
  T.eq(j.features[1], "caf\u{e9}")
  T.eq(j.features[2], "ok\xc3\xa9")
  T.eq(j.features[3], "bad\u{ed}\u{a0}\u{80}")
end)
