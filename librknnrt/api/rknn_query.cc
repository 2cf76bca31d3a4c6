// rknn_query: one function per command, each checking the caller's struct size first.
#include <algorithm>
#include <cstring>

#include "api/api_support.h"
#include "api/version.h"

using orknn::invalid_argument;
using orknn::make_error;
using orknn::ok_status;
using orknn::Status;
using orknn::StatusCode;
using orknn::api::ContextState;
using orknn::exec::AttributeView;
using orknn::exec::Session;
using orknn::exec::TensorDescription;

namespace {

Status require_size(uint32_t size, size_t required, const char* struct_name) {
  if (size < required) {
    return invalid_argument("info_len(", size, ") < sizeof(", struct_name, ")(", required, ")");
  }
  return ok_status();
}

void copy_string(char* destination, size_t capacity, const std::string& text) {
  const size_t length = std::min(text.size(), capacity - 1);
  std::memcpy(destination, text.data(), length);
  destination[length] = '\0';
}

void fill_attribute(const TensorDescription& description, rknn_tensor_attr* attr) {
  const uint32_t index = attr->index;
  std::memset(attr, 0, sizeof(*attr));
  attr->index = index;
  attr->n_dims = static_cast<uint32_t>(std::min<size_t>(description.dims.size(), RKNN_MAX_DIMS));
  for (uint32_t i = 0; i < attr->n_dims; ++i)
    attr->dims[i] = static_cast<uint32_t>(description.dims[i]);
  copy_string(attr->name, sizeof(attr->name), description.name);
  attr->n_elems = static_cast<uint32_t>(description.elements);
  attr->size = static_cast<uint32_t>(description.bytes);
  attr->fmt = orknn::api::layout_to_rknn(description.layout);
  attr->type = orknn::api::data_type_to_rknn(description.type);
  attr->qnt_type = description.quantized ? RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC : RKNN_TENSOR_QNT_NONE;
  attr->zp = description.zero_point;
  attr->scale = description.scale;
  attr->w_stride = description.w_stride;
  attr->size_with_stride = static_cast<uint32_t>(description.bytes_with_stride);
}

// INPUT_ATTR, OUTPUT_ATTR and their NATIVE / CURRENT variants.
Status query_tensor_attribute(const Session& session, bool is_input, AttributeView view, void* info,
                              uint32_t size) {
  ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
  auto* attr = static_cast<rknn_tensor_attr*>(info);
  const size_t count = is_input ? session.input_count() : session.output_count();
  if (attr->index >= count) {
    return invalid_argument("attr->index(", attr->index, ") >= ", is_input ? "input" : "output",
                            "_num(", count, ")");
  }
  fill_attribute(is_input ? session.describe_input(attr->index, view)
                          : session.describe_output(attr->index, view),
                 attr);
  return ok_status();
}

Status query_dynamic_range(const Session& session, void* info, uint32_t size) {
  ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_input_range), "rknn_input_range"));
  auto* range = static_cast<rknn_input_range*>(info);
  if (range->index >= session.input_count()) {
    return invalid_argument("range->index(", range->index, ") >= input_num(", session.input_count(),
                            ")");
  }
  if (!session.is_dynamic()) {
    return make_error(StatusCode::kInvalidModel,
                      "query RKNN_QUERY_INPUT_DYNAMIC_RANGE error, rknn model is static shape "
                      "type, please export rknn with dynamic_shapes");
  }
  const uint32_t index = range->index;
  const TensorDescription description = session.describe_input(index, AttributeView::kDefault);
  const auto& sets = session.graph().dynamic_shape_sets;
  std::memset(range, 0, sizeof(*range));
  range->index = index;
  range->fmt = orknn::api::layout_to_rknn(description.layout);
  copy_string(range->name, sizeof(range->name), description.name);
  range->shape_number =
      static_cast<uint32_t>(std::min<size_t>(sets.size(), RKNN_MAX_DYNAMIC_SHAPE_NUM));
  for (uint32_t s = 0; s < range->shape_number; ++s) {
    const orknn::graph::Shape& shape = sets[s][index];
    range->n_dims = static_cast<uint32_t>(std::min<size_t>(shape.size(), RKNN_MAX_DIMS));
    const bool nhwc = description.layout == orknn::exec::Layout::kNHWC && shape.size() == 4;
    for (uint32_t d = 0; d < range->n_dims; ++d) {
      static constexpr int kNchwFromNhwc[4] = {0, 2, 3, 1};
      range->dyn_range[s][d] = static_cast<uint32_t>(shape[nhwc ? kNchwFromNhwc[d] : d]);
    }
  }
  return ok_status();
}

