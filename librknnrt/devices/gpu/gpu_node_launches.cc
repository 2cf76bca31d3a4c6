#include "devices/gpu/gpu_node_launches.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "graph/ops/convolution_attributes.h"
#include "graph/ops/data_movement_attributes.h"
#include "graph/ops/elementwise_attributes.h"
#include "graph/ops/normalization_attributes.h"
#include "graph/ops/pooling_attributes.h"
#include "graph/ops/reduction_attributes.h"
#include "graph/ops/resize_attributes.h"
#include "reference/resize.h"

namespace orknn::devices::gpu {
namespace {

using graph::Shape;
using kernels::gpu::Activation;
using kernels::gpu::KernelArgument;
using kernels::gpu::KernelLaunch;
using kernels::gpu::NodeLaunches;

// What a builder sees: the node, its operands' shapes, and the description it fills.
class NodeBuilder {
 public:
  NodeBuilder(const graph::Graph& graph, const graph::Node& node, const std::vector<Shape>* shapes)
      : graph_(graph), node_(node), shapes_(shapes) {}

  const graph::Graph& graph() const { return graph_; }
  const graph::Node& node() const { return node_; }
  const Shape& shape_of(int32_t tensor) const {
    return shapes_ ? (*shapes_)[static_cast<size_t>(tensor)] : graph_.tensor(tensor).shape;
  }
  const Shape& input_shape(size_t position) const { return shape_of(node_.inputs[position]); }
  const Shape& output_shape(size_t position = 0) const { return shape_of(node_.outputs[position]); }
  int32_t input(size_t position) const { return node_.inputs[position]; }
  int32_t output(size_t position = 0) const { return node_.outputs[position]; }
  const graph::Tensor* operand(int position) const {
    return position >= 0 && node_.has_input(static_cast<size_t>(position))
               ? &graph_.tensor(node_.inputs[static_cast<size_t>(position)])
               : nullptr;
  }
  graph::NodeOperands operands() const {
    std::vector<const graph::Tensor*> tensors;
    std::vector<Shape> shapes;
    for (int32_t index : node_.inputs) {
      tensors.push_back(index < 0 ? nullptr : &graph_.tensor(index));
      shapes.push_back(index < 0 ? Shape{} : shape_of(index));
    }
    return graph::NodeOperands(node_, std::move(tensors), std::move(shapes));
  }
  // Marks input `position` as read on the device.
  void read_on_device(size_t position) { launches.device_inputs.push_back(input(position)); }

  template <typename... Parts>
  Status unsupported(const Parts&... parts) const {
    return unimplemented(node_.describe(), ": not on the GPU: ", parts...);
  }

  NodeLaunches launches;

