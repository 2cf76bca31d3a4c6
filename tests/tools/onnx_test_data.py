"""Finds (or makes) the ONNX backend test directories: <suite>/<test>/model.onnx with
test_data_set_<k>/input_<i>.pb and output_<i>.pb.

The onnx wheel ships the `pytorch-converted`, `pytorch-operator` and `simple` suites as data,
but recent wheels (1.23 among them) leave out the `node` suite's data and keep only the Python
cases it is generated from (onnx/backend/test/case/node). When the data is missing, the node
suite is generated from those cases, exactly as `backend-test-tools generate-data` does, into a
cache directory (once per onnx version).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SHIPPED_SUITES = ("pytorch-converted", "pytorch-operator", "simple")
ALL_SUITES = ("node",) + SHIPPED_SUITES
NON_TENSOR_MARKER = "NON_TENSOR_IO"  # file written next to a generated model.onnx


def shipped_data_dir():
    import onnx

    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data"


def suite_dir(suite, cache_dir):
    """The directory holding the suite's test directories, generating the node suite into
    cache_dir when the onnx package does not ship it."""
    shipped = shipped_data_dir() / suite
    if shipped.is_dir() and any(shipped.iterdir()):
        return shipped
    if suite != "node":
        raise FileNotFoundError(f"the onnx package has no '{suite}' test data ({shipped})")
    return generate_node_suite(Path(cache_dir))


def generate_node_suite(cache_dir: Path):
    import onnx

    target = cache_dir / f"node-onnx-{onnx.__version__}"
    stamp = target / ".complete"
    if stamp.exists():
        return target
    staging = cache_dir / f".node-onnx-{onnx.__version__}.{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    count = _write_node_cases(staging)
    (staging / ".complete").write_text(f"{count} tests from onnx {onnx.__version__}\n")
    if target.exists():  # another process finished first
        shutil.rmtree(staging)
    else:
        os.replace(staging, target)
    return target


def _write_node_cases(directory: Path):
    import warnings

    import numpy as np
    from onnx import TensorProto, numpy_helper
    from onnx.backend.test.case import node as node_cases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases()
    for case in cases:
        test_dir = directory / case.name
        test_dir.mkdir(parents=True, exist_ok=True)
        (test_dir / "model.onnx").write_bytes(case.model.SerializeToString())
        values = list(case.model.graph.input) + list(case.model.graph.output)
        if not all(v.type.HasField("tensor_type") for v in values):
            (test_dir / NON_TENSOR_MARKER).write_text("sequence, map or optional input/output\n")
            continue
        for k, (inputs, outputs) in enumerate(case.data_sets):
            data_dir = test_dir / f"test_data_set_{k}"
            data_dir.mkdir(exist_ok=True)
            for kind, arrays, declared in (("input", inputs, case.model.graph.input),
                                           ("output", outputs, case.model.graph.output)):
                for i, array in enumerate(arrays):
                    if isinstance(array, TensorProto):
                        tensor = array
                    else:
                        tensor = numpy_helper.from_array(np.asarray(array), declared[i].name)
                    (data_dir / f"{kind}_{i}.pb").write_bytes(tensor.SerializeToString())
    return len(cases)


def test_dirs(suite, cache_dir):
    root = suite_dir(suite, cache_dir)
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "model.onnx").exists())


def load_data_sets(test_dir: Path):
    """[(inputs, outputs)] as lists of numpy arrays, per test_data_set_<k>."""
    from onnx import TensorProto, numpy_helper

    data_sets = []
    for data_dir in sorted(test_dir.glob("test_data_set_*")):
        def read(kind):
            arrays = []
            i = 0
            while (data_dir / f"{kind}_{i}.pb").exists():
                tensor = TensorProto()
                tensor.ParseFromString((data_dir / f"{kind}_{i}.pb").read_bytes())
                arrays.append(numpy_helper.to_array(tensor))
                i += 1
            return arrays

        data_sets.append((read("input"), read("output")))
    return data_sets
