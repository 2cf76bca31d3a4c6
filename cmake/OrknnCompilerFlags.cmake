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
