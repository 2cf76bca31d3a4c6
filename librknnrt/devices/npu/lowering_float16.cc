#include "devices/npu/lowering_float16.h"

#include <cstring>

#include "core/dtype.h"
#include "graph/tensor_conversion.h"

namespace orknn::devices::npu {

bool is_float16_constant(const graph::Tensor& weights) {
  return weights.is_constant() && weights.data_type == DataType::kFloat16 &&
         !weights.quantization.is_quantized();
}

Status lower_float16_product(const graph::Node& node, const uint8_t* stored,
                             const graph::Tensor* bias,
                             const graph::FusedActivationAttributes& activation, int64_t group,
                             NpuLayer* layer) {
  const int64_t channels_out = layer->output.channels, channels_in = layer->input.channels;
  if (bias && (!bias->is_constant() || bias->quantization.is_quantized() ||
               (bias->data_type != DataType::kFloat16 && bias->data_type != DataType::kFloat32) ||
               bias->elements() != channels_out)) {
    return unimplemented(node.describe(), ": not on the NPU: bias '", bias->name,
                         "' is not a FLOAT16 or FLOAT32 constant of ", channels_out, " values");
  }
  using Kind = graph::FusedActivationAttributes::Kind;
  switch (activation.kind) {
    case Kind::kNone:
      break;
    case Kind::kRelu:
      layer->float_low = 0.0f;
      break;
    case Kind::kClip:
      layer->float_low = activation.minimum;
      layer->float_high = activation.maximum;
      break;
    case Kind::kSilu:
      layer->silu = true;
      break;
    case Kind::kLeakyRelu:
      return unimplemented(node.describe(), ": not on the NPU: a fused LeakyRelu is not a clamp");
  }
  const int64_t group_in = channels_in / group, group_out = channels_out / group;
  const int64_t taps = layer->kernel_height * layer->kernel_width;
  layer->depthwise = group > 1 && group == channels_in && group == channels_out;
  const int64_t dense_in = layer->depthwise ? 1 : channels_in;
  layer->half_weights.assign(static_cast<size_t>(channels_out * dense_in * taps), 0);
  for (int64_t oc = 0; oc < channels_out; ++oc) {
    const int64_t first_in = (oc / group_out) * group_in;
    for (int64_t ic = 0; ic < group_in; ++ic) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        Float16Bits half;
        std::memcpy(&half, stored + 2 * ((oc * group_in + ic) * taps + tap), 2);
        const int64_t dense_ic = layer->depthwise ? 0 : first_in + ic;
        layer->half_weights[static_cast<size_t>((oc * dense_in + dense_ic) * taps + tap)] = half;
      }
    }
  }
  layer->float_bias.assign(static_cast<size_t>(channels_out), 0.0f);
  if (bias) graph::decode_to_float(*bias, bias->constant_data, layer->float_bias.data());
  layer->kind = LayerKind::kConvolution;
  layer->macs = static_cast<uint64_t>(layer->output.height * layer->output.width * channels_out *
                                      group_in * taps);
  return ok_status();
}

}  // namespace orknn::devices::npu
