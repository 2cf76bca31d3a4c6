/* See sample_utils.h. */
#define _POSIX_C_SOURCE 200809L
#include "sample_utils.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SAMPLE_HAVE_STB
#include <stb/stb_image.h>
#endif

int64_t sample_now_us(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

const char* sample_error_name(int code) {
  switch (code) {
    case RKNN_SUCC:
      return "RKNN_SUCC";
    case RKNN_ERR_FAIL:
      return "RKNN_ERR_FAIL";
    case RKNN_ERR_TIMEOUT:
      return "RKNN_ERR_TIMEOUT";
    case RKNN_ERR_DEVICE_UNAVAILABLE:
      return "RKNN_ERR_DEVICE_UNAVAILABLE";
    case RKNN_ERR_MALLOC_FAIL:
      return "RKNN_ERR_MALLOC_FAIL";
    case RKNN_ERR_PARAM_INVALID:
      return "RKNN_ERR_PARAM_INVALID";
    case RKNN_ERR_MODEL_INVALID:
      return "RKNN_ERR_MODEL_INVALID";
    case RKNN_ERR_CTX_INVALID:
      return "RKNN_ERR_CTX_INVALID";
    case RKNN_ERR_INPUT_INVALID:
      return "RKNN_ERR_INPUT_INVALID";
    case RKNN_ERR_OUTPUT_INVALID:
      return "RKNN_ERR_OUTPUT_INVALID";
    case RKNN_ERR_DEVICE_UNMATCH:
      return "RKNN_ERR_DEVICE_UNMATCH";
    case RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL:
      return "RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL";
    case RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION:
      return "RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION";
    case RKNN_ERR_TARGET_PLATFORM_UNMATCH:
      return "RKNN_ERR_TARGET_PLATFORM_UNMATCH";
    default:
      return "unknown error";
  }
}

void sample_print_tensor_attr(FILE* out, const rknn_tensor_attr* attr) {
  char dims[160] = {0};
  size_t used = 0;
  uint32_t i;
  for (i = 0; i < attr->n_dims && i < RKNN_MAX_DIMS; ++i) {
    int written =
        snprintf(dims + used, sizeof(dims) - used, i == 0 ? "%u" : ", %u", (unsigned)attr->dims[i]);
    if (written < 0 || (size_t)written >= sizeof(dims) - used) break;
    used += (size_t)written;
  }
  fprintf(out,
          "  index=%d, name=%s, n_dims=%d, dims=[%s], n_elems=%d, size=%d, w_stride = %d, "
          "size_with_stride=%d, fmt=%s, type=%s, qnt_type=%s, zp=%d, scale=%f\n",
          (int)attr->index, attr->name, (int)attr->n_dims, dims, (int)attr->n_elems,
          (int)attr->size, (int)attr->w_stride, (int)attr->size_with_stride,
          get_format_string(attr->fmt), get_type_string(attr->type),
          get_qnt_type_string(attr->qnt_type), (int)attr->zp, (double)attr->scale);
}

/* ------------------------------------------------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static void
set_error(char* error, size_t error_size, const char* format, ...) {
  va_list args;
  if (error == NULL || error_size == 0) return;
  va_start(args, format);
  vsnprintf(error, error_size, format, args);
  va_end(args);
}

/* What the model input looks like to the application. */
typedef struct {
  int is_image; /* 4-D: fed as NHWC */
  uint32_t n, h, w, c;
  int is_real; /* real-valued (float or quantized): the runtime converts user dtypes */
} input_geometry;

static void geometry_of(const rknn_tensor_attr* attr, input_geometry* g) {
  memset(g, 0, sizeof(*g));
  g->is_real = attr->type == RKNN_TENSOR_FLOAT32 || attr->type == RKNN_TENSOR_FLOAT16 ||
               attr->type == RKNN_TENSOR_INT8 || attr->type == RKNN_TENSOR_UINT8 ||
               attr->qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
  if (attr->n_dims != 4) return;
  if (attr->fmt == RKNN_TENSOR_NHWC) {
    g->is_image = 1;
    g->n = attr->dims[0], g->h = attr->dims[1], g->w = attr->dims[2], g->c = attr->dims[3];
  } else if (attr->fmt == RKNN_TENSOR_NCHW) {
    g->is_image = 1;
    g->n = attr->dims[0], g->c = attr->dims[1], g->h = attr->dims[2], g->w = attr->dims[3];
  }
}

size_t sample_type_size(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32:
    case RKNN_TENSOR_INT32:
    case RKNN_TENSOR_UINT32:
      return 4;
    case RKNN_TENSOR_FLOAT16:
    case RKNN_TENSOR_INT16:
    case RKNN_TENSOR_UINT16:
    case RKNN_TENSOR_BFLOAT16:
      return 2;
    case RKNN_TENSOR_INT64:
      return 8;
    default:
      return 1;
  }
}

