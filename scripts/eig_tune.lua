-- eig_tune.lua - time the batched Jacobi kernel for one batch shape under the current
-- GWB_JACOBI_LANES / GWB_JACOBI_WARPS settings (the tuning knobs of kernels/jacobi.cu).
-- Usage: GWB_JACOBI_WARPS=8 gwb scripts/eig_tune.lua count n dtype [method]
local count, n, dtype, method = tonumber(arg[1]), tonumber(arg[2]), arg[3] or "f32", arg[4] or "jacobi"
local B = mat.batch(count, n, { dtype = dtype, seed = 1 })
local best, e
eig.batched(B, { backend = "gpu", method = method, residuals = false })
for _ = 1, 3 do
  e = eig.batched(B, { backend = "gpu", method = method, residuals = false })
  if not best or e.timing.kernel_ms < best then best = e.timing.kernel_ms end
end
local k = gpu.kernels()
local occ = k[1] and k[1].occupancy or 0
print(("tune %5d x %3d %s %-7s lanes=%-3s warps=%-3s %8.3f ms  sweeps %2d  occ %.2f regs %s  %s")
  :format(count, n, dtype, method, os.getenv("GWB_JACOBI_LANES") or "-", os.getenv("GWB_JACOBI_WARPS") or "-",
    best, e.sweeps, occ, k[1] and k[1].regs or "?", e.method))
