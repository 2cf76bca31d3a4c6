#include "devices/npu/npu_executable.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "core/logging.h"
#include "devices/npu/cbuf_plan.h"
#include "devices/npu/npu_memory.h"
#include "devices/npu/regcmd_builder.h"
#include "driver_shim/npu_registers.h"

namespace orknn::devices::npu {
namespace {

using driver_shim::NpuMemory;
using driver_shim::NpuTask;

constexpr uint32_t kJobTimeoutMs = 120000;

// Segment inputs and outputs converted between the runtime's layout and the NPU's (one per
// tensor and run): what in-place I/O saves, and what tests count.
std::atomic<uint64_t> layout_conversions{0};
constexpr int kMaxCores = 3;

// The runtime's layout <-> NC1HWC2 (the NPU's: 16-byte atoms of 16 int8 or 8 float16
// channels), one image; images follow each other in both layouts. The runtime's layout is NCHW,
// or for an [M, K] matrix (Gemm/MatMul) row-major, which is the 1 x M map of K channels stored
// channels innermost.
struct RuntimeLayout {
  int64_t channel_stride, pixel_stride;  // in elements
};
RuntimeLayout runtime_layout(const FeatureShape& shape, bool matrix) {
  return matrix ? RuntimeLayout{1, shape.channels} : RuntimeLayout{shape.height * shape.width, 1};
}

enum class Direction { kToNpu, kFromNpu };

// Copies one image between the runtime's layout (`runtime`) and NC1HWC2 (`native`).
void convert_image(const FeatureShape& shape, bool float16, bool matrix, Direction direction,
                   uint8_t* runtime, uint8_t* native) {
  const int64_t plane = shape.height * shape.width;
  const int64_t block = feature_channel_block(float16), size = float16 ? 2 : 1;
  const RuntimeLayout layout = runtime_layout(shape, matrix);
  for (int64_t c = 0; c < shape.channels; ++c) {
    uint8_t* atoms = native + (c / block) * plane * 16 + (c % block) * size;
    uint8_t* channel = runtime + c * layout.channel_stride * size;
    for (int64_t i = 0; i < plane; ++i) {
      uint8_t* element = channel + i * layout.pixel_stride * size;
      if (direction == Direction::kToNpu) {
        std::memcpy(atoms + i * 16, element, size_t(size));
      } else {
        std::memcpy(element, atoms + i * 16, size_t(size));
      }
    }
  }
}

class NpuExecutable final : public Executable {
 public:
  explicit NpuExecutable(std::shared_ptr<driver_shim::Npu> npu) : npu_(std::move(npu)) {}

  ~NpuExecutable() override {
    for (NpuMemory* memory : all_memory()) {
      if (memory->host) (void)npu_->destroy_memory(*memory);
    }
  }

  Status build(const graph::Graph& graph, const std::vector<size_t>& node_indices,
               const std::vector<graph::Shape>& shapes) {
    for (size_t index : node_indices) {
      ORKNN_ASSIGN_OR_RETURN(std::vector<NpuLayer> layers, lower_node(graph, index, shapes));
      for (NpuLayer& layer : layers) layers_.push_back(std::move(layer));
    }
    if (!std::getenv("ORKNN_NPU_NO_FUSION")) fuse_layers(graph, &layers_);
    // Layers of different batch sizes never exchange data (a tensor has one batch size).
    for (const NpuLayer& layer : layers_) batch_ = std::max(batch_, layer.input.batch);
    ORKNN_RETURN_IF_ERROR(allocate_tensors(graph, node_indices, shapes));
    ORKNN_RETURN_IF_ERROR(upload_constants());
    return build_variants();
  }

  // Register programs carry every buffer's address, so they are built again when an
  // application buffer replaces one of ours.
  Status build_variants() {
    for (Variant& variant : variants_) {
      if (variant.regcmd.host) ORKNN_RETURN_IF_ERROR(npu_->destroy_memory(variant.regcmd));
    }
    variants_.clear();
    const int cores = std::min(npu_->info().core_count, kMaxCores);
    for (int count = 1; count <= cores; ++count) {
      ORKNN_ASSIGN_OR_RETURN(Variant variant,
                             batch_ > 1 ? build_batch_variant(count) : build_variant(count));
      variants_.push_back(std::move(variant));
    }
    return ok_status();
  }