 private:
  const graph::Graph& graph_;
  const graph::Node& node_;
  const std::vector<Shape>* shapes_;
};

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d) result *= shape[d];
  return result;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// The elements of a constant float32 or float16 tensor.
Result<std::vector<float>> constant_floats(const graph::Node& node, const graph::Tensor& tensor) {
  if (!tensor.is_constant() || tensor.quantization.is_quantized() ||
      (tensor.data_type != DataType::kFloat32 && tensor.data_type != DataType::kFloat16)) {
    return unimplemented(node.describe(), ": not on the GPU: operand '", tensor.name,
                         "' is not a float constant");
  }
  std::vector<float> values(static_cast<size_t>(tensor.elements()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (tensor.data_type == DataType::kFloat32) {
      std::memcpy(&values[i], tensor.constant_data + i * 4, 4);
    } else {
      Float16Bits bits;
      std::memcpy(&bits, tensor.constant_data + i * 2, 2);
      values[i] = half_to_float(bits);
    }
  }
  return values;
}

void set_fused_activation(KernelLaunch& launch, const graph::FusedActivationAttributes& fused) {
  Activation kind = Activation::kNone;
  float alpha = 0.0f, beta = 0.0f;
  switch (fused.kind) {
    case graph::FusedActivationAttributes::Kind::kNone:
      break;
    case graph::FusedActivationAttributes::Kind::kRelu:
      kind = Activation::kRelu;
      break;
    case graph::FusedActivationAttributes::Kind::kClip:
      kind = Activation::kClip;
      alpha = fused.minimum;
      beta = fused.maximum;
      break;
    case graph::FusedActivationAttributes::Kind::kLeakyRelu:
      kind = Activation::kLeakyRelu;
      alpha = fused.alpha;
      break;
    case graph::FusedActivationAttributes::Kind::kSilu:  // x * sigmoid(1 * x)
      kind = Activation::kSwish;
      alpha = 1.0f;
      break;
  }
  launch.arguments.push_back(KernelArgument::integer(static_cast<int32_t>(kind)));
  launch.arguments.push_back(KernelArgument::real(alpha));
  launch.arguments.push_back(KernelArgument::real(beta));
}

// ---- convolution family

// A 1-D or 2-D sliding window as the 2-D kernels take it (1-D: one row of height 1).
struct PlanarWindow {
  int64_t height = 1, width = 1, out_height = 1, out_width = 1;
  int64_t kernel_height = 1, kernel_width = 1, stride_height = 1, stride_width = 1;
  int64_t dilation_height = 1, dilation_width = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

Result<PlanarWindow> planar_window(const NodeBuilder& b, const Shape& x,
                                   const graph::SpatialWindow& window) {
  if (x.size() != 4 && x.size() != 3) {
    return b.unsupported("only 1-D and 2-D windows, not rank ", x.size());
  }
  const bool one_d = x.size() == 3;
  // Axis 0 is the row axis: absent (1, or no padding) in 1-D.
  auto at = [&](const std::vector<int64_t>& values, size_t axis, int64_t one_d_row) {
    return one_d ? (axis == 0 ? one_d_row : values[0]) : values[axis];
  };
  PlanarWindow planar;
  planar.height = one_d ? 1 : x[2];
  planar.width = one_d ? x[2] : x[3];
  planar.out_height = at(window.output, 0, 1);
  planar.out_width = at(window.output, 1, 1);
  planar.kernel_height = at(window.kernel, 0, 1);
  planar.kernel_width = at(window.kernel, 1, 1);
  planar.stride_height = at(window.strides, 0, 1);
  planar.stride_width = at(window.strides, 1, 1);
  planar.dilation_height = at(window.dilations, 0, 1);
  planar.dilation_width = at(window.dilations, 1, 1);
  planar.pad_top = at(window.pads_begin, 0, 0);
  planar.pad_left = at(window.pads_begin, 1, 0);
  planar.pad_bottom = at(window.pads_end, 0, 0);
  planar.pad_right = at(window.pads_end, 1, 0);
  return planar;
}

struct MatrixLayout {
  int64_t rows = 1, columns = 1, depth = 1;
  int64_t a_row_stride = 0, a_depth_stride = 1, b_depth_stride = 0, b_column_stride = 1;
  int64_t c_row_stride = 0, c_column_stride = 0;
  bool has_c = false;
  Shape batch_shape;
  std::vector<int64_t> a_batch_strides, b_batch_strides;
};

// A x B (+ C) for the tensors a, b, c (c unused unless layout.has_c).
void add_matmul_launch(NodeBuilder& b, const MatrixLayout& layout, int32_t a, int32_t b_tensor,
                       int32_t c, float alpha, float beta,
                       const graph::FusedActivationAttributes& activation) {
  std::vector<int64_t> geometry = {layout.rows,
                                   layout.columns,
                                   layout.depth,
                                   layout.a_row_stride,
                                   layout.a_depth_stride,
                                   layout.b_depth_stride,
                                   layout.b_column_stride,
                                   layout.c_row_stride,
                                   layout.c_column_stride,
                                   layout.has_c ? 1 : 0,
                                   static_cast<int64_t>(layout.batch_shape.size())};
  geometry.insert(geometry.end(), layout.batch_shape.begin(), layout.batch_shape.end());
  geometry.insert(geometry.end(), layout.a_batch_strides.begin(), layout.a_batch_strides.end());
  geometry.insert(geometry.end(), layout.b_batch_strides.begin(), layout.b_batch_strides.end());
  const size_t geometry_buffer = b.launches.add_int_parameters(geometry);
  KernelLaunch& launch = b.launches.add_launch("matmul");
  launch.arguments = {KernelArgument::tensor(a),
                      KernelArgument::tensor(b_tensor),
                      KernelArgument::tensor(c),
                      KernelArgument::tensor(b.output()),
                      KernelArgument::parameters(geometry_buffer),
                      KernelArgument::real(alpha),
                      KernelArgument::real(beta)};
  set_fused_activation(launch, activation);
  launch.dimensions = 3;
  launch.global[0] = static_cast<size_t>(layout.columns);
  // Each work item computes kMatmulRows rows (MATMUL_ROWS in convolution.cl).
  constexpr int64_t kMatmulRows = 4;
  launch.global[1] = static_cast<size_t>((layout.rows + kMatmulRows - 1) / kMatmulRows);
  launch.global[2] = static_cast<size_t>(product(layout.batch_shape, 0, layout.batch_shape.size()));
}

Status describe_conv(NodeBuilder& b) {
  const graph::Tensor* bias = b.operand(2);
  Shape bias_shape = bias ? b.input_shape(2) : Shape{};
  ORKNN_ASSIGN_OR_RETURN(graph::ConvAttributes attributes,
                         graph::parse_conv(b.node(), b.input_shape(0), b.input_shape(1),
                                           bias ? &bias_shape : nullptr));
  const Shape& x = b.input_shape(0);
  const graph::SpatialWindow& window = attributes.window;
  ORKNN_ASSIGN_OR_RETURN(PlanarWindow planar, planar_window(b, x, window));
  const int64_t height = planar.height, width = planar.width;
  const int64_t out_height = planar.out_height, out_width = planar.out_width;
  const int64_t out_channels = b.input_shape(1)[0];
  b.read_on_device(0);
  b.read_on_device(1);
  if (bias) b.read_on_device(2);
  const bool pointwise =
      attributes.group == 1 && graph::element_count(b.input_shape(1)) == out_channels * x[1];
  bool unit_window = true;
  for (size_t axis = 0; axis < window.kernel.size(); ++axis) {
    unit_window = unit_window && window.strides[axis] == 1 && window.pads_begin[axis] == 0 &&
                  window.pads_end[axis] == 0;
  }
  if (pointwise && unit_window) {
    // A 1x1 convolution is weights [M, C] x input [C, H*W] per image: the matrix kernel.
    MatrixLayout layout;
    layout.rows = out_channels;
    layout.columns = height * width;
    layout.depth = x[1];
    layout.a_row_stride = x[1];
    layout.b_depth_stride = height * width;
    layout.has_c = bias != nullptr;
    layout.c_row_stride = 1;
    layout.batch_shape = {x[0]};
    layout.a_batch_strides = {0};
    layout.b_batch_strides = {x[1] * height * width};
    add_matmul_launch(b, layout, b.input(1), b.input(0), bias ? b.input(2) : b.input(0), 1.0f, 1.0f,
                      attributes.activation);
    return ok_status();
  }
  const size_t geometry = b.launches.add_int_parameters(
      {x[1], height, width, out_channels, out_height, out_width, planar.kernel_height,
       planar.kernel_width, planar.stride_height, planar.stride_width, planar.dilation_height,
       planar.dilation_width, planar.pad_top, planar.pad_left, attributes.group, bias ? 1 : 0});
  KernelLaunch& launch = b.launches.add_launch("conv2d");
  launch.arguments = {KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.input(1)),
                      KernelArgument::tensor(bias ? b.input(2) : b.input(1)),
                      KernelArgument::tensor(b.output()), KernelArgument::parameters(geometry)};
  set_fused_activation(launch, attributes.activation);
  launch.dimensions = 3;
  launch.global[0] = static_cast<size_t>(out_height * out_width);
  launch.global[1] = static_cast<size_t>(out_channels);
  launch.global[2] = static_cast<size_t>(x[0]);
  return ok_status();
}

Status describe_gemm(NodeBuilder& b) {
  const graph::Tensor* c = b.operand(2);
  Shape c_shape = c ? b.input_shape(2) : Shape{};
  ORKNN_ASSIGN_OR_RETURN(
      graph::GemmAttributes attributes,
      graph::parse_gemm(b.node(), b.input_shape(0), b.input_shape(1), c ? &c_shape : nullptr));
  MatrixLayout layout;
  layout.rows = attributes.m;
  layout.columns = attributes.n;
  layout.depth = attributes.k;
  layout.a_row_stride = attributes.transpose_a ? 1 : attributes.k;
  layout.a_depth_stride = attributes.transpose_a ? attributes.m : 1;
  layout.b_depth_stride = attributes.transpose_b ? 1 : attributes.n;
  layout.b_column_stride = attributes.transpose_b ? attributes.k : 1;
  layout.has_c = c != nullptr;
  if (c) {
    layout.c_row_stride = attributes.c_rows == 1 ? 0 : attributes.c_columns;
    layout.c_column_stride = attributes.c_columns == 1 ? 0 : 1;
  }
  b.read_on_device(0);
  b.read_on_device(1);
  if (c) b.read_on_device(2);
  add_matmul_launch(b, layout, b.input(0), b.input(1), c ? b.input(2) : b.input(0),
                    attributes.alpha, attributes.beta, attributes.activation);
  return ok_status();
}

// Strides of a broadcast batch: 0 where the operand's dimension is 1.
std::vector<int64_t> batch_strides(const Shape& padded_batch, int64_t matrix_elements) {
  std::vector<int64_t> strides(padded_batch.size(), 0);
  int64_t stride = matrix_elements;
  for (size_t d = padded_batch.size(); d-- > 0;) {
    strides[d] = padded_batch[d] == 1 ? 0 : stride;
    stride *= padded_batch[d];
  }
  return strides;
}

Status describe_matmul(NodeBuilder& b) {
  ORKNN_ASSIGN_OR_RETURN(graph::MatMulAttributes attributes,
                         graph::parse_matmul(b.node(), b.input_shape(0), b.input_shape(1)));
  const bool b_is_vector = b.input_shape(1).size() == 1;
  MatrixLayout layout;
  layout.rows = attributes.m;
  layout.columns = attributes.n;
  layout.depth = attributes.k;
  layout.a_row_stride = attributes.k;
  layout.a_depth_stride = 1;
  layout.b_depth_stride = b_is_vector ? 1 : attributes.n;
  layout.b_column_stride = b_is_vector ? 0 : 1;
  layout.batch_shape = attributes.batch_shape;
  layout.a_batch_strides = batch_strides(attributes.a_batch, attributes.m * attributes.k);
  layout.b_batch_strides = batch_strides(attributes.b_batch, attributes.k * attributes.n);
  b.read_on_device(0);
  b.read_on_device(1);
  add_matmul_launch(b, layout, b.input(0), b.input(1), b.input(0), 1.0f, 0.0f,
                    attributes.activation);
  return ok_status();
}

// ---- element-wise

Status describe_binary(NodeBuilder& b, kernels::gpu::BinaryOperation operation) {
  const Shape& out = b.output_shape();
  const size_t rank = out.size();
  std::vector<int64_t> geometry;
  const bool same_shapes = b.input_shape(0) == out && b.input_shape(1) == out;
  if (same_shapes) {
    geometry = {1, graph::element_count(out), 1, 1};
  } else {
    geometry.push_back(static_cast<int64_t>(rank));
    geometry.insert(geometry.end(), out.begin(), out.end());
    for (size_t position = 0; position < 2; ++position) {
      Shape padded = b.input_shape(position);
      if (padded.size() > rank) return b.unsupported("operand rank above the output's");
      padded.insert(padded.begin(), rank - padded.size(), 1);
      std::vector<int64_t> strides = contiguous_strides(padded);
      for (size_t d = 0; d < rank; ++d) {
        if (padded[d] == 1) strides[d] = 0;
      }
      geometry.insert(geometry.end(), strides.begin(), strides.end());
    }
  }
  const size_t geometry_buffer = b.launches.add_int_parameters(geometry);
  b.read_on_device(0);
  b.read_on_device(1);
  KernelLaunch& launch = b.launches.add_launch("binary_broadcast");
  const int64_t count = graph::element_count(out);
  launch.arguments = {
      KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.input(1)),
      KernelArgument::tensor(b.output()), KernelArgument::parameters(geometry_buffer),
      KernelArgument::integer(count),     KernelArgument::integer(static_cast<int32_t>(operation))};
  launch.global[0] = static_cast<size_t>(count);
  return ok_status();
}

Status add_unary(NodeBuilder& b, Activation kind, float alpha, float beta) {
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("unary");
  const int64_t count = graph::element_count(b.output_shape());
  launch.arguments = {
      KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.output()),
      KernelArgument::integer(count),     KernelArgument::integer(static_cast<int32_t>(kind)),
      KernelArgument::real(alpha),        KernelArgument::real(beta)};
  launch.global[0] = static_cast<size_t>(count);
  return ok_status();
}

