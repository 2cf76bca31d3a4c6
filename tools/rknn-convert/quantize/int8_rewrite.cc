#include "quantize/int8_rewrite.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>
#include <thread>
#include <unordered_map>

#include "quantize/float_precision.h"
#include "quantize/layer_weights.h"
#include "quantize/quantization_math.h"

namespace orknn::convert {
namespace {

bool is_real_activation(const ir::Tensor& tensor) {
  if (tensor.is_constant()) return false;
  if (tensor.type == DataType::kFloat32 || tensor.type == DataType::kFloat16) return true;
  return tensor.type == DataType::kInt8 && tensor.is_quantized();
}

bool same_quantization(const model::Quantization& a, const model::Quantization& b) {
  return a.scales == b.scales && a.zero_points == b.zero_points;
}

// Tensors whose int8 parameters must be equal so the runtime can move bytes natively.
class SharingGroups {
 public:
  std::string root(const std::string& name) {
    auto found = parent_.find(name);
    if (found == parent_.end() || found->second == name) return name;
    std::string top = root(found->second);
    parent_[name] = top;
    return top;
  }
  void join(const std::string& a, const std::string& b) {
    const std::string ra = root(a);
    const std::string rb = root(b);
    if (ra != rb) parent_[rb] = ra;
  }

 private:
  std::unordered_map<std::string, std::string> parent_;
};

// Ops whose output values are (a selection of) their first input's values.
bool moves_data(const ir::Graph& graph, const ir::Node& node) {
  static const std::set<std::string> always = {"Reshape", "Flatten",   "Transpose",
                                               "Squeeze", "Unsqueeze", "Slice",
                                               "Split",   "MaxPool",   "GlobalMaxPool"};
  if (!node.domain.empty()) return false;
  if (always.count(node.op_type)) return true;
  if (node.op_type == "Resize") return ir::string_attribute(node, "mode", "nearest") == "nearest";
  if (node.op_type == "Pad") {
    const std::string mode = ir::string_attribute(node, "mode", "constant");
    return mode != "constant" ||
           (!node.has_input(2) && ir::float_attribute(node, "value", 0.0f) == 0.0f);
  }
  return false;
}

struct GroupState {
  bool has_range = false;
  TensorRange range;
  bool fixed = false;
  model::Quantization fixed_quantization;
};

class ActivationAssigner {
 public:
  ActivationAssigner(ir::Graph* graph, const QuantizationPlan& plan,
                     const std::set<std::string>& float16_outputs)
      : graph_(*graph), plan_(plan), float16_outputs_(float16_outputs) {}

  void run() {
    for (const std::string& name : calibration_tensors(graph_)) {
      if (float16_outputs_.count(name)) continue;
      candidates_.push_back(name);
      GroupState state;
      const ir::Tensor& tensor = graph_.tensor(name);
      if (tensor.is_quantized()) {
        state.fixed = true;
        state.fixed_quantization = tensor.quantization;
      }
      auto range = plan_.ranges.find(name);
      if (range != plan_.ranges.end()) {
        state.has_range = true;
        state.range = range->second;
      }
      states_[name] = state;
    }
    if (plan_.share_through_data_movement) form_groups();
    assign();
  }

 private:
  bool is_candidate(const std::string& name) const { return states_.count(name) != 0; }

  GroupState merged(const GroupState& a, const GroupState& b) const {
    GroupState result = a;
    if (b.has_range) {
      if (result.has_range) {
        result.range.min = std::min(result.range.min, b.range.min);
        result.range.max = std::max(result.range.max, b.range.max);
      } else {
        result.has_range = true;
        result.range = b.range;
      }
    }
    if (b.fixed && !result.fixed) {
      result.fixed = true;
      result.fixed_quantization = b.fixed_quantization;
    }
    return result;
  }

  bool compatible(const GroupState& a, const GroupState& b) const {
    return !(a.fixed && b.fixed && !same_quantization(a.fixed_quantization, b.fixed_quantization));
  }

  void join(const std::string& a, const std::string& b) {
    const std::string ra = groups_.root(a);
    const std::string rb = groups_.root(b);
    if (ra == rb) return;
    GroupState state = merged(states_[ra], states_[rb]);
    groups_.join(ra, rb);
    states_[groups_.root(ra)] = state;
  }

