#!/usr/bin/env bash
# tests/fuzz/run.sh [seconds] - build the CSV/.gwbd fuzz target with clang's libFuzzer, ASan and
# UBSan, seed it with the bundled datasets and a few dialect samples, and fuzz for the given
# time (default 60 s). Crashes land in build/fuzz/ as crash-* files that reproduce with
# build/fuzz/fuzz_csv <file>.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=build/fuzz
mkdir -p $out/corpus
CC=${CC:-clang}
$CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc \
	tests/fuzz/fuzz_csv.c src/csv.c src/dataset.c src/dsio.c src/transpose.c src/status.c \
	src/intr.c src/prof.c -lm -lpthread -o $out/fuzz_csv
for f in datasets/*.csv; do head -c 4000 "$f" > "$out/corpus/$(basename "$f")"; done
printf '\001a;"b;c";y\r\n1,5;NA;x\r\n2;"3";"y ""z"""\r\n' > $out/corpus/dialect
printf '\000x,y\n1,"multi\nline"\n2,\n' > $out/corpus/quoted
$out/fuzz_csv -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=$out/ $out/corpus
