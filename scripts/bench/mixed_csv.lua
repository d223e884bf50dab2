-- mixed_csv.lua - the held-out mixed CSV of issue 28's speed targets, written to a given size:
-- an int64-like id (13 digits), six float columns (2 to 6 decimals, signs, a few in
-- exponent form), a category column (40 levels), a free-text column (4 to 14 words: about a
-- third hold a comma and are quoted, one in ten holds an escaped quote "" as well) and a float
-- target y. 5 % of the cells other than y are empty. About 150 bytes a row; the same seed and
-- size give the same bytes. It is not the shape the reader was tuned on (issue 20's file in
-- data.lua): ids, free text that is mostly unique, escapes.
--   gwb scripts/bench/mixed_csv.lua OUT.csv MB [SEED]     write a file of about MB megabytes
--   local write = dofile("scripts/bench/mixed_csv.lua")    write(path, mb, seed [, rows]) -> rows, bytes
--                                      (rows: stop there, the size then being at most mb)
-- (scripts/bench/run skips it: it is a generator, not a benchmark.)
local words = {
  "the", "a", "of", "and", "to", "in", "is", "it", "for", "on", "was", "with", "as", "at", "by",
  "data", "model", "value", "forest", "tree", "column", "row", "price", "delivery", "late",
  "fast", "good", "bad", "excellent", "poor", "customer", "order", "shipped", "returned",
  "broken", "works", "again", "never", "always", "quality", "support", "refund", "box", "size",
  "colour", "blue", "red", "green", "small", "large", "cheap", "expensive", "battery", "screen",
  "cable", "charger", "phone", "laptop", "manual", "warranty", "store", "online", "week",
  "month", "year", "day", "night", "morning", "north", "south", "east", "west", "river",
  "city", "road", "bridge", "train", "bus", "station", "ticket", "seat", "window", "door",
}
local cats = {}
for i = 1, 40 do cats[i] = string.format("cat_%02d_%s", i, words[(i * 7) % #words + 1]) end

local function write(path, mb, seed, max_rows)
  local rnd, fmt, concat = math.random, string.format, table.concat
  math.randomseed(seed or 28)
  local nw = #words
  local f = assert(io.open(path, "wb"))
  local header = "id,f1,f2,f3,f4,f5,f6,category,text,y\n"
  f:write(header)
  local target = math.floor(mb * 1e6)
  local bytes, rows, id = #header, 0, 1000000000000
  local buf, row, tw = {}, {}, {}
  local function empty() return rnd() < 0.05 end
  while bytes < target and rows < (max_rows or math.huge) do
    id = id + rnd(1, 9)
    row[1] = empty() and "" or fmt("%d", id)
    row[2] = empty() and "" or fmt("%.2f", rnd() * 1000)
    row[3] = empty() and "" or fmt("%.4f", (rnd() - 0.5) * 200)
    row[4] = empty() and "" or fmt("%.6f", rnd())
    row[5] = empty() and "" or fmt("%.3f", (rnd() - 0.5) * 2e5)
    row[6] = empty() and "" or (rnd() < 0.1 and fmt("%.3e", (rnd() - 0.5) * 1e-3) or fmt("%.5f", rnd() * 10))
    row[7] = empty() and "" or fmt("%d", rnd(0, 99999))
    row[8] = empty() and "" or cats[rnd(1, #cats)]
    if empty() then
      row[9] = ""
    else
      local n, kind = rnd(4, 14), rnd()
      for k = 1, n do tw[k] = words[rnd(1, nw)] end
      for k = n + 1, #tw do tw[k] = nil end
      if kind < 0.34 then
        tw[rnd(1, n - 1)] = tw[rnd(1, n - 1)] .. ","
        if kind < 0.1 then
          local k = rnd(1, n)
          tw[k] = '""' .. tw[k] .. '""'
        end
        row[9] = '"' .. concat(tw, " ") .. '"'
      else
        row[9] = concat(tw, " ")
      end
    end
    row[10] = fmt("%.4f", (rnd() - 0.5) * 100)
    local line = concat(row, ",")
    buf[#buf + 1] = line
    bytes = bytes + #line + 1
    rows = rows + 1
    if #buf == 4096 then f:write(concat(buf, "\n"), "\n"); buf = {} end
  end
  if #buf > 0 then f:write(concat(buf, "\n"), "\n") end
  f:close()
  return rows, bytes
end

if arg and arg[0] and arg[0]:match("mixed_csv%.lua$") and arg[1] then
  local rows, bytes = write(arg[1], assert(tonumber(arg[2]), "usage: mixed_csv.lua OUT.csv MB [SEED]"),
    tonumber(arg[3]))
  print(string.format("%s: %d rows, %d bytes", arg[1], rows, bytes))
end
return write
