# History persists across two runs.
. tests/lib.sh
repl_start
type_line 'history_marker_7431 = 1'
sleep 0.3
send C-d
sleep 0.5
grep -q 'history_marker_7431' "$GWB_HISTORY" || die "history file lacks the line"
repl_stop
repl_start
send Up
wait_for 'history_marker_7431' || die "Up arrow did not recall the previous session: $(screen)"
exit 0
