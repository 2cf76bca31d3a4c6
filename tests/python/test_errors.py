"""Wrong arguments and wrong call orders: the toolkit's kind of message (`E <call>: <reason>`),
-1 (None where the call returns data), and never a Python traceback."""

from __future__ import annotations

import numpy as np
import pytest

import models
from openrknn.api import RKNN, RKNNLite


def expect_failure(capsys, result, expected, call, *fragments):
    captured = capsys.readouterr()
    log = captured.err + captured.out
    assert result == expected if expected is not None else result is None, log
    assert "Traceback" not in log, log
    lines = [line for line in log.splitlines() if line.startswith(f"E {call}: ")]
    assert lines, f"no 'E {call}:' line in:\n{log}"
    for fragment in fragments:
        assert fragment in log, f"{fragment!r} not in:\n{log}"


@pytest.fixture
def running(native_paths, int8_rknn):
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime() == 0
    yield rknn
    rknn.release()


CONVERSION_CASES = [
    ("config", dict(mean_values="128"), "mean_values"),
    ("config", dict(std_values=[[1, 0, 1]]), "std_values must not contain 0"),
    ("config", dict(mean_values=[[1, float("nan"), 3]]), "list of finite numbers per input"),
    ("config", dict(target_platform="rk9999"), "target_platform 'rk9999'"),
    ("config", dict(quantized_algorithm="best"), "quantized_algorithm"),
    ("config", dict(optimization_level=7), "optimization_level 7"),
    ("config", dict(compress_weight=True), "compress_weight=True is not supported"),
    ("config", dict(mean_vaules=[[1, 2, 3]]), "unexpected keyword argument 'mean_vaules'"),
    ("load_onnx", dict(model="/nonexistent/model.onnx"), "does not exist"),
    ("load_onnx", dict(), "missing a required argument: 'model'"),
    ("load_pytorch", dict(model="x.pt", input_size_list=[[1, 3, 8, 8]]), "export the model"),
    ("build", dict(), "call load_onnx() first"),
    ("export_rknn", dict(export_path="x.rknn"), "call build() first"),
    ("load_rknn", dict(path="/nonexistent.rknn"), "does not exist"),
    ("init_runtime", dict(), "call load_rknn() or build()"),
    ("hybrid_quantization_step2", dict(model_input="a.model", data_input="a.data",
                                       model_quantization_cfg="a.cfg"), "does not exist"),
]


@pytest.mark.parametrize("call,arguments,fragment", CONVERSION_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVERSION_CASES)])
def test_conversion_call_errors(capsys, call, arguments, fragment):
    rknn = RKNN()
    result = getattr(rknn, call)(**arguments)
    expect_failure(capsys, result, -1, call, fragment)


def test_config_accepts_numpy_values_and_messages_stay_short(capsys):
    rknn = RKNN()
    assert rknn.config(mean_values=np.array([[1.0, 2.0, 3.0]]),
                       std_values=[np.float32(2), np.float32(2), np.float32(2)]) == 0
    assert rknn.config(target_platform=np.zeros((64, 64))) == -1
    log = capsys.readouterr().err
    assert log.count("\n") == 1 and "an array of shape [64, 64] float64" in log


def test_positional_garbage_never_raises(capsys):
    rknn = RKNN()
    expect_failure(capsys, rknn.load_onnx(12345), -1, "load_onnx", "must be a file name")
    expect_failure(capsys, rknn.export_rknn(None), -1, "export_rknn", "call build() first")


