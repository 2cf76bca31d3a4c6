// Shapes and attribute validation of Conv, ConvTranspose, Gemm and MatMul (ONNX semantics,
// NCHW). The sliding-window attributes they share with pooling are read in spatial_window.cc.
//
// Fused activations. Our converter folds an activation that follows a Conv, ConvTranspose,
// Gemm or MatMul into that node, as attributes that ONNX does not define:
//   activation        string: "Relu", "Clip", "LeakyRelu" or "SiLU" (x * sigmoid(x));
//                     absent or "" means none
//   activation_min    float, Clip only, default: the lowest float (no lower bound)
//   activation_max    float, Clip only, default: the highest float (no upper bound)
//   activation_alpha  float, LeakyRelu only, default 0.01 (ONNX's LeakyRelu default)
// The activation applies to the node's result after the bias (Gemm: after beta * C). In int8
// kernels Relu and Clip become a clamp in the quantized domain (docs/quantization.md); LeakyRelu
// and SiLU are computed in float from the node's real-valued result before the output is
// quantized, so an int8 Conv + SiLU rounds once instead of twice.
#include <algorithm>
#include <string>

#include "graph/op_schema.h"
#include "graph/ops/convolution_attributes.h"
#include "graph/ops/node_error.h"

namespace orknn::graph {
namespace {

// The weights' spatial dimensions, checked against an optional kernel_shape attribute.
Result<std::vector<int64_t>> kernel_from_weights(const Node& node, const Shape& weights) {
  std::vector<int64_t> kernel(weights.begin() + 2, weights.end());
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (kernel[i] < 1) return node_error(node, "kernel dimension ", i, " is ", kernel[i]);
  }
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> declared,
                         node.ints_attribute("kernel_shape", kernel));
  if (declared != kernel) {
    return node_error(node, "kernel_shape ", shape_to_string(declared),
                      " differs from the weights' spatial shape ", shape_to_string(kernel));
  }
  return kernel;
}

Status check_conv_ranks(const Node& node, const Shape& input, const Shape& weights) {
  ORKNN_RETURN_IF_ERROR(check_spatial_input_rank(node, input));
  if (weights.size() != input.size()) {
    return node_error(node, "weights shape ", shape_to_string(weights),
                      " must have the rank of the input shape ", shape_to_string(input));
  }
  return ok_status();
}

Status check_bias(const Node& node, const Shape* bias, int64_t output_channels) {
  if (bias && (bias->size() != 1 || (*bias)[0] != output_channels)) {
    return node_error(node, "bias shape ", shape_to_string(*bias), " must be [", output_channels,
                      "] (one value per output channel)");
  }
  return ok_status();
}

}  // namespace

Result<FusedActivationAttributes> parse_fused_activation(const Node& node) {
  FusedActivationAttributes activation;
  ORKNN_ASSIGN_OR_RETURN(std::string kind, node.string_attribute("activation", ""));
  if (kind.empty()) {
    activation.kind = FusedActivationAttributes::Kind::kNone;
  } else if (kind == "Relu") {
    activation.kind = FusedActivationAttributes::Kind::kRelu;
  } else if (kind == "Clip") {
    activation.kind = FusedActivationAttributes::Kind::kClip;
    ORKNN_ASSIGN_OR_RETURN(activation.minimum,
                           node.float_attribute("activation_min", activation.minimum));
    ORKNN_ASSIGN_OR_RETURN(activation.maximum,
                           node.float_attribute("activation_max", activation.maximum));
  } else if (kind == "LeakyRelu") {
    activation.kind = FusedActivationAttributes::Kind::kLeakyRelu;
    ORKNN_ASSIGN_OR_RETURN(activation.alpha,
                           node.float_attribute("activation_alpha", activation.alpha));
  } else if (kind == "SiLU") {
    activation.kind = FusedActivationAttributes::Kind::kSilu;
  } else {
    return node_error(node, "fused activation '", kind,
                      "' is not one of Relu, Clip, LeakyRelu, SiLU");
  }
  return activation;
}

