// CRC-32/ISO-HDLC against published check values.
#include <cstring>
#include <string>

#include "model/crc32.h"

#include "model_test_util.h"  // last: it brings in cmocka

namespace {

using orknn::model::crc32;

void test_crc32_check_value(void** state) {
  // The catalogued check value of CRC-32/ISO-HDLC is the CRC of "123456789".
  assert_int_equal(crc32("123456789", 9), 0xCBF43926u);
}

void test_crc32_known_strings(void** state) {
  assert_int_equal(crc32(nullptr, 0), 0u);
  assert_int_equal(crc32("a", 1), 0xE8B7BE43u);
  const char* fox = "The quick brown fox jumps over the lazy dog";
  assert_int_equal(crc32(fox, std::strlen(fox)), 0x414FA339u);
  const uint8_t zeros[32] = {};
  assert_int_equal(crc32(zeros, sizeof(zeros)), 0x190A55ADu);
}

void test_crc32_incremental_equals_one_shot(void** state) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 7 + 3);
  const uint32_t whole = crc32(text.data(), text.size());
  for (size_t split = 0; split <= text.size(); split += 37) {
    uint32_t running = orknn::model::kCrc32Initial;
    running = orknn::model::crc32_update(running, text.data(), split);
    running = orknn::model::crc32_update(running, text.data() + split, text.size() - split);
    assert_int_equal(orknn::model::crc32_finish(running), whole);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc32_check_value),
      cmocka_unit_test(test_crc32_known_strings),
      cmocka_unit_test(test_crc32_incremental_equals_one_shot),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