Status describe_clip(NodeBuilder& b) {
  ORKNN_ASSIGN_OR_RETURN(graph::ClipAttributes attributes, graph::parse_clip_attributes(b.node()));
  // Bounds given as inputs are read once here, so they must be constants.
  for (size_t position : {size_t{1}, size_t{2}}) {
    const bool from_input =
        position == 1 ? attributes.minimum_from_input : attributes.maximum_from_input;
    if (!from_input) continue;
    ORKNN_ASSIGN_OR_RETURN(std::vector<float> bound,
                           constant_floats(b.node(), *b.operand(static_cast<int>(position))));
    if (bound.size() != 1) return b.unsupported("a Clip bound that is not one value");
    (position == 1 ? attributes.minimum : attributes.maximum) = bound[0];
  }
  return add_unary(b, Activation::kClip, attributes.minimum, attributes.maximum);
}

Status describe_unary(NodeBuilder& b, Activation kind) {
  ORKNN_ASSIGN_OR_RETURN(graph::UnaryAttributes attributes,
                         graph::parse_unary_attributes(b.node()));
  return add_unary(b, kind, attributes.alpha, attributes.beta);
}

Status describe_batch_normalization(NodeBuilder& b) {
  const Shape& x = b.input_shape(0);
  if (x.size() < 2 || b.node().outputs.size() != 1) {
    return b.unsupported("BatchNormalization needs rank >= 2 and one output");
  }
  ORKNN_ASSIGN_OR_RETURN(
      graph::NormalizationAttributes attributes,
      graph::parse_normalization_attributes(b.node(), static_cast<int64_t>(x.size())));
  std::vector<float> parameters[4];
  for (int position = 1; position <= 4; ++position) {
    ORKNN_ASSIGN_OR_RETURN(parameters[position - 1],
                           constant_floats(b.node(), *b.operand(position)));
    if (static_cast<int64_t>(parameters[position - 1].size()) != x[1]) {
      return b.unsupported("BatchNormalization operand ", position, " is not per channel");
    }
  }
  // scale * (x - mean) / sqrt(variance + epsilon) + bias as x * factor + shift.
  std::vector<float> factor(static_cast<size_t>(x[1])), shift(factor.size());
  for (size_t c = 0; c < factor.size(); ++c) {
    factor[c] = parameters[0][c] / std::sqrt(parameters[3][c] + attributes.epsilon);
    shift[c] = parameters[1][c] - parameters[2][c] * factor[c];
  }
  const size_t factor_buffer = b.launches.add_float_parameters(factor);
  const size_t shift_buffer = b.launches.add_float_parameters(shift);
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("channel_affine");
  const int64_t count = graph::element_count(x);
  launch.arguments = {KernelArgument::tensor(b.input(0)),
                      KernelArgument::tensor(b.output()),
                      KernelArgument::parameters(factor_buffer),
                      KernelArgument::parameters(shift_buffer),
                      KernelArgument::integer(count),
                      KernelArgument::integer(x[1]),
                      KernelArgument::integer(product(x, 2, x.size()))};
  launch.global[0] = static_cast<size_t>(count);
  return ok_status();
}

