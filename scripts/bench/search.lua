-- search.lua - rf.search against scikit-learn's GridSearchCV and against the 18 settings run as
-- separate rf.cv calls, same data, same grid, same run: a 3 x 3 x 2 grid (trees x depth x
-- max_features) with 5-fold CV and f1_macro, on synthetic classification (400,000 x 64 by
-- default; GWB_SEARCH_ROWS / GWB_SEARCH_FEATURES for smaller machines, GWB_BENCH_QUICK=1:
-- 20,000 x 16 and trees 10/20/30). The headline is the wall time of the Lua call. scikit-learn
-- uses every core (n_jobs = -1 per forest); when its search would take over 10 minutes
-- (GWB_SEARCH_PEER_BUDGET_S) its time is extrapolated from one fold per depth x max_features
-- at a few trees, and marked so. Targets on the H200 host: >= 200x scikit-learn (16 cores),
-- >= 3x the separate rf.cv calls. Environment: GWB_PYTHON, GWB_SEARCH_BACKEND (default auto),
-- GWB_SEARCH_SEPARATE=0 skips the separate rf.cv calls.
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
local ROWS = tonumber(os.getenv("GWB_SEARCH_ROWS") or "") or (quick and 20000 or 400000)
local FEATURES = tonumber(os.getenv("GWB_SEARCH_FEATURES") or "") or (quick and 16 or 64)
local TREES = quick and { 10, 20, 30 } or { 100, 200, 300 }
local DEPTHS, MFS = { 8, 12, 0 }, { "sqrt", 0.3 }
local backend = os.getenv("GWB_SEARCH_BACKEND") or "auto"
local python = os.getenv("GWB_PYTHON") or "python3"
local budget = tonumber(os.getenv("GWB_SEARCH_PEER_BUDGET_S") or "") or 600
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "scripts/bench"
local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local d = data.synth { kind = "classification", rows = ROWS, features = FEATURES,
  informative = math.max(2, FEATURES // 4), classes = 2, seed = 1 }
local grid = { trees = TREES, depth = DEPTHS, max_features = MFS }
-- refit = false: GridSearchCV runs with refit=False too; the wall time is the call's
local opts = { cv = 5, metric = "f1_macro", seed = 1, backend = backend, progress = false, refit = false }

print(string.format("search: %d x %d synthetic classification, grid trees {%s} x depth {%s} x "
  .. "max_features {%s} (18 settings), 5-fold CV, f1_macro, backend %s, %d cores", d.rows,
  d.features, table.concat(TREES, ","), table.concat(DEPTHS, ","), "sqrt,0.3", backend,
  gwb.cpu_count()))

local s = rf.search(d, grid, opts)
local ours = s.timing.total_ms / 1000
print(string.format("  %-34s %10.2f s  best f1_macro %.4f (%s)", "gwb rf.search", ours, s.best_mean,
  gwb.pretty(s.best)))

local sep
if os.getenv("GWB_SEARCH_SEPARATE") ~= "0" then
  local wall = 0
  for _, tr in ipairs(TREES) do
    for _, dp in ipairs(DEPTHS) do
      for _, mf in ipairs(MFS) do
        local cv = rf.cv(d, { folds = 5, metric = "f1_macro", seed = 1, backend = backend,
          progress = false, trees = tr, depth = dp == 0 and 64 or dp, max_features = mf })
        wall = wall + cv.timing.total_ms / 1000
      end
    end
  end
  sep = wall
  print(string.format("  %-34s %10.2f s  (rf.search is %.1fx faster; H200 target >= 3x)",
    "18 separate rf.cv calls", sep, sep / ours))
end

local tmp = os.tmpname() .. ".npy"
d:save(tmp)
local ok_py = os.execute(python .. " -c 'import sklearn, numpy' >/dev/null 2>&1")
if ok_py then
  local p = io.popen(string.format("%s %s %s %s %s %s %s 2>&1", python,
    sh_quote(here .. "/search_peers.py"), sh_quote(tmp), table.concat(TREES, ","),
    table.concat(DEPTHS, ","), "sqrt,0.3", tostring(budget)))
  local out = p:read("a")
  p:close()
  local peer = {}
  for k, v in out:gmatch("([%w_]+)=(%S+)") do peer[k] = tonumber(v) or v end
  if peer.wall_s then
    print(string.format("  %-34s %10.2f s%s  (rf.search is %.0fx faster; H200 target >= 200x)",
      "scikit-learn " .. tostring(peer.sklearn) .. " GridSearchCV (" .. tostring(peer.cores) .. " cores)",
      peer.wall_s, peer.extrapolated == 1 and " EXTRAPOLATED" or "", peer.wall_s / ours))
  else
    print("  scikit-learn: the run failed: " .. out:gsub("\n", " "):sub(1, 300))
  end
else
  print("  scikit-learn: peer not available (" .. python .. " cannot import sklearn)")
end
os.remove(tmp)
