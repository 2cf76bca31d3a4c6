// Element-wise kernels: unary activations, binary operations with numpy broadcasting, and the
// per-channel affine map that inference-time BatchNormalization reduces to.

__kernel void unary(__global const storage* input, __global storage* output, int count,
                    int kind, float alpha, float beta) {
  const int index = get_global_id(0);
  if (index >= count) return;
  STORE(output, index, activate(LOAD(input, index), kind, alpha, beta));
}

#define BINARY_ADD 0
#define BINARY_SUBTRACT 1
#define BINARY_MULTIPLY 2
#define BINARY_DIVIDE 3
#define BINARY_POWER 4
#define BINARY_PRELU 5

float apply_binary(int operation, float a, float b) {
  switch (operation) {
    case BINARY_ADD: return a + b;
    case BINARY_SUBTRACT: return a - b;
    case BINARY_MULTIPLY: return a * b;
    case BINARY_DIVIDE: return a / b;
    case BINARY_POWER: return pow(a, b);
    default: return a < 0.0f ? a * b : a;  // BINARY_PRELU
  }
}

// geometry: rank, output dims[rank], a strides[rank], b strides[rank] (0 on broadcast axes).
__kernel void binary_broadcast(__global const storage* a, __global const storage* b,
                               __global storage* output, __global const int* geometry,
                               int count, int operation) {
  const int index = get_global_id(0);
  if (index >= count) return;
  const int rank = geometry[0];
  int a_offset, b_offset;
  broadcast_offsets(index, rank, geometry + 1, geometry + 1 + rank, geometry + 1 + 2 * rank,
                    &a_offset, &b_offset);
  STORE(output, index, apply_binary(operation, LOAD(a, a_offset), LOAD(b, b_offset)));
}

// output = input * scale[c] + shift[c] for channel c of [outer, channels, inner].
__kernel void channel_affine(__global const storage* input, __global storage* output,
                             __global const float* scale, __global const float* shift,
                             int count, int channels, int inner) {
  const int index = get_global_id(0);
  if (index >= count) return;
  const int channel = (index / inner) % channels;
  STORE(output, index, LOAD(input, index) * scale[channel] + shift[channel]);
}
