#!/usr/bin/env python3
"""Runs the ONNX backend node tests through rknn-convert (float32, no quantization) and
librknnrt (C API via ctypes), and compares with the expected outputs shipped with the tests.

    run_onnx_node_tests.py [--suites node] [--jobs 2] [--filter REGEX] [--cache DIR]

A test runs when every operator in it is one we claim (the list in
docs/testing-converter.md, between the claimed-ops markers) and its inputs and outputs have
types the .rknn format has (float32, float16, int8, uint8, int16, int32, int64, bool); it is
skipped otherwise. Every other outcome is a pass or a failure, and each failure is listed
with its reason (conversion refused, rknn_init refused, wrong values, crash, ...).

Inputs that are parameters in deployed models (Conv weights and bias, BatchNormalization
statistics, Reshape shapes, Slice/Pad/Resize/Reduce operands, ...; see PARAMETER_INPUTS) are
turned into constants holding the test's values before conversion, since node tests pass them
as graph inputs; every other input stays an input and is fed through rknn_inputs_set.

Values are compared as the ONNX backend tests ask: floats with rtol 1e-3 and atol 1e-5 (NaN
where the expected value is NaN), integers and booleans exactly.

The last line is `N passed, M failed, K skipped (unsupported op)`, where K counts every skipped
test (the line above it splits K by reason). Exit status 0 when N / (N + M) >= --min-pass
(default 0.95), 1 otherwise, 2 when nothing could run.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import multiprocessing.connection
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import onnx_test_data  # noqa: E402

DOC = CHECKOUT / "docs" / "testing-converter.md"
BEGIN_MARKER = "<!-- claimed-ops:begin -->"
END_MARKER = "<!-- claimed-ops:end -->"

# Inputs (by position) that deployed models hold as constants; node tests feed them as inputs.
PARAMETER_INPUTS = {
    "Conv": {1, 2}, "ConvTranspose": {1, 2}, "Gemm": {1, 2}, "PRelu": {1}, "Clip": {1, 2},
    "BatchNormalization": {1, 2, 3, 4}, "InstanceNormalization": {1, 2},
    "LayerNormalization": {1, 2}, "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Pad": {1, 2, 3},
    "Squeeze": {1}, "Unsqueeze": {1}, "Split": {1}, "Resize": {1, 2, 3},
    "ReduceMean": {1}, "ReduceSum": {1}, "ReduceMax": {1}, "ReduceMin": {1},
}

# ONNX element types the .rknn format has (orknn_model.proto DataType).
RKNN_TYPES = {1: "float32", 10: "float16", 3: "int8", 2: "uint8", 5: "int16", 6: "int32",
              7: "int64", 9: "bool"}

RTOL = 1e-3
ATOL = 1e-5


def claimed_ops(doc=DOC):
    text = Path(doc).read_text()
    if BEGIN_MARKER not in text or END_MARKER not in text:
        raise SystemExit(f"{doc}: no claimed-ops block ({BEGIN_MARKER} ... {END_MARKER})")
    block = text.split(BEGIN_MARKER, 1)[1].split(END_MARKER, 1)[0]
    return set(re.findall(r"`([A-Za-z][A-Za-z0-9]*)`", block))


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for attribute in node.attribute:
            if attribute.g is not None and attribute.HasField("g"):
                yield from _all_nodes(attribute.g)
            for subgraph in attribute.graphs:
                yield from _all_nodes(subgraph)


def classify(test_dir, model, ops):
    """None if the test runs, else (reason kind, detail)."""
    if (test_dir / onnx_test_data.NON_TENSOR_MARKER).exists():
        return ("type", "sequence/map/optional inputs or outputs")
    values = list(model.graph.input) + list(model.graph.output)
    if not all(v.type.HasField("tensor_type") for v in values):
        return ("type", "sequence/map/optional inputs or outputs")
    unsupported = sorted({n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
                          for n in _all_nodes(model.graph)
                          if n.domain not in ("", "ai.onnx") or n.op_type not in ops})
    if unsupported:
        return ("op", ", ".join(unsupported))
    constants = {t.name for t in model.graph.initializer}
    for value in values:
        if value.name in constants:
            continue
        elem_type = value.type.tensor_type.elem_type
        if elem_type not in RKNN_TYPES:
            import onnx

            return ("type", f"{value.name}: {onnx.TensorProto.DataType.Name(elem_type)}")
    return None


def fold_parameters(model, inputs):
    """Turns graph inputs used as parameters into initializers with this data set's values.
    Returns (model, remaining input values in order)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph_inputs = [v.name for v in model.graph.input
                    if v.name not in {t.name for t in model.graph.initializer}]
    value_of = dict(zip(graph_inputs, inputs))
    fold = set()
    for node in model.graph.node:
        for position in PARAMETER_INPUTS.get(node.op_type, ()):
            if position < len(node.input) and node.input[position] in value_of:
                fold.add(node.input[position])
    kept_values = []
    kept_inputs = []
    for value in model.graph.input:
        if value.name in fold:
            model.graph.initializer.append(numpy_helper.from_array(value_of[value.name],
                                                                   value.name))
        else:
            kept_inputs.append(value)
            if value.name in value_of:
                kept_values.append(value_of[value.name])
    del model.graph.input[:]
    model.graph.input.extend(kept_inputs)
    return model, kept_values


