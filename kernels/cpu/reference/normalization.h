// Reference kernels of the normalization family on float32: BatchNormalization (inference),
// InstanceNormalization, LayerNormalization and Softmax. Statistics are accumulated in double
// so the oracle is not limited by float summation error.
#pragma once

#include <cstdint>

namespace orknn::kernels::reference {

// A tensor seen as [outer, channels, inner]: N, C and the product of the spatial dimensions.
struct ChannelLayout {
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
};

// y = scale[c] * (x - mean[c]) / sqrt(variance[c] + epsilon) + bias[c]
void batch_normalization(const ChannelLayout& layout, float epsilon, const float* input,
                         const float* scale, const float* bias, const float* mean,
                         const float* variance, float* output);

// y = scale[c] * (x - mean) / sqrt(variance + epsilon) + bias[c], with the mean and the
// (population) variance of each (n, c) plane.
void instance_normalization(const ChannelLayout& layout, float epsilon, const float* input,
                            const float* scale, const float* bias, float* output);

// Normalizes each of `rows` consecutive rows of `row_size` elements:
// y = (x - mean) / sqrt(variance + epsilon) * scale[j] + bias[j]. `bias` may be null.
// `out_mean` and `out_inverse_std_dev` (one value per row) may be null.
void layer_normalization(int64_t rows, int64_t row_size, float epsilon, const float* input,
                         const float* scale, const float* bias, float* output, float* out_mean,
                         float* out_inverse_std_dev);

// Softmax over the middle dimension of an [outer, axis_size, inner] view.
void softmax(const ChannelLayout& layout, const float* input, float* output);

}  // namespace orknn::kernels::reference
