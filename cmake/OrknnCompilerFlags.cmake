# Warning and sanitizer flags shared by every target of the project.
add_library(orknn_compile_flags INTERFACE)
target_compile_options(orknn_compile_flags INTERFACE
  -Wall -Wextra -Wno-unused-parameter
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
  $<$<BOOL:${ORKNN_WERROR}>:-Werror>)

if(ORKNN_SANITIZE AND ORKNN_TSAN)
  message(FATAL_ERROR "ORKNN_SANITIZE and ORKNN_TSAN cannot be combined")
endif()
if(ORKNN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(ORKNN_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# Every test executable links the runtime's static libraries, so with debug info inside each
# binary the optimised build tree took 3.5 GB and the sanitizer tree 6 GB, which has filled a CI
# machine's disk. Split DWARF keeps one copy of the debug info per object file (.dwo), and each
# executable only a skeleton pointing at it, which the linker compresses (GCC still writes name
# indexes into it). Debuggers find everything while the build tree exists. Off by default
# because installed binaries would then point into the build tree; scripts/run_tests.sh turns
# it on for the trees it builds.
if(ORKNN_COMPACT_DEBUG_INFO)
  add_compile_options(-gsplit-dwarf)
  add_link_options(-Wl,--compress-debug-sections=zlib)
endif()
