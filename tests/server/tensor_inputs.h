// Inputs for the server tests: every dtype the C API converts from, in NCHW or NHWC, or the
// model's native layout with pass_through; each described once as a proto Tensor, from which
// the matching rknn_input of a direct C API run is made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "openrknn/server/v1/rknn_server.pb.h"
#include "rknn_api.h"

namespace orknn::server_testing {

struct InputVariant {
  rknn_tensor_type dtype;
  rknn_tensor_format layout;  // NCHW or NHWC, ignored with pass_through
  bool pass_through;
  std::string name() const;
};

// The combinations the tests try on an input.
std::vector<InputVariant> input_variants();

// A deterministic image-like tensor for `attribute` (normal) or `native` (pass-through).
openrknn::server::v1::Tensor make_input_tensor(const rknn_tensor_attr& attribute,
                                               const rknn_tensor_attr& native,
                                               const InputVariant& variant, uint32_t seed);

// The rknn_input describing the same bytes (buf points into `tensor`).
rknn_input to_rknn_input(const openrknn::server::v1::Tensor& tensor);

uint16_t float_to_half(float value);

}  // namespace orknn::server_testing
