"""init_runtime(target='rk3588', device_id=...): the model runs in a board's rknn_server, reached
over gRPC (protocol openrknn.server.v1, docs/server-protocol.md).

How the daemon is reached:
  * by default through ADB: the device is chosen with `adb devices` (devices.choose_device), a
    host port is forwarded to the daemon's port on the board ($OPENRKNN_SERVER_PORT, default
    50051) and the forward is removed again when the backend is closed;
  * $OPENRKNN_SERVER_ADDRESS=host:port connects there directly (a board on the network, or a
    daemon on this machine) and ADB is not used; $OPENRKNN_SERVER_TOKEN is sent as the bearer
    token a daemon listening beyond loopback requires.

The backend holds one session (OpenSession's stream stays open while the backend lives), one
uploaded model and one context. Every gRPC failure becomes a BackendError whose message is the
daemon's reason, so the API layer logs one line and returns -1.

Needs the grpcio and grpcio-tools packages (`pip install './tools/python[remote]'`).
"""

from __future__ import annotations

import os
import weakref
import zlib
from typing import List, Optional

import numpy as np

from .. import devices, native
from . import server_stubs
from .backend import BackendError, MemoryFigures, RuntimeBackend, RuntimeOptions, TimedRun

DEFAULT_DEVICE_PORT = 50051
CALL_TIMEOUT_SECONDS = 600.0  # a run of a large model on a slow board still fits
UPLOAD_CHUNK_BYTES = 1 << 20
SERVICE = "/openrknn.server.v1.RknnServer/"
CONNECT_TIMEOUT_SECONDS = 20.0  # the first call: a daemon that does not answer by then is down
# SoCs the daemon can report, by the NPU they share: a model built for one runs on the others.
NPU_FAMILY = {"rk3588": "rk3588", "rk3588s": "rk3588", "rk3576": "rk3576", "rk3566": "rk3566",
              "rk3568": "rk3566", "rk3562": "rk3562", "rv1103": "rv1106", "rv1106": "rv1106"}

SERVER_ABNORMAL = ("the rknn_server on the connected device is abnormal or not running: start "
                   "rknn_server on the device (docs/python-api.md, 'Running on a board')")


class ServerCallError(BackendError):
    """A call the daemon failed or could not be reached for; `code` is the gRPC status name."""

    def __init__(self, method, error):
        code = error.code() if hasattr(error, "code") else None
        details = error.details() if hasattr(error, "details") else str(error)
        self.code = code.name if code is not None else "UNKNOWN"
        super().__init__(f"rknn_server {method}: {details or 'no message'} ({self.code})")


def _load_grpc():
    try:
        import grpc
    except ImportError as error:
        raise BackendError("running on a device needs the grpcio and grpcio-tools packages: "
                           f"pip install './tools/python[remote]' ({error})") from None
    try:
        messages = server_stubs.load_messages()
    except server_stubs.StubError as error:
        raise BackendError(str(error)) from None
    return grpc, messages


class _Connection:
    """The channel, the session stream and the ADB forward: everything to undo on close. Kept
    apart from the backend so a finalizer can close it without holding the backend alive."""

    def __init__(self, messages, metadata):
        self.messages = messages
        self.metadata = metadata
        self.channel = None
        self.session_stream = None
        self.session_id = 0
        self.forward = None  # (serial, local port) while an adb forward is set up

    def close(self):
        if self.session_stream is not None:
            request = self.messages.CloseSessionRequest(protocol_version=1,
                                                        session_id=self.session_id)
            close_session = self.channel.unary_unary(
                SERVICE + "CloseSession", request_serializer=_serialize,
                response_deserializer=self.messages.CloseSessionResponse.FromString)
            try:
                close_session(request, timeout=10, metadata=self.metadata)
            except Exception:  # noqa: BLE001 - the daemon may be gone; cancelling frees it too
                pass
            self.session_stream.cancel()
            self.session_stream = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.forward is not None:
            serial, port = self.forward
            self.forward = None
            devices.remove_forward(serial, port)


