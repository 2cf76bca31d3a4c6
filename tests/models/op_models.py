"""One small model per operator the converter supports (and a few variants per operator where
attributes or the opset change the meaning), each a single node, or a node with the
constants it needs, between graph inputs and outputs.

Every entry of OP_MODELS maps a model name to a function(seed) -> onnx.ModelProto. The operator
list itself is SUPPORTED_OPS; docs/testing-converter.md lists the same set, and
tests/tools/check_op_list.py checks both against the runtime's op registry.
"""

from __future__ import annotations

import numpy as np

from graph_builder import GraphBuilder, calibrate_batch_norms

SUPPORTED_OPS = [
    "Conv", "ConvTranspose", "Gemm", "MatMul",
    "Add", "Sub", "Mul", "Div", "Pow",
    "Relu", "Clip", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Exp",
    "Sqrt", "Neg", "Abs", "Reciprocal",
    "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
    "Concat", "Split", "Slice", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
    "Softmax", "Resize", "Pad",
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ArgMax", "ArgMin",
    "BatchNormalization", "InstanceNormalization", "LayerNormalization", "Cast",
]

IMAGE = [1, 8, 16, 16]  # the default activation shape of the single-op models

OP_MODELS = {}


def op_model(name, opset=13, precisions=("fp32", "fp16", "int8")):
    """Registers a builder body(b) that adds inputs, nodes and outputs to a GraphBuilder."""

    def register(body):
        def build(seed=100):
            b = GraphBuilder(name, seed + len(name), opset)
            description = body(b) or ""
            model = b.build(precisions=precisions, description=description)
            return calibrate_batch_norms(model, b)

        build.opset = opset
        OP_MODELS[name] = build
        return body

    return register


def image(b, name="x", shape=IMAGE, **spec):
    spec.setdefault("kind", "normal")
    return b.input(name, shape, **spec)


# -- Convolution and products -------------------------------------------------------------------

@op_model("op_conv")
def _(b):
    b.output(b.conv(image(b), 8, 16, 3, name="conv"))
    return "3x3, pad 1, bias"


@op_model("op_conv_strided_dilated", opset=11)
def _(b):
    x = image(b, shape=[1, 8, 17, 19])
    b.output(b.node("Conv", [x, b.const(b.conv_weight(12, 8, 3), "w")], kernel_shape=[3, 3],
                    strides=[2, 2], dilations=[2, 2], pads=[1, 2, 2, 1]))
    return "stride 2, dilation 2, asymmetric pads, no bias, odd sizes"


@op_model("op_conv_depthwise")
def _(b):
    b.output(b.conv(image(b, shape=[1, 16, 15, 15]), 16, 16, 3, stride=2, group=16))
    return "depthwise 3x3 stride 2"


@op_model("op_conv_grouped_autopad", opset=12)
def _(b):
    x = image(b)
    b.output(b.node("Conv", [x, b.const(b.conv_weight(8, 2, 3), "w"),
                             b.const(b.rng.normal(0, 0.1, 8), "b")],
                    kernel_shape=[3, 3], group=4, strides=[2, 2], auto_pad="SAME_UPPER"))
    return "group 4, auto_pad SAME_UPPER"


@op_model("op_convtranspose")
def _(b):
    x = image(b)
    weight = b.he_normal((8, 6, 4, 4), 8 * 16)
    b.output(b.node("ConvTranspose", [x, b.const(weight, "w"), b.const(b.rng.normal(0, .1, 6),
                                                                         "b")],
                    kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]))
    return "4x4 stride 2 pad 1 (2x upsampling)"


@op_model("op_convtranspose_output_padding", opset=11)
def _(b):
    x = image(b, shape=[1, 4, 7, 9])
    weight = b.he_normal((4, 5, 3, 3), 4 * 9)
    b.output(b.node("ConvTranspose", [x, b.const(weight, "w")], kernel_shape=[3, 3],
                    strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]))
    return "3x3 stride 2, output_padding 1, no bias"


@op_model("op_gemm")
def _(b):
    x = b.input("x", [4, 64])
    weight = b.he_normal((32, 64), 64, gain=1.0)
    b.output(b.node("Gemm", [x, b.const(weight, "w"), b.const(b.rng.normal(0, .1, 32), "c")],
                    transB=1))
    return "transB, bias"


@op_model("op_gemm_alpha_beta", opset=11)
def _(b):
    x = b.input("x", [64, 3])
    weight = b.he_normal((64, 24), 64, gain=1.0)
    b.output(b.node("Gemm", [x, b.const(weight, "w"), b.const(b.rng.normal(0, .1, (3, 24)), "c")],
                    transA=1, alpha=0.5, beta=2.0))
    return "transA, alpha 0.5, beta 2, 2-D C"


