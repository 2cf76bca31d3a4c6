#include "analysis/accuracy_analysis.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "dataset/npy_file.h"
#include "evaluation/single_node_graph.h"
#include "export/model_export.h"
#include "export/runtime_model.h"
#include "quantize/calibration.h"
#include "quantize/int8_rewrite.h"

namespace orknn::convert {
namespace {

namespace fs = std::filesystem;

constexpr double kFlagBelow = 0.99;

// Tensor names may hold '/', ':' and the like; file names keep letters, digits, '.', '-', '_'.
std::string file_name_for(const std::string& tensor, std::set<std::string>* used) {
  std::string name;
  for (char c : tensor)
    name +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  if (name.empty()) name = "tensor";
  std::string unique = name;
  for (int i = 2; used->count(unique); ++i) unique = name + "_" + std::to_string(i);
  used->insert(unique);
  return unique + ".npy";
}

std::string format_number(double value, bool available) {
  if (!available) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6f", value);
  return text;
}

}  // namespace

// Runs `graph` on the sample with every activation as an output; returns them by name.
Result<TensorValues> run_with_all_activations(const ir::Graph& graph,
                                              const std::vector<std::string>& files,
                                              const ConvertOptions& options) {
  const std::vector<std::string> activations = calibration_tensors(graph);
  model::ModelBuilder builder;
  ORKNN_RETURN_IF_ERROR(build_model(graph, ExportMetadata{}, activations, &builder));
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeModel> model, RuntimeModel::load(builder));
  const std::vector<InputDescription> inputs = describe_inputs(graph, options);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ORKNN_ASSIGN_OR_RETURN(InputData data,
                           load_input_file(files[i], inputs[i], "accuracy-analysis input"));
    ORKNN_RETURN_IF_ERROR(model->set_input(i, data.bytes.data(), data.bytes.size(), data.format));
  }
  ORKNN_RETURN_IF_ERROR(model->run());
  TensorValues values;
  const graph::Graph& runtime_graph = model->graph();
  for (size_t i = 0; i < runtime_graph.outputs.size(); ++i) {
    const std::string& name = runtime_graph.tensor(runtime_graph.outputs[i]).name;
    if (values.count(name)) continue;
    ORKNN_RETURN_IF_ERROR(model->output_floats(i, &values[name]));
  }
  return values;
}

// The node alone, its run-time inputs turned into graph inputs, fed the float model's values.
Result<TensorValues> run_single_layer(const ir::Graph& quantized, const ir::Node& node,
                                      const TensorValues& golden) {
  const ir::Graph single = single_node_graph(quantized, node);
  if (single.inputs.empty()) return TensorValues{};
  model::ModelBuilder builder;
  ORKNN_RETURN_IF_ERROR(build_model(single, ExportMetadata{}, {}, &builder));
  ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeModel> model, RuntimeModel::load(builder));
  for (size_t i = 0; i < single.inputs.size(); ++i) {
    auto value = golden.find(single.inputs[i]);
    if (value == golden.end()) return TensorValues{};  // not a float-model tensor
    exec::UserTensorFormat format;
    format.type = DataType::kFloat32;
    format.layout = exec::Layout::kNCHW;
    ORKNN_RETURN_IF_ERROR(
        model->set_input(i, value->second.data(), value->second.size() * sizeof(float), format));
  }
  ORKNN_RETURN_IF_ERROR(model->run());
  TensorValues values;
  for (size_t i = 0; i < single.outputs.size(); ++i) {
    ORKNN_RETURN_IF_ERROR(model->output_floats(i, &values[single.outputs[i]]));
  }
  return values;
}

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0;
  double norm_a = 0;
  double norm_b = 0;
  const size_t count = std::min(a.size(), b.size());
  for (size_t i = 0; i < count; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    norm_a += static_cast<double>(a[i]) * a[i];
    norm_b += static_cast<double>(b[i]) * b[i];
  }
  if (norm_a == 0 && norm_b == 0) return 1.0;
  if (norm_a == 0 || norm_b == 0) return 0.0;
  return dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
}

double euclidean_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  const size_t count = std::min(a.size(), b.size());
  for (size_t i = 0; i < count; ++i) {
    const double difference = static_cast<double>(a[i]) - b[i];
    sum += difference * difference;
  }
  return std::sqrt(sum);
}

