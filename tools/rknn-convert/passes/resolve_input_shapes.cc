// The runtime plans memory for static shapes, so every input needs concrete dimensions before
// shapes propagate: from input_size_list, from a dynamic_input set, or (a dynamic batch only)
// from rknn_batch_size. Nothing is guessed: an unknown dimension without a size is an error that
// says how to give one.
#include "passes/passes.h"

namespace orknn::convert {
namespace {

std::string describe_dimensions(const ir::Tensor& tensor) {
  std::string text = "[";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    if (i) text += ",";
    if (tensor.shape[i] >= 0) {
      text += std::to_string(tensor.shape[i]);
    } else {
      const std::string& name = i < tensor.dimension_names.size() ? tensor.dimension_names[i] : "";
      text += name.empty() ? "?" : name;
    }
  }
  return text + "]";
}

Status apply_shape(const std::string& option, size_t input_index, const std::vector<int64_t>& shape,
                   ir::Tensor* tensor) {
  const std::string what =
      option + ": input " + std::to_string(input_index) + " ('" + tensor->name + "')";
  for (int64_t dimension : shape) {
    if (dimension < 0) return invalid_argument(what, ": dimension ", dimension, " is negative");
  }
  if (tensor->shape_known) {
    if (tensor->shape.size() != shape.size()) {
      return invalid_argument(what, ": shape ", ir::shape_to_string(shape), " has rank ",
                              shape.size(), " but the model's input ", describe_dimensions(*tensor),
                              " has rank ", tensor->shape.size());
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      if (tensor->shape[i] >= 0 && tensor->shape[i] != shape[i]) {
        return invalid_argument(what, ": shape ", ir::shape_to_string(shape),
                                " differs from the model's fixed dimension ", i, " (",
                                tensor->shape[i], " in ", describe_dimensions(*tensor), ")");
      }
    }
  }
  tensor->shape = shape;
  tensor->shape_known = true;
  return ok_status();
}

}  // namespace

Status resolve_input_shapes(ir::Graph* graph, const ConvertOptions& options, size_t shape_set) {
  const size_t count = graph->inputs.size();
  if (!options.input_size_list.empty() && options.input_size_list.size() != count) {
    return invalid_argument("input_size_list has ", options.input_size_list.size(),
                            " shapes but the model has ", count, " inputs");
  }
  if (!options.inputs.empty() && options.input_size_list.empty() && options.dynamic_input.empty()) {
    return invalid_argument(
        "inputs: when inputs are given, give their shapes with "
        "input_size_list too");
  }
  for (size_t set = 0; set < options.dynamic_input.size(); ++set) {
    if (options.dynamic_input[set].size() != count) {
      return invalid_argument("dynamic_input: set ", set, " has ",
                              options.dynamic_input[set].size(), " shapes but the model has ",
                              count, " inputs");
    }
  }
  for (size_t i = 0; i < count; ++i) {
    ir::Tensor& tensor = graph->tensor(graph->inputs[i]);
    if (!options.input_size_list.empty()) {
      ORKNN_RETURN_IF_ERROR(apply_shape("input_size_list", i, options.input_size_list[i], &tensor));
    }
    if (!options.dynamic_input.empty()) {
      ir::Tensor original = tensor;
      // Every set must fit the model; the chosen one becomes the shape the model is built for.
      for (size_t set = 0; set < options.dynamic_input.size(); ++set) {
        ir::Tensor probe = original;
        ORKNN_RETURN_IF_ERROR(apply_shape("dynamic_input set " + std::to_string(set), i,
                                          options.dynamic_input[set][i], &probe));
      }
      ORKNN_RETURN_IF_ERROR(apply_shape("dynamic_input set " + std::to_string(shape_set), i,
                                        options.dynamic_input[shape_set][i], &tensor));
    }
    if (!tensor.shape_known) {
      return invalid_argument("input '", tensor.name,
                              "' has no shape in the model; give it with input_size_list");
    }
    std::vector<size_t> unknown;
    for (size_t d = 0; d < tensor.shape.size(); ++d) {
      if (tensor.shape[d] < 0) unknown.push_back(d);
    }
    if (unknown.size() == 1 && unknown[0] == 0 && options.rknn_batch_size > 0) {
      // A dynamic batch: the model is built for batch 1; apply_batch_size widens it later.
      tensor.shape[0] = 1;
      unknown.clear();
    }
    if (!unknown.empty()) {
      std::string dims;
      for (size_t d : unknown) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
      return invalid_argument("input '", tensor.name, "' has dynamic dimensions ",
                              describe_dimensions(tensor), " (dimension",
                              unknown.size() > 1 ? "s " : " ", dims,
                              " without a size); give static sizes with input_size_list "
                              "(e.g. --input-size-list '[[1,3,224,224]]') or allowed shape sets "
                              "with dynamic_input");
    }
  }
  return ok_status();
}

}  // namespace orknn::convert
