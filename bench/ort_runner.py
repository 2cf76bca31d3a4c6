#!/usr/bin/env python3
"""Times one ONNX model in ONNX Runtime, the peer engine of bench_models.py.

    ort_runner.py MODEL.onnx --threads N [--runs N] [--warmup N]

Prints one JSON object: {"init_ms": ..., "median_ms": ..., "run_ms": [...]}. The session uses
N intra-op threads, one inter-op thread, sequential execution and all graph optimizations (ORT's
defaults for a latency benchmark); inputs are seeded random values of each input's shape.
"""

import argparse
import json
import statistics
import time

import numpy as np
import onnxruntime as ort

TYPES = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(uint8)": np.uint8,
    "tensor(int8)": np.int8,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    init_ms = (time.perf_counter() - start) * 1e3

    generator = np.random.default_rng(0)
    feeds = {}
    for item in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in item.shape]
        dtype = TYPES.get(item.type, np.float32)
        if np.issubdtype(dtype, np.floating):
            feeds[item.name] = generator.random(shape, dtype=np.float32).astype(dtype)
        else:
            feeds[item.name] = generator.integers(0, 10, shape).astype(dtype)

    times = []
    cpu_times = []  # process CPU time per run: bench_model.cc's cpu_median_ms
    for index in range(args.warmup + args.runs):
        start = time.perf_counter()
        cpu_start = time.process_time()
        session.run(None, feeds)
        if index >= args.warmup:
            times.append((time.perf_counter() - start) * 1e3)
            cpu_times.append((time.process_time() - cpu_start) * 1e3)
    print(json.dumps({"init_ms": init_ms, "median_ms": statistics.median(times),
                      "cpu_median_ms": statistics.median(cpu_times), "run_ms": times}))


if __name__ == "__main__":
    main()
