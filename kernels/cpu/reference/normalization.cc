#include "reference/normalization.h"

#include <cmath>
#include <limits>

namespace orknn::kernels::reference {

void batch_normalization(const ChannelLayout& layout, float epsilon, const float* input,
                         const float* scale, const float* bias, const float* mean,
                         const float* variance, float* output) {
  for (int64_t n = 0; n < layout.outer; ++n) {
    for (int64_t c = 0; c < layout.channels; ++c) {
      const double inverse_std_dev = 1.0 / std::sqrt(static_cast<double>(variance[c]) + epsilon);
      const int64_t base = (n * layout.channels + c) * layout.inner;
      for (int64_t i = 0; i < layout.inner; ++i) {
        const double centered = static_cast<double>(input[base + i]) - mean[c];
        output[base + i] = static_cast<float>(scale[c] * centered * inverse_std_dev + bias[c]);
      }
    }
  }
}

namespace {

// Mean and population variance of `count` values (two passes, for accuracy).
void moments(const float* values, int64_t count, double* out_mean, double* out_variance) {
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += values[i];
  const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
  double squares = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double deviation = values[i] - mean;
    squares += deviation * deviation;
  }
  *out_mean = mean;
  *out_variance = count > 0 ? squares / static_cast<double>(count) : 0.0;
}

}  // namespace

void instance_normalization(const ChannelLayout& layout, float epsilon, const float* input,
                            const float* scale, const float* bias, float* output) {
  for (int64_t n = 0; n < layout.outer; ++n) {
    for (int64_t c = 0; c < layout.channels; ++c) {
      const int64_t base = (n * layout.channels + c) * layout.inner;
      double mean, variance;
      moments(input + base, layout.inner, &mean, &variance);
      const double inverse_std_dev = 1.0 / std::sqrt(variance + epsilon);
      for (int64_t i = 0; i < layout.inner; ++i) {
        output[base + i] =
            static_cast<float>(scale[c] * (input[base + i] - mean) * inverse_std_dev + bias[c]);
      }
    }
  }
}

void layer_normalization(int64_t rows, int64_t row_size, float epsilon, const float* input,
                         const float* scale, const float* bias, float* output, float* out_mean,
                         float* out_inverse_std_dev) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = input + row * row_size;
    float* y = output + row * row_size;
    double mean, variance;
    moments(x, row_size, &mean, &variance);
    const double inverse_std_dev = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t j = 0; j < row_size; ++j) {
      const double normalized = (x[j] - mean) * inverse_std_dev * scale[j];
      y[j] = static_cast<float>(bias ? normalized + bias[j] : normalized);
    }
    if (out_mean) out_mean[row] = static_cast<float>(mean);
    if (out_inverse_std_dev) out_inverse_std_dev[row] = static_cast<float>(inverse_std_dev);
  }
}

void softmax(const ChannelLayout& layout, const float* input, float* output) {
  const int64_t stride = layout.inner;
  for (int64_t n = 0; n < layout.outer; ++n) {
    for (int64_t i = 0; i < layout.inner; ++i) {
      const int64_t base = n * layout.channels * layout.inner + i;
      // Subtracting the maximum keeps exp from overflowing without changing the result.
      float largest = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < layout.channels; ++c) {
        const float value = input[base + c * stride];
        if (value > largest || std::isnan(value)) largest = value;
      }
      double sum = 0.0;
      for (int64_t c = 0; c < layout.channels; ++c) {
        sum += std::exp(static_cast<double>(input[base + c * stride]) - largest);
      }
      // exp is recomputed rather than stored so that every output is rounded to float once.
      for (int64_t c = 0; c < layout.channels; ++c) {
        const double e = std::exp(static_cast<double>(input[base + c * stride]) - largest);
        output[base + c * stride] = static_cast<float>(e / sum);
      }
    }
  }
}

}  // namespace orknn::kernels::reference
