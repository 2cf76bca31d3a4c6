# Shared part of the Linux cross toolchain files: ORKNN_CROSS_TRIPLE names the Debian cross
# compiler (<triple>-gcc, <triple>-g++) and its sysroot /usr/<triple>. Debian multiarch
# packages of the target (libcmocka-dev:arm64, ...) install under /usr/lib/<triple>, so both
# places are searched for libraries and headers, never the build machine's own.
set(CMAKE_C_COMPILER ${ORKNN_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ORKNN_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${ORKNN_CROSS_TRIPLE} /usr/lib/${ORKNN_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Multiarch: libraries in /usr/lib/<triple>, headers in /usr/include (shared by every
# architecture) and /usr/include/<triple>.
list(APPEND CMAKE_LIBRARY_PATH /usr/lib/${ORKNN_CROSS_TRIPLE})
list(APPEND CMAKE_SYSTEM_INCLUDE_PATH /usr/include)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)

# Run target programs (tests) under qemu-user with the cross sysroot as the library root;
# QEMU_CPU in the environment picks the emulated CPU model. Set ORKNN_CROSS_EMULATOR to
# override (an empty value disables it, e.g. on a real board).
if(NOT DEFINED ORKNN_CROSS_EMULATOR)
  if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
    set(ORKNN_CROSS_EMULATOR qemu-aarch64)
  else()
    set(ORKNN_CROSS_EMULATOR qemu-arm)
  endif()
endif()
# ORKNN_CROSS_TARGET_LIBRARIES: a directory holding links to just the multiarch libraries the
# programs need (protobuf-lite, libdrm, cmocka; scripts/cross_test.sh makes it), searched after
# the sysroot's lib/.
if(ORKNN_CROSS_EMULATOR)
  # The sysroot's lib/ first: the loader's default multiarch directories may hold Debian's
  # libc6:<arch>, another build than the sysroot's loader (see toolchains/cross_tests).
  set(target_library_path /usr/${ORKNN_CROSS_TRIPLE}/lib)
  if(ORKNN_CROSS_TARGET_LIBRARIES)
    string(APPEND target_library_path ":${ORKNN_CROSS_TARGET_LIBRARIES}")
  endif()
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ORKNN_CROSS_EMULATOR} -L /usr/${ORKNN_CROSS_TRIPLE}
      -E LD_LIBRARY_PATH=${target_library_path})
endif()
# pkg-config (libdrm) must read the target's .pc files, never the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${ORKNN_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
