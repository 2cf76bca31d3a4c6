"""ctypes binding of the RKNN C API (include/rknn_api.h): the one binding of librknnrt in the
project, used by the `openrknn` package (its local runtime) and by the converter tests.

    with Runtime("model.rknn") as model:
        outputs = model.run([nchw_array])      # list of numpy arrays, in ONNX (NCHW) order

Runtime also takes the model as bytes, rknn_init flags, and exposes the core mask, the
performance and memory queries and the version strings.

Struct layouts are the LP64 ones of include/rknn_api.h (rknn_tensor_attr is 376 bytes,
rknn_input 32, rknn_output 24; see shared/reference/rknn-c-api.md, Appendix A); they are
checked against those sizes at import.

The library is found by `openrknn.locate.find_library` (the `library` argument,
$OPENRKNN_LIBRKNNRT or $ORKNN_LIBRKNNRT, next to the package, a build of the checkout, then the
loader path).
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from . import locate

RKNN_SUCC = 0
RKNN_MAX_DIMS = 16
RKNN_MAX_NAME_LEN = 256
RKNN_MAX_DYNAMIC_SHAPE_NUM = 512

RKNN_QUERY_IN_OUT_NUM = 0
RKNN_QUERY_INPUT_ATTR = 1
RKNN_QUERY_OUTPUT_ATTR = 2
RKNN_QUERY_PERF_DETAIL = 3
RKNN_QUERY_PERF_RUN = 4
RKNN_QUERY_SDK_VERSION = 5
RKNN_QUERY_MEM_SIZE = 6
RKNN_QUERY_CUSTOM_STRING = 7
RKNN_QUERY_INPUT_DYNAMIC_RANGE = 13
RKNN_QUERY_CURRENT_INPUT_ATTR = 14
RKNN_QUERY_CURRENT_OUTPUT_ATTR = 15

# rknn_init flags
FLAG_COLLECT_PERF_MASK = 0x00000008
FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU = 0x00000400

# rknn_tensor_type
FLOAT32, FLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, BOOL, INT4, BFLOAT16 = range(12)
TYPE_NAMES = ["FLOAT32", "FLOAT16", "INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32",
              "INT64", "BOOL", "INT4", "BFLOAT16"]
NUMPY_OF_TYPE = {FLOAT32: np.float32, FLOAT16: np.float16, INT8: np.int8, UINT8: np.uint8,
                 INT16: np.int16, UINT16: np.uint16, INT32: np.int32, UINT32: np.uint32,
                 INT64: np.int64, BOOL: np.bool_}
TYPE_OF_NUMPY = {np.dtype(v): k for k, v in NUMPY_OF_TYPE.items()}

# rknn_tensor_format
FORMAT_NCHW, FORMAT_NHWC, FORMAT_NC1HWC2, FORMAT_UNDEFINED = range(4)
FORMAT_NAMES = ["NCHW", "NHWC", "NC1HWC2", "UNDEFINED"]

# rknn_tensor_qnt_type
QNT_NONE, QNT_DFP, QNT_AFFINE_ASYMMETRIC = range(3)

ERROR_NAMES = {
    -1: "RKNN_ERR_FAIL", -2: "RKNN_ERR_TIMEOUT", -3: "RKNN_ERR_DEVICE_UNAVAILABLE",
    -4: "RKNN_ERR_MALLOC_FAIL", -5: "RKNN_ERR_PARAM_INVALID", -6: "RKNN_ERR_MODEL_INVALID",
    -7: "RKNN_ERR_CTX_INVALID", -8: "RKNN_ERR_INPUT_INVALID", -9: "RKNN_ERR_OUTPUT_INVALID",
    -10: "RKNN_ERR_DEVICE_UNMATCH", -11: "RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL",
    -12: "RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION",
    -13: "RKNN_ERR_TARGET_PLATFORM_UNMATCH",
}


class rknn_input_output_num(ctypes.Structure):
    _fields_ = [("n_input", ctypes.c_uint32), ("n_output", ctypes.c_uint32)]


class rknn_tensor_attr(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("n_dims", ctypes.c_uint32),
        ("dims", ctypes.c_uint32 * RKNN_MAX_DIMS),
        ("name", ctypes.c_char * RKNN_MAX_NAME_LEN),
        ("n_elems", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("fmt", ctypes.c_int),
        ("type", ctypes.c_int),
        ("qnt_type", ctypes.c_int),
        ("fl", ctypes.c_int8),
        ("zp", ctypes.c_int32),
        ("scale", ctypes.c_float),
        ("w_stride", ctypes.c_uint32),
        ("size_with_stride", ctypes.c_uint32),
        ("pass_through", ctypes.c_uint8),
        ("h_stride", ctypes.c_uint32),
    ]


class rknn_input(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("buf", ctypes.c_void_p),
        ("size", ctypes.c_uint32),
        ("pass_through", ctypes.c_uint8),
        ("type", ctypes.c_int),
        ("fmt", ctypes.c_int),
    ]


class rknn_output(ctypes.Structure):
    _fields_ = [
        ("want_float", ctypes.c_uint8),
        ("is_prealloc", ctypes.c_uint8),
        ("index", ctypes.c_uint32),
        ("buf", ctypes.c_void_p),
        ("size", ctypes.c_uint32),
    ]


class rknn_perf_detail(ctypes.Structure):
    _fields_ = [("perf_data", ctypes.c_void_p), ("data_len", ctypes.c_uint64)]


class rknn_perf_run(ctypes.Structure):
    _fields_ = [("run_duration", ctypes.c_int64)]


class rknn_sdk_version(ctypes.Structure):
    _fields_ = [("api_version", ctypes.c_char * 256), ("drv_version", ctypes.c_char * 256)]


class rknn_mem_size(ctypes.Structure):
    _fields_ = [
        ("total_weight_size", ctypes.c_uint32),
        ("total_internal_size", ctypes.c_uint32),
        ("total_dma_allocated_size", ctypes.c_uint64),
        ("total_sram_size", ctypes.c_uint32),
        ("free_sram_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32 * 10),
    ]


class rknn_custom_string(ctypes.Structure):
    _fields_ = [("string", ctypes.c_char * 1024)]


class rknn_input_range(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_uint32),
        ("shape_number", ctypes.c_uint32),
        ("fmt", ctypes.c_int),
        ("name", ctypes.c_char * RKNN_MAX_NAME_LEN),
        ("dyn_range", (ctypes.c_uint32 * RKNN_MAX_DIMS) * RKNN_MAX_DYNAMIC_SHAPE_NUM),
        ("n_dims", ctypes.c_uint32),
    ]


def _check_layouts():
    expected = {rknn_input_output_num: 8, rknn_tensor_attr: 376, rknn_input: 32,
                rknn_output: 24, rknn_perf_detail: 16, rknn_perf_run: 8, rknn_sdk_version: 512,
                rknn_mem_size: 64, rknn_custom_string: 1024,
                rknn_input_range: 12 + RKNN_MAX_NAME_LEN + 4 * RKNN_MAX_DIMS *
                RKNN_MAX_DYNAMIC_SHAPE_NUM + 4}
    for struct, size in expected.items():
        if ctypes.sizeof(struct) != size:
            raise ImportError(f"{struct.__name__} is {ctypes.sizeof(struct)} bytes here, "
                              f"{size} in rknn_api.h (LP64 only)")
    offsets = {(rknn_tensor_attr, "name"): 72, (rknn_tensor_attr, "fmt"): 336,
               (rknn_tensor_attr, "fl"): 348, (rknn_tensor_attr, "zp"): 352,
               (rknn_tensor_attr, "pass_through"): 368, (rknn_tensor_attr, "h_stride"): 372,
               (rknn_input, "buf"): 8, (rknn_input, "pass_through"): 20,
               (rknn_input, "fmt"): 28, (rknn_output, "index"): 4, (rknn_output, "buf"): 8,
               (rknn_output, "size"): 16, (rknn_mem_size, "total_dma_allocated_size"): 8}
    for (struct, field), offset in offsets.items():
        if getattr(struct, field).offset != offset:
            raise ImportError(f"{struct.__name__}.{field} at {getattr(struct, field).offset}, "
                              f"{offset} in rknn_api.h")


_check_layouts()


class RknnError(RuntimeError):
    def __init__(self, function, code, detail=""):
        name = ERROR_NAMES.get(code, "unknown error")
        super().__init__(f"{function} returned {code} ({name}){': ' + detail if detail else ''}")
        self.code = code


def find_library(library=None):
    return locate.find_library(library)


_libraries = {}


def load_library(library=None):
    path = find_library(library)
    if path not in _libraries:
        lib = ctypes.CDLL(path)
        context = ctypes.c_uint64
        lib.rknn_init.argtypes = [ctypes.POINTER(context), ctypes.c_void_p, ctypes.c_uint32,
                                  ctypes.c_uint32, ctypes.c_void_p]
        lib.rknn_destroy.argtypes = [context]
        lib.rknn_query.argtypes = [context, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
        lib.rknn_inputs_set.argtypes = [context, ctypes.c_uint32, ctypes.POINTER(rknn_input)]
        lib.rknn_run.argtypes = [context, ctypes.c_void_p]
        lib.rknn_outputs_get.argtypes = [context, ctypes.c_uint32, ctypes.POINTER(rknn_output),
                                         ctypes.c_void_p]
        lib.rknn_outputs_release.argtypes = [context, ctypes.c_uint32,
                                             ctypes.POINTER(rknn_output)]
        lib.rknn_set_core_mask.argtypes = [context, ctypes.c_int]
        lib.rknn_set_input_shapes.argtypes = [context, ctypes.c_uint32,
                                              ctypes.POINTER(rknn_tensor_attr)]
        for function in ("rknn_init", "rknn_destroy", "rknn_query", "rknn_inputs_set",
                         "rknn_run", "rknn_outputs_get", "rknn_outputs_release",
                         "rknn_set_core_mask", "rknn_set_input_shapes"):
            getattr(lib, function).restype = ctypes.c_int
        _libraries[path] = lib
    return _libraries[path]


class TensorInfo:
    """What RKNN_QUERY_INPUT_ATTR / OUTPUT_ATTR report, as Python values (also what a remote
    device reports, so the API layer treats both alike)."""

    def __init__(self, index=0, name="", dims=(), n_elems=0, size=0, fmt=FORMAT_UNDEFINED,
                 type=FLOAT32, qnt_type=QNT_NONE, zp=0, scale=0.0):
        self.index = index
        self.name = name
        self.dims = list(dims)
        self.n_elems = n_elems
        self.size = size
        self.fmt = fmt
        self.type = type
        self.qnt_type = qnt_type
        self.zp = zp
        self.scale = scale

    @classmethod
    def from_attr(cls, attr: rknn_tensor_attr):
        return cls(index=attr.index, name=attr.name.decode("utf-8", "replace"),
                   dims=[attr.dims[i] for i in range(attr.n_dims)], n_elems=attr.n_elems,
                   size=attr.size, fmt=attr.fmt, type=attr.type, qnt_type=attr.qnt_type,
                   zp=attr.zp, scale=attr.scale)

    @property
    def nchw_shape(self):
        """The shape in ONNX order (the NHWC user layout of 4-D image inputs undone)."""
        if self.fmt == FORMAT_NHWC and len(self.dims) == 4:
            n, h, w, c = self.dims
            return [n, c, h, w]
        return list(self.dims)

    @property
    def is_real(self):
        return self.type in (FLOAT32, FLOAT16, BFLOAT16) or self.qnt_type != QNT_NONE

    @property
    def type_name(self):
        return TYPE_NAMES[self.type] if 0 <= self.type < len(TYPE_NAMES) else str(self.type)

    def __repr__(self):
        fmt_name = FORMAT_NAMES[self.fmt] if 0 <= self.fmt < len(FORMAT_NAMES) else self.fmt
        quant = f" zp={self.zp} scale={self.scale:.6g}" if self.qnt_type else ""
        return f"{self.index}:'{self.name}' {self.dims} {fmt_name} {self.type_name}{quant}"


class InputBuffer:
    """One input ready for rknn_inputs_set: contiguous data with its element type and layout,
    or (pass_through) bytes already in the model's own type and layout."""

    def __init__(self, array: np.ndarray, type: int, fmt: int, pass_through: bool = False):
        self.array = np.ascontiguousarray(array)
        self.type = type
        self.fmt = fmt
        self.pass_through = pass_through


