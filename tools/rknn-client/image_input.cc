#include "image_input.h"

#include <stb/stb_image.h>

#include "rknn_api.h"

namespace orknn::client {

bool read_image(const std::string& path, NpyArray* out, std::string* error) {
  int width = 0, height = 0, channels = 0;
  unsigned char* pixels = stbi_load(path.c_str(), &width, &height, &channels, 3);
  if (!pixels) {
    *error = path + ": cannot decode image (" + stbi_failure_reason() + ")";
    return false;
  }
  out->dtype = RKNN_TENSOR_UINT8;
  out->shape = {1, static_cast<uint32_t>(height), static_cast<uint32_t>(width), 3};
  out->data.assign(reinterpret_cast<const char*>(pixels), static_cast<size_t>(width) * height * 3);
  stbi_image_free(pixels);
  return true;
}

}  // namespace orknn::client
