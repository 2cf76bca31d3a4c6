#include "quantize/sequential_refinement.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "evaluation/single_node_graph.h"
#include "export/model_export.h"
#include "export/runtime_model.h"
#include "quantize/calibration.h"
#include "quantize/layer_weights.h"
#include "quantize/quantization_math.h"
#include "report/progress_bar.h"

namespace orknn::convert {
namespace {

// A tensor's values, one vector per calibration sample.
using SampleValues = std::vector<std::vector<float>>;

// Loads `graph` (its own outputs, then `extra_outputs`) and runs it once per sample on up to
// `threads` Sessions; `feed` sets sample s's inputs. Returns [output][sample], dequantized.
Result<std::vector<SampleValues>> run_per_sample(
    const ir::Graph& graph, const std::vector<std::string>& extra_outputs, int samples, int threads,
    const std::function<Status(RuntimeModel*, int)>& feed) {
  model::ModelBuilder builder;
  ORKNN_RETURN_IF_ERROR(build_model(graph, ExportMetadata{}, extra_outputs, &builder));
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeModel> first, RuntimeModel::load(builder));
  threads = std::max(1, std::min(threads, samples));
  std::vector<std::unique_ptr<RuntimeModel>> models;
  models.push_back(std::move(first));
  for (int i = 1; i < threads; ++i) {
    ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeModel> copy, models[0]->duplicate());
    models.push_back(std::move(copy));
  }
  const size_t outputs = models[0]->output_count();
  std::vector<SampleValues> results(outputs, SampleValues(static_cast<size_t>(samples)));
  std::atomic<int> next{0};
  std::mutex mutex;
  Status first_error;
  std::atomic<bool> failed{false};
  auto worker = [&](RuntimeModel* model) {
    while (!failed) {
      const int sample = next++;
      if (sample >= samples) return;
      Status status = feed(model, sample);
      if (status.ok()) status = model->run();
      for (size_t k = 0; status.ok() && k < outputs; ++k)
        status = model->output_floats(k, &results[k][static_cast<size_t>(sample)]);
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failed.exchange(true)) first_error = std::move(status);
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker, models[static_cast<size_t>(i)].get());
  worker(models[0].get());
  for (std::thread& thread : pool) thread.join();
  if (failed) return first_error;
  return results;
}

Status set_float_input(RuntimeModel* model, size_t index, const std::vector<float>& values) {
  exec::UserTensorFormat format;
  format.type = DataType::kFloat32;
  format.layout = exec::Layout::kNCHW;
  return model->set_input(index, values.data(), values.size() * sizeof(float), format);
}

// The quantized model's values of graph input `name` (after mean/std and its own int8 or
// float16 rounding) for every sample: a one-node model (Relu) that reads the input as the
// application feeds it, with the input itself as an extra output.
Result<SampleValues> graph_input_values(const ir::Graph& quantized, const std::string& name,
                                        size_t input_index, const SequentialRefinementInput& input,
                                        int threads) {
  ir::Graph capture;
  capture.tensors[name] = quantized.tensor(name);
  capture.inputs = {name};
  auto preprocessing = quantized.preprocessing.find(name);
  if (preprocessing != quantized.preprocessing.end())
    capture.preprocessing[name] = preprocessing->second;
  const std::string sink = quantized.unique_name(name + "_sequential_capture");
  ir::Tensor sink_tensor = quantized.tensor(name);
  sink_tensor.name = sink;
  capture.tensors[sink] = sink_tensor;
  capture.outputs = {sink};
  ir::Node relu;
  relu.op_type = "Relu";
  relu.inputs = {name};
  relu.outputs = {sink};
  capture.nodes.push_back(relu);

  const InputDescription description =
      describe_inputs(*input.float_graph, *input.options)[input_index];
  const Dataset& dataset = *input.dataset;
  ORKNN_ASSIGN_OR_RETURN(
      std::vector<SampleValues> values,
      run_per_sample(
          capture, {name}, static_cast<int>(dataset.samples.size()), threads,
          [&](RuntimeModel* model, int sample) -> Status {
            const DatasetSample& line = dataset.samples[static_cast<size_t>(sample)];
            const std::string where =
                "dataset '" + dataset.path + "' line " + std::to_string(line.line);
            ORKNN_ASSIGN_OR_RETURN(InputData data,
                                   load_input_file(line.files[input_index], description, where));
            return model->set_input(0, data.bytes.data(), data.bytes.size(), data.format);
          }));
  return std::move(values[1]);
}