Result<ConvAttributes> parse_conv(const Node& node, const Shape& input, const Shape& weights,
                                  const Shape* bias) {
  ORKNN_RETURN_IF_ERROR(check_conv_ranks(node, input, weights));
  ConvAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(attributes.group, node.int_attribute("group", 1));
  const int64_t group = attributes.group;
  const int64_t channels = input[1], output_channels = weights[0];
  if (group < 1) return node_error(node, "group ", group, " must be >= 1");
  if (channels % group != 0) {
    return node_error(node, "group ", group, " does not divide input channels ", channels);
  }
  if (weights[1] * group != channels) {
    return node_error(node, "weights shape ", shape_to_string(weights), " has ", weights[1],
                      " input channels per group, expected ", channels / group, " (", channels,
                      " input channels, group ", group, ")");
  }
  if (output_channels < 1 || output_channels % group != 0) {
    return node_error(node, "group ", group, " does not divide output channels ", output_channels);
  }
  ORKNN_RETURN_IF_ERROR(check_bias(node, bias, output_channels));
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, kernel_from_weights(node, weights));
  const Shape spatial(input.begin() + 2, input.end());
  ORKNN_ASSIGN_OR_RETURN(attributes.window, forward_window(node, spatial, kernel, false));
  ORKNN_ASSIGN_OR_RETURN(attributes.activation, parse_fused_activation(node));
  attributes.output_shape = {input[0], output_channels};
  for (int64_t length : attributes.window.output) attributes.output_shape.push_back(length);
  return attributes;
}

Result<ConvAttributes> parse_conv_transpose(const Node& node, const Shape& input,
                                            const Shape& weights, const Shape* bias) {
  ORKNN_RETURN_IF_ERROR(check_conv_ranks(node, input, weights));
  ConvAttributes attributes;
  ORKNN_ASSIGN_OR_RETURN(attributes.group, node.int_attribute("group", 1));
  const int64_t group = attributes.group;
  const int64_t channels = input[1];
  if (group < 1) return node_error(node, "group ", group, " must be >= 1");
  if (channels % group != 0) {
    return node_error(node, "group ", group, " does not divide input channels ", channels);
  }
  if (weights[0] != channels) {
    return node_error(node, "weights shape ", shape_to_string(weights), " has ", weights[0],
                      " input channels, expected ", channels);
  }
  if (weights[1] < 1)
    return node_error(node, "weights shape ", shape_to_string(weights), " is empty");
  const int64_t output_channels = weights[1] * group;
  ORKNN_RETURN_IF_ERROR(check_bias(node, bias, output_channels));

  const size_t rank = input.size() - 2;
  SpatialWindow& window = attributes.window;
  ORKNN_ASSIGN_OR_RETURN(window.kernel, kernel_from_weights(node, weights));
  ORKNN_ASSIGN_OR_RETURN(window.strides, ints_per_axis(node, "strides", rank, 1, 1));
  ORKNN_ASSIGN_OR_RETURN(window.dilations, ints_per_axis(node, "dilations", rank, 1, 1));
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> output_padding,
                         ints_per_axis(node, "output_padding", rank, 0, 0));
  ORKNN_ASSIGN_OR_RETURN(AutoPad auto_pad, parse_auto_pad(node));
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, explicit_pads(node, rank, auto_pad));
  // output_shape may list the spatial lengths only or, in older exporters, all dimensions.
  ORKNN_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape,
                         node.ints_attribute("output_shape", {}));
  if (output_shape.size() == rank + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != rank) {
    return node_error(node, "'output_shape' has ", output_shape.size(), " values, expected ", rank);
  }

  window.pads_begin.resize(rank);
  window.pads_end.resize(rank);
  window.output.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t stride = window.strides[i], dilation = window.dilations[i];
    if (output_padding[i] >= std::max(stride, dilation)) {
      return node_error(node, "output_padding ", output_padding[i], " at spatial axis ", i,
                        " must be smaller than the stride ", stride, " or the dilation ", dilation);
    }
    if (input[i + 2] < 1)
      return node_error(node, "input spatial dimension ", i, " is ", input[i + 2]);
    const int64_t full =
        stride * (input[i + 2] - 1) + output_padding[i] + dilation * (window.kernel[i] - 1) + 1;
    int64_t& begin = window.pads_begin[i];
    int64_t& end = window.pads_end[i];
    int64_t& output = window.output[i];
    if (!output_shape.empty() || auto_pad == AutoPad::kSameUpper ||
        auto_pad == AutoPad::kSameLower) {
      // The padding follows from the requested length; a request beyond the full output leaves
      // the extra positions with the bias alone (padding never goes negative).
      output = !output_shape.empty() ? output_shape[i] : input[i + 2] * stride;
      if (output < 1) return node_error(node, "'output_shape' value ", output, " at axis ", i);
      split_padding(std::max<int64_t>(0, full - output), auto_pad == AutoPad::kSameUpper, &begin,
                    &end);
    } else {
      begin = auto_pad == AutoPad::kValid ? 0 : pads[i];
      end = auto_pad == AutoPad::kValid ? 0 : pads[i + rank];
      output = full - begin - end;
      if (output < 1) {
        return node_error(node, "pads ", begin, "+", end, " leave no output along spatial axis ", i,
                          " (full transposed length ", full, ")");
      }
    }
  }
  ORKNN_ASSIGN_OR_RETURN(attributes.activation, parse_fused_activation(node));
  attributes.output_shape = {input[0], output_channels};
  for (int64_t length : window.output) attributes.output_shape.push_back(length);
  return attributes;
}

