-- scripts/demo.lua - a tour of gwb (run by `make demo`). It grows with the project.
local function section(t) print(("\n== %s %s"):format(t, ("="):rep(70 - #t))) end

section("gwb")
print("gwb " .. gwb.version .. " (commit " .. gwb.commit .. "), default backend " .. gwb.backend())
print("Everything here is plain Lua 5.4; type help() at the prompt for the whole API.")

section("The GPU")
local ok, why = gpu.available()
if ok then
  local i = gpu.info()
  print(("%s: compute capability %s, %d SMs, %.1f GiB, L2 %.0f MB, %d KB shared memory per block")
    :format(i.name, i.compute_capability, i.sms, i.memory_bytes / 2^30, i.l2_bytes / 1e6,
            i.smem_per_block_optin // 1024))
  local m = gpu.mem()
  print(("memory: %.1f GiB free of %.1f GiB"):format(m.free / 2^30, m.total / 2^30))
else
  print("no GPU here: " .. why)
  print("every operation also has a CPU backend, so the rest of the tour runs on the CPU.")
end

section("The REPL")
print("At the gwb> prompt: bare expressions print their values, tables are pretty-printed,")
print("a trailing ';' keeps a result quiet, Tab completes names, Ctrl-C stops long work.")
print("For example, the value of {b = 2, a = {1, 2, 3}} prints as:")
gwb.print_results({ b = 2, a = { 1, 2, 3 } })

print("\nThe demo is over. Start the REPL with: build/gwb")
