#!/usr/bin/env python3
"""Whole-model latency of OpenRKNN's CPU runtime against ONNX Runtime on the same models.

    bench_models.py --build BUILD [--models mobilenet_v2,resnet18,resnet50,yolov5s]
                    [--precisions fp32,int8] [--threads 1,2] [--rounds 5] [--runs 10]
                    [--work DIR] [--markdown FILE] [--svg FILE] [--no-profile]

Models come from the test-model builders (tests/models/make_models.py), converted with the
build's rknn-convert (fp32: float32 weights; int8: w8a8 per-channel with a seeded random
calibration set). ONNX Runtime runs the same ONNX model (fp32) or its QDQ quantization made by
onnxruntime.quantization from the same calibration samples (int8). Everything is cached in
--work (default BUILD/bench-work).

Each round runs every (model, precision, threads) once in each engine, one fresh process per
measurement (bench_model for ours, ort_runner.py for ORT), alternating which engine goes first;
a process reports the median of its --runs timed runs after warm-up. The table gives, per
engine, the median over rounds with the min-max, and the ratio ours / ORT (below 1: we are
faster). Thread counts: ORKNN_CPU_THREADS for ours, intra_op_num_threads for ORT. With
profiling (the default) it also prints our per-op-type time from the runtime's own table.
This machine is shared and noisy: compare figures from the same run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))

import converter as converter_tools  # noqa: E402  (tests/tools/converter.py)

CALIBRATION_SAMPLES = 8


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def stale(target: Path, *sources: Path) -> bool:
    return not target.exists() or any(s.stat().st_mtime > target.stat().st_mtime for s in sources)


def input_specs(onnx_path: Path):
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    constants = {i.name for i in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in constants:
            continue
        shape = [d.dim_value if d.dim_value > 0 else 1 for d in value.type.tensor_type.shape.dim]
        specs.append((value.name, shape))
    return specs


def calibration_samples(onnx_path: Path):
    generator = np.random.default_rng(1234)
    return [{name: generator.random(shape, dtype=np.float32) for name, shape in input_specs(onnx_path)}
            for _ in range(CALIBRATION_SAMPLES)]


def prepare(args, model: str, precision: str):
    """Returns (our .rknn path, ORT's .onnx path), building what is missing."""
    work = Path(args.work)
    onnx_dir = work / "onnx"
    onnx_path = onnx_dir / f"{model}.onnx"
    if not onnx_path.exists():
        log(f"building {model}.onnx")
        subprocess.run([sys.executable, str(ROOT / "tests/models/make_models.py"), "--out",
                        str(onnx_dir), model], check=True, stdout=subprocess.DEVNULL)
    converter = converter_tools.Converter(Path(args.build) / "tools/rknn-convert/rknn-convert")
    rknn_path = work / f"{model}_{precision}.rknn"
    ort_path = onnx_path
    if precision == "fp32":
        if stale(rknn_path, onnx_path, Path(converter.path)):
            log(f"converting {model} fp32")
            converter.convert(onnx_path, rknn_path, "fp32")
        return rknn_path, ort_path
    dataset_dir = work / f"calibration_{model}"
    samples = None
    if stale(rknn_path, onnx_path, Path(converter.path)):
        samples = calibration_samples(onnx_path)
        dataset = converter_tools.write_dataset(dataset_dir, samples, [n for n, _ in input_specs(onnx_path)])
        log(f"converting {model} int8")
        converter.convert(onnx_path, rknn_path, "int8", dataset=dataset)
    ort_path = work / f"{model}_qdq.onnx"
    if stale(ort_path, onnx_path):
        from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                              quantize_static)

        samples = samples or calibration_samples(onnx_path)

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.items = iter(samples)

            def get_next(self):
                return next(self.items, None)

        import onnx
        from onnx import version_converter
        from onnxruntime.quantization.shape_inference import quant_pre_process

        log(f"quantizing {model} for ONNX Runtime (QDQ, u8 activations, s8 per-channel weights)")
        # Per-channel QDQ needs opset >= 13; pre-processing folds BatchNormalization first, as
        # ORT's quantization guide recommends.
        upgraded = work / f"{model}_opset13.onnx"
        model_proto = onnx.load(str(onnx_path))
        if model_proto.opset_import[0].version < 13:
            model_proto = version_converter.convert_version(model_proto, 13)
        onnx.save(model_proto, str(upgraded))
        prepared = work / f"{model}_prepared.onnx"
        quant_pre_process(str(upgraded), str(prepared), skip_symbolic_shape=True)
        quantize_static(str(prepared), str(ort_path), Reader(), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
    return rknn_path, ort_path


def run_json(command, env=None):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def ours(args, rknn_path, threads, profile=False):
    env = dict(os.environ, ORKNN_CPU_THREADS=str(threads))
    command = [str(Path(args.build) / "bench/bench_model"), str(rknn_path), "--runs",
               str(args.runs), "--warmup", str(args.warmup)]
    if profile:
        command.append("--profile")
    return run_json(command, env)


def ort_run(args, onnx_path, threads):
    return run_json([sys.executable, str(ROOT / "bench/ort_runner.py"), str(onnx_path), "--threads",
                     str(threads), "--runs", str(args.runs), "--warmup", str(args.warmup)])


def op_type_times(perf_detail: str):
    """(op type, microseconds, share) rows of the runtime's ranking table."""
    rows = []
    in_ranking = False
    for line in perf_detail.splitlines():
        if "Operator Time Consuming Ranking Table" in line:
            in_ranking = True
            continue
        parts = line.split()
        if in_ranking and len(parts) >= 7 and parts[1].isdigit():
            rows.append((parts[0], int(parts[5]), parts[6]))
    return rows


def svg_chart(results, path):
    """Bars of ours / ORT latency ratio per configuration (1.0 = parity)."""
    bars = [(f"{m} {p} {t}t", r["ratio"]) for (m, p, t), r in results.items()]
    width, bar_height, left = 760, 22, 230
    height = 40 + bar_height * len(bars) + 30
    top = max([1.5] + [ratio for _, ratio in bars])
    scale = (width - left - 60) / top
    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'font-family="sans-serif" font-size="12">',
             f'<text x="10" y="20" font-size="14">OpenRKNN / ONNX Runtime median latency '
             '(lower is better; 1.0 = parity)</text>']
    for index, (label, ratio) in enumerate(bars):
        y = 35 + index * bar_height
        colour = "#2a7" if ratio <= 1.0 else "#c44"
        lines.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{label}</text>')
        lines.append(f'<rect x="{left}" y="{y + 3}" width="{ratio * scale:.1f}" '
                     f'height="{bar_height - 6}" fill="{colour}"/>')
        lines.append(f'<text x="{left + ratio * scale + 4:.1f}" y="{y + 15}">{ratio:.2f}</text>')
    x = left + scale
    lines.append(f'<line x1="{x:.1f}" y1="30" x2="{x:.1f}" y2="{height - 25}" stroke="#333" '
                 'stroke-dasharray="4 3"/>')
    lines.append("</svg>")
    Path(path).write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", required=True, help="build directory with bench_model")
    parser.add_argument("--work", help="cache of models (default BUILD/bench-work)")
    parser.add_argument("--models", default="mobilenet_v2,resnet18,resnet50,yolov5s")
    parser.add_argument("--precisions", default="fp32,int8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--markdown", help="also write the tables here")
    parser.add_argument("--svg", help="write a ratio chart here")
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    args.work = args.work or str(Path(args.build) / "bench-work")
    models = [m for m in args.models.split(",") if m]
    precisions = [p for p in args.precisions.split(",") if p]
    threads = [int(t) for t in args.threads.split(",") if t]

    configs = []
    for model in models:
        for precision in precisions:
            rknn_path, ort_path = prepare(args, model, precision)
            for count in threads:
                configs.append((model, precision, count, rknn_path, ort_path))

    samples = {(m, p, t): {"ours": [], "ort": []} for m, p, t, _, _ in configs}
    # Process CPU time per run (median of a process's runs): with one thread, the latency
    # without the time other processes took the core.
    cpu_samples = {(m, p, t): {"ours": [], "ort": []} for m, p, t, _, _ in configs}
    for round_index in range(args.rounds):
        for model, precision, count, rknn_path, ort_path in configs:
            key = (model, precision, count)
            order = ["ours", "ort"] if round_index % 2 == 0 else ["ort", "ours"]
            for engine in order:
                figure = (ours(args, rknn_path, count) if engine == "ours"
                          else ort_run(args, ort_path, count))
                samples[key][engine].append(figure["median_ms"])
                cpu_samples[key][engine].append(figure.get("cpu_median_ms", float("nan")))
            log(f"round {round_index + 1}/{args.rounds} {model} {precision} {count}t: "
                f"ours {samples[key]['ours'][-1]:.2f} ms, ORT {samples[key]['ort'][-1]:.2f} ms")

    results = {}
    out = ["| model | precision | threads | OpenRKNN ms (min-max) | ONNX Runtime ms (min-max) | "
           "ratio ours/ORT |", "|---|---|---:|---:|---:|---:|"]
    for key, engines in samples.items():
        ours_median = statistics.median(engines["ours"])
        ort_median = statistics.median(engines["ort"])
        results[key] = {"ours": ours_median, "ort": ort_median, "ratio": ours_median / ort_median}
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {ours_median:.2f} "
                   f"({min(engines['ours']):.2f}-{max(engines['ours']):.2f}) | {ort_median:.2f} "
                   f"({min(engines['ort']):.2f}-{max(engines['ort']):.2f}) | "
                   f"{ours_median / ort_median:.2f} |")
    text = [f"Medians over {args.rounds} interleaved process runs, each the median of "
            f"{args.runs} runs after {args.warmup} warm-up runs.", ""] + out + [""]
    single = [key for key in cpu_samples if key[2] == 1]
    if single:
        # On a busy shared machine the wall times above include other processes' time slices.
        text += ["One thread by process CPU time per run (medians over the same runs):", "",
                 "| model | precision | OpenRKNN CPU ms | ONNX Runtime CPU ms | ratio ours/ORT |",
                 "|---|---|---:|---:|---:|"]
        for key in single:
            ours_cpu = statistics.median(cpu_samples[key]["ours"])
            ort_cpu = statistics.median(cpu_samples[key]["ort"])
            text.append(f"| {key[0]} | {key[1]} | {ours_cpu:.2f} | {ort_cpu:.2f} | "
                        f"{ours_cpu / ort_cpu:.2f} |")
        text.append("")

    if not args.no_profile:
        for model in models:
            for precision in precisions:
                rknn_path = Path(args.work) / f"{model}_{precision}.rknn"
                figure = ours(args, rknn_path, threads[0], profile=True)
                rows = op_type_times(figure.get("perf_detail", ""))
                text.append(f"OpenRKNN per-op-type time, {model} {precision}, {threads[0]} thread(s), "
                            "one profiled run:")
                text.append("")
                text.append("| op type | us | share |")
                text.append("|---|---:|---:|")
                text += [f"| {op} | {us} | {share} |" for op, us, share in rows]
                text.append("")
    print("\n".join(text))
    if args.markdown:
        Path(args.markdown).write_text("\n".join(text) + "\n")
    if args.svg:
        svg_chart(results, args.svg)


if __name__ == "__main__":
    main()
