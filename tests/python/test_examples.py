"""The scripts in tools/python/examples run as documented."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import board

EXAMPLES = Path(__file__).resolve().parents[2] / "tools" / "python" / "examples"


def run_example(name, arguments, cwd, extra_environment=None):
    environment = dict(os.environ, **(extra_environment or {}))
    return subprocess.run([sys.executable, str(EXAMPLES / name), *arguments], cwd=cwd,
                          capture_output=True, text=True, env=environment, timeout=240)


def test_convert_and_run_classifier_then_run_on_board(native_paths, tmp_path, daemon,
                                                       monkeypatch):
    pytest.importorskip("grpc")
    result = run_example("convert_and_run_classifier.py", ["-o", "demo.rknn"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "-----TOP 5-----" in result.stdout and "Memory Profile Info Dump" in result.stdout
    assert "Traceback" not in result.stderr
    assert (tmp_path / "demo.rknn").stat().st_size > 0

    local = run_example("run_on_board.py",
                        ["demo.rknn", "--input", "demo_calibration/image1.npy",
                         "--output-dir", "local"], tmp_path)
    assert local.returncode == 0, local.stdout + local.stderr
    assert "output 0: shape (1, 10)" in local.stdout

    # On a 'board': this build's rknn_server on loopback, reached through a fake adb.
    adb = board.FakeAdb(tmp_path / "adb", monkeypatch, daemon.port)
    on_board = run_example("run_on_board.py",
                           ["demo.rknn", "--target", "rk3588", "--device-id", board.SERIAL,
                            "--input", "demo_calibration/image1.npy", "--output-dir", "board"],
                           tmp_path, {"OPENRKNN_CACHE_DIR": str(tmp_path / "cache")})
    assert on_board.returncode == 0, on_board.stdout + on_board.stderr
    assert f"all device(s) with adb mode:\n{board.SERIAL}" in on_board.stdout
    assert "DRV: rknn_server: " in on_board.stdout and "Memory Profile Info Dump" in on_board.stdout
    assert "Traceback" not in on_board.stderr and "E " not in on_board.stderr, on_board.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "board" / "output0.npy"),
                                  np.load(tmp_path / "local" / "output0.npy"))
    assert adb.calls()[-1] == f"-s {board.SERIAL} forward --remove tcp:{daemon.port}"


TOOLKIT_SCRIPT = '''
import sys
import numpy as np
from rknn.api import RKNN
from rknnlite.api import RKNNLite

model, dataset, image = sys.argv[1:4]
rknn = RKNN(verbose=False)
rknn.config(mean_values=[[127.5, 127.5, 127.5]], std_values=[[127.5, 127.5, 127.5]],
            target_platform='rk3588')
assert rknn.load_onnx(model=model) == 0
assert rknn.build(do_quantization=True, dataset=dataset) == 0
assert rknn.export_rknn('./unchanged.rknn') == 0
rknn.release()
lite = RKNNLite()
assert lite.load_rknn('./unchanged.rknn') == 0
assert lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0) == 0
outputs = lite.inference(inputs=[np.load(image)])
print('top1', int(np.argmax(outputs[0])))
lite.release()
'''


def test_unchanged_toolkit_script_runs_with_openrknn_run(native_paths, tmp_path, classifier_onnx,
                                                         calibration, held_out):
    import numpy as np

    import models

    script = tmp_path / "toolkit_script.py"
    script.write_text(TOOLKIT_SCRIPT)
    image = tmp_path / "image.npy"
    np.save(image, held_out[0])
    package_dir = str(Path(__file__).resolve().parents[2] / "tools" / "python")
    environment = dict(os.environ, PYTHONPATH=package_dir)
    result = subprocess.run([sys.executable, "-m", "openrknn.run", str(script),
                             str(classifier_onnx), str(calibration), str(image)],
                            cwd=tmp_path, capture_output=True, text=True, env=environment,
                            timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    expected = int(np.argmax(models.onnx_reference(classifier_onnx, held_out[0][None])[0]))
    assert result.stdout.split() == ["top1", str(expected)]
