#!/usr/bin/env python3
"""Times one ONNX model in OpenVINO's CPU plugin, a peer engine of bench_models.py.

    openvino_runner.py MODEL.onnx --threads N [--runs N] [--warmup N]

Prints one JSON object (runner_common.py). OpenVINO reads the ONNX file itself (the float model,
or for int8 the same QDQ model ONNX Runtime runs, which its low-precision transformations turn
into int8 kernels). Compiled for the CPU plugin with the LATENCY performance hint (one stream),
INFERENCE_NUM_THREADS = N, and INFERENCE_PRECISION_HINT = f32: on CPUs with AVX512_BF16 or AMX
(this Zen4 machine included) the plugin's default is bf16, which would compare our float32
against bfloat16 arithmetic. ENABLE_CPU_PINNING = false: neither ours nor ONNX Runtime pins its
threads, and on a shared machine a pinned thread waits whenever another process holds its core
instead of moving. Inputs are runner_common's seeded arrays.
"""

import time

import openvino as ov

from runner_common import argument_parser, print_result, seeded_inputs, time_runs


def main():
    args = argument_parser(__doc__.splitlines()[0], "ONNX model (float or QDQ)").parse_args()
    core = ov.Core()
    config = {
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": args.threads,
        "INFERENCE_PRECISION_HINT": "f32",
        "ENABLE_CPU_PINNING": False,
    }
    start = time.perf_counter()
    compiled = core.compile_model(core.read_model(args.model), "CPU", config)
    init_ms = (time.perf_counter() - start) * 1e3

    ports = compiled.inputs
    shapes = [[d.get_length() if d.is_static else 1 for d in port.get_partial_shape()]
              for port in ports]
    arrays = seeded_inputs([(shape, port.get_element_type().to_dtype())
                            for shape, port in zip(shapes, ports)])
    request = compiled.create_infer_request()
    feeds = {index: array for index, array in enumerate(arrays)}
    timing = time_runs(lambda: request.infer(feeds), args.runs, args.warmup)
    print_result(init_ms, timing, version=ov.get_version().split("-")[0],
                 threads=int(compiled.get_property("INFERENCE_NUM_THREADS")),
                 precision=compiled.get_property("INFERENCE_PRECISION_HINT").to_string())


if __name__ == "__main__":
    main()
