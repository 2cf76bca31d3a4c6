"""Whole networks with seeded random weights, in the shapes real exports have.

Each function returns a checked onnx.ModelProto. Architectures follow the published ones
(MobileNetV2, ResNet18/50, YOLOv5s v6, ShuffleNetV2 x1.0, a ViT-style encoder block); the graph
forms follow what torch.onnx emits for them at the chosen opset.
"""

from __future__ import annotations

import numpy as np

from graph_builder import RESIDUAL_GAMMA, GraphBuilder, calibrate_batch_norms


def _finish(builder: GraphBuilder, description: str, precisions=("fp32", "fp16", "int8"),
            int8_min_cosine=None):
    model = builder.build(precisions=precisions, description=description,
                          int8_min_cosine=int8_min_cosine)
    return calibrate_batch_norms(model, builder)


# -- MobileNetV2 -------------------------------------------------------------------------------

def mobilenet_v2(seed=1, opset=12, resolution=224, classes=1000):
    b = GraphBuilder("mobilenet_v2", seed, opset)
    x = b.input("input", [1, 3, resolution, resolution], kind="image")
    x = b.conv_bn_act(x, 3, 32, 3, stride=2, act="relu6", name="features.0")
    channels = 32
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    index = 1
    for expand, out_channels, repeats, first_stride in settings:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            hidden = channels * expand
            name = f"features.{index}"
            y = x
            if expand != 1:
                y = b.conv_bn_act(y, channels, hidden, 1, act="relu6", name=f"{name}.expand")
            y = b.conv_bn_act(y, hidden, hidden, 3, stride=stride, group=hidden, act="relu6",
                              name=f"{name}.dw")
            residual = stride == 1 and channels == out_channels
            y = b.conv_bn_act(y, hidden, out_channels, 1, act=None, name=f"{name}.project",
                              gamma_scale=RESIDUAL_GAMMA if residual else 1.0)
            x = b.node("Add", [x, y]) if stride == 1 and channels == out_channels else y
            channels = out_channels
            index += 1
    x = b.conv_bn_act(x, channels, 1280, 1, act="relu6", name=f"features.{index}")
    b.output(b.classifier(x, 1280, classes, name="classifier"))
    return _finish(b, "MobileNetV2 1.0, 224x224, Relu6 as Clip")


# -- ResNet -------------------------------------------------------------------------------------

def _basic_block(b, x, cin, cout, stride, name):
    y = b.conv_bn_act(x, cin, cout, 3, stride=stride, name=f"{name}.conv1")
    y = b.conv_bn_act(y, cout, cout, 3, act=None, name=f"{name}.conv2",
                      gamma_scale=RESIDUAL_GAMMA)
    if stride != 1 or cin != cout:
        x = b.conv_bn_act(x, cin, cout, 1, stride=stride, act=None, name=f"{name}.downsample")
    return b.node("Relu", [b.node("Add", [y, x])])


def _bottleneck(b, x, cin, width, stride, name):
    cout = width * 4
    y = b.conv_bn_act(x, cin, width, 1, name=f"{name}.conv1")
    y = b.conv_bn_act(y, width, width, 3, stride=stride, name=f"{name}.conv2")
    y = b.conv_bn_act(y, width, cout, 1, act=None, name=f"{name}.conv3",
                      gamma_scale=RESIDUAL_GAMMA)
    if stride != 1 or cin != cout:
        x = b.conv_bn_act(x, cin, cout, 1, stride=stride, act=None, name=f"{name}.downsample")
    return b.node("Relu", [b.node("Add", [y, x])])


def _resnet(name, block, layers, seed, opset, resolution, classes):
    b = GraphBuilder(name, seed, opset)
    x = b.input("input", [1, 3, resolution, resolution], kind="image")
    x = b.conv_bn_act(x, 3, 64, 7, stride=2, name="conv1")
    x = b.max_pool(x, 3, 2, 1)
    channels = 64
    for stage, (width, repeats) in enumerate(zip([64, 128, 256, 512], layers)):
        for i in range(repeats):
            stride = 2 if stage > 0 and i == 0 else 1
            block_name = f"layer{stage + 1}.{i}"
            if block == "basic":
                x = _basic_block(b, x, channels, width, stride, block_name)
                channels = width
            else:
                x = _bottleneck(b, x, channels, width, stride, block_name)
                channels = width * 4
    b.output(b.classifier(x, channels, classes))
    return b


