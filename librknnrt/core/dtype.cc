#include "core/dtype.h"

namespace orknn {

const char* data_type_name(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "FP32";
    case DataType::kFloat16:
      return "FP16";
    case DataType::kInt8:
      return "INT8";
    case DataType::kUInt8:
      return "UINT8";
    case DataType::kInt16:
      return "INT16";
    case DataType::kInt32:
      return "INT32";
    case DataType::kInt64:
      return "INT64";
    case DataType::kBool:
      return "BOOL";
  }
  return "UNKNOW";
}

bool is_valid_data_type(int value) {
  return value >= 0 && value < kDataTypeCount;
}

}  // namespace orknn
