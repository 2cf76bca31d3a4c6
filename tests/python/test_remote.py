"""init_runtime(target=...) goes through the remote backend interface: without the rknn_server
client module it fails with one clear reason; with a client plugged in (here a stand-in that
runs the model locally and reports a daemon version) the toolkit calls work through it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import models
from openrknn.api import RKNN
from openrknn.runtime.local import LocalBackend
from openrknn.runtime.remote import UNAVAILABLE, register_remote_factory


class StandInDevice(LocalBackend):
    """A 'board' that is this process: what a gRPC client must look like to the API."""

    opened = []

    def __init__(self, target, device_id):
        super().__init__()
        self.target, self.device_id = target, device_id
        StandInDevice.opened.append(self)
        self.closed = False

    def load(self, model, options):
        super().load(model, options)
        self.description = f"{self.target} device {self.device_id} (stand-in)"

    def versions(self):
        return [("rknn_server", "0.0.0 (stand-in)")] + super().versions()

    def close(self):
        self.closed = True
        super().close()


@pytest.fixture
def stand_in():
    StandInDevice.opened = []
    previous = register_remote_factory(StandInDevice)
    yield StandInDevice
    register_remote_factory(previous)


def test_remote_target_without_the_client_module(native_paths, int8_rknn, monkeypatch,
                                                 capsys):
    # As in a package copied without openrknn/runtime/grpc_client.py: importing it fails.
    monkeypatch.setitem(sys.modules, "openrknn.runtime.grpc_client", None)
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588", device_id="515e9b401c060c0b") == -1
    log = capsys.readouterr().err
    assert f"E init_runtime: {UNAVAILABLE}" in log and "Traceback" not in log
    assert rknn.accuracy_analysis(inputs=["x.npy"], target="rk3588") == -1


def test_remote_calls_go_through_the_plugged_in_client(native_paths, int8_rknn, held_out,
                                                       stand_in):
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="RK3588", device_id="VD46C3KM6N", eval_mem=True) == 0
    device = stand_in.opened[-1]
    assert (device.target, device.device_id) == ("rk3588", "VD46C3KM6N")
    remote = rknn.inference([held_out[0]])[0]
    assert "rk3588 device VD46C3KM6N" in rknn.eval_perf(is_print=False)
    assert rknn.eval_memory(is_print=False)["total_memory"] > 0
    assert "DRV: rknn_server: 0.0.0 (stand-in)" in rknn.get_sdk_version()
    assert rknn.init_runtime() == 0  # back to the simulator: the device is released
    assert device.closed
    np.testing.assert_array_equal(remote, rknn.inference([held_out[0]])[0])
    rknn.release()


def test_accuracy_analysis_with_a_target(native_paths, classifier_onnx, calibration, held_out,
                                         workdir, stand_in):
    rknn = RKNN()
    rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3])
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(dataset=str(calibration)) == 0
    sample = workdir / "remote_probe.npy"
    np.save(sample, held_out[2][None])
    out = workdir / "remote_snapshot"
    assert rknn.accuracy_analysis([str(sample)], output_dir=str(out), target="rk3588") == 0
    assert (out / "runtime" / "prob.npy").is_file()
    text = (out / "error_analysis.txt").read_text()
    line = [entry for entry in text.splitlines() if entry.startswith("prob  runtime_cos")][0]
    assert float(line.split()[-1]) > 0.9999  # the stand-in is the simulator itself
    assert stand_in.opened[-1].closed
    rknn.release()
