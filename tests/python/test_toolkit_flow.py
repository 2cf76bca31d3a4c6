"""A script in the toolkit's style runs end to end on the local runtime, and its results agree
with ONNX Runtime (the converter tests' oracle) within each precision's tolerance."""

from __future__ import annotations

import numpy as np
import pytest

import models
from openrknn.api import RKNN, RKNNLite


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_toolkit_script(native_paths, workdir, classifier_onnx, calibration, held_out, capfd):
    # config -> load_onnx -> build -> export_rknn -> init_runtime() -> inference -> eval_perf
    # -> accuracy_analysis, as the toolkit's examples are written.
    rknn = RKNN(verbose=False)
    assert rknn.config(mean_values=[[127.5, 127.5, 127.5]], std_values=[[127.5, 127.5, 127.5]],
                       target_platform="rk3588") == 0
    assert rknn.load_onnx(model=str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=True, dataset=str(calibration)) == 0
    exported = workdir / "script.rknn"
    assert rknn.export_rknn(str(exported)) == 0
    assert exported.stat().st_size > 0
    assert rknn.init_runtime(perf_debug=True, eval_mem=True) == 0

    image = held_out[0]  # HWC, as cv2.imread gives (leading batch dimension left out)
    outputs = rknn.inference(inputs=[image])
    assert isinstance(outputs, list) and len(outputs) == 1
    assert outputs[0].shape == (1, models.CLASSES) and outputs[0].dtype == np.float32
    reference = models.onnx_reference(classifier_onnx, image[None])[0]
    assert cosine(outputs[0], reference) >= 0.99
    assert int(np.argmax(outputs[0])) == int(np.argmax(reference))

    errors = capfd.readouterr().err  # the runtime logs on file descriptor 2
    perf = rknn.eval_perf()
    printed = capfd.readouterr().out
    assert isinstance(perf, str) and perf == printed
    assert "Total Inference Time(us):" in perf and "FPS:" in perf
    assert "Conv" in perf and "Network Layer Information Table" in perf  # per-layer rows

    memory = rknn.eval_memory(is_print=False)
    assert set(memory) == {"weight_memory", "internal_memory", "other_memory", "total_memory"}
    assert memory["weight_memory"] > 0
    assert memory["total_memory"] == (memory["weight_memory"] + memory["internal_memory"]
                                      + memory["other_memory"])

    version = rknn.get_sdk_version()
    assert "RKNN VERSION:" in version and "DRV: rknnrt:" in version

    sample = workdir / "probe.npy"
    np.save(sample, held_out[1][None])
    snapshot = workdir / "snapshot"
    assert rknn.accuracy_analysis(inputs=[str(sample)], output_dir=str(snapshot)) == 0
    assert (snapshot / "error_analysis.txt").is_file()
    assert (snapshot / "golden" / "prob.npy").is_file()
    assert (snapshot / "simulator" / "prob.npy").is_file()
    golden = np.load(snapshot / "golden" / "prob.npy")
    expected = models.onnx_reference(classifier_onnx, held_out[1][None])[0]
    assert np.allclose(golden, expected, atol=1e-4)
    rknn.release()
    errors += capfd.readouterr().err
    assert not [line for line in errors.splitlines() if line.startswith(("E ", "W "))], errors


@pytest.mark.parametrize("precision,float_dtype,check", [
    ("fp32", "float32", lambda out, ref: np.allclose(out, ref, atol=1e-5, rtol=1e-4)),
    ("fp16", "float16", lambda out, ref: np.allclose(out, ref, atol=5e-3, rtol=1e-2)),
])
def test_float_builds_agree_with_onnxruntime(native_paths, classifier_onnx, held_out, precision,
                                             float_dtype, check):
    rknn = RKNN()
    assert rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3],
                       float_dtype=float_dtype) == 0
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=False) == 0
    assert rknn.init_runtime() == 0
    for image in held_out:
        out = rknn.inference([image[None]])[0]
        ref = models.onnx_reference(classifier_onnx, image[None])[0]
        assert check(out, ref), f"{precision}: max error {np.abs(out - ref).max():.3g}"
    rknn.release()


def test_int8_batch_of_two(native_paths, classifier_onnx, calibration, held_out):
    rknn = RKNN()
    rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3])
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=True, dataset=str(calibration), rknn_batch_size=2) == 0
    assert rknn.init_runtime() == 0
    outputs = rknn.inference([held_out[:2]])
    assert outputs[0].shape == (2, models.CLASSES)
    for row in range(2):
        reference = models.onnx_reference(classifier_onnx, held_out[row:row + 1])[0]
        assert cosine(outputs[0][row], reference) >= 0.99
    rknn.release()


