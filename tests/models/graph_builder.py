"""A small ONNX graph builder for the converter's test models.

Weights come from one seeded numpy Generator, so a builder called with the same seed writes the
same model bytes everywhere. Layer helpers follow the shapes PyTorch's exporter produces
(Conv + BatchNormalization + activation, Gemm classifiers, ...), because those are the graphs
rknn-convert meets in practice.

BatchNormalization statistics are not random: `calibrate_batch_norms` runs the model in ONNX
Runtime on sample inputs and stores each BatchNormalization's real per-channel input mean and
variance, layer after layer, as a trained network would have them. That keeps activations of
deep random networks (ResNet50, YOLOv5s) in the ranges trained ones have, which the float16 and
int8 comparisons depend on.
"""

from __future__ import annotations

import collections
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Metadata keys (ModelProto.metadata_props) through which a test model tells the comparison
# tools how to make its inputs and which precisions make sense for it.
# BatchNormalization shifts: mostly positive, so most units of the following activation are
# active, as in trained networks. With zero-mean shifts, randomly weighted BN networks are
# chaotic: measured with ONNX Runtime, an input perturbation grew 15-30x through MobileNetV2,
# ShuffleNetV2 and YOLOv5, and ONNX Runtime's own int8 quantizer (QDQ, per-channel, MinMax)
# then reached only 0.945 (MobileNetV2) to 0.52 (YOLOv5n) cosine similarity. With these shifts
# and RESIDUAL_GAMMA the classifiers amplify perturbations about 1x or less and the same
# quantizer reaches 0.996-0.999 (YOLOv5n: 0.94, see docs/testing-converter.md).
BETA_MEAN = 0.75
BETA_STD = 0.3
# Scale of the last BatchNormalization of a residual branch (the branch adds a small update
# to the identity path, as in trained ResNets and MobileNetV2).
RESIDUAL_GAMMA = 0.25

META_INPUTS = "orknn_test.inputs"
META_PRECISIONS = "orknn_test.precisions"
META_DESCRIPTION = "orknn_test.description"
META_INT8_MIN_COSINE = "orknn_test.int8_min_cosine"  # only where 0.99 is out of reach

NUMPY_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}


class InputSpec:
    """How to make values for one graph input.

    kind: "image"    smooth random field per channel, about zero mean and unit variance
                     (a normalised camera image), 4-D NCHW only;
          "normal"   standard normal scaled by `scale`;
          "uniform"  uniform in [low, high);
          "nonzero"  magnitude uniform in [low, high), random sign (Reciprocal, Div);
          "distinct" along `axis`, a random permutation of evenly spaced values in [low, high]
                     (ArgMax/ArgMin: no near-ties that float16 or int8 could flip);
          "integer"  integers uniform in [low, high);
          "offgrid"  integers uniform in [low, high) plus a fraction in [0.1, 0.9]: float to
                     integer casts whose result float16 rounding cannot change.
    """

    def __init__(self, name, shape, dtype=np.float32, kind="normal", low=-1.0, high=1.0,
                 scale=1.0, axis=-1):
        self.name = name
        self.shape = [int(d) for d in shape]
        self.dtype = np.dtype(dtype)
        self.kind = kind
        self.low = float(low)
        self.high = float(high)
        self.scale = float(scale)
        self.axis = int(axis)

    def to_json(self):
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype.name,
                "kind": self.kind, "low": self.low, "high": self.high, "scale": self.scale,
                "axis": self.axis}

    @staticmethod
    def from_json(entry):
        return InputSpec(entry["name"], entry["shape"], entry["dtype"], entry["kind"],
                         entry["low"], entry["high"], entry["scale"], entry["axis"])

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        shape = tuple(self.shape)
        if self.kind == "image":
            value = smooth_image(rng, shape)
        elif self.kind == "normal":
            value = rng.standard_normal(shape) * self.scale
        elif self.kind == "uniform":
            value = rng.uniform(self.low, self.high, shape)
        elif self.kind == "nonzero":
            value = rng.uniform(self.low, self.high, shape) * rng.choice([-1.0, 1.0], shape)
        elif self.kind == "distinct":
            axis = self.axis % len(shape)
            count = shape[axis]
            levels = np.linspace(self.low, self.high, count)
            keys = rng.random(shape)
            order = np.argsort(keys, axis=axis)  # a random permutation along the axis
            value = levels[order]
        elif self.kind == "integer":
            value = rng.integers(int(self.low), int(self.high), shape)
        elif self.kind == "offgrid":
            value = rng.integers(int(self.low), int(self.high), shape) + rng.uniform(0.1, 0.9,
                                                                                    shape)
        else:
            raise ValueError(f"input {self.name}: unknown kind {self.kind!r}")
        return np.asarray(value).astype(self.dtype)