/* IEEE binary16 to float. */
static float half_to_float(uint16_t half) {
  const int exponent = (half >> 10) & 0x1f;
  const int mantissa = half & 0x3ff;
  const float sign = (half & 0x8000) ? -1.0f : 1.0f;
  if (exponent == 0) return sign * ldexpf((float)mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * ldexpf((float)(mantissa | 0x400), exponent - 25);
}

/* Writes `value` as element `index` of a buffer of `type` (integers rounded and saturated). */
static void store_element(void* buffer, size_t index, rknn_tensor_type type, double value) {
  double rounded = nearbyint(value);
  switch (type) {
    case RKNN_TENSOR_FLOAT32:
      ((float*)buffer)[index] = (float)value;
      break;
    case RKNN_TENSOR_INT64:
      ((int64_t*)buffer)[index] =
          (int64_t)(rounded < -9.2e18 ? -9.2e18 : (rounded > 9.2e18 ? 9.2e18 : rounded));
      break;
    case RKNN_TENSOR_INT32:
      ((int32_t*)buffer)[index] =
          (int32_t)(rounded < -2147483648.0 ? -2147483648.0
                                            : (rounded > 2147483647.0 ? 2147483647.0 : rounded));
      break;
    case RKNN_TENSOR_UINT32:
      ((uint32_t*)buffer)[index] =
          (uint32_t)(rounded < 0 ? 0 : (rounded > 4294967295.0 ? 4294967295.0 : rounded));
      break;
    case RKNN_TENSOR_INT16:
      ((int16_t*)buffer)[index] =
          (int16_t)(rounded < -32768 ? -32768 : (rounded > 32767 ? 32767 : rounded));
      break;
    case RKNN_TENSOR_UINT16:
      ((uint16_t*)buffer)[index] =
          (uint16_t)(rounded < 0 ? 0 : (rounded > 65535 ? 65535 : rounded));
      break;
    case RKNN_TENSOR_INT8:
      ((int8_t*)buffer)[index] = (int8_t)(rounded < -128 ? -128 : (rounded > 127 ? 127 : rounded));
      break;
    case RKNN_TENSOR_BOOL:
      ((uint8_t*)buffer)[index] = value != 0.0;
      break;
    default:
      ((uint8_t*)buffer)[index] = (uint8_t)(rounded < 0 ? 0 : (rounded > 255 ? 255 : rounded));
      break;
  }
}

/* ---- .npy ----------------------------------------------------------------------------------- */

typedef struct {
  char kind; /* 'b' bool, 'u' unsigned, 'i' signed, 'f' float */
  int item_size;
  int ndim;
  int64_t shape[RKNN_MAX_DIMS];
  int64_t count;
  const uint8_t* data;
} npy_array;

static int read_file(const char* path, uint8_t** out_bytes, size_t* out_size, char* error,
                     size_t error_size) {
  FILE* file = fopen(path, "rb");
  long length;
  uint8_t* bytes;
  if (file == NULL) {
    set_error(error, error_size, "cannot open %s", path);
    return -1;
  }
  if (fseek(file, 0, SEEK_END) != 0 || (length = ftell(file)) < 0 ||
      fseek(file, 0, SEEK_SET) != 0) {
    fclose(file);
    set_error(error, error_size, "cannot read %s", path);
    return -1;
  }
  bytes = (uint8_t*)malloc(length > 0 ? (size_t)length : 1);
  if (bytes == NULL || fread(bytes, 1, (size_t)length, file) != (size_t)length) {
    free(bytes);
    fclose(file);
    set_error(error, error_size, "cannot read %s", path);
    return -1;
  }
  fclose(file);
  *out_bytes = bytes;
  *out_size = (size_t)length;
  return 0;
}

static int is_npy(const uint8_t* bytes, size_t size) {
  return size >= 10 && memcmp(bytes, "\x93NUMPY", 6) == 0;
}

/* Finds `'key':` in the header dictionary and returns the text after the colon. */
static const char* npy_field(const char* header, const char* key) {
  const char* at = strstr(header, key);
  if (at == NULL) return NULL;
  at = strchr(at + strlen(key), ':');
  if (at == NULL) return NULL;
  ++at;
  while (*at == ' ') ++at;
  return at;
}

static int parse_npy(const uint8_t* bytes, size_t size, npy_array* out, char* error,
                     size_t error_size) {
  size_t header_length, header_start;
  char* header;
  const char* descr;
  const char* fortran;
  const char* shape;
  int64_t count = 1;
  memset(out, 0, sizeof(*out));
  if (bytes[6] == 1) {
    header_length = (size_t)bytes[8] | ((size_t)bytes[9] << 8);
    header_start = 10;
  } else if ((bytes[6] == 2 || bytes[6] == 3) && size >= 12) {
    header_length = (size_t)bytes[8] | ((size_t)bytes[9] << 8) | ((size_t)bytes[10] << 16) |
                    ((size_t)bytes[11] << 24);
    header_start = 12;
  } else {
    set_error(error, error_size, "unsupported .npy version %d", bytes[6]);
    return -1;
  }
  if (header_start + header_length > size) {
    set_error(error, error_size, ".npy header is truncated");
    return -1;
  }
  header = (char*)malloc(header_length + 1);
  if (header == NULL) {
    set_error(error, error_size, "out of memory");
    return -1;
  }
  memcpy(header, bytes + header_start, header_length);
  header[header_length] = '\0';

  descr = npy_field(header, "'descr'");
  fortran = npy_field(header, "'fortran_order'");
  shape = npy_field(header, "'shape'");
  if (descr == NULL || fortran == NULL || shape == NULL || (*descr != '\'' && *descr != '"')) {
    set_error(error, error_size, ".npy header lacks descr, fortran_order or shape: %s", header);
    free(header);
    return -1;
  }
  if (strncmp(fortran, "False", 5) != 0) {
    set_error(error, error_size, "Fortran-order .npy arrays are not supported");
    free(header);
    return -1;
  }
  /* descr: byte order, kind, item size, e.g. '<f4' or '|u1'. */
  {
    char text[16] = {0};
    const char quote = *descr;
    size_t length = 0;
    while (descr[1 + length] != quote && descr[1 + length] != '\0' && length + 1 < sizeof(text)) {
      text[length] = descr[1 + length];
      ++length;
    }
    out->kind = length >= 2 ? text[1] : '?';
    out->item_size = length >= 3 ? atoi(text + 2) : 0;
    if (length < 3 || strchr("<|=>", text[0]) == NULL || strchr("buif", out->kind) == NULL ||
        (out->kind == 'f' && out->item_size != 2 && out->item_size != 4 && out->item_size != 8) ||
        (out->kind != 'f' && out->item_size != 1 && out->item_size != 2 && out->item_size != 4 &&
         out->item_size != 8) ||
        (text[0] == '>' && out->item_size > 1)) {
      set_error(error, error_size,
                "unsupported .npy dtype '%s' (need little-endian bool, int, uint or float)", text);
      free(header);
      return -1;
    }
  }
  /* shape: "(1, 224, 224, 3)", "(5,)" or "()". */
  if (*shape != '(') {
    set_error(error, error_size, "bad .npy shape: %s", shape);
    free(header);
    return -1;
  }
  ++shape;
  while (*shape != ')' && *shape != '\0') {
    char* end;
    long long dim;
    while (*shape == ' ' || *shape == ',') ++shape;
    if (*shape == ')') break;
    dim = strtoll(shape, &end, 10);
    if (end == shape || dim < 0 || out->ndim >= RKNN_MAX_DIMS) {
      set_error(error, error_size, "bad .npy shape in header: %s", header);
      free(header);
      return -1;
    }
    out->shape[out->ndim++] = dim;
    count *= dim;
    shape = end;
  }
  free(header);
  out->count = count;
  out->data = bytes + header_start + header_length;
  if ((size_t)count * (size_t)out->item_size > size - header_start - header_length) {
    set_error(error, error_size, ".npy data is truncated: %lld elements of %d bytes expected",
              (long long)count, out->item_size);
    return -1;
  }
  return 0;
}

static double npy_element(const npy_array* array, int64_t index) {
  const uint8_t* p = array->data + index * array->item_size;
  switch (array->kind) {
    case 'f':
      if (array->item_size == 2) {
        uint16_t bits;
        memcpy(&bits, p, 2);
        return half_to_float(bits);
      } else if (array->item_size == 4) {
        float value;
        memcpy(&value, p, 4);
        return value;
      } else {
        double value;
        memcpy(&value, p, 8);
        return value;
      }
    case 'i':
      switch (array->item_size) {
        case 1:
          return *(const int8_t*)p;
        case 2: {
          int16_t v;
          memcpy(&v, p, 2);
          return v;
        }
        case 4: {
          int32_t v;
          memcpy(&v, p, 4);
          return v;
        }
        default: {
          int64_t v;
          memcpy(&v, p, 8);
          return (double)v;
        }
      }
    default: /* 'u' and 'b' */
      switch (array->item_size) {
        case 1:
          return *p;
        case 2: {
          uint16_t v;
          memcpy(&v, p, 2);
          return v;
        }
        case 4: {
          uint32_t v;
          memcpy(&v, p, 4);
          return v;
        }
        default: {
          uint64_t v;
          memcpy(&v, p, 8);
          return (double)v;
        }
      }
  }
}

/* The user dtype an .npy dtype is passed as to a real-valued model input (0: convert to
 * float32). */
static rknn_tensor_type native_user_type(const npy_array* array, int* out_native) {
  *out_native = 1;
  if (array->kind == 'u' && array->item_size == 1) return RKNN_TENSOR_UINT8;
  if (array->kind == 'i' && array->item_size == 1) return RKNN_TENSOR_INT8;
  if (array->kind == 'f' && array->item_size == 2) return RKNN_TENSOR_FLOAT16;
  if (array->kind == 'f' && array->item_size == 4) return RKNN_TENSOR_FLOAT32;
  *out_native = 0;
  return RKNN_TENSOR_FLOAT32;
}

/* Bilinear resize of an 8-bit HxWxC image (pixel centres aligned, edges clamped). */
static void resize_bilinear(const uint8_t* source, uint32_t source_h, uint32_t source_w,
                            uint8_t* destination, uint32_t h, uint32_t w, uint32_t c) {
  uint32_t y, x, k;
  const float scale_y = (float)source_h / (float)h;
  const float scale_x = (float)source_w / (float)w;
  for (y = 0; y < h; ++y) {
    float fy = ((float)y + 0.5f) * scale_y - 0.5f;
    uint32_t y0, y1;
    float wy;
    if (fy < 0) fy = 0;
    y0 = (uint32_t)fy;
    if (y0 > source_h - 1) y0 = source_h - 1;
    y1 = y0 + 1 < source_h ? y0 + 1 : y0;
    wy = fy - (float)y0;
    for (x = 0; x < w; ++x) {
      float fx = ((float)x + 0.5f) * scale_x - 0.5f;
      uint32_t x0, x1;
      float wx;
      if (fx < 0) fx = 0;
      x0 = (uint32_t)fx;
      if (x0 > source_w - 1) x0 = source_w - 1;
      x1 = x0 + 1 < source_w ? x0 + 1 : x0;
      wx = fx - (float)x0;
      for (k = 0; k < c; ++k) {
        const float top = source[((size_t)y0 * source_w + x0) * c + k] * (1 - wx) +
                          source[((size_t)y0 * source_w + x1) * c + k] * wx;
        const float bottom = source[((size_t)y1 * source_w + x0) * c + k] * (1 - wx) +
                             source[((size_t)y1 * source_w + x1) * c + k] * wx;
        destination[((size_t)y * w + x) * c + k] = (uint8_t)(top * (1 - wy) + bottom * wy + 0.5f);
      }
    }
  }
}

/* An image of `h` x `w` x `c` uint8 pixels (not necessarily the model's size) into an NHWC uint8
 * input of the model's geometry: resized when needed, repeated over the batch. */
static int image_to_input(const uint8_t* pixels, uint32_t h, uint32_t w, const input_geometry* g,
                          sample_input* out, char* error, size_t error_size) {
  const size_t one = (size_t)g->h * g->w * g->c;
  uint8_t* data = (uint8_t*)malloc(one * (g->n ? g->n : 1));
  uint32_t b;
  if (data == NULL) {
    set_error(error, error_size, "out of memory");
    return -1;
  }
  if (h == g->h && w == g->w) {
    memcpy(data, pixels, one);
  } else {
    resize_bilinear(pixels, h, w, data, g->h, g->w, g->c);
  }
  for (b = 1; b < g->n; ++b) memcpy(data + b * one, data, one);
  out->data = data;
  out->size = (uint32_t)(one * (g->n ? g->n : 1));
  out->type = RKNN_TENSOR_UINT8;
  out->fmt = RKNN_TENSOR_NHWC;
  return 0;
}

static void shape_text(const int64_t* shape, int ndim, char* text, size_t size) {
  size_t used = 0;
  int i;
  text[0] = '\0';
  for (i = 0; i < ndim && used < size; ++i) {
    int written = snprintf(text + used, size - used, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (written < 0) break;
    used += (size_t)written;
  }
}

static int npy_to_input(const npy_array* array, const rknn_tensor_attr* attr,
                        const input_geometry* g, sample_input* out, char* error,
                        size_t error_size) {
  char shape[96];
  int native;
  rknn_tensor_type type;
  size_t element_size;
  int64_t i;
  shape_text(array->shape, array->ndim, shape, sizeof(shape));

  if (g->is_image) {
    /* Drop a leading batch of 1 when the model's batch is 1, then match HWC or CHW. */
    const int64_t* dims = array->shape;
    int ndim = array->ndim;
    int nhwc, nchw;
    if (ndim == 4 && dims[0] == (int64_t)g->n) {
      ++dims;
      --ndim;
    } else if (ndim == 4 && dims[0] == 1 && g->n != 1) {
      ++dims;
      --ndim;
    }
    if (ndim == 2 && g->c == 1) {
      nhwc = dims[0] == (int64_t)g->h && dims[1] == (int64_t)g->w;
      nchw = 0;
    } else {
      nhwc = ndim == 3 && dims[0] == (int64_t)g->h && dims[1] == (int64_t)g->w &&
             dims[2] == (int64_t)g->c;
      nchw = ndim == 3 && dims[0] == (int64_t)g->c && dims[1] == (int64_t)g->h &&
             dims[2] == (int64_t)g->w;
    }
    if (!nhwc && !nchw) {
      const int resizable = array->kind == 'u' && array->item_size == 1 &&
                            ((ndim == 3 && dims[2] == (int64_t)g->c) || (ndim == 2 && g->c == 1));
      if (resizable && array->count == dims[0] * dims[1] * (int64_t)g->c) {
        if (image_to_input(array->data, (uint32_t)dims[0], (uint32_t)dims[1], g, out, error,
                           error_size) != 0) {
          return -1;
        }
        snprintf(out->description, sizeof(out->description), "npy u1 [%s] resized to %ux%u", shape,
                 g->h, g->w);
        return 0;
      }
      set_error(error, error_size,
                "npy shape [%s] does not match input '%s' (NHWC [%u, %u, %u, %u]; NCHW is also "
                "accepted, and a uint8 HxWx%u image of another size is resized)",
                shape, attr->name, g->n, g->h, g->w, g->c, g->c);
      return -1;
    }
    if (array->count == (int64_t)g->h * g->w * g->c && g->n > 1) {
      set_error(error, error_size, "npy [%s] holds one image, but input '%s' has batch %u", shape,
                attr->name, g->n);
      return -1;
    }
    type = native_user_type(array, &native);
    element_size = sample_type_size(type);
    out->data = malloc((size_t)array->count * element_size);
    if (out->data == NULL) {
      set_error(error, error_size, "out of memory");
      return -1;
    }
    for (i = 0; i < array->count; ++i) {
      /* Destination index in NHWC; the source is NHWC or NCHW. */
      int64_t destination = i;
      if (nchw && !nhwc) {
        const int64_t plane = (int64_t)g->h * g->w;
        const int64_t per_batch = plane * g->c;
        const int64_t b = i / per_batch, c = (i % per_batch) / plane, p = i % plane;
        destination = b * per_batch + p * g->c + c;
      }
      if (native) {
        memcpy((uint8_t*)out->data + destination * element_size, array->data + i * array->item_size,
               element_size);
      } else {
        store_element(out->data, (size_t)destination, type, npy_element(array, i));
      }
    }
    out->size = (uint32_t)((size_t)array->count * element_size);
    out->type = type;
    out->fmt = RKNN_TENSOR_NHWC;
    snprintf(out->description, sizeof(out->description), "npy %c%d [%s]%s%s", array->kind,
             array->item_size, shape, native ? "" : " as float32",
             nchw && !nhwc ? " transposed NCHW->NHWC" : "");
    return 0;
  }

  /* Other inputs: same element count, original layout. */
  if (array->count != (int64_t)attr->n_elems) {
    set_error(error, error_size, "npy [%s] has %lld elements, input '%s' needs %u", shape,
              (long long)array->count, attr->name, attr->n_elems);
    return -1;
  }
  if (g->is_real) {
    type = native_user_type(array, &native);
  } else {
    type = attr->type;
    native = 0;
  }
  element_size = sample_type_size(type);
  out->data = malloc((size_t)array->count * element_size + 1);
  if (out->data == NULL) {
    set_error(error, error_size, "out of memory");
    return -1;
  }
  for (i = 0; i < array->count; ++i) {
    if (native) {
      memcpy((uint8_t*)out->data + i * element_size, array->data + i * array->item_size,
             element_size);
    } else {
      store_element(out->data, (size_t)i, type, npy_element(array, i));
    }
  }
  out->size = (uint32_t)((size_t)array->count * element_size);
  out->type = type;
  out->fmt = attr->n_dims == 4 ? attr->fmt : RKNN_TENSOR_UNDEFINED;
  snprintf(out->description, sizeof(out->description), "npy %c%d [%s] as %s", array->kind,
           array->item_size, shape, get_type_string(type));
  return 0;
}

int sample_load_input(const char* path, const rknn_tensor_attr* attr, sample_input* out,
                      char* error, size_t error_size) {
  input_geometry g;
  uint8_t* bytes = NULL;
  size_t size = 0;
  int result = -1;
  memset(out, 0, sizeof(*out));
  geometry_of(attr, &g);
  if (read_file(path, &bytes, &size, error, error_size) != 0) return -1;

  if (is_npy(bytes, size)) {
    npy_array array;
    if (parse_npy(bytes, size, &array, error, error_size) == 0) {
      result = npy_to_input(&array, attr, &g, out, error, error_size);
    }
  } else {
#ifdef SAMPLE_HAVE_STB
    int width = 0, height = 0, channels_in_file = 0;
    uint8_t* pixels;
    if (!g.is_image || g.c < 1 || g.c > 4) {
      set_error(error, error_size, "%s: images need a 4-D input with 1 to 4 channels; '%s' is not",
                path, attr->name);
    } else if ((pixels = stbi_load_from_memory(bytes, (int)size, &width, &height, &channels_in_file,
                                               (int)g.c)) == NULL) {
      set_error(error, error_size, "%s: not an .npy file, and stb_image cannot decode it: %s", path,
                stbi_failure_reason());
    } else {
      result =
          image_to_input(pixels, (uint32_t)height, (uint32_t)width, &g, out, error, error_size);
      if (result == 0) {
        snprintf(out->description, sizeof(out->description), "image %dx%d, %d channel(s)%s", width,
                 height, channels_in_file,
                 (uint32_t)width != g.w || (uint32_t)height != g.h ? ", resized" : "");
      }
      stbi_image_free(pixels);
    }
#else
    set_error(error, error_size,
              "%s is not an .npy file, and this build has no image decoder (build with "
              "libstb-dev, SAMPLE_HAVE_STB)",
              path);
#endif
  }
  free(bytes);
  if (result != 0) sample_free_input(out);
  return result;
}

int sample_make_synthetic_input(const rknn_tensor_attr* attr, uint32_t index, sample_input* out,
                                char* error, size_t error_size) {
  input_geometry g;
  memset(out, 0, sizeof(*out));
  geometry_of(attr, &g);
  if (g.is_image && g.is_real) {
    const size_t count = (size_t)g.n * g.h * g.w * g.c;
    uint8_t* pixels = (uint8_t*)malloc(count ? count : 1);
    uint32_t b, y, x, c;
    if (pixels == NULL) {
      set_error(error, error_size, "out of memory");
      return -1;
    }
    /* Diagonal colour ramps with a soft checkerboard: deterministic and image-like. */
    for (b = 0; b < g.n; ++b)
      for (y = 0; y < g.h; ++y)
        for (x = 0; x < g.w; ++x)
          for (c = 0; c < g.c; ++c) {
            const uint32_t ramp =
                (x * 160u / (g.w ? g.w : 1) + y * 96u / (g.h ? g.h : 1)) + c * 53u + index * 29u;
            const uint32_t checker =
                (((x * 8u / (g.w ? g.w : 1)) + (y * 8u / (g.h ? g.h : 1))) & 1u) ? 40u : 0u;
            pixels[(((size_t)b * g.h + y) * g.w + x) * g.c + c] =
                (uint8_t)((ramp + checker) % 256u);
          }
    out->data = pixels;
    out->size = (uint32_t)count;
    out->type = RKNN_TENSOR_UINT8;
    out->fmt = RKNN_TENSOR_NHWC;
    snprintf(out->description, sizeof(out->description), "synthetic uint8 NHWC [%u, %u, %u, %u]",
             g.n, g.h, g.w, g.c);
    return 0;
  }
  {
    const rknn_tensor_type type = g.is_real ? RKNN_TENSOR_FLOAT32 : attr->type;
    const size_t element_size = sample_type_size(type);
    const size_t count = attr->n_elems;
    size_t i;
    out->data = calloc(count ? count : 1, element_size);
    if (out->data == NULL) {
      set_error(error, error_size, "out of memory");
      return -1;
    }
    if (g.is_real) {
      for (i = 0; i < count; ++i) ((float*)out->data)[i] = (float)((i + index) % 17) / 16.0f;
    }
    out->size = (uint32_t)(count * element_size);
    out->type = type;
    out->fmt = attr->n_dims == 4 ? attr->fmt : RKNN_TENSOR_UNDEFINED;
    snprintf(out->description, sizeof(out->description), "synthetic %s, %u elements%s",
             get_type_string(type), (unsigned)count, g.is_real ? " (ramp)" : " (zeros)");
  }
  return 0;
}

void sample_free_input(sample_input* input) {
  free(input->data);
  input->data = NULL;
  input->size = 0;
}

void sample_top_n(const float* values, uint32_t count, uint32_t n, int32_t* out_indices,
                  float* out_values) {
  uint32_t k, i, j;
  for (k = 0; k < n; ++k) {
    int32_t best = -1;
    for (i = 0; i < count; ++i) {
      int taken = 0;
      for (j = 0; j < k; ++j) {
        if (out_indices[j] == (int32_t)i) {
          taken = 1;
          break;
        }
      }
      if (taken) continue;
      if (best < 0 || values[i] > values[best]) best = (int32_t)i;
    }
    out_indices[k] = best;
    out_values[k] = best >= 0 ? values[best] : 0.0f;
  }
}
