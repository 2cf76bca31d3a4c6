#!/usr/bin/env python3
"""Converts an ONNX model with rknn-convert, runs the .rknn model through librknnrt (ctypes,
orknn_runtime.py) and ONNX Runtime on the same held-out inputs, and compares every output.

    compare_with_ort.py --model resnet18 --models-dir DIR --precision fp32 fp16 int8
    compare_with_ort.py --onnx my.onnx --precision int8 --algorithm mmse --method layer

Per output it prints max |ours - ORT| / max |ORT| and the cosine similarity (worst over the
held-out samples), and fails (exit 1) beyond the thresholds:
    fp32   relative max error <= 1e-4
    fp16   relative max error <= 2e-2
    int8   cosine similarity  >= 0.99
Exit 2 means the comparison could not run (conversion or runtime error, bad arguments).

Inputs: a model made by tests/models/make_models.py records how its inputs are made (kind and
range, in its metadata); any other model gets standard normal values (integer inputs 0..9).
The comparison is float in, float out: the model is converted with mean 0 and std 1 for every
input (an explicit config), inputs are passed as FLOAT32 in the model's user layout (NHWC for
4-D image inputs, transposed by the binding) and outputs are fetched with want_float.
int8 models are calibrated on --calibration-samples inputs (written as .npy plus a dataset
list) that are different from the held-out ones.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "models"))

import converter as converter_module  # noqa: E402
import orknn_runtime  # noqa: E402
from metrics import cosine, relative_max_error  # noqa: E402

THRESHOLDS = {"fp32": 1e-4, "fp16": 2e-2, "int8": 0.99}

ONNX_TO_NUMPY = {1: np.float32, 10: np.float16, 6: np.int32, 7: np.int64, 3: np.int8,
                 2: np.uint8, 9: np.bool_}


def input_specs(model):
    """The model's InputSpecs (from make_models metadata) or generic ones from its graph."""
    from graph_builder import InputSpec, input_specs_of

    specs = input_specs_of(model)
    if specs is not None:
        return specs
    constants = {t.name for t in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in constants:
            continue
        tensor_type = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1
                 for d in tensor_type.shape.dim]
        dtype = ONNX_TO_NUMPY.get(tensor_type.elem_type, np.float32)
        kind = "integer" if np.dtype(dtype).kind in "iub" else "normal"
        specs.append(InputSpec(value.name, shape, dtype, kind, low=0, high=10))
    return specs


def make_samples(specs, count, seed):
    rng = np.random.default_rng(seed)
    return [{spec.name: spec.sample(rng) for spec in specs} for _ in range(count)]


