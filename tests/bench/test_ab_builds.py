"""bench/ab_builds.py end to end: one build against itself on a small sample model, two rounds
per order. Checks that both orders and their geometric mean are reported with the per-layer
lines, and that a missing library is refused with a message. Timings are never asserted: they
are only checked to be numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "ab_builds.py"


def built(variable: str) -> Path:
    value = os.environ.get(variable)
    if not value:
        pytest.skip(f"{variable} is not set (ctest sets it)")
    return Path(value)


def test_one_build_against_itself(tmp_path):
    build = built("ORKNN_BUILD_DIR")
    model = tmp_path / "mini.rknn"
    subprocess.run([str(built("ORKNN_MAKE_MODEL")), "mobilenet_mini", "fp32", str(model)],
                   check=True, stdout=subprocess.DEVNULL)
    result = subprocess.run([sys.executable, str(SCRIPT), str(model), "--before", str(build),
                             "--after", str(build), "--rounds", "2", "--layers", "2"],
                            capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    orders = [line for line in lines if "made first" in line]
    assert len(orders) == 2 and "before made first" in orders[0] and "after made first" in orders[1]
    for line in orders:
        assert re.search(r"before \d+\.\d+ ms, after \d+\.\d+ ms, ratio \d+\.\d+$", line), line
    assert any(re.search(r"after / before \d+\.\d+ \(geometric mean", line) for line in lines)
    layers = [line for line in lines if line.startswith("  ")]
    assert layers and all(re.search(r"before +\d+ us +after +\d+ us +[+-]\d+$", line)
                          for line in layers)


def test_missing_library_is_refused(tmp_path):
    build = built("ORKNN_BUILD_DIR")
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.rknn"),
                             "--before", str(tmp_path), "--after", str(build)],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "no librknnrt.so at" in result.stderr
