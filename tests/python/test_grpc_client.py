"""The remote path against a real daemon: the toolkit script with init_runtime(target='rk3588',
device_id=...) runs through openrknn.runtime.grpc_client, this build's rknn_server (on loopback)
and a fake adb; results equal the local runtime's, and every failure is one logged line and -1
(or None), with the adb forward removed again."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

import board
import models
from openrknn import native
from openrknn.api import RKNN
from openrknn.runtime import RuntimeOptions, grpc_client
from openrknn.runtime.backend import BackendError

pytest.importorskip("grpc")
pytest.importorskip("grpc_tools")

FORWARD = f"-s {board.SERIAL} forward tcp:0 tcp:{grpc_client.DEFAULT_DEVICE_PORT}"


def adb_calls_of_one_connection(port):
    return ["devices", FORWARD, f"-s {board.SERIAL} forward --remove tcp:{port}"]


def test_toolkit_script_on_a_device(native_paths, classifier_onnx, calibration, held_out,
                                    workdir, daemon, board_adb, capsys):
    rknn = RKNN()
    assert rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3],
                       target_platform="rk3588") == 0
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=True, dataset=str(calibration)) == 0
    assert rknn.export_rknn(str(workdir / "remote_flow.rknn")) == 0
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL, perf_debug=True,
                             eval_mem=True) == 0
    assert board_adb.calls() == ["devices", FORWARD]  # set up, still open
    remote = [rknn.inference([image])[0] for image in held_out]

    perf = rknn.eval_perf(is_print=False)  # fix_freq=True, and this 'board' has no governors
    assert f"rk3588 device {board.SERIAL} (rknn_server" in perf and "Conv" in perf
    assert "Total Inference Time(us): " in perf
    assert ("W eval_perf: the board's clocks were not fixed for the run: no NPU devfreq or CPU "
            "cpufreq governor") in capsys.readouterr().err
    assert "Conv" in rknn.eval_perf(is_print=False, fix_freq=False)
    memory = rknn.eval_memory(is_print=False)
    assert memory["weight_memory"] > 0
    assert memory["total_memory"] >= memory["weight_memory"] + memory["internal_memory"]
    version = rknn.get_sdk_version()
    assert "DRV: rknn_server: " in version and "DRV: rknnrt: " in version

    assert rknn.init_runtime() == 0  # the simulator: the device is released, forward removed
    assert board_adb.calls() == adb_calls_of_one_connection(daemon.port)
    for image, on_device in zip(held_out, remote):
        np.testing.assert_array_equal(on_device, rknn.inference([image])[0])

    sample = workdir / "remote_flow_probe.npy"
    np.save(sample, held_out[0][None])
    out = workdir / "remote_flow_analysis"
    assert rknn.accuracy_analysis([str(sample)], output_dir=str(out), target="rk3588",
                                  device_id=board.SERIAL) == 0
    assert (out / "runtime" / "prob.npy").is_file()
    assert board_adb.calls() == adb_calls_of_one_connection(daemon.port) * 2
    rknn.release()
    log = capsys.readouterr().err
    assert "E " not in log and "W " not in log and "Traceback" not in log, log


def test_backend_reports_the_daemons_reasons(native_paths, int8_rknn, daemon, board_adb):
    backend = grpc_client.create_backend("rk3588", board.SERIAL)
    try:
        backend.load(int8_rknn.read_bytes(), RuntimeOptions())
        assert backend.performance_detail() == ""  # perf_debug is off
        wrong_shape = native.InputBuffer(np.zeros((1, 3, 16, 16), np.float32), native.FLOAT32,
                                         native.FORMAT_NHWC)
        with pytest.raises(BackendError, match=r"rknn_server Run: input 0: shape 1x3x16x16 NHWC "
                                               r"should be 1x16x16x3 .*\(INVALID_ARGUMENT\)"):
            backend.run([wrong_shape])
        with pytest.raises(BackendError, match="got 2 input tensors; the model has 1"):
            backend.run([wrong_shape, wrong_shape])
    finally:
        backend.close()
    with pytest.raises(BackendError, match="no model is loaded"):
        backend.memory()
    assert board_adb.calls() == adb_calls_of_one_connection(daemon.port)


def test_wrong_input_is_one_line_and_none(native_paths, int8_rknn, held_out, board_adb, capsys):
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == 0
    assert rknn.inference([held_out[0][:8]]) is None
    assert rknn.inference([held_out[0], held_out[1]]) is None
    log = capsys.readouterr().err
    assert log.count("E inference: ") == 2 and "Traceback" not in log, log
    assert rknn.inference([held_out[0]]) is not None  # the session survives bad calls
    rknn.release()


def test_bad_model(native_paths, workdir, daemon, board_adb, capsys):
    garbage = workdir / "not_a_model.rknn"
    garbage.write_bytes(b"RKNN" + bytes(range(256)) * 4)
    rknn = RKNN()
    assert rknn.load_rknn(str(garbage)) == 0
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == -1
    log = capsys.readouterr().err
    assert "E init_runtime: cannot start the runtime on rk3588 device" in log
    assert "rknn_server InitContext: " in log and "Traceback" not in log, log
    assert board_adb.calls() == adb_calls_of_one_connection(daemon.port)


def test_daemon_down(native_paths, int8_rknn, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
    closed_port = board.unused_port()
    adb = board.FakeAdb(tmp_path / "adb", monkeypatch, closed_port)
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == -1
    log = capsys.readouterr().err
    assert "E init_runtime: the rknn_server on the connected device is abnormal" in log
    assert f"cannot reach it at 127.0.0.1:{closed_port}" in log and "UNAVAILABLE" in log
    assert "Traceback" not in log, log
    assert adb.calls() == adb_calls_of_one_connection(closed_port)


def test_device_not_connected(native_paths, int8_rknn, board_adb, capsys):
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588", device_id="OTHER") == -1
    log = capsys.readouterr().err
    assert f"device_id 'OTHER' is not connected (adb lists: {board.SERIAL})" in log
    assert board_adb.calls() == ["devices"]  # nothing forwarded


def test_address_without_adb(native_paths, int8_rknn, held_out, daemon, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENRKNN_SERVER_ADDRESS", f"127.0.0.1:{daemon.port}")
    monkeypatch.setenv("OPENRKNN_ADB", str(tmp_path / "no-adb-here"))
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588") == 0
    assert rknn.inference([held_out[0]])[0].shape == (1, 10)
    rknn.release()


def test_missing_grpcio_is_named(native_paths, int8_rknn, board_adb, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "grpc", None)  # import grpc raises ImportError
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == -1
    log = capsys.readouterr().err
    assert ("E init_runtime: running on a device needs the grpcio and grpcio-tools packages: "
            "pip install './tools/python[remote]'") in log
    assert board_adb.calls() == []


def test_pass_through_input_reaches_the_device_unchanged(native_paths, int8_rknn, held_out,
                                                         board_adb):
    with native.Runtime(int8_rknn) as model:
        info = model.inputs[0]
    normalised = (held_out[1][None] - models.MEAN) / models.STD
    quantized = np.clip(np.round(normalised / info.scale) + info.zp, -128, 127).astype(np.int8)
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime() == 0
    local = rknn.inference([quantized], inputs_pass_through=[1])[0]
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == 0
    remote = rknn.inference([quantized], inputs_pass_through=[1])[0]
    np.testing.assert_array_equal(remote, local)
    assert rknn.inference([quantized[:, :8]], inputs_pass_through=[1]) is None
    rknn.release()


def test_session_freed_by_the_daemon_is_reported(native_paths, int8_rknn, held_out, tmp_path,
                                                 monkeypatch, capsys):
    short_lived = board.Daemon(tmp_path / "daemon", ["--idle_timeout_seconds", "1"])
    try:
        monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
        board.FakeAdb(tmp_path / "adb", monkeypatch, short_lived.port)
        rknn = RKNN()
        assert rknn.load_rknn(str(int8_rknn)) == 0
        assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == 0
        give_up = time.monotonic() + 30
        while "idle for more than 1" not in short_lived.log():  # the daemon reaps the session
            assert time.monotonic() < give_up, short_lived.log()
            time.sleep(0.1)
        assert rknn.inference([held_out[0]]) is None
        log = capsys.readouterr().err
        assert "E inference: rknn_server Run: session " in log and "(NOT_FOUND)" in log, log
        assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == 0  # a new one
        assert rknn.inference([held_out[0]]) is not None
        rknn.release()
    finally:
        assert short_lived.stop() == 0, short_lived.log()


def test_token_of_a_daemon_that_requires_one(native_paths, int8_rknn, held_out, tmp_path,
                                             monkeypatch, capsys):
    guarded = board.Daemon(tmp_path / "daemon", ["--token", "s3cret"])
    try:
        monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("OPENRKNN_SERVER_ADDRESS", f"127.0.0.1:{guarded.port}")
        rknn = RKNN()
        assert rknn.load_rknn(str(int8_rknn)) == 0
        assert rknn.init_runtime(target="rk3588") == -1
        log = capsys.readouterr().err
        assert f"E init_runtime: the rknn_server at 127.0.0.1:{guarded.port} refused the client: " \
               "rknn_server GetDeviceInfo: this server needs a token" in log, log
        assert "(UNAUTHENTICATED)" in log, log
        monkeypatch.setenv("OPENRKNN_SERVER_TOKEN", "wrong")
        assert rknn.init_runtime(target="rk3588") == -1
        assert "the token in 'authorization' is wrong" in capsys.readouterr().err
        monkeypatch.setenv("OPENRKNN_SERVER_TOKEN", "s3cret")
        assert rknn.init_runtime(target="rk3588") == 0
        assert rknn.inference([held_out[0]]) is not None
        rknn.release()
    finally:
        assert guarded.stop() == 0, guarded.log()


def test_forward_removed_when_a_script_ends_without_release(native_paths, int8_rknn, daemon,
                                                            board_adb, tmp_path):
    script = ("import sys; sys.path.insert(0, sys.argv[2]); from openrknn.api import RKNN\n"
              "rknn = RKNN(); rknn.load_rknn(sys.argv[1])\n"
              f"assert rknn.init_runtime(target='rk3588', device_id='{board.SERIAL}') == 0\n")
    package = str(board.CHECKOUT / "tools" / "python")
    result = subprocess.run([sys.executable, "-c", script, str(int8_rknn), package],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert board_adb.calls() == adb_calls_of_one_connection(daemon.port)


def local_and_device_outputs(onnx_path, inputs, data_format=None):
    """The float model of `onnx_path` built, then run on `inputs` locally and on the device."""
    rknn = RKNN()
    assert rknn.config(target_platform="rk3588") == 0
    assert rknn.load_onnx(str(onnx_path)) == 0
    assert rknn.build(do_quantization=False) == 0
    assert rknn.init_runtime() == 0
    local = rknn.inference(inputs, data_format=data_format)
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == 0
    remote = rknn.inference(inputs, data_format=data_format)
    rknn.release()
    assert len(remote) == len(local)
    for on_device, here in zip(remote, local):
        assert on_device.dtype == here.dtype
        np.testing.assert_array_equal(on_device, here)
    return local, remote


def test_float_model_with_two_inputs_equals_the_local_run(native_paths, workdir, board_adb):
    rng = np.random.default_rng(7)
    image = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    row = rng.standard_normal((1, 4)).astype(np.float32)
    _, remote = local_and_device_outputs(models.two_inputs(workdir / "remote_two_inputs.onnx"),
                                         [image, row], ["nchw", None])
    assert [array.shape for array in remote] == [(1, 3, 4, 4)]


def test_integer_output_keeps_its_type_next_to_a_float_one(native_paths, workdir, board_adb):
    x = np.random.default_rng(3).standard_normal((2, 5)).astype(np.float32)
    model = models.float_and_index_outputs(workdir / "remote_float_and_index.onnx")
    _, remote = local_and_device_outputs(model, [x])
    assert [array.dtype for array in remote] == [np.float32, np.int64]
    np.testing.assert_array_equal(remote[1], np.argmax(x, axis=1))


def test_daemon_stopping_during_a_session(native_paths, int8_rknn, held_out, tmp_path,
                                          monkeypatch, capsys):
    stopping = board.Daemon(tmp_path / "daemon")
    monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
    adb = board.FakeAdb(tmp_path / "adb", monkeypatch, stopping.port)
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL, eval_mem=True) == 0
    assert stopping.stop() == 0, stopping.log()  # SIGTERM: the board's daemon goes away
    assert rknn.inference([held_out[0]]) is None
    assert rknn.eval_memory(is_print=False) is None
    log = capsys.readouterr().err
    assert "E inference: rknn_server Run: " in log and "(UNAVAILABLE)" in log, log
    assert "E eval_memory: rknn_server EvalMemory: " in log and "Traceback" not in log, log
    assert rknn.release() == 0
    assert adb.calls() == adb_calls_of_one_connection(stopping.port)


def test_target_must_match_the_boards_soc_and_eval_perf_pins_its_clock(
        native_paths, int8_rknn, tmp_path, monkeypatch, capsys):
    # The daemon reads the SoC from the device tree; here a fake one of an RK3588 board.
    tree = tmp_path / "root" / "proc" / "device-tree"
    tree.mkdir(parents=True)
    (tree / "compatible").write_bytes(b"rockchip,rk3588-evb1-lp4-v10\0rockchip,rk3588\0")
    (tree / "model").write_text("Rockchip RK3588 EVB1 LP4 V10 Board\n")
    governor = tmp_path / "root" / "sys" / "class" / "devfreq" / "fdab0000.npu" / "governor"
    governor.parent.mkdir(parents=True)
    governor.write_text("simple_ondemand\n")
    rk3588 = board.Daemon(tmp_path / "daemon", ["--sysfs_root", str(tmp_path / "root")])
    try:
        monkeypatch.setenv("OPENRKNN_CACHE_DIR", str(tmp_path / "cache"))
        adb = board.FakeAdb(tmp_path / "adb", monkeypatch, rk3588.port)
        rknn = RKNN()
        assert rknn.load_rknn(str(int8_rknn)) == 0
        assert rknn.init_runtime(target="rk3576", device_id=board.SERIAL) == -1
        assert ("E init_runtime: target 'rk3576' does not match the device's SoC 'rk3588' "
                "(Rockchip RK3588 EVB1 LP4 V10 Board)") in capsys.readouterr().err
        assert adb.calls() == adb_calls_of_one_connection(rk3588.port)
        assert rknn.init_runtime(target="rk3588", device_id=board.SERIAL) == 0
        assert "SoC rk3588" in rknn.eval_perf(is_print=False)  # fix_freq: the NPU clock pinned
        assert "W eval_perf" not in capsys.readouterr().err
        assert governor.read_text() == "simple_ondemand\n"  # and restored after the run
        rknn.release()
    finally:
        assert rk3588.stop() == 0, rk3588.log()
