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

// The sliced form against the bitwise definition, on every length up to 70 and every start
// offset modulo 8 (the word loop's edges), and on a buffer of a few KB.
uint32_t bitwise_crc32(const uint8_t* bytes, size_t size) {
  uint32_t state = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    state ^= bytes[i];
    for (int bit = 0; bit < 8; ++bit)
      state = (state & 1u) ? (state >> 1) ^ 0xEDB88320u : state >> 1;
  }
  return state ^ 0xFFFFFFFFu;
}

void test_crc32_matches_bitwise_definition(void** state) {
  uint8_t buffer[4096 + 16];
  uint32_t seed = 12345;
  for (uint8_t& byte : buffer) {
    seed = seed * 1103515245u + 12345u;
    byte = static_cast<uint8_t>(seed >> 16);
  }
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t size = 0; size <= 70; ++size) {
      assert_int_equal(crc32(buffer + offset, size), bitwise_crc32(buffer + offset, size));
    }
  }
  assert_int_equal(crc32(buffer + 3, 4096), bitwise_crc32(buffer + 3, 4096));
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc32_check_value),
      cmocka_unit_test(test_crc32_known_strings),
      cmocka_unit_test(test_crc32_incremental_equals_one_shot),
      cmocka_unit_test(test_crc32_matches_bitwise_definition),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
