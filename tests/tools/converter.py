"""Runs rknn-convert for the comparison tools: one place that knows its command line, the
calibration dataset format and where the binary is.

The binary is found from, in order: the `path` argument, $ORKNN_RKNN_CONVERT, then the newest
build*/tools/rknn-convert/rknn-convert of the checkout.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import numpy as np

PRECISIONS = ("fp32", "fp16", "int8")
ALGORITHMS = ("normal", "kl_divergence", "mmse")
METHODS = ("channel", "layer")


class ConversionError(RuntimeError):
    def __init__(self, command, returncode, output):
        text = output.strip().splitlines()
        tail = "\n".join(text[-15:])
        super().__init__(f"rknn-convert exited with {returncode}\n  command: "
                         f"{' '.join(map(str, command))}\n{tail}")
        self.returncode = returncode
        self.output = output


def find_converter(path=None):
    if path:
        return str(path)
    if os.environ.get("ORKNN_RKNN_CONVERT"):
        return os.environ["ORKNN_RKNN_CONVERT"]
    checkout = Path(__file__).resolve().parents[2]
    candidates = sorted(checkout.glob("build*/tools/rknn-convert/rknn-convert"),
                        key=lambda p: p.stat().st_mtime, reverse=True)
    if not candidates:
        raise FileNotFoundError("rknn-convert not found: build it or set ORKNN_RKNN_CONVERT")
    return str(candidates[0])


def write_dataset(directory, samples, input_names, layout="nchw"):
    """Writes one .npy per input per sample and the dataset list (one sample a line, the
    sample's input files separated by spaces, as the vendor toolkit reads it). Arrays keep the
    ONNX shape (NCHW) by default: rknn-convert reads NCHW for every 4-D input and also NHWC
    (the vendor toolkit's layout) for inputs it presents as images, while a non-image 4-D
    input (8 channels, say) must be NCHW. layout="nhwc" writes 4-D arrays NHWC.
    Returns the list's path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for index, sample in enumerate(samples):
        paths = []
        for position, name in enumerate(input_names):
            array = np.asarray(sample[name])
            if layout == "nhwc" and array.ndim == 4:
                array = array.transpose(0, 2, 3, 1)
            path = directory / f"sample{index:03d}_input{position}.npy"
            np.save(path, np.ascontiguousarray(array))
            paths.append(str(path.resolve()))
        lines.append(" ".join(paths))
    list_path = directory / "dataset.txt"
    list_path.write_text("\n".join(lines) + "\n")
    return list_path


def write_identity_config(path, inputs):
    """A config that states the preprocessing explicitly: mean 0 and std 1 for every channel
    of every real-valued input (an empty list for integer inputs, which take none), so the
    .rknn model computes exactly what the ONNX model computes on the same float inputs.
    `inputs` holds (shape, numpy dtype) per input."""
    def entries(value):
        lines = []
        for shape, dtype in inputs:
            channels = shape[1] if len(shape) >= 2 else 1
            real = np.dtype(dtype).kind == "f"
            lines.append("  - [" + (", ".join([value] * channels) if real else "") + "]")
        return lines

    lines = ["# written by tests/tools/converter.py: no preprocessing folded into the model",
             "mean_values:"] + entries("0") + ["std_values:"] + entries("1")
    Path(path).write_text("\n".join(lines) + "\n")
    return path


class Converter:
    def __init__(self, path=None, target_platform="rk3588"):
        self.path = find_converter(path)
        self.target_platform = target_platform

    def command(self, onnx_path, out_path, precision, dataset=None, algorithm="normal",
                method="channel", config=None, extra=()):
        """The command line (docs/rknn-convert.md): every option takes a value, and
        do_quantization defaults to true as in the vendor toolkit, so float conversions say
        `--do-quantization false` explicitly."""
        command = [self.path, str(onnx_path), "-o", str(out_path),
                   "--target-platform", self.target_platform, "--quiet"]
        if config:
            command += ["--config", str(config)]
        if precision in ("fp32", "fp16"):
            command += ["--do-quantization", "false",
                        "--float-dtype", "float32" if precision == "fp32" else "float16"]
        elif precision == "int8":
            if dataset is None:
                raise ValueError("int8 needs a calibration dataset")
            command += ["--do-quantization", "true", "--dataset", str(dataset),
                        "--quantized-algorithm", algorithm, "--quantized-method", method]
        else:
            raise ValueError(f"precision {precision!r}")
        return command + list(extra)

    def convert(self, onnx_path, out_path, precision, timeout=3600, **options):
        """Converts; returns (seconds, combined output). Raises ConversionError on failure."""
        command = self.command(onnx_path, out_path, precision, **options)
        start = time.monotonic()
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=timeout)
        elapsed = time.monotonic() - start
        if result.returncode != 0 or not Path(out_path).exists():
            raise ConversionError(command, result.returncode, result.stdout)
        return elapsed, result.stdout
