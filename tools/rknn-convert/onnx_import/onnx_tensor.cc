#include "onnx_import/onnx_tensor.h"

#include <cstring>

namespace orknn::convert {

using onnx::TensorProto;

std::string onnx_type_name(int onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type)) {
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  }
  return "an unknown type";
}

Result<DataType> data_type_from_onnx(int onnx_type, const std::string& what) {
  switch (onnx_type) {
    case TensorProto::FLOAT:
      return DataType::kFloat32;
    case TensorProto::FLOAT16:
      return DataType::kFloat16;
    case TensorProto::INT8:
      return DataType::kInt8;
    case TensorProto::UINT8:
      return DataType::kUInt8;
    case TensorProto::INT16:
      return DataType::kInt16;
    case TensorProto::INT32:
      return DataType::kInt32;
    case TensorProto::INT64:
      return DataType::kInt64;
    case TensorProto::BOOL:
      return DataType::kBool;
    default:
      return invalid_model(what, ": element type ", onnx_type_name(onnx_type), " (", onnx_type,
                           ") is not supported (supported: FLOAT, FLOAT16, INT8, UINT8, INT16, "
                           "INT32, INT64, BOOL)");
  }
}

namespace {

// How a type is stored: the IR type the values become and the element size in raw_data.
struct StorageRule {
  DataType type;
  size_t raw_element_size;
};

Result<StorageRule> storage_rule(int onnx_type, const std::string& what) {
  switch (onnx_type) {
    case TensorProto::DOUBLE:
      return StorageRule{DataType::kFloat32, 8};
    case TensorProto::UINT16:
      return StorageRule{DataType::kInt64, 2};
    case TensorProto::UINT32:
      return StorageRule{DataType::kInt64, 4};
    case TensorProto::UINT64:
      return StorageRule{DataType::kInt64, 8};
    default: {
      ORKNN_ASSIGN_OR_RETURN(DataType type, data_type_from_onnx(onnx_type, what));
      return StorageRule{type, element_size(type)};
    }
  }
}

template <typename T>
void put(ir::Bytes* bytes, size_t index, T value) {
  std::memcpy(bytes->data() + index * sizeof(T), &value, sizeof(T));
}

}  // namespace

