#!/usr/bin/env python3
"""Checks that the three lists of operators agree:

  - the operators claimed in docs/testing-converter.md (what the node-test runner runs);
  - the runtime's op registry, read from the OpSchema tables of librknnrt/graph/ops/*.cc
    (operators the runtime registers but that are not ONNX operators we read, Swish and SiLU,
    are allowed extras);
  - SUPPORTED_OPS of tests/models/op_models.py, each with at least one single-op model;
  - with --converter, the operators `rknn-convert --list-ops` names as supported (its first
    list; the ops it only folds, removes or rewrites are not claimed).

    check_op_list.py [--source-dir DIR] [--converter PATH]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "models"))

RUNTIME_ONLY = {"Swish", "SiLU"}  # fused activations the converter may emit


def runtime_ops(source_dir: Path):
    """Operator names of the OpSchema tables: brace entries {"Conv", 2, 3, ...} and loops
    `for (const char* type : {"Add", "Sub"})` that build OpSchema{type, ...}."""
    ops = set()
    for path in sorted((source_dir / "librknnrt" / "graph" / "ops").glob("*.cc")):
        text = path.read_text()
        ops.update(re.findall(r'\{\s*"([A-Z][A-Za-z0-9]*)"\s*,\s*(?:\d|INT_MAX)', text))
        ops.update(re.findall(r'OpSchema\{\s*"([A-Z][A-Za-z0-9]*)"', text))
        for loop in re.finditer(r'for\s*\(\s*const\s+char\s*\*\s*(\w+)\s*:\s*\{([^}]*)\}\s*\)'
                                r'\s*\{?([^;]*;)', text):
            variable, names, body = loop.groups()
            if re.search(r'OpSchema\s*\{\s*' + variable + r'\b', body):
                ops.update(re.findall(r'"([A-Za-z0-9]+)"', names))
    return ops


def converter_ops(converter):
    import subprocess

    listing = subprocess.run([converter, "--list-ops"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=60).stdout
    supported = listing.split(":", 1)[1].split(";", 1)[0] if ":" in listing else ""
    return set(re.findall(r"\b([A-Z][A-Za-z0-9]*)\b", supported))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source-dir", default=str(HERE.parents[1]))
    parser.add_argument("--converter", help="rknn-convert, to compare its --list-ops too")
    args = parser.parse_args(argv)
    source_dir = Path(args.source_dir)

    import op_models
    import run_onnx_node_tests

    claimed = run_onnx_node_tests.claimed_ops(source_dir / "docs" / "testing-converter.md")
    registry = runtime_ops(source_dir)
    builders = set(op_models.SUPPORTED_OPS)
    problems = []
    if not registry:
        problems.append("no operator found in librknnrt/graph/ops/*.cc (did the tables change "
                        "form? update runtime_ops())")
    for op in sorted(claimed - registry):
        problems.append(f"{op}: claimed in docs/testing-converter.md, not in the runtime registry")
    for op in sorted(registry - claimed - RUNTIME_ONLY):
        problems.append(f"{op}: in the runtime registry, not claimed in docs/testing-converter.md")
    for op in sorted(claimed ^ builders):
        where = "claimed but not in" if op in claimed else "in, but not claimed by the doc:"
        problems.append(f"{op}: {where} op_models.SUPPORTED_OPS")
    if args.converter:
        listed = converter_ops(args.converter)
        if not listed:
            problems.append("rknn-convert --list-ops named no operator")
        for op in sorted(claimed - listed):
            problems.append(f"{op}: claimed, but rknn-convert --list-ops does not list it")
        for op in sorted(listed - claimed - RUNTIME_ONLY):
            problems.append(f"{op}: listed by rknn-convert --list-ops, not claimed in "
                            f"docs/testing-converter.md")
    covered = set()
    for name, build in op_models.OP_MODELS.items():
        covered.update(op for op in builders if name.startswith(f"op_{op.lower()}"))
    for op in sorted(builders - covered):
        problems.append(f"{op}: no single-op model (op_{op.lower()}*) in op_models.py")

    print(f"claimed {len(claimed)}, runtime registry {len(registry)} "
          f"(of which runtime-only {sorted(registry & RUNTIME_ONLY)}), op models "
          f"{len(op_models.OP_MODELS)}")
    for problem in problems:
        print(f"FAIL: {problem}")
    print("op lists agree" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
