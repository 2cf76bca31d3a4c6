// C entry points of the general API: check the arguments, call the Session, map the result.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "api/api_support.h"
#include "api/memory_registry.h"
#include "api/version.h"
#include "exec/weight_sharing.h"
#include "graph/graph_from_model.h"
#include "model/model_file.h"

using orknn::invalid_argument;
using orknn::make_error;
using orknn::ok_status;
using orknn::Result;
using orknn::Status;
using orknn::StatusCode;
using orknn::api::call_api;
using orknn::api::call_on_context;
using orknn::api::ContextRegistry;
using orknn::api::ContextState;

namespace {

// The model bytes rknn_init was given: a copy of the buffer, or the file named by `model`
// when size is 0; optionally a window [real_model_offset, +real_model_size) of either.
Result<std::vector<uint8_t>> load_model_bytes(const void* model, uint32_t size,
                                              const rknn_init_extend* extend) {
  const bool windowed = extend && extend->real_model_size > 0;
  if (extend && extend->real_model_offset < 0) {
    return invalid_argument("rknn_init_extend.real_model_offset ", extend->real_model_offset,
                            " is negative");
  }
  const uint64_t offset = windowed ? static_cast<uint64_t>(extend->real_model_offset) : 0;
  const uint64_t length = windowed ? extend->real_model_size : 0;
  if (size == 0) {
    const char* path = static_cast<const char*>(model);
    if (path[0] == '\0') return invalid_argument("model path is empty (size 0 means a path)");
    return orknn::model::read_model_file(path, offset, length);
  }
  if (windowed && offset + length > size) {
    return invalid_argument("real_model_offset ", offset, " + real_model_size ", length,
                            " > model buffer size ", size);
  }
  const uint8_t* begin = static_cast<const uint8_t*>(model) + offset;
  return std::vector<uint8_t>(begin, begin + (windowed ? length : size));
}

void log_model_information(const orknn::graph::Graph& graph) {
  const auto& metadata = graph.metadata;
  orknn::log_info("RKNN Runtime Information, librknnrt version: ", orknn::api::runtime_version(),
                  " ", orknn::api::project_version());
  orknn::log_info("RKNN Driver Information, version: ", orknn::api::driver_version());
  orknn::log_info("RKNN Model Information, version: ", metadata.format_version,
                  ", toolkit version: ", metadata.producer_name, " ", metadata.producer_version,
                  ", target platform: ", metadata.target_platform,
                  ", framework name: ", metadata.source_framework,
                  ", framework layout: NCHW, model inference type: ",
                  graph.dynamic_shape_sets.empty() ? "static_shape" : "dynamic_shape");
}

// RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: the model stays in the rknn_create_mem* memory the caller
// gave (fd in extend.model_buffer_fd), parsed where it is; the context keeps that memory mapped.
Result<std::shared_ptr<const orknn::model::ModelFile>> parse_model_in_place(
    const void* model, uint32_t size, const rknn_init_extend* extend, ContextState* state) {
  if (!extend) {
    return invalid_argument("RKNN_FLAG_MODEL_BUFFER_ZERO_COPY needs rknn_init_extend with ",
                            "model_buffer_fd of the rknn_create_mem* memory holding the model");
  }
  if (size == 0) {
    return invalid_argument("RKNN_FLAG_MODEL_BUFFER_ZERO_COPY needs the model size (size 0 ",
                            "means a path, which cannot be zero-copy)");
  }
  std::shared_ptr<orknn::DeviceMemory> memory =
      orknn::api::MemoryRegistry::instance().find_containing(extend->model_buffer_fd, model, size);
  if (!memory) {
    return invalid_argument("RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: the model buffer (", model, ", ",
                            size, " bytes, fd ", extend->model_buffer_fd,
                            ") is not inside live memory from rknn_create_mem*");
  }
  state->model_memory = memory;
  state->model_address = model;
  state->model_size = size;
  return orknn::model::ModelFile::parse_in_place(static_cast<const uint8_t*>(model), size,
                                                 std::move(memory));
}

// A context of the model that `extend->ctx` names, for RKNN_FLAG_SHARE_WEIGHT_MEM.
Result<std::shared_ptr<const orknn::graph::Graph>> weight_donor(const rknn_init_extend* extend) {
  std::shared_ptr<ContextState> donor =
      extend ? ContextRegistry::instance().find(extend->ctx) : nullptr;
  if (!donor) {
    return make_error(StatusCode::kInvalidContext,
                      "RKNN_FLAG_SHARE_WEIGHT_MEM needs rknn_init_extend.ctx set to a live "
                      "context of the model whose weights are shared");
  }
  std::lock_guard<std::mutex> lock(donor->mutex);
  return donor->session->shared_graph();
}

// The vendor's "collect model info, then init again on the same variable" pattern never destroys
// the info-only context; it cannot run anything, so the new init releases it.
void release_info_only_context(rknn_context handle) {
  std::shared_ptr<ContextState> previous = ContextRegistry::instance().find(handle);
  if (!previous || !(previous->flags & RKNN_FLAG_COLLECT_MODEL_INFO_ONLY)) return;
  orknn::log_debug("rknn_init: releasing the RKNN_FLAG_COLLECT_MODEL_INFO_ONLY context 0x",
                   std::hex, static_cast<uint64_t>(handle), " this call replaces");
  ContextRegistry::instance().remove(handle);
}

}  // namespace