Result<GemmAttributes> parse_gemm(const Node& node, const Shape& a, const Shape& b,
                                  const Shape* c) {
  GemmAttributes attributes;
  if (a.size() != 2) return node_error(node, "A shape ", shape_to_string(a), " must be 2-D");
  if (b.size() != 2) return node_error(node, "B shape ", shape_to_string(b), " must be 2-D");
  ORKNN_ASSIGN_OR_RETURN(attributes.alpha, node.float_attribute("alpha", 1.0f));
  ORKNN_ASSIGN_OR_RETURN(attributes.beta, node.float_attribute("beta", 1.0f));
  ORKNN_ASSIGN_OR_RETURN(int64_t transpose_a, node.int_attribute("transA", 0));
  ORKNN_ASSIGN_OR_RETURN(int64_t transpose_b, node.int_attribute("transB", 0));
  attributes.transpose_a = transpose_a != 0;
  attributes.transpose_b = transpose_b != 0;
  attributes.m = attributes.transpose_a ? a[1] : a[0];
  attributes.k = attributes.transpose_a ? a[0] : a[1];
  const int64_t b_depth = attributes.transpose_b ? b[1] : b[0];
  attributes.n = attributes.transpose_b ? b[0] : b[1];
  if (b_depth != attributes.k) {
    return node_error(node, "inner dimensions differ: A ", shape_to_string(a),
                      (attributes.transpose_a ? " (transposed)" : ""), " gives K = ", attributes.k,
                      ", B ", shape_to_string(b), (attributes.transpose_b ? " (transposed)" : ""),
                      " gives K = ", b_depth);
  }
  if (c) {
    attributes.c_rows = c->size() == 2 ? (*c)[0] : 1;
    attributes.c_columns = c->empty() ? 1 : c->back();
    if (c->size() > 2 || (attributes.c_rows != 1 && attributes.c_rows != attributes.m) ||
        (attributes.c_columns != 1 && attributes.c_columns != attributes.n)) {
      return node_error(node, "C shape ", shape_to_string(*c), " does not broadcast to ",
                        attributes.m, "x", attributes.n);
    }
  }
  ORKNN_ASSIGN_OR_RETURN(attributes.activation, parse_fused_activation(node));
  return attributes;
}

