#!/usr/bin/env bash
# tests/fuzz/run_mm.sh [seconds] - build and run the Matrix Market/.gwbs fuzz targets (make
# fuzz does all). It once linked a fixed list of sources and broke when mm.c grew a dependency;
# the Makefile now links the whole library.
set -eu
cd "$(dirname "$0")/../.."
exec make --no-print-directory fuzz FUZZ_TARGETS="mm gwbs" FUZZ_SECONDS="${1:-60}"