def downgrade(model, max_opset):
    import onnx
    from onnx import helper, version_converter

    version = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if version <= max_opset:
        return model
    converted = version_converter.convert_version(model, max_opset)
    converted.ir_version = helper.find_min_ir_version_for(
        [helper.make_opsetid("", max_opset)])
    onnx.checker.check_model(converted)
    return converted


def compare(ours, expected):
    """None when equal within the tolerances, else the reason."""
    import numpy as np

    ours = np.asarray(ours)
    if ours.shape != expected.shape:
        if ours.size != expected.size:
            return f"shape {list(ours.shape)}, expected {list(expected.shape)}"
        ours = ours.reshape(expected.shape)
    if expected.dtype.kind in "fc":
        e = expected.astype(np.float64)
        o = ours.astype(np.float64)
        nan = np.isnan(e)
        if not np.array_equal(nan, np.isnan(o)):
            return f"NaN at {int((nan != np.isnan(o)).sum())} positions differs"
        close = np.isclose(o, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not close.all():
            bad = np.argwhere(~close)[0]
            index = tuple(int(i) for i in bad)
            error = np.abs(o - e)[~nan]
            return (f"{int((~close).sum())} of {close.size} values off, max abs error "
                    f"{float(error.max()):.3g}; first at {list(index)}: {o[index]:.6g} vs "
                    f"{e[index]:.6g}")
        return None
    if not np.array_equal(ours.astype(np.int64), expected.astype(np.int64)):
        wrong = int((ours.astype(np.int64) != expected.astype(np.int64)).sum())
        return f"{wrong} of {expected.size} {expected.dtype} values differ"
    return None


class StderrCapture:
    """Collects what the runtime logs on file descriptor 2 during a call."""

    def __enter__(self):
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode("utf-8", "replace")
        self.file.close()


def _last_lines(text, count=3):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-count:])


