#!/usr/bin/env bash
# tests/fuzz/run.sh [seconds] - build and run the CSV/.gwbd fuzz target (make fuzz does all).
set -eu
cd "$(dirname "$0")/../.."
exec make --no-print-directory fuzz FUZZ_TARGETS="csv gwbd" FUZZ_SECONDS="${1:-60}"
