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
# machine's disk. -gz compresses the debug sections (zlib) of objects, archives and binaries,
# which debuggers and valgrind read as they are. Split DWARF (-gsplit-dwarf) would save more, but valgrind 3.19 cannot read
# our executables built with it ("Possibly corrupted debuginfo file"), and test_api_mem_cycles
# runs under valgrind. Off by default, so that builds for installation keep the toolchain's
# usual debug info; scripts/run_tests.sh turns it on for the trees it builds.
if(ORKNN_COMPACT_DEBUG_INFO)
  add_compile_options(-gz)
  add_link_options(-gz)
endif()
