"""A loaded model on a backend, with the toolkit's runtime calls (inference, eval_perf,
eval_memory, get_sdk_version): shared by RKNN and RKNNLite."""

from __future__ import annotations

import numpy as np

from .. import __version__, native, report
from ..runtime import RuntimeBackend, RuntimeOptions
from .calls import ApiError, describe, require, require_bool, require_choice
from .constants import CORE_MASKS, DATA_FORMATS, FALLBACK_DEVICES, RUNTIME_TARGETS

# Element types the runtime converts from (and normalises) for real-valued inputs.
_CONVERTIBLE = {np.dtype(np.float32): native.FLOAT32, np.dtype(np.float16): native.FLOAT16,
                np.dtype(np.uint8): native.UINT8, np.dtype(np.int8): native.INT8}


def runtime_options(target, device_id, perf_debug, eval_mem, core_mask, fallback_prior_device):
    """init_runtime's parameters checked against the toolkit's rules."""
    if target is not None:
        target = require_choice(target, "target", RUNTIME_TARGETS)
    require(device_id is None or isinstance(device_id, str),
            f"device_id must be a string (see list_devices), got {describe(device_id)}")
    require(isinstance(core_mask, int) and core_mask in CORE_MASKS.values(),
            f"core_mask {describe(core_mask)} is not valid (valid: "
            + ", ".join(f"RKNN.{name}" for name in CORE_MASKS) + ")")
    return RuntimeOptions(
        target=target, device_id=device_id, perf_debug=require_bool(perf_debug, "perf_debug"),
        eval_mem=require_bool(eval_mem, "eval_mem"), core_mask=core_mask,
        fallback_prior_device=require_choice(fallback_prior_device, "fallback_prior_device",
                                             FALLBACK_DEVICES))


def _per_input(value, count, name, allowed=None):
    """A per-input list from None, one value for all, or a list with one value per input."""
    if value is None or isinstance(value, (str, int)):
        values = [value] * count
    else:
        require(isinstance(value, (list, tuple)),
                f"{name} must be a list, got {describe(value)}")
        require(len(value) == count,
                f"{name} has {len(value)} entries, the model has {count} inputs")
        values = list(value)
    if allowed is not None:
        values = [None if v is None else require_choice(v, f"{name} entry", allowed)
                  for v in values]
    return values


def _shape_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


