// Version strings of the daemon and of the runtime it is linked with.
#pragma once

#include <string>

namespace orknn::server {

// "2.3.2 (openrknn 0.1.0 build@2026-11-22T02:00:00)": the SDK version we are compatible with,
// then our own version and build time, in the vendor's "X (commit build@date)" shape.
std::string server_version();

// The runtime's version as the vendor's daemon finds it: the text after "librknnrt version: "
// embedded in the loaded librknnrt.so (located through the address of rknn_init). Empty when
// the library cannot be read.
std::string runtime_library_version();

// Highest protocol version this server speaks.
constexpr int kProtocolVersion = 1;

}  // namespace orknn::server
