"""list_devices (through adb), and finding the native pieces."""

from __future__ import annotations

import os
import stat

import pytest

from openrknn import locate
from openrknn.api import RKNN


def fake_adb(directory, output, status=0):
    script = directory / "adb"
    script.write_text(f"#!/bin/sh\ncat <<'END'\n{output}\nEND\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_list_devices(tmp_path, monkeypatch, capsys):
    adb = fake_adb(tmp_path, "List of devices attached\n515e9b401c060c0b\tdevice\n"
                             "VD46C3KM6N\tunauthorized\nXGOR2N4EZR\tdevice\n")
    monkeypatch.setenv("OPENRKNN_ADB", str(adb))
    adb_devices, ntb_devices = RKNN().list_devices()
    assert adb_devices == ["515e9b401c060c0b", "XGOR2N4EZR"] and ntb_devices == []
    printed = capsys.readouterr().out
    assert "all device(s) with adb mode:\n515e9b401c060c0b\nXGOR2N4EZR\n" in printed


def test_list_devices_when_adb_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENRKNN_ADB", str(fake_adb(tmp_path, "", status=1)))
    assert RKNN().list_devices() is None
    assert "E list_devices: " in capsys.readouterr().err


def test_missing_native_pieces_are_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENRKNN_CONVERT", str(tmp_path / "no-such-tool"))
    with pytest.raises(locate.NotFound, match="OPENRKNN_CONVERT"):
        locate.find_converter()
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    rknn = RKNN()
    rknn._check_onnx_file = lambda path: None  # reach build with an (empty) file
    assert rknn.load_onnx(str(model)) == 0
    assert rknn.build(do_quantization=False) == -1
    assert "$OPENRKNN_CONVERT is" in capsys.readouterr().err
    monkeypatch.setenv("OPENRKNN_LIBRKNNRT", str(tmp_path / "librknnrt.so"))
    with pytest.raises(locate.NotFound, match="OPENRKNN_LIBRKNNRT"):
        locate.find_library()
    assert os.environ["OPENRKNN_LIBRKNNRT"].endswith("librknnrt.so")


def test_choose_device_and_forward_port(tmp_path, monkeypatch):
    from openrknn import devices

    two = fake_adb(tmp_path, "List of devices attached\nA1\tdevice\nB2\tdevice\n")
    monkeypatch.setenv("OPENRKNN_ADB", str(two))
    assert devices.choose_device("B2") == "B2"
    with pytest.raises(devices.DeviceListError, match="2 devices connected .A1, B2.: pass"):
        devices.choose_device()
    with pytest.raises(devices.DeviceListError, match="'C3' is not connected .adb lists: A1, B2"):
        devices.choose_device("C3")
    # `adb forward tcp:0 ...` prints the port it picked.
    monkeypatch.setenv("OPENRKNN_ADB", str(fake_adb(tmp_path, "45123")))
    assert devices.forward_port("A1", 50051) == 45123
    monkeypatch.setenv("OPENRKNN_ADB", str(fake_adb(tmp_path, "error: device 'A1' not found", 1)))
    with pytest.raises(devices.DeviceListError, match="forward tcp:0 tcp:50051 failed"):
        devices.forward_port("A1", 50051)
    monkeypatch.setenv("OPENRKNN_ADB", str(fake_adb(tmp_path, "List of devices attached\n")))
    with pytest.raises(devices.DeviceListError, match="no device connected"):
        devices.choose_device()
