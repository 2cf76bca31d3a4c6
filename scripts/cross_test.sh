#!/usr/bin/env bash
# Cross builds for ARM, tested under qemu-user (called by scripts/run_tests.sh):
#   build-cross-aarch64/  the CPU kernels (portable and NEON) with their tests against the
#                         reference, the dispatch test on emulated CPUs with and without
#                         dotprod/i8mm, and the ABI layout test, all under qemu-aarch64
#   build-cross-armhf/    the ABI layout test under qemu-arm (32-bit struct layouts)
#   build-cross-aarch64-runtime/
#                         the whole runtime (librknnrt.so) cross-built from the top-level
#                         project, with the C API, model and kernel tests run under qemu-aarch64
# The first two use toolchains/cross_tests (see why there) with Debian's cross compilers and the
# target's cmocka from multiarch packages (scripts/setup.sh installs them). The runtime also
# needs the target's protobuf-lite and libdrm (multiarch libprotobuf-lite32:arm64 and
# libdrm-dev:arm64, see cross_runtime below); without them that step is skipped with the reason.
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

# The whole runtime for aarch64. Its only target libraries beyond libc/libstdc++ are protobuf-lite
# and libdrm; Debian's libprotobuf-dev:arm64 cannot be installed next to the amd64 one here, but
# the runtime library alone (libprotobuf-lite32:arm64) can, and the headers and protoc of the
# build machine's libprotobuf-dev/protobuf-compiler serve the target as long as they are the
# same upstream version (generated code checks that version against the headers, and the
# headers must match the library). The multiarch libraries are exposed to the emulator through
# a directory of links, for the reason given in toolchains/cross_tests.
cross_runtime() {
  local dir=build-cross-aarch64-runtime triple=aarch64-linux-gnu
  local protobuf_lite=/usr/lib/$triple/libprotobuf-lite.so.32 drm=/usr/lib/$triple/libdrm.so
  local cmocka=/usr/lib/$triple/libcmocka.so
  for library in "$protobuf_lite" "$drm" "$cmocka"; do
    if [ ! -e "$library" ]; then
      echo "cross_test: runtime cross build SKIPPED: $library is missing" \
        "(libprotobuf-lite32:arm64 / libdrm-dev:arm64 could not be installed; see scripts/setup.sh)"
      return 0
    fi
  done
  local target_version host_version compiler_version
  target_version=$(dpkg-query -W -f='${Version}' libprotobuf-lite32:arm64 2>/dev/null || true)
  host_version=$(dpkg-query -W -f='${Version}' libprotobuf-dev 2>/dev/null || true)
  compiler_version=$(dpkg-query -W -f='${Version}' protobuf-compiler 2>/dev/null || true)
  if [ -z "$target_version" ] || [ "$target_version" != "$host_version" ] ||
      [ "$target_version" != "$compiler_version" ]; then
    echo "cross_test: runtime cross build SKIPPED: libprotobuf-lite32:arm64 '$target_version'," \
      "libprotobuf-dev '$host_version' and protobuf-compiler '$compiler_version' must be the" \
      "same version (the target library must match the headers and protoc it is built with)"
    return 0
  fi
  mkdir -p "$dir/target-libraries"
  for library in "$protobuf_lite" "$drm.2" "$cmocka.0"; do
    ln -sf "$(readlink -f "$library")" "$dir/target-libraries/$(basename "$library")"
  done
  echo "=== cross build: $dir (whole runtime, aarch64-linux-gnu.cmake) ==="
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DORKNN_WERROR=ON \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/aarch64-linux-gnu.cmake" \
    -DORKNN_BUILD_TOOLS=OFF -DORKNN_BUILD_SERVER=OFF -DORKNN_BUILD_SAMPLES=OFF \
    -DORKNN_CROSS_TARGET_LIBRARIES="$PWD/$dir/target-libraries" \
    -DProtobuf_INCLUDE_DIR=/usr/include -DProtobuf_PROTOC_EXECUTABLE=/usr/bin/protoc \
    -DProtobuf_LIBRARY="$protobuf_lite" -DProtobuf_LITE_LIBRARY="$protobuf_lite" >/dev/null
  # A subset that covers the C API end to end on the real librknnrt.so (every tests/api program
  # but the thread stress test), the model container, the CPU device's kernels through the
  # registry, and the ARM kernels with each variant (the cross_tests build runs the rest).
  local tests=(test_api_lifecycle test_api_query test_api_io test_api_bad_model
    test_api_unavailable test_api_zero_copy test_api_memory_control test_api_mem_cycles
    model_round_trip model_container_verifier model_graph_verifier model_hostile_input
    model_vendor_model test_optimized_cpu_kernels)
  cmake --build "$dir" -j "$jobs" --target "${tests[@]}"
  local pattern
  pattern="^($(IFS='|'; echo "${tests[*]}"))\$"
  # test_api_mem_cycles measures the process's RSS over 2000 init/destroy cycles, and qemu-user
  # 7.2 keeps about 280 KB per guest thread that exits (one thread: no growth; the same cycles
  # natively: none either), so it runs with one CPU thread. Even then qemu's translation caches
  # keep growing (250 KiB over 2,000 cycles, 530 over 8,000; natively a flat 180-190 KiB), so
  # the RSS bound is 1 MiB here: the native suite's 256 KiB bound and its valgrind run are the
  # leak checks.
  # And the same library on an ARMv8.0 core (no dotprod, no i8mm): it must choose plain NEON
  # and never execute the SDOT/SMMLA tiles it contains.
  (cd "$dir" && ctest --output-on-failure -j "$jobs" -R "$pattern" -E '^test_api_mem_cycles$' &&
    ORKNN_CPU_THREADS=1 ORKNN_RSS_SLACK_KIB=1024 ctest --output-on-failure -R '^test_api_mem_cycles$' &&
    QEMU_CPU=cortex-a53 ctest --output-on-failure -j "$jobs" \
      -R '^(test_api_io|test_api_zero_copy|test_optimized_cpu_kernels)$')
}

cross build-cross-aarch64 aarch64-linux-gnu.cmake
cross build-cross-armhf armhf-linux-gnueabihf.cmake -DORKNN_CROSS_KERNEL_TESTS=OFF
cross_runtime
