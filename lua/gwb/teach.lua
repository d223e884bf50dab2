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
-- A lesson's drawings (Plots) are kept in l.plots, in the order they print; l:save writes one
-- as a picture.
local function lesson(text, data)
  data = data or {}
  data.text = text
  data.plots = text.plots or {}
  text.plots = nil
  return gwb.draw(setmetatable(data, Lesson))
end

-- append plot p's text to the lesson text t and keep p for l:save
local function drawing(t, p)
  for _, l in ipairs(p.lines) do t[#t + 1] = l end
  t.plots = t.plots or {}
  t.plots[#t.plots + 1] = p
  return p
end

-- l:save(path [, {which = 1, width, height}]): drawing `which` of the lesson as a picture.
function Lesson.save(l, path, opts)
  if opts ~= nil and type(opts) ~= "table" then error("l:save: opts must be a table", 2) end
  opts = opts or {}
  local plots = rawget(l, "plots") or {}
  if #plots == 0 then
    error("l:save: this lesson draws no chart (its text is all there is); lessons with charts: "
      .. "transpose, occupancy, memory, coalescing, atomics, histogram, divergence", 2)
  end
  local which = opts.which or 1
  if math.type(which) ~= "integer" or which < 1 or which > #plots then
    error(string.format("l:save: which must be 1 to %d (this lesson draws %d chart%s)", #plots, #plots,
      #plots == 1 and "" or "s"), 2)
  end
  local o = {}
  for k, v in pairs(opts) do if k ~= "which" then o[k] = v end end
  P.save_model(plots[which].model, path, o, "l:save")
end
help.register(Lesson.save, "gwb.Lesson:save",
  "l:save(path [, {which = 1, width = 640, height = 480}])\n"
  .. "Save one of the lesson's charts (l.plots, in the order they print; which picks) as an\n"
  .. "SVG or PNG picture, as p:save does.\nExample: teach.transpose():save(\"transpose.svg\")")

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
  -- teach.transpose(n): an n x n table
  if math.type(opts) == "integer" or (type(opts) == "number" and opts == math.floor(opts)) then
    opts = { rows = math.tointeger(opts) or opts }
  elseif opts ~= nil and type(opts) ~= "table" then
    error(string.format("teach.transpose: give an options table {rows = 4096, cols, reps, gpu} "
      .. "or a whole number of rows (got %s)", type(opts) == "number" and tostring(opts) or type(opts)), 2)
  end
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
  drawing(t, P.bar(bars, { width = 72, unit = " GB/s", format = "%.1f" }))
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
  -- no argument: the forest's histogram kernel (its registers and shared memory are known
  -- from the build even without a GPU, gpu.occupancy says where from)
  if kernel == nil then kernel = "rf_hist" end
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
  -- the same bars as a chart for l:save (the text above draws them its own way)
  local occ = {}
  for _, r in ipairs(rows) do occ[#occ + 1] = { tostring(r.block), 100 * r.occupancy } end
  t.plots = { P.bar(occ, { sort = false, title = "occupancy of " .. name .. " by block size",
    xlabel = "occupancy (%)", ylabel = "threads per block" }) }
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
    if r0.source and r0.source:find("build table", 1, true) then
      append(t, wrap("(No GPU here: " .. kernel .. "'s registers and static shared memory are "
        .. "those its sm_90 build recorded (" .. r0.source:gsub("^build table %((.-)%)$", "%1")
        .. "), the limits those of a reference sm_90 part, H100/H200. The live parts need a GPU: "
        .. "the dynamic shared memory a real launch asks for (give it as {smem = bytes}) and the "
        .. "runtime's own occupancy answer.)"))
    else
      t[#t + 1] = "(No GPU here: the limits are those of a reference sm_90 part, H100/H200.)"
    end
  end
  return lesson(t, { rows = rows, best = best, source = r0.source })
end

-- --- teach.layout --------------------------------------------------------------------------

local function dims(v, what)
  if type(v) == "number" then return math.floor(v), 1 end
  if type(v) == "table" then return math.floor(v.x or v[1] or 1), math.floor(v.y or v[2] or 1) end
  error("teach.layout: " .. what .. " must be a number or {x, y}, got " .. type(v), 3)
end

local SYMS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

-- The forest's histogram kernel (kernels/rf_train.cu, k_hist / add_rows): which thread adds
-- which row of a node's chunk, and where its counts go in shared memory.
local function layout_rf_hist(opts)
  local block = math.floor(opts.block or 256)
  local R = math.floor(opts.rows or 1024)
  local F = math.floor(opts.features or 4)
  local B = math.floor(opts.bins or 64)
  local C = math.floor(opts.classes or 2)
  if block < 32 or block > 1024 or block % 32 ~= 0 then error("teach.layout(\"rf_hist\"): block must be a multiple of 32 in 32..1024", 3) end
  if R < 1 or R > 1 << 20 then error("teach.layout(\"rf_hist\"): rows must be 1..1048576", 3) end
  if F < 1 or F > 64 or B < 2 or B > 256 or C < 1 or C > 64 then
    error("teach.layout(\"rf_hist\"): features 1..64, bins 2..256, classes 1..64", 3)
  end
  local CH = C + 1
  local t = {}
  t[#t + 1] = string.format("The forest's histogram kernel rf_hist: a block of %d threads (%d warps) adds a chunk of %d rows of one node, %d features, %d bins, %d classes",
    block, block // 32, R, F, B, C)
  t[#t + 1] = ""
  append(t, wrap("Grid: blockIdx.x is a chunk of a node's rows (every node of the level, every tree of the batch "
    .. "are laid end to end), blockIdx.y a group of the features the node drew. Thread t takes rows t, t + "
    .. "blockDim, t + 2 blockDim, ... of the chunk: a warp reads 32 consecutive entries of the node's row list "
    .. "(coalesced), then for each feature the 32 rows' codes from the column-major codes, and adds one count "
    .. "(and one class weight) to the shared histogram with shared-memory atomics."))
  t[#t + 1] = ""
  t[#t + 1] = "Which warp adds each row of the chunk (0-9, then a-z), 64 rows a line; a line per pass of the block:"
  local shown = math.min(R, 4 * block)
  local line = {}
  local rowsmap = {}
  for i = 0, shown - 1 do
    local tid = i % block
    local w = tid // 32
    line[#line + 1] = w < 10 and tostring(w) or string.char(87 + math.min(w, 35))
    rowsmap[i + 1] = { thread = tid, warp = w, lane = tid % 32, pass = i // block }
    if #line == 64 or i == shown - 1 then t[#t + 1] = "  " .. table.concat(line); line = {} end
  end
  if shown < R then t[#t + 1] = string.format("  ... (%d more rows, the same pattern)", R - shown) end
  t[#t + 1] = ""
  local cells = B * CH
  t[#t + 1] = string.format("Shared histogram: h[(j * %d + code) * %d + channel], j = 0..%d the group's features; channel 0 counts rows, 1..%d the class weights.",
    B, CH, F - 1, C)
  t[#t + 1] = string.format("  one feature: %d bins x %d channels = %d floats; the group: %d floats = %.1f KB of shared memory per block",
    B, CH, cells, F * cells, F * cells * 4 / 1024)
  local i = math.min(R - 1, opts.row or 37)
  local tid = i % block
  t[#t + 1] = string.format("Row %d of the chunk: thread %d (warp %d, lane %d), pass %d; with code c for feature j it adds 1 to h[(j * %d + c) * %d] and its weight to h[(j * %d + c) * %d + 1 + y].",
    i, tid, tid // 32, tid % 32, i // block, B, CH, B, CH)
  t[#t + 1] = ""
  append(t, wrap("Two lanes that hold the same code for a feature hit the same shared address: their atomics "
    .. "are serialised (teach.atomics and teach.histogram measure this). More bins spread the rows over more "
    .. "addresses but make the histogram larger, which lowers the blocks per SM (gpu.occupancy(\"rf_hist\", 256))."))
  return lesson(t, { kernel = "rf_hist", block = block, rows = R, features = F, bins = B, classes = C,
    smem_bytes = F * cells * 4, map = rowsmap })
end

-- kernels/jacobi.cu's rr_pair: the round-robin pairing of m columns, round r, pair k.
local function rr_pair(r, k, m)
  if k == 0 then return m - 1, r end
  local p, q = r + k, r - k
  if p >= m - 1 then p = p - (m - 1) end
  if q < 0 then q = q + (m - 1) end
  return p, q
end

-- The batched Jacobi kernel (jacobi_os<T, L, R>): one block per matrix; a warp is 32 / L groups
-- of L lanes, a group rotates one pair of columns per step, lane lg holds rows lg + i L.
local function layout_jacobi(opts)
  local n = math.floor(opts.n or 16)
  if n < 2 or n > 1024 then error("teach.layout(\"jacobi\"): n must be 2..1024", 3) end
  local L = math.floor(opts.lanes or (n <= 64 and 4 or n <= 128 and 8 or n <= 256 and 16 or 32))
  if L ~= 4 and L ~= 8 and L ~= 16 and L ~= 32 then error("teach.layout(\"jacobi\"): lanes must be 4, 8, 16 or 32", 3) end
  local R = math.max(1, -(-n // L))
  local m = n + (n % 2)
  -- the default warps per block of kernels/jacobi.cu (f64; f32 takes 8 for 64 < n <= 128)
  local nw = math.floor(opts.warps or (n <= 64 and 4 or 16))
  if nw < 1 or nw > 32 then error("teach.layout(\"jacobi\"): warps must be 1..32", 3) end
  local round = math.floor(opts.round or 0)
  if round < 0 or round >= m - 1 then error(string.format("teach.layout(\"jacobi\"): round must be 0..%d", m - 2), 3) end
  local groups = nw * (32 // L)
  local t = {}
  t[#t + 1] = string.format("The batched Jacobi kernel for n = %d: one block of %d warps per matrix, %d lanes per column pair (%d groups per warp), %d rows per lane",
    n, nw, L, 32 // L, R)
  t[#t + 1] = ""
  append(t, wrap("One-sided Jacobi orthogonalises the columns of G (held in shared memory) by rotating pairs of "
    .. "columns. A sweep is m - 1 rounds; in each round the m columns are split into m / 2 disjoint pairs "
    .. "(round-robin), so every pair of a round can be rotated at the same time. A group of L lanes of one "
    .. "warp takes one pair: each lane holds R rows of both columns in registers, the group sums the dot "
    .. "product with shuffles, and the lanes apply the rotation to their rows."))
  t[#t + 1] = ""
  t[#t + 1] = string.format("Round %d: which warp and group rotates which pair of columns", round)
  local pairs = {}
  local k, step = 0, 0
  while k < m // 2 do
    for w = 0, nw - 1 do
      for g = 0, 32 // L - 1 do
        local kk = step * groups + w * (32 // L) + g
        if kk < m // 2 then
          local p, q = rr_pair(round, kk, m)
          local act = p < n and q < n
          pairs[#pairs + 1] = { pair = kk, p = p, q = q, warp = w, group = g, step = step, active = act }
          k = k + 1
        end
      end
    end
    step = step + 1
  end
  for idx, pr in ipairs(pairs) do
    if idx <= 32 then
      t[#t + 1] = string.format("  pair %3d: columns (%3d, %3d)  warp %2d, group %d (lanes %2d..%2d)%s%s", pr.pair, pr.p, pr.q, pr.warp,
        pr.group, pr.group * L, pr.group * L + L - 1, pr.step > 0 and string.format(", step %d", pr.step) or "",
        pr.active and "" or "  (padding column: idle)")
    end
  end
  if #pairs > 32 then t[#t + 1] = string.format("  ... %d pairs in all", #pairs) end
  t[#t + 1] = ""
  t[#t + 1] = "Rows each lane of a group holds (lane lg: rows lg + i L; groups of a warp start at different i so their accesses fall in different banks):"
  local lanes = {}
  for lg = 0, math.min(L, 8) - 1 do
    local rows = {}
    for i = 0, R - 1 do
      local r = lg + i * L
      if r < n then rows[#rows + 1] = r end
    end
    lanes[lg + 1] = rows
    t[#t + 1] = string.format("  lane %2d: rows %s", lg, table.concat(rows, ", "))
  end
  if L > 8 then t[#t + 1] = string.format("  ... lanes 8..%d likewise", L - 1) end
  return lesson(t, { kernel = "jacobi", n = n, lanes = L, rows_per_lane = R, warps = nw, round = round,
    pairs = pairs, lane_rows = lanes })
end

function M.layout(grid, block, opts)
  -- no argument: a small 2-D launch, 2 x 2 blocks of 8 x 4 threads
  if grid == nil and block == nil then grid, block = { 2, 2 }, { 8, 4 } end
  if grid == "rf_hist" then return layout_rf_hist(type(block) == "table" and block or {}) end
  if grid == "jacobi" then return layout_jacobi(type(block) == "table" and block or {}) end
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

-- --- the measured lessons (teach.measure in src/lapi_teach.c) -----------------------------

local function size_str(b)
  if b >= 2 ^ 30 then return string.format("%g GiB", b / 2 ^ 30) end
  if b >= 2 ^ 20 then return string.format("%g MiB", b / 2 ^ 20) end
  if b >= 2 ^ 10 then return string.format("%g KiB", b / 2 ^ 10) end
  return string.format("%d B", b)
end

local function ratio(a, b) if b and b > 0 then return a / b end return 0 end

-- The lesson's options: a table or nil, passed to teach.measure as they are (it checks them).
local function opts_of(name, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("teach." .. name .. ": options must be a table, got " .. type(opts), 3)
  end
  return opts or {}
end

local function where(m)
  if m.gpu then return "on " .. (m.device or "the GPU") .. " and on this CPU" end
  return "on this CPU only (no GPU: " .. tostring(m.gpu_reason) .. ")"
end

local function scaled_note(t, m)
  if m.scaled then t[#t + 1] = ""; t[#t + 1] = "Note: " .. m.scaled .. "." end
end

-- a sweep's rows and its largest step down (where the working set left a level)
local function sweep_rows(t, sizes, gbps, label)
  local lines = {}
  for i, s in ipairs(sizes) do lines[#lines + 1] = string.format("%9s %10.1f", size_str(s), gbps[i]) end
  local xs = {}
  for i, s in ipairs(sizes) do xs[i] = math.log(s, 2) end
  drawing(t, P.line(xs, gbps, { log = true, height = 8, width = 70, title = label,
    xlabel = "log2(working set, bytes)", ylabel = "GB/s" }))
  return lines
end

-- GB/s at the largest size <= bytes (nil when none)
local function at_size(sizes, gbps, bytes)
  local v
  for i, s in ipairs(sizes) do if s <= bytes then v = gbps[i] end end
  return v
end

function M.memory(opts)
  opts = opts_of("memory", opts)
  local m = teach.measure("memory", opts)
  local c = m.cpu
  local t = {}
  t[#t + 1] = "The memory hierarchy, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap("Every level of memory is smaller and faster than the one below it. A working-set "
    .. "sweep reads the same buffer over and over: while it fits in a level, the reads are served "
    .. "there; once it outgrows that level, the speed drops to the next one. GB/s below is bytes "
    .. "read / time."))
  t[#t + 1] = ""
  local cl = string.format("CPU (one thread): L1 %s, L2 %s, L3 %s per sysfs", size_str(c.l1_bytes),
    size_str(c.l2_bytes), size_str(c.l3_bytes))
  t[#t + 1] = cl
  sweep_rows(t, c.sizes, c.gbps, "CPU read bandwidth against working set")
  local l1v = at_size(c.sizes, c.gbps, c.l1_bytes > 0 and c.l1_bytes // 2 or 16384)
  local big = c.gbps[#c.gbps]
  t[#t + 1] = string.format("  in L1 (%s): %.1f GB/s; at %s (beyond the caches when L3 is smaller): %.1f GB/s, %.1fx slower.",
    size_str(c.l1_bytes > 0 and c.l1_bytes // 2 or 16384), l1v or 0, size_str(c.sizes[#c.sizes]), big, ratio(l1v or 0, big))
  m.cpu.l1_gbps, m.cpu.last_gbps = l1v, big
  if m.gpu then
    local g = m.gpu
    t[#t + 1] = ""
    t[#t + 1] = string.format("GPU %s: %d SMs, L2 %s", m.device or "", m.sms or 0, size_str(m.l2_bytes or 0))
    t[#t + 1] = string.format("  registers: %.1f TFLOP/s of FP32 FMA, which reads and writes %.0f TB/s of register operands",
      g.fma_tflops, g.reg_tbps)
    t[#t + 1] = string.format("  shared memory: %.0f GB/s (no bank conflicts, every SM)", g.smem_gbps)
    sweep_rows(t, g.sm.sizes, g.sm.gbps, "GPU: every block reads the whole set (L1, then L2)")
    sweep_rows(t, g.dev.sizes, g.dev.gbps, "GPU: the blocks share the set, loads skip L1 (L2, then device memory)")
    local inl2 = at_size(g.dev.sizes, g.dev.gbps, (m.l2_bytes or 0) // 4)
    local dram = g.dev.gbps[#g.dev.gbps]
    g.l2_gbps, g.dram_gbps = inl2, dram
    t[#t + 1] = string.format("  in L2 (%s): %.0f GB/s; at %s, device memory: %.0f GB/s (%.1fx).",
      size_str((m.l2_bytes or 0) // 4), inl2 or 0, size_str(g.dev.sizes[#g.dev.sizes]), dram, ratio(inl2 or 0, dram))
    local ok, bw = pcall(gpu.bandwidth, { bytes = 64 << 20, reps = 3, log = false })
    if ok and bw.h2d_pinned_gbps then
      m.host = bw
      t[#t + 1] = string.format("  the host link: host -> device %.1f GB/s pageable, %.1f pinned; device -> host %.1f / %.1f",
        bw.h2d_pageable_gbps, bw.h2d_pinned_gbps, bw.d2h_pageable_gbps, bw.d2h_pinned_gbps)
      t[#t + 1] = ""
      append(t, wrap(string.format("Pinned (page-locked) host memory can be read by the GPU's copy engines "
        .. "directly; pageable memory is first copied by the CPU into a pinned bounce buffer, so it moves "
        .. "at %.1fx less here. The host link is the slowest level of all: %.0fx below device memory.",
        ratio(bw.h2d_pinned_gbps, bw.h2d_pageable_gbps), ratio(dram, bw.h2d_pinned_gbps))))
    end
  end
  t[#t + 1] = ""
  append(t, wrap("What follows for code: keep the data a kernel reuses in the fastest level that holds it "
    .. "(registers, shared memory tiles, L2-sized blocks), and cross the host link as rarely as possible: "
    .. "gwb keeps objects on the device (x:to(\"gpu\")) so that repeated calls do not pay for it."))
  scaled_note(t, m)
  return lesson(t, m)
end

function M.coalescing(opts)
  opts = opts_of("coalescing", opts)
  local m = teach.measure("coalescing", opts)
  local t = {}
  t[#t + 1] = "Coalescing: reads with a stride, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap("Memory moves in blocks: 64-byte cache lines on a CPU, 32-byte sectors on a GPU. A warp's "
    .. "32 threads issue their loads together; when they read 32 neighbouring floats (stride 1) the "
    .. "hardware serves them with 4 sectors, every byte used. With stride s only one float in s is used "
    .. "and the rest of each sector is wasted, until (stride >= 8 floats) every thread costs a sector of "
    .. "its own. GB/s below counts only the useful bytes."))
  t[#t + 1] = ""
  local head = "  stride " .. (m.gpu and "   gpu float  float2/double  float4/double2" or "") .. "      cpu float"
  t[#t + 1] = head
  for i, s in ipairs(m.strides) do
    local g = m.gpu and string.format("%12.1f %14.1f %15.1f", m.gpu.float[i], m.gpu.float2[i], m.gpu.float4[i]) or ""
    t[#t + 1] = string.format("  %6d %s %14.2f", s, g, m.cpu.gbps[i])
  end
  t[#t + 1] = ""
  if m.gpu then
    drawing(t, P.line(m.strides, m.gpu.float, { log = true, height = 8, width = 70,
      title = "GPU useful GB/s against stride (float)", xlabel = "stride", ylabel = "GB/s" }))
    t[#t + 1] = string.format("On the GPU stride 32 moves %.1fx fewer useful bytes than stride 1; float4 loads at stride 1 reach %.0f GB/s against %.0f for float (%.2fx): wider loads need fewer instructions for the same sectors.",
      ratio(m.gpu.float[1], m.gpu.float[#m.strides]), m.gpu.float4[1], m.gpu.float[1], ratio(m.gpu.float4[1], m.gpu.float[1]))
  else
    drawing(t, P.line(m.strides, m.cpu.gbps, { log = true, height = 8, width = 70,
      title = "CPU useful GB/s against stride", xlabel = "stride", ylabel = "GB/s" }))
  end
  t[#t + 1] = string.format("On the CPU stride 32 moves %.1fx fewer useful bytes than stride 1.",
    ratio(m.cpu.gbps[1], m.cpu.gbps[#m.strides]))
  t[#t + 1] = ""
  append(t, wrap(string.format("The forest's case: scanning one feature of a %d-feature table. Stored row by row "
    .. "(AoS: a record's features together) a scan reads one float in every %d; stored column by column "
    .. "(SoA, gwb's Dataset layout) the feature is contiguous.", m.features, m.features)))
  t[#t + 1] = string.format("  CPU, %d rows: AoS %.3f ms, SoA %.3f ms: SoA %.1fx faster", m.cpu.rows, m.cpu.aos_ms, m.cpu.soa_ms,
    ratio(m.cpu.aos_ms, m.cpu.soa_ms))
  if m.gpu then
    t[#t + 1] = string.format("  GPU, %d rows: AoS %.3f ms, SoA %.3f ms: SoA %.1fx faster", m.gpu.rows, m.gpu.aos_ms, m.gpu.soa_ms,
      ratio(m.gpu.aos_ms, m.gpu.soa_ms))
  end
  scaled_note(t, m)
  return lesson(t, m)
end

function M.banks(opts)
  opts = opts_of("banks", opts)
  local m = teach.measure("banks", opts)
  local t = {}
  t[#t + 1] = "Shared-memory bank conflicts, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap("Shared memory is split into 32 banks of 4 bytes: word w lives in bank w mod 32, and each bank "
    .. "serves one word per cycle. A warp whose 32 threads read 32 words in 32 different banks is served "
    .. "at once; when k threads hit different words of one bank, the access is replayed k times (a k-way "
    .. "conflict). Lane l reading word l * stride puts gcd(stride, 32) lanes in each bank used."))
  if m.gpu then
    local g = m.gpu
    t[#t + 1] = ""
    t[#t + 1] = "  stride  ways        ms   slowdown"
    local bars = {}
    for i, s in ipairs(g.strides) do
      if s <= 8 or s % 4 == 0 or s == 31 or s == 33 then
        t[#t + 1] = string.format("  %6d %5d %9.3f %9.2fx", s, g.ways[i], g.ms[i], ratio(g.ms[i], g.ms[1]))
      end
      bars[#bars + 1] = { "stride " .. s, g.ms[i] }
    end
    t[#t + 1] = ""
    local pick = {}
    for _, s in ipairs { 1, 2, 3, 4, 8, 16, 31, 32 } do pick[#pick + 1] = bars[s] end
    drawing(t, P.bar(pick, { width = 70, unit = " ms", format = "%.3f", sort = false }))
    t[#t + 1] = ""
    t[#t + 1] = string.format("A 32 x 32 tile read by column: row pitch 32 floats %.3f ms (32-way conflict), pitch 33 %.3f ms: the padding column makes it %.1fx faster.",
      g.tile_ms, g.padded_ms, ratio(g.tile_ms, g.padded_ms))
    g.pad_gain = ratio(g.tile_ms, g.padded_ms)
    t[#t + 1] = "The transpose lesson (teach.transpose) shows the same fix in a real kernel."
  end
  t[#t + 1] = ""
  append(t, wrap("A CPU has no banks, but its caches have the same weakness: a cache is split into sets, an "
    .. "address maps to one set, and each set holds only a few lines (8 to 16 ways). Walking down a column "
    .. "of a matrix whose rows are a power of two apart maps every element to the same few sets, so lines "
    .. "are evicted before they are used again; padding the row by one cache line spreads them."))
  t[#t + 1] = string.format("  CPU, %d rows, 16 columns walked (ns per element):", m.cpu.rows)
  for i, p in ipairs(m.cpu.pitches) do
    t[#t + 1] = string.format("    row pitch %5d floats %s %7.2f ns", p, (p & (p - 1)) == 0 and "(power of two)" or "(padded)      ", m.cpu.ns[i])
  end
  scaled_note(t, m)
  return lesson(t, m)
end

-- the first index where b[i] < a[i] turns into b[i] >= a[i] (or the reverse): a crossover
local function crossover(xs, a, b)
  for i = 2, #xs do
    if (a[i - 1] < b[i - 1]) ~= (a[i] < b[i]) then return xs[i] end
  end
end

function M.atomics(opts)
  opts = opts_of("atomics", opts)
  local m = teach.measure("atomics", opts)
  local t = {}
  t[#t + 1] = "Atomics: counting votes, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap("A forest predicts by votes: every row adds one to a class counter. With atomics straight to "
    .. "global memory, threads that vote for the same class queue at one address, and with few classes "
    .. "nearly every vote waits. The block vote counts in shared memory first (fast atomics, contention "
    .. "only inside the block) and adds one number per class per block to global memory. The forest's "
    .. "predict kernel does the second (rf.predict_vote); teach.atomics shows why."))
  t[#t + 1] = ""
  local head = "  classes" .. (m.gpu and "   gpu global ms  gpu block ms  block gain" or "") .. "   cpu shared ms  cpu private ms"
  t[#t + 1] = head
  for i, c in ipairs(m.classes) do
    local g = m.gpu and string.format("%16.3f %13.3f %10.1fx", m.gpu.global_ms[i], m.gpu.block_ms[i], ratio(m.gpu.global_ms[i], m.gpu.block_ms[i])) or ""
    t[#t + 1] = string.format("  %7d %s %15.3f %15.3f", c, g, m.cpu.shared_ms[i], m.cpu.private_ms[i])
  end
  t[#t + 1] = ""
  if m.gpu then
    local bars = {}
    for i, c in ipairs(m.classes) do bars[#bars + 1] = { c .. " classes", ratio(m.gpu.global_ms[i], m.gpu.block_ms[i]) } end
    drawing(t, P.bar(bars, { width = 70, unit = "x", format = "%.1f", sort = false, title = "GPU: block vote speed-up over global atomics" }))
    local x = crossover(m.classes, m.gpu.block_ms, m.gpu.global_ms)
    m.gpu.crossover = x
    local wins = m.gpu.block_ms[1] < m.gpu.global_ms[1]
    t[#t + 1] = x and string.format("Crossover: at %d classes the %s becomes the faster one here.", x,
        wins and "global atomic vote" or "block vote")
      or string.format("No crossover between %d and %d classes: the %s is faster at every class count on this card.",
        m.classes[1], m.classes[#m.classes], wins and "block vote" or "global atomic vote")
  end
  t[#t + 1] = string.format("On the CPU (%d threads) the same idea is private counters per thread, merged at the end.", m.cpu.threads)
  scaled_note(t, m)
  return lesson(t, m)
end

function M.histogram(opts)
  opts = opts_of("histogram", opts)
  local m = teach.measure("histogram", opts)
  local t = {}
  t[#t + 1] = "Histograms: shared memory against global atomics, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap("The forest's split search builds, for every feature, a histogram of bins x classes counts. "
    .. "Built in shared memory, the atomics are cheap and only the finished block's counts go to global "
    .. "memory; but the histogram must fit, and the more shared memory a block takes, the fewer blocks an SM "
    .. "can hold (occupancy). More bins cost occupancy; too few bins cost accuracy."))
  t[#t + 1] = ""
  if m.gpu then
    local g = m.gpu
    t[#t + 1] = string.format("  GPU, %d rows x %d features, 2 classes:", g.rows, g.features)
    t[#t + 1] = "    bins   smem/block  occupancy   global ms   shared ms   gain"
    local bars = {}
    for i, b in ipairs(m.bins) do
      t[#t + 1] = string.format("    %4d %9.0f KB %9.0f%% %11.3f %11.3f %5.1fx", b, g.smem_bytes[i] / 1024, 100 * g.occupancy[i],
        g.global_ms[i], g.smem_ms[i], ratio(g.global_ms[i], g.smem_ms[i]))
      bars[#bars + 1] = { b .. " bins", 100 * g.occupancy[i] }
    end
    t[#t + 1] = ""
    drawing(t, P.bar(bars, { width = 70, unit = "%", format = "%.0f", sort = false, title = "occupancy the shared histogram allows" }))
    t[#t + 1] = string.format("From %d to %d bins the shared histogram grows %.0fx and occupancy falls from %.0f%% to %.0f%%; it takes %.2fx the time.",
      m.bins[1], m.bins[#m.bins], g.smem_bytes[#m.bins] / g.smem_bytes[1], 100 * g.occupancy[1], 100 * g.occupancy[#m.bins],
      ratio(g.smem_ms[#m.bins], g.smem_ms[1]))
    t[#t + 1] = "gpu.occupancy(\"rf_hist\", 256) shows the forest's own kernel after a GPU rf.train."
    t[#t + 1] = ""
  end
  t[#t + 1] = string.format("  CPU, %d rows x %d features, %d threads: shared atomic counters against private histograms merged at the end",
    m.cpu.rows, m.cpu.features, m.cpu.threads)
  for i, b in ipairs(m.bins) do
    t[#t + 1] = string.format("    %4d bins: shared %.3f ms, private %.3f ms", b, m.cpu.shared_ms[i], m.cpu.private_ms[i])
  end
  scaled_note(t, m)
  return lesson(t, m)
end

function M.divergence(opts)
  opts = opts_of("divergence", opts)
  local m = teach.measure("divergence", opts)
  local t = {}
  t[#t + 1] = "Divergence: when threads of a warp branch apart, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap("A warp's 32 threads share one instruction stream. When they disagree at a branch, the warp "
    .. "runs one side with the other side's threads masked off, then the other side: both costs add up. A "
    .. "warp whose threads all agree pays for one side only."))
  if m.gpu then
    local g = m.gpu
    t[#t + 1] = ""
    t[#t + 1] = "  divergent warps      ms   vs none"
    for i, f in ipairs(g.fractions) do
      t[#t + 1] = string.format("  %14.0f%% %7.3f %8.2fx", 100 * f, g.ms[i], ratio(g.ms[i], g.ms[1]))
    end
    drawing(t, P.line(g.fractions, g.ms, { height = 8, width = 70, title = "GPU time against the fraction of divergent warps",
      xlabel = "fraction of warps split", ylabel = "ms" }))
    t[#t + 1] = string.format("Every warp split: %.2fx the time of none (the two sides run one after the other).", ratio(g.ms[#g.ms], g.ms[1]))
  end
  t[#t + 1] = ""
  append(t, wrap("A CPU core runs one thread's branches, and guesses each one ahead (branch prediction). A "
    .. "branch that always goes one way costs almost nothing; a random one is guessed wrong half the time, "
    .. "and each wrong guess throws away ~15-20 cycles of work."))
  t[#t + 1] = "  taken        ns/element"
  for i, f in ipairs(m.cpu.fractions) do
    t[#t + 1] = string.format("  %5.0f%% %14.2f", 100 * f, m.cpu.ns[i])
  end
  local worst, wi = 0, 1
  for i, v in ipairs(m.cpu.ns) do if v > worst then worst, wi = v, i end end
  t[#t + 1] = string.format("Slowest at %.0f%% taken (%.2f ns, %.1fx the always-taken loop).", 100 * m.cpu.fractions[wi], worst,
    ratio(worst, m.cpu.ns[#m.cpu.ns]))
  scaled_note(t, m)
  return lesson(t, m)
end

function M.launch(opts)
  opts = opts_of("launch", opts)
  local m = teach.measure("launch", opts)
  local t = {}
  t[#t + 1] = "Launch overhead: many small kernels against one batched launch, measured " .. where(m)
  t[#t + 1] = ""
  append(t, wrap(string.format("Starting a kernel costs microseconds on the host and the device whatever it does. A "
    .. "task of %d elements (a 64 x 64 matrix) is over long before that cost is paid, so one launch per small "
    .. "task spends most of its time launching. One batched launch covers every task with one start: this "
    .. "is why eig.batched solves thousands of small matrices in one kernel, one block per matrix.", m.elems)))
  t[#t + 1] = ""
  if m.gpu then
    local g = m.gpu
    local per = (g.many_ms - g.one_ms) / g.count * 1000
    g.per_launch_us = per
    t[#t + 1] = string.format("  GPU: %d launches %.3f ms, one launch over all %.3f ms: %.1fx; %.2f us per extra launch",
      g.count, g.many_ms, g.one_ms, ratio(g.many_ms, g.one_ms), per)
    -- the same without gwb's telemetry (events and a record per launch), restored after
    local was = gwb.telemetry()
    gwb.telemetry(false)
    local ok, bare = pcall(teach.measure, "launch", { reps = opts.reps, count = g.count, cpu_count = 2, elems = m.elems })
    gwb.telemetry(was)
    if not ok then error(bare, 2) end
    local b = bare.gpu
    b.per_launch_us = (b.many_ms - b.one_ms) / b.count * 1000
    g.bare = b
    t[#t + 1] = string.format("  GPU, telemetry off (gwb.telemetry(false)): %d launches %.3f ms: %.2f us per extra launch; gwb's records cost the other %.2f us",
      b.count, b.many_ms, b.per_launch_us, per - b.per_launch_us)
  end
  local c = m.cpu
  c.per_task_us = (c.many_ms - c.one_ms) / c.count * 1000
  t[#t + 1] = string.format("  CPU: %d tasks on a thread each %.3f ms, one thread for all %.3f ms: %.1fx; %.1f us per thread start",
    c.count, c.many_ms, c.one_ms, ratio(c.many_ms, c.one_ms), c.per_task_us)
  scaled_note(t, m)
  return lesson(t, m)
end

local LESSONS = {
  { "transpose", "coalescing and bank conflicts in a real kernel: naive, tiled, padded" },
  { "memory", "the hierarchy measured: registers, shared, L1, L2, device memory, host link" },
  { "coalescing", "reads by stride and width; SoA against AoS for a feature scan" },
  { "banks", "shared-memory bank conflicts by stride, and the padding fix" },
  { "atomics", "votes: global atomics against a per-block count, 2..256 classes" },
  { "histogram", "shared histograms against global atomics, bins 32..256, occupancy" },
  { "divergence", "warps whose threads take different branches" },
  { "launch", "many small kernels against one batched launch" },
  { "occupancy", "what limits how many threads an SM holds, for any kernel" },
  { "layout", "which thread touches which element; the forest's and Jacobi's maps" },
}

-- teach() lists the lessons
local function list()
  local t = { "Lessons (each prints its explanation, measures on this machine, draws, and returns its numbers):", "" }
  for _, l in ipairs(LESSONS) do t[#t + 1] = string.format("  teach.%-11s %s", l[1], l[2]) end
  t[#t + 1] = ""
  t[#t + 1] = "help(teach.NAME) lists a lesson's options (sizes to scale it down on a slow machine)."
  return lesson(t, { lessons = LESSONS })
end

-- --- registration ---------------------------------------------------------------------------

if type(_G.teach) ~= "table" then _G.teach = {} end
setmetatable(teach, { __call = function() return list() end })
for _, n in ipairs { "memory", "coalescing", "banks", "atomics", "histogram", "divergence", "launch" } do
  teach[n] = M[n]
end
teach.transpose = M.transpose
teach.occupancy = M.occupancy
teach.layout = M.layout

help.register(M.memory, "teach.memory",
  "teach.memory([{reps = 3, gpu = true, work = 1, max_bytes = 256 MiB, touched = 512 MiB,\n"
  .. "  gpu_max_bytes = 1 GiB}]) -> lesson\n"
  .. "The memory hierarchy measured: a working-set sweep (read bandwidth against the size of\n"
  .. "the buffer read again and again) on one CPU thread from 4 KiB to max_bytes, with the\n"
  .. "L1/L2/L3 sizes from sysfs; on a GPU also registers (FMA rate), shared memory, a sweep\n"
  .. "through L1 (each block reads the whole set) and one through L2 to device memory (to\n"
  .. "gpu_max_bytes), and the host link pageable against pinned (gpu.bandwidth). touched:\n"
  .. "bytes read per point on the CPU (smaller is faster, noisier). Fields: cpu.sizes/gbps,\n"
  .. "gpu.sm, gpu.dev, gpu.fma_tflops, gpu.smem_gbps, host. work (0..1] scales the GPU's\n"
  .. "bytes read and on-chip loops down (banks and divergence take it too).\n"
  .. "Example: teach.memory{max_bytes = 64 << 20, touched = 128 << 20}")
help.register(M.coalescing, "teach.coalescing",
  "teach.coalescing([{reps = 3, gpu = true, bytes = 64 MiB, gpu_bytes = 256 MiB, rows = 2^20,\n"
  .. "  gpu_rows = 4 * 2^20, features = 32}]) -> lesson\n"
  .. "Coalescing measured: reads with stride 1, 2, 4, 8, 16, 32 elements, useful GB/s against the\n"
  .. "stride (on a GPU for float, float2/double and float4/double2 loads), plotted; and the\n"
  .. "forest's case, one feature of a rows x features table scanned row-major (AoS) against\n"
  .. "column-major (SoA). Fields: strides, cpu.gbps, cpu.aos_ms/soa_ms, gpu.float/float2/float4,\n"
  .. "gpu.aos_ms/soa_ms.\n"
  .. "Example: teach.coalescing{bytes = 16 << 20, rows = 1 << 18}")
help.register(M.banks, "teach.banks",
  "teach.banks([{reps = 3, gpu = true, work = 1, rows = 1024}]) -> lesson\n"
  .. "Shared-memory bank conflicts measured on a GPU: a warp reading words lane * stride for\n"
  .. "strides 1..32 (the conflict degree gcd(stride, 32) beside the time, bars), and a 32 x 32\n"
  .. "tile read by column with row pitch 32 against the padded 33 (teach.transpose shows the\n"
  .. "same fix in a kernel). On the CPU the same effect in cache sets: a column walk over rows\n"
  .. "whose pitch is a power of two against a padded pitch (rows rows). Fields: gpu.strides,\n"
  .. "gpu.ways, gpu.ms, gpu.tile_ms, gpu.padded_ms, gpu.pad_gain, cpu.pitches, cpu.ns.\n"
  .. "Example: teach.banks{reps = 5}")
help.register(M.atomics, "teach.atomics",
  "teach.atomics([{reps = 3, gpu = true, rows = 2^21, gpu_rows = 2^24, threads = cores}]) -> lesson\n"
  .. "The forest's two voting modes measured for 2..256 classes: every row's vote as a global\n"
  .. "atomic against a per-block shared-memory count followed by one atomic per class per block\n"
  .. "(rf.predict_vote); the speed-up drawn as bars and the crossover named. On the CPU: one\n"
  .. "shared array of atomic counters against per-thread counts merged at the end. Both sides'\n"
  .. "totals are checked. Fields: classes, gpu.global_ms/block_ms/crossover,\n"
  .. "cpu.shared_ms/private_ms.\n"
  .. "Example: teach.atomics{rows = 1 << 20}")
help.register(M.histogram, "teach.histogram",
  "teach.histogram([{reps = 3, gpu = true, rows = 2^20, gpu_rows = 2^22, features = 8,\n"
  .. "  gpu_features = 32, threads = cores}]) -> lesson\n"
  .. "Histograms of rows x features uint8 codes and two classes, bins 32, 64, 128, 256: global\n"
  .. "atomics against shared-memory histograms (features x bins x 2 per block) merged once per\n"
  .. "block, with the shared memory each bin count needs and the occupancy it allows (bars);\n"
  .. "both results compared. On the CPU shared atomic counters against private histograms.\n"
  .. "Fields: bins, gpu.global_ms/smem_ms/occupancy/smem_bytes, cpu.shared_ms/private_ms.\n"
  .. "Example: teach.histogram{gpu_rows = 1 << 20}")
help.register(M.divergence, "teach.divergence",
  "teach.divergence([{reps = 3, gpu = true, work = 1, elems = 2^22}]) -> lesson\n"
  .. "Warp divergence measured: a kernel where a fraction of the warps (0 to 1) split their lanes\n"
  .. "over two branches of equal work; time against that fraction, plotted. On the CPU the\n"
  .. "counterpart is branch misprediction: a branch taken by a random fraction of elems\n"
  .. "elements, ns per element. Fields: gpu.fractions/ms, cpu.fractions/ns.\n"
  .. "Example: teach.divergence{elems = 1 << 20}")
help.register(M.launch, "teach.launch",
  "teach.launch([{reps = 3, gpu = true, count = 1000, cpu_count = 200, elems = 4096}]) -> lesson\n"
  .. "Launch overhead measured: count kernels of elems elements each (one 64 x 64 matrix)\n"
  .. "against one launch over all of them, and the cost per extra launch: why eig.batched\n"
  .. "solves a batch in one kernel. On the CPU a thread started per task against one thread\n"
  .. "for all. Fields: elems, gpu.many_ms/one_ms/per_launch_us, cpu.many_ms/one_ms/per_task_us.\n"
  .. "Example: teach.launch{count = 200}")
help.register(M.transpose, "teach.transpose",
  "teach.transpose([{rows = 4096, cols = rows, reps = 5, gpu = true} | n]) -> lesson\n"
  .. "A lesson on memory access: one table transposed by a naive loop and cache blocks on the\n"
  .. "CPU and, with a GPU, by three kernels side by side (naive: one thread per element;\n"
  .. "tiled: a 32x32 tile through shared memory; padded: the tile 32x33 wide), with their\n"
  .. "time, GB/s against a plain device copy, bars, and why: coalescing, cache lines, and\n"
  .. "shared-memory bank conflicts (and how one padding column removes them). Without a GPU\n"
  .. "it explains the same with the CPU numbers. The lesson's fields hold the measurements.\n"
  .. "A number n is an n x n table; rows and cols are 1..65536.\n"
  .. "Example: teach.transpose{rows = 2048}")
help.register(M.occupancy, "teach.occupancy",
  "teach.occupancy([kernel [, {blocks = {...}, smem = bytes}]]) -> lesson\n"
  .. "A lesson on occupancy: for block sizes 32..1024 (or opts.blocks), how much of an SM's\n"
  .. "warp slots the kernel can fill, drawn as bars, with what limits it at each size (warps,\n"
  .. "registers, shared memory or the blocks-per-SM cap) and the best block size. kernel: the\n"
  .. "name of one of gwb's kernels (default \"rf_hist\"; gpu.occupancy() lists them) or a\n"
  .. "description {regs = 64, smem = 16384}. Without a GPU, a kernel's registers and static\n"
  .. "shared memory come from the table its sm_90 build recorded (src/kernel_res.c) and the\n"
  .. "limits are a reference sm_90 part's; what it launches with (dynamic shared memory) needs\n"
  .. "a GPU run.\n"
  .. "Example: teach.occupancy{regs = 96, smem = 0}")
help.register(M.layout, "teach.layout",
  "teach.layout([grid, block [, {width = 64, height = 16, row = r, col = c}]]) -> lesson\n"
  .. "teach.layout(\"rf_hist\" [, {block = 256, rows = 1024, features = 4, bins = 64, classes = 2}])\n"
  .. "teach.layout(\"jacobi\" [, {n = 16, lanes = L, warps = W, round = 0}])\n"
  .. "A lesson on thread indexing: for a grid of blocks (number or {x, y}) and a block of\n"
  .. "threads (number or {x, y}), draws which block and which warp touch each element of the\n"
  .. "array (one element per thread), works one element through blockIdx/threadIdx/lane/index,\n"
  .. "and points out layouts whose warps are not coalesced or have idle lanes. \"rf_hist\": the\n"
  .. "forest's histogram kernel (which warp adds which row of a node's chunk, where its counts\n"
  .. "land in shared memory); \"jacobi\": the batched Jacobi kernel (which warp and lane group\n"
  .. "rotates which column pair in a round, which rows each lane holds).\n"
  .. "With no arguments, grid {2, 2} of blocks {8, 4}.\n"
  .. "Example: teach.layout({4, 2}, {16, 4})")

return M
