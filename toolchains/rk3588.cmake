# RK3588 / RK3588S: 4 x Cortex-A76 + 4 x Cortex-A55 (ARMv8.2-A with dotprod and fp16).
# -mcpu=cortex-a76.cortex-a55 schedules for the big.LITTLE pair and enables what both cores
# have; the runtime still picks its kernel variant from the CPU at run time.
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-a76.cortex-a55")
set(CMAKE_CXX_FLAGS_INIT "-mcpu=cortex-a76.cortex-a55")
