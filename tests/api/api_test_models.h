// Small models for the C API tests, built with the model writer, with values simple enough
// that every expected output is computed by hand in the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orknn::api_testing {

enum class Precision { kFloat32, kFloat16, kInt8 };

// "affine": one NHWC image input x [1,3,2,2] (mean {10,20,30}, std {2,4,8}, optionally with
// reversed channels), y = x * scale[c] + shift[c] with scale {1,2,3} and shift {-1,0,1}, one
// NCHW output [1,3,2,2]; plus a second output z = Flatten(y) [1,12] (fmt UNDEFINED).
// Int8 models quantize x with scale 1/16, zero point 0 and y, z with scale 1/8, zero point -8.
struct AffineModelOptions {
  Precision precision = Precision::kFloat32;
  bool reverse_channels = false;
  std::string target_platform = "rk3588";
  std::string custom_string = "model=affine;test=1";
  int batch = 1;  // the N of x, y ([N,3,2,2]) and z ([N,12]), as rknn_batch_size makes it
};
std::vector<uint8_t> build_affine_model(const AffineModelOptions& options);

// Reference output of the affine model for raw user values `user_nhwc` (12 values, NHWC order,
// before mean/std): returns NCHW values of y.
std::vector<float> affine_model_expected(const std::vector<float>& user_nhwc,
                                         bool reverse_channels);

// "chain": input [1,16] float32 through `depth` Add-constant nodes, output [1,16]; for
// threading and lifetime tests. Output = input + depth * 0.5.
std::vector<uint8_t> build_chain_model(int depth);

// "dynamic": one NHWC image input x [1,3,H,W] float32 with shape sets (H,W) = (4,4), (8,8) and
// (2,6) (built for the first), y = (x * 2) + 1 through an intermediate, output y [1,3,H,W].
std::vector<uint8_t> build_dynamic_model();

// Writes bytes to a unique temporary file and returns its path; the caller removes it.
std::string write_temporary_file(const std::vector<uint8_t>& bytes, const std::string& tag);

}  // namespace orknn::api_testing
