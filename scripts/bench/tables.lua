-- tables.lua - the table verbs as a user meets them: the wall time of the Lua call with the
-- data loaded (best of 3 after a warm-up), on 10M rows with 2 category keys (k1: G levels,
-- k2: 10) and 3 numeric columns, at G = 100 and G = 100,000 groups: filter + count, sort by
-- one and by two keys, group-by sum / mean / median by one key (k1: G groups) and by two
-- (k1, k2: up to 10 G groups), value_counts, and (at G = 100,000) a left join to a 100k-row
-- table of the k1 keys. polars and DuckDB run the same cases on the same files in the same run
-- at the same thread count (scripts/bench/tables_peers.py). Goal: no case slower than polars
-- (MET / MISSED per case). The keys are read as categories on every side that has them (polars
-- is given pl.Categorical, gwb categorical = {...}: at G = 100,000 the sampled k1 would
-- otherwise read as free text); DuckDB keeps VARCHAR.
-- Environment: GWB_BENCH_QUICK=1 (1M rows), GWB_BENCH_ROWS, GWB_BENCH_REPS (3), GWB_THREADS (the CPUs),
-- GWB_PYTHON (python3), GWB_BENCH_TMP (/tmp; ~0.9 GB of CSV).
-- GWB_BENCH_GPU=1: the device mode (issue 30): the table put on the GPU once (d:to("gpu")), each
-- case timed with backend = "gpu" (the Lua call's wall time, results back on the host; the join
-- runs on the CPU and is left out), group-bys both ways the device groups (a direct table and
-- sort-based: groups = "direct" | "sort"), beside polars on GWB_THREADS cores in the same run;
-- each case's memory floor (the bytes it must move through device memory, each input column
-- read once and each output written once, over the measured device copy rate of
-- gpu.bandwidth()) and the fraction of it reached. Goal there: every case >= 5x polars.
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
local rows = tonumber(os.getenv("GWB_BENCH_ROWS") or "") or (quick and 1000000 or 10000000)
local python = os.getenv("GWB_PYTHON") or "python3"
local tmp = os.getenv("GWB_BENCH_TMP") or "/tmp"
local threads = tonumber(os.getenv("GWB_THREADS") or "") or gwb.cpu_count and gwb.cpu_count() or 2
local reps = tonumber(os.getenv("GWB_BENCH_REPS") or "") or 3
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "scripts/bench"
local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- the data: written once per size by numpy and polars (the same files every side reads)
local function make(G)
  local path = string.format("%s/gwb-bench-tables-%d-%d.csv", tmp, rows, G)
  local right = string.format("%s/gwb-bench-tables-right-%d.csv", tmp, G)
  local f = io.open(path)
  if f then f:close() return path, right end
  local code = string.format([[
import numpy as np, polars as pl
rng = np.random.default_rng(1)
n, G = %d, %d
k1 = np.array(["g%%06d" %% i for i in range(G)])
k2 = np.array(["c%%d" %% i for i in range(10)])
pl.DataFrame({"k1": k1[rng.integers(0, G, n)], "k2": k2[rng.integers(0, 10, n)],
              "v1": rng.integers(0, 1000, n).astype(float),
              "v2": np.round(rng.normal(100, 15, n), 2),
              "v3": np.round(rng.uniform(0, 1, n), 4)}).write_csv(%q)
pl.DataFrame({"k1": k1, "w": np.round(rng.uniform(0, 10, G), 3)}).write_csv(%q)
]], rows, G, path, right)
  local pf = tmp .. "/gwb-bench-tables-make.py"
  local h = assert(io.open(pf, "w"))
  h:write(code)
  h:close()
  assert(os.execute(python .. " " .. sh_quote(pf)), "tables.lua: writing the data needs numpy and polars")
  return path, right
end

local function best(fn)
  return gwb.bench(fn, { runs = reps, warmup = 1, log = false }).min_ms
end

