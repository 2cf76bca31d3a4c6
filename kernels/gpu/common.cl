// Shared definitions of every OpenRKNN OpenCL kernel. The host concatenates common.cl and the
// op files into one program per storage precision, so a device builds two programs in all.
//
// Tensors are stored as float or (ORKNN_STORAGE_HALF) as IEEE half; arithmetic is always float.
// vload_half/vstore_half are core OpenCL 1.2, so half storage works on devices without
// cl_khr_fp16 (PoCL on x86, for one), and results match the CPU's float16 path, which also
// computes in float and rounds once per node.
//
// Integer geometry (shapes, strides) comes in a small int buffer per launch because OpenCL C
// cannot index a vector argument with a run-time index.

#ifdef ORKNN_STORAGE_HALF
typedef half storage;
#define LOAD(pointer, index) vload_half((index), (pointer))
#define STORE(pointer, index, value) vstore_half((value), (index), (pointer))
#else
typedef float storage;
#define LOAD(pointer, index) ((pointer)[(index)])
#define STORE(pointer, index, value) ((pointer)[(index)] = (value))
#endif

// Activation codes; the host's GpuActivation enum has the same values.
#define ACTIVATION_NONE 0
#define ACTIVATION_RELU 1
#define ACTIVATION_CLIP 2
#define ACTIVATION_LEAKY_RELU 3
#define ACTIVATION_SIGMOID 4
#define ACTIVATION_HARD_SIGMOID 5
#define ACTIVATION_HARD_SWISH 6
#define ACTIVATION_SWISH 7
#define ACTIVATION_TANH 8
#define ACTIVATION_EXP 9
#define ACTIVATION_SQRT 10
#define ACTIVATION_NEG 11
#define ACTIVATION_ABS 12
#define ACTIVATION_RECIPROCAL 13

// Clamps without turning NaN into a bound, as the reference does.
float clamp_keep_nan(float x, float low, float high) {
  return x < low ? low : (x > high ? high : x);
}

float stable_sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + exp(-x));
  const float e = exp(x);
  return e / (1.0f + e);
}

float activate(float x, int kind, float alpha, float beta) {
  switch (kind) {
    case ACTIVATION_RELU: return x < 0.0f ? 0.0f : x;
    case ACTIVATION_CLIP: return clamp_keep_nan(x, alpha, beta);
    case ACTIVATION_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case ACTIVATION_SIGMOID: return stable_sigmoid(x);
    case ACTIVATION_HARD_SIGMOID: return clamp_keep_nan(alpha * x + beta, 0.0f, 1.0f);
    case ACTIVATION_HARD_SWISH: return x * clamp_keep_nan(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f);
    case ACTIVATION_SWISH: return x * stable_sigmoid(alpha * x);
    case ACTIVATION_TANH: return tanh(x);
    case ACTIVATION_EXP: return exp(x);
    case ACTIVATION_SQRT: return sqrt(x);
    case ACTIVATION_NEG: return -x;
    case ACTIVATION_ABS: return fabs(x);
    case ACTIVATION_RECIPROCAL: return 1.0f / x;
    default: return x;
  }
}

// The offsets into two operands broadcast to `dims` (rank axes) of the element at flat `index`;
// a stride of 0 repeats an operand along that axis.
void broadcast_offsets(int index, int rank, __global const int* dims,
                       __global const int* a_strides, __global const int* b_strides,
                       int* a_offset, int* b_offset) {
  int remaining = index, a = 0, b = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const int coordinate = remaining % dims[d];
    remaining /= dims[d];
    a += coordinate * a_strides[d];
    b += coordinate * b_strides[d];
  }
  *a_offset = a;
  *b_offset = b;
}
