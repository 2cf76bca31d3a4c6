#include "version.h"

#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>

#include "rknn_api.h"

namespace orknn::server {
namespace {

// __DATE__ is "Nov 22 2026"; the vendor prints ISO dates.
std::string iso_build_time() {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::string date = __DATE__;
  int month = 1;
  for (int i = 0; i < 12; ++i) {
    if (date.compare(0, 3, kMonths[i]) == 0) month = i + 1;
  }
  std::string day = date.substr(4, 2);
  if (day[0] == ' ') day[0] = '0';
  char text[32];
  std::snprintf(text, sizeof(text), "%s-%02d-%sT%s", date.substr(7, 4).c_str(), month, day.c_str(),
                __TIME__);
  return text;
}

}  // namespace

std::string server_version() {
  return std::string(ORKNN_SERVER_VERSION) + " (openrknn " + ORKNN_PROJECT_VERSION + " build@" +
         iso_build_time() + ")";
}

std::string runtime_library_version() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&rknn_init), &info) == 0 || info.dli_fname == nullptr) {
    return std::string();
  }
  std::ifstream file(info.dli_fname, std::ios::binary);
  if (!file) return std::string();
  const std::string contents((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  // The marker also appears in log-message text; the version is the occurrence followed by a
  // digit.
  constexpr std::string_view kMarker = "librknnrt version: ";
  for (size_t at = contents.find(kMarker); at != std::string::npos;
       at = contents.find(kMarker, at + 1)) {
    const size_t start = at + kMarker.size();
    if (start >= contents.size() || contents[start] < '0' || contents[start] > '9') continue;
    const size_t end = contents.find('\0', start);
    return contents.substr(start, (end == std::string::npos ? contents.size() : end) - start);
  }
  return std::string();
}

}  // namespace orknn::server
