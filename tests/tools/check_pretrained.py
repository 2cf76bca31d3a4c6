#!/usr/bin/env python3
"""Compares a real pretrained network (tests/models/pretrained.py) with ONNX Runtime through
compare_with_ort.py, for ctest: the random-weight builders say nothing about how a trained
network's errors behave under int8, which is what users convert.

    check_pretrained.py --name nudenet_320n_heads --work DIR -- COMPARE_WITH_ORT_ARGS...

Exits 77 (ctest's skip) when the package that ships the network is not installed, else with
compare_with_ort.py's exit code.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
MODELS = TOOLS.parent / "models"
sys.path.insert(0, str(MODELS))

import pretrained  # noqa: E402  (tests/models/pretrained.py)

SKIP = 77


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", required=True, choices=sorted(pretrained.PRETRAINED))
    parser.add_argument("--work", required=True)
    parser.add_argument("compare_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if pretrained.locate(args.name) is None:
        package = pretrained.PRETRAINED[args.name][0]
        print(f"SKIPPED {args.name}: package {package} is not installed (scripts/setup.sh "
              f"installs it)")
        return SKIP
    work = Path(args.work)
    pretrained.main(["--out", str(work / "models"), args.name])
    forwarded = [a for a in args.compare_args if a != "--"]
    command = [sys.executable, str(TOOLS / "compare_with_ort.py"),
               "--onnx", str(work / "models" / f"{args.name}.onnx"),
               "--work", str(work / "compare")] + forwarded
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