// ---- pooling

Status add_pool_launch(NodeBuilder& b, const std::vector<int64_t>& window_geometry, int64_t planes,
                       int64_t out_height, int64_t out_width) {
  const size_t geometry = b.launches.add_int_parameters(window_geometry);
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("pool2d");
  launch.arguments = {KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.output()),
                      KernelArgument::parameters(geometry)};
  launch.dimensions = 3;
  launch.global[0] = static_cast<size_t>(out_width);
  launch.global[1] = static_cast<size_t>(out_height);
  launch.global[2] = static_cast<size_t>(planes);
  return ok_status();
}

Status describe_pool(NodeBuilder& b) {
  if (b.node().outputs.size() > 1) return b.unsupported("MaxPool's Indices output");
  ORKNN_ASSIGN_OR_RETURN(graph::PoolAttributes attributes,
                         graph::parse_pool(b.node(), b.input_shape(0)));
  const Shape& x = b.input_shape(0);
  ORKNN_ASSIGN_OR_RETURN(PlanarWindow w, planar_window(b, x, attributes.window));
  const kernels::gpu::PoolMode mode = b.node().op_type == "MaxPool"
                                          ? kernels::gpu::PoolMode::kMax
                                          : kernels::gpu::PoolMode::kAverage;
  return add_pool_launch(
      b,
      {w.height, w.width, w.out_height, w.out_width, w.kernel_height, w.kernel_width,
       w.stride_height, w.stride_width, w.dilation_height, w.dilation_width, w.pad_top, w.pad_left,
       w.pad_bottom, w.pad_right, static_cast<int64_t>(mode), attributes.count_include_pad ? 1 : 0},
      x[0] * x[1], w.out_height, w.out_width);
}

