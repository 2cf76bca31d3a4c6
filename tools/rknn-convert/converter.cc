#include "converter.h"

#include <chrono>
#include <filesystem>
#include <memory>

#include "analysis/accuracy_analysis.h"
#include "analysis/layer_sensitivity.h"
#include "export/model_export.h"
#include "export/runtime_model.h"
#include "onnx_import/onnx_graph_import.h"
#include "onnx_import/onnx_loader.h"
#include "passes/passes.h"
#include "quantize/calibration.h"
#include "quantize/float_precision.h"
#include "quantize/int8_rewrite.h"
#include "quantize/layer_inputs.h"
#include "quantize/quantization_config.h"
#include "quantize/sequential_refinement.h"

namespace orknn::convert {
namespace {

namespace fs = std::filesystem;

bool quantizing(const ConvertOptions& options) {
  return options.do_quantization;
}

Status validate_options(const ConvertOptions& options) {
  if (options.model_path.empty()) {
    return invalid_argument(
        "no model given (rknn-convert MODEL.onnx -o MODEL.rknn, or `model:` "
        "in the config file)");
  }
  if (options.rknn_batch_size > 1 && !options.dynamic_input.empty()) {
    return invalid_argument(
        "rknn_batch_size cannot be combined with dynamic_input (give the "
        "batch in the shape sets instead)");
  }
  return ok_status();
}

// Two builds of the same model for different dynamic_input sets must differ only in shapes;
// otherwise the model computes something from its input shape that was folded into a constant.
Status compare_shape_sets(const ir::Graph& reference, const ir::Graph& other, size_t set) {
  auto mismatch = [&](const std::string& what) {
    return invalid_argument("dynamic_input: set ", set, " gives a different graph than set 0 (",
                            what,
                            "): the model derives constants from its input shape, which a "
                            "converted model cannot recompute at run time");
  };
  if (reference.nodes.size() != other.nodes.size()) return mismatch("node count");
  for (size_t i = 0; i < reference.nodes.size(); ++i) {
    const ir::Node& a = reference.nodes[i];
    const ir::Node& b = other.nodes[i];
    if (a.op_type != b.op_type || a.inputs.size() != b.inputs.size()) {
      return mismatch(a.describe() + " vs " + b.describe());
    }
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      if (a.inputs[k].empty() != b.inputs[k].empty()) return mismatch(a.describe() + " inputs");
      if (a.inputs[k].empty()) continue;
      const ir::Tensor& ta = reference.tensor(a.inputs[k]);
      const ir::Tensor& tb = other.tensor(b.inputs[k]);
      if (ta.is_constant() != tb.is_constant()) return mismatch(a.describe() + " inputs");
      if (ta.is_constant() && (*ta.data != *tb.data || ta.shape != tb.shape)) {
        return mismatch(a.describe() + ": operand '" + a.inputs[k] + "' differs");
      }
    }
  }
  return ok_status();
}

Status check_op_targets(const ir::Graph& graph, const ConvertOptions& options,
                        ConversionSummary* summary) {
  for (const auto& [name, target] : options.op_target) {
    if (graph.producer(name) < 0) {
      return invalid_argument("op_target: '", name,
                              "' is not the output of a node in the converted model (fusion may "
                              "have merged it into the next node; accuracy-analysis lists the "
                              "layer names)");
    }
    if (target == "npu" && summary) {
      summary->notes.push_back("op_target '" + name +
                               "': npu is where int8 nodes the NPU supports go anyway; the "
                               "request is recorded but changes nothing");
    }
  }
  return ok_status();
}

// Records each op_target request as the producing node's `op_target` attribute, which the
// runtime's placement reads (exec/placement.cc: "gpu" insists on the GPU, "cpu" keeps the node
// off the other devices). "auto" records nothing.
Status record_op_targets(const ConvertOptions& options, ir::Graph* graph) {
  for (const auto& [name, target] : options.op_target) {
    if (target == "auto") continue;
    const int producer = graph->producer(name);
    if (producer < 0) {
      return invalid_argument("op_target: '", name,
                              "' is no longer produced by a node after quantization");
    }
    graph->nodes[static_cast<size_t>(producer)].attributes["op_target"] =
        ir::make_string_attribute(target);
  }
  return ok_status();
}

std::string precision_text(const ConvertOptions& options, int qdq_pairs) {
  if (qdq_pairs > 0) return "int8 (imported from the QDQ model), float16 elsewhere";
  if (!quantizing(options)) return float_type_name(options.float_dtype);
  return std::string("int8 (") + options.quantized_dtype + ", " +
         algorithm_name(options.quantized_algorithm) + ", " +
         method_name(options.quantized_method) + "), float16 elsewhere";
}

}  // namespace

