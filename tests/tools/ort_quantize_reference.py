#!/usr/bin/env python3
"""What a standard static w8a8 quantizer reaches on a test model: ONNX Runtime's
quantize_static (QDQ, int8 activations and per-channel int8 weights) calibrated on the same
samples compare_with_ort.py gives rknn-convert, its int8 model run on ONNX Runtime against the
float32 model on ONNX Runtime, on the same held-out inputs. Prints the cosine per output.

    ort_quantize_reference.py --model yolov5s --models-dir DIR --calibrate minmax entropy
    ort_quantize_reference.py --model yolov5n_320 --models-dir DIR --silu-float
    ort_quantize_reference.py --onnx any.onnx --calibrate percentile --per-tensor

--silu-float leaves Sigmoid and Mul unquantized and Conv outputs in float, so a Conv+SiLU
rounds once, at the SiLU's output, as rknn-convert's fused SiLU does (docs/quantization.md 4.3);
without it ONNX Runtime rounds the Conv's output, the Sigmoid's and the Mul's.
A measurement tool (docs/testing-converter.md, "A standard quantizer on the same models");
ctest runs it once on MobileNetV2 with --min-cosine, so it keeps working with new onnxruntime
releases. Exit 1 when an output's cosine is below --min-cosine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "models"))

from compare_with_ort import input_specs, make_samples, ort_session  # noqa: E402
from metrics import cosine  # noqa: E402

CALIBRATORS = ("minmax", "entropy", "percentile")

# Ops ONNX Runtime's QDQ quantizer handles, minus the two a SiLU is made of.
OPS_WITHOUT_SILU = ["Conv", "ConvTranspose", "Gemm", "MatMul", "Add", "Concat", "MaxPool",
                    "Resize", "AveragePool", "GlobalAveragePool", "Relu", "Clip", "Reshape",
                    "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Split", "Slice"]


class Samples:
    """onnxruntime.quantization.CalibrationDataReader over a list of feed dicts."""

    def __init__(self, samples):
        self.samples = iter(samples)

    def get_next(self):
        return next(self.samples, None)


def quantize(onnx_path, out_path, samples, calibrator, per_channel, silu_float):
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    method = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
              "percentile": CalibrationMethod.Percentile}[calibrator]
    extra = {}
    op_types = None
    if silu_float:
        op_types = OPS_WITHOUT_SILU
        extra["OpTypesToExcludeOutputQuantization"] = ["Conv"]
    quantize_static(str(onnx_path), str(out_path), Samples(samples),
                    quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    calibrate_method=method, op_types_to_quantize=op_types,
                    extra_options=extra)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a make_models.py model name (built if missing)")
    source.add_argument("--onnx", help="any ONNX file (inputs as compare_with_ort.py makes them)")
    parser.add_argument("--models-dir", help="where make_models.py models are cached")
    parser.add_argument("--calibrate", nargs="+", default=["minmax"], choices=CALIBRATORS)
    parser.add_argument("--per-tensor", action="store_true",
                        help="per-tensor weights (the default is per output channel)")
    parser.add_argument("--silu-float", action="store_true")
    parser.add_argument("--calibration-samples", type=int, default=20)
    parser.add_argument("--samples", type=int, default=3, help="held-out inputs compared")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--work", help="keep the quantized models here")
    parser.add_argument("--min-cosine", type=float, default=None,
                        help="exit 1 when any output's worst cosine is below this")
    args = parser.parse_args(argv)

    import onnx

    work = Path(args.work or tempfile.mkdtemp(prefix="orknn-ortq-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.model:
        import make_models

        onnx_path = make_models.build_model(args.model, Path(args.models_dir or work / "models"))
    else:
        onnx_path = Path(args.onnx)
        args.model = onnx_path.stem
    model = onnx.load(str(onnx_path), load_external_data=False)
    specs = input_specs(model)
    output_names = [o.name for o in model.graph.output]
    # The same seeds as compare_with_ort.py: the same calibration and held-out inputs.
    calibration = make_samples(specs, args.calibration_samples, args.seed)
    held_out = make_samples(specs, args.samples, args.seed + 1000)
    reference = ort_session(onnx_path)
    expected = [reference.run(output_names, sample) for sample in held_out]

    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset < 13:
        # Per-channel DequantizeLinear (its axis attribute) needs opset 13.
        from onnx import version_converter

        model = version_converter.convert_version(onnx.load(str(onnx_path)), 13)
        onnx_path = work / f"{args.model}_opset13.onnx"
        onnx.save(model, str(onnx_path))
    # ONNX Runtime's recommended pre-processing: its basic graph optimizations (which fold
    # BatchNormalization into Conv, as rknn-convert does) and shape inference.
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = work / f"{args.model}_prepared.onnx"
    quant_pre_process(str(onnx_path), str(prepared), skip_symbolic_shape=True)  # static shapes
    onnx_path = prepared
    lowest = 1.0
    for calibrator in args.calibrate:
        tag = f"{calibrator}_{'tensor' if args.per_tensor else 'channel'}"
        tag += "_silufloat" if args.silu_float else ""
        out_path = work / f"{args.model}_ortq_{tag}.onnx"
        quantize(onnx_path, out_path, calibration, calibrator, not args.per_tensor,
                 args.silu_float)
        session = ort_session(out_path)
        worst = [1.0] * len(output_names)
        for sample, wanted in zip(held_out, expected):
            got = session.run(output_names, sample)
            for index, (a, r) in enumerate(zip(got, wanted)):
                worst[index] = min(worst[index], cosine(a, r))
        cells = " ".join(f"{name}:{value:.4f}" for name, value in zip(output_names, worst))
        print(f"{args.model} ORT quantize_static {tag}: worst {min(worst):.4f} ({cells})",
              flush=True)
        lowest = min(lowest, min(worst))
    if args.min_cosine is not None and lowest < args.min_cosine:
        print(f"FAIL: cosine {lowest:.4f} < {args.min_cosine}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
