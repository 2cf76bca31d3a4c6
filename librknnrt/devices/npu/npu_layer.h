// What one graph node becomes on the NPU: a layer with its geometry, quantization and packed
// constants, before register programs are emitted (regcmd_builder.h). Lowering decides what the
// NPU claims: every int8 layer it returns runs bit-exact with the CPU int8 rules, every float16
// layer computes the arithmetic docs/npu.md section 6 defines; anything else is kUnimplemented
// and stays on the CPU.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "graph/graph.h"

namespace orknn::devices::npu {

enum class LayerKind {
  kConvolution,  // CNA + CORE + DPU: direct or depthwise int8 convolution, bias, requantize
  kAdd,          // DPU stand-alone with the element-wise operand (float-domain Add)
  kLookupTable,  // DPU stand-alone with the 256-entry LUT (Relu, Clip, Sigmoid, ...)
  kPooling,      // PPU: max / average / global average pooling
};

// One image's feature map; `batch` images of it lie one after another in a buffer.
struct FeatureShape {
  int64_t channels = 0, height = 0, width = 0;
  int64_t batch = 1;
};

struct NpuLayer {
  size_t node_index = 0;
  LayerKind kind = LayerKind::kConvolution;
  int32_t input_tensor = -1;
  int32_t operand_tensor = -1;  // kAdd
  int32_t output_tensor = -1;
  FeatureShape input, output;

  // kConvolution
  bool depthwise = false;
  int64_t kernel_height = 1, kernel_width = 1, stride_height = 1, stride_width = 1;
  int64_t dilation_height = 1, dilation_width = 1, pad_top = 0, pad_left = 0;
  std::vector<int8_t> weights;       // [oc][ic][kh][kw] (depthwise: [c][kh][kw]), dense groups
  std::vector<int32_t> folded_bias;  // bias - input_zero_point * sum(w), per output channel
  std::vector<float> multipliers;    // per output channel (silu: dequantization scales)
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t clamp_low = -128, clamp_high = 127;
  // A fused SiLU: acc * multipliers[c] back to real, SiLU in float, quantized once with
  // conv_output_scale and output_zero_point (docs/quantization.md 4.3), instead of the clamp.
  bool silu = false;

  // kAdd, kPooling (float-domain quantization)
  float input_scale = 1.0f, operand_scale = 1.0f, output_scale = 1.0f;
  int32_t operand_zero_point = 0;

  // kPooling
  bool maximum = false;
  bool count_include_pad = false;
  int64_t pad_bottom = 0, pad_right = 0;

  // kConvolution with an Add fused after it (fusion.cc): the requantized convolution result
  // (scale conv_output_scale, zero point output_zero_point) is added to `operand_tensor` in the
  // float domain and encoded with fused_output_scale / fused_output_zero_point.
  bool fused_add = false;
  float conv_output_scale = 1.0f;
  float fused_output_scale = 1.0f;
  int32_t fused_output_zero_point = 0;
  std::vector<size_t> fused_nodes;  // nodes folded into this layer (they report 0 cycles)

  // One input of a Concat along channels: a table copy (identity, or the requantization the
  // CPU's float domain would do) into the output at a 16-aligned channel offset.
  bool concat_part = false;
  int64_t output_channel_offset = 0;
  int64_t output_buffer_channels = 0;  // channels of the whole output tensor

  // any DPU layer: a table applied last (a fused or stand-alone activation)
  bool use_lut = false;
  std::array<int8_t, 256> lut{};

  // float16 layers: feature maps NC1HWC2 with C2 = 8, weights as half bits in `half_weights`
  // (same order as `weights`), an fp32 bias, fp32 accumulation, clamps in float. Quantization
  // fields and `lut` are unused.
  bool float16 = false;
  std::vector<uint16_t> half_weights;
  std::vector<float> float_bias;
  float float_low = -std::numeric_limits<float>::infinity();  // the Conv's fused Relu/Clip
  float float_high = std::numeric_limits<float>::infinity();
  float final_low = -std::numeric_limits<float>::infinity();  // a Relu/Clip applied last
  float final_high = std::numeric_limits<float>::infinity();
  bool has_final_clamp() const {
    return final_low != -std::numeric_limits<float>::infinity() ||
           final_high != std::numeric_limits<float>::infinity();
  }

  uint64_t macs = 0;
};

// Folds, within one segment, an Add into the Conv that feeds it and a table op into the Conv or
// Add that feeds it, when the intermediate tensor has no other reader.
void fuse_layers(const graph::Graph& graph, std::vector<NpuLayer>* layers);

// Lowers a node with the given tensor shapes, or kUnimplemented with the reason. A Concat
// becomes one layer per input; every other node one layer.
Result<std::vector<NpuLayer>> lower_node(const graph::Graph& graph, size_t node_index,
                                         const std::vector<graph::Shape>& shapes);

}  // namespace orknn::devices::npu
