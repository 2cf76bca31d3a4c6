// The one place that maps the internal orknn::DataType to the file's proto::DataType and back.
// The two numberings happen to agree today, but the file's is frozen forever while the internal
// one may change, so nothing else may cast between them.
#pragma once

#include <optional>

#include "core/dtype.h"
#include "model/orknn_model.pb.h"

namespace orknn::model {

proto::DataType data_type_to_proto(DataType type);

// For graphs that passed verification (every ModelFile::graph()), where every value is known.
// An unknown value, which verification rules out, maps to kFloat32.
DataType data_type_from_proto(proto::DataType value);

// std::nullopt for a value this version of the format does not define (a hostile or newer file).
std::optional<DataType> try_data_type_from_proto(int value);

}  // namespace orknn::model
