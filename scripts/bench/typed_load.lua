-- typed_load.lua - issue 30's cost: data.load of a numeric CSV with its 64-bit columns (int64
-- ids and epoch seconds, float64 decimals: the default) against dtype = "f32" (float32 only,
-- what gwb read before), interleaved in one process, and the memory each holds.
--   gwb scripts/bench/typed_load.lua FILE.csv [THREADS] [ROUNDS]
--   gwb scripts/bench/typed_load.lua --write FILE.csv ROWS    write the file (8 columns, seed 1:
--                                      id, ts, a, b, c, d (decimals), k (0..99), y (0/1))
-- (scripts/bench/run skips it: it needs a file.)
local a1 = arg[1]
if a1 == "--write" then
  local path, rows = arg[2], tonumber(arg[3] or "2200000")
  local f = assert(io.open(path, "w"))
  f:write("id,ts,a,b,c,d,k,y\n")
  math.randomseed(1)
  local buf = {}
  for i = 0, rows - 1 do
    buf[#buf + 1] = string.format("%d,%d,%.4f,%.2f,%.6f,%.3f,%d,%d\n", 2000000000 + i * 7,
      1700000000 + i, math.random() * 100, math.random() * 1000, math.random() * 2 - 1,
      math.random(), math.random(0, 99), i % 2)
    if #buf == 100000 then f:write(table.concat(buf)); buf = {} end
  end
  f:write(table.concat(buf))
  f:close()
  return
end
local path = assert(a1, "usage: gwb scripts/bench/typed_load.lua FILE.csv [THREADS] [ROUNDS]")
local threads, rounds = tonumber(arg[2] or "0"), tonumber(arg[3] or "5")
local function load(f32)
  collectgarbage()
  local d = data.load(path, { target = "y", progress = false, threads = threads,
    dtype = f32 and "f32" or nil })
  local s, b = d.source.seconds, d.bytes
  d:close()
  return s, b
end
load(false)   -- the page cache
local res = { auto = {}, f32 = {} }
local bytes = {}
for _ = 1, rounds do
  for _, k in ipairs { "auto", "f32" } do
    local s, b = load(k == "f32")
    res[k][#res[k] + 1] = s
    bytes[k] = b
  end
end
for _, k in ipairs { "auto", "f32" } do
  table.sort(res[k])
  print(string.format("%-5s min %.3f s  median %.3f s  dataset %s", k, res[k][1],
    res[k][(#res[k] + 1) // 2], gwb.fmt_bytes(bytes[k])))
end
print(string.format("slowdown (median): %+.1f %%", 100 * (res.auto[(#res.auto + 1) // 2] /
  res.f32[(#res.f32 + 1) // 2] - 1)))