  static double width(const GroupState& state) {
    if (state.fixed) {
      const TensorRange range = represented_range(state.fixed_quantization);
      return range.max - range.min;
    }
    return state.has_range ? std::max(0.0f, state.range.max) - std::min(0.0f, state.range.min)
                           : 0.0;
  }

  void form_groups() {
    for (const ir::Node& node : graph_.nodes) {
      if (!moves_data(graph_, node) || node.inputs.empty() || !is_candidate(node.inputs[0]))
        continue;
      const std::string input = node.inputs[0];
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (node.op_type == "MaxPool" && i > 0) break;  // indices
        const std::string& output = node.outputs[i];
        if (output.empty() || !is_candidate(output)) continue;
        if (!compatible(states_[groups_.root(input)], states_[groups_.root(output)])) continue;
        join(input, output);
      }
    }
    // Concat shares only when its inputs' ranges are alike: one wide input would otherwise cost
    // the others their resolution (YOLO heads concatenate pixel boxes with 0..1 scores).
    for (const ir::Node& node : graph_.nodes) {
      if (node.op_type != "Concat" || !node.domain.empty()) continue;
      std::vector<std::string> members(node.inputs.begin(), node.inputs.end());
      members.push_back(node.outputs[0]);
      bool eligible = true;
      GroupState hull;
      for (const std::string& member : members) {
        if (!is_candidate(member)) {
          eligible = false;
          break;
        }
        const GroupState& state = states_[groups_.root(member)];
        if (!state.has_range && !state.fixed) eligible = false;
        if (!compatible(hull, state)) eligible = false;
        hull = merged(hull, state);
      }
      if (!eligible) continue;
      const double hull_width = width(hull);
      for (size_t i = 0; i + 1 < members.size(); ++i) {
        if (width(states_[groups_.root(members[i])]) < 0.5 * hull_width) eligible = false;
      }
      if (!eligible) continue;
      for (size_t i = 1; i < members.size(); ++i) join(members[0], members[i]);
    }
  }

  void assign() {
    for (const std::string& name : candidates_) {
      const GroupState& state = states_[groups_.root(name)];
      ir::Tensor& tensor = graph_.tensor(name);
      if (state.fixed) {
        tensor.type = DataType::kInt8;
        tensor.quantization = state.fixed_quantization;
      } else if (state.has_range) {
        tensor.type = DataType::kInt8;
        tensor.quantization = activation_quantization(state.range);
      }
      // Otherwise it stays float and becomes float16 with the other leftovers.
    }
  }

