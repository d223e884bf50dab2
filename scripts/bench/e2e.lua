-- e2e.lua - end to end on the GPU: the headline is the wall time of the Lua call, as a user
-- meets it, beside cupy / torch timed the same way on the same matrices in the same run
-- (scripts/bench/e2e_peers.py reads the .gwbm files written here). Two modes:
--   host:   the input is host-resident, as mat.* leaves it; timed for gwb: the call plus
--           e:to("cpu") when vectors are kept (the vectors on the host, as f64); for the peer:
--           asarray, the solve and the copy back of the same results;
--   device: the input is GPU-resident (A:to("gpu") before); timed: the call only (gwb's
--           vectors stay on the device, the peer's too).
-- Residual and orthogonality checks are on (the default) for gwb, off for the peers (they
-- have none). Median of 3 after a warm-up. The best of cupy and torch is the peer.
-- One line per case and mode, printed and appended to bench/results/e2e-<date>.txt:
--   e2e case=NAME mode=host|device gwb_s=... peer=NAME peer_s=... ratio=gwb/peer
--       kernel_ms=... transfer_ms=... host_ms=... target=... MET|MISSED
-- Targets (issue 12): dense eig.solve n = 8192 f64 and f32, all pairs: ratio <= 1.15 in both
-- modes; eig.batched with vectors: device <= 1.0, host <= 1.5; values only: <= 1.0 in both.
-- scripts/bench/e2e_rf.lua, when present, adds the random-forest cases: e2e.lua dofile()s it
-- last (scripts/bench/run skips it as a script of its own), with a global E2E = {emit, quick,
-- results, python, here}; E2E.emit{case =, mode = "host"|"device", gwb_s =, peer =, peer_s =,
-- kernel_ms =, transfer_ms =, host_ms =, target = (ratio bound or nil), extra = (string or
-- nil)} prints the line and appends it to the results file. GWB_BENCH_QUICK=1: small sizes.
-- GWB_PYTHON: the peers' python. GWB_E2E_PEERS=cupy,torch: which peers (default both);
-- GWB_E2E_PEER_BUDGET / GWB_E2E_PEER_SLOW: see e2e_peers.py. GWB_E2E_OUT: the results file.
-- GWB_E2E_CASES: space-separated case names to run (default all).
local quick = (os.getenv("GWB_BENCH_QUICK") or "") ~= "" and os.getenv("GWB_BENCH_QUICK") ~= "0"
local python = os.getenv("GWB_PYTHON") or "python3"
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "scripts/bench"

local ok_gpu, why = gpu.available()
if not ok_gpu then
  print("e2e: skipped: no GPU (" .. tostring(why) .. ")")
  return
end
local info = gpu.info()
local stamp = os.date("!%Y-%m-%d")
local results = os.getenv("GWB_E2E_OUT") or ("bench/results/e2e-" .. stamp .. ".txt")
local out = io.open(results, "a")

local function emit_raw(s)
  print(s)
  if out then out:write(s, "\n"); out:flush() end
end
emit_raw(("### %s UTC commit %s card %s (%d SMs, driver %s)%s"):format(os.date("!%Y-%m-%d %H:%M"),
  gwb.commit, info.name, info.sms, info.driver, quick and " QUICK sizes" or ""))

-- One result line. f: case, mode, gwb_s, peer, peer_s, kernel_ms, transfer_ms, host_ms,
-- target (ratio bound, may be nil), extra (string, may be nil).
local function emit(f)
  local ratio = f.peer_s and f.peer_s > 0 and f.gwb_s / f.peer_s or nil
  local verdict = ""
  if f.target and ratio then
    verdict = (" target<=%.2f %s"):format(f.target, ratio <= f.target and "MET" or "MISSED")
  end
  emit_raw(("e2e case=%s mode=%s gwb_s=%.4f peer=%s peer_s=%s ratio=%s kernel_ms=%.2f transfer_ms=%.2f host_ms=%.2f%s%s")
    :format(f.case, f.mode, f.gwb_s, f.peer or "none", f.peer_s and ("%.4f"):format(f.peer_s) or "n/a",
      ratio and ("%.3f"):format(ratio) or "n/a", f.kernel_ms or 0, f.transfer_ms or 0,
      f.host_ms or 0, verdict, f.extra and (" " .. f.extra) or ""))
end
E2E = { emit = emit, quick = quick, results = results, python = python, here = here }

local function wall_ms(fn)
  return gwb.bench(fn, { runs = 1, warmup = 0, log = false }).median_ms
end

local CASES
if quick then
  CASES = {
    { name = "solve1024f64", solve = true, n = 1024, dtype = "f64", vectors = true, t_host = 1.15, t_dev = 1.15 },
    { name = "solve1024f32", solve = true, n = 1024, dtype = "f32", vectors = true, t_host = 1.15, t_dev = 1.15 },
    { name = "b64f32v", count = 400, n = 64, dtype = "f32", vectors = true, t_host = 1.5, t_dev = 1.0 },
    { name = "b64f32", count = 400, n = 64, dtype = "f32", vectors = false, t_host = 1.0, t_dev = 1.0 },
    { name = "b128f64v", count = 100, n = 128, dtype = "f64", vectors = true, t_host = 1.5, t_dev = 1.0 },
  }
else
  CASES = {
    { name = "solve8192f64", solve = true, n = 8192, dtype = "f64", vectors = true, t_host = 1.15, t_dev = 1.15 },
    { name = "solve8192f32", solve = true, n = 8192, dtype = "f32", vectors = true, t_host = 1.15, t_dev = 1.15 },
  }
  for _, b in ipairs { { 4000, 64 }, { 1000, 128 }, { 250, 256 } } do
    for _, dt in ipairs { "f32", "f64" } do
      for _, v in ipairs { true, false } do
        CASES[#CASES + 1] = { name = ("b%d%s%s"):format(b[2], dt, v and "v" or ""), count = b[1], n = b[2],
          dtype = dt, vectors = v, t_host = v and 1.5 or 1.0, t_dev = 1.0 }
      end
    end
  end
end
local only = os.getenv("GWB_E2E_CASES")
if only and only ~= "" then
  local keep = {}
  for _, c in ipairs(CASES) do if (" " .. only .. " "):find(" " .. c.name .. " ", 1, true) then keep[#keep + 1] = c end end
  CASES = keep
end

-- The matrices, saved for the peers (one python process for all of them).
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local mats, args = {}, {}
print(("e2e: %d cases; making the matrices ..."):format(#CASES))
for _, c in ipairs(CASES) do
  local A
  if c.solve then
    A = mat.randn(c.n, c.n, { sym = true, dtype = c.dtype, seed = 1 })
  else
    A = mat.batch(c.count, c.n, { dtype = c.dtype, seed = 1 })
  end
  local key = c.name:gsub("v$", "")
  if not mats[key] then
    mats[key] = A
    A:save(dir .. "/" .. key .. ".gwbm")
  end
  c.A = mats[key]
  args[#args + 1] = ("%s=%s/%s.gwbm:%d"):format(c.name, dir, key, c.vectors and 1 or 0)
end


local function run_case(c, mode)
  local A = c.A
  if mode == "device" then A:to("gpu") else A:to("cpu") end
  local opts = { backend = "gpu", vectors = c.vectors }
  local function call()
    local e = c.solve and eig.solve(A, opts) or eig.batched(A, opts)
    if mode == "host" and c.vectors then e:to("cpu") end
    return e
  end
  local e0 = call()  -- warm-up
  e0 = nil
  collectgarbage()
  local runs = {}
  for _ = 1, 3 do
    local e
    local t = wall_ms(function() e = call() end)
    -- what the call itself did not time: the copy of the vectors to the host (host mode)
    -- (keep numbers, not the result: its device memory goes back to the pool for the next run)
    runs[#runs + 1] = { t = t, timing = e.timing, back = math.max(0, t - e.timing.total_ms),
      method = e.method, max_residual = e.max_residual }
    e = nil
    collectgarbage()
  end
  table.sort(runs, function(a, b) return a.t < b.t end)
  local r = runs[2]
  local tm = r.timing
  local transfer = tm.transfer_ms + r.back
  local kernel = tm.kernel_ms
  local extra = ("method=%s check_ms=%.2f max_residual=%s"):format(r.method, tm.check_ms,
    r.max_residual and ("%.1e"):format(r.max_residual) or "n/a")
  local rec = { case = c.name, mode = mode, gwb_s = r.t / 1e3, kernel_ms = kernel, transfer_ms = transfer,
    host_ms = math.max(0, r.t - kernel - transfer), target = mode == "host" and c.t_host or c.t_dev,
    extra = extra }
  print(("e2e-gwb case=%s mode=%s gwb_s=%.4f kernel_ms=%.2f transfer_ms=%.2f host_ms=%.2f %s"):format(
    rec.case, mode, rec.gwb_s, kernel, transfer, rec.host_ms, extra))
  runs = nil
  collectgarbage()
  return rec
end

-- gwb first (its lines print as they come), then the peers, then the table.
local recs = {}
for _, c in ipairs(CASES) do
  for _, mode in ipairs { "host", "device" } do
    local ok, r = pcall(run_case, c, mode)
    recs[#recs + 1] = ok and r or { case = c.name, mode = mode, error = tostring(r) }
  end
  c.A:to("cpu")
end
collectgarbage()
gpu.trim()
local peers = {}
do
  print("e2e: peers (cupy, torch) on the same matrices ...")
  local p = io.popen(("PYTHONUNBUFFERED=1 %s %s/e2e_peers.py %s 2>&1"):format(python, here, table.concat(args, " ")))
  for line in (p and p:lines() or function() return nil end) do
    print("  peer: " .. line)
    local rec = {}
    for k, v in line:gmatch("([%w_]+)=(%S+)") do rec[k] = tonumber(v) or v end
    if rec.case and rec.mode and rec.s then
      local key = rec.case .. "/" .. rec.mode
      if not peers[key] or rec.s < peers[key].s then peers[key] = { s = rec.s, peer = rec.peer } end
    elseif rec.case and rec.status then
      print(("e2e: peer %s for %s: %s (%s)"):format(rec.peer, rec.case, rec.status, tostring(rec.reason)))
    end
  end
  if p then p:close() end
end
os.execute("rm -rf " .. dir)
for _, r in ipairs(recs) do
  if r.error then
    emit_raw(("e2e case=%s mode=%s error=%q"):format(r.case, r.mode, r.error))
  else
    local peer = peers[r.case .. "/" .. r.mode]
    r.peer, r.peer_s = peer and peer.peer, peer and peer.s
    emit(r)
  end
end
mats, CASES = nil, nil
collectgarbage()

local rf = here .. "/e2e_rf.lua"
local f = io.open(rf, "r")
if f then
  f:close()
  local ok, err = pcall(dofile, rf)
  if not ok then emit_raw("e2e_rf.lua failed: " .. tostring(err)) end
end
if out then out:close() end
print("e2e: results appended to " .. results)
