#!/usr/bin/env bash
# Builds the runtime and rknn-convert, then prints the converter's acceptance figures
# (docs/testing-converter.md): per network fp32/fp16 error and int8 cosine per calibration
# algorithm and weight method against ONNX Runtime, the ONNX node tests' N/M/K, and ResNet50's
# conversion time with 20 calibration samples (median of 3).
#
#   scripts/converter_figures.sh [--quick] [--runs N] [--samples N] [--converter-args ARGS]
#                                [BUILD_DIR]
#
# BUILD_DIR defaults to build-figures. --quick leaves out ResNet50 and YOLOv5s at 640x640;
# --samples sets the held-out inputs per model (default 3); --converter-args adds rknn-convert
# options to every conversion (e.g. '--sequential-calibration true'). Builds with ORKNN_JOBS (2)
# jobs.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
runs=3
samples=3
build_dir=build-figures
converter_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --runs) runs=$2; shift ;;
    --samples) samples=$2; shift ;;
    --converter-args) converter_args=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) build_dir=$1 ;;
  esac
  shift
done

python=.venv/bin/python
if [ ! -x "$python" ]; then
  echo "converter_figures: $python is missing; run scripts/setup.sh" >&2
  exit 1
fi

# Build output goes to stderr: stdout is the table alone.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
cmake --build "$build_dir" -j "${ORKNN_JOBS:-2}" --target rknnrt rknn-convert >&2

converter="$build_dir/tools/rknn-convert/rknn-convert"
library="$build_dir/librknnrt/api/librknnrt.so"
models="$build_dir/tests/converter-models"
work="$build_dir/converter-figures"
mkdir -p "$work"

"$python" tests/models/make_models.py --out "$models" networks >&2
"$python" tests/tools/converter_figures.py --converter "$converter" --library "$library" \
  --models-dir "$models" --work "$work" --runs "$runs" --samples "$samples" \
  --converter-args "$converter_args" "${quick[@]}"