def ort_session(path):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def compare_one(onnx_path, model, specs, precision, args, work, ort, held_out, algorithm=None,
                method=None):
    """Converts once and compares on every held-out sample; returns a result record."""
    label = precision if precision != "int8" else f"int8 {algorithm}/{method}"
    record = {"model": Path(onnx_path).stem, "precision": precision, "algorithm": algorithm,
              "method": method, "outputs": [], "passed": False, "error": None}
    tool = converter_module.Converter(args.converter, args.target_platform)
    tag = precision if precision != "int8" else f"int8_{algorithm}_{method}"
    rknn_path = work / f"{record['model']}_{tag}.rknn"
    options = {}
    if not args.no_config:
        options["config"] = converter_module.write_identity_config(
            work / "identity_config.yaml", [(spec.shape, spec.dtype) for spec in specs])
    if args.converter_args:
        options["extra"] = args.converter_args.split()
    if precision == "int8":
        calibration = make_samples(specs, args.calibration_samples, args.seed)
        options["dataset"] = converter_module.write_dataset(
            work / "calibration", calibration, [spec.name for spec in specs],
            layout=args.dataset_layout)
        options["algorithm"] = algorithm
        options["method"] = method
    try:
        seconds, _ = tool.convert(onnx_path, rknn_path, precision, **options)
    except (converter_module.ConversionError, OSError, TimeoutError) as error:
        record["error"] = f"conversion failed: {error}"
        print(f"{record['model']} {label}: {record['error']}")
        return record
    record["convert_seconds"] = seconds

    try:
        with orknn_runtime.Runtime(rknn_path, args.library) as runtime:
            output_names = [o.name for o in model.graph.output]
            worst = {}
            run_seconds = []
            for sample in held_out:
                reference = ort.run(output_names, sample)
                start = time.monotonic()
                ours = runtime.run([sample[spec.name] for spec in specs])
                run_seconds.append(time.monotonic() - start)
                if len(ours) != len(reference):
                    raise RuntimeError(f"{len(ours)} outputs, ONNX model has {len(reference)}")
                for index, (a, r) in enumerate(zip(ours, reference)):
                    a = np.asarray(a)
                    if a.shape != r.shape:
                        if a.size != r.size:
                            raise RuntimeError(f"output {index}: shape {list(a.shape)}, ORT "
                                               f"{list(r.shape)}")
                        a = a.reshape(r.shape)  # e.g. a scalar reported as [1]
                    error = relative_max_error(a, r)
                    similarity = cosine(a, r)
                    previous = worst.get(index, (0.0, 1.0, list(r.shape)))
                    worst[index] = (max(previous[0], error), min(previous[1], similarity),
                                    list(r.shape))
    except (orknn_runtime.RknnError, RuntimeError, ValueError, OSError) as error:
        record["error"] = f"runtime failed: {error}"
        print(f"{record['model']} {label}: {record['error']}")
        return record

    record["run_seconds_median"] = float(np.median(run_seconds))
    passed = True
    for index in sorted(worst):
        error, similarity, shape = worst[index]
        if precision == "int8":
            ok = similarity >= args.int8_cosine
            limit = f"cosine >= {args.int8_cosine}"
        else:
            limit_value = args.fp32_tolerance if precision == "fp32" else args.fp16_tolerance
            ok = error <= limit_value
            limit = f"error <= {limit_value:g}"
        passed &= ok
        record["outputs"].append({"name": output_names[index], "shape": shape,
                                  "relative_max_error": error, "cosine": similarity,
                                  "passed": bool(ok)})
        print(f"{record['model']} {label:22s} output {index} '{output_names[index]}' {shape}: "
              f"max|err|/max|ref| {error:.3e}, cosine {similarity:.6f} ({limit}) "
              f"{'ok' if ok else 'FAIL'}")
    record["passed"] = bool(passed)
    print(f"{record['model']} {label}: converted in {seconds:.2f} s, run "
          f"{record['run_seconds_median'] * 1e3:.1f} ms (median), "
          f"{'PASS' if passed else 'FAIL'}", flush=True)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a make_models.py model name (built if missing)")
    source.add_argument("--onnx", help="any ONNX file")
    parser.add_argument("--models-dir", default=None,
                        help="where make_models.py models are cached (default: WORK/models)")
    parser.add_argument("--precision", nargs="+", default=["fp32"],
                        choices=list(converter_module.PRECISIONS) + ["all"])
    parser.add_argument("--algorithm", nargs="+", default=["normal"],
                        choices=list(converter_module.ALGORITHMS) + ["all"])
    parser.add_argument("--method", nargs="+", default=["channel"],
                        choices=list(converter_module.METHODS) + ["all"])
    parser.add_argument("--calibration-samples", type=int, default=20)
    parser.add_argument("--samples", type=int, default=3, help="held-out inputs compared")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--dataset-layout", choices=["nchw", "nhwc"], default="nchw",
                        help="layout of 4-D calibration .npy files (default: the ONNX shape; "
                             "rknn-convert also reads NHWC for image inputs, as the vendor "
                             "toolkit does)")
    parser.add_argument("--no-config", action="store_true",
                        help="do not pass the explicit mean 0 / std 1 config")
    parser.add_argument("--target-platform", default="rk3588")
    parser.add_argument("--converter", help="rknn-convert binary")
    parser.add_argument("--converter-args", default="",
                        help="extra rknn-convert options, e.g. '--sequential-calibration false'")
    parser.add_argument("--library", help="librknnrt.so")
    parser.add_argument("--work", help="work directory (default: temporary, removed)")
    parser.add_argument("--json", help="append one JSON line per conversion to this file")
    parser.add_argument("--slow", action="store_true",
                        help="a slow test: skip (exit 77) unless ORKNN_CONVERTER_SLOW=1")
    parser.add_argument("--fp32-tolerance", type=float, default=THRESHOLDS["fp32"])
    parser.add_argument("--fp16-tolerance", type=float, default=THRESHOLDS["fp16"])
    parser.add_argument("--int8-cosine", type=float, default=None,
                        help="int8 limit (default 0.99, or the model's own "
                             "orknn_test.int8_min_cosine where it records one)")
    args = parser.parse_args(argv)
    if args.slow and os.environ.get("ORKNN_CONVERTER_SLOW") != "1":
        print("skipped: a slow model; set ORKNN_CONVERTER_SLOW=1 to run it "
              "(or use scripts/converter_figures.sh)")
        return 77

    import onnx

    temporary = args.work is None
    work = Path(args.work or tempfile.mkdtemp(prefix="orknn-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.model:
            import make_models

            models_dir = Path(args.models_dir) if args.models_dir else work / "models"
            onnx_path = make_models.build_model(args.model, models_dir)
        else:
            onnx_path = Path(args.onnx)
        model = onnx.load(str(onnx_path))
        from graph_builder import precisions_of

        specs = input_specs(model)
        if args.int8_cosine is None:
            from graph_builder import int8_min_cosine_of

            args.int8_cosine = int8_min_cosine_of(model, THRESHOLDS["int8"])
        ort = ort_session(onnx_path)
        held_out = make_samples(specs, args.samples, args.seed + 1000)
        expand = lambda values, every: list(every) if "all" in values else values  # noqa: E731
        precisions = expand(args.precision, converter_module.PRECISIONS)
        algorithms = expand(args.algorithm, converter_module.ALGORITHMS)
        methods = expand(args.method, converter_module.METHODS)
        suitable = precisions_of(model)

        records = []
        for precision in precisions:
            if precision not in suitable:
                print(f"{onnx_path.stem} {precision}: skipped (the model lists {suitable})")
                continue
            if precision == "int8":
                for algorithm in algorithms:
                    for method in methods:
                        records.append(compare_one(onnx_path, model, specs, precision, args,
                                                   work, ort, held_out, algorithm, method))
            else:
                records.append(compare_one(onnx_path, model, specs, precision, args, work, ort,
                                           held_out))
        if args.json:
            with open(args.json, "a") as f:
                for record in records:
                    f.write(json.dumps(record) + "\n")
        broken = sum(1 for r in records if r["error"])
        failed = sum(1 for r in records if not r["error"] and not r["passed"])
        passed = len(records) - broken - failed
        print(f"{passed} passed, {failed + broken} failed")
        return 2 if broken else (1 if failed else 0)
    finally:
        if temporary:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
