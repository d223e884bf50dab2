-- eig_sanitize.lua - small runs of every GPU eigensolver path, for compute-sanitizer
-- (memcheck, racecheck, synccheck): the Jacobi kernel in shared memory and blocked (force the
-- blocked variant on small orders with GWB_JACOBI_BLOCK=4), f32, f64, mixed, odd orders,
-- cuSOLVER batched, Xsyevd, Xsyevdx, gesvdj. Exits non-zero when a result is wrong.
local bad = 0
local function check(what, e, tol)
  local ok = e.max_residual and e.max_residual <= tol
  print(("%-40s %-45s residual %.2e %s"):format(what, e.method, e.max_residual or -1, ok and "ok" or "BAD"))
  if not ok then bad = bad + 1 end
end
for _, n in ipairs { 7, 24, 40 } do
  for _, dt in ipairs { "f32", "f64" } do
    local B = mat.batch(3, n, { dtype = dt, seed = n, spectrum = n == 24 and "clustered" or "randn" })
    check(("jacobi %s n=%d"):format(dt, n), eig.batched(B, { backend = "gpu", vectors = true }), dt == "f32" and 1e-4 or 1e-12)
    if dt == "f64" then
      check(("mixed n=%d"):format(n), eig.batched(B, { backend = "gpu", vectors = true, method = "mixed" }), 1e-12)
    end
    check(("cusolver %s n=%d"):format(dt, n), eig.batched(B, { method = "cusolver", vectors = true }), dt == "f32" and 1e-4 or 1e-12)
  end
end
local A = mat.randn(40, 40, { sym = true, seed = 3 })
check("Xsyevd n=40", eig.solve(A, { backend = "gpu" }), 1e-12)
check("Xsyevdx n=40 k=3 both", eig.solve(A, { backend = "gpu", k = 3, which = "both" }), 1e-12)
check("gesvdj 30x20", eig.svd(mat.randn(30, 20, { seed = 1 }), { backend = "gpu" }), 1e-12)
print(bad == 0 and "sanitize script: all results ok" or ("sanitize script: %d BAD"):format(bad))
os.exit(bad == 0 and 0 or 1)
