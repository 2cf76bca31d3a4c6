#include "quantize/weight_rounding.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"

// The three loops that take the time (Gram matrix rows, the triangular inverse, the column
// updates) are built twice on x86-64, for AVX2 and the baseline, and the loader picks one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ORKNN_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ORKNN_VECTOR_CLONES
#endif

namespace orknn::convert {
namespace {

// out[j] += factor * in[j]
ORKNN_VECTOR_CLONES void add_scaled(float* out, const float* in, float factor, int64_t count) {
  for (int64_t j = 0; j < count; ++j) out[j] += factor * in[j];
}
ORKNN_VECTOR_CLONES void add_scaled(double* out, const double* in, double factor, int64_t count) {
  for (int64_t j = 0; j < count; ++j) out[j] += factor * in[j];
}

float scale_of(const std::vector<float>& scales, int64_t output) {
  return scales.size() == 1 ? scales[0] : scales[static_cast<size_t>(output)];
}

// A square row-major matrix of doubles.
class SquareMatrix {
 public:
  explicit SquareMatrix(int64_t size)
      : size_(size), values_(static_cast<size_t>(size * size), 0.0) {}
  double* row(int64_t i) { return values_.data() + i * size_; }
  const double* row(int64_t i) const { return values_.data() + i * size_; }
  double& at(int64_t i, int64_t j) { return values_[static_cast<size_t>(i * size_ + j)]; }
  int64_t size() const { return size_; }

 private:
  int64_t size_;
  std::vector<double> values_;
};

// The upper triangle of X^T X over columns [first, first + size) of the input rows. Rows go
// through in chunks: each row of H is summed in float over a chunk (a vectorizable update that
// stays in cache, no reductions), then added to H in double.
SquareMatrix input_gram_matrix(const LayerInputRows& inputs, int64_t first, int64_t size) {
  SquareMatrix gram(size);
  const int64_t rows = inputs.rows();
  constexpr int64_t kChunkRows = 64;
  std::vector<float> partial(static_cast<size_t>(size));
  for (int64_t chunk = 0; chunk < rows; chunk += kChunkRows) {
    const int64_t chunk_end = std::min(rows, chunk + kChunkRows);
    for (int64_t i = 0; i < size; ++i) {
      float* sums = partial.data();
      std::fill(sums + i, sums + size, 0.0f);
      for (int64_t r = chunk; r < chunk_end; ++r) {
        const float* x = inputs.values.data() + r * inputs.columns + first;
        const float xi = x[i];
        if (xi == 0.0f) continue;  // zero padding and dead inputs are common
        add_scaled(sums + i, x + i, xi, size - i);
      }
      double* gram_row = gram.row(i);
      for (int64_t j = i; j < size; ++j) gram_row[j] += sums[j];
    }
  }
  return gram;
}

// Four independent partial sums (eight lanes once vectorized): a single running sum would wait
// on each addition's latency, which made the Cholesky factorization the slowest step.
double dot(const double* a, const double* b, int64_t count) {
  double sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= count; k += 8) {
#pragma omp simd
    for (int lane = 0; lane < 8; ++lane) sums[lane] += a[k + lane] * b[k + lane];
  }
  double sum = 0.0;
  for (; k < count; ++k) sum += a[k] * b[k];
  for (double partial : sums) sum += partial;
  return sum;
}

// Lower Cholesky factor of `matrix` in place (its lower triangle is read). False when the
// matrix is not numerically positive definite.
bool cholesky_in_place(SquareMatrix* matrix) {
  const int64_t n = matrix->size();
  for (int64_t j = 0; j < n; ++j) {
    double* row_j = matrix->row(j);
    const double diagonal = row_j[j] - dot(row_j, row_j, j);
    if (!(diagonal > 0.0) || !std::isfinite(diagonal)) return false;
    const double pivot = std::sqrt(diagonal);
    row_j[j] = pivot;
    for (int64_t i = j + 1; i < n; ++i) {
      double* row_i = matrix->row(i);
      row_i[j] = (row_i[j] - dot(row_i, row_j, j)) / pivot;
    }
  }
  return true;
}

// Inverse of a lower-triangular matrix, row by row (each row a sum of earlier rows).
SquareMatrix invert_lower_triangular(const SquareMatrix& lower) {
  const int64_t n = lower.size();
  SquareMatrix inverse(n);
  for (int64_t i = 0; i < n; ++i) {
    double* out = inverse.row(i);
    const double* l = lower.row(i);
    for (int64_t k = 0; k < i; ++k) {
      const double factor = -l[k];
      if (factor == 0.0) continue;
      const double* earlier = inverse.row(k);
      add_scaled(out, earlier, factor, k + 1);
    }
    const double reciprocal = 1.0 / l[i];
    for (int64_t j = 0; j < i; ++j) out[j] *= reciprocal;
    out[i] = reciprocal;
  }
  return inverse;
}

// The upper Cholesky factor U of H^-1 (H^-1 = U^T U), which drives the column-by-column
// updates. With J the reversal permutation: J H J = L L^T gives H = (J L J)(J L J)^T, so
// H^-1 = (J L^-1 J)^T (J L^-1 J) and U = J L^-1 J. One factorization and one triangular
// inverse, instead of inverting H and factoring the inverse.
bool inverse_upper_cholesky(const SquareMatrix& gram_upper, SquareMatrix* out_upper) {
  const int64_t n = gram_upper.size();
  SquareMatrix reversed(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) reversed.at(i, j) = gram_upper.row(n - 1 - i)[n - 1 - j];
  }
  if (!cholesky_in_place(&reversed)) return false;
  for (int64_t i = 0; i < n; ++i) {  // keep only the factor: zero what the input left above
    for (int64_t j = i + 1; j < n; ++j) reversed.at(i, j) = 0.0;
  }
  const SquareMatrix inverse = invert_lower_triangular(reversed);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) out_upper->at(i, j) = inverse.row(n - 1 - i)[n - 1 - j];
  }
  return true;
}

