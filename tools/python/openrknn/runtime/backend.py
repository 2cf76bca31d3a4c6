"""The interface between the toolkit-style API and whatever runs the model.

Two implementations: `LocalBackend` (librknnrt loaded into this process through ctypes, the
simulator of init_runtime(target=None)) and a remote one that talks to `rknn_server` on a board
(init_runtime(target='rk3588', device_id=...)), see `remote.py`. The API layer prepares inputs
(layout, type, pass-through) from the attributes a backend reports, so both behave the same.

Every method raises on failure with a message that says what went wrong (BackendError, or an
openrknn.native.RknnError from the runtime); the API layer turns that into its -1 and log line.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..native import InputBuffer, TensorInfo


class BackendError(RuntimeError):
    """A backend cannot do what was asked; the message is the reason shown to the user."""


@dataclass
class RuntimeOptions:
    """init_runtime's parameters, validated by the API layer."""

    target: Optional[str] = None  # None: the local simulator; else a platform name (rk3588, ...)
    device_id: Optional[str] = None
    perf_debug: bool = False
    eval_mem: bool = False
    core_mask: int = 0  # RKNN_NPU_CORE_AUTO
    fallback_prior_device: str = "cpu"


@dataclass
class TimedRun:
    """eval_perf's measured run."""

    microseconds: int
    detail: str  # the per-layer table (perf_debug), or ''
    clock_note: str = ""  # why the clocks were not fixed when that was asked, or ''


@dataclass
class MemoryFigures:
    """What RKNN_QUERY_MEM_SIZE reports: weights, intermediate tensors, and everything the
    context holds (so other = total - weight - internal)."""

    weight_bytes: int
    internal_bytes: int
    total_bytes: int


class RuntimeBackend(abc.ABC):
    """One loaded model on one device."""

    #: one line for logs and reports: where the model runs
    description: str = ""

    @abc.abstractmethod
    def load(self, model: bytes, options: RuntimeOptions) -> None:
        """Loads the .rknn bytes and applies the options (core mask, profiling)."""

    @abc.abstractmethod
    def input_attributes(self) -> List[TensorInfo]:
        """RKNN_QUERY_INPUT_ATTR of every input."""

    @abc.abstractmethod
    def output_attributes(self) -> List[TensorInfo]:
        """RKNN_QUERY_OUTPUT_ATTR of every output."""

    def dynamic_shape_sets(self) -> List[List[List[int]]]:
        """The shape sets a dynamic-shape model accepts (dims per input, attribute order);
        [] for a static model."""
        return []

    def set_input_shapes(self, shape_set: List[List[int]]) -> None:
        """Selects one of dynamic_shape_sets(); the attributes then report the new shapes."""
        raise BackendError(f"{self.description} cannot change input shapes")

    @abc.abstractmethod
    def run(self, inputs: List[InputBuffer]) -> list:
        """One inference; every output as float32 (real-valued) or its own integer type, in the
        model's (ONNX) layout."""

    @abc.abstractmethod
    def last_run_microseconds(self) -> int:
        """Time of the last run, without input/output conversion."""

    @abc.abstractmethod
    def performance_detail(self) -> str:
        """The per-layer table of the last run (perf_debug=True), or ''."""

    def timed_run(self, inputs: List[InputBuffer], fix_frequency: bool,
                  want_detail: bool) -> TimedRun:
        """eval_perf's run (with the per-layer table when want_detail). Here: one run; the
        clocks are not this backend's to pin, so fix_frequency has nothing to do. A board's
        backend times the run on the board, with its clocks pinned when asked."""
        self.run(inputs)
        return TimedRun(self.last_run_microseconds(),
                        self.performance_detail() if want_detail else "")

    @abc.abstractmethod
    def memory(self) -> MemoryFigures:
        """Memory the loaded model uses."""

    @abc.abstractmethod
    def versions(self) -> List[Tuple[str, str]]:
        """(component, version) pairs for get_sdk_version, e.g. ('rknnrt', '2.3.2 ...')."""

    @abc.abstractmethod
    def close(self) -> None:
        """Releases the model; safe to call twice."""