def _serialize(message) -> bytes:
    return message.SerializeToString()


class ServerBackend(RuntimeBackend):
    """One model in one context of one rknn_server session."""

    def __init__(self, target: str, device_id: Optional[str]):
        self._grpc, self._messages = _load_grpc()
        self.target = target
        self.device_id = device_id
        self.description = f"{target} device {device_id or '(the only one connected)'}"
        token = os.environ.get("OPENRKNN_SERVER_TOKEN", "")
        self._metadata = [("authorization", f"Bearer {token}")] if token else None
        self._connection = _Connection(self._messages, self._metadata)
        self._finalizer = weakref.finalize(self, _Connection.close, self._connection)
        self._model_id = 0
        self._context_id = 0
        self._options = RuntimeOptions()
        self._inputs: List[native.TensorInfo] = []
        self._outputs: List[native.TensorInfo] = []
        self._last_run_inputs = None
        self._last_run_microseconds = 0
        self.device_info = None

    # -- connection ----------------------------------------------------------------------------

    def connect(self):
        address = os.environ.get("OPENRKNN_SERVER_ADDRESS")
        where = address
        if not address:
            try:
                serial = devices.choose_device(self.device_id)
                device_port = _device_port()
                local_port = devices.forward_port(serial, device_port)
            except devices.DeviceListError as error:
                raise BackendError(str(error)) from None
            self._connection.forward = (serial, local_port)
            self.device_id = serial
            address = f"127.0.0.1:{local_port}"
            where = f"{address}, adb forward to {serial} port {device_port}"
        # Models and outputs can exceed gRPC's 4 MB default; the daemon enforces its own limits.
        self._connection.channel = self._grpc.insecure_channel(
            address, options=[("grpc.max_receive_message_length", -1),
                              ("grpc.max_send_message_length", -1)])
        try:
            info = self._call("GetDeviceInfo", self._request("GetDeviceInfoRequest"),
                              CONNECT_TIMEOUT_SECONDS)
        except ServerCallError as error:
            if error.code in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
                raise BackendError(f"{SERVER_ABNORMAL}; cannot reach it at {where}: {error}") \
                    from None
            raise BackendError(f"the rknn_server at {where} refused the client: {error}") from None
        soc = info.soc.lower()
        if soc in NPU_FAMILY and NPU_FAMILY[soc] != NPU_FAMILY.get(self.target, self.target):
            raise BackendError(f"target '{self.target}' does not match the device's SoC '{soc}' "
                               f"({info.platform})")
        self.device_info = info
        self._open_session()
        self.description = (f"{self.target} device {self.device_id or address} (rknn_server "
                            f"{info.server_version} at {where}; SoC {info.soc}, NPU "
                            f"{info.npu_backend})")

    def _open_session(self):
        request = self._request("OpenSessionRequest", client_name="openrknn python")
        stream = self._connection.channel.unary_stream(
            SERVICE + "OpenSession", request_serializer=_serialize,
            response_deserializer=self._messages.SessionEvent.FromString)(
                request, metadata=self._metadata)
        try:
            event = next(stream)
        except self._grpc.RpcError as error:
            raise ServerCallError("OpenSession", error) from None
        except StopIteration:
            raise BackendError("rknn_server OpenSession ended without a session id") from None
        self._connection.session_stream = stream
        self._connection.session_id = event.session_id

    # -- calls ---------------------------------------------------------------------------------

    def _request(self, message, **fields):
        return getattr(self._messages, message)(protocol_version=1, **fields)

    def _call(self, method, request, timeout=CALL_TIMEOUT_SECONDS):
        response_class = getattr(self._messages, _RESPONSES[method])
        call = self._connection.channel.unary_unary(
            SERVICE + method, request_serializer=_serialize,
            response_deserializer=response_class.FromString)
        try:
            return call(request, timeout=timeout, metadata=self._metadata)
        except self._grpc.RpcError as error:
            raise ServerCallError(method, error) from None

    def _in_context(self, message, **fields):
        if not self._context_id:
            raise BackendError("no model is loaded")
        return self._request(message, session_id=self._connection.session_id,
                             context_id=self._context_id, **fields)

    def _upload(self, model: bytes):
        header = self._messages.UploadModelChunk.Header(
            protocol_version=1, session_id=self._connection.session_id, total_size=len(model),
            crc32=zlib.crc32(model) & 0xFFFFFFFF, name="model.rknn")

        def chunks():
            for offset in range(0, len(model), UPLOAD_CHUNK_BYTES):
                data = model[offset:offset + UPLOAD_CHUNK_BYTES]
                if offset == 0:
                    yield self._messages.UploadModelChunk(header=header, data=data)
                else:
                    yield self._messages.UploadModelChunk(data=data)

        call = self._connection.channel.stream_unary(
            SERVICE + "UploadModel", request_serializer=_serialize,
            response_deserializer=self._messages.UploadModelResponse.FromString)
        try:
            return call(chunks(), timeout=CALL_TIMEOUT_SECONDS, metadata=self._metadata)
        except self._grpc.RpcError as error:
            raise ServerCallError("UploadModel", error) from None

    # -- RuntimeBackend ------------------------------------------------------------------------

    def load(self, model: bytes, options: RuntimeOptions):
        if not model:
            raise BackendError("the model is empty (0 bytes)")
        self._options = options
        self._model_id = self._upload(model).model_id
        flags = 0
        if options.fallback_prior_device == "gpu":
            flags |= native.FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU
        created = self._call("InitContext", self._request(
            "InitContextRequest", session_id=self._connection.session_id, model_id=self._model_id,
            flags=flags, core_mask=options.core_mask, perf_debug=options.perf_debug,
            eval_mem=options.eval_mem))
        self._context_id = created.context_id
        attributes = self._call("QueryAttributes", self._in_context("QueryAttributesRequest"))
        self._inputs = [_tensor_info(attribute) for attribute in attributes.inputs]
        self._outputs = [_tensor_info(attribute) for attribute in attributes.outputs]

    def input_attributes(self):
        return self._inputs

    def output_attributes(self):
        return self._outputs

    def _tensors(self, inputs: List[native.InputBuffer]):
        tensors = []
        for index, buffer in enumerate(inputs):
            array = buffer.array
            if buffer.pass_through:
                # Raw bytes in the model's native type and layout; the daemon checks the size.
                tensors.append(self._messages.Tensor(
                    index=index, dtype=native.UINT8, layout=buffer.fmt, shape=[array.nbytes],
                    pass_through=True, data=array.tobytes()))
            else:
                tensors.append(self._messages.Tensor(
                    index=index, dtype=buffer.type, layout=buffer.fmt, shape=list(array.shape),
                    data=array.tobytes()))
        return tensors

    def run(self, inputs):
        tensors = self._tensors(inputs)
        # The protocol has one want_float for all outputs: float when any output is real-valued;
        # integer outputs are then converted back to their own type below.
        want_float = any(info.is_real for info in self._outputs)
        response = self._call("Run", self._in_context("RunRequest", inputs=tensors,
                                                      want_float=want_float))
        if len(response.outputs) != len(self._outputs):
            raise BackendError(f"rknn_server Run returned {len(response.outputs)} outputs; "
                               f"the model has {len(self._outputs)}")
        results = [_output_array(tensor, info) for tensor, info in
                   zip(response.outputs, self._outputs)]
        self._last_run_inputs = tensors
        self._last_run_microseconds = response.run_duration_us
        return results

    def last_run_microseconds(self):
        return self._last_run_microseconds

    def performance_detail(self):
        if not self._options.perf_debug:
            return ""
        # The daemon reports the per-layer table of a timed run: one run of the last inputs.
        response = self._call("EvalPerf", self._in_context(
            "EvalPerfRequest", loops=1, inputs=self._last_run_inputs or []))
        return response.perf_detail_text

    def timed_run(self, inputs, fix_frequency, want_detail):
        # Timed on the board, by the daemon, with its clocks pinned for the run when asked.
        tensors = self._tensors(inputs)
        response = self._call("EvalPerf", self._in_context(
            "EvalPerfRequest", loops=1, fix_freq=fix_frequency, inputs=tensors))
        self._last_run_inputs = tensors
        self._last_run_microseconds = response.total_time_us
        note = ""
        if fix_frequency and not response.frequency_fixed:
            note = f"the board's clocks were not fixed for the run: {response.frequency_message}"
        return TimedRun(response.total_time_us,
                        response.perf_detail_text if want_detail else "", note)

    def memory(self):
        response = self._call("EvalMemory", self._in_context("EvalMemoryRequest"))
        return MemoryFigures(response.weight_memory, response.internal_memory,
                             response.total_memory)

    def versions(self):
        response = self._call("GetSdkVersion", self._in_context("GetSdkVersionRequest"))
        return [("rknn_server", response.server_version), ("rknnrt", response.api_version),
                ("driver", response.driver_version or "none")]

    def close(self):
        # The session's end frees its models and contexts on the daemon.
        self._context_id = 0
        self._finalizer()