  // In place when the memory is this NPU's (allocated or imported) and the buffer is an int8
  // feature map in NC1HWC2 with the NPU's 16-channel blocks, big enough for every image.
  Result<bool> bind_native(int32_t tensor, const NativeIoMemory& native) override {
    FeatureBuffer* buffer = buffer_of(tensor);
    if (!buffer || !(buffer->from_outside || buffer->to_outside)) return false;
    const NpuDeviceMemory* memory = native.memory ? npu_memory_of(native.memory, *npu_) : nullptr;
    // float16 feature maps (C2 = 8) and [M, K] matrix operands are always converted.
    const bool int8_feature_map = !buffer->float16 && !buffer->matrix;
    const uint64_t bytes = feature_bytes(buffer->shape, false) * uint64_t(buffer->shape.batch);
    const bool fits = memory && int8_feature_map && native.type == DataType::kInt8 &&
                      native.c2 == 16 && memory->size() >= bytes && memory->npu_address() % 16 == 0;
    const NpuDeviceMemory* chosen = fits ? memory : nullptr;
    if (chosen != buffer->in_place) {
      buffer->in_place = chosen;
      ORKNN_RETURN_IF_ERROR(build_variants());
    }
    return fits;
  }

  Status bind(const std::vector<void*>& tensor_addresses) override {
    for (FeatureBuffer& buffer : tensors_) {
      buffer.bound = tensor_addresses[static_cast<size_t>(buffer.tensor)];
      if ((buffer.from_outside || buffer.to_outside) && !buffer.bound) {
        return internal_failure("NPU segment: tensor ", buffer.tensor, " has no address");
      }
    }
    return ok_status();
  }

  void set_run_options(const RunOptions& options) override { options_ = options; }

  Status run(exec::Profiler* profiler) override {
    for (FeatureBuffer& buffer : tensors_) {
      if (!buffer.from_outside || buffer.in_place) continue;
      ++layout_conversions;
      for (int64_t image = 0; image < buffer.shape.batch; ++image) {
        convert_image(buffer.shape, buffer.float16, buffer.matrix, Direction::kToNpu,
                      static_cast<uint8_t*>(buffer.bound) + image * image_bytes(buffer),
                      buffer.memory.host + image * feature_bytes(buffer.shape, buffer.float16));
      }
      ORKNN_RETURN_IF_ERROR(
          npu_->sync_memory(buffer.memory, driver_shim::SyncDirection::kToDevice));
    }
    const int available = std::min(npu_->info().core_count, kMaxCores);
    if (options_.core_mask != 0xffff && (options_.core_mask >> available) != 0) {
      return invalid_argument("core mask 0x", std::hex, options_.core_mask, std::dec,
                              " names a core this ", available, "-core NPU does not have");
    }
    const std::vector<int> cores = batch_ > 1 ? batch_cores() : physical_cores();
    const Variant& variant = variants_[std::max<size_t>(cores.size(), 1) - 1];
    std::vector<std::array<uint64_t, kMaxCores>> layer_cycles(layers_.size());
    for (const Step& step : variant.steps) {
      driver_shim::NpuJob job;
      std::vector<size_t> chain_positions;
      for (size_t chain = 0; chain < step.chains.size(); ++chain) {
        if (step.chains[chain].empty()) continue;
        if (!cores.empty()) job.core_mask |= 1u << cores[chain];
        job.core_tasks.push_back(step.chains[chain]);
        chain_positions.push_back(chain);
      }
      if (job.core_tasks.empty()) continue;
      // Buffers the job touches: what implicit-sync backends (rocket) order jobs by.
      for (const auto& layers : step.task_layers) {
        for (size_t layer : layers) {
          job.writes.push_back(&active_memory(*buffer_of(layers_[layer].output_tensor)));
        }
      }
      for (const FeatureBuffer& buffer : tensors_) job.reads.push_back(&active_memory(buffer));
      for (const LayerConstants& constants : constants_) {
        if (constants.weights.host) job.reads.push_back(&constants.weights);
      }
      job.reads.push_back(&variant.regcmd);
      ORKNN_ASSIGN_OR_RETURN(driver_shim::NpuJobId id, npu_->submit(job));
      ORKNN_ASSIGN_OR_RETURN(driver_shim::NpuJobResult result, npu_->wait(id, kJobTimeoutMs));
      // Attribute each task's cycles to its layer and to the core that ran it.
      for (size_t i = 0; i < chain_positions.size() && i < result.task_cycles.size(); ++i) {
        const size_t chain = chain_positions[i];
        int core = cores.empty() ? lowest_bit(result.cores_used) : cores[chain];
        for (size_t t = 0; t < result.task_cycles[i].size(); ++t) {
          layer_cycles[step.task_layers[chain][t]][static_cast<size_t>(core)] +=
              result.task_cycles[i][t];
        }
      }
    }
    for (FeatureBuffer& buffer : tensors_) {
      if (!buffer.to_outside || buffer.in_place) continue;
      ++layout_conversions;
      ORKNN_RETURN_IF_ERROR(
          npu_->sync_memory(buffer.memory, driver_shim::SyncDirection::kFromDevice));
      for (int64_t image = 0; image < buffer.shape.batch; ++image) {
        convert_image(buffer.shape, buffer.float16, buffer.matrix, Direction::kFromNpu,
                      static_cast<uint8_t*>(buffer.bound) + image * image_bytes(buffer),
                      buffer.memory.host + image * feature_bytes(buffer.shape, buffer.float16));
      }
    }
    if (profiler) record_timing(*profiler, layer_cycles);
    return ok_status();
  }