Result<ir::Tensor> tensor_from_onnx(const TensorProto& proto, const std::string& what) {
  if (proto.data_location() == TensorProto::EXTERNAL) {
    return internal_failure(what, ": external data was not loaded");
  }
  ORKNN_ASSIGN_OR_RETURN(StorageRule rule, storage_rule(proto.data_type(), what));
  ir::Tensor tensor;
  tensor.name = proto.name();
  tensor.type = rule.type;
  tensor.shape_known = true;
  int64_t count = 1;
  for (int64_t dimension : proto.dims()) {
    if (dimension < 0) return invalid_model(what, ": negative dimension ", dimension);
    if (dimension > 0 && count > (int64_t{1} << 40) / dimension) {
      return invalid_model(what, ": ", proto.dims_size(), "-D shape is too large");
    }
    tensor.shape.push_back(dimension);
    count *= dimension;
  }
  const size_t elements = static_cast<size_t>(count);
  const size_t out_size = element_size(rule.type);
  ir::Bytes bytes(elements * out_size);

  auto count_error = [&](size_t found, const char* field) -> Status {
    return invalid_model(what, ": ", field, " holds ", found, " values but the shape ",
                         ir::shape_to_string(tensor.shape), " needs ", elements);
  };

  const int type = proto.data_type();
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != elements * rule.raw_element_size) {
      return invalid_model(what, ": raw_data has ", raw.size(), " bytes but ", onnx_type_name(type),
                           " shape ", ir::shape_to_string(tensor.shape), " needs ",
                           elements * rule.raw_element_size);
    }
    const auto* source = reinterpret_cast<const uint8_t*>(raw.data());
    if (type == TensorProto::DOUBLE) {
      for (size_t i = 0; i < elements; ++i) {
        double value;
        std::memcpy(&value, source + 8 * i, 8);
        put<float>(&bytes, i, static_cast<float>(value));
      }
    } else if (type == TensorProto::UINT16 || type == TensorProto::UINT32 ||
               type == TensorProto::UINT64) {
      for (size_t i = 0; i < elements; ++i) {
        uint64_t value = 0;
        std::memcpy(&value, source + rule.raw_element_size * i, rule.raw_element_size);
        put<int64_t>(&bytes, i, static_cast<int64_t>(value));
      }
    } else if (!bytes.empty()) {
      std::memcpy(bytes.data(), source, bytes.size());
    }
    if (type == TensorProto::BOOL) {
      for (uint8_t& value : bytes) value = value ? 1 : 0;
    }
  } else {
    switch (type) {
      case TensorProto::FLOAT:
        if (static_cast<size_t>(proto.float_data_size()) != elements) {
          return count_error(proto.float_data_size(), "float_data");
        }
        for (size_t i = 0; i < elements; ++i)
          put<float>(&bytes, i, proto.float_data(static_cast<int>(i)));
        break;
      case TensorProto::DOUBLE:
        if (static_cast<size_t>(proto.double_data_size()) != elements) {
          return count_error(proto.double_data_size(), "double_data");
        }
        for (size_t i = 0; i < elements; ++i) {
          put<float>(&bytes, i, static_cast<float>(proto.double_data(static_cast<int>(i))));
        }
        break;
      case TensorProto::INT64:
        if (static_cast<size_t>(proto.int64_data_size()) != elements) {
          return count_error(proto.int64_data_size(), "int64_data");
        }
        for (size_t i = 0; i < elements; ++i)
          put<int64_t>(&bytes, i, proto.int64_data(static_cast<int>(i)));
        break;
      case TensorProto::UINT32:
      case TensorProto::UINT64:
        if (static_cast<size_t>(proto.uint64_data_size()) != elements) {
          return count_error(proto.uint64_data_size(), "uint64_data");
        }
        for (size_t i = 0; i < elements; ++i) {
          put<int64_t>(&bytes, i, static_cast<int64_t>(proto.uint64_data(static_cast<int>(i))));
        }
        break;
      case TensorProto::INT32:
      case TensorProto::INT16:
      case TensorProto::INT8:
      case TensorProto::UINT16:
      case TensorProto::UINT8:
      case TensorProto::BOOL:
      case TensorProto::FLOAT16: {
        // ONNX stores all of these in int32_data (float16 as its bit pattern).
        if (static_cast<size_t>(proto.int32_data_size()) != elements) {
          return count_error(proto.int32_data_size(), "int32_data");
        }
        for (size_t i = 0; i < elements; ++i) {
          const int32_t value = proto.int32_data(static_cast<int>(i));
          switch (type) {
            case TensorProto::INT32:
              put<int32_t>(&bytes, i, value);
              break;
            case TensorProto::INT16:
              put<int16_t>(&bytes, i, static_cast<int16_t>(value));
              break;
            case TensorProto::INT8:
              put<int8_t>(&bytes, i, static_cast<int8_t>(value));
              break;
            case TensorProto::UINT8:
              put<uint8_t>(&bytes, i, static_cast<uint8_t>(value));
              break;
            case TensorProto::BOOL:
              put<uint8_t>(&bytes, i, value ? 1 : 0);
              break;
            case TensorProto::UINT16:
              put<int64_t>(&bytes, i, static_cast<uint16_t>(value));
              break;
            default:
              put<uint16_t>(&bytes, i, static_cast<uint16_t>(value));
              break;
          }
        }
        break;
      }
      default:
        return invalid_model(what, ": element type ", onnx_type_name(type), " is not supported");
    }
  }
  tensor.data = std::make_shared<const ir::Bytes>(std::move(bytes));
  return tensor;
}

}  // namespace orknn::convert
