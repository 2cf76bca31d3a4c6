"""The calls RKNN and RKNNLite share: load a .rknn file, start a runtime, run, query, release."""

from __future__ import annotations

from pathlib import Path

from .. import native
from ..log import Logger
from ..runtime import create_backend
from ..runtime.backend import BackendError
from .calls import ApiError, api_method, describe, require, require_bool
from .constants import CoreMaskConstants
from .session import RuntimeSession, runtime_options


class RuntimeApi(CoreMaskConstants):
    def __init__(self, verbose=False, verbose_file=None):
        self._log = Logger(verbose, verbose_file)
        self._model = None  # the .rknn bytes, from load_rknn or a build
        self._model_origin = None  # "load_rknn", "build" or "hybrid_quantization_step2"
        self._session = None
        self._library = None  # librknnrt path; None: openrknn.locate decides

    # -- helpers -------------------------------------------------------------------------------

    def _running(self):
        require(self._session is not None,
                "the runtime is not initialised: call init_runtime() first")
        return self._session

    def _set_model(self, data, origin):
        self._close_session()
        self._model = data
        self._model_origin = origin

    def _close_session(self):
        if self._session is not None:
            session, self._session = self._session, None
            session.close()

    def _start_runtime(self, options):
        require(self._model is not None,
                "the model is not loaded yet: call load_rknn() or build() before init_runtime()")
        self._close_session()
        try:
            backend = create_backend(options, self._library)
        except BackendError as error:
            raise ApiError(str(error)) from None
        try:
            self._session = RuntimeSession(backend, self._model, options)
        except (BackendError, native.RknnError) as error:
            backend.close()
            raise ApiError(f"cannot start the runtime on {backend.description}: {error}") from None
        self._log.info("init_runtime", f"model runs on {backend.description}")

    def _run_inference(self, inputs, data_format, inputs_pass_through):
        session = self._running()
        try:
            return session.inference(inputs, data_format, inputs_pass_through)
        except (BackendError, native.RknnError, ValueError) as error:
            raise ApiError(str(error)) from None

    # -- shared API ----------------------------------------------------------------------------

    @api_method(failure=-1)
    def load_rknn(self, path):
        """Loads a .rknn file (written by export_rknn or rknn-convert). 0 / -1."""
        require(isinstance(path, (str, Path)),
                f"path must be a file name, got {describe(path)}")
        file = Path(path)
        require(file.is_file(), f"the model file '{path}' does not exist")
        data = file.read_bytes()
        require(len(data) > 0, f"the model file '{path}' is empty")
        self._set_model(data, "load_rknn")
        return 0

    @api_method(failure=None)
    def get_sdk_version(self):
        """The "RKNN VERSION" text: this package, and the runtime (and daemon) versions."""
        return self._running().sdk_version()

    @api_method(failure=-1)
    def release(self):
        """Releases the runtime and the model. 0."""
        self._close_session()
        self._model = None
        self._model_origin = None
        return 0


def core_mask_options(core_mask, perf_debug=False):
    """init_runtime options of the local runtime (RKNNLite: always this process's librknnrt)."""
    return runtime_options(None, None, require_bool(perf_debug, "perf_debug"), False, core_mask,
                           "cpu")
