"""What every RuntimeBackend must do (openrknn/runtime/backend.py), checked on each backend
there is: the local librknnrt, a remote-style stand-in (test_remote.py), and the gRPC client of
rknn_server against this build's daemon (through a fake adb, see board.py)."""

from __future__ import annotations

import numpy as np
import pytest

import board
from openrknn import native
from openrknn.runtime import RuntimeOptions
from openrknn.runtime.local import LocalBackend
from test_remote import StandInDevice



def rknn_server_backend(request):
    pytest.importorskip("grpc")
    from openrknn.runtime import grpc_client

    request.getfixturevalue("board_adb")
    return grpc_client.create_backend("rk3588", board.SERIAL)


BACKENDS = {
    "local": lambda request: LocalBackend(),
    "remote-stand-in": lambda request: StandInDevice("rk3588", "CONTRACT"),
    "rknn_server": rknn_server_backend,
}


@pytest.mark.parametrize("make_backend", BACKENDS.values(), ids=BACKENDS.keys())
def test_backend_contract(native_paths, int8_rknn, held_out, make_backend, request):
    model = int8_rknn.read_bytes()
    backend = make_backend(request)
    backend.load(model, RuntimeOptions(perf_debug=True, eval_mem=True))
    assert backend.description
    inputs, outputs = backend.input_attributes(), backend.output_attributes()
    assert [i.name for i in inputs] == ["input"] and [o.name for o in outputs] == ["prob"]
    assert inputs[0].dims == [1, 16, 16, 3] and inputs[0].fmt == native.FORMAT_NHWC

    image = native.InputBuffer(held_out[0][None], native.FLOAT32, native.FORMAT_NHWC)
    results = backend.run([image])
    with native.Runtime(model) as reference:
        expected = reference.run([held_out[0][None].transpose(0, 3, 1, 2)])
    assert len(results) == 1 and results[0].dtype == np.float32
    np.testing.assert_array_equal(results[0], expected[0])

    assert backend.last_run_microseconds() >= 0
    assert "Conv" in backend.performance_detail()
    measured = backend.timed_run([image], fix_frequency=False, want_detail=True)
    assert measured.microseconds >= 0 and "Conv" in measured.detail and not measured.clock_note
    assert backend.timed_run([image], fix_frequency=False, want_detail=False).detail == ""
    memory = backend.memory()
    assert memory.weight_bytes > 0 and memory.total_bytes >= memory.weight_bytes
    versions = dict(backend.versions())
    assert versions.get("rknnrt")
    assert backend.dynamic_shape_sets() == []
    backend.close()
    backend.close()  # twice is harmless
