# 32-bit userland on an RK3588 (ARMv8 cores in AArch32 state): ARMv7-A code with NEON.
include(${CMAKE_CURRENT_LIST_DIR}/armhf-linux-gnueabihf.cmake)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-a76.cortex-a55 -mfpu=neon-fp-armv8 -mfloat-abi=hard")
set(CMAKE_CXX_FLAGS_INIT "-mcpu=cortex-a76.cortex-a55 -mfpu=neon-fp-armv8 -mfloat-abi=hard")
