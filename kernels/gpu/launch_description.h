// What the host side of the GPU device hands to OpenCL for one node, as plain data: the kernel
// launches (name, arguments, global size) and buffer copies, plus the small parameter buffers
// (geometry, resize taps, per-channel factors) the launches read. The enums mirror the #defines
// of the .cl files, which are the other half of this contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace orknn::kernels::gpu {

// The concatenated OpenCL C source of every kernel (generated at build time).
const char* kernel_source();

enum class Activation : int32_t {
  kNone = 0,
  kRelu = 1,
  kClip = 2,
  kLeakyRelu = 3,
  kSigmoid = 4,
  kHardSigmoid = 5,
  kHardSwish = 6,
  kSwish = 7,
  kTanh = 8,
  kExp = 9,
  kSqrt = 10,
  kNeg = 11,
  kAbs = 12,
  kReciprocal = 13,
};

enum class BinaryOperation : int32_t {
  kAdd = 0,
  kSubtract = 1,
  kMultiply = 2,
  kDivide = 3,
  kPower = 4,
  kPRelu = 5,
};

enum class ReduceOperation : int32_t { kSum = 0, kMean = 1, kMax = 2, kMin = 3 };
enum class PoolMode : int32_t { kMax = 0, kAverage = 1 };

struct KernelArgument {
  enum class Kind { kTensor, kParameterBuffer, kInt, kFloat };
  Kind kind = Kind::kInt;
  int32_t index = 0;  // kTensor: graph tensor index; kParameterBuffer: index into parameters
  int32_t int_value = 0;
  float float_value = 0.0f;

  static KernelArgument tensor(int32_t tensor_index);
  static KernelArgument parameters(size_t buffer_index);
  static KernelArgument integer(int64_t value);  // precondition: fits in int32
  static KernelArgument real(float value);
};

struct KernelLaunch {
  std::string kernel_name;
  std::vector<KernelArgument> arguments;
  size_t global[3] = {1, 1, 1};
  uint32_t dimensions = 1;

  size_t work_items() const { return global[0] * global[1] * global[2]; }
};

// One step of a node: a kernel launch, or (is_copy) a whole-buffer copy between two tensors of
// the same size, which is how the shape-only ops (Reshape, Flatten, ...) run.
struct Command {
  bool is_copy = false;
  KernelLaunch launch;
  int32_t copy_source = -1;
  int32_t copy_destination = -1;
};

struct NodeLaunches {
  std::vector<Command> commands;
  std::vector<std::vector<uint8_t>> parameter_buffers;
  // Tensors the node reads on the device (its data operands, not the constant operands that
  // only configure it such as a Reshape shape or Resize scales).
  std::vector<int32_t> device_inputs;

  // Adds a parameter buffer of int32 values; returns its index. Precondition: every value fits.
  size_t add_int_parameters(const std::vector<int64_t>& values);
  size_t add_float_parameters(const std::vector<float>& values);
  KernelLaunch& add_launch(std::string kernel_name);
  void add_copy(int32_t source, int32_t destination);
};

}  // namespace orknn::kernels::gpu