Status describe_global_pool(NodeBuilder& b) {
  const Shape& x = b.input_shape(0);
  if (x.size() < 3) return b.unsupported("global pooling of rank ", x.size());
  const int64_t plane = product(x, 2, x.size());
  const kernels::gpu::PoolMode mode = b.node().op_type == "GlobalMaxPool"
                                          ? kernels::gpu::PoolMode::kMax
                                          : kernels::gpu::PoolMode::kAverage;
  // One window over the whole plane, seen as one row.
  return add_pool_launch(
      b, {1, plane, 1, 1, 1, plane, 1, 1, 1, 1, 0, 0, 0, 0, static_cast<int64_t>(mode), 0},
      x[0] * x[1], 1, 1);
}

// ---- normalization across an axis, data movement, reduction, resize

Status describe_softmax(NodeBuilder& b) {
  const Shape& x = b.input_shape(0);
  ORKNN_ASSIGN_OR_RETURN(
      graph::NormalizationAttributes attributes,
      graph::parse_normalization_attributes(b.node(), static_cast<int64_t>(x.size())));
  const size_t axis = static_cast<size_t>(attributes.axis);
  const int64_t outer = product(x, 0, axis);
  const int64_t channels =
      attributes.legacy_coerce_2d ? product(x, axis, x.size()) : (x.empty() ? 1 : x[axis]);
  const int64_t inner = attributes.legacy_coerce_2d ? 1 : product(x, axis + 1, x.size());
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("softmax");
  launch.arguments = {KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.output()),
                      KernelArgument::integer(outer), KernelArgument::integer(channels),
                      KernelArgument::integer(inner)};
  launch.global[0] = static_cast<size_t>(outer * inner);
  return ok_status();
}

