// Shared pieces of the model tests: a sample model that uses every feature of the format,
// helpers to edit files field by field, and error assertions.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/container_format.h"
#include "model/model_builder.h"

// cmocka comes last: its fail() macro would break the C++ standard headers that declare
// basic_ios::fail(). Test files therefore include this header after all their other headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka 1.1 declares its functions without C linkage markers.
extern "C" {
#include <cmocka.h>
}

namespace orknn::model::testing {

// Indices of the sample model's tensors, so tests can break a specific one.
struct SampleModel {
  ModelBuilder builder;
  int input = -1;      // FP32 [1,3,4,4], mean/std, NHWC, reverse channels
  int aux = -1;        // INT8 [1,2,4,4], per-tensor quantized
  int weight = -1;     // constant INT8 [2,3,1,1], per-channel quantized
  int bias = -1;       // constant FP32 [2]
  int conv_out = -1;   // Conv output
  int aux_float = -1;  // Cast output
  int sum = -1;        // Add output
  int clip_max = -1;   // constant FP32 scalar
  int clipped = -1;    // Clip output (min omitted with -1)
  int activated = -1;  // LeakyRelu output
  int upsampled = -1;  // Upsample output, graph output 0
  int shape = -1;      // constant INT64 [2]
  int flat = -1;       // Reshape output, graph output 1
};

SampleModel make_sample_model();
// The sample model, serialized.
std::vector<uint8_t> sample_model_bytes();

// Packs a graph, valid or not, and its weights into a container without verifying anything.
std::vector<uint8_t> pack_unverified(const proto::Model& graph,
                                     const std::vector<uint8_t>& weights);

// Header and section table access for tests that edit fields.
FileHeader read_header(const std::vector<uint8_t>& file);
void write_header(std::vector<uint8_t>* file, const FileHeader& header);
SectionEntry read_section(const std::vector<uint8_t>& file, int index);
void write_section(std::vector<uint8_t>* file, int index, const SectionEntry& entry);

// After a test has edited fields: recomputes the CRC of every section that lies inside the file,
// then the section table CRC, then the header CRC, so that the edit reaches the rule under test
// instead of being caught by a checksum.
void reseal(std::vector<uint8_t>* file);

// Asserts the status failed with `code` and that its message contains every one of `words`.
void expect_error(const Status& status, StatusCode code, std::initializer_list<const char*> words);
// Asserts ModelFile::parse refuses `file` with kInvalidModel and a message containing `words`.
void expect_invalid_model(const std::vector<uint8_t>& file,
                          std::initializer_list<const char*> words);

}  // namespace orknn::model::testing