local cases = {
  { "filter_count", "filter + count", function(d) return d:filter("v1 > 500 & k2 == 'c3'").rows end },
  { "sort_1", "sort by v2", function(d) return d:sort("v2") end },
  { "sort_2", "sort by k1, v2", function(d) return d:sort { "k1", "v2" } end },
  { "sum_1", "group_by k1: sum", function(d) return d:group_by("k1"):agg { s = "sum(v1)" } end },
  { "mean_1", "group_by k1: mean", function(d) return d:group_by("k1"):agg { m = "mean(v2)" } end },
  { "median_1", "group_by k1: median", function(d) return d:group_by("k1"):agg { md = "median(v3)" } end },
  { "sum_2", "group_by k1, k2: sum", function(d) return d:group_by { "k1", "k2" }:agg { s = "sum(v1)" } end },
  { "mean_2", "group_by k1, k2: mean", function(d) return d:group_by { "k1", "k2" }:agg { m = "mean(v2)" } end },
  { "median_2", "group_by k1, k2: median", function(d) return d:group_by { "k1", "k2" }:agg { md = "median(v3)" } end },
  { "value_counts", "value_counts k1", function(d) return d:value_counts("k1") end },
  { "join_left", "left join on k1 (100k)", function(d, r) return d:join(r, { on = "k1", how = "left" }) end },
}

