"""init_runtime(target='rk3588', device_id=...): the model runs on a board, in its rknn_server.

The transport (gRPC to rknn_server, over an ADB-forwarded port or the network) is a separate
module, `openrknn.runtime.grpc_client`, using messages generated from the server's proto. It
provides

    create_backend(target: str, device_id: Optional[str]) -> RuntimeBackend

returning a backend connected to the device (see backend.RuntimeBackend for what each method
does; `load` pushes the model and the init options, `run` sends inputs and returns outputs,
`performance_detail` / `memory` / `versions` ask the daemon). When that module cannot be
imported, every remote request fails with one clear reason and the API returns -1; when grpcio
is missing, grpc_client itself says which packages to install.

Tests and other transports can plug a factory in with register_remote_factory().
"""

from __future__ import annotations

import importlib
from typing import Callable, Optional

from .backend import BackendError, RuntimeBackend

RemoteFactory = Callable[[str, Optional[str]], RuntimeBackend]

UNAVAILABLE = "not available in this build: rknn_server client not built"

_registered_factory: Optional[RemoteFactory] = None


def register_remote_factory(factory: Optional[RemoteFactory]) -> Optional[RemoteFactory]:
    """Makes `factory(target, device_id)` create remote backends (None: back to the default).
    Returns the factory it replaces."""
    global _registered_factory
    previous = _registered_factory
    _registered_factory = factory
    return previous


def _default_factory() -> RemoteFactory:
    try:
        client = importlib.import_module(__package__ + ".grpc_client")
    except ImportError as error:
        raise BackendError(f"{UNAVAILABLE} (openrknn.runtime.grpc_client: {error})") from None
    factory = getattr(client, "create_backend", None)
    if factory is None:
        raise BackendError(f"{UNAVAILABLE} (openrknn.runtime.grpc_client has no create_backend)")
    return factory


def create_remote_backend(target: str, device_id: Optional[str]) -> RuntimeBackend:
    factory = _registered_factory or _default_factory()
    return factory(target, device_id)
