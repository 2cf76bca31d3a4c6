"""init_runtime(target=None): the model runs in this process, in our librknnrt (ctypes)."""

from __future__ import annotations

from .. import locate, native
from .backend import BackendError, MemoryFigures, RuntimeBackend, RuntimeOptions


class LocalBackend(RuntimeBackend):
    def __init__(self, library=None):
        self._library = library
        self._runtime = None
        self.description = "simulator (librknnrt on this host)"

    def load(self, model, options: RuntimeOptions):
        try:
            path = locate.find_library(self._library)
        except locate.NotFound as error:
            raise BackendError(str(error)) from None
        flags = 0
        if options.perf_debug:
            flags |= native.FLAG_COLLECT_PERF_MASK
        if options.fallback_prior_device == "gpu":
            flags |= native.FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU
        try:
            self._runtime = native.Runtime(model, path, flags)
        except OSError as error:
            raise BackendError(f"cannot load {path}: {error}") from None
        self.description = f"simulator (librknnrt on this host: {path})"
        if options.core_mask != 0:
            self._runtime.set_core_mask(options.core_mask)

    def _loaded(self):
        if self._runtime is None:
            raise BackendError("no model is loaded")
        return self._runtime

    def input_attributes(self):
        return self._loaded().inputs

    def output_attributes(self):
        return self._loaded().outputs

    def dynamic_shape_sets(self):
        return self._loaded().dynamic_shape_sets()

    def set_input_shapes(self, shape_set):
        self._loaded().set_input_shapes(shape_set)

    def run(self, inputs):
        runtime = self._loaded()
        runtime.set_buffers(inputs)
        runtime.run_only()
        return runtime.get_outputs()

    def last_run_microseconds(self):
        return self._loaded().last_run_microseconds()

    def performance_detail(self):
        return self._loaded().performance_detail()

    def memory(self):
        weight, internal, total = self._loaded().memory_size()
        return MemoryFigures(weight, internal, total)

    def versions(self):
        api, driver = self._loaded().sdk_version()
        return [("rknnrt", api), ("driver", driver)]

    def close(self):
        if self._runtime is not None:
            self._runtime.close()
            self._runtime = None
