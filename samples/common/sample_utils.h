/*
 * Helpers shared by the sample programs: printing tensor attributes the way the vendor demos do,
 * loading inputs (.npy of any dtype, and .jpg/.png/.bmp through stb_image when built with
 * SAMPLE_HAVE_STB), synthetic inputs, top-N, timing and error names.
 *
 * Uses only the public C API (rknn_api.h). C11; include it from C or C++.
 */
#ifndef ORKNN_SAMPLE_UTILS_H
#define ORKNN_SAMPLE_UTILS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Monotonic time in microseconds. */
int64_t sample_now_us(void);

/* Bytes per element of `type` (1 for unknown types). */
size_t sample_type_size(rknn_tensor_type type);

/* "RKNN_ERR_MODEL_INVALID" and so on, for printing return codes. */
const char* sample_error_name(int code);

/* One line in the vendor demos' format:
 * index=%d, name=%s, n_dims=%d, dims=[%s], n_elems=%d, size=%d, w_stride = %d,
 * size_with_stride=%d, fmt=%s, type=%s, qnt_type=%s, zp=%d, scale=%f */
void sample_print_tensor_attr(FILE* out, const rknn_tensor_attr* attr);

/* A buffer ready for rknn_inputs_set: `data` holds `size` bytes of `type` in layout `fmt`.
 * For 4-D (image) inputs the loaders always produce NHWC, which the runtime converts to whatever
 * the model stores. */
typedef struct {
  void* data;
  uint32_t size;
  rknn_tensor_type type;
  rknn_tensor_format fmt;
  char description[160]; /* where the data came from, for printing */
} sample_input;

/* Loads `path` for the model input described by `attr` (from RKNN_QUERY_INPUT_ATTR):
 *  - .npy: any numeric dtype; uint8/int8/float16/float32 are passed as they are, other dtypes
 *    are converted to float32 (or, for non-real model inputs such as int64 indices, to the model
 *    type). The shape must match the input in NHWC or NCHW order; a uint8 HxWxC image of another
 *    size is resized.
 *  - .jpg/.jpeg/.png/.bmp (and anything else stb_image reads): decoded with the model's channel
 *    count (1, 3 or 4) and resized bilinearly to the model's height and width.
 * Returns 0 on success; otherwise -1 with a reason in `error`. */
int sample_load_input(const char* path, const rknn_tensor_attr* attr, sample_input* out,
                      char* error, size_t error_size);

/* A deterministic synthetic input (smooth gradients and a checkerboard for images; a ramp for
 * other tensors). `index` varies the pattern between inputs. */
int sample_make_synthetic_input(const rknn_tensor_attr* attr, uint32_t index, sample_input* out,
                                char* error, size_t error_size);

void sample_free_input(sample_input* input);

/* Indices and values of the `n` largest of `count` values, largest first (ties: lower index
 * first). Entries past `count` are set to index -1 and value 0. */
void sample_top_n(const float* values, uint32_t count, uint32_t n, int32_t* out_indices,
                  float* out_values);

#ifdef __cplusplus
}
#endif

#endif /* ORKNN_SAMPLE_UTILS_H */
