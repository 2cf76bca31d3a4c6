// 2-D max and average pooling (global pooling is a window the size of the plane).

#define POOL_MAX 0
#define POOL_AVERAGE 1

// geometry: H, W, OH, OW, KH, KW, SH, SW, DH, DW, pad top, pad left, pad bottom, pad right,
// mode, count include pad. Global size: (OW, OH, N * C).
__kernel void pool2d(__global const storage* input, __global storage* output,
                     __global const int* geometry) {
  const int ow = get_global_id(0), oh = get_global_id(1), plane = get_global_id(2);
  const int height = geometry[0], width = geometry[1];
  const int out_height = geometry[2], out_width = geometry[3];
  if (ow >= out_width || oh >= out_height) return;
  const int kernel_height = geometry[4], kernel_width = geometry[5];
  const int row0 = oh * geometry[6] - geometry[10], column0 = ow * geometry[7] - geometry[11];
  const int dilation_h = geometry[8], dilation_w = geometry[9];
  const int pad_bottom = geometry[12], pad_right = geometry[13];
  const int mode = geometry[14], count_include_pad = geometry[15];
  const int base = plane * height * width;
  float best = -INFINITY, sum = 0.0f;
  int inside_input = 0, inside_padded = 0;
  for (int kh = 0; kh < kernel_height; ++kh) {
    const int row = row0 + kh * dilation_h;
    const bool row_padded = row >= -geometry[10] && row < height + pad_bottom;
    const bool row_inside = row >= 0 && row < height;
    for (int kw = 0; kw < kernel_width; ++kw) {
      const int column = column0 + kw * dilation_w;
      if (row_padded && column >= -geometry[11] && column < width + pad_right) ++inside_padded;
      if (row_inside && column >= 0 && column < width) {
        const float value = LOAD(input, base + row * width + column);
        sum += value;
        if (value > best || isnan(value)) best = value;
        ++inside_input;
      }
    }
  }
  float result;
  if (mode == POOL_MAX) {
    result = best;
  } else {
    const int divisor = count_include_pad ? inside_padded : inside_input;
    result = divisor > 0 ? sum / (float)divisor : 0.0f;
  }
  STORE(output, (plane * out_height + oh) * out_width + ow, result);
}
