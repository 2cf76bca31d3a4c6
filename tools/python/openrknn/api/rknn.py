"""openrknn.api.RKNN: the RKNN-Toolkit2 host API (config, load_onnx, build, export_rknn,
load_rknn, hybrid quantization, accuracy_analysis, init_runtime, inference, eval_perf,
eval_memory, get_sdk_version, list_devices, release).

Conversion runs the C++ `rknn-convert`; init_runtime() runs the model locally in librknnrt
(the simulator), init_runtime(target=...) on a board through rknn_server. Every call returns
0 / -1 (or the data, or None) and logs `E <call>: <reason>` on failure, as the toolkit does.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from .. import convert, devices, hybrid, native, report
from ..runtime.backend import BackendError
from ..runtime.remote import create_remote_backend
from . import config_options, device_analysis
from .calls import ApiError, api_method, describe, require, require_bool
from .constants import NPU_CORE_AUTO, RUNTIME_TARGETS
from .runtime_api import RuntimeApi
from .session import RuntimeSession, runtime_options

_HYBRID_MODEL_FORMAT = "openrknn-hybrid-model"
_HYBRID_DATA_FORMAT = "openrknn-hybrid-data"

def _existing_file(path, what):
    require(isinstance(path, (str, os.PathLike)),
            f"{what} must be a file name, got {describe(path)}")
    require(Path(path).is_file(), f"{what} '{path}' does not exist")
    return convert.absolute(path)


class RKNN(RuntimeApi):
    """The toolkit's RKNN object: create it, call its methods, release() it."""

    def __init__(self, verbose=False, verbose_file=None):
        super().__init__(verbose, verbose_file)
        self._config = {}
        self._config_error = None
        self._onnx = None  # load_onnx's options
        self._build_options = None  # build's options, kept for accuracy_analysis
        self._converter = None  # rknn-convert path; None: openrknn.locate decides
        self._log.info("RKNN", "openrknn: RKNN-Toolkit2 compatible API")

    # -- conversion ----------------------------------------------------------------------------

    @api_method(failure=-1)
    def config(self, mean_values=None, std_values=None, quant_img_RGB2BGR=False,
               quantized_dtype="w8a8", quantized_algorithm="normal", quantized_method="channel",
               float_dtype="float16", optimization_level=3, target_platform=None,
               custom_string=None, remove_weight=False, compress_weight=False,
               inputs_yuv_fmt=None, single_core_mode=False, dynamic_input=None,
               model_pruning=False, op_target=None, quantize_weight=False, remove_reshape=False,
               sparse_infer=False, enable_flash_attention=False):
        """Conversion settings, by the toolkit's names. 0 / -1 (a failed config also makes the
        next build fail, naming the reason)."""
        self._config = {}
        self._config_error = "config() failed (see its error above)"
        arguments = dict(locals())
        arguments.pop("self")
        self._config = config_options.validate(arguments)
        self._config_error = None
        return 0

    @api_method(failure=-1)
    def load_onnx(self, model, inputs=None, input_size_list=None, input_initial_val=None,
                  outputs=None):
        """Takes an ONNX model for build(). 0 / -1."""
        path = _existing_file(model, "the model file")
        require(inputs is None or input_size_list is not None,
                "inputs is set, so input_size_list must be set too (one shape per input)")
        if inputs is not None:
            require(isinstance(inputs, (list, tuple)) and all(isinstance(i, str) for i in inputs),
                    f"inputs must be a list of tensor names, got {describe(inputs)}")
            require(isinstance(input_size_list, (list, tuple)) and
                    len(input_size_list) == len(inputs),
                    f"input_size_list must hold one shape per input ({len(inputs)}), "
                    f"got {describe(input_size_list)}")
        require(input_initial_val is None,
                "input_initial_val (freezing inputs to constants) is not supported")
        if outputs is not None:
            require(isinstance(outputs, (list, tuple)) and all(isinstance(o, str) for o in outputs),
                    f"outputs must be a list of tensor names, got {describe(outputs)}")
        self._check_onnx_file(path)
        self._onnx = {"model": path, "inputs": inputs, "input_size_list": input_size_list,
                      "outputs": outputs}
        self._build_options = None
        return 0

    def _check_onnx_file(self, path):
        """Catches a file that is not ONNX at load_onnx, as the toolkit does, when the onnx
        package is installed (the converter checks everything else at build)."""
        try:
            import onnx
        except ImportError:
            return
        try:
            onnx.load(path, load_external_data=False)
        except Exception as error:  # noqa: BLE001 - any parse failure means "not ONNX"
            raise ApiError(f"'{path}' is not a valid ONNX model: {error}") from None

    def _unsupported_loader(self, name):
        raise ApiError(f"{name} is not supported: openrknn converts ONNX models; export the model "
                       "to ONNX and use load_onnx")

    @api_method(failure=-1)
    def load_pytorch(self, model, input_size_list=None):
        self._unsupported_loader("load_pytorch")

    @api_method(failure=-1)
    def load_tensorflow(self, tf_pb, inputs=None, input_size_list=None, outputs=None,
                        input_is_nchw=False):
        self._unsupported_loader("load_tensorflow")

    @api_method(failure=-1)
    def load_tflite(self, model, input_is_nchw=False):
        self._unsupported_loader("load_tflite")

    @api_method(failure=-1)
    def load_caffe(self, model, blobs=None, input_name=None):
        self._unsupported_loader("load_caffe")

    @api_method(failure=-1)
    def load_darknet(self, model, weight):
        self._unsupported_loader("load_darknet")

    def _conversion_options(self):
        require(self._config_error is None, self._config_error or "")
        require(self._onnx is not None, "no model: call load_onnx() first")
        return {**self._config, **self._onnx}

    def _convert_to_bytes(self, options, where):
        with tempfile.TemporaryDirectory(prefix="openrknn-build-") as directory:
            output = Path(directory) / "model.rknn"
            convert.run(None, {**options, "export_path": str(output)}, self._log, where,
                        self._converter)
            return output.read_bytes()

    @api_method(failure=-1)
    def build(self, do_quantization=True, dataset=None, rknn_batch_size=None):
        """Converts the loaded ONNX model (int8 with a calibration dataset, or float). 0 / -1."""
        options = self._conversion_options()
        do_quantization = require_bool(do_quantization, "do_quantization")
        if dataset is not None:
            dataset = _existing_file(dataset, "the dataset file")
        require(not do_quantization or dataset is not None,
                "do_quantization=True needs a dataset (a .txt file, one sample per line)")
        if rknn_batch_size is not None:
            require(isinstance(rknn_batch_size, int) and rknn_batch_size >= 1,
                    "rknn_batch_size must be an integer >= 1, got "
                    + describe(rknn_batch_size))
        build_options = {"do_quantization": do_quantization, "dataset": dataset,
                         "rknn_batch_size": rknn_batch_size}
        data = self._convert_to_bytes({**options, **build_options}, "build")
        self._set_model(data, "build")
        self._build_options = build_options
        return 0

    @api_method(failure=-1)
    def export_rknn(self, export_path):
        """Writes the built model to a .rknn file. 0 / -1."""
        require(self._model is not None, "no model to export: call build() first")
        require(isinstance(export_path, (str, os.PathLike)),
                f"export_path must be a file name, got {describe(export_path)}")
        target = Path(export_path)
        require(target.parent.is_dir() or str(target.parent) == "",
                f"the directory of export_path '{export_path}' does not exist")
        temporary = target.with_name(f"{target.name}.tmp.{os.getpid()}")
        try:
            temporary.write_bytes(self._model)
            os.replace(temporary, target)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise ApiError(f"cannot write '{export_path}': {error}") from None
        return 0

    # -- hybrid quantization -------------------------------------------------------------------

    @api_method(failure=-1)
    def hybrid_quantization_step1(self, dataset=None, rknn_batch_size=None, proposal=False,
                                  proposal_dataset_size=1, custom_hybrid=None):
        """Writes {model}.model, {model}.data and {model}.quantization.cfg in the working
        directory; edit the .cfg (custom_quantize_layers: tensor: float16), then call step 2.
        custom_hybrid=[[start, end], ...] lists the nodes between those tensors there."""
        options = self._conversion_options()
        require(dataset is not None, "dataset is required (a .txt file, one sample per line)")
        dataset = _existing_file(dataset, "the dataset file")
        require(not require_bool(proposal, "proposal"),
                "proposal=True is not supported: run accuracy_analysis and list the layers "
                "with a low cosine in custom_quantize_layers of the .quantization.cfg")
        float_tensors = None
        if custom_hybrid is not None:
            float_tensors = hybrid.subgraph_tensors(self._onnx["model"], custom_hybrid)
        if rknn_batch_size is not None:
            require(isinstance(rknn_batch_size, int) and rknn_batch_size >= 1,
                    "rknn_batch_size must be an integer >= 1, got "
                    + describe(rknn_batch_size))
        name = Path(self._onnx["model"]).stem
        cfg_path = Path(f"{name}.quantization.cfg").resolve()
        convert.run("hybrid-step1", {**options, "dataset": dataset, "do_quantization": True,
                                     "rknn_batch_size": rknn_batch_size,
                                     "export_path": str(cfg_path)},
                    self._log, "hybrid_quantization_step1", self._converter)
        if float_tensors is not None:
            text, chosen = hybrid.apply_float16_subgraphs(cfg_path.read_text(), float_tensors)
            cfg_path.write_text(text)
            self._log.info("hybrid_quantization_step1",
                           "custom_hybrid: float16 layers " + ", ".join(chosen))
        # The .model / .data pair records what step 2 needs to rebuild the model (the ONNX
        # file and the settings; the weights stay in the ONNX file).
        Path(f"{name}.model").write_text(json.dumps(
            {"format": _HYBRID_MODEL_FORMAT, "version": 1, "load_onnx": self._onnx,
             "config": self._config}, indent=1))
        Path(f"{name}.data").write_text(json.dumps(
            {"format": _HYBRID_DATA_FORMAT, "version": 1, "dataset": dataset,
             "rknn_batch_size": rknn_batch_size}, indent=1))
        self._log.info("hybrid_quantization_step1",
                       f"wrote {name}.model, {name}.data and {cfg_path.name}")
        return 0

    @staticmethod
    def _read_hybrid_file(path, expected_format, what, keys):
        try:
            document = json.loads(Path(path).read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            document = None
        require(isinstance(document, dict) and document.get("format") == expected_format,
                f"{what} '{path}' is not a file written by openrknn's "
                "hybrid_quantization_step1")
        require(document.get("version") == 1,
                f"{what} '{path}' has version {document.get('version')!r}; this package reads 1")
        missing = [key for key in keys if key not in document]
        require(not missing, f"{what} '{path}' lacks {', '.join(missing)}")
        return document

    @api_method(failure=-1)
    def hybrid_quantization_step2(self, model_input, data_input, model_quantization_cfg):
        """Builds the hybrid model from step 1's files (after editing the .cfg). 0 / -1."""
        model_input = _existing_file(model_input, "model_input")
        data_input = _existing_file(data_input, "data_input")
        cfg = _existing_file(model_quantization_cfg, "model_quantization_cfg")
        model_document = self._read_hybrid_file(model_input, _HYBRID_MODEL_FORMAT, "model_input",
                                                ("load_onnx", "config"))
        data_document = self._read_hybrid_file(data_input, _HYBRID_DATA_FORMAT, "data_input",
                                               ("dataset", "rknn_batch_size"))
        self._onnx = model_document["load_onnx"]
        self._config = model_document["config"]
        self._config_error = None
        build_options = {"do_quantization": True, "dataset": data_document["dataset"],
                         "rknn_batch_size": data_document["rknn_batch_size"],
                         "quantization_config": cfg}
        data = self._convert_to_bytes({**self._config, **self._onnx, **build_options},
                                      "hybrid_quantization_step2")
        self._set_model(data, "hybrid_quantization_step2")
        self._build_options = build_options
        return 0

    # -- accuracy analysis ---------------------------------------------------------------------

    @api_method(failure=-1)
    def accuracy_analysis(self, inputs, output_dir="./snapshot", target=None, device_id=None):
        """Per-layer comparison of the quantized model with the float model on one sample
        (`inputs`: one file per model input, .jpg/.png/.bmp/.npy; NHWC for 4-D .npy). Writes
        output_dir/golden/ (float), simulator/ (quantized) and error_analysis.txt; with a
        target also runtime/ (the device's outputs) and their cosine with the simulator."""
        require(self._model_origin in ("build", "hybrid_quantization_step2"),
                "accuracy_analysis needs a model from build() or hybrid_quantization_step2() "
                "(a model from load_rknn cannot be analysed)")
        if isinstance(inputs, (str, os.PathLike)):
            inputs = [inputs]
        require(isinstance(inputs, (list, tuple)) and inputs,
                "inputs must be a list of files (one per model input), got " + describe(inputs))
        files = [_existing_file(path, "the input file") for path in inputs]
        require(isinstance(output_dir, (str, os.PathLike)),
                f"output_dir must be a directory name, got {describe(output_dir)}")
        backend = None
        if target is not None:
            options = runtime_options(target, device_id, False, False, NPU_CORE_AUTO, "cpu")
            require(all(f.endswith(".npy") for f in files),
                    "with a target, give the inputs as .npy files (NHWC for images)")
            try:
                backend = create_remote_backend(options.target, options.device_id)
            except BackendError as error:
                raise ApiError(str(error)) from None
        try:
            out = Path(output_dir).resolve()
            convert.run("accuracy-analysis",
                        {**self._conversion_options(), **self._build_options,
                         "analysis_inputs": files, "output_dir": str(out)},
                        self._log, "accuracy_analysis", self._converter)
            # The toolkit calls the quantized model's dumps simulator/.
            if (out / "quantized").is_dir():
                shutil.rmtree(out / "simulator", ignore_errors=True)
                os.replace(out / "quantized", out / "simulator")
                analysis = out / "error_analysis.txt"
                if analysis.is_file():
                    analysis.write_text(analysis.read_text().replace("quantized/", "simulator/"))
            if backend is not None:
                try:
                    session = RuntimeSession(backend, self._model, options)
                    device_analysis.compare_outputs(session, files, out)
                except (BackendError, native.RknnError, ValueError) as error:
                    raise ApiError(f"on {backend.description}: {error}") from None
        finally:
            if backend is not None:
                backend.close()
        return 0

    # -- runtime -------------------------------------------------------------------------------

    @api_method(failure=-1)
    def init_runtime(self, target=None, device_id=None, perf_debug=False, eval_mem=False,
                     async_mode=False, core_mask=NPU_CORE_AUTO, fallback_prior_device="cpu"):
        """target=None: run in the local librknnrt (the simulator); target='rk3588' etc.: on
        the board `device_id` through rknn_server. 0 / -1."""
        options = runtime_options(target, device_id, perf_debug, eval_mem, core_mask,
                                  fallback_prior_device)
        if require_bool(async_mode, "async_mode"):
            self._log.warning("init_runtime", "async_mode is not supported; running synchronously")
        self._start_runtime(options)
        return 0

    @api_method(failure=None)
    def inference(self, inputs=None, data_format=None, inputs_pass_through=None):
        """Runs the model; returns the outputs as a list of numpy arrays (None on failure).
        4-D inputs are NHWC unless data_format says 'nchw' (one value, or one per input)."""
        require(inputs is not None, "inputs is required: a list of numpy arrays")
        return self._run_inference(inputs, data_format, inputs_pass_through)

    @api_method(failure=None)
    def eval_perf(self, is_print=True, fix_freq=True, inputs=None):
        """Runs the model once more and returns the performance text (per-layer times with
        init_runtime(perf_debug=True)). `inputs` (Toolkit 1.x) runs those instead of the last
        inference's inputs."""
        is_print = require_bool(is_print, "is_print")
        fix_freq = require_bool(fix_freq, "fix_freq")  # pinned by a board's daemon, for the run
        session = self._running()
        if inputs is not None:
            self._run_inference(inputs, None, None)
        try:
            text, clock_note = session.eval_perf(fix_freq)
        except (BackendError, ValueError) as error:
            raise ApiError(str(error)) from None
        if clock_note:
            self._log.warning("eval_perf", clock_note)
        if is_print:
            print(text, end="")
        return text

    @api_method(failure=None)
    def eval_memory(self, is_print=True):
        """Returns {'weight_memory', 'internal_memory', 'other_memory', 'total_memory'} in
        bytes and prints the "Memory Profile Info Dump". Needs init_runtime(eval_mem=True)."""
        is_print = require_bool(is_print, "is_print")
        session = self._running()
        require(session.options.eval_mem,
                "memory evaluation is off: call init_runtime(..., eval_mem=True) first")
        try:
            detail, text = session.eval_memory()
        except BackendError as error:
            raise ApiError(str(error)) from None
        if is_print:
            print(text, end="")
        return detail

    @api_method(failure=None)
    def list_devices(self):
        """Prints and returns (adb_devices, ntb_devices); NTB is not supported (always [])."""
        try:
            adb = devices.adb_devices()
        except devices.DeviceListError as error:
            raise ApiError(str(error)) from None
        print(report.device_list_text(adb), end="")
        return adb, []

    # -- toolkit calls without an implementation here --------------------------------------------

    @api_method(failure=-1)
    def export_encrypted_rknn_model(self, input_model, output_model=None, crypt_level=1):
        raise ApiError("encrypted models are not supported by the openrknn runtime")

    @api_method(failure=-1)
    def codegen(self, output_path, inputs=None, overwrite=False):
        raise ApiError("codegen is not supported; see samples/ for C programs to start from")

    @api_method(failure=-1)
    def reg_custom_op(self, custom_op):
        raise ApiError("custom operators are not supported by the converter")


__all__ = ["RKNN", "RUNTIME_TARGETS"]
