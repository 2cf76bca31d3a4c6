#!/usr/bin/env python3
"""Times one ONNX model in ONNX Runtime, a peer engine of bench_models.py.

    ort_runner.py MODEL.onnx --threads N [--runs N] [--warmup N]

Prints one JSON object (runner_common.py). The session uses N intra-op threads, one inter-op
thread, sequential execution and all graph optimizations (ORT's defaults for a latency
benchmark) on the CPU execution provider; inputs are runner_common's seeded arrays.
"""

import time

import numpy as np
import onnxruntime as ort

from runner_common import argument_parser, print_result, seeded_inputs, time_runs

TYPES = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(uint8)": np.uint8,
    "tensor(int8)": np.int8,
}


def main():
    args = argument_parser(__doc__.splitlines()[0], "ONNX model (float or QDQ)").parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    init_ms = (time.perf_counter() - start) * 1e3

    inputs = session.get_inputs()
    arrays = seeded_inputs([(item.shape, TYPES.get(item.type, np.float32)) for item in inputs])
    feeds = {item.name: array for item, array in zip(inputs, arrays)}
    timing = time_runs(lambda: session.run(None, feeds), args.runs, args.warmup)
    print_result(init_ms, timing, version=ort.__version__)


if __name__ == "__main__":
    main()