Result<MatMulAttributes> parse_matmul(const Node& node, const Shape& a, const Shape& b) {
  MatMulAttributes attributes;
  if (a.empty() || b.empty()) {
    return node_error(node, "operands must have rank >= 1, got ", shape_to_string(a), " and ",
                      shape_to_string(b));
  }
  const size_t a_rank = a.size(), b_rank = b.size();
  attributes.m = a_rank >= 2 ? a[a_rank - 2] : 1;
  attributes.k = a[a_rank - 1];
  const int64_t b_depth = b_rank >= 2 ? b[b_rank - 2] : b[0];
  attributes.n = b_rank >= 2 ? b[b_rank - 1] : 1;
  if (b_depth != attributes.k) {
    return node_error(node, "inner dimensions differ: A ", shape_to_string(a),
                      " has K = ", attributes.k, ", B ", shape_to_string(b), " has K = ", b_depth);
  }
  const Shape a_batch(a.begin(), a.end() - std::min<size_t>(a_rank, 2));
  const Shape b_batch(b.begin(), b.end() - std::min<size_t>(b_rank, 2));
  Result<Shape> batch = broadcast_shapes(a_batch, b_batch);
  if (!batch.ok()) {
    return node_error(node, "batch dimensions of ", shape_to_string(a), " and ", shape_to_string(b),
                      " do not broadcast: ", batch.status().message());
  }
  attributes.batch_shape = batch.value();
  const size_t batch_rank = attributes.batch_shape.size();
  attributes.a_batch = Shape(batch_rank - a_batch.size(), 1);
  attributes.a_batch.insert(attributes.a_batch.end(), a_batch.begin(), a_batch.end());
  attributes.b_batch = Shape(batch_rank - b_batch.size(), 1);
  attributes.b_batch.insert(attributes.b_batch.end(), b_batch.begin(), b_batch.end());
  attributes.output_shape = attributes.batch_shape;
  if (a_rank >= 2) attributes.output_shape.push_back(attributes.m);
  if (b_rank >= 2) attributes.output_shape.push_back(attributes.n);
  ORKNN_ASSIGN_OR_RETURN(attributes.activation, parse_fused_activation(node));
  return attributes;
}

namespace {

const Shape* optional_shape(const ShapeInferenceContext& ctx, size_t position) {
  return ctx.has_input(position) ? &ctx.input_shape(position) : nullptr;
}

Status conv_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(
      ConvAttributes attributes,
      parse_conv(ctx.node(), ctx.input_shape(0), ctx.input_shape(1), optional_shape(ctx, 2)));
  out_shapes->assign(1, attributes.output_shape);
  return ok_status();
}

Status conv_transpose_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(ConvAttributes attributes,
                         parse_conv_transpose(ctx.node(), ctx.input_shape(0), ctx.input_shape(1),
                                              optional_shape(ctx, 2)));
  out_shapes->assign(1, attributes.output_shape);
  return ok_status();
}

Status gemm_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(
      GemmAttributes attributes,
      parse_gemm(ctx.node(), ctx.input_shape(0), ctx.input_shape(1), optional_shape(ctx, 2)));
  out_shapes->assign(1, Shape{attributes.m, attributes.n});
  return ok_status();
}

Status matmul_shape(const ShapeInferenceContext& ctx, std::vector<Shape>* out_shapes) {
  ORKNN_ASSIGN_OR_RETURN(MatMulAttributes attributes,
                         parse_matmul(ctx.node(), ctx.input_shape(0), ctx.input_shape(1)));
  out_shapes->assign(1, attributes.output_shape);
  return ok_status();
}

}  // namespace

std::vector<OpSchema> convolution_op_schemas() {
  return {
      {"Conv", 2, 3, 1, 1, conv_shape},
      {"ConvTranspose", 2, 3, 1, 1, conv_transpose_shape},
      {"Gemm", 2, 3, 1, 1, gemm_shape},
      {"MatMul", 2, 2, 1, 1, matmul_shape},
  };
}

}  // namespace orknn::graph
