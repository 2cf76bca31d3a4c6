"""The scripts in tools/python/examples run as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_tools import fake_adb

EXAMPLES = Path(__file__).resolve().parents[2] / "tools" / "python" / "examples"


def run_example(name, arguments, cwd, extra_environment=None):
    environment = dict(os.environ, **(extra_environment or {}))
    return subprocess.run([sys.executable, str(EXAMPLES / name), *arguments], cwd=cwd,
                          capture_output=True, text=True, env=environment, timeout=240)


def test_convert_and_run_classifier_then_run_on_board(native_paths, tmp_path):
    result = run_example("convert_and_run_classifier.py", ["-o", "demo.rknn"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "-----TOP 5-----" in result.stdout and "Memory Profile Info Dump" in result.stdout
    assert "Traceback" not in result.stderr
    assert (tmp_path / "demo.rknn").stat().st_size > 0

    local = run_example("run_on_board.py",
                        ["demo.rknn", "--input", "demo_calibration/image1.npy"], tmp_path)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "output 0: shape (1, 10)" in local.stdout

    adb = fake_adb(tmp_path, "List of devices attached\nTESTSERIAL\tdevice\n")
    board = run_example("run_on_board.py", ["demo.rknn", "--target", "rk3588"], tmp_path,
                        {"OPENRKNN_ADB": str(adb)})
    assert board.returncode == 1
    assert "all device(s) with adb mode:\nTESTSERIAL" in board.stdout
    assert "E init_runtime: not available in this build" in board.stderr
    assert "Traceback" not in board.stderr
