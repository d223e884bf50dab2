# gwb rf train / cv on a .gwbd (it carries its target), rf predict's temporary file on a failed
# read, its notes on levels the forest never saw (and --strict), and the option ranges of
# --threads and runs --last (issue 26).
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
"$GWB" -e "data.load('datasets/iris.csv', {target = 'species'}):save('$T/iris.gwbd')" || die "save gwbd"
"$GWB" rf train "$T/iris.gwbd" --trees 5 --save "$T/m.gwbf" >"$T/out" 2>&1 || die "rf train FILE.gwbd: $(cat "$T/out")"
grep -q "target 'species'" "$T/out" || die "rf train FILE.gwbd summary: $(cat "$T/out")"
"$GWB" rf cv "$T/iris.gwbd" --trees 5 --folds 3 >"$T/out" 2>&1 || die "rf cv FILE.gwbd: $(cat "$T/out")"
grep -q "3-fold accuracy" "$T/out" || die "rf cv FILE.gwbd: $(cat "$T/out")"
"$GWB" rf train "$T/iris.gwbd" --target species --trees 2 >/dev/null 2>&1 || die "the same --target is fine"
"$GWB" rf cv "$T/iris.gwbd" --target sepal_length --folds 3 2>"$T/err"; [ $? -eq 2 ] || die "another --target: want 2"
grep -q "carries its target 'species'" "$T/err" || die "another --target message: $(cat "$T/err")"
# a CSV without --target: the last column, as data.load does
"$GWB" rf train datasets/iris.csv --trees 2 >"$T/out" 2>"$T/err" || die "CSV without --target: $(cat "$T/err")"
grep -q "target 'species'" "$T/out" || die "CSV without --target did not take the last column: $(cat "$T/out")"

# rf predict on input that cannot be read leaves no lua_XXXXXX temporary behind
mkdir -p "$T/dir"
ls /tmp/lua_* 2>/dev/null | sort >"$T/before"
"$GWB" rf predict "$T/m.gwbf" "$T/dir" 2>"$T/err"; [ $? -eq 1 ] || die "a directory: want 1"
sleep 1   # another process's temporary (tests run at once) is gone by then; ours would stay
ls /tmp/lua_* 2>/dev/null | sort >"$T/after"
left=$(comm -13 "$T/before" "$T/after" | while read -r f; do [ -e "$f" ] && [ ! -s "$f" ] && echo "$f"; done)
[ -z "$left" ] || { rm -f $left; die "rf predict left $left behind"; }

# levels the forest never saw: a note on stderr; --strict refuses
printf 'color,y\na,A\nb,B\nc,C\na,A\nb,B\nc,C\na,A\nb,B\nc,C\n' >"$T/abc.csv"
"$GWB" rf train "$T/abc.csv" --target y --trees 3 --save "$T/abc.gwbf" >/dev/null || die "train abc"
printf 'color\nc\npurple\nb\n' >"$T/new.csv"
"$GWB" rf predict "$T/abc.gwbf" "$T/new.csv" >"$T/p.csv" 2>"$T/err" || die "predict new levels: $(cat "$T/err")"
[ "$(sed -n 2p "$T/p.csv"),$(sed -n 4p "$T/p.csv")" = "C,B" ] || die "levels by label: $(cat "$T/p.csv")"
grep -q "1 value of 1 level the forest never saw" "$T/err" || die "unseen note: $(cat "$T/err")"
"$GWB" rf predict "$T/abc.gwbf" "$T/new.csv" --strict >/dev/null 2>"$T/err"; [ $? -eq 1 ] || die "--strict: want 1"
grep -q "'purple' (row 2)" "$T/err" || die "--strict message: $(cat "$T/err")"

# option ranges
"$GWB" rf train datasets/iris.csv --target species --threads -3 2>"$T/err"; [ $? -eq 2 ] || die "--threads -3: want 2"
grep -q -- "--threads must be 0 or more (got '-3')" "$T/err" || die "--threads message: $(cat "$T/err")"
"$GWB" rf predict "$T/m.gwbf" datasets/iris.csv --threads -1 2>"$T/err" >/dev/null; [ $? -eq 2 ] || die "predict --threads -1: want 2"
"$GWB" runs --last -1 2>"$T/err"; [ $? -eq 2 ] || die "runs --last -1: want 2"
grep -q -- "--last must be 0 or more (got '-1')" "$T/err" || die "--last message: $(cat "$T/err")"
exit 0