Status describe_concat(NodeBuilder& b) {
  ORKNN_ASSIGN_OR_RETURN(graph::ConcatAttributes attributes, graph::parse_concat(b.operands()));
  const size_t axis = static_cast<size_t>(attributes.axis);
  const Shape& out = attributes.output_shape;
  const int64_t inner = product(out, axis + 1, out.size());
  const int64_t output_block = out[axis] * inner;
  int64_t offset = 0;
  for (size_t position = 0; position < b.node().inputs.size(); ++position) {
    const Shape& in = b.input_shape(position);
    const int64_t input_block = in[axis] * inner;
    const int64_t count = graph::element_count(in);
    b.read_on_device(position);
    KernelLaunch& launch = b.launches.add_launch("copy_slab");
    launch.arguments = {KernelArgument::tensor(b.input(position)),
                        KernelArgument::tensor(b.output()),
                        KernelArgument::integer(count),
                        KernelArgument::integer(input_block),
                        KernelArgument::integer(output_block),
                        KernelArgument::integer(offset)};
    launch.global[0] = static_cast<size_t>(count);
    offset += input_block;
  }
  return ok_status();
}

void add_gather(NodeBuilder& b, int64_t base, const Shape& out,
                const std::vector<int64_t>& input_strides) {
  std::vector<int64_t> geometry = {static_cast<int64_t>(out.size()), base};
  geometry.insert(geometry.end(), out.begin(), out.end());
  geometry.insert(geometry.end(), input_strides.begin(), input_strides.end());
  const size_t geometry_buffer = b.launches.add_int_parameters(geometry);
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("gather_strided");
  const int64_t count = graph::element_count(out);
  launch.arguments = {KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.output()),
                      KernelArgument::parameters(geometry_buffer), KernelArgument::integer(count)};
  launch.global[0] = static_cast<size_t>(count);
}

Status describe_transpose(NodeBuilder& b) {
  ORKNN_ASSIGN_OR_RETURN(graph::TransposeAttributes attributes,
                         graph::parse_transpose(b.operands()));
  const std::vector<int64_t> strides = contiguous_strides(b.input_shape(0));
  std::vector<int64_t> permuted;
  for (int64_t axis : attributes.perm) permuted.push_back(strides[static_cast<size_t>(axis)]);
  add_gather(b, 0, attributes.output_shape, permuted);
  return ok_status();
}

Status describe_slice(NodeBuilder& b) {
  ORKNN_ASSIGN_OR_RETURN(graph::SliceAttributes attributes, graph::parse_slice(b.operands()));
  std::vector<int64_t> strides = contiguous_strides(b.input_shape(0));
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += attributes.starts[d] * strides[d];
    strides[d] *= attributes.steps[d];
  }
  add_gather(b, base, attributes.output_shape, strides);
  return ok_status();
}

Status describe_shape_only(NodeBuilder& b) {
  b.read_on_device(0);
  b.launches.add_copy(b.input(0), b.output());
  return ok_status();
}

Status describe_reduce(NodeBuilder& b, kernels::gpu::ReduceOperation operation) {
  const Shape& x = b.input_shape(0);
  ORKNN_ASSIGN_OR_RETURN(
      graph::ReduceAttributes attributes,
      graph::parse_reduce_attributes(b.node(), b.operand(1), static_cast<int64_t>(x.size())));
  std::vector<int64_t> kept_dims, reduced_dims;
  int64_t reduced_count = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    kept_dims.push_back(attributes.reduced[d] ? 1 : x[d]);
    reduced_dims.push_back(attributes.reduced[d] ? x[d] : 1);
    if (attributes.reduced[d]) reduced_count *= x[d];
  }
  if (reduced_count == 0) return b.unsupported("a reduction over an empty axis");
  std::vector<int64_t> geometry = {static_cast<int64_t>(x.size()), reduced_count};
  geometry.insert(geometry.end(), kept_dims.begin(), kept_dims.end());
  geometry.insert(geometry.end(), reduced_dims.begin(), reduced_dims.end());
  const std::vector<int64_t> strides = contiguous_strides(x);
  geometry.insert(geometry.end(), strides.begin(), strides.end());
  const size_t geometry_buffer = b.launches.add_int_parameters(geometry);
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("reduce");
  const int64_t count = graph::element_count(b.output_shape());
  launch.arguments = {KernelArgument::tensor(b.input(0)), KernelArgument::tensor(b.output()),
                      KernelArgument::parameters(geometry_buffer), KernelArgument::integer(count),
                      KernelArgument::integer(static_cast<int32_t>(operation))};
  launch.global[0] = static_cast<size_t>(count);
  return ok_status();
}

