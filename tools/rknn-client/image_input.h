// JPEG images as uint8 NHWC input tensors (1 x H x W x 3, RGB), through libjpeg.
#pragma once

#include <string>

#include "npy.h"

namespace orknn::client {

bool read_jpeg(const std::string& path, NpyArray* out, std::string* error);

}  // namespace orknn::client
