# p:save at the prompt prints the file and its size (and nothing else: it returns nothing);
# gwb.plot_dir holds relative names; an unwritable place is an error with the path and the
# reason, and the REPL goes on.
. tests/lib.sh
repl_start
type_line 'p = plot.line({1, 4, 9, 16}, {title = "squares"})'
type_line "p:save('$T/sq.png', {width = 320, height = 200})"
wait_for_re "^saved $T/sq.png \\([0-9.]+ (B|KiB), 320 x 200\\)$" || die "save not reported: $(screen)"
[ -s "$T/sq.png" ] || die "no file $T/sq.png"
type_line "gwb.plot_dir = '$T'"
type_line "p:save('rel.svg')"
wait_for_re "^saved $T/rel.svg \\([0-9.]+ KiB, 640 x 480\\)$" || die "plot_dir not used: $(screen)"
[ -s "$T/rel.svg" ] || die "no file $T/rel.svg"
type_line "p:save('/nonexistent-gwb-dir/x.svg')"
wait_for '/nonexistent-gwb-dir/x.svg' || die "no error for an unwritable place: $(screen)"
wait_for 'No such file' || die "errno's text missing: $(screen)"
type_line '6 * 7'
wait_for_re '^42$' || die "the REPL did not go on: $(screen)"
exit 0