def test_data_format_and_dtypes(native_paths, int8_rknn, held_out):
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime() == 0
    image = held_out[0][None]
    nhwc = rknn.inference([image])[0]
    nchw = rknn.inference([image.transpose(0, 3, 1, 2)], data_format=["nchw"])[0]
    np.testing.assert_array_equal(nhwc, nchw)
    as_string = rknn.inference([image.transpose(0, 3, 1, 2)], data_format="nchw")[0]
    np.testing.assert_array_equal(nhwc, as_string)
    pixels = np.clip(np.round(image), 0, 255)
    from_uint8 = rknn.inference([pixels.astype(np.uint8)])[0]
    from_float = rknn.inference([pixels.astype(np.float32)])[0]
    np.testing.assert_array_equal(from_uint8, from_float)
    from_double = rknn.inference([pixels.astype(np.float64)])[0]
    np.testing.assert_array_equal(from_double, from_float)
    rknn.release()


def test_int8_pass_through_equals_converted_input(native_paths, int8_rknn, held_out):
    # Pass-through data is the model's own int8 NHWC encoding: quantizing the normalised
    # pixels here with the input's scale and zero point must give what the runtime computes.
    from openrknn import native

    with native.Runtime(int8_rknn) as model:
        info = model.inputs[0]
    assert info.type == native.INT8 and info.fmt == native.FORMAT_NHWC
    image = held_out[1][None]
    normalised = (image - models.MEAN) / models.STD
    quantized = np.clip(np.round(normalised / info.scale) + info.zp, -128, 127).astype(np.int8)
    rknn = RKNN()
    assert rknn.load_rknn(str(int8_rknn)) == 0
    assert rknn.init_runtime() == 0
    converted = rknn.inference([image])[0]
    through = rknn.inference([quantized], inputs_pass_through=[1])[0]
    np.testing.assert_array_equal(through, converted)
    rknn.release()


def test_pass_through_takes_the_models_own_encoding(native_paths, workdir):
    model = models.two_inputs(workdir / "two_inputs.onnx")
    rknn = RKNN()
    assert rknn.config(float_dtype="float32") == 0
    assert rknn.load_onnx(str(model)) == 0
    assert rknn.build(do_quantization=False) == 0
    assert rknn.init_runtime() == 0
    rng = np.random.default_rng(5)
    image = rng.normal(size=(1, 3, 4, 4)).astype(np.float32)
    row = rng.normal(size=(1, 4)).astype(np.float32)
    expected = image * 2 + row
    out = rknn.inference([image, row], data_format=["nchw", None])[0]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    # The model's native layout of an image input is NHWC: pass-through bytes are NHWC float32.
    through = rknn.inference([image.transpose(0, 2, 3, 1).copy(), row],
                             inputs_pass_through=[1, 0])[0]
    np.testing.assert_allclose(through, expected, rtol=1e-6)
    rknn.release()


def test_hybrid_quantization_keeps_a_layer_in_float16(native_paths, workdir, classifier_onnx,
                                                      calibration, held_out, monkeypatch):
    monkeypatch.chdir(workdir)
    rknn = RKNN()
    rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3])
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.hybrid_quantization_step1(dataset=str(calibration)) == 0
    cfg = workdir / "classifier.quantization.cfg"
    for produced in ("classifier.model", "classifier.data", cfg.name):
        assert (workdir / produced).is_file(), produced
    text = cfg.read_text()
    assert "custom_quantize_layers: {}" in text and "  r2:" in text
    cfg.write_text(text.replace("custom_quantize_layers: {}",
                                "custom_quantize_layers:\n  r2: float16"))
    hybrid = RKNN()
    assert hybrid.hybrid_quantization_step2(model_input="classifier.model",
                                            data_input="classifier.data",
                                            model_quantization_cfg=cfg.name) == 0
    assert hybrid.init_runtime(perf_debug=True) == 0
    out = hybrid.inference([held_out[0]])[0]
    reference = models.onnx_reference(classifier_onnx, held_out[0][None])[0]
    assert cosine(out, reference) >= 0.99
    assert conv_precisions(hybrid) == ["INT8", "FLOAT16"]
    hybrid.release()
    rknn.release()


def conv_precisions(rknn):
    table = rknn.eval_perf(is_print=False)
    return [line.split()[2] for line in table.splitlines() if line.split()[1:2] == ["Conv"]]


def test_custom_hybrid_sub_graph_runs_in_float16(native_paths, workdir, classifier_onnx,
                                                 calibration, held_out, monkeypatch):
    directory = workdir / "custom_hybrid"
    directory.mkdir()
    monkeypatch.chdir(directory)
    rknn = RKNN()
    rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3])
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    # Everything after the first Relu up to the second one: the second Conv (and its Relu).
    assert rknn.hybrid_quantization_step1(dataset=str(calibration),
                                          custom_hybrid=[["r1", "r2"]]) == 0
    text = (directory / "classifier.quantization.cfg").read_text()
    assert 'custom_quantize_layers:\n  "r2": float16\n' in text
    assert rknn.hybrid_quantization_step2("classifier.model", "classifier.data",
                                          "classifier.quantization.cfg") == 0
    assert rknn.init_runtime(perf_debug=True) == 0
    assert conv_precisions(rknn) == ["INT8", "FLOAT16"]
    reference = models.onnx_reference(classifier_onnx, held_out[0][None])[0]
    assert cosine(rknn.inference([held_out[0]])[0], reference) >= 0.99
    rknn.release()