bool is_quantized_constant(const ir::Graph& graph, const std::string& name, DataType type) {
  return !name.empty() && graph.has_tensor(name) && graph.tensor(name).is_constant() &&
         graph.tensor(name).type == type && graph.tensor(name).is_quantized();
}

// Re-chooses the weights and bias of `node` (a Conv/Gemm of `quantized`) from its quantized
// input values; false when the layer does not qualify (it then keeps the rewrite's weights).
Result<bool> refine_layer(const SequentialRefinementInput& input, const ir::Node& node,
                          const SampleValues& input_values, ir::Graph* quantized) {
  const std::string& output = node.outputs[0];
  auto float_rows = input.float_rows->find(output);
  if (float_rows == input.float_rows->end() || float_rows->second.rows() == 0) return false;
  const ir::Graph& float_graph = *input.float_graph;
  const int producer = float_graph.producer(output);
  if (producer < 0) return false;
  const ir::Node& float_node = float_graph.nodes[static_cast<size_t>(producer)];
  if (!float_node.has_input(1) || !float_graph.tensor(float_node.inputs[1]).is_constant() ||
      float_graph.tensor(float_node.inputs[1]).type != DataType::kFloat32) {
    return false;
  }
  const ir::Tensor& input_tensor = quantized->tensor(node.inputs[0]);
  if (input_tensor.type != DataType::kInt8 || input_tensor.quantization.scales.size() != 1 ||
      !is_quantized_constant(*quantized, node.inputs[1], DataType::kInt8)) {
    return false;
  }
  std::optional<LayerWeightMatrix> matrix = layer_weight_matrix(
      float_node, float_graph.tensor(float_node.inputs[1]), float_rows->second.columns);
  if (!matrix) return false;

  LayerInputRows quantized_rows;
  for (size_t sample = 0; sample < input_values.size(); ++sample) {
    if (!input.collector->append_sample_rows(output, static_cast<int>(sample), input_values[sample],
                                             &quantized_rows)) {
      return false;
    }
  }
  if (quantized_rows.rows() != float_rows->second.rows() ||
      quantized_rows.columns != float_rows->second.columns) {
    return invalid_argument("sequential refinement of ", node.describe(), ": ",
                            quantized_rows.rows(), " quantized input rows, ",
                            float_rows->second.rows(), " float ones (the dataset changed?)");
  }

  ir::Tensor& weights = quantized->tensor(node.inputs[1]);
  const std::vector<float>& scales = weights.quantization.scales;
  const ConvertOptions& options = *input.options;
  RoundedLayer rounded = round_layer(*matrix, scales, quantized_rows, float_rows->second,
                                     options.weight_rounding, options.bias_correction);
  if (rounded.codes.size() != static_cast<size_t>(weights.elements())) return false;
  weights.data = std::make_shared<const ir::Bytes>(rounded.codes.begin(), rounded.codes.end());

  // The int32 bias absorbs the mean shift.
  if (rounded.bias_shift.empty() || !node.has_input(2) || !float_node.has_input(2) ||
      !is_quantized_constant(*quantized, node.inputs[2], DataType::kInt32)) {
    return true;
  }
  const ir::Tensor& float_bias = float_graph.tensor(float_node.inputs[2]);
  if (!float_bias.is_constant() || float_bias.type != DataType::kFloat32) return true;
  std::vector<float> bias = ir::constant_as_floats(float_bias);
  ir::Tensor& quantized_bias = quantized->tensor(node.inputs[2]);
  const size_t channels = rounded.bias_shift.size();
  if (bias.size() == 1) bias.assign(channels, bias[0]);
  if (bias.size() != channels || quantized_bias.elements() != static_cast<int64_t>(channels))
    return true;
  for (size_t c = 0; c < channels; ++c)
    bias[c] = static_cast<float>(bias[c] - rounded.bias_shift[c]);
  QuantizedConstant codes = quantize_bias(bias, input_tensor.quantization.scales[0], scales);
  quantized_bias.data = std::make_shared<const ir::Bytes>(std::move(codes.bytes));
  return true;
}

}  // namespace