Result<ir::Graph> build_float_graph(const onnx::ModelProto& model, const ConvertOptions& options,
                                    size_t shape_set, int* out_qdq_pairs) {
  ORKNN_ASSIGN_OR_RETURN(ir::Graph graph, import_onnx_graph(model, nullptr));
  ORKNN_RETURN_IF_ERROR(normalize_onnx_ops(&graph));
  ORKNN_RETURN_IF_ERROR(select_inputs_outputs(&graph, options));
  ORKNN_RETURN_IF_ERROR(resolve_input_shapes(&graph, options, shape_set));
  ORKNN_RETURN_IF_ERROR(infer_shapes_and_fold(&graph, options.optimization_level >= 1));
  int qdq_pairs = 0;
  ORKNN_RETURN_IF_ERROR(import_qdq(&graph, &qdq_pairs));
  ORKNN_RETURN_IF_ERROR(operands_to_attributes(&graph));
  if (options.optimization_level >= 2) ORKNN_RETURN_IF_ERROR(fold_batch_norm(&graph));
  if (options.optimization_level >= 1) {
    ORKNN_RETURN_IF_ERROR(fuse_silu(&graph));
    const bool int8 = quantizing(options) || qdq_pairs > 0;
    ORKNN_RETURN_IF_ERROR(fuse_activation(&graph, !int8));
  }
  ORKNN_RETURN_IF_ERROR(check_supported_ops(graph));
  ORKNN_RETURN_IF_ERROR(assign_input_preprocessing(&graph, options));
  if (out_qdq_pairs) *out_qdq_pairs = qdq_pairs;
  return graph;
}