def test_build_errors(native_paths, classifier_onnx, calibration, workdir, capsys):
    rknn = RKNN()
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    expect_failure(capsys, rknn.build(do_quantization=True), -1, "build", "needs a dataset")
    expect_failure(capsys, rknn.build(dataset="/nonexistent.txt"), -1, "build", "does not exist")
    expect_failure(capsys, rknn.build(dataset=str(calibration), rknn_batch_size=0), -1, "build",
                   "rknn_batch_size")
    # A dataset the converter rejects: its message, naming the file and line, comes through.
    bad = workdir / "bad_dataset.txt"
    bad.write_text("missing_sample.npy\n")
    expect_failure(capsys, rknn.build(dataset=str(bad)), -1, "build", "missing_sample.npy")
    # A failed config makes the next build fail with the reason.
    assert rknn.config(quantized_method="tensor") == -1
    capsys.readouterr()
    expect_failure(capsys, rknn.build(dataset=str(calibration)), -1, "build", "config() failed")


@pytest.mark.parametrize("custom_hybrid,fragment", [
    ("r1", "custom_hybrid must be a list"),
    ([["r1"]], "is not [input_name, output_name]"),
    ([["nowhere", "r2"]], "no node reads tensor 'nowhere'"),
    ([["r1", "nowhere"]], "no node writes tensor 'nowhere'"),
    ([["r2", "r1"]], "tensor 'r1' does not depend on 'r2'"),
])
def test_custom_hybrid_errors(native_paths, classifier_onnx, calibration, tmp_path, monkeypatch,
                              capsys, custom_hybrid, fragment):
    monkeypatch.chdir(tmp_path)
    rknn = RKNN()
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    result = rknn.hybrid_quantization_step1(dataset=str(calibration), custom_hybrid=custom_hybrid)
    expect_failure(capsys, result, -1, "hybrid_quantization_step1", fragment)
    assert not list(tmp_path.iterdir())  # nothing written


def test_hybrid_step2_refuses_foreign_files(tmp_path, capsys):
    model, data, cfg = (tmp_path / name for name in ("m.model", "m.data", "m.cfg"))
    model.write_bytes(b"\x08\x01vendor model")
    data.write_text("{}")
    cfg.write_text("custom_quantize_layers: {}\n")
    expect_failure(capsys, RKNN().hybrid_quantization_step2(str(model), str(data), str(cfg)), -1,
                   "hybrid_quantization_step2", "is not a file written by openrknn's")
    model.write_text('{"format": "openrknn-hybrid-model", "version": 1, "config": {}}')
    expect_failure(capsys, RKNN().hybrid_quantization_step2(str(model), str(data), str(cfg)), -1,
                   "hybrid_quantization_step2", "lacks load_onnx")
    model.write_text('{"format": "openrknn-hybrid-model", "version": 2}')
    expect_failure(capsys, RKNN().hybrid_quantization_step2(str(model), str(data), str(cfg)), -1,
                   "hybrid_quantization_step2", "has version 2; this package reads 1")


def test_not_onnx(native_paths, workdir, capsys):
    garbage = workdir / "garbage.onnx"
    garbage.write_bytes(b"\x00\xffnot a model" * 10)
    expect_failure(capsys, RKNN().load_onnx(str(garbage)), -1, "load_onnx",
                   "is not a valid ONNX model")


def test_not_an_rknn_file(native_paths, workdir, capsys):
    bogus = workdir / "bogus.rknn"
    bogus.write_bytes(b"RKNN" + bytes(200))
    rknn = RKNN()
    assert rknn.load_rknn(str(bogus)) == 0
    expect_failure(capsys, rknn.init_runtime(), -1, "init_runtime", "rknn_init")