extern "C" {

int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag,
              rknn_init_extend* extend) {
  return call_api("rknn_init", [&]() -> Status {
    if (!context) return invalid_argument("context pointer is NULL");
    if (!model) return invalid_argument("model is NULL");
    std::shared_ptr<const orknn::graph::Graph> donor;
    if (flag & RKNN_FLAG_SHARE_WEIGHT_MEM) {
      ORKNN_ASSIGN_OR_RETURN(donor, weight_donor(extend));
    }
    auto state = std::make_shared<ContextState>();
    std::shared_ptr<const orknn::model::ModelFile> model_file;
    if (flag & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) {
      ORKNN_ASSIGN_OR_RETURN(model_file, parse_model_in_place(model, size, extend, state.get()));
    } else {
      ORKNN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, load_model_bytes(model, size, extend));
      ORKNN_ASSIGN_OR_RETURN(model_file, orknn::model::ModelFile::parse(std::move(bytes)));
    }
    ORKNN_ASSIGN_OR_RETURN(auto graph, orknn::graph::graph_from_model(std::move(model_file)));
    if (donor) {
      ORKNN_ASSIGN_OR_RETURN(graph, orknn::exec::share_weights(*graph, donor));
    }
    log_model_information(*graph);

    orknn::exec::SessionOptions options;
    options.collect_performance = (flag & RKNN_FLAG_COLLECT_PERF_MASK) != 0;
    options.model_info_only = (flag & RKNN_FLAG_COLLECT_MODEL_INFO_ONLY) != 0;
    options.weight_memory_outside = (flag & RKNN_FLAG_MEM_ALLOC_OUTSIDE) != 0;
    options.internal_memory_outside =
        (flag & (RKNN_FLAG_MEM_ALLOC_OUTSIDE | RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE)) != 0;
    options.skip_input_sync = (flag & RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE) != 0;
    options.skip_output_sync = (flag & RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE) != 0;
    options.prefer_gpu = (flag & RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU) != 0;
    state->flags = flag;
    ORKNN_ASSIGN_OR_RETURN(state->session, orknn::exec::Session::create(graph, options));
    release_info_only_context(*context);
    *context = ContextRegistry::instance().add(std::move(state));
    return ok_status();
  });
}