  ir::Graph& graph_;
  const QuantizationPlan& plan_;
  const std::set<std::string>& float16_outputs_;
  std::vector<std::string> candidates_;
  std::unordered_map<std::string, GroupState> states_;
  SharingGroups groups_;
};

bool is_int8_activation(const ir::Tensor& tensor) {
  return tensor.type == DataType::kInt8 && tensor.is_quantized() &&
         tensor.quantization.scales.size() == 1;
}

bool is_float32_constant(const ir::Graph& graph, const std::string& name) {
  return !name.empty() && graph.tensor(name).is_constant() &&
         graph.tensor(name).type == DataType::kFloat32;
}

// The int8 weight axis of a product node (-1: per tensor), docs/quantization.md section 1.
int weight_axis(const ir::Node& node, const ir::Tensor& weights, QuantizedMethod method) {
  if (method == QuantizedMethod::kLayer) return -1;
  const int rank = static_cast<int>(weights.shape.size());
  if (node.op_type == "Conv") return 0;
  if (node.op_type == "ConvTranspose") return ir::int_attribute(node, "group", 1) == 1 ? 1 : -1;
  if (node.op_type == "Gemm") return ir::int_attribute(node, "transB", 0) ? 0 : 1;
  if (node.op_type == "MatMul") return rank >= 2 ? rank - 1 : -1;
  return -1;
}

// Replaces input `position` of `node` by a new constant (a per-node copy, since another node
// may read the float original).
void set_constant_input(ir::Graph* graph, ir::Node* node, size_t position, DataType type,
                        const ir::Shape& shape, QuantizedConstant constant) {
  const std::string name = graph->add_constant(
      node->inputs[position] + "_" + (type == DataType::kInt32 ? "int32" : "int8"), type, shape,
      std::move(constant.bytes));
  graph->tensor(name).quantization = std::move(constant.quantization);
  node->inputs[position] = name;
}

// The layers of `plan.layer_inputs` that compute in int8, rounded in parallel (each layer on
// one thread, so the result does not depend on the thread count).
std::map<std::string, RoundedLayer> round_layers_from_inputs(const ir::Graph& graph,
                                                             const QuantizationPlan& plan) {
  struct Job {
    std::string output;
    LayerWeightMatrix matrix;
    std::vector<float> scales;
    const LayerInputRows* rows = nullptr;
  };
  std::vector<Job> jobs;
  std::map<std::string, RoundedLayer> rounded;
  if (!plan.layer_inputs ||
      (plan.weight_rounding == WeightRounding::kNearest && !plan.bias_correction)) {
    return rounded;
  }
  for (const ir::Node& node : graph.nodes) {
    if (node.op_type != "Conv" && node.op_type != "Gemm") continue;
    auto rows = plan.layer_inputs->find(node.outputs[0]);
    if (rows == plan.layer_inputs->end() || rows->second.rows() == 0) continue;
    if (!is_int8_activation(graph.tensor(node.inputs[0])) ||
        !is_int8_activation(graph.tensor(node.outputs[0])) ||
        !is_float32_constant(graph, node.inputs[1])) {
      continue;
    }
    const ir::Tensor& weights = graph.tensor(node.inputs[1]);
    std::optional<LayerWeightMatrix> matrix =
        layer_weight_matrix(node, weights, rows->second.columns);
    if (!matrix) continue;
    Job job;
    job.output = node.outputs[0];
    job.rows = &rows->second;
    job.matrix = std::move(*matrix);
    job.scales = quantize_weights(ir::constant_as_floats(weights), weights.shape,
                                  weight_axis(node, weights, plan.method))
                     .quantization.scales;
    jobs.push_back(std::move(job));
  }
  std::vector<RoundedLayer> results(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      const Job& job = jobs[i];
      results[i] = round_layer(job.matrix, job.scales, *job.rows, *job.rows, plan.weight_rounding,
                               plan.bias_correction);
    }
  };
  const int threads = plan.threads > 0
                          ? plan.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int i = 1; i < threads && static_cast<size_t>(i) < jobs.size(); ++i)
    pool.emplace_back(worker);
  worker();
  for (std::thread& thread : pool) thread.join();
  for (size_t i = 0; i < jobs.size(); ++i) rounded[jobs[i].output] = std::move(results[i]);
  return rounded;
}

