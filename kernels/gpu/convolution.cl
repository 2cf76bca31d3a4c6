// Convolution (grouped and depthwise are the same loop) and the matrix products of Gemm and
// MatMul. One work item computes one output element; the fused activation is applied on store.

// geometry: C, H, W, M, OH, OW, KH, KW, SH, SW, DH, DW, pad top, pad left, group, has bias.
// Global size: (OH * OW, M, N): output pixels fastest, so that neighbouring work items read
// neighbouring inputs and the same weight (which is what lets PoCL vectorize, and GPUs coalesce).
__kernel void conv2d(__global const storage* input, __global const storage* weights,
                     __global const storage* bias, __global storage* output,
                     __global const int* geometry, int activation, float alpha, float beta) {
  const int pixel = get_global_id(0), m = get_global_id(1), n = get_global_id(2);
  const int channels = geometry[0], height = geometry[1], width = geometry[2];
  const int out_channels = geometry[3], out_height = geometry[4], out_width = geometry[5];
  const int kernel_height = geometry[6], kernel_width = geometry[7];
  const int stride_h = geometry[8], stride_w = geometry[9];
  const int dilation_h = geometry[10], dilation_w = geometry[11];
  const int pad_top = geometry[12], pad_left = geometry[13], group = geometry[14];
  if (pixel >= out_height * out_width) return;
  const int oh = pixel / out_width, ow = pixel % out_width;
  const int group_channels = channels / group;
  const int first_channel = (m / (out_channels / group)) * group_channels;
  const int row0 = oh * stride_h - pad_top, column0 = ow * stride_w - pad_left;
  float sum = geometry[15] ? LOAD(bias, m) : 0.0f;
  for (int c = 0; c < group_channels; ++c) {
    const int plane = (n * channels + first_channel + c) * height;
    const int weight_base = (m * group_channels + c) * kernel_height;
    for (int kh = 0; kh < kernel_height; ++kh) {
      const int row = row0 + kh * dilation_h;
      if (row < 0 || row >= height) continue;
      for (int kw = 0; kw < kernel_width; ++kw) {
        const int column = column0 + kw * dilation_w;
        if (column < 0 || column >= width) continue;
        sum += LOAD(input, (plane + row) * width + column) *
               LOAD(weights, (weight_base + kh) * kernel_width + kw);
      }
    }
  }
  const int out_index = ((n * out_channels + m) * out_height + oh) * out_width + ow;
  STORE(output, out_index, activate(sum, activation, alpha, beta));
}

// output[batch, i, j] = activation(alpha * sum_k A(i, k) B(k, j) + beta * C(i, j)).
// geometry: M, N, K, a row stride, a k stride, b k stride, b column stride, c row stride,
// c column stride, has c, batch rank, batch dims[batch rank], a batch strides[batch rank],
// b batch strides[batch rank]. Global size: (N, ceil(M / MATMUL_ROWS), batch count): each
// work item computes MATMUL_ROWS rows of one column, so every B element it loads serves
// MATMUL_ROWS multiply-adds (B is the large operand of 1x1 convolutions).
#define MATMUL_ROWS 4
__kernel void matmul(__global const storage* a, __global const storage* b,
                     __global const storage* c, __global storage* output,
                     __global const int* geometry, float alpha, float beta, int activation,
                     float activation_alpha, float activation_beta) {
  const int j = get_global_id(0), first_row = get_global_id(1) * MATMUL_ROWS;
  const int batch = get_global_id(2);
  const int rows = geometry[0], columns = geometry[1], depth = geometry[2];
  if (j >= columns || first_row >= rows) return;
  const int batch_rank = geometry[10];
  int a_offset, b_offset;
  broadcast_offsets(batch, batch_rank, geometry + 11, geometry + 11 + batch_rank,
                    geometry + 11 + 2 * batch_rank, &a_offset, &b_offset);
  b_offset += j * geometry[6];
  const int a_step = geometry[4], b_step = geometry[5];
  // Rows past the end repeat the last row (valid addresses, results not stored).
  int a_rows[MATMUL_ROWS];
  float sums[MATMUL_ROWS];
  for (int r = 0; r < MATMUL_ROWS; ++r) {
    a_rows[r] = a_offset + min(first_row + r, rows - 1) * geometry[3];
    sums[r] = 0.0f;
  }
  for (int k = 0; k < depth; ++k) {
    const float b_value = LOAD(b, b_offset + k * b_step);
    for (int r = 0; r < MATMUL_ROWS; ++r) sums[r] += LOAD(a, a_rows[r] + k * a_step) * b_value;
  }
  for (int r = 0; r < MATMUL_ROWS && first_row + r < rows; ++r) {
    const int i = first_row + r;
    float sum = sums[r] * alpha;
    if (geometry[9]) sum += beta * LOAD(c, i * geometry[7] + j * geometry[8]);
    STORE(output, (batch * rows + i) * columns + j,
          activate(sum, activation, activation_alpha, activation_beta));
  }
}
