#!/usr/bin/env python3
"""Times one ncnn model (converted from ONNX by pnnx) in ncnn, a peer engine of bench_models.py.

    ncnn_runner.py MODEL.ncnn.param --input-shapes 1x3x224x224[,...] --threads N
                   [--runs N] [--warmup N]

Prints one JSON object (runner_common.py). The weights are MODEL.ncnn.bin beside the param file;
--input-shapes gives the ONNX inputs' shapes in order (an ncnn param file does not carry them),
so the seeded arrays are the ones the other peers get. ncnn runs with num_threads = N and with
fp16 and bf16 storage and arithmetic off: on x86 with F16C its defaults store weights and
activations as fp16, which would compare our float32 against half precision. One inference
is what an ncnn application does: a new extractor, the inputs, and every output extracted
(ncnn computes only the layers an extracted blob needs).
"""

import time
from pathlib import Path

import ncnn
import numpy as np

from runner_common import argument_parser, print_result, seeded_inputs, time_runs


def parse_shapes(text: str):
    try:
        return [[int(d) for d in shape.split("x")] for shape in text.split(",") if shape]
    except ValueError:
        raise SystemExit(f"--input-shapes {text!r}: expected AxBxC shapes separated by commas")


def ncnn_mat(array: np.ndarray):
    # ncnn's Mat has no batch axis: a batch of one is the array without it.
    if array.ndim > 1 and array.shape[0] == 1:
        array = array[0]
    return ncnn.Mat(np.ascontiguousarray(array)).clone()


def main():
    parser = argument_parser(__doc__.splitlines()[0], "ncnn .param file (weights: .bin beside it)")
    parser.add_argument("--input-shapes", required=True)
    args = parser.parse_args()
    param = Path(args.model)
    weights = param.with_suffix(".bin")
    shapes = parse_shapes(args.input_shapes)

    start = time.perf_counter()
    net = ncnn.Net()
    net.opt.num_threads = args.threads
    net.opt.use_fp16_storage = False
    net.opt.use_fp16_packed = False
    net.opt.use_fp16_arithmetic = False
    net.opt.use_bf16_storage = False
    if net.load_param(str(param)) != 0 or net.load_model(str(weights)) != 0:
        raise SystemExit(f"ncnn could not load {param} / {weights}")
    init_ms = (time.perf_counter() - start) * 1e3

    input_names, output_names = net.input_names(), net.output_names()
    if len(input_names) != len(shapes):
        raise SystemExit(f"{param}: {len(input_names)} inputs, --input-shapes gives {len(shapes)}")
    mats = [ncnn_mat(array) for array in seeded_inputs([(s, np.float32) for s in shapes])]

    def run_once():
        extractor = net.create_extractor()
        for name, mat in zip(input_names, mats):
            extractor.input(name, mat)
        for name in output_names:
            status, _ = extractor.extract(name)
            if status != 0:
                raise RuntimeError(f"ncnn: extracting {name} returned {status}")

    timing = time_runs(run_once, args.runs, args.warmup)
    print_result(init_ms, timing, version=ncnn.__version__, threads=args.threads)


if __name__ == "__main__":
    main()