_RESPONSES = {
    "GetDeviceInfo": "DeviceInfo",
    "GetSdkVersion": "SdkVersion",
    "InitContext": "InitContextResponse",
    "QueryAttributes": "QueryAttributesResponse",
    "Run": "RunResponse",
    "EvalPerf": "EvalPerfResponse",
    "EvalMemory": "EvalMemoryResponse",
}


def _device_port():
    text = os.environ.get("OPENRKNN_SERVER_PORT", str(DEFAULT_DEVICE_PORT))
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise BackendError(f"$OPENRKNN_SERVER_PORT is '{text}', not a port number (1-65535)")
    return int(text)


def _tensor_info(attribute) -> native.TensorInfo:
    return native.TensorInfo(
        index=attribute.index, name=attribute.name, dims=list(attribute.shape),
        n_elems=attribute.element_count, size=attribute.size_bytes, fmt=attribute.layout,
        type=attribute.dtype, qnt_type=attribute.quant_type, zp=attribute.zero_point,
        scale=attribute.scale)


def _output_array(tensor, info: native.TensorInfo) -> np.ndarray:
    """One output of a RunResponse as the local backend returns it: float32 for real-valued
    outputs, else the output's own type, in the model's (ONNX) layout."""
    dtype = native.NUMPY_OF_TYPE.get(tensor.dtype)
    if dtype is None:
        raise BackendError(f"output {tensor.index}: the daemon sent element type {tensor.dtype}, "
                           "which has no numpy equivalent")
    shape = list(tensor.shape)
    expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if len(tensor.data) != expected:
        raise BackendError(f"output {tensor.index}: {len(tensor.data)} bytes, shape {shape} "
                           f"{np.dtype(dtype).name} needs {expected}")
    array = np.frombuffer(tensor.data, dtype=dtype).reshape(shape)
    if not info.is_real and dtype is np.float32:
        array = array.astype(native.NUMPY_OF_TYPE.get(info.type, np.float32))
    if tensor.layout == native.FORMAT_NHWC and array.ndim == 4:
        array = array.transpose(0, 3, 1, 2)
    return array.copy()


def create_backend(target: str, device_id: Optional[str]) -> RuntimeBackend:
    """A backend connected to the daemon of `device_id` (or the only device adb lists)."""
    backend = ServerBackend(target, device_id)
    try:
        backend.connect()
    except BaseException:
        backend.close()
        raise
    return backend
