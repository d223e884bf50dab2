-- mpi.lua - rf.train and rf.cv dealt to the ranks of an MPI job (issue 29), run by
-- scripts/bench/mpi.sh at np = 1 and 2 (or MPI_NPS): the wall time of the Lua call (a barrier
-- before, gwb.bench around it, the slowest rank's time), the parallel efficiency against np = 1
-- (given by the wrapper as GWB_MPI_T1_TRAIN / _CV) and the bytes each rank moved (gwb.mpi.bytes
-- before and after). Size: rf.train 800,000 x 64, 256 trees of depth 12 (the issue's), rf.cv 5
-- folds of 64 trees; GWB_MPI_SCALE = 0.05 scales rows and trees down for a quick run.
-- Result lines (rank 0): mpi case=... np=... wall_s=... eff=... sent_MB=... recv_MB=...
local m = gwb.mpi
local scale = tonumber(os.getenv("GWB_MPI_SCALE") or "") or 1
local ROWS = math.max(1000, math.floor(800000 * scale))
local TREES = math.max(m.size, math.floor(256 * math.min(1, scale * 4)))
local CV_TREES = math.max(4, math.floor(64 * math.min(1, scale * 4)))
local d = data.synth{kind = "classification", rows = ROWS, features = 64, informative = 32,
                     classes = 2, seed = 1}

local function timed(case, fn, t1)
	m.barrier()
	local b0 = m.bytes()
	local w = gwb.bench(fn, {runs = 1, warmup = 0, log = false}).total_s
	local b1 = m.bytes()
	local wall = m.allreduce(w, "max")
	local sent = m.allreduce(b1.sent - b0.sent, "max")
	local recv = m.allreduce(b1.received - b0.received, "max")
	local eff = t1 and (t1 / (wall * m.size)) or (m.size == 1 and 1 or nil)
	if m.rank == 0 then
		print(string.format("mpi case=%s np=%d wall_s=%.3f eff=%s sent_MB=%.3f recv_MB=%.3f",
			case, m.size, wall, eff and string.format("%.2f", eff) or "?", sent / 1e6,
			recv / 1e6))
	end
end

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
