// Attribute and constant-operand parsing of the data-movement ops, shared by their shape
// functions (graph/ops/) and their CPU kernel factories (devices/cpu/ops/) so both read a node
// the same way. Every parser validates what the kernels rely on and names the broken rule.
//
// Opset differences are recognised from the node itself (the graph carries no opset): an
// operand given as an input (Slice starts, Pad pads, Split split, Squeeze axes, ...) wins; the
// older attribute form is read when the input is absent.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/op_schema.h"

namespace orknn::graph {

// A node's inputs as both the shape function and the kernel factory see them: tensors (nullptr
// when omitted) and their current shapes.
class NodeOperands {
 public:
  NodeOperands(const Node& node, std::vector<const Tensor*> tensors, std::vector<Shape> shapes)
      : node_(node), tensors_(std::move(tensors)), shapes_(std::move(shapes)) {}
  explicit NodeOperands(const ShapeInferenceContext& context);
  // Shapes are taken from the tensors (the kernel factory's tensors carry current shapes).
  NodeOperands(const Node& node, const std::vector<const Tensor*>& tensors);

  const Node& node() const { return node_; }
  size_t count() const { return tensors_.size(); }
  bool has(size_t position) const {
    return position < tensors_.size() && tensors_[position] != nullptr;
  }
  // Preconditions: has(position).
  const Tensor& tensor(size_t position) const { return *tensors_[position]; }
  const Shape& shape(size_t position) const { return shapes_[position]; }
  int64_t rank(size_t position) const { return static_cast<int64_t>(shapes_[position].size()); }

  // The values of a constant INT64/INT32 operand; `what` names it in messages ("starts").
  // An operand with no elements needs no data and reads as an empty list.
  Result<std::vector<int64_t>> constant_ints(size_t position, const char* what) const;

  template <typename... Parts>
  Status error(const Parts&... parts) const {
    return invalid_model(node_.describe(), ": ", parts...);
  }

 private:
  const Node& node_;
  std::vector<const Tensor*> tensors_;
  std::vector<Shape> shapes_;
};

// Checks that the data inputs at `positions` have one element type, or are all real-valued
// (float, float16, quantized) so the CPU registry can bring them to float32.
Status check_same_data_type(const NodeOperands& operands, const std::vector<size_t>& positions);

// Normalizes possibly negative axes against `rank`; rejects out-of-range and repeated axes.
// `what` names the list in messages ("axes").
Result<std::vector<int64_t>> normalize_axes(const NodeOperands& operands,
                                            const std::vector<int64_t>& axes, int64_t rank,
                                            const char* what);

struct ConcatAttributes {
  int64_t axis = 0;  // normalized
  Shape output_shape;
};
Result<ConcatAttributes> parse_concat(const NodeOperands& operands);

struct SplitAttributes {
  int64_t axis = 0;            // normalized
  std::vector<int64_t> sizes;  // one per output, summing to the input's dim
  std::vector<Shape> output_shapes;
};
Result<SplitAttributes> parse_split(const NodeOperands& operands, size_t output_count);

// Per input axis (axes the node does not name get start 0, step 1, the full dim).
struct SliceAttributes {
  std::vector<int64_t> starts;  // normalized and clamped as ONNX specifies
  std::vector<int64_t> steps;   // non-zero; bounded by dim + 1 (a larger step reads the same)
  Shape output_shape;
};
Result<SliceAttributes> parse_slice(const NodeOperands& operands);

struct TransposeAttributes {
  std::vector<int64_t> perm;
  Shape output_shape;
};
Result<TransposeAttributes> parse_transpose(const NodeOperands& operands);

// Reshape, Flatten, Squeeze and Unsqueeze only change the shape.
Result<Shape> reshape_output_shape(const NodeOperands& operands);
Result<Shape> flatten_output_shape(const NodeOperands& operands);
Result<Shape> squeeze_output_shape(const NodeOperands& operands);
Result<Shape> unsqueeze_output_shape(const NodeOperands& operands);

enum class PadMode { kConstant, kEdge, kReflect, kWrap };
enum class PadValueSource {
  kDefaultZero,  // no constant_value input nor `value` attribute: real 0 (zero point if quantized)
  kAttribute,    // opsets 2-10: the float `value` attribute
  kInput,        // opsets 11+: input 2, one element of the data's type
};
struct PadAttributes {
  PadMode mode = PadMode::kConstant;
  std::vector<int64_t> begin;  // per input axis; negative crops
  std::vector<int64_t> end;
  Shape output_shape;
  PadValueSource value_source = PadValueSource::kDefaultZero;
  float attribute_value = 0.0f;
};
Result<PadAttributes> parse_pad(const NodeOperands& operands);

// An ONNX TensorProto.DataType number as our DataType; nullopt for the types the .rknn format
// lacks (double, bfloat16, string, ...). The one table of this mapping: Cast parsing and
// rknn-convert both use it.
std::optional<DataType> data_type_from_onnx(int64_t onnx_type);

// Cast's `to`, an ONNX TensorProto data type number, as our DataType.
Result<DataType> parse_cast_target(const NodeOperands& operands);

}  // namespace orknn::graph
