#!/usr/bin/env bash
# Installs everything OpenRKNN needs to build and test on Debian 12 (bookworm). Safe to run
# again: packages already present are skipped, so a second run costs a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libprotobuf-dev protobuf-compiler   # the .rknn graph section
  libcmocka-dev                       # tests
  libcpu-features-dev                 # CPU kernel dispatch
  libstb-dev                          # image decoding in samples and tools
  libonnx-dev libyaml-cpp-dev         # rknn-convert: ONNX import, YAML/JSON configs
  python3-venv                        # the venv below
  gcc-arm-linux-gnueabihf gcc-aarch64-linux-gnu  # ABI layout checks for 32/64-bit ARM
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user  # cross builds run under emulation
  libgrpc++-dev protobuf-compiler-grpc  # rknn_server and rknn-client
  libdrm-dev                          # finding the NPU's DRM render node by driver name
  libusb-1.0-0-dev adb                # rknn-client: Rockchip USB devices, ADB port forwarding
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo  # GPU device; PoCL runs it on the CPU
  clang libclang-rt-14-dev            # libFuzzer targets
  valgrind                            # leak checks of the reliability tests
  ccache                              # faster rebuilds (used when present)
)

run_as_root=()
[ "$(id -u)" -eq 0 ] || run_as_root=(sudo)

# The cross builds' tests (scripts/cross_test.sh) link the target's cmocka: Debian multiarch
# packages, once the foreign architectures are enabled.
for architecture in arm64 armhf; do
  if ! dpkg --print-foreign-architectures | grep -qx "$architecture"; then
    "${run_as_root[@]}" dpkg --add-architecture "$architecture"
    apt_lists_stale=1
  fi
done
foreign_packages=(libcmocka-dev:arm64 libcmocka-dev:armhf)
# The whole runtime's aarch64 cross build (scripts/cross_test.sh) also links the target's
# protobuf-lite and libdrm. libprotobuf-dev:arm64 cannot be installed next to the amd64 one
# (multiarch conflicts through its dependencies), but the library alone can, and the build
# machine's headers and protoc serve it when the versions are equal, so it is pinned to the
# installed libprotobuf-dev's version.
runtime_foreign_packages=(libprotobuf-lite32:arm64 libdrm-dev:arm64)

not_installed() {  # not_installed PACKAGE...: prints those dpkg does not have installed
  local package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
      echo "$package"
  done
}
mapfile -t missing < <(not_installed "${packages[@]}")
mapfile -t missing_foreign < <(not_installed "${foreign_packages[@]}")
mapfile -t missing_runtime_foreign < <(not_installed "${runtime_foreign_packages[@]}")

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ] || [ ${#missing_foreign[@]} -gt 0 ] ||
    [ ${#missing_runtime_foreign[@]} -gt 0 ] || [ "${apt_lists_stale:-0}" = 1 ]; then
  # A mirror caught mid-sync fails single foreign-architecture indexes (seen for armhf
  # security); the installs below still work from the lists that did download.
  "${run_as_root[@]}" apt-get update -qq ||
    echo "setup: apt-get update reported errors; installing from the lists it has"
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${run_as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The target's cmocka is installed on its own: a mirror whose foreign-architecture packages lag
# the native ones (multiarch needs equal versions) must not stop the native build and tests.
# scripts/cross_test.sh then says the ARM tests were skipped, and why.
if [ ${#missing_foreign[@]} -gt 0 ]; then
  echo "setup: installing ${missing_foreign[*]}"
  "${run_as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing_foreign[@]}" \
    >/dev/null || echo "setup: WARNING: could not install ${missing_foreign[*]}; the ARM" \
    "cross tests will be skipped"
fi
# Installed on their own too: without them only the runtime's cross build is skipped.
if [ ${#missing_runtime_foreign[@]} -gt 0 ]; then
  protobuf_version=$(dpkg-query -W -f='${Version}' libprotobuf-dev 2>/dev/null || true)
  pinned=()
  for package in "${missing_runtime_foreign[@]}"; do
    if [ "$package" = libprotobuf-lite32:arm64 ] && [ -n "$protobuf_version" ]; then
      package="$package=$protobuf_version"
    fi
    pinned+=("$package")
  done
  echo "setup: installing ${pinned[*]}"
  "${run_as_root[@]}" apt-get install -y -qq --no-install-recommends "${pinned[@]}" \
    >/dev/null || echo "setup: WARNING: could not install ${pinned[*]}; the runtime's aarch64" \
    "cross build will be skipped"
fi
echo "setup: all packages present"

# Python tools for tests: the onnx package (model builders, backend node tests), ONNX Runtime
# (the numerical oracle and performance peer), pytest (tests/python, the openrknn package) and
# wheel (its offline `pip install` test), grpcio + grpcio-tools (the package's rknn_server
# client, tested against the daemon), in a venv inside the checkout. The tests import openrknn
# from tools/python directly.
venv=.venv
python_packages=("onnx==1.23.*" "onnxruntime==1.31.*" "numpy>=1.26,<3" "pytest==8.*" "wheel"
                 "grpcio==1.85.*" "grpcio-tools==1.85.*")
cd "$(dirname "$0")/.."
if ! "$venv/bin/python" -c "import onnx, onnxruntime, numpy, pytest, wheel, grpc, grpc_tools" \
    2>/dev/null; then
  echo "setup: installing ${python_packages[*]} into $venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${python_packages[@]}"
fi
# A trained network for the converter's int8 checks (tests/models/pretrained.py): nudenet's
# wheel carries a YOLOv8n as ONNX. Only that file is used, so not its dependencies (opencv).
if ! "$venv/bin/python" -c "import importlib.util as u; assert u.find_spec('nudenet')" \
    2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "nudenet==3.4.2"
fi
echo "setup: python venv ready ($venv)"
