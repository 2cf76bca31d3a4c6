// Data movement and the ops that mix a whole axis: strided gather (Transpose, Slice), slab copy
// (Concat), Softmax, Reduce and Resize.

// geometry: rank, base offset, output dims[rank], input strides[rank] (permuted for Transpose,
// multiplied by the step for Slice).
__kernel void gather_strided(__global const storage* input, __global storage* output,
                             __global const int* geometry, int count) {
  const int index = get_global_id(0);
  if (index >= count) return;
  const int rank = geometry[0];
  int remaining = index, offset = geometry[1];
  for (int d = rank - 1; d >= 0; --d) {
    const int dim = geometry[2 + d];
    offset += (remaining % dim) * geometry[2 + rank + d];
    remaining /= dim;
  }
  STORE(output, index, LOAD(input, offset));
}

// Copies input [outer, input_block] into output [outer, output_block] at column offset.
__kernel void copy_slab(__global const storage* input, __global storage* output, int count,
                        int input_block, int output_block, int offset) {
  const int index = get_global_id(0);
  if (index >= count) return;
  const int row = index / input_block, column = index % input_block;
  STORE(output, row * output_block + offset + column, LOAD(input, index));
}

// Softmax over the middle axis of [outer, channels, inner]; one work item per (outer, inner).
__kernel void softmax(__global const storage* input, __global storage* output, int outer,
                      int channels, int inner) {
  const int index = get_global_id(0);
  if (index >= outer * inner) return;
  const int base = (index / inner) * channels * inner + index % inner;
  float largest = -INFINITY;
  for (int c = 0; c < channels; ++c) {
    const float value = LOAD(input, base + c * inner);
    if (value > largest || isnan(value)) largest = value;
  }
  float sum = 0.0f;
  for (int c = 0; c < channels; ++c) sum += exp(LOAD(input, base + c * inner) - largest);
  const float scale = 1.0f / sum;
  for (int c = 0; c < channels; ++c) {
    STORE(output, base + c * inner, exp(LOAD(input, base + c * inner) - largest) * scale);
  }
}

#define REDUCE_SUM 0
#define REDUCE_MEAN 1
#define REDUCE_MAX 2
#define REDUCE_MIN 3

// geometry: rank, reduced count, output dims[rank] (1 on reduced axes), reduced dims[rank]
// (1 on kept axes), input strides[rank]. One work item per output element.
__kernel void reduce(__global const storage* input, __global storage* output,
                     __global const int* geometry, int count, int operation) {
  const int index = get_global_id(0);
  if (index >= count) return;
  const int rank = geometry[0], reduced_count = geometry[1];
  __global const int* output_dims = geometry + 2;
  __global const int* reduced_dims = geometry + 2 + rank;
  __global const int* strides = geometry + 2 + 2 * rank;
  int remaining = index, base = 0;
  for (int d = rank - 1; d >= 0; --d) {
    base += (remaining % output_dims[d]) * strides[d];
    remaining /= output_dims[d];
  }
  float accumulator = operation == REDUCE_MAX ? -INFINITY
                      : operation == REDUCE_MIN ? INFINITY
                                                : 0.0f;
  for (int r = 0; r < reduced_count; ++r) {
    int rest = r, offset = base;
    for (int d = rank - 1; d >= 0; --d) {
      offset += (rest % reduced_dims[d]) * strides[d];
      rest /= reduced_dims[d];
    }
    const float value = LOAD(input, offset);
    if (operation == REDUCE_MAX) {
      accumulator = value > accumulator || isnan(value) ? value : accumulator;
    } else if (operation == REDUCE_MIN) {
      accumulator = value < accumulator || isnan(value) ? value : accumulator;
    } else {
      accumulator += value;
    }
  }
  if (operation == REDUCE_MEAN) accumulator /= (float)reduced_count;
  STORE(output, index, accumulator);
}

// Resize of the last two axes of [planes, H, W] with per-row and per-column taps computed by the
// host with the reference's arithmetic. taps: rows low[OH], rows high[OH], columns low[OW],
// columns high[OW]; weights: rows[OH], columns[OW] (the weight of the high tap). Nearest
// resizing has low == high. Global size: (OW, OH, planes).
__kernel void resize2d(__global const storage* input, __global storage* output,
                       __global const int* taps, __global const float* weights, int height,
                       int width, int out_height, int out_width) {
  const int ow = get_global_id(0), oh = get_global_id(1), plane = get_global_id(2);
  if (ow >= out_width || oh >= out_height) return;
  const int row_low = taps[oh], row_high = taps[out_height + oh];
  const int column_low = taps[2 * out_height + ow];
  const int column_high = taps[2 * out_height + out_width + ow];
  const float row_weight = weights[oh], column_weight = weights[out_height + ow];
  const int base = plane * height * width;
  const float top = LOAD(input, base + row_low * width + column_low) * (1.0f - column_weight) +
                    LOAD(input, base + row_low * width + column_high) * column_weight;
  const float bottom =
      LOAD(input, base + row_high * width + column_low) * (1.0f - column_weight) +
      LOAD(input, base + row_high * width + column_high) * column_weight;
  STORE(output, (plane * out_height + oh) * out_width + ow,
        top * (1.0f - row_weight) + bottom * row_weight);
}
