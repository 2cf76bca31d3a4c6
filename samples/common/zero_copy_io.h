/*
 * Zero-copy input and output binding shared by the zero-copy samples: for every input, memory
 * from rknn_create_mem filled from a file or a synthetic image (rows copied with the stride the
 * runtime asks for); for every output, float32 memory the runtime writes dequantised results
 * into. Uses only rknn_api.h. C11.
 */
#ifndef ORKNN_SAMPLE_ZERO_COPY_IO_H
#define ORKNN_SAMPLE_ZERO_COPY_IO_H

#include <stdint.h>

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint32_t n_input, n_output;
  rknn_tensor_mem** input_mems;
  rknn_tensor_mem** output_mems;
  rknn_tensor_attr* output_attrs; /* as bound: FLOAT32 */
} sample_zero_copy_io;

/* Queries the native input attributes (printing them), loads `input_paths[i]` (or a synthetic
 * image when i >= n_paths) as UINT8/FLOAT NHWC, copies it into rknn_create_mem memory row by row
 * with w_stride, and binds it; binds float32 memory for every output. Returns RKNN_SUCC or the
 * failing call's code (printed). On failure, call sample_zero_copy_release anyway. */
int sample_zero_copy_bind(rknn_context ctx, const char* const* input_paths, int n_paths,
                          sample_zero_copy_io* io);

/* Prints the top 5 of every float output. */
void sample_zero_copy_print_top5(const sample_zero_copy_io* io);

/* Destroys the memory objects and frees `io`'s arrays. */
void sample_zero_copy_release(rknn_context ctx, sample_zero_copy_io* io);

#ifdef __cplusplus
}
#endif

#endif /* ORKNN_SAMPLE_ZERO_COPY_IO_H */