@op_model("op_matmul")
def _(b):
    x = b.input("x", [2, 10, 48])
    b.output(b.node("MatMul", [x, b.const(b.he_normal((48, 20), 48, gain=1.0), "w")]))
    return "3-D x constant 2-D"


@op_model("op_matmul_two_inputs")
def _(b):
    a = b.input("a", [1, 4, 12, 16])
    c = b.input("b", [1, 4, 16, 8])
    b.output(b.node("MatMul", [a, c]))
    return "batched, both operands activations"


# -- Element-wise -------------------------------------------------------------------------------

for _op in ["Add", "Sub", "Mul", "Div"]:
    def _binary(b, op=_op):
        x = image(b)
        positive = op == "Div"
        other = (b.rng.uniform(0.5, 2.0, (8, 1, 1)) * b.rng.choice([-1, 1], (8, 1, 1))
                 if positive else b.rng.normal(0, 1, (8, 1, 1)))
        b.output(b.node(op, [x, b.const(other, "k")]))
        return "activation and per-channel constant (broadcast)"

    def _binary_inputs(b, op=_op):
        x = image(b)
        if op == "Div":
            y = b.input("y", [1, 1, 16, 16], kind="nonzero", low=0.5, high=2.0)
        else:
            y = b.input("y", [1, 1, 16, 16])
        b.output(b.node(op, [x, y]))
        return "two activations, broadcast over channels"

    op_model(f"op_{_op.lower()}")(_binary)
    op_model(f"op_{_op.lower()}_two_inputs", opset=11 if _op in ("Add", "Mul") else 13)(
        _binary_inputs)


@op_model("op_pow")
def _(b):
    x = image(b, kind="uniform", low=0.1, high=3.0)
    b.output(b.node("Pow", [x, b.const(np.float32(1.5), "exponent")]))
    return "positive base, scalar exponent 1.5"


@op_model("op_pow_square", opset=12)
def _(b):
    b.output(b.node("Pow", [image(b), b.const(np.float32(2.0), "exponent")]))
    return "any base, exponent 2 (variance in decomposed LayerNorm)"


def _unary(name, op, opset=13, description="", **attributes):
    spec = attributes.pop("input_spec", {})

    def body(b):
        b.output(b.node(op, [image(b, **spec)], **attributes))
        return description

    op_model(name, opset)(body)


_unary("op_relu", "Relu")
_unary("op_leakyrelu", "LeakyRelu", alpha=0.1, description="alpha 0.1")
_unary("op_sigmoid", "Sigmoid", input_spec=dict(scale=3.0))
_unary("op_hardsigmoid", "HardSigmoid", alpha=0.2, beta=0.5, input_spec=dict(scale=3.0),
       description="alpha 0.2, beta 0.5")
_unary("op_hardswish", "HardSwish", opset=17, input_spec=dict(scale=3.0),
       description="opset 14+ op")
_unary("op_tanh", "Tanh", input_spec=dict(scale=2.0))
_unary("op_exp", "Exp", input_spec=dict(kind="uniform", low=-3.0, high=2.0))
_unary("op_sqrt", "Sqrt", input_spec=dict(kind="uniform", low=0.0, high=4.0))
_unary("op_neg", "Neg")
_unary("op_abs", "Abs")
_unary("op_reciprocal", "Reciprocal", input_spec=dict(kind="nonzero", low=0.5, high=2.0))
_unary("op_softmax", "Softmax", axis=1, description="axis 1 (channels), opset 13")
_unary("op_softmax_legacy", "Softmax", opset=11, axis=1,
       description="opset 11: axis 1 coerces to 2-D, softmax over C*H*W")
_unary("op_flatten", "Flatten", axis=2, description="axis 2")
_unary("op_transpose", "Transpose", perm=[0, 2, 3, 1], description="NCHW to NHWC")
_unary("op_globalaveragepool", "GlobalAveragePool")
_unary("op_globalmaxpool", "GlobalMaxPool")


@op_model("op_clip")
def _(b):
    b.output(b.clip(image(b, scale=4.0), 0.0, 6.0))
    return "Relu6: min 0, max 6 as constant inputs"


@op_model("op_clip_opset11_min_only", opset=11)
def _(b):
    b.output(b.node("Clip", [image(b, scale=2.0), b.const(np.float32(-0.5), "min")]))
    return "opset 11, only min given"


@op_model("op_prelu")
def _(b):
    slope = b.rng.uniform(0.05, 0.3, (8, 1, 1)).astype(np.float32)
    b.output(b.node("PRelu", [image(b), b.const(slope, "slope")]))
    return "per-channel slope [C,1,1]"


