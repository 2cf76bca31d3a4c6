#include "exec/weight_sharing.h"

#include <cstring>
#include <unordered_map>

namespace orknn::exec {

Result<std::shared_ptr<const graph::Graph>> share_weights(
    const graph::Graph& model, std::shared_ptr<const graph::Graph> donor) {
  std::unordered_map<std::string, const graph::Tensor*> donor_constants;
  for (const graph::Tensor& tensor : donor->tensors) {
    if (tensor.is_constant()) donor_constants[tensor.name] = &tensor;
  }
  auto shared = std::make_shared<graph::Graph>(model);
  for (graph::Tensor& tensor : shared->tensors) {
    if (!tensor.is_constant()) continue;
    auto found = donor_constants.find(tensor.name);
    if (found == donor_constants.end()) {
      return invalid_argument("RKNN_FLAG_SHARE_WEIGHT_MEM: constant '", tensor.name,
                              "' does not exist in the model of rknn_init_extend.ctx");
    }
    const graph::Tensor& source = *found->second;
    const bool identical =
        source.data_type == tensor.data_type && source.constant_size == tensor.constant_size &&
        (tensor.constant_size == 0 ||
         std::memcmp(source.constant_data, tensor.constant_data, tensor.constant_size) == 0);
    if (!identical) {
      return invalid_argument("RKNN_FLAG_SHARE_WEIGHT_MEM: constant '", tensor.name,
                              "' differs from the one in the model of rknn_init_extend.ctx ",
                              "(type, size or values); the models must share their weights");
    }
    tensor.constant_data = source.constant_data;
  }
  // The donor graph owns the bytes every constant now points into.
  shared->storage = std::shared_ptr<const void>(donor, donor.get());
  return std::shared_ptr<const graph::Graph>(std::move(shared));
}

}  // namespace orknn::exec
