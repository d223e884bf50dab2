# tests/lib.sh - helpers for shell tests that drive the real gwb binary.
# Sourced by tests/cli/*.sh and tests/repl/*.sh. GWB names the binary.
set -u
GWB=${GWB:-build/gwb}
case "$GWB" in /*) ;; *) GWB="$PWD/$GWB" ;; esac
T=$(mktemp -d "${GWB_TEST_TMP:-/tmp}/t.XXXXXX")
export HOME="$T/home" GWB_HISTORY="$T/history" GWB_NORC=1
mkdir -p "$HOME"

die() { echo "FAIL: $*"; exit 1; }
skip() { echo "$*"; exit 77; }

# --- tmux -----------------------------------------------------------------------------------
SESSION="gwbt$$"
TMUX_SOCK="$T/tmux.sock"
tm() { tmux -S "$TMUX_SOCK" "$@"; }

# Start gwb in a detached 100x30 tmux pane (extra args go to gwb).
repl_start() {
	command -v tmux >/dev/null || skip "tmux is not installed (scripts/install-deps installs it)"
	tm new-session -d -s "$SESSION" -x 100 -y 30 \
		"env HOME='$HOME' GWB_HISTORY='$GWB_HISTORY' GWB_NORC=1 TERM=xterm '$GWB' $*; sleep 30" ||
		die "tmux could not start"
	wait_for 'gwb>' || die "no prompt: $(screen)"
}
# Stop the tmux server; the next repl_start uses a fresh socket (no race with the old server).
repl_stop() {
	tm kill-server 2>/dev/null
	RUN=$(( ${RUN:-0} + 1 ))
	TMUX_SOCK="$T/tmux$RUN.sock"
	true
}
trap 'repl_stop; rm -rf "$T"' EXIT

screen() { tm capture-pane -p -t "$SESSION"; }
send() { tm send-keys -t "$SESSION" "$@"; }
# Type a line literally and press Enter.
type_line() { tm send-keys -t "$SESSION" -l "$1"; tm send-keys -t "$SESSION" Enter; }

# Wait (up to ${2:-10} s) until the screen contains the fixed string $1.
wait_for() {
	local i n=$(( ${2:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		screen | grep -qF -- "$1" && return 0
		sleep 0.05
	done
	return 1
}
# Count of lines on screen matching the fixed string $1.
count_on_screen() { screen | grep -cF -- "$1"; }
# Like wait_for, with an extended regular expression.
wait_for_re() {
	local i n=$(( ${2:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.05
	done
	return 1
}

# interrupt_run NAME MARKER DELAY TRIES CMD...: run CMD in the background with its output in
# $T/out.NAME, wait (up to TRIES x 50 ms) for MARKER in it, sleep DELAY, send SIGINT, and fail
# unless the command then exits 0 and printed "after" (the script went on).
interrupt_run() {
	local name=$1 marker=$2 delay=$3 tries=$4 pid rc i; shift 4
	"$@" >"$T/out.$name" 2>&1 &
	pid=$!
	for i in $(seq "$tries"); do grep -q "$marker" "$T/out.$name" && break; sleep 0.05; done
	grep -q "$marker" "$T/out.$name" || { kill $pid; die "$name: the script never started: $(cat "$T/out.$name")"; }
	sleep "$delay"
	kill -INT $pid
	wait $pid; rc=$?
	[ $rc -eq 0 ] || die "$name: exit status $rc: $(cat "$T/out.$name")"
	grep -q '^after$' "$T/out.$name" || die "$name: the script did not go on: $(cat "$T/out.$name")"
}
