#!/usr/bin/env bash
# tests/fuzz/run_mm.sh [seconds] - build the Matrix Market / .gwbs fuzz target with clang's
# libFuzzer, ASan and UBSan, seed it with the bundled SuiteSparse matrices (heads of) and a few
# hand-made files, and fuzz for the given time (default 60 s). Crashes land in build/fuzz-mm/
# as crash-* files that reproduce with build/fuzz-mm/fuzz_mm <file>.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=build/fuzz-mm
mkdir -p $out/corpus
CC=${CC:-clang}
$CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc \
	tests/fuzz/fuzz_mm.c src/mm.c src/sparse.c src/dense.c src/status.c -lm -lpthread \
	-o $out/fuzz_mm
for f in datasets/matrices/*.mtx; do head -c 3000 "$f" > "$out/corpus/$(basename "$f")"; done
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n3 3 -2\n1 1 2e3\n2 3 nan\n' > $out/corpus/dup
printf '%%%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n' > $out/corpus/array
printf '%%%%MatrixMarket matrix coordinate pattern skew-symmetric\n4 4 2\n2 1\n4 3\n' > $out/corpus/skew
# huge sizes must fail with a message, not abort in the allocator
export ASAN_OPTIONS=allocator_may_return_null=1
$out/fuzz_mm -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=$out/ $out/corpus