namespace {

// Everything before export, shared by convert, hybrid-step1 and accuracy-analysis.
struct PreparedModel {
  ir::Graph float_graph;  // float32, fused
  ir::Graph final_graph;  // in the requested precision, batch applied
  CalibrationResult calibration;
  std::map<std::string, TensorRange> ranges;  // what the int8 rewrite used
  std::set<std::string> float16_tensors;
  int qdq_pairs = 0;
  bool quantized = false;
};

// A QDQ model: its own parameters, spread through data movement; the rest float16.
Status keep_model_quantization(const ConvertOptions& options, ir::Graph* graph,
                               ConversionSummary* summary) {
  QuantizationPlan plan;
  plan.method = options.quantized_method;
  plan.share_through_data_movement = options.optimization_level >= 1;
  std::vector<std::string> notes;
  ORKNN_RETURN_IF_ERROR(rewrite_to_int8(graph, plan, &notes));
  if (!summary) return ok_status();
  summary->notes.insert(summary->notes.end(), notes.begin(), notes.end());
  if (!options.dataset_path.empty()) {
    summary->notes.push_back(
        "the model is QDQ-quantized: its own scales are used and the dataset is not read");
  }
  return ok_status();
}

// w8a8 from calibration ranges, overridden per tensor by a quantization config (hybrid).
Status quantize_with_calibration(const ConvertOptions& options, PreparedModel* prepared,
                                 ir::Graph* graph, ConversionSummary* summary) {
  QuantizationOverrides overrides;
  if (!options.quantization_config_path.empty()) {
    ORKNN_ASSIGN_OR_RETURN(overrides, read_quantization_config(options.quantization_config_path));
    ORKNN_RETURN_IF_ERROR(check_overrides_against(overrides, prepared->float_graph,
                                                  options.quantization_config_path));
  }
  // Calibration inputs of the product layers, for their weight rounding and bias correction.
  std::map<std::string, LayerInputRows> layer_inputs;
  std::unique_ptr<LayerInputCollector> collector;
  Dataset dataset;
  // Tensors whose range the config fixes, or whose node stays float16, need no calibration.
  std::vector<std::string> needed;
  for (const std::string& name : calibration_tensors(prepared->float_graph)) {
    if (!overrides.ranges.count(name) && !overrides.float16_tensors.count(name)) {
      needed.push_back(name);
    }
  }
  const bool rows_used =
      options.weight_rounding != WeightRounding::kNearest || options.bias_correction;
  if (!needed.empty()) {
    if (options.dataset_path.empty()) {
      return invalid_argument(
          "do_quantization is true but no dataset is given: calibration needs sample inputs "
          "(--dataset FILE, one sample per line), a quantization_config with every range, or "
          "--do-quantization false for a float model (",
          needed.size(), " tensors need a range, e.g. '", needed[0], "')");
    }
    ORKNN_ASSIGN_OR_RETURN(dataset,
                           read_dataset(options.dataset_path, prepared->float_graph.inputs.size()));
    if (rows_used) {
      collector =
          std::make_unique<LayerInputCollector>(prepared->float_graph, options.weight_rounding_rows,
                                                static_cast<int>(dataset.samples.size()));
    }
    ORKNN_ASSIGN_OR_RETURN(prepared->calibration, calibrate(prepared->float_graph, dataset, needed,
                                                            options, collector.get()));
    if (collector) layer_inputs = collector->take_rows();
  }
  prepared->ranges = prepared->calibration.ranges;
  for (const auto& [name, range] : overrides.ranges) prepared->ranges[name] = range;
  prepared->float16_tensors = overrides.float16_tensors;

  // Sequential calibration re-chooses every layer's weights and bias after the rewrite, from
  // the quantized model's own inputs; the rewrite then only needs nearest codes to start from.
  const bool sequential = options.sequential_calibration && collector && !dataset.samples.empty();
  QuantizationPlan plan;
  plan.ranges = prepared->ranges;
  plan.float16_tensors = overrides.float16_tensors;
  plan.method = options.quantized_method;
  plan.share_through_data_movement = options.optimization_level >= 3;
  plan.layer_inputs = &layer_inputs;
  plan.weight_rounding = sequential ? WeightRounding::kNearest : options.weight_rounding;
  plan.bias_correction = sequential ? false : options.bias_correction;
  plan.threads = options.calibration_threads;
  SequentialRefinementInput refinement;
  refinement.float_graph = &prepared->float_graph;
  refinement.dataset = &dataset;
  refinement.collector = collector.get();
  refinement.float_rows = &layer_inputs;
  refinement.options = &options;
  auto rewrite = [&](ir::Graph* target, std::vector<std::string>* notes) -> Status {
    ORKNN_RETURN_IF_ERROR(rewrite_to_int8(target, plan, notes));
    if (!sequential) return ok_status();
    ORKNN_ASSIGN_OR_RETURN(SequentialRefinementResult refined,
                           refine_layers_sequentially(refinement, target));
    notes->push_back("sequential calibration: " + std::to_string(refined.refined_layers) +
                     " layers refined on the quantized model's inputs");
    return ok_status();
  };
  std::vector<std::string> notes;
  const ir::Graph before_rewrite = options.auto_hybrid_layers > 0 ? *graph : ir::Graph{};
  ORKNN_RETURN_IF_ERROR(rewrite(graph, &notes));
  if (options.auto_hybrid_layers > 0 && !dataset.samples.empty()) {
    ORKNN_ASSIGN_OR_RETURN(
        std::vector<LayerLoss> losses,
        rank_layers_by_int8_loss(prepared->float_graph, *graph, dataset.samples[0].files, options));
    const size_t count = std::min(losses.size(), static_cast<size_t>(options.auto_hybrid_layers));
    for (size_t i = 0; i < count; ++i) plan.float16_tensors.insert(losses[i].output);
    *graph = before_rewrite;
    notes.clear();
    ORKNN_RETURN_IF_ERROR(rewrite(graph, &notes));
    prepared->float16_tensors = plan.float16_tensors;
  }
  if (summary) {
    summary->notes.insert(summary->notes.end(), notes.begin(), notes.end());
    summary->calibration_samples = prepared->calibration.samples;
    summary->calibration_seconds = prepared->calibration.seconds;
    summary->float16_layers.assign(plan.float16_tensors.begin(), plan.float16_tensors.end());
  }
  return ok_status();
}

Result<PreparedModel> prepare(const ConvertOptions& options, ConversionSummary* summary) {
  ORKNN_RETURN_IF_ERROR(validate_options(options));
  ORKNN_ASSIGN_OR_RETURN(onnx::ModelProto model, load_onnx_model(options.model_path));
  PreparedModel prepared;
  if (summary) summary->source = describe_source_model(model);
  ORKNN_ASSIGN_OR_RETURN(prepared.float_graph,
                         build_float_graph(model, options, 0, &prepared.qdq_pairs));
  for (size_t set = 1; set < options.dynamic_input.size(); ++set) {
    ORKNN_ASSIGN_OR_RETURN(ir::Graph other, build_float_graph(model, options, set, nullptr));
    ORKNN_RETURN_IF_ERROR(compare_shape_sets(prepared.float_graph, other, set));
  }
  ORKNN_RETURN_IF_ERROR(check_op_targets(prepared.float_graph, options, summary));

  ir::Graph graph = prepared.float_graph;
  if (prepared.qdq_pairs > 0) {
    ORKNN_RETURN_IF_ERROR(keep_model_quantization(options, &graph, summary));
    prepared.quantized = true;
  } else if (quantizing(options)) {
    ORKNN_RETURN_IF_ERROR(quantize_with_calibration(options, &prepared, &graph, summary));
    prepared.quantized = true;
  } else if (options.float_dtype == FloatType::kFloat16) {
    convert_to_float16(&graph, [](const ir::Tensor&) { return true; });
  }
  ORKNN_RETURN_IF_ERROR(apply_batch_size(&graph, options.rknn_batch_size));
  ORKNN_RETURN_IF_ERROR(record_op_targets(options, &graph));
  prepared.final_graph = std::move(graph);
  return prepared;
}

ExportMetadata export_metadata(const ConvertOptions& options) {
  ExportMetadata metadata;
  metadata.target_platform = options.target_platform;
  metadata.custom_string = options.custom_string;
  metadata.dynamic_shape_sets = options.dynamic_input;
  return metadata;
}

}  // namespace

