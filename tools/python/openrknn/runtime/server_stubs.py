"""The protobuf message classes of rknn_server's protocol (openrknn.server.v1), generated from
the daemon's .proto on first use and cached, so no generated code is kept in the source tree.

Where the .proto is found, first hit wins: $OPENRKNN_SERVER_PROTO; openrknn/proto/ next to this
package (a symbolic link into rknn_server/proto/ in the checkout, a copy in an installed
package). The generated module goes to $OPENRKNN_CACHE_DIR, else $XDG_CACHE_HOME/openrknn, else
~/.cache/openrknn, under a name derived from the .proto's contents and the protobuf version, so
a changed protocol or library never reuses a stale module. Generating needs grpcio-tools (its
bundled protoc); no network.

Only messages are generated (protoc --python_out): the client calls the RPCs by their method
paths, which avoids the gRPC stub module and its top-level import of the messages module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
PROTO_FILE_NAME = "rknn_server.proto"
MODULE_NAME = "openrknn_server_v1_pb2"  # private: never clashes with the openrknn package

_lock = threading.Lock()
_loaded = None


class StubError(RuntimeError):
    """The messages cannot be generated or loaded; the message says what to install or set."""


def find_proto() -> Path:
    explicit = os.environ.get("OPENRKNN_SERVER_PROTO")
    if explicit:
        if not Path(explicit).is_file():
            raise StubError(f"$OPENRKNN_SERVER_PROTO is '{explicit}', which is not a file")
        return Path(explicit)
    bundled = _PACKAGE_DIR / "proto" / PROTO_FILE_NAME
    if bundled.is_file():
        return bundled
    raise StubError(f"the rknn_server protocol file is missing: {bundled} does not exist "
                    "(reinstall the package or set $OPENRKNN_SERVER_PROTO)")


def cache_root() -> Path:
    explicit = os.environ.get("OPENRKNN_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "openrknn"


def _generate(proto_text: bytes, destination: Path) -> None:
    if importlib.util.find_spec("grpc_tools") is None:
        raise StubError("generating the rknn_server messages needs grpcio-tools: "
                        "pip install './tools/python[remote]'")
    destination.parent.mkdir(parents=True, exist_ok=True)
    # Built in a scratch directory next to the destination, then renamed into place, so a
    # concurrent process never imports half a file.
    with tempfile.TemporaryDirectory(dir=destination.parent) as scratch:
        source = Path(scratch) / PROTO_FILE_NAME
        source.write_bytes(proto_text)
        # protoc runs in a child process: grpc_tools' compiler carries its own C++ protobuf,
        # and after it has run in this process, loading librknnrt (which links the system's
        # libprotobuf) corrupts the heap.
        try:
            result = subprocess.run(
                [sys.executable, "-m", "grpc_tools.protoc", f"-I{scratch}",
                 f"--python_out={scratch}", str(source)],
                capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise StubError(f"protoc did not finish compiling {PROTO_FILE_NAME} in 120 s") from None
        generated = Path(scratch) / "rknn_server_pb2.py"
        if result.returncode != 0 or not generated.is_file():
            raise StubError(f"protoc could not compile {PROTO_FILE_NAME} (exit status "
                            f"{result.returncode}): {result.stderr.strip()}")
        os.replace(generated, destination)


def _module_path(proto_text: bytes) -> Path:
    import google.protobuf

    key = hashlib.sha256(proto_text + google.protobuf.__version__.encode()).hexdigest()[:16]
    return cache_root() / "server-stubs" / f"rknn_server_pb2_{key}.py"


def _cached_module(proto_text: bytes) -> Path:
    """The generated module's path, generating it first when the cache does not have it."""
    path = _module_path(proto_text)
    if path.is_file():
        return path
    try:
        _generate(proto_text, path)
        return path
    except OSError as error:
        # An unwritable cache: generate into a private directory for this process.
        fallback = Path(tempfile.mkdtemp(prefix="openrknn-stubs-")) / path.name
        try:
            _generate(proto_text, fallback)
        except OSError:
            raise StubError(f"cannot write the generated messages to {path.parent}: {error} "
                            "(set $OPENRKNN_CACHE_DIR)") from None
        return fallback


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # A file cut short can still be valid Python: check that it describes the whole protocol.
    descriptor = getattr(module, "DESCRIPTOR", None)
    if descriptor is None or "RunRequest" not in descriptor.message_types_by_name or \
            not hasattr(module, "RunRequest"):
        raise ImportError(f"{path} does not define the openrknn.server.v1 messages")
    return module


def load_messages():
    """The generated messages module (rknn_server_pb2), generated into the cache when needed."""
    global _loaded
    with _lock:
        if _loaded is None:
            proto_text = find_proto().read_bytes()
            path = _cached_module(proto_text)
            try:
                _loaded = _import(path)
            except Exception:  # noqa: BLE001 - a damaged cache entry (e.g. cut short): redo it
                path.unlink(missing_ok=True)
                path = _cached_module(proto_text)
                try:
                    _loaded = _import(path)
                except Exception as error:  # noqa: BLE001
                    raise StubError(f"cannot load the generated messages {path}: {error}") \
                        from None
        return _loaded
