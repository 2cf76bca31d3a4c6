# RK3576: 4 x Cortex-A72 + 4 x Cortex-A53 (ARMv8.0-A: NEON, no dotprod). The A72/A53 pair
# tuning; dotprod kernels are simply never chosen on this SoC.
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-a72.cortex-a53")
set(CMAKE_CXX_FLAGS_INIT "-mcpu=cortex-a72.cortex-a53")
