#!/usr/bin/env bash
# Builds OpenRKNN three ways and runs the test suite on each:
#   build/        optimised with debug info, warnings as errors: every test
#   build-asan/   AddressSanitizer + UndefinedBehaviorSanitizer (leaks included): every test
#   build-tsan/   ThreadSanitizer: the tests labelled "threads"
#   build-cross-*/ ARM cross builds under qemu-user: the CPU kernels and ABI tests, and the
#                 whole aarch64 librknnrt.so with its C API and model tests
#                 (scripts/cross_test.sh)
# Set ORKNN_QUICK=1 to stop after the first. Set ORKNN_PRUNE_BUILDS=1 to delete the sanitizer
# and fuzz trees once their tests have passed (CI does: a fresh machine's disk may be small).
# Every tree is built with ORKNN_COMPACT_DEBUG_INFO: the tests link the runtime statically, and a
# whole copy of the debug info in each of ~120 executables cost gigabytes.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ORKNN_JOBS:-$(nproc)}

build() {  # build DIR [--target T] CMAKE_ARGS...
  local dir=$1; shift
  local targets=()
  if [ "${1:-}" = --target ]; then targets=(--target "$2"); shift 2; fi
  cmake -S . -B "$dir" -G Ninja -DORKNN_COMPACT_DEBUG_INFO=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" "${targets[@]}"
}

prune() {  # prune DIR...: drop trees whose tests have passed, when asked to
  if [ "${ORKNN_PRUNE_BUILDS:-0}" = 1 ]; then
    rm -rf "$@"
  fi
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
# At -O1, as the sanitizers' documentation advises: against -O0 the tests ran in 1.7 minutes
# instead of 5, and the executables are smaller; GCC makes no sibling calls at -O1, so reports
# still show every frame.
build build-asan -DCMAKE_BUILD_TYPE=Debug -DORKNN_SANITIZE=ON \
  "-DCMAKE_C_FLAGS_DEBUG=-O1 -g" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g"
run_ctest build-asan
prune build-asan

echo "=== fuzz: rknn_server request handlers and parsers (libFuzzer, clang, 60 s in all) ==="
if [ "${ORKNN_BUILD_SERVER:-ON}" = ON ] && command -v clang++ >/dev/null; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DORKNN_COMPACT_DEBUG_INFO=ON -DORKNN_FUZZ=ON -DORKNN_BUILD_TESTS=OFF -DORKNN_BUILD_SAMPLES=OFF \
    -DORKNN_BUILD_TOOLS=OFF >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz_server_requests fuzz_server_parsers
  build/tools/orknn-make-model/orknn-make-model tiny fp32 build-fuzz/tiny.rknn >/dev/null
  for target in fuzz_server_requests fuzz_server_parsers; do
    mkdir -p "build-fuzz/corpus_$target"
    ORKNN_FUZZ_MODEL=build-fuzz/tiny.rknn RKNN_LOG_LEVEL=0 RKNN_SERVER_LOGLEVEL=0 \
      "build-fuzz/tests/fuzz/$target" -max_total_time=30 -rss_limit_mb=4096 -print_final_stats=1 \
      "build-fuzz/corpus_$target" 2>&1 | tail -n 12
    [ "${PIPESTATUS[0]}" = 0 ] || { echo "fuzzer $target failed"; exit 1; }
  done
  prune build-fuzz
fi

echo "=== tests: ThreadSanitizer (threading tests) ==="
build build-tsan --target test_api_threads -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORKNN_TSAN=ON \
  -DORKNN_BUILD_SAMPLES=OFF -DORKNN_BUILD_TOOLS=OFF
run_ctest build-tsan -L threads
prune build-tsan

echo "=== tests: ARM cross builds under qemu-user ==="
scripts/cross_test.sh
