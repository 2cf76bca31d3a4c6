#include "dataset/dataset.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "dataset/npy_file.h"

namespace orknn::convert {
namespace {

namespace fs = std::filesystem;

std::string lower_extension(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return ir::shape_to_string(shape);
}

Result<InputData> load_image(const std::string& path, const InputDescription& input,
                             const std::string& where) {
  if (!input.image) {
    return invalid_argument(where, ": '", path, "' is an image but input '", input.name, "' ",
                            shape_text(input.shape),
                            " is not an image input (4-D with 1, 3 or 4 channels); use .npy");
  }
  int width = 0;
  int height = 0;
  int channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &width, &height, &channels, 0);
  if (!pixels) {
    return invalid_argument(where, ": cannot decode image '", path, "': ", stbi_failure_reason());
  }
  std::unique_ptr<unsigned char, void (*)(void*)> owner(pixels, stbi_image_free);
  const int64_t batch = input.shape[0];
  const int64_t want_channels = input.shape[1];
  const int64_t want_height = input.shape[2];
  const int64_t want_width = input.shape[3];
  if (batch != 1) {
    return invalid_argument(where, ": input '", input.name, "' ", shape_text(input.shape),
                            " has batch ", batch, "; an image file holds one frame (use .npy)");
  }
  if (height != want_height || width != want_width || channels != want_channels) {
    return invalid_argument(where, ": image '", path, "' is ", width, "x", height, " with ",
                            channels, " channel", channels == 1 ? "" : "s", " but input '",
                            input.name, "' ", shape_text(input.shape), " needs ", want_width, "x",
                            want_height, " with ", want_channels, " channel",
                            want_channels == 1 ? "" : "s", " (resize or convert the image)");
  }
  InputData data;
  data.bytes.assign(pixels, pixels + static_cast<size_t>(width) * height * channels);
  if (input.rgb_to_bgr && channels >= 3) {
    for (size_t i = 0; i + 2 < data.bytes.size(); i += static_cast<size_t>(channels)) {
      std::swap(data.bytes[i], data.bytes[i + 2]);
    }
  }
  data.format.type = DataType::kUInt8;
  data.format.layout = exec::Layout::kNHWC;
  return data;
}

// Writes `values` as `type` (the model input's type, for non-real inputs).
std::vector<uint8_t> encode_values(const std::vector<double>& values, DataType type) {
  std::vector<uint8_t> bytes(values.size() * element_size(type));
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* out = bytes.data() + i * element_size(type);
    switch (type) {
      case DataType::kFloat32: {
        const float v = static_cast<float>(values[i]);
        std::memcpy(out, &v, 4);
        break;
      }
      case DataType::kFloat16: {
        const Float16Bits v = float_to_half(static_cast<float>(values[i]));
        std::memcpy(out, &v, 2);
        break;
      }
      case DataType::kInt64: {
        const int64_t v = static_cast<int64_t>(values[i]);
        std::memcpy(out, &v, 8);
        break;
      }
      case DataType::kInt32: {
        const int32_t v = static_cast<int32_t>(values[i]);
        std::memcpy(out, &v, 4);
        break;
      }
      case DataType::kInt16: {
        const int16_t v = static_cast<int16_t>(values[i]);
        std::memcpy(out, &v, 2);
        break;
      }
      case DataType::kInt8:
        *out = static_cast<uint8_t>(static_cast<int8_t>(values[i]));
        break;
      case DataType::kUInt8:
        *out = static_cast<uint8_t>(values[i]);
        break;
      case DataType::kBool:
        *out = values[i] != 0 ? 1 : 0;
        break;
    }
  }
  return bytes;
}

// Drops leading 1s so [1,224,224,3] and [224,224,3] compare as the same frame.
std::vector<int64_t> without_leading_ones(std::vector<int64_t> shape) {
  while (shape.size() > 1 && shape[0] == 1) shape.erase(shape.begin());
  return shape;
}

