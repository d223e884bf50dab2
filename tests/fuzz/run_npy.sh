#!/usr/bin/env bash
# tests/fuzz/run_npy.sh [seconds] - build the .npy fuzz target with clang's libFuzzer, ASan and
# UBSan, seed it with hand-made arrays (1.0/2.0/3.0, f4/f8, C/Fortran, refused kinds), and fuzz
# for the given time (default 60 s). Crashes land in build/fuzz-npy/ as crash-* files that
# reproduce with build/fuzz-npy/fuzz_npy <file>.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
out=build/fuzz-npy
mkdir -p $out/corpus
CC=${CC:-clang}
$CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isrc \
	tests/fuzz/fuzz_npy.c src/npy.c src/dense.c src/dataset.c src/dsio.c src/status.c \
	-lm -lpthread -o $out/fuzz_npy
seed() {  # seed NAME MAJOR 'dict' DATA-BYTES
	python3 - "$out/corpus/$1" "$2" "$3" "$4" <<'PY'
import struct, sys
path, major, d, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
pre = 10 if major == 1 else 12
total = (pre + len(d) + 1 + 63) // 64 * 64
h = (d + ' ' * (total - pre - len(d) - 1) + '\n').encode()
ln = struct.pack('<H', len(h)) if major == 1 else struct.pack('<I', len(h))
open(path, 'wb').write(b'\x93NUMPY' + bytes([major, 0]) + ln + h + bytes(range(256)) * (n // 256) + bytes(n % 256))
PY
}
seed c8 1 "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }" 96
seed f4 2 "{'descr': '<f4', 'fortran_order': True, 'shape': (4, 3), }" 48
seed v3 3 "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }" 32
seed be 1 "{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }" 32
seed oned 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }" 20
export ASAN_OPTIONS=allocator_may_return_null=1
$out/fuzz_npy -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=$out/ $out/corpus
