# The Lua API fuzz test: tests/lua/api_fuzz.lua calls every function and method with
# adversarial arguments in a child gwb. Fails when the child dies (a signal, a sanitizer
# report, any exit but 0) or does not finish, naming the call it was in (the log's last CALL
# line). A call that runs past 1 s with no new call is sent Ctrl-C (every long operation
# must honour it); one that still runs 20 s later fails the test as not interruptible.
. tests/lib.sh
ROOT=$PWD
LOG="$T/calls.log"
export GWB_RUNS="$T/runs.jsonl"
cd "$T"   # the paths the fuzzer passes as strings ("x", "") land here
# Huge counts must fail with a message, not take the machine's memory: allocations past
# 4 GiB fail (ulimit, or ASan's own limit: its shadow memory needs the address space).
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=4096:detect_leaks=0
grep -qa __asan_init "$GWB" || ulimit -v 6000000
"$GWB" "$ROOT/tests/lua/api_fuzz.lua" "$ROOT" "$LOG" >"$T/out" 2>"$T/err" </dev/null &
pid=$!
last="" still=0 sent=0 total=0
while kill -0 $pid 2>/dev/null; do
	sleep 0.25
	total=$((total + 1))
	cur=$(tail -n 1 "$LOG" 2>/dev/null)
	if [ "$cur" = "$last" ]; then
		still=$((still + 1))
	else
		last=$cur still=0 sent=0
	fi
	if [ $still -ge 4 ] && [ $sent -eq 0 ]; then
		echo "slow, sent Ctrl-C: $cur"
		kill -INT $pid 2>/dev/null
		sent=1
	fi
	if [ $still -ge 84 ]; then
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
		die "did not stop 20 s after Ctrl-C: $cur"
	fi
	if [ $total -ge 1200 ]; then
		kill -KILL $pid 2>/dev/null
		wait $pid 2>/dev/null
		die "did not finish in 300 s; last: $cur"
	fi
done
wait $pid; rc=$?
if grep -v '^CALL' "$LOG" | tail -n 1 | grep -q 'FUZZ DONE'; then
	[ $rc -eq 0 ] && { grep 'api fuzz:' "$T/err"; exit 0; }
	grep -E '^FAIL|did not print' "$T/err"
	exit 1
fi
echo "the fuzzed process exited with status $rc during:"
grep '^CALL' "$LOG" | tail -n 1
echo "--- its stderr (tail):"
tail -n 40 "$T/err"
exit 1
