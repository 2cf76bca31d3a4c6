"""accuracy_analysis(target=...): the model's outputs on the board next to the simulator's.
The board's values go to output_dir/runtime/ and their cosine with simulator/ is appended to
error_analysis.txt, one line per output."""

from __future__ import annotations

import numpy as np


def file_name(tensor_name):
    """The converter's snapshot file name of a tensor (docs/rknn-convert.md)."""
    return "".join(c if c.isalnum() or c in ".-_" else "_" for c in tensor_name) + ".npy"


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / norm) if norm > 0 else 1.0


def compare_outputs(session, files, out):
    """Runs the .npy sample `files` through `session` (on the board) and records the result."""
    results = session.inference([np.load(f) for f in files])
    runtime_dir = out / "runtime"
    runtime_dir.mkdir(exist_ok=True)
    lines = ["", f"# runtime ({session.backend.description}) vs simulator, model outputs"]
    for info, result in zip(session.outputs, results):
        np.save(runtime_dir / file_name(info.name), result)
        simulator_file = out / "simulator" / file_name(info.name)
        if simulator_file.is_file():
            lines.append(f"{info.name}  runtime_cos {cosine(np.load(simulator_file), result):.6f}")
        else:
            lines.append(f"{info.name}  (no simulator dump to compare)")
    with open(out / "error_analysis.txt", "a", encoding="utf-8") as text:
        text.write("\n".join(lines) + "\n")