# -- Pooling ------------------------------------------------------------------------------------

@op_model("op_maxpool", opset=12)
def _(b):
    b.output(b.max_pool(image(b), 3, 2, 1))
    return "3x3 stride 2 pad 1"


@op_model("op_maxpool_ceil", opset=12)
def _(b):
    b.output(b.node("MaxPool", [image(b, shape=[1, 8, 15, 15])], kernel_shape=[2, 2],
                    strides=[2, 2], ceil_mode=1))
    return "2x2 stride 2, ceil_mode on an odd size"


@op_model("op_averagepool", opset=11)
def _(b):
    b.output(b.node("AveragePool", [image(b)], kernel_shape=[3, 3], strides=[2, 2],
                    pads=[1, 1, 1, 1], count_include_pad=0))
    return "3x3 stride 2 pad 1, padding excluded from the count"


@op_model("op_averagepool_include_pad")
def _(b):
    b.output(b.node("AveragePool", [image(b, shape=[1, 8, 14, 14])], kernel_shape=[3, 3],
                    strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=1))
    return "3x3 stride 1 pad 1, padding counted"


# -- Data movement ------------------------------------------------------------------------------

@op_model("op_concat")
def _(b):
    x = image(b)
    y = b.input("y", [1, 4, 16, 16])
    b.output(b.node("Concat", [x, y, b.const(b.rng.normal(0, 1, (1, 2, 16, 16)), "k")], axis=1))
    return "two inputs and a constant along channels"


@op_model("op_split", opset=11)
def _(b):
    for t in b.split(image(b), [3, 5], axis=1):
        b.output(t)
    return "opset 11: split sizes as attribute"


@op_model("op_split_input")
def _(b):
    for t in b.split(image(b), [4, 8, 4], axis=2):
        b.output(t)
    return "opset 13: split sizes as input, axis 2"


@op_model("op_split_num_outputs", opset=18)
def _(b):
    for t in b.node("Split", [image(b)], outputs=3, axis=3, num_outputs=3):
        b.output(t)
    return "opset 18: num_outputs 3 over 16 (6, 6, 4)"


@op_model("op_slice")
def _(b):
    x = image(b)
    b.output(b.node("Slice", [x, b.ints([1, 2]), b.ints([7, 14]), b.ints([1, 2]),
                              b.ints([1, 2])]))
    return "channels 1..7, rows 2..14 step 2"


@op_model("op_slice_negative", opset=11)
def _(b):
    x = image(b)
    b.output(b.node("Slice", [x, b.ints([-1, 0]), b.ints([-2 ** 63, 1000]), b.ints([1, -1]),
                              b.ints([-1, 2])]))
    return "negative axis and step, clamped ends"


@op_model("op_reshape")
def _(b):
    b.output(b.reshape(image(b), [1, 0, -1]))
    return "0 (copy) and -1 (infer) in the shape"


@op_model("op_squeeze", opset=11)
def _(b):
    b.output(b.node("Squeeze", [image(b, shape=[1, 8, 1, 16])], axes=[0, 2]))
    return "opset 11: axes as attribute"


@op_model("op_squeeze_input")
def _(b):
    b.output(b.node("Squeeze", [image(b, shape=[1, 8, 1, 16]), b.ints([2])]))
    return "opset 13: axes as input"


@op_model("op_unsqueeze", opset=11)
def _(b):
    b.output(b.node("Unsqueeze", [b.input("x", [8, 16])], axes=[0, 3]))
    return "opset 11: axes as attribute"


@op_model("op_unsqueeze_input")
def _(b):
    b.output(b.node("Unsqueeze", [b.input("x", [8, 16]), b.ints([-1])]))
    return "opset 13: axes as input, negative"


@op_model("op_pad")
def _(b):
    b.output(b.node("Pad", [image(b), b.ints([0, 0, 1, 2, 0, 0, 3, 0]),
                            b.const(np.float32(0.5), "value")], mode="constant"))
    return "constant 0.5, asymmetric"


@op_model("op_pad_reflect", opset=11)
def _(b):
    b.output(b.node("Pad", [image(b), b.ints([0, 0, 2, 1, 0, 0, 1, 2])], mode="reflect"))
    return "reflect"


@op_model("op_pad_edge_axes", opset=18)
def _(b):
    b.output(b.node("Pad", [image(b), b.ints([1, 2, 2, 1]), b.const(np.float32(0.0), "value"),
                            b.ints([2, 3])], mode="edge"))
    return "opset 18: edge, axes input"


# -- Resize -------------------------------------------------------------------------------------

