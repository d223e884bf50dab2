-- rf_cpu.lua - random forest training on the CPU against scikit-learn, same machine, same run,
-- same threads: 100,000 x 32 synthetic classification, 80,000 training rows, 100 trees, depth
-- 10, 2 threads. The data comes from scripts/bench/rf_sklearn.py (make_classification) when
-- scikit-learn is importable, so both train on the same rows; otherwise from data.synth and
-- the peer is reported as not available. Goal: >= 5x faster than scikit-learn with n_jobs=2,
-- accuracy within 0.005. Environment: GWB_PYTHON (default python3), GWB_BENCH_THREADS (2).
local threads = tonumber(os.getenv("GWB_BENCH_THREADS") or "") or 2
local python = os.getenv("GWB_PYTHON") or "python3"
local ROWS, FEATURES, TRAIN, TREES, DEPTH = 100000, 32, 80000, 100, 10

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function peak_rss_mb()
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  local kb = s:match("VmHWM:%s*(%d+)")
  return kb and tonumber(kb) / 1024
end

local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "scripts/bench"
local peer, peer_why, d
local ok_py = os.execute(python .. " -c 'import sklearn, numpy' >/dev/null 2>&1")
if ok_py then
  local tmp = os.tmpname()
  local csv = tmp .. ".csv"
  local p = io.popen(python .. " " .. sh_quote(here .. "/rf_sklearn.py") .. " " .. sh_quote(csv)
    .. " " .. threads .. " 2>&1")
  local out = p:read("a")
  p:close()
  peer = {}
  for k, v in out:gmatch("([%w_]+)=(%S+)") do peer[k] = tonumber(v) or v end
  if not peer.fit_s then
    peer, peer_why = nil, "scikit-learn run failed: " .. out:gsub("\n", " "):sub(1, 200)
  end
  local okl, dl = pcall(data.load, csv, { target = "y", task = "classification" })
  if okl then d = dl else peer_why = (peer_why or "") .. " (data.load: " .. tostring(dl) .. ")" end
  os.remove(csv)
  os.remove(tmp)
else
  peer_why = "peer not available (" .. python .. " cannot import sklearn)"
end
if not d then
  d = data.synth { kind = "classification", rows = ROWS, features = FEATURES, informative = 16,
                   classes = 2, seed = 1 }
end

local tr, te = {}, {}
for i = 1, TRAIN do tr[i] = i end
for i = TRAIN + 1, d.rows do te[#te + 1] = i end
local train, test = d:take(tr), d:take(te)
tr, te = nil, nil
collectgarbage()

local opts = { trees = TREES, depth = DEPTH, threads = threads, backend = "cpu", seed = 1,
               progress = false }
local f = rf.train(train, opts)
local ours_s = f.timing.total_ms / 1000
local acc = f:score(test)
local mem = peak_rss_mb()
local work = TRAIN * FEATURES * TREES

print(string.format("rf_cpu: %d x %d synthetic classification, %d train rows, %d trees, depth %d, %d threads",
  d.rows, d.features, TRAIN, TREES, DEPTH, threads))
print(string.format("  %-22s %9s %9s %14s %10s", "", "train s", "accuracy", "rows*feat*trees/s", "peak MB"))
print(string.format("  %-22s %9.2f %9.4f %14.3g %10s", "gwb rf.train (cpu)", ours_s, acc, work / ours_s,
  mem and string.format("%.0f", mem) or "?"))
print(string.format("    phases: quantize %.0f ms, grow %.0f ms, oob %.0f ms; %d nodes, oob %.4f",
  f.timing.quantize_ms, f.timing.grow_ms, f.timing.oob_ms, f.nodes, f.oob or 0 / 0))
if peer then
  print(string.format("  %-22s %9.2f %9.4f %14.3g %10s", "scikit-learn " .. tostring(peer.sklearn),
    peer.fit_s, peer.acc, work / peer.fit_s, tostring(peer.peak_mb)))
  local speedup = peer.fit_s / ours_s
  print(string.format("  speedup %.1fx (goal >= 5x), accuracy difference %+.4f (goal within 0.005): %s",
    speedup, acc - peer.acc,
    (speedup >= 5 and math.abs(acc - peer.acc) <= 0.005) and "met" or "NOT met"))
else
  print("  scikit-learn: " .. tostring(peer_why))
end
