#!/usr/bin/env python3
"""Prints the converter's acceptance figures (used by scripts/converter_figures.sh):

  - per network: fp32 and fp16 relative max error against ONNX Runtime, and the int8 cosine
    similarity for each calibration algorithm (normal, kl_divergence, mmse) with per-channel
    and per-layer weights;
  - the ONNX backend node tests: passed / failed / skipped;
  - ResNet50 conversion time with 20 calibration samples (int8, normal, channel), median of
    --runs runs.

    converter_figures.py --converter PATH --library PATH --models-dir DIR [--quick]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "models"))

import converter as converter_module  # noqa: E402

SMALL = ["mobilenet_v2", "resnet18", "shufflenet_v2", "yolov5n_320", "transformer_block",
         "transformer_block_opset13"]
BIG = ["resnet50", "yolov5s"]


def run(command, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(map(str, command)) + "\n")
        f.flush()
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        f.write(result.stdout)
    return result


def cell(record, key):
    if record is None:
        return "-"
    if record.get("error"):
        return "error"
    values = [o[key] for o in record["outputs"]]
    if not values:
        return "-"
    value = max(values) if key == "relative_max_error" else min(values)
    mark = "" if record["passed"] else " (FAIL)"
    return (f"{value:.2e}" if key == "relative_max_error" else f"{value:.4f}") + mark


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--converter", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--models-dir", required=True)
    parser.add_argument("--work", default=None)
    parser.add_argument("--quick", action="store_true", help="leave out ResNet50 and YOLOv5s")
    parser.add_argument("--runs", type=int, default=3, help="timed conversions (median)")
    parser.add_argument("--samples", type=int, default=3, help="held-out inputs per model")
    parser.add_argument("--models", nargs="*", help="networks (default: all)")
    parser.add_argument("--converter-args", default="",
                        help="extra rknn-convert options for every conversion")
    args = parser.parse_args(argv)

    python = sys.executable
    work = Path(args.work or tempfile.mkdtemp(prefix="orknn-figures-"))
    work.mkdir(parents=True, exist_ok=True)
    log = work / "figures.log"
    results_path = work / "compare.jsonl"
    results_path.unlink(missing_ok=True)
    models = args.models or (SMALL if args.quick else SMALL + BIG)

    for model in models:
        print(f"... {model}", file=sys.stderr, flush=True)
        run([python, HERE / "compare_with_ort.py", "--model", model, "--models-dir",
             args.models_dir, "--converter", args.converter, "--library", args.library,
             "--precision", "fp32", "fp16", "int8", "--algorithm", "all", "--method", "all",
             "--samples", str(args.samples), "--json", results_path,
             "--converter-args", args.converter_args,
             "--work", work / model], log)
    records = {}
    if results_path.exists():
        for line in results_path.read_text().splitlines():
            r = json.loads(line)
            key = (r["model"], r["precision"], r.get("algorithm"), r.get("method"))
            records[key] = r

    print("| model | fp32 err | fp16 err | int8 normal ch | normal layer | kl ch | kl layer "
          "| mmse ch | mmse layer |")
    print("|---|---|---|---|---|---|---|---|---|")
    for model in models:
        row = [model, cell(records.get((model, "fp32", None, None)), "relative_max_error"),
               cell(records.get((model, "fp16", None, None)), "relative_max_error")]
        for algorithm in converter_module.ALGORITHMS:
            for method in converter_module.METHODS:
                row.append(cell(records.get((model, "int8", algorithm, method)), "cosine"))
        print("| " + " | ".join(row) + " |")
    print("(err: max|ours - ORT| / max|ORT|, worst output and held-out sample; limits fp32 "
          "1e-4, fp16 2e-2. int8: cosine similarity, limit 0.99, YOLO models 0.964.)")
    errors = {}
    for (model, precision, algorithm, method), r in records.items():
        if r.get("error"):
            reason = [l for l in r["error"].splitlines() if l.strip()]
            detail = next((l.strip() for l in reversed(reason) if "rknn-convert" in l
                           or "rknn_" in l), reason[0] if reason else "?")
            errors.setdefault(f"{reason[0][:100]} / {detail[:160]}", []).append(
                f"{model} {precision}{' ' + algorithm + '/' + method if algorithm else ''}")
    for reason, where in errors.items():
        print(f"error ({len(where)}x, e.g. {where[0]}): {reason}")

    print("... node tests", file=sys.stderr, flush=True)
    node = run([python, HERE / "run_onnx_node_tests.py", "--jobs", "2", "--quiet",
                "--converter", args.converter, "--library", args.library,
                "--json", work / "node_tests.json"], log)
    lines = node.stdout.strip().splitlines()
    summary = [l for l in lines if re.match(r"^\d+ passed, \d+ failed", l)]
    rate = [l for l in lines if l.startswith("pass rate")]
    print(f"\nONNX node tests: {summary[-1] if summary else 'did not run (see log)'}")
    if rate:
        print(f"  {rate[-1]}")

    if "resnet50" in models:
        import make_models
        import onnx
        import compare_with_ort

        path = make_models.build_model("resnet50", args.models_dir, verbose=False)
        model = onnx.load(str(path), load_external_data=False)
        specs = compare_with_ort.input_specs(model)
        dataset = converter_module.write_dataset(
            work / "resnet50_calibration", compare_with_ort.make_samples(specs, 20, 2024),
            [s.name for s in specs])
        tool = converter_module.Converter(args.converter)
        times = []
        for i in range(args.runs):
            print(f"... resnet50 conversion {i + 1}/{args.runs}", file=sys.stderr, flush=True)
            try:
                seconds, _ = tool.convert(path, work / "resnet50_timed.rknn", "int8",
                                          dataset=dataset, algorithm="normal", method="channel",
                                          extra=args.converter_args.split())
                times.append(seconds)
            except converter_module.ConversionError as error:
                print(f"\nResNet50 conversion failed: {error}")
                break
        if times:
            print(f"\nResNet50 conversion, int8 normal/channel, 20 calibration samples: median "
                  f"{statistics.median(times):.1f} s of {len(times)} runs "
                  f"({', '.join(f'{t:.1f}' for t in times)} s)")
    print(f"\n(log: {log})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