def resnet18(seed=2, opset=13, resolution=224, classes=1000):
    b = _resnet("resnet18", "basic", [2, 2, 2, 2], seed, opset, resolution, classes)
    return _finish(b, "ResNet18, 224x224")


def resnet50(seed=3, opset=13, resolution=224, classes=1000):
    b = _resnet("resnet50", "bottleneck", [3, 4, 6, 3], seed, opset, resolution, classes)
    return _finish(b, "ResNet50 (v1.5: stride in the 3x3), 224x224")


# -- YOLOv5s ------------------------------------------------------------------------------------

def _yolo_conv(b, x, cin, cout, kernel, stride=1, name="conv", padding=None):
    return b.conv_bn_act(x, cin, cout, kernel, stride=stride, act="silu", padding=padding,
                         name=name)


def _c3(b, x, cin, cout, repeats, shortcut, name):
    hidden = cout // 2
    a = _yolo_conv(b, x, cin, hidden, 1, name=f"{name}.cv1")
    for i in range(repeats):
        y = _yolo_conv(b, a, hidden, hidden, 1, name=f"{name}.m.{i}.cv1")
        y = b.conv_bn_act(y, hidden, hidden, 3, act="silu", name=f"{name}.m.{i}.cv2",
                          gamma_scale=RESIDUAL_GAMMA if shortcut else 1.0)
        a = b.node("Add", [a, y]) if shortcut else y
    skip = _yolo_conv(b, x, cin, hidden, 1, name=f"{name}.cv2")
    return _yolo_conv(b, b.node("Concat", [a, skip], axis=1), 2 * hidden, cout, 1,
                      name=f"{name}.cv3")


def _sppf(b, x, cin, cout, name):
    hidden = cin // 2
    x = _yolo_conv(b, x, cin, hidden, 1, name=f"{name}.cv1")
    y1 = b.max_pool(x, 5, 1, 2)
    y2 = b.max_pool(y1, 5, 1, 2)
    y3 = b.max_pool(y2, 5, 1, 2)
    return _yolo_conv(b, b.node("Concat", [x, y1, y2, y3], axis=1), 4 * hidden, cout, 1,
                      name=f"{name}.cv2")


def yolov5s(seed=4, opset=12, resolution=640, classes=80, anchors=3, width=1.0,
            name="yolov5s"):
    """YOLOv5s v6.x (width 0.5, depth 0.33): 6x6 stem, C3 blocks, SPPF, an FPN/PAN neck with
    nearest 2x upsampling, and three raw 1x1 detection heads (the form RKNN deployments keep,
    decoding boxes on the CPU). `width` 0.5 gives YOLOv5n (the same graph, half the channels)."""
    b = GraphBuilder(name, seed, opset)
    c = {k: int(k * width) for k in (32, 64, 128, 256, 512)}
    x = b.input("images", [1, 3, resolution, resolution], kind="image")
    x = _yolo_conv(b, x, 3, c[32], 6, 2, padding=2, name="model.0")
    x = _yolo_conv(b, x, c[32], c[64], 3, 2, name="model.1")
    x = _c3(b, x, c[64], c[64], 1, True, "model.2")
    x = _yolo_conv(b, x, c[64], c[128], 3, 2, name="model.3")
    p3 = _c3(b, x, c[128], c[128], 2, True, "model.4")
    x = _yolo_conv(b, p3, c[128], c[256], 3, 2, name="model.5")
    p4 = _c3(b, x, c[256], c[256], 3, True, "model.6")
    x = _yolo_conv(b, p4, c[256], c[512], 3, 2, name="model.7")
    x = _c3(b, x, c[512], c[512], 1, True, "model.8")
    x = _sppf(b, x, c[512], c[512], "model.9")
    h10 = _yolo_conv(b, x, c[512], c[256], 1, name="model.10")
    x = b.node("Concat", [b.resize(h10, 2.0), p4], axis=1)
    x = _c3(b, x, c[512], c[256], 1, False, "model.13")
    h14 = _yolo_conv(b, x, c[256], c[128], 1, name="model.14")
    x = b.node("Concat", [b.resize(h14, 2.0), p3], axis=1)
    out_p3 = _c3(b, x, c[256], c[128], 1, False, "model.17")
    x = _yolo_conv(b, out_p3, c[128], c[128], 3, 2, name="model.18")
    out_p4 = _c3(b, b.node("Concat", [x, h14], axis=1), c[256], c[256], 1, False, "model.20")
    x = _yolo_conv(b, out_p4, c[256], c[256], 3, 2, name="model.21")
    out_p5 = _c3(b, b.node("Concat", [x, h10], axis=1), c[512], c[512], 1, False, "model.23")
    per_anchor = classes + 5
    for i, (feature, channels) in enumerate([(out_p3, c[128]), (out_p4, c[256]),
                                             (out_p5, c[512])]):
        head = b.conv(feature, channels, anchors * per_anchor, 1, name=f"model.24.m.{i}",
                      gain=1.0)
        b.output(head)
    variant = "YOLOv5s" if width == 1.0 else f"YOLOv5 width x{width / 2:g}"
    # Sixty Conv+BN+SiLU layers, most without a residual path: with random weights an input
    # perturbation still grows about 5x to the heads, and ONNX Runtime's own int8 quantizer
    # (QDQ, per-channel, MinMax, 20 samples) reaches a cosine of 0.94 on yolov5n_320. Our int8
    # reaches 0.976 on yolov5n_320 and 0.973 on yolov5s (normal/channel; mmse 0.983) with the
    # SiLU fused into its Conv, error-compensated weight rounding and bias correction. 0.99 is
    # out of reach in w8a8 here: what remains is mostly activation rounding (8 bits per tensor),
    # spread over every layer and amplified by the network; int8 weights alone (float
    # activations) already give 0.993-0.997 before the compensation (docs/testing-converter.md).
    # The limit sits just below what every algorithm and weight method reaches (the lowest is
    # yolov5s normal/layer, 0.9650), so the test catches regressions.
    return _finish(b, f"{variant} v6 shape, {resolution}x{resolution}, 3 raw heads",
                   int8_min_cosine=0.964)


