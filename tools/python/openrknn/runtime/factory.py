"""Picks the backend for init_runtime's target."""

from __future__ import annotations

from .backend import RuntimeBackend, RuntimeOptions
from .local import LocalBackend
from .remote import create_remote_backend


def create_backend(options: RuntimeOptions, library=None) -> RuntimeBackend:
    if options.target is None:
        return LocalBackend(library)
    return create_remote_backend(options.target, options.device_id)
