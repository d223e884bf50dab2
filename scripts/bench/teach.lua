-- scripts/bench/teach.lua - every lesson of `teach`, as a class would see it, on this machine
-- (the GPU when there is one; the CPU otherwise). `make bench` / gpu-check keep the output:
-- bench/results holds the H200's. GWB_BENCH_QUICK=1: the lessons at small sizes.
local quick = os.getenv("GWB_BENCH_QUICK") == "1"
gwb.autodraw = false  -- the lessons are printed below; do not draw them as they are made too
local small = {
  memory = { reps = 1, max_bytes = 8 << 20, touched = 32 << 20, gpu_max_bytes = 256 << 20 },
  coalescing = { reps = 2, bytes = 16 << 20, rows = 1 << 18, gpu_bytes = 64 << 20, gpu_rows = 1 << 20 },
  banks = { reps = 2 },
  atomics = { reps = 2, rows = 1 << 18, gpu_rows = 1 << 22 },
  histogram = { reps = 2, rows = 1 << 16, gpu_rows = 1 << 20 },
  divergence = { reps = 2, elems = 1 << 20 },
  launch = { reps = 2, count = 200, cpu_count = 20 },
}
print(string.format("teach: every lesson%s; %s", quick and " (quick sizes)" or "",
  gpu.available() and ("GPU " .. gpu.info().name) or ("no GPU: " .. select(2, gpu.available()))))
print(tostring(teach()))
for _, name in ipairs { "transpose", "memory", "coalescing", "banks", "atomics", "histogram", "divergence", "launch" } do
  print(string.rep("=", 100))
  print("teach." .. name .. "()")
  print()
  local t0 = gwb.now and gwb.now() or os.clock()
  local ok, l = pcall(teach[name], quick and small[name] or (name == "transpose" and { rows = 4096 } or nil))
  if ok then print(tostring(l)) else print("FAILED: " .. tostring(l)) end
  print(string.format("(%.2f s)", (gwb.now and gwb.now() or os.clock()) - t0))
end
print(string.rep("=", 100))
print(tostring(teach.layout("rf_hist", { block = 256, rows = 1024 })))
print()
print(tostring(teach.layout("jacobi", { n = 64 })))
