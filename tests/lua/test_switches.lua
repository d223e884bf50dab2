-- test_switches.lua - the optimisation switches (src/switches.c, src/lapi_switches.c) and
-- gwb.ablate (lua/gwb/ablate.lua) on the CPU backend: the registry's names and defaults,
-- global and per-call settings and their order, unknown names, the results the CPU-side
-- switches must not change, and the ablation table's measurements and checks.
local test, ok, eq, raises = T.test, T.ok, T.eq, T.raises

local function row(name)
  for _, s in ipairs(gwb.switches()) do if s.name == name then return s end end
end

local iris = data.load("datasets/iris.csv", { target = "species" })
-- this gwb binary, for child processes (arg's lowest index)
local GWB_BIN
do local i = 0; while arg and arg[i - 1] do i = i - 1 end; GWB_BIN = arg and arg[i] or "build/gwb" end

test("gwb.switches lists the registry: the required names, defaults on, one line each", function()
  local list = gwb.switches()
  local want = { "rf.subtract", "rf.smem_hist", "rf.predict_vote", "transpose.pad", "jacobi.smem",
    "jacobi.shift", "spmv.ours", "eig.chebyshev", "eig.mixed", "copy.pinned", "transpose.tile",
    "rf.rowmajor", "csv.fast" }
  local seen = {}
  for _, s in ipairs(list) do
    ok(not seen[s.name], "a name once: " .. s.name)
    seen[s.name] = s
    eq(s.default, true, s.name)
    eq(s.on, true, s.name .. " is on by default")
    ok(#s.description > 10 and not s.description:find("\n"), s.name .. ": one-line description")
    ok(s.backends == "cpu" or s.backends == "gpu" or s.backends == "cpu+gpu", s.backends)
    ok(#s.on_path > 0 and #s.off_path > 0, s.name .. ": both code paths named")
  end
  for _, n in ipairs(want) do ok(seen[n], "registered: " .. n) end
  eq(seen["rf.subtract"].backends, "cpu+gpu")
  eq(seen["transpose.pad"].backends, "gpu")
  eq(seen["rf.subtract"].env, "GWB_RF_SUBTRACT")
  local text = tostring(list)
  for _, n in ipairs(want) do ok(text:find(n, 1, true), n .. " in the printed list") end
end)

test("gwb.switches{...} sets globally, returns what to restore; 'default' and 'reset' unset", function()
  eq(gwb.switches("rf.subtract"), true)
  local old = gwb.switches { ["rf.subtract"] = false, ["csv.fast"] = false }
  eq(old["rf.subtract"], "default")
  eq(gwb.switches("rf.subtract"), false)
  eq(row("rf.subtract").source, "global")
  eq(row("csv.fast").on, false)
  local old2 = gwb.switches { ["rf.subtract"] = true }
  eq(old2["rf.subtract"], false, "the previous global value")
  gwb.switches(old)   -- restore
  eq(gwb.switches("rf.subtract"), true)
  eq(row("rf.subtract").source, "default")
  eq(gwb.switches("csv.fast"), true)
  gwb.switches { ["jacobi.shift"] = false }
  gwb.switches("reset")
  eq(gwb.switches("jacobi.shift"), true)
end)

test("unknown switch names list the known ones; bad values are named", function()
  local e = raises(function() gwb.switches { ["rf.subtrac"] = false } end, 'unknown switch "rf.subtrac"')
  ok(e:find("rf.subtract", 1, true) and e:find("transpose.pad", 1, true), e)
  raises(function() gwb.switches("nope") end, "known switches:")
  raises(function() gwb.switches { ["rf.subtract"] = 0 } end, 'switch "rf.subtract" takes true or false')
  raises(function() rf.train(iris, { trees = 1, switches = { nope = false } }) end,
    'rf.train: unknown switch "nope"')
  raises(function() rf.train(iris, { trees = 1, switches = 5 }) end, "opts.switches must be a table")
  raises(function() iris:transpose { switches = { ["transpose.pad"] = "no" } } end,
    "takes true or false")
  raises(function() gwb.ablate(function() end, { switches = { "rf.nope" } }) end,
    'gwb.ablate: unknown switch "rf.nope"')
end)

test("opts.switches holds for one call, is restored after it and after an error", function()
  local t = iris:transpose { backend = "cpu", reps = 1, switches = { ["transpose.tile"] = false } }
  eq(t.kernel, "naive", "transpose.tile off: the naive loop")
  eq(t.verified, true)
  eq(iris:transpose { backend = "cpu", reps = 1 }.kernel, "blocked", "the next call has it on again")
  eq(gwb.switches("transpose.tile"), true)
  -- an error inside the call (a bad option after the switches were applied) restores them
  raises(function() iris:transpose { backend = "cpu", reps = 0, switches = { ["transpose.tile"] = false } } end, "reps")
  eq(gwb.switches("transpose.tile"), true)
  -- per call beats global
  local old = gwb.switches { ["transpose.tile"] = false }
  eq(iris:transpose { backend = "cpu", reps = 1 }.kernel, "naive", "global off")
  eq(iris:transpose { backend = "cpu", reps = 1, switches = { ["transpose.tile"] = true } }.kernel, "blocked",
    "the call's setting wins over the global one")
  gwb.switches(old)
  -- the caller's options table is not changed
  local o = { trees = 2, progress = false, switches = { ["rf.subtract"] = false } }
  rf.train(iris, o)
  eq(o.switches["rf.subtract"], false)
  -- help texts survive the wrapper and mention the switches
  local h = gwb.helpentry("rf.train")
  ok(h and h.text:find("opts.switches", 1, true), "rf.train's help mentions opts.switches")
end)

test("rf.subtract and rf.rowmajor off on the CPU trainer: the same trees", function()
  local reg = data.synth { kind = "friedman1", rows = 600, seed = 5 }
  for _, d in ipairs { iris, reg } do
    local base = rf.train(d, { trees = 6, seed = 7, progress = false, backend = "cpu", max_features = "all" })
    for _, sw in ipairs { "rf.subtract", "rf.rowmajor" } do
      gwb._ablate.reads(true)
      local f = rf.train(d, { trees = 6, seed = 7, progress = false, backend = "cpu", max_features = "all",
        switches = { [sw] = false } })
      ok(gwb._ablate.reads()[sw] > 0, sw .. ": the CPU trainer consulted it")
      local same, detail = gwb._ablate.compare(base, f)
      ok(same, sw .. " off: " .. detail)
    end
    local other = rf.train(d, { trees = 6, seed = 8, progress = false, backend = "cpu", max_features = "all" })
    local same, detail = gwb._ablate.compare(base, other)
    ok(not same and detail:find("trees differ", 1, true), "another seed: " .. detail)
  end
end)

test("csv.fast and csv.parallel off give the same Dataset", function()
  local path = T.tmpdir() .. "/sw_numbers.csv"
  local fh = assert(io.open(path, "w"))
  fh:write("a,b,c,y\n")
  for i = 1, 3000 do fh:write(string.format("%d.25,%g,%d,%d\n", i, i / 7, i % 13, i % 3)) end
  fh:close()
  local base = data.load(path)
  for _, sw in ipairs { "csv.fast", "csv.parallel" } do
    local d = data.load(path, { switches = { [sw] = false } })
    local same, detail = gwb._ablate.compare(base, d)
    ok(same, sw .. ": " .. tostring(detail))
  end
  gwb._ablate.reads(true)
  data.load(path)
  local reads = gwb._ablate.reads()
  ok(reads["csv.fast"] > 0, "csv.fast consulted")
  eq(reads["csv.parallel"], 0, "csv.parallel only for files of 4 MiB and more")
  -- a value that differs is caught
  local other = data.load(path, { target = "a" })
  ok(not gwb._ablate.compare(base, other), "different datasets differ")
  os.remove(path)
end)

test("eig.chebyshev and eig.mixed off on the CPU: values within the solvers' tolerance", function()
  local A = mat.laplacian2d(30, { sparse = true })
  local e1 = eig.solve(A, { k = 4, which = "smallest", method = "chebyshev", backend = "cpu" })
  local e2 = eig.solve(A, { k = 4, which = "smallest", method = "chebyshev", backend = "cpu",
    switches = { ["eig.chebyshev"] = false } })
  ok(e2.method:find("lanczos"), "the Lanczos path ran: " .. e2.method)
  ok(e1.method:find("chebyshev"), e1.method)
  local same, detail = gwb._ablate.compare(e1, e2)
  ok(same, detail)
  local B = mat.randn(40, 40, { seed = 3, sym = true })
  local m1 = eig.solve(B, { method = "mixed", backend = "cpu" })
  local m2 = eig.solve(B, { method = "mixed", backend = "cpu", switches = { ["eig.mixed"] = false } })
  ok(m1.method:find("refine"), m1.method)
  ok(not m2.method:find("refine"), "the f64 solve ran: " .. m2.method)
  ok((gwb._ablate.compare(m1, m2)), "mixed against f64")
end)

test("the old environment variables map onto the switches", function()
  -- each child process sets one variable; the switch reads it (source "env")
  local cases = { { "GWB_RF_SUBTRACT=0", "rf.subtract" }, { "GWB_RF_ROWMAJOR=0", "rf.rowmajor" },
    { "GWB_RF_PREDICT_VOTE=atomic", "rf.predict_vote" }, { "GWB_EIG_COLMAJOR=1", "eig.rowmajor" },
    { "GWB_JACOBI_BLOCK=8", "jacobi.smem" } }
  for _, c in ipairs(cases) do
    local cmd = string.format("env GWB_NORC=1 %s %q -e %q 2>&1", c[1], GWB_BIN,
      string.format('for _, s in ipairs(gwb.switches()) do if s.name == "%s" then '
        .. 'print(s.on, s.source) end end', c[2]))
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    eq(out, "false\tenv\n", c[1])
  end
  local p = io.popen(string.format("env GWB_NORC=1 GWB_RF_SUBTRACT=0 %q -e %q 2>&1", GWB_BIN,
    'gwb.switches{["rf.subtract"] = true}; print(gwb.switches("rf.subtract"))'))
  eq(p:read("a"), "true\n", "gwb.switches{} beats the environment")
  p:close()
end)

test("gwb.ablate on the CPU: the table, measured rows, not-applicable rows, agreement", function()
  local r = gwb.ablate(function()
    return rf.train(iris, { trees = 8, seed = 2, progress = false, backend = "cpu" })
  end, { switches = { "rf.subtract", "rf.rowmajor", "transpose.pad", "eig.mixed" }, runs = 2,
    print = false, log = false })
  eq(r.ok, true)
  eq(#r.rows, 4)
  eq(r.rows[1].switch, "rf.subtract")
  eq(r.rows[1].measured, true)
  eq(r.rows[1].agree, true)
  ok(r.rows[1].check:find("same trees", 1, true), r.rows[1].check)
  ok(r.rows[1].wall_ms > 0 and r.rows[1].slowdown > 0, "timed")
  eq(r.rows[3].measured, false, "transpose.pad: not on the CPU")
  ok(r.rows[3].why:find("GPU only", 1, true), r.rows[3].why)
  eq(r.rows[4].measured, false, "eig.mixed: fn never reaches it")
  ok(r.rows[4].why:find("never reached", 1, true), r.rows[4].why)
  local t = r:table()
  for _, want in ipairs { "switch", "wall ms", "kernel ms", "slowdown", "(all on)", "rf.subtract off",
    "agrees: same trees", "not measured: GPU only" } do
    ok(t:find(want, 1, true), want .. " in\n" .. t)
  end
  ok(tostring(r):find("all results agree", 1, true), tostring(r))
  -- the ablation level is gone afterwards
  eq(gwb.switches("rf.subtract"), true)
  eq(row("rf.subtract").source, "default")
end)

test("gwb.ablate flags a result that changes with a switch, and wins over opts.switches", function()
  local r = gwb.ablate(function() return iris:transpose { backend = "cpu", reps = 1 }.kernel end,
    { switches = { "transpose.tile" }, runs = 1, print = false, log = false })
  eq(r.ok, false)
  eq(r.rows[1].agree, false)
  ok(r.rows[1].check:find('"blocked" against "naive"', 1, true), r.rows[1].check)
  ok(r:table():find("DIFFERS", 1, true), r:table())
  -- fn asking for the switch on in its own call still gets it off while it is ablated
  local r2 = gwb.ablate(function()
    return iris:transpose { backend = "cpu", reps = 1, switches = { ["transpose.tile"] = true } }.kernel
  end, { switches = { "transpose.tile" }, runs = 1, print = false, log = false })
  eq(r2.rows[1].agree, false, "the ablation's off wins")
  -- a custom check, and the error of fn propagates with the level cleared
  local r3 = gwb.ablate(function() return iris:transpose { backend = "cpu", reps = 1 }.kernel end,
    { switches = { "transpose.tile" }, runs = 1, print = false, log = false,
      check = function() return true, "custom" end })
  eq(r3.ok, true)
  eq(r3.rows[1].check, "custom")
  raises(function()
    gwb.ablate(function() error("boom") end, { switches = { "rf.subtract" }, print = false, log = false })
  end, "boom")
  eq(row("rf.subtract").source, "default")
  raises(function() gwb.ablate(42) end, "expected a function")
  raises(function() gwb.ablate(function() end, { runs = 0 }) end, "runs must be")
  raises(function() gwb.ablate(function() end, { bogus = 1 }) end, "unknown option 'bogus'")
end)

test("gwb.ablate compares plain values: numbers within tol, tables key by key", function()
  local same = require("gwb.ablate").same
  ok(same(1.0, 1.0 + 1e-12))
  ok(not same(1.0, 1.001))
  ok(same(1.0, 1.001, 0.01))
  ok(same({ a = 1, b = { 2, 3 } }, { a = 1, b = { 2, 3 } }))
  local o, d = same({ a = 1, b = { 2, 3 } }, { a = 1, b = { 2, 4 } })
  ok(not o and d:find("b[2]", 1, true), tostring(d))
  ok(not same(iris, 3))
  local big1, big2 = {}, {}
  for i = 1, 100000 do big1[i] = i; big2[i] = i end
  ok(same(big1, big2), "long arrays")
  big2[77777] = 0
  local o2, d2 = same(big1, big2)
  ok(not o2 and d2:find("[77777]", 1, true), tostring(d2))
  local o3, d3 = same({ 1, 2 }, { 1, 2, 3 })
  ok(not o3 and d3:find("2 against 3 items", 1, true), tostring(d3))
end)

test("gwb.ablate writes a run-log record", function()
  local path = os.getenv("GWB_RUNS")
  if not path then T.skip("GWB_RUNS is not set by the runner") end
  gwb.ablate(function() return rf.train(iris, { trees = 2, progress = false, backend = "cpu" }) end,
    { switches = { "rf.subtract" }, runs = 1, print = false, label = "test-ablate" })
  local recs = runs { kind = "gwb.ablate" }
  local last = recs[#recs]
  ok(last, "a gwb.ablate record")
  eq(last.params.label, "test-ablate")
  eq(last.metrics.rows[1].switch, "rf.subtract")
  eq(last.metrics.rows[1].agree, true)
end)
