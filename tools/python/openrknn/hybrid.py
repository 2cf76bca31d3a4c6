"""hybrid_quantization_step1(custom_hybrid=[[start, end], ...]): every node on a path from tensor
`start` to tensor `end` of the ONNX graph computes in float16. The converter's quantization
config (docs/rknn-convert.md, "Hybrid quantization") takes float16 layers by output tensor
name, so the sub-graphs become names in its custom_quantize_layers.

Names are those of the converted model: fusion removes some tensors (a Conv's output when a
Relu is fused into it), so only the sub-graph's tensors the config lists are used.
"""

from __future__ import annotations

import json
import re

from .api.calls import ApiError, describe, require

_EMPTY_LAYERS = "custom_quantize_layers: {}"
_PARAMETER_KEY = re.compile(r"^  (\S.*):\s*$")


def _graph_edges(model):
    producers, consumers = {}, {}
    for index, node in enumerate(model.graph.node):
        for name in node.output:
            if name:
                producers[name] = index
        for name in node.input:
            if name:
                consumers.setdefault(name, []).append(index)
    return producers, consumers


def _walk(starts, step):
    seen, pending = set(), list(starts)
    while pending:
        index = pending.pop()
        if index not in seen:
            seen.add(index)
            pending.extend(step(index))
    return seen


def subgraph_tensors(model_path, pairs):
    """Output tensors of every node on a path from each pair's start to its end."""
    try:
        import onnx
    except ImportError:
        raise ApiError("custom_hybrid needs the onnx package (pip install onnx)") from None
    require(isinstance(pairs, (list, tuple)) and pairs,
            "custom_hybrid must be a list of [input_name, output_name] pairs, got "
            + describe(pairs))
    model = onnx.load(model_path, load_external_data=False)
    nodes = model.graph.node
    producers, consumers = _graph_edges(model)
    tensors = set()
    for pair in pairs:
        require(isinstance(pair, (list, tuple)) and len(pair) == 2 and
                all(isinstance(name, str) for name in pair),
                f"custom_hybrid entry {describe(pair)} is not [input_name, output_name]")
        start, end = pair
        require(start in consumers, f"custom_hybrid: no node reads tensor '{start}'")
        require(end in producers, f"custom_hybrid: no node writes tensor '{end}'")
        downstream = _walk(consumers[start],
                           lambda i: [c for out in nodes[i].output for c in consumers.get(out, [])])
        upstream = _walk([producers[end]],
                         lambda i: [producers[t] for t in nodes[i].input if t in producers])
        between = downstream & upstream
        require(between, f"custom_hybrid: tensor '{end}' does not depend on '{start}'")
        for index in between:
            tensors.update(name for name in nodes[index].output if name)
    return tensors


def _unquote(key):
    if key.startswith('"'):
        return json.loads(key)
    if key.startswith("'") and key.endswith("'"):
        return key[1:-1].replace("''", "'")
    return key


def configured_tensors(config_text):
    """Tensor names under quantize_parameters of a config the converter wrote."""
    names, inside = [], False
    for line in config_text.splitlines():
        if line.startswith("quantize_parameters:"):
            inside = True
            continue
        if inside:
            match = _PARAMETER_KEY.match(line)
            if match:
                names.append(_unquote(match.group(1)))
            elif line and not line.startswith(" "):
                inside = False
    return names


def add_float16_layers(config_text, names):
    """The config with `names` listed as float16 in custom_quantize_layers."""
    require(_EMPTY_LAYERS in config_text,
            "the quantization config has an unexpected layout (no empty custom_quantize_layers)")
    entries = "".join(f"\n  {json.dumps(name)}: float16" for name in names)
    return config_text.replace(_EMPTY_LAYERS, "custom_quantize_layers:" + entries, 1)


def apply_float16_subgraphs(config_text, wanted):
    """Lists the tensors of `wanted` (from subgraph_tensors) that the config quantizes as
    float16 layers; returns the new text and the names."""
    chosen = [name for name in configured_tensors(config_text) if name in wanted]
    require(chosen, "custom_hybrid: none of the sub-graphs' tensors "
                    f"({', '.join(sorted(wanted))}) is quantized in the converted model")
    return add_float16_layers(config_text, chosen), chosen
