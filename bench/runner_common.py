"""What every peer runner of bench_models.py shares, so the peers differ only in the engine:
the command line, the input data, the timing loop and the JSON line they print.

A runner is one fresh process per measurement: it loads the model, builds seeded inputs, runs
--warmup untimed inferences, then --runs timed ones, and prints one JSON object on its last
stdout line: {"init_ms", "median_ms", "cpu_median_ms", "run_ms", ...engine facts}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

# Seed of the input data: the same arrays for every peer (bench_model.cc, ours, fills its
# inputs with its own pseudo-random bytes; kernel timings do not depend on the values).
INPUT_SEED = 0


def argument_parser(description: str, model_help: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("model", help=model_help)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    return parser


def seeded_inputs(specs):
    """One array per (shape, numpy dtype) in `specs`, in order, from one seeded generator:
    floats uniform in [0, 1), integers in [0, 10)."""
    generator = np.random.default_rng(INPUT_SEED)
    arrays = []
    for shape, dtype in specs:
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in shape]
        if np.issubdtype(dtype, np.floating):
            arrays.append(generator.random(shape, dtype=np.float32).astype(dtype))
        else:
            arrays.append(generator.integers(0, 10, shape).astype(dtype))
    return arrays


def time_runs(run_once, runs: int, warmup: int) -> dict:
    """Wall and process CPU time of each timed call of run_once(), in milliseconds.

    The process CPU time counts every thread of the engine: with one thread it is the latency
    without the time other processes held the core (the figure to read on a shared machine);
    with more it also counts workers spinning while they wait."""
    if runs < 1:
        raise ValueError(f"--runs {runs}: at least one timed run is needed")
    times, cpu_times = [], []
    for index in range(warmup + runs):
        start = time.perf_counter()
        cpu_start = time.process_time()
        run_once()
        if index >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
            cpu_times.append((time.process_time() - cpu_start) * 1e3)
    return {"median_ms": statistics.median(times), "cpu_median_ms": statistics.median(cpu_times),
            "run_ms": times}


def print_result(init_ms: float, timing: dict, **facts):
    print(json.dumps({"init_ms": init_ms, **timing, **facts}), flush=True)
