#include "image_input.h"

#include <csetjmp>
#include <cstdio>

#include <jpeglib.h>

#include "rknn_api.h"

namespace orknn::client {
namespace {

struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr info) {
  ErrorManager* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

}  // namespace

bool read_jpeg(const std::string& path, NpyArray* out, std::string* error) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    *error = "cannot read '" + path + "'";
    return false;
  }
  jpeg_decompress_struct info{};
  ErrorManager manager{};
  info.err = jpeg_std_error(&manager.base);
  manager.base.error_exit = on_error;
  if (setjmp(manager.jump)) {
    *error = path + ": " + manager.message;
    jpeg_destroy_decompress(&info);
    std::fclose(file);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_stdio_src(&info, file);
  jpeg_read_header(&info, TRUE);
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  const size_t row_bytes = static_cast<size_t>(info.output_width) * info.output_components;
  out->dtype = RKNN_TENSOR_UINT8;
  out->shape = {1, info.output_height, info.output_width,
                static_cast<uint32_t>(info.output_components)};
  out->data.assign(row_bytes * info.output_height, '\0');
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = reinterpret_cast<JSAMPROW>(&out->data[row_bytes * info.output_scanline]);
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  std::fclose(file);
  return true;
}

}  // namespace orknn::client
