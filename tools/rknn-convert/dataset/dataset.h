// Calibration datasets (build(dataset=)): a text file with one sample per line; a sample is one
// file per model input, separated by spaces (jpg/jpeg/png/bmp images, or .npy arrays of any
// numeric dtype). Relative paths resolve against the dataset file's directory first, then the
// working directory. Every error names the dataset file and line.
#pragma once

#include <string>
#include <vector>

#include "exec/session.h"
#include "ir/graph.h"

namespace orknn::convert {

struct DatasetSample {
  std::vector<std::string> files;  // one per model input, resolved
  int line = 0;                    // 1-based line in the dataset file
};

struct Dataset {
  std::string path;
  std::vector<DatasetSample> samples;
};

Result<Dataset> read_dataset(const std::string& path, size_t input_count);

// One input's data ready for the runtime's Session::set_input.
struct InputData {
  std::vector<uint8_t> bytes;
  exec::UserTensorFormat format;
};

// How a model input is fed: its tensor (shape, type) and whether it is an image input
// (NHWC presentation) whose jpg/png files get quant_img_RGB2BGR.
struct InputDescription {
  std::string name;
  std::vector<int64_t> shape;  // ONNX order
  DataType type = DataType::kFloat32;
  bool image = false;
  bool rgb_to_bgr = false;
};

// Loads `path` for `input`: images must have the input's height, width and channel count
// (batch 1); .npy arrays must match the shape (4-D image inputs take NHWC, or NCHW when only that
// matches, as the toolkit does). `where` prefixes messages ("dataset.txt line 3").
Result<InputData> load_input_file(const std::string& path, const InputDescription& input,
                                  const std::string& where);

}  // namespace orknn::convert
