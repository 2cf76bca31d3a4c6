"""Small ONNX models and datasets for the package tests, built with onnx.helper (no files in
git). Weights are random but fixed by the seed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IMAGE = 16  # input height and width of the classifier
CLASSES = 10
MEAN = 127.5
STD = 127.5


def _constant(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)


def classifier(path: Path, seed=0, dynamic=False):
    """Conv(3x3, stride 2) -> Relu -> Conv(3x3) -> Relu -> GlobalAveragePool -> Flatten -> Gemm
    -> Softmax: a miniature image classifier, input 'input' [1,3,16,16] (with `dynamic`,
    [1,3,height,width]), output 'prob'."""
    rng = np.random.default_rng(seed)
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w3", "b3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
    ]
    weights = [
        _constant("w1", rng.normal(0, 0.3, (8, 3, 3, 3))), _constant("b1", rng.normal(0, 0.1, 8)),
        _constant("w2", rng.normal(0, 0.2, (16, 8, 3, 3))),
        _constant("b2", rng.normal(0, 0.1, 16)),
        _constant("w3", rng.normal(0, 0.6, (CLASSES, 16))),
        _constant("b3", rng.normal(0, 0.1, CLASSES)),
    ]
    graph = helper.make_graph(
        nodes, "classifier",
        [helper.make_tensor_value_info(
            "input", TensorProto.FLOAT,
            [1, 3, "height", "width"] if dynamic else [1, 3, IMAGE, IMAGE])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, CLASSES])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def two_inputs(path: Path):
    """out = image * 2 + bias_row: a 4-D image input 'image' [1,3,4,4] and a 2-D input 'row'
    [1,4] (broadcast over the last axis), to test per-input data_format and pass-through."""
    nodes = [helper.make_node("Mul", ["image", "two"], ["doubled"]),
             helper.make_node("Add", ["doubled", "row"], ["out"])]
    graph = helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 4, 4]),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3, 4, 4])],
        [_constant("two", [2.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def float_and_index_outputs(path: Path):
    """A float output 'relu' and an INT64 output 'index' (ArgMax over axis 1) of one input
    'x' [2,5]: a model whose outputs are real-valued and integer at once."""
    nodes = [helper.make_node("Relu", ["x"], ["relu"]),
             helper.make_node("ArgMax", ["x"], ["index"], axis=1, keepdims=0)]
    graph = helper.make_graph(
        nodes, "float_and_index",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("relu", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("index", TensorProto.INT64, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def images(count, seed, size=IMAGE):
    """NHWC float32 pixels in 0..255, smooth enough that quantization behaves like on photos."""
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(0, 255, (count, 4, 4, 3))
    return np.repeat(np.repeat(coarse, size // 4, axis=1), size // 4, axis=2).astype(
        np.float32) + rng.normal(0, 8, (count, size, size, 3)).astype(np.float32)


def mobilenet_v2(path: Path, resolution=64, classes=100):
    """The converter tests' MobileNetV2 builder (tests/models/networks.py), at a small
    resolution: input 'input' [1,3,R,R]."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    import networks

    onnx.save(networks.mobilenet_v2(resolution=resolution, classes=classes), str(path))
    return path


def dataset(directory: Path, count=8, seed=1, size=IMAGE):
    """A toolkit dataset.txt: one NHWC .npy sample per line."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, sample in enumerate(images(count, seed, size)):
        path = directory / f"sample{i}.npy"
        np.save(path, sample[None])
        lines.append(path.name)
    listing = directory / "dataset.txt"
    listing.write_text("\n".join(lines) + "\n")
    return listing


def onnx_reference(model_path, nhwc_pixels, mean=MEAN, std=STD):
    """ONNX Runtime on the same pixels, normalised as config(mean_values, std_values) does."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    normalised = (nhwc_pixels - np.asarray(mean)) / np.asarray(std)
    nchw = normalised.transpose(0, 3, 1, 2).astype(np.float32)
    return session.run(None, {"input": nchw})