kernels::reference::CoordinateTransform reference_transform(
    graph::ResizeAttributes::Transform transform) {
  using Transform = graph::ResizeAttributes::Transform;
  using Reference = kernels::reference::CoordinateTransform;
  if (transform == Transform::kPytorchHalfPixel) return Reference::kPytorchHalfPixel;
  if (transform == Transform::kAlignCorners) return Reference::kAlignCorners;
  if (transform == Transform::kAsymmetric) return Reference::kAsymmetric;
  return Reference::kHalfPixel;
}

kernels::reference::NearestRounding reference_rounding(graph::ResizeAttributes::Rounding rounding) {
  using Rounding = graph::ResizeAttributes::Rounding;
  using Reference = kernels::reference::NearestRounding;
  if (rounding == Rounding::kRoundPreferCeil) return Reference::kRoundPreferCeil;
  if (rounding == Rounding::kFloor) return Reference::kFloor;
  if (rounding == Rounding::kCeil) return Reference::kCeil;
  return Reference::kRoundPreferFloor;
}

Status describe_resize(NodeBuilder& b) {
  using Attributes = graph::ResizeAttributes;
  ORKNN_ASSIGN_OR_RETURN(Attributes attributes,
                         graph::parse_resize(b.node(), b.input_shape(0),
                                             b.operand(graph::resize_roi_position(b.node())),
                                             b.operand(graph::resize_scales_position(b.node())),
                                             b.operand(graph::resize_sizes_position(b.node()))));
  if (attributes.mode == Attributes::Mode::kCubic) return b.unsupported("cubic resizing");
  // Antialiasing, cropping, extrapolation and the newer coordinate transforms go to the CPU's
  // general resampler; the GPU runs the common cases.
  if (!attributes.common_case) return b.unsupported("this Resize variant");
  const Shape& x = b.input_shape(0);
  const Shape& out = attributes.output_shape;
  if (x.size() < 2) return b.unsupported("Resize of rank ", x.size());
  for (size_t d = 0; d + 2 < x.size(); ++d) {
    if (x[d] != out[d]) return b.unsupported("resizing other than the last two axes");
  }
  kernels::reference::ResizeParams params;
  params.input_shape = x;
  params.output_shape = out;
  params.scales = attributes.scales;
  params.transform = reference_transform(attributes.transform);
  params.rounding = reference_rounding(attributes.rounding);
  const bool linear = attributes.mode == Attributes::Mode::kLinear;
  // Per output row and column: low and high taps and the high tap's weight, in the reference's
  // arithmetic so that the GPU samples exactly the same places.
  std::vector<int64_t> low[2], high[2];
  std::vector<float> weights;
  for (size_t axis = 0; axis < 2; ++axis) {
    const size_t dimension = x.size() - 2 + axis;
    const int64_t length = x[dimension];
    for (int64_t index = 0; index < out[dimension]; ++index) {
      if (!linear) {
        const int64_t nearest = kernels::reference::nearest_index(params, dimension, index);
        low[axis].push_back(nearest);
        high[axis].push_back(nearest);
        weights.push_back(0.0f);
        continue;
      }
      float coordinate = kernels::reference::original_coordinate(
          params.transform, index, params.scales[dimension], length, out[dimension]);
      coordinate = std::min(std::max(coordinate, 0.0f), static_cast<float>(length - 1));
      const int64_t below = static_cast<int64_t>(coordinate);
      low[axis].push_back(below);
      high[axis].push_back(std::min(below + 1, length - 1));
      weights.push_back(coordinate - static_cast<float>(below));
    }
  }
  std::vector<int64_t> taps = low[0];
  taps.insert(taps.end(), high[0].begin(), high[0].end());
  taps.insert(taps.end(), low[1].begin(), low[1].end());
  taps.insert(taps.end(), high[1].begin(), high[1].end());
  const size_t taps_buffer = b.launches.add_int_parameters(taps);
  const size_t weights_buffer = b.launches.add_float_parameters(weights);
  const int64_t height = x[x.size() - 2], width = x[x.size() - 1];
  const int64_t out_height = out[out.size() - 2], out_width = out[out.size() - 1];
  b.read_on_device(0);
  KernelLaunch& launch = b.launches.add_launch("resize2d");
  launch.arguments = {
      KernelArgument::tensor(b.input(0)),      KernelArgument::tensor(b.output()),
      KernelArgument::parameters(taps_buffer), KernelArgument::parameters(weights_buffer),
      KernelArgument::integer(height),         KernelArgument::integer(width),
      KernelArgument::integer(out_height),     KernelArgument::integer(out_width)};
  launch.dimensions = 3;
  launch.global[0] = static_cast<size_t>(out_width);
  launch.global[1] = static_cast<size_t>(out_height);
  launch.global[2] = static_cast<size_t>(product(x, 0, x.size() - 2));
  return ok_status();
}