 private:
  struct FeatureBuffer {
    int32_t tensor = -1;
    FeatureShape shape;
    bool float16 = false;
    bool matrix = false;  // an [M, K] Gemm/MatMul operand (see runtime_layout)
    NpuMemory memory;
    bool from_outside = false;  // produced by another segment or a graph input
    bool to_outside = false;    // read by another segment or a graph output
    void* bound = nullptr;
    // Application memory the NPU reads or writes instead of `memory` (bind_native).
    const NpuDeviceMemory* in_place = nullptr;
  };
  struct LayerConstants {
    NpuMemory weights, bias, multipliers;
  };
  struct Step {
    std::vector<std::vector<NpuTask>> chains;      // per core position
    std::vector<std::vector<size_t>> task_layers;  // layer of each task
  };
  struct Variant {
    NpuMemory regcmd;
    std::vector<Step> steps;
  };
  struct PlannedChain {  // register words of each task, before they get addresses
    std::vector<std::vector<uint64_t>> tasks;
    std::vector<uint32_t> masks;
    std::vector<size_t> layers;
  };

  static int lowest_bit(uint32_t mask) {
    for (int bit = 0; bit < 32; ++bit) {
      if (mask & (1u << bit)) return bit;
    }
    return 0;
  }

  // Physical cores of the core mask; empty for AUTO (the backend picks an idle core).
  std::vector<int> physical_cores() const {
    const int available = std::min(npu_->info().core_count, kMaxCores);
    uint32_t mask = options_.core_mask;
    if (mask == 0xffff) mask = (1u << available) - 1;
    std::vector<int> cores;
    for (int core = 0; core < available; ++core) {
      if (mask & (1u << core)) cores.push_back(core);
    }
    return cores;
  }

  // A batch's images go round-robin to these cores, each image's layers one chain of tasks:
  // the first rknn_set_batch_core_num cores when it is set, otherwise the core mask's cores
  // (AUTO: one chain on the core the backend picks).
  std::vector<int> batch_cores() const {
    const int available = std::min(npu_->info().core_count, kMaxCores);
    if (options_.batch_core_num <= 0) return physical_cores();
    std::vector<int> cores;
    for (int core = 0; core < std::min(options_.batch_core_num, available); ++core) {
      cores.push_back(core);
    }
    return cores;
  }

  std::vector<NpuMemory*> all_memory() {
    std::vector<NpuMemory*> memory;
    for (FeatureBuffer& buffer : tensors_) memory.push_back(&buffer.memory);
    for (LayerConstants& constants : constants_) {
      memory.push_back(&constants.weights);
      memory.push_back(&constants.bias);
      memory.push_back(&constants.multipliers);
    }
    for (Variant& variant : variants_) memory.push_back(&variant.regcmd);
    return memory;
  }

  static const NpuMemory& active_memory(const FeatureBuffer& buffer) {
    return buffer.in_place ? buffer.in_place->buffer()->memory : buffer.memory;
  }

  FeatureBuffer* buffer_of(int32_t tensor) {
    for (FeatureBuffer& buffer : tensors_) {
      if (buffer.tensor == tensor) return &buffer;
    }
    return nullptr;
  }

