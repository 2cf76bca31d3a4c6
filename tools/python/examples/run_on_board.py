#!/usr/bin/env python3
"""Runs a .rknn model on a board connected over USB (ADB), through its rknn_server daemon:
list_devices -> load_rknn -> init_runtime(target, device_id) -> inference -> eval_perf ->
eval_memory -> get_sdk_version -> release.

    run_on_board.py MODEL.rknn --target rk3588 [--device-id SERIAL] [--input x.npy ...]
                    [--core-mask NPU_CORE_0_1] [--output-dir DIR]

The board needs rknn_server running and `adb devices` must list it; the host needs the
package's remote extra (`pip install './tools/python[remote]'`: grpcio, grpcio-tools). The
script forwards a local port to the daemon with adb and removes the forward on release.
$OPENRKNN_SERVER_ADDRESS=host:port talks to a daemon on the network instead (no adb).
Inputs are .npy arrays (NHWC for images); without --input only eval_perf runs the model (on
zeros). --output-dir saves the outputs as output0.npy, output1.npy, ...
Leave out --target to run the same script in the local runtime.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--target", help="rk3588, rk3576, rk3566, ... (default: simulator)")
    parser.add_argument("--device-id")
    parser.add_argument("--input", action="append", default=[], help=".npy, once per input")
    parser.add_argument("--core-mask", default="NPU_CORE_AUTO",
                        help="NPU_CORE_AUTO, NPU_CORE_0, NPU_CORE_0_1, NPU_CORE_ALL, ...")
    parser.add_argument("--output-dir", help="where to save the outputs (.npy)")
    args = parser.parse_args()

    rknn = RKNN()
    if args.target:
        rknn.list_devices()
    if rknn.load_rknn(args.model) != 0:
        return 1
    core_mask = getattr(RKNN, args.core_mask, None)
    if core_mask is None:
        print(f"unknown core mask {args.core_mask}")
        return 2
    if rknn.init_runtime(target=args.target, device_id=args.device_id, perf_debug=True,
                         eval_mem=True, core_mask=core_mask) != 0:
        return 1

    if args.input:
        outputs = rknn.inference(inputs=[np.load(path) for path in args.input])
        if outputs is None:
            return 1
        for index, output in enumerate(outputs):
            print(f"output {index}: shape {output.shape}, min {output.min():.6g}, "
                  f"max {output.max():.6g}")
            if args.output_dir:
                Path(args.output_dir).mkdir(parents=True, exist_ok=True)
                np.save(Path(args.output_dir) / f"output{index}.npy", output)
    # Without inputs, eval_perf runs the model on zeros of every input.
    if rknn.eval_perf() is None:
        return 1
    rknn.eval_memory()
    print(rknn.get_sdk_version())
    rknn.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