Status describe_by_type(NodeBuilder& b) {
  using kernels::gpu::BinaryOperation;
  using kernels::gpu::ReduceOperation;
  const std::string& type = b.node().op_type;
  if (type == "Conv") return describe_conv(b);
  if (type == "Gemm") return describe_gemm(b);
  if (type == "MatMul") return describe_matmul(b);
  if (type == "Add") return describe_binary(b, BinaryOperation::kAdd);
  if (type == "Sub") return describe_binary(b, BinaryOperation::kSubtract);
  if (type == "Mul") return describe_binary(b, BinaryOperation::kMultiply);
  if (type == "Div") return describe_binary(b, BinaryOperation::kDivide);
  if (type == "Pow") return describe_binary(b, BinaryOperation::kPower);
  if (type == "PRelu") return describe_binary(b, BinaryOperation::kPRelu);
  if (type == "Clip") return describe_clip(b);
  if (type == "Relu") return describe_unary(b, Activation::kRelu);
  if (type == "LeakyRelu") return describe_unary(b, Activation::kLeakyRelu);
  if (type == "Sigmoid") return describe_unary(b, Activation::kSigmoid);
  if (type == "HardSigmoid") return describe_unary(b, Activation::kHardSigmoid);
  if (type == "HardSwish") return describe_unary(b, Activation::kHardSwish);
  if (type == "Swish" || type == "SiLU") return describe_unary(b, Activation::kSwish);
  if (type == "Tanh") return describe_unary(b, Activation::kTanh);
  if (type == "Exp") return describe_unary(b, Activation::kExp);
  if (type == "Sqrt") return describe_unary(b, Activation::kSqrt);
  if (type == "Neg") return describe_unary(b, Activation::kNeg);
  if (type == "Abs") return describe_unary(b, Activation::kAbs);
  if (type == "Reciprocal") return describe_unary(b, Activation::kReciprocal);
  if (type == "BatchNormalization") return describe_batch_normalization(b);
  if (type == "MaxPool" || type == "AveragePool") return describe_pool(b);
  if (type == "GlobalAveragePool" || type == "GlobalMaxPool") return describe_global_pool(b);
  if (type == "Softmax") return describe_softmax(b);
  if (type == "Resize") return describe_resize(b);
  if (type == "Concat") return describe_concat(b);
  if (type == "Transpose") return describe_transpose(b);
  if (type == "Slice") return describe_slice(b);
  if (type == "Reshape" || type == "Flatten" || type == "Squeeze" || type == "Unsqueeze") {
    return describe_shape_only(b);
  }
  if (type == "ReduceSum") return describe_reduce(b, ReduceOperation::kSum);
  if (type == "ReduceMean") return describe_reduce(b, ReduceOperation::kMean);
  if (type == "ReduceMax") return describe_reduce(b, ReduceOperation::kMax);
  if (type == "ReduceMin") return describe_reduce(b, ReduceOperation::kMin);
  return b.unsupported("no GPU kernel for ", type);
}

// The precision rule of the header, and the 32-bit indexing the kernels use.
Status check_tensors(const NodeBuilder& b) {
  const graph::Node& node = b.node();
  const DataType type = b.graph().tensor(node.outputs[0]).data_type;
  if (type != DataType::kFloat32 && type != DataType::kFloat16) {
    return b.unsupported("output type ", data_type_name(type));
  }
  auto check = [&](int32_t index) -> Status {
    const graph::Tensor& tensor = b.graph().tensor(index);
    if (tensor.data_type != type || tensor.quantization.is_quantized()) {
      return b.unsupported("tensor '", tensor.name, "' is ", data_type_name(tensor.data_type),
                           tensor.quantization.is_quantized() ? " (quantized)" : "",
                           ", the output ", data_type_name(type));
    }
    if (graph::element_count(b.shape_of(index)) > std::numeric_limits<int32_t>::max()) {
      return b.unsupported("tensor '", tensor.name, "' has more than 2^31 elements");
    }
    return ok_status();
  };
  for (int32_t output : node.outputs) ORKNN_RETURN_IF_ERROR(check(output));
  for (int32_t input : b.launches.device_inputs) ORKNN_RETURN_IF_ERROR(check(input));
  return ok_status();
}

}  // namespace

Result<NodeLaunches> describe_node(const graph::Graph& graph, const graph::Node& node,
                                   const std::vector<Shape>* shapes) {
  if (node.outputs.empty() || node.inputs.empty() || node.inputs[0] < 0) {
    return unimplemented(node.describe(), ": not on the GPU: no data input or output");
  }
  NodeBuilder builder(graph, node, shapes);
  ORKNN_RETURN_IF_ERROR(describe_by_type(builder));
  ORKNN_RETURN_IF_ERROR(check_tensors(builder));
  return std::move(builder.launches);
}

}  // namespace orknn::devices::gpu