  Status allocate_tensors(const graph::Graph& graph, const std::vector<size_t>& node_indices,
                          const std::vector<graph::Shape>& shapes) {
    const std::set<size_t> inside(node_indices.begin(), node_indices.end());
    std::set<int32_t> produced;
    for (const NpuLayer& layer : layers_) produced.insert(layer.output_tensor);
    auto add = [&](int32_t tensor, const FeatureShape& shape, bool float16) -> Status {
      if (buffer_of(tensor)) return ok_status();
      FeatureBuffer buffer;
      buffer.tensor = tensor;
      buffer.shape = shape;
      buffer.float16 = float16;
      buffer.matrix = shapes[static_cast<size_t>(tensor)].size() == 2;
      buffer.from_outside = produced.count(tensor) == 0;
      for (size_t n = 0; n < graph.nodes.size() && !buffer.from_outside; ++n) {
        if (inside.count(n)) continue;
        const auto& inputs = graph.nodes[n].inputs;
        buffer.to_outside |= std::find(inputs.begin(), inputs.end(), tensor) != inputs.end();
      }
      for (int32_t output : graph.outputs) buffer.to_outside |= output == tensor;
      ORKNN_ASSIGN_OR_RETURN(buffer.memory, npu_->create_memory(feature_bytes(shape, float16) *
                                                                uint64_t(shape.batch)));
      tensors_.push_back(std::move(buffer));
      return ok_status();
    };
    for (const NpuLayer& layer : layers_) {
      ORKNN_RETURN_IF_ERROR(add(layer.input_tensor, layer.input, layer.float16));
      // A stand-alone Add's operand is shaped like its input; a fused one like the output.
      if (layer.operand_tensor >= 0) {
        ORKNN_RETURN_IF_ERROR(add(layer.operand_tensor,
                                  layer.kind == LayerKind::kAdd ? layer.input : layer.output,
                                  layer.float16));
      }
      FeatureShape whole = layer.output;
      if (layer.output_buffer_channels) whole.channels = layer.output_buffer_channels;
      ORKNN_RETURN_IF_ERROR(add(layer.output_tensor, whole, layer.float16));
    }
    return ok_status();
  }

  Result<NpuMemory> upload(const void* data, size_t bytes) {
    ORKNN_ASSIGN_OR_RETURN(NpuMemory memory, npu_->create_memory(std::max<size_t>(bytes, 64)));
    if (bytes) std::memcpy(memory.host, data, bytes);
    ORKNN_RETURN_IF_ERROR(npu_->sync_memory(memory, driver_shim::SyncDirection::kToDevice));
    return memory;
  }

  Status upload_constants() {
    constants_.resize(layers_.size());
    for (size_t i = 0; i < layers_.size(); ++i) {
      const NpuLayer& layer = layers_[i];
      if (layer.kind != LayerKind::kConvolution) continue;
      const std::vector<uint8_t> packed = pack_weights(layer);
      ORKNN_ASSIGN_OR_RETURN(constants_[i].weights, upload(packed.data(), packed.size()));
      // int32 folded bias (int8), or fp32 bias (float16) with no multipliers.
      const void* bias = layer.float16 ? static_cast<const void*>(layer.float_bias.data())
                                       : static_cast<const void*>(layer.folded_bias.data());
      ORKNN_ASSIGN_OR_RETURN(constants_[i].bias, upload(bias, size_t(layer.output.channels) * 4));
      ORKNN_ASSIGN_OR_RETURN(constants_[i].multipliers,
                             upload(layer.multipliers.data(), layer.multipliers.size() * 4));
    }
    return ok_status();
  }

  // Where `image` of a buffer's batch starts, as the NPU addresses it.
  uint32_t image_address(int32_t tensor, int64_t image) {
    const FeatureBuffer* buffer = buffer_of(tensor);
    const uint32_t base =
        buffer->in_place ? buffer->in_place->npu_address() : buffer->memory.npu_address;
    return base +
           static_cast<uint32_t>(uint64_t(image) * feature_bytes(buffer->shape, buffer->float16));
  }

  // Bytes of one image in the runtime's NCHW layout.
  static int64_t image_bytes(const FeatureBuffer& buffer) {
    return buffer.shape.channels * buffer.shape.height * buffer.shape.width *
           (buffer.float16 ? 2 : 1);
  }

