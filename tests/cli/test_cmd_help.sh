# gwb help [COMMAND], -h inside a command, unknown commands; --help lists the commands.
. tests/lib.sh
"$GWB" help | grep -q 'gwb rf train' || die "help lists commands"
out=$("$GWB" help rf train) || die "help rf train"
echo "$out" | grep -q '^usage: gwb rf train FILE.csv --target NAME' || die "usage line: $out"
echo "$out" | grep -q -- '--max-features' || die "options: $out"
"$GWB" rf predict --help | grep -q -- '--proba' || die "rf predict --help"
"$GWB" help eig | grep -q -- '--which' || die "help eig"
"$GWB" --help | grep -q 'gwb bench bandwidth' || die "--help lists commands"
"$GWB" help frob 2>/dev/null; [ $? -eq 2 ] || die "help of unknown: want 2"
"$GWB" rf frob 2>"$T/err"; [ $? -eq 2 ] || die "unknown subcommand: want 2"
grep -q "unknown command 'rf frob'" "$T/err" || die "unknown subcommand message"
# a script named like a command still runs after --
mkdir -p "$T/s" && echo 'print("script ran")' >"$T/s/info"
(cd "$T/s" && "$GWB" -- info) | grep -q 'script ran' || die "-- info runs a script"
exit 0
