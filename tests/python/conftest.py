"""Fixtures of the openrknn package tests. The package is imported from tools/python (or from
the venv when it is installed there); rknn-convert and librknnrt come from OPENRKNN_CONVERT /
OPENRKNN_LIBRKNNRT (the ctest sets them to the build's) or the checkout's newest build."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tools" / "python"))

import models  # noqa: E402
from openrknn import locate  # noqa: E402


@pytest.fixture(scope="session")
def native_paths():
    try:
        return locate.find_converter(), locate.find_library()
    except locate.NotFound as error:
        pytest.skip(f"native pieces missing: {error}")


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("openrknn")


@pytest.fixture(scope="session")
def classifier_onnx(workdir):
    return models.classifier(workdir / "classifier.onnx")


@pytest.fixture(scope="session")
def calibration(workdir):
    return models.dataset(workdir / "calibration")


@pytest.fixture(scope="session")
def held_out():
    """Samples not in the calibration set, NHWC float32 pixels."""
    return models.images(3, seed=99)


@pytest.fixture(scope="session")
def int8_rknn(native_paths, workdir, classifier_onnx, calibration):
    """The classifier converted to int8 through the API, as a .rknn file."""
    from openrknn.api import RKNN

    rknn = RKNN()
    assert rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3],
                       target_platform="rk3588") == 0
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=True, dataset=str(calibration)) == 0
    path = workdir / "classifier_int8.rknn"
    assert rknn.export_rknn(str(path)) == 0
    rknn.release()
    return path


@pytest.fixture(scope="session")
def daemon(tmp_path_factory):
    """This build's rknn_server on a free loopback port, for the whole test file."""
    import board

    running = board.Daemon(tmp_path_factory.mktemp("daemon"))
    yield running
    assert running.stop() == 0, running.log()


@pytest.fixture
def board_adb(daemon, tmp_path, monkeypatch, tmp_path_factory):
    """A fake adb on PATH whose one device forwards to `daemon`; the generated gRPC messages
    are cached in the test's scratch space."""
    import board

    monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    return board.FakeAdb(tmp_path / "adb", monkeypatch, daemon.port)