  LayerAddresses addresses_of(size_t index, int64_t image = 0) {
    const NpuLayer& layer = layers_[index];
    LayerAddresses addresses;
    addresses.input = image_address(layer.input_tensor, image);
    addresses.output = image_address(layer.output_tensor, image);
    if (layer.operand_tensor >= 0) addresses.operand = image_address(layer.operand_tensor, image);
    addresses.weights = constants_[index].weights.npu_address;
    addresses.bias = constants_[index].bias.npu_address;
    addresses.multipliers = constants_[index].multipliers.npu_address;
    return addresses;
  }

  // A core's share of a layer: whole channel blocks when there are enough for every core,
  // otherwise whole rows. Ceiling division gives the lowest cores the work when parts are few.
  static TaskSlice slice_for_core(const NpuLayer& layer, int core, int cores) {
    const int64_t granularity = slice_granularity(layer);
    const int64_t blocks = (layer.output.channels + granularity - 1) / granularity;
    TaskSlice slice{0, layer.output.channels, 0, layer.output.height};
    auto share = [&](int64_t parts, int64_t* first, int64_t* last) {
      *first = (parts * core + cores - 1) / cores;
      *last = (parts * (core + 1) + cores - 1) / cores;
    };
    // Rows split only when every row's window starts inside the input.
    const bool rows_start_inside =
        (layer.output.height - 1) * layer.stride_height - layer.pad_top < layer.input.height;
    if (blocks >= cores || layer.output.height < 2 || !rows_start_inside) {
      int64_t first, last;
      share(blocks, &first, &last);
      slice.begin = std::min(first * granularity, layer.output.channels);
      slice.end = std::min(last * granularity, layer.output.channels);
    } else {
      share(layer.output.height, &slice.row_begin, &slice.row_end);
    }
    return slice;
  }

  // Appends the tasks of `slice` of layer `index` to `chain`: one task, or for a convolution
  // the tasks its CBUF split needs (cbuf_plan.h).
  Status append_tasks(size_t index, const LayerAddresses& addresses, const TaskSlice& slice,
                      PlannedChain* chain) {
    const NpuLayer& layer = layers_[index];
    std::vector<TaskSlice> tasks{slice};
    if (layer.kind == LayerKind::kConvolution) {
      ORKNN_ASSIGN_OR_RETURN(tasks, split_for_cbuf(layer, slice));
    }
    for (const TaskSlice& task : tasks) {
      uint32_t mask = 0;
      chain->tasks.push_back(task_commands(layer, addresses, task, &mask));
      chain->masks.push_back(mask);
      chain->layers.push_back(index);
    }
    return ok_status();
  }

  static TaskSlice whole_layer(const NpuLayer& layer) {
    return {0, layer.output.channels, 0, layer.output.height};
  }

  // One core: every layer's tasks in one PC chain (one submit per run). Several cores: one job
  // per layer, its output channels (or rows) split across the cores, and each core's share
  // split again to fit that core's CBUF.
  Result<Variant> build_variant(int cores) {
    std::vector<std::vector<PlannedChain>> steps;
    if (cores == 1) {
      PlannedChain chain;
      for (size_t i = 0; i < layers_.size(); ++i) {
        ORKNN_RETURN_IF_ERROR(append_tasks(i, addresses_of(i), whole_layer(layers_[i]), &chain));
      }
      log_debug("NPU segment: ", layers_.size(), " layers in ", chain.tasks.size(),
                " tasks on one core (convolutions split to fit the CBUF)");
      steps.push_back({std::move(chain)});
    } else {
      for (size_t i = 0; i < layers_.size(); ++i) {
        const NpuLayer& layer = layers_[i];
        std::vector<PlannedChain> step(static_cast<size_t>(cores));
        for (int core = 0; core < cores; ++core) {
          const TaskSlice slice = slice_for_core(layer, core, cores);
          if (slice.begin == slice.end || slice.row_begin == slice.row_end) continue;
          ORKNN_RETURN_IF_ERROR(
              append_tasks(i, addresses_of(i), slice, &step[static_cast<size_t>(core)]));
        }
        steps.push_back(std::move(step));
      }
    }
    return lay_out(steps);
  }

  // A batch on `cores` cores: one job, one chain per core holding every layer of its images
  // (image i on core i % cores), so the images run in parallel and each core pays the job cost
  // once per run.
  Result<Variant> build_batch_variant(int cores) {
    std::vector<PlannedChain> step(static_cast<size_t>(cores));
    for (int64_t image = 0; image < batch_; ++image) {
      PlannedChain& chain = step[static_cast<size_t>(image % cores)];
      for (size_t i = 0; i < layers_.size(); ++i) {
        if (image >= layers_[i].input.batch) continue;
        ORKNN_RETURN_IF_ERROR(
            append_tasks(i, addresses_of(i, image), whole_layer(layers_[i]), &chain));
      }
    }
    return lay_out({std::move(step)});
  }

