#!/usr/bin/env python3
"""Self-test of the ctypes binding (orknn_runtime.py), independent of rknn-convert: runs the
sample networks that orknn-make-model writes (mobilenet_mini in fp32, fp16 and int8, and
two_inputs) through librknnrt and checks

  - the queried attributes are consistent (n_elems, size, NHWC dims of image inputs);
  - NHWC inputs transposed by the binding give the same outputs as NCHW inputs that the runtime
    reorders itself (so the binding's layout handling is right);
  - float16 and int8 versions of the same network agree with float32 (max error 2e-2 of the
    largest value; cosine similarity >= 0.99), i.e. outputs come back decoded and in order.

    selftest_orknn_runtime.py --make-model PATH [--library PATH] [--work DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import orknn_runtime  # noqa: E402
from metrics import cosine, relative_max_error  # noqa: E402


def check_attributes(info, problems):
    product = int(np.prod(info.dims, dtype=np.int64)) if info.dims else 1
    if info.n_elems != product:
        problems.append(f"{info}: n_elems {info.n_elems} != product of dims {product}")
    item = np.dtype(orknn_runtime.NUMPY_OF_TYPE.get(info.type, np.uint8)).itemsize
    if info.size != product * item:
        problems.append(f"{info}: size {info.size} != {product} x {item}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make-model", required=True, help="path of orknn-make-model")
    parser.add_argument("--library", help="path of librknnrt.so")
    parser.add_argument("--work", help="directory for the models (default: a temporary one)")
    args = parser.parse_args(argv)

    work = Path(args.work or tempfile.mkdtemp(prefix="orknn-selftest-"))
    work.mkdir(parents=True, exist_ok=True)
    problems = []
    checks = 0

    def make(network, precision):
        path = work / f"{network}_{precision}.rknn"
        subprocess.run([args.make_model, network, precision, str(path), "--input-npy",
                        str(work / f"{network}_input.npy")], check=True, stdout=subprocess.DEVNULL)
        return path

    results = {}
    for precision in ("fp32", "fp16", "int8"):
        path = make("mobilenet_mini", precision)
        with orknn_runtime.Runtime(path, args.library) as model:
            for info in model.inputs + model.outputs:
                check_attributes(info, problems)
                checks += 1
            image = model.inputs[0]
            if image.fmt != orknn_runtime.FORMAT_NHWC or image.dims[3] != 3:
                problems.append(f"{precision}: image input not presented as NHWC: {image}")
            pixels = np.load(work / "mobilenet_mini_input.npy")  # uint8 NHWC
            nchw = pixels.transpose(0, 3, 1, 2).astype(np.float32)
            outputs = model.run([nchw])
            outputs_nchw = model.run([nchw], layout="nchw")
            checks += 1
            if not np.array_equal(outputs[0], outputs_nchw[0]):
                problems.append(f"{precision}: NHWC (binding) and NCHW (runtime) inputs differ")
            results[precision] = outputs[0]
            print(f"mobilenet_mini {precision}: input {image}, output {model.outputs[0]}")

    reference = results["fp32"]
    if not np.all(np.isfinite(reference)):
        problems.append("fp32 output is not finite")
    error = relative_max_error(results["fp16"], reference)
    similarity = cosine(results["int8"], reference)
    print(f"fp16 vs fp32: max error / max|fp32| = {error:.2e}; "
          f"int8 vs fp32: cosine = {similarity:.5f}")
    checks += 2
    if error > 2e-2:
        problems.append(f"fp16 differs from fp32 by {error:.2e} of the largest value")
    if similarity < 0.99:
        problems.append(f"int8 cosine similarity to fp32 is {similarity:.5f}")

    path = make("two_inputs", "fp32")
    with orknn_runtime.Runtime(path, args.library) as model:
        rng = np.random.default_rng(3)
        arrays = [rng.uniform(0, 255, info.nchw_shape).astype(np.float32)
                  for info in model.inputs]
        a = model.run(arrays)
        b = model.run(arrays, layout="nchw")
        checks += 1
        if len(model.inputs) != 2 or not np.array_equal(a[0], b[0]):
            problems.append("two_inputs: NHWC and NCHW inputs give different outputs")
        print(f"two_inputs: {model.inputs} -> {model.outputs}")

    for problem in problems:
        print(f"FAIL: {problem}")
    print(f"{checks - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