int rknn_dup_context(rknn_context* context_in, rknn_context* context_out) {
  return call_api("rknn_dup_context", [&]() -> Status {
    if (!context_in || !context_out) return invalid_argument("context pointer is NULL");
    std::shared_ptr<ContextState> source = ContextRegistry::instance().find(*context_in);
    if (!source) {
      return make_error(StatusCode::kInvalidContext, "invalid context 0x", std::hex,
                        static_cast<uint64_t>(*context_in));
    }
    auto copy = std::make_shared<ContextState>();
    {
      std::lock_guard<std::mutex> lock(source->mutex);
      copy->flags = source->flags;
      ORKNN_ASSIGN_OR_RETURN(copy->session, source->session->duplicate());
    }
    *context_out = ContextRegistry::instance().add(std::move(copy));
    return ok_status();
  });
}

int rknn_destroy(rknn_context context) {
  return call_api("rknn_destroy", [&]() -> Status {
    std::shared_ptr<ContextState> state = ContextRegistry::instance().remove(context);
    if (!state) {
      return make_error(StatusCode::kInvalidContext, "invalid context 0x", std::hex,
                        static_cast<uint64_t>(context), " (never created, or already destroyed)");
    }
    // Wait for a call in progress on another thread; the state is freed when the last
    // reference goes.
    std::lock_guard<std::mutex> lock(state->mutex);
    if (!state->runtime_outputs.empty()) {
      orknn::log_debug("rknn_destroy: freeing ", state->runtime_outputs.size(),
                       " output buffers that were never released with rknn_outputs_release");
    }
    return ok_status();
  });
}

int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]) {
  return call_on_context("rknn_inputs_set", context, [&](ContextState& state) -> Status {
    if (!inputs) return invalid_argument("inputs is NULL");
    if (n_inputs == 0) return invalid_argument("n_inputs is 0");
    orknn::exec::Session& session = *state.session;
    if (n_inputs != session.input_count()) {
      orknn::log_warning("rknn_inputs_set: param input num(", n_inputs, ") != model input num(",
                         session.input_count(), ")");
    }
    for (uint32_t i = 0; i < n_inputs; ++i) {
      const rknn_input& input = inputs[i];
      if (input.index >= session.input_count()) {
        return make_error(StatusCode::kInvalidInput, "inputs[", i, "].index ", input.index,
                          " >= model input count ", session.input_count());
      }
      if (!input.buf) return make_error(StatusCode::kInvalidInput, "inputs[", i, "].buf is NULL");
      orknn::exec::UserTensorFormat format;
      format.pass_through = input.pass_through != 0;
      if (!format.pass_through) {
        auto type = orknn::api::data_type_from_rknn(orknn::api::enum_value(input.type));
        if (!type.ok())
          return make_error(StatusCode::kInvalidInput, "inputs[", i,
                            "]: ", type.status().message());
        auto layout = orknn::api::layout_from_rknn(orknn::api::enum_value(input.fmt));
        if (!layout.ok())
          return make_error(StatusCode::kInvalidInput, "inputs[", i,
                            "]: ", layout.status().message());
        format.type = type.value();
        format.layout = layout.value();
      }
      ORKNN_RETURN_IF_ERROR(session.set_input(input.index, input.buf, input.size, format));
    }
    return ok_status();
  });
}

int rknn_run(rknn_context context, rknn_run_extend* extend) {
  return call_on_context("rknn_run", context, [&](ContextState& state) -> Status {
    if (extend && extend->non_block) {
      orknn::log_warning("rknn_run: non_block is not supported; running to completion");
    }
    return state.session->run();
  });
}

int rknn_wait(rknn_context context, rknn_run_extend* extend) {
  return call_on_context("rknn_wait", context, [&](ContextState&) -> Status {
    // rknn_run always completes before returning, so there is never anything to wait for.
    return ok_status();
  });
}

