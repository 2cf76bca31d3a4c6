#include "runtime_context.h"

#include <cstring>
#include <functional>

#include "tensor_check.h"

namespace orknn::server {
namespace {

const char* rknn_code_name(int code) {
  switch (code) {
    case RKNN_ERR_FAIL:
      return "RKNN_ERR_FAIL";
    case RKNN_ERR_TIMEOUT:
      return "RKNN_ERR_TIMEOUT";
    case RKNN_ERR_DEVICE_UNAVAILABLE:
      return "RKNN_ERR_DEVICE_UNAVAILABLE";
    case RKNN_ERR_MALLOC_FAIL:
      return "RKNN_ERR_MALLOC_FAIL";
    case RKNN_ERR_PARAM_INVALID:
      return "RKNN_ERR_PARAM_INVALID";
    case RKNN_ERR_MODEL_INVALID:
      return "RKNN_ERR_MODEL_INVALID";
    case RKNN_ERR_CTX_INVALID:
      return "RKNN_ERR_CTX_INVALID";
    case RKNN_ERR_INPUT_INVALID:
      return "RKNN_ERR_INPUT_INVALID";
    case RKNN_ERR_OUTPUT_INVALID:
      return "RKNN_ERR_OUTPUT_INVALID";
    case RKNN_ERR_DEVICE_UNMATCH:
      return "RKNN_ERR_DEVICE_UNMATCH";
    case RKNN_ERR_TARGET_PLATFORM_UNMATCH:
      return "RKNN_ERR_TARGET_PLATFORM_UNMATCH";
    default:
      return "unknown error";
  }
}

void fill_attribute(const rknn_tensor_attr& attr, v1::TensorAttr* out) {
  out->set_index(attr.index);
  out->set_name(attr.name);
  for (uint32_t i = 0; i < attr.n_dims && i < RKNN_MAX_DIMS; ++i) out->add_shape(attr.dims[i]);
  out->set_layout(static_cast<v1::Layout>(attr.fmt));
  out->set_dtype(static_cast<v1::DataType>(attr.type));
  out->set_quant_type(static_cast<v1::QuantType>(attr.qnt_type));
  out->set_fractional_length(attr.fl);
  out->set_zero_point(attr.zp);
  out->set_scale(attr.scale);
  out->set_element_count(attr.n_elems);
  out->set_size_bytes(attr.size);
  out->set_width_stride(attr.w_stride);
  out->set_size_with_stride(attr.size_with_stride);
}

// Frees what rknn_outputs_get allocated, however the copy ends.
class OutputsGuard {
 public:
  OutputsGuard(rknn_context context, std::vector<rknn_output>* outputs)
      : context_(context), outputs_(outputs) {}
  ~OutputsGuard() {
    if (armed_) {
      rknn_outputs_release(context_, static_cast<uint32_t>(outputs_->size()), outputs_->data());
    }
  }
  void arm() { armed_ = true; }
  OutputsGuard(const OutputsGuard&) = delete;
  OutputsGuard& operator=(const OutputsGuard&) = delete;

 private:
  rknn_context context_;
  std::vector<rknn_output>* outputs_;
  bool armed_ = false;
};

}  // namespace

grpc::Status status_from_rknn(int code, const std::string& call) {
  const std::string message = call + " returned " + std::to_string(code) + " (" +
                              rknn_code_name(code) + "); the server log has the runtime's reason";
  switch (code) {
    case RKNN_ERR_PARAM_INVALID:
    case RKNN_ERR_MODEL_INVALID:
    case RKNN_ERR_INPUT_INVALID:
    case RKNN_ERR_OUTPUT_INVALID:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
    case RKNN_ERR_CTX_INVALID:
      return grpc::Status(grpc::StatusCode::NOT_FOUND, message);
    case RKNN_ERR_MALLOC_FAIL:
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, message);
    case RKNN_ERR_TIMEOUT:
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, message);
    case RKNN_ERR_DEVICE_UNAVAILABLE:
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, message);
    case RKNN_ERR_DEVICE_UNMATCH:
    case RKNN_ERR_TARGET_PLATFORM_UNMATCH:
    case RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL:
    case RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION:
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, message);
    default:
      return grpc::Status(grpc::StatusCode::INTERNAL, message);
  }
}

