// Image files (.jpg, .png, .bmp: whatever stb_image reads) as uint8 NHWC input tensors,
// 1 x H x W x 3 (RGB).
#pragma once

#include <string>

#include "npy.h"

namespace orknn::client {

bool read_image(const std::string& path, NpyArray* out, std::string* error);

}  // namespace orknn::client
