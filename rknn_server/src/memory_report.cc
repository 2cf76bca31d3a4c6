#include "memory_report.h"

#include <cstdio>

namespace orknn::server {

std::string human_bytes(uint64_t bytes) {
  char text[64];
  if (bytes >= (1u << 20)) {
    std::snprintf(text, sizeof(text), "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(text, sizeof(text), "%.2f KiB", static_cast<double>(bytes) / 1024);
  }
  return text;
}

openrknn::server::v1::EvalMemoryResponse memory_report(const rknn_mem_size& sizes,
                                                       uint64_t model_size) {
  const uint64_t weight = sizes.total_weight_size;
  const uint64_t internal = sizes.total_internal_size;
  const uint64_t accounted = weight + internal;
  const uint64_t other =
      sizes.total_dma_allocated_size > accounted ? sizes.total_dma_allocated_size - accounted : 0;
  openrknn::server::v1::EvalMemoryResponse report;
  report.set_weight_memory(weight);
  report.set_internal_memory(internal);
  report.set_other_memory(other);
  report.set_total_memory(weight + internal + other);
  report.set_model_size(model_size);
  static const char kRule[] = "======================================================\n";
  std::string text;
  text += kRule;
  text += "            Memory Profile Info Dump\n";
  text += kRule;
  text += "NPU model memory detail(bytes):\n";
  text += "    Weight Memory: " + human_bytes(weight) + "\n";
  text += "    Internal Tensor Memory: " + human_bytes(internal) + "\n";
  text += "    Other Memory: " + human_bytes(other) + "\n";
  text += "    Total Memory: " + human_bytes(report.total_memory()) + "\n\n";
  text += "INFO: When evaluating memory usage, we need consider\n";
  text += "the size of model, current model size is: " + human_bytes(model_size) + "\n";
  text += kRule;
  report.set_text(text);
  return report;
}

}  // namespace orknn::server