int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[],
                     rknn_output_extend* extend) {
  return call_on_context("rknn_outputs_get", context, [&](ContextState& state) -> Status {
    if (!outputs) return invalid_argument("outputs is NULL");
    if (n_outputs == 0) return invalid_argument("n_outputs is 0");
    orknn::exec::Session& session = *state.session;
    if (n_outputs != session.output_count()) {
      orknn::log_warning("rknn_outputs_get: param output num(", n_outputs, ") != model output num(",
                         session.output_count(), ")");
    }
    // Validate everything before allocating so a failure leaves nothing behind.
    for (uint32_t i = 0; i < n_outputs; ++i) {
      const rknn_output& output = outputs[i];
      if (output.index >= session.output_count()) {
        return make_error(StatusCode::kInvalidOutput, "outputs[", i, "].index ", output.index,
                          " is out of range (model has ", session.output_count(), " outputs)");
      }
      if (output.is_prealloc) {
        const uint64_t required = session.output_size(output.index, output.want_float);
        if (!output.buf) {
          return make_error(StatusCode::kInvalidOutput, "outputs[", i,
                            "].buf is NULL with is_prealloc=1");
        }
        if (output.size < required) {
          return make_error(StatusCode::kInvalidOutput, "outputs[", i, "]: size ", output.size,
                            " < required ", required, " (",
                            output.want_float ? "FP32" : "model type", ")");
        }
      }
    }
    std::vector<void*> allocated;
    for (uint32_t i = 0; i < n_outputs; ++i) {
      rknn_output& output = outputs[i];
      const uint64_t required = session.output_size(output.index, output.want_float);
      void* destination = output.buf;
      uint64_t capacity = output.size;
      if (!output.is_prealloc) {
        destination = std::malloc(required ? required : 1);
        if (!destination) {
          for (void* buffer : allocated) std::free(buffer);
          return make_error(StatusCode::kOutOfMemory, "cannot allocate ", required,
                            " bytes for output ", output.index);
        }
        allocated.push_back(destination);
        capacity = required;
      }
      Status status = session.get_output(output.index, output.want_float, destination, capacity);
      if (!status.ok()) {
        for (void* buffer : allocated) std::free(buffer);
        return status;
      }
      if (!output.is_prealloc) {
        output.buf = destination;
        output.size = static_cast<uint32_t>(required);
      }
    }
    state.runtime_outputs.insert(allocated.begin(), allocated.end());
    return ok_status();
  });
}

int rknn_outputs_release(rknn_context context, uint32_t n_ouputs, rknn_output outputs[]) {
  return call_on_context("rknn_outputs_release", context, [&](ContextState& state) -> Status {
    if (!outputs) return invalid_argument("outputs is NULL");
    for (uint32_t i = 0; i < n_ouputs; ++i) {
      rknn_output& output = outputs[i];
      if (output.is_prealloc || !output.buf) continue;
      auto it = state.runtime_outputs.find(output.buf);
      if (it == state.runtime_outputs.end()) {
        // Not ours (or released already): freeing it could corrupt the application's heap.
        orknn::log_warning("rknn_outputs_release: outputs[", i,
                           "].buf was not allocated by rknn_outputs_get on this context; "
                           "left alone");
        continue;
      }
      std::free(output.buf);
      state.runtime_outputs.erase(it);
      output.buf = nullptr;
    }
    return ok_status();
  });
}

int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask) {
  return call_on_context("rknn_set_core_mask", context, [&](ContextState& state) -> Status {
    return state.session->set_core_mask(static_cast<uint32_t>(orknn::api::enum_value(core_mask)));
  });
}

int rknn_set_batch_core_num(rknn_context context, int core_num) {
  return call_on_context("rknn_set_batch_core_num", context, [&](ContextState& state) -> Status {
    const int cores = state.session->platform().npu_cores;
    if (cores <= 1) {
      return invalid_argument("rknn_set_batch_core_num is not supported on ",
                              state.session->platform().name, " (one NPU core)");
    }
    if (core_num < 1 || core_num > cores) {
      return invalid_argument("core_num ", core_num, " is out of range [1, ", cores, "] for ",
                              state.session->platform().name);
    }
    state.batch_core_num = core_num;
    state.session->set_batch_core_num(core_num);
    return ok_status();
  });
}

}  // extern "C"
