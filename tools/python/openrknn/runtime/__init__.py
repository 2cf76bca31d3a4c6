"""Where a model runs: the local librknnrt (simulator) or a board's rknn_server."""

from .backend import MemoryFigures, RuntimeBackend, RuntimeOptions
from .factory import create_backend

__all__ = ["MemoryFigures", "RuntimeBackend", "RuntimeOptions", "create_backend"]
