// Writing models in the open container format: the API the converter (tools/rknn-convert) and the
// tests use. Build the graph with add_* calls, then serialize() or write_file(). The result is
// always run through the same verifier as the reader, so a builder never produces a file the
// runtime would refuse.
//
// Not thread-safe: one thread builds one model. Mistakes in add_* calls (wrong data sizes) are
// remembered and reported by serialize(); index and graph errors are found by the verifier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "model/orknn_model.pb.h"

namespace orknn::model {

// Affine quantization, real = (q - zero_point) * scale: empty (not quantized), one entry
// (per tensor) or one entry per slice along `axis` (per channel).
struct Quantization {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int axis = 0;
};

// Preprocessing and layout of one graph input (see InputInfo in orknn_model.proto).
struct InputOptions {
  std::vector<float> mean;  // empty, or one per channel (dimension 1)
  std::vector<float> std;   // empty, or one per channel; non-zero
  bool nhwc_layout = false;
  bool reverse_channels = false;
};

// Node attributes with ONNX names and meanings: Attr::i("group", 1), Attr::ints("pads", {...}).
struct Attr {
  static proto::Attribute i(std::string name, int64_t value);
  static proto::Attribute f(std::string name, float value);
  static proto::Attribute s(std::string name, std::string value);
  static proto::Attribute ints(std::string name, std::vector<int64_t> values);
  static proto::Attribute floats(std::string name, std::vector<float> values);
};

class ModelBuilder {
 public:
  ModelBuilder() = default;

  // Each returns the new tensor's index, which nodes, inputs and outputs refer to.
  int add_tensor(std::string name, DataType type, std::vector<int64_t> shape,
                 Quantization quantization = {});
  // Copies `bytes` bytes of little-endian data into the weights, at the next 64-byte boundary.
  int add_constant(std::string name, DataType type, std::vector<int64_t> shape, const void* data,
                   size_t bytes, Quantization quantization = {});
  int add_constant_f32(std::string name, std::vector<int64_t> shape,
                       const std::vector<float>& values);
  int add_constant_i64(std::string name, std::vector<int64_t> shape,
                       const std::vector<int64_t>& values);

  // `inputs` may hold -1 for an omitted optional input. Returns the node's index. Nodes must be
  // added in an order where every input already exists (a graph input, constant, or earlier
  // node's output).
  int add_node(std::string op_type, std::vector<int> inputs, std::vector<int> outputs,
               std::vector<proto::Attribute> attributes = {}, std::string name = {});

  void add_input(int tensor, InputOptions options = {});
  void add_output(int tensor);

  void set_producer(std::string name, std::string version);
  void set_target_platform(std::string platform);
  void set_custom_string(std::string text);
  void set_source_framework(std::string framework);
  // One allowed set of input shapes; shapes[i] belongs to the i-th add_input() call.
  void add_dynamic_shape_set(const std::vector<std::vector<int64_t>>& shapes);

  // The complete file. Fails with kInvalidModel, naming the rule, if the model is not valid.
  Result<std::vector<uint8_t>> serialize() const;
  // Writes serialize()'s bytes to `path.tmp.<pid>`, then renames it to `path`, so readers never
  // see a partial file; nothing is left behind on failure.
  Status write_file(const std::string& path) const;

  // What has been built so far: the graph, and the WEIGHTS section bytes its constants point into.
  const proto::Model& graph() const { return graph_; }
  const std::vector<uint8_t>& weights() const { return weights_; }

 private:
  proto::Model graph_;
  std::vector<uint8_t> weights_;
  Status first_error_;
};

}  // namespace orknn::model
