#include "model/proto_data_type.h"

namespace orknn::model {

proto::DataType data_type_to_proto(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return proto::DATA_TYPE_FLOAT32;
    case DataType::kFloat16:
      return proto::DATA_TYPE_FLOAT16;
    case DataType::kInt8:
      return proto::DATA_TYPE_INT8;
    case DataType::kUInt8:
      return proto::DATA_TYPE_UINT8;
    case DataType::kInt16:
      return proto::DATA_TYPE_INT16;
    case DataType::kInt32:
      return proto::DATA_TYPE_INT32;
    case DataType::kInt64:
      return proto::DATA_TYPE_INT64;
    case DataType::kBool:
      return proto::DATA_TYPE_BOOL;
  }
  return proto::DATA_TYPE_FLOAT32;  // unreachable for a valid DataType
}

DataType data_type_from_proto(proto::DataType value) {
  return try_data_type_from_proto(value).value_or(DataType::kFloat32);
}

std::optional<DataType> try_data_type_from_proto(int value) {
  switch (value) {
    case proto::DATA_TYPE_FLOAT32:
      return DataType::kFloat32;
    case proto::DATA_TYPE_FLOAT16:
      return DataType::kFloat16;
    case proto::DATA_TYPE_INT8:
      return DataType::kInt8;
    case proto::DATA_TYPE_UINT8:
      return DataType::kUInt8;
    case proto::DATA_TYPE_INT16:
      return DataType::kInt16;
    case proto::DATA_TYPE_INT32:
      return DataType::kInt32;
    case proto::DATA_TYPE_INT64:
      return DataType::kInt64;
    case proto::DATA_TYPE_BOOL:
      return DataType::kBool;
    default:
      return std::nullopt;
  }
}

}  // namespace orknn::model
