#!/usr/bin/env python3
"""Whole-model latency of OpenRKNN's CPU runtime against peer engines on the same models.

    bench_models.py --build BUILD [--models mobilenet_v2,resnet18,resnet50,yolov5s]
                    [--precisions fp32,int8] [--threads 1,2] [--rounds 5] [--runs 10]
                    [--peers ort,openvino,ncnn] [--work DIR] [--markdown FILE] [--svg FILE]
                    [--png FILE] [--no-profile] [--prepare-only]

Models come from the test-model builders (tests/models/make_models.py), converted with the
build's rknn-convert (fp32: float32 weights; int8: w8a8 per-channel with a seeded random
calibration set). The peers (bench/peers.py) run the same ONNX model (fp32) or its QDQ
quantization made by onnxruntime.quantization from the same calibration samples (int8):
ONNX Runtime and OpenVINO read those ONNX files, ncnn runs the float model converted by pnnx
(it has no int8 path from PyPI). Peers that are not installed are skipped with a line saying
how to install them (pip install -r bench/requirements-peers.txt). Everything is cached in
--work (default BUILD/bench-work).

Each round runs every (model, precision, threads) once in each engine, one fresh process per
measurement (bench_model for ours, bench/*_runner.py for peers), rotating which engine goes
first; a process reports the median of its --runs timed runs after warm-up. The table gives,
per engine, the median over rounds with the min-max, and the ratio ours / peer (below 1: we
are faster). Thread counts: ORKNN_CPU_THREADS for ours, each peer's own thread setting for
the rest. With profiling (the default) it also prints our per-op-type time from the runtime's
own table. This machine is shared and noisy: compare figures from the same run, not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

import converter as converter_tools  # noqa: E402  (tests/tools/converter.py)
import peers as peer_engines  # noqa: E402  (bench/peers.py)
import report  # noqa: E402  (bench/report.py)
from peers import onnx_inputs  # noqa: E402

CALIBRATION_SAMPLES = 8


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def stale(target: Path, *sources: Path) -> bool:
    return not target.exists() or any(s.stat().st_mtime > target.stat().st_mtime for s in sources)


def calibration_samples(onnx_path: Path):
    generator = np.random.default_rng(1234)
    return [{name: generator.random(shape, dtype=np.float32) for name, shape in onnx_inputs(onnx_path)}
            for _ in range(CALIBRATION_SAMPLES)]


def prepare(args, model: str, precision: str):
    """Returns (our .rknn path, the ONNX model the ONNX peers run), building what is missing:
    the float model for fp32, its QDQ quantization for int8."""
    work = Path(args.work)
    onnx_dir = work / "onnx"
    onnx_path = onnx_dir / f"{model}.onnx"
    if not onnx_path.exists():
        log(f"building {model}.onnx")
        subprocess.run([sys.executable, str(ROOT / "tests/models/make_models.py"), "--out",
                        str(onnx_dir), model], check=True, stdout=subprocess.DEVNULL)
    converter = converter_tools.Converter(Path(args.build) / "tools/rknn-convert/rknn-convert")
    rknn_path = work / f"{model}_{precision}.rknn"
    peer_onnx_path = onnx_path
    if precision == "fp32":
        if stale(rknn_path, onnx_path, Path(converter.path)):
            log(f"converting {model} fp32")
            converter.convert(onnx_path, rknn_path, "fp32")
        return rknn_path, peer_onnx_path
    dataset_dir = work / f"calibration_{model}"
    samples = None
    if stale(rknn_path, onnx_path, Path(converter.path)):
        samples = calibration_samples(onnx_path)
        dataset = converter_tools.write_dataset(dataset_dir, samples, [n for n, _ in onnx_inputs(onnx_path)])
        log(f"converting {model} int8")
        converter.convert(onnx_path, rknn_path, "int8", dataset=dataset)
    peer_onnx_path = work / f"{model}_qdq.onnx"
    if stale(peer_onnx_path, onnx_path):
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
        quantize_static(str(prepared), str(peer_onnx_path), Reader(), quant_format=QuantFormat.QDQ,
                        per_channel=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
    return rknn_path, peer_onnx_path


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


class Configuration:
    """One (model, precision) and what each engine loads for it."""

    def __init__(self, model, precision, rknn_path, onnx_path, peer_files):
        self.model, self.precision = model, precision
        self.rknn_path = rknn_path
        self.input_shapes = [shape for _, shape in onnx_inputs(onnx_path)]
        self.peer_files = peer_files  # peer key -> model file, for the peers that run it


def prepare_configurations(args, models, precisions, peers, notes):
    configurations = []
    for model in models:
        for precision in precisions:
            rknn_path, peer_onnx_path = prepare(args, model, precision)
            onnx_path = Path(args.work) / "onnx" / f"{model}.onnx"
            files = {}
            for peer in peers:
                if precision in peer.unsupported:
                    note = f"{peer.label} does not run {precision}: {peer.unsupported[precision]}."
                    if note not in notes:
                        notes.append(note)
                    continue
                try:
                    files[peer.key] = peer.model_file(Path(args.work), model, onnx_path,
                                                      peer_onnx_path)
                except RuntimeError as error:
                    # A converter that cannot take one model costs that column, not the run.
                    log(f"skipping {peer.label} on {model} {precision}: {error}")
                    notes.append(f"{peer.label} skipped on {model} {precision}: "
                                 f"{str(error).splitlines()[0]}")
            configurations.append(Configuration(model, precision, rknn_path, onnx_path, files))
    return configurations


def measure(args, configurations, threads, peers):
    """Rounds of interleaved process runs: (wall samples, CPU-time samples, engine versions)."""
    by_key = {peer.key: peer for peer in peers}
    samples, cpu_samples, versions = {}, {}, {}
    for configuration in configurations:
        for count in threads:
            key = (configuration.model, configuration.precision, count)
            samples[key] = {"ours": [], **{k: [] for k in configuration.peer_files}}
            cpu_samples[key] = {engine: [] for engine in samples[key]}
    for round_index in range(args.rounds):
        for configuration in configurations:
            engines = ["ours"] + list(configuration.peer_files)
            # Rotate who goes first, so a slow phase of the machine does not hit one engine.
            shift = round_index % len(engines)
            order = engines[shift:] + engines[:shift]
            for count in threads:
                key = (configuration.model, configuration.precision, count)
                for engine in order:
                    if engine == "ours":
                        figure = ours(args, configuration.rknn_path, count)
                    else:
                        figure = run_json(by_key[engine].command(
                            configuration.peer_files[engine], count, args.runs, args.warmup,
                            configuration.input_shapes))
                        versions.setdefault(engine, figure.get("version", "?"))
                    samples[key][engine].append(figure["median_ms"])
                    cpu_samples[key][engine].append(figure.get("cpu_median_ms", float("nan")))
                log(f"round {round_index + 1}/{args.rounds} {key[0]} {key[1]} {count}t: " +
                    ", ".join(f"{engine} {samples[key][engine][-1]:.2f} ms" for engine in order))
    return samples, cpu_samples, versions


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


def profile_tables(args, configurations, threads):
    text = []
    for configuration in configurations:
        figure = ours(args, configuration.rknn_path, threads, profile=True)
        rows = op_type_times(figure.get("perf_detail", ""))
        text += [f"OpenRKNN per-op-type time, {configuration.model} {configuration.precision}, "
                 f"{threads} thread(s), one profiled run:", "", "| op type | us | share |",
                 "|---|---:|---:|"]
        text += [f"| {op} | {us} | {share} |" for op, us, share in rows]
        text.append("")
    return text


def add_selection_arguments(parser: argparse.ArgumentParser):
    """The build, the model cache and which (model, precision, threads) to run: the arguments
    this script shares with paired_compare.py."""
    parser.add_argument("--build", required=True, help="build directory with bench_model")
    parser.add_argument("--work", help="cache of models (default BUILD/bench-work)")
    parser.add_argument("--models", default="mobilenet_v2,resnet18,resnet50,yolov5s")
    parser.add_argument("--precisions", default="fp32,int8")
    parser.add_argument("--threads", default="1,2")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_selection_arguments(parser)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    known_peers = ",".join(p.key for p in peer_engines.ALL_PEERS)
    parser.add_argument("--peers", help=f"comma-separated subset of {known_peers} "
                        "(default: all installed)")
    parser.add_argument("--markdown", help="also write the tables here")
    parser.add_argument("--svg", help="write a ratio chart here")
    parser.add_argument("--png", help="write the ratio chart as PNG here (needs matplotlib)")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--prepare-only", action="store_true",
                        help="make and convert the models for every engine, then stop (so the "
                        "timed run can start when the machine is quiet)")
    args = parser.parse_args()
    args.work = args.work or str(Path(args.build) / "bench-work")
    models = [m for m in args.models.split(",") if m]
    precisions = [p for p in args.precisions.split(",") if p]
    threads = [int(t) for t in args.threads.split(",") if t]
    if args.rounds < 1 or args.runs < 1 or not models or not precisions or not threads:
        parser.error("--rounds, --runs, --models, --precisions and --threads must not be empty")
    unknown = [p for p in precisions if p not in ("fp32", "int8")]
    if unknown:
        parser.error(f"--precisions: unknown {', '.join(unknown)} (fp32, int8)")

    peers = peer_engines.select(args.peers)
    notes = [f"Peer not run: {p.label} ({p.why_unavailable()})."
             for p in peer_engines.ALL_PEERS
             if p not in peers and (not args.peers or p.key in args.peers.split(","))]
    configurations = prepare_configurations(args, models, precisions, peers, notes)
    if args.prepare_only:
        log(f"models ready in {args.work}")
        return
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_at_start = os.getloadavg()[0]
    samples, cpu_samples, versions = measure(args, configurations, threads, peers)
    load_at_end = os.getloadavg()[0]

    engines = ", ".join(f"{p.label} {versions.get(p.key, 'not run')}" for p in peers)
    header = [f"Medians over {args.rounds} interleaved process runs, each the median of "
              f"{args.runs} runs after {args.warmup} warm-up runs. Peers: {engines or 'none'}. "
              f"Started {started} on {os.cpu_count()} CPUs, one-minute load average "
              f"{load_at_start:.1f} at the start and {load_at_end:.1f} at the end (the machine's "
              "other processes count in it)."]
    text = report.markdown(samples, cpu_samples, peers, header, [n + "\n" for n in notes])
    if not args.no_profile:
        text += profile_tables(args, configurations, threads[0])
    print("\n".join(text))
    if args.markdown:
        Path(args.markdown).write_text("\n".join(text) + "\n")
    rows = report.chart_rows(samples, peers)
    labels = [p.label for p in peers]
    if args.svg:
        report.write_svg(rows, labels, args.svg)
    if args.png and not report.write_png(rows, labels, args.png):
        log(f"not writing {args.png}: matplotlib is not installed (pip install -r "
            f"{peer_engines.REQUIREMENTS})")


if __name__ == "__main__":
    main()
