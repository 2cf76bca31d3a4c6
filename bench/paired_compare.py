#!/usr/bin/env python3
"""Ours against ONNX Runtime in one process, one inference each in turn: the ratio that survives
this machine's slow phases.

    paired_compare.py --build BUILD [--work DIR] [--models mobilenet_v2,resnet18,resnet50,yolov5s]
                      [--precisions fp32,int8] [--threads 1,2] [--pairs 30] [--markdown FILE]

bench_models.py runs every engine in its own processes, which is what a user sees, but on a
shared machine a process can land in a phase that is 1.3-1.5x slower than the next one
(docs/cpu-kernels.md, "Session 12: where the four models stand on Zen 3"), and a median over a
few rounds cannot separate that from a real change. Here one process per (model, precision,
threads) holds both engines (ours through the C API with ctypes, tools/python/openrknn/native.py;
ONNX Runtime with bench_models.py's session options) and times them alternately, one inference
at a time, the order swapped every pair and a pause between runs so that neither engine's
spinning workers overlap the other's run (below). Both runs of a pair see the same phase, so
the median of the per-pair ratios ours / ORT is the figure to read; each engine's median time
is printed too. Models and their QDQ versions come from bench_models.py's --work cache, made
the same way (converted by the build's rknn-convert).

Inputs are bench/runner_common.py's seeded arrays; ours gets them once through rknn_inputs_set
(the conversion is outside the timed rknn_run, as in bench_model), ONNX Runtime with every run
(its QDQ model quantizes the input inside the run, as in ort_runner.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools" / "python"))

# A pause after each run. ONNX Runtime's workers keep spinning for tens of milliseconds after
# a run (its default, allow_spinning): with 20 ms pauses under `chrt -f 50`, where a spinning
# SCHED_FIFO thread keeps the CPU, two-thread pairs measured 1.40-1.58 against 1.00-1.12 with
# 100 ms (mobilenet_v2 and resnet18 int8, session 13). Turning ORT's spinning off instead
# would slow ORT (its two-thread runs take it as a default), so the pause it is.
SETTLE_SECONDS = 0.1
WARMUP = 3


def one_configuration(args):
    """The child process: both engines, alternating; prints one JSON line."""
    import numpy as np
    import onnxruntime as ort
    from openrknn.native import Runtime

    from ort_runner import TYPES
    from runner_common import seeded_inputs

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
    inputs = session.get_inputs()
    arrays = seeded_inputs([(item.shape, TYPES.get(item.type, np.float32)) for item in inputs])
    feeds = {item.name: array for item, array in zip(inputs, arrays)}

    runtime = Runtime(args.rknn, library=str(Path(args.build) / "librknnrt/api/librknnrt.so"))
    runtime.set_inputs([array.astype(np.float32) for array in arrays])

    def time_ours():
        start = time.perf_counter()
        runtime.run_only()
        return (time.perf_counter() - start) * 1e3

    def time_ort():
        start = time.perf_counter()
        session.run(None, feeds)
        return (time.perf_counter() - start) * 1e3

    for _ in range(WARMUP):
        time_ours()
        time_ort()
    ours, peer = [], []
    for pair in range(args.pairs):
        first, second = (time_ours, time_ort) if pair % 2 == 0 else (time_ort, time_ours)
        a = first()
        time.sleep(SETTLE_SECONDS)
        b = second()
        time.sleep(SETTLE_SECONDS)
        ours.append(a if first is time_ours else b)
        peer.append(b if first is time_ours else a)
    ratios = [o / p for o, p in zip(ours, peer)]
    print(json.dumps({"ours_ms": ours, "ort_ms": peer, "ratio_median": statistics.median(ratios),
                      "ratio_min": min(ratios), "ratio_max": max(ratios),
                      "ort_version": ort.__version__}), flush=True)


def main():
    import bench_models

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    bench_models.add_selection_arguments(parser)
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--markdown", help="also write the table to this file")
    # The child's arguments (one configuration).
    parser.add_argument("--rknn", help=argparse.SUPPRESS)
    parser.add_argument("--onnx", help=argparse.SUPPRESS)
    parser.add_argument("--one-thread-count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if args.rknn:
        args.threads = args.one_thread_count
        one_configuration(args)
        return

    args.work = args.work or str(Path(args.build) / "bench-work")
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    for model in args.models.split(","):
        for precision in args.precisions.split(","):
            rknn_path, onnx_path = bench_models.prepare(args, model, precision)
            for count in threads:
                env = dict(os.environ, ORKNN_CPU_THREADS=str(count))
                command = [sys.executable, __file__, "--build", args.build, "--rknn",
                           str(rknn_path), "--onnx", str(onnx_path), "--one-thread-count",
                           str(count), "--pairs", str(args.pairs)]
                result = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True,
                                        check=True)
                figure = json.loads(result.stdout.strip().splitlines()[-1])
                row = (f"| {model} | {precision} | {count} | "
                       f"{statistics.median(figure['ours_ms']):.2f} | "
                       f"{statistics.median(figure['ort_ms']):.2f} | "
                       f"{figure['ratio_median']:.3f} | "
                       # Same precision as the median: with two pairs the median is their
                       # mean, and a coarser max could print below it.
                       f"{figure['ratio_min']:.3f}-{figure['ratio_max']:.3f} |")
                print(row, file=sys.stderr, flush=True)
                rows.append(row)
    table = "\n".join([
        f"Ours / ONNX Runtime, {args.pairs} alternating pairs of single inferences per row, "
        "one process per row (bench/paired_compare.py).",
        "",
        "| model | precision | threads | ours median ms | ORT median ms | median of pair ratios "
        "| pair ratio min-max |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
    ])
    print(table)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")


if __name__ == "__main__":
    main()
