# Ctrl-C answers within a second or two in the loops that grow with the rows: the kNN graph
# (O(rows^2): mat.knn_laplacian once honoured it only after the whole search), the covariance
# behind data.pca and mat.cov (DSYRK on row blocks), pca:transform, mat.randn. Each call is
# sized to run for many seconds on any CPU; SIGINT is sent 0.5 s into it and the call must
# raise "<what>: interrupted ..." soon after, with the script going on.
. tests/lib.sh
cat > "$T/s.lua" <<'LUA'
local what = arg[1]
local d
if what == "knn" then
  d = data.synth { rows = 150000, features = 8, informative = 4, seed = 1 }
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
for what in knn pca cov transform randn; do
	"$GWB" "$T/s.lua" "$what" >"$T/out.$what" 2>&1 &
	pid=$!
	for i in $(seq 1200); do grep -q calling "$T/out.$what" && break; sleep 0.05; done
	grep -q calling "$T/out.$what" || { kill $pid; die "$what: the script never started: $(cat "$T/out.$what")"; }
	sleep 0.5
	kill -INT $pid
	t0=$(date +%s%N)
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	if kill -0 $pid 2>/dev/null; then
		kill -KILL $pid; wait $pid
		die "$what: still running 5 s after Ctrl-C (a loaded machine may add a second or two)"
	fi
	wait $pid; rc=$?
	[ $rc -eq 0 ] || die "$what: exit status $rc: $(cat "$T/out.$what")"
	grep -qE "error: .*interrupted" "$T/out.$what" || die "$what: not interrupted inside the call: $(cat "$T/out.$what")"
	grep -q '^after$' "$T/out.$what" || die "$what: the script did not go on: $(cat "$T/out.$what")"
	echo "$what: answered Ctrl-C in $ms ms"
done
exit 0
