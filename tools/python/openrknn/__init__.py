"""OpenRKNN host package: an RKNN-Toolkit2 compatible Python API (`openrknn.api.RKNN`) over the
open `rknn-convert` converter and `librknnrt` runtime, and the toolkit-lite API
(`openrknn.api.RKNNLite`) for boards."""

__version__ = "0.1.0"
