#!/bin/bash
# house_ab.sh - A/B of two gwb builds on the cases the house change touches, run alternately
# (A B, then B A, ...) so that drift of the machine falls on both; prints every run's time and
# each case's medians. A time is the wall time of the user's Lua call in a fresh process
# (scripts/bench/house_case.lua: inputs built and warm-ups done before the clock starts).
#   scripts/bench/house_ab.sh OLD_BUILD NEW_BUILD [cpu|gpu|CASE,CASE...] [REPS]
# OLD_BUILD, NEW_BUILD: build folders holding gwb (e.g. /work/old/build and build);
# cpu: csv eig_sparse rf synth transpose; gpu: rf_gpu eig_sparse_gpu eig_batched_gpu. REPS: 5.
# The CSV case loads a 200,000 x 33 numeric file made once here (in ${GWB_BENCH_TMP:-/tmp}).
set -u
[ $# -ge 2 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
A=$1/gwb B=$2/gwb
which=${3:-cpu} reps=${4:-5}
for g in "$A" "$B"; do [ -x "$g" ] || { echo "house_ab: no gwb in $(dirname "$g")" >&2; exit 2; }; done
case $which in
cpu) cases="csv eig_sparse rf synth transpose" ;;
gpu) cases="rf_gpu eig_sparse_gpu eig_batched_gpu" ;;
*) cases=$(echo "$which" | tr ',' ' ') ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
script=$here/house_case.lua
csv=${GWB_BENCH_TMP:-/tmp}/house_ab_$$.csv
trap 'rm -f "$csv"' EXIT
if echo " $cases " | grep -q ' csv '; then
	"$B" -e "data.synth{kind = 'regression', rows = 200000, features = 32, seed = 3}:write_csv('$csv')" ||
		{ echo "house_ab: could not write the CSV" >&2; exit 1; }
fi

one() {   # one run: prints the seconds, or nothing when the case failed
	"$1" "$script" "$2" "$csv" 2>&1 | awk -v c="$2" '$1 == "case" && $2 == c { print $3 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "house_ab: A = $A ($("$A" --version | head -1)), B = $B ($("$B" --version | head -1))"
echo "house_ab: $reps runs each, alternating; seconds of the Lua call"
summary=""
for c in $cases; do
	ta="" tb=""
	for r in $(seq 1 "$reps"); do
		if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
		for side in $order; do
			if [ "$side" = A ]; then t=$(one "$A" "$c"); ta="$ta $t"; else t=$(one "$B" "$c"); tb="$tb $t"; fi
			[ -n "$t" ] || { echo "house_ab: $c failed on $side:"; "$([ $side = A ] && echo "$A" || echo "$B")" "$script" "$c" "$csv" 2>&1 | tail -3; }
		done
	done
	ma=$(echo $ta | tr ' ' '\n' | grep . | median)
	mb=$(echo $tb | tr ' ' '\n' | grep . | median)
	echo "$c: A$ta"
	echo "$c: B$tb"
	line=$(awk -v c="$c" -v a="$ma" -v b="$mb" 'BEGIN { printf "%-16s median A %8.3f s   B %8.3f s   B/A %.3f", c, a, b, (a > 0 ? b / a : 0) }')
	echo "$line"
	summary="$summary$line
"
done
echo "house_ab: medians"
printf '%s' "$summary"
