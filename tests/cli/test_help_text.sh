# The help listings: e.values under class Eigen (not gwb), help(gwb) only gwb's own functions,
# summaries not cut mid-sentence ("correlation, i.e."), help(rf) wrapped like help() (no "..."),
# every line within the width, no internal knobs (hybrid_front, gpu_standin).
. tests/lib.sh
all=$(COLUMNS=80 "$GWB" -e 'help()')
printf '%s\n' "$all" | awk '/^gwb$/{g=1; next} /^[^ ]/{g=0} g' | grep -q 'e\.values' &&
	die "e.values is listed under gwb"
printf '%s\n' "$all" | awk '/^class Eigen$/{g=1; next} /^[^ ]/{g=0} g' | grep -q 'e\.values' ||
	die "e.values is not under class Eigen"
out=$(COLUMNS=80 "$GWB" -e 'help(gwb)')
printf '%s\n' "$out" | grep -qE '^  gwb\.[A-Z]|Dataset:|Forest:|e\.values' && die "help(gwb) lists classes: $(printf '%s\n' "$out" | grep -E 'Dataset:|e\.values' | head -3)"
printf '%s\n' "$out" | grep -q '^  gwb.fmt_bytes' || die "help(gwb) lacks gwb.fmt_bytes: $out"
out=$(COLUMNS=100 "$GWB" -e 'help(data)')
printf '%s\n' "$out" | grep -A3 'data.pca' | tr '\n' ' ' | grep -q 'i\.e\. *standardi' ||
	die "data.pca's summary is cut: $(printf '%s\n' "$out" | grep -A3 'data.pca')"
for m in rf data eig gpu teach; do
	out=$(COLUMNS=80 "$GWB" -e "help($m)")
	printf '%s\n' "$out" | grep -q '[^ .]\.\.\.$' && die "help($m) cuts with ...: $(printf '%s\n' "$out" | grep '[^ .]\.\.\.$' | head -2)"
	long=$(printf '%s\n' "$out" | awk 'length($0) > 80' | head -2)
	[ -z "$long" ] || die "help($m) lines wider than 80: $long"
done
out=$(COLUMNS=80 "$GWB" -e 'd = data.synth{rows = 10}; help(d)')
printf '%s\n' "$out" | grep -q '[^ .]\.\.\.$' && die "help(d) cuts with ..."
# one function's text wraps to the width too (the texts are written for ~92 columns)
out=$(COLUMNS=60 "$GWB" -e 'help(rf.train)')
long=$(printf '%s\n' "$out" | awk 'length($0) > 60' | head -2)
[ -z "$long" ] || die "help(rf.train) lines wider than 60: $long"
printf '%s\n' "$out" | grep -q 'Train a random forest' || die "help(rf.train): $out"
for x in '' rf data eig '"rf.train"' '"rf.cv"' '"eig.batched"'; do
	COLUMNS=200 "$GWB" -e "help($x)" | grep -E 'hybrid_front|gpu_standin' && die "help($x) shows an internal knob"
done
exit 0