Result<InputData> load_npy(const std::string& path, const InputDescription& input,
                           const std::string& where) {
  Result<NpyArray> loaded = read_npy(path);
  if (!loaded.ok()) return std::move(loaded).take_status().add_context(where);
  const NpyArray& array = loaded.value();
  const bool real_input = input.type == DataType::kFloat32 || input.type == DataType::kFloat16;
  InputData data;
  data.format.layout = exec::Layout::kNCHW;
  const std::vector<int64_t>& shape = input.shape;
  const std::vector<int64_t> array_shape = without_leading_ones(array.shape);
  bool matches = array_shape == without_leading_ones(shape);
  if (shape.size() == 4 && input.image) {
    const std::vector<int64_t> nhwc = {shape[0], shape[2], shape[3], shape[1]};
    // NHWC is the toolkit's layout for 4-D npy inputs; NCHW is accepted when only it fits.
    if (array_shape == without_leading_ones(nhwc)) {
      matches = true;
      data.format.layout = exec::Layout::kNHWC;
    }
  }
  if (!matches) {
    return invalid_argument(
        where, ": '", path, "' has shape ", shape_text(array.shape), " but input '", input.name,
        "' needs ", shape_text(shape), input.image ? " (or NHWC " : "",
        input.image ? shape_text({shape[0], shape[2], shape[3], shape[1]}) + ")" : std::string());
  }
  if (real_input) {
    data.format.type = DataType::kFloat32;
    data.bytes = encode_values(array.values, DataType::kFloat32);
  } else {
    data.format.type = input.type;
    data.bytes = encode_values(array.values, input.type);
  }
  return data;
}

}  // namespace

Result<Dataset> read_dataset(const std::string& path, size_t input_count) {
  std::ifstream file(path);
  if (!file) return invalid_argument("dataset '", path, "': cannot open the file");
  Dataset dataset;
  dataset.path = path;
  const fs::path directory = fs::path(path).parent_path();
  std::string text;
  int line_number = 0;
  while (std::getline(file, text)) {
    ++line_number;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    std::stringstream stream(text);
    std::vector<std::string> files;
    std::string item;
    while (stream >> item) files.push_back(item);
    if (files.empty() || files[0][0] == '#') continue;
    const std::string where = "dataset '" + path + "' line " + std::to_string(line_number);
    if (files.size() != input_count) {
      return invalid_argument(where, ": ", files.size(), " file", files.size() == 1 ? "" : "s",
                              " for a model with ", input_count, " input",
                              input_count == 1 ? "" : "s",
                              " (one file per input, separated by spaces)");
    }
    DatasetSample sample;
    sample.line = line_number;
    for (const std::string& name : files) {
      std::error_code error;
      fs::path resolved = name;
      if (resolved.is_relative() && !directory.empty() && fs::exists(directory / resolved, error)) {
        resolved = directory / resolved;
      }
      if (!fs::is_regular_file(resolved, error)) {
        return invalid_argument(where, ": file '", name,
                                "' not found (relative paths resolve "
                                "against the dataset's directory, then the working "
                                "directory)");
      }
      const std::string extension = lower_extension(resolved.string());
      if (extension != ".npy" && extension != ".jpg" && extension != ".jpeg" &&
          extension != ".png" && extension != ".bmp") {
        return invalid_argument(where, ": '", name,
                                "' is not a .jpg, .jpeg, .png, .bmp or .npy "
                                "file");
      }
      sample.files.push_back(resolved.string());
    }
    dataset.samples.push_back(std::move(sample));
  }
  if (dataset.samples.empty()) {
    return invalid_argument("dataset '", path, "': no samples (", line_number, " line",
                            line_number == 1 ? "" : "s",
                            ", none naming a file); calibration needs at least one");
  }
  return dataset;
}

Result<InputData> load_input_file(const std::string& path, const InputDescription& input,
                                  const std::string& where) {
  if (lower_extension(path) == ".npy") return load_npy(path, input, where);
  return load_image(path, input, where);
}

}  // namespace orknn::convert
