-- tests/mpi/forest.lua OUT: a forest, its OOB and predictions, rf.cv, eig.batched and the
-- gwb.mpi primitives on this job's ranks; rank r writes OUT/<size>.<r>.* for the shell test
-- to compare with one process (np 1) byte for byte.
local out = assert(arg[1], "usage: forest.lua OUT")
local m = gwb.mpi
local pre = string.format("%s/%d.%d", out, m.size, m.rank)
local function save_text(path, s) gwb._save_text(path, s) end

-- a forest: the .gwbf bytes, the OOB and every prediction
local d = data.synth{kind = "classification", rows = 2000, features = 8, classes = 3,
                     informative = 5, seed = 4}
local f = rf.train(d, {trees = 11, depth = 7, seed = 9, progress = false})
f:save(pre .. ".gwbf")
local p = f:predict_proba(d)
local lines = {string.format("oob %.17g", f.oob)}
for i = 1, d.rows, 97 do
	lines[#lines + 1] = string.format("%.9g %.9g %.9g", p[i][1], p[i][2], p[i][3])
end
-- regression too
local dr = data.synth{kind = "regression", rows = 1500, features = 6, seed = 2}
local fr = rf.train(dr, {trees = 7, depth = 6, seed = 3, progress = false})
fr:save(pre .. ".r.gwbf")
lines[#lines + 1] = string.format("oob_r2 %.17g", fr.oob)
local cv = rf.cv(d, {folds = 4, trees = 5, depth = 5, seed = 2, progress = false})
lines[#lines + 1] = string.format("cv %.17g %.17g", cv.mean, cv.std)
for i, v in ipairs(cv.folds) do lines[#lines + 1] = string.format("fold %d %.17g", i, v) end
-- rf.search: each family's folds dealt to the ranks; every setting, the best and the refit
local s = rf.search(d, {trees = {3, 5}, depth = {3, 0}, max_features = {"sqrt", 0.5}},
                    {cv = 3, seed = 2, metric = "f1_macro", progress = false})
for i, st in ipairs(s.settings) do
	lines[#lines + 1] = string.format("search %d %.17g %.17g %.17g", i, st.mean, st.std,
	                                  st.metrics.log_loss.mean)
end
lines[#lines + 1] = string.format("search best %d forest %d trees oob %.17g", s.best_index,
                                  s.forest.trees, s.forest.oob)
save_text(pre .. ".txt", table.concat(lines, "\n") .. "\n")

-- eig.batched: values against this rank's own solve of the whole batch
local B = mat.batch(29, 6, {seed = 5})
local e = eig.batched(B)
local ref = eig.batched(B, {ranks = "self"})
local md = 0
for i = 1, 29 do
	local a, b = e:values(i), ref:values(i)
	for j = 1, 6 do md = math.max(md, math.abs(a[j] - b[j])) end
end
assert(md <= 1e-10, "eig.batched differs from one rank's solve by " .. md)
save_text(pre .. ".eig", string.format("%.10f\n", e:values(29)[6]))

-- the primitives
local v = m.bcast(m.rank == 0 and {a = 1, b = {"x", 2.5, true}, s = "hi"} or nil)
assert(v.a == 1 and v.b[1] == "x" and v.b[2] == 2.5 and v.b[3] == true and v.s == "hi")
local g = m.gather(m.rank * 10, "all")
assert(#g == m.size)
for i = 1, m.size do assert(g[i] == (i - 1) * 10) end
local g0 = m.gather({r = m.rank})
if m.rank == 0 then assert(#g0 == m.size and g0[m.size].r == m.size - 1) else assert(g0 == nil) end
local s = m.allreduce({1, m.rank, 2}, "sum")
assert(s[1] == m.size and s[2] == m.size * (m.size - 1) / 2 and s[3] == 2 * m.size)
assert(m.allreduce(m.rank + 1, "max") == m.size and m.allreduce(m.rank + 1, "min") == 1)
assert(m.allreduce(2, "prod") == 2 ^ m.size)
local db = m.bcast(m.rank == 0 and d or nil)
assert(db.rows == d.rows and db.features == d.features)
local part = m.scatter(m.rank == 0 and d or nil)
assert(m.allreduce(part.rows, "sum") == d.rows)
local pb = m.scatter(m.rank == 0 and B or nil)
assert(m.allreduce(pb.count, "sum") == 29)
local A = mat.randn(9, 4, {seed = 2})
local pa = m.scatter(A)
assert(m.allreduce(pa.rows, "sum") == 9)
m.barrier()
if m.size > 1 then assert(m.bytes().sent + m.bytes().received > 0) end
print("rank " .. m.rank .. " of " .. m.size .. " done")
