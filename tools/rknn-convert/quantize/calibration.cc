#include "quantize/calibration.h"

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "export/model_export.h"
#include "export/runtime_model.h"
#include "report/progress_bar.h"

namespace orknn::convert {
namespace {

// Feeds one dataset sample to `model`.
Status set_sample(RuntimeModel* model, const DatasetSample& sample,
                  const std::vector<InputDescription>& inputs, const std::string& dataset_path) {
  const std::string where = "dataset '" + dataset_path + "' line " + std::to_string(sample.line);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ORKNN_ASSIGN_OR_RETURN(InputData data, load_input_file(sample.files[i], inputs[i], where));
    Status status = model->set_input(i, data.bytes.data(), data.bytes.size(), data.format);
    if (!status.ok()) return std::move(status).add_context(where + ": '" + sample.files[i] + "'");
  }
  return ok_status();
}

}  // namespace

std::vector<InputDescription> describe_inputs(const ir::Graph& graph,
                                              const ConvertOptions& options) {
  std::vector<InputDescription> inputs;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const ir::Tensor& tensor = graph.tensor(graph.inputs[i]);
    InputDescription input;
    input.name = tensor.name;
    input.shape = tensor.shape;
    // A quantized input holds real values: files are read as such and the runtime quantizes.
    input.type = tensor.is_quantized() ? DataType::kFloat32 : tensor.type;
    auto preprocessing = graph.preprocessing.find(tensor.name);
    input.image = preprocessing != graph.preprocessing.end() && preprocessing->second.nhwc_layout;
    if (!options.quant_img_rgb2bgr.empty()) {
      input.rgb_to_bgr = options.quant_img_rgb2bgr.size() == 1 ? options.quant_img_rgb2bgr[0]
                                                               : options.quant_img_rgb2bgr[i];
    }
    inputs.push_back(input);
  }
  return inputs;
}

Result<CalibrationResult> calibrate(const ir::Graph& float_graph, const Dataset& dataset,
                                    const std::vector<std::string>& tensors,
                                    const ConvertOptions& options,
                                    LayerInputCollector* layer_inputs) {
  model::ModelBuilder builder;
  ORKNN_RETURN_IF_ERROR(build_model(float_graph, ExportMetadata{}, tensors, &builder));
  Result<std::unique_ptr<RuntimeModel>> first = RuntimeModel::load(builder);
  if (!first.ok()) return std::move(first).take_status().add_context("calibration model");

  // Where each observed tensor appears among the outputs.
  std::map<std::string, size_t> output_of;
  const graph::Graph& runtime_graph = first.value()->graph();
  for (size_t i = 0; i < runtime_graph.outputs.size(); ++i) {
    output_of[runtime_graph.tensor(runtime_graph.outputs[i]).name] = i;
  }
  std::vector<size_t> output_index;
  std::map<std::string, size_t> position_of;  // in `tensors`
  for (const std::string& name : tensors) {
    position_of[name] = output_index.size();
    output_index.push_back(output_of.at(name));
  }

  const int sample_count = static_cast<int>(dataset.samples.size());
  int threads = options.calibration_threads > 0
                    ? options.calibration_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::max(1, std::min(threads, sample_count));
  std::vector<std::unique_ptr<RuntimeModel>> models;
  models.push_back(std::move(first).value());
  for (int i = 1; i < threads; ++i) {
    ORKNN_ASSIGN_OR_RETURN(std::unique_ptr<RuntimeModel> copy, models[0]->duplicate());
    models.push_back(std::move(copy));
  }

  const bool keep_histogram = options.quantized_algorithm != QuantizedAlgorithm::kNormal;
  std::vector<TensorStatistics> statistics(tensors.size(), TensorStatistics(keep_histogram));
  const std::vector<InputDescription> inputs = describe_inputs(float_graph, options);
  ProgressBar progress("calibration", sample_count, "samples", !options.quiet);

  std::mutex mutex;
  std::atomic<int> next_sample{0};
  std::atomic<bool> failed{false};
  Status first_error;
  // Finished samples wait here until every earlier one has been merged.
  std::map<int, std::vector<std::vector<float>>> pending;
  int merged = 0;

  auto worker = [&](RuntimeModel* model) {
    while (!failed) {
      const int index = next_sample++;
      if (index >= sample_count) return;
      const DatasetSample& sample = dataset.samples[static_cast<size_t>(index)];
      Status status = set_sample(model, sample, inputs, dataset.path);
      if (status.ok()) status = model->run();
      std::vector<std::vector<float>> outputs(tensors.size());
      for (size_t k = 0; status.ok() && k < tensors.size(); ++k) {
        status = model->output_floats(output_index[k], &outputs[k]);
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (!status.ok()) {
        if (!failed.exchange(true)) first_error = std::move(status);
        return;
      }
      pending[index] = std::move(outputs);
      while (!pending.empty() && pending.begin()->first == merged) {
        const auto& values = pending.begin()->second;
        for (size_t k = 0; k < tensors.size(); ++k)
          statistics[k].add(values[k].data(), values[k].size());
        if (layer_inputs) {
          layer_inputs->add_sample(merged, [&](const std::string& name) {
            auto found = position_of.find(name);
            return found == position_of.end() ? nullptr : &values[found->second];
          });
        }
        pending.erase(pending.begin());
        ++merged;
        progress.update(merged);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker, models[static_cast<size_t>(i)].get());
  worker(models[0].get());
  for (std::thread& thread : pool) thread.join();
  progress.finish();
  if (failed) return std::move(first_error).add_context("calibration");

  CalibrationResult result;
  result.samples = sample_count;
  result.seconds = progress.elapsed_seconds();
  for (size_t k = 0; k < tensors.size(); ++k) {
    result.observed[tensors[k]] = statistics[k].observed();
    result.ranges[tensors[k]] = statistics[k].select_range(options.quantized_algorithm);
  }
  return result;
}

}  // namespace orknn::convert