class RuntimeSession:
    def __init__(self, backend: RuntimeBackend, model: bytes, options: RuntimeOptions):
        self.backend = backend
        self.options = options
        self.model_size = len(model)
        backend.load(model, options)
        self.inputs = backend.input_attributes()
        self.outputs = backend.output_attributes()
        self._shape_sets = None  # asked for on the first shape change (static models: [])
        self._last_buffers = None

    # -- inputs --------------------------------------------------------------------------------

    def _convert_input(self, index, info, array, layout, pass_through):
        where = f"input {index} ('{info.name}')"
        if pass_through:
            dtype = native.NUMPY_OF_TYPE.get(info.type)
            require(dtype is not None, f"{where}: pass-through of a {info.type_name} input is "
                                       "not supported")
            require(array.dtype == dtype,
                    f"{where}: pass-through data must already be {info.type_name} "
                    f"(numpy {np.dtype(dtype).name}), got {array.dtype.name}")
            require(array.nbytes == info.size,
                    f"{where}: pass-through data has {array.nbytes} bytes, the model's "
                    f"{_shape_text(info.dims)} {info.type_name} tensor has {info.size}")
            return native.InputBuffer(array, info.type, info.fmt, pass_through=True)

        nchw = info.nchw_shape
        four_d = len(nchw) == 4
        layout = layout or "nhwc"
        expected = [nchw[0], nchw[2], nchw[3], nchw[1]] if four_d and layout == "nhwc" else nchw
        shape = list(array.shape)
        # Leading dimensions of 1 may be left out (an HWC image for a batch-1 model).
        missing = len(expected) - len(shape)
        if missing > 0 and shape == expected[missing:] and all(d == 1 for d in expected[:missing]):
            array = array.reshape(expected)
            shape = expected
        if shape != expected:
            hint = ""
            if four_d:
                other = "nchw" if layout == "nhwc" else "nhwc"
                hint = (f" (data_format '{layout}'; for {other.upper()} data pass "
                        f"data_format=['{other}'])")
            raise ApiError(f"{where}: shape {_shape_text(shape)} does not match the model's "
                           f"{_shape_text(expected)}{hint}")
        fmt = (native.FORMAT_NHWC if layout == "nhwc" else native.FORMAT_NCHW) if four_d \
            else info.fmt
        if info.is_real:
            element_type = _CONVERTIBLE.get(array.dtype)
            if element_type is None:
                require(np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_,
                        f"{where}: dtype {array.dtype.name} is not numeric")
                array = array.astype(np.float32)
                element_type = native.FLOAT32
            return native.InputBuffer(array, element_type, fmt)
        dtype = native.NUMPY_OF_TYPE.get(info.type)
        require(dtype is not None, f"{where}: {info.type_name} inputs are not supported")
        return native.InputBuffer(array.astype(dtype, copy=False), info.type, fmt)

    def _select_shape_set(self, arrays, formats, pass_through):
        """Dynamic-shape models (config(dynamic_input=...)): inputs of another listed shape
        set switch the model to it, as the toolkit's inference does."""
        wanted = []
        for info, array, layout, through in zip(self.inputs, arrays, formats, pass_through):
            shape = list(array.shape)
            if through or len(shape) != len(info.dims):
                return  # nothing to read a shape from; the per-input checks report it
            if len(shape) == 4:
                nchw = shape if layout == "nchw" else [shape[0], shape[3], shape[1], shape[2]]
                nhwc = [nchw[0], nchw[2], nchw[3], nchw[1]]
                shape = nhwc if info.fmt == native.FORMAT_NHWC else nchw
            wanted.append(shape)
        if wanted == [info.dims for info in self.inputs]:
            return
        if self._shape_sets is None:
            self._shape_sets = self.backend.dynamic_shape_sets()
        if not self._shape_sets:
            return  # a static model: the per-input checks report the shape
        require(wanted in self._shape_sets,
                f"input shapes {wanted} are not one of the model's shape sets "
                f"{self._shape_sets} (dims in the model's input layout)")
        self.backend.set_input_shapes(wanted)
        self.inputs = self.backend.input_attributes()
        self.outputs = self.backend.output_attributes()

    def prepare_inputs(self, inputs, data_format=None, inputs_pass_through=None):
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        require(isinstance(inputs, (list, tuple)),
                f"inputs must be a list of numpy arrays, got {type(inputs).__name__}")
        require(len(inputs) == len(self.inputs),
                f"{len(inputs)} inputs given, the model has {len(self.inputs)} "
                f"({', '.join(repr(i.name) for i in self.inputs)})")
        formats = _per_input(data_format, len(inputs), "data_format", DATA_FORMATS)
        pass_through = _per_input(inputs_pass_through, len(inputs), "inputs_pass_through")
        arrays = []
        for i, (info, value) in enumerate(zip(self.inputs, inputs)):
            require(pass_through[i] in (None, 0, 1, True, False),
                    f"inputs_pass_through entry {i} must be 0 or 1, got "
                    + describe(pass_through[i]))
            try:
                arrays.append(np.asarray(value))
            except (TypeError, ValueError) as error:
                raise ApiError(f"input {i} ('{info.name}') is not an array: {error}") from None
        self._select_shape_set(arrays, formats, pass_through)
        return [self._convert_input(i, info, array, formats[i], bool(pass_through[i]))
                for i, (info, array) in enumerate(zip(self.inputs, arrays))]

    def _zero_inputs(self):
        """What eval_perf runs when the script never called inference: zeros of every input."""
        buffers = []
        for info in self.inputs:
            dtype = np.float32 if info.is_real else native.NUMPY_OF_TYPE.get(info.type, np.uint8)
            element_type = native.FLOAT32 if info.is_real else info.type
            fmt = native.FORMAT_NCHW if len(info.dims) == 4 else info.fmt
            buffers.append(native.InputBuffer(np.zeros(info.nchw_shape, dtype), element_type, fmt))
        return buffers

    # -- the toolkit's runtime calls -----------------------------------------------------------

    def inference(self, inputs, data_format=None, inputs_pass_through=None):
        buffers = self.prepare_inputs(inputs, data_format, inputs_pass_through)
        outputs = self.backend.run(buffers)
        self._last_buffers = buffers
        return outputs

    def eval_perf(self, fix_frequency=False):
        """The performance text, and a note when the clocks could not be fixed (else '')."""
        buffers = self._last_buffers or self._zero_inputs()
        if self._last_buffers is None:
            self.backend.run(buffers)  # the first run pays for one-time set-up; not measured
        measured = self.backend.timed_run(buffers, fix_frequency, self.options.perf_debug)
        self._last_buffers = buffers
        text = report.performance_text(measured.microseconds, measured.detail,
                                       self.backend.description)
        return text, measured.clock_note

    def eval_memory(self):
        figures = self.backend.memory()
        detail = report.memory_detail(figures.weight_bytes, figures.internal_bytes,
                                      figures.total_bytes)
        return detail, report.memory_text(detail, self.model_size)

    def sdk_version(self):
        return report.sdk_version_text(f"openrknn {__version__} (python)",
                                       self.backend.versions())

    def close(self):
        self.backend.close()
