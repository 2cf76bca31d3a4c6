#!/usr/bin/env bash
# The main job: build OpenRKNN, make a sample model (a MobileNetV2-shaped classifier with
# random weights, quantized to int8) and run it through the C API with the vendor-style demo,
# which prints the model's attributes, the top-5 classes and the per-layer time table.
# Usage: scripts/run_demo.sh [fp32|fp16|int8]
set -euo pipefail
cd "$(dirname "$0")/.."
precision=${1:-int8}
jobs=${ORKNN_JOBS:-$(nproc)}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs" --target orknn-make-model rknn_api_demo

out=build/demo
mkdir -p "$out"
model="$out/mobilenet_mini.$precision.rknn"
build/tools/orknn-make-model/orknn-make-model mobilenet_mini "$precision" "$model" \
  --input-npy "$out/input.npy"
build/samples/rknn_api_demo "$model" "$out/input.npy"
