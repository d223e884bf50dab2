-- gwb/teach.lua - lessons that use the workbench's own kernels: how memory access patterns
-- decide speed (teach.transpose), what limits how many threads an SM runs at once
-- (teach.occupancy), and which thread touches which element (teach.layout).
-- Each returns a Lesson: the REPL prints its text; its fields hold the numbers.
local help = require "gwb.help"
local P = require "gwb.plot"

local M = {}

local Lesson = { __name = "gwb.Lesson" }
Lesson.__index = Lesson
function Lesson.__tostring(l) return table.concat(l.text, "\n") end

-- A lesson draws as it is made (gwb.draw): teach.transpose() shows in a script too.
local function lesson(text, data)
  data = data or {}
  data.text = text
  return gwb.draw(setmetatable(data, Lesson))
end

local function wrap(s, width)
  width = width or 78
  local out = {}
  for para in (s .. "\n"):gmatch("(.-)\n") do
    if para == "" then out[#out + 1] = "" else
      local line = ""
      for word in para:gmatch("%S+") do
        if #line + #word + 1 > width and #line > 0 then out[#out + 1] = line; line = word
        else line = (#line > 0 and line .. " " or line) .. word end
      end
      out[#out + 1] = line
    end
  end
  return out
end

local function append(dst, lines) for _, l in ipairs(lines) do dst[#dst + 1] = l end end

-- --- teach.transpose -----------------------------------------------------------------------

function M.transpose(opts)
  opts = opts or {}
  local rows = opts.rows or 4096
  local cols = opts.cols or rows
  local m = teach.measure_transpose(rows, cols, { reps = opts.reps or 5, gpu = opts.gpu })
  local t = {}
  local mb = m.bytes / 2 ^ 20
  t[#t + 1] = string.format("Transposing a %d x %d float32 table (%.0f MB in, %.0f MB out)", rows, cols, mb, mb)
  t[#t + 1] = ""
  append(t, wrap("A transpose does no arithmetic: it only moves bytes, so its speed is set by how "
    .. "well the memory system is used. Every element is read once and written once, so the "
    .. "best possible time is 2 x size / memory bandwidth. GB/s below counts exactly those bytes."))
  t[#t + 1] = ""
  local bars, names = {}, {}
  local function row(where, name, r, what)
    if not r then return end
    t[#t + 1] = string.format("  %-4s %-8s %10.3f ms %9.1f GB/s  %s%s", where, name, r.ms, r.gbps,
      what, r.correct == false and "  (WRONG RESULT)" or "")
    bars[#bars + 1] = { where .. " " .. name, r.gbps }
    names[#names + 1] = name
  end
  t[#t + 1] = "  where kernel          time         speed  idea"
  row("cpu", "naive", m.cpu.naive, "for r, for c: out[c][r] = in[r][c]")
  row("cpu", "blocked", m.cpu.blocked, "32x32 blocks that stay in cache")
  row("cpu", "threads", m.cpu.threads, "the blocks spread over " .. (m.cpu.threads.threads or "?") .. " cores")
  if m.gpu then
    row("gpu", "naive", m.gpu.naive, "a thread per element; writes strided")
    row("gpu", "tiled", m.gpu.tiled, "32x32 tile in shared memory")
    row("gpu", "padded", m.gpu.padded, "tile of 32x33: no bank conflicts")
    t[#t + 1] = string.format("  gpu  copy     %29.1f GB/s  cudaMemcpy device to device: the ceiling", m.gpu.copy_gbps)
  end
  t[#t + 1] = ""
  append(t, P.bar(bars, { width = 72, unit = " GB/s", format = "%.1f" }).lines)
  t[#t + 1] = ""
  append(t, wrap("Why the naive versions are slow. Memory moves in lines (64 bytes on a CPU, 32-byte "
    .. "sectors on a GPU). Reading a row is sequential, so every byte of each line is used. "
    .. "Writing a column jumps `rows` floats between consecutive elements: each write touches a "
    .. "different line, and most of every line is wasted. On the GPU a warp is 32 threads that "
    .. "issue their loads and stores together; when they touch 32 neighbouring floats the hardware "
    .. "coalesces them into a few transactions, when they touch 32 different rows it needs 32."))
  t[#t + 1] = ""
  append(t, wrap("The tiled kernel. Each block reads a 32x32 tile with coalesced loads (threads "
    .. "along a row), stores it in shared memory, waits (__syncthreads), then writes the tile out "
    .. "transposed, again along rows of the output, so both global reads and writes are coalesced. "
    .. "The transposition happens in shared memory, which is fast at any access pattern but one."))
  t[#t + 1] = ""
  append(t, wrap("Bank conflicts and the padded kernel. Shared memory is split into 32 banks of 4 "
    .. "bytes; address a sits in bank (a / 4) mod 32, and a warp is served in one step only if its "
    .. "32 threads hit 32 different banks. A 32x32 float tile has rows 32 floats = 128 bytes long, "
    .. "so every element of a column is in the same bank: reading a column is a 32-way conflict, "
    .. "served in 32 steps. Declaring the tile 32x33 shifts each row by one bank, so a column's 32 "
    .. "elements land in 32 different banks and the conflict disappears, for the cost of 32 unused "
    .. "floats per tile."))
  if m.gpu then
    local nv, tl, pd = m.gpu.naive.gbps, m.gpu.tiled.gbps, m.gpu.padded.gbps
    t[#t + 1] = ""
    t[#t + 1] = string.format("On %s: tiled is %.1fx naive, padded %.2fx tiled, and padded reaches %.0f%% of a plain copy.",
      m.gpu.device or "this GPU", tl / nv, pd / tl, 100 * pd / m.gpu.copy_gbps)
    t[#t + 1] = "See the launches, their occupancy and GB/s: gpu.kernels() (or panel.on() first)."
  else
    t[#t + 1] = ""
    append(t, wrap("No GPU here (" .. tostring(m.gpu_reason) .. "), so only the CPU numbers were "
      .. "measured; the same story holds: blocked is faster than naive because it uses whole cache "
      .. "lines on both sides. On a machine with a GPU, teach.transpose() adds the three kernels."))
  end
  return lesson(t, m)
end

-- --- teach.occupancy -----------------------------------------------------------------------

function M.occupancy(kernel, opts)
  opts = opts or {}
  if kernel == nil then
    error("teach.occupancy(kernel): name one of gwb's kernels (gpu.occupancy() lists those "
      .. "launched so far) or describe one: teach.occupancy{regs = 64, smem = 16384}", 2)
  end
  local sizes = opts.blocks
  if not sizes then
    sizes = {}
    for b = 32, 1024, 32 do sizes[#sizes + 1] = b end
  end
  local rows, best, impossible = {}, nil, {}
  local function better(r)
    if not best or r.occupancy > best.occupancy + 1e-12 then return true end
    -- a tie: the size nearer 256 threads (enough warps per block, small enough to schedule)
    return math.abs(r.occupancy - best.occupancy) <= 1e-12 and
      math.abs(math.log(r.block / 256)) < math.abs(math.log(best.block / 256))
  end
  for _, b in ipairs(sizes) do
    local ok, r = pcall(gpu.occupancy, kernel, b, opts.smem and { smem = opts.smem } or nil)
    if ok then
      rows[#rows + 1] = r
      if better(r) then best = r end
    elseif type(r) == "string" and (r:find("cannot run", 1, true) or r:find("block must be", 1, true)
        or r:find("at most", 1, true)) then
      impossible[#impossible + 1] = b
    else
      error(r, 2)
    end
  end
  if #rows == 0 then error("teach.occupancy: no block size in the list is possible for this kernel", 2) end
  local r0 = rows[1]
  local name = type(kernel) == "string" and kernel or (kernel.name or "your kernel")
  local t = {}
  t[#t + 1] = string.format("Occupancy of %s (%d registers/thread, %d bytes shared memory/block) on %s",
    name, r0.regs, r0.smem, r0.device)
  t[#t + 1] = ""
  append(t, wrap("An SM (streaming multiprocessor) keeps many warps (groups of 32 threads) resident "
    .. "at once and switches between them every cycle, hiding the time each one waits for memory. "
    .. "Occupancy is the fraction of the SM's warp slots (" .. r0.max_warps .. " here) that a kernel "
    .. "can fill. Four things cap it: warps (the slots themselves), registers (each thread's "
    .. "registers come from one register file per SM), shared memory (one pool per SM, shared by "
    .. "the resident blocks) and blocks (a fixed maximum of blocks per SM). The smallest wins."))
  t[#t + 1] = ""
  t[#t + 1] = "  block  occupancy                                             blocks/SM  limited by"
  local barw = 44
  for _, r in ipairs(rows) do
    local cells = r.occupancy * barw
    local full = math.floor(cells + 0.5)
    local bar = string.rep(P.ascii and "#" or "█", full) .. string.rep(P.ascii and "." or "·", barw - full)
    t[#t + 1] = string.format("  %5d  %s %4.0f%%  %9d  %s%s", r.block, bar, r.occupancy * 100,
      r.active_blocks, r.limited_by, r == best and "  <- best" or "")
  end
  if #impossible > 0 then
    t[#t + 1] = string.format("  %s: cannot launch at all (one block needs more than the SM has)",
      #impossible == 1 and tostring(impossible[1]) or (impossible[1] .. ".." .. impossible[#impossible]))
  end
  t[#t + 1] = ""
  local why = {
    warps = "the warp slots themselves: the kernel is as resident as it can be at this size.",
    registers = "registers: fewer registers per thread (simpler code, __launch_bounds__, or "
      .. "-maxrregcount) would let more warps in.",
    ["shared memory"] = "shared memory: each block asks for so much that few blocks fit; smaller "
      .. "tiles, or less shared memory per block, raise it.",
    blocks = "the blocks-per-SM cap: blocks this small cannot fill the SM; use bigger blocks.",
  }
  append(t, wrap(string.format("Best: %d threads per block, %.0f%% occupancy, limited by %s",
    best.block, best.occupancy * 100, why[best.limited_by] or best.limited_by)))
  t[#t + 1] = ""
  append(t, wrap("Higher occupancy is not always faster: a kernel that keeps data in registers or "
    .. "shared memory may win at 50%. Occupancy matters most for memory-bound kernels, which need "
    .. "many warps in flight to hide memory latency. gpu.occupancy(kernel, block).limits shows each "
    .. "resource's cap in blocks for one size."))
  if r0.reference then
    t[#t + 1] = ""
    t[#t + 1] = "(No GPU here: the limits are those of a reference sm_90 part, H100/H200.)"
  end
  return lesson(t, { rows = rows, best = best })
end

-- --- teach.layout --------------------------------------------------------------------------

local function dims(v, what)
  if type(v) == "number" then return math.floor(v), 1 end
  if type(v) == "table" then return math.floor(v.x or v[1] or 1), math.floor(v.y or v[2] or 1) end
  error("teach.layout: " .. what .. " must be a number or {x, y}, got " .. type(v), 3)
end

local SYMS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

function M.layout(grid, block, opts)
  opts = opts or {}
  local gx, gy = dims(grid, "grid")
  local bx, by = dims(block, "block")
  if gx < 1 or gy < 1 or bx < 1 or by < 1 then error("teach.layout: sizes must be >= 1", 2) end
  if bx * by > 1024 then error("teach.layout: a block has at most 1024 threads (got " .. bx * by .. ")", 2) end
  local W, H = gx * bx, gy * by            -- elements, one per thread
  local maxw, maxh = opts.width or 64, opts.height or 16
  local t = {}
  t[#t + 1] = string.format("grid = {%d, %d} blocks of block = {%d, %d} threads: %d threads for a %d x %d array",
    gx, gy, bx, by, W * H, H, W)
  t[#t + 1] = ""
  append(t, wrap("Each thread computes its element from its coordinates: column = blockIdx.x * "
    .. "blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y, and (row-major) "
    .. "index = row * width + column. Neighbouring threadIdx.x are neighbouring columns, so a "
    .. "warp (32 consecutive threads of a block, x fastest) touches consecutive addresses: the "
    .. "access is coalesced."))
  t[#t + 1] = ""
  local shw, shh = math.min(W, maxw), math.min(H, maxh)
  t[#t + 1] = string.format("Which block touches each element (a letter per block%s):",
    (shw < W or shh < H) and string.format("; the first %d x %d elements", shh, shw) or "")
  for r = 0, shh - 1 do
    local line = {}
    for c = 0, shw - 1 do
      local b = (r // by) * gx + (c // bx)
      line[#line + 1] = SYMS:sub(b % #SYMS + 1, b % #SYMS + 1)
    end
    t[#t + 1] = "  " .. table.concat(line)
  end
  t[#t + 1] = ""
  t[#t + 1] = "Which warp of its block (0-9, then a-z) each element's thread belongs to:"
  for r = 0, shh - 1 do
    local line = {}
    for c = 0, shw - 1 do
      local tid = (r % by) * bx + (c % bx)
      local w = tid // 32
      line[#line + 1] = w < 10 and tostring(w) or string.char(87 + math.min(w, 35))
    end
    t[#t + 1] = "  " .. table.concat(line)
  end
  t[#t + 1] = ""
  -- one worked example: the last element shown
  local er, ec = opts.row or (shh - 1), opts.col or (shw - 1)
  if er >= H or ec >= W or er < 0 or ec < 0 then
    error(string.format("teach.layout: element (%d, %d) is outside the %d x %d array", er, ec, H, W), 2)
  end
  local bxi, byi, txi, tyi = ec // bx, er // by, ec % bx, er % by
  t[#t + 1] = string.format("Element (row %d, col %d): blockIdx = (%d, %d), threadIdx = (%d, %d), "
    .. "thread %d of its block, warp %d, lane %d; index %d.", er, ec, bxi, byi, txi, tyi,
    tyi * bx + txi, (tyi * bx + txi) // 32, (tyi * bx + txi) % 32, er * W + ec)
  if bx % 32 ~= 0 and bx * by >= 32 then
    t[#t + 1] = ""
    append(t, wrap(string.format("Note: blockDim.x = %d is not a multiple of 32, so a warp spans "
      .. "several rows and its addresses are not all contiguous; make blockDim.x a multiple of 32 "
      .. "(e.g. {32, %d}) for fully coalesced rows.", bx, math.max(1, (bx * by) // 32))))
  end
  if (bx * by) % 32 ~= 0 then
    t[#t + 1] = ""
    append(t, wrap(string.format("Note: %d threads per block is not a multiple of 32; the last warp "
      .. "of every block runs with %d idle lanes.", bx * by, 32 - (bx * by) % 32)))
  end
  return lesson(t, { grid = { gx, gy }, block = { bx, by }, width = W, height = H })
end

-- --- registration ---------------------------------------------------------------------------

if type(_G.teach) ~= "table" then _G.teach = {} end
teach.transpose = M.transpose
teach.occupancy = M.occupancy
teach.layout = M.layout

help.register(M.transpose, "teach.transpose",
  "teach.transpose([{rows = 4096, cols = rows, reps = 5, gpu = true}]) -> lesson\n"
  .. "A lesson on memory access: one table transposed by a naive loop and cache blocks on the\n"
  .. "CPU and, with a GPU, by three kernels side by side (naive: one thread per element;\n"
  .. "tiled: a 32x32 tile through shared memory; padded: the tile 32x33 wide), with their\n"
  .. "time, GB/s against a plain device copy, bars, and why: coalescing, cache lines, and\n"
  .. "shared-memory bank conflicts (and how one padding column removes them). Without a GPU\n"
  .. "it explains the same with the CPU numbers. The lesson's fields hold the measurements.\n"
  .. "Example: teach.transpose{rows = 2048}")
help.register(M.occupancy, "teach.occupancy",
  "teach.occupancy(kernel [, {blocks = {...}, smem = bytes}]) -> lesson\n"
  .. "A lesson on occupancy: for block sizes 32..1024 (or opts.blocks), how much of an SM's\n"
  .. "warp slots the kernel can fill, drawn as bars, with what limits it at each size (warps,\n"
  .. "registers, shared memory or the blocks-per-SM cap) and the best block size. kernel: the\n"
  .. "name of one of gwb's kernels after it ran (gpu.occupancy() lists them) or a description\n"
  .. "{regs = 64, smem = 16384} (without a GPU the limits of a reference sm_90 part are used).\n"
  .. "Example: teach.occupancy{regs = 96, smem = 0}")
help.register(M.layout, "teach.layout",
  "teach.layout(grid, block [, {width = 64, height = 16, row = r, col = c}]) -> lesson\n"
  .. "A lesson on thread indexing: for a grid of blocks (number or {x, y}) and a block of\n"
  .. "threads (number or {x, y}), draws which block and which warp touch each element of the\n"
  .. "array (one element per thread), works one element through blockIdx/threadIdx/lane/index,\n"
  .. "and points out layouts whose warps are not coalesced or have idle lanes.\n"
  .. "Example: teach.layout({4, 2}, {16, 4})")

return M
