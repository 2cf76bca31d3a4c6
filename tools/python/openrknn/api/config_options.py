"""config(...): the toolkit's conversion settings checked at once, into the option names the
converter (rknn-convert) reads."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .calls import ApiError, describe, require, require_bool, require_choice
from .constants import CONFIG_PLATFORMS

# Toolkit options that ask for something the converter does not do: accepted when off.
UNSUPPORTED_SWITCHES = ("remove_weight", "compress_weight", "single_core_mode", "model_pruning",
                        "quantize_weight", "remove_reshape", "sparse_infer",
                        "enable_flash_attention")


def per_input_lists(value, name):
    """mean_values / std_values: [[...], ...] per input; a flat [a, b, c] means one input.
    Lists or numpy arrays of finite numbers."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    example = "[[123.675, 116.28, 103.53]]"
    require(isinstance(value, (list, tuple)) and len(value) > 0,
            f"{name} must be a list such as {example}, got {describe(value)}")

    def is_number(v):
        return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)

    if all(is_number(v) for v in value):
        value = [value]
    value = [v.tolist() if isinstance(v, np.ndarray) else v for v in value]
    for entry in value:
        require(isinstance(entry, (list, tuple)) and entry and all(is_number(v) for v in entry),
                f"{name} must hold one list of finite numbers per input, got {describe(value)}")
    if name == "std_values":
        require(all(v != 0 for entry in value for v in entry), "std_values must not contain 0")
    return [[float(v) for v in entry] for entry in value]


def validate(arguments):
    """config()'s keyword arguments (all of them, defaults included) -> converter options."""
    settings = {
        "mean_values": per_input_lists(arguments["mean_values"], "mean_values"),
        "std_values": per_input_lists(arguments["std_values"], "std_values"),
        "quantized_dtype": require_choice(
            arguments["quantized_dtype"], "quantized_dtype",
            ("w8a8", "w4a16", "w8a16", "w4a8", "w16a16i", "w16a16i_dfp",
             "asymmetric_quantized-8")),
        "quantized_algorithm": require_choice(arguments["quantized_algorithm"],
                                              "quantized_algorithm",
                                              ("normal", "mmse", "kl_divergence")),
        "quantized_method": require_choice(arguments["quantized_method"], "quantized_method",
                                           ("layer", "channel")),
        "float_dtype": require_choice(arguments["float_dtype"], "float_dtype",
                                      ("float16", "float32")),
        "target_platform": require_choice(arguments["target_platform"], "target_platform",
                                          CONFIG_PLATFORMS, allow_none=True),
    }
    swap = arguments["quant_img_RGB2BGR"]
    if isinstance(swap, (list, tuple)):
        settings["quant_img_RGB2BGR"] = [require_bool(v, "quant_img_RGB2BGR entry") for v in swap]
    elif require_bool(swap, "quant_img_RGB2BGR"):
        settings["quant_img_RGB2BGR"] = True

    level = arguments["optimization_level"]
    require(isinstance(level, int) and 0 <= level <= 3,
            f"optimization_level {describe(level)} is not in 0..3")
    settings["optimization_level"] = level

    custom_string = arguments["custom_string"]
    if custom_string is not None:
        require(isinstance(custom_string, str), "custom_string must be a string")
        size = len(custom_string.encode())
        require(size <= 1023, f"custom_string has {size} bytes, at most 1023")
        settings["custom_string"] = custom_string

    require(arguments["inputs_yuv_fmt"] is None,
            "inputs_yuv_fmt (YUV model inputs) is not supported")

    op_target = arguments["op_target"]
    if op_target is not None:
        require(isinstance(op_target, dict),
                "op_target must be a dict {output tensor name: 'cpu'|'npu'|'gpu'|'auto'}")
        settings["op_target"] = {str(k): require_choice(v, f"op_target['{k}']",
                                                        ("cpu", "npu", "gpu", "auto"))
                                 for k, v in op_target.items()}

    dynamic_input = arguments["dynamic_input"]
    if dynamic_input is not None:
        require(isinstance(dynamic_input, (list, tuple)) and dynamic_input,
                "dynamic_input must be a list of shape sets, e.g. [[[1,3,224,224]]]")
        settings["dynamic_input"] = dynamic_input

    for switch in UNSUPPORTED_SWITCHES:
        if require_bool(arguments[switch], switch):
            raise ApiError(f"{switch}=True is not supported by this converter")
    return {k: v for k, v in settings.items() if v is not None}
