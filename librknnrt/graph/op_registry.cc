// The one list of operators the runtime knows. Families are listed explicitly (no static
// registration) so the set of ops is visible in one place.
#include "graph/op_schema.h"

namespace orknn::graph {

const std::vector<OpSchema>& all_op_schemas() {
  static const std::vector<OpSchema> schemas = [] {
    std::vector<OpSchema> all;
    for (auto family : {convolution_op_schemas, pooling_op_schemas, elementwise_op_schemas,
                        normalization_op_schemas, reduction_op_schemas, data_movement_op_schemas,
                        resize_op_schemas}) {
      std::vector<OpSchema> schemas_of_family = family();
      all.insert(all.end(), schemas_of_family.begin(), schemas_of_family.end());
    }
    return all;
  }();
  return schemas;
}

const OpSchema* find_op_schema(std::string_view op_type) {
  for (const OpSchema& schema : all_op_schemas()) {
    if (op_type == schema.op_type) return &schema;
  }
  return nullptr;
}

}  // namespace orknn::graph
