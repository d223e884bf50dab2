# gwb help [COMMAND], -h inside a command, unknown commands; --help lists the commands.
. tests/lib.sh
"$GWB" help | grep -q 'gwb rf train' || die "help lists commands"
out=$("$GWB" help rf train) || die "help rf train"
echo "$out" | grep -q '^usage: gwb rf train FILE \[--target NAME\]' || die "usage line: $out"
echo "$out" | grep -q -- '--max-features' || die "options: $out"
"$GWB" rf predict --help | grep -q -- '--proba' || die "rf predict --help"
"$GWB" help eig | grep -q -- '--which' || die "help eig"
"$GWB" help rf | grep -q "gwb rf predict" || die "help rf lists the rf commands"
"$GWB" --help | grep -q 'gwb bench bandwidth' || die "--help lists commands"
"$GWB" help frob 2>/dev/null; [ $? -eq 2 ] || die "help of unknown: want 2"
"$GWB" rf frob 2>"$T/err"; [ $? -eq 2 ] || die "unknown subcommand: want 2"
grep -q "unknown command 'rf frob'" "$T/err" || die "unknown subcommand message"
# a script named like a command still runs after --
mkdir -p "$T/s" && echo 'print("script ran")' >"$T/s/info"
(cd "$T/s" && "$GWB" -- info) | grep -q 'script ran' || die "-- info runs a script"
# the man page describes every command gwb lists
if command -v man >/dev/null &&
	LC_ALL=C.UTF-8 MANWIDTH=80 man -E UTF-8 -l man/gwb.1 2>/dev/null | grep -q 'SYNOPSIS'; then
	page=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l man/gwb.1 2>/dev/null)
	"$GWB" help | sed -n 's/^  gwb \([a-z]*\( [a-z]*\)\?\)  .*/\1/p' | sed 's/ *$//' | while read -r c; do
		printf '%s\n' "$page" | grep -q "^ *gwb $c\b" || die "man page lacks 'gwb $c'"
	done || exit 1
fi
exit 0
