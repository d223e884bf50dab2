-- scripts/panel-check.lua - run inside a terminal (scripts/panel-capture drives it in tmux):
-- GPU training and an eigen batch with the panel up, then a check that what the panel reads
-- agrees with the device: memory against cudaMemGetInfo (gpu.mem), each kernel's occupancy
-- column against cudaOccupancyMaxActiveBlocksPerMultiprocessor (gpu.occupancy). Writes
-- "panel-check: ..." lines to the file named by $PANEL_CHECK_OUT.
local out = assert(io.open(os.getenv("PANEL_CHECK_OUT") or "/tmp/panel-check.txt", "w"))
local function say(...) out:write(string.format(...), "\n"); out:flush() end
local ok, why = gpu.available()
if not ok then say("panel-check: no GPU: %s", why); out:close(); return end
gpu.reset()
local d = data.synth { kind = "classification", rows = 2000000, features = 64, informative = 32, classes = 2, seed = 1 }
local t0 = os.time()
local f = rf.train(d, { trees = 400, depth = 14, backend = "gpu", seed = 1 })
say("panel-check: rf.train gpu %d trees in %s s, oob %s", f.trees, os.time() - t0, tostring(f.oob))
local B = mat.batch(200000, 64, { seed = 1, dtype = "f32" })
local e = eig.batched(B, { backend = "gpu" })
say("panel-check: eig.batched 200000 x 64x64, max residual %.3g", e.max_residual or -1)
-- memory: the panel's snapshot vs cudaMemGetInfo
local s = panel.status()
local m = gpu.mem()
say("panel-check: memory panel total %d free %d ours %d | cudaMemGetInfo total %d free %d ours %d | %s",
  s.gpu.total, s.gpu.free, s.gpu.ours, m.total, m.free, m.ours,
  (s.gpu.total == m.total and math.abs(s.gpu.free - m.free) <= (64 << 20) and s.gpu.ours == m.ours) and "AGREE" or "DIFFER")
-- occupancy column vs the runtime's calculator, every kernel launched
local bad = 0
for _, k in ipairs(gpu.kernels()) do
  if k.block == "0x0x0" then goto continue end  -- a library call recorded as one (cub sort)
  local bx, by, bz = k.block:match("(%d+)x(%d+)x(%d+)")
  local threads = tonumber(bx) * tonumber(by) * tonumber(bz)
  local okk, o = pcall(gpu.occupancy, k.name, threads, { smem = k.smem - 0 })
  local agree = okk and o.runtime_blocks and math.abs(o.occupancy - k.occupancy) < 1e-9
  if not agree then bad = bad + 1 end
  say("panel-check: occupancy %-28s block %4d regs %3d smem %6d column %5.1f%% runtime %s calc %s %s",
    k.name, threads, k.regs, k.smem, k.occupancy * 100,
    okk and o.runtime_blocks and string.format("%.1f%%", o.occupancy * 100) or tostring(o),
    okk and string.format("%d blk (%s)", o.calculated_blocks, o.limited_by) or "-",
    agree and "AGREE" or "DIFFER")
  ::continue::
end
say("panel-check: %d kernels, %d disagree", #gpu.kernels(), bad)
out:close()
