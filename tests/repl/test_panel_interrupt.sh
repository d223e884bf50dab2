# Ctrl-C while the panel is up stops the operation, restores the terminal (the panel is gone,
# echo and line editing work) and gives the prompt back; what was printed stays.
. tests/lib.sh
repl_start
type_line 'gwb.bench(function() if not said then said = true; print("said-" .. 1) end end, {seconds = 60, label = "long", log = false})'
wait_for 'Ctrl-C stops' 3 || die "the panel did not appear: $(screen)"
sleep 0.3
send C-c
wait_for 'interrupted' 3 || die "no 'interrupted' message: $(screen)"
wait_for_re '^gwb> *$' 2 || die "no prompt after C-c: $(screen)"
out=$(screen)
printf '%s\n' "$out" | grep -q 'Ctrl-C stops' && die "the panel is still on screen: $out"
printf '%s\n' "$out" | grep -q '^said-1' || die "output printed while the panel was up is lost: $out"
printf '%s\n' "$out" | grep -q '^gwb: long stopped by Ctrl-C after' || die "no summary saying it stopped: $out"
printf '%s\n' "$out" | grep -q '^gwb: long stopped by Ctrl-C after' || die "no summary saying it stopped: $out"
# a resize at the prompt after C-c is not a second C-c
tm resize-window -t "$SESSION" -x 90 -y 28
sleep 0.3
screen | grep -q '^\^C' && die "a resize after C-c read as another C-c: $(screen)"
# line editing and echo: type, move left, insert, run
send -l 'print("ab" .. "d")'
send Left Left Left Left Left Left Left Left Left
send -l 'c'
wait_for 'print("abc" .. "d")' || die "typing is not echoed after the panel: $(screen)"
send Enter
wait_for_re '^abcd$' || die "the REPL does not run commands after C-c: $(screen)"
exit 0