Result<SequentialRefinementResult> refine_layers_sequentially(
    const SequentialRefinementInput& input, ir::Graph* quantized) {
  const ConvertOptions& options = *input.options;
  const int samples = static_cast<int>(input.dataset->samples.size());
  const int threads = options.calibration_threads > 0
                          ? options.calibration_threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SequentialRefinementResult result;
  if (samples == 0) return result;

  // How many nodes still read each tensor; a tensor's values are dropped after its last reader.
  std::unordered_map<std::string, int> readers;
  for (const ir::Node& node : quantized->nodes) {
    std::set<std::string> seen;
    for (const std::string& name : node.inputs) {
      if (!name.empty() && !quantized->tensor(name).is_constant() && seen.insert(name).second)
        ++readers[name];
    }
  }
  std::unordered_map<std::string, SampleValues> values;
  for (size_t i = 0; i < quantized->inputs.size(); ++i) {
    const std::string& name = quantized->inputs[i];
    if (!readers.count(name)) continue;
    Result<SampleValues> captured = graph_input_values(*quantized, name, i, input, threads);
    if (!captured.ok())
      return std::move(captured).take_status().add_context("sequential refinement: input '" + name +
                                                           "'");
    values[name] = std::move(captured).value();
  }

  ProgressBar progress("refinement", static_cast<int>(quantized->nodes.size()), "layers",
                       !options.quiet);
  for (size_t index = 0; index < quantized->nodes.size(); ++index) {
    const ir::Node node = quantized->nodes[index];
    const bool product = node.domain.empty() && (node.op_type == "Conv" || node.op_type == "Gemm");
    if (product && node.has_input(0) && values.count(node.inputs[0])) {
      Result<bool> refined = refine_layer(input, node, values.at(node.inputs[0]), quantized);
      if (!refined.ok()) return std::move(refined).take_status();
      result.refined_layers += refined.value();
    }
    const ir::Graph single = single_node_graph(*quantized, node);
    std::vector<const SampleValues*> feeds;
    for (const std::string& name : single.inputs) {
      auto found = values.find(name);
      if (found == values.end()) {
        return invalid_argument("sequential refinement: ", node.describe(), " reads '", name,
                                "', which no earlier node produced");
      }
      feeds.push_back(&found->second);
    }
    Result<std::vector<SampleValues>> outputs =
        run_per_sample(single, {}, samples, threads, [&](RuntimeModel* model, int sample) {
          for (size_t i = 0; i < feeds.size(); ++i) {
            ORKNN_RETURN_IF_ERROR(
                set_float_input(model, i, (*feeds[i])[static_cast<size_t>(sample)]));
          }
          return ok_status();
        });
    if (!outputs.ok())
      return std::move(outputs).take_status().add_context("sequential refinement: " +
                                                          node.describe());
    for (size_t k = 0; k < single.outputs.size(); ++k) {
      if (readers.count(single.outputs[k]))
        values[single.outputs[k]] = std::move(outputs.value()[k]);
    }
    for (const std::string& name : single.inputs) {
      if (--readers[name] == 0) values.erase(name);
    }
    progress.update(static_cast<int>(index + 1));
  }
  progress.finish();
  result.seconds = progress.elapsed_seconds();
  return result;
}

}  // namespace orknn::convert
