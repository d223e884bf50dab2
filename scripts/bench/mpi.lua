-- mpi.lua - work dealt to the ranks of an MPI job (issue 29), run by scripts/bench/mpi.sh at
-- np = 1 and 2 (or MPI_NPS): the wall time of the Lua call (a barrier before, gwb.bench around
-- it, the slowest rank's time), the parallel efficiency against np = 1 (given by the wrapper
-- as GWB_MPI_T1_<CASE>) and the bytes each rank moved (gwb.mpi.bytes before and after).
-- Cases (GWB_MPI_CASES, default "rf,sparse"):
--   rf: rf.train 800,000 x 64, 256 trees of depth 12 (the issue's), rf.cv 5 folds of 64 trees;
--       GWB_MPI_SCALE = 0.05 scales rows and trees down for a quick run.
--   sparse: eig.solve of the 3-D Laplacian of 128^3 = 2.1M unknowns (k = 10 smallest) and of a
--       random symmetric matrix of 1M rows and 20M nonzeros (k = 10 largest), tol 1e-10, the
--       rows dealt to the ranks; GWB_MPI_SPARSE_SCALE scales the orders (0.05: a quick run).
--       The random case runs a second time with deflated_check = false (Lanczos without its
--       multiplicity check, as SLEPc). GWB_MPI_SPARSE_ONLY (a Lua pattern) picks cases by name.
--       With GWB_MPI_SAVE=DIR, np = 1 saves each matrix as DIR/<case>.gwbs for the SLEPc peer
--       (scripts/bench/mpi_sparse_peers.py), which mpi.sh runs at the same np.
-- Result lines (rank 0): mpi case=... np=... wall_s=... eff=... sent_MB=... recv_MB=... [...]
local m = gwb.mpi
local scale = tonumber(os.getenv("GWB_MPI_SCALE") or "") or 1
local cases = os.getenv("GWB_MPI_CASES") or "rf,sparse"
local function want(c) return ("," .. cases .. ","):find("," .. c .. ",", 1, true) end
local ROWS = math.max(1000, math.floor(800000 * scale))
local TREES = math.max(m.size, math.floor(256 * math.min(1, scale * 4)))
local CV_TREES = math.max(4, math.floor(64 * math.min(1, scale * 4)))

local function timed(case, fn, t1, extra)
	m.barrier()
	local b0 = m.bytes()
	local w = gwb.bench(fn, {runs = 1, warmup = 0, log = false}).total_s
	local b1 = m.bytes()
	local wall = m.allreduce(w, "max")
	local sent = m.allreduce(b1.sent - b0.sent, "max")
	local recv = m.allreduce(b1.received - b0.received, "max")
	local eff = t1 and (t1 / (wall * m.size)) or (m.size == 1 and 1 or nil)
	if m.rank == 0 then
		print(string.format("mpi case=%s np=%d wall_s=%.3f eff=%s sent_MB=%.3f recv_MB=%.3f%s",
			case, m.size, wall, eff and string.format("%.2f", eff) or "?", sent / 1e6,
			recv / 1e6, extra and extra() or ""))
	end
end

if want("rf") then
	local d = data.synth{kind = "classification", rows = ROWS, features = 64, informative = 32,
	                     classes = 2, seed = 1}
	if m.rank == 0 then
		print(string.format("mpi data=%d x 64 train=T%d D12 cv=5 folds x T%d D12 host=%s ranks=%d",
			ROWS, TREES, CV_TREES, m.host, m.size))
	end
	timed(string.format("rf.train_%dx64_T%d_D12", ROWS, TREES), function()
		rf.train(d, {trees = TREES, depth = 12, seed = 1, progress = false, backend = "cpu"})
	end, tonumber(os.getenv("GWB_MPI_T1_TRAIN") or ""))
	timed(string.format("rf.cv_5x_T%d_D12", CV_TREES), function()
		rf.cv(d, {folds = 5, trees = CV_TREES, depth = 12, seed = 1, progress = false,
		          backend = "cpu"})
	end, tonumber(os.getenv("GWB_MPI_T1_CV") or ""))
end

if want("sparse") then
	local ss = tonumber(os.getenv("GWB_MPI_SPARSE_SCALE") or "") or 1
	local g = math.max(8, math.floor(128 * ss ^ (1 / 3) + 0.5))
	local nr = math.max(2000, math.floor(1000000 * ss))
	local save = os.getenv("GWB_MPI_SAVE")
	local list = {
		{name = string.format("eig.lap3d_%d_k10_smallest", g), t1 = "GWB_MPI_T1_LAP",
		 make = function() return mat.laplacian3d(g) end, which = "smallest"},
		{name = string.format("eig.randsym_%d_nnz%dM_k10_largest", nr, math.floor(20 * nr / 1e6 + 0.5)),
		 t1 = "GWB_MPI_T1_RAND", which = "largest",
		 make = function() return mat.randsym(nr, {density = 20 / nr, seed = 1}) end},
		-- the same solve without Lanczos' deflated multiplicity check (SLEPc has none)
		{name = string.format("eig.randsym_%d_nnz%dM_k10_largest_nocheck", nr, math.floor(20 * nr / 1e6 + 0.5)),
		 t1 = "GWB_MPI_T1_RANDNC", which = "largest", nocheck = true, reuse = true},
	}
	local only = os.getenv("GWB_MPI_SPARSE_ONLY")  -- a Lua pattern: run the cases it finds
	local A
	for _, c in ipairs(list) do
		if not only or c.name:find(only) then
		if not c.reuse or not A then A = (c.make or list[2].make)() end
		if save and m.size == 1 and not c.reuse then A:save(save .. "/" .. c.name .. ".gwbs") end
		local e
		timed(c.name, function()
			e = eig.solve(A, {k = 10, which = c.which, tol = 1e-10, backend = "cpu",
			                  deflated_check = not c.nocheck})
		end, tonumber(os.getenv(c.t1) or ""), function()
			local res = 0
			for i = 1, #e.values do res = math.max(res, e.residuals[i]) end
			return string.format(" n=%d nnz=%d method=%s products=%s maxres=%.2e normA=%s lambda1=%.12g lambda10=%.12g",
				A.rows, A.nnz, e.method, e.note:match("(%d+) products A x") or "?", res,
				e.note:match("||A||_2 ~ ([%d.e+-]+)") or "?", e.values[1], e.values[#e.values])
		end)
		end
	end
end
