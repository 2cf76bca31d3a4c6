// Text taken from a model file (names, producer strings) goes into error messages and log lines.
// Whatever the file contains, what is shown stays one short printable line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace orknn::model {

// `text` with bytes outside printable ASCII replaced by '?', cut after `max_shown` bytes ("...").
inline std::string printable_text(std::string_view text, size_t max_shown = 96) {
  std::string shown;
  for (size_t i = 0; i < text.size() && i < max_shown; ++i) {
    const char c = text[i];
    shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (text.size() > max_shown) shown += "...";
  return shown;
}

}  // namespace orknn::model
