#!/usr/bin/env bash
# Cross builds for ARM, tested under qemu-user (called by scripts/run_tests.sh):
#   build-cross-aarch64/  the CPU kernels (portable and NEON) with their tests against the
#                         reference, the dispatch test on emulated CPUs with and without
#                         dotprod/i8mm, and the ABI layout test, all under qemu-aarch64
#   build-cross-armhf/    the ABI layout test under qemu-arm (32-bit struct layouts)
# Both use toolchains/cross_tests (see why there) with Debian's cross compilers and the
# target's cmocka from multiarch packages (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${ORKNN_JOBS:-$(nproc)}

require() {  # require WHAT PATH-OR-COMMAND
  if ! command -v "$2" >/dev/null 2>&1 && [ ! -e "$2" ]; then
    echo "cross_test: $1 is missing ($2); run scripts/setup.sh" >&2
    exit 1
  fi
}
require "the aarch64 cross compiler" aarch64-linux-gnu-g++
require "the armhf cross compiler" arm-linux-gnueabihf-g++
require "qemu-user" qemu-aarch64
require "qemu-user" qemu-arm
# The target's cmocka comes from multiarch packages, which setup.sh installs when the mirror
# allows (it warns when it cannot): without them the ARM tests cannot link, so they are skipped
# with that reason rather than failing the native suite.
for library in /usr/lib/aarch64-linux-gnu/libcmocka.so /usr/lib/arm-linux-gnueabihf/libcmocka.so; do
  if [ ! -e "$library" ]; then
    echo "cross_test: SKIPPED: $library is missing (libcmocka-dev:arm64/armhf could not be" \
      "installed; see scripts/setup.sh's warning)"
    exit 0
  fi
done

cross() {  # cross BUILD_DIR TOOLCHAIN CMAKE_ARGS...
  local dir=$1 toolchain=$2; shift 2
  echo "=== cross build: $dir ($toolchain) ==="
  cmake -S toolchains/cross_tests -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/$toolchain" "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs")
}

cross build-cross-aarch64 aarch64-linux-gnu.cmake
cross build-cross-armhf armhf-linux-gnueabihf.cmake -DORKNN_CROSS_KERNEL_TESTS=OFF