class Runtime:
    """One rknn_context for one model, given as a path or as the file's bytes."""

    def __init__(self, model, library=None, flags=0):
        self.lib = load_library(library)
        self.context = ctypes.c_uint64(0)
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            buffer = ctypes.create_string_buffer(data, len(data))
            size = len(data)
            label = f"model of {size} bytes"
        else:
            buffer = ctypes.create_string_buffer(os.fsencode(str(model)))
            size = 0
            label = str(model)
        code = self.lib.rknn_init(ctypes.byref(self.context), buffer, size, flags, None)
        if code != RKNN_SUCC:
            self.context = None
            raise RknnError("rknn_init", code, label)
        count = rknn_input_output_num()
        self._query(RKNN_QUERY_IN_OUT_NUM, count)
        self.inputs = [self._attr(RKNN_QUERY_INPUT_ATTR, i) for i in range(count.n_input)]
        self.outputs = [self._attr(RKNN_QUERY_OUTPUT_ATTR, i) for i in range(count.n_output)]

    def _call(self, function, code):
        if code != RKNN_SUCC:
            raise RknnError(function, code)

    def _query(self, command, result):
        self._call("rknn_query", self.lib.rknn_query(self.context, command, ctypes.byref(result),
                                                      ctypes.sizeof(result)))
        return result

    def _attr(self, command, index):
        attr = rknn_tensor_attr()
        attr.index = index
        return TensorInfo.from_attr(self._query(command, attr))

    def dynamic_shape_sets(self):
        """The shape sets of a dynamic-shape model (RKNN_QUERY_INPUT_DYNAMIC_RANGE): a list of
        sets, each one dims list per input in attribute order; [] for a static model."""
        per_input = []
        for info in self.inputs:
            shape_range = rknn_input_range()
            shape_range.index = info.index
            code = self.lib.rknn_query(self.context, RKNN_QUERY_INPUT_DYNAMIC_RANGE,
                                       ctypes.byref(shape_range), ctypes.sizeof(shape_range))
            if code != RKNN_SUCC:
                return []  # a static model
            per_input.append([[shape_range.dyn_range[s][d] for d in range(shape_range.n_dims)]
                              for s in range(shape_range.shape_number)])
        count = min((len(shapes) for shapes in per_input), default=0)
        return [[shapes[s] for shapes in per_input] for s in range(count)]

    def set_input_shapes(self, shape_set):
        """Selects one shape set (dims per input, in attribute order) and reads the current
        input and output attributes back."""
        attrs = (rknn_tensor_attr * len(self.inputs))()
        for i, (info, dims) in enumerate(zip(self.inputs, shape_set)):
            attrs[i].index = info.index
            attrs[i].name = info.name.encode()
            attrs[i].n_dims = len(dims)
            for d, value in enumerate(dims):
                attrs[i].dims[d] = value
            attrs[i].fmt = info.fmt
            attrs[i].type = info.type
        self._call("rknn_set_input_shapes",
                   self.lib.rknn_set_input_shapes(self.context, len(self.inputs), attrs))
        self.inputs = [self._attr(RKNN_QUERY_CURRENT_INPUT_ATTR, i)
                       for i in range(len(self.inputs))]
        self.outputs = [self._attr(RKNN_QUERY_CURRENT_OUTPUT_ATTR, i)
                        for i in range(len(self.outputs))]

    def set_core_mask(self, core_mask):
        self._call("rknn_set_core_mask", self.lib.rknn_set_core_mask(self.context, core_mask))

    def set_buffers(self, buffers):
        """Sets every input from InputBuffers (the runtime converts type and layout)."""
        if len(buffers) != len(self.inputs):
            raise ValueError(f"{len(buffers)} inputs given, the model has {len(self.inputs)}")
        inputs = (rknn_input * len(buffers))()
        for i, buffer in enumerate(buffers):
            inputs[i].index = i
            inputs[i].buf = buffer.array.ctypes.data
            inputs[i].size = buffer.array.nbytes
            inputs[i].pass_through = 1 if buffer.pass_through else 0
            inputs[i].type = buffer.type
            inputs[i].fmt = buffer.fmt
        self._call("rknn_inputs_set", self.lib.rknn_inputs_set(self.context, len(buffers), inputs))

    def set_inputs(self, arrays, layout="model"):
        """Sets every input. `arrays` are in ONNX order and layout (NCHW for images). With
        layout "model", 4-D inputs the model presents as NHWC are transposed here and passed
        as NHWC, as an application would; with "nchw" they are passed as NCHW (fmt
        RKNN_TENSOR_NCHW) and the runtime reorders them. Real-valued inputs are passed as
        FLOAT32 (the runtime converts and quantizes); integer inputs in the model's type."""
        if layout not in ("model", "nchw"):
            raise ValueError(f"layout {layout!r}")
        if len(arrays) != len(self.inputs):
            raise ValueError(f"{len(arrays)} arrays for {len(self.inputs)} model inputs")
        buffers = []
        for i, (info, array) in enumerate(zip(self.inputs, arrays)):
            array = np.asarray(array)
            if list(array.shape) != info.nchw_shape:
                raise ValueError(f"input {i} ('{info.name}'): shape {list(array.shape)}, model "
                                 f"wants {info.nchw_shape} (NCHW order)")
            fmt = info.fmt
            if info.fmt == FORMAT_NHWC and array.ndim == 4:
                if layout == "model":
                    array = array.transpose(0, 2, 3, 1)
                else:
                    fmt = FORMAT_NCHW
            if info.is_real:
                buffers.append(InputBuffer(array.astype(np.float32, copy=False), FLOAT32, fmt))
            else:
                dtype = NUMPY_OF_TYPE.get(info.type)
                if dtype is None:
                    raise ValueError(f"input {i}: model type {info.type} has no numpy type")
                buffers.append(InputBuffer(array.astype(dtype, copy=False), info.type, fmt))
        self.set_buffers(buffers)

    def run_only(self):
        self._call("rknn_run", self.lib.rknn_run(self.context, None))

    def get_outputs(self):
        """Every output as a numpy array in the model's (ONNX) shape: real-valued outputs as
        float32 (want_float), integer outputs in their own type."""
        count = len(self.outputs)
        outputs = (rknn_output * count)()
        for i, info in enumerate(self.outputs):
            outputs[i].index = i
            outputs[i].want_float = 1 if info.is_real else 0
            outputs[i].is_prealloc = 0
        self._call("rknn_outputs_get",
                   self.lib.rknn_outputs_get(self.context, count, outputs, None))
        try:
            results = []
            for i, info in enumerate(self.outputs):
                dtype = np.float32 if info.is_real else NUMPY_OF_TYPE[info.type]
                expected = int(np.prod(info.dims, dtype=np.int64)) * np.dtype(dtype).itemsize
                if outputs[i].size < expected:
                    raise RknnError("rknn_outputs_get", -9,
                                    f"output {i}: {outputs[i].size} bytes, expected {expected}")
                raw = ctypes.string_at(outputs[i].buf, expected)
                array = np.frombuffer(raw, dtype=dtype).reshape(info.dims).copy()
                if info.fmt == FORMAT_NHWC and array.ndim == 4:
                    array = array.transpose(0, 3, 1, 2).copy()
                results.append(array)
            return results
        finally:
            self.lib.rknn_outputs_release(self.context, count, outputs)

    def run(self, arrays, layout="model"):
        self.set_inputs(arrays, layout)
        self.run_only()
        return self.get_outputs()

    def last_run_microseconds(self):
        return int(self._query(RKNN_QUERY_PERF_RUN, rknn_perf_run()).run_duration)

    def performance_detail(self):
        """The per-layer table of the last run (filled when the context was created with
        FLAG_COLLECT_PERF_MASK)."""
        detail = self._query(RKNN_QUERY_PERF_DETAIL, rknn_perf_detail())
        if not detail.perf_data or detail.data_len == 0:
            return ""
        return ctypes.string_at(detail.perf_data, detail.data_len).decode("utf-8", "replace")

    def sdk_version(self):
        version = self._query(RKNN_QUERY_SDK_VERSION, rknn_sdk_version())
        return (version.api_version.decode("utf-8", "replace"),
                version.drv_version.decode("utf-8", "replace"))

    def memory_size(self):
        """(weight bytes, internal bytes, all memory the context holds)."""
        memory = self._query(RKNN_QUERY_MEM_SIZE, rknn_mem_size())
        return (int(memory.total_weight_size), int(memory.total_internal_size),
                int(memory.total_dma_allocated_size))

    def custom_string(self):
        return self._query(RKNN_QUERY_CUSTOM_STRING,
                           rknn_custom_string()).string.decode("utf-8", "replace")

    def close(self):
        if self.context is not None:
            self.lib.rknn_destroy(self.context)
            self.context = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def main(argv=None):
    """`python -m openrknn.native MODEL.rknn [input.npy ...]`: prints the model's inputs and
    outputs and, given inputs (NCHW .npy) or not (zeros), runs it once and prints output
    statistics."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("model")
    parser.add_argument("inputs", nargs="*")
    parser.add_argument("--library")
    args = parser.parse_args(argv)
    with Runtime(args.model, args.library) as model:
        for info in model.inputs:
            print(f"input  {info}")
        for info in model.outputs:
            print(f"output {info}")
        if args.inputs:
            arrays = [np.load(path) for path in args.inputs]
        else:
            arrays = [np.zeros(info.nchw_shape, NUMPY_OF_TYPE.get(info.type, np.float32))
                      for info in model.inputs]
        for i, out in enumerate(model.run(arrays)):
            values = out.astype(np.float64)
            print(f"result {i}: shape {list(out.shape)} {out.dtype} min {values.min():.6g} "
                  f"max {values.max():.6g} mean {values.mean():.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