Status analyze_accuracy(const AccuracyAnalysisInput& input) {
  const ConvertOptions& options = *input.options;
  const ir::Graph& float_graph = *input.float_graph;
  const ir::Graph& quantized = *input.quantized_graph;
  if (options.analysis_inputs.size() != float_graph.inputs.size()) {
    return invalid_argument("accuracy-analysis needs one input file per model input (",
                            float_graph.inputs.size(), "), got ", options.analysis_inputs.size(),
                            " (rknn-convert accuracy-analysis MODEL.onnx INPUT...)");
  }
  const fs::path directory = options.analysis_output_directory;
  std::error_code error;
  fs::create_directories(directory / "golden", error);
  fs::create_directories(directory / "quantized", error);
  if (error) {
    return invalid_argument("cannot create '", (directory / "quantized").string(),
                            "': ", error.message());
  }

  Result<TensorValues> golden_result =
      run_with_all_activations(float_graph, options.analysis_inputs, options);
  if (!golden_result.ok()) return std::move(golden_result).take_status().add_context("float model");
  const TensorValues& golden = golden_result.value();
  Result<TensorValues> quantized_result =
      run_with_all_activations(quantized, options.analysis_inputs, options);
  if (!quantized_result.ok())
    return std::move(quantized_result).take_status().add_context("quantized model");
  const TensorValues& entire = quantized_result.value();

  std::set<std::string> used_names;
  std::map<std::string, std::string> files;
  for (const auto& [name, values] : golden) {
    const std::string file = file_name_for(name, &used_names);
    files[name] = file;
    ORKNN_RETURN_IF_ERROR(write_npy_float32((directory / "golden" / file).string(),
                                            float_graph.tensor(name).shape, values.data()));
    auto quantized_values = entire.find(name);
    if (quantized_values != entire.end()) {
      ORKNN_RETURN_IF_ERROR(write_npy_float32((directory / "quantized" / file).string(),
                                              quantized.tensor(name).shape,
                                              quantized_values->second.data()));
    }
  }

  std::string table;
  char line[512];
  std::snprintf(line, sizeof(line), "%-5s %-20s %-48s %-10s %12s %12s %12s %12s  %s\n", "#",
                "op_type", "output", "dtype", "entire_cos", "entire_euc", "single_cos",
                "single_euc", "");
  table += line;
  int flagged = 0;
  int index = 0;
  for (const ir::Node& node : quantized.nodes) {
    Result<TensorValues> single = run_single_layer(quantized, node, golden);
    if (!single.ok())
      return std::move(single).take_status().add_context("single-layer run of " + node.describe());
    for (const std::string& output : node.outputs) {
      if (output.empty() || !golden.count(output)) continue;
      const std::vector<float>& reference = golden.at(output);
      const bool has_entire = entire.count(output) != 0;
      const bool has_single = single.value().count(output) != 0;
      const double entire_cosine =
          has_entire ? cosine_similarity(reference, entire.at(output)) : 1.0;
      const double entire_distance =
          has_entire ? euclidean_distance(reference, entire.at(output)) : 0.0;
      const double single_cosine =
          has_single ? cosine_similarity(reference, single.value().at(output)) : 1.0;
      const double single_distance =
          has_single ? euclidean_distance(reference, single.value().at(output)) : 0.0;
      const bool flag =
          (has_entire && entire_cosine < kFlagBelow) || (has_single && single_cosine < kFlagBelow);
      flagged += flag;
      const ir::Tensor& tensor = quantized.tensor(output);
      std::snprintf(line, sizeof(line), "%-5d %-20s %-48s %-10s %12s %12s %12s %12s  %s\n", index,
                    node.op_type.c_str(), output.c_str(), data_type_name(tensor.type),
                    format_number(entire_cosine, has_entire).c_str(),
                    format_number(entire_distance, has_entire).c_str(),
                    format_number(single_cosine, has_single).c_str(),
                    format_number(single_distance, has_single).c_str(), flag ? "*" : "");
      table += line;
    }
    ++index;
  }

  std::string text;
  text += "# rknn-convert accuracy analysis\n";
  text += "# model: " + options.model_path + "\n";
  text += "# inputs:";
  for (const std::string& file : options.analysis_inputs) text += " " + file;
  text += "\n";
  text += "# quantization: " + options.quantized_dtype + ", " +
          algorithm_name(options.quantized_algorithm) + ", " +
          method_name(options.quantized_method) + "\n";
  text += "# entire: the whole quantized model vs the float model (golden/ vs quantized/)\n";
  text += "# single: the quantized layer alone, fed the float model's values of its inputs\n";
  text +=
      "# cos: cosine similarity (1 is identical); euc: euclidean distance; '*': cosine < 0.99\n";
  text += "# " + std::to_string(flagged) + " of the compared outputs are marked\n";
  text += table;
  const fs::path report = directory / "error_analysis.txt";
  std::ofstream file(report);
  file << text;
  if (!file) return invalid_argument("cannot write '", report.string(), "'");
  if (!options.quiet) {
    std::printf("accuracy analysis: %zu tensors compared, %d with cosine < 0.99; see %s\n",
                golden.size(), flagged, report.string().c_str());
  }
  return ok_status();
}

}  // namespace orknn::convert