def test_lite_api_runs_an_exported_model(native_paths, int8_rknn, held_out):
    lite = RKNNLite()
    assert lite.load_rknn(str(int8_rknn)) == 0
    assert lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0) == 0
    lite_out = lite.inference(inputs=[held_out[0]])[0]
    assert "RKNN VERSION:" in lite.get_sdk_version()
    assert lite.release() == 0
    full = RKNN()
    full.load_rknn(str(int8_rknn))
    full.init_runtime(core_mask=RKNN.NPU_CORE_ALL)
    np.testing.assert_array_equal(lite_out, full.inference([held_out[0]])[0])
    full.release()


@pytest.mark.parametrize("do_quantization", [False, True], ids=["fp16", "int8"])
def test_mobilenet_v2_agrees_with_onnxruntime(native_paths, workdir, do_quantization):
    # The converter tests' network and criteria (docs/testing-converter.md), driven through the
    # toolkit API: fp16 within 1e-2 of the largest output, int8 cosine >= 0.99.
    model = workdir / "mobilenet_v2_64.onnx"
    if not model.exists():
        models.mobilenet_v2(model)
    mean, std = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]
    calibration = models.dataset(workdir / "mobilenet_calibration", count=8, seed=7, size=64)
    rknn = RKNN()
    assert rknn.config(mean_values=[mean], std_values=[std]) == 0
    assert rknn.load_onnx(str(model)) == 0
    assert rknn.build(do_quantization=do_quantization, dataset=str(calibration)) == 0
    assert rknn.init_runtime() == 0
    for image in models.images(2, seed=8, size=64):
        out = rknn.inference([image])[0]
        ref = models.onnx_reference(model, image[None], mean, std)[0]
        assert out.shape == ref.shape
        if do_quantization:
            assert cosine(out, ref) >= 0.99
        else:
            assert np.abs(out - ref).max() <= 1e-2 * np.abs(ref).max()
    rknn.release()


def test_toolkit_1x_spellings_and_verbose_log(native_paths, classifier_onnx, calibration,
                                              held_out, tmp_path, capsys):
    # Toolkit 1.x scripts: flat mean/std lists, eval_perf(inputs=...); verbose logs the
    # converter's summary (I lines) and copies the log to verbose_file.
    log_file = tmp_path / "verbose.log"
    rknn = RKNN(verbose=True, verbose_file=str(log_file))
    assert rknn.config(mean_values=[127.5, 127.5, 127.5], std_values=[127.5, 127.5, 127.5]) == 0
    assert rknn.load_onnx(str(classifier_onnx)) == 0
    assert rknn.build(do_quantization=True, dataset=str(calibration)) == 0
    assert rknn.init_runtime() == 0
    capsys.readouterr()
    text = rknn.eval_perf(inputs=[held_out[0]], is_print=False)
    assert "Total Inference Time(us):" in text and capsys.readouterr().out == ""
    reference = models.onnx_reference(classifier_onnx, held_out[0][None])[0]
    assert cosine(rknn.inference([held_out[0]])[0], reference) >= 0.99
    log = log_file.read_text()
    assert "I build: " in log and "D build: running " in log and "I init_runtime: " in log
    rknn.release()


def test_dynamic_input_shape_sets(native_paths, workdir, calibration, capsys):
    # config(dynamic_input=...): the converter stores the shape sets, inference switches between
    # them through rknn_set_input_shapes, and each set's result agrees with ONNX Runtime.
    model = models.classifier(workdir / "classifier_dynamic.onnx", dynamic=True)
    rknn = RKNN()
    assert rknn.config(mean_values=[[models.MEAN] * 3], std_values=[[models.STD] * 3],
                       dynamic_input=[[[1, 3, 16, 16]], [[1, 3, 8, 8]]]) == 0
    assert rknn.load_onnx(str(model)) == 0
    assert rknn.build(dataset=str(calibration)) == 0
    assert rknn.init_runtime() == 0
    for size in (16, 8):
        image = models.images(1, seed=size, size=size)
        capsys.readouterr()
        out = rknn.inference([image])
        log = capsys.readouterr().err
        assert out is not None, log
        assert out[0].size == models.onnx_reference(model, image)[0].size
        assert cosine(out[0], models.onnx_reference(model, image)[0]) >= 0.99
    assert rknn.inference([models.images(1, seed=3, size=12)]) is None
    assert "are not one of the model's shape sets [[[1, 16, 16, 3]], [[1, 8, 8, 3]]]" in \
        capsys.readouterr().err
    rknn.release()
