# Ctrl-C stops the dense LAPACK drivers (dsyevd, dsyevr, the mixed solve, dgesdd) and mat.batch:
# the call itself raises "<what>: interrupted after ..." and the script goes on (before,
# LAPACK ran to its end and only then did the Lua hook raise a bare "interrupted"). The signal is sent once the script says it is
# about to call; the sizes keep each call busy for seconds on any CPU, so the signal arrives
# during the call. The process then exits while the abandoned worker still runs.
. tests/lib.sh
cat > "$T/s.lua" <<'LUA'
local what = arg[1]
local A = what:match("^batch") and nil or mat.randn(2500, {sym = true})
local B = what == "svd" and mat.randn(3000, 2500) or nil
local call = {
  -- backend = "cpu": these are the LAPACK drivers (on a GPU machine "auto" would pick cuSOLVER)
  dsyevd = function() return eig.solve(A, {backend = "cpu"}) end,
  dsyevr = function() return eig.solve(A, {k = 1000, which = "both", method = "syevr", backend = "cpu"}) end,
  mixed = function() return eig.solve(A, {method = "mixed", backend = "cpu"}) end,
  svd = function() return eig.svd(B, {backend = "cpu"}) end,
  batch = function() return mat.batch(4, 3000, {spectrum = "uniform"}) end,
  batch_many = function() return mat.batch(3000, 200, {spectrum = "uniform"}) end,
}
io.stdout:write("calling\n"); io.stdout:flush()
local ok, err = pcall(call[what])
print(ok and "finished" or ("error: " .. tostring(err)))
print("after")
LUA
for what in dsyevd dsyevr mixed svd batch batch_many; do
	interrupt_run "$what" calling 0.5 600 "$GWB" "$T/s.lua" "$what"
	grep -qE 'error: .+interrupted (after|building)' "$T/out.$what" || die "$what: not interrupted inside the call: $(cat "$T/out.$what")"
done
exit 0
