// Hostile model bytes through rknn_init: every single-byte corruption and every truncation of
// a small valid model must be refused with RKNN_ERR_MODEL_INVALID, without crashing or
// leaking (the sanitizer build runs this too).
#include <cstdio>
#include <vector>

#include "api/api_test_util.h"

using namespace orknn::api_testing;

namespace {

int init_status(std::vector<uint8_t>& bytes) {
  rknn_context context = 0;
  const int status =
      rknn_init(&context, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr);
  if (status == RKNN_SUCC) rknn_destroy(context);
  return status;
}

void test_every_byte_flip_is_refused(void**) {
  for (const std::vector<uint8_t>& original : {build_chain_model(2), build_affine_model({})}) {
    std::vector<uint8_t> bytes = original;
    for (size_t position = 0; position < bytes.size(); ++position) {
      bytes[position] ^= 0xFF;
      const int status = init_status(bytes);
      if (status != RKNN_ERR_MODEL_INVALID) {
        fail_msg("byte %zu of %zu flipped: rknn_init returned %d", position, bytes.size(), status);
      }
      bytes[position] ^= 0xFF;
    }
    assert_int_equal(init_status(bytes), RKNN_SUCC);
  }
}

void test_every_truncation_is_refused(void**) {
  const std::vector<uint8_t> original = build_affine_model({});
  // Length 0 would mean "model is a path"; every other prefix is a broken model.
  for (size_t length = 1; length < original.size(); ++length) {
    std::vector<uint8_t> bytes(original.begin(), original.begin() + length);
    const int status = init_status(bytes);
    if (status != RKNN_ERR_MODEL_INVALID) {
      fail_msg("truncated to %zu of %zu bytes: rknn_init returned %d", length, original.size(),
               status);
    }
  }
}

void test_trailing_garbage_is_refused(void**) {
  std::vector<uint8_t> bytes = build_affine_model({});
  bytes.push_back(0);
  assert_int_equal(init_status(bytes), RKNN_ERR_MODEL_INVALID);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_byte_flip_is_refused),
      cmocka_unit_test(test_every_truncation_is_refused),
      cmocka_unit_test(test_trailing_garbage_is_refused),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
