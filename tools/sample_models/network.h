// A precision-independent description of a sample network (float values, ONNX ops, shapes), and
// the emitter that writes it with ModelBuilder in float32, float16 or int8. Internal to
// orknn_sample_models.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/model_builder.h"

namespace orknn::sample_models {

// Deterministic pseudo-random numbers (splitmix64). Uniform only: the values must not depend on
// the C library's transcendental functions, so the same seed gives the same model everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next();
  float uniform();                       // [0, 1)
  float uniform(float low, float high);  // [low, high)
  // Zero mean, standard deviation `deviation` (a uniform distribution of that spread).
  float centered(float deviation);

 private:
  uint64_t state_;
};

enum class TensorRole {
  kActivation,  // computed by a node, or a graph input
  kWeight,      // Conv/Gemm weights: int8 per output channel in int8 models
  kBias,        // Conv/Gemm bias: int32 in int8 models
  kConstant,    // any other real-valued constant (Clip bounds, Mul factors)
  kIndices,     // int64 constant (Reshape shape): stored unchanged in every precision
};

struct NetworkTensor {
  std::string name;
  std::vector<int64_t> shape;
  TensorRole role = TensorRole::kActivation;
  std::vector<float> values;        // constants (not kIndices)
  std::vector<int64_t> int_values;  // kIndices
  int channel_axis = 0;             // kWeight: the output-channel axis
};

struct NetworkNode {
  std::string op_type;
  std::string name;
  std::vector<int> inputs;  // -1: omitted optional input
  std::vector<int> outputs;
  std::vector<model::proto::Attribute> attributes;
};

struct NetworkInput {
  int tensor = -1;
  model::InputOptions options;
};

struct Network {
  std::string name;
  std::string custom_string;
  std::vector<NetworkTensor> tensors;
  std::vector<NetworkNode> nodes;
  std::vector<NetworkInput> inputs;
  std::vector<int> outputs;

  int64_t multiply_accumulates() const;  // of Conv and Gemm nodes, for documentation and tests
};

// Real-valued range of each activation tensor, by tensor index.
struct ActivationRange {
  float minimum = 0.0f;
  float maximum = 0.0f;
};
using ActivationRanges = std::map<int, ActivationRange>;

enum class EmitPrecision { kFloat32, kFloat16, kInt8 };

struct EmitOptions {
  EmitPrecision precision = EmitPrecision::kFloat32;
  std::string target_platform;
  // kInt8 only: ranges of every activation that is not a graph input (graph inputs get theirs
  // from mean/std) and not the output of a layout-only op (those keep their input's parameters).
  const ActivationRanges* ranges = nullptr;
  // Also declare every computed activation a graph output, after the real outputs, in tensor
  // order (for calibration). Filled with those tensors' indices.
  std::vector<int>* out_extra_outputs = nullptr;
};

// Writes the network into a fresh ModelBuilder configured for the precision.
Result<std::vector<uint8_t>> emit_network(const Network& network, const EmitOptions& options);
Status emit_network_to_file(const Network& network, const EmitOptions& options,
                            const std::string& path);

// Helps network code add tensors and nodes with their shapes computed here (the runtime checks
// them against its own shape inference when it loads the model).
class NetworkBuilder {
 public:
  NetworkBuilder(std::string name, uint64_t seed);

  int input(std::string name, std::vector<int64_t> nchw_shape, model::InputOptions options);
  void output(int tensor) { network_.outputs.push_back(tensor); }
  void set_custom_string(std::string text) { network_.custom_string = std::move(text); }

  const std::vector<int64_t>& shape(int tensor) const { return network_.tensors[tensor].shape; }

  struct ConvSpec {
    int64_t output_channels = 0;
    int64_t kernel = 1;
    int64_t stride = 1;
    int64_t group = 1;
    bool linear = false;       // no activation follows (initialisation spread only)
    bool fused_relu6 = false;  // activation attributes on the Conv node
  };
  // Conv with bias, "same" padding (kernel / 2), random weights (He initialisation, or LeCun
  // for linear layers).
  int conv(int x, const ConvSpec& spec, const std::string& name);
  int relu(int x, const std::string& name);
  int clip(int x, float minimum, float maximum, const std::string& name);
  int add(int a, int b, const std::string& name);
  // Multiplies by a per-channel constant of shape [1, C, 1, 1].
  int mul_per_channel(int x, float low, float high, const std::string& name);
  int sigmoid(int x, const std::string& name);
  int max_pool(int x, int64_t kernel, int64_t stride, const std::string& name);
  int average_pool(int x, int64_t kernel, int64_t stride, const std::string& name);
  int global_average_pool(int x, const std::string& name);
  int concat(const std::vector<int>& xs, int64_t axis, const std::string& name);
  int flatten(int x, const std::string& name);
  int reshape(int x, std::vector<int64_t> shape, const std::string& name);
  // Gemm with transB = 1: weights [N, K], bias [N]; `logit_deviation` scales the weights so that
  // outputs have roughly that spread for unit-variance inputs.
  int gemm(int x, int64_t output_features, float weight_deviation, float bias_deviation,
           const std::string& name);
  int softmax(int x, const std::string& name);

  Network take() { return std::move(network_); }

 private:
  int add_tensor(NetworkTensor tensor);
  int activation(std::string name, std::vector<int64_t> shape);
  int constant(std::string name, std::vector<int64_t> shape, TensorRole role,
               std::vector<float> values);
  void node(std::string op_type, std::string name, std::vector<int> inputs,
            std::vector<int> outputs, std::vector<model::proto::Attribute> attributes = {});
  int pool(const char* op_type, int x, int64_t kernel, int64_t stride, const std::string& name);

  Network network_;
  Random random_;
};

}  // namespace orknn::sample_models
