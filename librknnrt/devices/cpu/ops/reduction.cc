// CPU kernels of the reduction family, in the float domain (ArgMax/ArgMin write INT64
// indices, which pass through the float domain unchanged).
#include <string>

#include "devices/cpu/cpu_kernel.h"
#include "graph/ops/reduction_attributes.h"
#include "reference/reduction.h"

namespace orknn::devices::cpu {
namespace {

namespace reference = kernels::reference;
using graph::Shape;

Status require_type(const KernelBuildContext& context, const graph::Tensor* tensor,
                    const char* role, DataType expected) {
  if (tensor->data_type == expected) return ok_status();
  return unimplemented(context.node.describe(), ": ", role, " ('", tensor->name, "') is ",
                       data_type_name(tensor->data_type), "; supported: ",
                       expected == DataType::kFloat32 ? "real-valued (float or quantized)"
                                                      : data_type_name(expected));
}

reference::ReduceOperation reduce_operation(const std::string& type) {
  if (type == "ReduceSum") return reference::ReduceOperation::kSum;
  if (type == "ReduceMean") return reference::ReduceOperation::kMean;
  if (type == "ReduceMax") return reference::ReduceOperation::kMax;
  return reference::ReduceOperation::kMin;
}

Result<std::unique_ptr<CpuKernel>> make_reduce(const KernelBuildContext& context) {
  ORKNN_RETURN_IF_ERROR(require_type(context, context.input(0), "input 0", DataType::kFloat32));
  ORKNN_RETURN_IF_ERROR(require_type(context, context.outputs[0], "output 0", DataType::kFloat32));
  const Shape& shape = context.input(0)->shape;
  ORKNN_ASSIGN_OR_RETURN(graph::ReduceAttributes attributes,
                         graph::parse_reduce_attributes(context.node, context.input(1),
                                                        static_cast<int64_t>(shape.size())));
  reference::ReduceParams params = reference::make_reduce_params(
      reduce_operation(context.node.op_type), shape, attributes.reduced);
  return make_function_kernel([params](const void* const* inputs, void* const* outputs) {
    reference::reduce(params, static_cast<const float*>(inputs[0]),
                      static_cast<float*>(outputs[0]));
    return ok_status();
  });
}

Result<std::unique_ptr<CpuKernel>> make_arg_reduce(const KernelBuildContext& context) {
  ORKNN_RETURN_IF_ERROR(require_type(context, context.input(0), "input 0", DataType::kFloat32));
  ORKNN_RETURN_IF_ERROR(require_type(context, context.outputs[0], "output 0", DataType::kInt64));
  const Shape& shape = context.input(0)->shape;
  ORKNN_ASSIGN_OR_RETURN(graph::ArgReduceAttributes attributes,
                         graph::parse_arg_reduce_attributes(context.node, shape));
  const auto axis = static_cast<size_t>(attributes.axis);
  reference::ArgReduceParams params;
  for (size_t i = 0; i < axis; ++i) params.outer *= shape[i];
  params.axis_size = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) params.inner *= shape[i];
  params.select_maximum = context.node.op_type == "ArgMax";
  params.select_last_index = attributes.select_last_index;
  return make_function_kernel([params](const void* const* inputs, void* const* outputs) {
    reference::arg_reduce(params, static_cast<const float*>(inputs[0]),
                          static_cast<int64_t*>(outputs[0]));
    return ok_status();
  });
}

}  // namespace

std::vector<CpuOpDefinition> reduction_cpu_ops() {
  std::vector<CpuOpDefinition> ops;
  for (const char* type : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    ops.push_back({type, DtypeHandling::kFloatDomain, make_reduce, nullptr});
  }
  for (const char* type : {"ArgMax", "ArgMin"}) {
    ops.push_back({type, DtypeHandling::kFloatDomain, make_arg_reduce, nullptr});
  }
  return ops;
}

}  // namespace orknn::devices::cpu
