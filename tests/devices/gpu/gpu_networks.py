#!/usr/bin/env python3
"""Whole networks on the GPU device match the CPU device.

    gpu_networks.py --converter PATH --library librknnrt.so --work DIR [--placement all|prefer]

Builds MobileNetV2 and ResNet18 (tests/models/networks.py) at a reduced input size to keep CI
fast on PoCL, converts them to fp32 (and MobileNetV2 also to fp16) with rknn-convert, and runs
each twice through librknnrt: once on the CPU device, once with the GPU requested
(ORKNN_GPU=all puts every node the GPU supports there; --placement prefer uses
RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU and the partitioner's weighing instead). It fails
unless the outputs agree (fp32: max |gpu - cpu| <= 1e-4 x max(1, max |cpu|); fp16: 1e-2) and
the per-layer table shows the nodes on the GPU.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
sys.path.insert(0, str(TESTS / "tools"))
sys.path.insert(0, str(TESTS / "models"))

import converter as converter_module  # noqa: E402
import networks  # noqa: E402
import onnx  # noqa: E402
import orknn_runtime  # noqa: E402

FLAG_COLLECT_PERF = 0x8
FLAG_PRIOR_DEVICE_GPU = 0x400
QUERY_PERF_DETAIL = 3
TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2}

CASES = [
    # name, builder arguments, precisions
    ("mobilenet_v2", lambda: networks.mobilenet_v2(resolution=96, classes=100), ["fp32", "fp16"]),
    ("resnet18", lambda: networks.resnet18(resolution=64, classes=100), ["fp32"]),
]


class PerfDetail(ctypes.Structure):
    _fields_ = [("perf_data", ctypes.c_char_p), ("data_len", ctypes.c_uint64)]


def node_targets(runtime):
    """(op type, target) of every node row of the per-layer table."""
    detail = PerfDetail()
    code = runtime.lib.rknn_query(runtime.context, QUERY_PERF_DETAIL, ctypes.byref(detail),
                                  ctypes.sizeof(detail))
    if code != 0:
        raise RuntimeError(f"rknn_query(PERF_DETAIL) returned {code}")
    rows = []
    for line in detail.perf_data.decode().splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[0].isdigit() and not fields[1].endswith("Operator"):
            rows.append((fields[1], fields[3]))
    return rows


def run_model(path, library, flags, inputs):
    with orknn_runtime.Runtime(path, library=library, flags=flags | FLAG_COLLECT_PERF) as runtime:
        outputs = runtime.run(inputs, layout="nchw")
        return outputs, node_targets(runtime)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--converter", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--placement", choices=["all", "prefer"], default="all")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    convert = converter_module.Converter(args.converter)
    failures = 0
    for name, build, precisions in CASES:
        onnx_path = args.work / f"{name}.onnx"
        if not onnx_path.exists():
            onnx.save(build(), str(onnx_path))
        model = onnx.load(str(onnx_path))
        dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        inputs = [np.random.default_rng(5).standard_normal(dims).astype(np.float32)]
        for precision in precisions:
            rknn_path = args.work / f"{name}_{precision}.rknn"
            if not rknn_path.exists():
                convert.convert(onnx_path, rknn_path, precision)
            os.environ.pop("ORKNN_GPU", None)  # no flag, no variable: CPU only
            expected, cpu_targets = run_model(rknn_path, args.library, 0, inputs)
            if args.placement == "all":
                os.environ["ORKNN_GPU"] = "all"
                actual, targets = run_model(rknn_path, args.library, 0, inputs)
            else:
                actual, targets = run_model(rknn_path, args.library, FLAG_PRIOR_DEVICE_GPU, inputs)
            on_gpu = [op for op, target in targets if target == "GPU"]
            elsewhere = sorted({op for op, target in targets if target != "GPU"})
            assert all(target == "CPU" for _, target in cpu_targets), cpu_targets
            worst = 0.0
            for got, want in zip(actual, expected):
                scale = max(1.0, float(np.max(np.abs(want))))
                worst = max(worst, float(np.max(np.abs(got - want))) / scale)
            ok = worst <= TOLERANCE[precision] and len(on_gpu) > 0 and np.all(
                [np.isfinite(a).all() for a in actual])
            if args.placement == "all" and elsewhere:
                ok = False
            print(f"{name} {precision}: {len(on_gpu)}/{len(targets)} nodes on the GPU "
                  f"(not on the GPU: {', '.join(elsewhere) or 'none'}), "
                  f"max |gpu - cpu| / max(1, max |cpu|) = {worst:.3g} "
                  f"(limit {TOLERANCE[precision]:g}): {'ok' if ok else 'FAILED'}")
            failures += 0 if ok else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