def run_with_ort(model, fed):
    """The harness's own check: the prepared model (parameters folded) in ONNX Runtime."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    names = [value.name for value in session.get_inputs()]
    return session.run(None, dict(zip(names, fed)))


def run_test(test_dir, work_dir, converter_path, library, max_opset, backend="orknn"):
    """Worker: converts and runs one test (all its data sets). Returns a result dict."""
    import onnx

    import converter as converter_module
    import orknn_runtime

    test_dir = Path(test_dir)
    result = {"test": test_dir.name, "status": "passed", "reason": ""}
    model = onnx.load(str(test_dir / "model.onnx"))
    data_sets = onnx_test_data.load_data_sets(test_dir)
    if not data_sets:
        return dict(result, status="failed", reason="no test data")
    tool = converter_module.Converter(converter_path) if backend == "orknn" else None
    work = Path(work_dir) / test_dir.name
    work.mkdir(parents=True, exist_ok=True)
    for k, (inputs, expected) in enumerate(data_sets):
        prepared, fed = fold_parameters(model, inputs)
        if max_opset:
            try:
                prepared = downgrade(prepared, max_opset)
            except Exception as error:  # the version converter cannot express it
                return dict(result, status="skipped", kind="opset",
                            reason=f"not expressible at opset {max_opset}: "
                                   f"{str(error).splitlines()[0][:120]}")
        if backend == "ort":
            try:
                outputs = run_with_ort(prepared, fed)
            except Exception as error:
                return dict(result, status="failed", stage="runtime",
                            reason=f"ORT: {str(error).splitlines()[0][:200]}")
            for i, (ours, reference) in enumerate(zip(outputs, expected)):
                problem = compare(ours, reference)
                if problem:
                    return dict(result, status="failed", stage="compare",
                                reason=f"data set {k}, output {i}: {problem}")
            continue
        onnx_path = work / f"model_{k}.onnx"
        rknn_path = work / f"model_{k}.rknn"
        onnx.save(prepared, str(onnx_path))
        try:
            tool.convert(onnx_path, rknn_path, "fp32", timeout=300)
        except converter_module.ConversionError as error:
            if error.returncode < 0:
                return dict(result, status="failed", stage="convert",
                            reason=f"rknn-convert crashed (signal {-error.returncode})")
            return dict(result, status="failed", stage="convert",
                        reason=f"rknn-convert: {_last_lines(error.output) or error.returncode}")
        except Exception as error:
            return dict(result, status="failed", stage="convert", reason=f"rknn-convert: {error}")
        capture = StderrCapture()
        try:
            with capture:
                with orknn_runtime.Runtime(rknn_path, library) as runtime:
                    outputs = runtime.run(fed)
        except Exception as error:
            log = _last_lines(getattr(capture, "text", "") or "", 2)
            return dict(result, status="failed", stage="runtime",
                        reason=f"{error}{' | ' + log if log else ''}")
        if len(outputs) != len(expected):
            return dict(result, status="failed", stage="compare",
                        reason=f"{len(outputs)} outputs, expected {len(expected)}")
        for i, (ours, reference) in enumerate(zip(outputs, expected)):
            problem = compare(ours, reference)
            if problem:
                return dict(result, status="failed", stage="compare",
                            reason=f"data set {k}, output {i}: {problem}")
    shutil.rmtree(work, ignore_errors=True)
    return result


def _worker(connection, *arguments):
    try:
        result = run_test(*arguments)
    except Exception as error:  # a bug of the runner: report it as this test's failure
        result = {"test": Path(arguments[0]).name, "status": "failed",
                  "reason": f"runner error: {type(error).__name__}: {error}"}
    connection.send(result)
    connection.close()


def converter_max_opset(converter_path):
    """The newest ai.onnx opset rknn-convert reads, from `--list-ops` ("opsets 7-19"); None
    if it does not say."""
    import subprocess

    try:
        listing = subprocess.run([converter_path, "--list-ops"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"opsets?\s+\d+\s*-\s*(\d+)", listing)
    return int(match.group(1)) if match else None


def _op_of(name, model):
    types = [n.op_type for n in model.graph.node]
    return types[0] if len(set(types)) == 1 else "+".join(sorted(set(types)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="node",
                        help="comma-separated: node, pytorch-converted, pytorch-operator, "
                             "simple, or all (default node)")
    parser.add_argument("--filter", help="only tests whose name matches this regex")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300, help="seconds per test")
    parser.add_argument("--cache", default=None,
                        help="where the node suite is generated when the onnx package lacks "
                             "it (default: build dir of the converter, else a temp dir)")
    parser.add_argument("--work", help="keep converted models here (default: temporary)")
    parser.add_argument("--converter", help="rknn-convert binary")
    parser.add_argument("--library", help="librknnrt.so")
    parser.add_argument("--ops-doc", default=str(DOC), help="document with the claimed ops")
    parser.add_argument("--max-opset", type=int, default=None,
                        help="convert newer models down to this opset first (onnx "
                             "version_converter), as rknn-convert tells users to; tests it "
                             "cannot convert are skipped. Default: the newest opset "
                             "`rknn-convert --list-ops` names; 0: never")
    parser.add_argument("--min-pass", type=float, default=0.95)
    parser.add_argument("--backend", choices=["orknn", "ort"], default="orknn",
                        help="ort: run the prepared models in ONNX Runtime instead (checks the "
                             "harness itself: data, parameter folding, tolerances)")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--list", action="store_true", help="list the tests that would run")
    parser.add_argument("--quiet", action="store_true", help="no per-op table")
    args = parser.parse_args(argv)

    import onnx

    import converter as converter_module

    ops = claimed_ops(args.ops_doc)
    suites = onnx_test_data.ALL_SUITES if args.suites == "all" else args.suites.split(",")
    converter_path = (None if args.list or args.backend == "ort"
                      else converter_module.find_converter(args.converter))
    cache = Path(args.cache) if args.cache else (
        Path(converter_path).parents[2] / "tests" / "onnx-backend-data" if converter_path
        else Path(tempfile.gettempdir()) / "orknn-onnx-backend-data")
    pattern = re.compile(args.filter) if args.filter else None
    if args.max_opset is None and converter_path:
        args.max_opset = converter_max_opset(converter_path)

    results = []
    to_run = []
    op_of = {}
    start = time.monotonic()
    for suite in suites:
        for test_dir in onnx_test_data.test_dirs(suite, cache):
            name = f"{suite}/{test_dir.name}" if suite != "node" else test_dir.name
            if pattern and not pattern.search(name):
                continue
            model = onnx.load(str(test_dir / "model.onnx"))
            op_of[test_dir.name] = _op_of(test_dir.name, model)
            why = classify(test_dir, model, ops)
            if why:
                results.append({"test": test_dir.name, "status": "skipped", "kind": why[0],
                                "reason": why[1]})
            else:
                to_run.append(test_dir)
    if args.list:
        for test_dir in to_run:
            print(test_dir.name)
        print(f"{len(to_run)} tests would run, {len(results)} skipped")
        return 0

    library = args.library or None
    work = Path(args.work or tempfile.mkdtemp(prefix="orknn-node-tests-"))
    work.mkdir(parents=True, exist_ok=True)
    # Every test runs in a process of its own (forked, so it starts at once): a test that
    # crashes the runtime, or corrupts its memory, affects only its own result.
    context = multiprocessing.get_context("fork")
    pending = list(to_run)
    running = []  # (process, connection, test name, start time)
    try:
        while pending or running:
            while pending and len(running) < max(1, args.jobs):
                test_dir = pending.pop(0)
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_worker, args=(
                    sender, str(test_dir), str(work), converter_path, library, args.max_opset,
                    args.backend))
                process.start()
                sender.close()
                running.append((process, receiver, test_dir.name, time.monotonic()))
            multiprocessing.connection.wait([r for _, r, _, _ in running] +
                                            [p.sentinel for p, _, _, _ in running], timeout=5)
            still = []
            for process, receiver, name, started in running:
                result = None
                if receiver.poll():
                    try:
                        result = receiver.recv()
                    except EOFError:
                        result = None
                if result is None and process.is_alive():
                    if time.monotonic() - started > args.timeout:
                        process.kill()
                        process.join()
                        result = {"test": name, "status": "failed", "stage": "runtime",
                                  "reason": f"timed out after {args.timeout} s"}
                    else:
                        still.append((process, receiver, name, started))
                        continue
                process.join()
                if result is None:
                    code = process.exitcode
                    how = (f"signal {-code}" if code is not None and code < 0
                           else f"exit status {code}")
                    result = {"test": name, "status": "failed", "stage": "runtime",
                              "reason": f"the process running the model in librknnrt died "
                                        f"({how})"}
                receiver.close()
                results.append(result)
            running = still
    finally:
        for process, _, _, _ in running:
            process.kill()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    for result in results:
        result["op"] = op_of.get(result["test"], "?")
    passed = [r for r in results if r["status"] == "passed"]
    failed = sorted((r for r in results if r["status"] == "failed"), key=lambda r: r["test"])
    skipped = [r for r in results if r["status"] == "skipped"]

    if not args.quiet:
        per_op = collections.defaultdict(lambda: [0, 0])
        for r in passed + failed:
            per_op[r["op"]][0 if r["status"] == "passed" else 1] += 1
        print("per operator (passed/failed):")
        for op in sorted(per_op):
            p, f = per_op[op]
            print(f"  {op:40s} {p:4d} {f:4d}")
    if failed:
        print(f"failures ({len(failed)}):")
        for r in failed:
            print(f"  FAIL {r['test']}: {r['reason']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    kinds = collections.Counter(r.get("kind", "op") for r in skipped)
    ran = len(passed) + len(failed)
    rate = len(passed) / ran if ran else 0.0
    opset_note = (f", models above opset {args.max_opset} converted down to it"
                  if args.max_opset else "")
    print(f"pass rate {100 * rate:.1f}% of {ran} run ({time.monotonic() - start:.0f} s"
          f"{opset_note}); "
          f"skipped: {kinds.get('op', 0)} unsupported op, {kinds.get('type', 0)} type the "
          f".rknn format lacks, {kinds.get('opset', 0)} opset conversion")
    print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped (unsupported op)")
    if not ran:
        return 2
    return 0 if rate >= args.min_pass else 1


if __name__ == "__main__":
    sys.exit(main())
