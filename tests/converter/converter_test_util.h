// Helpers for the rknn-convert tests: tiny ONNX models built with the onnx protobuf classes,
// temporary directories, conversions through the library entry point, and running the result
// through the runtime.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "converter.h"
#include "export/runtime_model.h"
#include "ir/graph.h"
#include "model/orknn_model.pb.h"

namespace orknn::convert::test {

// A temporary directory removed (with its contents) when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& root() const { return path_; }
  // Every file in the directory (names only), to check nothing was left behind.
  std::vector<std::string> files() const;

 private:
  std::string path_;
};

// Builds an onnx::ModelProto one piece at a time.
class OnnxModel {
 public:
  explicit OnnxModel(int opset = 13);
  // A dimension < 0 becomes a symbolic dimension named after the input ("x_d2").
  OnnxModel& input(const std::string& name, std::vector<int64_t> dims,
                   int type = onnx::TensorProto::FLOAT);
  OnnxModel& output(const std::string& name, int type = onnx::TensorProto::FLOAT);
  OnnxModel& initializer(const std::string& name, std::vector<int64_t> dims,
                         const std::vector<float>& values);
  OnnxModel& initializer_i64(const std::string& name, std::vector<int64_t> dims,
                             const std::vector<int64_t>& values);
  OnnxModel& initializer_typed(const std::string& name, std::vector<int64_t> dims, int type,
                               const std::string& raw_bytes);
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "");
  onnx::ModelProto& proto() { return model_; }
  Status save(const std::string& path) const;

 private:
  onnx::ModelProto model_;
};

// Attribute helpers for OnnxModel::node(...).
void set_int(onnx::NodeProto* node, const std::string& name, int64_t value);
void set_float(onnx::NodeProto* node, const std::string& name, float value);
void set_ints(onnx::NodeProto* node, const std::string& name, std::vector<int64_t> values);
void set_floats(onnx::NodeProto* node, const std::string& name, std::vector<float> values);
void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value);

// Deterministic pseudo-random values in [-scale, scale].
std::vector<float> random_values(size_t count, uint32_t seed, float scale = 1.0f);

// x [1,2,size,size] -> Conv(3 outputs, 3x3, pads 1, `stride`, seeded weights) -> y: the
// one-layer graph the weight-rounding and calibration tests collect input rows from.
ir::Graph one_convolution_graph(int64_t size, int64_t stride);

// Options for a plain float32 conversion of `model` into `output`.
ConvertOptions float32_options(const std::string& model, const std::string& output);

// Loads a written model into the runtime.
Result<std::unique_ptr<RuntimeModel>> load_model_file(const std::string& path);

// The graph section of a written model, for inspecting nodes, attributes and tensor types.
Result<model::proto::Model> read_model_graph(const std::string& path);
// The nodes' op types in order, e.g. "Conv,Relu,Gemm".
std::string op_sequence(const model::proto::Model& graph);
// The named node attribute (nullptr when absent) of the first node of type `op_type`.
const model::proto::Attribute* find_attribute(const model::proto::Model& graph,
                                              const std::string& op_type, const std::string& name);
// The tensor named `name` (nullptr when absent).
const model::proto::Tensor* find_tensor(const model::proto::Model& graph, const std::string& name);

// Converts with `options` (failing the test on error) and runs the result on `inputs`.
std::vector<float> convert_and_run(const ConvertOptions& options,
                                   const std::vector<std::vector<float>>& inputs,
                                   size_t output_index = 0);

// Runs `model` with float32 inputs in ONNX layout (NCHW); returns output `index` as floats.
Result<std::vector<float>> run_float(RuntimeModel* model,
                                     const std::vector<std::vector<float>>& inputs,
                                     size_t output_index = 0);

double max_abs_difference(const std::vector<float>& a, const std::vector<float>& b);
double max_abs(const std::vector<float>& values);
double cosine(const std::vector<float>& a, const std::vector<float>& b);

// Writes float32 .npy data; an image file (png/jpg by extension) of width x height x channels.
void write_npy(const std::string& path, const std::vector<int64_t>& shape,
               const std::vector<float>& values);
void write_image(const std::string& path, int width, int height, int channels, uint32_t seed);

// True if the file exists.
bool file_exists(const std::string& path);

// Runs the rknn-convert binary with `arguments` (a shell-quoted string), stdout and stderr into
// *out_output; returns the exit status.
int run_tool(const std::string& arguments, std::string* out_output);

}  // namespace orknn::convert::test

// cmocka assertion that a Status failed and its message contains every given fragment.
#define ASSERT_FAILS_WITH(status_expr, ...)                                                      \
  do {                                                                                           \
    const ::orknn::Status orknn_test_status_ = (status_expr);                                    \
    if (orknn_test_status_.ok()) fail_msg("expected a failure, got success");                    \
    for (const char* fragment : {__VA_ARGS__}) {                                                 \
      if (orknn_test_status_.message().find(fragment) == std::string::npos) {                    \
        fail_msg("message \"%s\" lacks \"%s\"", orknn_test_status_.message().c_str(), fragment); \
      }                                                                                          \
    }                                                                                            \
  } while (0)
