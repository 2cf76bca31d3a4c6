#!/usr/bin/env python3
"""Writes the converter's test models as ONNX files.

    make_models.py --out DIR [--check] [--force] [NAME|GROUP ...]

NAME is a model name (see --list); GROUP is one of
    small     the whole networks quick enough for every test run
    big       ResNet50 and YOLOv5s at 640x640 (the converter_slow tests)
    networks  small + big
    ops       one model per supported operator (and variants)
    all       everything
Without names: small and ops.

Models are cached: DIR/NAME.onnx is rewritten only when the builder sources changed (a stamp
file, DIR/NAME.onnx.stamp, records their hash), so repeated test runs cost nothing. Files are
written atomically, so concurrent test processes may build the same model.

--check runs onnx.checker and ONNX Runtime on every model and prints its outputs' shapes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import networks  # noqa: E402
import op_models  # noqa: E402

NETWORKS = {
    # name: (builder, group)
    "mobilenet_v2": (networks.mobilenet_v2, "small"),
    "resnet18": (networks.resnet18, "small"),
    "shufflenet_v2": (networks.shufflenet_v2, "small"),
    "yolov5n_320": (networks.yolov5n, "small"),
    "transformer_block": (networks.transformer_block, "small"),
    "transformer_block_opset13": (lambda: networks.transformer_block(opset=13), "small"),
    "resnet50": (networks.resnet50, "big"),
    "yolov5s": (networks.yolov5s, "big"),
}


def all_models():
    """name -> (builder, group) for every model."""
    models = dict(NETWORKS)
    for name, builder in op_models.OP_MODELS.items():
        models[name] = (builder, "ops")
    return models


def group_members(group):
    models = all_models()
    if group == "all":
        return list(models)
    if group == "networks":
        return [n for n, (_, g) in models.items() if g in ("small", "big")]
    return [n for n, (_, g) in models.items() if g == group]


GROUPS = ["small", "big", "networks", "ops", "all"]


def resolve_names(names):
    models = all_models()
    if not names:
        names = ["small", "ops"]
    resolved = []
    for name in names:
        members = group_members(name) if name in GROUPS else [name]
        for member in members:
            if member not in models:
                raise SystemExit(f"make_models: unknown model or group {member!r} (see --list)")
            if member not in resolved:
                resolved.append(member)
    return resolved


def _sources_hash():
    digest = hashlib.sha256()
    for name in ("graph_builder.py", "networks.py", "op_models.py", "make_models.py"):
        path = HERE / name
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def model_path(out_dir, name):
    return Path(out_dir) / f"{name}.onnx"


def build_model(name, out_dir, force=False, verbose=True):
    """Writes DIR/NAME.onnx unless an up-to-date copy is there; returns its path."""
    import onnx

    builder, _ = all_models()[name]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = model_path(out_dir, name)
    stamp_path = path.with_name(path.name + ".stamp")
    stamp = f"{name} {_sources_hash()}\n"
    if (not force and path.exists() and stamp_path.exists()
            and stamp_path.read_text() == stamp):
        return path
    start = time.monotonic()
    model = builder()
    data = model.SerializeToString()
    _atomic_write(path, data)
    _atomic_write(stamp_path, stamp.encode())
    if verbose:
        print(f"make_models: wrote {path} ({len(data) / 1e6:.2f} MB, opset "
              f"{model.opset_import[0].version}, {len(model.graph.node)} nodes, "
              f"{time.monotonic() - start:.1f} s)", flush=True)
    onnx.checker.check_model(str(path))
    return path


def _atomic_write(path, data):
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def check_model(path):
    """onnx.checker + one ONNX Runtime run on the model's own kind of inputs."""
    import numpy as np
    import onnx
    import onnxruntime

    from graph_builder import input_specs_of

    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    feed = {spec.name: spec.sample(rng) for spec in input_specs_of(model)}
    start = time.monotonic()
    outputs = session.run(None, feed)
    elapsed = time.monotonic() - start
    for output in outputs:
        if not np.all(np.isfinite(output.astype(np.float64))):
            raise RuntimeError(f"{path}: ONNX Runtime output is not finite")
    return outputs, elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="output directory")
    parser.add_argument("--check", action="store_true",
                        help="run onnx.checker and ONNX Runtime on each model")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("--list", action="store_true", help="list models and groups")
    parser.add_argument("names", nargs="*", help="model names or groups")
    args = parser.parse_args(argv)

    if args.list:
        for name, (builder, group) in all_models().items():
            print(f"{name:40s} {group}")
        return 0
    if not args.out:
        parser.error("--out DIR is required")
    failures = 0
    for name in resolve_names(args.names):
        path = build_model(name, args.out, force=args.force)
        if args.check:
            try:
                outputs, elapsed = check_model(path)
                shapes = ", ".join("x".join(map(str, o.shape)) or "scalar" for o in outputs)
                print(f"ok   {name:40s} ORT {elapsed * 1e3:8.1f} ms  outputs {shapes}")
            except Exception as error:  # report every model, then fail
                failures += 1
                print(f"FAIL {name:40s} {error}")
    if args.check:
        print(f"make_models: {failures} of the checked models failed" if failures
              else "make_models: all checked models are valid and run in ONNX Runtime")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
