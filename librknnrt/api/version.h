// Version strings of this build (generated values come from version.cc, made by CMake).
#pragma once

namespace orknn::api {

// "2.3.2 (0123456789@2026-11-21T12:00:00)": the vendor SDK version we are compatible with,
// then our commit and its date.
const char* runtime_version();
// "OpenRKNN 0.1.0".
const char* project_version();
// What drv_version reports: the NPU driver version, or a note that none is in use.
const char* driver_version();

}  // namespace orknn::api