def yolov5n(seed=7, opset=12, resolution=320):
    """YOLOv5n: the YOLOv5s graph with half the channels (a quarter of the work)."""
    return yolov5s(seed=seed, opset=opset, resolution=resolution, width=0.5,
                   name=f"yolov5n_{resolution}")


# -- ShuffleNetV2 -------------------------------------------------------------------------------

def _channel_shuffle(b, x, channels, size, groups=2):
    x = b.reshape(x, [1, groups, channels // groups, size, size])
    x = b.transpose(x, [0, 2, 1, 3, 4])
    return b.reshape(x, [1, channels, size, size])


def shufflenet_v2(seed=5, opset=11, resolution=224, classes=1000):
    """ShuffleNetV2 x1.0: Split into halves, branch, Concat, channel shuffle through
    Reshape/Transpose/Reshape (5-D), as torchvision exports it."""
    b = GraphBuilder("shufflenet_v2", seed, opset)
    x = b.input("input", [1, 3, resolution, resolution], kind="image")
    x = b.conv_bn_act(x, 3, 24, 3, stride=2, name="conv1")
    x = b.max_pool(x, 3, 2, 1)
    size = resolution // 4
    channels = 24
    for stage, (out_channels, repeats) in enumerate(zip([116, 232, 464], [4, 8, 4])):
        half = out_channels // 2
        for i in range(repeats):
            name = f"stage{stage + 2}.{i}"
            if i == 0:
                left = b.conv_bn_act(x, channels, channels, 3, stride=2, group=channels,
                                     act=None, name=f"{name}.branch1.0")
                left = b.conv_bn_act(left, channels, half, 1, name=f"{name}.branch1.2")
                right_in, right_channels, stride = x, channels, 2
                size //= 2
            else:
                left, right_in = b.split(x, [half, half], axis=1)
                right_channels, stride = half, 1
            right = b.conv_bn_act(right_in, right_channels, half, 1, name=f"{name}.branch2.0")
            right = b.conv_bn_act(right, half, half, 3, stride=stride, group=half, act=None,
                                  name=f"{name}.branch2.3")
            right = b.conv_bn_act(right, half, half, 1, name=f"{name}.branch2.5")
            x = _channel_shuffle(b, b.node("Concat", [left, right], axis=1), out_channels, size)
            channels = out_channels
    x = b.conv_bn_act(x, channels, 1024, 1, name="conv5")
    pooled = b.node("ReduceMean", [x], axes=[2, 3], keepdims=0)  # torchvision: x.mean([2, 3])
    weight = b.he_normal((classes, 1024), 1024, gain=1.0)
    b.output(b.node("Gemm", [pooled, b.const(weight, "fc.weight"),
                             b.const(b.rng.normal(0.0, 0.05, classes), "fc.bias")],
                    transB=1))
    return _finish(b, "ShuffleNetV2 x1.0, 224x224, Split + 5-D Reshape/Transpose shuffle")


# -- Transformer --------------------------------------------------------------------------------

def _layer_norm(b, x, dim, name, native):
    gamma = b.const(np.exp(b.rng.normal(0.0, 0.2, dim)), f"{name}.weight")
    beta = b.const(b.rng.normal(0.0, 0.1, dim), f"{name}.bias")
    if native:
        return b.node("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5)
    # The form torch.onnx emits before opset 17.
    mean = b.node("ReduceMean", [x], axes=[-1])
    centred = b.node("Sub", [x, mean])
    variance = b.node("ReduceMean", [b.node("Pow", [centred, b.const(np.float32(2.0), "two")])],
                      axes=[-1])
    std = b.node("Sqrt", [b.node("Add", [variance, b.const(np.float32(1e-5), "eps")])])
    return b.node("Add", [b.node("Mul", [b.node("Div", [centred, std]), gamma]), beta])


def _linear(b, x, din, dout, name):
    weight = b.he_normal((din, dout), din, gain=1.0)
    y = b.node("MatMul", [x, b.const(weight, f"{name}.weight")])
    return b.node("Add", [y, b.const(b.rng.normal(0.0, 0.02, dout), f"{name}.bias")])


def _gelu_tanh(b, x):
    cube = b.node("Pow", [x, b.const(np.float32(3.0), "three")])
    inner = b.node("Add", [x, b.node("Mul", [cube, b.const(np.float32(0.044715), "gelu.c")])])
    scaled = b.node("Mul", [inner, b.const(np.float32(np.sqrt(2.0 / np.pi)), "gelu.k")])
    one_plus = b.node("Add", [b.node("Tanh", [scaled]), b.const(np.float32(1.0), "one")])
    return b.node("Mul", [b.node("Mul", [x, one_plus]), b.const(np.float32(0.5), "half")])


def transformer_block(seed=6, opset=17, tokens=64, dim=128, heads=4, blocks=2, native_norm=None):
    """A pre-norm ViT encoder: LayerNorm, multi-head self-attention (MatMul, Reshape, Transpose,
    Softmax), residual Add, LayerNorm, MLP with tanh-GELU (Pow, Tanh)."""
    native = opset >= 17 if native_norm is None else native_norm
    name = "transformer_block" if native else f"transformer_block_opset{opset}"
    b = GraphBuilder(name, seed, opset)
    x = b.input("tokens", [1, tokens, dim], kind="normal")
    head_dim = dim // heads
    for block in range(blocks):
        p = f"blocks.{block}"
        h = _layer_norm(b, x, dim, f"{p}.norm1", native)

        def heads_of(t):
            return b.transpose(b.reshape(t, [1, tokens, heads, head_dim]), [0, 2, 1, 3])

        q = heads_of(_linear(b, h, dim, dim, f"{p}.attn.q"))
        k = heads_of(_linear(b, h, dim, dim, f"{p}.attn.k"))
        v = heads_of(_linear(b, h, dim, dim, f"{p}.attn.v"))
        scores = b.node("MatMul", [q, b.transpose(k, [0, 1, 3, 2])])
        scores = b.node("Mul", [scores, b.const(np.float32(head_dim ** -0.5), "scale")])
        attention = b.node("Softmax", [scores], axis=-1 if opset >= 13 else 3)
        context = b.node("MatMul", [attention, v])
        context = b.reshape(b.transpose(context, [0, 2, 1, 3]), [1, tokens, dim])
        x = b.node("Add", [x, _linear(b, context, dim, dim, f"{p}.attn.proj")])
        h = _layer_norm(b, x, dim, f"{p}.norm2", native)
        h = _gelu_tanh(b, _linear(b, h, dim, 4 * dim, f"{p}.mlp.fc1"))
        x = b.node("Add", [x, _linear(b, h, 4 * dim, dim, f"{p}.mlp.fc2")])
    b.output(_layer_norm(b, x, dim, "norm", native))
    form = "LayerNormalization" if native else "LayerNorm as ReduceMean/Sub/Pow/Sqrt/Div"
    return _finish(b, f"{blocks} pre-norm encoder blocks, {tokens} tokens x {dim}, {form}")
