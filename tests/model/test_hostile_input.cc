// Hostile input: every single-byte corruption and every truncation of a valid model must be
// refused (never accepted, never a crash or an out-of-bounds read; run under ASan to see the
// latter). This holds because every byte of a file is covered by a check: the header by its CRC,
// the section table by the CRC stored in the header, each section by its own CRC, and every
// other byte must be zero padding.
#include <random>

#include "model/model_file.h"
#include "model/vendor_model.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace {

using namespace orknn;
using namespace orknn::model;
using namespace orknn::model::testing;

void expect_refused(const std::vector<uint8_t>& file, const char* what, size_t position) {
  Result<std::shared_ptr<const ModelFile>> model = ModelFile::parse(file);
  if (model.ok()) fail_msg("%s at %zu was accepted", what, position);
  if (model.status().code() != StatusCode::kInvalidModel) {
    fail_msg("%s at %zu: expected kInvalidModel, got %s: %s", what, position,
             status_code_name(model.status().code()), model.status().message().c_str());
  }
}

void test_every_byte_flip_is_refused(void** state) {
  const std::vector<uint8_t> original = sample_model_bytes();
  for (size_t position = 0; position < original.size(); ++position) {
    std::vector<uint8_t> corrupted = original;
    corrupted[position] ^= 0xFF;
    expect_refused(corrupted, "flip", position);
  }
}

void test_every_single_bit_flip_is_refused(void** state) {
  const std::vector<uint8_t> original = sample_model_bytes();
  for (size_t position = 0; position < original.size(); ++position) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<uint8_t> corrupted = original;
      corrupted[position] ^= static_cast<uint8_t>(1u << bit);
      expect_refused(corrupted, "bit flip", position);
    }
  }
}

void test_every_truncation_is_refused(void** state) {
  const std::vector<uint8_t> original = sample_model_bytes();
  for (size_t length = 0; length < original.size(); ++length) {
    expect_refused(std::vector<uint8_t>(original.begin(), original.begin() + length), "truncation",
                   length);
  }
}

// Random bytes behind a valid header and table shape: exercises the reader past the magic check.
void test_random_garbage_is_refused(void** state) {
  const std::vector<uint8_t> original = sample_model_bytes();
  std::mt19937 random(12345);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> garbage(original.begin(), original.begin() + 8);
    garbage.resize(8 + random() % 1024);
    for (size_t i = 8; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(random());
    expect_refused(garbage, "garbage of size", garbage.size());
  }
}

// Corruptions that are resealed (checksums fixed up afterwards) reach the structural checks:
// bounds, overlaps and the graph verifier must hold on their own, with no checksum to help.
void test_resealed_random_edits_never_crash(void** state) {
  const std::vector<uint8_t> original = sample_model_bytes();
  std::mt19937 random(777);
  int accepted = 0;
  for (int round = 0; round < 5000; ++round) {
    std::vector<uint8_t> edited = original;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int i = 0; i < edits; ++i) {
      edited[kModelMagic.size() + random() % (edited.size() - kModelMagic.size())] =
          static_cast<uint8_t>(random());
    }
    reseal(&edited);
    // Acceptance is possible (an edit may land on a value that is still valid, like a weight
    // byte); what matters is that the reader does not crash and that what it accepts is sound.
    Result<std::shared_ptr<const ModelFile>> model = ModelFile::parse(edited);
    if (model.ok()) {
      ++accepted;
      const ModelFile& file = *model.value();
      for (int t = 0; t < file.graph().tensors_size(); ++t) {
        const uint8_t* data = file.constant_data(t);
        const size_t size = file.constant_size(t);
        if (size > 0) {
          assert_true(data >= file.weights() &&
                      data + size <= file.weights() + file.weights_size());
        }
      }
    } else {
      assert_int_equal(model.status().code(), StatusCode::kInvalidModel);
    }
  }
  print_message("resealed random edits accepted: %d of 5000\n", accepted);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_byte_flip_is_refused),
      cmocka_unit_test(test_every_single_bit_flip_is_refused),
      cmocka_unit_test(test_every_truncation_is_refused),
      cmocka_unit_test(test_random_garbage_is_refused),
      cmocka_unit_test(test_resealed_random_edits_never_crash),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
