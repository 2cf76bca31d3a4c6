"""The toolkit-compatible classes: `from openrknn.api import RKNN` (RKNN-Toolkit2) and
`from openrknn.api import RKNNLite` (the toolkit-lite API for boards)."""

from .rknn import RKNN
from .rknn_lite import RKNNLite

__all__ = ["RKNN", "RKNNLite"]
