#include "launch_description.h"

#include <cstring>

namespace orknn::kernels::gpu {

KernelArgument KernelArgument::tensor(int32_t tensor_index) {
  KernelArgument argument;
  argument.kind = Kind::kTensor;
  argument.index = tensor_index;
  return argument;
}

KernelArgument KernelArgument::parameters(size_t buffer_index) {
  KernelArgument argument;
  argument.kind = Kind::kParameterBuffer;
  argument.index = static_cast<int32_t>(buffer_index);
  return argument;
}

KernelArgument KernelArgument::integer(int64_t value) {
  KernelArgument argument;
  argument.kind = Kind::kInt;
  argument.int_value = static_cast<int32_t>(value);
  return argument;
}

KernelArgument KernelArgument::real(float value) {
  KernelArgument argument;
  argument.kind = Kind::kFloat;
  argument.float_value = value;
  return argument;
}

namespace {

template <typename Value>
std::vector<uint8_t> bytes_of(const std::vector<Value>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(Value));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

}  // namespace

size_t NodeLaunches::add_int_parameters(const std::vector<int64_t>& values) {
  std::vector<int32_t> narrowed(values.begin(), values.end());
  // OpenCL rejects zero-sized buffers; a kernel never reads past the values it was given.
  if (narrowed.empty()) narrowed.push_back(0);
  parameter_buffers.push_back(bytes_of(narrowed));
  return parameter_buffers.size() - 1;
}

size_t NodeLaunches::add_float_parameters(const std::vector<float>& values) {
  std::vector<float> copy = values;
  if (copy.empty()) copy.push_back(0.0f);
  parameter_buffers.push_back(bytes_of(copy));
  return parameter_buffers.size() - 1;
}

KernelLaunch& NodeLaunches::add_launch(std::string kernel_name) {
  Command command;
  command.launch.kernel_name = std::move(kernel_name);
  commands.push_back(std::move(command));
  return commands.back().launch;
}

void NodeLaunches::add_copy(int32_t source, int32_t destination) {
  Command command;
  command.is_copy = true;
  command.copy_source = source;
  command.copy_destination = destination;
  commands.push_back(std::move(command));
}

}  // namespace orknn::kernels::gpu
