#!/usr/bin/env bash
# Builds OpenRKNN three ways and runs the test suite on each:
#   build/        optimised with debug info, warnings as errors: every test
#   build-asan/   AddressSanitizer + UndefinedBehaviorSanitizer (leaks included): every test
#   build-tsan/   ThreadSanitizer: the tests labelled "threads"
#   build-cross-*/ ARM cross builds of the CPU kernels and ABI tests under qemu-user
#                 (scripts/cross_test.sh)
# Set ORKNN_QUICK=1 to stop after the first.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ORKNN_JOBS:-$(nproc)}

build() {  # build DIR [--target T] CMAKE_ARGS...
  local dir=$1; shift
  local targets=()
  if [ "${1:-}" = --target ]; then targets=(--target "$2"); shift 2; fi
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" "${targets[@]}"
}

run_ctest() {  # run_ctest DIR CTEST_ARGS...
  local dir=$1; shift
  (cd "$dir" && ctest --output-on-failure -j "$jobs" "$@")
}

echo "=== tests: optimised build ==="
build build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORKNN_WERROR=ON
run_ctest build
[ "${ORKNN_QUICK:-0}" = 1 ] && exit 0

echo "=== tests: AddressSanitizer + UndefinedBehaviorSanitizer ==="
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build build-asan -DCMAKE_BUILD_TYPE=Debug -DORKNN_SANITIZE=ON
run_ctest build-asan

echo "=== tests: ThreadSanitizer (threading tests) ==="
build build-tsan --target test_api_threads -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORKNN_TSAN=ON \
  -DORKNN_BUILD_SAMPLES=OFF -DORKNN_BUILD_TOOLS=OFF
run_ctest build-tsan -L threads

echo "=== tests: ARM cross builds under qemu-user ==="
scripts/cross_test.sh