// The damped H of columns [first, first + size) of the input rows and the upper Cholesky
// factor U of its inverse. False when the block's inputs are all zero or H cannot be factored
// even with 10-1000x more damping. *out_damping receives the damping added to H's diagonal.
bool factor_block(const LayerInputRows& inputs, int64_t first, int64_t size,
                  const CompensatedRoundingSettings& settings, SquareMatrix* out_upper,
                  double* out_damping) {
  SquareMatrix gram = input_gram_matrix(inputs, first, size);
  double mean_diagonal = 0.0;
  for (int64_t i = 0; i < size; ++i) mean_diagonal += gram.at(i, i);
  mean_diagonal /= static_cast<double>(size);
  if (!(mean_diagonal > 0.0)) return false;  // the block's inputs are all zero
  for (int64_t i = 0; i < size; ++i) {
    // An input that is always zero: its weight does not matter; 1 keeps H invertible.
    if (gram.at(i, i) == 0.0) gram.at(i, i) = mean_diagonal;
  }
  double damping = settings.relative_damping * mean_diagonal;
  for (int attempt = 0; attempt < 4; ++attempt, damping *= 10.0) {
    SquareMatrix damped = gram;
    for (int64_t i = 0; i < size; ++i) damped.at(i, i) += damping;
    if (inverse_upper_cholesky(damped, out_upper)) {
      *out_damping = damping;
      return true;
    }
  }
  return false;
}

// Quantizes columns [first, first + size) of every output with the errors of earlier columns
// of the block spread over later ones. False (nothing written) when H cannot be factored.
bool round_block(const std::vector<float>& weights, int64_t outputs, int64_t columns,
                 const std::vector<float>& scales, const LayerInputRows& inputs, int64_t first,
                 int64_t size, const CompensatedRoundingSettings& settings,
                 std::vector<int8_t>* codes) {
  SquareMatrix upper(size);
  double damping = 0.0;
  if (!factor_block(inputs, first, size, settings, &upper, &damping)) return false;

  // The updates run in float (as GPTQ does): twice the lanes, and far below int8 resolution.
  std::vector<float> upper_float(static_cast<size_t>(size * size));
  for (int64_t i = 0; i < size; ++i) {
    for (int64_t j = i; j < size; ++j)
      upper_float[static_cast<size_t>(i * size + j)] = static_cast<float>(upper.at(i, j));
  }
  std::vector<float> row(static_cast<size_t>(size));
  for (int64_t c = 0; c < outputs; ++c) {
    const float scale = scale_of(scales, c);
    const float* original = weights.data() + c * columns + first;
    std::copy(original, original + size, row.begin());
    int8_t* out = codes->data() + c * columns + first;
    for (int64_t k = 0; k < size; ++k) {
      const float value = row[static_cast<size_t>(k)];
      const int8_t code = quantize_int8(value, scale, 0);
      out[k] = code;
      const float* u = upper_float.data() + k * size;
      const float error = (value - static_cast<float>(code) * scale) / u[k];
      add_scaled(row.data() + k + 1, u + k + 1, -error, size - k - 1);
    }
  }
  return true;
}

}  // namespace

