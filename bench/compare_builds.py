#!/usr/bin/env python3
"""Whole-model latency of two OpenRKNN builds and ONNX Runtime, interleaved, float32 or int8.

    compare_builds.py --before BUILD --after BUILD [--work DIR] [--models ...] [--threads 1,2]
                      [--rounds 3] [--runs 10] [--precision fp32|int8]

For measuring a change: per round and per (model, threads) it runs one fresh process per
engine (bench_model of each build, bench/ort_runner.py) in an order that rotates every round,
on the .rknn and .onnx files bench_models.py left in --work (default AFTER/bench-work). It
prints, per engine, the median over rounds of each process's median wall time per run and of
its median process CPU time per run. With one thread the CPU time is the latency without the
time other processes took the core, the figure to compare on a busy shared machine; with more
threads it also counts spinning workers, so compare wall times there (and say the load).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("before", "after", "ort")


def measure(args, engine: str, model: str, threads: int) -> dict:
    work = Path(args.work)
    if engine == "ort":
        # int8: the QDQ model bench_models.py quantized from the same calibration samples.
        onnx_path = (work / "onnx" / f"{model}.onnx" if args.precision == "fp32"
                     else work / f"{model}_qdq.onnx")
        command = [sys.executable, str(ROOT / "bench/ort_runner.py"), str(onnx_path),
                   "--threads", str(threads)]
        environment = dict(os.environ)
    else:
        build = args.before if engine == "before" else args.after
        command = [str(Path(build) / "bench/bench_model"),
                   str(work / f"{model}_{args.precision}.rknn")]
        environment = dict(os.environ, ORKNN_CPU_THREADS=str(threads))
    command += ["--runs", str(args.runs), "--warmup", "3"]
    output = subprocess.run(command, env=environment, capture_output=True, text=True, check=True)
    return json.loads(output.stdout.strip().splitlines()[-1])


def cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="build directory with bench/bench_model")
    parser.add_argument("--after", required=True, help="build directory with bench/bench_model")
    parser.add_argument("--work", help="models made by bench_models.py (default AFTER/bench-work)")
    parser.add_argument("--models", default="mobilenet_v2,resnet18,yolov5s,resnet50")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--precision", choices=("fp32", "int8"), default="fp32")
    args = parser.parse_args()
    args.work = args.work or str(Path(args.after) / "bench-work")
    models = args.models.split(",")
    thread_counts = [int(t) for t in args.threads.split(",")]

    wall: dict = {}
    cpu: dict = {}
    for round_index in range(args.rounds):
        order = ENGINES[round_index % 3:] + ENGINES[:round_index % 3]
        for model in models:
            for threads in thread_counts:
                for engine in order:
                    result = measure(args, engine, model, threads)
                    wall.setdefault((model, threads, engine), []).append(result["median_ms"])
                    cpu.setdefault((model, threads, engine), []).append(result["cpu_median_ms"])
                print(f"round {round_index + 1} {model} {threads}t wall ms",
                      {e: round(wall[(model, threads, e)][-1], 2) for e in ENGINES},
                      file=sys.stderr, flush=True)

    for title, table in (("wall time", wall), ("process CPU time", cpu)):
        print(f"\n{args.precision}: median {title} per run, ms: median over {args.rounds} interleaved rounds "
              f"(min-max), each a process's median of {args.runs} runs after 3 warm-up runs.\n")
        print("| model | threads | before | after | ONNX Runtime | before/ORT | after/ORT "
              "| after/before |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for model in models:
            for threads in thread_counts:
                values = {e: table[(model, threads, e)] for e in ENGINES}
                median = {e: statistics.median(v) for e, v in values.items()}
                print(f"| {model} | {threads} | {cell(values['before'])} | "
                      f"{cell(values['after'])} | {cell(values['ort'])} | "
                      f"{median['before'] / median['ort']:.2f} | "
                      f"{median['after'] / median['ort']:.2f} | "
                      f"{median['after'] / median['before']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
