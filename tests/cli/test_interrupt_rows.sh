# Ctrl-C answers within a second or two in the loops that grow with the rows: the kNN graph
# (O(rows^2): mat.knn_laplacian once honoured it only after the whole search), the covariance
# behind data.pca and mat.cov (DSYRK on row blocks), pca:transform, mat.randn. Each call is
# sized to run for many seconds on any CPU (pca:transform by the core count); SIGINT is sent 0.5 s into it and the call must
# raise "<what>: interrupted ..." soon after, with the script going on.
. tests/lib.sh
cat > "$T/s.lua" <<'LUA'
local what = arg[1]
local d
if what == "knn" then
  d = data.synth { rows = 150000, features = 8, informative = 4, seed = 1 }
elseif what == "transform" then
  -- the projection is one DGEMM per row block, as fast as the machine's BLAS: 25,000 rows a
  -- core keeps it seconds long on 2 cores and on 16 (20,000 rows took under 0.5 s on 16)
  d = data.synth { rows = 25000 * math.max(2, gwb.cpu_count()), features = 1500, informative = 10, seed = 1 }
elseif what ~= "randn" then
  d = data.synth { rows = 20000, features = 1500, informative = 10, seed = 1 }
end
local p = what == "transform" and data.pca(data.synth { rows = 100, features = 1500, informative = 10, seed = 2 }, 1500) or nil
local call = {
  knn = function() return mat.knn_laplacian(d, { k = 10 }) end,
  pca = function() return data.pca(d, 2) end,
  cov = function() return mat.cov(d) end,
  transform = function() return p:transform(d) end,
  randn = function() return mat.randn(12000, 12000) end,
}
io.stdout:write("calling\n"); io.stdout:flush()
local ok, err = pcall(call[what])
print(ok and "finished" or ("error: " .. tostring(err)))
print("after")
LUA
# started FILE: the script has said it is about to call (within 60 s)
started() {
	local n=0
	until grep -q calling "$1"; do
		n=$((n + 1))
		[ $n -gt 1200 ] && return 1
		sleep 0.05
	done
}
# gone PID: the process has ended (within 5 s)
gone() {
	local n=0
	while kill -0 "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -gt 100 ] && return 1
		sleep 0.05
	done
}
for what in knn pca cov transform randn; do
	out=$T/out.$what
	"$GWB" "$T/s.lua" "$what" >"$out" 2>&1 &
	pid=$!
	started "$out" || { kill $pid; die "$what: the script never started: $(cat "$out")"; }
	sleep 0.5
	kill -INT $pid
	t0=$(date +%s%N)
	if ! gone $pid; then
		kill -KILL $pid
		wait $pid
		die "$what: still running 5 s after Ctrl-C (a loaded machine may add a second or two)"
	fi
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	wait $pid || die "$what: exit status $?: $(cat "$out")"
	grep -qE "error: .*interrupted" "$out" || die "$what: not interrupted inside the call: $(cat "$out")"
	grep -q '^after$' "$out" || die "$what: the script did not go on: $(cat "$out")"
	echo "$what: answered Ctrl-C in $ms ms"
done
exit 0
