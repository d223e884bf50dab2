# gwb rf predict: CSV of predictions (and probabilities), with or without the target column.
. tests/lib.sh
export GWB_RUNS="$T/runs.jsonl"
"$GWB" rf train datasets/iris.csv --target species --trees 10 --save "$T/m.gwbf" >/dev/null || die "train"
"$GWB" rf predict "$T/m.gwbf" datasets/iris.csv --proba >"$T/p.csv" 2>"$T/err" || die "predict: $(cat "$T/err")"
[ "$(head -1 "$T/p.csv")" = "prediction,p_setosa,p_versicolor,p_virginica" ] || die "header: $(head -1 "$T/p.csv")"
[ "$(wc -l <"$T/p.csv")" -eq 151 ] || die "rows: $(wc -l <"$T/p.csv")"
grep -qE '^accuracy 0\.9[0-9]* on 150 rows' "$T/err" || die "score on stderr: $(cat "$T/err")"
# the same predictions as f:predict
want=$(M="$T/m.gwbf" "$GWB" -e 'local f = rf.load(os.getenv("M")); local p = f:predict(data.load("datasets/iris.csv", {target = "species"}))
	print(table.concat(p, ","))')
got=$(tail -n +2 "$T/p.csv" | cut -d, -f1 | paste -sd,)
[ "$want" = "$got" ] || die "predictions differ from f:predict"
# a file without the target column: every feature is kept
cut -d, -f1-4 datasets/iris.csv >"$T/x.csv"
"$GWB" rf predict "$T/m.gwbf" "$T/x.csv" --out "$T/q.csv" 2>"$T/err" || die "no-target predict: $(cat "$T/err")"
got2=$(tail -n +2 "$T/q.csv" | paste -sd,)
[ "$want" = "$got2" ] || die "predictions without the target column differ"
grep -q "wrote 150 predictions to $T/q.csv" "$T/err" || die "--out message"
# errors
"$GWB" rf predict "$T/m.gwbf" 2>/dev/null; [ $? -eq 2 ] || die "one argument: want 2"
"$GWB" rf predict "$T/nope.gwbf" datasets/iris.csv 2>"$T/err"; [ $? -eq 1 ] || die "missing model: want 1"
grep -q 'nope.gwbf' "$T/err" || die "missing model message: $(cat "$T/err")"
exit 0