  // Lays every chain of every step out in one regcmd buffer.
  Result<Variant> lay_out(const std::vector<std::vector<PlannedChain>>& steps) {
    size_t total_words = 0;
    for (const auto& step : steps) {
      for (const PlannedChain& chain : step) {
        total_words += chain_tasks(chain.tasks, chain.masks, 0, nullptr, nullptr).size();
      }
    }
    Variant variant;
    ORKNN_ASSIGN_OR_RETURN(variant.regcmd,
                           npu_->create_memory(std::max<size_t>(total_words * 8, 64)));
    size_t position = 0;
    for (const auto& planned : steps) {
      Step step;
      for (const PlannedChain& chain : planned) {
        std::vector<size_t> offsets;
        std::vector<uint32_t> counts;
        const uint32_t base = variant.regcmd.npu_address + static_cast<uint32_t>(position * 8);
        const std::vector<uint64_t> words =
            chain_tasks(chain.tasks, chain.masks, base, &offsets, &counts);
        if (!words.empty()) {
          std::memcpy(variant.regcmd.host + position * 8, words.data(), words.size() * 8);
        }
        std::vector<NpuTask> tasks;
        for (size_t t = 0; t < offsets.size(); ++t) {
          tasks.push_back(
              NpuTask{base + static_cast<uint32_t>(offsets[t] * 8), counts[t], chain.masks[t]});
        }
        step.chains.push_back(std::move(tasks));
        step.task_layers.push_back(chain.layers);
        position += words.size();
      }
      variant.steps.push_back(std::move(step));
    }
    ORKNN_RETURN_IF_ERROR(npu_->sync_memory(variant.regcmd, driver_shim::SyncDirection::kToDevice));
    return variant;
  }

  void record_timing(exec::Profiler& profiler,
                     const std::vector<std::array<uint64_t, kMaxCores>>& layer_cycles) const {
    const uint64_t clock = npu_->info().clock_hz ? npu_->info().clock_hz : 1000000000;
    // Several layers may come from one node (Concat), and fused nodes have none of their own.
    std::map<size_t, exec::NpuNodeTiming> timings;
    auto timing_of = [&](size_t node) -> exec::NpuNodeTiming& {
      exec::NpuNodeTiming& timing = timings[node];
      timing.valid = true;
      timing.emulated = npu_->info().emulated;
      timing.clock_hz = clock;
      return timing;
    };
    for (size_t i = 0; i < layers_.size(); ++i) {
      exec::NpuNodeTiming& timing = timing_of(layers_[i].node_index);
      timing.macs += layers_[i].macs * static_cast<uint64_t>(layers_[i].input.batch);
      uint64_t longest = 0;
      for (size_t core = 0; core < size_t(kMaxCores); ++core) {
        timing.core_cycles[core] += layer_cycles[i][core];
        longest = std::max(longest, layer_cycles[i][core]);
      }
      timing.cycles += longest;
      for (size_t fused : layers_[i].fused_nodes) timing_of(fused);
    }
    for (const auto& [node, timing] : timings) profiler.record_npu(node, timing);
  }

  std::shared_ptr<driver_shim::Npu> npu_;
  std::vector<NpuLayer> layers_;
  std::vector<FeatureBuffer> tensors_;
  std::vector<LayerConstants> constants_;
  std::vector<Variant> variants_;
  RunOptions options_;
  int64_t batch_ = 1;
};

}  // namespace

uint64_t layout_conversion_count() {
  return layout_conversions.load();
}

Result<std::unique_ptr<Executable>> compile_npu_segment(std::shared_ptr<driver_shim::Npu> npu,
                                                        const graph::Graph& graph,
                                                        const std::vector<size_t>& node_indices,
                                                        const std::vector<graph::Shape>& shapes) {
  auto executable = std::make_unique<NpuExecutable>(std::move(npu));
  ORKNN_RETURN_IF_ERROR(executable->build(graph, node_indices, shapes));
  return std::unique_ptr<Executable>(std::move(executable));
}

}  // namespace orknn::devices::npu