if os.getenv("GWB_BENCH_GPU") == "1" then
  -- bytes a case must move at least: N rows of 36 bytes (k1, k2: float32 codes; v1, v2: float64;
  -- v3, the target: float32); a sort reads its keys and the table and writes the table
  local ROW = 4 + 4 + 8 + 8 + 4
  local gcases = {
    { "filter_count", "filter + count", function(d, o) return d:filter("v1 > 500 & k2 == 'c3'", o).rows end,
      function(N, k) return N * 12 + k * 2 * ROW end },
    { "sort_1", "sort by v2", function(d, o) return d:sort("v2", o) end, function(N) return N * (8 + 2 * ROW) end },
    { "sort_2", "sort by k1, v2", function(d, o) return d:sort({ "k1", "v2" }, o) end,
      function(N) return N * (12 + 2 * ROW) end },
    { "sum_1", "group_by k1: sum", function(d, o) return d:group_by("k1", o):agg { s = "sum(v1)" } end,
      function(N) return N * 12 end, true },
    { "mean_1", "group_by k1: mean", function(d, o) return d:group_by("k1", o):agg { m = "mean(v2)" } end,
      function(N) return N * 12 end, true },
    { "median_1", "group_by k1: median", function(d, o) return d:group_by("k1", o):agg { md = "median(v3)" } end,
      function(N) return N * 8 end, true },
    { "sum_2", "group_by k1, k2: sum", function(d, o) return d:group_by({ "k1", "k2" }, o):agg { s = "sum(v1)" } end,
      function(N) return N * 16 end, true },
    { "mean_2", "group_by k1, k2: mean", function(d, o) return d:group_by({ "k1", "k2" }, o):agg { m = "mean(v2)" } end,
      function(N) return N * 16 end, true },
    { "median_2", "group_by k1, k2: median", function(d, o) return d:group_by({ "k1", "k2" }, o):agg { md = "median(v3)" } end,
      function(N) return N * 12 end, true },
    { "value_counts", "value_counts k1", function(d, o) return d:value_counts("k1", o) end, function(N) return N * 4 end },
  }
  local info = gpu.info and gpu.info() or {}
  local bw = gpu.bandwidth { log = false }
  local rate = bw.d2d_gbps * 1e9   -- bytes read + written per second
  print(string.format("tables.lua GWB_BENCH_GPU=1: %d rows, table on the GPU, best of %d; polars on %d threads; "
    .. "gwb %s (%s)", rows, reps, threads, gwb.version or "?", gwb.commit or "?"))
  print(string.format("device: %s; device copy %.0f GB/s (%.0f%% of the %.0f GB/s DRAM peak): the floors below use it",
    tostring(info.name or bw.device), bw.d2d_gbps, 100 * bw.d2d_fraction_of_peak, bw.dram_peak_gbps))
  local worst, worst_case = math.huge, "-"
  for _, G in ipairs { 100, 100000 } do
    local path = make(G)
    local d = data.load(path, { target = "v3" })
    d:to("gpu")
    local p = io.popen(string.format("GWB_BENCH_PEERS=polars %s %s %s - %d %d", python,
      sh_quote(here .. "/tables_peers.py"), sh_quote(path), threads, reps))
    local peers = {}
    for line in p:lines() do
      local c, a = line:match("^(%S+) (%S+) %S+$")
      if c then peers[c] = tonumber(a) end
    end
    p:close()
    local kept = d:filter("v1 > 500 & k2 == 'c3'", { backend = "gpu" }).rows
    print(string.format("\nG = %d groups (k1), %d rows on the GPU", G, d.rows))
    print(string.format("  %-26s %-7s %9s %10s %9s %9s %7s  %s", "case", "groups", "gwb ms", "polars ms",
      "vs polars", "floor ms", "floor%", "backend"))
    for _, c in ipairs(gcases) do
      for _, how in ipairs((c[1] ~= "join_left" or r) and (c[5] and { "direct", "sort" } or { "-" }) or {}) do
        local o = { backend = "gpu", groups = how ~= "-" and how or nil }
        local ms = best(function() return c[3](d, o, r) end)
        local rl = runs { kind = "data." .. (c[1]:match("^filter") and "filter" or c[1]:match("^sort") and "sort"
          or c[1] == "value_counts" and "value_counts" or c[1] == "join_left" and "join" or "group_by") }
        local be = c[1] == "join_left" and "cpu" or rl[#rl] and rl[#rl].backend or "?"
        local pp = peers[c[1]] or 0 / 0
        local ratio = pp / ms
        local floor = c[4](d.rows, kept) / rate * 1e3
        if ratio == ratio and ratio < worst then worst, worst_case = ratio, c[1] .. " " .. how .. " G=" .. G end
        print(string.format("  %-26s %-7s %9.2f %10.1f %9s %9.3f %6.1f%%  %s", c[2], how, ms, pp,
          ratio == ratio and string.format("%.1fx", ratio) or "-", floor, 100 * floor / ms, be))
      end
    end
    d:to("cpu")
    d = nil
    collectgarbage()
  end
  print(string.format("\nslowest case against polars: %.2fx (%s; goal >= 5x)", worst, worst_case))
  return
end

print(string.format("tables.lua: %d rows, 2 category keys + 3 numeric columns, %d threads, best of %d; "
  .. "gwb %s (%s)", rows, threads, reps, gwb.version or "?", gwb.commit or "?"))
local worst, met, missed = math.huge, 0, 0
local function load_avg()
  local f = io.open("/proc/loadavg")
  local l = f and f:read("l") or "?"
  if f then f:close() end
  return l:match("^(%S+ %S+ %S+)") or l
end
print("load average at the start: " .. load_avg())
for _, G in ipairs { 100, 100000 } do
  local path, right = make(G)
  -- v3 is a column like the others to the verbs
  local d = data.load(path, { target = "v3", categorical = { "k1", "k2" } })
  local r = G == 100000 and data.load(right, { target = "w", categorical = { "k1" } }) or nil
  local p = io.popen(string.format("%s %s %s %s %d %d", python, sh_quote(here .. "/tables_peers.py"),
    sh_quote(path), r and sh_quote(right) or "-", threads, reps))
  local peers = {}
  for line in p:lines() do
    local c, a, b = line:match("^(%S+) (%S+) (%S+)$")
    if c then peers[c] = { tonumber(a) or 0 / 0, tonumber(b) or 0 / 0 } end
  end
  p:close()
  print(string.format("\nG = %d groups (k1), %d rows (load average %s)", G, d.rows, load_avg()))
  print(string.format("  %-26s %10s %10s %10s  %-14s %s", "case", "gwb ms", "polars ms", "duckdb ms",
    "gwb vs polars", "goal"))
  for _, c in ipairs(cases) do
    if c[1] ~= "join_left" or r then
      local ms = best(function() return c[3](d, r) end)
      local pp = peers[c[1]] or { 0 / 0, 0 / 0 }
      local ratio = pp[1] / ms
      if ratio == ratio then worst = math.min(worst, ratio) end
      if ratio == ratio then
        if ratio >= 1 then met = met + 1 else missed = missed + 1 end
      end
      print(string.format("  %-26s %10.1f %10.1f %10.1f  %-14s %s", c[2], ms, pp[1], pp[2],
        ratio == ratio and string.format("%.2fx %s", ratio, ratio >= 1 and "faster" or "SLOWER") or "-",
        ratio ~= ratio and "-" or ratio >= 1 and "MET" or "MISSED"))
    end
  end
end
print(string.format("\nslowest case against polars: %.2fx (goal >= 1.00x); %d MET, %d MISSED", worst,
  met, missed))
print("load average at the end: " .. load_avg())
