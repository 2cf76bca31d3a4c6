# Cross-compiling for 32-bit ARM Linux (ARMv7-A, hard float) with Debian's
# g++-arm-linux-gnueabihf. NEON is optional on ARMv7, so the default flags do not assume it; the
# tuned files below enable it for boards that have it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(ORKNN_CROSS_TRIPLE arm-linux-gnueabihf)
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross-common.cmake)
