#!/usr/bin/env python3
"""Two librknnrt builds in one process, run by run: resolves changes of a percent or less.

    ab_builds.py --before LIB --after LIB MODEL.rknn [--threads 1] [--rounds 30] [--layers 4]

LIB is a librknnrt.so (or a build directory). Separate processes of the same build differ by
1-3% on this project's shared VM (page placement, the phase the machine is in), more than many
changes are worth, so compare_builds.py and paired_compare.py cannot tell those apart. Here one
process loads both libraries (ctypes keeps them apart: each has its own contexts, thread pools
and caches), makes one context of the model in each, and alternates them round by round, the
order swapped every round; each timed run follows an untimed run of the same context, so both
are timed warm. It prints the medians, the ratio after / before, and the layers whose median
time moved most (the runtime's per-layer profile).

The two contexts of one process differ by 0.5-1% with the order they were made in, whichever
build each is (the second ran slower in some processes, faster in others: session 23), so this
runs the comparison twice, in two child processes, each making the other build's context
first, and prints both ratios and their geometric mean, the figure to read. One build against
itself read 0.9988-1.0024 this way (resnet50 and resnet18 float32, 30 rounds).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def library_path(value: str) -> str:
    path = Path(value)
    if path.is_dir():
        path = path / "librknnrt" / "api" / "librknnrt.so"
    if not path.is_file():
        raise SystemExit(f"ab_builds.py: no librknnrt.so at {path}")
    return str(path.resolve())


def layer_times(runtime) -> dict:
    """Per-layer microseconds of the last run: index, op and output shape -> time."""
    times = {}
    for line in runtime.performance_detail().splitlines():
        fields = line.split()
        if len(fields) > 7 and fields[0].isdigit():
            times[f"{fields[0]} {fields[1]} {fields[5]}"] = float(fields[7])
    return times


def one_process(args):
    """The child: both contexts, `first` made first; prints one JSON line."""
    import numpy as np
    from openrknn.native import FLAG_COLLECT_PERF_MASK, Runtime

    from runner_common import seeded_inputs

    order = ("before", "after") if args.first == "before" else ("after", "before")
    runtimes = {}
    for name in order:
        library = args.before if name == "before" else args.after
        runtimes[name] = Runtime(args.model, library=library, flags=FLAG_COLLECT_PERF_MASK)
    shapes = [(info.nchw_shape, np.float32) for info in runtimes["before"].inputs]
    arrays = seeded_inputs(shapes)
    for runtime in runtimes.values():
        runtime.set_inputs(arrays)
        runtime.run_only()
    walls = collections.defaultdict(list)
    layers = {name: collections.defaultdict(list) for name in runtimes}
    for index in range(args.rounds):
        for name in (order if index % 2 == 0 else order[::-1]):
            runtime = runtimes[name]
            runtime.run_only()
            start = time.perf_counter()
            runtime.run_only()
            walls[name].append((time.perf_counter() - start) * 1e3)
            for key, value in layer_times(runtime).items():
                layers[name][key].append(value)
    result = {"first": args.first}
    for name in runtimes:
        result[name] = statistics.median(walls[name])
        result[name + "_layers"] = {key: statistics.median(values)
                                    for key, values in layers[name].items()}
    print(json.dumps(result), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--before", required=True, help="librknnrt.so or a build directory")
    parser.add_argument("--after", required=True, help="librknnrt.so or a build directory")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--layers", type=int, default=4, help="layers to list each way")
    parser.add_argument("--first", choices=("before", "after"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.before, args.after = library_path(args.before), library_path(args.after)
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT / "tools" / "python"))
    if args.first:
        one_process(args)
        return

    environment = dict(os.environ, ORKNN_CPU_THREADS=str(args.threads))
    results = []
    for first in ("before", "after"):
        command = [sys.executable, __file__, args.model, "--before", args.before, "--after",
                   args.after, "--rounds", str(args.rounds), "--first", first]
        output = subprocess.run(command, env=environment, stdout=subprocess.PIPE, text=True,
                                check=True).stdout
        results.append(json.loads(output.strip().splitlines()[-1]))
    ratios = [result["after"] / result["before"] for result in results]
    name = Path(args.model).name
    for result, ratio in zip(results, ratios):
        print(f"{name} {args.threads}t, {result['first']} made first: before "
              f"{result['before']:.3f} ms, after {result['after']:.3f} ms, ratio {ratio:.4f}")
    print(f"{name} {args.threads}t: after / before {math.sqrt(ratios[0] * ratios[1]):.4f} "
          f"(geometric mean of the two orders, {args.rounds} rounds each)")
    # Per layer: the mean over both processes of each build's median.
    moved = []
    for key in results[0]["before_layers"]:
        before = sum(result["before_layers"].get(key, 0.0) for result in results) / 2
        after = sum(result["after_layers"].get(key, 0.0) for result in results) / 2
        moved.append((after - before, key, before, after))
    moved.sort()
    shown = moved[:args.layers] + moved[-args.layers:] if len(moved) > 2 * args.layers else moved
    for delta, key, before, after in shown:
        print(f"  {key:44s} before {before:8.0f} us  after {after:8.0f} us  {delta:+7.0f}")


if __name__ == "__main__":
    main()