Status convert_model(const ConvertOptions& options, ConversionSummary* out_summary) {
  const auto start = std::chrono::steady_clock::now();
  ConversionSummary summary;
  summary.model_path = options.model_path;
  summary.output_path = options.output_path;
  summary.target_platform = options.target_platform;
  summary.optimization_level = options.optimization_level;
  if (options.output_path.empty()) {
    return invalid_argument(
        "no output file given (-o MODEL.rknn, or `export_path:` in the "
        "config file)");
  }
  ORKNN_ASSIGN_OR_RETURN(PreparedModel prepared, prepare(options, &summary));
  summary.qdq_pairs = prepared.qdq_pairs;
  summary.precision = precision_text(options, prepared.qdq_pairs);

  model::ModelBuilder builder;
  ORKNN_RETURN_IF_ERROR(build_model(prepared.final_graph, export_metadata(options), {}, &builder));
  if (options.verify_with_runtime) {
    // The runtime loads and prepares the model exactly as rknn_init will; a model it cannot
    // run (an attribute combination no kernel supports, or a converter bug) is not written.
    Result<std::unique_ptr<RuntimeModel>> loaded = RuntimeModel::load(builder);
    if (!loaded.ok()) {
      return std::move(loaded).take_status().add_context(
          "the runtime cannot load the converted model");
    }
  }
  ORKNN_RETURN_IF_ERROR(builder.write_file(options.output_path));

  describe_graph(prepared.final_graph, options, &summary);
  std::error_code error;
  summary.output_bytes = fs::file_size(options.output_path, error);
  summary.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (out_summary) *out_summary = std::move(summary);
  return ok_status();
}

Status write_quantization_config(const ConvertOptions& options) {
  ConvertOptions step1 = options;
  step1.do_quantization = true;
  std::string path = options.output_path;
  if (path.empty()) path = fs::path(options.model_path).stem().string() + ".quantization.yaml";
  ORKNN_ASSIGN_OR_RETURN(PreparedModel prepared, prepare(step1, nullptr));
  if (prepared.qdq_pairs > 0) {
    return invalid_argument(
        "the model is QDQ-quantized; its quantization comes from the model "
        "and hybrid quantization does not apply");
  }
  return write_quantization_config_file(
      path, prepared.final_graph, calibration_tensors(prepared.float_graph), prepared.calibration,
      prepared.ranges, prepared.float16_tensors);
}

Status run_accuracy_analysis(const ConvertOptions& options) {
  ConvertOptions analysis = options;
  analysis.rknn_batch_size = 0;  // layers are compared one frame at a time
  ORKNN_ASSIGN_OR_RETURN(PreparedModel prepared, prepare(analysis, nullptr));
  if (!prepared.quantized) {
    return invalid_argument(
        "accuracy-analysis compares the float model with the quantized one; "
        "do_quantization is false");
  }
  AccuracyAnalysisInput input;
  input.float_graph = &prepared.float_graph;
  input.quantized_graph = &prepared.final_graph;
  input.options = &analysis;
  return analyze_accuracy(input);
}

}  // namespace orknn::convert