// Quantizes the weights (and bias) of Conv/ConvTranspose/Gemm/MatMul nodes that compute in int8.
void quantize_products(ir::Graph* graph, const QuantizationPlan& plan) {
  const QuantizedMethod method = plan.method;
  const std::map<std::string, RoundedLayer> rounded = round_layers_from_inputs(*graph, plan);
  for (ir::Node& node : graph->nodes) {
    const std::string& op = node.op_type;
    if (!node.domain.empty() ||
        (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul")) {
      continue;
    }
    if (node.inputs.size() < 2 || !is_int8_activation(graph->tensor(node.inputs[0])) ||
        !is_int8_activation(graph->tensor(node.outputs[0]))) {
      continue;  // float node: its weights go to float16 with the other constants
    }
    const float input_scale = graph->tensor(node.inputs[0]).quantization.scales[0];
    if (is_float32_constant(*graph, node.inputs[1])) {
      const ir::Tensor weights = graph->tensor(node.inputs[1]);
      QuantizedConstant quantized = quantize_weights(ir::constant_as_floats(weights), weights.shape,
                                                     weight_axis(node, weights, method));
      auto from_inputs = rounded.find(node.outputs[0]);
      if (from_inputs != rounded.end()) {
        const std::vector<int8_t>& codes = from_inputs->second.codes;
        for (size_t i = 0; i < codes.size(); ++i)
          quantized.bytes[i] = static_cast<uint8_t>(codes[i]);
      }
      set_constant_input(graph, &node, 1, DataType::kInt8, weights.shape, std::move(quantized));
    }
    const ir::Tensor& weights = graph->tensor(node.inputs[1]);
    if (!weights.is_constant() || !weights.is_quantized() || op == "MatMul") continue;
    if (!node.has_input(2) || !is_float32_constant(*graph, node.inputs[2])) continue;
    const ir::Tensor bias = graph->tensor(node.inputs[2]);
    // Output channels and where they sit in the weights.
    int64_t channels;
    if (op == "Conv") {
      channels = weights.shape[0];
    } else if (op == "ConvTranspose") {
      channels = weights.shape[1] * ir::int_attribute(node, "group", 1);
    } else {
      if (ir::float_attribute(node, "alpha", 1.0f) != 1.0f ||
          ir::float_attribute(node, "beta", 1.0f) != 1.0f) {
        continue;  // the int8 Gemm needs C added as is
      }
      channels = ir::int_attribute(node, "transB", 0) ? weights.shape[0] : weights.shape[1];
      // C must be a row of N (or one value): [N], [1, N], [1] or a scalar.
      const int64_t elements = bias.elements();
      const bool row = elements == channels &&
                       (bias.shape.size() == 1 || (bias.shape.size() == 2 && bias.shape[0] == 1));
      if (!row && elements != 1) continue;
    }
    std::vector<float> values = ir::constant_as_floats(bias);
    if (values.size() == 1) values.assign(static_cast<size_t>(channels), values[0]);
    if (static_cast<int64_t>(values.size()) != channels) continue;
    auto from_inputs = rounded.find(node.outputs[0]);
    if (from_inputs != rounded.end() &&
        from_inputs->second.bias_shift.size() == static_cast<size_t>(channels)) {
      for (size_t c = 0; c < values.size(); ++c)
        values[c] = static_cast<float>(values[c] - from_inputs->second.bias_shift[c]);
    }
    std::vector<float> weight_scales = weights.quantization.scales;
    if (weight_scales.size() != 1 && static_cast<int64_t>(weight_scales.size()) != channels)
      continue;
    QuantizedConstant quantized = quantize_bias(values, input_scale, weight_scales);
    if (weight_scales.size() == 1) {
      quantized.quantization.scales.resize(1);
      quantized.quantization.zero_points.resize(1);
    }
    set_constant_input(graph, &node, 2, DataType::kInt32, {channels}, std::move(quantized));
  }
}

}  // namespace

std::vector<std::string> calibration_tensors(const ir::Graph& graph) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  auto consider = [&](const std::string& name) {
    if (name.empty() || seen.count(name) || !graph.has_tensor(name)) return;
    if (!is_real_activation(graph.tensor(name))) return;
    seen.insert(name);
    names.push_back(name);
  };
  for (const std::string& name : graph.inputs) consider(name);
  for (const ir::Node& node : graph.nodes) {
    for (const std::string& output : node.outputs) consider(output);
  }
  return names;
}

Status rewrite_to_int8(ir::Graph* graph, const QuantizationPlan& plan,
                       std::vector<std::string>* out_notes) {
  for (const std::string& name : plan.float16_tensors) {
    if (!graph->has_tensor(name) || (graph->producer(name) < 0 && !graph->is_graph_input(name))) {
      return invalid_argument("hybrid quantization: '", name,
                              "' is not a node output or input of the converted model");
    }
  }
  // Outputs of float16 nodes (all their outputs, not only the one named).
  std::set<std::string> float16_outputs;
  for (const ir::Node& node : graph->nodes) {
    bool float16_node = false;
    for (const std::string& output : node.outputs)
      float16_node |= plan.float16_tensors.count(output) > 0;
    if (!float16_node) continue;
    for (const std::string& output : node.outputs) float16_outputs.insert(output);
  }
  for (const std::string& name : plan.float16_tensors) {
    if (graph->is_graph_input(name)) float16_outputs.insert(name);
  }

  ActivationAssigner(graph, plan, float16_outputs).run();
  quantize_products(graph, plan);

  int float16_activations = 0;
  for (const std::string& name : calibration_tensors(*graph)) {
    if (graph->tensor(name).type == DataType::kFloat32 && !float16_outputs.count(name)) {
      ++float16_activations;
    }
  }
  if (float16_activations > 0 && out_notes) {
    out_notes->push_back(std::to_string(float16_activations) +
                         " activation tensor(s) had no quantization range and stay float16");
  }
  // Everything still float (float16 layers, leftover activations, constants that are not
  // product weights such as Add operands or normalization parameters) becomes float16.
  convert_to_float16(graph, [](const ir::Tensor&) { return true; });
  graph->remove_dead_code();
  return ok_status();
}

}  // namespace orknn::convert