grpc::Status RuntimeContext::create(const std::vector<uint8_t>& model, uint32_t flags,
                                    uint32_t core_mask, std::unique_ptr<RuntimeContext>* out) {
  std::unique_ptr<RuntimeContext> context(new RuntimeContext());
  context->flags_ = flags;
  int ret = rknn_init(&context->context_, const_cast<uint8_t*>(model.data()),
                      static_cast<uint32_t>(model.size()), flags, nullptr);
  if (ret != RKNN_SUCC) {
    context->context_ = 0;
    return status_from_rknn(ret, "rknn_init");
  }
  if (core_mask != 0) {
    ret = rknn_set_core_mask(context->context_, static_cast<rknn_core_mask>(core_mask));
    if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_set_core_mask");
  }
  rknn_input_output_num io_num{};
  ret = rknn_query(context->context_, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof(io_num));
  if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_query(IN_OUT_NUM)");
  struct Query {
    rknn_query_cmd command;
    uint32_t count;
    std::vector<rknn_tensor_attr>* into;
    const char* name;
  };
  const Query queries[] = {
      {RKNN_QUERY_INPUT_ATTR, io_num.n_input, &context->inputs_, "INPUT_ATTR"},
      {RKNN_QUERY_OUTPUT_ATTR, io_num.n_output, &context->outputs_, "OUTPUT_ATTR"},
      {RKNN_QUERY_NATIVE_INPUT_ATTR, io_num.n_input, &context->native_inputs_, "NATIVE_INPUT_ATTR"},
      {RKNN_QUERY_NATIVE_OUTPUT_ATTR, io_num.n_output, &context->native_outputs_,
       "NATIVE_OUTPUT_ATTR"},
  };
  for (const Query& query : queries) {
    for (uint32_t i = 0; i < query.count; ++i) {
      rknn_tensor_attr attr{};
      attr.index = i;
      ret = rknn_query(context->context_, query.command, &attr, sizeof(attr));
      if (ret != RKNN_SUCC) {
        // Memory-evaluation contexts may not answer the native queries; describe them as plain.
        if (query.command == RKNN_QUERY_NATIVE_INPUT_ATTR)
          attr = context->inputs_[i];
        else if (query.command == RKNN_QUERY_NATIVE_OUTPUT_ATTR)
          attr = context->outputs_[i];
        else
          return status_from_rknn(ret, std::string("rknn_query(") + query.name + ")");
      }
      query.into->push_back(attr);
    }
  }
  rknn_custom_string custom{};
  if (rknn_query(context->context_, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof(custom)) ==
      RKNN_SUCC) {
    custom.string[sizeof(custom.string) - 1] = '\0';
    context->custom_string_ = custom.string;
  }
  *out = std::move(context);
  return grpc::Status::OK;
}

RuntimeContext::~RuntimeContext() {
  if (context_ != 0) rknn_destroy(context_);
}

void RuntimeContext::describe(v1::QueryAttributesResponse* out) const {
  for (const rknn_tensor_attr& attr : inputs_) fill_attribute(attr, out->add_inputs());
  for (const rknn_tensor_attr& attr : outputs_) fill_attribute(attr, out->add_outputs());
  for (const rknn_tensor_attr& attr : native_inputs_)
    fill_attribute(attr, out->add_native_inputs());
  for (const rknn_tensor_attr& attr : native_outputs_) {
    fill_attribute(attr, out->add_native_outputs());
  }
  out->set_custom_string(custom_string_);
}

grpc::Status RuntimeContext::set_inputs(
    const google::protobuf::RepeatedPtrField<v1::Tensor>& inputs) {
  std::vector<rknn_input> bindings;
  std::vector<std::vector<uint8_t>> zero_buffers;
  if (inputs.empty()) {
    // EvalPerf without inputs: zeros in each input's own type and layout.
    for (const rknn_tensor_attr& attr : inputs_) {
      zero_buffers.emplace_back(attr.size, 0);
      rknn_input input{};
      input.index = attr.index;
      input.buf = zero_buffers.back().data();
      input.size = attr.size;
      input.type = attr.type;
      input.fmt = attr.fmt;
      bindings.push_back(input);
    }
  } else {
    if (static_cast<size_t>(inputs.size()) != inputs_.size()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "got " + std::to_string(inputs.size()) +
                              " input tensors; the model has " + std::to_string(inputs_.size()));
    }
    std::vector<bool> seen(inputs_.size(), false);
    for (const v1::Tensor& tensor : inputs) {
      if (tensor.index() >= inputs_.size()) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "input index " + std::to_string(tensor.index()) + " >= input count " +
                                std::to_string(inputs_.size()));
      }
      if (seen[tensor.index()]) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "input " + std::to_string(tensor.index()) + " is given twice");
      }
      seen[tensor.index()] = true;
      const std::string problem =
          check_input_tensor(tensor, inputs_[tensor.index()], native_inputs_[tensor.index()]);
      if (!problem.empty()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, problem);
      rknn_input input{};
      input.index = tensor.index();
      input.buf = const_cast<char*>(tensor.data().data());
      input.size = static_cast<uint32_t>(tensor.data().size());
      input.pass_through = tensor.pass_through() ? 1 : 0;
      input.type = static_cast<rknn_tensor_type>(tensor.dtype());
      input.fmt = static_cast<rknn_tensor_format>(tensor.layout());
      bindings.push_back(input);
    }
  }
  const int ret =
      rknn_inputs_set(context_, static_cast<uint32_t>(bindings.size()), bindings.data());
  return ret == RKNN_SUCC ? grpc::Status::OK : status_from_rknn(ret, "rknn_inputs_set");
}

