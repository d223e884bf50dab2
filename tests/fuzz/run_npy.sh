#!/usr/bin/env bash
# tests/fuzz/run_npy.sh [seconds] - build and run the .npy fuzz target (make fuzz does all):
# clang's libFuzzer with ASan and UBSan over the whole library, seeded by tests/fuzz/run with
# hand-made arrays (1.0/2.0/3.0, f4/f8, C/Fortran, refused kinds). It once linked a fixed
# list of sources beside stubs of intr.c and stopped linking when npy.c's saves moved onto
# fileio.c. Crashes land in build/fuzz/npy-crash-* (reproduce: build/fuzz/fuzz_npy <file>).
set -eu
cd "$(dirname "$0")/../.."
exec make --no-print-directory fuzz FUZZ_TARGETS=npy FUZZ_SECONDS="${1:-60}"