std::vector<int8_t> round_weights_to_nearest(const std::vector<float>& weights, int64_t outputs,
                                             const std::vector<float>& scales) {
  std::vector<int8_t> codes(weights.size());
  const int64_t columns = outputs > 0 ? static_cast<int64_t>(weights.size()) / outputs : 0;
  for (int64_t c = 0; c < outputs; ++c) {
    const float scale = scale_of(scales, c);
    for (int64_t k = 0; k < columns; ++k) {
      const size_t index = static_cast<size_t>(c * columns + k);
      codes[index] = quantize_int8(weights[index], scale, 0);
    }
  }
  return codes;
}

std::vector<int8_t> round_weights_with_compensation(const std::vector<float>& weights,
                                                    int64_t outputs,
                                                    const std::vector<float>& scales,
                                                    const LayerInputRows& inputs,
                                                    const CompensatedRoundingSettings& settings) {
  std::vector<int8_t> codes = round_weights_to_nearest(weights, outputs, scales);
  const int64_t columns = outputs > 0 ? static_cast<int64_t>(weights.size()) / outputs : 0;
  if (columns == 0 || inputs.columns != columns || inputs.rows() == 0) return codes;
  // Equal blocks no larger than the limit.
  const int64_t block_limit = std::max<int64_t>(1, settings.max_block_columns);
  const int64_t blocks = (columns + block_limit - 1) / block_limit;
  const int64_t block_size = (columns + blocks - 1) / blocks;
  for (int64_t first = 0; first < columns; first += block_size) {
    const int64_t size = std::min(block_size, columns - first);
    round_block(weights, outputs, columns, scales, inputs, first, size, settings, &codes);
  }
  return codes;
}

std::vector<double> mean_output_shift(const std::vector<float>& weights,
                                      const std::vector<int8_t>& codes, int64_t outputs,
                                      const std::vector<float>& scales,
                                      const LayerInputRows& quantized_inputs,
                                      const LayerInputRows& float_inputs) {
  std::vector<double> shifts(static_cast<size_t>(std::max<int64_t>(outputs, 0)), 0.0);
  const int64_t columns = float_inputs.columns;
  const int64_t rows = float_inputs.rows();
  if (rows == 0 || columns * outputs != static_cast<int64_t>(weights.size()) ||
      codes.size() != weights.size() || quantized_inputs.columns != columns ||
      quantized_inputs.rows() != rows) {
    return shifts;
  }
  auto column_means = [&](const LayerInputRows& inputs) {
    std::vector<double> means(static_cast<size_t>(columns), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const float* x = inputs.values.data() + r * columns;
      for (int64_t k = 0; k < columns; ++k) means[static_cast<size_t>(k)] += x[k];
    }
    for (double& mean : means) mean /= static_cast<double>(rows);
    return means;
  };
  const std::vector<double> mean_quantized = column_means(quantized_inputs);
  const std::vector<double> mean_float =
      &quantized_inputs == &float_inputs ? mean_quantized : column_means(float_inputs);
  for (int64_t c = 0; c < outputs; ++c) {
    const double scale = scale_of(scales, c);
    double sum = 0.0;
    for (int64_t k = 0; k < columns; ++k) {
      const size_t index = static_cast<size_t>(c * columns + k);
      sum += codes[index] * scale * mean_quantized[static_cast<size_t>(k)] -
             static_cast<double>(weights[index]) * mean_float[static_cast<size_t>(k)];
    }
    shifts[static_cast<size_t>(c)] = sum;
  }
  return shifts;
}

}  // namespace orknn::convert
