#include "api/api_support.h"

namespace orknn::api {

int to_rknn_error(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return RKNN_SUCC;
    case StatusCode::kFailed:
      return RKNN_ERR_FAIL;
    case StatusCode::kTimeout:
      return RKNN_ERR_TIMEOUT;
    case StatusCode::kDeviceUnavailable:
      return RKNN_ERR_DEVICE_UNAVAILABLE;
    case StatusCode::kOutOfMemory:
      return RKNN_ERR_MALLOC_FAIL;
    case StatusCode::kInvalidArgument:
      return RKNN_ERR_PARAM_INVALID;
    case StatusCode::kInvalidModel:
      return RKNN_ERR_MODEL_INVALID;
    case StatusCode::kInvalidContext:
      return RKNN_ERR_CTX_INVALID;
    case StatusCode::kInvalidInput:
      return RKNN_ERR_INPUT_INVALID;
    case StatusCode::kInvalidOutput:
      return RKNN_ERR_OUTPUT_INVALID;
    case StatusCode::kDeviceMismatch:
      return RKNN_ERR_DEVICE_UNMATCH;
    case StatusCode::kPlatformMismatch:
      return RKNN_ERR_TARGET_PLATFORM_UNMATCH;
    case StatusCode::kUnimplemented:
      return RKNN_ERR_FAIL;
  }
  return RKNN_ERR_FAIL;
}

Result<DataType> data_type_from_rknn(int type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32:
      return DataType::kFloat32;
    case RKNN_TENSOR_FLOAT16:
      return DataType::kFloat16;
    case RKNN_TENSOR_INT8:
      return DataType::kInt8;
    case RKNN_TENSOR_UINT8:
      return DataType::kUInt8;
    case RKNN_TENSOR_INT16:
      return DataType::kInt16;
    case RKNN_TENSOR_INT32:
      return DataType::kInt32;
    case RKNN_TENSOR_INT64:
      return DataType::kInt64;
    case RKNN_TENSOR_BOOL:
      return DataType::kBool;
    case RKNN_TENSOR_UINT16:
    case RKNN_TENSOR_UINT32:
    case RKNN_TENSOR_INT4:
    case RKNN_TENSOR_BFLOAT16:
      return invalid_argument("tensor type ", get_type_string(static_cast<rknn_tensor_type>(type)),
                              " is not supported for application buffers");
    default:
      return invalid_argument("tensor type ", type, " is not a valid rknn_tensor_type (0..",
                              RKNN_TENSOR_TYPE_MAX - 1, ")");
  }
}

rknn_tensor_type data_type_to_rknn(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return RKNN_TENSOR_FLOAT32;
    case DataType::kFloat16:
      return RKNN_TENSOR_FLOAT16;
    case DataType::kInt8:
      return RKNN_TENSOR_INT8;
    case DataType::kUInt8:
      return RKNN_TENSOR_UINT8;
    case DataType::kInt16:
      return RKNN_TENSOR_INT16;
    case DataType::kInt32:
      return RKNN_TENSOR_INT32;
    case DataType::kInt64:
      return RKNN_TENSOR_INT64;
    case DataType::kBool:
      return RKNN_TENSOR_BOOL;
  }
  return RKNN_TENSOR_TYPE_MAX;
}

Result<exec::Layout> layout_from_rknn(int format) {
  switch (format) {
    case RKNN_TENSOR_NCHW:
      return exec::Layout::kNCHW;
    case RKNN_TENSOR_NHWC:
      return exec::Layout::kNHWC;
    case RKNN_TENSOR_NC1HWC2:
      return exec::Layout::kNC1HWC2;
    case RKNN_TENSOR_UNDEFINED:
      return exec::Layout::kUndefined;
    default:
      return invalid_argument("tensor format ", format, " is not a valid rknn_tensor_format (0..",
                              RKNN_TENSOR_FORMAT_MAX - 1, ")");
  }
}

rknn_tensor_format layout_to_rknn(exec::Layout layout) {
  switch (layout) {
    case exec::Layout::kNCHW:
      return RKNN_TENSOR_NCHW;
    case exec::Layout::kNHWC:
      return RKNN_TENSOR_NHWC;
    case exec::Layout::kNC1HWC2:
      return RKNN_TENSOR_NC1HWC2;
    case exec::Layout::kUndefined:
      return RKNN_TENSOR_UNDEFINED;
  }
  return RKNN_TENSOR_UNDEFINED;
}

}  // namespace orknn::api
