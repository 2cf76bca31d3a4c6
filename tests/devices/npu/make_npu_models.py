#!/usr/bin/env python3
"""Writes the whole-network models of the NPU tests: MobileNetV2, ResNet18 and the
YOLOv5s-shaped network from tests/models/networks.py at reduced input sizes (CI cost), converted
with rknn-convert twice: int8 (per-channel, two random calibration samples) and float16
(`<name>_fp16.rknn`).

    make_npu_models.py --converter PATH --out DIR

Models are rebuilt only when missing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "models"))
sys.path.insert(0, str(HERE.parent.parent / "tools"))

import networks  # noqa: E402
from converter import Converter, write_dataset  # noqa: E402

MODELS = {
    "mobilenet_v2_64": lambda: networks.mobilenet_v2(resolution=64, classes=100),
    "resnet18_64": lambda: networks.resnet18(resolution=64, classes=100),
    "yolov5s_96": lambda: networks.yolov5s(resolution=96, classes=8),
}


def build(name, out_dir, converter, precision):
    suffix = "_fp16" if precision == "fp16" else ""
    target = out_dir / f"{name}{suffix}.rknn"
    if target.exists():
        return target
    built = MODELS[name]()
    model = built[0] if isinstance(built, tuple) else getattr(built, "model", built)
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        onnx_path = work / f"{name}.onnx"
        onnx.save(model, onnx_path)
        rng = np.random.default_rng(5)
        inputs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim])
                  for i in model.graph.input]
        samples = [{n: rng.standard_normal(s).astype(np.float32) for n, s in inputs}
                   for _ in range(2)]
        dataset = write_dataset(work / "data", samples, [n for n, _ in inputs])
        partial = out_dir / f"{name}{suffix}.rknn.partial"
        if precision == "fp16":
            converter.convert(onnx_path, partial, "fp16")
        else:
            converter.convert(onnx_path, partial, "int8", dataset=dataset)
        partial.replace(target)
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--converter", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    converter = Converter(args.converter)
    for name in MODELS:
        for precision in ("int8", "fp16"):
            print(f"{name} {precision}: {build(name, out_dir, converter, precision)}")


if __name__ == "__main__":
    main()
