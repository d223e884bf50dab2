# startup.sh - how long `gwb -e 'print(1)'` takes to start and exit (goal: under 50 ms; the GPU
# is initialised lazily, so this pays for no CUDA context; LAPACK is loaded on first use and the
# Lua files are compiled in). Peer: the plain lua5.4 interpreter; goal: within 2x of it.
GWB=${GWB:-build/gwb}
median_ms() { # command... ; prints the median of 41 wall-clock runs in ms
	local i t0 t1 ts=()
	for i in $(seq 41); do
		t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
		ts+=($(( (t1 - t0) / 1000 )))
	done
	printf '%s\n' "${ts[@]}" | sort -n | sed -n 21p | awk '{printf "%.2f", $1 / 1000}'
}
g=$(GWB_NORC=1 median_ms "$GWB" -e 'print(1)')
printf 'startup (median of 41)      %10s\n' "ms"
printf '  gwb -e "print(1)"         %10s   goal < 50 ms\n' "$g"
if command -v lua5.4 >/dev/null; then
	l=$(median_ms lua5.4 -e 'print(1)')
	printf '  lua5.4 -e "print(1)"      %10s   (peer)\n' "$l"
	awk -v g="$g" -v l="$l" 'BEGIN { r = g / l; printf "  ratio gwb / lua5.4        %10.2f   goal <= 2: %s\n", r, r <= 2 ? "met" : "NOT met" }'
fi
# CPU time (robust to a loaded machine): perf stat's task-clock over 50 runs
if command -v perf >/dev/null && perf stat -r 2 true >/dev/null 2>&1; then
	cpu_ms() { perf stat -r 50 "$@" 2>&1 >/dev/null | awk '/task-clock/ { print $1 }'; }
	gc=$(GWB_NORC=1 cpu_ms "$GWB" -e 'print(1)')
	printf '  CPU: gwb %s ms' "$gc"
	command -v lua5.4 >/dev/null && printf ', lua5.4 %s ms' "$(cpu_ms lua5.4 -e 'print(1)')"
	printf '\n'
fi