grpc::Status RuntimeContext::run(const google::protobuf::RepeatedPtrField<v1::Tensor>& inputs,
                                 bool want_float, v1::RunResponse* out) {
  if (inputs.empty() && !inputs_.empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "Run needs " + std::to_string(inputs_.size()) + " input tensors, got none");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  grpc::Status status = set_inputs(inputs);
  if (!status.ok()) return status;
  int ret = rknn_run(context_, nullptr);
  if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_run");
  rknn_perf_run perf{};
  if (rknn_query(context_, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)) == RKNN_SUCC) {
    out->set_run_duration_us(perf.run_duration);
  }
  std::vector<rknn_output> outputs(outputs_.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].index = static_cast<uint32_t>(i);
    outputs[i].want_float = want_float ? 1 : 0;
  }
  OutputsGuard guard(context_, &outputs);
  ret = rknn_outputs_get(context_, static_cast<uint32_t>(outputs.size()), outputs.data(), nullptr);
  if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_outputs_get");
  guard.arm();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const rknn_tensor_attr& attr = outputs_[i];
    v1::Tensor* tensor = out->add_outputs();
    tensor->set_index(static_cast<uint32_t>(i));
    tensor->set_dtype(want_float ? v1::DATA_TYPE_FLOAT32 : static_cast<v1::DataType>(attr.type));
    tensor->set_layout(static_cast<v1::Layout>(attr.fmt));
    for (uint32_t d = 0; d < attr.n_dims && d < RKNN_MAX_DIMS; ++d) tensor->add_shape(attr.dims[d]);
    tensor->set_data(outputs[i].buf, outputs[i].size);
  }
  return grpc::Status::OK;
}

grpc::Status RuntimeContext::time_runs(const google::protobuf::RepeatedPtrField<v1::Tensor>& inputs,
                                       uint32_t loops, const std::function<bool()>& should_stop,
                                       std::vector<int64_t>* run_times_us,
                                       std::string* perf_detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  grpc::Status status = set_inputs(inputs);
  if (!status.ok()) return status;
  for (uint32_t i = 0; i < loops; ++i) {
    if (should_stop()) {
      return grpc::Status(grpc::StatusCode::CANCELLED,
                          "EvalPerf stopped after " + std::to_string(i) + " of " +
                              std::to_string(loops) + " runs (cancelled or past its deadline)");
    }
    const int ret = rknn_run(context_, nullptr);
    if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_run");
    rknn_perf_run perf{};
    const int query = rknn_query(context_, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf));
    if (query != RKNN_SUCC) return status_from_rknn(query, "rknn_query(PERF_RUN)");
    run_times_us->push_back(perf.run_duration);
  }
  if (flags_ & RKNN_FLAG_COLLECT_PERF_MASK) {
    rknn_perf_detail detail{};
    const int ret = rknn_query(context_, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail));
    if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_query(PERF_DETAIL)");
    if (detail.perf_data != nullptr) perf_detail->assign(detail.perf_data, detail.data_len);
  }
  return grpc::Status::OK;
}

grpc::Status RuntimeContext::memory(rknn_mem_size* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int ret = rknn_query(context_, RKNN_QUERY_MEM_SIZE, out, sizeof(*out));
  return ret == RKNN_SUCC ? grpc::Status::OK : status_from_rknn(ret, "rknn_query(MEM_SIZE)");
}

grpc::Status RuntimeContext::sdk_version(rknn_sdk_version* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int ret = rknn_query(context_, RKNN_QUERY_SDK_VERSION, out, sizeof(*out));
  if (ret != RKNN_SUCC) return status_from_rknn(ret, "rknn_query(SDK_VERSION)");
  out->api_version[sizeof(out->api_version) - 1] = '\0';
  out->drv_version[sizeof(out->drv_version) - 1] = '\0';
  return grpc::Status::OK;
}

}  // namespace orknn::server