@op_model("op_resize_nearest", opset=11)
def _(b):
    b.output(b.resize(image(b), 2.0))
    return "opset 11: nearest asymmetric floor x2 (YOLO upsample), roi and scales inputs"


@op_model("op_resize_linear")
def _(b):
    b.output(b.resize(image(b), 2.0, mode="linear", coordinate="half_pixel"))
    return "bilinear half_pixel x2"


@op_model("op_resize_linear_align_corners", opset=11)
def _(b):
    x = image(b)
    sizes = b.ints([1, 8, 23, 9])
    b.output(b.node("Resize", [x, b.const(np.array([], np.float32), "roi"),
                               b.const(np.array([], np.float32), "scales"), sizes],
                    mode="linear", coordinate_transformation_mode="align_corners"))
    return "bilinear align_corners to sizes 23x9 (up and down)"


@op_model("op_resize_nearest_sizes", opset=18)
def _(b):
    x = image(b)
    b.output(b.node("Resize", [x, "", "", b.ints([1, 8, 24, 12])], mode="nearest",
                    coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"))
    return "opset 18: nearest half_pixel round_prefer_ceil to sizes"


# -- Reductions ---------------------------------------------------------------------------------

for _op in ["ReduceMean", "ReduceMax", "ReduceMin"]:
    def _reduce(b, op=_op):
        b.output(b.node(op, [image(b)], axes=[2, 3], keepdims=1))
        return "axes [2,3] as attribute, keepdims"

    def _reduce18(b, op=_op):
        b.output(b.node(op, [image(b), b.ints([1])], keepdims=0))
        return "opset 18: axes as input, no keepdims"

    op_model(f"op_{_op.lower()}")(_reduce)
    op_model(f"op_{_op.lower()}_axes_input", opset=18)(_reduce18)


@op_model("op_reducesum", opset=11)
def _(b):
    b.output(b.node("ReduceSum", [image(b)], axes=[1], keepdims=1))
    return "opset 11: axes as attribute"


@op_model("op_reducesum_axes_input")
def _(b):
    b.output(b.node("ReduceSum", [image(b), b.ints([-1, 2])], keepdims=0))
    return "opset 13: axes as input"


@op_model("op_argmax")
def _(b):
    x = image(b, kind="distinct", low=-2.0, high=2.0, axis=1)
    b.output(b.node("ArgMax", [x], axis=1, keepdims=1), dtype=7)
    return "axis 1 (channels), keepdims"


@op_model("op_argmin", opset=12)
def _(b):
    x = image(b, kind="distinct", low=-2.0, high=2.0, axis=3)
    b.output(b.node("ArgMin", [x], axis=-1, keepdims=0, select_last_index=0), dtype=7)
    return "opset 12: last axis, no keepdims"


# -- Normalization ------------------------------------------------------------------------------

@op_model("op_batchnormalization")
def _(b):
    x = image(b)
    b.output(b.batch_norm(x, 8))
    return "running statistics measured on the inputs"


@op_model("op_instancenormalization")
def _(b):
    x = image(b, scale=3.0)
    gamma = b.const(b.rng.uniform(0.5, 1.5, 8), "scale")
    beta = b.const(b.rng.normal(0, 0.2, 8), "bias")
    b.output(b.node("InstanceNormalization", [x, gamma, beta], epsilon=1e-5))
    return "epsilon 1e-5"


@op_model("op_layernormalization", opset=17)
def _(b):
    x = b.input("x", [2, 10, 32], scale=2.0)
    gamma = b.const(b.rng.uniform(0.5, 1.5, 32), "scale")
    beta = b.const(b.rng.normal(0, 0.2, 32), "bias")
    b.output(b.node("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5))
    return "opset 17, last axis"


@op_model("op_layernormalization_two_axes", opset=17)
def _(b):
    x = image(b)
    gamma = b.const(b.rng.uniform(0.5, 1.5, (16, 16)), "scale")
    b.output(b.node("LayerNormalization", [x, gamma], axis=2, epsilon=1e-5))
    return "axis 2 (normalise over H and W), no bias"


# -- Cast ---------------------------------------------------------------------------------------

@op_model("op_cast_to_int32")
def _(b):
    x = image(b, kind="offgrid", low=-8, high=8)
    b.output(b.node("Cast", [x], to=6), dtype=6)
    return "float to int32 (truncation toward zero), inputs away from integers"


@op_model("op_cast_from_int64")
def _(b):
    x = b.input("x", [2, 24], np.int64, kind="integer", low=-1000, high=1000)
    scaled = b.node("Mul", [b.node("Cast", [x], to=1), b.const(np.float32(0.01), "k")])
    b.output(scaled)
    return "int64 input cast to float, then scaled"