def smooth_image(rng: np.random.Generator, shape) -> np.ndarray:
    """An NCHW float image with spatial structure: coarse noise upsampled, plus fine noise,
    normalised to about zero mean and unit variance per channel."""
    if len(shape) != 4:
        return rng.standard_normal(shape)
    n, c, h, w = shape
    cell = 8
    coarse = rng.standard_normal((n, c, -(-h // cell) + 1, -(-w // cell) + 1))
    # Bilinear upsampling of the coarse grid, written out with numpy.
    ys = np.arange(h) / cell
    xs = np.arange(w) / cell
    y0 = np.floor(ys).astype(int)
    x0 = np.floor(xs).astype(int)
    fy = (ys - y0)[:, None]
    fx = (xs - x0)[None, :]
    top = coarse[:, :, y0][:, :, :, x0] * (1 - fx) + coarse[:, :, y0][:, :, :, x0 + 1] * fx
    bottom = (coarse[:, :, y0 + 1][:, :, :, x0] * (1 - fx)
              + coarse[:, :, y0 + 1][:, :, :, x0 + 1] * fx)
    image = top * (1 - fy) + bottom * fy + 0.25 * rng.standard_normal(shape)
    image -= image.mean(axis=(2, 3), keepdims=True)
    image /= image.std(axis=(2, 3), keepdims=True) + 1e-6
    return image


def input_specs_of(model: onnx.ModelProto):
    """The InputSpecs recorded in a test model, or None for a model from elsewhere."""
    for prop in model.metadata_props:
        if prop.key == META_INPUTS:
            return [InputSpec.from_json(entry) for entry in json.loads(prop.value)]
    return None


def int8_min_cosine_of(model: onnx.ModelProto, default=0.99):
    for prop in model.metadata_props:
        if prop.key == META_INT8_MIN_COSINE:
            return float(prop.value)
    return default


def precisions_of(model: onnx.ModelProto):
    for prop in model.metadata_props:
        if prop.key == META_PRECISIONS:
            return prop.value.split(",")
    return ["fp32", "fp16", "int8"]


class GraphBuilder:
    """Collects nodes, constants, inputs and outputs, then makes a checked ModelProto."""

    def __init__(self, name: str, seed: int, opset: int = 13):
        self.name = name
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.initializers = []
        self.inputs = []
        self.input_specs = []
        self.outputs = []
        self.names = collections.Counter()
        self.batch_norms = []  # node names whose statistics calibrate_batch_norms fills in

    # -- names and tensors ----------------------------------------------------------------

    def unique(self, prefix: str) -> str:
        self.names[prefix] += 1
        count = self.names[prefix]
        return prefix if count == 1 else f"{prefix}_{count - 1}"

    def input(self, name, shape, dtype=np.float32, kind="normal", **spec) -> str:
        spec_entry = InputSpec(name, shape, dtype, kind, **spec)
        self.input_specs.append(spec_entry)
        self.inputs.append(helper.make_tensor_value_info(
            name, NUMPY_TO_ONNX[np.dtype(dtype)], [int(d) for d in shape]))
        return name

    def const(self, value, name: str = "const", dtype=None) -> str:
        array = np.asarray(value, dtype=dtype)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        unique_name = self.unique(name)
        self.initializers.append(numpy_helper.from_array(array, unique_name))
        return unique_name

    def ints(self, values, name: str = "ints") -> str:
        return self.const(np.asarray(values, dtype=np.int64), name)

    def output(self, tensor: str, dtype=TensorProto.FLOAT):
        # The shape is filled in by shape inference in build().
        self.outputs.append(helper.make_tensor_value_info(tensor, dtype, None))
        return tensor

    def node(self, op_type: str, inputs, outputs=1, name: str | None = None, **attributes):
        """Adds a node; returns its output name (or list of names when outputs > 1 or a list
        of names is given)."""
        node_name = self.unique(name or op_type.lower())
        if isinstance(outputs, int):
            output_names = [node_name if outputs == 1 else f"{node_name}:{i}"
                            for i in range(outputs)]
            single = outputs == 1
        else:
            output_names = list(outputs)
            single = False
        attributes = {k: v for k, v in attributes.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), output_names, name=node_name,
                                           **attributes))
        return output_names[0] if single else output_names

    # -- weights ----------------------------------------------------------------------------

    def he_normal(self, shape, fan_in, gain=2.0):
        return (self.rng.standard_normal(shape) * np.sqrt(gain / fan_in)).astype(np.float32)

    def conv_weight(self, cout, cin_per_group, kernel):
        kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
        return self.he_normal((cout, cin_per_group, kh, kw), cin_per_group * kh * kw)

    # -- layers -----------------------------------------------------------------------------

    def conv(self, x, cin, cout, kernel, stride=1, padding=None, group=1, dilation=1,
             bias=True, name="conv", gain=2.0):
        kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
        if padding is None:
            padding = (dilation * (kh - 1) // 2, dilation * (kw - 1) // 2)
        if isinstance(padding, int):
            padding = (padding, padding)
        weight = self.he_normal((cout, cin // group, kh, kw), cin // group * kh * kw, gain)
        inputs = [x, self.const(weight, f"{name}.weight")]
        if bias:
            inputs.append(self.const(self.rng.normal(0.0, 0.05, cout), f"{name}.bias"))
        return self.node("Conv", inputs, name=name, kernel_shape=[kh, kw],
                         strides=[stride, stride], pads=[padding[0], padding[1], padding[0],
                                                         padding[1]],
                         group=group if group != 1 else None,
                         dilations=[dilation, dilation] if dilation != 1 else None)

    def batch_norm(self, x, channels, name="bn", gamma_scale=1.0):
        """BatchNormalization with trained-looking scale and shift; mean and variance are
        placeholders until calibrate_batch_norms. gamma_scale scales both (RESIDUAL_GAMMA for
        the last one of a residual branch)."""
        # Scales spread over about 2x between channels (log-normal), which gives per-layer
        # int8 quantization something to lose; shifts mostly positive (BETA_MEAN).
        gamma = np.exp(self.rng.normal(0.0, 0.35, channels)) * gamma_scale
        beta = self.rng.normal(BETA_MEAN, BETA_STD, channels) * gamma_scale
        inputs = [x, self.const(gamma, f"{name}.weight"), self.const(beta, f"{name}.bias"),
                  self.const(np.zeros(channels), f"{name}.running_mean"),
                  self.const(np.ones(channels), f"{name}.running_var")]
        out = self.node("BatchNormalization", inputs, name=name, epsilon=1e-5)
        self.batch_norms.append(self.nodes[-1].name)
        return out

    def activation(self, x, kind):
        if kind is None:
            return x
        if kind == "relu":
            return self.node("Relu", [x])
        if kind == "relu6":
            return self.clip(x, 0.0, 6.0)
        if kind == "silu":  # as torch.onnx exports nn.SiLU
            return self.node("Mul", [x, self.node("Sigmoid", [x])])
        if kind == "hardswish":
            return self.node("HardSwish", [x])
        if kind == "leaky":
            return self.node("LeakyRelu", [x], alpha=0.1)
        raise ValueError(kind)

    def clip(self, x, low, high):
        if self.opset < 11:
            return self.node("Clip", [x], min=float(low), max=float(high))
        return self.node("Clip", [x, self.const(np.float32(low), "clip.min"),
                                  self.const(np.float32(high), "clip.max")])

    def conv_bn_act(self, x, cin, cout, kernel, stride=1, group=1, act="relu", padding=None,
                    name="conv", gamma_scale=1.0):
        y = self.conv(x, cin, cout, kernel, stride, padding=padding, group=group, bias=False,
                      name=name)
        y = self.batch_norm(y, cout, name=f"{name}.bn", gamma_scale=gamma_scale)
        return self.activation(y, act)

    def max_pool(self, x, kernel, stride, pad):
        return self.node("MaxPool", [x], kernel_shape=[kernel, kernel], strides=[stride, stride],
                         pads=[pad] * 4)

    def classifier(self, x, channels, classes, name="fc"):
        """GlobalAveragePool -> Flatten -> Gemm, as torchvision classifiers export."""
        pooled = self.node("GlobalAveragePool", [x])
        flat = self.node("Flatten", [pooled], axis=1)
        weight = self.he_normal((classes, channels), channels, gain=1.0)
        bias = self.rng.normal(0.0, 0.05, classes)
        return self.node("Gemm", [flat, self.const(weight, f"{name}.weight"),
                                  self.const(bias, f"{name}.bias")],
                         name=name, alpha=1.0, beta=1.0, transB=1)

    def reshape(self, x, shape):
        return self.node("Reshape", [x, self.ints(shape, "shape")])

    def transpose(self, x, perm):
        return self.node("Transpose", [x], perm=list(perm))

    def resize(self, x, scale, mode="nearest", coordinate="asymmetric", nearest="floor"):
        """Resize by `scale` in H and W, in the form of this builder's opset."""
        scales = self.const(np.array([1.0, 1.0, scale, scale], np.float32), "scales")
        attributes = dict(mode=mode, coordinate_transformation_mode=coordinate)
        if mode == "nearest":
            attributes["nearest_mode"] = nearest
        if self.opset >= 13:
            return self.node("Resize", [x, "", scales], **attributes)
        roi = self.const(np.array([], np.float32), "roi")
        return self.node("Resize", [x, roi, scales], **attributes)

    def split(self, x, sizes, axis):
        if self.opset >= 13:
            return self.node("Split", [x, self.ints(sizes, "split")], outputs=len(sizes),
                             axis=axis)
        return self.node("Split", [x], outputs=len(sizes), axis=axis, split=list(sizes))

    # -- the model --------------------------------------------------------------------------

    def build(self, precisions=("fp32", "fp16", "int8"), description="",
              int8_min_cosine=None) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs,
                                  self.initializers)
        opset = helper.make_opsetid("", self.opset)
        # The lowest IR version that carries this opset, so that older ONNX readers (Debian's
        # libonnx 1.12 in rknn-convert) accept the file.
        model = helper.make_model(graph, opset_imports=[opset], producer_name="openrknn-tests",
                                  ir_version=helper.find_min_ir_version_for([opset]))
        model = fill_output_shapes(model)
        properties = {
            META_INPUTS: json.dumps([spec.to_json() for spec in self.input_specs]),
            META_PRECISIONS: ",".join(precisions),
            META_DESCRIPTION: description,
        }
        if int8_min_cosine is not None:
            properties[META_INT8_MIN_COSINE] = str(int8_min_cosine)
        helper.set_model_props(model, properties)
        onnx.checker.check_model(model, full_check=True)
        return model

    def sample_inputs(self, seed, count=1):
        rng = np.random.default_rng(seed)
        return [{spec.name: spec.sample(rng) for spec in self.input_specs} for _ in range(count)]


def fill_output_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    known = {value.name: value for value in inferred.graph.value_info}
    known.update({value.name: value for value in inferred.graph.output})
    for output in model.graph.output:
        if output.name in known and known[output.name].type.tensor_type.HasField("shape"):
            output.type.CopyFrom(known[output.name].type)
    return model


def _ancestors(model: onnx.ModelProto):
    """For each node name, the names of the nodes it depends on (transitively)."""
    producer = {}
    for node in model.graph.node:
        for output in node.output:
            producer[output] = node
    ancestors = {}
    for node in model.graph.node:  # nodes are in topological order
        found = set()
        for tensor in node.input:
            parent = producer.get(tensor)
            if parent is not None:
                found.add(parent.name)
                found |= ancestors[parent.name]
        ancestors[node.name] = found
    return ancestors


def _region(model: onnx.ModelProto, wanted, available):
    """The nodes needed to compute `wanted` from the `available` tensors (and constants), in
    graph order."""
    producer = {}
    for node in model.graph.node:
        for output in node.output:
            producer[output] = node
    needed = set()
    stack = [t for t in wanted if t not in available]
    while stack:
        node = producer.get(stack.pop())
        if node is None or node.name in needed:
            continue
        needed.add(node.name)
        stack.extend(t for t in node.input if t and t not in available)
    return [node for node in model.graph.node if node.name in needed]


def _region_model(model, nodes, inputs, outputs):
    """A model of `nodes` whose graph inputs are the (float) tensors `inputs`."""
    constants = {t.name: t for t in model.graph.initializer}
    used = {t for node in nodes for t in node.input}
    graph = helper.make_graph(
        nodes, "calibration",
        [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in inputs],
        [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in outputs],
        [constants[t] for t in sorted(used & constants.keys())])
    # Graph inputs other than float (the int64 of op_cast_from_int64) keep their declared type.
    declared = {value.name: value for value in model.graph.input}
    for value in graph.input:
        if value.name in declared:
            value.CopyFrom(declared[value.name])
    return helper.make_model(graph, opset_imports=list(model.opset_import),
                             ir_version=model.ir_version)


def calibrate_batch_norms(model: onnx.ModelProto, builder: GraphBuilder, samples=8, seed=1234):
    """Sets every BatchNormalization's running mean and variance to the statistics of its input
    over `samples` inputs of the model's own kind (plus a little jitter: trained statistics
    never match one batch exactly).

    Works in waves: a wave holds every BatchNormalization none of whose ancestors still waits.
    Each wave runs, in ONNX Runtime, only the nodes between the tensors earlier waves kept and
    the wave's BatchNormalization inputs, so the whole calibration costs about one forward pass
    per sample plus one small session per wave."""
    import onnxruntime

    pending = list(builder.batch_norms)
    if not pending:
        return model
    by_name = {node.name: node for node in model.graph.node}
    constants = {t.name: t for t in model.graph.initializer}
    ancestors = _ancestors(model)
    consumers = collections.defaultdict(set)
    for node in model.graph.node:
        for tensor in node.input:
            consumers[tensor].add(node.name)
    feeds = builder.sample_inputs(seed, samples)
    # Tensors computed so far, one array per sample.
    cache = {name: [feed[name] for feed in feeds] for name in feeds[0]}
    executed = set()
    jitter = np.random.default_rng(seed + 1)
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    while pending:
        pending_set = set(pending)
        wave = [n for n in pending if not (ancestors[n] & pending_set)]
        wanted = list(dict.fromkeys(by_name[n].input[0] for n in wave))
        nodes = _region(model, wanted, set(cache) | set(constants))
        region = {node.name for node in nodes}
        executed |= region
        produced = [t for node in nodes for t in node.output]
        # Keep what later waves read: outputs of this region that nodes outside it consume.
        keep = [t for t in produced if t in wanted or (consumers[t] - region - executed)]
        inputs = sorted({t for node in nodes for t in node.input
                         if t in cache and t not in constants})
        if nodes:
            session = onnxruntime.InferenceSession(
                _region_model(model, nodes, inputs, keep).SerializeToString(), options,
                providers=["CPUExecutionProvider"])
            results = [session.run(keep, {t: cache[t][i] for t in inputs})
                       for i in range(len(feeds))]
            for j, tensor in enumerate(keep):
                cache[tensor] = [result[j] for result in results]
        for name in wave:
            node = by_name[name]
            value = np.stack(cache[node.input[0]]).astype(np.float64)
            # Samples x N x C x ...: statistics over everything but the channel axis.
            axes = tuple(i for i in range(value.ndim) if i != 2)
            mean = value.mean(axis=axes)
            var = value.var(axis=axes)
            mean = mean + 0.02 * np.sqrt(var) * jitter.standard_normal(mean.shape)
            var = var * jitter.uniform(0.95, 1.05, var.shape) + 1e-4
            constants[node.input[3]].CopyFrom(
                numpy_helper.from_array(mean.astype(np.float32), node.input[3]))
            constants[node.input[4]].CopyFrom(
                numpy_helper.from_array(var.astype(np.float32), node.input[4]))
        pending = [n for n in pending if n not in set(wave)]
        # Drop tensors no node still to run reads.
        for tensor in list(cache):
            if not (consumers[tensor] - executed):
                del cache[tensor]
    return model