Status query(ContextState& state, int32_t command, void* info, uint32_t size) {
  const Session& session = *state.session;
  switch (command) {
    case RKNN_QUERY_IN_OUT_NUM: {
      ORKNN_RETURN_IF_ERROR(
          require_size(size, sizeof(rknn_input_output_num), "rknn_input_output_num"));
      auto* numbers = static_cast<rknn_input_output_num*>(info);
      numbers->n_input = static_cast<uint32_t>(session.input_count());
      numbers->n_output = static_cast<uint32_t>(session.output_count());
      return ok_status();
    }
    case RKNN_QUERY_INPUT_ATTR:
    case RKNN_QUERY_CURRENT_INPUT_ATTR:
      return query_tensor_attribute(session, true, AttributeView::kDefault, info, size);
    case RKNN_QUERY_OUTPUT_ATTR:
    case RKNN_QUERY_CURRENT_OUTPUT_ATTR:
      return query_tensor_attribute(session, false, AttributeView::kDefault, info, size);
    case RKNN_QUERY_NATIVE_INPUT_ATTR:
    case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR:
      return query_tensor_attribute(session, true, AttributeView::kNative, info, size);
    case RKNN_QUERY_NATIVE_OUTPUT_ATTR:
    case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR:
      return query_tensor_attribute(session, false, AttributeView::kNative, info, size);
    case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR:
      return query_tensor_attribute(session, true, AttributeView::kNativeNhwc, info, size);
    case RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR:
      return query_tensor_attribute(session, false, AttributeView::kNativeNhwc, info, size);
    case RKNN_QUERY_PERF_DETAIL: {
      ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_perf_detail), "rknn_perf_detail"));
      state.performance_text = session.performance_report();
      auto* detail = static_cast<rknn_perf_detail*>(info);
      detail->perf_data = state.performance_text.data();
      detail->data_len = state.performance_text.size();
      return ok_status();
    }
    case RKNN_QUERY_PERF_RUN: {
      ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_perf_run), "rknn_perf_run"));
      static_cast<rknn_perf_run*>(info)->run_duration = session.last_run_microseconds();
      return ok_status();
    }
    case RKNN_QUERY_SDK_VERSION: {
      ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_sdk_version), "rknn_sdk_version"));
      auto* version = static_cast<rknn_sdk_version*>(info);
      copy_string(version->api_version, sizeof(version->api_version),
                  orknn::api::runtime_version());
      copy_string(version->drv_version, sizeof(version->drv_version), orknn::api::driver_version());
      return ok_status();
    }
    case RKNN_QUERY_MEM_SIZE: {
      ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_mem_size), "rknn_mem_size"));
      auto* memory = static_cast<rknn_mem_size*>(info);
      const orknn::exec::MemoryFigures figures = session.memory();
      std::memset(memory, 0, sizeof(*memory));
      memory->total_weight_size = static_cast<uint32_t>(figures.weight_bytes);
      memory->total_internal_size = static_cast<uint32_t>(figures.internal_bytes);
      memory->total_dma_allocated_size = figures.total_allocated_bytes;
      return ok_status();
    }
    case RKNN_QUERY_CUSTOM_STRING: {
      ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_custom_string), "rknn_custom_string"));
      auto* custom = static_cast<rknn_custom_string*>(info);
      copy_string(custom->string, sizeof(custom->string), session.graph().metadata.custom_string);
      return ok_status();
    }
    case RKNN_QUERY_DEVICE_MEM_INFO: {
      ORKNN_RETURN_IF_ERROR(require_size(size, sizeof(rknn_tensor_mem), "rknn_tensor_mem"));
      if (!state.model_memory) {
        return make_error(
            StatusCode::kFailed,
            "RKNN_QUERY_DEVICE_MEM_INFO: the model is not in shareable memory (create the "
            "context with RKNN_FLAG_MODEL_BUFFER_ZERO_COPY from rknn_create_mem* memory)");
      }
      auto* mem = static_cast<rknn_tensor_mem*>(info);
      std::memset(mem, 0, sizeof(*mem));
      const auto* model = static_cast<const uint8_t*>(state.model_address);
      mem->virt_addr = const_cast<uint8_t*>(model);
      mem->fd = state.model_memory->fd();
      mem->offset = static_cast<int32_t>(state.model_memory->fd_offset() +
                                         (model - state.model_memory->data()));
      mem->size = state.model_size;
      mem->flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
      return ok_status();
    }
    case RKNN_QUERY_INPUT_DYNAMIC_RANGE:
      return query_dynamic_range(session, info, size);
    default:
      return invalid_argument("cmd = ", command, " is not in [0, ", RKNN_QUERY_CMD_MAX - 1, "]");
  }
}

}  // namespace

extern "C" int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size) {
  return orknn::api::call_on_context("rknn_query", context, [&](ContextState& state) -> Status {
    const int32_t command = orknn::api::enum_value(cmd);
    if (!info) return invalid_argument("info is NULL (cmd ", command, ")");
    return query(state, command, info, size);
  });
}
