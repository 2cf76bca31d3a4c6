#!/usr/bin/env python3
"""Converts an ONNX image classifier to .rknn and runs it, the way RKNN-Toolkit2's examples do:
config -> load_onnx -> build -> export_rknn -> init_runtime -> inference -> eval_perf ->
eval_memory -> release. Only the import differs from a toolkit script.

    convert_and_run_classifier.py [--model m.onnx --dataset dataset.txt --image x.npy]
                                  [--target rk3588 --device-id SERIAL] [--fp16] [-o m.rknn]

Without --model it writes a small demo classifier (random weights, needs the onnx package) and
a calibration set of random images next to the output, so it runs anywhere in seconds.
Without --target the model runs in the local librknnrt (the simulator); with one, on the
board through rknn_server. Images are NHWC uint8/float .npy arrays (as cv2 gives, in RGB).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

try:
    from openrknn.api import RKNN
except ImportError:  # run from the source tree without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from openrknn.api import RKNN


def write_demo_model(directory: Path):
    """A 32x32 RGB classifier with 10 classes, and 10 calibration images."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def weight(name, *shape):
        return numpy_helper.from_array(rng.normal(0, 0.3, shape).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["conv1"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["conv1"], ["relu1"]),
        helper.make_node("Conv", ["relu1", "w2", "b2"], ["conv2"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["conv2"], ["relu2"]),
        helper.make_node("GlobalAveragePool", ["relu2"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["features"]),
        helper.make_node("Gemm", ["features", "w3", "b3"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["scores"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "demo_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 10])],
        [weight("w1", 16, 3, 3, 3), weight("b1", 16), weight("w2", 32, 16, 3, 3),
         weight("b2", 32), weight("w3", 10, 32), weight("b3", 10)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model_path = directory / "demo_classifier.onnx"
    onnx.save(model, str(model_path))

    samples = directory / "demo_calibration"
    samples.mkdir(exist_ok=True)
    lines = []
    for i in range(10):
        image = rng.integers(0, 256, (1, 32, 32, 3), dtype=np.uint8)
        np.save(samples / f"image{i}.npy", image)
        lines.append(f"demo_calibration/image{i}.npy")
    dataset = directory / "demo_dataset.txt"
    dataset.write_text("\n".join(lines) + "\n")
    return model_path, dataset, samples / "image0.npy"


def show_top5(scores):
    scores = scores.ravel()
    print("-----TOP 5-----")
    for index in np.argsort(scores)[::-1][:5]:
        print(f"[{index:4d}] score:{scores[index]:.6f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="ONNX classifier (default: write a demo one)")
    parser.add_argument("--dataset", help="calibration dataset.txt (int8)")
    parser.add_argument("--image", help="NHWC .npy image to classify")
    parser.add_argument("--mean", type=float, nargs=3, default=[127.5, 127.5, 127.5])
    parser.add_argument("--std", type=float, nargs=3, default=[127.5, 127.5, 127.5])
    parser.add_argument("--fp16", action="store_true", help="no quantization (float16 model)")
    parser.add_argument("--target", help="board platform (rk3588, ...); default: simulator")
    parser.add_argument("--device-id", help="board serial from list_devices")
    parser.add_argument("-o", "--output", default="classifier.rknn", help=".rknn to write")
    args = parser.parse_args()

    output = Path(args.output).resolve()
    if args.model is None:
        args.model, demo_dataset, demo_image = write_demo_model(output.parent)
        args.dataset = args.dataset or str(demo_dataset)
        args.image = args.image or str(demo_image)

    rknn = RKNN(verbose=False)

    print("--> Config model")
    rknn.config(mean_values=[args.mean], std_values=[args.std],
                target_platform=args.target or "rk3588")
    print("done")

    print("--> Loading model")
    if rknn.load_onnx(model=str(args.model)) != 0:
        print("Load model failed!")
        return 1
    print("done")

    print("--> Building model")
    if rknn.build(do_quantization=not args.fp16, dataset=args.dataset) != 0:
        print("Build model failed!")
        return 1
    print("done")

    print("--> Export rknn model")
    if rknn.export_rknn(str(output)) != 0:
        print("Export rknn model failed!")
        return 1
    print(f"done: {output}")

    print("--> Init runtime environment")
    if rknn.init_runtime(target=args.target, device_id=args.device_id, perf_debug=True,
                         eval_mem=True) != 0:
        print("Init runtime environment failed!")
        return 1
    print("done")

    print("--> Running model")
    image = np.load(args.image) if args.image else None
    if image is None:
        print("no --image given: nothing to classify")
        return 1
    outputs = rknn.inference(inputs=[image])
    if outputs is None:
        print("Inference failed!")
        return 1
    show_top5(outputs[0])
    print("done")

    rknn.eval_perf()
    rknn.eval_memory()
    print(rknn.get_sdk_version())
    rknn.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