RUNTIME_CASES = [
    ("init_runtime", dict(target="rk9999"), -1, "target 'rk9999' is not supported"),
    ("init_runtime", dict(core_mask=5), -1, "core_mask 5 is not valid"),
    ("init_runtime", dict(fallback_prior_device="npu"), -1, "fallback_prior_device"),
    ("init_runtime", dict(perf_debug="yes"), -1, "perf_debug must be True or False"),
    ("inference", dict(), None, "inputs is required"),
    ("inference", dict(inputs=[]), None, "0 inputs given, the model has 1"),
    ("inference", dict(inputs=[np.zeros((1, 3, 16, 16), np.float32)]), None,
     "data_format=['nchw']"),
    ("inference", dict(inputs=[np.zeros((1, 16, 16, 3))], data_format=["nchw"]), None,
     "does not match the model's [1,3,16,16]"),
    ("inference", dict(inputs=[np.zeros((1, 16, 16, 3))], data_format="nchwc"), None,
     "data_format entry 'nchwc'"),
    ("inference", dict(inputs=[np.zeros((1, 16, 16, 3))], data_format=["nhwc", "nhwc"]), None,
     "data_format has 2 entries"),
    ("inference", dict(inputs=[np.zeros((1, 16, 16, 3), np.float32)], inputs_pass_through=[1]),
     None, "pass-through data must already be INT8"),
    ("inference", dict(inputs=[np.zeros((1, 16, 16, 3), np.int8)], inputs_pass_through=[2]),
     None, "must be 0 or 1"),
    ("inference", dict(inputs=[np.array(["a"] * 768).reshape(1, 16, 16, 3)]), None,
     "is not numeric"),
    ("eval_memory", dict(), None, "eval_mem=True"),
    ("eval_perf", dict(is_print="no"), None, "is_print must be True or False"),
]


@pytest.mark.parametrize("call,arguments,failure,fragment", RUNTIME_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(RUNTIME_CASES)])
def test_runtime_call_errors(running, capsys, call, arguments, failure, fragment):
    capsys.readouterr()
    result = getattr(running, call)(**arguments)
    expect_failure(capsys, result, failure, call, fragment)


def test_calls_before_init_runtime(capsys):
    rknn = RKNN()
    image = np.zeros((1, 16, 16, 3), np.float32)
    for call, arguments in [("inference", dict(inputs=[image])), ("eval_perf", {}),
                            ("eval_memory", {}), ("get_sdk_version", {})]:
        expect_failure(capsys, getattr(rknn, call)(**arguments), None, call,
                       "call init_runtime() first")


def test_core_mask_on_a_single_core_platform(native_paths, classifier_onnx, capsys):
    rknn = RKNN()
    rknn.config(target_platform="rk3566", float_dtype="float32")
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=False) == 0
    expect_failure(capsys, rknn.init_runtime(core_mask=RKNN.NPU_CORE_1), -1, "init_runtime",
                   "rknn_set_core_mask")
    assert rknn.init_runtime() == 0


def test_accuracy_analysis_needs_a_built_model(native_paths, int8_rknn, workdir, capsys):
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    sample = workdir / "analysis_input.npy"
    np.save(sample, models.images(1, 3))
    expect_failure(capsys, rknn.accuracy_analysis([str(sample)]), -1, "accuracy_analysis",
                   "load_rknn cannot be analysed")


def test_lite_errors(native_paths, int8_rknn, capsys):
    lite = RKNNLite()
    expect_failure(capsys, lite.init_runtime(), -1, "init_runtime", "load_rknn()")
    assert lite.load_rknn(str(int8_rknn)) == 0
    expect_failure(capsys, lite.init_runtime(core_mask=9), -1, "init_runtime", "core_mask 9")
    expect_failure(capsys, lite.init_runtime(target="rk3588"), -1, "init_runtime",
                   "unexpected keyword argument 'target'")
    assert lite.init_runtime() == 0
    expect_failure(capsys, lite.inference(inputs=[np.zeros((2, 2))]), None, "inference",
                   "does not match")
    lite.release()


def test_verbose_file_gets_the_log(tmp_path, capsys):
    log_file = tmp_path / "rknn.log"
    rknn = RKNN(verbose=True, verbose_file=str(log_file))
    assert rknn.load_rknn("/nonexistent.rknn") == -1
    capsys.readouterr()
    assert "E load_rknn: the model file '/nonexistent.rknn' does not exist" in log_file.read_text()
