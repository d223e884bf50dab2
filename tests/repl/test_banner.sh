# The REPL opens with one line: version, the GPU or "CPU only", and "help() to start"; a script
# or piped input gets no banner.
. tests/lib.sh
repl_start
line=$(screen | grep -m1 .)
printf '%s\n' "$line" | grep -qE '^gwb [0-9]+\.[0-9]+\.[0-9]+ ' || die "no version first: $(screen)"
printf '%s\n' "$line" | grep -q 'help() to start' || die "no 'help() to start': $line"
if "$GWB" -e 'os.exit(gpu.available() and 0 or 1)'; then
	printf '%s\n' "$line" | grep -q 'GPU ' || die "a GPU machine's banner names no GPU: $line"
else
	printf '%s\n' "$line" | grep -q 'CPU only' || die "no 'CPU only': $line"
fi
[ "$(screen | grep -c 'help() to start')" -eq 1 ] || die "more than one banner line: $(screen)"
repl_stop
out=$(echo 'print(1 + 1)' | "$GWB")
[ "$out" = "2" ] || die "piped input got a banner: $out"
exit 0
